//! Offscreen rendering of the field view and of the 3D surface view without a window.

use super::camera::OrbitCamera;
use super::gpu::{self, Gpu, GpuError};
use super::offscreen::{self, Target};
use super::scene::SceneRenderer;
use super::scene3d::{self, Scene3d};
use super::surface;
use super::view::{Camera, FrameData, ViewSettings};
use crate::solver::grid::Grid;
use glam::Vec2;
use image::RgbaImage;

/// Background behind the domain.
pub const BACKGROUND: wgpu::Color = wgpu::Color {
    r: 0.09,
    g: 0.09,
    b: 0.1,
    a: 1.0,
};

/// A device with the field-view and 3D-view pipelines, rendering to images.
pub struct Headless {
    pub gpu: Gpu,
    pub scene: SceneRenderer,
    pub view3d: Scene3d,
}

impl Headless {
    pub fn new() -> Result<Headless, GpuError> {
        let gpu = gpu::headless()?;
        let scene = SceneRenderer::new(&gpu.device, offscreen::FORMAT);
        let view3d = Scene3d::new(&gpu.device, offscreen::FORMAT);
        Ok(Headless { gpu, scene, view3d })
    }

    /// Renders `frame` at `width x height` pixels, the whole domain in view (`camera` default).
    pub fn render(
        &mut self,
        frame: &FrameData,
        width: u32,
        height: u32,
        camera: Option<Camera>,
    ) -> Result<RgbaImage, String> {
        let target = Target::new(&self.gpu.device, width, height)?;
        let viewport = Vec2::new(width as f32, height as f32);
        let camera = camera.unwrap_or_else(|| Camera::fit(frame.origin, frame.extent));
        let view = camera.world_to_clip(viewport, frame.extent);
        self.scene.prepare(&self.gpu.device, &self.gpu.queue, frame);
        self.scene.set_view(&self.gpu.queue, view, viewport);
        let scene = &self.scene;
        self.draw(&target, |pass| scene.paint(pass))
    }

    /// Renders the 3D view of `frame` (gathered for `view` from a state on `grid`) seen by
    /// `camera` at `width x height` pixels.
    #[allow(clippy::too_many_arguments)]
    pub fn render_3d(
        &mut self,
        frame: &FrameData,
        view: &ViewSettings,
        grid: &Grid,
        camera: &OrbitCamera,
        width: u32,
        height: u32,
    ) -> Result<RgbaImage, String> {
        let target = Target::new(&self.gpu.device, width, height)?;
        let aspect = width as f32 / height as f32;
        self.view3d
            .prepare(&self.gpu.device, &self.gpu.queue, frame, view, grid)?;
        self.view3d.set_camera(&self.gpu.queue, camera, aspect);
        let depth = offscreen::attachment(
            &self.gpu.device,
            "depth",
            width,
            height,
            surface::DEPTH,
            scene3d::DEPTH_USAGE,
        );
        let depth = depth.create_view(&wgpu::TextureViewDescriptor::default());
        let (device, queue) = (&self.gpu.device, &self.gpu.queue);
        let canvas = [0.0, 0.0, width as f32, height as f32];
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("headless 3D view"),
        });
        self.view3d.draw(
            device,
            queue,
            &mut encoder,
            &target.view,
            &depth,
            canvas,
            BACKGROUND,
        );
        queue.submit([encoder.finish()]);
        target.read(device, queue)
    }

    /// One render pass into `target` (cleared to the background) with `paint`, read back.
    fn draw(
        &self,
        target: &Target,
        paint: impl FnOnce(&mut wgpu::RenderPass<'_>),
    ) -> Result<RgbaImage, String> {
        self.submit(target, paint);
        target.read(&self.gpu.device, &self.gpu.queue)
    }

    /// Submits one pass over `target` (cleared, then `paint`ed) without reading it back;
    /// returns the submission.
    pub fn submit(
        &self,
        target: &Target,
        paint: impl FnOnce(&mut wgpu::RenderPass<'_>),
    ) -> wgpu::SubmissionIndex {
        let mut encoder = self
            .gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("headless"),
            });
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("headless"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &target.view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(BACKGROUND),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            paint(&mut pass);
        }
        self.gpu.queue.submit([encoder.finish()])
    }
}
