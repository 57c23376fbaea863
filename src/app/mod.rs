//! The interactive window: winit event loop, wgpu surface, egui (egui-winit + egui-wgpu) around
//! the field view. Each frame: the UI pass runs on the state, the shown fields are gathered and
//! uploaded, then the solver's worker thread ([`stepper`]) takes the state for one frame's worth
//! of steps while this thread presents the frame (the field view in the area the panels leave
//! free, egui on top) and handles input; the worker wakes the loop for the next frame.
//! Pan/zoom, probe, rake and click seeding act on the field view; a 3D state's 3D view
//! ([`view3d`]) turns, pans and zooms with its orbit camera.

mod camera_control;
mod canvas2d;
mod capture;
mod present;
pub mod stepper;
mod view3d;

use crate::case::Case;
use crate::export::{png, video};
use crate::render::device_frame::DeviceLink;
use crate::render::gather::{self, Freshness, Scratch};
use crate::render::gpu::{self, Gpu};
use crate::render::offscreen;
use crate::render::scene::SceneRenderer;
use crate::render::view::{self, Camera, FrameData};
use crate::solver::grid::Grid;
use crate::ui::panel;
use crate::ui::state::{AppState, Request};
use canvas2d::interact;
use capture::{capture, toggle_video};
use glam::Vec2;
use present::{clamp_canvas, present_frame, ui_pass};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use stepper::Stepper;
use view3d::Window3d;
use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::window::{Window, WindowId};

/// Open the interactive window on a case.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Args {
    /// Case file (default: cases/lid_driven_cavity_re1000.toml), or a saved state (`.flowlab`:
    /// the app's "Save state" or `flowlab run --checkpoint-every`) to continue.
    pub case: Option<PathBuf>,
    /// Override a case setting, e.g. `--set physics.re=400` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Quit after this many frames (smoke tests, scripted screenshots).
    #[arg(long)]
    pub frames: Option<u64>,
    /// Save a screenshot of the window (UI included) to this PNG when quitting.
    #[arg(long)]
    pub screenshot: Option<PathBuf>,
    /// Open paused (press play or space to run).
    #[arg(long)]
    pub paused: bool,
}

/// The case the app opens without arguments.
pub const DEFAULT_CASE: &str = "cases/lid_driven_cavity_re1000.toml";

/// Opens the window and runs until it is closed (or `--frames` are done).
pub fn run(args: Args) -> Result<(), String> {
    run_with(args, false)
}

/// As [`run`]; `any_thread` lets the event loop run off the main thread (tests, X11/Wayland).
pub fn run_with(args: Args, any_thread: bool) -> Result<(), String> {
    let path = args.case.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_CASE));
    let mut state = if path.extension().is_some_and(|x| x == "flowlab") {
        AppState::open_state(&path, &args.set)?
    } else {
        let mut case = Case::load(&path).map_err(|e| e.to_string())?;
        for s in &args.set {
            case.set_assignment(s).map_err(|e| e.to_string())?;
        }
        AppState::new(case)?
    };
    // A grid given on the command line or in a saved state is run as given.
    let own_grid = path.extension().is_some_and(|x| x == "flowlab")
        || args.set.iter().any(|s| s.trim_start().starts_with("grid."));
    if !own_grid {
        state.fit_grid_to_speed();
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        state.cases_dir = dir.to_path_buf();
    }
    state.playing = !args.paused;
    let mut builder = EventLoop::<Wake>::with_user_event();
    if any_thread {
        #[cfg(target_os = "linux")]
        {
            use winit::platform::wayland::EventLoopBuilderExtWayland;
            use winit::platform::x11::EventLoopBuilderExtX11;
            EventLoopBuilderExtX11::with_any_thread(&mut builder, true);
            EventLoopBuilderExtWayland::with_any_thread(&mut builder, true);
        }
    }
    let event_loop = builder.build().map_err(|e| {
        format!("cannot open a window: {e} (is a display available? DISPLAY / WAYLAND_DISPLAY)")
    })?;
    let proxy = event_loop.create_proxy();
    let mut app = App {
        stepper: Stepper::new(state, move || {
            let _ = proxy.send_event(Wake);
        }),
        args,
        window: None,
        error: None,
        frames: 0,
        drawing: Duration::ZERO,
        first_frame: None,
    };
    event_loop
        .run_app(&mut app)
        .map_err(|e| format!("the event loop failed: {e}"))?;
    match app.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The worker finished a batch of steps: time for the next frame.
struct Wake;

