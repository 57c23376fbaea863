//! `flowlab render` end to end (in process): a PNG of the cavity and a short video.

mod common;

use clap::Parser;
use flowlab::cli::render::{Args, run};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: Args,
}

#[test]
fn renders_png_and_video() {
    let Some(dir) = test_dir("renders_png_and_video") else {
        return;
    };
    let case = dir.join("cavity.toml");
    std::fs::write(&case, common::cavity_toml(100.0, 24)).unwrap();
    let png = dir.join("frame.png");
    let video = dir.join("out.mp4");
    let cli = Cli::try_parse_from([
        "render",
        case.to_str().unwrap(),
        "--set",
        "physics.re=400",
        "--steps",
        "50",
        "--view",
        "vorticity",
        "--contours",
        "10",
        "--streamlines",
        "grid:4",
        "--size",
        "320x240",
        "--out",
        png.to_str().unwrap(),
        "--video",
        video.to_str().unwrap(),
        "--frames",
        "6",
        "--steps-per-frame",
        "5",
    ])
    .unwrap();
    run(&cli.args).unwrap();
    let img = image::open(&png).unwrap();
    assert_eq!((img.width(), img.height()), (320, 240));
    if flowlab::export::video::ffmpeg_available("ffmpeg") {
        assert!(std::fs::metadata(&video).unwrap().len() > 0);
    } else {
        assert!(video.with_extension("frames").join("frame_00005.png").exists());
    }
    let bad = Cli::try_parse_from([
        "render",
        case.to_str().unwrap(),
        "--size",
        "12",
        "--out",
        png.to_str().unwrap(),
    ])
    .unwrap();
    assert!(run(&bad.args).unwrap_err().contains("WIDTHxHEIGHT"));
}

fn args(extra: &[&str]) -> Args {
    let mut argv = vec!["render", "missing_case.toml", "--out", "never_written.png"];
    argv.extend_from_slice(extra);
    Cli::try_parse_from(argv).unwrap().args
}

/// Each bad value is refused before the case is read or a GPU is asked for, with a message
/// naming the option and the valid range.
#[test]
fn bad_values_are_refused_with_the_option_and_the_range() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["--streamlines", "grid:0"],
            &["--streamlines grid:0", "from 1 to 64"],
        ),
        (
            &["--streamlines", "grid:1000000"],
            &["grid:1000000", "from 1 to 64"],
        ),
        (&["--streamlines", "grid:x"], &["expected grid:N"]),
        (
            &["--streamlines", "rake:0,0,1,1,0"],
            &["rake:0,0,1,1,0", "from 1 to 1000"],
        ),
        (&["--streamlines", "rake:0,0,1,1,100000000"], &["from 1 to 1000"]),
        (&["--streamlines", "rake:0,0,1,1,2.5"], &["whole number"]),
        (
            &["--streamlines", "rake:nan,0,1,1,5"],
            &["rake:nan,0,1,1,5", "`nan` is not a finite number"],
        ),
        (
            &["--streamlines", "points:0.1,inf"],
            &["`inf` is not a finite number"],
        ),
        (
            &["--streamlines", "even:0"],
            &["--streamlines even:0", "from 0.005 to 0.5"],
        ),
        (
            &["--streamlines", "even:nan"],
            &["even:nan", "not a finite number"],
        ),
        (&["--streamlines", "spiral:3"], &["grid:N", "even:DSEP"]),
        (
            &["--integrator", "rk4", "--step", "0"],
            &["--step 0", "positive finite"],
        ),
        (&["--step", "nan"], &["--step NaN", "positive finite"]),
        (&["--step", "-0.01"], &["--step -0.01", "positive finite"]),
        (&["--tolerance", "0"], &["--tolerance 0", "positive finite"]),
        (&["--range=-inf,inf"], &["--range -inf,inf", "finite"]),
        (&["--range", "2,1"], &["MIN < MAX"]),
        (&["--arrows", "100000000"], &["--arrows 100000000", "2 to 200"]),
        (&["--arrows", "1"], &["--arrows 1", "2 to 200"]),
        (
            &["--contours", "100000"],
            &["--contours 100000", "0 (none) to 256"],
        ),
        (&["--frames", "0"], &["--frames 0", "at least 1"]),
        (&["--fps", "0"], &["--fps 0", "1 to 240"]),
        (&["--t-end", "nan"], &["--t-end NaN", "finite"]),
        (&["--t-end", "-1"], &["--t-end -1", "0 or more"]),
        (&["--t-end", "inf"], &["--t-end inf", "finite"]),
        (&["--size", "0x0"], &["--size 0x0", "1 to 16384"]),
        (&["--size", "99999999999x1"], &["1 to 16384"]),
        (&["--size", "16385x16385"], &["1 to 16384"]),
    ];
    for (extra, wanted) in cases {
        let e = run(&args(extra)).unwrap_err();
        for w in *wanted {
            assert!(e.contains(w), "{extra:?}: `{e}` lacks `{w}`");
        }
    }
    // The good forms pass the checks (and then fail on the missing case file).
    for extra in [
        &["--streamlines", "even:0.03"][..],
        &["--streamlines", "grid:64"],
        &["--streamlines", "rake:0,0,1,1,1000"],
        &[
            "--integrator",
            "rk4",
            "--step",
            "0.01",
            "--arrows",
            "200",
            "--contours",
            "0",
        ],
    ] {
        let e = run(&args(extra)).unwrap_err();
        assert!(e.contains("missing_case.toml"), "{extra:?}: {e}");
    }
}

