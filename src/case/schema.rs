//! The case-file schema: one naming scheme for every solver family.
//!
//! Sections: `[case]`, `[grid]`, `[physics]`, `[fluid]`, `[boundary.<side>]`, `[initial]`, `[solver]`,
//! `[stop]`, `[rotor]` ([`super::rotor`]).
//! Unknown keys are rejected. Settings a family does not use are `Option`s here and are
//! rejected by that family's validation (`crate::case::validate`), so a typo'd or misplaced
//! setting never passes silently.

pub use super::rotor::RotorSpec;
use crate::solver::limiter::Limiter;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CaseSpec {
    pub case: CaseMeta,
    pub grid: GridSpec,
    #[serde(default)]
    pub physics: Physics,
    /// Viscosity model (incompressible SIMPLE/SIMPLER); absent: Newtonian with `physics.re` or
    /// `physics.viscosity`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fluid: Option<Fluid>,
    #[serde(default)]
    pub boundary: Boundaries,
    #[serde(default)]
    pub initial: Initial,
    #[serde(default)]
    pub solver: SolverSettings,
    #[serde(default)]
    pub stop: Stop,
    /// A rotor as momentum sources (incompressible 3D, the projection method).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotor: Option<RotorSpec>,
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
    /// Solid (reflective) boxes inside the domain, `[[grid.solid]]` (compressible 2D
    /// MUSCL-Hancock): a cell whose centre lies in `[min, max]` is solid.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub solid: Vec<SolidBox>,
}

/// Axis-aligned solid box, corners in case units (one value per dimension).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SolidBox {
    pub min: Vec<f64>,
    pub max: Vec<f64>,
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
    /// Imposed mean pressure gradient `[dp/dx, dp/dy]` [Pa/m] driving a periodic flow (SIMPLE and
    /// SIMPLER); the periodic part of the pressure is solved for.
    pub pressure_gradient: Option<Vec<f64>>,
}

/// `[fluid]`: a generalized Newtonian fluid, viscosity `mu(gamma_dot)` of the local shear rate
/// (dynamic viscosities in Pa s, `lambda` in s; Pereira 2011, eq. 2.6).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Fluid {
    pub model: FluidModel,
    /// Zero-shear viscosity (carreau) or the constant viscosity (newtonian) [Pa s].
    pub mu0: Option<f64>,
    /// Infinite-shear viscosity (carreau) [Pa s].
    pub mu_inf: Option<f64>,
    /// Time constant (carreau) [s].
    pub lambda: Option<f64>,
    /// Flow-behaviour index (power_law, carreau).
    pub n: Option<f64>,
    /// Consistency (power_law) [Pa s^n].
    pub k: Option<f64>,
}

/// Viscosity model of `[fluid]`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FluidModel {
    /// `mu = mu0`.
    Newtonian,
    /// Ostwald-de Waele, `mu = k gamma_dot^(n - 1)`.
    PowerLaw,
    /// Bird-Carreau, `mu = mu_inf + (mu0 - mu_inf) (1 + (lambda gamma_dot)^2)^((n - 1)/2)`.
    Carreau,
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
    /// No-slip wall (incompressible) moving in its own plane with `velocity` ([`WallVelocity`]);
    /// a reflective wall for the compressible solvers.
    #[serde(alias = "reflective")]
    Wall {
        #[serde(default)]
        velocity: WallVelocity,
    },
    /// Prescribed inflow: velocity vector (and density, pressure for compressible cases).
    Inflow {
        velocity: Vec<f64>,
        density: Option<f64>,
        pressure: Option<f64>,
    },
    /// Zero-gradient outflow (incompressible: p = 0); transmissive for compressible cases.
    /// (The variants without settings are empty structs, not unit variants: serde ignores
    /// `deny_unknown_fields` for unit variants of an internally tagged enum.)
    #[serde(alias = "transmissive")]
    Outflow {},
    /// An opening to still surroundings (incompressible, projection method): where the fluid
    /// leaves, `p = 0` as at an outflow side; where it enters, its total pressure is 0, so the
    /// face's kinematic pressure is `p = -u_n^2 / 2` (ANSYS CFX's "opening" with a total
    /// pressure of 0; OpenFOAM's `totalPressure`). A hovering rotor's far field, which air is
    /// drawn in through from rest.
    Opening {},
    /// Periodic; the opposite side must be periodic too.
    Periodic {},
    /// Free-slip symmetry plane: zero normal velocity, zero normal gradient of the rest.
    Symmetry {},
    /// The velocity of the case's analytic solution at the current time (incompressible, with
    /// `[initial] type = "ethier_steinman"`): a validation case's Dirichlet condition.
    Exact {},
}

