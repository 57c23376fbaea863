//! Chorin's projection method on the staggered grid (Chorin 1968; the explicit GPU formulation of
//! Thibault & Senocak, AIAA 2009-758):
//!
//! 1. predictor `F = u^n + dt H(u)`, `H = nu lap(u) - div(u u)` (explicit Euler), or with the
//!    variable-step AB2 weights `F = u^n + dt ((1 + r/2) H^n - (r/2) H^{n-1})`, `r = dt/dt_old`;
//! 2. pressure Poisson equation `lap(p) = div(F) / dt` (kinematic pressure `p / rho`);
//! 3. correction `u^{n+1} = F - dt grad(p)`, which makes `div(u^{n+1}) = dt (b - L p)`: the
//!    discrete divergence equals the Poisson residual.
//!
//! The step size is `cfl` times the smallest of the convective limits `dx/|u|max`, `dy/|v|max`,
//! the viscous limit `c / (2 nu (1/dx^2 + 1/dy^2))` (`c = 1` Euler, `1/2` AB2) and, for the
//! non-dissipative central and QUICK schemes, the cell-Reynolds limit `2 c nu / |u|max^2`.

mod stages;

use super::config::Config;
use super::derived::{View, fields};
use super::opening::opening_sides;
use super::pressure_poisson::PoissonSolver;
use super::rotor_source::RotorSource;
use super::staggered::{
    ExactSides, Layout, fill_velocity_ghosts_with, flow_unavailable, for_each_index, node_position,
    sample_velocity,
};
use crate::case::{CaseSpec, Invalid, Kind, TimeIntegrator};
use crate::parallel::{RowSums, SlabLink};
use crate::solver::real::Real;
use crate::solver::rotor::{DiskLoads, Rotor};
use crate::solver::{CappedSolve, Snapshot, Solver, SolverError, SolverInfo, check_transfer};

/// Names of the velocity components, their AB2 histories, in the snapshot (the CUDA solver's too).
pub(crate) const VELOCITY: [&str; 3] = ["u", "v", "w"];
pub(crate) const HISTORY: [&str; 3] = ["hu", "hv", "hw"];

/// The projection method in `D = 2` or `3` dimensions, precision `T`.
pub struct Projection<T: Real, const D: usize> {
    cfg: Config,
    l: Layout<D>,
    /// Velocity components on their faces (ghosted, see `staggered`).
    vel: [Vec<T>; D],
    /// Predicted velocities `F`.
    pred: [Vec<T>; D],
    /// AB2 history `H^{n-1}` of each component's equation.
    hist: [Vec<T>; D],
    /// Kinematic pressure and the Poisson right-hand side at cell centres, no ghosts.
    p: Vec<T>,
    rhs: Vec<T>,
    poisson: PoissonSolver<T, D>,
    /// Ordered reductions over the ghosted x rows (and, on a part of a decomposed grid, the
    /// velocity exchange).
    sums: RowSums<T>,
    /// Cells of the whole grid.
    whole_cells: usize,
    /// On a part of a decomposed grid, the whole grid's configuration, whose sides set the
    /// time step's wall-speed limit and the blow-up check's velocity scale.
    whole: Option<Box<Config>>,
    time: f64,
    steps: u64,
    dt: f64,
    dt_old: f64,
    dt_cap: f64,
    has_history: bool,
    residuals: Vec<(&'static str, f64)>,
    /// The last step's pressure solve, when it stopped at its iteration cap.
    capped: Option<CappedSolve>,
    /// The rotor's momentum sources (`[rotor]`).
    rotor: Option<RotorSource<T>>,
}

impl<T: Real, const D: usize> Projection<T, D> {
    /// The solver of `cfg`, whose case has `D` dimensions.
    pub fn new(cfg: Config) -> Self {
        let l = cfg.layout::<D>();
        let op = cfg.pressure_operator();
        let poisson = PoissonSolver::new(op, cfg.poisson);
        let mut s = Self::with(cfg, RowSums::whole(l.rows()), poisson, op.len());
        s.rotor = s.cfg.rotor.map(|r| RotorSource::new(r, &s.cfg.grid, &l));
        s
    }

