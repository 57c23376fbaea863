//! What showing a field costs per frame all the way to an image (issue 23's display measure):
//! the readback table's frames of steps, each then drawn by the 2D field view into a 1920 x 1080
//! target on the Vulkan device, with the field reaching the view through pinned host memory or
//! from device memory CUDA shares with Vulkan ([`crate::render::device_frame`]).

use super::device::{FRAME_STEPS, frame_cavity};
use super::*;
use crate::render::device_frame::DeviceLink;
use crate::render::gather::{self, Freshness, Scratch};
use crate::render::headless::Headless;
use crate::render::offscreen::Target;
use crate::render::view::{FrameData, ViewSettings};
use crate::solver::Solver;
use crate::solver::incompressible::CudaProjection;

/// The image each frame is drawn into.
const SIZE: [u32; 3] = [1920, 1080, 0];

/// Per `--readback-sizes` size, for each path a field can take to the view, medians over
/// `max(kernel_reps, 3)` pairs of frames of [`FRAME_STEPS`] steps of the cavity, each frame
/// ending when its image is drawn: one without a new field (the last frame's field drawn
/// again), then one with the field prefetched, gathered from the state the view shows (the
/// app's order), made into a frame and uploaded. The pair's frames are adjacent, so the
/// pressure solve's iteration counts, which fall as the flow develops, weigh on both alike.
/// Paths:
/// - pinned: through pinned host memory, widened, narrowed and uploaded (`queue.write_buffer`);
/// - device: narrowed on the device into buffers Vulkan exported ([`DeviceLink`]) and bound by
///   the view, only the colour scale's statistics read back.
///
/// Each path runs its pairs in a block (switching paths drops the solver's copies).
pub(super) fn screen(args: &Args) -> anyhow::Result<()> {
    println!(
        "One field (speed) to a {}x{} image per frame of {FRAME_STEPS} steps (multigrid, tolerance 1e-4), medians\n",
        SIZE[0], SIZE[1]
    );
    println!(
        "| grid | precision | path of the field | frame without a new field (ms) | frame with it (ms) | the field's share of the frame |"
    );
    println!("|---|---|---|---|---|---|");
    let mut headless = Headless::new().map_err(|e| anyhow::anyhow!("{e}"))?;
    for &n in &args.readback_sizes {
        match args.precision.as_str() {
            "f32" => screen_rows::<f32>(args, n, &mut headless)?,
            _ => screen_rows::<f64>(args, n, &mut headless)?,
        }
    }
    println!();
    Ok(())
}

/// One frame: [`FRAME_STEPS`] steps, then (with `shown`) the field prefetched, gathered and
/// prepared, then the image drawn and waited for; returns its seconds.
fn frame<T: Real>(
    s: &mut CudaProjection<T, 2>,
    headless: &mut Headless,
    target: &Target,
    view: &ViewSettings,
    shown: Option<&mut Scratch>,
    frame: &mut FrameData,
) -> anyhow::Result<f64> {
    let t = Instant::now();
    for _ in 0..FRAME_STEPS {
        s.step()?;
    }
    let mut shown = shown;
    if let Some(scratch) = shown.as_deref_mut() {
        s.prefetch(&view.shown_fields());
        gather::gather(s, view, Freshness::Latest, scratch, frame)
            .ok_or_else(|| anyhow::anyhow!("the cavity has no field {}", view.field))?;
        headless
            .scene
            .prepare(&headless.gpu.device, &headless.gpu.queue, frame);
    }
    let viewport = glam::Vec2::new(SIZE[0] as f32, SIZE[1] as f32);
    let camera = crate::render::view::Camera::fit(frame.origin, frame.extent);
    headless.scene.set_view(
        &headless.gpu.queue,
        camera.world_to_clip(viewport, frame.extent),
        viewport,
    );
    let scene = &headless.scene;
    let index = headless.submit(target, |pass| scene.paint(pass));
    // (Every frame is waited for below, so a frame drawing the last field again needs no
    // record for the link.)
    if let Some(link) = shown.and_then(|s| s.device.as_mut()) {
        link.drawn(index.clone());
    }
    headless
        .gpu
        .device
        .poll(wgpu::PollType::Wait {
            submission_index: Some(index),
            timeout: None,
        })
        .map_err(|e| anyhow::anyhow!("waiting for the frame: {e}"))?;
    Ok(t.elapsed().as_secs_f64())
}

fn screen_rows<T: Real>(args: &Args, n: usize, headless: &mut Headless) -> anyhow::Result<()> {
    let mut s = frame_cavity::<T>(n)?;
    let target = Target::new(&headless.gpu.device, SIZE[0], SIZE[1]).map_err(anyhow::Error::msg)?;
    let view = ViewSettings::for_field("speed");
    let device = headless.gpu.device.clone();
    let reps = args.kernel_reps.max(3);
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        1e3 * v[v.len() / 2]
    };
    let paths = [
        ("pinned host memory", Scratch::default()),
        (
            "device memory shared with Vulkan",
            Scratch::drawing_from_device(DeviceLink::new(&device)),
        ),
    ];
    for (name, mut scratch) in paths {
        let mut out = FrameData::default();
        let (mut without, mut with) = (Vec::with_capacity(reps), Vec::with_capacity(reps));
        // Two pairs of warm-up: buffers allocated, the path switched.
        for rep in 0..reps + 2 {
            let a = frame(&mut s, headless, &target, &view, None, &mut out)?;
            let b = frame(&mut s, headless, &target, &view, Some(&mut scratch), &mut out)?;
            if rep >= 2 {
                without.push(a);
                with.push(b);
            }
        }
        let (a, b) = (median(without), median(with));
        let refused = scratch.device.as_ref().map(|l| (l.linked(), l.refused()));
        match refused {
            Some((false, why)) => println!(
                "| {n}^2 | {} | {name}: not available ({}) | | | |",
                T::NAME,
                why.unwrap_or("the solver did not write the field on the device")
            ),
            _ => println!(
                "| {n}^2 | {} | {name} | {a:.2} | {b:.2} | {:.0} % |",
                T::NAME,
                100.0 * (b - a) / b
            ),
        }
    }
    Ok(())
}
