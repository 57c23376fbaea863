//! SIMPLE, SIMPLEC and SIMPLER on the GPU in 2D and 3D (`CudaSimple<D>`, the kernels compiled with
//! `-DDIM`): the outer iteration of [`super::Simple`], step for step, with
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
use crate::backend::cuda::readback::readback_methods;
use crate::backend::cuda::{
    Arg, Args, CudaError, DevBuf, Gpu, HostMirror, KernelSet, Launch, Module, Readback, Scalars,
    limiter_code, slots,
};
use crate::case::{Boundary, CaseSpec, Invalid, Side};
use crate::solver::incompressible::config::BLOW_UP_FACTOR;
use crate::solver::incompressible::cuda::rotor::DeviceRotor;
use crate::solver::incompressible::cuda::{boundary_codes, err, fill_ghosts};
use crate::solver::incompressible::device_fields::{StaggeredDisplay, StaggeredState};
use crate::solver::incompressible::staggered::{Layout, side, side_velocity};
use crate::solver::linear::cuda::{DeviceLinearSolver, DeviceSystem};
use crate::solver::{CappedSolve, Snapshot, Solver, SolverError, SolverInfo, check_transfer};
use std::sync::{Arc, Mutex};

mod launches;
use launches::{Buffers, Launches};

const B1: u32 = 256;

use slots::{S_FLUX, S_IMBALANCE, S_PSUM, S_VMAX, SC_LEN};
/// The momentum residual and norm slots of u, v and w.
const S_RES: [usize; 3] = [slots::S_RES_U, slots::S_RES_V, slots::S_RES_W];
const S_NORM: [usize; 3] = [slots::S_NORM_U, slots::S_NORM_V, slots::S_NORM_W];

/// `a` followed by the layout's shape arguments `nx, ny, nz, px, py, pz` (`STAG` of
/// kernels/simple.cu; one cell, not periodic, beyond the dimension).
fn layout<const D: usize>(a: Args, l: &Layout<D>) -> Args {
    let a = (0..3).fold(a, |a, d| a.i(l.n.get(d).copied().unwrap_or(1) as i64));
    (0..3).fold(a, |a, d| a.i(l.periodic.get(d).copied().unwrap_or(false) as i64))
}

