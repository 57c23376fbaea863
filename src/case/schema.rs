//! The case-file schema: one naming scheme for every solver family.
//!
//! Sections: `[case]`, `[grid]`, `[physics]`, `[boundary.<side>]`, `[initial]`, `[solver]`, `[stop]`.
//! Unknown keys are rejected. Settings a family does not use are `Option`s here and are
//! rejected by that family's validation (`crate::case::validate`), so a typo'd or misplaced
//! setting never passes silently.

use crate::solver::limiter::Limiter;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CaseSpec {
    pub case: CaseMeta,
    pub grid: GridSpec,
    #[serde(default)]
    pub physics: Physics,
    #[serde(default)]
    pub boundary: Boundaries,
    #[serde(default)]
    pub initial: Initial,
    #[serde(default)]
    pub solver: SolverSettings,
    #[serde(default)]
    pub stop: Stop,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CaseMeta {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub kind: Kind,
    /// Number of space dimensions (1, 2 or 3).
    pub dim: u8,
}

/// Solver family.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Incompressible Navier-Stokes (velocity, kinematic pressure).
    Incompressible,
    /// Compressible Euler equations of an ideal gas.
    Compressible,
}

/// Uniform Cartesian grid of `nx * ny * nz` cells covering
/// `[origin, origin + extents]` (lengths in case units).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GridSpec {
    pub nx: usize,
    #[serde(default = "one")]
    pub ny: usize,
    #[serde(default = "one")]
    pub nz: usize,
    /// Domain lengths, one per dimension.
    pub extents: Vec<f64>,
    /// Lower-left corner, one value per dimension (default: zeros).
    #[serde(default)]
    pub origin: Vec<f64>,
}

fn one() -> usize {
    1
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Physics {
    /// Reynolds number `U L / nu` in the case's reference units (U = L = 1), so `nu = 1 / re`.
    pub re: Option<f64>,
    /// Kinematic viscosity `nu` [L^2/T]; give either this or `re`.
    pub viscosity: Option<f64>,
    /// Density (incompressible: constant, scales pressure output; default 1).
    pub density: Option<f64>,
    /// Ratio of specific heats (compressible; default 1.4).
    pub gamma: Option<f64>,
}

/// Boundary conditions per side; `left/right` bound x, `bottom/top` y, `front/back` z.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Boundaries {
    pub left: Option<Boundary>,
    pub right: Option<Boundary>,
    pub bottom: Option<Boundary>,
    pub top: Option<Boundary>,
    pub front: Option<Boundary>,
    pub back: Option<Boundary>,
}

/// Side of the domain, in the order `left, right, bottom, top, front, back`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    Left,
    Right,
    Bottom,
    Top,
    Front,
    Back,
}

impl Side {
    pub const ALL: [Side; 6] = [
        Side::Left,
        Side::Right,
        Side::Bottom,
        Side::Top,
        Side::Front,
        Side::Back,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Side::Left => "left",
            Side::Right => "right",
            Side::Bottom => "bottom",
            Side::Top => "top",
            Side::Front => "front",
            Side::Back => "back",
        }
    }

    /// Axis normal to this side (0 = x, 1 = y, 2 = z).
    pub fn axis(self) -> usize {
        match self {
            Side::Left | Side::Right => 0,
            Side::Bottom | Side::Top => 1,
            Side::Front | Side::Back => 2,
        }
    }

    pub fn opposite(self) -> Side {
        match self {
            Side::Left => Side::Right,
            Side::Right => Side::Left,
            Side::Bottom => Side::Top,
            Side::Top => Side::Bottom,
            Side::Front => Side::Back,
            Side::Back => Side::Front,
        }
    }
}

impl Boundaries {
    pub fn get(&self, side: Side) -> Option<&Boundary> {
        match side {
            Side::Left => self.left.as_ref(),
            Side::Right => self.right.as_ref(),
            Side::Bottom => self.bottom.as_ref(),
            Side::Top => self.top.as_ref(),
            Side::Front => self.front.as_ref(),
            Side::Back => self.back.as_ref(),
        }
    }
}

/// One side's condition (`type = "..."`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Boundary {
    /// No-slip wall (incompressible) moving tangentially with `velocity` (along +x on bottom/top,
    /// +y on left/right); a reflective wall for the compressible solvers.
    #[serde(alias = "reflective")]
    Wall {
        #[serde(default)]
        velocity: f64,
    },
    /// Prescribed inflow: velocity vector (and density, pressure for compressible cases).
    Inflow {
        velocity: Vec<f64>,
        density: Option<f64>,
        pressure: Option<f64>,
    },
    /// Zero-gradient outflow (incompressible: p = 0); transmissive for compressible cases.
    #[serde(alias = "transmissive")]
    Outflow,
    /// Periodic; the opposite side must be periodic too.
    Periodic,
    /// Free-slip symmetry plane: zero normal velocity, zero normal gradient of the rest.
    Symmetry,
}

impl Boundary {
    pub fn type_name(&self) -> &'static str {
        match self {
            Boundary::Wall { .. } => "wall",
            Boundary::Inflow { .. } => "inflow",
            Boundary::Outflow => "outflow",
            Boundary::Periodic => "periodic",
            Boundary::Symmetry => "symmetry",
        }
    }
}

/// Initial state (`type = "..."`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Initial {
    /// Fluid at rest.
    #[default]
    Rest,
    /// Uniform velocity everywhere (incompressible).
    Uniform { velocity: Vec<f64> },
}

/// `[solver]`: method and numerical choices. Families fill in their own defaults.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SolverSettings {
    pub method: Option<Method>,
    pub backend: Option<BackendChoice>,
    pub precision: Option<Precision>,
    /// Courant number of the time-step control.
    pub cfl: Option<f64>,
    pub time_integrator: Option<TimeIntegrator>,
    pub convection: Option<Convection>,
    pub limiter: Option<Limiter>,
    pub pressure_solver: Option<PressureSolverKind>,
    /// Relative residual tolerance of the pressure solve, `||b - A p|| <= tol ||b||`.
    pub tolerance: Option<f64>,
    /// Iteration cap of the pressure solve (sweeps, CG iterations or V-cycles).
    pub max_iterations: Option<usize>,
    /// Over-relaxation factor of red-black SOR (default: the optimum for the grid).
    pub sor_omega: Option<f64>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Chorin projection (fractional step) on a staggered grid.
    Projection,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BackendChoice {
    /// Pick the fastest available backend.
    Auto,
    /// Multi-threaded CPU reference backend (rayon).
    Cpu,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    F32,
    F64,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TimeIntegrator {
    /// Forward Euler (Thibault & Senocak 2009).
    Euler,
    /// Second-order Adams-Bashforth with variable-step coefficients.
    Ab2,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Convection {
    /// Second-order central interpolation (Thibault & Senocak 2009).
    Central,
    /// First-order upwind (donor cell).
    Upwind,
    /// Upwind-biased interpolation limited by `solver.limiter`.
    Tvd,
    /// Leonard's QUICK (quadratic upwind) interpolation.
    Quick,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PressureSolverKind {
    Jacobi,
    Sor,
    Pcg,
    Multigrid,
}

/// `[stop]`: the run ends at the first criterion met.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Stop {
    pub steps: Option<u64>,
    pub t_end: Option<f64>,
    /// Steady when the relative change of the solution per unit time falls below this.
    pub steady_tol: Option<f64>,
}
