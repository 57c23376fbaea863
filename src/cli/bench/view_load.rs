//! The second table of `flowlab bench --family render`: what drawing the 3D view costs the
//! solver. The 3D cavity (`cases/cavity_3d_re1000.toml` at each `--render-sizes` N^3, on
//! `--backend` in `--precision`) is stepped alone, then through the window's frame loop
//! without a window: the solver's worker ([`Stepper`]) runs a frame's steps and announces the
//! shown fields ([`AppState::prefetch_shown`]); this thread then takes the state, reads the
//! newest shown fields ([`Freshness::Latest`], [`gather::read`]) and hands the state back; while
//! the worker steps on, it makes the frame ([`gather::compose`]), uploads it, extracts the
//! isosurface and draws, as [`crate::app`] does. The view is the one
//! a 3D case opens with: the mid-plane coloured by speed with contours and the Q-criterion's
//! isosurface. Steps a frame are fixed per size so that a frame's steps take about
//! [`FRAME_MS`] alone. The view's parts are added one at a time ([`Part`]): the read alone,
//! then the frame made from it, then the whole view, so the table shows what each costs the
//! solver.

use super::render::{draw, wait};
use super::{Args, CAVITY_3D};
use crate::app::stepper::Stepper;
use crate::case::Case;
use crate::render::device_frame::DeviceLink;
use crate::render::gather::{self, Freshness, Scratch};
use crate::render::headless::Headless;
use crate::render::offscreen::Target;
use crate::render::scene3d;
use crate::render::surface::camera_from;
use crate::render::view::{self, FrameData};
use crate::ui::state::{AppState, StepsPerFrame};
use std::time::Instant;

/// The frame the steps of a frame fill alone, milliseconds.
const FRAME_MS: f64 = 16.0;
/// Frames timed each way.
const FRAMES: usize = 60;

/// How much of the view a timed frame does.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Only the read of the shown fields, the part that holds the solver's state.
    Read,
    /// The read, then the frame made from it on this thread ([`gather::compose`]).
    Compose,
    /// Everything the window does: also the upload, the extraction and the drawing.
    Whole,
}

