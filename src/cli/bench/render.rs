//! `flowlab bench --family render`: what the 3D view costs a frame on the wgpu adapter at hand
//! (the GPU machine's Vulkan driver, or lavapipe): the upload of one field of `N^3` f32 values,
//! the isosurface extraction of one level ([`crate::render::isosurface::gpu`]), drawing the
//! surface and the domain's box (the surface through the graphics pipeline, and rasterised in
//! compute as the view draws it, [`crate::render::surface_raster`]), the volume rendering, and
//! a whole frame with both (upload of both fields included), at each `--render-sizes` N into a
//! `--render-resolution` target.
//!
//! The field is analytic, `f = sin(pi x) sin(pi y) sin(pi z) + 0.25 sin(6 pi x) sin(4 pi y)` on
//! the unit cube, and the level 0.5 (a closed, wrinkled surface, its triangles in proportion to
//! `N^2`). Each figure is the median over `--kernel-reps` repetitions, each submitted and waited
//! for (`device.poll`), so it includes one submission's latency.

use super::Args;
use crate::render::gpu::Gpu;
use crate::render::headless::Headless;
use crate::render::offscreen::{self, Target};
use crate::render::scene3d::{self, Scene3d};
use crate::render::surface::{self, camera_from};
use crate::render::surface_raster::Rasteriser;
use crate::render::view::{FrameData, ViewSettings, VolumeSettings};
use crate::solver::grid::Grid;
use std::time::Instant;

/// Largest `--render-sizes` N (256^3 f32 is 64 MiB a field).
pub const MAX_RENDER_SIZE: usize = 512;

pub fn render(args: &Args) -> anyhow::Result<()> {
    let [width, height] =
        crate::cli::render::parse_size(&args.render_resolution).map_err(anyhow::Error::msg)?;
    let mut headless = Headless::new().map_err(|e| anyhow::anyhow!("{e}"))?;
    let info = headless.gpu.adapter.get_info();
    println!(
        "3D view on {} ({:?}, driver {} {}), {width} x {height}, median of {} frames each",
        info.name, info.backend, info.driver, info.driver_info, args.kernel_reps
    );
    println!(
        "| N^3 | upload of one field (ms) | GB/s | isosurface extraction (ms) | triangles | surface + box drawn, graphics pipeline (ms) | the same, surface rasterised in compute (ms) | volume rendering (ms) | whole frame (ms) | frames/s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let target = Target::new(&headless.gpu.device, width, height).map_err(anyhow::Error::msg)?;
    let depth = offscreen::attachment(
        &headless.gpu.device,
        "bench depth",
        width,
        height,
        surface::DEPTH,
        scene3d::DEPTH_USAGE,
    )
    .create_view(&wgpu::TextureViewDescriptor::default());
    for &n in &args.render_sizes {
        if !(2..=MAX_RENDER_SIZE).contains(&n) {
            anyhow::bail!("option `--render-sizes`: each N from 2 to {MAX_RENDER_SIZE}, got {n}");
        }
        let row = measure(
            &mut headless,
            n,
            args.kernel_reps.max(3),
            &target,
            &depth,
            [width, height],
        )?;
        println!("{row}");
    }
    super::view_load::solver_with_view(args, &mut headless, &target, &depth, [width, height])
}

/// The row of one size.
fn measure(
    headless: &mut Headless,
    n: usize,
    reps: usize,
    target: &Target,
    depth: &wgpu::TextureView,
    size: [u32; 2],
) -> anyhow::Result<String> {
    let values = field(n);
    let grid = Grid {
        dim: 3,
        n: [n; 3],
        origin: [0.0; 3],
        spacing: [1.0 / n as f64; 3],
    };
    let (min, max) = scene3d::domain(&grid);
    let camera = camera_from(min, max, 30.0, 20.0, 1.0);
    let aspect = size[0] as f32 / size[1] as f32;
    let frame = FrameData {
        volume: values.clone(),
        rendered: values.clone(),
        rendered_range: [-0.25, 1.25],
        ..FrameData::default()
    };
    let mut view = ViewSettings::for_field("speed");
    view.view3d.enabled = true;
    view.view3d.iso_levels = vec![0.5];
    let gpu = &headless.gpu;
    let (device, queue) = (&gpu.device, &gpu.queue);
    let wait = || wait(device);
    let median = |f: &mut dyn FnMut() -> anyhow::Result<()>| -> anyhow::Result<f64> {
        f()?;
        let mut t = Vec::with_capacity(reps);
        for _ in 0..reps {
            let start = Instant::now();
            f()?;
            t.push(start.elapsed().as_secs_f64() * 1e3);
        }
        t.sort_by(f64::total_cmp);
        Ok(t[reps / 2])
    };
    // The field's upload alone.
    let bytes = std::mem::size_of_val(values.as_slice()) as u64;
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bench field"),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let upload = median(&mut || {
        queue.write_buffer(&buffer, 0, bytemuck::cast_slice(&values));
        queue.submit([]);
        wait()
    })?;
    let scene = &mut headless.view3d;
    let prepare = |view: &ViewSettings, frame: &FrameData, scene: &mut Scene3d| -> anyhow::Result<()> {
        scene
            .prepare(device, queue, frame, view, &grid)
            .map_err(anyhow::Error::msg)?;
        scene.set_camera(queue, &camera, aspect);
        queue.submit([]);
        wait()
    };
    // Upload and extraction (no volume), then the extraction alone.
    let with_upload = median(&mut || prepare(&view, &frame, scene))?;
    let extraction = (with_upload - upload).max(0.0);
    let triangles = scene.triangles();
    let draw = |scene: &Scene3d| draw(gpu, scene, target, depth, size);
    // The surface drawn through the graphics pipeline, then rasterised in compute (kept).
    scene.set_rasteriser(Rasteriser::Pipeline);
    let through_pipeline = median(&mut || draw(scene))?;
    scene.set_rasteriser(Rasteriser::Compute);
    let surface_drawn = median(&mut || draw(scene))?;
    // The volume: prepared with it on (and the surface), the surface pass's time taken off.
    view.view3d.volume = Some(VolumeSettings::of("speed"));
    prepare(&view, &frame, scene)?;
    let volume = (median(&mut || draw(scene))? - surface_drawn).max(0.0);
    // A whole frame: both fields uploaded, the surface extracted, everything drawn.
    let whole = median(&mut || {
        prepare(&view, &frame, scene)?;
        draw(scene)
    })?;
    Ok(format!(
        "| {n}^3 | {upload:.2} | {:.1} | {extraction:.2} | {triangles} | {through_pipeline:.2} | {surface_drawn:.2} | {volume:.2} | {whole:.2} | {:.0} |",
        bytes as f64 / upload / 1e6,
        1e3 / whole
    ))
}

