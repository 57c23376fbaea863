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
use super::{Simple, SimpleConfig, coefficients, fields};
use crate::backend::cuda::{
    Arg, Args, CudaError, DevBuf, Gpu, HostMirror, KernelSet, Launch, Module, Readback, Scalars,
    limiter_code, slots,
};
use crate::case::{Boundary, CaseSpec, Invalid, Side};
use crate::solver::incompressible::config::BLOW_UP_FACTOR;
use crate::solver::incompressible::cuda::{boundary_codes, err, fill_ghosts};
use crate::solver::incompressible::device_fields::{StaggeredDisplay, StaggeredState};
use crate::solver::incompressible::staggered::{Layout, side_velocity};
use crate::solver::linear::cuda::{DeviceLinearSolver, DeviceSystem};
use crate::solver::{CappedSolve, Snapshot, Solver, SolverError, SolverInfo, check_transfer};
use std::sync::{Arc, Mutex};

mod launches;
use launches::{Buffers, Launches};

const B1: u32 = 256;
const BX: u32 = 16;
const BY: u32 = 16;

use slots::{S_FLUX, S_IMBALANCE, S_PSUM, S_VMAX, SC_LEN};
/// The momentum residual and norm slots of u and v.
const S_RES: [usize; 2] = [slots::S_RES_U, slots::S_RES_V];
const S_NORM: [usize; 2] = [slots::S_NORM_U, slots::S_NORM_V];

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
    if cfg.flow.grid.dim == 3 {
        return Some(Invalid::new(
            "case.dim",
            "SIMPLE, SIMPLEC and SIMPLER in 3D run on the CPU backend (their CUDA kernels are 2D); \
             use backend = \"cpu\" or \"auto\"",
        ));
    }
    if cfg.subdomains > 1 {
        return Some(Invalid::new(
            "solver.linear_solver.subdomains",
            "overlapping Schwarz subdomains run on the CPU backend only; use subdomains = 1 or backend = \"cpu\"",
        ));
    }
    None
}

