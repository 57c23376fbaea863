//! Patankar's SIMPLE, SIMPLEC and SIMPLER for steady incompressible flow on the staggered grid in
//! 2D and 3D, one source for both (`Simple<D>`; Patankar, Numerical Heat Transfer and Fluid Flow,
//! 1980, ch. 6; the GPU formulations of Lohry 2010, in 3D, and Pereira 2011). Dynamic form: density `rho` [kg/m^3], viscosity `mu` [Pa s] (Newtonian from
//! `physics.re` as `rho / re` or `physics.viscosity` as `rho nu`, or a generalized Newtonian
//! [`Viscosity`]), pressure [Pa].
//!
//! One outer iteration (a "step" of the [`Solver`] interface; `steps()` counts them; a steady
//! solver has no physical time, so `time()` and `dt()` are 0):
//! 1. viscosity from the current shear rate (generalized Newtonian fluids);
//! 2. momentum coefficients ([`coefficients`]) from the current velocities, under-relaxed;
//! 3. SIMPLER only: pseudo-velocities `u^ = (sum a_nb u_nb + b) / a_P`, and the pressure from
//!    the pressure equation with `u^` ([`pressure_correction`]);
//! 4. the momentum equations with that pressure, solved by the momentum linear solver: `u*`;
//!    outflow faces take their inner neighbour's value, scaled so that the outflow equals the
//!    inflow (mass-flow correction; [`boundary`]);
//! 5. the pressure correction `p'` from the mass imbalance of `u*`; `u = u* + d (p'_P - p'_E)`,
//!    and SIMPLE also updates `p += alpha_p p'`.
//!
//! Every linear solve of steps 3-5 goes through [`Schwarz`]: the inner solver on the whole grid,
//! or with `solver.linear_solver.subdomains` > 1 one coloured multiplicative pass over
//! overlapping slabs along the last axis, y in 2D and z in 3D (Lohry 2010, ch. 3). The decomposition changes the path of the
//! outer iteration, not its converged solution. Over `N` processes (`mpirun`) each process is
//! one such slab and the run is the one-process run with `N` subdomains bit for bit ([`part`],
//! [`DecomposedSimple`]); every sum below is formed from row partial sums added in row order.
//!
//! Residuals (the `steady_change` the stop rule reads is the largest of them):
//! - `momentum_u`, `momentum_v` (and `momentum_w`): `sum |a_P q_P - sum a_nb q_nb - b|` over the
//!   component's unknowns, with the coefficients and the velocity at the start of the iteration,
//!   divided by `sum |a_P q_P|` over the unknowns of all components (the scaled residual of Patankar's
//!   discretisation equations, normalised by the momentum equations' own magnitude as Lohry 2010
//!   and Pereira 2011 do; the components share the scale so that a component that vanishes,
//!   like v in a channel, is not measured against nothing);
//! - `mass`: `sum over cells |b|` of the pressure-correction equation (the mass imbalance of
//!   `u*`) divided by `sum over faces |F|` (the mass flux through all faces).

mod boundary;
mod coefficients;
pub mod config;
mod cuda;
mod decomposed;
mod outer_iteration;
mod part;
mod pressure_correction;
pub mod viscosity;
mod viscosity_field;

pub use config::{Algorithm, Scheme, SimpleConfig};
pub use cuda::{CudaSimple, unsupported as cuda_unsupported};
pub use decomposed::DecomposedSimple;
pub use part::{stored_layers as part_stored_layers, unsupported as parts_unsupported};
pub use viscosity::Viscosity;

use super::config::BLOW_UP_FACTOR;
use super::derived::{View, staggered_fields_2d, staggered_fields_3d};
use super::rotor_source::RotorSource;
use super::staggered::{Layout, flow_unavailable, for_each_index, sample_velocity};
use crate::case::{CaseSpec, Invalid, Kind, LinearSolverKind};
use crate::solver::linear::{Schwarz, Stencil};
use crate::solver::{CappedSolve, Snapshot, Solver, SolverError, SolverInfo, check_transfer};
use coefficients::{cell, unknowns};
use part::Part;