/// An image larger than the device's largest buffer (8193^2 RGBA is 257 MiB, wgpu's default
/// limit 256 MiB) reads back in bands; one larger than its largest texture is refused.
#[test]
fn large_images_read_back_or_are_refused() {
    let Some(mut h) = common::headless_or_skip("large_images_read_back_or_are_refused") else {
        return;
    };
    let case = common::cavity(100.0, 16);
    let solver = flowlab::solver::build(&case.spec).unwrap();
    let mut frame = flowlab::render::view::FrameData::default();
    let view = flowlab::render::view::ViewSettings::for_field("speed");
    flowlab::cli::render::frame_of(solver.as_ref(), &view, &mut Default::default(), &mut frame).unwrap();
    let max = h.gpu.device.limits().max_texture_dimension_2d;
    if max >= 8193 {
        let img = h.render(&frame, 8193, 8193, None).unwrap();
        assert_eq!(img.dimensions(), (8193, 8193));
        // The background in the corner, the field in the middle.
        let corner = *img.get_pixel(0, 0);
        assert_eq!(corner, *img.get_pixel(8192, 8192));
        assert_ne!(corner, *img.get_pixel(4096, 4096));
    }
    let e = h.render(&frame, max + 1, 16, None).unwrap_err();
    assert!(e.contains(&format!("from 1 to {max} pixels")), "{e}");
}

/// Pixels of `img` that are neither the background nor the bounding box's grey: coloured
/// surface.
fn surface_pixels(img: &image::RgbaImage) -> usize {
    img.pixels()
        .filter(|p| {
            let [r, g, b, _] = p.0.map(i32::from);
            (r - g).abs().max((g - b).abs()).max((r - b).abs()) > 40
        })
        .count()
}

/// The emptied output folder of the test `name`, or `None` (the test skips) where there is no
/// GPU adapter outside CI.
fn test_dir(name: &str) -> Option<std::path::PathBuf> {
    common::headless_or_skip(name)?;
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Some(dir)
}

