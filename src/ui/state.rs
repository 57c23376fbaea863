//! The app's state without any GPU: the case and its solver, run control with budgeted stepping,
//! live settings (through [`Case::set`] then [`Solver::update`]) and reset-only settings, the
//! histories behind the plots, and the view settings.

use super::speed::GridChoice;
use crate::case::{Case, Kind, Method};
use crate::render::view::{self, View3d, ViewSettings};
use crate::solver::linear::schwarz::strip_rows;
use crate::solver::snapshot::{read_checkpoint, write_checkpoint};
use crate::solver::{self, Solver};
use crate::ui::rewind::{DEFAULT_BUDGET_MB, Rewind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How many solver steps each frame takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StepsPerFrame {
    Fixed(u32),
    /// As many as fit in this much time per frame (keeps the frame rate at 30 fps or more), or
    /// in the time the window thread took to draw the last frame where that is longer (up to
    /// [`MAX_STEP_BUDGET`]): the worker steps while the window thread draws, so slow drawing
    /// (software rendering on a CPU) does not leave the solver idle for most of each frame.
    Auto {
        budget: Duration,
    },
}

/// The longest an Auto frame steps (the frame rate stays at 4 fps or more).
pub const MAX_STEP_BUDGET: Duration = Duration::from_millis(250);

/// A request the window side carries out (needs the GPU or the file system).
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    Screenshot,
    ToggleVideo,
    /// The 3D view's camera: back to its opening view (`None`), or looking along an axis.
    View3d(Option<usize>),
}

/// Step rate and cell-update rate, smoothed.
#[derive(Clone, Copy, Debug, Default)]
pub struct Perf {
    pub steps_per_second: f64,
    pub cell_updates_per_second: f64,
    pub frame_steps: u64,
}

/// Space-time history of a 1D case's density (x-t diagram), one row per recorded step.
#[derive(Clone, Debug, Default)]
pub struct XtHistory {
    pub nx: usize,
    pub rows: Vec<f32>,
    pub times: Vec<f64>,
}

/// Rows kept in the x-t diagram; older halves are thinned out beyond this.
const XT_ROWS: usize = 512;
/// Residual history entries kept; thinned by two beyond this.
const HISTORY: usize = 4096;

