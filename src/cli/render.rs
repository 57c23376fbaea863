//! `flowlab render`: runs a case headless and renders the field view (of a 3D case, a slice;
//! with `--iso` or `--camera`, the 3D view: box, slice in place, isosurfaces) offscreen with
//! wgpu to a PNG, or to a video (ffmpeg, else a PNG sequence).

use crate::case::Case;
use crate::export::{png, video};
use crate::render::colormap::Colormap;
use crate::render::gather::{self, Freshness, Scratch};
use crate::render::headless::Headless;
use crate::render::offscreen;
use crate::render::scene3d;
use crate::render::streamlines::{self, Integrator, even};
use crate::render::surface;
use crate::render::view::{
    FrameData, MAX_ARROWS, MAX_SLICES, Range, Seeding, Slice, View3d, ViewSettings, VolumeSettings,
};
use crate::solver::snapshot::read_checkpoint;
use crate::solver::{self, Solver};
use std::path::PathBuf;

/// Render a case offscreen (no window) to a PNG or a video.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Case file (TOML).
    pub case: PathBuf,
    /// Override a case setting, e.g. `--set physics.re=400` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Start from the state saved in a checkpoint (`flowlab run --checkpoint-every N`, or a run
    /// ended by Ctrl-C) of this case instead of from t = 0; `--steps` and `--t-end` then go on
    /// from there.
    #[arg(long)]
    pub restart: Option<PathBuf>,
    /// Steps to run before the (first) frame.
    #[arg(long)]
    pub steps: Option<u64>,
    /// Simulated time to run to before the (first) frame.
    #[arg(long, allow_negative_numbers = true)]
    pub t_end: Option<f64>,
    /// Field to show (e.g. vorticity, speed, p, stream_function; of a 3D case, `vorticity` is
    /// its component normal to the slice).
    #[arg(long, default_value = "vorticity")]
    pub view: String,
    /// Colormap: viridis, cividis, turbo or diverging (default: suits the field).
    #[arg(long)]
    pub colormap: Option<String>,
    /// Colour range: `auto` (data min to max), `robust` (1st to 99th percentile; the default for
    /// vorticity, schlieren and divergence) or a fixed `MIN,MAX`.
    #[arg(long, value_name = "auto|robust|MIN,MAX")]
    pub range: Option<String>,
    /// Logarithmic colour scale.
    #[arg(long)]
    pub log: bool,
    /// Number of contour levels (0 for none, at most 256).
    #[arg(long)]
    pub contours: Option<u32>,
    /// Field to contour (default: the shown field).
    #[arg(long)]
    pub contour_field: Option<String>,
    /// Streamlines: `grid:N` (N x N seeds, N up to 64), `rake:X0,Y0,X1,Y1,N` or
    /// `points:X,Y;X,Y;...` (up to 1000 seeds), or `even:DSEP` (evenly spaced lines DSEP apart, a
    /// fraction of the domain's larger side from 0.005 to 0.5). In the 3D view (`--camera`) the
    /// seeds lie on the slice (coordinates in its plane; up to 16 x 16 or 256) and the lines
    /// run through the 3D flow as tubes; evenly spaced lines stay in the slice.
    #[arg(long)]
    pub streamlines: Option<String>,
    /// Streamline integrator: `rk45` (adaptive, `--tolerance`) or `rk4` (fixed `--step`).
    #[arg(long, default_value = "rk45")]
    pub integrator: String,
    /// RK45 error tolerance per step (length units, positive).
    #[arg(long, default_value_t = 1e-5, allow_negative_numbers = true)]
    pub tolerance: f64,
    /// RK4 step (length units, positive).
    #[arg(long, default_value_t = 0.005, allow_negative_numbers = true)]
    pub step: f64,
    /// Velocity arrows, this many across (2 to 200).
    #[arg(long)]
    pub arrows: Option<u32>,
    /// Image size `WIDTHxHEIGHT`.
    #[arg(long, default_value = "1280x720")]
    pub size: String,
    /// Output PNG.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Output video (MP4 via ffmpeg; a PNG sequence folder next to it if ffmpeg is missing).
    #[arg(long)]
    pub video: Option<PathBuf>,
    /// Video frames (at least 1).
    #[arg(long, default_value_t = 120)]
    pub frames: u32,
    /// Solver steps between video frames.
    #[arg(long, default_value_t = 10)]
    pub steps_per_frame: u64,
    /// Video frame rate (1 to 240).
    #[arg(long, default_value_t = 30)]
    pub fps: u32,
    /// ffmpeg program.
    #[arg(long, default_value = "ffmpeg")]
    pub ffmpeg: String,
    /// 3D cases: the plane the view shows, normal to AXIS (x, y or z) at POSITION, a fraction
    /// of the domain along it (default z=0.5). Drawn flat, or in place in the 3D view, where up
    /// to three may be given (repeat the option).
    #[arg(long, value_name = "AXIS=POSITION")]
    pub slice: Vec<String>,
    /// 3D cases: draw the 3D view with the isosurfaces FIELD = LEVEL (up to 8 levels, e.g.
    /// `q_criterion=0.5,2`), and the slice when `--slice` is given.
    #[arg(long, value_name = "FIELD=LEVEL[,LEVEL...]", allow_hyphen_values = true)]
    pub iso: Option<String>,
    /// 3D cases: draw the 3D view, its camera at azimuth and elevation in degrees and at a
    /// distance that is a multiple of the one framing the domain (default 30,20,1).
    #[arg(long, value_name = "AZ,EL,DIST", allow_hyphen_values = true)]
    pub camera: Option<String>,
    /// 3D cases: draw the 3D view with a direct volume rendering of FIELD (its colormap, and
    /// the opacity curve of `--opacity`).
    #[arg(long, value_name = "FIELD")]
    pub volume: Option<String>,
    /// 3D cases: colour the isosurfaces by FIELD (through its colormap) rather than a colour
    /// per level.
    #[arg(long, value_name = "FIELD")]
    pub iso_colour: Option<String>,
    /// 3D cases: draw the isosurfaces transparent with this opacity, from 0 to 1.
    #[arg(long, value_name = "OPACITY")]
    pub iso_opacity: Option<f64>,
    /// The volume rendering's opacity per cell length at 0, 1/3, 2/3 and 1 of the field's colour
    /// scale, each from 0 to 1 (default 0,0.03,0.15,0.5).
    #[arg(long, value_name = "A,B,C,D")]
    pub opacity: Option<String>,
}

