//! The projection method on the GPU: the same discretisation as [`super::Projection`]
//! (`projection.rs`, `staggered.rs`, `convection.rs`, `pressure_poisson/`), kernel for kernel,
//! with all state in device memory (kernels in `kernels/projection.cu` and
//! `kernels/poisson.cu`).
//!
//! One step enqueues, on one stream: the step's health check, `dt` and AB2 weights from the
//! previous step's max speeds (`step_dt`, into a device clock that the step kernels read),
//! predictor (both components, every convection scheme and limiter, Euler or AB2), predictor
//! boundary faces, Poisson right-hand side `div(F)/dt`, the pressure solve, the correction
//! `u = F - dt grad p` fused with the steady-change sums and the max speeds of the next `dt`, and
//! the velocity ghosts (x sides, then y sides). With the iterative pressure solvers the host
//! waits once per step, for a block of scalars (max speeds, sums, solver statistics, the clock),
//! plus once per `CHECK_EVERY` iterations of Jacobi/SOR/PCG and once per multigrid V-cycle for
//! the convergence flag; iterations enqueued after convergence exit at once (device-side flag),
//! so the iterates and iteration counts are those of the CPU solver. With the transform solve
//! nothing in a step waits: the right-hand side is written straight into the transform's
//! reordering, `correct` reads the reordered solution, and [`Solver::advance`] replays the step
//! as one CUDA graph per step and reads the scalars once per batch; a failed health check halts
//! the rest of the batch on the device, leaving the state of the last healthy step.
//!
//! Element-wise kernels are compiled without FMA contraction and use the CPU's operation order,
//! so they round identically; only sums (norms, dot products, means) are added in a different
//! (fixed, tree) order.
//!
//! Fields ([`Solver::field`], [`Solver::prefetch`]) are derived on the device
//! (`kernels/display.cu`: every field of [`super::FIELDS`], the stream function too, by the
//! CPU's path integral) and only the requested field comes back, one value per cell, through
//! [`cuda::Readback`]. Point samples, the cavity summary, [`CudaProjection::host_field`] and
//! [`Solver::load_state`] still read the whole state (u, v, p) back into a CPU [`Projection`]
//! mirror whose code is reused unchanged; none of them runs per frame.

use super::config::Config;
use super::device_fields::{StaggeredDisplay, StaggeredState};
use super::pressure_poisson::spectral::Axes;
use super::pressure_poisson::{FaceBc, Laplacian, PoissonSettings, optimal_sor_omega};
use super::staggered::{Layout, fill_velocity_ghosts};
use super::{FIELDS, Projection};
use crate::backend::cuda::fft::RealFft2d;
use crate::backend::cuda::{
    self, Args, CudaError, DevBuf, Gpu, Graph, KernelSet, Module, Pinned, Readback, limiter_code,
};
use crate::case::{Boundary, CaseSpec, Convection, Invalid, Kind, PressureSolverKind, TimeIntegrator};
use crate::solver::real::Real;
use crate::solver::{CappedSolve, Snapshot, Solver, SolverError, SolverInfo, check_transfer};
use std::sync::{Arc, Mutex};

/// Jacobi sweeps, SOR iterations and PCG iterations enqueued between reads of the done flag.
const CHECK_EVERY: usize = 16;
/// SOR checks its residual every this many iterations (red_black.rs).
const SOR_CHECK: usize = 4;
/// 2D thread block.
const BX: u32 = 32;
const BY: u32 = 8;
/// 1D thread block.
const B1: u32 = 256;
/// Rows per thread of the Poisson stencil kernels jacobi_sweep, rb_sweep, residual and apply_dot
/// (TROWS in kernels/common.cuh): a (BX, BY) block covers BX x BY TILE_ROWS cells.
const TILE_ROWS: u32 = 4;

// Slots of the scalar and control blocks (kernels/common.cuh).
const SC_BNORM: usize = 1;
const SC_RNORM: usize = 2;
const SC_UMAX: usize = 8;
const SC_VMAX: usize = 9;
const SC_CHANGE: usize = 10;
const SC_NORM: usize = 11;
const SC_LEN: usize = 16;
const CTRL_DONE: usize = 0;
const CTRL_ITERS: usize = 1;
const CTRL_HALT: usize = 3;
const CTRL_LEN: usize = 4;
// Slots of the step clock (kernels/projection.cu `CK_*`).
const CK_DT: usize = 0;
const CK_TIME: usize = 1;
const CK_HISTORY: usize = 4;
const CK_STEPS: usize = 5;
const CK_DT_CAP: usize = 6;
const CK_LEN: usize = 8;

fn grid2(nx: usize, ny: usize) -> (u32, u32, u32) {
    ((nx as u32).div_ceil(BX), (ny as u32).div_ceil(BY), 1)
}

fn blocks2(nx: usize, ny: usize) -> usize {
    let g = grid2(nx, ny);
    (g.0 * g.1) as usize
}

/// Grid of the kernels of TILE_ROWS rows per thread (the Poisson stencils jacobi_sweep, rb_sweep,
/// residual and apply_dot; predict, poisson_rhs, correct and max_speed).
fn grid_tile(nx: usize, ny: usize) -> (u32, u32, u32) {
    ((nx as u32).div_ceil(BX), (ny as u32).div_ceil(BY * TILE_ROWS), 1)
}

fn blocks_tile(nx: usize, ny: usize) -> usize {
    let g = grid_tile(nx, ny);
    (g.0 * g.1) as usize
}

fn grid1(n: usize) -> (u32, u32, u32) {
    ((n as u32).div_ceil(B1).max(1), 1, 1)
}

/// `fill_velocity_ghosts` (staggered.rs) on the device for both staggered solvers: `ghosts_x`
/// (x sides, rows 1..=ny) then `ghosts_y` (y sides, all columns) of `kernels/projection.cu`
/// (module `mp`), with the side codes of [`boundary_codes`]. `ctrl` is the projection's control
/// block (its halt flag skips the kernels); the SIMPLE family passes `None`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fill_ghosts<T: Real>(
    gpu: &Gpu,
    mp: &Module,
    l: &Layout,
    u: &DevBuf<T>,
    v: &DevBuf<T>,
    (bck, bcv): (&DevBuf<i32>, &DevBuf<T>),
    ctrl: Option<&DevBuf<i32>>,
) -> Result<(), CudaError> {
    let args = || {
        let a = Args::new().p(u).p(v).p(bck).p(bcv).i(l.nx as i64).i(l.ny as i64);
        match ctrl {
            Some(c) => a.p(c),
            None => a.null(),
        }
    };
    // SAFETY: ghosts_x / ghosts_y take (u, v, bck, bcv, nx, ny, ctrl); u and v are the staggered
    // arrays of `l` (with ghosts), bck and bcv the four sides' codes and values.
    unsafe {
        gpu.launch(mp.function("ghosts_x")?, grid1(l.ny + 1), (B1, 1, 1), &args())?;
        gpu.launch(mp.function("ghosts_y")?, grid1(l.nx + 2), (B1, 1, 1), &args())
    }
}

/// The velocity conditions as `ghosts_x` / `ghosts_y` of `kernels/projection.cu` read them, in
/// device memory: a kind per side (`BC_*` of `kernels/common.cuh`) and two values per side (the
/// tangential wall velocity, or the inflow velocity's x and y components).
pub(crate) fn boundary_codes<T: Real>(
    gpu: &Arc<Gpu>,
    bc: &[Boundary; 4],
) -> Result<(DevBuf<i32>, DevBuf<T>), CudaError> {
    let mut bck = [0i32; 4];
    let mut bcv = [T::zero(); 8];
    for (side, b) in bc.iter().enumerate() {
        bck[side] = match b {
            Boundary::Wall { velocity } => {
                bcv[2 * side] = T::of(*velocity);
                0
            }
            Boundary::Inflow { velocity, .. } => {
                bcv[2 * side] = T::of(velocity[0]);
                bcv[2 * side + 1] = T::of(velocity[1]);
                1
            }
            Boundary::Outflow {} => 2,
            Boundary::Symmetry {} => 3,
            Boundary::Periodic {} => 4,
        };
    }
    let bck_d = gpu.alloc::<i32>(4)?;
    gpu.upload(&bck_d, &bck)?;
    let bcv_d = gpu.alloc::<T>(8)?;
    gpu.upload(&bcv_d, &bcv)?;
    Ok((bck_d, bcv_d))
}

