//! SIMPLE and SIMPLER on the GPU: the outer iteration of [`super::Simple`], step for step, with
//! all state in device memory (`kernels/simple.cu` for the assembly and corrections, the ghost
//! kernels of `kernels/projection.cu`, the mean and vector kernels of `kernels/poisson.cu`, and
//! the linear solvers of [`crate::solver::linear::cuda`], whose ADI sweeps solve each line by
//! parallel cyclic reduction, one block per line, as in Lohry 2010 ch. 3-4).
//!
//! Per outer iteration the host waits once per linear solve (for its done flag and statistics,
//! more often only for long solves: see the linear solvers) and once at the end for a block of
//! scalars: the momentum residual sums and norms, the mass imbalance and flux, the largest
//! velocity and the pressure sum (finite or not). In f64 the element-wise arithmetic rounds as
//! the CPU's; sums and the line solves (PCR instead of Thomas) round differently, so the two
//! backends agree to the solver tolerance's propagation of a few ulps (tests/cuda_simple.rs).
//!
//! Overlapping Schwarz decomposition (`solver.linear_solver.subdomains` > 1) is a CPU study
//! (Lohry's iteration counts versus subdomains) and is refused here with its key.
//!
//! Fields come back through [`Readback`] (derived on the device by [`StaggeredDisplay`]); point
//! samples, the summary and [`Solver::load_state`] from this solver read the state into a CPU
//! [`Simple`] mirror, none of them per frame.

use super::viscosity::Viscosity;
use super::{FIELDS, Simple, SimpleConfig, coefficients};
use crate::backend::cuda::{Args, CudaError, DevBuf, Gpu, KernelSet, Module, Pinned, Readback, limiter_code};
use crate::case::{Boundary, CaseSpec, Invalid, Side};
use crate::solver::incompressible::config::BLOW_UP_FACTOR;
use crate::solver::incompressible::cuda::{boundary_codes, err, fill_ghosts};
use crate::solver::incompressible::device_fields::{StaggeredDisplay, StaggeredState};
use crate::solver::incompressible::staggered::{Layout, side_velocity};
use crate::solver::linear::cuda::{DeviceLinearSolver, DeviceSystem};
use crate::solver::{CappedSolve, Snapshot, Solver, SolverError, SolverInfo, check_transfer};
use std::sync::{Arc, Mutex};

const B1: u32 = 256;
const BX: u32 = 16;
const BY: u32 = 16;

// Slots of the scalar block (kernels/simple.cu, common.cuh).
const SC_LEN: usize = 16;
const S_RES: [usize; 2] = [8, 9];
const S_NORM: [usize; 2] = [10, 11];
const S_IMBALANCE: usize = 12;
const S_FLUX: usize = 13;
const S_VMAX: usize = 14;
const S_PSUM: usize = 15;

/// `a` followed by the layout's shape arguments `nx, ny, periodic_x, periodic_y` (kernels/simple.cu).
fn layout(a: Args, l: &Layout<2>) -> Args {
    a.i(l.n[0] as i64)
        .i(l.n[1] as i64)
        .i(l.periodic[0] as i64)
        .i(l.periodic[1] as i64)
}

fn grid1(n: usize) -> (u32, u32, u32) {
    ((n as u32).div_ceil(B1).max(1), 1, 1)
}

fn grid2(ni: usize, nj: usize) -> (u32, u32, u32) {
    ((ni as u32).div_ceil(BX), (nj as u32).div_ceil(BY), 1)
}

/// Why a SIMPLE case cannot run on the CUDA backend (the key and a message), if it cannot.
pub fn unsupported(cfg: &SimpleConfig) -> Option<Invalid> {
    if cfg.subdomains > 1 {
        return Some(Invalid::new(
            "solver.linear_solver.subdomains",
            "overlapping Schwarz subdomains run on the CPU backend only; use subdomains = 1 or backend = \"cpu\"",
        ));
    }
    None
}

/// The CPU mirror of the device state, refreshed when stale.
struct Mirror {
    cpu: Simple,
    stale: bool,
}

