//! The compressible solvers on the GPU: the same discretisations as [`Euler`] (MUSCL-Hancock
//! with every Riemann solver, limiter and reconstruction, and CE/SE), kernel for kernel, with the
//! state in device memory (kernels in `kernels/muscl_hancock.cu`, `kernels/cese.cu` and
//! `kernels/euler.cuh`).
//!
//! Storage: the padded cell array of [`Layout`] as structure of arrays, component `c` of cell
//! `k` at `q[c * len + k]` (`len = stride * rows`), so neighbouring threads read neighbouring
//! addresses; the CPU's array of `[T; 4]` is transposed on upload and readback. CE/SE does not
//! write the ghost cells of `q` and of its gradients on the device (its corners kernel derives
//! them from the interior where it reads them), so they keep the values they were uploaded with;
//! every reader of a state (either backend's step, the fields, the reductions) fills, derives or
//! skips them.
//!
//! One step enqueues, on one stream, a step of the size in the step clock: for MUSCL-Hancock the
//! ghost cells (y sides, then x sides, as `boundary::fill`), the face values, the fluxes through
//! the x and the y faces (one thread per face) and the in-place update; for CE/SE the two
//! half-steps (corners, whose kernel derives the ghost cells it reads, then centres). The last of
//! them also reduces the new state per block (the largest wave rate, the next step's `dt`; the
//! smallest density and pressure; the first inadmissible cell), and a one-block kernel finishes
//! that reduction into the clock, moves the clock on by the step, writes the step's record (time,
//! dt, wave rate, minima) into the clock's history and chooses the next step's size (the
//! operations of [`time_step`]; after the host writes the clock, `euler_next_step` chooses it).
//! Every argument is bound, so a step is one CUDA graph, and a batch of steps
//! ([`Solver::advance`], [`Solver::advance_recorded`]: up to 64 steps, their records read with the
//! clock) is that graph replayed, with one host wait at the end for the clock. A step whose state
//! has an inadmissible cell, or whose wave rate is not finite and positive, halts the rest of the
//! batch on the device, as does reaching the end time of `advance_recorded`; after an
//! inadmissible state the host reads the state back and reports it as the CPU does
//! ([`SolverError::Diverged`]).
//!
//! Element-wise kernels are compiled without FMA contraction and keep the CPU's operation order,
//! so they round identically (the exact Riemann solver's `pow` is the device's, within 2 ulp of
//! the host's); the reductions are maxima and minima, exact in any order.
//!
//! Fields ([`Solver::field`], [`Solver::prefetch`]) are derived on the device
//! (`kernels/display.cu`, every field of [`super::FIELDS_1D`] and [`super::FIELDS_2D`]) and only
//! the requested field comes back, one value per cell, through [`Readback`]. Point samples, the
//! exact solution, the summary, [`CudaEuler::host_field`] and the report of an inadmissible state
//! still read the whole state back into a CPU [`Euler`] mirror whose code is reused; none of
//! them runs per frame.

mod launches;
mod steps;

use super::config::Bc;
use super::layout::Layout;
use super::state::{conserved, from_soa, to_soa};
use super::{Euler, FIELDS_2D};
use crate::backend::cuda::readback::readback_methods;
use crate::backend::cuda::{
    Args, CudaError, DevBuf, Gpu, Graph, HostMirror, KernelSet, Launch, Module, Readback, Scalars,
    graphs_enabled, slots,
};
use crate::case::{CaseSpec, Invalid, Kind, Method};
use crate::solver::real::Real;
use crate::solver::{Snapshot, Solver, SolverError, SolverInfo, StepRecord, check_transfer};
use launches::{B2, Buffers, Launches, SchemeLaunches, StepBlock, Work, geometry, grid_of};
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};

/// Why a case cannot run on the CUDA backend, if it cannot.
pub fn unsupported(cfg: &super::Config) -> Option<Invalid> {
    let n = [cfg.grid.n[0], if cfg.dim == 2 { cfg.grid.n[1] } else { 1 }];
    if n[..cfg.dim].iter().any(|&m| m < 2) {
        return Some(Invalid::new(
            "grid.nx",
            "the CUDA backend needs at least 2 cells along each axis",
        ));
    }
    if n[0] * n[1] >= i32::MAX as usize {
        return Some(Invalid::new(
            "grid.nx",
            "the CUDA backend numbers cells with 32-bit integers: fewer than 2^31 cells",
        ));
    }
    None
}

