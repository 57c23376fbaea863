//! The window's 3D view of a 3D state ([`Scene3d`]): the depth buffer and the scene drawn in
//! the canvas, into screenshots and into video frames, seen through the camera of its
//! [`CameraControl`].

use super::camera_control::CameraControl;
use crate::render::offscreen;
use crate::render::scene3d::{self, Scene3d};
use crate::render::surface::DEPTH;
use crate::render::view::{self, FrameData, ViewSettings};
use crate::solver::grid::Grid;
use crate::ui::state::AppState;
use glam::Vec2;

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
    /// The camera and what the pointer does to it.
    pub control: CameraControl,
    depth: Option<Depth>,
    capture_depth: Option<Depth>,
}

impl Window3d {
    /// The scene drawing into the window's surface of `format`.
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Window3d {
        Window3d {
            scene: Scene3d::new(device, format),
            capture: None,
            control: CameraControl::default(),
            depth: None,
            capture_depth: None,
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
        self.control.follow(scene3d::domain(grid));
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
        let camera = self.control.camera;
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
        let scene = if capture {
            self.capture.as_ref().expect("prepared")
        } else {
            &self.scene
        };
        scene.draw(device, queue, encoder, target, depth, canvas, background);
    }
}
