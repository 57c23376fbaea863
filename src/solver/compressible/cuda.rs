//! The compressible solvers on the GPU: the same discretisations as [`Euler`] (MUSCL-Hancock
//! with every Riemann solver, limiter and reconstruction, and CE/SE), kernel for kernel, with the
//! state in device memory (kernels in `kernels/muscl_hancock.cu`, `kernels/cese.cu` and
//! `kernels/euler.cuh`).
//!
//! Storage: the padded cell array of [`Layout`] as structure of arrays, component `c` of cell
//! `k` at `q[c * len + k]` (`len = stride * rows`), so neighbouring threads read neighbouring
//! addresses; the CPU's array of `[T; 4]` is transposed on upload and readback.
//!
//! One step enqueues, on one stream: the ghost cells (y sides, then x sides, as
//! `boundary::fill`), then either the MUSCL-Hancock face values, the fluxes through the x and
//! the y faces (one thread per face) and the in-place update, or the two CE/SE half-steps
//! (corners, then centres), and finally the step reduction: the largest wave rate (the next
//! step's `dt`), the smallest density and pressure and the first inadmissible cell. The host
//! waits once per step, for those scalars; a step that leaves an inadmissible cell reads the
//! state back and reports it as the CPU does ([`SolverError::Diverged`]).
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

use super::config::Bc;
use super::layout::Layout;
use super::state::{conserved, from_soa, to_soa};
use super::{Euler, FIELDS_2D, time_step};
use crate::backend::cuda::{Args, CudaError, DevBuf, Gpu, KernelSet, Module, Pinned, Readback, limiter_code};
use crate::case::{CaseSpec, Invalid, Kind, Method, RiemannSolver};
use crate::solver::real::Real;
use crate::solver::{Snapshot, Solver, SolverError, SolverInfo, check_transfer};
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};

/// Thread blocks: 32 x 8 for 2D grids, 256 for 1D.
const B2: (u32, u32, u32) = (32, 8, 1);
const B1: (u32, u32, u32) = (256, 1, 1);
/// `NO_BAD_CELL` of `kernels/euler.cuh`.
const NO_BAD_CELL: i32 = i32::MAX;

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

fn riemann_code(r: RiemannSolver) -> i64 {
    match r {
        RiemannSolver::Exact => 0,
        RiemannSolver::Hllc => 1,
        RiemannSolver::Roe => 2,
        RiemannSolver::RoeNoFix => 3,
        RiemannSolver::Hll => 4,
        RiemannSolver::Rusanov => 5,
    }
}

/// Boundary kinds two bits per side (`EBC_*` of `kernels/euler.cuh`).
fn pack_bc(bc: &[Bc; 4]) -> i64 {
    bc.iter().enumerate().fold(0, |acc, (side, b)| {
        let code = match b {
            Bc::Reflective => 0,
            Bc::Transmissive => 1,
            Bc::Periodic => 2,
            Bc::Inflow(_) => 3,
        };
        acc | (code << (2 * side))
    })
}

fn grid_of(n: (usize, usize), block: (u32, u32, u32)) -> (u32, u32, u32) {
    (
        (n.0 as u32).div_ceil(block.0).max(1),
        (n.1 as u32).div_ceil(block.1).max(1),
        1,
    )
}

fn err(step: u64, time: f64) -> impl Fn(CudaError) -> SolverError {
    move |e| SolverError::Device {
        step,
        time,
        message: e.0,
    }
}

/// Device work arrays of the scheme.
enum Work<T> {
    /// Face values (`2 dim` faces x 4 components per padded cell), fluxes through the x faces
    /// (`4 (nx + 1) ny`) and the y faces (`4 nx (ny + 1)`, 2D only).
    Muscl {
        faces: DevBuf<T>,
        fx: DevBuf<T>,
        fy: Option<DevBuf<T>>,
    },
    /// Centre gradients (padded, `qy` in 2D only) and the corner points
    /// (`4 (1 + dim)` values per corner).
    Cese {
        qx: DevBuf<T>,
        qy: Option<DevBuf<T>>,
        corners: DevBuf<T>,
    },
}

struct Mirror<T: Real> {
    cpu: Euler<T>,
    stale: bool,
    staging: Option<Pinned<T>>,
}

