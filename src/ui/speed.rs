//! The grid the app shows a case on, sized to the backend's measured speed. On the CPU, a case
//! whose flow would take more than [`DEVELOP_SECONDS`] of wall time to develop in the window
//! (one pass of the flow over the domain, [`development_steps`]) runs on a coarser grid: each
//! axis halved (to an even count) until it is fast enough, never below [`MIN_CELLS`] cells. The panel says what was
//! chosen and offers the case's grid back ([`AppState::use_case_grid`]). A GPU solver runs the
//! case's grid as it is.

use super::state::AppState;
use crate::backend::cpu::on_global_pool;
use crate::case::{Case, CaseSpec, Kind, Method};
use crate::solver::{self, Solver, compressible, incompressible};
use std::time::{Duration, Instant};

/// Wall seconds within which a case opened in the app should visibly develop.
pub const DEVELOP_SECONDS: f64 = 10.0;
/// The coarsest grid the choice goes to, in cells along each axis.
pub const MIN_CELLS: usize = 32;
/// The share of wall time the app steps the solver: the rest of each frame draws it (on a CPU
/// without a GPU the drawing, Mesa's llvmpipe, shares the same cores).
pub const STEPPING_SHARE: f64 = 0.5;
/// Wall time spent timing one grid's steps, after an untimed first step.
const MEASURE: Duration = Duration::from_millis(300);

/// What the app chose for the speed of the backend, shown in the panel.
#[derive(Clone, Debug, PartialEq)]
pub struct GridChoice {
    /// What was measured, e.g. "CPU, 2 threads".
    pub backend: String,
    /// The case's grid and the grid chosen (cells along each axis, 1 beyond the case's
    /// dimensions; equal when kept).
    pub case_grid: [usize; 3],
    pub grid: [usize; 3],
    /// Estimated wall seconds for the flow to develop in the app on the case's grid and on the
    /// chosen one.
    pub case_seconds: f64,
    pub seconds: f64,
}

impl GridChoice {
    pub fn coarsened(&self) -> bool {
        self.grid != self.case_grid
    }

    /// The panel's line.
    pub fn describe(&self) -> String {
        let (grid, case) = (cells(self.grid), cells(self.case_grid));
        if self.coarsened() {
            format!(
                "{}: grid {grid} chosen for speed (the case asks {case}, where the flow \
                 would take ~{:.0} s to develop; here ~{:.0} s)",
                self.backend, self.case_seconds, self.seconds
            )
        } else {
            format!(
                "{}: the case's grid {case} develops in ~{:.0} s",
                self.backend, self.case_seconds
            )
        }
    }
}

/// `64x64` (2D) or `64x64x64` (3D): the cells along each axis of a grid with more than one.
pub fn cells(grid: [usize; 3]) -> String {
    let axes: Vec<String> = grid
        .iter()
        .enumerate()
        .filter(|(a, n)| *a < 2 || **n > 1)
        .map(|(_, n)| n.to_string())
        .collect();
    axes.join("x")
}

/// The grid to show: starting from `case_grid`, halves every axis of `dim` while `seconds_at`
/// (the estimated wall seconds to develop on a grid; `None` if it cannot be measured) exceeds
/// [`DEVELOP_SECONDS`] and each axis stays even and at least [`MIN_CELLS`]. Returns the grid and
/// the estimates on the case's grid and on it; `None` if the case's grid cannot be measured.
pub fn choose(
    case_grid: [usize; 3],
    dim: usize,
    mut seconds_at: impl FnMut([usize; 3]) -> Option<f64>,
) -> Option<([usize; 3], f64, f64)> {
    let case_seconds = seconds_at(case_grid)?;
    let (mut grid, mut seconds) = (case_grid, case_seconds);
    while seconds > DEVELOP_SECONDS {
        if grid[..dim].iter().any(|&n| halved(n) < MIN_CELLS) {
            break;
        }
        let mut coarser = grid;
        for n in &mut coarser[..dim] {
            *n = halved(*n);
        }
        let Some(s) = seconds_at(coarser) else { break };
        (grid, seconds) = (coarser, s);
    }
    Some((grid, case_seconds, seconds))
}

/// Half of `n` cells rounded down to an even count, so that multigrid can coarsen it at least
/// once (93 -> 46, 66 -> 32, 128 -> 64).
fn halved(n: usize) -> usize {
    (n / 2) & !1
}