/// Fields SIMPLE produces, at cell centres: those of the staggered state and the viscosity.
const FIELDS_2D: &[&str] = staggered_fields_2d!("viscosity");
const FIELDS_3D: &[&str] = staggered_fields_3d!("viscosity");

/// The fields of a `D`-dimensional SIMPLE solver.
pub fn fields<const D: usize>() -> &'static [&'static str] {
    if D == 2 { FIELDS_2D } else { FIELDS_3D }
}

/// Names of the arrays of a saved state ([`Solver::snapshot`]), in the order of
/// [`Simple::state_mut`]: the velocity components, the pressure, the cell viscosity and the edge
/// viscosities (2D: the corners, `mu_n`, the name saved checkpoints carry).
fn state_names<const D: usize>() -> &'static [&'static str] {
    if D == 2 {
        &["u", "v", "p", "mu_c", "mu_n"]
    } else {
        &["u", "v", "w", "p", "mu_c", "mu_xy", "mu_xz", "mu_yz"]
    }
}

/// Names of the momentum residuals, by component.
pub(super) const MOMENTUM: [&str; 3] = ["momentum_u", "momentum_v", "momentum_w"];

pub struct Simple<const D: usize> {
    cfg: SimpleConfig,
    l: Layout<D>,
    /// Cell size [m] per axis.
    spacing: [f64; D],
    /// Ghosted staggered velocity components (tangential ghosts by the quadratic wall rule).
    vel: [Vec<f64>; D],
    /// Pressure [Pa] at the cell centres, no ghosts ([`coefficients::cell`]).
    p: Vec<f64>,
    /// Viscosity [Pa s] at cell centres (ghosted, ghost cells copy their neighbour or the
    /// periodic image) and on the cell edges, one array per pair of axes
    /// ([`coefficients::edge`]; the corners in 2D).
    mu_c: Vec<f64>,
    mu_e: Vec<Vec<f64>>,
    /// Momentum `d = A / a_P` of each velocity unknown (zero elsewhere), by component.
    d: [Vec<f64>; D],
    /// SIMPLER's pseudo-velocities.
    hat: [Vec<f64>; D],
    sys: [Stencil<f64, D>; D],
    sys_p: Stencil<f64, D>,
    /// Unknown vectors of the momentum systems, and the pressure (correction).
    x: [Vec<f64>; D],
    pc: Vec<f64>,
    /// Linear solvers of the momentum and pressure systems (overlapping Schwarz slabs or whole).
    solvers: [Schwarz<f64, D>; D],
    solver_p: Schwarz<f64, D>,
    /// Row partial sums: of a system's rows, and [`pressure_correction::ROW_SUMS`] of the cells'.
    partial: Vec<f64>,
    cell_rows: [Vec<f64>; pressure_correction::ROW_SUMS],
    /// One boundary side's flow by ghosted layers along the last axis ([`boundary::apply`]).
    side_layers: Vec<f64>,
    steps: u64,
    residuals: Vec<(&'static str, f64)>,
    /// The last outer iteration's first pressure(-correction) solve that stopped at its cap.
    capped: Option<CappedSolve>,
    /// The rotor's momentum sources (`[rotor]`).
    rotor: Option<RotorSource<f64>>,
    /// This process's place in a run over several ([`part`]; `None` on one process).
    part: Option<Part>,
}

/// Calls `f(m, k)` for every unknown of component `c`: `m` its place in the system's vector,
/// `k` its ghosted index.
fn each_unknown<const D: usize>(l: &Layout<D>, c: usize, mut f: impl FnMut(usize, usize)) {
    let (lo, hi) = unknowns(l, c);
    let mut m = 0;
    for_each_index(lo, hi, |idx| {
        f(m, l.at(idx));
        m += 1;
    });
}

impl<const D: usize> Simple<D> {
    pub fn new(cfg: SimpleConfig) -> Self {
        Self::with_part(cfg, None)
    }

