//! Resolved settings of a SIMPLE or SIMPLER case: defaults filled in, every value checked, and
//! errors naming the key and its valid choices.

use super::viscosity::Viscosity;
use crate::case::{Boundary, CaseSpec, Convection, Invalid, LinearSolverKind, Method, Precision, Side};
use crate::solver::incompressible::config::Flow;
use crate::solver::incompressible::rotor_source::RotorSetup;
use crate::solver::limiter::Limiter;

/// How the convection term enters the momentum coefficients.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// Patankar's power-law scheme in the implicit coefficients (Patankar 1980, sec. 5.2-7).
    PowerLaw,
    /// Upwind convection and central diffusion in the implicit coefficients, corrected to the
    /// face values of `Limiter` (Pereira 2011, Table 2.1) by an explicit source (deferred
    /// correction, Khosla & Rubin 1974).
    Deferred(Limiter),
}

/// The member of Patankar's family that runs the outer iteration (`solver.method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// SIMPLE (Patankar 1980, sec. 6.7): velocity correction `u' = d (p'_P - p'_E)` with
    /// `d = A / a_P` (the relaxed `a_P`), pressure `p += alpha_p p'`.
    Simple,
    /// SIMPLEC (Van Doormaal & Raithby 1984, Numer. Heat Transfer 7, 147-163): SIMPLE with
    /// `d = A / (a_P - sum a_nb)`, which keeps the neighbours' velocity corrections SIMPLE drops,
    /// so that the full `p'` may be added (`alpha_p = 1`) and `alpha_u` may approach 1.
    Simplec,
    /// SIMPLER (Patankar 1980, sec. 6.8): the pressure from the pseudo-velocities' equation,
    /// SIMPLE's correction for the velocity only.
    Simpler,
}

impl Algorithm {
    pub fn of(method: Method) -> Option<Algorithm> {
        match method {
            Method::Simple => Some(Algorithm::Simple),
            Method::Simplec => Some(Algorithm::Simplec),
            Method::Simpler => Some(Algorithm::Simpler),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Simple => "simple",
            Algorithm::Simplec => "simplec",
            Algorithm::Simpler => "simpler",
        }
    }

    /// `solver.alpha_u` when the case gives none: 1 under a pseudo-time step, else 0.7
    /// (SIMPLE, SIMPLER) or 0.95 (SIMPLEC; its outer iterations fall about as
    /// `(1 - alpha_u) / alpha_u`).
    pub fn default_alpha_u(self, pseudo_dt: bool) -> f64 {
        match (pseudo_dt, self) {
            (true, _) => 1.0,
            (false, Algorithm::Simplec) => 0.95,
            (false, _) => 0.7,
        }
    }

    /// `solver.alpha_p` when the case gives none: 0.3 for SIMPLE; SIMPLEC adds the full
    /// correction; SIMPLER does not correct the pressure (the value is not used).
    pub fn default_alpha_p(self) -> f64 {
        match self {
            Algorithm::Simple => 0.3,
            Algorithm::Simplec | Algorithm::Simpler => 1.0,
        }
    }

    /// `solver.linear_solver.momentum` when the case gives none: line-by-line ADI (Lohry
    /// 2010), except for SIMPLEC, whose momentum matrices at alpha_u = 0.95 are barely
    /// diagonally dominant (`a_P / alpha_u` just above `sum a_nb`): there ADI needs about 18
    /// sweeps per outer iteration on the 512^2 cavity against BiCGSTAB's 5, and the outer
    /// iteration on the GPU takes 1.6 ms instead of 3.5 (BENCHMARKS.md).
    pub fn default_momentum_solver(self) -> LinearSolverKind {
        match self {
            Algorithm::Simplec => LinearSolverKind::Bicgstab,
            Algorithm::Simple | Algorithm::Simpler => LinearSolverKind::Adi,
        }
    }

    /// The pressure comes from the pseudo-velocities' equation (SIMPLER), not from `p'`.
    pub fn pseudo_velocities(self) -> bool {
        self == Algorithm::Simpler
    }