pub struct AppState {
    pub case: Case,
    pub solver: Box<dyn Solver>,
    pub playing: bool,
    pub steps_per_frame: StepsPerFrame,
    pub view: ViewSettings,
    /// Reset-only settings (`key`, `value`) waiting for the next reset.
    pub pending: Vec<(String, String)>,
    /// The last settings message (rejected values), shown in the panel.
    pub message: Option<String>,
    /// Why the run stopped (a diverged solver); cleared by reset.
    pub failure: Option<String>,
    /// `(step, time, residuals)` per recorded step.
    pub history: Vec<(u64, f64, Vec<(&'static str, f64)>)>,
    history_stride: u64,
    pub xt: XtHistory,
    xt_stride: u64,
    pub perf: Perf,
    /// Pinned probe point (world coordinates) and the point under the cursor.
    pub probe: Option<[f64; 2]>,
    pub hover: Option<[f64; 2]>,
    /// Colour range of the last drawn frame (for the colour bar).
    pub shown_range: [f32; 2],
    pub requests: Vec<Request>,
    /// Folder the case picker lists.
    pub cases_dir: PathBuf,
    /// Screenshot options: include the panels, and an explicit size for view-only shots.
    pub screenshot_with_ui: bool,
    pub screenshot_size: Option<[u32; 2]>,
    pub export_dir: PathBuf,
    /// Whether a video is being recorded (set by the window side).
    pub recording: bool,
    pub show_help: bool,
    pub show_plots: bool,
    /// Where "Save case" writes.
    pub save_path: String,
    /// Kept states to go back to ([`Rewind`]).
    pub rewind: Rewind,
    /// Where "Save state" writes and "Open state" reads (a checkpoint file).
    pub state_path: String,
    /// The grid chosen for the CPU's speed ([`AppState::fit_grid_to_speed`]), for the panel.
    pub grid_choice: Option<GridChoice>,
    /// Whether cases opened from the panel are sized to the CPU's speed too (the app's window).
    pub fit_grid: bool,
    /// How long the window thread took to draw the last frame (set by the window side).
    pub draw_time: Duration,
    /// How a GPU solver's shown fields last reached the view (set by the window side; `None`
    /// for a CPU solver).
    pub fields_through: Option<String>,
    /// Names the solver's state apart from its step count: a new value whenever the state
    /// changes otherwise than by stepping (a new case or state, reset, a new grid or method,
    /// going back, a live setting), so that a view can tell whether what it shows is current.
    pub revision: u64,
}

/// A revision no state has had ([`AppState::revision`]).
fn next_revision() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl AppState {
    /// Builds the solver of `case`.
    pub fn new(case: Case) -> Result<AppState, String> {
        let solver = solver::build(&case.spec).map_err(|e| format!("{}: {}", e.key, e.message))?;
        // The signed vorticity normal to the view: 2D's, or 3D's z component on the mid-plane.
        let field = if let Some(w) = ["vorticity_z", "vorticity"]
            .into_iter()
            .find(|f| solver.field_names().contains(f))
        {
            w
        } else if solver.field_names().contains(&"rho") {
            "rho"
        } else {
            solver.field_names().first().copied().unwrap_or("u")
        };
        let has = |f: &str| solver.field_names().contains(&f);
        let mut view = if solver.info().grid.dim == 3 && has("speed") {
            // The 3D view: the mid-plane coloured by speed with its contours, and the vortex
            // cores as an isosurface of the Q-criterion.
            let mut v = ViewSettings::for_field("speed");
            v.contours.enabled = true;
            v.view3d = View3d::opening(
                ["q_criterion", "vorticity_magnitude"]
                    .into_iter()
                    .find(|f| has(f)),
            );
            v
        } else {
            ViewSettings::for_field(field)
        };
        if has("stream_function") {
            view.contours.field = Some("stream_function".into());
        }
        let save_path = match &case.path {
            Some(p) => p.with_extension("saved.toml").display().to_string(),
            None => "case.toml".into(),
        };
        // Beside the case file, where the case picker lists it.
        let state_path = match &case.path {
            Some(p) => p.with_extension("flowlab").display().to_string(),
            None => "state.flowlab".into(),
        };
        let steady = case.spec.solver.method.is_some_and(Method::steady);
        let rewind = Rewind::new(
            Rewind::interval_for(steady, case.spec.stop.t_end),
            DEFAULT_BUDGET_MB,
        );
        let mut s = AppState {
            case,
            solver,
            playing: true,
            steps_per_frame: StepsPerFrame::Auto {
                budget: Duration::from_millis(20),
            },
            view,
            pending: Vec::new(),
            message: None,
            failure: None,
            history: Vec::new(),
            history_stride: 1,
            xt: XtHistory::default(),
            xt_stride: 1,
            perf: Perf::default(),
            probe: None,
            hover: None,
            shown_range: [0.0, 1.0],
            requests: Vec::new(),
            cases_dir: PathBuf::from("cases"),
            screenshot_with_ui: true,
            screenshot_size: None,
            export_dir: PathBuf::from("flowlab-export"),
            recording: false,
            show_help: false,
            show_plots: true,
            save_path,
            rewind,
            state_path,
            grid_choice: None,
            fit_grid: false,
            draw_time: Duration::ZERO,
            fields_through: None,
            revision: next_revision(),
        };
        s.record();
        s.keep_state();
        Ok(s)
    }

    /// Opens a saved state (a checkpoint file: the case and the complete solver state, from
    /// "Save state" or `flowlab run --checkpoint-every`), with `sets` applied to its case; the
    /// run continues where it was saved.
    pub fn open_state(path: &Path, sets: &[String]) -> Result<AppState, String> {
        let (text, saved) = read_checkpoint(path)?;
        let mut case =
            Case::parse(&text, &format!("{} (its saved case)", path.display())).map_err(|e| e.to_string())?;
        for s in sets {
            case.set_assignment(s).map_err(|e| e.to_string())?;
        }
        let mut s = AppState::new(case)?;
        s.solver
            .restore(&saved)
            .map_err(|e| format!("{}: {}: {}", path.display(), e.key, e.message))?;
        s.history.clear();
        s.rewind.clear();
        s.record();
        s.keep_state();
        s.state_path = path.display().to_string();
        s.revision = next_revision();
        Ok(s)
    }

    /// Writes the case and the complete solver state to `state_path` (atomically).
    pub fn save_state(&mut self) -> Result<PathBuf, String> {
        let path = PathBuf::from(&self.state_path);
        let saved = self.solver.snapshot().map_err(|e| e.to_string())?;
        write_checkpoint(&path, &self.case.to_toml(), &saved)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    }

    /// Whether the case's method is steady (SIMPLE family): its rewind counts iterations.
    fn steady(&self) -> bool {
        self.case.spec.solver.method.is_some_and(Method::steady)
    }

    /// Offers the current state to the rewind ring.
    fn keep_state(&mut self) {
        let steady = self.steady();
        self.rewind.after_steps(self.solver.as_ref(), steady);
    }

    /// Goes back to kept state `k` ([`Rewind::go_back`]): paused there, the histories cut
    /// back to it, a failure after it forgotten.
    pub fn go_back(&mut self, k: usize) -> Result<(), String> {
        let steady = self.steady();
        let result = self.rewind.go_back(k, self.solver.as_mut(), steady);
        if let Err(e) = &result {
            self.message = Some(e.clone());
            return result;
        }
        self.revision = next_revision();
        let (step, time) = (self.solver.steps(), self.solver.time());
        self.history.retain(|(s, _, _)| *s <= step);
        let rows = self.xt.times.iter().take_while(|t| **t <= time).count();
        self.xt.times.truncate(rows);
        self.xt.rows.truncate(rows * self.xt.nx);
        self.playing = false;
        self.failure = None;
        self.message = Some(format!("back at step {step}, t = {time:.5}"));
        Ok(())
    }

    /// Loads and opens another case file, or a saved state (`.flowlab`).
    pub fn open(&mut self, path: &Path) -> Result<(), String> {
        let saved_state = path.extension().is_some_and(|x| x == "flowlab");
        let mut next = if saved_state {
            AppState::open_state(path, &[])?
        } else {
            AppState::new(Case::load(path).map_err(|e| e.to_string())?)?
        };
        next.cases_dir.clone_from(&self.cases_dir);
        next.export_dir.clone_from(&self.export_dir);
        next.steps_per_frame = self.steps_per_frame;
        // A saved state runs on its own grid.
        if self.fit_grid && !saved_state {
            next.fit_grid_to_speed();
        }
        *self = next;
        Ok(())
    }

    /// Applies a live setting: [`Case::set`] validates it, then the solver takes the new spec.
    /// On any error nothing changes and the reason is returned (and kept in `message`).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let before = self.case.clone();
        let result = self
            .case
            .set(key, value)
            .map_err(|e| e.to_string())
            .and_then(|()| {
                self.solver
                    .update(&self.case.spec)
                    .map_err(|e| format!("{}: {}", e.key, e.message))
            });
        if let Err(e) = &result {
            self.case = before;
            self.message = Some(e.clone());
        } else {
            // Fields derived from the settings (a viscosity, an exact solution) change.
            self.revision = next_revision();
            self.message = None;
        }
        result
    }

    /// Queues a setting that needs a new solver (grid, precision); validated now, applied by
    /// [`AppState::reset`].
    pub fn set_on_reset(&mut self, key: &str, value: &str) -> Result<(), String> {
        let mut probe = self.case.clone();
        for (k, v) in &self.pending {
            probe.set(k, v).map_err(|e| e.to_string())?;
        }
        if let Err(e) = probe.set(key, value) {
            self.message = Some(e.to_string());
            return Err(e.to_string());
        }
        self.pending.retain(|(k, _)| k != key);
        self.pending.push((key.to_string(), value.to_string()));
        self.message = None;
        Ok(())
    }

    /// The value a reset-only setting will have (pending or current).
    pub fn pending_value(&self, key: &str) -> Option<&str> {
        self.pending
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Rebuilds the solver from the case (with the pending settings) at its initial state.
    pub fn reset(&mut self) -> Result<(), String> {
        let mut case = self.case.clone();
        for (k, v) in &self.pending {
            case.set(k, v).map_err(|e| e.to_string())?;
        }
        let solver = solver::build(&case.spec).map_err(|e| format!("{}: {}", e.key, e.message))?;
        self.case = case;
        self.solver = solver;
        self.revision = next_revision();
        self.pending.clear();
        self.failure = None;
        self.message = None;
        self.history.clear();
        self.history_stride = 1;
        self.xt = XtHistory::default();
        self.xt_stride = 1;
        self.record();
        self.rewind.clear();
        self.keep_state();
        Ok(())
    }

    /// Rebuilds the solver with the pending settings (grid, precision, method, backend) and
    /// carries the current flow over to it ([`Solver::load_state`]): time, step count and the
    /// histories go on. Not possible after a failure (the state is not worth keeping).
    pub fn apply_pending(&mut self) -> Result<(), String> {
        let result = (|| {
            if let Some(f) = &self.failure {
                return Err(format!("the run stopped ({f}); use Reset"));
            }
            let mut case = self.case.clone();
            for (k, v) in &self.pending {
                case.set(k, v).map_err(|e| e.to_string())?;
            }
            let invalid = |e: crate::case::Invalid| format!("{}: {}", e.key, e.message);
            let mut solver = solver::build(&case.spec).map_err(invalid)?;
            solver.load_state(self.solver.as_ref()).map_err(invalid)?;
            Ok((case, solver))
        })();
        match result {
            Ok((case, solver)) => {
                if solver.info().grid.n != self.solver.info().grid.n {
                    self.xt = XtHistory::default();
                    self.xt_stride = 1;
                }
                self.case = case;
                self.solver = solver;
                self.revision = next_revision();
                self.pending.clear();
                self.message = None;
                self.record();
                // Saved states of the old grid, precision or method do not fit the new solver.
                self.rewind.clear();
                self.keep_state();
                Ok(())
            }
            Err(e) => {
                self.message = Some(e.clone());
                Err(e)
            }
        }
    }

    /// Advances one frame's worth of steps if playing (see [`StepsPerFrame`]).
    pub fn advance_frame(&mut self) {
        if !self.playing || self.failure.is_some() {
            self.perf.frame_steps = 0;
            return;
        }
        let start = Instant::now();
        let first = self.solver.steps();
        match self.steps_per_frame {
            StepsPerFrame::Fixed(k) => {
                self.advance_batch(k as u64);
            }
            StepsPerFrame::Auto { budget } => {
                let budget = budget.max(self.draw_time.min(MAX_STEP_BUDGET));
                // Batches sized by the measured rate, so a GPU solver that batches
                // (`Solver::advance`) runs most of the budget without host round trips.
                // One reading of the clock per batch: between two readings the budget may run
                // out (a GPU batch can end just past it).
                loop {
                    let left = budget.saturating_sub(start.elapsed());
                    if left.is_zero() {
                        break;
                    }
                    let k = (0.5 * left.as_secs_f64() * self.perf.steps_per_second).clamp(1.0, 256.0) as u64;
                    if !self.advance_batch(k) {
                        break;
                    }
                }
            }
        }
        self.note_rate(self.solver.steps() - first, start.elapsed());
        self.keep_state();
    }

    /// Up to `k` steps as one [`crate::solver::Solver::advance`] batch (the residual history
    /// records the batch's last step). One at a time in 1D, where the x-t diagram takes a row
    /// per step, and near `stop.t_end` (within one and a half batches at the current dt), to
    /// stop on the first step that reaches it. Returns false once stopped (end time or failure).
    fn advance_batch(&mut self, k: u64) -> bool {
        let one_d = self.solver.info().grid.dim == 1;
        let near_end = self
            .case
            .spec
            .stop
            .t_end
            .is_some_and(|t| self.solver.time() + 1.5 * k as f64 * self.solver.dt() >= t);
        if k <= 1 || one_d || near_end || self.solver.dt() == 0.0 {
            return (0..k).all(|_| self.step_once());
        }
        let result = self.solver.advance(k);
        self.settle(result)
    }

    /// Announces the fields the view shows to the solver ([`crate::solver::Solver::prefetch`]),
    /// so a GPU solver derives them and starts copying them back now, while the window thread
    /// takes over; the next [`view::gather`] draws them once copied, and the state before
    /// while the copy is under way.
    pub fn prefetch_shown(&self) {
        self.solver.prefetch(&self.view.shown_fields());
    }

    /// One step (the "single step" button); returns false if the solver failed.
    pub fn single_step(&mut self) -> bool {
        if self.failure.is_some() {
            return false;
        }
        let start = Instant::now();
        let ok = self.step_once();
        self.note_rate(1, start.elapsed());
        self.keep_state();
        ok
    }

    fn step_once(&mut self) -> bool {
        let result = self.solver.step();
        self.settle(result)
    }

    /// Records the state after a step or batch; pauses at `stop.t_end` or on a failure.
    fn settle(&mut self, result: Result<(), crate::solver::SolverError>) -> bool {
        match result {
            Ok(()) => {
                self.record();
                if let Some(t) = self.case.spec.stop.t_end.filter(|t| self.solver.time() >= *t) {
                    self.playing = false;
                    self.message = Some(format!("reached stop.t_end = {t}"));
                    return false;
                }
                true
            }
            Err(e) => {
                self.playing = false;
                self.failure = Some(e.to_string());
                false
            }
        }
    }

    fn note_rate(&mut self, steps: u64, took: Duration) {
        self.perf.frame_steps = steps;
        if steps == 0 || took.is_zero() {
            return;
        }
        let rate = steps as f64 / took.as_secs_f64();
        let cells = self.solver.info().grid.cells() as f64;
        let a = 0.2;
        let p = &mut self.perf;
        p.steps_per_second = if p.steps_per_second == 0.0 {
            rate
        } else {
            (1.0 - a) * p.steps_per_second + a * rate
        };
        p.cell_updates_per_second = p.steps_per_second * cells;
    }

    /// Appends the current residuals (and, for 1D cases, a density row) to the histories.
    fn record(&mut self) {
        let step = self.solver.steps();
        if step % self.history_stride == 0 {
            self.history
                .push((step, self.solver.time(), self.solver.residuals().to_vec()));
            if self.history.len() >= HISTORY {
                self.history = self.history.iter().step_by(2).cloned().collect();
                self.history_stride *= 2;
            }
        }
        if self.solver.info().grid.dim == 1 && step % self.xt_stride == 0 {
            let mut rho = Vec::new();
            let name = if self.solver.field_names().contains(&"rho") {
                "rho"
            } else {
                self.solver.field_names()[0]
            };
            if self.solver.field(name, &mut rho).is_some() {
                self.xt.nx = rho.len();
                self.xt.rows.extend(rho.iter().map(|&v| v as f32));
                self.xt.times.push(self.solver.time());
                if self.xt.times.len() >= XT_ROWS {
                    let nx = self.xt.nx;
                    let rows: Vec<f32> = self.xt.rows.chunks(nx).step_by(2).flatten().copied().collect();
                    self.xt.rows = rows;
                    self.xt.times = self.xt.times.iter().step_by(2).copied().collect();
                    self.xt_stride *= 2;
                }
            }
        }
    }

    /// Whether the case is a 2D lid-driven cavity (walls all round, only the top one moving).
    pub fn is_cavity(&self) -> bool {
        use crate::case::Boundary;
        let b = &self.case.spec.boundary;
        let still =
            |s: &Option<Boundary>| matches!(s, Some(Boundary::Wall { velocity }) if velocity.speed() == 0.0);
        self.case.spec.case.kind == Kind::Incompressible
            && self.case.spec.case.dim == 2
            && still(&b.left)
            && still(&b.right)
            && still(&b.bottom)
            && matches!(&b.top, Some(Boundary::Wall { velocity }) if velocity.speed() != 0.0)
    }

    /// The case files (`.toml`) and saved states (`.flowlab`) in the case folder, sorted.
    pub fn case_files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&self.cases_dir)
            .map(|d| {
                d.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "toml" || x == "flowlab"))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        files
    }

