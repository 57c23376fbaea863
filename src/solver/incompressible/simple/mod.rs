//! Patankar's SIMPLE and SIMPLER for steady incompressible flow on the staggered grid (Patankar,
//! Numerical Heat Transfer and Fluid Flow, 1980, ch. 6; the GPU formulations of Lohry 2010 and
//! Pereira 2011). Dynamic form: density `rho` [kg/m^3], viscosity `mu` [Pa s] (Newtonian from
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
//!    inflow (mass-flow correction);
//! 5. the pressure correction `p'` from the mass imbalance of `u*`; `u = u* + d (p'_P - p'_E)`,
//!    and SIMPLE also updates `p += alpha_p p'`.
//!
//! Every linear solve of steps 3-5 goes through [`Schwarz`]: the inner solver on the whole grid,
//! or with `solver.linear_solver.subdomains` > 1 one coloured multiplicative pass over
//! overlapping strips along y (Lohry 2010, ch. 3). The decomposition changes the path of the
//! outer iteration, not its converged solution.
//!
//! Residuals (the `steady_change` the stop rule reads is the largest of them):
//! - `momentum_u`, `momentum_v`: `sum |a_P q_P - sum a_nb q_nb - b|` over the component's
//!   unknowns, with the coefficients and the velocity at the start of the iteration, divided by
//!   `sum |a_P q_P|` over the unknowns of both components (the scaled residual of Patankar's
//!   discretisation equations, normalised by the momentum equations' own magnitude as Lohry 2010
//!   and Pereira 2011 do; both components share the scale so that a component that vanishes,
//!   like v in a channel, is not measured against nothing);
//! - `mass`: `sum over cells |b|` of the pressure-correction equation (the mass imbalance of
//!   `u*`) divided by `sum over faces |F|` (the mass flux through all faces).

mod coefficients;
pub mod config;
mod cuda;
mod pressure_correction;
pub mod viscosity;

pub use config::{Algorithm, Scheme, SimpleConfig};
pub use cuda::{CudaSimple, unsupported as cuda_unsupported};
pub use viscosity::Viscosity;

use super::config::BLOW_UP_FACTOR;
use super::derived::View;
use super::staggered::{Layout, fill_velocity_ghosts, side_velocity};
use crate::case::{Boundary, CaseSpec, Invalid, Kind, LinearSolverKind, Side};
use crate::solver::linear::{Schwarz, Stencil};
use crate::solver::{CappedSolve, Snapshot, Solver, SolverError, SolverInfo, check_transfer};
use coefficients::Constants;

/// Fields SIMPLE produces, at cell centres.
pub const FIELDS: &[&str] = &[
    "u",
    "v",
    "speed",
    "p",
    "vorticity",
    "stream_function",
    "divergence",
    "viscosity",
];

/// Names of the arrays of a saved state ([`Solver::snapshot`]), in the order of `state_mut`.
const STATE: [&str; 5] = ["u", "v", "p", "mu_c", "mu_n"];

