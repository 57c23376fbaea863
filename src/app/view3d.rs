//! The window's 3D view of a 3D state ([`Scene3d`]): its orbit camera and the pointer handling
//! that moves it, the depth buffer, and the scene drawn in the canvas, into screenshots and
//! into video frames.

use crate::render::camera::OrbitCamera;
use crate::render::offscreen;
use crate::render::scene3d::{self, Scene3d};
use crate::render::surface::{self, DEPTH};
use crate::render::view::{self, FrameData, ViewSettings};
use crate::solver::grid::Grid;
use crate::ui::state::AppState;
use glam::{Vec2, Vec3};

/// Whether the canvas shows the 3D view (a 3D state with the 3D view on).
pub fn active(state: &AppState) -> bool {
    state.solver.info().grid.dim == 3 && state.view.view3d.enabled
}

/// A depth buffer of some size.
struct Depth {
    view: wgpu::TextureView,
    size: [u32; 2],
}

/// The window's 3D view.
pub struct Window3d {
    scene: Scene3d,
    /// The pipelines for offscreen captures (made at the first one).
    capture: Option<Scene3d>,
    pub camera: OrbitCamera,
    /// The domain the camera frames.
    domain: (Vec3, Vec3),
    depth: Option<Depth>,
    capture_depth: Option<Depth>,
    /// The slice a Shift + drag moves ([`Window3d::interact`]) and the point it was held at.
    dragging: Option<(usize, Vec3)>,
}

impl Window3d {
    /// The scene drawing into the window's surface of `format`.
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Window3d {
        Window3d {
            scene: Scene3d::new(device, format),
            capture: None,
            camera: OrbitCamera::framing(Vec3::ZERO, Vec3::ONE),
            domain: (Vec3::ZERO, Vec3::ONE),
            depth: None,
            capture_depth: None,
            dragging: None,
        }
    }

    /// Back to the view that frames the domain.
    pub fn reset(&mut self) {
        self.camera = OrbitCamera::framing(self.domain.0, self.domain.1);
    }

    /// The panel's camera request: the opening view (`None`) or looking along `axis`.
    pub fn request(&mut self, axis: Option<usize>) {
        match axis {
            None => self.reset(),
            Some(a) => self.camera.look_along(a, true),
        }
    }

    /// Frames `grid`'s domain when it is not the one framed (a new case or grid); keeps the
    /// camera otherwise (switching fields, moving the slice).
    fn follow(&mut self, grid: &Grid) {
        let domain = scene3d::domain(grid);
        if domain != self.domain {
            self.domain = domain;
            self.reset();
        }
    }

    /// Uploads `frame` (gathered for `view` on `grid`); the isosurface level is chosen from the
    /// field where the view has none. Only a new frame needs this.
    pub fn prepare(
        &mut self,
        gpu: &crate::render::gpu::Gpu,
        grid: &Grid,
        view: &mut ViewSettings,
        frame: &FrameData,
        capture: bool,
    ) -> Result<(), String> {
        self.follow(grid);
        let levels = &mut view.view3d.iso_levels;
        if levels.is_empty() {
            levels.extend(view::iso_level_of(&frame.volume));
        }
        self.scene(gpu, capture)
            .prepare(&gpu.device, &gpu.queue, frame, view, grid)
    }

    /// Sees the prepared scene through the camera in a canvas of `viewport` pixels.
    pub fn set_camera(&mut self, gpu: &crate::render::gpu::Gpu, viewport: Vec2, capture: bool) {
        let aspect = viewport.x / viewport.y.max(1.0);
        let camera = self.camera;
        self.scene(gpu, capture).set_camera(&gpu.queue, &camera, aspect);
    }

    /// The window's scene, or the captures' (made at the first capture).
    fn scene(&mut self, gpu: &crate::render::gpu::Gpu, capture: bool) -> &mut Scene3d {
        if capture {
            self.capture
                .get_or_insert_with(|| Scene3d::new(&gpu.device, offscreen::FORMAT))
        } else {
            &mut self.scene
        }
    }

