//! Resolved settings of an incompressible case: defaults filled in, every value checked.

use super::pressure_poisson::PoissonSettings;
use crate::case::{
    Boundary, CaseSpec, Convection, Initial, Invalid, Method, Precision, PressureSolverKind, Side,
    TimeIntegrator, validate::positive,
};
use crate::solver::Grid;
use crate::solver::limiter::Limiter;

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

impl Config {
    pub fn from_spec(spec: &CaseSpec) -> Result<Config, Invalid> {
        if spec.case.dim != 2 {
            return Err(Invalid::new(
                "case.dim",
                format!("incompressible cases are 2D (dim = 2), got {}", spec.case.dim),
            ));
        }
        let s = &spec.solver;
        match s.method.unwrap_or(Method::Projection) {
            Method::Projection => {}
            m => {
                return Err(Invalid::new(
                    "solver.method",
                    format!(
                        "{} is a compressible method; incompressible cases use projection",
                        m.name()
                    ),
                ));
            }
        }
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
                1.0 / re
            }
            (None, Some(nu)) => {
                positive("physics.viscosity", nu)?;
                nu
            }
            (Some(_), Some(_)) => {
                return Err(Invalid::new(
                    "physics.viscosity",
                    "give either physics.re or physics.viscosity, not both",
                ));
            }
            (None, None) => {
                return Err(Invalid::new(
                    "physics.re",
                    "missing; give physics.re (Reynolds number) or physics.viscosity",
                ));
            }
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
            Initial::Rest => [0.0, 0.0],
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
        Ok(Config {
            grid: Grid::from_spec(2, &spec.grid),
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
        let mut u = self.initial_velocity[0].hypot(self.initial_velocity[1]);
        for b in &self.bc {
            match b {
                Boundary::Wall { velocity } => u = u.max(velocity.abs()),
                Boundary::Inflow { velocity, .. } => u = u.max(velocity[0].hypot(velocity[1])),
                _ => {}
            }
        }
        if u > 0.0 { u } else { 1.0 }
    }

    /// Settings that need a new solver when they change.
    pub fn same_layout(&self, other: &Config) -> bool {
        self.grid == other.grid
            && self.bc == other.bc
            && self.precision == other.precision
            && self.initial_velocity == other.initial_velocity
    }
}