    /// SIMPLEC's velocity-correction coefficient `A / (a_P - sum a_nb)`.
    pub fn consistent(self) -> bool {
        self == Algorithm::Simplec
    }
}

/// Everything the SIMPLE solver needs from a case.
#[derive(Clone, Debug, PartialEq)]
pub struct SimpleConfig {
    pub flow: Flow,
    pub algorithm: Algorithm,
    pub viscosity: Viscosity,
    /// Imposed mean pressure gradient `[dp/dx, dp/dy, dp/dz]` [Pa/m] (0 along unused axes).
    pub pressure_gradient: [f64; 3],
    pub scheme: Scheme,
    pub alpha_u: f64,
    /// Pseudo-time step of the momentum equations [s] (`solver.pseudo_dt`; infinite: none).
    pub pseudo_dt: f64,
    pub alpha_p: f64,
    pub momentum_solver: LinearSolverKind,
    pub momentum_tolerance: f64,
    pub momentum_iterations: usize,
    pub pressure_solver: LinearSolverKind,
    pub pressure_tolerance: f64,
    pub pressure_iterations: usize,
    /// Overlapping Schwarz strips along y of every linear solve, and their overlap in rows
    /// ([`crate::solver::linear::Schwarz`]).
    pub subdomains: usize,
    pub overlap: usize,
    /// The rotor whose loads enter the momentum equations (`[rotor]`), evaluated each outer
    /// iteration.
    pub rotor: Option<RotorSetup>,
}