/// A CUDA failure at `step` (time `time`) as the solver's error.
pub(crate) fn err(step: u64, time: f64) -> impl Fn(CudaError) -> SolverError {
    move |e| SolverError::Device {
        step,
        time,
        message: e.0,
    }
}

/// Why a case cannot run on the CUDA backend (the key and a message), if it cannot.
pub fn unsupported(cfg: &Config) -> Option<Invalid> {
    let [nx, ny, _] = cfg.grid.n;
    if nx < 2 || ny < 2 {
        return Some(Invalid::new(
            "grid.nx",
            "the CUDA backend needs at least 2 x 2 cells",
        ));
    }
    if cfg.poisson.kind == PressureSolverKind::Fft && !cuda::fft::available() {
        return Some(Invalid::new(
            "solver.pressure_solver",
            "fft on the CUDA backend needs the cuFFT library (libcufft.so), which was not found; \
             choose multigrid, or backend = \"cpu\"",
        ));
    }
    None
}

struct MgLevel<T> {
    op: Laplacian<T>,
    r: DevBuf<T>,
    x: DevBuf<T>,
    b: DevBuf<T>,
}

/// Device workspace of the pressure solver in use.
enum Work<T> {
    Jacobi {
        next: DevBuf<T>,
    },
    Sor,
    Pcg {
        r: DevBuf<T>,
        w: DevBuf<T>,
        d: DevBuf<T>,
        q: DevBuf<T>,
    },
    Multigrid {
        levels: Vec<MgLevel<T>>,
        /// Coarsest-level CG vectors: rhs, r, w, d, q.
        cg: [DevBuf<T>; 5],
    },
    /// The cosine-transform solve (`dct_*` in kernels/poisson.cu).
    Spectral(Box<SpectralWork<T>>),
}

/// Device workspace of the transform solve: the reordered field, its half spectrum, the
/// twiddles `cos, sin (pi k / 2n)` per axis, and the eigenvalues of `spectral::Axes`.
struct SpectralWork<T> {
    fft: RealFft2d,
    v: DevBuf<T>,
    spectrum: DevBuf<T>,
    twiddle_x: DevBuf<T>,
    twiddle_y: DevBuf<T>,
    lambda_x: DevBuf<f64>,
    lambda_y: DevBuf<f64>,
    /// Bit 0: Dirichlet x axis, bit 1: Dirichlet y axis.
    flip: i64,
}

impl<T: Real> SpectralWork<T> {
    fn new(gpu: &Arc<Gpu>, op: &Laplacian<T>) -> Result<Self, CudaError> {
        let (nx, ny) = (op.nx, op.ny);
        let axes = Axes::new(op).map_err(CudaError)?;
        let twiddles = |n: usize| -> Result<DevBuf<T>, CudaError> {
            let t: Vec<T> = (0..n)
                .flat_map(|k| {
                    let a = std::f64::consts::PI * k as f64 / (2 * n) as f64;
                    [T::of(a.cos()), T::of(a.sin())]
                })
                .collect();
            let b = gpu.alloc(2 * n)?;
            gpu.upload(&b, &t)?;
            Ok(b)
        };
        let table = |l: &[f64]| -> Result<DevBuf<f64>, CudaError> {
            let b = gpu.alloc(l.len())?;
            gpu.upload(&b, l)?;
            Ok(b)
        };
        let double = std::mem::size_of::<T>() == 8;
        Ok(Self {
            fft: RealFft2d::new(gpu, ny, nx, double)?,
            v: gpu.alloc_zeros(nx * ny)?,
            spectrum: gpu.alloc_zeros(2 * ny * (nx / 2 + 1))?,
            twiddle_x: twiddles(nx)?,
            twiddle_y: twiddles(ny)?,
            lambda_x: table(&axes.lambda_x)?,
            lambda_y: table(&axes.lambda_y)?,
            flip: axes.flip[0] as i64 | (axes.flip[1] as i64) << 1,
        })
    }
}

struct Mirror<T: Real> {
    cpu: Option<Projection<T>>,
    stale: bool,
    staging: Option<[Pinned<T>; 3]>,
}

/// The projection solver on a CUDA device (precision `T`).
pub struct CudaProjection<T: Real> {
    gpu: Arc<Gpu>,
    mp: Module,
    mq: Module,
    cfg: Config,
    l: Layout,
    op: Laplacian<T>,
    u: DevBuf<T>,
    v: DevBuf<T>,
    f: DevBuf<T>,
    g: DevBuf<T>,
    hu: DevBuf<T>,
    hv: DevBuf<T>,
    p: DevBuf<T>,
    rhs: DevBuf<T>,
    part_a: DevBuf<T>,
    part_b: DevBuf<T>,
    sc: DevBuf<T>,
    ctrl: DevBuf<i32>,
    /// The step clock: dt, time, AB2 weights and history, steps, dt cap (`CK_*`).
    clock: DevBuf<f64>,
    bck: DevBuf<i32>,
    bcv: DevBuf<T>,
    work: Work<T>,
    /// The top-level multigrid V-cycle as a CUDA graph (captured at first use).
    v_cycle_graph: Option<Graph>,
    /// A whole step with the transform pressure solve as a CUDA graph, without and with the
    /// steady-change statistics (index `stats as usize`; captured at first use, dropped when
    /// the settings change: kernel arguments are frozen in them).
    step_graphs: [Option<Graph>; 2],
    /// Whether to capture and replay graphs ([`cuda::graphs_enabled`]; off after a failed capture).
    graphs: bool,
    sc_host: Pinned<T>,
    ctrl_host: Pinned<i32>,
    clock_host: Pinned<f64>,
    /// The host changed what the clock holds (dt cap, history, time): upload before stepping.
    clock_stale: bool,
    mirror: Mutex<Mirror<T>>,
    /// Device-derived fields on their way to the host.
    readback: Mutex<Readback<T>>,
    /// The display kernels.
    display: StaggeredDisplay,
    umax: f64,
    vmax: f64,
    time: f64,
    steps: u64,
    dt: f64,
    dt_cap: f64,
    has_history: bool,
    residuals: Vec<(&'static str, f64)>,
    /// The last step's pressure solve, when it stopped at its iteration cap.
    capped: Option<CappedSolve>,
}

fn pack_pbc<T>(op: &Laplacian<T>) -> i64 {
    op.bc.iter().enumerate().fold(0, |acc, (side, b)| {
        let code = match b {
            FaceBc::Neumann => 0,
            FaceBc::Dirichlet => 1,
            FaceBc::Periodic => 2,
        };
        acc | (code << (2 * side))
    })
}

fn convection_code(c: Convection) -> i64 {
    match c {
        Convection::Central => 0,
        Convection::Upwind => 1,
        Convection::Tvd => 2,
        Convection::Quick => 3,
        Convection::PowerLaw => unreachable!("Config::from_spec rejects power_law for the projection method"),
    }
}

impl<T: Real> CudaProjection<T> {
    pub fn new(cfg: Config) -> Result<Self, CudaError> {
        let gpu = Gpu::new()?;
        let mp = gpu.module(KernelSet::Projection, T::NAME)?;
        let mq = gpu.module(KernelSet::Poisson, T::NAME)?;
        let [nx, ny, _] = cfg.grid.n;
        let l = Layout::new(nx, ny, &cfg.bc);
        let op = cfg.pressure_operator::<T>();
        let n = l.len();
        let mut hu = vec![T::of(cfg.initial_velocity[0]); n];
        let mut hv = vec![T::of(cfg.initial_velocity[1]); n];
        fill_velocity_ghosts(&l, &cfg.bc, &mut hu, &mut hv);
        let u = gpu.alloc::<T>(n)?;
        let v = gpu.alloc::<T>(n)?;
        gpu.upload(&u, &hu)?;
        gpu.upload(&v, &hv)?;
        let parts = 2 * blocks2(nx + 2, ny + 2).max(grid1(nx * ny).0 as usize) + 16;
        let (bck_d, bcv_d) = boundary_codes::<T>(&gpu, &cfg.bc)?;
        let work = Self::workspace(&gpu, &op, cfg.poisson.kind)?;
        let mut s = Self {
            f: gpu.alloc_zeros(n)?,
            g: gpu.alloc_zeros(n)?,
            hu: gpu.alloc_zeros(n)?,
            hv: gpu.alloc_zeros(n)?,
            p: gpu.alloc_zeros(nx * ny)?,
            rhs: gpu.alloc_zeros(nx * ny)?,
            part_a: gpu.alloc_zeros(parts)?,
            part_b: gpu.alloc_zeros(parts)?,
            sc: gpu.alloc_zeros(SC_LEN)?,
            ctrl: gpu.alloc_zeros(CTRL_LEN)?,
            clock: gpu.alloc_zeros(CK_LEN)?,
            sc_host: gpu.pinned(SC_LEN)?,
            ctrl_host: gpu.pinned(CTRL_LEN)?,
            clock_host: gpu.pinned(CK_LEN)?,
            clock_stale: true,
            bck: bck_d,
            bcv: bcv_d,
            u,
            v,
            work,
            v_cycle_graph: None,
            step_graphs: [None, None],
            graphs: cuda::graphs_enabled(),
            mirror: Mutex::new(Mirror {
                cpu: None,
                stale: true,
                staging: None,
            }),
            readback: Mutex::new(Readback::new(&gpu, nx * ny)),
            display: StaggeredDisplay::new(&gpu, T::NAME)?,
            gpu,
            mp,
            mq,
            l,
            op,
            cfg,
            umax: 0.0,
            vmax: 0.0,
            time: 0.0,
            steps: 0,
            dt: 0.0,
            dt_cap: f64::INFINITY,
            has_history: false,
            residuals: Vec::with_capacity(8),
            capped: None,
        };
        s.write_clock()?;
        s.max_speeds()?;
        s.read_step()?;
        Ok(s)
    }