pub struct CudaSimple {
    gpu: Arc<Gpu>,
    /// kernels/simple.cu, projection.cu (ghosts), poisson.cu (means).
    ms: Module,
    mp: Module,
    mq: Module,
    cfg: SimpleConfig,
    l: Layout<2>,
    /// Ghosted staggered velocities, pressure, viscosities, momentum `d`, SIMPLER's
    /// pseudo-velocities (as [`Simple`]).
    u: DevBuf<f64>,
    v: DevBuf<f64>,
    p: DevBuf<f64>,
    mu_c: DevBuf<f64>,
    mu_n: DevBuf<f64>,
    du: DevBuf<f64>,
    dv: DevBuf<f64>,
    u_hat: DevBuf<f64>,
    v_hat: DevBuf<f64>,
    /// Pressure correction, unknown vectors of u and v, pseudo-velocity scratch.
    pc: DevBuf<f64>,
    x: [DevBuf<f64>; 2],
    hat: DevBuf<f64>,
    sys: [DeviceSystem; 2],
    sys_p: DeviceSystem,
    solvers: [DeviceLinearSolver; 2],
    solver_p: DeviceLinearSolver,
    partial: DevBuf<f64>,
    sc: DevBuf<f64>,
    sc_host: Pinned<f64>,
    bck: DevBuf<i32>,
    bcv: DevBuf<f64>,
    steps: u64,
    residuals: Vec<(&'static str, f64)>,
    /// The last outer iteration's first pressure(-correction) solve that stopped at its cap.
    capped: Option<CappedSolve>,
    display: StaggeredDisplay,
    readback: Mutex<Readback<f64>>,
    mirror: Mutex<Mirror>,
}

impl CudaSimple {
    pub fn new(cfg: SimpleConfig) -> Result<Self, CudaError> {
        let gpu = Gpu::new()?;
        // The CPU solver's initial state (boundaries and viscosity applied) is the start.
        let mut cpu = Simple::new(cfg.clone());
        let l = Layout::new([cfg.flow.grid.n[0], cfg.flow.grid.n[1]], &cfg.flow.bc);
        let (nx, ny) = (l.n[0], l.n[1]);
        let n = l.len();
        let periodic = [l.periodic[0], l.periodic[1]];
        let dims = |c| {
            let (a, b) = coefficients::unknowns(&l, c);
            (a.count(), b.count())
        };
        let ((ui, uj), (vi, vj)) = (dims(0), dims(1));
        let buf = |data: &Vec<f64>| -> Result<DevBuf<f64>, CudaError> {
            let b = gpu.alloc(data.len())?;
            gpu.upload(&b, data)?;
            Ok(b)
        };
        let [u, v, p, mu_c, mu_n] = cpu.state_mut().map(|a| a.clone());
        let solver = |kind, ni, nj| DeviceLinearSolver::new(&gpu, kind, ni, nj);
        let (bck, bcv) = boundary_codes::<f64>(&gpu, &cfg.flow.bc)?;
        let parts = 3 * grid1(n).0 as usize + 16;
        let s = Self {
            ms: gpu.module(KernelSet::Simple, "f64")?,
            mp: gpu.module(KernelSet::Projection, "f64")?,
            mq: gpu.module(KernelSet::Poisson, "f64")?,
            u: buf(&u)?,
            v: buf(&v)?,
            p: buf(&p)?,
            mu_c: buf(&mu_c)?,
            mu_n: buf(&mu_n)?,
            du: gpu.alloc_zeros(n)?,
            dv: gpu.alloc_zeros(n)?,
            u_hat: gpu.alloc_zeros(n)?,
            v_hat: gpu.alloc_zeros(n)?,
            pc: gpu.alloc_zeros(nx * ny)?,
            x: [gpu.alloc_zeros(ui * uj)?, gpu.alloc_zeros(vi * vj)?],
            hat: gpu.alloc_zeros((ui * uj).max(vi * vj))?,
            sys: [
                DeviceSystem::new(&gpu, ui, uj, periodic)?,
                DeviceSystem::new(&gpu, vi, vj, periodic)?,
            ],
            sys_p: DeviceSystem::new(&gpu, nx, ny, periodic)?,
            solvers: [
                solver(cfg.momentum_solver, ui, uj)?,
                solver(cfg.momentum_solver, vi, vj)?,
            ],
            solver_p: solver(cfg.pressure_solver, nx, ny)?,
            partial: gpu.alloc_zeros(parts)?,
            sc: gpu.alloc_zeros(SC_LEN)?,
            sc_host: gpu.pinned(SC_LEN)?,
            bck,
            bcv,
            steps: 0,
            residuals: Vec::with_capacity(8),
            capped: None,
            display: StaggeredDisplay::new(&gpu, "f64", 2)?,
            readback: Mutex::new(Readback::new(&gpu, nx * ny)),
            mirror: Mutex::new(Mirror { cpu, stale: false }),
            l,
            cfg,
            gpu,
        };
        Ok(s)
    }

