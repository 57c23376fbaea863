//! Resolved settings of a compressible case: defaults filled in, every value checked, settings
//! of other families rejected.

use crate::case::{
    Axis, Boundary, CaseSpec, Initial, Invalid, Method, Precision, RiemannSolver, Side, SolidBox,
    validate::positive,
};
use crate::solver::Grid;
use crate::solver::limiter::Limiter;

/// A side's condition as the compressible schemes apply it through ghost cells.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bc {
    /// Mirror image, normal velocity reversed (`wall`, `reflective`, `symmetry`).
    Reflective,
    /// Zero gradient (`outflow`, `transmissive`).
    Transmissive,
    Periodic,
    /// Fixed primitive state `[rho, u, v, p]`.
    Inflow([f64; 4]),
}

/// Everything the compressible solvers need from a case.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub grid: Grid,
    pub dim: usize,
    /// Ratio of specific heats.
    pub gamma: f64,
    pub method: Method,
    pub riemann: RiemannSolver,
    pub limiter: Limiter,
    /// Limit characteristic instead of primitive differences (MUSCL-Hancock).
    pub characteristic: bool,
    /// CE/SE weighting exponent.
    pub alpha: f64,
    /// Courant number: `dt = cfl * min over cells and axes of dx_d / (|u_d| + c)`.
    pub cfl: f64,
    pub precision: Precision,
    /// Left, right, bottom, top (the last two unused in 1D).
    pub bc: [Bc; 4],
    pub initial: Initial,
    pub solid: Vec<SolidBox>,
}

fn not_here(key: &str, given: bool, why: &str) -> Result<(), Invalid> {
    if given {
        Err(Invalid::new(key, why))
    } else {
        Ok(())
    }
}

/// Checks a gas state `[rho, (velocity...), p]` of `len` numbers.
fn gas_state(key: &str, v: &[f64], len: usize, what: &str) -> Result<(), Invalid> {
    if v.len() != len || v.iter().any(|x| !x.is_finite()) {
        return Err(Invalid::new(
            key,
            format!("needs {len} finite numbers {what}, got {v:?}"),
        ));
    }
    if !(v[0] > 0.0 && v[len - 1] > 0.0) {
        return Err(Invalid::new(
            key,
            format!("density and pressure must be > 0, got {v:?}"),
        ));
    }
    Ok(())
}