    /// The solver of one part of the grid of `whole`, cut into `link`'s slabs along the last
    /// axis: `cfg` is `whole` on the part's stored cells, with walls where it meets another
    /// part (their values are overwritten by the exchange; see [`crate::parallel`]).
    pub fn part(cfg: Config, whole: &Config, link: &SlabLink) -> Self {
        let l = cfg.layout::<D>();
        let w = whole.layout::<D>();
        let rows_per_layer = l.rows() / (l.n[D - 1] + 2);
        let sums = RowSums::part(link, l.rows(), rows_per_layer, l.stride[1], 1, w.rows());
        let op = cfg.pressure_operator::<T, D>();
        let whole_op = whole.pressure_operator::<T, D>();
        let cell_sums = RowSums::part(
            link,
            op.rows(),
            op.rows() / op.n[D - 1],
            op.nx(),
            0,
            whole_op.rows(),
        );
        let poisson = PoissonSolver::part(op, cfg.poisson, cell_sums, &whole_op);
        let mut s = Self::with(cfg, sums, poisson, whole_op.len());
        s.rotor = whole
            .rotor
            .map(|r| RotorSource::part(r, &whole.grid, &w, &l, link));
        s.whole = Some(Box::new(whole.clone()));
        s
    }

    fn with(cfg: Config, sums: RowSums<T>, poisson: PoissonSolver<T, D>, whole_cells: usize) -> Self {
        let l = cfg.layout::<D>();
        let len = l.len();
        let cells = poisson.op.len();
        let zeros = || std::array::from_fn(|_| vec![T::zero(); len]);
        let mut s = Self {
            poisson,
            vel: std::array::from_fn(|c| vec![T::of(cfg.initial_velocity[c]); len]),
            pred: zeros(),
            hist: zeros(),
            p: vec![T::zero(); cells],
            rhs: vec![T::zero(); cells],
            sums,
            whole_cells,
            whole: None,
            l,
            cfg,
            time: 0.0,
            steps: 0,
            dt: 0.0,
            dt_old: 0.0,
            dt_cap: f64::INFINITY,
            has_history: false,
            residuals: Vec::with_capacity(8),
            capped: None,
            rotor: None,
        };
        if let Some(field) = s.cfg.analytic {
            let g = s.cfg.grid;
            for (c, q) in s.vel.iter_mut().enumerate() {
                let mut k = 0;
                for_each_index([0; D], l.n.map(|n| n + 1), |idx| {
                    q[k] = T::of(field.velocity(node_position(&g, c, idx), 0.0)[c]);
                    k += 1;
                });
            }
        }
        s.fill_ghosts(0.0);
        s
    }

    /// Boundary faces and ghosts for time `time` ([`fill_velocity_ghosts_with`]); on a part of a
    /// decomposed grid, then the layers it stores but does not own from their owners.
    fn fill_ghosts(&mut self, time: f64) {
        let exact = self.cfg.analytic.as_ref().map(|field| ExactSides {
            field,
            grid: &self.cfg.grid,
            time,
        });
        fill_velocity_ghosts_with(
            &self.l,
            &self.cfg.bc,
            self.vel.each_mut().map(|v| &mut v[..]),
            exact,
        );
        for q in &mut self.vel {
            self.sums.exchange(q);
        }
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The state as fields (kinematic pressure times density gives the pressure).
    fn view(&self) -> View<'_, T, D> {
        View {
            l: self.l,
            grid: self.cfg.grid,
            vel: std::array::from_fn(|c| &self.vel[c][..]),
            p: &self.p,
            p_scale: self.cfg.density,
        }
    }

    /// Velocity components (ghosted) and kinematic pressure, for a backend that keeps the state
    /// on a device and mirrors it here to reuse the field, sampling and summary code.
    pub(crate) fn state_mut(&mut self) -> (&mut [Vec<T>; D], &mut [T]) {
        (&mut self.vel, &mut self.p)
    }