/// A compressible solver on a CUDA device (precision `T`).
pub struct CudaEuler<T: Real> {
    gpu: Arc<Gpu>,
    module: Module,
    /// `kernels/display.cu`.
    display: Module,
    cfg: super::Config,
    l: Layout,
    /// Conserved variables, structure of arrays over the padded layout.
    q: DevBuf<T>,
    solid: DevBuf<u8>,
    /// Conserved inflow state per side (`4 side + c`), for the current gamma.
    inflow: DevBuf<T>,
    work: Work<T>,
    /// Block partials of the step reduction (3 per block) and first bad cells (1 per block).
    part: DevBuf<T>,
    bad_part: DevBuf<i32>,
    /// Reduced: max wave rate, min density, min pressure; first bad cell.
    sc: DevBuf<T>,
    bad: DevBuf<i32>,
    sc_host: Pinned<T>,
    bad_host: Pinned<i32>,
    mirror: Mutex<Mirror<T>>,
    /// Device-derived fields on their way to the host.
    readback: Mutex<Readback<T>>,
    /// Max wave rate of the current state (the next step's dt).
    rate: f64,
    time: f64,
    steps: u64,
    dt: f64,
    dt_cap: f64,
    residuals: Vec<(&'static str, f64)>,
}

impl<T: Real> CudaEuler<T> {
    pub fn new(cfg: super::Config) -> Result<Self, CudaError> {
        let gpu = Gpu::new()?;
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
                fx: gpu.alloc_zeros(4 * (nx + 1) * ny)?,
                fy: if dim == 2 {
                    Some(gpu.alloc_zeros(4 * nx * (ny + 1))?)
                } else {
                    None
                },
            },
        };
        let blocks = {
            let g = grid_of((nx, ny), if dim == 2 { B2 } else { B1 });
            (g.0 * g.1) as usize
        };
        let q = gpu.alloc(4 * len)?;
        let solid = gpu.alloc(len)?;
        gpu.upload(&solid, &cpu.solid.iter().map(|&s| s as u8).collect::<Vec<u8>>())?;
        let mut s = Self {
            inflow: gpu.alloc_zeros(16)?,
            part: gpu.alloc_zeros(3 * blocks)?,
            bad_part: gpu.alloc_zeros(blocks)?,
            sc: gpu.alloc_zeros(4)?,
            bad: gpu.alloc_zeros(1)?,
            sc_host: gpu.pinned(4)?,
            bad_host: gpu.pinned(1)?,
            q,
            solid,
            work,
            module,
            display,
            readback: Mutex::new(Readback::new(&gpu, nx * ny)),
            gpu,
            l,
            cfg,
            mirror: Mutex::new(Mirror {
                cpu,
                stale: false,
                staging: None,
            }),
            rate: 0.0,
            time: 0.0,
            steps: 0,
            dt: 0.0,
            dt_cap: f64::INFINITY,
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
        self.gpu.upload(&self.q, &to_soa(&m.cpu.u))
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
        self.gpu.upload(&self.inflow, &v)
    }

    fn launch(
        &self,
        name: &'static str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        a: Args,
    ) -> Result<(), CudaError> {
        let f = self.module.function(name)?;
        // SAFETY: every call site passes the arguments of the named kernel in kernels/*.cu and
        // kernels/euler.cuh, in order, with buffers allocated in `new` for this layout.
        unsafe { self.gpu.launch(f, grid, block, &a) }
    }

    /// The block shape and grid of a kernel over `n` threads (x, y).
    fn shape(&self, n: (usize, usize)) -> ((u32, u32, u32), (u32, u32, u32)) {
        let block = if self.l.dim == 2 { B2 } else { B1 };
        (grid_of(n, block), block)
    }

    /// Arguments `len, stride, g0, g1, nx, ny` after `a`.
    fn geometry(&self, a: Args) -> Args {
        let l = &self.l;
        a.l(l.len() as i64)
            .i(l.stride as i64)
            .i(l.g[0] as i64)
            .i(l.g[1] as i64)
            .i(l.n[0] as i64)
            .i(l.n[1] as i64)
    }

    /// The ghost cells of `q` (and of the CE/SE gradients): y sides, then x sides.
    fn ghosts(&self) -> Result<(), CudaError> {
        let l = self.l;
        let (gx, gy) = match &self.work {
            Work::Cese { qx, qy, .. } => (qx.ptr, qy.as_ref().map_or(0, |b| b.ptr)),
            Work::Muscl { .. } => (0, 0),
        };
        for d in (0..l.dim).rev() {
            let span = if d == 1 { l.n[0] } else { l.n[1] + 2 * l.g[1] };
            let threads = span * l.g[d] * 2;
            let a = Args::new().p(&self.q).l(gx as i64).l(gy as i64).p(&self.inflow);
            let a = self.geometry(a).i(d as i64).i(pack_bc(&self.cfg.bc));
            self.launch("euler_ghosts", grid_of((threads, 1), B1), B1, a)?;
        }
        Ok(())
    }

