//! Resolved settings of an incompressible case: defaults filled in, every value checked.

use super::analytic::Analytic;
use super::pressure_poisson::{FaceBc, Laplacian, PoissonSettings, spectral};
use super::rotor_source::RotorSetup;
use super::staggered::Layout;
use crate::case::{
    Boundary, CaseSpec, Convection, Initial, Invalid, Method, Precision, PressureSolverKind, Side,
    TimeIntegrator, validate::positive,
};
use crate::solver::limiter::Limiter;
use crate::solver::real::Real;
use crate::solver::{Grid, SolverError};

/// Growth beyond this multiple of the velocity scale counts as divergence.
pub const BLOW_UP_FACTOR: f64 = 100.0;

/// The smallest pressure tolerance an f32 run can reach (measured floors of 5e-6 to 2.5e-5 for
/// the pressure solvers, see their tests).
pub const F32_MIN_TOLERANCE: f64 = 1e-5;

/// Everything the projection solver needs from a case.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub grid: Grid,
    /// Kinematic viscosity `nu = 1 / Re` (or `physics.viscosity`).
    pub nu: f64,
    pub density: f64,
    /// Boundary conditions `bc[axis][side]` ([`Flow::bc`]).
    pub bc: Vec<[Boundary; 2]>,
    /// Initial velocity (zero beyond the case's dimensions).
    pub initial_velocity: [f64; 3],
    /// The analytic initial state (replacing `initial_velocity`) and, for an exact solution,
    /// the velocity of `exact` sides.
    pub analytic: Option<Analytic>,
    pub precision: Precision,
    pub cfl: f64,
    pub integrator: TimeIntegrator,
    pub convection: Convection,
    pub limiter: Limiter,
    pub poisson: PoissonSettings,
    /// The rotor whose loads enter the momentum equations (`[rotor]`).
    pub rotor: Option<RotorSetup>,
}

/// The settings every incompressible method reads the same way: grid, viscosity, density,
/// boundaries and the initial velocity.
#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    pub grid: Grid,
    /// Kinematic viscosity `1 / re` or `physics.viscosity`; `None` when neither is given (a
    /// `[fluid]` model then sets the viscosity).
    pub nu: Option<f64>,
    pub density: f64,
    /// Boundary conditions `bc[axis][side]`, one pair per dimension: left/right, bottom/top,
    /// front/back.
    pub bc: Vec<[Boundary; 2]>,
    /// Initial velocity (zero beyond the case's dimensions).
    pub initial_velocity: [f64; 3],
    /// The analytic initial state (replacing `initial_velocity`) and, for an exact solution,
    /// the velocity of `exact` sides.
    pub analytic: Option<Analytic>,
}