pub fn solver_with_view(
    args: &Args,
    headless: &mut Headless,
    target: &Target,
    depth: &wgpu::TextureView,
    size: [u32; 2],
) -> anyhow::Result<()> {
    println!();
    println!(
        "The 3D cavity on {} ({}) stepped alone and while the opening 3D view (mid-plane by speed with contours, Q-criterion isosurface) is gathered, uploaded, extracted and drawn every frame as the window does, {FRAMES} frames each:",
        args.backend, args.precision
    );
    println!(
        "| N^3 | steps a frame | alone (ms/step) | with the read (ms/step, kept) | with the read and the frame made | with the whole view | Mcell/s | frames/s | fields through |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for &n in &args.render_sizes {
        let mut case = Case::parse(CAVITY_3D, "bench 3D cavity")?;
        let f32 = args.precision == "f32";
        let tolerance = args.tolerance.unwrap_or(if f32 { 1e-4 } else { 1e-6 });
        for (key, value) in [
            ("solver.tolerance", tolerance.to_string()),
            ("solver.precision", args.precision.clone()),
            ("grid.nx", n.to_string()),
            ("grid.ny", n.to_string()),
            ("grid.nz", n.to_string()),
            ("solver.backend", args.backend.clone()),
        ] {
            case.set(key, &value)?;
        }
        let mut state = AppState::new(case).map_err(anyhow::Error::msg)?;
        state.playing = true;
        // Warm up (kernels compiled, buffers made), then size a frame's steps.
        state.steps_per_frame = StepsPerFrame::Fixed(4);
        state.advance_frame();
        let start = Instant::now();
        state.advance_frame();
        let per_step = start.elapsed().as_secs_f64() * 1e3 / 4.0;
        let k = (FRAME_MS / per_step.max(1e-3)).round().clamp(1.0, 256.0) as u32;
        state.steps_per_frame = StepsPerFrame::Fixed(k);
        let cells = state.solver.info().grid.cells() as f64;
        if let Some(f) = &state.failure {
            anyhow::bail!("the {n}^3 cavity failed: {f}");
        }
        // Alone.
        let (first, start) = (state.solver.steps(), Instant::now());
        for _ in 0..FRAMES {
            state.advance_frame();
        }
        let alone = start.elapsed().as_secs_f64() * 1e3 / (state.solver.steps() - first) as f64;
        // With the view, through the frame loop: its parts added one by one.
        let (tx, rx) = std::sync::mpsc::channel();
        let stepper = Stepper::new(state, move || {
            let _ = tx.send(());
        });
        let grid = stepper.state().solver.info().grid;
        let (min, max) = scene3d::domain(&grid);
        let camera = camera_from(min, max, 30.0, 20.0, 1.0);
        let aspect = size[0] as f32 / size[1] as f32;
        // Fields drawn from the solver's memory where it can (a CUDA solver on the renderer's
        // GPU; `FLOWLAB_DISPLAY_INTEROP=0` measures the path through the host).
        let link = DeviceLink::new(&headless.gpu.device);
        let (mut scratch, mut frame) = (Scratch::drawing_from_device(link), FrameData::default());
        let mut view_frame = |stepper: &Stepper, headless: &mut Headless, part: Part| -> anyhow::Result<()> {
            let mut guard = stepper.state();
            let state = &mut *guard;
            let read = gather::read(
                state.solver.as_ref(),
                &state.view,
                Freshness::Latest,
                &mut scratch,
            )
            .ok_or_else(|| anyhow::anyhow!("the view shows no field of the cavity"))?;
            // The first frame chooses the isosurface level from the field, in the state's view.
            let choose = state.view.view3d.iso_levels.is_empty();
            if choose {
                gather::compose(&read, &state.view, &mut scratch, &mut frame);
                state
                    .view
                    .view3d
                    .iso_levels
                    .extend(view::iso_level_of(&frame.volume));
            }
            let shown = state.view.clone();
            drop(guard);
            stepper.go();
            if part == Part::Read {
                return Ok(());
            }
            if !choose {
                gather::compose(&read, &shown, &mut scratch, &mut frame);
            }
            if part == Part::Compose {
                return Ok(());
            }
            let gpu = &headless.gpu;
            headless
                .view3d
                .prepare(&gpu.device, &gpu.queue, &frame, &shown, &grid)
                .map_err(anyhow::Error::msg)?;
            headless.view3d.set_camera(&headless.gpu.queue, &camera, aspect);
            draw(&headless.gpu, &headless.view3d, target, depth, size)?;
            wait(&headless.gpu.device)
        };
        stepper.go();
        rx.recv()?;
        view_frame(&stepper, headless, Part::Whole)?;
        rx.recv()?;
        let mut row = format!("| {n}^3 | {k} | {alone:.3} |");
        for part in [Part::Read, Part::Compose, Part::Whole] {
            let (first, start) = (stepper.state().solver.steps(), Instant::now());
            for _ in 0..FRAMES {
                view_frame(&stepper, headless, part)?;
                rx.recv()?;
            }
            let seconds = start.elapsed().as_secs_f64();
            let state = stepper.state();
            if let Some(f) = &state.failure {
                anyhow::bail!("the {n}^3 cavity failed while drawn: {f}");
            }
            let with = seconds * 1e3 / (state.solver.steps() - first) as f64;
            row += &format!(" {with:.3} ({:.0} %) |", 100.0 * alone / with);
            if part == Part::Whole {
                row += &format!(" {:.1} | {:.1} |", cells / with / 1e3, FRAMES as f64 / seconds);
            }
        }
        drop(view_frame);
        let path = match scratch.device.as_ref().map(|l| (l.linked(), l.refused())) {
            Some((true, _)) => "device memory shared with Vulkan".to_string(),
            Some((false, Some(why))) => format!("the host ({why})"),
            _ => "the host".to_string(),
        };
        println!("{row} {path} |");
    }
    Ok(())
}