pub struct Simple {
    cfg: SimpleConfig,
    l: Layout<2>,
    /// Ghosted staggered velocities (tangential ghosts by the quadratic wall rule).
    u: Vec<f64>,
    v: Vec<f64>,
    /// Pressure [Pa], `nx * ny`.
    p: Vec<f64>,
    /// Viscosity [Pa s] at cell centres (ghosted, ghost cells copy their neighbour or the
    /// periodic image) and at cell corners (corner `(i, j)` = top-right of cell `(i, j)`).
    mu_c: Vec<f64>,
    mu_n: Vec<f64>,
    /// Momentum `d = A / a_P` of each velocity unknown (zero elsewhere).
    du: Vec<f64>,
    dv: Vec<f64>,
    /// SIMPLER's pseudo-velocities.
    u_hat: Vec<f64>,
    v_hat: Vec<f64>,
    sys: [Stencil<f64, 2>; 2],
    sys_p: Stencil<f64, 2>,
    /// Unknown vectors of the u, v systems, and the pressure (correction).
    x: [Vec<f64>; 2],
    pc: Vec<f64>,
    /// Linear solvers of the u, v and pressure systems (overlapping Schwarz strips or whole).
    solvers: [Schwarz<f64, 2>; 2],
    solver_p: Schwarz<f64, 2>,
    partial: Vec<f64>,
    steps: u64,
    residuals: Vec<(&'static str, f64)>,
    /// The last outer iteration's first pressure(-correction) solve that stopped at its cap.
    capped: Option<CappedSolve>,
}

impl Simple {
    pub fn new(cfg: SimpleConfig) -> Self {
        let [nx, ny, _] = cfg.flow.grid.n;
        let l = Layout::new([nx, ny], &cfg.flow.bc);
        let n = l.len();
        let periodic = [l.periodic[0], l.periodic[1]];
        let dims = |c| {
            let (a, b) = coefficients::unknowns(&l, c);
            (a.count(), b.count())
        };
        let ((ui, uj), (vi, vj)) = (dims(0), dims(1));
        let mu0 = cfg.viscosity.mu(0.0);
        let [u0, v0, _] = cfg.flow.initial_velocity;
        let mut s = Self {
            u: vec![u0; n],
            v: vec![v0; n],
            p: vec![0.0; nx * ny],
            mu_c: vec![mu0; n],
            mu_n: vec![mu0; n],
            du: vec![0.0; n],
            dv: vec![0.0; n],
            u_hat: vec![0.0; n],
            v_hat: vec![0.0; n],
            sys: [Stencil::new([ui, uj], periodic), Stencil::new([vi, vj], periodic)],
            sys_p: Stencil::new([nx, ny], periodic),
            x: [vec![0.0; ui * uj], vec![0.0; vi * vj]],
            pc: vec![0.0; nx * ny],
            solvers: [
                linear_solver(&cfg, cfg.momentum_solver, [ui, uj], periodic),
                linear_solver(&cfg, cfg.momentum_solver, [vi, vj], periodic),
            ],
            solver_p: linear_solver(&cfg, cfg.pressure_solver, [nx, ny], periodic),
            partial: vec![0.0; ny.max(uj).max(vj)],
            l,
            cfg,
            steps: 0,
            residuals: Vec::with_capacity(8),
            capped: None,
        };
        s.boundaries();
        s.update_viscosity();
        s
    }

    pub fn config(&self) -> &SimpleConfig {
        &self.cfg
    }

    /// The state: ghosted `u`, `v`, the pressure, and the ghosted cell and corner viscosities
    /// (what [`CudaSimple`] copies in and out).
    /// `u`, `v`, `p` and the viscosities at centres and corners, in the order of [`STATE`].
    pub(crate) fn state_mut(&mut self) -> [&mut Vec<f64>; 5] {
        [
            &mut self.u,
            &mut self.v,
            &mut self.p,
            &mut self.mu_c,
            &mut self.mu_n,
        ]
    }

    /// Steps taken (the mirror of [`CudaSimple`] keeps its count).
    pub(crate) fn set_steps(&mut self, steps: u64) {
        self.steps = steps;
    }

    fn view(&self) -> View<'_, f64, 2> {
        View {
            l: self.l,
            grid: self.cfg.flow.grid,
            vel: [&self.u, &self.v],
            p: &self.p,
            p_scale: 1.0,
        }
    }

