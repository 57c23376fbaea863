use super::*;
use std::collections::HashMap;

fn mesh(paths: &[Vec<[f32; 4]>], radius: f32) -> (Vec<TubeVertex>, Vec<u32>) {
    let (mut v, mut i) = (Vec::new(), Vec::new());
    tube_mesh(
        paths,
        radius,
        |value| [(value * 255.0) as u8, 0, 0, 255],
        &mut v,
        &mut i,
    );
    (v, i)
}

/// Points of a helix of radius 1 and pitch 2 pi * 0.3 about z, `n` of them per turn.
fn helix(turns: f32, n: usize) -> Vec<[f32; 4]> {
    let m = (turns * n as f32) as usize;
    (0..=m)
        .map(|k| {
            let s = std::f32::consts::TAU * k as f32 / n as f32;
            [s.cos(), s.sin(), 0.3 * s, k as f32 / m as f32]
        })
        .collect()
}

#[test]
fn a_straight_tube_has_its_rings_at_the_radius_and_closed_caps() {
    let r = 0.05;
    let path = vec![
        [0.0, 0.0, 0.0, 0.0],
        [0.5, 0.0, 0.0, 0.5],
        [0.5, 0.0, 0.0, 0.5],
        [1.0, 0.0, 0.0, 1.0],
    ];
    let (v, i) = mesh(&[path], r);
    // The repeated point is skipped: 3 rings, and per cap a centre and the ring again.
    assert_eq!(v.len(), 3 * SIDES + 2 * (1 + 2 * SIDES));
    assert_eq!(i.len(), 3 * (2 * 2 * SIDES + 2 * SIDES));
    for x in &v[..3 * SIDES] {
        let off_axis = (x.position[1].powi(2) + x.position[2].powi(2)).sqrt();
        assert!((off_axis - r).abs() < 1e-6, "ring vertex {x:?} off the radius");
        let n = Vec3::from(x.normal);
        assert!(
            (n.length() - 1.0).abs() < 1e-5 && n.x.abs() < 1e-6,
            "normal {n} not unit and across x"
        );
    }
    assert_eq!(v[SIDES].colour[0], 127, "colour from the point's value");
    // Watertight: every edge, by position, is shared by exactly two triangles, and every
    // triangle faces away from the tube's inside (its vertices' normals).
    let key = |k: u32| v[k as usize].position.map(|c| (c * 1e5).round() as i64);
    let mut edges: HashMap<_, usize> = HashMap::new();
    for t in i.chunks(3) {
        for e in 0..3 {
            let (a, b) = (key(t[e]), key(t[(e + 1) % 3]));
            *edges.entry(if a < b { (a, b) } else { (b, a) }).or_default() += 1;
        }
        let p = [t[0], t[1], t[2]].map(|k| Vec3::from(v[k as usize].position));
        let face = (p[1] - p[0]).cross(p[2] - p[0]);
        assert!(
            face.dot(Vec3::from(v[t[0] as usize].normal)) > 0.0,
            "triangle {t:?} faces inwards"
        );
    }
    assert!(
        edges.values().all(|&c| c == 2),
        "open or repeated edges: {:?}",
        edges.values().filter(|&&c| c != 2).count()
    );
}

#[test]
fn a_helical_tube_keeps_its_frame_without_flips_and_across_the_tangent() {
    let path = helix(3.0, 48);
    let (v, _) = mesh(std::slice::from_ref(&path), 0.02);
    for k in 0..path.len() {
        let ring = &v[k * SIDES..(k + 1) * SIDES];
        let prev = path[k.saturating_sub(1)];
        let next = path[(k + 1).min(path.len() - 1)];
        let t = Vec3::new(next[0] - prev[0], next[1] - prev[1], next[2] - prev[2]).normalize();
        for x in ring {
            assert!(
                Vec3::from(x.normal).dot(t).abs() < 1e-4,
                "normal not across the tangent at point {k}"
            );
        }
        if k > 0 {
            let before = Vec3::from(v[(k - 1) * SIDES].normal);
            assert!(
                Vec3::from(ring[0].normal).dot(before) > 0.9,
                "the frame turned at point {k}"
            );
        }
    }
}

#[test]
fn paths_of_fewer_than_two_distinct_points_draw_nothing() {
    let (v, i) = mesh(&[vec![[0.5, 0.5, 0.5, 1.0]; 3], Vec::new()], 0.01);
    assert!(v.is_empty() && i.is_empty());
}
