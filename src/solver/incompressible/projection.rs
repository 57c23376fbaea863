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

use super::config::Config;
use super::derived::View;
use super::momentum::Momentum;
use super::pressure_poisson::PoissonSolver;
use super::staggered::{Layout, fill_velocity_ghosts};
use crate::backend::cpu::{DisjointWriter, ordered_sum};
use crate::case::{Boundary, CaseSpec, Invalid, Kind, TimeIntegrator};
use crate::solver::real::Real;
use crate::solver::{CappedSolve, Snapshot, Solver, SolverError, SolverInfo, check_transfer};
use rayon::prelude::*;

/// Fields the projection solver produces, at cell centres.
pub const FIELDS: &[&str] = &[
    "u",
    "v",
    "speed",
    "p",
    "vorticity",
    "stream_function",
    "divergence",
];

pub struct Projection<T: Real> {
    cfg: Config,
    l: Layout,
    u: Vec<T>,
    v: Vec<T>,
    /// Predicted velocities `F`, `G`.
    f: Vec<T>,
    g: Vec<T>,
    /// AB2 history `H^{n-1}` of the u and v equations.
    hu: Vec<T>,
    hv: Vec<T>,
    /// Kinematic pressure and the Poisson right-hand side, `nx * ny`, no ghosts.
    p: Vec<T>,
    rhs: Vec<T>,
    poisson: PoissonSolver<T>,
    /// Row scratch for ordered reductions.
    partial: Vec<T>,
    time: f64,
    steps: u64,
    dt: f64,
    dt_old: f64,
    dt_cap: f64,
    has_history: bool,
    residuals: Vec<(&'static str, f64)>,
    /// The last step's pressure solve, when it stopped at its iteration cap.
    capped: Option<CappedSolve>,
}

impl<T: Real> Projection<T> {
    pub fn new(cfg: Config) -> Self {
        let [nx, ny, _] = cfg.grid.n;
        let l = Layout::new(nx, ny, &cfg.bc);
        let op = cfg.pressure_operator();
        let n = l.len();
        let mut s = Self {
            poisson: PoissonSolver::new(op, cfg.poisson),
            u: vec![T::of(cfg.initial_velocity[0]); n],
            v: vec![T::of(cfg.initial_velocity[1]); n],
            f: vec![T::zero(); n],
            g: vec![T::zero(); n],
            hu: vec![T::zero(); n],
            hv: vec![T::zero(); n],
            p: vec![T::zero(); nx * ny],
            rhs: vec![T::zero(); nx * ny],
            partial: vec![T::zero(); ny + 2],
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
        };
        fill_velocity_ghosts(&s.l, &s.cfg.bc, &mut s.u, &mut s.v);
        s
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The state as fields (kinematic pressure times density gives the pressure).
    fn view(&self) -> View<'_, T> {
        View {
            l: self.l,
            grid: self.cfg.grid,
            u: &self.u,
            v: &self.v,
            p: &self.p,
            p_scale: self.cfg.density,
        }
    }

    /// Velocity (ghosted) and kinematic pressure arrays, for a backend that keeps the state on a
    /// device and mirrors it here to reuse the field, sampling and summary code.
    pub(crate) fn state_mut(&mut self) -> (&mut [T], &mut [T], &mut [T]) {
        (&mut self.u, &mut self.v, &mut self.p)
    }

    /// Whether the next AB2 step weights a stored `H^{n-1}` (else it starts with Euler's weights).
    pub(crate) fn has_ab2_history(&self) -> bool {
        self.has_history
    }

    /// Makes the face velocities discretely divergence-free, as a step leaves them:
    /// `u -= grad(phi)` with `lap(phi) = div(u)` (the projection with `dt = 1` and `F = u`).
    /// Overwrites `p` with `phi`.
    fn project_velocity(&mut self) {
        self.f.copy_from_slice(&self.u);
        self.g.copy_from_slice(&self.v);
        self.p.fill(T::zero());
        self.poisson_rhs(1.0);
        self.poisson.solve(&mut self.p, &mut self.rhs);
        self.correct(1.0);
        fill_velocity_ghosts(&self.l, &self.cfg.bc, &mut self.u, &mut self.v);
    }