/// The slice of `--slice AXIS=POSITION`.
fn slice(s: &str) -> Result<Slice, String> {
    let option = format!("--slice {s}");
    let (axis, position) = s
        .split_once('=')
        .ok_or_else(|| format!("{option}: expected AXIS=POSITION, e.g. z=0.5"))?;
    let axis = match axis.trim() {
        "x" => 0,
        "y" => 1,
        "z" => 2,
        other => return Err(format!("{option}: the axis is x, y or z, not `{other}`")),
    };
    match numbers(position, &option)?.as_slice() {
        [p] if (0.0..=1.0).contains(p) => Ok(Slice { axis, position: *p }),
        _ => Err(format!(
            "{option}: the position is one number from 0 to 1 (a fraction of the domain)"
        )),
    }
}

/// Sets the 3D view `--iso`, `--slice` and `--camera` ask for on `v`; returns the camera
/// (azimuth and elevation in degrees, distance as a multiple of the framing one), `None` for
/// the flat view.
fn view_3d(a: &Args, v: &mut ViewSettings) -> Result<Option<[f32; 3]>, String> {
    let slices = a.slice.iter().map(|s| slice(s)).collect::<Result<Vec<_>, _>>()?;
    if let Some(first) = slices.first() {
        v.slice = *first;
    }
    if a.opacity.is_some() && a.volume.is_none() {
        return Err("--opacity: give the field to render with --volume FIELD".into());
    }
    if a.iso.is_none() && a.camera.is_none() && a.volume.is_none() {
        if slices.len() > 1 {
            return Err(format!(
                "--slice {}: several slices are drawn in the 3D view; give --camera (or --iso or --volume) too",
                a.slice[1]
            ));
        }
        return Ok(None);
    }
    if slices.len() > MAX_SLICES {
        return Err(format!(
            "--slice {}: at most {MAX_SLICES} slices",
            a.slice[MAX_SLICES]
        ));
    }
    v.view3d = View3d {
        enabled: true,
        slice: !slices.is_empty() || (a.iso.is_none() && a.volume.is_none()),
        iso_field: None,
        iso_levels: Vec::new(),
        iso_colour: a.iso_colour.clone(),
        iso_opacity: a.iso_opacity.map(|o| o as f32),
        volume: a.volume.as_deref().map(VolumeSettings::of),
        more_slices: slices.iter().skip(1).copied().collect(),
    };
    if let (Some(o), Some(volume)) = (&a.opacity, &mut v.view3d.volume) {
        let option = format!("--opacity {o}");
        match numbers(o, &option)?.as_slice() {
            [a, b, c, d] if [a, b, c, d].iter().all(|x| (0.0..=1.0).contains(*x)) => {
                volume.opacity = [*a as f32, *b as f32, *c as f32, *d as f32];
            }
            _ => {
                return Err(format!(
                    "{option}: expected four opacities from 0 to 1, e.g. 0,0.03,0.15,0.5"
                ));
            }
        }
    }
    let surface_options = [
        (a.iso_colour.is_some(), "--iso-colour"),
        (a.iso_opacity.is_some(), "--iso-opacity"),
    ];
    for (given, option) in surface_options {
        if given && a.iso.is_none() {
            return Err(format!("{option}: give the isosurfaces with --iso FIELD=LEVEL"));
        }
    }
    if let Some(o) = a.iso_opacity.filter(|o| !(0.0..=1.0).contains(o)) {
        return Err(format!("--iso-opacity {o}: an opacity from 0 to 1"));
    }
    if let Some(iso) = &a.iso {
        let option = format!("--iso {iso}");
        let (field, levels) = iso
            .split_once('=')
            .ok_or_else(|| format!("{option}: expected FIELD=LEVEL[,LEVEL...], e.g. speed=0.2,0.4"))?;
        let levels = numbers(levels, &option)?;
        if levels.len() > surface::MAX_LEVELS {
            return Err(format!("{option}: at most {} levels", surface::MAX_LEVELS));
        }
        v.view3d.iso_field = Some(field.trim().to_string());
        v.view3d.iso_levels = levels;
    }
    Ok(Some(match &a.camera {
        None => [30.0, 20.0, 1.0],
        Some(c) => {
            let what = format!("--camera {c}");
            match numbers(c, &what)?.as_slice() {
                [az, el, d] if *d > 0.0 => [*az as f32, *el as f32, *d as f32],
                _ => {
                    return Err(format!(
                        "{what}: expected AZ,EL,DIST (degrees, degrees, DIST > 0)"
                    ));
                }
            }
        }
    }))
}