impl Flow {
    /// The flow of a 2D or 3D case.
    pub fn from_spec(spec: &CaseSpec) -> Result<Flow, Invalid> {
        let dim = spec.case.dim as usize;
        if !(2..=3).contains(&dim) {
            return Err(Invalid::new(
                "case.dim",
                format!("incompressible cases are 2D or 3D (dim = 2 or 3), got {dim}"),
            ));
        }
        let s = &spec.solver;
        let compressible_only = [
            ("solver.riemann", s.riemann.is_some()),
            ("solver.alpha", s.alpha.is_some()),
            (
                "solver.characteristic_limiting",
                s.characteristic_limiting.is_some(),
            ),
            ("grid.solid", !spec.grid.solid.is_empty()),
        ];
        if let Some((key, _)) = compressible_only.iter().find(|(_, given)| *given) {
            return Err(Invalid::new(*key, "applies to compressible cases only"));
        }
        let ph = &spec.physics;
        let nu = match (ph.re, ph.viscosity) {
            (Some(re), None) => {
                positive("physics.re", re)?;
                if !(1.0 / re).is_normal() {
                    return Err(Invalid::new(
                        "physics.re",
                        format!("1 / re must be a normal number (a viscosity), got re = {re}"),
                    ));
                }
                Some(1.0 / re)
            }
            (None, Some(nu)) => {
                positive("physics.viscosity", nu)?;
                Some(nu)
            }
            (Some(_), Some(_)) => {
                return Err(Invalid::new(
                    "physics.viscosity",
                    "give either physics.re or physics.viscosity, not both",
                ));
            }
            (None, None) => None,
        };
        let density = ph.density.unwrap_or(1.0);
        positive("physics.density", density)?;
        if ph.gamma.is_some() {
            return Err(Invalid::new(
                "physics.gamma",
                "applies to compressible cases only",
            ));
        }
        let side = |side: Side| -> Result<Boundary, Invalid> {
            let b = spec
                .boundary
                .get(side)
                .cloned()
                .expect("checked by the case validation");
            if let Boundary::Inflow {
                density, pressure, ..
            } = &b
            {
                let key = format!("boundary.{}", side.name());
                if density.is_some() {
                    return Err(Invalid::new(
                        format!("{key}.density"),
                        "applies to compressible inflow only",
                    ));
                }
                if pressure.is_some() {
                    return Err(Invalid::new(
                        format!("{key}.pressure"),
                        "applies to compressible inflow only",
                    ));
                }
            }
            Ok(b)
        };
        let bc = (0..dim)
            .map(|a| Ok([side(Side::ALL[2 * a])?, side(Side::ALL[2 * a + 1])?]))
            .collect::<Result<Vec<_>, Invalid>>()?;
        let mut initial_velocity = [0.0; 3];
        match &spec.initial {
            Initial::Rest {} => {}
            Initial::Uniform { velocity }
                if velocity.len() == dim && velocity.iter().all(|v| v.is_finite()) =>
            {
                initial_velocity[..dim].copy_from_slice(velocity);
            }
            Initial::Uniform { velocity } => {
                return Err(Invalid::new(
                    "initial.velocity",
                    format!("needs {dim} finite components, got {velocity:?}"),
                ));
            }
            Initial::EthierSteinman { a, d } => {
                if dim != 3 || ![a, d].iter().all(|x| x.is_finite()) {
                    return Err(Invalid::new(
                        "initial.type",
                        format!(
                            "ethier_steinman is a 3D solution with finite a and d, got dim = {dim}, a = {a}, d = {d}"
                        ),
                    ));
                }
            }
            Initial::TaylorGreen { velocity } => {
                if !velocity.is_finite() || bc.iter().flatten().any(|b| *b != Boundary::Periodic {}) {
                    return Err(Invalid::new(
                        "initial.velocity",
                        "taylor_green needs a finite velocity and every side periodic",
                    ));
                }
            }
            other => {
                return Err(Invalid::new(
                    "initial.type",
                    format!(
                        "{} is a compressible initial state; use \"rest\", \"uniform\", \"taylor_green\" or \"ethier_steinman\"",
                        other.type_name()
                    ),
                ));
            }
        };
        let grid = Grid::from_spec(dim, &spec.grid);
        let analytic = Analytic::of(&spec.initial, &grid, nu.unwrap_or(0.0));
        if let Some(side) = Side::ALL[..2 * dim]
            .iter()
            .find(|s| *spec.boundary.get(**s).expect("checked") == Boundary::Exact {})
            && !analytic.is_some_and(|a| a.is_solution())
        {
            return Err(Invalid::new(
                format!("boundary.{}.type", side.name()),
                "exact takes the velocity of the case's exact solution: it needs [initial] type = \"ethier_steinman\"",
            ));
        }
        Ok(Flow {
            grid,
            nu,
            density,
            bc,
            initial_velocity,
            analytic,
        })
    }

    /// Velocity scale of the problem: the largest wall, inflow or initial speed (1 if all are 0).
    pub fn velocity_scale(&self) -> f64 {
        velocity_scale(&self.bc, self.initial_velocity, self.analytic, &self.grid)
    }

    /// The condition of side `s` in [`Side::ALL`] order (left, right, bottom, top, front, back).
    pub fn side(&self, s: usize) -> &Boundary {
        &self.bc[s / 2][s % 2]
    }
}

/// The pressure condition a side implies: a held pressure at an outflow or opening face (0, or
/// an opening's `-u_n^2 / 2` where the fluid enters, which the projection adds to the Poisson
/// right-hand side), the periodic image on a periodic side, `dp/dn = 0` on walls and inflows.
pub fn pressure_bc(b: &Boundary) -> FaceBc {
    match b {
        Boundary::Outflow {} | Boundary::Opening {} => FaceBc::Dirichlet,
        Boundary::Periodic {} => FaceBc::Periodic,
        _ => FaceBc::Neumann,
    }
}

/// The pressure conditions of `D` axes' sides ([`pressure_bc`]).
pub fn pressure_sides<const D: usize>(bc: &[[Boundary; 2]]) -> [[FaceBc; 2]; D] {
    std::array::from_fn(|a| bc[a].each_ref().map(pressure_bc))
}