impl Config {
    pub fn from_spec(spec: &CaseSpec) -> Result<Config, Invalid> {
        let dim = spec.case.dim as usize;
        if dim > 2 {
            return Err(Invalid::new(
                "case.dim",
                format!("compressible cases are 1D or 2D, got {dim}"),
            ));
        }
        let s = &spec.solver;
        let method = s.method.unwrap_or(Method::MusclHancock);
        if method == Method::Projection || method.steady() {
            return Err(Invalid::new(
                "solver.method",
                format!(
                    "{} is incompressible; compressible cases use \"muscl_hancock\" or \"cese\"",
                    method.name()
                ),
            ));
        }
        let ph = &spec.physics;
        let inc = "applies to incompressible cases only";
        not_here("physics.re", ph.re.is_some(), inc)?;
        not_here("rotor", spec.rotor.is_some(), inc)?;
        not_here(
            "physics.viscosity",
            ph.viscosity.is_some(),
            "the compressible solvers are inviscid (Euler)",
        )?;
        not_here(
            "physics.density",
            ph.density.is_some(),
            "compressible density comes from [initial]",
        )?;
        not_here("solver.time_integrator", s.time_integrator.is_some(), inc)?;
        not_here("solver.convection", s.convection.is_some(), inc)?;
        not_here("solver.pressure_solver", s.pressure_solver.is_some(), inc)?;
        not_here("solver.tolerance", s.tolerance.is_some(), inc)?;
        not_here("solver.max_iterations", s.max_iterations.is_some(), inc)?;
        not_here("solver.sor_omega", s.sor_omega.is_some(), inc)?;
        not_here("solver.alpha_u", s.alpha_u.is_some(), inc)?;
        not_here("solver.pseudo_dt", s.pseudo_dt.is_some(), inc)?;
        not_here("solver.alpha_p", s.alpha_p.is_some(), inc)?;
        not_here("solver.linear_solver", s.linear_solver.is_some(), inc)?;
        not_here("physics.pressure_gradient", ph.pressure_gradient.is_some(), inc)?;
        not_here("fluid", spec.fluid.is_some(), inc)?;
        not_here(
            "stop.steady_tol",
            spec.stop.steady_tol.is_some(),
            "compressible runs are unsteady; use stop.t_end or stop.steps",
        )?;
        let gamma = ph.gamma.unwrap_or(1.4);
        if !(gamma.is_finite() && gamma > 1.0) {
            return Err(Invalid::new(
                "physics.gamma",
                format!("must be a finite number > 1, got {gamma}"),
            ));
        }
        let muscl = method == Method::MusclHancock;
        let only_muscl = "applies to solver.method = \"muscl_hancock\" only";
        not_here("solver.riemann", !muscl && s.riemann.is_some(), only_muscl)?;
        not_here("solver.limiter", !muscl && s.limiter.is_some(), only_muscl)?;
        if let Some(lim) = s.limiter.filter(|l| !l.symmetric()) {
            let names: Vec<&str> = Limiter::ALL.iter().map(|l| l.name()).collect();
            return Err(Invalid::new(
                "solver.limiter",
                format!(
                    "{} is not a symmetric TVD slope limiter; MUSCL-Hancock takes one of {}",
                    lim.name(),
                    names.join(", ")
                ),
            ));
        }
        not_here(
            "solver.characteristic_limiting",
            !muscl && s.characteristic_limiting.is_some(),
            only_muscl,
        )?;
        not_here(
            "solver.alpha",
            muscl && s.alpha.is_some(),
            "applies to solver.method = \"cese\" only",
        )?;
        let alpha = s.alpha.unwrap_or(2.0);
        if !(alpha.is_finite() && (0.0..=10.0).contains(&alpha)) {
            return Err(Invalid::new(
                "solver.alpha",
                format!(
                    "must lie in [0, 10] (Chang, Wang & Chow use 1 or 2; above 10 the weights \
                     |derivative|^alpha over- or underflow), got {alpha}"
                ),
            ));
        }
        let max_cfl = if muscl && dim == 2 { 0.5 } else { 1.0 };
        let cfl = s.cfl.unwrap_or(if muscl && dim == 2 { 0.4 } else { 0.8 });
        if cfl > max_cfl {
            return Err(Invalid::new(
                "solver.cfl",
                format!(
                    "{} in {dim}D is stable for cfl <= {max_cfl} (per-axis Courant number), got {cfl}",
                    method.name()
                ),
            ));
        }
        let mut bc = [Bc::Transmissive; 4];
        for (n, side) in [Side::Left, Side::Right, Side::Bottom, Side::Top]
            .into_iter()
            .enumerate()
            .take(2 * dim)
        {
            let key = format!("boundary.{}", side.name());
            bc[n] = match spec.boundary.get(side).expect("checked by the case validation") {
                Boundary::Wall { velocity } if velocity.speed() != 0.0 => {
                    return Err(Invalid::new(
                        format!("{key}.velocity"),
                        "compressible walls are inviscid (reflective); remove the velocity",
                    ));
                }
                Boundary::Wall { .. } | Boundary::Symmetry {} => Bc::Reflective,
                Boundary::Exact {} => {
                    return Err(Invalid::new(
                        format!("{key}.type"),
                        "exact (an analytic solution's velocity) applies to incompressible cases only",
                    ));
                }
                Boundary::Opening {} => {
                    return Err(Invalid::new(
                        format!("{key}.type"),
                        "opening (total pressure where the fluid enters) applies to incompressible cases only; a compressible far field is \"transmissive\" (\"outflow\")",
                    ));
                }
                Boundary::Outflow {} => Bc::Transmissive,
                Boundary::Periodic {} => Bc::Periodic,
                Boundary::Inflow {
                    velocity,
                    density,
                    pressure,
                } => {
                    let (Some(rho), Some(p)) = (density, pressure) else {
                        return Err(Invalid::new(
                            key,
                            "compressible inflow needs density and pressure",
                        ));
                    };
                    let mut w = vec![*rho];
                    w.extend_from_slice(velocity);
                    w.push(*p);
                    gas_state(&key, &w, dim + 2, "(density, velocity, pressure)")?;
                    Inflow([*rho, velocity[0], velocity.get(1).copied().unwrap_or(0.0), *p])
                }
            };
        }
        check_initial(&spec.initial, dim)?;
        for (n, b) in spec.grid.solid.iter().enumerate() {
            let key = format!("grid.solid[{n}]");
            if !(muscl && dim == 2) {
                return Err(Invalid::new(key, "solid boxes need a 2D muscl_hancock case"));
            }
            if b.min.len() != 2 || b.max.len() != 2 || (0..2).any(|a| !(b.min[a] < b.max[a])) {
                return Err(Invalid::new(
                    key,
                    format!("needs min = [x, y] < max = [x, y], got {b:?}"),
                ));
            }
        }
        if let Some(t) = spec.stop.t_end {
            positive("stop.t_end", t)?;
        }
        Ok(Config {
            grid: Grid::from_spec(dim, &spec.grid),
            dim,
            gamma,
            method,
            riemann: s.riemann.unwrap_or(RiemannSolver::Hllc),
            limiter: s.limiter.unwrap_or(Limiter::VanLeer),
            characteristic: s.characteristic_limiting.unwrap_or(false),
            alpha,
            cfl,
            precision: s.precision.unwrap_or(Precision::F64),
            bc,
            initial: spec.initial.clone(),
            solid: spec.grid.solid.clone(),
        })
    }