    /// Whether the next AB2 step weights a stored `H^{n-1}` (else it starts with Euler's weights).
    pub(crate) fn has_ab2_history(&self) -> bool {
        self.has_history
    }

    /// Makes the face velocities discretely divergence-free, as a step leaves them:
    /// `u -= grad(phi)` with `lap(phi) = div(u)` (the projection with `dt = 1` and `F = u`).
    /// Overwrites `p` with `phi`.
    fn project_velocity(&mut self) {
        for (f, q) in self.pred.iter_mut().zip(&self.vel) {
            f.copy_from_slice(q);
        }
        self.p.fill(T::zero());
        self.poisson_rhs(1.0, 0);
        self.poisson.solve(&mut self.p, &mut self.rhs);
        self.correct(1.0, 0);
        self.fill_ghosts(self.time);
    }

    /// Sets every velocity component on its faces and the kinematic pressure at the centres
    /// from `from` (see [`Solver::load_state`]); the velocity is then projected to be
    /// divergence-free. Where `from` has no value somewhere, nothing changes.
    fn sample_state(&mut self, from: &dyn Solver) -> Result<(), Invalid> {
        let l = self.l;
        let g = self.cfg.grid;
        let vel = sample_velocity(&l, &g, &self.vel, from)?;
        let density = self.cfg.density;
        let mut missing = false;
        let mut cell = 0;
        let mut p = vec![T::zero(); self.p.len()];
        for_each_index([1; D], l.n, |idx| {
            let mut centre = [0.0; 3];
            for a in 0..D {
                centre[a] = g.origin[a] + (idx[a] as f64 - 0.5) * g.spacing[a];
            }
            match from.sample("p", centre) {
                Some(v) => p[cell] = T::of(v / density),
                None => missing = true,
            }
            cell += 1;
        });
        if missing {
            return Err(flow_unavailable());
        }
        self.vel = vel;
        self.fill_ghosts(self.time);
        self.project_velocity();
        // After the projection, which solves for its potential in the pressure's storage.
        self.p = p;
        Ok(())
    }

    /// Gathers every part's state (velocity, AB2 history, pressure, clock, last residuals) into
    /// `whole`, the solver of the whole grid on the first part (`None` on the others);
    /// collective over the parts of `link`.
    pub(crate) fn gather_parts(mut whole: Option<&mut Self>, part: &Self, link: &SlabLink) {
        // Values per layer along the last axis, ghosted and cell-centred.
        let layer = part.l.stride[D - 1];
        let cells = part.poisson.op.stride[D - 1];
        for c in 0..D {
            link.gather(
                &part.vel[c],
                layer,
                1,
                whole.as_deref_mut().map(|w| &mut w.vel[c][..]),
            );
            link.gather(
                &part.hist[c],
                layer,
                1,
                whole.as_deref_mut().map(|w| &mut w.hist[c][..]),
            );
        }
        link.gather(&part.p, cells, 0, whole.as_deref_mut().map(|w| &mut w.p[..]));
        if let Some(w) = whole {
            w.take_clock(part);
            // Every part holds the whole disk's last loads.
            if let (Some(to), Some(from)) = (&mut w.rotor, &part.rotor) {
                to.loads = from.loads;
            }
        }
    }

    /// Takes `loads` as the rotor's last (those a GPU part gathered on its device).
    pub(crate) fn set_rotor_loads(&mut self, loads: DiskLoads) {
        if let Some(r) = &mut self.rotor {
            r.loads = loads;
        }
    }

    /// Sets a part's state from this solver of the whole grid (the inverse of
    /// [`Projection::gather_parts`], without communication).
    pub(crate) fn scatter_part(&self, part: &mut Self, link: &SlabLink) {
        let layer = self.l.stride[D - 1];
        for c in 0..D {
            link.scatter(&self.vel[c], layer, &mut part.vel[c]);
            link.scatter(&self.hist[c], layer, &mut part.hist[c]);
        }
        link.scatter(&self.p, self.poisson.op.stride[D - 1], &mut part.p);
        part.take_clock(self);
    }