    pub fn config(&self) -> &SimpleConfig {
        &self.cfg
    }

    /// Field `name` derived on the host from the whole state read back into the CPU mirror: the
    /// reference the device derivation is tested against.
    pub fn host_field(&self, name: &str, out: &mut Vec<f64>) -> Option<()> {
        self.with_mirror(|m| m.field(name, out))?
    }

    fn launch(
        &self,
        m: &Module,
        name: &'static str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        a: Args,
    ) -> Result<(), CudaError> {
        let f = m.function(name)?;
        // SAFETY: every call site passes the arguments of the named kernel of kernels/simple.cu,
        // projection.cu or poisson.cu in order, with buffers allocated for this solver's grid.
        unsafe { self.gpu.launch(f, grid, block, &a) }
    }

    fn ks(
        &self,
        name: &'static str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        a: Args,
    ) -> Result<(), CudaError> {
        self.launch(&self.ms, name, grid, block, a)
    }

    /// One block's finalize kernel of simple.cu.
    fn one(&self, name: &'static str, a: Args) -> Result<(), CudaError> {
        self.ks(name, (1, 1, 1), (1024, 1, 1), a)
    }

    fn sum_into(&self, partial: &DevBuf<f64>, nb: usize, slot: usize) -> Result<(), CudaError> {
        self.one(
            "sum_into",
            Args::new().p(partial).i(nb as i64).p(&self.sc).i(slot as i64),
        )
    }

    /// Viscosity at the centres and corners from the current shear rate (non-Newtonian fluids).
    fn update_viscosity(&self) -> Result<(), CudaError> {
        let (model, m) = match self.cfg.viscosity {
            Viscosity::Newtonian { .. } => return Ok(()),
            Viscosity::PowerLaw { k, n } => (1, [k, n, 0.0, 0.0]),
            Viscosity::Carreau {
                mu0,
                mu_inf,
                lambda,
                n,
            } => (2, [mu0, mu_inf, lambda, n]),
        };
        let (nx, ny) = (self.l.n[0], self.l.n[1]);
        let [dx, dy, _] = self.cfg.flow.grid.spacing;
        self.ks(
            "simple_viscosity",
            grid2(nx + 1, ny + 1),
            (BX, BY, 1),
            Args::new()
                .p(&self.u)
                .p(&self.v)
                .p(&self.mu_c)
                .p(&self.mu_n)
                .i(nx as i64)
                .i(ny as i64)
                .r(dx)
                .r(dy)
                .i(model)
                .r(m[0])
                .r(m[1])
                .r(m[2])
                .r(m[3]),
        )?;
        self.ks(
            "simple_viscosity_ghosts",
            grid2(nx + 2, ny + 2),
            (BX, BY, 1),
            Args::new()
                .p(&self.mu_c)
                .i(nx as i64)
                .i(ny as i64)
                .i(self.l.periodic[0] as i64)
                .i(self.l.periodic[1] as i64),
        )
    }

