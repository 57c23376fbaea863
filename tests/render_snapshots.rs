//! Offscreen renders of the cavity and the cubic cavity (its 3D view: slice, isosurfaces,
//! streamlines, volume rendering) compared with committed reference images
//! (`tests/snapshots/*.png`, tolerant per-pixel comparison). `FLOWLAB_UPDATE_SNAPSHOTS=1`
//! rewrites the references.

mod common;

use flowlab::render::gather::{self, Freshness, Scratch};
use flowlab::render::scene3d;
use flowlab::render::streamlines::Integrator;
use flowlab::render::surface;
use flowlab::render::view::{FrameData, Seeding, Slice, View3d, ViewSettings, VolumeSettings};
use flowlab::solver::{self, Solver};
use image::RgbaImage;
use std::path::PathBuf;

/// A channel differing by more than this counts as a different pixel.
const CHANNEL_TOLERANCE: i16 = 24;
/// Share of different pixels allowed.
const PIXEL_TOLERANCE: f64 = 0.005;

fn snapshot_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(format!("{name}.png"))
}

fn check(name: &str, actual: &RgbaImage) {
    let path = snapshot_path(name);
    let update = std::env::var("FLOWLAB_UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1");
    if update {
        actual.save(&path).unwrap();
        eprintln!("updated {}", path.display());
        return;
    }
    let expected = image::open(&path)
        .unwrap_or_else(|e| {
            panic!(
                "missing reference {} ({e}); run with FLOWLAB_UPDATE_SNAPSHOTS=1",
                path.display()
            )
        })
        .to_rgba8();
    assert_eq!(expected.dimensions(), actual.dimensions(), "{name}: size differs");
    let different = expected
        .pixels()
        .zip(actual.pixels())
        .filter(|(a, b)| (0..4).any(|c| (a[c] as i16 - b[c] as i16).abs() > CHANNEL_TOLERANCE))
        .count();
    let share = different as f64 / (expected.width() * expected.height()) as f64;
    if share > PIXEL_TOLERANCE {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.actual.png"));
        actual.save(&out).unwrap();
        panic!(
            "{name}: {:.2}% of pixels differ from {} (actual image: {})",
            100.0 * share,
            path.display(),
            out.display()
        );
    }
}

/// The cavity at Re 100 on 48x48 cells, run to t = 6.
fn cavity_solver() -> Box<dyn Solver> {
    let case = common::cavity(100.0, 48);
    let mut s = solver::build(&case.spec).unwrap();
    while s.time() < 6.0 {
        s.step().unwrap();
    }
    s
}

fn render(h: &mut flowlab::render::headless::Headless, s: &dyn Solver, v: &ViewSettings) -> RgbaImage {
    let mut frame = FrameData::default();
    gather::gather(s, v, Freshness::Current, &mut Scratch::default(), &mut frame).expect("fields exist");
    h.render(&frame, 480, 360, None).unwrap()
}

#[test]
fn cavity_views_match_references() {
    let Some(mut h) = common::headless_or_skip("cavity_views_match_references") else {
        return;
    };
    let s = cavity_solver();

    let mut v = ViewSettings::for_field("vorticity");
    v.range = flowlab::render::view::Range::Fixed { min: -5.0, max: 5.0 };
    v.contours.enabled = true;
    v.contours.levels = 14;
    v.contours.field = Some("stream_function".into());
    check("cavity_vorticity_contours", &render(&mut h, s.as_ref(), &v));

    let mut v = ViewSettings::for_field("speed");
    v.streamlines.seeding = Seeding::Grid { n: 6 };
    v.streamlines.integrator = Integrator::Rk45 { tolerance: 1e-5 };
    check("cavity_speed_streamlines", &render(&mut h, s.as_ref(), &v));

    let mut v = ViewSettings::for_field("p");
    v.colormap = flowlab::render::colormap::Colormap::Turbo;
    v.arrows = Some(16);
    check("cavity_pressure_arrows", &render(&mut h, s.as_ref(), &v));
}