    fn take_clock(&mut self, from: &Self) {
        (self.time, self.steps, self.dt, self.dt_old) = (from.time, from.steps, from.dt, from.dt_old);
        self.has_history = from.has_history;
        self.residuals.clone_from(&from.residuals);
        self.capped = from.capped;
    }

    /// Takes the settings of `cfg`, whose grid, sides and initial state are this solver's (on
    /// a part of a decomposed grid, with `whole` the whole grid's).
    pub(crate) fn update_config(&mut self, cfg: Config, whole: Option<Config>) {
        if cfg.integrator != self.cfg.integrator {
            self.has_history = false;
        }
        self.poisson.set_settings(cfg.poisson);
        if cfg.rotor != self.cfg.rotor {
            let l = self.l;
            self.rotor = RotorSource::follow(self.rotor.take(), cfg.rotor, |r| {
                match (&whole, self.sums.link()) {
                    (Some(w), Some(link)) => RotorSource::part(r, &w.grid, &w.layout::<D>(), &l, link),
                    _ => RotorSource::new(r, &cfg.grid, &l),
                }
            });
        }
        self.cfg = cfg;
        self.whole = whole.map(Box::new);
    }

    /// The whole grid's configuration (this solver's own unless it steps a part).
    fn whole_config(&self) -> &Config {
        self.whole.as_deref().unwrap_or(&self.cfg)
    }

    /// The largest face speed of each component (over all parts).
    fn max_speeds(&self) -> [f64; D] {
        self.l
            .max_face_speeds(self.vel.each_ref().map(|v| &v[..]))
            .map(|s| self.sums.max(s.f64()))
    }
}

/// The relative change of the velocity per unit time, `sqrt(change / norm) / dt` from the sums
/// of `(u_new - u_old)^2` and `u_new^2` over the faces (0 for a zero velocity); NaN when a sum
/// is, which a NaN anywhere in the velocity makes it.
pub(crate) fn steady_change(change: f64, norm: f64, dt: f64) -> f64 {
    if change.is_nan() || norm.is_nan() {
        f64::NAN
    } else if norm > 0.0 {
        (change / norm).sqrt() / dt
    } else {
        0.0
    }
}

/// The largest speeds for [`Config::check_health`], made NaN when the steady change is: the
/// maxima skip NaNs (as `f64::max` and the device's `fmax` do), the sums do not.
pub(crate) fn with_nan<const D: usize>(speeds: [f64; D], steady_change: f64) -> [f64; D] {
    if steady_change.is_nan() {
        [f64::NAN; D]
    } else {
        speeds
    }
}

impl<T: Real, const D: usize> Solver for Projection<T, D> {
    fn info(&self) -> SolverInfo {
        SolverInfo {
            kind: Kind::Incompressible,
            method: "projection",
            backend: "cpu",
            precision: T::NAME,
            grid: self.cfg.grid,
        }
    }

    fn time(&self) -> f64 {
        self.time
    }

    fn steps(&self) -> u64 {
        self.steps
    }

    fn dt(&self) -> f64 {
        self.dt
    }

    fn set_dt_cap(&mut self, cap: f64) {
        self.dt_cap = cap;
    }