fn err(step: u64, time: f64) -> impl Fn(CudaError) -> SolverError {
    move |e| SolverError::Device {
        step,
        time,
        message: e.0,
    }
}

/// A compressible solver on a CUDA device (precision `T`).
pub struct CudaEuler<T: Real> {
    gpu: Arc<Gpu>,
    module: Module,
    /// `kernels/display.cu`.
    display: Module,
    cfg: super::Config,
    l: Layout,
    b: Buffers<T>,
    launches: Launches,
    mirror: Mutex<HostMirror<Euler<T>, T>>,
    /// Device-derived fields on their way to the host.
    readback: Mutex<Readback<T>>,
    /// One step as a CUDA graph (captured at first use, dropped when the launches are rebuilt).
    step_graph: Option<Graph>,
    /// Whether to capture and replay the graph ([`graphs_enabled`]; off after a failed capture).
    graphs: bool,
    /// The clock as of the last host wait (the device's own between batches).
    time: f64,
    steps: u64,
    dt: f64,
    dt_cap: f64,
    /// The end time the steps land on and stop at ([`Solver::advance_recorded`]; infinity for
    /// none).
    t_end: f64,
    /// Whether the device clock's host slots must be written before the next step.
    clock_stale: bool,
    residuals: Vec<(&'static str, f64)>,
}

impl<T: Real> CudaEuler<T> {
    pub fn new(cfg: super::Config, device: usize) -> Result<Self, CudaError> {
        let gpu = Gpu::on(device)?;
        let set = match cfg.method {
            Method::Cese => KernelSet::Cese,
            _ => KernelSet::MusclHancock,
        };
        let module = gpu.module(set, T::NAME)?;
        let display = gpu.module(KernelSet::Display, T::NAME)?;
        let cpu = Euler::<T>::new(cfg.clone());
        let l = cpu.l;
        let len = l.len();
        let [nx, ny] = l.n;
        let dim = l.dim;
        let work = match cfg.method {
            Method::Cese => {
                let corners = (nx + 1) * if dim == 2 { ny + 1 } else { 1 };
                Work::Cese {
                    qx: gpu.alloc_zeros(4 * len)?,
                    qy: if dim == 2 {
                        Some(gpu.alloc_zeros(4 * len)?)
                    } else {
                        None
                    },
                    corners: gpu.alloc_zeros(4 * (1 + dim) * corners)?,
                }
            }
            _ => Work::Muscl {
                faces: gpu.alloc_zeros(8 * dim * len)?,
            },
        };
        let blocks = {
            let (g, _) = StepBlock::of::<T>(&l, cfg.method).shape((nx, ny));
            (g.0 * g.1) as usize
        };
        let solid = gpu.alloc(len)?;
        gpu.upload(&solid, &cpu.solid.iter().map(|&s| s as u8).collect::<Vec<u8>>())?;
        let b = Buffers {
            q: gpu.alloc(4 * len)?,
            solid,
            inflow: gpu.alloc_zeros(16)?,
            work,
            part: gpu.alloc_zeros(3 * blocks)?,
            bad_part: gpu.alloc_zeros(blocks)?,
            clock: Scalars::new(&gpu, slots::EK_LEN)?,
        };
        let mut s = Self {
            launches: Launches::new(&module, &cfg, &l, &b)?,
            b,
            module,
            display,
            readback: Mutex::new(Readback::new(&gpu, nx * ny)),
            gpu,
            l,
            cfg,
            mirror: Mutex::new(HostMirror::new(cpu)),
            step_graph: None,
            graphs: graphs_enabled(),
            time: 0.0,
            steps: 0,
            dt: 0.0,
            dt_cap: f64::INFINITY,
            t_end: f64::INFINITY,
            clock_stale: true,
            residuals: vec![
                ("max_wave_rate", 0.0),
                ("min_density", 0.0),
                ("min_pressure", 0.0),
            ],
        };
        s.upload_state()?;
        s.upload_inflow()?;
        s.reduce()?;
        Ok(s)
    }

    /// The mirror's conserved state to the device (transposed to structure of arrays).
    fn upload_state(&mut self) -> Result<(), CudaError> {
        let m = self.mirror.lock().expect("mirror lock");
        self.gpu.upload(&self.b.q, &to_soa(&m.cpu.u))
    }