    /// Boundary faces and ghosts: the shared ghost rules, outflow faces from their inner
    /// neighbour with the mass-flow correction, then the quadratic wall rule for tangential
    /// ghosts of walls and inflow sides.
    fn boundaries(&mut self) {
        let l = self.l;
        let (nx, ny) = (l.n[0], l.n[1]);
        fill_velocity_ghosts(&l, &self.cfg.flow.bc, [&mut self.u[..], &mut self.v[..]]);
        let bc: [&Boundary; 4] = std::array::from_fn(|s| self.cfg.flow.side(s));
        let [dx, dy] = [self.cfg.flow.grid.spacing[0], self.cfg.flow.grid.spacing[1]];
        // Net inflow through the fixed boundary faces, and the raw outflow.
        let (mut inflow, mut outflow) = (0.0, 0.0);
        for side in 0..4 {
            let sign = if side % 2 == 0 { 1.0 } else { -1.0 };
            let is_out = *bc[side] == Boundary::Outflow {};
            let faces: Vec<usize> = match side {
                0 | 1 => (1..=ny)
                    .map(|j| l.at([if side == 0 { 0 } else { nx }, j]))
                    .collect(),
                _ => (1..=nx)
                    .map(|i| l.at([i, if side == 2 { 0 } else { ny }]))
                    .collect(),
            };
            let (q, area, inner) = if side < 2 {
                (&mut self.u, dy, if side == 0 { 1isize } else { -1 })
            } else {
                (
                    &mut self.v,
                    dx,
                    if side == 2 {
                        l.stride[1] as isize
                    } else {
                        -(l.stride[1] as isize)
                    },
                )
            };
            for k in faces {
                if is_out {
                    q[k] = q[(k as isize + inner) as usize];
                    outflow -= sign * q[k] * area;
                } else if !matches!(bc[side], Boundary::Periodic {}) {
                    inflow += sign * q[k] * area;
                }
            }
        }
        if outflow != 0.0 {
            let scale = inflow / outflow;
            for side in 0..4 {
                if !matches!(bc[side], Boundary::Outflow {}) {
                    continue;
                }
                if side < 2 {
                    let i = if side == 0 { 0 } else { nx };
                    (1..=ny).for_each(|j| self.u[l.at([i, j])] *= scale);
                } else {
                    let j = if side == 2 { 0 } else { ny };
                    (1..=nx).for_each(|i| self.v[l.at([i, j])] *= scale);
                }
            }
        }
        // Quadratic wall rule: q_g = (8 U - 6 q_1 + q_2) / 3.
        let rule = |wall: f64, q1: f64, q2: f64| (8.0 * wall - 6.0 * q1 + q2) / 3.0;
        for side in 0..4 {
            let Some(wall) =
                side_velocity(bc[side], Side::ALL[side]).map(|v| v[if side < 2 { 1 } else { 0 }])
            else {
                continue;
            };
            match side {
                0 | 1 => {
                    let (g, a, b) = if side == 0 {
                        (0, 1, 2)
                    } else {
                        (nx + 1, nx, nx - 1)
                    };
                    for j in 0..=ny {
                        self.v[l.at([g, j])] = rule(wall, self.v[l.at([a, j])], self.v[l.at([b, j])]);
                    }
                }
                _ => {
                    let (g, a, b) = if side == 2 {
                        (0, 1, 2)
                    } else {
                        (ny + 1, ny, ny - 1)
                    };
                    for i in 0..=nx {
                        self.u[l.at([i, g])] = rule(wall, self.u[l.at([i, a])], self.u[l.at([i, b])]);
                    }
                }
            }
        }
    }

    /// u and v on their faces and the pressure at the centres, sampled from `from`.
    fn sample_state(&mut self, from: &dyn Solver) -> Option<()> {
        let l = self.l;
        let g = self.cfg.flow.grid;
        let (dx, dy, ox, oy) = (g.spacing[0], g.spacing[1], g.origin[0], g.origin[1]);
        let at = |name: &str, x: f64, y: f64| from.sample(name, [ox + x, oy + y, 0.0]);
        for j in 1..=l.n[1] {
            for i in 0..=l.n[0] {
                self.u[l.at([i, j])] = at("u", i as f64 * dx, (j as f64 - 0.5) * dy)?;
            }
        }
        for j in 0..=l.n[1] {
            for i in 1..=l.n[0] {
                self.v[l.at([i, j])] = at("v", (i as f64 - 0.5) * dx, j as f64 * dy)?;
            }
        }
        for j in 1..=l.n[1] {
            for i in 1..=l.n[0] {
                self.p[(j - 1) * l.n[0] + i - 1] = at("p", (i as f64 - 0.5) * dx, (j as f64 - 0.5) * dy)?;
            }
        }
        Some(())
    }