/// The steps `s` (a few steps in, so that its `dt` is representative) takes for its flow to
/// develop: the simulated time of one pass over the domain's largest extent, over the last
/// step's `dt`. Incompressible: at the case's velocity scale (the fastest wall, inflow or
/// initial speed). Compressible: at the fastest wave speed, which the CFL rule sets, so
/// `n / cfl` steps for `n` cells; at most until `stop.t_end`. `None` for a steady (SIMPLE
/// family) case, which has no time, or a solver that has not stepped.
pub fn development_steps(spec: &CaseSpec, s: &dyn Solver) -> Option<f64> {
    let dt = s.dt();
    if dt <= 0.0 || spec.solver.method.is_some_and(Method::steady) {
        return None;
    }
    let g = s.info().grid;
    let steps = match spec.case.kind {
        Kind::Incompressible => {
            let speed = incompressible::Config::from_spec(spec).ok()?.velocity_scale();
            let length = (0..g.dim).map(|a| g.extent(a)).fold(0.0, f64::max);
            length / speed / dt
        }
        Kind::Compressible => {
            let cells = g.n[..g.dim].iter().copied().max()? as f64;
            cells / compressible::Config::from_spec(spec).ok()?.cfl
        }
    };
    let to_end = spec.stop.t_end.map_or(f64::INFINITY, |t| (t - s.time()) / dt);
    Some(steps.min(to_end))
}

/// Estimated wall seconds for `spec`'s flow to develop in the app: its solver's steps timed for
/// [`MEASURE`] after one untimed step (on rayon's pool, as the app steps:
/// [`on_global_pool`]), times [`development_steps`], over [`STEPPING_SHARE`].
fn develop_seconds(spec: &CaseSpec) -> Option<f64> {
    on_global_pool(|| measure(spec))
}

/// [`develop_seconds`] on the calling thread.
fn measure(spec: &CaseSpec) -> Option<f64> {
    let mut s = solver::build(spec).ok()?;
    s.step().ok()?;
    let start = Instant::now();
    let mut n = 0u32;
    while n == 0 || start.elapsed() < MEASURE {
        s.step().ok()?;
        n += 1;
    }
    let per_step = start.elapsed().as_secs_f64() / f64::from(n);
    Some(development_steps(spec, s.as_ref())? * per_step / STEPPING_SHARE)
}

/// `case` with the grid `n` (along its dimensions).
fn on_grid(case: &Case, n: [usize; 3]) -> Option<Case> {
    let mut c = case.clone();
    for (key, n) in ["grid.nx", "grid.ny", "grid.nz"]
        .iter()
        .zip(n)
        .take(case.spec.case.dim as usize)
    {
        c.set(key, &n.to_string()).ok()?;
    }
    Some(c)
}

impl AppState {
    /// Sizes the grid to the CPU's measured speed ([`choose`]) and rebuilds the solver on the
    /// chosen grid (the case's `grid.nx`, `grid.ny` change, as a setting made in the panel
    /// would); records the choice in `grid_choice` for the panel. Does nothing on a GPU solver
    /// or for a steady case. Later cases opened from the panel are sized the same way.
    pub fn fit_grid_to_speed(&mut self) {
        self.fit_grid = true;
        self.grid_choice = None;
        if self.solver.info().backend != "cpu" {
            return;
        }
        let spec = &self.case.spec;
        let case_grid = [spec.grid.nx, spec.grid.ny, spec.grid.nz];
        let dim = spec.case.dim as usize;
        let measured = choose(case_grid, dim, |g| develop_seconds(&on_grid(&self.case, g)?.spec));
        let Some((grid, case_seconds, seconds)) = measured else {
            return;
        };
        let choice = GridChoice {
            backend: format!("CPU, {} threads", rayon::current_num_threads()),
            case_grid,
            grid,
            case_seconds,
            seconds,
        };
        if choice.coarsened() {
            let Some(case) = on_grid(&self.case, grid) else {
                return;
            };
            let case_before = std::mem::replace(&mut self.case, case);
            if let Err(e) = self.reset() {
                self.case = case_before;
                self.message = Some(e);
                return;
            }
        }
        log::info!("{}", choice.describe());
        self.grid_choice = Some(choice);
    }