    fn muscl_faces(&self, dt: f64) -> Result<(), CudaError> {
        let Work::Muscl { faces, .. } = &self.work else {
            unreachable!("MUSCL work arrays")
        };
        let (l, h) = (self.l, self.cfg.grid.spacing);
        let a = self.geometry(Args::new().p(&self.q).p(&self.solid).p(faces));
        let a = a
            .i(l.dim as i64)
            .r(T::of(self.cfg.gamma))
            .i(limiter_code(self.cfg.limiter))
            .i(self.cfg.characteristic as i64)
            .r(T::of(0.5 * dt / h[0]))
            .r(T::of(0.5 * dt / h[1]));
        let (grid, block) = self.shape((l.stride, l.rows));
        self.launch("mh_faces", grid, block, a)
    }

    fn muscl_flux(&self, d: usize) -> Result<(), CudaError> {
        let Work::Muscl { faces, fx, fy } = &self.work else {
            unreachable!("MUSCL work arrays")
        };
        let [nx, ny] = self.l.n;
        let out = if d == 0 { fx } else { fy.as_ref().expect("2D") };
        let a = self.geometry(Args::new().p(faces).p(&self.solid).p(out));
        let a = a
            .i(d as i64)
            .r(T::of(self.cfg.gamma))
            .i(riemann_code(self.cfg.riemann));
        let (grid, block) = self.shape((nx + 1 - d, ny + d));
        self.launch("mh_flux", grid, block, a)
    }

    fn muscl_update(&self, dt: f64) -> Result<(), CudaError> {
        let Work::Muscl { fx, fy, .. } = &self.work else {
            unreachable!("MUSCL work arrays")
        };
        let (l, h) = (self.l, self.cfg.grid.spacing);
        let a = Args::new().p(&self.q).p(&self.solid).p(fx);
        let a = match fy {
            Some(fy) => a.p(fy),
            None => a.null(),
        };
        let a = self
            .geometry(a)
            .i(l.dim as i64)
            .r(T::of(dt / h[0]))
            .r(T::of(dt / h[1]));
        let (grid, block) = self.shape((l.n[0], l.n[1]));
        self.launch("mh_update", grid, block, a)
    }

    /// One CE/SE half-step: `corners` (centres -> corners) or `centres` (corners -> centres).
    fn cese_half(&self, kernel: &'static str, dt: f64) -> Result<(), CudaError> {
        let Work::Cese { qx, qy, corners } = &self.work else {
            unreachable!("CE/SE work arrays")
        };
        let (l, h) = (self.l, self.cfg.grid.spacing);
        let a = Args::new().p(&self.q).p(qx);
        let a = match qy {
            Some(qy) => a.p(qy),
            None => a.null(),
        };
        let a = self
            .geometry(a.p(corners))
            .i(l.dim as i64)
            .r(T::of(self.cfg.gamma))
            .r(T::of(self.cfg.alpha))
            .r(T::of(dt))
            .r(T::of(h[0]))
            .r(T::of(h[1]));
        let n = if kernel == "cese_corners" {
            (l.n[0] + 1, if l.dim == 2 { l.n[1] + 1 } else { 1 })
        } else {
            (l.n[0], l.n[1])
        };
        let (grid, block) = self.shape(n);
        self.launch(kernel, grid, block, a)
    }

    fn reduce_kernel(&self) -> Result<usize, CudaError> {
        let (l, h) = (self.l, self.cfg.grid.spacing);
        let (grid, block) = self.shape((l.n[0], l.n[1]));
        let a = self.geometry(Args::new().p(&self.q).p(&self.solid));
        let a = a
            .i(l.dim as i64)
            .r(T::of(self.cfg.gamma))
            .r(T::of(1.0 / h[0]))
            .r(T::of(1.0 / h[1]))
            .p(&self.part)
            .p(&self.bad_part);
        self.launch("euler_reduce", grid, block, a)?;
        Ok((grid.0 * grid.1) as usize)
    }