struct App {
    stepper: Stepper,
    args: Args,
    window: Option<WindowState>,
    error: Option<String>,
    frames: u64,
    /// The frames' drawing time (this thread's, UI pass to present) and when the first was
    /// drawn, for the frame rate reported after `--frames`.
    drawing: Duration,
    first_frame: Option<Instant>,
}

/// Everything that exists once the window does.
struct WindowState {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    gpu: Gpu,
    scene: SceneRenderer,
    /// Pipelines for offscreen captures (offscreen format may differ from the surface's).
    capture_scene: SceneRenderer,
    egui: egui_winit::State,
    egui_renderer: egui_wgpu::Renderer,
    capture_egui: egui_wgpu::Renderer,
    camera: Camera,
    /// The 3D view of 3D states.
    view3d: Window3d,
    frame: FrameData,
    scratch: Scratch,
    /// The field view's rectangle in physical pixels (x, y, w, h).
    canvas: [f32; 4],
    drag_start: Option<Vec2>,
    video: Option<video::VideoWriter>,
    /// The last frame's tessellated UI, for captures with the UI.
    last_jobs: Vec<egui::ClippedPrimitive>,
    last_ppp: f32,
    last_domain: ([f64; 2], [f64; 2]),
    /// How long the last frame took this thread (UI pass to present).
    last_draw: Duration,
    /// What the window's scene holds: gathered and uploaded again only when this changes.
    shown: Option<Shown>,
    /// What the last frame made after it handed the state back, for the state's next frame.
    composed: Option<Composed>,
}

/// What a frame made without the state reports to the state at the next frame.
struct Composed {
    /// The colour range of the frame ([`AppState::shown_range`]).
    range: [f32; 2],
    /// Why the 3D view could not take the frame.
    error: Option<String>,
}

/// The state and view a prepared frame shows.
#[derive(PartialEq)]
struct Shown {
    /// [`AppState::revision`] and the step count of the state.
    revision: u64,
    step: u64,
    /// Whether the 3D view drew it.
    solid: bool,
    view: view::ViewSettings,
}

impl WindowState {
    fn new(event_loop: &ActiveEventLoop) -> Result<WindowState, String> {
        let attrs = Window::default_attributes()
            .with_title("FlowLab")
            .with_inner_size(winit::dpi::LogicalSize::new(1280.0, 800.0));
        let window = Arc::new(
            event_loop
                .create_window(attrs)
                .map_err(|e| format!("cannot create the window: {e}"))?,
        );
        let instance = gpu::instance();
        let surface = instance
            .create_surface(window.clone())
            .map_err(|e| format!("cannot create a drawing surface: {e}"))?;
        let gpu = gpu::acquire(instance, Some(&surface)).map_err(|e| e.to_string())?;
        let size = window.inner_size();
        let caps = surface.get_capabilities(&gpu.adapter);
        let format = caps
            .formats
            .iter()
            .copied()
            .find(|f| {
                matches!(
                    f,
                    wgpu::TextureFormat::Bgra8Unorm | wgpu::TextureFormat::Rgba8Unorm
                )
            })
            .or_else(|| caps.formats.first().copied())
            .ok_or("the surface supports no texture format")?;
        let mut config = surface
            .get_default_config(&gpu.adapter, size.width.max(1), size.height.max(1))
            .ok_or("the surface is not supported by the adapter")?;
        config.format = format;
        config.present_mode = wgpu::PresentMode::AutoVsync;
        if caps.usages.contains(wgpu::TextureUsages::COPY_SRC) {
            config.usage |= wgpu::TextureUsages::COPY_SRC;
        }
        surface.configure(&gpu.device, &config);
        let ctx = egui::Context::default();
        let egui = egui_winit::State::new(
            ctx,
            egui::ViewportId::ROOT,
            &window,
            Some(window.scale_factor() as f32),
            None,
            Some(gpu.device.limits().max_texture_dimension_2d as usize),
        );
        let egui_renderer =
            egui_wgpu::Renderer::new(&gpu.device, format, egui_wgpu::RendererOptions::default());
        let capture_egui = egui_wgpu::Renderer::new(
            &gpu.device,
            offscreen::FORMAT,
            egui_wgpu::RendererOptions::default(),
        );
        let view3d = Window3d::new(&gpu.device, format);
        let link = DeviceLink::new(&gpu.device);
        Ok(WindowState {
            scene: SceneRenderer::new(&gpu.device, format),
            capture_scene: SceneRenderer::new(&gpu.device, offscreen::FORMAT),
            window,
            surface,
            config,
            gpu,
            egui,
            egui_renderer,
            capture_egui,
            camera: Camera::fit([0.0, 0.0], [1.0, 1.0]),
            view3d,
            frame: FrameData::default(),
            scratch: Scratch::drawing_from_device(link),
            canvas: [0.0, 0.0, 1.0, 1.0],
            drag_start: None,
            video: None,
            last_jobs: Vec::new(),
            last_ppp: 1.0,
            last_domain: ([f64::NAN; 2], [f64::NAN; 2]),
            last_draw: Duration::ZERO,
            shown: None,
            composed: None,
        })
    }