impl SimpleConfig {
    pub fn from_spec(spec: &CaseSpec) -> Result<SimpleConfig, Invalid> {
        let s = &spec.solver;
        let Some(algorithm) = s.method.and_then(Algorithm::of) else {
            return Err(Invalid::new(
                "solver.method",
                format!(
                    "{} is not simple, simplec or simpler",
                    s.method.map_or("projection", Method::name)
                ),
            ));
        };
        let steady = "SIMPLE, SIMPLEC and SIMPLER are steady (outer iterations, no time step)";
        let not_used = [
            ("solver.cfl", s.cfl.is_some()),
            ("solver.time_integrator", s.time_integrator.is_some()),
            ("solver.sor_omega", s.sor_omega.is_some()),
            ("stop.t_end", spec.stop.t_end.is_some()),
        ];
        if let Some((key, _)) = not_used.iter().find(|(_, given)| *given) {
            return Err(Invalid::new(
                *key,
                format!(
                    "not used: {steady}; stop them with stop.steady_tol (normalised residual) or stop.steps (outer iterations)"
                ),
            ));
        }
        if s.pressure_solver.is_some() {
            return Err(Invalid::new(
                "solver.pressure_solver",
                "the SIMPLE family takes the pressure solver from solver.linear_solver.pressure \
                 (adi, jacobi, cg, multigrid_cg, bicgstab)",
            ));
        }
        if s.precision == Some(Precision::F32) {
            return Err(Invalid::new(
                "solver.precision",
                "SIMPLE, SIMPLEC and SIMPLER run in f64 only; use precision = \"f64\"",
            ));
        }
        let flow = Flow::from_spec(spec)?;
        let sides = || (0..2 * flow.grid.dim).map(|s| (Side::ALL[s], flow.side(s)));
        if let Some((side, _)) = sides().find(|(_, b)| matches!(b, Boundary::Opening {})) {
            return Err(Invalid::new(
                format!("boundary.{}.type", side.name()),
                "an opening (total pressure where the fluid enters) runs with the projection method (solver.method = \"projection\"); the SIMPLE family's open sides are type = \"outflow\" beside an inflow side",
            ));
        }
        let outflow = sides().find(|(_, b)| matches!(b, Boundary::Outflow {}));
        if let Some((side, _)) = outflow
            && !sides().any(|(_, b)| matches!(b, Boundary::Inflow { .. }))
        {
            return Err(Invalid::new(
                format!("boundary.{}", side.name()),
                "SIMPLE, SIMPLEC and SIMPLER scale the outflow sides to the inflow through the other sides (Patankar's mass-flow correction): with no inflow side they would close the box. Give a side type = \"inflow\", or use the projection method, whose outflow sides hold p = 0 and let the fluid in as well as out (a hovering rotor's entrainment)",
            ));
        }
        if flow.analytic.is_some() {
            return Err(Invalid::new(
                "initial.type",
                "analytic initial states run by the projection method (solver.method = \"projection\")",
            ));
        }
        let viscosity = Viscosity::from_spec(spec, flow.nu.map(|nu| nu * flow.density))?;
        let dim = flow.grid.dim;
        let mut pressure_gradient = [0.0; 3];
        match spec.physics.pressure_gradient.as_deref() {
            None => {}
            Some(g) if g.len() == dim && g.iter().all(|x| x.is_finite()) => {
                pressure_gradient[..dim].copy_from_slice(g);
            }
            Some(g) => {
                let names = ["dp/dx", "dp/dy", "dp/dz"][..dim].join(", ");
                return Err(Invalid::new(
                    "physics.pressure_gradient",
                    format!("needs {dim} finite components [{names}], got {g:?}"),
                ));
            }
        }
        if flow
            .bc
            .iter()
            .flatten()
            .all(|b| !matches!(b, Boundary::Outflow {} | Boundary::Periodic {}))
            && pressure_gradient != [0.0; 3]
        {
            return Err(Invalid::new(
                "physics.pressure_gradient",
                "drives a flow through periodic or outflow sides only; this case has none",
            ));
        }
        let scheme = match s.convection.unwrap_or(Convection::PowerLaw) {
            Convection::PowerLaw => {
                if s.limiter.is_some() {
                    return Err(Invalid::new(
                        "solver.limiter",
                        "applies to convection = \"tvd\" (deferred correction), not power_law",
                    ));
                }
                Scheme::PowerLaw
            }
            Convection::Tvd => Scheme::Deferred(s.limiter.unwrap_or(Limiter::VanLeer)),
            Convection::Upwind => Scheme::Deferred(Limiter::None),
            Convection::Central => Scheme::Deferred(Limiter::Central),
            Convection::Quick => Scheme::Deferred(Limiter::Quick),
        };
        if let Scheme::Deferred(l) = scheme {
            if !Limiter::TABLE_2_1.contains(&l) {
                let names: Vec<&str> = Limiter::TABLE_2_1.iter().map(|l| l.name()).collect();
                return Err(Invalid::new(
                    "solver.limiter",
                    format!(
                        "{} is not in Pereira's Table 2.1; SIMPLE takes one of {}",
                        l.name(),
                        names.join(", ")
                    ),
                ));
            }
        }
        let relax = |key: &str, value: Option<f64>, default: f64| -> Result<f64, Invalid> {
            let a = value.unwrap_or(default);
            if a > 0.0 && a <= 1.0 {
                Ok(a)
            } else {
                Err(Invalid::new(key, format!("must lie in (0, 1], got {a}")))
            }
        };
        let pseudo_dt = match s.pseudo_dt {
            None => f64::INFINITY,
            Some(t) if t > 0.0 && t.is_finite() => t,
            Some(t) => {
                return Err(Invalid::new(
                    "solver.pseudo_dt",
                    format!("must be a positive number of seconds, got {t}"),
                ));
            }
        };
        // With a pseudo-time step the factor is optional.
        let alpha_u = relax(
            "solver.alpha_u",
            s.alpha_u,
            algorithm.default_alpha_u(s.pseudo_dt.is_some()),
        )?;
        if algorithm.consistent() && alpha_u == 1.0 && s.pseudo_dt.is_none() {
            return Err(Invalid::new(
                "solver.alpha_u",
                "SIMPLEC divides by a_P / alpha_u - sum a_nb, which is zero in the interior at \
                 alpha_u = 1; use alpha_u < 1 (0.95 by default) or a solver.pseudo_dt",
            ));
        }
        let alpha_p = relax("solver.alpha_p", s.alpha_p, algorithm.default_alpha_p())?;
        let ls = s.linear_solver.clone().unwrap_or_default();
        let momentum_solver = ls.momentum.unwrap_or(algorithm.default_momentum_solver());
        if matches!(
            momentum_solver,
            LinearSolverKind::Cg | LinearSolverKind::MultigridCg
        ) {
            return Err(Invalid::new(
                "solver.linear_solver.momentum",
                format!(
                    "{} needs a symmetric matrix and the momentum equations are not symmetric; \
                     use adi, jacobi or bicgstab",
                    momentum_solver.name()
                ),
            ));
        }
        let momentum_tolerance = ls.momentum_tolerance.unwrap_or(0.1);
        if !(momentum_tolerance > 0.0 && momentum_tolerance < 1.0) {
            return Err(Invalid::new(
                "solver.linear_solver.momentum_tolerance",
                format!("must lie in (0, 1) (a residual reduction), got {momentum_tolerance}"),
            ));
        }
        if ls.momentum_iterations == Some(0) {
            return Err(Invalid::new(
                "solver.linear_solver.momentum_iterations",
                "must be at least 1",
            ));
        }
        let (subdomains, overlap) = decomposition(&flow, ls.subdomains, ls.overlap)?;
        let rotor = RotorSetup::from_spec(spec, &flow.grid, flow.density)?;
        Ok(SimpleConfig {
            flow,
            algorithm,
            viscosity,
            pressure_gradient,
            scheme,
            alpha_u,
            pseudo_dt,
            alpha_p,
            momentum_solver,
            momentum_tolerance,
            momentum_iterations: ls.momentum_iterations.unwrap_or(20),
            pressure_solver: ls.pressure.unwrap_or(LinearSolverKind::MultigridCg),
            pressure_tolerance: s.tolerance.unwrap_or(1e-3),
            pressure_iterations: s.max_iterations.unwrap_or(2000),
            subdomains,
            overlap,
            rotor,
        })
    }