    fn workspace(gpu: &Arc<Gpu>, op: &Laplacian<T>, kind: PressureSolverKind) -> Result<Work<T>, CudaError> {
        let n = op.len();
        Ok(match kind {
            PressureSolverKind::Jacobi => Work::Jacobi {
                next: gpu.alloc_zeros(n)?,
            },
            PressureSolverKind::Sor => Work::Sor,
            PressureSolverKind::Pcg => Work::Pcg {
                r: gpu.alloc_zeros(n)?,
                w: gpu.alloc_zeros(n)?,
                d: gpu.alloc_zeros(n)?,
                q: gpu.alloc_zeros(n)?,
            },
            PressureSolverKind::Multigrid => {
                // The hierarchy of multigrid.rs: coarsen while the level has over 64 cells.
                let mut levels = Vec::new();
                let mut cur = Some(*op);
                while let Some(o) = cur {
                    let m = o.len();
                    let first = levels.is_empty();
                    levels.push(MgLevel {
                        op: o,
                        r: gpu.alloc_zeros(m)?,
                        x: gpu.alloc_zeros(if first { 1 } else { m })?,
                        b: gpu.alloc_zeros(if first { 1 } else { m })?,
                    });
                    cur = if m > 64 { o.coarsen() } else { None };
                }
                let m = levels.last().expect("one level").op.len();
                let cg = [
                    gpu.alloc_zeros(m)?,
                    gpu.alloc_zeros(m)?,
                    gpu.alloc_zeros(m)?,
                    gpu.alloc_zeros(m)?,
                    gpu.alloc_zeros(m)?,
                ];
                Work::Multigrid { levels, cg }
            }
            PressureSolverKind::Fft => Work::Spectral(Box::new(SpectralWork::new(gpu, op)?)),
        })
    }

    fn kp(
        &self,
        name: &'static str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        a: Args,
    ) -> Result<(), CudaError> {
        let f = self.mp.function(name)?;
        // SAFETY: every call site passes the arguments of the named kernel in kernels/*.cu, in
        // order, with buffers allocated for this solver's grid (sanitizer-checked).
        unsafe { self.gpu.launch(f, grid, block, &a) }
    }

    fn kq(
        &self,
        name: &'static str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        a: Args,
    ) -> Result<(), CudaError> {
        let f = self.mq.function(name)?;
        // SAFETY: every call site passes the arguments of the named kernel in kernels/*.cu, in
        // order, with buffers allocated for this solver's grid (sanitizer-checked).
        unsafe { self.gpu.launch(f, grid, block, &a) }
    }

    /// Enqueues the max speeds of a state not made by a step (`max_speed`) into `sc`.
    fn max_speeds(&self) -> Result<(), CudaError> {
        let l = self.l;
        self.kp(
            "max_speed",
            grid_tile(l.nx + 1, l.ny + 1),
            (BX, BY, 1),
            Args::new()
                .p(&self.u)
                .p(&self.v)
                .p(&self.part_b)
                .i(l.nx as i64)
                .i(l.ny as i64)
                .i(l.periodic_x as i64)
                .i(l.periodic_y as i64)
                .p(&self.ctrl),
        )?;
        self.finalize(false)
    }

    /// Combines the block maxima in `part_b` (of `max_speed` or `correct`) and, after a
    /// correction, its change sums in `part_a`, into `sc` (`step_finalize`).
    fn finalize(&self, after_correct: bool) -> Result<(), CudaError> {
        let nb = blocks_tile(self.l.nx + 1, self.l.ny + 1);
        self.kp(
            "step_finalize",
            (1, 1, 1),
            (1024, 1, 1),
            Args::new()
                .p(&self.part_a)
                .i(if after_correct { nb as i64 } else { 0 })
                .p(&self.part_b)
                .i(nb as i64)
                .p(&self.sc)
                .p(&self.ctrl),
        )
    }

    /// Reads the scalar, control and clock blocks (one host wait) into the host's copies.
    fn read_step(&mut self) -> Result<(), CudaError> {
        self.gpu.download_async(&mut self.sc_host, &self.sc, SC_LEN)?;
        self.gpu
            .download_async(&mut self.ctrl_host, &self.ctrl, CTRL_LEN)?;
        self.gpu
            .download_async(&mut self.clock_host, &self.clock, CK_LEN)?;
        self.gpu.sync()?;
        let sc = self.sc_host.as_slice();
        self.umax = sc[SC_UMAX].f64();
        self.vmax = sc[SC_VMAX].f64();
        let c = self.clock_host.as_slice();
        self.dt = c[CK_DT];
        self.time = c[CK_TIME];
        self.steps = c[CK_STEPS] as u64;
        self.has_history = c[CK_HISTORY] != 0.0;
        Ok(())
    }

    /// Makes `cpu`'s state this solver's: velocities and pressure uploaded, its clock (time,
    /// steps, dt) taken, and `cpu` the fresh mirror. With `history` (AB2's `H^{n-1}` of u and v,
    /// as [`Solver::snapshot`] saves it) the AB2 flag is `cpu`'s, else AB2 restarts.
    fn adopt(&mut self, mut cpu: Projection<T>, history: Option<[Vec<T>; 2]>) -> Result<(), Invalid> {
        let has_history = history.is_some() && cpu.has_ab2_history();
        let (time, steps, dt) = (cpu.time(), cpu.steps(), cpu.dt());
        let (u, v, p) = cpu.state_mut();
        (|| {
            self.gpu.upload(&self.u, u)?;
            self.gpu.upload(&self.v, v)?;
            self.gpu.upload(&self.p, p)?;
            if let Some([hu, hv]) = &history {
                self.gpu.upload(&self.hu, hu)?;
                self.gpu.upload(&self.hv, hv)?;
            }
            // A halt of an earlier diverged run no longer applies.
            self.gpu.upload(&self.ctrl, &[0; CTRL_LEN])?;
            self.max_speeds()?;
            (self.time, self.steps, self.dt, self.has_history) = (time, steps, dt, has_history);
            self.write_clock()?;
            self.read_step()
        })()
        .map_err(|e| {
            Invalid::new(
                "solver.backend",
                format!("copying the state to the GPU failed: {e}"),
            )
        })?;
        let mut m = self.mirror.lock().expect("mirror lock");
        m.cpu = Some(cpu);
        m.stale = false;
        self.readback
            .get_mut()
            .expect("readback lock")
            .invalidate(self.steps);
        Ok(())
    }