impl Boundary {
    pub fn type_name(&self) -> &'static str {
        match self {
            Boundary::Wall { .. } => "wall",
            Boundary::Inflow { .. } => "inflow",
            Boundary::Outflow {} => "outflow",
            Boundary::Opening {} => "opening",
            Boundary::Periodic {} => "periodic",
            Boundary::Symmetry {} => "symmetry",
            Boundary::Exact {} => "exact",
        }
    }

    /// True for the sides the fluid may cross both ways at a held pressure (outflow and
    /// opening): their normal face velocities are unknowns of the projection.
    pub fn is_open(&self) -> bool {
        matches!(self, Boundary::Outflow {} | Boundary::Opening {})
    }
}

/// A wall's velocity: a number is its tangential speed (along +y on left/right, along +x on
/// bottom/top/front/back: the 2D convention, the 3D cavity's lid moving in +x); a vector has one
/// component per dimension and no component normal to the wall.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum WallVelocity {
    Tangential(f64),
    Vector(Vec<f64>),
}

impl Default for WallVelocity {
    fn default() -> Self {
        WallVelocity::Tangential(0.0)
    }
}

impl WallVelocity {
    /// The velocity vector of a wall on `side` (zero beyond the case's dimensions).
    pub fn vector(&self, side: Side) -> [f64; 3] {
        let mut v = [0.0; 3];
        match self {
            WallVelocity::Tangential(s) => v[if side.axis() == 0 { 1 } else { 0 }] = *s,
            WallVelocity::Vector(c) => v.iter_mut().zip(c).for_each(|(v, c)| *v = *c),
        }
        v
    }

    /// The wall's speed, `|velocity|`.
    pub fn speed(&self) -> f64 {
        match self {
            WallVelocity::Tangential(s) => s.abs(),
            WallVelocity::Vector(c) => c.iter().fold(0.0, |m: f64, x| m.hypot(*x)),
        }
    }

    /// Why the velocity is not one of a wall on `side` of a `dim`-dimensional case, if it is not.
    pub fn check(&self, side: Side, dim: usize) -> Result<(), String> {
        match self {
            WallVelocity::Tangential(s) if !s.is_finite() => Err(format!("must be finite, got {s}")),
            WallVelocity::Tangential(_) => Ok(()),
            WallVelocity::Vector(c) if c.len() != dim || c.iter().any(|x| !x.is_finite()) => Err(format!(
                "needs one tangential speed or {dim} finite components (a vector), got {c:?}"
            )),
            WallVelocity::Vector(c) if c[side.axis()] != 0.0 => Err(format!(
                "component {} is normal to the {} wall and must be 0 (a wall moves in its own plane), got {c:?}",
                ["x", "y", "z"][side.axis()],
                side.name()
            )),
            WallVelocity::Vector(_) => Ok(()),
        }
    }
}

/// Initial state (`type = "..."`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Initial {
    /// Fluid at rest (an empty struct so that unknown keys beside `type` are rejected).
    Rest {},
    /// Uniform velocity everywhere (incompressible).
    Uniform { velocity: Vec<f64> },
    /// Ethier & Steinman's (1994) exact unsteady 3D Navier-Stokes solution with parameters `a`,
    /// `d` [1/length] (incompressible, 3D; commonly `a = pi/4`, `d = pi/2` on `[-1, 1]^3`).
    EthierSteinman { a: f64, d: f64 },
    /// The Taylor-Green vortex (Taylor & Green 1937; Brachet et al. 1983) in a periodic box:
    /// `u = V sin(k_x x) cos(k_y y) cos(k_z z)`, `v = -V cos(k_x x) sin(k_y y) cos(k_z z)`,
    /// `w = 0`, `k_a = 2 pi / L_a` (incompressible; in 2D without the z factors).
    TaylorGreen { velocity: f64 },
    /// Uniform gas state (compressible): density, velocity (one component per dimension),
    /// pressure.
    UniformGas {
        density: f64,
        velocity: Vec<f64>,
        pressure: f64,
    },
    /// Riemann problem (compressible): `left` for `x_axis < x0`, `right` beyond; states are
    /// `[rho, u, p]` in 1D and `[rho, u, v, p]` in 2D.
    Riemann {
        left: Vec<f64>,
        right: Vec<f64>,
        x0: f64,
        #[serde(default)]
        axis: Axis,
    },
    /// Three constant states `[rho, u, p]` separated at `x1 < x2` (Woodward-Colella blast).
    Blast {
        left: Vec<f64>,
        middle: Vec<f64>,
        right: Vec<f64>,
        x1: f64,
        x2: f64,
    },
    /// Four constant states `[rho, u, v, p]` in the quadrants around `center` (Lax & Liu 1998).
    Quadrant {
        center: Vec<f64>,
        ne: Vec<f64>,
        nw: Vec<f64>,
        sw: Vec<f64>,
        se: Vec<f64>,
    },
    /// Shock meeting an entropy wave (Shu & Osher 1989): `left = [rho, u, p]` for `x < x0`,
    /// `rho = 1 + amplitude sin(wavenumber x), u = 0, p = 1` beyond.
    ShuOsher {
        left: Vec<f64>,
        x0: f64,
        amplitude: f64,
        wavenumber: f64,
    },
    /// Cylinder of `inside = [rho, p]` with radius `radius` around `center`, `outside` elsewhere,
    /// gas at rest (Toro 2009, sec. 17.1).
    CylindricalExplosion {
        center: Vec<f64>,
        radius: f64,
        inside: Vec<f64>,
        outside: Vec<f64>,
    },
    /// Smooth periodic density wave advected at uniform `velocity` and pressure `pressure`:
    /// `rho = rho0 + amplitude sin(2 pi (k . (x - origin) / L))`, `k = waves` (whole periods
    /// per domain length along each axis).
    DensityWave {
        rho0: f64,
        amplitude: f64,
        velocity: Vec<f64>,
        pressure: f64,
        waves: Vec<f64>,
    },
}

