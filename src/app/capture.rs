//! Captures of the window: screenshots (with the UI or the view alone, at any size) and video
//! recording, drawn offscreen from the state they are named after.

use super::{WindowState, clamp_canvas, gather, ui_pass, view3d};
use crate::export::video;
use crate::render::gather::Freshness;
use crate::render::headless::BACKGROUND;
use crate::render::offscreen::Target;
use crate::ui::state::AppState;
use glam::Vec2;

/// Renders the current frame offscreen: with the UI of the last frame at window size, or the
/// field view alone at `size` (default: the canvas size).
pub(super) fn capture(
    w: &mut WindowState,
    state: &mut AppState,
    with_ui: bool,
    size: Option<[u32; 2]>,
) -> Result<image::RgbaImage, String> {
    // Screenshots and video frames show the state they are named after.
    let has_frame = gather(state, w, Freshness::Current).is_some();
    let (width, height, canvas) = if with_ui {
        (
            w.config.width,
            w.config.height,
            clamp_canvas(w.canvas, w.config.width, w.config.height),
        )
    } else {
        let [cw, ch] = size.unwrap_or([w.canvas[2] as u32, w.canvas[3] as u32]);
        (
            cw.max(1),
            ch.max(1),
            [0.0, 0.0, cw.max(1) as f32, ch.max(1) as f32],
        )
    };
    let target = Target::new(&w.gpu.device, width, height)?;
    let viewport = Vec2::new(canvas[2], canvas[3]);
    let solid = has_frame && view3d::active(state);
    if solid {
        let grid = state.solver.info().grid;
        w.view3d.prepare(&w.gpu, &grid, &mut state.view, &w.frame, true)?;
        w.view3d.set_camera(&w.gpu, viewport, true);
    } else if has_frame {
        let view = w.camera.world_to_clip(viewport, w.frame.extent);
        w.capture_scene.prepare(&w.gpu.device, &w.gpu.queue, &w.frame);
        w.capture_scene.set_view(&w.gpu.queue, view, viewport);
    }
    let mut encoder = w
        .gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("capture"),
        });
    let jobs = std::mem::take(&mut w.last_jobs);
    let screen = egui_wgpu::ScreenDescriptor {
        size_in_pixels: [width, height],
        pixels_per_point: w.last_ppp,
    };
    let extra = if with_ui {
        w.capture_egui
            .update_buffers(&w.gpu.device, &w.gpu.queue, &mut encoder, &jobs, &screen)
    } else {
        Vec::new()
    };
    if solid {
        let size = [width, height];
        w.view3d.draw(
            &w.gpu.device,
            &w.gpu.queue,
            &mut encoder,
            &target.view,
            size,
            canvas,
            BACKGROUND,
            true,
        );
    }
    {
        let mut pass = ui_pass(&mut encoder, &target.view, "capture", solid);
        if has_frame && !solid {
            pass.set_viewport(canvas[0], canvas[1], canvas[2], canvas[3], 0.0, 1.0);
            w.capture_scene.paint(&mut pass);
            pass.set_viewport(0.0, 0.0, width as f32, height as f32, 0.0, 1.0);
        }
        if with_ui {
            w.capture_egui.render(&mut pass, &jobs, &screen);
        }
    }
    w.gpu.queue.submit(extra.into_iter().chain([encoder.finish()]));
    w.last_jobs = jobs;
    target.read(&w.gpu.device, &w.gpu.queue)
}

pub(super) fn toggle_video(w: &mut WindowState, state: &mut AppState) {
    if let Some(v) = w.video.take() {
        let sink = v.sink.clone();
        let dropped = v.dropped;
        state.message = Some(match v.finish() {
            Ok(n) => match sink {
                video::Sink::Ffmpeg { path, .. } => {
                    format!("wrote {} ({n} frames, {dropped} dropped)", path.display())
                }
                video::Sink::PngSequence { dir } => {
                    format!("wrote {n} PNG frames to {}", dir.display())
                }
            },
            Err(e) => e,
        });
        return;
    }
    let size = video::even_size(w.canvas[2] as u32, w.canvas[3] as u32);
    let stem = format!("flowlab_step{:08}", state.solver.steps());
    let path = state.export_dir.join(format!("{stem}.mp4"));
    w.video = match video::VideoWriter::ffmpeg("ffmpeg", &path, size, 30) {
        Ok(v) => {
            state.message = Some(format!("recording {}", path.display()));
            Some(v)
        }
        Err(e @ video::VideoError::FfmpegMissing { .. }) => {
            let dir = state.export_dir.join(stem);
            match video::VideoWriter::png_sequence(&dir, size) {
                Ok(v) => {
                    state.message = Some(format!(
                        "{e}; recording a PNG sequence to {} instead",
                        dir.display()
                    ));
                    Some(v)
                }
                Err(e2) => {
                    state.message = Some(format!("{e}; the PNG sequence failed too: {e2}"));
                    None
                }
            }
        }
        Err(e) => {
            state.message = Some(e.to_string());
            None
        }
    };
}
