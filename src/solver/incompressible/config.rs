//! Resolved settings of an incompressible case: defaults filled in, every value checked.

use super::pressure_poisson::{FaceBc, Laplacian, PoissonSettings, spectral};
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
    /// Boundary conditions, left, right, bottom, top.
    pub bc: [Boundary; 4],
    pub initial_velocity: [f64; 2],
    pub precision: Precision,
    pub cfl: f64,
    pub integrator: TimeIntegrator,
    pub convection: Convection,
    pub limiter: Limiter,
    pub poisson: PoissonSettings,
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
    /// Boundary conditions, left, right, bottom, top.
    pub bc: [Boundary; 4],
    pub initial_velocity: [f64; 2],
}

impl Flow {
    pub fn from_spec(spec: &CaseSpec) -> Result<Flow, Invalid> {
        if spec.case.dim != 2 {
            return Err(Invalid::new(
                "case.dim",
                format!("incompressible cases are 2D (dim = 2), got {}", spec.case.dim),
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
        let bc = [
            side(Side::Left)?,
            side(Side::Right)?,
            side(Side::Bottom)?,
            side(Side::Top)?,
        ];
        let initial_velocity = match &spec.initial {
            Initial::Rest {} => [0.0, 0.0],
            Initial::Uniform { velocity }
                if velocity.len() == 2 && velocity.iter().all(|v| v.is_finite()) =>
            {
                [velocity[0], velocity[1]]
            }
            Initial::Uniform { velocity } => {
                return Err(Invalid::new(
                    "initial.velocity",
                    format!("needs 2 finite components, got {velocity:?}"),
                ));
            }
            other => {
                return Err(Invalid::new(
                    "initial.type",
                    format!(
                        "{} is a compressible initial state; use \"rest\" or \"uniform\"",
                        other.type_name()
                    ),
                ));
            }
        };
        Ok(Flow {
            grid: Grid::from_spec(2, &spec.grid),
            nu,
            density,
            bc,
            initial_velocity,
        })
    }

    /// Velocity scale of the problem: the largest wall, inflow or initial speed (1 if all are 0).
    pub fn velocity_scale(&self) -> f64 {
        velocity_scale(&self.bc, self.initial_velocity)
    }
}

/// The largest wall, inflow or initial speed (1 if all are 0).
/// The pressure condition a side implies: `p = 0` at an outflow face, the periodic image on a
/// periodic side, `dp/dn = 0` on walls and inflows.
pub fn pressure_bc(b: &Boundary) -> FaceBc {
    match b {
        Boundary::Outflow {} => FaceBc::Dirichlet,
        Boundary::Periodic {} => FaceBc::Periodic,
        _ => FaceBc::Neumann,
    }
}

fn velocity_scale(bc: &[Boundary; 4], initial_velocity: [f64; 2]) -> f64 {
    let mut u = initial_velocity[0].hypot(initial_velocity[1]);
    for b in bc {
        match b {
            Boundary::Wall { velocity } => u = u.max(velocity.abs()),
            Boundary::Inflow { velocity, .. } => u = u.max(velocity[0].hypot(velocity[1])),
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
        if kind == PressureSolverKind::Fft {
            spectral::check(bc.each_ref().map(pressure_bc))
                .map_err(|e| Invalid::new("solver.pressure_solver", e))?;
        }
        Ok(Config {
            grid,
            nu,
            density,
            bc,
            initial_velocity,
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
        })
    }

    /// Velocity scale of the problem: the largest wall, inflow or initial speed (1 if all are 0).
    pub fn velocity_scale(&self) -> f64 {
        velocity_scale(&self.bc, self.initial_velocity)
    }

    /// The pressure Poisson operator on this grid and its sides' conditions ([`pressure_bc`]).
    pub fn pressure_operator<T: Real>(&self) -> Laplacian<T> {
        let [nx, ny, _] = self.grid.n;
        let [dx, dy, _] = self.grid.spacing;
        Laplacian::new(nx, ny, dx, dy, self.bc.each_ref().map(pressure_bc))
    }

    /// Time step (before any output-time cap): `cfl` times the smallest of the convective limits
    /// `dx/|u|max`, `dy/|v|max` (wall speeds included), the viscous limit
    /// `c / (2 nu (1/dx^2 + 1/dy^2))` (`c = 1` Euler, `1/2` AB2) and, for the non-dissipative
    /// central and QUICK schemes, the cell-Reynolds limit `2 c nu / (u^2 + v^2)`.
    pub fn time_step(&self, umax: f64, vmax: f64) -> f64 {
        self.step_limits().time_step(umax, vmax)
    }

    /// The flow-independent terms of [`Config::time_step`] (the CUDA solver's `step_dt` kernel
    /// evaluates the same rule on the device).
    pub fn step_limits(&self) -> StepLimits {
        let (dx, dy) = (self.grid.spacing[0], self.grid.spacing[1]);
        let stab = match self.integrator {
            TimeIntegrator::Euler => 1.0,
            TimeIntegrator::Ab2 => 0.5,
        };
        StepLimits {
            dx,
            dy,
            viscous: stab / (2.0 * self.nu * (1.0 / (dx * dx) + 1.0 / (dy * dy))),
            wall: self.bc.iter().fold(0.0f64, |m, b| match b {
                Boundary::Wall { velocity } => m.max(velocity.abs()),
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
    pub fn check_health(&self, umax: f64, vmax: f64, step: u64, time: f64) -> Result<(), SolverError> {
        let scale = self.velocity_scale();
        let m = umax.max(vmax);
        if m.is_finite() && m <= self.blow_up_limit() {
            return Ok(());
        }
        let h = self.grid.spacing[0].max(self.grid.spacing[1]);
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
    }
}

/// The flow-independent terms of the projection method's time step ([`Config::time_step`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepLimits {
    pub dx: f64,
    pub dy: f64,
    /// The viscous limit `c / (2 nu (1/dx^2 + 1/dy^2))`.
    pub viscous: f64,
    /// The largest wall speed (convective speeds are at least this).
    pub wall: f64,
    /// `2 c nu` of the cell-Reynolds limit `2 c nu / (u^2 + v^2)`, for central and QUICK.
    pub cell_reynolds: Option<f64>,
    pub cfl: f64,
}

impl StepLimits {
    /// `cfl` times the smallest limit, with the largest speeds `umax`, `vmax`.
    pub fn time_step(&self, umax: f64, vmax: f64) -> f64 {
        let mut dt = self.viscous;
        let (um, vm) = (umax.max(self.wall), vmax.max(self.wall));
        if um > 0.0 {
            dt = dt.min(self.dx / um);
        }
        if vm > 0.0 {
            dt = dt.min(self.dy / vm);
        }
        if let Some(c) = self.cell_reynolds
            && um + vm > 0.0
        {
            dt = dt.min(c / (um * um + vm * vm));
        }
        self.cfl * dt
    }
}