    /// The inflow sides' conserved states for the current gamma.
    fn upload_inflow(&mut self) -> Result<(), CudaError> {
        let g = T::of(self.cfg.gamma);
        let mut v = [T::zero(); 16];
        for (side, b) in self.cfg.bc.iter().enumerate() {
            if let Bc::Inflow(w) = b {
                v[4 * side..4 * side + 4].copy_from_slice(&conserved(g, w.map(T::of)));
            }
        }
        self.gpu.upload(&self.b.inflow, &v)
    }

    /// The ghost cells of `q` for MUSCL-Hancock (y sides, then x sides); none for CE/SE.
    fn ghosts(&self) -> Result<(), CudaError> {
        self.launches.ghosts.iter().try_for_each(|g| g.run(&self.gpu))
    }

    /// The scheme's kernels of a step (after the ghost cells), each with the arrays it reads and
    /// writes per cell by the model of [`CudaEuler::kernel_timings`] (`P = 4 (1 + dim)` values
    /// per CE/SE point).
    fn scheme_kernels(&self) -> Vec<(&'static str, f64, &Launch)> {
        let dim = self.l.dim as f64;
        match &self.launches.scheme {
            SchemeLaunches::Cese { corners, centres } => {
                let p = 4.0 * (1.0 + dim);
                vec![
                    ("cese_corners", 2.0 * p, corners),
                    ("cese_centres", 2.0 * p, centres),
                ]
            }
            SchemeLaunches::Muscl { faces, flux_update } => vec![
                ("mh_faces", 4.0 + 8.0 * dim, faces),
                ("mh_flux_update", 8.0 + 8.0 * dim, flux_update),
            ],
        }
    }

    /// Runs `f` on the CPU mirror after copying the device state into it if it changed.
    fn with_mirror<R>(&self, f: impl FnOnce(&mut Euler<T>) -> R) -> Result<R, CudaError> {
        let mut m = self.mirror.lock().expect("mirror lock");
        let cpu = m.fresh(&self.gpu, |cpu, stage| {
            from_soa(stage.read(&self.b.q)?, &mut cpu.u);
            Ok(())
        })?;
        (cpu.time, cpu.steps, cpu.dt) = (self.time, self.steps, self.dt);
        Ok(f(cpu))
    }

    /// Enqueues `euler_display` of `kernels/display.cu`, which writes field `name` (one of
    /// [`super::FIELDS_2D`], or of [`super::FIELDS_1D`] in 1D) of the current state into `dst`
    /// (`nx * ny` cell values, `x` fastest).
    fn derive(&self, name: &str, dst: &DevBuf<T>) -> Result<(), CudaError> {
        let code = FIELDS_2D.iter().position(|f| *f == name).expect("a known field");
        let (l, h) = (self.l, self.cfg.grid.spacing);
        let a = geometry(Args::new().p(&self.b.q).p(dst), &l);
        let a = a.i(code as i64).r(self.cfg.gamma).r(h[0]).r(h[1]);
        // SAFETY: the arguments of `euler_display`, in order; q is the padded state of this
        // layout, dst holds nx ny values.
        unsafe {
            self.display
                .launch("euler_display", grid_of((l.n[0], l.n[1]), B2), B2, &a)
        }
    }

    /// Field `name` derived on the host from the whole state read back into the CPU mirror (the
    /// path [`Solver::field`] took before fields were derived on the device): the reference the
    /// device derivation is tested against.
    pub fn host_field(&self, name: &str, out: &mut Vec<f64>) -> Option<()> {
        self.read(|m| m.field(name, out))
    }

    /// Reads fields through the mirror; a device failure is logged and yields `None`.
    fn read<R>(&self, f: impl FnOnce(&mut Euler<T>) -> Option<R>) -> Option<R> {
        self.with_mirror(f)
            .map_err(|e| log::error!("reading fields back from the GPU failed: {e}"))
            .ok()?
    }