/// The 3D view of `solver`'s state at `width x height`, seen from `camera` ([`view_3d`]).
fn render_3d(
    headless: &mut Headless,
    solver: &dyn Solver,
    view: &ViewSettings,
    camera: [f32; 3],
    scratch: &mut Scratch,
    frame: &mut FrameData,
    size: [u32; 2],
) -> Result<image::RgbaImage, String> {
    let asked = [
        ("--iso", view.view3d.iso_field.as_deref()),
        ("--iso-colour", view.view3d.iso_colour.as_deref()),
        ("--volume", view.view3d.shown_volume_field()),
    ];
    for (option, field) in asked {
        if let Some(f) = field
            && !solver.field_names().contains(&f)
        {
            return Err(format!(
                "{option}: the solver has no field `{f}` (it has: {})",
                solver.field_names().join(", ")
            ));
        }
    }
    frame_of(solver, view, scratch, frame)?;
    let g = solver.info().grid;
    let (min, max) = scene3d::domain(&g);
    let [az, el, d] = camera;
    let camera = surface::camera_from(min, max, az, el, d);
    headless.render_3d(frame, view, &g, &camera, size[0], size[1])
}

/// Most contour levels.
const MAX_CONTOURS: u32 = 256;

/// Parses `WIDTHxHEIGHT`, each side a whole number from 1 to 16384 (the largest texture of any
/// GPU; [`run`] checks the device's own limit).
pub fn parse_size(s: &str) -> Result<[u32; 2], String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("--size {s}: expected WIDTHxHEIGHT, e.g. 1280x720"))?;
    let p = |v: &str| v.trim().parse::<u32>().ok().filter(|n| (1..=16384).contains(n));
    match (p(w), p(h)) {
        (Some(w), Some(h)) => Ok([w, h]),
        _ => Err(format!("--size {s}: sizes must be whole numbers from 1 to 16384")),
    }
}