    /// Viscosity at cell centres and corners from the shear rate of the current velocity.
    fn update_viscosity(&mut self) {
        if self.cfg.viscosity.is_newtonian() {
            return;
        }
        let l = self.l;
        let (nx, ny) = (l.n[0], l.n[1]);
        let [dx, dy] = [self.cfg.flow.grid.spacing[0], self.cfg.flow.grid.spacing[1]];
        let (u, v) = (&self.u, &self.v);
        let model = self.cfg.viscosity;
        // Normal strain rates at cell centres.
        let ux = |i: usize, j: usize| (u[l.at([i, j])] - u[l.at([i - 1, j])]) / dx;
        let vy = |i: usize, j: usize| (v[l.at([i, j])] - v[l.at([i, j - 1])]) / dy;
        let uc = |i: usize, j: usize| 0.5 * (u[l.at([i - 1, j])] + u[l.at([i, j])]);
        let vc = |i: usize, j: usize| 0.5 * (v[l.at([i, j - 1])] + v[l.at([i, j])]);
        for j in 1..=ny {
            for i in 1..=nx {
                let shear =
                    (uc(i, j + 1) - uc(i, j - 1)) / (2.0 * dy) + (vc(i + 1, j) - vc(i - 1, j)) / (2.0 * dx);
                let g = (2.0 * ux(i, j).powi(2) + 2.0 * vy(i, j).powi(2) + shear * shear).sqrt();
                self.mu_c[l.at([i, j])] = model.mu(g);
            }
        }
        // Ghost cells: periodic image or the neighbour inside.
        let wrap = |k: usize, n: usize, periodic: bool| match k {
            0 if periodic => n,
            0 => 1,
            k if k == n + 1 && periodic => 1,
            k if k == n + 1 => n,
            k => k,
        };
        for j in 0..=ny + 1 {
            for i in 0..=nx + 1 {
                if (1..=nx).contains(&i) && (1..=ny).contains(&j) {
                    continue;
                }
                let (si, sj) = (wrap(i, nx, l.periodic[0]), wrap(j, ny, l.periodic[1]));
                self.mu_c[l.at([i, j])] = self.mu_c[l.at([si, sj])];
            }
        }
        // Corners: shear from the staggered differences there, normal strain averaged from the
        // nearest cells.
        for j in 0..=ny {
            for i in 0..=nx {
                let shear = (u[l.at([i, j + 1])] - u[l.at([i, j])]) / dy
                    + (v[l.at([i + 1, j])] - v[l.at([i, j])]) / dx;
                let cells = [(i, j), (i + 1, j), (i, j + 1), (i + 1, j + 1)]
                    .map(|(a, b)| (a.clamp(1, nx), b.clamp(1, ny)));
                let normal = cells
                    .iter()
                    .map(|&(a, b)| 2.0 * ux(a, b).powi(2) + 2.0 * vy(a, b).powi(2))
                    .sum::<f64>()
                    / 4.0;
                self.mu_n[l.at([i, j])] = model.mu((normal + shear * shear).sqrt());
            }
        }
    }

    /// Copies component `c`'s unknowns between the ghosted array and the system's vector.
    fn gather(&mut self, c: usize) {
        let (ia, ja) = coefficients::unknowns(&self.l, c);
        let q = if c == 0 { &self.u } else { &self.v };
        let ni = ia.clone().count();
        for (b, j) in ja.enumerate() {
            for (a, i) in ia.clone().enumerate() {
                self.x[c][b * ni + a] = q[self.l.at([i, j])];
            }
        }
    }