    /// The step reduction of the current state, read back (one host wait): the wave rate and the
    /// min density and pressure residuals; returns the first inadmissible cell, if any.
    fn reduce(&mut self) -> Result<Option<usize>, CudaError> {
        let nb = self.reduce_kernel()?;
        self.launch(
            "euler_reduce_finalize",
            (1, 1, 1),
            (1024, 1, 1),
            Args::new()
                .p(&self.part)
                .p(&self.bad_part)
                .i(nb as i64)
                .p(&self.sc)
                .p(&self.bad),
        )?;
        self.gpu.download_async(&mut self.sc_host, &self.sc, 4)?;
        self.gpu.download_async(&mut self.bad_host, &self.bad, 1)?;
        self.gpu.sync()?;
        let sc = self.sc_host.as_slice();
        self.rate = sc[0].f64();
        self.residuals[1].1 = sc[1].f64();
        self.residuals[2].1 = sc[2].f64();
        let bad = self.bad_host.as_slice()[0];
        Ok((bad != NO_BAD_CELL).then_some(bad as usize))
    }

    /// Enqueues one step of size `dt` (no host wait).
    fn enqueue_step(&self, dt: f64) -> Result<(), CudaError> {
        self.gpu.bind()?;
        self.ghosts()?;
        match self.cfg.method {
            Method::Cese => {
                self.cese_half("cese_corners", dt)?;
                self.cese_half("cese_centres", dt)
            }
            _ => {
                self.muscl_faces(dt)?;
                for d in 0..self.l.dim {
                    self.muscl_flux(d)?;
                }
                self.muscl_update(dt)
            }
        }
    }

    /// Runs `f` on the CPU mirror after copying the device state into it if it changed.
    fn with_mirror<R>(&self, f: impl FnOnce(&mut Euler<T>) -> R) -> Result<R, CudaError> {
        let mut m = self.mirror.lock().expect("mirror lock");
        if m.stale {
            self.gpu.bind()?;
            let len = self.l.len();
            if m.staging.is_none() {
                m.staging = Some(self.gpu.pinned(4 * len)?);
            }
            let Mirror { cpu, staging, stale } = &mut *m;
            let staging = staging.as_mut().expect("staging allocated");
            self.gpu.download_async(staging, &self.q, 4 * len)?;
            self.gpu.sync()?;
            from_soa(staging.as_slice(), &mut cpu.u);
            *stale = false;
        }
        let cpu = &mut m.cpu;
        (cpu.time, cpu.steps, cpu.dt) = (self.time, self.steps, self.dt);
        Ok(f(cpu))
    }