/// The comma-separated finite numbers of `s`; `what` names the option in the error.
fn numbers(s: &str, what: &str) -> Result<Vec<f64>, String> {
    s.split(',')
        .map(|v| match v.trim().parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            _ => Err(format!("{what}: `{v}` is not a finite number")),
        })
        .collect()
}

/// `n` if it lies in `range`, else an error naming `what` and the range.
fn count_in(n: f64, range: std::ops::RangeInclusive<usize>, what: &str) -> Result<usize, String> {
    let (lo, hi) = (*range.start(), *range.end());
    if n.fract() == 0.0 && n >= lo as f64 && n <= hi as f64 {
        Ok(n as usize)
    } else {
        Err(format!(
            "{what}: the count must be a whole number from {lo} to {hi}, not {n}"
        ))
    }
}

/// `x` if it is finite and positive, else an error naming `option`.
fn positive(x: f64, option: &str, what: &str) -> Result<f64, String> {
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(format!(
            "{option} {x}: the {what} must be a positive finite number"
        ))
    }
}

/// The seeding `--streamlines s` describes, each count within its limit.
fn seeding(s: &str) -> Result<Seeding, String> {
    let (kind, rest) = s.split_once(':').unwrap_or((s, ""));
    let option = format!("--streamlines {s}");
    Ok(match kind {
        "grid" => {
            let n = rest
                .trim()
                .parse::<f64>()
                .map_err(|_| format!("{option}: expected grid:N"))?;
            Seeding::Grid {
                n: count_in(n, 1..=streamlines::MAX_GRID_SEEDS, &option)?,
            }
        }
        "rake" => match numbers(rest, &option)?.as_slice() {
            [x0, y0, x1, y1, n] => Seeding::Rake {
                a: [*x0, *y0],
                b: [*x1, *y1],
                count: count_in(*n, 1..=streamlines::MAX_SEEDS, &option)?,
            },
            _ => return Err(format!("{option}: expected rake:X0,Y0,X1,Y1,N")),
        },
        "points" => {
            let points = rest
                .split(';')
                .map(|p| match numbers(p, &option)?.as_slice() {
                    [x, y] => Ok([*x, *y]),
                    _ => Err(format!("{option}: expected points:X,Y;X,Y")),
                })
                .collect::<Result<Vec<_>, String>>()?;
            count_in(points.len() as f64, 1..=streamlines::MAX_SEEDS, &option)?;
            Seeding::Points(points)
        }
        "even" => match numbers(rest, &option)?.as_slice() {
            [d] if (even::MIN_SEPARATION..=even::MAX_SEPARATION).contains(d) => {
                Seeding::Even { separation: *d }
            }
            _ => {
                return Err(format!(
                    "{option}: expected even:DSEP with DSEP (a fraction of the domain's larger side) from {} to {}",
                    even::MIN_SEPARATION,
                    even::MAX_SEPARATION
                ));
            }
        },
        _ => {
            return Err(format!(
                "{option}: use grid:N, rake:X0,Y0,X1,Y1,N, points:X,Y;... or even:DSEP"
            ));
        }
    })
}

