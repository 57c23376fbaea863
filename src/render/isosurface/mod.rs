//! Isosurfaces of a scalar field sampled on a regular 3D lattice, as an indexed triangle mesh:
//! marching tetrahedra on the Kuhn triangulation (every lattice cube cut into the 6 tetrahedra
//! around its main diagonal, Kuhn 1960). Every cube is cut the same way, so two cubes cut their
//! shared face along the same diagonal and the surface has no cracks and no ambiguous cases: where
//! the level set is closed the mesh is watertight (every edge shared by two triangles). Each
//! vertex is the linear interpolation of the level along a lattice or diagonal edge, shared by
//! every triangle that meets that edge; triangles face the side of larger values.
//!
//! This is the reference the GPU extraction ([`gpu`]) is tested against, and the mesh that is
//! exported.

pub mod gpu;

use glam::Vec3;
use std::collections::HashMap;

/// A triangle mesh: positions (world coordinates) and triangles of three position indices,
/// counter-clockwise seen from the side of larger field values.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    pub positions: Vec<Vec3>,
    pub triangles: Vec<[u32; 3]>,
}

/// A scalar field on a lattice of `n[0] x n[1] x n[2]` points, x fastest, point `(i, j, k)` at
/// `origin + spacing * (i, j, k)`.
#[derive(Clone, Copy, Debug)]
pub struct Lattice<'a> {
    pub values: &'a [f32],
    pub n: [usize; 3],
    pub origin: Vec3,
    pub spacing: Vec3,
}

impl Lattice<'_> {
    fn index(&self, p: [usize; 3]) -> usize {
        p[0] + self.n[0] * (p[1] + self.n[1] * p[2])
    }

    fn position(&self, p: [usize; 3]) -> Vec3 {
        self.origin + self.spacing * Vec3::new(p[0] as f32, p[1] as f32, p[2] as f32)
    }
}