    /// Sets u and v on their faces and the kinematic pressure at the centres from `from`
    /// (see [`Solver::load_state`]); the velocity is then projected to be divergence-free.
    fn sample_state(&mut self, from: &dyn Solver) -> Option<()> {
        let l = self.l;
        let g = self.cfg.grid;
        let (dx, dy, ox, oy) = (g.spacing[0], g.spacing[1], g.origin[0], g.origin[1]);
        let at = |name: &str, x: f64, y: f64| from.sample(name, [ox + x, oy + y, 0.0]);
        for j in 1..=l.ny {
            for i in 0..=l.nx {
                self.u[l.at(i, j)] = T::of(at("u", i as f64 * dx, (j as f64 - 0.5) * dy)?);
            }
        }
        for j in 0..=l.ny {
            for i in 1..=l.nx {
                self.v[l.at(i, j)] = T::of(at("v", (i as f64 - 0.5) * dx, j as f64 * dy)?);
            }
        }
        fill_velocity_ghosts(&l, &self.cfg.bc, &mut self.u, &mut self.v);
        self.project_velocity();
        let density = self.cfg.density;
        for j in 1..=l.ny {
            for i in 1..=l.nx {
                let p = at("p", (i as f64 - 0.5) * dx, (j as f64 - 0.5) * dy)?;
                self.p[(j - 1) * l.nx + i - 1] = T::of(p / density);
            }
        }
        Some(())
    }

    fn max_speeds(&self) -> (f64, f64) {
        let (um, vm) = self.l.max_face_speeds(&self.u, &self.v);
        (um.f64(), vm.f64())
    }

    /// Predictor: `F`, `G` at every advanced face, from `H` and the AB2 history. Forward Euler
    /// (`F = u + dt H`) stores no history; AB2 stores `H` for the next step.
    fn predict(&mut self, dt: f64) {
        let c = &self.cfg;
        let l = self.l;
        let (dx, dy) = (T::of(c.grid.spacing[0]), T::of(c.grid.spacing[1]));
        let m = Momentum {
            scheme: c.convection,
            limiter: c.limiter,
            nu: T::of(c.nu),
            dx,
            dy,
            idx2: T::one() / (dx * dx),
            idy2: T::one() / (dy * dy),
        };
        let ab2 = matches!(c.integrator, TimeIntegrator::Ab2);
        let (w_new, w_old) = match (c.integrator, self.has_history) {
            (TimeIntegrator::Ab2, true) => {
                let r = dt / self.dt_old;
                (T::of(1.0 + 0.5 * r), T::of(-0.5 * r))
            }
            _ => (T::one(), T::zero()),
        };
        let dt = T::of(dt);
        let half = T::of(0.5);
        let (u, v) = (&self.u, &self.v);
        let iu = l.u_unknowns_i();
        let jv = l.v_unknowns_j();
        let s = l.stride;
        // u equation on rows 1..=ny.
        self.f
            .par_chunks_mut(s)
            .zip(self.hu.par_chunks_mut(s))
            .enumerate()
            .for_each(|(j, (frow, hrow))| {
                if j == 0 || j > l.ny {
                    return;
                }
                let jj = j as isize;
                for i in iu.clone() {
                    let (ii, k) = (i as isize, l.at(i, j));
                    let (uc, ue, uw) = (u[k], u[k + 1], u[k - 1]);
                    let a = [
                        half * (uc + ue),
                        half * (uw + uc),
                        half * (v[k] + v[k + 1]),
                        half * (v[k - s] + v[k - s + 1]),
                    ];
                    let far = |di, dj| l.u_at(u, ii + di, jj + dj);
                    let h = m.rhs([uc, ue, uw, u[k + s], u[k - s]], far, a);
                    if ab2 {
                        frow[i] = uc + dt * (w_new * h + w_old * hrow[i]);
                        hrow[i] = h;
                    } else {
                        frow[i] = uc + dt * h;
                    }
                }
            });
        // v equation on rows in jv.
        self.g
            .par_chunks_mut(s)
            .zip(self.hv.par_chunks_mut(s))
            .enumerate()
            .for_each(|(j, (grow, hrow))| {
                if !jv.contains(&j) {
                    return;
                }
                let jj = j as isize;
                for i in 1..=l.nx {
                    let (ii, k) = (i as isize, l.at(i, j));
                    let (vc, vn, vs) = (v[k], v[k + s], v[k - s]);
                    let a = [
                        half * (u[k] + u[k + s]),
                        half * (u[k - 1] + u[k - 1 + s]),
                        half * (vc + vn),
                        half * (vs + vc),
                    ];
                    let far = |di, dj| l.v_at(v, ii + di, jj + dj);
                    let h = m.rhs([vc, v[k + 1], v[k - 1], vn, vs], far, a);
                    if ab2 {
                        grow[i] = vc + dt * (w_new * h + w_old * hrow[i]);
                        hrow[i] = h;
                    } else {
                        grow[i] = vc + dt * h;
                    }
                }
            });
        self.predictor_boundaries();
    }