    /// Momentum coefficients of component `c` and their norm into the scalar block.
    fn assemble(&self, c: usize) -> Result<(), CudaError> {
        let l = self.l;
        let cfg = &self.cfg;
        let [dx, dy, _] = cfg.flow.grid.spacing;
        let (h_along, h_across) = if c == 0 { (dx, dy) } else { (dy, dx) };
        let lim = match cfg.scheme {
            super::Scheme::PowerLaw => -1,
            super::Scheme::Deferred(lim) => limiter_code(lim),
        };
        let (side_plus, side_minus) = if c == 0 { (3, 2) } else { (1, 0) };
        let tangential =
            |side: usize| side_velocity(cfg.flow.side(side), Side::ALL[side]).map_or((0, 0.0), |v| (1, v[c]));
        let ((tp, wp), (tm, wm)) = (tangential(side_plus), tangential(side_minus));
        let ap0 = cfg.flow.density * dx * dy / cfg.pseudo_dt;
        let b0 = -cfg.pressure_gradient[c] * h_along * h_across;
        let sys = &self.sys[c];
        let (q, o, d) = if c == 0 {
            (&self.u, &self.v, &self.du)
        } else {
            (&self.v, &self.u, &self.dv)
        };
        self.ks(
            "momentum_assemble",
            grid1(sys.len()),
            (B1, 1, 1),
            layout(
                Args::new()
                    .p(q)
                    .p(o)
                    .p(&self.mu_c)
                    .p(&self.mu_n)
                    .p(&sys.buf)
                    .p(d)
                    .p(&self.partial)
                    .i(c as i64),
                &l,
            )
            .i(sys.ni as i64)
            .i(sys.nj as i64)
            .i(lim)
            .i(tp)
            .r(wp)
            .i(tm)
            .r(wm)
            .r(h_along)
            .r(h_across)
            .r(cfg.flow.density)
            .r(cfg.alpha_u)
            .i(cfg.algorithm.consistent() as i64)
            .i(!cfg.viscosity.is_newtonian() as i64)
            .r(ap0)
            .r(b0),
        )?;
        self.sum_into(&self.partial, grid1(sys.len()).0 as usize, S_NORM[c])
    }

    /// Copies component `c`'s unknowns from the ghosted array `q` into `x` (or back).
    fn unknowns(&self, c: usize, q: &DevBuf<f64>, x: &DevBuf<f64>, to_x: bool) -> Result<(), CudaError> {
        let sys = &self.sys[c];
        self.ks(
            "unknowns_copy",
            grid1(sys.len()),
            (B1, 1, 1),
            Args::new()
                .p(q)
                .p(x)
                .i(self.l.n[0] as i64)
                .i(sys.ni as i64)
                .i(sys.nj as i64)
                .i(to_x as i64),
        )
    }

    /// The pressure(-correction) system from the face `d`s and the velocities `u`, `v`, its
    /// right-hand side shifted to zero mean; the imbalance and flux sums into the scalar block.
    fn assemble_pressure(&self, u: &DevBuf<f64>, v: &DevBuf<f64>) -> Result<(), CudaError> {
        let l = self.l;
        let [dx, dy, _] = self.cfg.flow.grid.spacing;
        let rho = self.cfg.flow.density;
        let n = l.n[0] * l.n[1];
        let nb = grid1(n).0 as usize;
        self.ks(
            "pressure_assemble",
            grid1(n),
            (B1, 1, 1),
            layout(
                Args::new()
                    .p(&self.du)
                    .p(&self.dv)
                    .p(u)
                    .p(v)
                    .p(&self.sys_p.buf)
                    .p(&self.partial),
                &l,
            )
            .r(rho * dy)
            .r(rho * dx),
        )?;
        self.one(
            "mass_finalize",
            Args::new().p(&self.partial).i(nb as i64).p(&self.sc).r(n as f64),
        )?;
        // b -= mean(b): the right-hand side is the sixth array of the system.
        self.launch(
            &self.mq,
            "subtract_mean",
            grid1(n),
            (B1, 1, 1),
            Args::new()
                .l((self.sys_p.buf.ptr + (5 * n * 8) as u64) as i64)
                .p(&self.sc)
                .null()
                .i(n as i64),
        )
    }