    /// Uploads the host's time, steps, dt, AB2 history flag and dt cap to the clock (waits).
    fn write_clock(&mut self) -> Result<(), CudaError> {
        let mut c = [0.0; CK_LEN];
        c[CK_DT] = self.dt;
        c[CK_TIME] = self.time;
        c[CK_HISTORY] = if self.has_history { 1.0 } else { 0.0 };
        c[CK_STEPS] = self.steps as f64;
        c[CK_DT_CAP] = self.dt_cap;
        self.gpu.upload(&self.clock, &c)?;
        self.clock_stale = false;
        Ok(())
    }

    /// The step's health check, `dt` and AB2 weights, into the clock, from the speed maxima
    /// in `part_b` (`step_dt`: config.rs `check_health` and `time_step` on the device).
    fn step_dt(&self) -> Result<(), CudaError> {
        let lim = self.cfg.step_limits();
        self.kp(
            "step_dt",
            (1, 1, 1),
            (1024, 1, 1),
            Args::new()
                .p(&self.clock)
                .p(&self.ctrl)
                .p(&self.part_b)
                .i(blocks_tile(self.l.nx + 1, self.l.ny + 1) as i64)
                .p(&self.sc)
                .r(lim.viscous)
                .r(lim.dx)
                .r(lim.dy)
                .r(lim.wall)
                .r(lim.cell_reynolds.unwrap_or(0.0))
                .i(lim.cell_reynolds.is_some() as i64)
                .r(lim.cfl)
                .r(self.cfg.blow_up_limit())
                .i(matches!(self.cfg.integrator, TimeIntegrator::Ab2) as i64),
        )
    }

    fn read_ctrl(&mut self) -> Result<[i32; CTRL_LEN], CudaError> {
        self.gpu
            .download_async(&mut self.ctrl_host, &self.ctrl, CTRL_LEN)?;
        self.gpu.sync()?;
        let c = self.ctrl_host.as_slice();
        Ok([c[0], c[1], c[2], c[3]])
    }

    /// Predictor and its boundary faces (dt and the AB2 weights from the clock).
    fn predict_only(&self) -> Result<(), CudaError> {
        let c = &self.cfg;
        let l = self.l;
        let (dx, dy) = (T::of(c.grid.spacing[0]), T::of(c.grid.spacing[1]));
        let (idx2, idy2) = (T::one() / (dx * dx), T::one() / (dy * dy));
        let args = Args::new()
            .p(&self.u)
            .p(&self.v)
            .p(&self.f)
            .p(&self.g)
            .p(&self.hu)
            .p(&self.hv)
            .i(l.nx as i64)
            .i(l.ny as i64)
            .i(l.periodic_x as i64)
            .i(l.periodic_y as i64)
            .i(*l.u_unknowns_i().end() as i64)
            .i(*l.v_unknowns_j().end() as i64)
            .i(convection_code(c.convection))
            .i(limiter_code(c.limiter))
            .r(dx)
            .r(dy)
            .r(idx2)
            .r(idy2)
            .r(T::of(c.nu))
            .i(matches!(c.integrator, TimeIntegrator::Ab2) as i64)
            .p(&self.clock)
            .p(&self.ctrl);
        self.kp("predict", grid_tile(l.nx + 1, l.ny + 1), (BX, BY, 1), args)?;
        self.kp(
            "predictor_boundaries",
            grid1(l.nx.max(l.ny) + 1),
            (B1, 1, 1),
            Args::new()
                .p(&self.u)
                .p(&self.v)
                .p(&self.f)
                .p(&self.g)
                .p(&self.bck)
                .i(l.nx as i64)
                .i(l.ny as i64)
                .p(&self.ctrl),
        )
    }

    /// `div(F, G) / dt` into `out`: in natural order (`pack` < 0), or reordered for the transform
    /// solve with its flip bits `pack` (`poisson_rhs`). Only the
    /// reordered one, a part of the batched step, obeys the halt flag: the natural one serves
    /// the iterative solvers (whose steps the host checks first) and the statistics of the last
    /// completed step of a batch.
    fn rhs(&self, out: u64, pack: i64) -> Result<(), CudaError> {
        let l = self.l;
        let c = &self.cfg;
        let halt = if pack >= 0 { self.ctrl.ptr } else { 0 };
        self.kp(
            "poisson_rhs",
            grid_tile(l.nx, l.ny),
            (BX, BY, 1),
            Args::new()
                .p(&self.f)
                .p(&self.g)
                .l(out as i64)
                .i(l.nx as i64)
                .i(l.ny as i64)
                .r(T::of(1.0 / c.grid.spacing[0]))
                .r(T::of(1.0 / c.grid.spacing[1]))
                .p(&self.clock)
                .l(halt as i64)
                .i(pack),
        )
    }

    /// `x -= mean(x)` (`guard`: skipped once the solve is done).
    fn remove_mean(&self, x: u64, guard: bool) -> Result<(), CudaError> {
        let n = self.op.len();
        let ctrl = if guard { self.ctrl.ptr } else { 0 };
        self.kq(
            "sum_partial",
            grid1(n),
            (B1, 1, 1),
            Args::new().l(x as i64).p(&self.part_a).l(ctrl as i64).i(n as i64),
        )?;
        self.kq(
            "finalize_mean",
            (1, 1, 1),
            (1024, 1, 1),
            Args::new()
                .p(&self.part_a)
                .i(grid1(n).0 as i64)
                .p(&self.sc)
                .l(ctrl as i64)
                .r(T::of(n as f64)),
        )?;
        self.kq(
            "subtract_mean",
            grid1(n),
            (B1, 1, 1),
            Args::new().l(x as i64).p(&self.sc).l(ctrl as i64).i(n as i64),
        )
    }

    /// One colour sweep of `L x = b` on the operator `op` (plus the serial seam cells of odd
    /// periodic sizes).
    fn colour(
        &self,
        op: &Laplacian<T>,
        x: u64,
        b: u64,
        colour: i64,
        omega: T,
        ctrl: u64,
    ) -> Result<(), CudaError> {
        let (nx, ny) = (op.nx, op.ny);
        let a = || {
            Args::new()
                .l(x as i64)
                .l(b as i64)
                .l(ctrl as i64)
                .i(nx as i64)
                .i(ny as i64)
                .i(pack_pbc(op))
                .r(op.idx2)
                .r(op.idy2)
                .i(colour)
                .r(omega)
        };
        self.kq("colour_sweep", grid2(nx / 2 + 1, ny), (BX, BY, 1), a())?;
        let odd_periodic =
            (nx % 2 == 1 && op.bc[0] == FaceBc::Periodic) || (ny % 2 == 1 && op.bc[2] == FaceBc::Periodic);
        if odd_periodic {
            self.kq("colour_seam", (1, 1, 1), (1, 1, 1), a())?;
        }
        Ok(())
    }

    /// `r = b - L x` (r = 0: none stored); with `norm`, block partial sums of r^2 in part_a.
    fn residual(
        &self,
        op: &Laplacian<T>,
        x: u64,
        b: u64,
        r: u64,
        norm: bool,
        ctrl: u64,
    ) -> Result<(), CudaError> {
        let part = if norm { self.part_a.ptr } else { 0 };
        self.kq(
            "residual",
            grid_tile(op.nx, op.ny),
            (BX, BY, 1),
            Args::new()
                .l(x as i64)
                .l(b as i64)
                .l(r as i64)
                .l(part as i64)
                .l(ctrl as i64)
                .i(op.nx as i64)
                .i(op.ny as i64)
                .i(pack_pbc(op))
                .r(op.idx2)
                .r(op.idy2),
        )
    }

    fn finalize_check(&self, nb: usize, it: usize, max: usize) -> Result<(), CudaError> {
        self.finalize_check_mode(nb, it, max, false)
    }

    fn finalize_check_mode(
        &self,
        nb: usize,
        it: usize,
        max: usize,
        until_not_greater: bool,
    ) -> Result<(), CudaError> {
        self.kq(
            "finalize_check",
            (1, 1, 1),
            (1024, 1, 1),
            Args::new()
                .p(&self.part_a)
                .i(nb as i64)
                .p(&self.sc)
                .p(&self.ctrl)
                .i(it.min(i32::MAX as usize) as i64)
                .i(max.min(i32::MAX as usize) as i64)
                .i(until_not_greater as i64),
        )
    }