    fn scatter(&mut self, c: usize, from: Option<usize>) {
        let (ia, ja) = coefficients::unknowns(&self.l, c);
        let ni = ia.clone().count();
        let l = self.l;
        let (q, x) = match (c, from) {
            (0, None) => (&mut self.u, &self.x[0]),
            (1, None) => (&mut self.v, &self.x[1]),
            (0, Some(_)) => (&mut self.u_hat, &self.x[0]),
            _ => (&mut self.v_hat, &self.x[1]),
        };
        for (b, j) in ja.enumerate() {
            for (a, i) in ia.clone().enumerate() {
                q[l.at([i, j])] = x[b * ni + a];
            }
        }
    }

    /// SIMPLER's pseudo-velocities `(sum a_nb q_nb + b) / a_P` of component `c` into the unknown
    /// vector (the velocity itself stays in the ghosted array).
    fn pseudo_velocity(&mut self, c: usize) {
        let sys = &self.sys[c];
        let x = &self.x[c];
        let hat: Vec<f64> = (0..sys.len())
            .map(|k| (sys.neighbours(|m| x[m], sys.position(k), k) + sys.b[k]) / sys.ap[k])
            .collect();
        self.x[c].copy_from_slice(&hat);
    }

    /// One outer iteration.
    fn iterate(&mut self) -> Result<(), SolverError> {
        self.update_viscosity();
        let spacing = [self.cfg.flow.grid.spacing[0], self.cfg.flow.grid.spacing[1]];
        let mut norms = [0.0; 2];
        for c in 0..2 {
            let k = constants(&self.cfg, self.l, c);
            let (q, o) = if c == 0 {
                (&self.u, &self.v)
            } else {
                (&self.v, &self.u)
            };
            let d = if c == 0 { &mut self.du } else { &mut self.dv };
            norms[c] = coefficients::assemble(&k, c, q, o, &self.mu_c, &self.mu_n, &mut self.sys[c], d);
        }
        let mut pressure_iterations = 0;
        let mut pressure_residual = 0.0;
        self.capped = None;
        if self.cfg.algorithm.pseudo_velocities() {
            self.u_hat.copy_from_slice(&self.u);
            self.v_hat.copy_from_slice(&self.v);
            for c in 0..2 {
                self.gather(c);
                self.pseudo_velocity(c);
                self.scatter(c, Some(c));
            }
            let l = self.l;
            if l.periodic[0] {
                (1..=l.n[1]).for_each(|j| self.u_hat[l.at([0, j])] = self.u_hat[l.at([l.n[0], j])]);
            }
            if l.periodic[1] {
                (1..=l.n[0]).for_each(|i| self.v_hat[l.at([i, 0])] = self.v_hat[l.at([i, l.n[1]])]);
            }
            pressure_correction::assemble(
                &l,
                spacing,
                self.cfg.flow.density,
                &self.du,
                &self.dv,
                &self.u_hat,
                &self.v_hat,
                &mut self.sys_p,
            );
            let st = self.solver_p.solve(
                &self.sys_p,
                &mut self.p,
                self.cfg.pressure_tolerance,
                self.cfg.pressure_iterations,
            );
            pressure_iterations += st.iterations;
            self.capped = CappedSolve::of_linear(&st, self.cfg.pressure_tolerance);
            remove_mean(&mut self.p);
            pressure_residual = st.reduction();
        }
        let mut momentum = [0.0; 2];
        let mut momentum_iterations = 0;
        for c in 0..2 {
            coefficients::add_pressure(&self.l, c, spacing, &self.p, &mut self.sys[c]);
            self.gather(c);
            let r1 = self.sys[c].residual_l1(&self.x[c], &mut self.partial[..self.sys[c].rows()]);
            // The relaxed system's residual at the current velocity equals the unrelaxed one;
            // norms are with the unrelaxed a_P, summed over both components.
            let norm = norms[0] + norms[1];
            momentum[c] = if norm > 0.0 {
                r1 / norm
            } else if r1 > 0.0 {
                1.0
            } else {
                0.0
            };
            let st = self.solvers[c].solve(
                &self.sys[c],
                &mut self.x[c],
                self.cfg.momentum_tolerance,
                self.cfg.momentum_iterations,
            );
            momentum_iterations += st.iterations;
            self.scatter(c, None);
        }
        self.boundaries();
        let (imbalance, flux) = pressure_correction::assemble(
            &self.l,
            spacing,
            self.cfg.flow.density,
            &self.du,
            &self.dv,
            &self.u,
            &self.v,
            &mut self.sys_p,
        );
        let mass = if flux > 0.0 { imbalance / flux } else { 0.0 };
        self.pc.iter_mut().for_each(|x| *x = 0.0);
        let st = self.solver_p.solve(
            &self.sys_p,
            &mut self.pc,
            self.cfg.pressure_tolerance,
            self.cfg.pressure_iterations,
        );
        pressure_iterations += st.iterations;
        self.capped = self
            .capped
            .or(CappedSolve::of_linear(&st, self.cfg.pressure_tolerance));
        if !self.cfg.algorithm.pseudo_velocities() {
            pressure_residual = st.reduction();
        }
        pressure_correction::correct_velocity(
            &self.l,
            &self.du,
            &self.dv,
            &self.pc,
            &mut self.u,
            &mut self.v,
        );
        if !self.cfg.algorithm.pseudo_velocities() {
            let a = self.cfg.alpha_p;
            self.p.iter_mut().zip(&self.pc).for_each(|(p, pc)| *p += a * pc);
            remove_mean(&mut self.p);
        }
        self.boundaries();
        self.steps += 1;
        let [um, vm] = self.l.max_face_speeds([&self.u, &self.v]);
        let max_velocity = um.max(vm);
        let worst = momentum[0].max(momentum[1]).max(mass);
        self.residuals.clear();
        self.residuals.extend_from_slice(&[
            ("steady_change", worst),
            ("momentum_u", momentum[0]),
            ("momentum_v", momentum[1]),
            ("mass", mass),
            ("momentum_iterations", momentum_iterations as f64),
            ("pressure_iterations", pressure_iterations as f64),
            ("pressure_residual", pressure_residual),
            ("max_velocity", max_velocity),
        ]);
        self.check_health(max_velocity)
    }