/// The view the arguments describe.
pub fn view_settings(a: &Args) -> Result<ViewSettings, String> {
    let mut v = ViewSettings::for_field(&a.view);
    if let Some(c) = &a.colormap {
        v.colormap = Colormap::from_name(c)
            .ok_or_else(|| format!("--colormap {c}: use viridis, cividis, turbo or diverging"))?;
    }
    match a.range.as_deref() {
        None => {}
        Some("auto") => v.range = Range::Auto,
        Some("robust") => v.range = Range::Robust,
        Some(r) => match numbers(r, &format!("--range {r}"))?.as_slice() {
            [min, max] if max > min => v.range = Range::Fixed { min: *min, max: *max },
            _ => {
                return Err(format!(
                    "--range {r}: expected auto, robust or MIN,MAX with finite MIN < MAX"
                ));
            }
        },
    }
    v.log_scale = a.log;
    if let Some(n) = a.contours {
        if n > MAX_CONTOURS {
            return Err(format!("--contours {n}: use 0 (none) to {MAX_CONTOURS} levels"));
        }
        v.contours.enabled = n > 0;
        v.contours.levels = n;
    }
    v.contours.field.clone_from(&a.contour_field);
    let tolerance = positive(a.tolerance, "--tolerance", "RK45 tolerance")?;
    let step = positive(a.step, "--step", "RK4 step")?;
    v.streamlines.integrator = match a.integrator.as_str() {
        "rk45" => Integrator::Rk45 { tolerance },
        "rk4" => Integrator::Rk4 { step },
        other => return Err(format!("--integrator {other}: use rk4 or rk45")),
    };
    if let Some(s) = &a.streamlines {
        v.streamlines.seeding = seeding(s)?;
    }
    if let Some(n) = a.arrows {
        if !(2..=MAX_ARROWS).contains(&n) {
            return Err(format!("--arrows {n}: use 2 to {MAX_ARROWS} arrows across"));
        }
    }
    v.arrows = a.arrows;
    Ok(v)
}

/// Loads the case and applies the `--set` overrides.
pub fn load_case(a: &Args) -> Result<Case, String> {
    let mut case = Case::load(&a.case).map_err(|e| e.to_string())?;
    for s in &a.set {
        case.set_assignment(s).map_err(|e| e.to_string())?;
    }
    Ok(case)
}