    /// The start of a solve (pressure_poisson/mod.rs `solve`): the mean of `rhs` removed when
    /// `L` is singular, `||rhs||` and the target residual into `sc`, the control block reset.
    fn rhs_norm(&self) -> Result<(), CudaError> {
        let n = self.op.len();
        if self.op.singular() {
            self.remove_mean(self.rhs.ptr, false)?;
        }
        self.kq(
            "dot_partial",
            grid1(n),
            (B1, 1, 1),
            Args::new()
                .p(&self.rhs)
                .p(&self.rhs)
                .p(&self.part_a)
                .null()
                .i(n as i64),
        )?;
        self.kq(
            "finalize_bnorm",
            (1, 1, 1),
            (1024, 1, 1),
            Args::new()
                .p(&self.part_a)
                .i(grid1(n).0 as i64)
                .p(&self.sc)
                .p(&self.ctrl)
                .r(T::of(self.cfg.poisson.tolerance)),
        )
    }

    /// Solves `L p = rhs` iteratively (pressure_poisson/mod.rs `solve`); the statistics are read
    /// with the step's scalars.
    fn solve_pressure(&mut self) -> Result<(), CudaError> {
        let op = self.op;
        let n = op.len();
        let singular = op.singular();
        let settings: PoissonSettings = self.cfg.poisson;
        let max = settings.max_iterations;
        self.rhs_norm()?;
        let nb2 = blocks_tile(op.nx, op.ny);
        let nb1 = grid1(n).0 as usize;
        let (p, rhs, ctrl) = (self.p.ptr, self.rhs.ptr, self.ctrl.ptr);
        match &self.work {
            Work::Jacobi { next } => {
                let next = next.ptr;
                let mut it = 0;
                loop {
                    for _ in 0..CHECK_EVERY {
                        let (src, dst) = if it % 2 == 0 { (p, next) } else { (next, p) };
                        self.kq(
                            "jacobi_sweep",
                            grid_tile(op.nx, op.ny),
                            (BX, BY, 1),
                            Args::new()
                                .l(src as i64)
                                .l(dst as i64)
                                .l(rhs as i64)
                                .p(&self.part_a)
                                .l(ctrl as i64)
                                .i(op.nx as i64)
                                .i(op.ny as i64)
                                .i(pack_pbc(&op))
                                .r(op.idx2)
                                .r(op.idy2),
                        )?;
                        self.finalize_check(nb2, it, max)?;
                        it += 1;
                    }
                    let c = self.read_ctrl()?;
                    if c[CTRL_DONE] != 0 {
                        // The result is the source of the converged sweep.
                        if c[CTRL_ITERS] % 2 == 1 {
                            let Work::Jacobi { next } = &self.work else {
                                unreachable!()
                            };
                            self.gpu.copy(&self.p, next)?;
                        }
                        break;
                    }
                }
            }
            Work::Sor => {
                let omega = T::of(
                    settings
                        .sor_omega
                        .unwrap_or_else(|| optimal_sor_omega(op.nx, op.ny)),
                );
                let mut it = 0;
                loop {
                    for _ in 0..CHECK_EVERY {
                        if it % SOR_CHECK == 0 || it == max {
                            if singular {
                                self.remove_mean(p, true)?;
                            }
                            self.residual(&op, p, rhs, 0, true, ctrl)?;
                            self.finalize_check(nb2, it, max)?;
                        }
                        self.colour(&op, p, rhs, 0, omega, ctrl)?;
                        self.colour(&op, p, rhs, 1, omega, ctrl)?;
                        it += 1;
                        if it > max {
                            break;
                        }
                    }
                    if self.read_ctrl()?[CTRL_DONE] != 0 {
                        break;
                    }
                }
            }
            Work::Pcg { r, w, d, q } => {
                let (r, w, d, q) = (r.ptr, w.ptr, d.ptr, q.ptr);
                self.residual(&op, p, rhs, r, true, ctrl)?;
                self.finalize_check(nb2, 0, usize::MAX)?;
                let precondition = |s: &Self| -> Result<(), CudaError> {
                    s.kq(
                        "zero_fill",
                        grid1(n),
                        (B1, 1, 1),
                        Args::new().l(w as i64).l(ctrl as i64).i(n as i64),
                    )?;
                    s.colour(&op, w, r, 0, T::one(), ctrl)?;
                    s.colour(&op, w, r, 1, T::one(), ctrl)?;
                    s.colour(&op, w, r, 0, T::one(), ctrl)
                };
                let gamma = |s: &Self, first: i64| -> Result<(), CudaError> {
                    s.kq(
                        "dot_partial",
                        grid1(n),
                        (B1, 1, 1),
                        Args::new()
                            .l(r as i64)
                            .l(w as i64)
                            .p(&s.part_a)
                            .l(ctrl as i64)
                            .i(n as i64),
                    )?;
                    s.kq(
                        "finalize_gamma",
                        (1, 1, 1),
                        (1024, 1, 1),
                        Args::new()
                            .p(&s.part_a)
                            .i(nb1 as i64)
                            .p(&s.sc)
                            .l(ctrl as i64)
                            .i(first),
                    )
                };
                let direction = |s: &Self, first: i64| -> Result<(), CudaError> {
                    s.kq(
                        "pcg_direction",
                        grid1(n),
                        (B1, 1, 1),
                        Args::new()
                            .l(d as i64)
                            .l(w as i64)
                            .p(&s.sc)
                            .l(ctrl as i64)
                            .i(n as i64)
                            .i(first),
                    )
                };
                precondition(self)?;
                direction(self, 1)?;
                gamma(self, 1)?;
                let mut it = 1;
                'outer: loop {
                    for _ in 0..CHECK_EVERY {
                        if it > max {
                            break 'outer;
                        }
                        self.kq(
                            "apply_dot",
                            grid_tile(op.nx, op.ny),
                            (BX, BY, 1),
                            Args::new()
                                .l(d as i64)
                                .l(q as i64)
                                .p(&self.part_a)
                                .l(ctrl as i64)
                                .i(op.nx as i64)
                                .i(op.ny as i64)
                                .i(pack_pbc(&op))
                                .r(op.idx2)
                                .r(op.idy2),
                        )?;
                        self.kq(
                            "finalize_alpha",
                            (1, 1, 1),
                            (1024, 1, 1),
                            Args::new()
                                .p(&self.part_a)
                                .i(nb2 as i64)
                                .p(&self.sc)
                                .p(&self.ctrl)
                                .i(it as i64),
                        )?;
                        self.kq(
                            "pcg_axpy",
                            grid1(n),
                            (B1, 1, 1),
                            Args::new()
                                .l(p as i64)
                                .l(r as i64)
                                .l(d as i64)
                                .l(q as i64)
                                .p(&self.sc)
                                .p(&self.part_a)
                                .l(ctrl as i64)
                                .i(n as i64),
                        )?;
                        self.finalize_check(nb1, it, max)?;
                        precondition(self)?;
                        gamma(self, 0)?;
                        direction(self, 0)?;
                        it += 1;
                    }
                    if self.read_ctrl()?[CTRL_DONE] != 0 {
                        break;
                    }
                }
            }
            Work::Multigrid { levels, .. } => {
                let r0 = levels[0].r.ptr;
                let mut cycles = 0;
                loop {
                    self.residual(&op, p, rhs, r0, true, ctrl)?;
                    self.finalize_check_mode(nb2, cycles, max, true)?;
                    if self.read_ctrl()?[CTRL_DONE] != 0 {
                        break;
                    }
                    self.top_v_cycle()?;
                    cycles += 1;
                }
            }
            Work::Spectral(_) => unreachable!("the transform solve runs in spectral_step"),
        }
        self.kq(
            "zero_if_flag",
            grid1(n),
            (B1, 1, 1),
            Args::new().p(&self.p).p(&self.ctrl).i(n as i64),
        )?;
        if singular {
            self.remove_mean(self.p.ptr, false)?;
        }
        Ok(())
    }

    /// Enqueues one step with the transform pressure solve, with no host wait: the clock's
    /// `dt`, the predictor, `div(F)/dt` written straight into the transform's reordering, the
    /// transforms and the division by the eigenvalues (pressure_poisson/spectral.rs), the
    /// inverse reordering into `p`, the correction and the speed maxima of the next `dt`, with
    /// `stats` the steady-change sums too ([`CudaProjection::correct`]). The right-hand side's
    /// mean needs no removal: the division zeroes the constant mode, so `p` has zero mean as the
    /// CPU's mean removal leaves it (to rounding).
    fn spectral_step(&self, stats: bool) -> Result<(), CudaError> {
        let Work::Spectral(w) = &self.work else {
            unreachable!("spectral_step with a transform workspace only")
        };
        self.step_dt()?;
        self.predict_only()?;
        self.rhs(w.v.ptr, w.flip)?;
        self.spectral_solve(w)?;
        self.correct(Some((w.v.ptr, w.flip)), stats)
    }