    /// `p -= mean(p)`; the sum of `p` before it goes to `S_PSUM` (finite or not: the health
    /// check's pressure test). Each method changes `p` last right before this.
    fn remove_mean(&self) -> Result<(), CudaError> {
        let n = self.l.n[0] * self.l.n[1];
        let nb = grid1(n).0 as usize;
        self.launch(
            &self.mq,
            "sum_partial",
            grid1(n),
            (B1, 1, 1),
            Args::new().p(&self.p).p(&self.partial).null().i(n as i64),
        )?;
        self.sum_into(&self.partial, nb, S_PSUM)?;
        self.launch(
            &self.mq,
            "finalize_mean",
            (1, 1, 1),
            (1024, 1, 1),
            Args::new()
                .p(&self.partial)
                .i(nb as i64)
                .p(&self.sc)
                .null()
                .r(n as f64),
        )?;
        self.launch(
            &self.mq,
            "subtract_mean",
            grid1(n),
            (B1, 1, 1),
            Args::new().p(&self.p).p(&self.sc).null().i(n as i64),
        )
    }

    /// Ghosts, the outflow faces with the mass-flow correction, the quadratic wall rule
    /// ([`Simple`]'s `boundaries`).
    fn boundaries(&self) -> Result<(), CudaError> {
        let l = self.l;
        let (nx, ny) = (l.n[0] as i64, l.n[1] as i64);
        // No halt flag: SIMPLE checks its health on the host.
        fill_ghosts(
            &self.gpu,
            &self.mp,
            &l,
            [&self.u, &self.v],
            (&self.bck, &self.bcv),
            None,
        )?;
        let bc: [&Boundary; 4] = std::array::from_fn(|s| self.cfg.flow.side(s));
        if bc.contains(&&Boundary::Outflow {}) {
            let mut a = Args::new().p(&self.u).p(&self.v).i(nx).i(ny);
            for b in bc {
                a = a.i((*b == Boundary::Outflow {}) as i64);
            }
            for b in bc {
                a = a.i((*b == Boundary::Periodic {}) as i64);
            }
            let [dx, dy, _] = self.cfg.flow.grid.spacing;
            self.one("outflow_faces", a.r(dx).r(dy))?;
        }
        let wall =
            |side: usize| side_velocity(bc[side], Side::ALL[side]).map(|v| v[if side < 2 { 1 } else { 0 }]);
        let walls: [Option<f64>; 4] = std::array::from_fn(wall);
        if walls.iter().any(Option::is_some) {
            let mut a = Args::new().p(&self.u).p(&self.v).i(nx).i(ny);
            for w in walls {
                a = a.i(w.is_some() as i64);
            }
            for w in walls {
                a = a.r(w.unwrap_or(0.0));
            }
            self.ks("wall_rule", grid1(l.n[0].max(l.n[1]) + 1), (B1, 1, 1), a)?;
        }
        Ok(())
    }