impl Default for Initial {
    fn default() -> Self {
        Initial::Rest {}
    }
}

/// Coordinate axis of a planar initial condition.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    #[default]
    X,
    Y,
}

impl Initial {
    /// Case-file spelling of the variant.
    pub fn type_name(&self) -> &'static str {
        match self {
            Initial::Rest {} => "rest",
            Initial::Uniform { .. } => "uniform",
            Initial::EthierSteinman { .. } => "ethier_steinman",
            Initial::TaylorGreen { .. } => "taylor_green",
            Initial::UniformGas { .. } => "uniform_gas",
            Initial::Riemann { .. } => "riemann",
            Initial::Blast { .. } => "blast",
            Initial::Quadrant { .. } => "quadrant",
            Initial::ShuOsher { .. } => "shu_osher",
            Initial::CylindricalExplosion { .. } => "cylindrical_explosion",
            Initial::DensityWave { .. } => "density_wave",
        }
    }
}

/// `[solver]`: method and numerical choices. Families fill in their own defaults.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SolverSettings {
    pub method: Option<Method>,
    pub backend: Option<BackendChoice>,
    /// CUDA device ordinals: the device of a one-process run (the first), or of each process of
    /// a run over several (`mpirun -n N`: process `r` of a host takes `devices[r % len]`; by
    /// default its local rank modulo the device count).
    pub devices: Option<Vec<usize>>,
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
    /// Riemann solver of the compressible finite-volume schemes.
    pub riemann: Option<RiemannSolver>,
    /// Limit MUSCL slopes on characteristic instead of primitive variables.
    pub characteristic_limiting: Option<bool>,
    /// Exponent of the CE/SE alpha-weighted derivative (Chang, Wang & Chow 1999).
    pub alpha: Option<f64>,
    /// Under-relaxation factor of the momentum equations (SIMPLE, SIMPLER), in (0, 1].
    pub alpha_u: Option<f64>,
    /// Momentum under-relaxation by a pseudo-time step [s] (SIMPLE, SIMPLER), with or instead
    /// of `alpha_u`.
    pub pseudo_dt: Option<f64>,
    /// Under-relaxation factor of the pressure correction (SIMPLE), in (0, 1].
    pub alpha_p: Option<f64>,
    /// Inner linear solvers per equation (SIMPLE, SIMPLER).
    pub linear_solver: Option<LinearSolvers>,
}

/// `[solver.linear_solver]`: the solver of each linearised equation of an outer iteration.
/// The pressure (correction) solve uses `solver.tolerance` and `solver.max_iterations`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinearSolvers {
    /// u and v momentum: `adi`, `jacobi` or `bicgstab`.
    pub momentum: Option<LinearSolverKind>,
    /// Pressure and pressure correction: `adi`, `jacobi`, `cg` or `bicgstab`.
    pub pressure: Option<LinearSolverKind>,
    /// Residual reduction of each momentum solve (relative to its starting residual).
    pub momentum_tolerance: Option<f64>,
    /// Iteration cap of each momentum solve (sweeps or Krylov iterations).
    pub momentum_iterations: Option<usize>,
    /// Overlapping Schwarz subdomains: strips along y (1: no decomposition).
    pub subdomains: Option<usize>,
    /// Rows each strip extends into its neighbours (overlapping Schwarz).
    pub overlap: Option<usize>,
}