/// `flowlab render` of the case `case` (in `cases/`) on the CPU with the settings `sets` and the
/// arguments `extra`, into `dir/name`.
fn render_case(
    dir: &std::path::Path,
    case: &str,
    sets: &[&str],
    extra: &[&str],
    name: &str,
) -> Result<image::RgbaImage, String> {
    let file = common::root().join("cases").join(format!("{case}.toml"));
    let png = dir.join(name);
    let mut argv = vec!["render", file.to_str().unwrap(), "--out", png.to_str().unwrap()];
    for s in sets.iter().chain(&["solver.backend=cpu"]) {
        argv.extend(["--set", s]);
    }
    argv.extend(extra);
    run(&Cli::try_parse_from(argv).map_err(|e| e.to_string())?.args)?;
    Ok(image::open(&png).unwrap().to_rgba8())
}

/// `flowlab render` of the cubic cavity (16 cells along z, on the CPU, 40 steps) at 320 x 240
/// with the arguments `extra`, into `dir/name`.
fn render_3d_case(dir: &std::path::Path, extra: &[&str], name: &str) -> Result<image::RgbaImage, String> {
    let mut args = vec!["--steps", "40", "--size", "320x240"];
    args.extend(extra);
    render_case(dir, "cavity_3d_re100", &["grid.nz=16"], &args, name)
}

#[test]
fn isosurfaces_of_a_3d_case_render_in_a_3d_view() {
    let Some(dir) = test_dir("isosurfaces_of_a_3d_case_render_in_a_3d_view") else {
        return;
    };
    let render = |extra: &[&str], name: &str| render_3d_case(&dir, extra, name);
    let near = render(&["--iso", "speed=0.05,0.2"], "near.png").unwrap();
    let far = render(&["--iso", "speed=0.05,0.2", "--camera", "30,20,2"], "far.png").unwrap();
    let behind = render(&["--iso", "speed=0.05,0.2", "--camera", "210,20,1"], "behind.png").unwrap();
    let (n, f) = (surface_pixels(&near), surface_pixels(&far));
    assert!(n > 320 * 240 / 50, "the surfaces cover {n} pixels");
    // Twice as far: about a quarter of the pixels.
    assert!(
        f * 2 < n && f * 8 > n,
        "{f} pixels at twice the distance against {n}"
    );
    assert!(near != behind, "the view from behind is the same image");
    for (extra, says) in [
        (&["--iso", "speed=0.1", "--camera", "30,20,0"][..], "--camera"),
        (&["--slice", "w=0.5"][..], "x, y or z"),
        (&["--slice", "z=1.5"][..], "from 0 to 1"),
        (&["--slice", "z=0.5", "--slice", "x=0.5"][..], "give --camera"),
        (
            &[
                "--camera", "30,20,1", "--slice", "z=0.5", "--slice", "x=0.5", "--slice", "y=0.5", "--slice",
                "z=0.2",
            ][..],
            "at most 3 slices",
        ),
        (&["--iso", "nothing=0.1"][..], "it has:"),
        (
            &["--camera", "30,20,1", "--iso-colour", "p"][..],
            "give the isosurfaces",
        ),
        (&["--iso", "speed=0.1", "--iso-opacity", "1.5"][..], "from 0 to 1"),
        (
            &["--iso", "speed=0.1", "--iso-colour", "nothing"][..],
            "--iso-colour: the solver has no field",
        ),
        (&["--iso", "speed"][..], "FIELD=LEVEL"),
    ] {
        let e = render(extra, "bad.png").unwrap_err();
        assert!(e.contains(says), "{extra:?}: {e}");
    }
    let flat = common::root().join("cases").join("lid_driven_cavity_re100.toml");
    let png = dir.join("flat.png");
    let cli = Cli::try_parse_from([
        "render",
        flat.to_str().unwrap(),
        "--iso",
        "speed=0.1",
        "--out",
        png.to_str().unwrap(),
    ])
    .unwrap();
    let e = run(&cli.args).unwrap_err();
    assert!(e.contains("--iso") && e.contains("3D"), "{e}");
}