    /// `L p = b` from the reordered `b` in `w.v`, leaving the reordered `p` there (guarded by the
    /// control block's done flag); `correct` reads it.
    fn spectral_solve(&self, w: &SpectralWork<T>) -> Result<(), CudaError> {
        let op = self.op;
        let (nx, ny) = (op.nx as i64, op.ny as i64);
        // SAFETY: v holds nx ny reals and spectrum ny (nx/2 + 1) complex values of T, the sizes
        // the plan was made for.
        unsafe { w.fft.forward(w.v.ptr, w.spectrum.ptr) }?;
        self.kq(
            "dct_divide",
            grid2(op.nx / 2 + 1, op.ny / 2 + 1),
            (BX, BY, 1),
            Args::new()
                .p(&w.spectrum)
                .p(&self.ctrl)
                .i(nx)
                .i(ny)
                .p(&w.twiddle_x)
                .p(&w.twiddle_y)
                .p(&w.lambda_x)
                .p(&w.lambda_y)
                .r(1.0 / (op.nx * op.ny) as f64),
        )?;
        // SAFETY: as for the forward transform.
        unsafe { w.fft.inverse(w.spectrum.ptr, w.v.ptr) }
    }

    /// The statistics of the last transform solve, as the CPU reports them: `rhs` recomputed
    /// from the step's `F, G` and `dt` (natural order, mean removed), its norm, and the relative
    /// residual `||rhs - L p|| / ||rhs||` as one iteration.
    fn spectral_stats(&self) -> Result<(), CudaError> {
        self.rhs(self.rhs.ptr, -1)?;
        self.rhs_norm()?;
        let op = self.op;
        self.residual(&op, self.p.ptr, self.rhs.ptr, 0, true, self.ctrl.ptr)?;
        self.finalize_check_mode(blocks_tile(op.nx, op.ny), 1, 1, true)
    }

    /// One V-cycle for the pressure, `L p = rhs`: replayed from a captured graph when graphs are
    /// on (its 8 launches per level cost more than the coarse levels' work), else launched
    /// kernel by kernel. A failed capture falls back to direct launches with one warning.
    fn top_v_cycle(&mut self) -> Result<(), CudaError> {
        let (p, rhs) = (self.p.ptr, self.rhs.ptr);
        if self.graphs && self.v_cycle_graph.is_none() {
            match Graph::capture(&self.gpu, || self.v_cycle(0, p, rhs)) {
                Ok(g) => self.v_cycle_graph = Some(g),
                Err(e) => {
                    log::warn!(
                        "capturing the multigrid V-cycle as a CUDA graph failed ({e}); launching it kernel by kernel"
                    );
                    self.graphs = false;
                }
            }
        }
        match &self.v_cycle_graph {
            Some(g) => g.launch(),
            None => self.v_cycle(0, p, rhs),
        }
    }

    /// One V-cycle on level `k` for `L x = b` (multigrid.rs `v_cycle`).
    fn v_cycle(&self, k: usize, x: u64, b: u64) -> Result<(), CudaError> {
        let Work::Multigrid { levels, cg } = &self.work else {
            unreachable!("v_cycle with a multigrid workspace only")
        };
        let op = levels[k].op;
        if k + 1 == levels.len() {
            let tol = T::of(1e-6).max(T::epsilon() * T::of(100.0));
            // One block; few threads for the tiny coarsest grids (the solve is latency-bound).
            let threads = (op.len() as u32).div_ceil(32).clamp(1, 8) * 32;
            return self.kq(
                "coarse_cg",
                (1, 1, 1),
                (threads, 1, 1),
                Args::new()
                    .l(x as i64)
                    .l(b as i64)
                    .p(&cg[0])
                    .p(&cg[1])
                    .p(&cg[2])
                    .p(&cg[3])
                    .p(&cg[4])
                    .i(op.nx as i64)
                    .i(op.ny as i64)
                    .i(pack_pbc(&op))
                    .r(op.idx2)
                    .r(op.idy2)
                    .i(op.singular() as i64)
                    .r(tol),
            );
        }
        let r = levels[k].r.ptr;
        self.smooth(&op, x, r, b, 0)?;
        let c = &levels[k + 1];
        self.residual(&op, x, b, r, false, 0)?;
        self.kq(
            "restrict_mean",
            grid2(c.op.nx, c.op.ny),
            (BX, BY, 1),
            Args::new()
                .p(&levels[k].r)
                .p(&c.b)
                .i(op.nx as i64)
                .i(c.op.nx as i64)
                .i(c.op.ny as i64),
        )?;
        self.gpu.memset_zero(&c.x)?;
        self.v_cycle(k + 1, c.x.ptr, c.b.ptr)?;
        self.kq(
            "prolong_add",
            grid2(op.nx, op.ny),
            (BX, BY, 1),
            Args::new()
                .p(&c.x)
                .l(x as i64)
                .i(c.op.nx as i64)
                .i(c.op.ny as i64)
                .i(op.nx as i64)
                .i(op.ny as i64)
                .i(pack_pbc(&c.op)),
        )?;
        self.smooth(&op, x, r, b, 1)
    }

    /// The multigrid smoother: two red-black Gauss-Seidel sweeps (colour `first`, then the
    /// other) of `L x = b`, result in `x`. Each sweep is one fused two-colour launch, from `x`
    /// to `scratch` and back; odd periodic sizes take the single-colour sweeps with their serial
    /// seam cells instead.
    fn smooth(&self, op: &Laplacian<T>, x: u64, scratch: u64, b: u64, first: i64) -> Result<(), CudaError> {
        let odd_periodic = (op.nx % 2 == 1 && op.bc[0] == FaceBc::Periodic)
            || (op.ny % 2 == 1 && op.bc[2] == FaceBc::Periodic);
        if odd_periodic {
            for _ in 0..2 {
                self.colour(op, x, b, first, T::one(), 0)?;
                self.colour(op, x, b, 1 - first, T::one(), 0)?;
            }
            return Ok(());
        }
        self.rb_sweep(op, x, scratch, b, first)?;
        self.rb_sweep(op, scratch, x, b, first)
    }

    /// One fused red-black sweep `dst = sweep(src)` (kernel rb_sweep, omega 1).
    fn rb_sweep(&self, op: &Laplacian<T>, src: u64, dst: u64, b: u64, first: i64) -> Result<(), CudaError> {
        self.kq(
            "rb_sweep",
            grid_tile(op.nx, op.ny),
            (BX, BY, 1),
            Args::new()
                .l(src as i64)
                .l(dst as i64)
                .l(b as i64)
                .null()
                .i(op.nx as i64)
                .i(op.ny as i64)
                .i(pack_pbc(op))
                .r(op.idx2)
                .r(op.idy2)
                .i(first)
                .r(T::one()),
        )
    }

    /// Correction (from `p`, or from the transform solve's reordered solution `(v, flip bits)`,
    /// which it also unpacks into `p`) and ghosts. The speed maxima stay in `part_b` for the
    /// next `step_dt`; with `stats` (a step whose scalars the host reads) the steady-change sums
    /// and the maxima are combined into `sc` too.
    fn correct(&self, packed: Option<(u64, i64)>, stats: bool) -> Result<(), CudaError> {
        self.correct_kernel(packed, stats)?;
        fill_ghosts(
            &self.gpu,
            &self.mp,
            &self.l,
            &self.u,
            &self.v,
            (&self.bck, &self.bcv),
            Some(&self.ctrl),
        )?;
        if stats {
            self.finalize(true)?;
        }
        Ok(())
    }