    /// Writes the case with every changed setting to `save_path`.
    pub fn save_case(&mut self) -> Result<PathBuf, String> {
        let path = PathBuf::from(&self.save_path);
        std::fs::write(&path, self.case.to_toml())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    }

    /// Writes the current state's fields as VTK image data into the export folder.
    pub fn export_vti(&mut self) -> Result<PathBuf, String> {
        std::fs::create_dir_all(&self.export_dir)
            .map_err(|e| format!("cannot create {}: {e}", self.export_dir.display()))?;
        let name = format!("{}_step{:08}.vti", self.case.spec.case.name, self.solver.steps());
        let path = self.export_dir.join(name);
        crate::export::vti::write_fields(self.solver.as_ref(), &path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    }

    /// Values of every field at a point (probe; in 3D on the shown mid-plane z slice).
    pub fn probe_values(&self, p: [f64; 2]) -> Vec<(&'static str, f64)> {
        let point = self.grid_point(p);
        self.solver
            .field_names()
            .iter()
            .filter_map(|&n| self.solver.sample(n, point).map(|v| (n, v)))
            .collect()
    }

    /// The point of the grid that the point `p` of the field view shows: in 3D, on the view's
    /// slice (`p` along its plane axes).
    pub fn grid_point(&self, p: [f64; 2]) -> [f64; 3] {
        let g = self.solver.info().grid;
        if g.dim < 3 {
            return [p[0], p[1], 0.0];
        }
        let s = self.view.slice;
        let mut point = [0.0; 3];
        let [a, b] = s.plane_axes();
        (point[a], point[b]) = (p[0], p[1]);
        point[s.axis] = s.coordinate(g.origin[s.axis], g.extent(s.axis));
        point
    }

    /// A point as text: `x = ..` for 1D cases (the x-t view's vertical axis is time), `(x, y)`
    /// in 2D, the point of the slice `(x, y, z)` in 3D.
    pub fn point_label(&self, p: [f64; 2]) -> String {
        match self.solver.info().grid.dim {
            1 => format!("x = {:.4}", p[0]),
            2 => format!("({:.4}, {:.4})", p[0], p[1]),
            _ => {
                let [x, y, z] = self.grid_point(p);
                format!("({x:.4}, {y:.4}, {z:.4})")
            }
        }
    }

    /// The point `p` of the field view lies in the domain.
    pub fn in_domain(&self, p: [f64; 2]) -> bool {
        let g = self.solver.info().grid;
        let q = self.grid_point(p);
        (0..g.dim).all(|a| q[a] >= g.origin[a] && q[a] <= g.origin[a] + g.extent(a))
    }

    /// The slabs of a decomposed run along the grid's last axis (y in 2D, z in 3D), in world
    /// coordinates of that axis: for each slab `[own start, own end, extended start, extended
    /// end]`; empty when not decomposed. A grid cut over several GPUs
    /// ([`crate::solver::Solver::subdomains`]) extends each slab by the layers it stores beyond
    /// its own ([`crate::parallel::EXTENSION`]); the overlapping Schwarz slabs of a SIMPLE-family
    /// run cover the pressure cells' layers (`crate::solver::linear::schwarz::strip_rows`).
    pub fn subdomain_strips(&self) -> Vec<[f64; 4]> {
        let g = self.solver.info().grid;
        let last = g.dim - 1;
        let at = |j: usize| g.origin[last] + j as f64 * g.spacing[last];
        let parts = self.solver.subdomains();
        if !parts.is_empty() {
            let reach = crate::parallel::EXTENSION;
            return parts
                .iter()
                .map(|p| {
                    let (a, b) = (p.layers.start, p.layers.end);
                    [
                        at(a),
                        at(b),
                        at(a.saturating_sub(reach)),
                        at((b + reach).min(g.n[last])),
                    ]
                })
                .collect();
        }
        let s = &self.case.spec.solver;
        if !s.method.is_some_and(Method::steady) {
            return Vec::new();
        }
        let ls = s.linear_solver.clone().unwrap_or_default();
        let (n, k) = (ls.subdomains.unwrap_or(1), ls.overlap.unwrap_or(2));
        let layers = g.n[last];
        if n < 2 || layers / n <= k {
            return Vec::new();
        }
        (0..n)
            .map(|i| {
                let (own, ext) = strip_rows(i, n, layers, k);
                [at(own.start), at(own.end), at(ext.start), at(ext.end)]
            })
            .collect()
    }

    /// What the slabs of [`AppState::subdomain_strips`] are, for their labels.
    pub fn subdomain_kind(&self) -> String {
        let parts = self.solver.subdomains();
        if parts.is_empty() {
            return "Schwarz slabs".into();
        }
        let on: Vec<String> = parts
            .iter()
            .map(|p| p.device.map_or("CPU".into(), |d| d.to_string()))
            .collect();
        format!("slabs on GPUs {}", on.join(", "))
    }

    /// Switches the shown field and picks the colormap that suits it.
    pub fn show_field(&mut self, field: &str) {
        self.view.field = field.to_string();
        self.view.colormap = view::default_colormap(field);
        if !matches!(self.view.range, view::Range::Fixed { .. }) {
            self.view.range = view::default_range(field);
        }
    }
}