pub struct CudaSimple {
    gpu: Arc<Gpu>,
    /// kernels/simple.cu, projection.cu (ghosts), poisson.cu (means).
    ms: Module,
    mp: Module,
    mq: Module,
    cfg: SimpleConfig,
    l: Layout<2>,
    b: Buffers,
    k: Launches,
    solvers: [DeviceLinearSolver; 2],
    solver_p: DeviceLinearSolver,
    bck: DevBuf<i32>,
    bcv: DevBuf<f64>,
    steps: u64,
    residuals: Vec<(&'static str, f64)>,
    /// The last outer iteration's first pressure(-correction) solve that stopped at its cap.
    capped: Option<CappedSolve>,
    display: StaggeredDisplay,
    readback: Mutex<Readback<f64>>,
    mirror: Mutex<HostMirror<Simple<2>, f64>>,
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
        let ([ui, uj], [vi, vj]) = (coefficients::shape(&l, 0), coefficients::shape(&l, 1));
        let buf = |data: &Vec<f64>| -> Result<DevBuf<f64>, CudaError> {
            let b = gpu.alloc(data.len())?;
            gpu.upload(&b, data)?;
            Ok(b)
        };
        let [u, v, p, mu_c, mu_n]: [Vec<f64>; 5] = cpu
            .state_mut()
            .into_iter()
            .map(|a| a.clone())
            .collect::<Vec<_>>()
            .try_into()
            .expect("a 2D SIMPLE state has five arrays");
        let solver = |kind, ni, nj| DeviceLinearSolver::new(&gpu, kind, [ni, nj]);
        let (bck, bcv) = boundary_codes::<f64>(&gpu, &cfg.flow.bc)?;
        let parts = 3 * grid1(n).0 as usize + 16;
        let b = Buffers {
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
                DeviceSystem::new(&gpu, [ui, uj], periodic)?,
                DeviceSystem::new(&gpu, [vi, vj], periodic)?,
            ],
            sys_p: DeviceSystem::new(&gpu, [nx, ny], periodic)?,
            partial: gpu.alloc_zeros(parts)?,
            sc: Scalars::new(&gpu, SC_LEN)?,
        };
        let (ms, mq) = (
            gpu.module(KernelSet::Simple, "f64")?,
            gpu.module(KernelSet::Poisson, "f64")?,
        );
        let s = Self {
            k: Launches::new(&ms, &mq, &cfg, &l, &b)?,
            b,
            ms,
            mp: gpu.module(KernelSet::Projection, "f64")?,
            mq,
            solvers: [
                solver(cfg.momentum_solver, ui, uj)?,
                solver(cfg.momentum_solver, vi, vj)?,
            ],
            solver_p: solver(cfg.pressure_solver, nx, ny)?,
            bck,
            bcv,
            steps: 0,
            residuals: Vec::with_capacity(8),
            capped: None,
            display: StaggeredDisplay::new(&gpu, "f64", 2)?,
            readback: Mutex::new(Readback::new(&gpu, nx * ny)),
            mirror: Mutex::new(HostMirror::new(cpu)),
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

    /// `sum_into` of `kernels/simple.cu`: the `nb` block partials of `partial` summed into
    /// `sc[slot]`.
    fn sum_into(&self, partial: &DevBuf<f64>, nb: usize, slot: usize) -> Result<(), CudaError> {
        let a = Args::new()
            .p(partial)
            .i(nb as i64)
            .p(&self.b.sc.dev)
            .i(slot as i64);
        // SAFETY: sum_into's arguments in order; `partial` holds `nb` partial sums.
        unsafe { self.ms.launch("sum_into", (1, 1, 1), (1024, 1, 1), &a) }
    }

    /// The pressure(-correction) system from the face `d`s and the velocities (`hat` 0) or the
    /// pseudo-velocities (`hat` 1), its right-hand side shifted to zero mean; the imbalance and
    /// flux sums into the scalar block.
    fn assemble_pressure(&self, hat: usize) -> Result<(), CudaError> {
        self.k.pressure[hat].run(&self.gpu)?;
        self.k.mass.run(&self.gpu)?;
        self.k.rhs_mean.run(&self.gpu)
    }

    /// `p -= mean(p)`; the sum of `p` before it goes to `S_PSUM` (finite or not: the health
    /// check's pressure test). Each method changes `p` last right before this.
    fn remove_mean(&self) -> Result<(), CudaError> {
        self.k.remove_mean.iter().try_for_each(|k| k.run(&self.gpu))
    }

    /// Ghosts, the outflow faces with the mass-flow correction, the quadratic wall rule
    /// ([`Simple`]'s `boundaries`).
    fn boundaries(&self) -> Result<(), CudaError> {
        let l = self.l;
        // No halt flag: SIMPLE checks its health on the host.
        fill_ghosts(
            &self.gpu,
            &self.mp,
            &l,
            [&self.b.u, &self.b.v],
            (&self.bck, &self.bcv),
            None,
        )?;
        self.k
            .outflow
            .iter()
            .chain(&self.k.wall_rule)
            .try_for_each(|k| k.run(&self.gpu))
    }

    /// One outer iteration (as [`Simple`]'s `iterate`); returns the residual entries.
    fn iterate(&mut self) -> Result<[f64; 8], CudaError> {
        self.gpu.bind()?;
        let gpu = &self.gpu;
        let k = &self.k;
        k.viscosity.iter().try_for_each(|v| v.run(gpu))?;
        let cfg = &self.cfg;
        let simpler = cfg.algorithm.pseudo_velocities();
        let (p_tol, p_max) = (cfg.pressure_tolerance, cfg.pressure_iterations);
        let (m_tol, m_max) = (cfg.momentum_tolerance, cfg.momentum_iterations);
        for assemble in k.assemble.iter().flatten() {
            assemble.run(gpu)?;
        }
        let mut pressure_iterations = 0;
        let mut pressure_residual = 0.0;
        self.capped = None;
        if simpler {
            self.gpu.copy(&self.b.u_hat, &self.b.u)?;
            self.gpu.copy(&self.b.v_hat, &self.b.v)?;
            for c in 0..2 {
                k.to_x[c].run(gpu)?;
                self.solvers[c].point_solution(&self.b.sys[c], &self.b.x[c], &self.b.hat)?;
                k.from_hat[c].run(gpu)?;
            }
            k.hat_seams.run(gpu)?;
            self.assemble_pressure(1)?;
            let st = self.solver_p.solve(&self.b.sys_p, &self.b.p, p_tol, p_max)?;
            pressure_iterations += st.iterations;
            self.capped = CappedSolve::of_linear(&st, p_tol);
            self.remove_mean()?;
            pressure_residual = st.reduction();
        }
        let mut momentum_iterations = 0;
        for c in 0..2 {
            let sys = &self.b.sys[c];
            self.k.add_pressure[c].run(&self.gpu)?;
            self.k.to_x[c].run(&self.gpu)?;
            self.solvers[c].residual_l1(sys, &self.b.x[c], |partial, nb| {
                self.sum_into(partial, nb, S_RES[c])
            })?;
            let st = self.solvers[c].solve(sys, &self.b.x[c], m_tol, m_max)?;
            momentum_iterations += st.iterations;
            self.k.from_x[c].run(&self.gpu)?;
        }
        self.boundaries()?;
        self.assemble_pressure(0)?;
        self.gpu.memset_zero(&self.b.pc)?;
        let st = self.solver_p.solve(&self.b.sys_p, &self.b.pc, p_tol, p_max)?;
        pressure_iterations += st.iterations;
        self.capped = self.capped.or(CappedSolve::of_linear(&st, p_tol));
        if !simpler {
            pressure_residual = st.reduction();
        }
        self.k.correct.run(&self.gpu)?;
        if !simpler {
            self.remove_mean()?;
        }
        self.boundaries()?;
        self.k.max_abs.run(&self.gpu)?;
        let sc = self.b.sc.read()?;
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
    fn with_mirror<R>(&self, f: impl FnOnce(&Simple<2>) -> R) -> Option<R> {
        let mut m = self.mirror.lock().expect("mirror lock");
        let cpu = m.fresh(&self.gpu, |cpu, stage| {
            for (dst, src) in cpu.state_mut().into_iter().zip(self.state()) {
                dst.copy_from_slice(stage.read(src)?);
            }
            cpu.set_steps(self.steps);
            Ok(())
        });
        match cpu {
            Ok(cpu) => Some(f(cpu)),
            Err(e) => {
                log::error!("reading the SIMPLE state back from the GPU failed: {e}");
                None
            }
        }
    }

    /// The device arrays of [`Simple::state_mut`], in its order: u, v, p, mu_c, mu_n.
    fn state(&self) -> [&DevBuf<f64>; 5] {
        [&self.b.u, &self.b.v, &self.b.p, &self.b.mu_c, &self.b.mu_n]
    }

    /// Makes `cpu`'s state and iteration count this solver's, `cpu` the fresh mirror.
    fn adopt(&mut self, mut cpu: Simple<2>) -> Result<(), Invalid> {
        self.upload_from(&mut cpu)
            .map_err(|e| Invalid::new("solver.backend", format!("CUDA: {e}")))?;
        self.steps = cpu.steps();
        *self.mirror.get_mut().expect("mirror lock") = HostMirror::new(cpu);
        self.readback
            .get_mut()
            .expect("readback lock")
            .invalidate(self.steps);
        Ok(())
    }

    /// Uploads a CPU solver's state (`load_state`, a viscosity model change).
    fn upload_from(&self, cpu: &mut Simple<2>) -> Result<(), CudaError> {
        for (src, dst) in cpu.state_mut().into_iter().zip(self.state()) {
            self.gpu.upload(dst, src)?;
        }
        Ok(())
    }

    fn derive(&self, name: &str, dst: &DevBuf<f64>) -> Result<(), CudaError> {
        let state = StaggeredState {
            vel: &[&self.b.u, &self.b.v],
            p: &self.b.p,
            p_scale: 1.0,
            viscosity: Some(&self.b.mu_c),
        };
        self.display
            .derive(&self.gpu, &self.cfg.flow.grid, fields::<2>(), &state, name, dst)
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
        self.mirror.get_mut().expect("mirror lock").invalidate();
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
        let p_sum = self.b.sc.host()[S_PSUM];
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
        fields::<2>()
    }

    fn field(&self, name: &str, out: &mut Vec<f64>) -> Option<()> {
        let mut r = self.readback.lock().expect("readback lock");
        r.solver_field(fields::<2>(), name, |n, dst| self.derive(n, dst), out)
    }

    fn prefetch(&self, names: &[&str]) {
        let mut r = self.readback.lock().expect("readback lock");
        r.solver_prefetch(fields::<2>(), names, |n, dst| self.derive(n, dst));
    }

    fn display_fields(&self, names: &[&str], out: &mut [Vec<f64>]) -> Option<u64> {
        let mut r = self.readback.lock().expect("readback lock");
        r.solver_display(fields::<2>(), names, |n, dst| self.derive(n, dst), out)
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
        let rebuild = |kind, sys: &DeviceSystem| DeviceLinearSolver::new(&self.gpu, kind, [sys.n[0], sys.n[1]]);
        if cfg.momentum_solver != self.cfg.momentum_solver {
            let s = [
                rebuild(cfg.momentum_solver, &self.b.sys[0]).map_err(device)?,
                rebuild(cfg.momentum_solver, &self.b.sys[1]).map_err(device)?,
            ];
            self.solvers = s;
        }
        if cfg.pressure_solver != self.cfg.pressure_solver {
            self.solver_p = rebuild(cfg.pressure_solver, &self.b.sys_p).map_err(device)?;
        }
        let viscosity_change = cfg.viscosity != self.cfg.viscosity;
        // The kernels' arguments carry the settings.
        self.k = Launches::new(&self.ms, &self.mq, &cfg, &self.l, &self.b).map_err(device)?;
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