    /// One outer iteration (as [`Simple`]'s `iterate`); returns the residual entries.
    fn iterate(&mut self) -> Result<[f64; 8], CudaError> {
        self.gpu.bind()?;
        self.update_viscosity()?;
        let l = self.l;
        let cfg = &self.cfg;
        let [dx, dy, _] = cfg.flow.grid.spacing;
        let simpler = cfg.algorithm.pseudo_velocities();
        let (p_tol, p_max) = (cfg.pressure_tolerance, cfg.pressure_iterations);
        let (m_tol, m_max) = (cfg.momentum_tolerance, cfg.momentum_iterations);
        let alpha_p = if simpler { 0.0 } else { cfg.alpha_p };
        for c in 0..2 {
            self.assemble(c)?;
        }
        let mut pressure_iterations = 0;
        let mut pressure_residual = 0.0;
        self.capped = None;
        if simpler {
            self.gpu.copy(&self.u_hat, &self.u)?;
            self.gpu.copy(&self.v_hat, &self.v)?;
            for c in 0..2 {
                let (q, q_hat) = if c == 0 {
                    (&self.u, &self.u_hat)
                } else {
                    (&self.v, &self.v_hat)
                };
                self.unknowns(c, q, &self.x[c], true)?;
                self.solvers[c].point_solution(&self.sys[c], &self.x[c], &self.hat)?;
                self.unknowns(c, q_hat, &self.hat, false)?;
            }
            self.ks(
                "hat_seams",
                grid1(l.n[0].max(l.n[1]) + 1),
                (B1, 1, 1),
                layout(Args::new().p(&self.u_hat).p(&self.v_hat), &l),
            )?;
            self.assemble_pressure(&self.u_hat, &self.v_hat)?;
            let st = self.solver_p.solve(&self.sys_p, &self.p, p_tol, p_max)?;
            pressure_iterations += st.iterations;
            self.capped = CappedSolve::of_linear(&st, p_tol);
            self.remove_mean()?;
            pressure_residual = st.reduction();
        }
        let mut momentum_iterations = 0;
        for c in 0..2 {
            let sys = &self.sys[c];
            self.ks(
                "add_pressure",
                grid1(sys.len()),
                (B1, 1, 1),
                Args::new()
                    .p(&self.p)
                    .p(&sys.buf)
                    .i(c as i64)
                    .i(l.n[0] as i64)
                    .i(l.n[1] as i64)
                    .i(sys.ni as i64)
                    .i(sys.nj as i64)
                    .r(if c == 0 { dy } else { dx }),
            )?;
            let q = if c == 0 { &self.u } else { &self.v };
            self.unknowns(c, q, &self.x[c], true)?;
            self.solvers[c].residual_l1(sys, &self.x[c], |partial, nb| {
                self.sum_into(partial, nb, S_RES[c])
            })?;
            let st = self.solvers[c].solve(sys, &self.x[c], m_tol, m_max)?;
            momentum_iterations += st.iterations;
            self.unknowns(c, q, &self.x[c], false)?;
        }
        self.boundaries()?;
        self.assemble_pressure(&self.u, &self.v)?;
        self.gpu.memset_zero(&self.pc)?;
        let st = self.solver_p.solve(&self.sys_p, &self.pc, p_tol, p_max)?;
        pressure_iterations += st.iterations;
        self.capped = self.capped.or(CappedSolve::of_linear(&st, p_tol));
        if !simpler {
            pressure_residual = st.reduction();
        }
        self.ks(
            "correct_velocity",
            grid2(l.n[0], l.n[1]),
            (BX, BY, 1),
            Args::new()
                .p(&self.du)
                .p(&self.dv)
                .p(&self.pc)
                .p(&self.u)
                .p(&self.v)
                .p(&self.p)
                .r(alpha_p)
                .i(l.n[0] as i64)
                .i(l.n[1] as i64),
        )?;
        if !simpler {
            self.remove_mean()?;
        }
        self.boundaries()?;
        self.one(
            "max_abs",
            layout(Args::new().p(&self.u).p(&self.v).p(&self.sc), &l),
        )?;
        self.gpu.download_async(&mut self.sc_host, &self.sc, SC_LEN)?;
        self.gpu.sync()?;
        let sc = self.sc_host.as_slice();
        let norm = sc[S_NORM[0]] + sc[S_NORM[1]];
        let momentum = S_RES.map(|slot| {
            let r1 = sc[slot];
            if norm > 0.0 {
                r1 / norm
            } else if r1 > 0.0 {
                1.0
            } else {
                0.0
            }
        });
        let flux = sc[S_FLUX];
        let mass = if flux > 0.0 { sc[S_IMBALANCE] / flux } else { 0.0 };
        Ok([
            momentum[0].max(momentum[1]).max(mass),
            momentum[0],
            momentum[1],
            mass,
            momentum_iterations as f64,
            pressure_iterations as f64,
            pressure_residual,
            sc[S_VMAX],
        ])
    }