    /// Records the prepared scene into a pass of its own on `target` (`size` pixels), cleared
    /// to `background`, drawn in the rectangle `canvas` (x, y, w, h in pixels).
    #[allow(clippy::too_many_arguments)]
    pub fn draw(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        size: [u32; 2],
        canvas: [f32; 4],
        background: wgpu::Color,
        capture: bool,
    ) {
        let slot = if capture {
            &mut self.capture_depth
        } else {
            &mut self.depth
        };
        if slot.as_ref().is_none_or(|d| d.size != size) {
            let usage = scene3d::DEPTH_USAGE;
            let texture = offscreen::attachment(device, "3D view depth", size[0], size[1], DEPTH, usage);
            *slot = Some(Depth {
                view: texture.create_view(&wgpu::TextureViewDescriptor::default()),
                size,
            });
        }
        let depth = &slot.as_ref().expect("made above").view;
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("3D view"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: target,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(background),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: Some(surface::depth_cleared(depth)),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_viewport(canvas[0], canvas[1], canvas[2], canvas[3], 0.0, 1.0);
        let scene = if capture {
            self.capture.as_ref().expect("prepared")
        } else {
            &self.scene
        };
        scene.paint(&mut pass);
        drop(pass);
        scene.draw_volume(device, queue, encoder, target, depth, canvas);
    }

    /// Pointer handling over the canvas (`viewport` pixels): a left drag turns the view, a
    /// right or middle drag pans, the wheel zooms, a double click resets; Shift and a left drag
    /// on a slice of `view` moves it along its normal.
    pub fn interact(
        &mut self,
        ui: &egui::Ui,
        response: &egui::Response,
        viewport: Vec2,
        view: &mut ViewSettings,
    ) {
        let ppp = ui.ctx().pixels_per_point();
        let aspect = viewport.x / viewport.y.max(1.0);
        let rect = response.rect;
        let ndc = |p: egui::Pos2| {
            Vec2::new(
                2.0 * (p.x - rect.min.x) / rect.width().max(1.0) - 1.0,
                1.0 - 2.0 * (p.y - rect.min.y) / rect.height().max(1.0),
            )
        };
        if response.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                self.camera.zoom((-scroll * 0.003).exp());
            }
        }
        if response.double_clicked() {
            self.reset();
        }
        if response.drag_started_by(egui::PointerButton::Primary) && ui.input(|i| i.modifiers.shift) {
            self.dragging = response
                .interact_pointer_pos()
                .and_then(|p| self.pick_slice(view, ndc(p), aspect));
        }
        if !response.dragged() {
            self.dragging = None;
            return;
        }
        if let Some((k, anchor)) = self.dragging {
            let (min, max) = self.domain;
            let slice = if k == 0 {
                &mut view.slice
            } else {
                &mut view.view3d.more_slices[k - 1]
            };
            let a = slice.axis;
            let to = response
                .interact_pointer_pos()
                .and_then(|p| self.camera.drag_along(ndc(p), aspect, anchor, a));
            if let Some(c) = to {
                slice.position = f64::from(((c - min[a]) / (max[a] - min[a])).clamp(0.0, 1.0));
            }
            return;
        }
        let d = response.drag_delta() * ppp;
        if response.dragged_by(egui::PointerButton::Primary) {
            // Half a turn across the canvas's height.
            let k = std::f32::consts::PI / viewport.y.max(1.0);
            self.camera.orbit(-d.x * k, d.y * k);
        } else {
            let ndc = Vec2::new(2.0 * d.x / viewport.x.max(1.0), -2.0 * d.y / viewport.y.max(1.0));
            self.camera.pan(ndc, aspect);
        }
    }

    /// The nearest slice of `view` drawn under the point `ndc`: its index (0 the view's own,
    /// `k` further slice `k - 1`) and the point of it there.
    fn pick_slice(&self, view: &ViewSettings, ndc: Vec2, aspect: f32) -> Option<(usize, Vec3)> {
        if !view.view3d.slice {
            return None;
        }
        let (min, max) = self.domain;
        let slices = std::iter::once(&view.slice).chain(view.view3d.shown_more_slices());
        let eye = self.camera.eye();
        slices
            .enumerate()
            .filter_map(|(k, s)| {
                let a = s.axis;
                let c = s.coordinate(f64::from(min[a]), f64::from(max[a] - min[a])) as f32;
                let p = self.camera.pick_on_plane(ndc, aspect, a, c)?;
                let tolerance = 1e-4 * (max - min);
                let inside = (0..3)
                    .all(|b| b == a || (p[b] >= min[b] - tolerance[b] && p[b] <= max[b] + tolerance[b]));
                inside.then_some((k, p))
            })
            .min_by(|x, y| eye.distance(x.1).total_cmp(&eye.distance(y.1)))
    }
}