    /// Times the scheme's kernels with CUDA events (`reps` back-to-back launches each, after one
    /// warm-up launch) on this solver's buffers, for a step of the next step's `dt` (the
    /// clock's `EK_NEXT_DT`); the state is restored afterwards. Returns (kernel, milliseconds per launch,
    /// bytes per launch by the model: every array the kernel reads or writes counted once, `s`
    /// bytes per value, `N` cells, `P = 4 (1 + dim)` values per CE/SE point):
    /// `mh_faces` `(4 + 8 dim) N s` (state in, face values out), `mh_flux_update_*`
    /// `(8 + 8 dim) N s` (two face values a face, about one face a cell along each axis; the
    /// state in and out; the fluxes stay in shared memory, and the step reduction reads nothing
    /// more), `cese_corners` and `cese_centres` `2 P N s` (the solid mask's byte per cell is left
    /// out).
    pub fn kernel_timings(&mut self, reps: usize) -> Result<Vec<(&'static str, f64, f64)>, CudaError> {
        self.gpu.bind()?;
        let n = (self.l.n[0] * self.l.n[1]) as f64;
        let sz = std::mem::size_of::<T>() as f64;
        let saved = self.gpu.alloc::<T>(self.b.q.len)?;
        self.gpu.copy(&saved, &self.b.q)?;
        self.ghosts()?;
        let mut out = Vec::new();
        for (name, arrays, launch) in self.scheme_kernels() {
            let ms = self.gpu.time_launches(reps, || launch.run(&self.gpu))?;
            out.push((name, ms, arrays * n * sz));
        }
        // The partials now hold a timed update's; the clock keeps the saved state's reduction.
        self.gpu.copy(&self.b.q, &saved)?;
        self.gpu.sync()?;
        Ok(out)
    }