/// The cubic cavity at Re 100 on 16^3 cells after 60 steps.
fn cube_solver() -> Box<dyn Solver> {
    let case = common::case("cavity_3d_re100", &["grid.nx=16", "grid.ny=16", "grid.nz=16"]);
    let mut s = solver::build(&case.spec).unwrap();
    for _ in 0..60 {
        s.step().unwrap();
    }
    s
}

/// The 3D view of `s` for `v`, from azimuth 30 and elevation 20 degrees.
fn render_3d(h: &mut flowlab::render::headless::Headless, s: &dyn Solver, v: &ViewSettings) -> RgbaImage {
    let mut frame = FrameData::default();
    gather::gather(s, v, Freshness::Current, &mut Scratch::default(), &mut frame).expect("fields exist");
    let g = s.info().grid;
    let (min, max) = scene3d::domain(&g);
    let camera = surface::camera_from(min, max, 30.0, 20.0, 1.0);
    h.render_3d(&frame, v, &g, &camera, 320, 240).unwrap()
}

#[test]
fn cube_views_match_references() {
    let Some(mut h) = common::headless_or_skip("cube_views_match_references") else {
        return;
    };
    let s = cube_solver();
    let speed = || {
        let mut v = ViewSettings::for_field("speed");
        v.view3d = View3d::opening(None);
        v
    };

    // The mid-plane z = 0.5 in place, with contours.
    let mut v = speed();
    v.contours.enabled = true;
    check("cube_slice_contours", &render_3d(&mut h, s.as_ref(), &v));

    // Two isosurfaces of the speed, no slice.
    let mut v = speed();
    v.view3d.slice = false;
    v.view3d.iso_field = Some("speed".into());
    v.view3d.iso_levels = vec![0.02, 0.08];
    check("cube_isosurfaces", &render_3d(&mut h, s.as_ref(), &v));

    // Streamlines in space from a 4 x 4 lattice on the plane y = 0.6.
    let mut v = speed();
    v.slice = Slice {
        axis: 1,
        position: 0.6,
    };
    v.streamlines.seeding = Seeding::Grid { n: 4 };
    check("cube_streamlines", &render_3d(&mut h, s.as_ref(), &v));

    // The speed volume-rendered with the default opacity curve.
    let mut v = speed();
    v.view3d.slice = false;
    v.view3d.volume = Some(VolumeSettings::of("speed"));
    check("cube_volume", &render_3d(&mut h, s.as_ref(), &v));

    // Three slices (z = 0.5, x = 0.3, y = 0.25) on one colour scale, with contours and arrows.
    let mut v = speed();
    v.contours.enabled = true;
    v.arrows = Some(8);
    v.view3d.more_slices = vec![
        Slice {
            axis: 0,
            position: 0.3,
        },
        Slice {
            axis: 1,
            position: 0.25,
        },
    ];
    check("cube_three_slices", &render_3d(&mut h, s.as_ref(), &v));

    // The speed's isosurfaces coloured by the pressure, at 0.45 opacity over the mid-plane.
    let mut v = speed();
    v.view3d.iso_field = Some("speed".into());
    v.view3d.iso_levels = vec![0.02, 0.08];
    v.view3d.iso_colour = Some("p".into());
    v.view3d.iso_opacity = Some(0.45);
    check(
        "cube_isosurfaces_coloured_transparent",
        &render_3d(&mut h, s.as_ref(), &v),
    );
}