    /// Enqueues `euler_display` of `kernels/display.cu`, which writes field `name` (one of
    /// [`super::FIELDS_2D`], or of [`super::FIELDS_1D`] in 1D) of the current state into `dst`
    /// (`nx * ny` cell values, `x` fastest).
    fn derive(&self, name: &str, dst: &DevBuf<T>) -> Result<(), CudaError> {
        let code = FIELDS_2D.iter().position(|f| *f == name).expect("a known field");
        let (l, h) = (self.l, self.cfg.grid.spacing);
        let a = self.geometry(Args::new().p(&self.q).p(dst));
        let a = a.i(code as i64).r(self.cfg.gamma).r(h[0]).r(h[1]);
        let f = self.display.function("euler_display")?;
        // SAFETY: the arguments of `euler_display`, in order; q is the padded state of this
        // layout, dst holds nx ny values.
        unsafe { self.gpu.launch(f, grid_of((l.n[0], l.n[1]), B2), B2, &a) }
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

    /// Times the main kernels with CUDA events (`reps` back-to-back launches each, after one
    /// warm-up launch) on this solver's buffers, for a step of the current `dt`; the state is
    /// restored afterwards. Returns (kernel, milliseconds per launch, bytes per launch by the
    /// model: every array the kernel reads or writes counted once, `s` bytes per value, `N`
    /// cells, `P = 4 (1 + dim)` values per CE/SE point):
    /// `mh_faces` `(4 + 8 dim) N s` (state in, face values out), `mh_flux` per axis `12 N s`
    /// (two face values in, flux out), `mh_update` `(8 + 4 dim) N s`, `cese_corners` and
    /// `cese_centres` `2 P N s`, `euler_reduce` `4 N s` (the solid mask's byte per cell is
    /// left out).
    pub fn kernel_timings(&mut self, reps: usize) -> Result<Vec<(&'static str, f64, f64)>, CudaError> {
        self.gpu.bind()?;
        let dt = time_step(&self.cfg, self.rate, self.dt_cap, self.steps, self.time)
            .map_err(|e| CudaError(e.to_string()))?;
        let n = (self.l.n[0] * self.l.n[1]) as f64;
        let sz = std::mem::size_of::<T>() as f64;
        let dim = self.l.dim as f64;
        let saved = self.gpu.alloc::<T>(self.q.len)?;
        self.gpu.copy(&saved, &self.q)?;
        self.ghosts()?;
        type Launch<T> = Box<dyn Fn(&CudaEuler<T>) -> Result<(), CudaError>>;
        let mut kernels: Vec<(&'static str, f64, Launch<T>)> = Vec::new();
        match self.cfg.method {
            Method::Cese => {
                let p = 4.0 * (1.0 + dim);
                kernels.push((
                    "cese_corners",
                    2.0 * p,
                    Box::new(move |s| s.cese_half("cese_corners", dt)),
                ));
                kernels.push((
                    "cese_centres",
                    2.0 * p,
                    Box::new(move |s| s.cese_half("cese_centres", dt)),
                ));
            }
            _ => {
                kernels.push(("mh_faces", 4.0 + 8.0 * dim, Box::new(move |s| s.muscl_faces(dt))));
                kernels.push(("mh_flux x", 12.0, Box::new(|s| s.muscl_flux(0))));
                if self.l.dim == 2 {
                    kernels.push(("mh_flux y", 12.0, Box::new(|s| s.muscl_flux(1))));
                }
                kernels.push((
                    "mh_update",
                    8.0 + 4.0 * dim,
                    Box::new(move |s| s.muscl_update(dt)),
                ));
            }
        }
        kernels.push(("euler_reduce", 4.0, Box::new(|s| s.reduce_kernel().map(|_| ()))));
        let mut out = Vec::new();
        for (name, arrays, launch) in kernels {
            launch(self)?;
            let (a, b) = (self.gpu.event()?, self.gpu.event()?);
            a.record()?;
            for _ in 0..reps {
                launch(self)?;
            }
            b.record()?;
            let ms = a.elapsed_ms(&b)? as f64 / reps as f64;
            out.push((name, ms, arrays * n * sz));
        }
        self.gpu.copy(&self.q, &saved)?;
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
            Mirror {
                cpu,
                stale: false,
                staging: None,
            },
        );
        let copied = (|| {
            self.upload_state()?;
            if let Work::Cese { qx, qy, .. } = &self.work {
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
            self.reduce().map(|_| ())
        })();
        if let Err(e) = copied {
            *self.mirror.lock().expect("mirror lock") = previous;
            return Err(Invalid::new(
                "solver.backend",
                format!("copying the state to the GPU failed: {e}"),
            ));
        }
        (self.time, self.steps, self.dt) = (time, steps, dt);
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
        let rate = self.rate;
        let dt = time_step(&self.cfg, rate, self.dt_cap, self.steps, self.time)?;
        self.mirror.lock().expect("mirror lock").stale = true;
        self.readback
            .get_mut()
            .expect("readback lock")
            .invalidate(self.steps + 1);
        let device = err(self.steps, self.time);
        self.enqueue_step(dt).map_err(&device)?;
        self.time += dt;
        self.steps += 1;
        self.dt = dt;
        self.residuals[0].1 = rate;
        let Some(bad) = self.reduce().map_err(&device)? else {
            return Ok(());
        };
        // The CPU's check names the cell and its state: run it on the read-back state.
        let (found, minima) = self
            .with_mirror(|cpu| (cpu.check_state(), [cpu.residuals[1].1, cpu.residuals[2].1]))
            .map_err(err(self.steps, self.time))?;
        // The CPU check's minima include the offending cell's values (NaN where they are).
        self.residuals[1].1 = minima[0];
        self.residuals[2].1 = minima[1];
        Err(found.err().unwrap_or_else(|| SolverError::Diverged {
            step: self.steps,
            time: self.time,
            message: format!("an inadmissible state in cell {bad} (row-major interior index)"),
        }))
    }

    fn dt(&self) -> f64 {
        self.dt
    }

    fn set_dt_cap(&mut self, cap: f64) {
        self.dt_cap = cap;
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

    fn field(&self, name: &str, out: &mut Vec<f64>) -> Option<()> {
        let mut r = self.readback.lock().expect("readback lock");
        r.solver_field(self.field_names(), name, |n, dst| self.derive(n, dst), out)
    }

    fn prefetch(&self, names: &[&str]) {
        let mut r = self.readback.lock().expect("readback lock");
        r.solver_prefetch(self.field_names(), names, |n, dst| self.derive(n, dst));
    }

    fn display_fields(&self, names: &[&str], out: &mut [Vec<f64>]) -> Option<u64> {
        let mut r = self.readback.lock().expect("readback lock");
        r.solver_display(self.field_names(), names, |n, dst| self.derive(n, dst), out)
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
        // Gamma is live: the inflow states and the next step's wave rate depend on it.
        (|| {
            self.upload_inflow()?;
            self.reduce().map(|_| ())
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
        if let Work::Cese { qx, qy, .. } = &self.work {
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