/// Waits for the GPU's work so far.
pub(super) fn wait(device: &wgpu::Device) -> anyhow::Result<()> {
    device
        .poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: None,
        })
        .map(|_| ())
        .map_err(|e| anyhow::anyhow!("waiting for the GPU failed: {e}"))
}

/// Draws `scene` (prepared: with the volume rendering when it was prepared with one) into
/// `target` (`size` pixels) with its depth buffer `depth`, and waits for it.
pub(super) fn draw(
    gpu: &Gpu,
    scene: &Scene3d,
    target: &Target,
    depth: &wgpu::TextureView,
    size: [u32; 2],
) -> anyhow::Result<()> {
    let (device, queue) = (&gpu.device, &gpu.queue);
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("bench") });
    let canvas = [0.0, 0.0, size[0] as f32, size[1] as f32];
    scene.draw(
        device,
        queue,
        &mut encoder,
        &target.view,
        depth,
        canvas,
        wgpu::Color::BLACK,
    );
    queue.submit([encoder.finish()]);
    wait(device)
}

/// The analytic field on the lattice of cell centres of the unit cube, `n^3` values, x fastest.
fn field(n: usize) -> Vec<f32> {
    use std::f64::consts::PI;
    let c = |i: usize| (i as f64 + 0.5) / n as f64;
    let mut v = Vec::with_capacity(n * n * n);
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                let (x, y, z) = (c(i), c(j), c(k));
                let f = (PI * x).sin() * (PI * y).sin() * (PI * z).sin()
                    + 0.25 * (6.0 * PI * x).sin() * (4.0 * PI * y).sin();
                v.push(f as f32);
            }
        }
    }
    v
}