/// The largest wall, inflow or initial speed (1 if all are 0).
fn velocity_scale(
    bc: &[[Boundary; 2]],
    initial_velocity: [f64; 3],
    analytic: Option<Analytic>,
    grid: &Grid,
) -> f64 {
    let mut u = initial_velocity.iter().fold(0.0, |m: f64, x| m.hypot(*x));
    if let Some(a) = analytic {
        u = u.max(a.speed_bound(grid));
    }
    for b in bc.iter().flatten() {
        match b {
            Boundary::Wall { velocity } => u = u.max(velocity.speed()),
            Boundary::Inflow { velocity, .. } => {
                u = u.max(velocity.iter().fold(0.0, |m: f64, x| m.hypot(*x)))
            }
            _ => {}
        }
    }
    if u > 0.0 { u } else { 1.0 }
}

impl Config {
    pub fn from_spec(spec: &CaseSpec) -> Result<Config, Invalid> {
        let s = &spec.solver;
        match s.method.unwrap_or(Method::Projection) {
            Method::Projection => {}
            m => {
                return Err(Invalid::new(
                    "solver.method",
                    format!("{} is not the projection method", m.name()),
                ));
            }
        }
        let steady_only = "applies to solver.method = \"simple\", \"simplec\" or \"simpler\" only";
        let simple_only = [
            ("solver.alpha_u", s.alpha_u.is_some()),
            ("solver.pseudo_dt", s.pseudo_dt.is_some()),
            ("solver.alpha_p", s.alpha_p.is_some()),
            ("solver.linear_solver", s.linear_solver.is_some()),
            (
                "physics.pressure_gradient",
                spec.physics.pressure_gradient.is_some(),
            ),
            ("fluid", spec.fluid.is_some()),
            ("solver.convection", s.convection == Some(Convection::PowerLaw)),
        ];
        if let Some((key, _)) = simple_only.iter().find(|(_, given)| *given) {
            return Err(Invalid::new(*key, steady_only));
        }
        let flow = Flow::from_spec(spec)?;
        let nu = flow.nu.ok_or_else(|| {
            Invalid::new(
                "physics.re",
                "missing; give physics.re (Reynolds number) or physics.viscosity",
            )
        })?;
        let Flow {
            grid,
            density,
            bc,
            initial_velocity,
            analytic,
            ..
        } = flow;
        let cfl = s.cfl.unwrap_or(0.5);
        if cfl > 1.0 {
            return Err(Invalid::new(
                "solver.cfl",
                format!("explicit time stepping is stable for cfl <= 1 only, got {cfl}"),
            ));
        }
        let kind = s.pressure_solver.unwrap_or(PressureSolverKind::Multigrid);
        if let Some(w) = s.sor_omega {
            if !(w > 0.0 && w < 2.0) {
                return Err(Invalid::new(
                    "solver.sor_omega",
                    format!("must lie in (0, 2), got {w}"),
                ));
            }
        }
        let precision = s.precision.unwrap_or(Precision::F64);
        // Single precision cannot reach residuals much below 1e-5 (see the pressure solver tests).
        let default_tol = match precision {
            Precision::F64 => 1e-6,
            Precision::F32 => 1e-4,
        };
        if let (Precision::F32, Some(tol)) = (precision, s.tolerance) {
            if tol < F32_MIN_TOLERANCE {
                return Err(Invalid::new(
                    "solver.tolerance",
                    format!(
                        "{tol:e} is below what single precision reaches (>= {F32_MIN_TOLERANCE:e}); \
                         raise it or use precision = \"f64\""
                    ),
                ));
            }
        }
        let rotor = RotorSetup::from_spec(spec, &grid, density)?;
        if kind == PressureSolverKind::Fft {
            for (a, sides) in bc.iter().enumerate() {
                spectral::check_axis(sides.each_ref().map(pressure_bc), a)
                    .map_err(|e| Invalid::new("solver.pressure_solver", e))?;
            }
        }
        Ok(Config {
            grid,
            nu,
            density,
            bc,
            initial_velocity,
            analytic,
            precision,
            cfl,
            integrator: s.time_integrator.unwrap_or(TimeIntegrator::Euler),
            convection: s.convection.unwrap_or(Convection::Central),
            limiter: s.limiter.unwrap_or(Limiter::VanLeer),
            poisson: PoissonSettings {
                kind,
                tolerance: s.tolerance.unwrap_or(default_tol),
                max_iterations: s.max_iterations.unwrap_or(20_000),
                sor_omega: s.sor_omega,
            },
            rotor,
        })
    }