    /// The solver of `cfg`, on one process (`part` `None`) or as a process's part of a run
    /// over several (`cfg` its [`Part::local_config`]).
    fn with_part(cfg: SimpleConfig, part: Option<Part>) -> Self {
        let l = Layout::<D>::of_grid(&cfg.flow.grid, &cfg.flow.bc);
        let n = l.n;
        let len = l.len();
        let cells: usize = n.iter().product();
        let periodic = l.periodic;
        let shape = |c| coefficients::shape(&l, c);
        let rows = |shape: [usize; D]| shape[1..].iter().product::<usize>();
        let mu0 = cfg.viscosity.mu(0.0);
        let mut s = Self {
            spacing: std::array::from_fn(|a| cfg.flow.grid.spacing[a]),
            vel: std::array::from_fn(|c| vec![cfg.flow.initial_velocity[c]; len]),
            p: vec![0.0; cells],
            mu_c: vec![mu0; len],
            mu_e: vec![vec![mu0; len]; D * (D - 1) / 2],
            d: std::array::from_fn(|_| vec![0.0; len]),
            hat: std::array::from_fn(|_| vec![0.0; len]),
            sys: std::array::from_fn(|c| Stencil::new(shape(c), periodic)),
            sys_p: Stencil::new(n, periodic),
            x: std::array::from_fn(|c| vec![0.0; shape(c).iter().product()]),
            pc: vec![0.0; cells],
            solvers: std::array::from_fn(|c| {
                let layers = part.as_ref().map(|p| (p, p.system_layers::<D>(c)));
                linear_solver(&cfg, cfg.momentum_solver, shape(c), periodic, layers)
            }),
            solver_p: linear_solver(
                &cfg,
                cfg.pressure_solver,
                n,
                periodic,
                part.as_ref().map(|p| (p, &p.cells)),
            ),
            partial: vec![0.0; (0..D).map(|c| rows(shape(c))).fold(rows(n), usize::max)],
            cell_rows: std::array::from_fn(|_| vec![0.0; rows(n)]),
            side_layers: vec![0.0; n[D - 1] + 2],
            rotor: cfg.rotor.map(|r| RotorSource::new(r, &cfg.flow.grid, &l)),
            l,
            cfg,
            steps: 0,
            residuals: Vec::with_capacity(13),
            capped: None,
            part,
        };
        s.boundaries();
        s.update_viscosity();
        s
    }

    pub fn config(&self) -> &SimpleConfig {
        &self.cfg
    }

    /// The state (what [`CudaSimple`] copies in and out), in the order of the state names: the
    /// ghosted velocity components, the pressure, and the ghosted cell and edge viscosities.
    pub(crate) fn state_mut(&mut self) -> Vec<&mut Vec<f64>> {
        let mut out: Vec<&mut Vec<f64>> = self.vel.iter_mut().collect();
        out.push(&mut self.p);
        out.push(&mut self.mu_c);
        out.extend(self.mu_e.iter_mut());
        out
    }

    fn state(&self) -> Vec<&Vec<f64>> {
        let mut out: Vec<&Vec<f64>> = self.vel.iter().collect();
        out.extend([&self.p, &self.mu_c]);
        out.extend(self.mu_e.iter());
        out
    }

    /// Steps taken (the mirror of [`CudaSimple`] keeps its count).
    pub(crate) fn set_steps(&mut self, steps: u64) {
        self.steps = steps;
    }

    fn velocity(&self) -> [&[f64]; D] {
        std::array::from_fn(|c| &self.vel[c][..])
    }

    fn view(&self) -> View<'_, f64, D> {
        View {
            l: self.l,
            grid: self.cfg.flow.grid,
            vel: self.velocity(),
            p: &self.p,
            p_scale: 1.0,
        }
    }