/// Linear solver of a five- or seven-point system (`crate::solver::linear`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LinearSolverKind {
    /// Line-by-line alternating-direction sweeps, each line by the Thomas algorithm.
    Adi,
    /// Point Jacobi.
    Jacobi,
    /// Conjugate gradient, Jacobi preconditioned (symmetric systems: pressure).
    Cg,
    /// Conjugate gradient preconditioned by one additive-correction multigrid V-cycle
    /// (Hutchinson & Raithby 1986; symmetric systems: pressure).
    MultigridCg,
    /// BiCGSTAB, Jacobi preconditioned (van der Vorst 1992).
    Bicgstab,
}

impl LinearSolverKind {
    /// Case-file spelling.
    pub fn name(self) -> &'static str {
        match self {
            LinearSolverKind::Adi => "adi",
            LinearSolverKind::Jacobi => "jacobi",
            LinearSolverKind::Cg => "cg",
            LinearSolverKind::MultigridCg => "multigrid_cg",
            LinearSolverKind::Bicgstab => "bicgstab",
        }
    }
}

/// Approximate or exact Riemann solver (compressible finite-volume schemes).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum RiemannSolver {
    /// Exact, iterative (Toro 2009, ch. 4).
    Exact,
    /// Harten-Lax-van Leer-Contact (Toro, Spruce & Speares 1994).
    Hllc,
    /// Roe (1981) with the Harten-Hyman (1983) entropy fix.
    Roe,
    /// Roe without entropy fix (admits expansion shocks; for teaching).
    RoeNoFix,
    /// Harten-Lax-van Leer (1983) with Einfeldt (1988) wave speeds.
    Hll,
    /// Rusanov (1961) / local Lax-Friedrichs.
    Rusanov,
}

impl RiemannSolver {
    pub const ALL: [RiemannSolver; 6] = [
        RiemannSolver::Exact,
        RiemannSolver::Hllc,
        RiemannSolver::Roe,
        RiemannSolver::RoeNoFix,
        RiemannSolver::Hll,
        RiemannSolver::Rusanov,
    ];

    /// Case-file spelling.
    pub fn name(self) -> &'static str {
        match self {
            RiemannSolver::Exact => "exact",
            RiemannSolver::Hllc => "hllc",
            RiemannSolver::Roe => "roe",
            RiemannSolver::RoeNoFix => "roe_no_fix",
            RiemannSolver::Hll => "hll",
            RiemannSolver::Rusanov => "rusanov",
        }
    }
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Chorin projection (fractional step) on a staggered grid.
    Projection,
    /// Finite-volume MUSCL-Hancock with a Riemann solver (compressible).
    MusclHancock,
    /// Space-time conservation element and solution element scheme (Chang 1995; compressible).
    Cese,
    /// Patankar's SIMPLE (steady, incompressible, staggered grid).
    Simple,
    /// SIMPLE-Consistent (Van Doormaal & Raithby 1984): SIMPLE with the velocity correction
    /// consistent with the neighbours' corrections, so the pressure needs no under-relaxation.
    Simplec,
    /// Patankar's SIMPLER: pressure from pseudo-velocities, SIMPLE's correction for velocity.
    Simpler,
}

impl Method {
    /// Case-file spelling.
    pub fn name(self) -> &'static str {
        match self {
            Method::Projection => "projection",
            Method::MusclHancock => "muscl_hancock",
            Method::Cese => "cese",
            Method::Simple => "simple",
            Method::Simplec => "simplec",
            Method::Simpler => "simpler",
        }
    }

    /// One of the steady pressure-based methods (SIMPLE, SIMPLEC, SIMPLER).
    pub fn steady(self) -> bool {
        matches!(self, Method::Simple | Method::Simplec | Method::Simpler)
    }
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BackendChoice {
    /// Pick the fastest available backend.
    Auto,
    /// Multi-threaded CPU reference backend (rayon).
    Cpu,
    /// NVIDIA GPU (CUDA driver + NVRTC, loaded at run time).
    Cuda,
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
    /// Patankar's power-law scheme for the implicit coefficients (SIMPLE and SIMPLER only).
    PowerLaw,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PressureSolverKind {
    Jacobi,
    Sor,
    Pcg,
    Multigrid,
    /// Direct solve by fast cosine transforms (boxes whose sides pair up along each axis).
    Fft,
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