    /// Refreshes the CPU mirror from the device when stale.
    fn with_mirror<R>(&self, f: impl FnOnce(&Simple) -> R) -> Option<R> {
        let mut m = self.mirror.lock().expect("mirror lock");
        if m.stale {
            let result = (|| -> Result<(), CudaError> {
                self.gpu.bind()?;
                let bufs = [&self.u, &self.v, &self.p, &self.mu_c, &self.mu_n];
                for (dst, src) in m.cpu.state_mut().into_iter().zip(bufs) {
                    let mut staging = self.gpu.pinned::<f64>(src.len)?;
                    self.gpu.download_async(&mut staging, src, src.len)?;
                    self.gpu.sync()?;
                    dst.copy_from_slice(staging.as_slice());
                }
                Ok(())
            })();
            if let Err(e) = result {
                log::error!("reading the SIMPLE state back from the GPU failed: {e}");
                return None;
            }
            m.cpu.set_steps(self.steps);
            m.stale = false;
        }
        Some(f(&m.cpu))
    }

    /// Makes `cpu`'s state and iteration count this solver's, `cpu` the fresh mirror.
    fn adopt(&mut self, mut cpu: Simple) -> Result<(), Invalid> {
        self.upload_from(&mut cpu)
            .map_err(|e| Invalid::new("solver.backend", format!("CUDA: {e}")))?;
        self.steps = cpu.steps();
        let mirror = self.mirror.get_mut().expect("mirror lock");
        mirror.cpu = cpu;
        mirror.stale = false;
        self.readback
            .get_mut()
            .expect("readback lock")
            .invalidate(self.steps);
        Ok(())
    }

    /// Uploads a CPU solver's state (`load_state`, a viscosity model change).
    fn upload_from(&self, cpu: &mut Simple) -> Result<(), CudaError> {
        let bufs = [&self.u, &self.v, &self.p, &self.mu_c, &self.mu_n];
        for (src, dst) in cpu.state_mut().into_iter().zip(bufs) {
            self.gpu.upload(dst, src)?;
        }
        Ok(())
    }

    fn derive(&self, name: &str, dst: &DevBuf<f64>) -> Result<(), CudaError> {
        let state = StaggeredState {
            vel: &[&self.u, &self.v],
            p: &self.p,
            p_scale: 1.0,
            viscosity: Some(&self.mu_c),
        };
        self.display
            .derive(&self.gpu, &self.cfg.flow.grid, FIELDS, &state, name, dst)
    }

    fn check_health(&self, max_velocity: f64, p_sum: f64) -> Result<(), SolverError> {
        let scale = self.cfg.velocity_scale();
        let finite = max_velocity.is_finite() && p_sum.is_finite();
        if finite && max_velocity <= BLOW_UP_FACTOR * scale {
            return Ok(());
        }
        Err(super::diverged(&self.cfg, self.steps, max_velocity, finite))
    }
}

impl Solver for CudaSimple {
    fn info(&self) -> SolverInfo {
        super::solver_info(&self.cfg, "cuda")
    }

    /// 0, as [`Simple`]'s: no physical time.
    fn time(&self) -> f64 {
        0.0
    }

    fn steps(&self) -> u64 {
        self.steps
    }

    fn step(&mut self) -> Result<(), SolverError> {
        self.readback
            .get_mut()
            .expect("readback lock")
            .invalidate(self.steps + 1);
        self.mirror.get_mut().expect("mirror lock").stale = true;
        let r = self.iterate().map_err(err(self.steps, 0.0))?;
        self.steps += 1;
        let names = [
            "steady_change",
            "momentum_u",
            "momentum_v",
            "mass",
            "momentum_iterations",
            "pressure_iterations",
            "pressure_residual",
            "max_velocity",
        ];
        self.residuals.clear();
        self.residuals.extend(names.into_iter().zip(r));
        let p_sum = self.sc_host.as_slice()[S_PSUM];
        self.check_health(r[7], p_sum)
    }

    fn dt(&self) -> f64 {
        0.0
    }

    fn set_dt_cap(&mut self, _cap: f64) {}