    /// Boundary faces and ghosts ([`boundary::apply`]); on a part, then every stored layer
    /// that it does not own from its owner (the local walls' values among them).
    fn boundaries(&mut self) {
        let part = &self.part;
        boundary::apply(
            &self.l,
            &self.cfg.flow,
            self.spacing,
            self.vel.each_mut().map(|q| &mut q[..]),
            &mut self.side_layers,
            |layers| part::total(part.as_ref(), |p| &p.ghosted, layers, 1),
        );
        if let Some(p) = &self.part {
            for q in &mut self.vel {
                p.ghosted.exchange(&*p.comm, q, self.l.stride[D - 1]);
            }
        }
    }

    /// The velocity above which the run has diverged ([`SimpleConfig::velocity_scale`] of the
    /// whole grid).
    fn velocity_scale(&self) -> f64 {
        self.part
            .as_ref()
            .map_or_else(|| self.cfg.velocity_scale(), |p| p.velocity_scale)
    }

    /// The velocity on this grid's faces and the pressure at its centres, sampled from `from`;
    /// where `from` has no value somewhere, nothing changes.
    fn sample_state(&mut self, from: &dyn Solver) -> Result<(), Invalid> {
        let l = self.l;
        let g = self.cfg.flow.grid;
        let vel = sample_velocity(&l, &g, &self.vel, from)?;
        let mut p = self.p.clone();
        let mut centre = [0.0; 3];
        for_each_index([1; D], l.n, |idx| {
            (0..D).for_each(|a| centre[a] = g.centre(a, idx[a] - 1));
            p[cell(&l, idx)] = from.sample("p", centre).unwrap_or(f64::NAN);
        });
        if p.iter().any(|p| p.is_nan()) {
            return Err(flow_unavailable());
        }
        (self.vel, self.p) = (vel, p);
        Ok(())
    }

    /// Viscosity at cell centres and edges from the shear rate of the current velocity.
    fn update_viscosity(&mut self) {
        if self.cfg.viscosity.is_newtonian() {
            return;
        }
        let vel = std::array::from_fn(|c| &self.vel[c][..]);
        viscosity_field::update(
            &self.l,
            self.spacing,
            self.cfg.viscosity,
            vel,
            &mut self.mu_c,
            &mut self.mu_e,
        );
        if let Some(p) = &self.part {
            let layer = self.l.stride[D - 1];
            p.ghosted.exchange(&*p.comm, &mut self.mu_c, layer);
            for mu in &mut self.mu_e {
                p.ghosted.exchange(&*p.comm, mu, layer);
            }
        }
    }
}

/// The error of a run that diverged after `steps` outer iterations: the largest velocity
/// `max_velocity` over [`BLOW_UP_FACTOR`] times the problem's scale, or (`finite` false) a
/// velocity or pressure that is no longer finite; with the likely causes.
fn diverged(cfg: &SimpleConfig, scale: f64, steps: u64, max_velocity: f64, finite: bool) -> SolverError {
    let what = if finite {
        format!(
            "the largest velocity is {max_velocity:.3e}, over {BLOW_UP_FACTOR} times the problem's scale {scale:.3e}"
        )
    } else {
        "the velocity or pressure is no longer finite (NaN or infinity)".to_string()
    };
    // SIMPLE's d = A / a_P' ignores the neighbours' corrections; where viscous links dominate
    // a_P' (a very viscous fluid under a pseudo-time step) that makes its outer iteration
    // unstable, and SIMPLEC's consistent d is the remedy (tests/simple.rs, the power-law channel).
    let simplec = if cfg.algorithm == Algorithm::Simple {
        ", or solver.method = \"simplec\", whose velocity correction keeps the neighbours' part"
    } else {
        ""
    };
    SolverError::Diverged {
        step: steps,
        time: 0.0,
        message: format!(
            "{what} after {steps} outer iterations. Likely causes: under-relaxation too weak \
             (alpha_u = {}, alpha_p = {}; try smaller values{simplec}) or an unbounded \
             convection scheme (try convection = \"power_law\" or a TVD limiter)",
            cfg.alpha_u, cfg.alpha_p
        ),
    }
}