    /// Largest velocity a sound run reaches: the walls', inflow's or initial speed, or for a
    /// pressure-driven channel the Newtonian centreline speed `|G| L^2 / (8 mu)` with the
    /// smallest viscosity the fluid model gives (the power law's centreline speed for it).
    pub fn velocity_scale(&self) -> f64 {
        let g = self.pressure_gradient.iter().map(|g| g * g).sum::<f64>().sqrt();
        let l = (0..self.flow.grid.dim)
            .map(|a| self.flow.grid.extent(a))
            .fold(0.0, f64::max);
        self.flow.velocity_scale().max(self.viscosity.channel_speed(g, l))
    }
}

/// `solver.linear_solver.subdomains` (default 1) and `overlap` (default 2 layers), checked: at
/// least one slab, no decomposition of a periodic last axis (y in 2D, z in 3D), and every slab
/// of the smallest system at least `overlap + 1` layers, so that slabs of one colour do not
/// touch (see [`crate::solver::linear::schwarz`]).
fn decomposition(
    flow: &Flow,
    subdomains: Option<usize>,
    overlap: Option<usize>,
) -> Result<(usize, usize), Invalid> {
    let n = subdomains.unwrap_or(1);
    let k = overlap.unwrap_or(2);
    let key = "solver.linear_solver.subdomains";
    if n == 0 {
        return Err(Invalid::new(
            key,
            "must be at least 1 (1: no domain decomposition)",
        ));
    }
    if n == 1 {
        return Ok((n, k));
    }
    // Slabs along the last axis (y in 2D, z in 3D).
    let last = flow.grid.dim - 1;
    let axis = ["x", "y", "z"][last];
    if flow.bc[last][0] == (Boundary::Periodic {}) {
        return Err(Invalid::new(
            key,
            format!(
                "the slabs run along {axis} and a periodic {axis} axis is not decomposed; use subdomains = 1"
            ),
        ));
    }
    // The fewest unknown layers along it: the last component's, between its two walls.
    let rows = flow.grid.n[last] - 1;
    if rows / n < k + 1 {
        return Err(Invalid::new(
            key,
            format!(
                "{n} slabs of the {rows} unknown layers along {axis} leave a slab of {} layers, fewer than \
                 solver.linear_solver.overlap + 1 = {}; use at most {} subdomains or a smaller overlap",
                rows / n,
                k + 1,
                rows / (k + 1)
            ),
        ));
    }
    Ok((n, k))
}