    fn check_health(&self, max_velocity: f64) -> Result<(), SolverError> {
        let finite = max_velocity.is_finite() && self.p.iter().all(|p| p.is_finite());
        if finite && max_velocity <= BLOW_UP_FACTOR * self.cfg.velocity_scale() {
            return Ok(());
        }
        Err(diverged(&self.cfg, self.steps, max_velocity, finite))
    }
}

/// The error of a run that diverged after `steps` outer iterations: the largest velocity
/// `max_velocity` over [`BLOW_UP_FACTOR`] times the problem's scale, or (`finite` false) a
/// velocity or pressure that is no longer finite; with the likely causes.
fn diverged(cfg: &SimpleConfig, steps: u64, max_velocity: f64, finite: bool) -> SolverError {
    let scale = cfg.velocity_scale();
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

/// The assembly constants of component `c`.
fn constants(cfg: &SimpleConfig, l: Layout<2>, c: usize) -> Constants<'_> {
    let g = &cfg.flow.grid;
    Constants {
        l,
        flow: &cfg.flow,
        spacing: [g.spacing[0], g.spacing[1]],
        density: cfg.flow.density,
        scheme: cfg.scheme,
        alpha: cfg.alpha_u,
        consistent: cfg.algorithm.consistent(),
        transpose: !cfg.viscosity.is_newtonian(),
        pseudo_dt: cfg.pseudo_dt,
        gradient: cfg.pressure_gradient[c],
    }
}

