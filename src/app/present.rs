//! Putting a frame on the screen: the 3D view's pass, then the 2D field view and egui in one
//! pass over the window's surface texture; the same UI pass serves the captures.

use super::WindowState;
use crate::render::headless::BACKGROUND;

/// Draws the field view and the UI into the window's next surface texture and presents it
/// (skipped when the surface is outdated, lost or occluded; it is reconfigured as needed).
pub(super) fn present_frame(
    w: &mut WindowState,
    jobs: &[egui::ClippedPrimitive],
    screen: &egui_wgpu::ScreenDescriptor,
    has_frame: bool,
    solid: bool,
) {
    let texture = match w.surface.get_current_texture() {
        wgpu::CurrentSurfaceTexture::Success(t) | wgpu::CurrentSurfaceTexture::Suboptimal(t) => t,
        wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
            let (cw, ch) = (w.config.width, w.config.height);
            w.resize(cw, ch);
            return;
        }
        _ => return,
    };
    let target = texture
        .texture
        .create_view(&wgpu::TextureViewDescriptor::default());
    let mut encoder = w
        .gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("frame") });
    let extra = w
        .egui_renderer
        .update_buffers(&w.gpu.device, &w.gpu.queue, &mut encoder, jobs, screen);
    let canvas = clamp_canvas(w.canvas, w.config.width, w.config.height);
    let size = [w.config.width, w.config.height];
    let solid = has_frame && solid;
    if solid {
        w.view3d.draw(
            &w.gpu.device,
            &w.gpu.queue,
            &mut encoder,
            &target,
            size,
            canvas,
            BACKGROUND,
            false,
        );
    }
    {
        let mut pass = ui_pass(&mut encoder, &target, "frame", solid);
        if has_frame && !solid {
            let c = canvas;
            pass.set_viewport(c[0], c[1], c[2], c[3], 0.0, 1.0);
            pass.set_scissor_rect(c[0] as u32, c[1] as u32, c[2] as u32, c[3] as u32);
            w.scene.paint(&mut pass);
            pass.set_viewport(0.0, 0.0, w.config.width as f32, w.config.height as f32, 0.0, 1.0);
            pass.set_scissor_rect(0, 0, w.config.width, w.config.height);
        }
        w.egui_renderer.render(&mut pass, jobs, screen);
    }
    let index = w.gpu.queue.submit(extra.into_iter().chain([encoder.finish()]));
    if let Some(link) = &mut w.scratch.device {
        link.drawn(index);
    }
    w.window.pre_present_notify();
    w.gpu.queue.present(texture);
}

/// The pass that draws the 2D field view (when not `solid`) and the UI over `target`: cleared
/// to the background, or loaded over the 3D view's pass when `solid`.
pub(super) fn ui_pass(
    encoder: &mut wgpu::CommandEncoder,
    target: &wgpu::TextureView,
    label: &str,
    solid: bool,
) -> wgpu::RenderPass<'static> {
    encoder
        .begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some(label),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: target,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: if solid {
                        wgpu::LoadOp::Load
                    } else {
                        wgpu::LoadOp::Clear(BACKGROUND)
                    },
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        })
        .forget_lifetime()
}

/// The canvas rectangle `c` (x, y, w, h in physical pixels) clamped to a `width x height`
/// target, whole pixels, at least one pixel wide and high.
pub(super) fn clamp_canvas(c: [f32; 4], width: u32, height: u32) -> [f32; 4] {
    let x = c[0].min(width as f32 - 1.0).floor();
    let y = c[1].min(height as f32 - 1.0).floor();
    [
        x,
        y,
        c[2].min(width as f32 - x).floor().max(1.0),
        c[3].min(height as f32 - y).floor().max(1.0),
    ]
}