    /// `u = F - dt grad p` with the speed maxima and, with `stats`, the steady-change sums (dt
    /// from the clock).
    fn correct_kernel(&self, packed: Option<(u64, i64)>, stats: bool) -> Result<(), CudaError> {
        let (v, pack) = packed.unwrap_or((0, -1));
        let l = self.l;
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
        self.kp(
            "correct",
            grid_tile(l.nx + 1, l.ny + 1),
            (BX, BY, 1),
            Args::new()
                .p(&self.u)
                .p(&self.v)
                .p(&self.f)
                .p(&self.g)
                .p(&self.p)
                .l(v as i64)
                .i(pack)
                .i(stats as i64)
                .p(&self.part_a)
                .p(&self.part_b)
                .i(l.nx as i64)
                .i(l.ny as i64)
                .i(l.periodic_x as i64)
                .i(l.periodic_y as i64)
                .i(i_lo as i64)
                .i(i_hi as i64)
                .i(j_lo as i64)
                .i(j_hi as i64)
                .r(self.cfg.grid.spacing[0])
                .r(self.cfg.grid.spacing[1])
                .p(&self.clock)
                .p(&self.ctrl),
        )
    }

    /// Runs `n` steps and reads their scalars once. With the transform solve the steps follow
    /// one another on the device (one graph launch each; the health check on the device halts
    /// the rest of the batch); the iterative solvers wait for their convergence flag, so they
    /// take one step at a time (`n` = 1).
    fn run(&mut self, n: u64) -> Result<(), CudaError> {
        self.gpu.bind()?;
        if self.clock_stale {
            self.write_clock()?;
        }
        if matches!(self.work, Work::Spectral(_)) {
            // The steady-change sums only for the last step, whose scalars are read.
            for k in 0..n {
                self.launch_spectral_step(k + 1 == n)?;
            }
            self.spectral_stats()?;
        } else {
            assert_eq!(n, 1, "the iterative pressure solvers step one at a time");
            self.step_dt()?;
            self.predict_only()?;
            self.rhs(self.rhs.ptr, -1)?;
            self.solve_pressure()?;
            self.correct(None, true)?;
        }
        self.read_step()
    }

    /// [`CudaProjection::spectral_step`] from its graph (captured at first use) when graphs
    /// are on; a failed capture falls back to launching kernel by kernel, with one warning.
    fn launch_spectral_step(&mut self, stats: bool) -> Result<(), CudaError> {
        let slot = stats as usize;
        if self.graphs && self.step_graphs[slot].is_none() {
            match Graph::capture(&self.gpu, || self.spectral_step(stats)) {
                Ok(g) => self.step_graphs[slot] = Some(g),
                Err(e) => {
                    log::warn!(
                        "capturing the step as a CUDA graph failed ({e}); launching it kernel by kernel"
                    );
                    self.graphs = false;
                }
            }
        }
        match &self.step_graphs[slot] {
            Some(g) => g.launch(),
            None => self.spectral_step(stats),
        }
    }

    /// [`Solver::advance`] by one batch of `n` steps ([`CudaProjection::run`]).
    fn batch(&mut self, n: u64) -> Result<(), SolverError> {
        self.cfg
            .check_health(self.umax, self.vmax, self.steps, self.time)?;
        if n == 0 {
            return Ok(());
        }
        self.mirror.lock().expect("mirror lock").stale = true;
        let start = self.steps;
        self.readback
            .get_mut()
            .expect("readback lock")
            .invalidate(start + n);
        self.run(n).map_err(err(self.steps, self.time))?;
        if self.steps != start + n {
            self.readback
                .get_mut()
                .expect("readback lock")
                .invalidate(self.steps);
        }
        let sc = self.sc_host.as_slice();
        let ctrl = self.ctrl_host.as_slice();
        let (change, norm) = (sc[SC_CHANGE].f64(), sc[SC_NORM].f64());
        let (b_norm, r_norm) = (sc[SC_BNORM].f64(), sc[SC_RNORM].f64());
        let iterations = if b_norm == 0.0 {
            0
        } else {
            ctrl[CTRL_ITERS] as usize
        };
        let relative = if b_norm == 0.0 { 0.0 } else { r_norm / b_norm };
        let poisson = self.cfg.poisson;
        self.capped = (poisson.kind != PressureSolverKind::Fft
            && iterations >= poisson.max_iterations
            && relative > poisson.tolerance)
            .then_some(CappedSolve {
                iterations,
                residual: relative,
                tolerance: poisson.tolerance,
            });
        let dt = self.dt;
        let steady_change = if norm > 0.0 {
            (change / norm).sqrt() / dt
        } else {
            0.0
        };
        let cells = (self.l.nx * self.l.ny) as f64;
        self.residuals.clear();
        self.residuals.extend_from_slice(&[
            ("steady_change", steady_change),
            ("pressure_iterations", iterations as f64),
            ("pressure_residual", relative),
            ("predicted_divergence", dt * b_norm / cells.sqrt()),
            ("max_velocity", self.umax.max(self.vmax)),
        ]);
        debug_assert_eq!(ctrl[CTRL_HALT] != 0, self.steps != start + n);
        self.cfg.check_health(self.umax, self.vmax, self.steps, self.time)
    }

    /// Copies u, v, p into the CPU mirror when the device state changed since the last copy.
    fn with_mirror<R>(&self, f: impl FnOnce(&Projection<T>) -> R) -> Option<R> {
        let mut m = self.mirror.lock().expect("mirror lock");
        let result = (|| -> Result<(), CudaError> {
            if m.cpu.is_none() {
                m.cpu = Some(Projection::new(self.cfg.clone()));
                m.stale = true;
            }
            if m.stale {
                self.gpu.bind()?;
                if m.staging.is_none() {
                    m.staging = Some([
                        self.gpu.pinned(self.u.len)?,
                        self.gpu.pinned(self.v.len)?,
                        self.gpu.pinned(self.p.len)?,
                    ]);
                }
                let Mirror { cpu, staging, .. } = &mut *m;
                let [su, sv, sp] = staging.as_mut().expect("staging allocated");
                self.gpu.download_async(su, &self.u, self.u.len)?;
                self.gpu.download_async(sv, &self.v, self.v.len)?;
                self.gpu.download_async(sp, &self.p, self.p.len)?;
                self.gpu.sync()?;
                let (u, v, p) = cpu.as_mut().expect("mirror built").state_mut();
                u.copy_from_slice(su.as_slice());
                v.copy_from_slice(sv.as_slice());
                p.copy_from_slice(sp.as_slice());
                m.stale = false;
            }
            Ok(())
        })();
        match result {
            Ok(()) => Some(f(m.cpu.as_ref().expect("mirror built"))),
            Err(e) => {
                log::error!("reading fields back from the GPU failed: {e}");
                None
            }
        }
    }

    /// Enqueues the derivation of field `name` of the current state into `dst`
    /// ([`StaggeredDisplay::derive`]; the pressure is kinematic, shown times the density).
    fn derive(&self, name: &str, dst: &DevBuf<T>) -> Result<(), CudaError> {
        let state = StaggeredState {
            u: &self.u,
            v: &self.v,
            p: &self.p,
            p_scale: self.cfg.density,
            viscosity: None,
        };
        self.display
            .derive(&self.gpu, &self.cfg.grid, FIELDS, &state, name, dst)
    }