    /// `F`, `G` on faces the momentum equation does not advance: the prescribed normal velocity,
    /// a zero-gradient extrapolation on outflow faces, the periodic image on seams.
    fn predictor_boundaries(&mut self) {
        let l = self.l;
        let (nx, ny) = (l.nx, l.ny);
        let (u, v, f, g) = (&self.u, &self.v, &mut self.f, &mut self.g);
        for j in 1..=ny {
            for (side, face, inner) in [(0, 0, 1), (1, nx, nx - 1)] {
                f[l.at(face, j)] = match &self.cfg.bc[side] {
                    Boundary::Outflow {} => f[l.at(inner, j)],
                    Boundary::Periodic {} => f[l.at(if side == 0 { nx } else { face }, j)],
                    _ => u[l.at(face, j)],
                };
            }
        }
        for i in 1..=nx {
            for (side, face, inner) in [(2, 0, 1), (3, ny, ny - 1)] {
                g[l.at(i, face)] = match &self.cfg.bc[side] {
                    Boundary::Outflow {} => g[l.at(i, inner)],
                    Boundary::Periodic {} => g[l.at(i, if side == 2 { ny } else { face })],
                    _ => v[l.at(i, face)],
                };
            }
        }
    }

    /// `rhs = div(F, G) / dt` at cell centres.
    fn poisson_rhs(&mut self, dt: f64) {
        let l = self.l;
        let (idx, idy) = (
            T::of(1.0 / self.cfg.grid.spacing[0]),
            T::of(1.0 / self.cfg.grid.spacing[1]),
        );
        let idt = T::of(1.0 / dt);
        let (f, g) = (&self.f, &self.g);
        self.rhs.par_chunks_mut(l.nx).enumerate().for_each(|(j0, row)| {
            let j = j0 + 1;
            for (i0, r) in row.iter_mut().enumerate() {
                let k = l.at(i0 + 1, j);
                *r = ((f[k] - f[k - 1]) * idx + (g[k] - g[k - l.stride]) * idy) * idt;
            }
        });
    }

    /// `u = F - dt dp/dx` on every face the projection moves; returns the sum of squared
    /// changes of the face velocities and the sum of squared new velocities over the cells'
    /// right and top faces (for the steady-state measure).
    fn correct(&mut self, dt: f64) -> (f64, f64) {
        let l = self.l;
        let (nx, ny) = (l.nx, l.ny);
        let (dtdx, dtdy) = (
            T::of(dt / self.cfg.grid.spacing[0]),
            T::of(dt / self.cfg.grid.spacing[1]),
        );
        let two = T::of(2.0);
        let bc = &self.cfg.bc;
        let out = |b: &Boundary| matches!(b, Boundary::Outflow {});
        let (i_lo, i_hi) = (
            if out(&bc[0]) { 0 } else { 1 },
            *l.u_unknowns_i().end() + out(&bc[1]) as usize,
        );
        let (j_lo, j_hi) = (
            if out(&bc[2]) { 0 } else { 1 },
            *l.v_unknowns_j().end() + out(&bc[3]) as usize,
        );
        let p = &self.p;
        // Pressure of cell (i, j) (1-based) or the boundary value across a face.
        let pc = |i: usize, j: usize| p[(j - 1) * nx + (i - 1)];
        let (u, v, f, g) = (
            DisjointWriter::new(&mut self.u),
            DisjointWriter::new(&mut self.v),
            &self.f,
            &self.g,
        );
        let partial = &mut self.partial;
        // Row j of u and row j of v belong to one closure call only.
        let sums = ordered_sum(partial, |j| {
            let mut d2 = T::zero();
            if (1..=ny).contains(&j) {
                for i in i_lo..=i_hi {
                    let grad = if i == 0 {
                        pc(1, j) * two // p = 0 on the outflow face, half a cell away
                    } else if i == nx && !l.periodic_x {
                        -pc(nx, j) * two
                    } else {
                        pc(if i == nx { 1 } else { i + 1 }, j) - pc(i, j)
                    };
                    let k = l.at(i, j);
                    let new = f[k] - dtdx * grad;
                    // SAFETY: index k lies in row j, owned by this closure call.
                    let old = unsafe { u.get(k) };
                    unsafe { u.set(k, new) };
                    d2 = d2 + (new - old) * (new - old);
                }
            }
            if (j_lo..=j_hi).contains(&j) && j <= ny {
                for i in 1..=nx {
                    let grad = if j == 0 {
                        pc(i, 1) * two
                    } else if j == ny && !l.periodic_y {
                        -pc(i, ny) * two
                    } else {
                        pc(i, if j == ny { 1 } else { j + 1 }) - pc(i, j)
                    };
                    let k = l.at(i, j);
                    let new = g[k] - dtdy * grad;
                    // SAFETY: as above, row j of v.
                    let old = unsafe { v.get(k) };
                    unsafe { v.set(k, new) };
                    d2 = d2 + (new - old) * (new - old);
                }
            }
            d2
        });
        let change = sums.f64();
        let norm = ordered_sum(&mut self.partial, |j| {
            let mut n2 = T::zero();
            let (u, v) = (&self.u, &self.v);
            if (1..=ny).contains(&j) {
                for i in 1..=nx {
                    let (a, b) = (u[l.at(i, j)], v[l.at(i, j)]);
                    n2 = n2 + a * a + b * b;
                }
            }
            n2
        });
        (change, norm.f64())
    }
}

impl<T: Real> Solver for Projection<T> {
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
        let (umax, vmax) = self.max_speeds();
        self.cfg.check_health(umax, vmax, self.steps, self.time)?;
        let dt = self.cfg.time_step(umax, vmax).min(self.dt_cap);
        self.predict(dt);
        self.poisson_rhs(dt);
        let stats = self.poisson.solve(&mut self.p, &mut self.rhs);
        self.capped = (!stats.converged).then(|| CappedSolve {
            iterations: stats.iterations,
            residual: stats.relative_residual,
            tolerance: self.poisson.settings.tolerance,
        });
        let (change, norm) = self.correct(dt);
        fill_velocity_ghosts(&self.l, &self.cfg.bc, &mut self.u, &mut self.v);
        self.dt_old = dt;
        self.dt = dt;
        // A switch from Euler to AB2 starts AB2 afresh (Euler steps store no history).
        self.has_history = matches!(self.cfg.integrator, TimeIntegrator::Ab2);
        self.time += dt;
        self.steps += 1;
        let steady_change = if norm > 0.0 {
            (change / norm).sqrt() / dt
        } else {
            0.0
        };
        let cells = (self.l.nx * self.l.ny) as f64;
        let (umax, vmax) = self.max_speeds();
        self.residuals.clear();
        self.residuals.extend_from_slice(&[
            ("steady_change", steady_change),
            ("pressure_iterations", stats.iterations as f64),
            ("pressure_residual", stats.relative_residual),
            // RMS of div(F): the divergence the projection removed (div u = dt (b - L p)).
            ("predicted_divergence", dt * stats.rhs_norm / cells.sqrt()),
            ("max_velocity", umax.max(vmax)),
        ]);
        self.cfg.check_health(umax, vmax, self.steps, self.time)
    }