    fn residuals(&self) -> &[(&'static str, f64)] {
        &self.residuals
    }

    fn field_names(&self) -> &'static [&'static str] {
        FIELDS
    }

    fn field(&self, name: &str, out: &mut Vec<f64>) -> Option<()> {
        let mut r = self.readback.lock().expect("readback lock");
        r.solver_field(FIELDS, name, |n, dst| self.derive(n, dst), out)
    }

    fn prefetch(&self, names: &[&str]) {
        let mut r = self.readback.lock().expect("readback lock");
        r.solver_prefetch(FIELDS, names, |n, dst| self.derive(n, dst));
    }

    fn display_fields(&self, names: &[&str], out: &mut [Vec<f64>]) -> Option<u64> {
        let mut r = self.readback.lock().expect("readback lock");
        r.solver_display(FIELDS, names, |n, dst| self.derive(n, dst), out)
    }

    fn sample(&self, name: &str, point: [f64; 3]) -> Option<f64> {
        self.with_mirror(|m| m.sample(name, point))?
    }

    /// The settings [`Simple::update`] takes live; a change of the linear solver kinds rebuilds
    /// their device workspaces, a change of the viscosity model restarts the viscosity field.
    fn update(&mut self, spec: &CaseSpec) -> Result<(), Invalid> {
        let cfg = SimpleConfig::from_spec(spec)?;
        if let Some(e) = unsupported(&cfg) {
            return Err(e);
        }
        let device = |e: CudaError| Invalid::new("solver.backend", format!("CUDA: {e}"));
        // The refreshed mirror checks the change and takes it (a new viscosity model restarts
        // its viscosity field from the current velocity).
        self.with_mirror(|_| ())
            .ok_or_else(|| Invalid::new("solver.backend", "CUDA: the state could not be read back"))?;
        self.mirror.get_mut().expect("mirror lock").cpu.update(spec)?;
        let rebuild = |kind, sys: &DeviceSystem| DeviceLinearSolver::new(&self.gpu, kind, sys.ni, sys.nj);
        if cfg.momentum_solver != self.cfg.momentum_solver {
            let s = [
                rebuild(cfg.momentum_solver, &self.sys[0]).map_err(device)?,
                rebuild(cfg.momentum_solver, &self.sys[1]).map_err(device)?,
            ];
            self.solvers = s;
        }
        if cfg.pressure_solver != self.cfg.pressure_solver {
            self.solver_p = rebuild(cfg.pressure_solver, &self.sys_p).map_err(device)?;
        }
        let viscosity_change = cfg.viscosity != self.cfg.viscosity;
        self.cfg = cfg;
        if viscosity_change {
            let mut m = self.mirror.lock().expect("mirror lock");
            self.upload_from(&mut m.cpu).map_err(device)?;
            drop(m);
            self.readback
                .get_mut()
                .expect("readback lock")
                .invalidate(self.steps);
        }
        Ok(())
    }

    fn capped_pressure_solve(&self) -> Option<CappedSolve> {
        self.capped
    }

    fn summary(&self) -> serde_json::Map<String, serde_json::Value> {
        self.with_mirror(|m| m.summary()).unwrap_or_default()
    }

    /// Takes over another solver's flow, as [`Simple::load_state`] (sampled on this grid by the
    /// CPU solver, then uploaded).
    fn load_state(&mut self, from: &dyn Solver) -> Result<(), Invalid> {
        check_transfer(&self.info(), &from.info())?;
        let mut cpu = Simple::new(self.cfg.clone());
        cpu.load_state(from)?;
        self.adopt(cpu)
    }

    fn snapshot(&self) -> Result<Snapshot, SolverError> {
        self.with_mirror(|m| m.snapshot())
            .ok_or_else(|| SolverError::Device {
                step: self.steps,
                time: self.steps as f64,
                message: "reading the state back from the GPU failed".into(),
            })?
    }

    fn restore(&mut self, state: &Snapshot) -> Result<(), Invalid> {
        let mut cpu = Simple::new(self.cfg.clone());
        cpu.restore(state)?;
        self.adopt(cpu)
    }
}