    /// Makes `cpu`'s state (clock, conserved variables, CE/SE gradients: zero where it has
    /// not stepped) this solver's: uploaded, and `cpu` the fresh mirror. On error nothing changes.
    fn adopt(&mut self, mut cpu: Euler<T>) -> Result<(), Invalid> {
        let gradients = match cpu.scheme.take() {
            Some(super::Scheme::Cese(c)) => Some(c.gradients().map(|g| to_soa(g))),
            _ => None,
        };
        let (time, steps, dt) = (cpu.time, cpu.steps, cpu.dt);
        let previous = std::mem::replace(
            &mut *self.mirror.lock().expect("mirror lock"),
            HostMirror::new(cpu),
        );
        let copied = (|| {
            self.upload_state()?;
            if let Work::Cese { qx, qy, .. } = &self.b.work {
                match &gradients {
                    Some([gx, gy]) => {
                        self.gpu.upload(qx, gx)?;
                        if let Some(qy) = qy {
                            self.gpu.upload(qy, gy)?;
                        }
                    }
                    None => {
                        self.gpu.memset_zero(qx)?;
                        if let Some(qy) = qy {
                            self.gpu.memset_zero(qy)?;
                        }
                    }
                }
            }
            self.reduce()
        })();
        if let Err(e) = copied {
            *self.mirror.lock().expect("mirror lock") = previous;
            return Err(Invalid::new(
                "solver.backend",
                format!("copying the state to the GPU failed: {e}"),
            ));
        }
        (self.time, self.steps, self.dt) = (time, steps, dt);
        self.clock_stale = true;
        self.readback
            .get_mut()
            .expect("readback lock")
            .invalidate(self.steps);
        Ok(())
    }
}

impl<T: Real> Solver for CudaEuler<T> {
    fn info(&self) -> SolverInfo {
        SolverInfo {
            kind: Kind::Compressible,
            method: self.cfg.method.name(),
            backend: "cuda",
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

    fn step(&mut self) -> Result<(), SolverError> {
        self.set_end_time(f64::INFINITY);
        self.batch(1)
    }

    fn advance(&mut self, n: u64) -> Result<(), SolverError> {
        self.set_end_time(f64::INFINITY);
        self.batch(n)
    }

    fn batch_limit(&self) -> u64 {
        slots::EK_HISTORY_STEPS as u64
    }

    /// One batch of up to [`slots::EK_HISTORY_STEPS`] steps, stopped on the device at `t_end`
    /// (`choose_next_step`), whose records come from the clock's history read with it. Where the
    /// batch halted at an inadmissible state, the step that made it is not recorded (the CPU's
    /// step fails).
    fn advance_recorded(
        &mut self,
        n: u64,
        t_end: Option<f64>,
        records: &mut Vec<StepRecord>,
    ) -> Result<(), SolverError> {
        let start = self.steps;
        if t_end.is_some() {
            // As `advance_step_by_step`: the time left replaces the cap.
            self.set_dt_cap(f64::INFINITY);
        }
        self.set_end_time(t_end.unwrap_or(f64::INFINITY));
        let result = self.batch(n.min(self.batch_limit()));
        let c = self.b.clock.host();
        let failed_step = c[slots::EK_HALT] == slots::HALT_BAD_CELL as f64;
        let last = self.steps - u64::from(failed_step && self.steps > start);
        let names = self.residuals.iter().map(|(name, _)| *name);
        for s in start + 1..=last {
            let at = slots::EK_HISTORY + slots::EK_RECORD * (s % slots::EK_HISTORY_STEPS as u64) as usize;
            let r = &c[at..at + slots::EK_RECORD];
            let values = [
                r[slots::EK_REC_STEP_RATE],
                r[slots::EK_REC_MIN_DENSITY],
                r[slots::EK_REC_MIN_PRESSURE],
            ];
            records.push(StepRecord {
                steps: s,
                time: r[slots::EK_REC_TIME],
                dt: r[slots::EK_REC_DT],
                residuals: names.clone().zip(values).collect(),
                capped: None,
            });
        }
        result
    }

    fn dt(&self) -> f64 {
        self.dt
    }

    fn set_dt_cap(&mut self, cap: f64) {
        if cap != self.dt_cap {
            self.dt_cap = cap;
            self.clock_stale = true;
        }
    }

    fn residuals(&self) -> &[(&'static str, f64)] {
        &self.residuals
    }

    fn field_names(&self) -> &'static [&'static str] {
        if self.cfg.dim == 1 {
            super::FIELDS_1D
        } else {
            super::FIELDS_2D
        }
    }

    readback_methods!(self, self.field_names());

    fn display_device(&self) -> Option<Arc<Gpu>> {
        Some(self.gpu.clone())
    }

    fn exact_field(&self, name: &str, out: &mut Vec<f64>) -> Option<()> {
        self.read(|m| m.exact_field(name, out))
    }

    fn sample(&self, name: &str, point: [f64; 3]) -> Option<f64> {
        self.read(|m| m.sample(name, point))
    }

    fn update(&mut self, spec: &CaseSpec) -> Result<(), Invalid> {
        let cfg = super::Config::from_spec(spec)?;
        if !cfg.same_layout(&self.cfg) {
            return Err(Invalid::new(
                "case",
                "grid, method, boundaries, initial state, solids and precision need a restart",
            ));
        }
        self.mirror.lock().expect("mirror lock").cpu.update(spec)?;
        self.cfg = cfg;
        // Gamma enters p, e and the Mach number.
        self.readback
            .get_mut()
            .expect("readback lock")
            .invalidate(self.steps);
        // Gamma is live: the inflow states, the kernels' arguments and the next step's wave rate
        // depend on it.
        (|| {
            // The step's graph holds the old launches' arguments.
            self.step_graph = None;
            self.launches = Launches::new(&self.module, &self.cfg, &self.l, &self.b)?;
            self.upload_inflow()?;
            self.reduce()
        })()
        .map_err(|e| Invalid::new("solver.backend", format!("CUDA: {e}")))
    }

    fn summary(&self) -> Map<String, Value> {
        self.read(|m| Some(m.summary())).unwrap_or_default()
    }

    fn load_state(&mut self, from: &dyn Solver) -> Result<(), Invalid> {
        check_transfer(&self.info(), &from.info())?;
        // Sampling runs on the CPU once; the result goes to the device and becomes the mirror.
        let mut cpu = Euler::<T>::new(self.cfg.clone());
        cpu.load_state(from)?;
        self.adopt(cpu)
    }

    fn snapshot(&self) -> Result<Snapshot, SolverError> {
        let device = |e: CudaError| SolverError::Device {
            step: self.steps,
            time: self.time,
            message: format!("reading the state back failed: {e}"),
        };
        let mut s = self.with_mirror(|cpu| cpu.snapshot()).map_err(device)??;
        if let Work::Cese { qx, qy, .. } = &self.b.work {
            s.put("qx", &self.gpu.download(qx).map_err(device)?);
            if let Some(qy) = qy {
                s.put("qy", &self.gpu.download(qy).map_err(device)?);
            }
        }
        Ok(s)
    }

    fn restore(&mut self, state: &Snapshot) -> Result<(), Invalid> {
        let mut cpu = Euler::<T>::new(self.cfg.clone());
        cpu.restore(state)?;
        self.adopt(cpu)
    }
}