/// The orders in which a tetrahedron of the Kuhn triangulation steps from corner (0, 0, 0) of
/// its cube to corner (1, 1, 1), one axis at a time.
const AXIS_ORDERS: [[usize; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];

/// The surface `field = level` of `lattice` (points with a non-finite value are outside every
/// surface: no triangle touches them).
pub fn extract(lattice: &Lattice, level: f32) -> Mesh {
    assert_eq!(lattice.values.len(), lattice.n.iter().product::<usize>());
    let mut mesh = Mesh::default();
    let mut on_edge: HashMap<(usize, usize), u32> = HashMap::new();
    let n = lattice.n;
    if n.iter().any(|&m| m < 2) {
        return mesh;
    }
    for k in 0..n[2] - 1 {
        for j in 0..n[1] - 1 {
            for i in 0..n[0] - 1 {
                for order in AXIS_ORDERS {
                    let mut corner = [i, j, k];
                    let mut tet = [corner; 4];
                    for (step, axis) in order.into_iter().enumerate() {
                        corner[axis] += 1;
                        tet[step + 1] = corner;
                    }
                    march(lattice, level, tet, &mut mesh, &mut on_edge);
                }
            }
        }
    }
    mesh
}

/// The piece of the surface in one tetrahedron (its 4 lattice points).
fn march(
    lattice: &Lattice,
    level: f32,
    tet: [[usize; 3]; 4],
    mesh: &mut Mesh,
    on_edge: &mut HashMap<(usize, usize), u32>,
) {
    let idx = tet.map(|p| lattice.index(p));
    let v = idx.map(|i| lattice.values[i]);
    if v.iter().any(|x| !x.is_finite()) {
        return;
    }
    let below_count = v.iter().filter(|x| **x < level).count();
    if below_count == 0 || below_count == 4 {
        return;
    }
    let below: Vec<usize> = (0..4).filter(|&c| v[c] < level).collect();
    let above: Vec<usize> = (0..4).filter(|&c| v[c] >= level).collect();
    let mut vertex = |a: usize, b: usize| -> u32 {
        let key = (idx[a].min(idx[b]), idx[a].max(idx[b]));
        *on_edge.entry(key).or_insert_with(|| {
            let t = (level - v[a]) / (v[b] - v[a]);
            let (pa, pb) = (lattice.position(tet[a]), lattice.position(tet[b]));
            mesh.positions.push(pa + t * (pb - pa));
            (mesh.positions.len() - 1) as u32
        })
    };
    // The crossed edges, each from a point below the level to one above.
    let crossings: Vec<(usize, usize)> = match below.len() {
        1 => above.iter().map(|&b| (below[0], b)).collect(),
        3 => below.iter().map(|&a| (a, above[0])).collect(),
        // Two and two: the quad b0 a0, b0 a1, b1 a1, b1 a0 (a cycle round the tetrahedron).
        _ => vec![
            (below[0], above[0]),
            (below[0], above[1]),
            (below[1], above[1]),
            (below[1], above[0]),
        ],
    };
    let ids: Vec<u32> = crossings.iter().map(|&(a, b)| vertex(a, b)).collect();
    // Towards larger values: from the first crossing's point below to its point above.
    let (a, b) = crossings[0];
    let uphill = lattice.position(tet[b]) - lattice.position(tet[a]);
    let mut emit = |t: [u32; 3]| {
        let [p0, p1, p2] = t.map(|i| mesh.positions[i as usize]);
        let normal = (p1 - p0).cross(p2 - p0);
        mesh.triangles.push(if normal.dot(uphill) >= 0.0 {
            t
        } else {
            [t[0], t[2], t[1]]
        });
    };
    emit([ids[0], ids[1], ids[2]]);
    if ids.len() == 4 {
        emit([ids[0], ids[2], ids[3]]);
    }
}

impl Mesh {
    /// Total area.
    pub fn area(&self) -> f64 {
        self.triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| self.positions[i as usize].as_dvec3());
                0.5 * (b - a).cross(c - a).length()
            })
            .sum()
    }

    /// Triangles sharing each undirected edge, counted; a closed surface has exactly 2 for every
    /// edge (none on the boundary of the mesh).
    pub fn edge_counts(&self) -> HashMap<(u32, u32), u32> {
        let mut counts = HashMap::new();
        for t in &self.triangles {
            for e in 0..3 {
                let (a, b) = (t[e], t[(e + 1) % 3]);
                *counts.entry((a.min(b), a.max(b))).or_insert(0) += 1;
            }
        }
        counts
    }

    /// Volume enclosed by a closed mesh (divergence theorem), positive when the triangles face
    /// outward.
    pub fn enclosed_volume(&self) -> f64 {
        self.triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| self.positions[i as usize].as_dvec3());
                a.dot(b.cross(c)) / 6.0
            })
            .sum()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::f64::consts::PI;

    /// `f` on an `m^3` lattice over the unit cube (points at the cell centres of an m^3 grid).
    pub(super) fn sampled(m: usize, f: impl Fn(Vec3) -> f32) -> (Vec<f32>, Lattice<'static>) {
        let h = 1.0 / m as f32;
        let origin = Vec3::splat(0.5 * h);
        let mut values = Vec::with_capacity(m * m * m);
        for k in 0..m {
            for j in 0..m {
                for i in 0..m {
                    values.push(f(origin + h * Vec3::new(i as f32, j as f32, k as f32)));
                }
            }
        }
        let lattice = Lattice {
            values: &[],
            n: [m; 3],
            origin,
            spacing: Vec3::splat(h),
        };
        (values, lattice)
    }

    fn closed(mesh: &Mesh) {
        let counts = mesh.edge_counts();
        let bad = counts.values().filter(|&&c| c != 2).count();
        assert_eq!(
            bad,
            0,
            "{bad} of {} edges not shared by exactly two triangles",
            counts.len()
        );
    }

    #[test]
    fn sphere_is_watertight_on_the_sphere_and_of_its_area() {
        let (m, r) = (64, 0.3f32);
        let c = Vec3::splat(0.5);
        let (values, lattice) = sampled(m, |p| (p - c).length());
        let mesh = extract(
            &Lattice {
                values: &values,
                ..lattice
            },
            r,
        );
        closed(&mesh);
        let h = 1.0 / m as f32;
        let worst = mesh
            .positions
            .iter()
            .map(|p| ((*p - c).length() - r).abs())
            .fold(0.0, f32::max);
        assert!(
            worst <= 0.5 * h,
            "a vertex {worst} from the sphere (half a cell: {})",
            0.5 * h
        );
        let exact = 4.0 * PI * (r as f64).powi(2);
        let area = mesh.area();
        assert!(
            (area / exact - 1.0).abs() < 0.01,
            "area {area} vs 4 pi r^2 = {exact}"
        );
        // Facing outward (larger distances), enclosing the ball's volume.
        let volume = mesh.enclosed_volume();
        let ball = 4.0 / 3.0 * PI * (r as f64).powi(3);
        assert!((volume / ball - 1.0).abs() < 0.01, "volume {volume} vs {ball}");
        eprintln!(
            "sphere 64^3: {} triangles, area error {:.2e}, volume error {:.2e}, worst vertex {:.2e} h",
            mesh.triangles.len(),
            area / exact - 1.0,
            volume / ball - 1.0,
            worst / h
        );
    }

    #[test]
    fn torus_is_watertight_and_of_its_area() {
        let (m, big, small) = (64, 0.3f32, 0.12f32);
        let c = Vec3::splat(0.5);
        let (values, lattice) = sampled(m, |p| {
            let q = p - c;
            let ring = (q.x * q.x + q.y * q.y).sqrt() - big;
            (ring * ring + q.z * q.z).sqrt()
        });
        let mesh = extract(
            &Lattice {
                values: &values,
                ..lattice
            },
            small,
        );
        closed(&mesh);
        let exact = 4.0 * PI * PI * big as f64 * small as f64;
        let area = mesh.area();
        assert!(
            (area / exact - 1.0).abs() < 0.01,
            "area {area} vs 4 pi^2 R r = {exact}"
        );
        let volume = mesh.enclosed_volume();
        let solid = 2.0 * PI * PI * big as f64 * (small as f64).powi(2);
        assert!((volume / solid - 1.0).abs() < 0.01, "volume {volume} vs {solid}");
        eprintln!(
            "torus 64^3: area error {:.2e}, volume error {:.2e}",
            area / exact - 1.0,
            volume / solid - 1.0
        );
    }

    #[test]
    fn a_surface_cut_by_the_lattice_boundary_is_open_only_there() {
        // The plane x = 0.4 crosses the whole lattice: its mesh is a rectangle of area 1 (the
        // lattice's y-z extent), open along the lattice's sides.
        let (values, lattice) = sampled(16, |p| p.x);
        let mesh = extract(
            &Lattice {
                values: &values,
                ..lattice
            },
            0.4,
        );
        let side = 15.0 / 16.0;
        assert!((mesh.area() - side * side).abs() < 1e-4, "{}", mesh.area());
        assert!(mesh.positions.iter().all(|p| (p.x - 0.4).abs() < 1e-5));
        let open = mesh.edge_counts().into_values().filter(|&c| c == 1).count();
        assert!(open > 0 && mesh.edge_counts().into_values().all(|c| c <= 2));
        // Facing +x, the side of larger values.
        for t in &mesh.triangles {
            let [a, b, c] = t.map(|i| mesh.positions[i as usize]);
            assert!((b - a).cross(c - a).x > 0.0);
        }
        // Nothing where the level is outside the values, or on a lattice of one layer.
        assert!(
            extract(
                &Lattice {
                    values: &values,
                    ..lattice
                },
                2.0
            )
            .triangles
            .is_empty()
        );
        let flat = Lattice {
            values: &values[..256],
            n: [16, 16, 1],
            ..lattice
        };
        assert!(extract(&flat, 0.4).triangles.is_empty());
    }
}