    fn step(&mut self) -> Result<(), SolverError> {
        let speeds = self.max_speeds();
        self.whole_config().check_health(&speeds, self.steps, self.time)?;
        let dt = self.whole_config().time_step(&speeds).min(self.dt_cap);
        self.predict(dt);
        let open = opening_sides(&self.cfg.bc);
        self.poisson_rhs(dt, open);
        let stats = self.poisson.solve(&mut self.p, &mut self.rhs);
        self.capped = (!stats.converged).then(|| CappedSolve {
            iterations: stats.iterations,
            residual: stats.relative_residual,
            tolerance: self.poisson.settings.tolerance,
        });
        let (change, norm) = self.correct(dt, open);
        self.fill_ghosts(self.time + dt);
        self.dt_old = dt;
        self.dt = dt;
        // A switch from Euler to AB2 starts AB2 afresh (Euler steps store no history).
        self.has_history = matches!(self.cfg.integrator, TimeIntegrator::Ab2);
        self.time += dt;
        self.steps += 1;
        let steady_change = steady_change(change, norm, dt);
        let cells = self.whole_cells as f64;
        let speeds = self.max_speeds();
        let max_velocity = speeds[1..].iter().fold(speeds[0], |m, s| m.max(*s));
        self.residuals.clear();
        self.residuals.extend_from_slice(&[
            ("steady_change", steady_change),
            ("pressure_iterations", stats.iterations as f64),
            ("pressure_residual", stats.relative_residual),
            // RMS of div(F): the divergence the projection removed (div u = dt (b - L p)).
            ("predicted_divergence", dt * stats.rhs_norm / cells.sqrt()),
            ("max_velocity", max_velocity),
        ]);
        if let Some(r) = &self.rotor {
            self.residuals.extend_from_slice(&r.setup.residuals(&r.loads));
        }
        self.whole_config()
            .check_health(&with_nan(speeds, steady_change), self.steps, self.time)
    }

    fn residuals(&self) -> &[(&'static str, f64)] {
        &self.residuals
    }

    fn field_names(&self) -> &'static [&'static str] {
        fields::<D>()
    }
    fn load_state(&mut self, from: &dyn Solver) -> Result<(), Invalid> {
        check_transfer(&self.info(), &from.info())?;
        self.sample_state(from)?;
        self.time = from.time();
        self.steps = from.steps();
        self.dt = from.dt();
        self.has_history = false;
        Ok(())
    }

    fn snapshot(&self) -> Result<Snapshot, SolverError> {
        let mut s = Snapshot::new(&self.info(), self.time, self.steps, self.dt);
        for c in 0..D {
            s.put(VELOCITY[c], &self.vel[c]);
        }
        s.put("p", &self.p);
        for c in 0..D {
            s.put(HISTORY[c], &self.hist[c]);
        }
        s.put_scalar("has_history", if self.has_history { 1.0 } else { 0.0 });
        Ok(s)
    }

    fn restore(&mut self, state: &Snapshot) -> Result<(), Invalid> {
        state.check(&self.info())?;
        let has_history = state.scalar("has_history")? != 0.0;
        let (mut vel, mut p, mut hist) = (self.vel.clone(), self.p.clone(), self.hist.clone());
        for c in 0..D {
            state.take(VELOCITY[c], &mut vel[c])?;
            state.take(HISTORY[c], &mut hist[c])?;
        }
        state.take("p", &mut p)?;
        (self.vel, self.p, self.hist) = (vel, p, hist);
        (self.time, self.steps, self.dt, self.dt_old) = (state.time, state.steps, state.dt, state.dt);
        self.has_history = has_history;
        Ok(())
    }

    fn field(&self, name: &str, out: &mut Vec<f64>) -> Option<()> {
        self.view().field(name, out)
    }

    fn sample(&self, name: &str, point: [f64; 3]) -> Option<f64> {
        self.view().sample(name, point)
    }

    fn update(&mut self, spec: &CaseSpec) -> Result<(), Invalid> {
        let cfg = Config::from_spec(spec)?;
        if !cfg.same_layout(&self.cfg) {
            return Err(Invalid::new(
                "grid",
                "the grid, boundaries, initial state and precision apply on reset only",
            ));
        }
        self.update_config(cfg, None);
        Ok(())
    }

    fn capped_pressure_solve(&self) -> Option<CappedSolve> {
        self.capped
    }

    fn rotor(&self) -> Option<Rotor> {
        self.rotor.as_ref().map(|r| r.setup.rotor)
    }

    fn summary(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = self.view().summary();
        m.insert("viscosity".into(), self.cfg.nu.into());
        m.insert("reynolds".into(), (1.0 / self.cfg.nu).into());
        if let Some(r) = &self.rotor {
            m.insert("rotor".into(), r.setup.summary(&r.loads));
        }
        m
    }
}