    /// Velocity scale of the problem: the largest wall, inflow or initial speed (1 if all are 0).
    pub fn velocity_scale(&self) -> f64 {
        velocity_scale(&self.bc, self.initial_velocity, self.analytic, &self.grid)
    }

    /// The staggered layout of this `D`-dimensional grid and its sides ([`Layout::of_grid`]).
    pub fn layout<const D: usize>(&self) -> Layout<D> {
        Layout::of_grid(&self.grid, &self.bc)
    }

    /// The pressure Poisson operator on this grid and its sides' conditions ([`pressure_bc`]).
    pub fn pressure_operator<T: Real, const D: usize>(&self) -> Laplacian<T, D> {
        Laplacian::new(
            std::array::from_fn(|a| self.grid.n[a]),
            std::array::from_fn(|a| self.grid.spacing[a]),
            pressure_sides(&self.bc),
        )
    }

    /// When the multigrid pressure solve is chosen on a grid it cannot coarsen (it merges two
    /// cells along every axis while all counts are even), a note saying so: each V-cycle is then
    /// a conjugate-gradient solve of the whole grid.
    pub fn flat_multigrid_note(&self) -> Option<String> {
        if self.poisson.kind != PressureSolverKind::Multigrid {
            return None;
        }
        fn coarsens<const D: usize>(cfg: &Config) -> bool {
            cfg.pressure_operator::<f64, D>().coarsen().is_some()
        }
        let coarsens = if self.grid.dim == 2 {
            coarsens::<2>(self)
        } else {
            coarsens::<3>(self)
        };
        let n = &self.grid.n[..self.grid.dim];
        let cells: usize = n.iter().product();
        (cells > 64 && !coarsens).then(|| {
            let sizes: Vec<String> = n.iter().map(|n| n.to_string()).collect();
            format!(
                "solver.pressure_solver = \"multigrid\" cannot coarsen the {} grid (it merges two cells along every axis while all counts are even), so each V-cycle is a conjugate-gradient solve of the whole grid; use even cell counts, or \"pcg\" or \"fft\"",
                sizes.join(" x ")
            )
        })
    }

    /// Time step (before any output-time cap): `cfl` times the smallest of the convective limits
    /// `h_a / |u_a|max` (wall speeds included), the viscous limit
    /// `c / (2 nu sum_a 1/h_a^2)` (`c = 1` Euler, `1/2` AB2) and, for the non-dissipative
    /// central and QUICK schemes, the cell-Reynolds limit `2 c nu / sum_a u_a^2`, with the
    /// largest face speed `max_speed[a]` of each component.
    pub fn time_step(&self, max_speed: &[f64]) -> f64 {
        self.step_limits().time_step(max_speed)
    }

    /// The flow-independent terms of [`Config::time_step`] (the CUDA solver's `step_dt` kernel
    /// evaluates the same rule on the device).
    pub fn step_limits(&self) -> StepLimits {
        let dim = self.grid.dim;
        let h = self.grid.spacing;
        let stab = match self.integrator {
            TimeIntegrator::Euler => 1.0,
            TimeIntegrator::Ab2 => 0.5,
        };
        let inv_h2 = (1..dim).fold(1.0 / (h[0] * h[0]), |s, a| s + 1.0 / (h[a] * h[a]));
        StepLimits {
            h,
            viscous: stab / (2.0 * self.nu * inv_h2),
            wall: self.bc.iter().flatten().fold(0.0f64, |m, b| match b {
                Boundary::Wall { velocity } => m.max(velocity.speed()),
                _ => m,
            }),
            cell_reynolds: matches!(self.convection, Convection::Central | Convection::Quick)
                .then_some(stab * 2.0 * self.nu),
            cfl: self.cfl,
        }
    }

    /// The largest velocity [`Config::check_health`] accepts.
    pub fn blow_up_limit(&self) -> f64 {
        BLOW_UP_FACTOR * self.velocity_scale()
    }