fn grid1(n: usize) -> (u32, u32, u32) {
    ((n as u32).div_ceil(B1).max(1), 1, 1)
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

/// The CPU mirror's configuration: the solver's without its rotor, whose loads the device
/// evaluates (the mirror never iterates; its source tables would only cost memory and time).
fn mirror_config(cfg: &SimpleConfig) -> SimpleConfig {
    SimpleConfig {
        rotor: None,
        ..cfg.clone()
    }
}

pub struct CudaSimple<const D: usize> {
    gpu: Arc<Gpu>,
    /// kernels/simple.cu, projection.cu (ghosts), poisson.cu (means).
    simple_kernels: Module,
    projection_kernels: Module,
    poisson_kernels: Module,
    cfg: SimpleConfig,
    l: Layout<D>,
    b: Buffers,
    k: Launches,
    /// One per velocity component.
    solvers: Vec<DeviceLinearSolver>,
    solver_p: DeviceLinearSolver,
    bck: DevBuf<i32>,
    bcv: DevBuf<f64>,
    steps: u64,
    residuals: Vec<(&'static str, f64)>,
    /// The last outer iteration's first pressure(-correction) solve that stopped at its cap.
    capped: Option<CappedSolve>,
    display: StaggeredDisplay,
    readback: Mutex<Readback<f64>>,
    mirror: Mutex<HostMirror<Simple<D>, f64>>,
}

impl<const D: usize> CudaSimple<D> {
    pub fn new(cfg: SimpleConfig, device: usize) -> Result<Self, CudaError> {
        let gpu = Gpu::on(device)?;
        // The CPU solver's initial state (boundaries and viscosity applied) is the start.
        let mut cpu = Simple::<D>::new(mirror_config(&cfg));
        let l = Layout::<D>::of_grid(&cfg.flow.grid, &cfg.flow.bc);
        let n = l.len();
        let cells: usize = l.n.iter().product();
        let shapes: [[usize; D]; D] = std::array::from_fn(|c| coefficients::shape(&l, c));
        let buf = |data: &Vec<f64>| -> Result<DevBuf<f64>, CudaError> {
            let b = gpu.alloc(data.len())?;
            gpu.upload(&b, data)?;
            Ok(b)
        };
        // The state in its order: the velocity components, p, mu_c, the edge viscosities.
        let state = cpu
            .state_mut()
            .into_iter()
            .map(|a| buf(a))
            .collect::<Result<Vec<_>, _>>()?;
        let mut state = state.into_iter();
        let vel: Vec<DevBuf<f64>> = state.by_ref().take(D).collect();
        let (p, mu_c) = (state.next().expect("p"), state.next().expect("mu_c"));
        let mu_e: Vec<DevBuf<f64>> = state.collect();
        let zeros = |len: usize, count: usize| {
            (0..count)
                .map(|_| gpu.alloc_zeros(len))
                .collect::<Result<Vec<_>, _>>()
        };
        let unknowns = |c: usize| shapes[c].iter().product::<usize>();
        let (bck, bcv) = boundary_codes::<f64>(&gpu, &cfg.flow.bc)?;
        let parts = 3 * grid1(n).0 as usize + 16;
        let mut b = Buffers {
            vel,
            p,
            mu_c,
            mu_e,
            d: zeros(n, D)?,
            hat: zeros(n, D)?,
            pc: gpu.alloc_zeros(cells)?,
            x: (0..D)
                .map(|c| gpu.alloc_zeros(unknowns(c)))
                .collect::<Result<_, _>>()?,
            hat_x: gpu.alloc_zeros((0..D).map(unknowns).max().unwrap_or(0))?,
            sys: (0..D)
                .map(|c| DeviceSystem::new(&gpu, shapes[c], l.periodic))
                .collect::<Result<_, _>>()?,
            sys_p: DeviceSystem::new(&gpu, l.n, l.periodic)?,
            partial: gpu.alloc_zeros(parts)?,
            sc: Scalars::new(&gpu, SC_LEN)?,
            rotor: None,
        };
        if let Some(r) = cfg.rotor {
            b.rotor = Some(DeviceRotor::new(&gpu, r, &cfg.flow.grid, &l, &b.vel)?);
        }
        let (simple_kernels, poisson_kernels) = (
            gpu.module_dim(KernelSet::Simple, "f64", D)?,
            gpu.module_dim(KernelSet::Poisson, "f64", D)?,
        );
        let s = Self {
            k: Launches::new(&simple_kernels, &poisson_kernels, &cfg, &l, &b)?,
            b,
            simple_kernels,
            projection_kernels: gpu.module_dim(KernelSet::Projection, "f64", D)?,
            poisson_kernels,
            solvers: (0..D)
                .map(|c| DeviceLinearSolver::new(&gpu, cfg.momentum_solver, shapes[c]))
                .collect::<Result<_, _>>()?,
            solver_p: DeviceLinearSolver::new(&gpu, cfg.pressure_solver, l.n)?,
            bck,
            bcv,
            steps: 0,
            residuals: Vec::with_capacity(9),
            capped: None,
            display: StaggeredDisplay::new(&gpu, "f64", D)?,
            readback: Mutex::new(Readback::new(&gpu, cells)),
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
        unsafe {
            self.simple_kernels
                .launch("sum_into", (1, 1, 1), (1024, 1, 1), &a)
        }
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
            &self.projection_kernels,
            &l,
            std::array::from_fn(|c| &self.b.vel[c]),
            (&self.bck, &self.bcv),
            None,
            true,
        )?;
        self.k
            .outflow
            .iter()
            .chain(&self.k.wall_rule)
            .try_for_each(|k| k.run(&self.gpu))
    }

    /// One outer iteration (as [`Simple`]'s `iterate`); its residual entries into `residuals`
    /// (in [`Simple`]'s order) and the largest velocity returned.
    fn iterate(&mut self) -> Result<f64, CudaError> {
        self.gpu.bind()?;
        let gpu = &self.gpu;
        let k = &self.k;
        k.viscosity.iter().try_for_each(|v| v.run(gpu))?;
        if let Some(r) = &self.b.rotor {
            r.enqueue(gpu, None)?;
        }
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
            for c in 0..D {
                self.gpu.copy(&self.b.hat[c], &self.b.vel[c])?;
                k.to_x[c].run(gpu)?;
                self.solvers[c].point_solution(&self.b.sys[c], &self.b.x[c], &self.b.hat_x)?;
                k.from_hat[c].run(gpu)?;
                k.hat_seams[c].run(gpu)?;
            }
            self.assemble_pressure(1)?;
            let st = self.solver_p.solve(&self.b.sys_p, &self.b.p, p_tol, p_max)?;
            pressure_iterations += st.iterations;
            self.capped = CappedSolve::of_linear(&st, p_tol);
            self.remove_mean()?;
            pressure_residual = st.reduction();
        }
        let mut momentum_iterations = 0;
        for c in 0..D {
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
        self.k.max_abs.iter().try_for_each(|k| k.run(&self.gpu))?;
        if let Some(r) = &mut self.b.rotor {
            r.download(&self.gpu)?;
        }
        let sc = self.b.sc.read()?;
        let norm = (0..D).fold(0.0, |s, c| s + sc[S_NORM[c]]);
        let momentum: [f64; D] = std::array::from_fn(|c| {
            let r1 = sc[S_RES[c]];
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
        let worst = momentum.into_iter().reduce(f64::max).unwrap_or(0.0).max(mass);
        self.residuals.clear();
        self.residuals.push(("steady_change", worst));
        self.residuals
            .extend((0..D).map(|c| (super::MOMENTUM[c], momentum[c])));
        self.residuals.extend_from_slice(&[
            ("mass", mass),
            ("momentum_iterations", momentum_iterations as f64),
            ("pressure_iterations", pressure_iterations as f64),
            ("pressure_residual", pressure_residual),
            ("max_velocity", sc[S_VMAX]),
        ]);
        let max_velocity = sc[S_VMAX];
        if let Some(r) = &mut self.b.rotor {
            r.take_totals();
            self.residuals.extend_from_slice(&r.setup.residuals(&r.loads));
        }
        Ok(max_velocity)
    }

    /// Refreshes the CPU mirror from the device when stale.
    fn with_mirror<R>(&self, f: impl FnOnce(&Simple<D>) -> R) -> Option<R> {
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

    /// The device arrays of [`Simple::state_mut`], in its order: the velocity components, p,
    /// mu_c, the edge viscosities.
    fn state(&self) -> Vec<&DevBuf<f64>> {
        let b = &self.b;
        b.vel.iter().chain([&b.p, &b.mu_c]).chain(&b.mu_e).collect()
    }

    /// Makes `cpu`'s state and iteration count this solver's, `cpu` the fresh mirror.
    fn adopt(&mut self, mut cpu: Simple<D>) -> Result<(), Invalid> {
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
    fn upload_from(&self, cpu: &mut Simple<D>) -> Result<(), CudaError> {
        for (src, dst) in cpu.state_mut().into_iter().zip(self.state()) {
            self.gpu.upload(dst, src)?;
        }
        Ok(())
    }

    fn derive(&self, name: &str, dst: &DevBuf<f64>) -> Result<(), CudaError> {
        let vel: Vec<&DevBuf<f64>> = self.b.vel.iter().collect();
        let state = StaggeredState {
            vel: &vel,
            p: &self.b.p,
            p_scale: 1.0,
            viscosity: Some(&self.b.mu_c),
        };
        self.display
            .derive(&self.gpu, &self.cfg.flow.grid, fields::<D>(), &state, name, dst)
    }

    /// [`Simple`]'s health check: the largest velocity, the momentum norm `norm` (NaN when a
    /// velocity is) and the pressure sum `p_sum` finite, the velocity within bounds.
    fn check_health(&self, max_velocity: f64, norm: f64, p_sum: f64) -> Result<(), SolverError> {
        let scale = self.cfg.velocity_scale();
        let finite = max_velocity.is_finite() && norm.is_finite() && p_sum.is_finite();
        if finite && max_velocity <= BLOW_UP_FACTOR * scale {
            return Ok(());
        }
        Err(super::diverged(
            &self.cfg,
            scale,
            self.steps,
            max_velocity,
            finite,
        ))
    }
}

impl<const D: usize> Solver for CudaSimple<D> {
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
        let max_velocity = self.iterate().map_err(err(self.steps, 0.0))?;
        self.steps += 1;
        let sc = self.b.sc.host();
        let norm = (0..D).fold(0.0, |s, c| s + sc[S_NORM[c]]);
        self.check_health(max_velocity, norm, sc[S_PSUM])
    }

    fn dt(&self) -> f64 {
        0.0
    }

    fn set_dt_cap(&mut self, _cap: f64) {}

    fn residuals(&self) -> &[(&'static str, f64)] {
        &self.residuals
    }

    fn field_names(&self) -> &'static [&'static str] {
        fields::<D>()
    }

    readback_methods!(self, fields::<D>());

    fn display_device(&self) -> Option<Arc<Gpu>> {
        Some(self.gpu.clone())
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
        let mut mirrored = spec.clone();
        mirrored.rotor = None;
        self.mirror
            .get_mut()
            .expect("mirror lock")
            .cpu
            .update(&mirrored)?;
        let rebuild = |kind, sys: &DeviceSystem| {
            let shape: [usize; D] = std::array::from_fn(|a| sys.n[a]);
            DeviceLinearSolver::new(&self.gpu, kind, shape)
        };
        if cfg.momentum_solver != self.cfg.momentum_solver {
            self.solvers = self
                .b
                .sys
                .iter()
                .map(|sys| rebuild(cfg.momentum_solver, sys))
                .collect::<Result<_, _>>()
                .map_err(device)?;
        }
        if cfg.pressure_solver != self.cfg.pressure_solver {
            self.solver_p = rebuild(cfg.pressure_solver, &self.b.sys_p).map_err(device)?;
        }
        let viscosity_change = cfg.viscosity != self.cfg.viscosity;
        if cfg.rotor != self.cfg.rotor {
            let (gpu, grid, l) = (&self.gpu, &cfg.flow.grid, &self.l);
            let vel = &self.b.vel;
            DeviceRotor::follow(&mut self.b.rotor, cfg.rotor, |r| {
                DeviceRotor::new(gpu, r, grid, l, vel)
            })
            .map_err(|e| Invalid::new("rotor", format!("CUDA: {e}")))?;
        }
        // The kernels' arguments carry the settings.
        self.k = Launches::new(
            &self.simple_kernels,
            &self.poisson_kernels,
            &cfg,
            &self.l,
            &self.b,
        )
        .map_err(device)?;
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

    fn rotor(&self) -> Option<crate::solver::rotor::Rotor> {
        self.b.rotor.as_ref().map(|r| r.setup.rotor)
    }

    fn summary(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = self.with_mirror(|m| m.summary()).unwrap_or_default();
        // The mirror does not iterate: the rotor's loads are the device's.
        if let Some(r) = &self.b.rotor {
            m.insert("rotor".into(), r.setup.summary(&r.loads));
        }
        m
    }

    /// Takes over another solver's flow, as [`Simple::load_state`] (sampled on this grid by the
    /// CPU solver, then uploaded).
    fn load_state(&mut self, from: &dyn Solver) -> Result<(), Invalid> {
        check_transfer(&self.info(), &from.info())?;
        let mut cpu = Simple::<D>::new(mirror_config(&self.cfg));
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
        let mut cpu = Simple::<D>::new(mirror_config(&self.cfg));
        cpu.restore(state)?;
        self.adopt(cpu)
    }
}