/// The opaque isosurfaces rasterised in compute (the view's way) and through the graphics
/// pipeline draw the same image: at most 0.5 % of the pixels differ (by more than
/// `CHANNEL_TOLERANCE` in a channel: pixels on a silhouette that one covers and the other
/// not, by the pipeline's top-left rule), and the pixels the surfaces cover agree within
/// 0.3 % (a crack between the compute rasteriser's triangles, or a dropped triangle, would
/// leave the background showing). Two levels of a wrinkled field at 64^3 (about 60,000
/// triangles, a pixel or two each), and the cubic cavity's speed surfaces coloured by the
/// pressure through the mid-plane slice.
#[test]
fn surfaces_rasterised_in_compute_match_the_graphics_pipeline() {
    use flowlab::render::surface_raster::Rasteriser;
    let Some(mut h) = common::headless_or_skip("surfaces_rasterised_in_compute_match_the_graphics_pipeline")
    else {
        return;
    };
    let n = 64;
    let c = |i: usize| (i as f64 + 0.5) / n as f64;
    let mut values = Vec::with_capacity(n * n * n);
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                let (x, y, z) = (c(i) - 0.5, c(j) - 0.5, c(k) - 0.5);
                let wrinkle = 0.03 * (14.0 * x).sin() * (11.0 * y).sin() * (9.0 * z).cos();
                values.push(((x * x + y * y + z * z).sqrt() + wrinkle) as f32);
            }
        }
    }
    let grid = flowlab::solver::grid::Grid {
        dim: 3,
        n: [n; 3],
        origin: [0.0; 3],
        spacing: [1.0 / n as f64; 3],
    };
    let frame = FrameData {
        volume: values,
        ..FrameData::default()
    };
    let mut shells = ViewSettings::for_field("speed");
    shells.view3d.enabled = true;
    shells.view3d.slice = false;
    shells.view3d.iso_levels = vec![0.25, 0.4];
    let (min, max) = scene3d::domain(&grid);
    let camera = surface::camera_from(min, max, 30.0, 20.0, 0.8);
    let s = cube_solver();
    let mut cube = ViewSettings::for_field("speed");
    cube.view3d = View3d::opening(None);
    cube.view3d.iso_field = Some("speed".into());
    cube.view3d.iso_levels = vec![0.02, 0.08];
    cube.view3d.iso_colour = Some("p".into());
    for name in ["shells", "cube"] {
        let mut image = |r: Rasteriser| {
            h.view3d.set_rasteriser(r);
            if name == "shells" {
                h.render_3d(&frame, &shells, &grid, &camera, 640, 480).unwrap()
            } else {
                render_3d(&mut h, s.as_ref(), &cube)
            }
        };
        let pipeline = image(Rasteriser::Pipeline);
        let compute = image(Rasteriser::Compute);
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        pipeline
            .save(out.join(format!("raster_{name}_pipeline.png")))
            .unwrap();
        compute
            .save(out.join(format!("raster_{name}_compute.png")))
            .unwrap();
        let pixels = (compute.width() * compute.height()) as f64;
        let different = pipeline
            .pixels()
            .zip(compute.pixels())
            .filter(|(a, b)| (0..4).any(|c| (a[c] as i16 - b[c] as i16).abs() > CHANNEL_TOLERANCE))
            .count() as f64;
        let exact = pipeline
            .pixels()
            .zip(compute.pixels())
            .filter(|(a, b)| a != b)
            .count();
        // The corner shows the background in both views.
        let covered = |i: &RgbaImage| {
            let background = *i.get_pixel(0, 0);
            i.pixels().filter(|p| **p != background).count() as f64
        };
        let (by_pipeline, by_compute) = (covered(&pipeline), covered(&compute));
        eprintln!(
            "{name}: {:.3} % of pixels differ ({exact} at all); covered {by_pipeline} (pipeline) vs {by_compute} (compute)",
            100.0 * different / pixels
        );
        assert!(
            by_pipeline > 0.1 * pixels,
            "{name}: the surfaces cover too little to compare"
        );
        assert!(
            different / pixels <= PIXEL_TOLERANCE,
            "{name}: {different} pixels differ"
        );
        assert!(
            (by_compute - by_pipeline).abs() <= 0.003 * by_pipeline,
            "{name}: covered {by_compute} pixels in compute, {by_pipeline} through the pipeline"
        );
    }
    h.view3d.set_rasteriser(Rasteriser::Compute);
}