    /// `Err` when the largest velocity is not finite or exceeds [`BLOW_UP_FACTOR`] times the
    /// problem's velocity scale, with the likely causes.
    pub fn check_health(&self, max_speed: &[f64], step: u64, time: f64) -> Result<(), SolverError> {
        let scale = self.velocity_scale();
        let m = max_speed
            .iter()
            .fold(f64::NEG_INFINITY, |m, &s| if s > m || s.is_nan() { s } else { m });
        if m.is_finite() && m <= self.blow_up_limit() {
            return Ok(());
        }
        let h = self.grid.spacing[..self.grid.dim]
            .iter()
            .fold(0.0f64, |m, &h| m.max(h));
        let cell_re = scale * h / self.nu;
        let what = if m.is_finite() {
            format!(
                "the largest velocity is {m:.3e}, over {BLOW_UP_FACTOR} times the problem's scale {scale}"
            )
        } else {
            "the velocity is no longer finite (NaN or infinity)".to_string()
        };
        Err(SolverError::Diverged {
            step,
            time,
            message: format!(
                "{what}. Likely causes: the CFL number is too large (cfl = {}), or the grid is \
                 too coarse for the Reynolds number (cell Reynolds number U h / nu = {cell_re:.1}; \
                 try upwind or TVD convection, a finer grid or a lower cfl)",
                self.cfl
            ),
        })
    }

    /// Settings that need a new solver when they change.
    pub fn same_layout(&self, other: &Config) -> bool {
        self.grid == other.grid
            && self.bc == other.bc
            && self.precision == other.precision
            && self.initial_velocity == other.initial_velocity
            && self.analytic == other.analytic
    }
}

/// The flow-independent terms of the projection method's time step ([`Config::time_step`]).
#[derive(Clone, Debug, PartialEq)]
pub struct StepLimits {
    /// Cell size per axis (the first `max_speed.len()` of [`StepLimits::time_step`] used).
    pub h: [f64; 3],
    /// The viscous limit `c / (2 nu sum_a 1/h_a^2)`.
    pub viscous: f64,
    /// The largest wall speed (convective speeds are at least this).
    pub wall: f64,
    /// `2 c nu` of the cell-Reynolds limit `2 c nu / sum_a u_a^2`, for central and QUICK.
    pub cell_reynolds: Option<f64>,
    pub cfl: f64,
}

impl StepLimits {
    /// `cfl` times the smallest limit, with the largest speed `max_speed[a]` of each component.
    pub fn time_step(&self, max_speed: &[f64]) -> f64 {
        let mut dt = self.viscous;
        let um = |a: usize| max_speed[a].max(self.wall);
        let axes = 1..max_speed.len();
        for a in 0..max_speed.len() {
            if um(a) > 0.0 {
                dt = dt.min(self.h[a] / um(a));
            }
        }
        if let Some(c) = self.cell_reynolds
            && axes.clone().fold(um(0), |s, a| s + um(a)) > 0.0
        {
            dt = dt.min(c / axes.fold(um(0) * um(0), |s, a| s + um(a) * um(a)));
        }
        self.cfl * dt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(sets: &[&str]) -> Config {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/cases/cavity_3d_re100.toml");
        let text = std::fs::read_to_string(path).expect("the case file");
        let mut case = crate::case::Case::parse(&text, path).expect("the case");
        for s in sets {
            case.set_assignment(s).expect("a valid setting");
        }
        Config::from_spec(&case.spec).expect("a valid case")
    }

    /// Multigrid on a grid it cannot coarsen is named (each V-cycle would be a CG solve of the
    /// whole grid, 0.74 s a step at 93 x 66 x 93 on an H100); an even grid or another solver
    /// is not.
    #[test]
    fn multigrid_on_a_grid_it_cannot_coarsen_is_noted() {
        let odd = [
            "grid.nx=93",
            "grid.ny=66",
            "grid.nz=93",
            "solver.pressure_solver=\"multigrid\"",
        ];
        let note = config(&odd).flat_multigrid_note().expect("a note");
        assert!(note.contains("93 x 66 x 93"), "{note}");
        let even = [
            "grid.nx=96",
            "grid.ny=64",
            "grid.nz=96",
            "solver.pressure_solver=\"multigrid\"",
        ];
        assert_eq!(config(&even).flat_multigrid_note(), None);
        let pcg = [
            "grid.nx=93",
            "grid.ny=66",
            "grid.nz=93",
            "solver.pressure_solver=\"pcg\"",
        ];
        assert_eq!(config(&pcg).flat_multigrid_note(), None);
    }
}