    fn residuals(&self) -> &[(&'static str, f64)] {
        &self.residuals
    }

    fn field_names(&self) -> &'static [&'static str] {
        FIELDS
    }
    fn load_state(&mut self, from: &dyn Solver) -> Result<(), Invalid> {
        check_transfer(&self.info(), &from.info())?;
        let kept = (self.u.clone(), self.v.clone(), self.p.clone());
        if self.sample_state(from).is_none() {
            (self.u, self.v, self.p) = kept;
            return Err(Invalid::new(
                "case",
                "the running solver cannot provide u, v and p",
            ));
        }
        self.time = from.time();
        self.steps = from.steps();
        self.dt = from.dt();
        self.has_history = false;
        Ok(())
    }

    fn snapshot(&self) -> Result<Snapshot, SolverError> {
        let mut s = Snapshot::new(&self.info(), self.time, self.steps, self.dt);
        for (name, a) in [
            ("u", &self.u),
            ("v", &self.v),
            ("p", &self.p),
            ("hu", &self.hu),
            ("hv", &self.hv),
        ] {
            s.put(name, a);
        }
        s.put_scalar("has_history", if self.has_history { 1.0 } else { 0.0 });
        Ok(s)
    }

    fn restore(&mut self, state: &Snapshot) -> Result<(), Invalid> {
        state.check(&self.info())?;
        let has_history = state.scalar("has_history")? != 0.0;
        let mut next = [&self.u, &self.v, &self.p, &self.hu, &self.hv].map(|a| a.clone());
        for (name, a) in ["u", "v", "p", "hu", "hv"].iter().zip(&mut next) {
            state.take(name, a)?;
        }
        [self.u, self.v, self.p, self.hu, self.hv] = next;
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
        if cfg.integrator != self.cfg.integrator {
            self.has_history = false;
        }
        self.poisson.set_settings(cfg.poisson);
        self.cfg = cfg;
        Ok(())
    }

    fn capped_pressure_solve(&self) -> Option<CappedSolve> {
        self.capped
    }

    fn summary(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = self.view().summary();
        m.insert("viscosity".into(), self.cfg.nu.into());
        m.insert("reynolds".into(), (1.0 / self.cfg.nu).into());
        m
    }
}