#[test]
fn slices_render_flat_and_in_place_in_the_3d_view() {
    let Some(dir) = test_dir("slices_render_flat_and_in_place_in_the_3d_view") else {
        return;
    };
    let render = |extra: &[&str], name: &str| -> image::RgbaImage {
        let mut argv = vec!["--set", "grid.nx=16", "--set", "grid.ny=16", "--view", "speed"];
        argv.extend(extra);
        render_3d_case(&dir, &argv, name).unwrap()
    };
    // Flat: the default plane is the mid-plane normal to z; a plane normal to x differs.
    let default = render(&[], "default.png");
    assert!(
        default == render(&["--slice", "z=0.5"], "z.png"),
        "--slice z=0.5 is not the default view"
    );
    assert!(
        default != render(&["--slice", "x=0.5"], "x.png"),
        "the x slice looks like the z slice"
    );
    // In place: the slice fills part of the 3D view, and moves with its position.
    let mid = render(&["--camera", "30,20,1", "--slice", "z=0.5"], "mid3d.png");
    let back = render(&["--camera", "30,20,1", "--slice", "z=0.05"], "back3d.png");
    let n = surface_pixels(&mid);
    assert!(n > 320 * 240 / 20, "the slice covers {n} pixels");
    assert!(mid != back, "moving the slice does not change the 3D view");
    // Closer to the back of the box, seen from the front: smaller.
    assert!(surface_pixels(&back) < n, "the far slice is not smaller");
    // With an isosurface, drawn depth-tested together.
    let both = render(
        &["--camera", "30,20,1", "--slice", "z=0.5", "--iso", "speed=0.2"],
        "both.png",
    );
    assert!(both != mid, "the isosurface is not drawn with the slice");
}

#[test]
fn streamlines_run_through_the_3d_view_from_seeds_on_the_slice() {
    let Some(dir) = test_dir("streamlines_run_through_the_3d_view_from_seeds_on_the_slice") else {
        return;
    };
    let render = |extra: &[&str], name: &str| -> image::RgbaImage {
        let mut argv = vec![
            "--set",
            "grid.nx=16",
            "--set",
            "grid.ny=16",
            "--view",
            "speed",
            "--camera",
            "30,25,1",
        ];
        argv.extend(extra);
        if !extra.contains(&"--slice") {
            argv.extend(["--slice", "y=0.3"]);
        }
        render_3d_case(&dir, &argv, name).unwrap()
    };
    // Coloured pixels in the image's top third: the slice y = 0.3 lies below it, the tubes
    // through the lid's flow (y near 1) above.
    let upper = |img: &image::RgbaImage| {
        let mut top = img.clone();
        top.pixels_mut().skip(320 * 80).for_each(|p| p.0 = [0, 0, 0, 255]);
        surface_pixels(&top)
    };
    let slice = render(&[], "slice.png");
    let tubes = render(&["--streamlines", "grid:4"], "tubes.png");
    let (without, with) = (upper(&slice), upper(&tubes));
    assert!(
        with > without + 200,
        "tubes add {with} - {without} pixels above the slice"
    );
    // Seeds on a slice of another height give other lines.
    let higher = render(&["--streamlines", "grid:4", "--slice", "y=0.6"], "higher.png");
    assert!(
        higher != tubes,
        "moving the seeding slice does not move the lines"
    );
    // Evenly spaced lines stay in the slice's plane: nothing above it.
    let even = render(&["--streamlines", "even:0.1"], "even.png");
    assert!(even != slice, "no lines drawn on the slice");
    assert_eq!(upper(&even), without, "evenly spaced lines left the slice");
}