    /// Settings that need a new solver when they change (all but gamma, CFL and schemes).
    pub fn same_layout(&self, o: &Config) -> bool {
        self.grid == o.grid
            && self.method == o.method
            && self.bc == o.bc
            && self.precision == o.precision
            && self.initial == o.initial
            && self.solid == o.solid
    }
}

use Bc::Inflow;

fn check_initial(init: &Initial, dim: usize) -> Result<(), Invalid> {
    let n = dim + 2;
    let w = if dim == 1 { "(rho, u, p)" } else { "(rho, u, v, p)" };
    match init {
        Initial::Rest {}
        | Initial::Uniform { .. }
        | Initial::EthierSteinman { .. }
        | Initial::TaylorGreen { .. } => Err(Invalid::new(
            "initial.type",
            format!(
                "{} is incompressible; compressible cases use uniform_gas, riemann, blast, quadrant, \
                 shu_osher, cylindrical_explosion or density_wave",
                init.type_name()
            ),
        )),
        Initial::UniformGas {
            density,
            velocity,
            pressure,
        } => {
            let mut v = vec![*density];
            v.extend_from_slice(velocity);
            v.push(*pressure);
            gas_state("initial", &v, n, "(density, velocity, pressure)")
        }
        Initial::Riemann {
            left,
            right,
            x0,
            axis,
        } => {
            gas_state("initial.left", left, n, w)?;
            gas_state("initial.right", right, n, w)?;
            if !x0.is_finite() {
                return Err(Invalid::new("initial.x0", "must be finite"));
            }
            if dim == 1 && *axis == Axis::Y {
                return Err(Invalid::new("initial.axis", "a 1D case has only the x axis"));
            }
            Ok(())
        }
        Initial::Blast {
            left,
            middle,
            right,
            x1,
            x2,
        } => {
            if dim != 1 {
                return Err(Invalid::new("initial.type", "blast is a 1D initial state"));
            }
            gas_state("initial.left", left, 3, w)?;
            gas_state("initial.middle", middle, 3, w)?;
            gas_state("initial.right", right, 3, w)?;
            if !(x1 < x2) {
                return Err(Invalid::new(
                    "initial.x2",
                    format!("needs x1 < x2, got {x1}, {x2}"),
                ));
            }
            Ok(())
        }
        Initial::Quadrant {
            center,
            ne,
            nw,
            sw,
            se,
        } => {
            if dim != 2 {
                return Err(Invalid::new("initial.type", "quadrant is a 2D initial state"));
            }
            if center.len() != 2 || center.iter().any(|c| !c.is_finite()) {
                return Err(Invalid::new(
                    "initial.center",
                    format!("needs [x, y], got {center:?}"),
                ));
            }
            for (k, s) in [("ne", ne), ("nw", nw), ("sw", sw), ("se", se)] {
                gas_state(&format!("initial.{k}"), s, 4, w)?;
            }
            Ok(())
        }
        Initial::ShuOsher {
            left,
            x0,
            amplitude,
            wavenumber,
        } => {
            if dim != 1 {
                return Err(Invalid::new("initial.type", "shu_osher is a 1D initial state"));
            }
            gas_state("initial.left", left, 3, w)?;
            if !(x0.is_finite() && wavenumber.is_finite() && amplitude.is_finite() && amplitude.abs() < 1.0) {
                return Err(Invalid::new(
                    "initial.amplitude",
                    "x0, wavenumber finite and |amplitude| < 1 required",
                ));
            }
            Ok(())
        }
        Initial::CylindricalExplosion {
            center,
            radius,
            inside,
            outside,
        } => {
            if dim != 2 {
                return Err(Invalid::new(
                    "initial.type",
                    "cylindrical_explosion is a 2D initial state",
                ));
            }
            if center.len() != 2 || center.iter().any(|c| !c.is_finite()) {
                return Err(Invalid::new(
                    "initial.center",
                    format!("needs [x, y], got {center:?}"),
                ));
            }
            positive("initial.radius", *radius)?;
            gas_state("initial.inside", inside, 2, "(rho, p)")?;
            gas_state("initial.outside", outside, 2, "(rho, p)")
        }
        Initial::DensityWave {
            rho0,
            amplitude,
            velocity,
            pressure,
            waves,
        } => {
            if !(rho0.is_finite() && amplitude.is_finite() && amplitude.abs() < *rho0) {
                return Err(Invalid::new(
                    "initial.amplitude",
                    "needs finite rho0 > |amplitude|",
                ));
            }
            let mut v = vec![*rho0];
            v.extend_from_slice(velocity);
            v.push(*pressure);
            gas_state("initial.velocity", &v, n, "(rho0, velocity, pressure)")?;
            if waves.len() != dim || waves.iter().any(|k| !k.is_finite()) {
                return Err(Invalid::new(
                    "initial.waves",
                    format!("needs {dim} finite wave counts, got {waves:?}"),
                ));
            }
            Ok(())
        }
    }
}