    /// Goes back to the case's own grid after [`AppState::fit_grid_to_speed`] coarsened it,
    /// restarting the run there.
    pub fn use_case_grid(&mut self) -> Result<(), String> {
        let Some(choice) = self.grid_choice.clone() else {
            return Ok(());
        };
        let case = on_grid(&self.case, choice.case_grid).ok_or("the case's grid is not valid")?;
        let case_before = std::mem::replace(&mut self.case, case);
        if let Err(e) = self.reset() {
            self.case = case_before;
            self.message = Some(e.clone());
            return Err(e);
        }
        self.grid_choice = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_rate_halves_the_grid_until_it_is_fast_enough() {
        // 8x per halving in 2D: cells / 4 and, with a CFL-limited dt, half the steps.
        let seconds = |g: [usize; 3]| Some(20.0 * (g[0] as f64 / 128.0).powi(3));
        assert_eq!(choose([128, 128, 1], 2, seconds), Some(([64, 64, 1], 20.0, 2.5)));
        // Still slow at the coarsest grid: it stops there.
        let seconds = |g: [usize; 3]| Some(1000.0 * (g[0] as f64 / 128.0).powi(3));
        assert_eq!(
            choose([128, 128, 1], 2, seconds),
            Some(([32, 32, 1], 1000.0, 1000.0 / 64.0))
        );
    }

    #[test]
    fn a_fast_rate_keeps_the_case_grid() {
        let seconds = |_: [usize; 3]| Some(3.0);
        assert_eq!(choose([128, 128, 1], 2, seconds), Some(([128, 128, 1], 3.0, 3.0)));
    }

    #[test]
    fn the_grid_never_goes_below_the_minimum_or_to_an_odd_count() {
        let slow = |_: [usize; 3]| Some(1e6);
        assert_eq!(choose([128, 64, 1], 2, slow).unwrap().0, [64, 32, 1]);
        assert_eq!(choose([96, 96, 1], 2, slow).unwrap().0, [48, 48, 1]);
        assert_eq!(choose([100, 100, 1], 2, slow).unwrap().0, [50, 50, 1]);
        assert_eq!(choose([50, 50, 1], 2, slow).unwrap().0, [50, 50, 1]);
        // 1D: only x.
        assert_eq!(choose([1024, 1, 1], 1, slow).unwrap().0, [32, 1, 1]);
        // 3D: every axis.
        assert_eq!(choose([128, 64, 64], 3, slow).unwrap().0, [64, 32, 32]);
        // Odd counts halve to even ones (Lohry's hover grid).
        assert_eq!(choose([93, 66, 93], 3, slow).unwrap().0, [46, 32, 46]);
    }

    fn state(name: &str, sets: &[&str]) -> AppState {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("cases/{name}.toml"));
        let mut case = Case::load(&path).expect("case");
        case.set_assignment("solver.backend=\"cpu\"").unwrap();
        for s in sets {
            case.set_assignment(s).unwrap();
        }
        AppState::new(case).expect("state")
    }

    #[test]
    fn one_lid_pass_of_the_cavity_is_its_extent_over_the_lid_speed() {
        let mut s = state("lid_driven_cavity_re100", &["grid.nx=32", "grid.ny=32"]);
        s.single_step();
        let steps = development_steps(&s.case.spec, s.solver.as_ref()).unwrap();
        assert!((steps * s.solver.dt() - 1.0).abs() < 1e-12, "{steps}");
        let simple = state("lid_driven_cavity_re100_simple", &["grid.nx=16", "grid.ny=16"]);
        assert_eq!(development_steps(&simple.case.spec, simple.solver.as_ref()), None);
    }

    #[test]
    fn a_compressible_flow_develops_in_one_crossing_or_by_its_end_time() {
        let mut s = state("sod", &[]);
        s.single_step();
        let steps = development_steps(&s.case.spec, s.solver.as_ref()).unwrap();
        let n = s.solver.info().grid.n[0] as f64;
        let cfl = compressible::Config::from_spec(&s.case.spec).unwrap().cfl;
        let t_end = s.case.spec.stop.t_end.unwrap();
        let to_end = (t_end - s.solver.time()) / s.solver.dt();
        assert_eq!(steps, (n / cfl).min(to_end));
    }

    #[test]
    fn the_fit_runs_on_the_cpu_and_is_recorded() {
        // Whatever the machine's speed, the solver runs the chosen grid and the choice says so.
        let mut s = state("lid_driven_cavity_re100", &["grid.nx=64", "grid.ny=64"]);
        s.fit_grid_to_speed();
        let choice = s.grid_choice.clone().expect("measured on the CPU");
        assert_eq!(choice.case_grid, [64, 64, 1]);
        assert!(choice.case_seconds > 0.0 && choice.case_seconds.is_finite());
        assert_eq!(s.solver.info().grid.n, choice.grid);
        assert!(choice.describe().starts_with("CPU, "), "{}", choice.describe());
    }

    #[test]
    fn the_case_grid_comes_back_on_request() {
        let mut s = state("lid_driven_cavity_re100", &["grid.nx=64", "grid.ny=64"]);
        s.grid_choice = Some(GridChoice {
            backend: "CPU, 2 threads".into(),
            case_grid: [128, 128, 1],
            grid: [64, 64, 1],
            case_seconds: 80.0,
            seconds: 10.0,
        });
        s.use_case_grid().unwrap();
        assert_eq!(s.solver.info().grid.n[..2], [128, 128]);
        assert_eq!((s.case.spec.grid.nx, s.case.spec.grid.ny), (128, 128));
        assert_eq!(s.grid_choice, None);
    }
}
