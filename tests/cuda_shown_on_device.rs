//! Fields drawn from device memory CUDA shares with Vulkan (`render::device_frame`) against the
//! same frames read through the host: for the projection method in 2D (f64 and f32) and 3D,
//! and MUSCL-Hancock (f32), the shared buffers hold the host path's f32 values bit for bit (a
//! 3D state's slice cut on the device, its isosurface field whole), the colour and contour
//! ranges (auto, robust, log) are equal, and the drawn images (2D view, 3D view with the slice
//! and isosurfaces) are equal pixel for pixel. Needs a CUDA device and a Vulkan driver on the same GPU
//! that exports memory; skips without (fails under `FLOWLAB_REQUIRE_GPU=1`).

mod common;

use flowlab::render::device_frame::DeviceLink;
use flowlab::render::gather::{self, Freshness, Scratch};
use flowlab::render::headless::Headless;
use flowlab::render::scene3d;
use flowlab::render::surface;
use flowlab::render::view::{FrameData, Range, View3d, ViewSettings};
use flowlab::solver;

/// The f32 values of a wgpu buffer (its first `n`).
fn read_buffer(h: &Headless, buffer: &wgpu::Buffer, n: usize) -> Vec<f32> {
    let bytes = 4 * n as u64;
    let read = h.gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = h.gpu.device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &read, 0, bytes);
    h.gpu.queue.submit([encoder.finish()]);
    flowlab::render::gpu::read_mapped(&h.gpu.device, read.slice(..), |b| {
        bytemuck::cast_slice::<u8, f32>(b).to_vec()
    })
    .expect("read back")
}

/// Steps `solver` and compares, for each view, the frame drawn from the device with the frame
/// read through the host, both of the current state.
fn compare(case: &str, sets: &[&str], views: &[ViewSettings]) {
    let Some(mut h) = common::headless_or_skip(&common::test_name()) else {
        return;
    };
    let mut c = common::case(case, sets);
    c.set_assignment("solver.backend=\"cuda\"").unwrap();
    let mut s = solver::build(&c.spec).expect("builds on the GPU");
    for _ in 0..20 {
        s.step().expect("steps");
    }
    let mut link = Scratch::drawing_from_device(DeviceLink::new(&h.gpu.device));
    let mut host = Scratch::default();
    for view in views {
        let (mut on_device, mut on_host) = (FrameData::default(), FrameData::default());
        // No prefetch of this state before: the device path writes the current state.
        let step = gather::gather(s.as_ref(), view, Freshness::Latest, &mut link, &mut on_device);
        let refused = link.device.as_ref().and_then(|l| l.refused().map(str::to_string));
        let Some(shared) = on_device.on_device.clone() else {
            let why = refused.unwrap_or_else(|| "the solver wrote no field on the device".into());
            common::print_skip(&common::skip_or_fail(
                &common::test_name(),
                &why,
                common::gpu_required(),
            ));
            return;
        };
        assert_eq!(step, Some(s.steps()), "the device path shows the current state");
        gather::gather(s.as_ref(), view, Freshness::Current, &mut host, &mut on_host).unwrap();
        let n = on_host.n[0] * on_host.n[1];
        let values = read_buffer(&h, &shared.field, n);
        let differ = values
            .iter()
            .zip(&on_host.field)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        assert_eq!(differ, 0, "{case} {}: {differ} of {n} values differ", view.field);
        assert_eq!(
            on_device.range, on_host.range,
            "{case} {}: colour range",
            view.field
        );
        let contours = |f: &FrameData| f.contour.as_ref().map(|(_, levels, r)| (*levels, *r));
        assert_eq!(
            contours(&on_device),
            contours(&on_host),
            "{case}: contour levels and range"
        );
        if let (Some(buffer), Some((c, _, _))) = (&shared.contour, &on_host.contour) {
            assert_eq!(read_buffer(&h, buffer, n), *c, "{case}: contoured field");
        }
        let g = s.info().grid;
        if g.dim == 3
            && let Some(buffer) = &shared.volume
        {
            let whole = read_buffer(&h, buffer, g.cells());
            assert!(whole == on_host.volume, "{case}: the isosurface field");
        }
        let (device_image, host_image) = if g.dim == 3 {
            let (min, max) = scene3d::domain(&g);
            let camera = surface::camera_from(min, max, 30.0, 20.0, 1.0);
            (
                h.render_3d(&on_device, view, &g, &camera, 320, 240)
                    .expect("renders"),
                h.render_3d(&on_host, view, &g, &camera, 320, 240)
                    .expect("renders"),
            )
        } else {
            (
                h.render(&on_device, 320, 240, None).expect("renders"),
                h.render(&on_host, 320, 240, None).expect("renders"),
            )
        };
        assert!(
            device_image == host_image,
            "{case} {}: the drawn images differ",
            view.field
        );
        // `FLOWLAB_SHOWN_PNG=DIR` keeps the device path's images, to look at.
        if let Some(dir) = std::env::var_os("FLOWLAB_SHOWN_PNG") {
            let path = std::path::Path::new(&dir).join(format!("{case}_{}_{}d.png", view.field, g.dim));
            device_image.save(&path).expect("writes the image");
        }
        eprintln!(
            "{case} {}: {n} values and range {:?} equal on both paths",
            view.field, on_device.range
        );
    }
}

fn views() -> Vec<ViewSettings> {
    let speed = ViewSettings::for_field("speed");
    let mut robust = ViewSettings::for_field("vorticity");
    assert_eq!(robust.range, Range::Robust, "vorticity's default range is robust");
    robust.contours.enabled = true;
    let mut other_contours = ViewSettings::for_field("speed");
    other_contours.contours.enabled = true;
    other_contours.contours.field = Some("stream_function".into());
    vec![speed, robust, other_contours]
}

#[test]
fn projection_fields_drawn_from_the_device_equal_the_host_path() {
    if !common::gpu() {
        return;
    }
    for precision in ["f64", "f32"] {
        let p = format!("solver.precision=\"{precision}\"");
        compare(
            "lid_driven_cavity_re1000",
            // f32 reaches relative residuals of about 1e-5, not the case's 1e-7.
            &["grid.nx=96", "grid.ny=80", "solver.tolerance=1e-5", &p],
            &views(),
        );
    }
}

#[test]
fn compressible_fields_drawn_from_the_device_equal_the_host_path() {
    if !common::gpu() {
        return;
    }
    let mut density = ViewSettings::for_field("rho");
    density.contours.enabled = true;
    let mut log = ViewSettings::for_field("p");
    log.log_scale = true;
    let schlieren = ViewSettings::for_field("schlieren");
    compare(
        "riemann_quadrant_config3",
        &["grid.nx=128", "grid.ny=96", "solver.precision=\"f32\""],
        &[density, log, schlieren],
    );
}

#[test]
fn cube_slice_and_isosurface_drawn_from_the_device_equal_the_host_path() {
    if !common::gpu() {
        return;
    }
    let mut slice = ViewSettings::for_field("speed");
    slice.view3d = View3d::opening(Some("q_criterion"));
    slice.view3d.iso_levels = vec![0.5, 2.0];
    slice.contours.enabled = true;
    let mut off_centre = ViewSettings::for_field("vorticity_magnitude");
    off_centre.slice.axis = 0;
    off_centre.slice.position = 0.37;
    off_centre.view3d = View3d::opening(None);
    off_centre.view3d.iso_field = Some("speed".into());
    off_centre.view3d.iso_levels = vec![0.05];
    compare(
        "cavity_3d_re100",
        &["grid.nx=40", "grid.ny=36", "grid.nz=32"],
        &[slice, off_centre],
    );
}