/// Steps `solver` `steps` times or to `t_end`.
pub fn advance(solver: &mut dyn Solver, steps: Option<u64>, t_end: Option<f64>) -> Result<(), String> {
    if let Some(n) = steps {
        for _ in 0..n {
            solver.step().map_err(|e| e.to_string())?;
        }
    }
    if let Some(t) = t_end {
        while solver.time() < t {
            solver.step().map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Gathers the view of `solver` into `frame`, or says why it cannot.
pub fn frame_of(
    solver: &dyn Solver,
    view: &ViewSettings,
    scratch: &mut Scratch,
    frame: &mut FrameData,
) -> Result<(), String> {
    if solver.info().grid.dim == 1 {
        return Err(
            "flowlab render draws 2D cases and the mid-plane z slice of 3D cases; this case is 1D".into(),
        );
    }
    gather::gather(solver, view, Freshness::Current, scratch, frame)
        .map(|_| ())
        .ok_or_else(|| {
            format!(
                "the solver has no field `{}` (it has: {})",
                view.field,
                solver.field_names().join(", ")
            )
        })
}

/// Runs the subcommand.
pub fn run(a: &Args) -> Result<(), String> {
    if a.out.is_none() && a.video.is_none() {
        return Err("give --out FILE.png and/or --video FILE.mp4".into());
    }
    let [w, h] = parse_size(&a.size)?;
    let mut view = view_settings(a)?;
    let camera = view_3d(a, &mut view)?;
    if a.frames == 0 {
        return Err("--frames 0: a video needs at least 1 frame".into());
    }
    if !(1..=240).contains(&a.fps) {
        return Err(format!("--fps {}: use 1 to 240 frames per second", a.fps));
    }
    if let Some(t) = a.t_end {
        if !(t.is_finite() && t >= 0.0) {
            return Err(format!(
                "--t-end {t}: the end time must be a finite number, 0 or more"
            ));
        }
    }
    let case = load_case(a)?;
    if case.spec.case.dim != 3 {
        let given_3d = [
            (&a.iso, "--iso"),
            (&a.slice.first().cloned(), "--slice"),
            (&a.camera, "--camera"),
            (&a.volume, "--volume"),
        ];
        for (given, option) in given_3d {
            if given.is_some() {
                return Err(format!(
                    "{option}: the 3D view and slices are of 3D cases, {} is {}D",
                    a.case.display(),
                    case.spec.case.dim
                ));
            }
        }
    }
    let mut headless = Headless::new().map_err(|e| e.to_string())?;
    offscreen::check_size(&headless.gpu.device, w, h).map_err(|e| format!("--size {}: {e}", a.size))?;
    let mut solver = solver::build(&case.spec).map_err(|e| format!("{}: {}", e.key, e.message))?;
    if let Some(file) = &a.restart {
        let (_, state) = read_checkpoint(file)?;
        solver
            .restore(&state)
            .map_err(|e| format!("--restart {}: cannot continue it: {}", file.display(), e.message))?;
    }
    // 3D states have the vorticity's components: the default view shows the one normal to the
    // slice.
    let names = solver.field_names();
    if view.field == "vorticity" && !names.contains(&"vorticity") {
        let normal = ["vorticity_x", "vorticity_y", "vorticity_z"][view.slice.axis];
        if names.contains(&normal) {
            view.field = normal.to_string();
        }
    }
    let mut scratch = Scratch::default();
    let mut frame = FrameData::default();
    advance(solver.as_mut(), a.steps, a.t_end)?;
    let mut draw = |headless: &mut Headless, solver: &dyn Solver, w: u32, h: u32| match camera {
        Some(c) => render_3d(headless, solver, &view, c, &mut scratch, &mut frame, [w, h]),
        None => {
            frame_of(solver, &view, &mut scratch, &mut frame)?;
            headless.render(&frame, w, h, None)
        }
    };
    if let Some(out) = &a.out {
        let img = draw(&mut headless, solver.as_ref(), w, h)?;
        png::save(&img, out)?;
        println!(
            "wrote {} ({w}x{h}, step {}, t = {:.5})",
            out.display(),
            solver.steps(),
            solver.time()
        );
    }
    if let Some(path) = &a.video {
        let size = video::even_size(w, h);
        let mut writer = match video::VideoWriter::ffmpeg(&a.ffmpeg, path, size, a.fps) {
            Ok(wr) => wr,
            Err(e @ video::VideoError::FfmpegMissing { .. }) => {
                let dir = path.with_extension("frames");
                eprintln!("{e}; writing a PNG sequence to {} instead", dir.display());
                video::VideoWriter::png_sequence(&dir, size).map_err(|e| e.to_string())?
            }
            Err(e) => return Err(e.to_string()),
        };
        for k in 0..a.frames {
            if k > 0 {
                advance(solver.as_mut(), Some(a.steps_per_frame), None)?;
            }
            writer.push(draw(&mut headless, solver.as_ref(), size[0], size[1])?)?;
        }
        let sink = writer.sink.clone();
        let n = writer.finish()?;
        match sink {
            video::Sink::Ffmpeg { path, .. } => println!("wrote {} ({n} frames)", path.display()),
            video::Sink::PngSequence { dir } => {
                println!("wrote {n} PNG frames to {}", dir.display())
            }
        }
    }
    Ok(())
}