/// The linear solver of `kind` for systems of `shape` unknowns, decomposed as the case says, or
/// on a part this process's strip of the system whose layers are `part`'s second.
fn linear_solver<const D: usize>(
    cfg: &SimpleConfig,
    kind: LinearSolverKind,
    shape: [usize; D],
    periodic: [bool; D],
    part: Option<(&Part, &crate::parallel::Layers)>,
) -> Schwarz<f64, D> {
    match part {
        None => Schwarz::new(kind, shape, cfg.subdomains, cfg.overlap, periodic),
        Some((p, layers)) => {
            Schwarz::part(kind, shape, periodic, cfg.overlap, p.comm.clone(), layers.clone())
        }
    }
}

/// What a SIMPLE solver of `cfg` on `backend` is.
fn solver_info(cfg: &SimpleConfig, backend: &'static str) -> SolverInfo {
    SolverInfo {
        kind: Kind::Incompressible,
        method: cfg.algorithm.name(),
        backend,
        precision: "f64",
        grid: cfg.flow.grid,
    }
}

impl<const D: usize> Solver for Simple<D> {
    fn info(&self) -> SolverInfo {
        solver_info(&self.cfg, "cpu")
    }

    /// 0: SIMPLE is steady and has no physical time (`steps()` counts the outer iterations).
    fn time(&self) -> f64 {
        0.0
    }

    fn steps(&self) -> u64 {
        self.steps
    }

    fn step(&mut self) -> Result<(), SolverError> {
        self.iterate()
    }

    /// 0: an outer iteration is no time step.
    fn dt(&self) -> f64 {
        0.0
    }

    /// Steady iterations have no time step to cap.
    fn set_dt_cap(&mut self, _cap: f64) {}

    fn residuals(&self) -> &[(&'static str, f64)] {
        &self.residuals
    }

    fn field_names(&self) -> &'static [&'static str] {
        fields::<D>()
    }

    /// Takes over another solver's flow (e.g. a projection run's, or a coarser SIMPLE run's):
    /// u and v sampled on this grid's faces, the pressure at its centres; the outer iterations
    /// then go on from it.
    fn load_state(&mut self, from: &dyn Solver) -> Result<(), Invalid> {
        check_transfer(&self.info(), &from.info())?;
        self.sample_state(from)?;
        self.steps = from.steps();
        self.boundaries();
        self.update_viscosity();
        Ok(())
    }

    /// The ghosted velocities, the pressure and the viscosities (what the next outer iteration
    /// starts from) and the iteration count.
    fn snapshot(&self) -> Result<Snapshot, SolverError> {
        let mut s = Snapshot::new(&self.info(), self.time(), self.steps, self.dt());
        for (name, a) in state_names::<D>().iter().zip(self.state()) {
            s.put(name, a);
        }
        Ok(s)
    }

    fn restore(&mut self, state: &Snapshot) -> Result<(), Invalid> {
        state.check(&self.info())?;
        let mut next: Vec<Vec<f64>> = self.state().into_iter().cloned().collect();
        for (name, a) in state_names::<D>().iter().zip(&mut next) {
            state.take(name, a)?;
        }
        for (dst, src) in self.state_mut().into_iter().zip(next) {
            *dst = src;
        }
        self.steps = state.steps;
        Ok(())
    }

    fn field(&self, name: &str, out: &mut Vec<f64>) -> Option<()> {
        if name != "viscosity" {
            return self.view().field(name, out);
        }
        out.clear();
        for_each_index([1; D], self.l.n, |idx| out.push(self.mu_c[self.l.at(idx)]));
        Some(())
    }

    fn sample(&self, name: &str, point: [f64; 3]) -> Option<f64> {
        if name != "viscosity" {
            return self.view().sample(name, point);
        }
        let g = &self.cfg.flow.grid;
        let idx = std::array::from_fn(|a| {
            let i = ((point[a] - g.origin[a]) / g.spacing[a]).floor() as isize;
            i.clamp(0, self.l.n[a] as isize - 1) as usize + 1
        });
        Some(self.mu_c[self.l.at(idx)])
    }