    fn resize(&mut self, w: u32, h: u32) {
        if w > 0 && h > 0 {
            self.config.width = w;
            self.config.height = h;
            self.surface.configure(&self.gpu.device, &self.config);
        }
    }

    /// Uploads the gathered frame (of `view` on `grid`) to the 3D view (`solid`) or the 2D
    /// scene.
    fn prepare_scene(
        &mut self,
        solid: bool,
        grid: &Grid,
        view: &mut view::ViewSettings,
    ) -> Result<(), String> {
        if solid {
            self.view3d.prepare(&self.gpu, grid, view, &self.frame, false)
        } else {
            self.scene.prepare(&self.gpu.device, &self.gpu.queue, &self.frame);
            Ok(())
        }
    }

    fn viewport(&self) -> Vec2 {
        Vec2::new(self.canvas[2].max(1.0), self.canvas[3].max(1.0))
    }

    /// Pixel position (physical) inside the canvas, from an egui point.
    fn canvas_pixel(&self, pos: egui::Pos2, ppp: f32) -> Vec2 {
        Vec2::new(pos.x * ppp - self.canvas[0], pos.y * ppp - self.canvas[1])
    }
}

impl ApplicationHandler<Wake> for App {
    fn user_event(&mut self, _event_loop: &ActiveEventLoop, _event: Wake) {
        if let Some(w) = &self.window {
            w.window.request_redraw();
        }
    }

    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_some() {
            return;
        }
        match WindowState::new(event_loop) {
            Ok(w) => {
                w.window.request_redraw();
                self.window = Some(w);
            }
            Err(e) => {
                self.error = Some(e);
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(w) = self.window.as_mut() else {
            return;
        };
        let response = w.egui.on_window_event(&w.window, &event);
        match event {
            WindowEvent::CloseRequested => {
                self.finish(event_loop);
            }
            WindowEvent::Resized(size) => {
                w.resize(size.width, size.height);
                w.window.request_redraw();
            }
            WindowEvent::RedrawRequested => {
                match self.redraw() {
                    Ok(true) => {
                        self.frames += 1;
                        self.first_frame.get_or_insert_with(Instant::now);
                        self.drawing += self.window.as_ref().map_or(Duration::ZERO, |w| w.last_draw);
                    }
                    Ok(false) => return, // the worker is stepping; it wakes the loop when done
                    Err(e) => {
                        self.error = Some(e);
                        event_loop.exit();
                        return;
                    }
                }
                if self.args.frames.is_some_and(|n| self.frames >= n) {
                    self.finish(event_loop);
                }
            }
            _ => {
                if response.repaint {
                    w.window.request_redraw();
                }
            }
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        if let Some(w) = &self.window {
            // While the run plays, the worker's wake-ups drive the frames; paused, frames are
            // drawn on input, or continuously for `--frames` and a recording video.
            let stepping = self
                .stepper
                .try_state()
                .is_none_or(|s| s.playing && s.failure.is_none());
            if !stepping && (self.args.frames.is_some() || w.video.is_some()) {
                event_loop.set_control_flow(ControlFlow::Poll);
                w.window.request_redraw();
            } else {
                event_loop.set_control_flow(ControlFlow::Wait);
            }
        }
    }
}

impl App {
    /// Reports the frame rate, takes the requested screenshot, closes a running video and
    /// leaves the loop.
    fn finish(&mut self, event_loop: &ActiveEventLoop) {
        if let Some(first) = self.first_frame.filter(|_| self.frames > 1) {
            let seconds = first.elapsed().as_secs_f64();
            let n = self.frames - 1;
            println!(
                "{} frames: {:.1} frames per second after the first, {:.1} ms a frame drawing",
                self.frames,
                n as f64 / seconds.max(1e-9),
                1e3 * self.drawing.as_secs_f64() / self.frames as f64,
            );
        }
        if let Some(w) = self.window.as_mut() {
            if let Some(path) = self.args.screenshot.clone() {
                let mut state = self.stepper.state();
                match capture(w, &mut state, true, None).and_then(|img| png::save(&img, &path)) {
                    Ok(()) => println!("wrote {}", path.display()),
                    Err(e) => self.error = Some(format!("screenshot failed: {e}")),
                }
            }
            if let Some(v) = w.video.take() {
                if let Err(e) = v.finish() {
                    self.error = Some(e);
                }
            }
        }
        event_loop.exit();
    }

    /// Draws a frame; `Ok(false)` when the worker holds the state (nothing drawn).
    fn redraw(&mut self) -> Result<bool, String> {
        let App { stepper, window, .. } = self;
        let Some(mut guard) = stepper.try_state() else {
            return Ok(false);
        };
        let started = Instant::now();
        let state = &mut *guard;
        let w = window.as_mut().expect("redraw needs the window");
        if let Some(c) = w.composed.take() {
            state.shown_range = c.range;
            if let Some(e) = c.error {
                state.message = Some(format!("3D view: {e}"));
            }
        }
        state.draw_time = w.last_draw;
        // egui pass: panels, then the canvas area is what is left.
        let input = w.egui.take_egui_input(&w.window);
        let ctx = w.egui.egui_ctx().clone();
        let mut canvas_rect = egui::Rect::NOTHING;
        let mut refit = false;
        let mut output = ctx.run_ui(input, |ui| {
            refit = panel::shortcuts(ui.ctx(), state);
            egui::Panel::left("controls")
                .resizable(true)
                .default_size(320.0)
                .show(ui, |ui| panel::controls(ui, state));
            if state.show_plots {
                egui::Panel::bottom("plots")
                    .resizable(true)
                    .default_size(260.0)
                    .show(ui, |ui| panel::plots(ui, state));
            }
            egui::Panel::top("colour bar").show(ui, |ui| panel::color_bar(ui, state));
            canvas_rect = ui.available_rect_before_wrap();
            let response = ui.allocate_rect(canvas_rect, egui::Sense::click_and_drag());
            if view3d::active(state) {
                let viewport = w.viewport();
                w.view3d
                    .control
                    .interact(ui, &response, viewport, &mut state.view);
            } else {
                interact(ui, &response, state, w);
                let (viewport, extent, ppp) = (w.viewport(), w.frame.extent, ui.ctx().pixels_per_point());
                let origin = canvas_rect.min;
                panel::subdomain_overlay(&ui.painter_at(canvas_rect), state, |p| {
                    let px = w
                        .camera
                        .world_to_screen(Vec2::new(p[0] as f32, p[1] as f32), viewport, extent);
                    origin + egui::vec2(px.x, px.y) / ppp
                });
            }
            if state.show_help {
                egui::Window::new("Keyboard and mouse")
                    .open(&mut state.show_help)
                    .show(ui.ctx(), panel::help);
            }
        });
        w.egui
            .handle_platform_output(&w.window, output.platform_output.clone());
        let ppp = output.pixels_per_point;
        w.canvas = [
            (canvas_rect.left() * ppp).max(0.0),
            (canvas_rect.top() * ppp).max(0.0),
            (canvas_rect.width() * ppp).max(1.0),
            (canvas_rect.height() * ppp).max(1.0),
        ];
        // Field data for this frame (only the shown fields): from a GPU solver, the newest
        // state whose copy has landed, so that the copy of the last batch overlaps the next.
        // Read again only when the state or the view changed; the camera moves every frame.
        // Only the read holds the solver's state: the frame is made from it and uploaded
        // once the worker steps on, unless a capture needs it now or the 3D view must first
        // choose its isosurface level.
        let solid = view3d::active(state);
        let grid = state.solver.info().grid;
        let key = Shown {
            revision: state.revision,
            step: state.solver.steps(),
            solid,
            view: state.view.clone(),
        };
        let now = !state.requests.is_empty()
            || w.video.is_some()
            || grid.dim < 2
            || (solid && state.view.view3d.iso_levels.is_empty());
        let mut later = None;
        let read_now = w.shown.as_ref() != Some(&key);
        let shown = if !read_now {
            Some(key.step)
        } else if now {
            let shown = gather(state, w, Freshness::Latest);
            if shown.is_some()
                && let Err(e) = w.prepare_scene(solid, &grid, &mut state.view)
            {
                state.message = Some(format!("3D view: {e}"));
            }
            // Kept only once the current state is shown (not one frame behind it); the view
            // as it is now, with the isosurface level the 3D view may have chosen.
            w.shown = (shown == Some(key.step)).then(|| Shown {
                view: state.view.clone(),
                ..key
            });
            shown
        } else {
            let read = gather::read(
                state.solver.as_ref(),
                &state.view,
                Freshness::Latest,
                &mut w.scratch,
            );
            w.shown = read.filter(|r| r.step == key.step).map(|_| key);
            later = read.map(|r| (r, state.view.clone()));
            read.map(|r| r.step)
        };
        let has_frame = shown.is_some();
        if read_now {
            state.fields_through = state.solver.display_device().map(|_| w.scratch.fields_through());
        }
        let jobs = ctx.tessellate(output.shapes, ppp);
        let screen = egui_wgpu::ScreenDescriptor {
            size_in_pixels: [w.config.width, w.config.height],
            pixels_per_point: ppp,
        };
        for (id, deltas) in &output.textures_delta.set {
            for delta in deltas {
                w.egui_renderer
                    .update_texture(&w.gpu.device, &w.gpu.queue, *id, delta);
                w.capture_egui
                    .update_texture(&w.gpu.device, &w.gpu.queue, *id, delta);
            }
        }
        w.last_jobs = jobs;
        w.last_ppp = ppp;
        // Requests that need the GPU and the state.
        let requests = std::mem::take(&mut state.requests);
        for r in requests {
            match r {
                Request::Screenshot => {
                    let stamp = format!("flowlab_step{:08}.png", state.solver.steps());
                    let path = state.export_dir.join(stamp);
                    let (with_ui, size) = (state.screenshot_with_ui, state.screenshot_size);
                    state.message = Some(
                        match capture(w, state, with_ui, size).and_then(|img| png::save(&img, &path)) {
                            Ok(()) => format!("saved {}", path.display()),
                            Err(e) => format!("screenshot failed: {e}"),
                        },
                    );
                }
                Request::ToggleVideo => toggle_video(w, state),
                Request::View3d(axis) => w.view3d.control.request(axis),
            }
        }
        if let Some(v) = w.video.as_mut() {
            if state.perf.frame_steps > 0 || !state.playing {
                let size = v.size;
                match capture(w, state, false, Some(size)) {
                    Ok(img) => w.video.as_mut().expect("checked").offer(img),
                    Err(e) => state.message = Some(format!("video frame failed: {e}")),
                }
            }
        }
        state.recording = w.video.is_some();
        // The worker steps while this thread presents.
        let stepping = state.playing && state.failure.is_none();
        // Paused one frame behind: draw again once the current state's copy has landed.
        let behind = shown.is_some_and(|step| step != state.solver.steps());
        drop(guard);
        if behind && !stepping {
            w.window.request_redraw();
        }
        if stepping {
            stepper.go();
        }
        if let Some((read, mut view)) = later {
            gather::compose(&read, &view, &mut w.scratch, &mut w.frame);
            let error = w.prepare_scene(solid, &read.grid, &mut view).err();
            w.composed = Some(Composed {
                range: w.frame.range,
                error,
            });
        }
        if refit || w.last_domain != (w.frame.origin, w.frame.extent) {
            w.camera = Camera::fit(w.frame.origin, w.frame.extent);
            w.last_domain = (w.frame.origin, w.frame.extent);
        }
        if refit && solid {
            w.view3d.control.reset();
        }
        let viewport = w.viewport();
        if has_frame && solid {
            w.view3d.set_camera(&w.gpu, viewport, false);
        } else if has_frame {
            let view = w.camera.world_to_clip(viewport, w.frame.extent);
            w.scene.set_view(&w.gpu.queue, view, viewport);
        }
        let jobs = std::mem::take(&mut w.last_jobs);
        present_frame(w, &jobs, &screen, has_frame, solid);
        w.last_draw = started.elapsed();
        w.last_jobs = jobs;
        for id in &output.textures_delta.free {
            w.egui_renderer.free_texture(id);
            w.capture_egui.free_texture(id);
        }
        output.textures_delta.clear();
        Ok(true)
    }
}

/// Gathers the frame data for the current view; returns the step count of the state drawn, or
/// `None` if there is nothing to draw.
fn gather(state: &mut AppState, w: &mut WindowState, freshness: Freshness) -> Option<u64> {
    let shown = if state.solver.info().grid.dim == 1 {
        let g = state.solver.info().grid;
        let t_end = state.xt.times.last().copied().unwrap_or(0.0);
        let mut v = state.view.clone();
        v.colormap = if v.colormap.is_diverging() {
            crate::render::colormap::Colormap::Viridis
        } else {
            v.colormap
        };
        view::xt_frame(
            state.xt.nx,
            &state.xt.rows,
            g.origin[0],
            g.extent(0),
            t_end,
            &v,
            &mut w.frame,
        )
        .map(|()| state.solver.steps())
    } else {
        gather::gather(
            state.solver.as_ref(),
            &state.view,
            freshness,
            &mut w.scratch,
            &mut w.frame,
        )
    };
    if shown.is_some() {
        state.shown_range = w.frame.range;
    }
    shown
}