/// The linear solver of `kind` for systems of `shape` unknowns, decomposed as the case says.
fn linear_solver(
    cfg: &SimpleConfig,
    kind: LinearSolverKind,
    shape: [usize; 2],
    periodic: [bool; 2],
) -> Schwarz<f64, 2> {
    Schwarz::new(kind, shape, cfg.subdomains, cfg.overlap, periodic)
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

fn remove_mean(p: &mut [f64]) {
    let mean = p.iter().sum::<f64>() / p.len() as f64;
    p.iter_mut().for_each(|x| *x -= mean);
}

impl Solver for Simple {
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
        FIELDS
    }

    /// Takes over another solver's flow (e.g. a projection run's, or a coarser SIMPLE run's):
    /// u and v sampled on this grid's faces, the pressure at its centres; the outer iterations
    /// then go on from it.
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
        self.steps = from.steps();
        self.boundaries();
        self.update_viscosity();
        Ok(())
    }

    /// The ghosted velocities, the pressure and the viscosities (what the next outer iteration
    /// starts from) and the iteration count.
    fn snapshot(&self) -> Result<Snapshot, SolverError> {
        let mut s = Snapshot::new(&self.info(), self.time(), self.steps, self.dt());
        for (name, a) in STATE
            .iter()
            .zip([&self.u, &self.v, &self.p, &self.mu_c, &self.mu_n])
        {
            s.put(name, a);
        }
        Ok(s)
    }

    fn restore(&mut self, state: &Snapshot) -> Result<(), Invalid> {
        state.check(&self.info())?;
        let mut next = [&self.u, &self.v, &self.p, &self.mu_c, &self.mu_n].map(|a| a.clone());
        for (name, a) in STATE.iter().zip(&mut next) {
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
        let l = self.l;
        out.clear();
        out.extend(
            (1..=l.n[1])
                .flat_map(|j| (1..=l.n[0]).map(move |i| l.at([i, j])))
                .map(|k| self.mu_c[k]),
        );
        Some(())
    }

    fn sample(&self, name: &str, point: [f64; 3]) -> Option<f64> {
        if name != "viscosity" {
            return self.view().sample(name, point);
        }
        let g = &self.cfg.flow.grid;
        let l = self.l;
        let i = (((point[0] - g.origin[0]) / g.spacing[0]).floor() as isize).clamp(0, l.n[0] as isize - 1)
            as usize;
        let j = (((point[1] - g.origin[1]) / g.spacing[1]).floor() as isize).clamp(0, l.n[1] as isize - 1)
            as usize;
        Some(self.mu_c[l.at([i + 1, j + 1])])
    }

    fn update(&mut self, spec: &CaseSpec) -> Result<(), Invalid> {
        let cfg = SimpleConfig::from_spec(spec)?;
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
            for c in 0..2 {
                let sys = &self.sys[c];
                self.solvers[c] = linear_solver(&cfg, cfg.momentum_solver, sys.n, sys.periodic);
            }
        }
        if split || cfg.pressure_solver != self.cfg.pressure_solver {
            let sys = &self.sys_p;
            self.solver_p = linear_solver(&cfg, cfg.pressure_solver, sys.n, sys.periodic);
        }
        let newtonian_change = cfg.viscosity != self.cfg.viscosity;
        self.cfg = cfg;
        if newtonian_change {
            let mu = self.cfg.viscosity.mu(0.0);
            self.mu_c.iter_mut().for_each(|m| *m = mu);
            self.mu_n.iter_mut().for_each(|m| *m = mu);
            self.update_viscosity();
        }
        Ok(())
    }

    fn capped_pressure_solve(&self) -> Option<CappedSolve> {
        self.capped
    }

    fn summary(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = self.view().summary();
        if let Viscosity::Newtonian { mu } = self.cfg.viscosity {
            m.insert("viscosity".into(), (mu / self.cfg.flow.density).into());
            m.insert("reynolds".into(), (self.cfg.flow.density / mu).into());
        }
        m.insert("outer_iterations".into(), self.steps.into());
        m
    }
}