    fn update(&mut self, spec: &CaseSpec) -> Result<(), Invalid> {
        self.reconfigure(SimpleConfig::from_spec(spec)?)
    }

    fn capped_pressure_solve(&self) -> Option<CappedSolve> {
        self.capped
    }

    fn rotor(&self) -> Option<crate::solver::rotor::Rotor> {
        self.rotor.as_ref().map(|r| r.setup.rotor)
    }

    fn summary(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = self.view().summary();
        if let Some(r) = &self.rotor {
            m.insert("rotor".into(), r.setup.summary(&r.loads));
        }
        if let Viscosity::Newtonian { mu } = self.cfg.viscosity {
            m.insert("viscosity".into(), (mu / self.cfg.flow.density).into());
            m.insert("reynolds".into(), (self.cfg.flow.density / mu).into());
        }
        m.insert("outer_iterations".into(), self.steps.into());
        m
    }
}

impl<const D: usize> Simple<D> {
    /// Takes new settings `cfg` (on a part, its [`Part::local_config`]): the grid, boundaries,
    /// initial state and method apply on reset only.
    fn reconfigure(&mut self, cfg: SimpleConfig) -> Result<(), Invalid> {
        if cfg.flow.grid != self.cfg.flow.grid
            || cfg.flow.bc != self.cfg.flow.bc
            || cfg.flow.initial_velocity != self.cfg.flow.initial_velocity
            || cfg.algorithm != self.cfg.algorithm
        {
            return Err(Invalid::new(
                "grid",
                "the grid, boundaries, initial state and method apply on reset only",
            ));
        }
        let split = (cfg.subdomains, cfg.overlap) != (self.cfg.subdomains, self.cfg.overlap);
        if split || cfg.momentum_solver != self.cfg.momentum_solver {
            for c in 0..D {
                let sys = &self.sys[c];
                let layers = self.part.as_ref().map(|p| (p, p.system_layers::<D>(c)));
                self.solvers[c] = linear_solver(&cfg, cfg.momentum_solver, sys.n, sys.periodic, layers);
            }
        }
        if split || cfg.pressure_solver != self.cfg.pressure_solver {
            let sys = &self.sys_p;
            let layers = self.part.as_ref().map(|p| (p, &p.cells));
            self.solver_p = linear_solver(&cfg, cfg.pressure_solver, sys.n, sys.periodic, layers);
        }
        let newtonian_change = cfg.viscosity != self.cfg.viscosity;
        if cfg.rotor != self.cfg.rotor {
            let (grid, l) = (cfg.flow.grid, self.l);
            self.rotor =
                RotorSource::follow(self.rotor.take(), cfg.rotor, |r| RotorSource::new(r, &grid, &l));
        }
        self.cfg = cfg;
        if newtonian_change {
            let mu = self.cfg.viscosity.mu(0.0);
            self.mu_c.iter_mut().for_each(|m| *m = mu);
            self.mu_e.iter_mut().flatten().for_each(|m| *m = mu);
            self.update_viscosity();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A velocity that is no longer a number stops the run: the largest velocity skips NaNs,
    /// the momentum norm does not.
    #[test]
    fn a_nan_velocity_is_a_divergence() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/cases/lid_driven_cavity_re100_simple.toml"
        );
        let text = std::fs::read_to_string(path).expect("the case file");
        let spec = crate::case::Case::parse(&text, path).expect("the case").spec;
        let mut s = Simple::<2>::new(SimpleConfig::from_spec(&spec).expect("config"));
        s.step().expect("a sound step");
        let k = s.l.at([8, 8]);
        s.state_mut()[0][k] = f64::NAN;
        let e = s.step().expect_err("NaN is a divergence").to_string();
        assert!(e.contains("no longer finite"), "{e}");
    }
}