#[test]
fn a_checkpoint_renders_as_the_run_that_wrote_it() {
    let Some(dir) = test_dir("a_checkpoint_renders_as_the_run_that_wrote_it") else {
        return;
    };
    let sets = ["grid.nx=16", "grid.ny=16", "grid.nz=16", "solver.backend=cpu"];
    let case = common::case("cavity_3d_re100", &sets);
    let mut solver = flowlab::solver::build(&case.spec).unwrap();
    for _ in 0..30 {
        solver.step().unwrap();
    }
    let checkpoint = dir.join("checkpoint.flowlab");
    let state = solver.snapshot().unwrap();
    flowlab::solver::snapshot::write_checkpoint(&checkpoint, &case.to_toml(), &state).unwrap();
    let render = |extra: &[&str], name: &str| {
        let mut args = vec!["--size", "240x180", "--camera", "30,20,1", "--iso", "speed=0.05"];
        args.extend(extra);
        render_case(&dir, "cavity_3d_re100", &sets[..3], &args, name)
    };
    // 30 steps in the checkpoint and 10 more draw what 40 from the start draw.
    let path = checkpoint.to_str().unwrap();
    let resumed = render(&["--restart", path, "--steps", "10"], "resumed.png").unwrap();
    assert!(
        resumed == render(&["--steps", "40"], "start.png").unwrap(),
        "the resumed state differs"
    );
    assert!(
        resumed != render(&["--steps", "10"], "ten.png").unwrap(),
        "the checkpoint was not read"
    );
    let e = render(&["--restart", path, "--set", "grid.nz=8"], "bad.png").unwrap_err();
    assert!(e.contains("--restart") && e.contains("cannot continue"), "{e}");
}

/// Direct volume rendering on an analytic case: the cavity at rest has speed 0 everywhere, so
/// every sample has the colour at the middle of the scale and the constant opacity `a` a cell
/// length; a ray through the middle of the unit cube (16 cells) composites
/// `A = 1 - (1 - a)^16` of that colour over the background.
#[test]
fn volume_rendering_composites_the_opacity_along_each_ray() {
    let Some(dir) = test_dir("volume_rendering_composites_the_opacity_along_each_ray") else {
        return;
    };
    let render = |extra: &[&str], name: &str| {
        let mut args = vec!["--size", "200x150"];
        args.extend(extra);
        render_case(
            &dir,
            "cavity_3d_re100",
            &["grid.nx=16", "grid.ny=16", "grid.nz=16"],
            &args,
            name,
        )
    };
    let a = 0.05f64;
    let o = format!("{a},{a},{a},{a}");
    let at_rest = render(
        &["--volume", "speed", "--opacity", &o, "--camera", "0,0,1"],
        "rest.png",
    )
    .unwrap();
    let alpha = 1.0 - (1.0 - a).powi(16);
    let colour = flowlab::render::colormap::Colormap::Viridis.color(128.0 / 255.0);
    let background = [0.09, 0.09, 0.1].map(|c: f64| c * 255.0);
    let centre = at_rest.get_pixel(100, 75).0;
    for c in 0..3 {
        let want = alpha * colour[c] as f64 + (1.0 - alpha) * background[c];
        assert!(
            (centre[c] as f64 - want).abs() <= 3.0,
            "channel {c}: {} against {want:.1} (A = {alpha:.3})",
            centre[c]
        );
    }
    // A transparent curve draws the empty box; a developed flow's speed draws more than that.
    let empty = render(&["--camera", "30,20,1", "--iso", "speed=9"], "empty.png").unwrap();
    let clear = render(
        &["--volume", "speed", "--opacity", "0,0,0,0", "--camera", "30,20,1"],
        "clear.png",
    )
    .unwrap();
    assert!(clear == empty, "a transparent volume changed the picture");
    let flow = render(
        &["--volume", "speed", "--camera", "30,20,1", "--steps", "40"],
        "flow.png",
    )
    .unwrap();
    assert!(
        surface_pixels(&flow) > 200 * 150 / 50,
        "the volume covers {} pixels",
        surface_pixels(&flow)
    );
    for (extra, says) in [
        (&["--opacity", "0,0,0,0"][..], "--volume"),
        (&["--volume", "speed", "--opacity", "0,1"][..], "four opacities"),
        (
            &["--volume", "speed", "--opacity", "0,0,0,2"][..],
            "four opacities",
        ),
        (&["--volume", "nothing"][..], "it has:"),
    ] {
        let e = render(extra, "bad.png").unwrap_err();
        assert!(e.contains(says), "{extra:?}: {e}");
    }
}