    /// Field `name` derived on the host from the whole state read back into the CPU mirror (the
    /// path [`Solver::field`] took before fields were derived on the device): the reference the
    /// device derivation is tested against, and the baseline of `flowlab bench`'s readback table.
    pub fn host_field(&self, name: &str, out: &mut Vec<f64>) -> Option<()> {
        self.with_mirror(|m| m.field(name, out))?
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// One Jacobi sweep `src -> dst` for kernel_timings (no control block).
    fn jacobi_timed(&self, src: u64, dst: u64, rhs: u64) -> Result<(), CudaError> {
        let op = self.op;
        self.kq(
            "jacobi_sweep",
            grid_tile(op.nx, op.ny),
            (BX, BY, 1),
            Args::new()
                .l(src as i64)
                .l(dst as i64)
                .l(rhs as i64)
                .p(&self.part_a)
                .null()
                .i(op.nx as i64)
                .i(op.ny as i64)
                .i(pack_pbc(&op))
                .r(op.idx2)
                .r(op.idy2),
        )
    }

    /// Times the main kernels with CUDA events (`reps` back-to-back launches each, after one
    /// warm-up launch) on this solver's buffers; the state is scrambled afterwards, so use a
    /// solver built for the purpose. Returns (kernel, milliseconds per launch, bytes per launch by
    /// the model: every array the kernel touches read or written once, `n = nx ny` values each;
    /// a colour sweep reads all of `x` and half of `b`, and writes half of `x`; the fused
    /// two-colour sweep reads `x` and `b` and writes `x` once).
    pub fn kernel_timings(&mut self, reps: usize) -> Result<Vec<(&'static str, f64, f64)>, CudaError> {
        self.gpu.bind()?;
        let n = (self.l.nx * self.l.ny) as f64;
        let sz = std::mem::size_of::<T>() as f64;
        let op = self.op;
        // A valid dt and AB2 weights in the clock for the step kernels.
        self.step_dt()?;
        // The predictor reads u, v and writes F, G; AB2 also reads and writes its history.
        let predict_arrays = match self.cfg.integrator {
            TimeIntegrator::Euler => 4.0,
            TimeIntegrator::Ab2 => 8.0,
        };
        let (p, rhs) = (self.p.ptr, self.rhs.ptr);
        let scratch = self.gpu.alloc_zeros::<T>(op.len())?;
        let sp = scratch.ptr;
        type Launch<T> = Box<dyn Fn(&mut CudaProjection<T>) -> Result<(), CudaError>>;
        let mut kernels: Vec<(&'static str, f64, Launch<T>)> = vec![
            ("predict", predict_arrays, Box::new(|s| s.predict_only())),
            ("poisson_rhs", 3.0, Box::new(move |s| s.rhs(rhs, -1))),
            ("correct", 7.0, Box::new(|s| s.correct_kernel(None, true))),
            (
                "correct (no statistics)",
                5.0,
                Box::new(|s| s.correct_kernel(None, false)),
            ),
            ("max_speed", 2.0, Box::new(|s| s.max_speeds())),
            ("jacobi_sweep", 3.0, Box::new(move |s| s.jacobi_timed(p, sp, rhs))),
            (
                "residual",
                3.0,
                Box::new(move |s| s.residual(&op, p, rhs, sp, true, 0)),
            ),
            (
                "colour_sweep",
                2.0,
                Box::new(move |s| s.colour(&op, p, rhs, 0, T::one(), 0)),
            ),
            (
                "rb_sweep (both colours)",
                3.0,
                Box::new(move |s| s.rb_sweep(&op, p, sp, rhs, 0)),
            ),
        ];
        if matches!(self.work, Work::Multigrid { .. }) {
            // Bytes model of a V-cycle: per level of n cells, 4 fused two-colour sweeps (3n
            // each), the residual (3n), restriction (1.25n), the coarse zeroing (0.25n) and the
            // prolongation (2.25n): 18.75n, times 4/3 over the levels, 25 fine arrays.
            kernels.push((
                "v_cycle (launches)",
                25.0,
                Box::new(move |s| s.v_cycle(0, p, rhs)),
            ));
            if self.graphs {
                kernels.push(("v_cycle (graph)", 25.0, Box::new(|s| s.top_v_cycle())));
            }
        }
        if let Work::Spectral(w) = &self.work {
            let (v, spectrum) = (w.v.ptr, w.spectrum.ptr);
            // Each real-to-complex or complex-to-real transform reads and writes about n values.
            kernels.push((
                "cuFFT r2c + c2r",
                4.0,
                Box::new(move |s| {
                    let Work::Spectral(w) = &s.work else {
                        unreachable!()
                    };
                    // SAFETY: the buffers and sizes of this plan.
                    unsafe {
                        w.fft.forward(v, spectrum)?;
                        w.fft.inverse(spectrum, v)
                    }
                }),
            ));
            let flip = w.flip;
            kernels.push(("poisson_rhs (fft order)", 3.0, Box::new(move |s| s.rhs(v, flip))));
            // The solve of a step: the transforms (4n) and the spectral division (2n); the
            // right-hand side is written reordered by `poisson_rhs`, the solution unpacked by
            // `correct`.
            kernels.push((
                "pressure solve (fft)",
                6.0,
                Box::new(|s| {
                    let Work::Spectral(w) = &s.work else {
                        unreachable!()
                    };
                    s.spectral_solve(w)
                }),
            ));
            // The whole step of a batch (one graph when graphs are on): predict (4n Euler, 8n
            // AB2), rhs (3n), the solve (6n), correct without the statistics, unpacking p (6n).
            kernels.push((
                "step (fft)",
                predict_arrays + 15.0,
                Box::new(|s| s.launch_spectral_step(false)),
            ));
        }
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
        self.gpu.sync()?;
        drop(scratch);
        Ok(out)
    }
}

impl<T: Real> Solver for CudaProjection<T> {
    fn info(&self) -> SolverInfo {
        SolverInfo {
            kind: Kind::Incompressible,
            method: "projection",
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

    fn dt(&self) -> f64 {
        self.dt
    }

    fn set_dt_cap(&mut self, cap: f64) {
        if cap != self.dt_cap {
            self.dt_cap = cap;
            self.clock_stale = true;
        }
    }

    fn step(&mut self) -> Result<(), SolverError> {
        self.batch(1)
    }

    fn advance(&mut self, n: u64) -> Result<(), SolverError> {
        if matches!(self.work, Work::Spectral(_)) {
            return self.batch(n);
        }
        for _ in 0..n {
            self.batch(1)?;
        }
        Ok(())
    }

    fn residuals(&self) -> &[(&'static str, f64)] {
        &self.residuals
    }

    fn field_names(&self) -> &'static [&'static str] {
        super::FIELDS
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

    fn update(&mut self, spec: &CaseSpec) -> Result<(), Invalid> {
        let cfg = Config::from_spec(spec)?;
        if !cfg.same_layout(&self.cfg) {
            return Err(Invalid::new(
                "grid",
                "the grid, boundaries, initial state and precision apply on reset only",
            ));
        }
        if let Some(e) = unsupported(&cfg) {
            return Err(e);
        }
        if cfg.poisson.kind != self.cfg.poisson.kind {
            self.work = Self::workspace(&self.gpu, &self.op, cfg.poisson.kind)
                .map_err(|e| Invalid::new("solver.pressure_solver", format!("CUDA: {e}")))?;
        }
        if cfg.integrator != self.cfg.integrator {
            self.has_history = false;
            self.clock_stale = true;
        }
        // Its kernel arguments are the old settings'.
        self.step_graphs = [None, None];
        let mut m = self.mirror.lock().expect("mirror lock");
        if let Some(cpu) = m.cpu.as_mut() {
            cpu.update(spec)?;
        }
        drop(m);
        // The density scales the reported pressure.
        self.readback
            .get_mut()
            .expect("readback lock")
            .invalidate(self.steps);
        self.cfg = cfg;
        Ok(())
    }

    fn load_state(&mut self, from: &dyn Solver) -> Result<(), Invalid> {
        check_transfer(&self.info(), &from.info())?;
        // Sampling and the divergence-free projection run on the CPU once; the result goes
        // to the device and becomes the (fresh) mirror.
        let mut cpu = Projection::<T>::new(self.cfg.clone());
        cpu.load_state(from)?;
        self.adopt(cpu, None)
    }

    fn snapshot(&self) -> Result<Snapshot, SolverError> {
        let device = |e: CudaError| SolverError::Device {
            step: self.steps,
            time: self.time,
            message: format!("reading the state back failed: {e}"),
        };
        let mut s = Snapshot::new(&self.info(), self.time, self.steps, self.dt);
        for (name, b) in [
            ("u", &self.u),
            ("v", &self.v),
            ("p", &self.p),
            ("hu", &self.hu),
            ("hv", &self.hv),
        ] {
            s.put(name, &self.gpu.download(b).map_err(device)?);
        }
        s.put_scalar("has_history", if self.has_history { 1.0 } else { 0.0 });
        Ok(s)
    }

    fn restore(&mut self, state: &Snapshot) -> Result<(), Invalid> {
        let mut cpu = Projection::<T>::new(self.cfg.clone());
        cpu.restore(state)?;
        let history = [state.values::<T>("hu")?, state.values::<T>("hv")?];
        self.adopt(cpu, Some(history))
    }

    fn capped_pressure_solve(&self) -> Option<CappedSolve> {
        self.capped
    }

    fn summary(&self) -> serde_json::Map<String, serde_json::Value> {
        self.with_mirror(|m| m.summary()).unwrap_or_default()
    }
}
