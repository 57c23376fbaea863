//! The projection method on the GPU in `D = 2` or `3` dimensions: the same discretisation as
//! [`super::Projection`] (`projection.rs`, `staggered.rs`, `convection.rs`, `momentum.rs`,
//! `pressure_poisson/`), kernel for kernel, with all state in device memory (kernels in
//! `kernels/projection.cu` and `kernels/poisson.cu`, compiled with `-DDIM=D`).
//!
//! One step enqueues, on one stream: the step's health check, `dt` and AB2 weights from the
//! previous step's max speeds (`step_dt`, into a device clock that the step kernels read),
//! predictor (both components, every convection scheme and limiter, Euler or AB2), predictor
//! boundary faces, Poisson right-hand side `div(F)/dt`, the pressure solve, the correction
//! `u = F - dt grad p` fused with the steady-change sums and the max speeds of the next `dt`, and
//! the velocity ghosts (the sides of each axis in turn). With the iterative pressure solvers the host
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
//! (`kernels/display.cu`: every field of [`super::FIELDS_2D`], the stream function too, by the
//! CPU's path integral, or of [`super::FIELDS_3D`], the vortex measures too) and only the requested field comes back, one value per cell, through
//! [`cuda::Readback`]. Point samples, the cavity summary, [`CudaProjection::host_field`] and
//! [`Solver::load_state`] still read the whole state (velocity, p) back into a CPU [`Projection`]
//! mirror whose code is reused unchanged; none of them runs per frame.
//!
//! [`Solver::advance`]: crate::solver::Solver::advance
//! [`Solver::field`]: crate::solver::Solver::field
//! [`Solver::prefetch`]: crate::solver::Solver::prefetch
//! [`Solver::load_state`]: crate::solver::Solver::load_state

mod facr;
mod host_loop;
mod jacobi_part;
mod multigrid;
mod phase_timing;
mod pressure;
pub(super) mod rotor;
mod slab;
mod solver;
mod spectral;
mod step;
mod timing;

use self::multigrid::{MgCoarse, MgLevel};
use self::rotor::DeviceRotor;
use self::slab::GpuSlab;
use self::spectral::SpectralWork;
use super::Projection;
use super::config::Config;
use super::device_fields::StaggeredDisplay;
use super::pressure_poisson::{FaceBc, Laplacian};
use super::rotor_source::{RotorSetup, RotorSource};
use super::staggered::{Layout, fill_velocity_ghosts, side_velocity};
use crate::backend::cuda::{
    self, Args, CudaError, DevBuf, Gpu, Graph, KernelSet, Module, Pinned, Readback, Stream, slots,
};
use crate::case::{Boundary, Invalid, PressureSolverKind, Side};
use crate::parallel::SlabLink;
use crate::solver::real::Real;
use crate::solver::{CappedSolve, SolverError};
use std::sync::{Arc, Mutex};

/// Jacobi sweeps, SOR iterations and PCG iterations enqueued between reads of the done flag.
const CHECK_EVERY: usize = 16;
/// 2D thread block.
const BX: u32 = 32;
const BY: u32 = 8;
/// 1D thread block.
const B1: u32 = 256;
/// Rows per thread of the Poisson stencil kernels jacobi_sweep, rb_sweep, residual and apply_dot
/// (TROWS in kernels/common.cuh): a (BX, BY) block covers BX x BY TILE_ROWS cells.
const TILE_ROWS: u32 = 4;

use crate::backend::cuda::slots::{CK_LEN, CTRL_DONE, CTRL_ITERS, CTRL_LEN, SC_LEN};
/// The largest speed of each velocity component (`speed_slot` in kernels/common.cuh).
const SC_SPEED: [usize; 3] = [slots::SC_UMAX, slots::SC_VMAX, slots::SC_WMAX];

/// Sizes (or any per-axis values) of a `D`-dimensional box as the kernels take them: three
/// values, `fill` beyond `D`.
fn pad3<X: Copy, const D: usize>(v: [X; D], fill: X) -> [X; 3] {
    std::array::from_fn(|a| if a < D { v[a] } else { fill })
}

/// Sizes as kernel `int`s, 1 beyond `D`.
fn ints3<const D: usize>(n: [usize; D]) -> [i64; 3] {
    pad3(n.map(|x| x as i64), 1)
}

/// Grid of the kernels of one thread per cell of an `n` box (`pad3`): 2D blocks over the x-y
/// planes, one block layer per z index.
fn grid2(n: [usize; 3]) -> (u32, u32, u32) {
    (
        (n[0] as u32).div_ceil(BX),
        (n[1] as u32).div_ceil(BY),
        n[2] as u32,
    )
}

/// Grid of the kernels of TILE_ROWS rows per thread over an `n` box (`pad3`; the Poisson stencils
/// jacobi_sweep, rb_sweep, residual and apply_dot; predict, poisson_rhs, correct and max_speed).
fn grid_tile(n: [usize; 3]) -> (u32, u32, u32) {
    (
        (n[0] as u32).div_ceil(BX),
        (n[1] as u32).div_ceil(BY * TILE_ROWS),
        n[2] as u32,
    )
}

fn blocks_tile(n: [usize; 3]) -> usize {
    let g = grid_tile(n);
    (g.0 * g.1 * g.2) as usize
}

fn grid1(n: usize) -> (u32, u32, u32) {
    ((n as u32).div_ceil(B1).max(1), 1, 1)
}

/// The face kernels' box: `n + 1` faces per axis (index `0..=n`), one layer in z in 2D.
fn faces3<const D: usize>(n: [usize; D]) -> [usize; 3] {
    pad3(n.map(|x| x + 1), 1)
}

/// The cells of a box (`pad3`).
fn cells3<const D: usize>(n: [usize; D]) -> [usize; 3] {
    pad3(n, 1)
}

/// Grid of the kernels of one thread per point of the plane normal to an axis (`plane_point` in
/// kernels/projection.cu): the first other axis over x threads, the second (3D) over y blocks,
/// `m` points along each at most.
fn grid_plane<const D: usize>(m: usize) -> (u32, u32, u32) {
    let g = grid1(m);
    (g.0, if D == 3 { m as u32 } else { 1 }, 1)
}

/// `fill_velocity_ghosts` (staggered.rs) on the device for both staggered solvers: `ghosts` of
/// `kernels/projection.cu` (module `projection_kernels`), the sides of every axis in one launch,
/// with the side codes of [`boundary_codes`]. `ctrl` is the projection's control block (its
/// halt flag skips the kernel); the SIMPLE family passes `None`. With `early` the kernel starts
/// early ([`Gpu::launch_on`]; `ghosts` begins by waiting for the kernel before).
#[allow(clippy::too_many_arguments)]
pub(crate) fn fill_ghosts<T: Real, const D: usize>(
    gpu: &Gpu,
    projection_kernels: &Module,
    l: &Layout<D>,
    vel: [&DevBuf<T>; D],
    (bck, bcv): (&DevBuf<i32>, &DevBuf<T>),
    ctrl: Option<&DevBuf<i32>>,
    early: bool,
) -> Result<(), CudaError> {
    let a = Args::new()
        .axes(vel.iter().map(|b| b.ptr))
        .p(bck)
        .p(bcv)
        .is(&ints3(l.n))
        .is(&pad3(l.periodic.map(i64::from), 0));
    let a = match ctrl {
        Some(c) => a.p(c),
        None => a.null(),
    };
    // The plane normal to an axis: the ghost layers (n + 2) of the axes before it, the interior
    // (n) of those after; the grid covers the largest of the axes' planes.
    let m = (0..D)
        .flat_map(|axis| (0..D).filter(move |b| *b != axis).map(move |b| (axis, b)))
        .map(|(axis, b)| l.n[b] + if b < axis { 2 } else { 0 })
        .max()
        .unwrap_or(1);
    let (x, y, _) = grid_plane::<D>(m);
    // SAFETY: ghosts takes (u, v, w, bck, bcv, nx, ny, nz, px, py, pz, ctrl), one block layer
    // (blockIdx.z) per axis; the velocity arrays are the staggered arrays of `l` (with ghosts),
    // bck and bcv the sides' codes and velocity vectors.
    let f = projection_kernels.function("ghosts")?;
    unsafe { gpu.launch_on(Stream::Compute, f, ((x, y, D as u32), (B1, 1, 1)), &a, early) }
}

/// The velocity conditions as `ghosts` of `kernels/projection.cu` reads them: a kind per side
/// (`BC_*` of `kernels/common.cuh`, side `2 axis + s`) and the velocity vector each side
/// prescribes (`staggered::side_velocity`: a wall's or an inflow's; zero elsewhere), three values
/// per side.
fn side_codes<T: Real>(bc: &[[Boundary; 2]]) -> Result<([i32; 6], [T; 18]), CudaError> {
    let mut bck = [0i32; 6];
    let mut bcv = [T::zero(); 18];
    for (side, b) in bc.iter().flatten().enumerate() {
        bck[side] = match b {
            Boundary::Wall { .. } => slots::BC_WALL,
            Boundary::Inflow { .. } => slots::BC_INFLOW,
            Boundary::Outflow {} => slots::BC_OUTFLOW,
            Boundary::Opening {} => slots::BC_OPENING,
            Boundary::Symmetry {} => slots::BC_SYMMETRY,
            Boundary::Periodic {} => slots::BC_PERIODIC,
            Boundary::Exact {} => return Err(CudaError("exact sides run on the CPU backend".into())),
        };
        if let Some(v) = side_velocity(b, Side::ALL[side]) {
            for c in 0..3 {
                bcv[3 * side + c] = T::of(v[c]);
            }
        }
    }
    Ok((bck, bcv))
}

/// [`side_codes`] in device memory.
pub(crate) fn boundary_codes<T: Real>(
    gpu: &Arc<Gpu>,
    bc: &[[Boundary; 2]],
) -> Result<(DevBuf<i32>, DevBuf<T>), CudaError> {
    let (bck, bcv) = side_codes::<T>(bc)?;
    let bck_d = gpu.alloc::<i32>(bck.len())?;
    gpu.upload(&bck_d, &bck)?;
    let bcv_d = gpu.alloc::<T>(bcv.len())?;
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
    if cfg.analytic.is_some() {
        return Some(Invalid::new(
            "initial.type",
            "analytic initial states and exact sides run on the CPU for now (backend = \"cpu\")",
        ));
    }
    let dim = cfg.grid.dim;
    if cfg.grid.n[..dim].iter().any(|n| *n < 2) {
        return Some(Invalid::new(
            "grid.nx",
            "the CUDA backend needs at least 2 cells along every axis",
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

/// Device workspace of the pressure solver in use.
enum Work<T, const D: usize> {
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
        levels: Vec<MgLevel<T, D>>,
        coarse: MgCoarse<T, D>,
    },
    /// The transform solve (`dct_divide` in kernels/transform.cuh).
    Spectral(Box<SpectralWork<T>>),
}

struct Mirror<T: Real, const D: usize> {
    cpu: Option<Projection<T, D>>,
    stale: bool,
    /// Pinned copies of the velocity components and the pressure, in that order.
    staging: Option<Vec<Pinned<T>>>,
}

/// The projection solver on a CUDA device (precision `T`, `D` dimensions).
pub struct CudaProjection<T: Real, const D: usize> {
    gpu: Arc<Gpu>,
    projection_kernels: Module,
    poisson_kernels: Module,
    cfg: Config,
    l: Layout<D>,
    op: Laplacian<T, D>,
    /// Velocity components (ghosted), their predictions `F` and AB2 histories `H^{n-1}`.
    vel: [DevBuf<T>; D],
    pred: [DevBuf<T>; D],
    hist: [DevBuf<T>; D],
    p: DevBuf<T>,
    rhs: DevBuf<T>,
    part_a: DevBuf<T>,
    part_b: DevBuf<T>,
    /// The 3D block partials folded by layer (`fold_layers`): sums, and the speed maxima (kept
    /// apart, as the correction's finalize reads both).
    layer_sums: DevBuf<T>,
    layer_maxima: DevBuf<T>,
    sc: DevBuf<T>,
    ctrl: DevBuf<i32>,
    /// The step clock: dt, time, AB2 weights and history, steps, dt cap (`CK_*`).
    clock: DevBuf<f64>,
    bck: DevBuf<i32>,
    bcv: DevBuf<T>,
    work: Work<T, D>,
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
    mirror: Mutex<Mirror<T, D>>,
    /// Device-derived fields on their way to the host.
    readback: Mutex<Readback<T>>,
    /// The display kernels.
    display: StaggeredDisplay,
    /// The largest speed of each component (the next step's `dt`, the health check).
    speeds: [f64; D],
    time: f64,
    steps: u64,
    dt: f64,
    dt_cap: f64,
    has_history: bool,
    residuals: Vec<(&'static str, f64)>,
    /// The last step's pressure solve, when it stopped at its iteration cap.
    capped: Option<CappedSolve>,
    /// On a part of a grid cut over several GPUs, its link to the others.
    slab: Option<GpuSlab<T>>,
    /// The rotor's sources (`[rotor]`).
    rotor: Option<DeviceRotor<T>>,
}

fn pack_pbc<T, const D: usize>(op: &Laplacian<T, D>) -> i64 {
    op.bc.iter().flatten().enumerate().fold(0, |acc, (side, b)| {
        let code = match b {
            FaceBc::Neumann => 0,
            FaceBc::Dirichlet => 1,
            FaceBc::Periodic => 2,
        };
        acc | (code << (2 * side))
    })
}

/// `D` device buffers of `len` zeros.
fn zeros<T: Copy, const D: usize>(gpu: &Arc<Gpu>, len: usize) -> Result<[DevBuf<T>; D], CudaError> {
    let v = (0..D)
        .map(|_| gpu.alloc_zeros(len))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(v.try_into().unwrap_or_else(|_| unreachable!("D buffers")))
}

impl<T: Real, const D: usize> CudaProjection<T, D> {
    /// The solver of `cfg` on device `device`.
    pub fn new(cfg: Config, device: usize) -> Result<Self, CudaError> {
        Self::build(cfg, Gpu::on(device)?, None)
    }

    /// The solver of one part of the grid of `whole` on device `device`, cut into `link`'s
    /// slabs along the last axis: `cfg` is `whole` on the part's stored cells, with walls where
    /// it meets another part ([`slab`]; collective over the parts: each builds its NCCL
    /// communicator here). 3D grids only, with the Jacobi, SOR, PCG or multigrid pressure solve.
    pub fn part(cfg: Config, whole: &Config, link: &SlabLink, device: usize) -> Result<Self, CudaError> {
        let gpu = Gpu::on(device)?;
        let singular = whole.pressure_operator::<T, D>().singular();
        let slab = GpuSlab::new(&gpu, link.clone(), whole.clone(), singular)?;
        Self::build(cfg, gpu, Some(slab))
    }

    fn build(cfg: Config, gpu: Arc<Gpu>, slab: Option<GpuSlab<T>>) -> Result<Self, CudaError> {
        assert_eq!(cfg.grid.dim, D, "a {D}D solver of a {}D case", cfg.grid.dim);
        let projection_kernels = gpu.module_dim(KernelSet::Projection, T::NAME, D)?;
        let poisson_kernels = gpu.module_dim(KernelSet::Poisson, T::NAME, D)?;
        let l = cfg.layout::<D>();
        let n = l.n;
        let op = cfg.pressure_operator::<T, D>();
        let len = l.len();
        let cells = op.len();
        let mut host: [Vec<T>; D] = std::array::from_fn(|c| vec![T::of(cfg.initial_velocity[c]); len]);
        fill_velocity_ghosts(&l, &cfg.bc, host.each_mut().map(|v| &mut v[..]));
        let vel = zeros::<T, D>(&gpu, len)?;
        for (b, h) in vel.iter().zip(&host) {
            gpu.upload(b, h)?;
        }
        let parts = D * blocks_tile(faces3(n)).max(grid1(cells).0 as usize) + 16;
        let folded = slab::Partials::folded_len(cells3(n)[2]);
        let (bck_d, bcv_d) = boundary_codes::<T>(&gpu, &cfg.bc)?;
        let work = Self::workspace(&gpu, &op, cfg.poisson.kind, slab.as_ref())?;
        let mut s = Self {
            pred: zeros(&gpu, len)?,
            hist: zeros(&gpu, len)?,
            p: gpu.alloc_zeros(cells)?,
            rhs: gpu.alloc_zeros(cells)?,
            part_a: gpu.alloc_zeros(parts)?,
            part_b: gpu.alloc_zeros(parts)?,
            layer_sums: gpu.alloc_zeros(folded)?,
            layer_maxima: gpu.alloc_zeros(folded)?,
            sc: gpu.alloc_zeros(SC_LEN)?,
            ctrl: gpu.alloc_zeros(CTRL_LEN)?,
            clock: gpu.alloc_zeros(CK_LEN)?,
            sc_host: gpu.pinned(SC_LEN)?,
            ctrl_host: gpu.pinned(CTRL_LEN)?,
            clock_host: gpu.pinned(CK_LEN)?,
            clock_stale: true,
            bck: bck_d,
            bcv: bcv_d,
            vel,
            work,
            v_cycle_graph: None,
            step_graphs: [None, None],
            graphs: cuda::graphs_enabled(),
            mirror: Mutex::new(Mirror {
                cpu: None,
                stale: true,
                staging: None,
            }),
            readback: Mutex::new(Readback::new(&gpu, cells)),
            display: StaggeredDisplay::new(&gpu, T::NAME, D)?,
            gpu,
            projection_kernels,
            poisson_kernels,
            l,
            op,
            cfg,
            speeds: [0.0; D],
            time: 0.0,
            steps: 0,
            dt: 0.0,
            dt_cap: f64::INFINITY,
            has_history: false,
            residuals: Vec::with_capacity(8),
            capped: None,
            slab,
            rotor: None,
        };
        if let Some(r) = s.cfg.rotor {
            s.rotor = Some(s.device_rotor(r)?);
        }
        if s.slab.is_some() {
            s.velocity_ghosts()?;
        }
        s.write_clock()?;
        s.max_speeds()?;
        s.read_step()?;
        if let Some(slab) = &s.slab {
            slab.timing.restart()?;
        }
        Ok(s)
    }

    /// The rotor of `setup` on this solver's grid: on a part, with the part's tables of the
    /// whole grid's ([`RotorSource::part`]).
    fn device_rotor(&self, setup: RotorSetup) -> Result<DeviceRotor<T>, CudaError> {
        let source = match &self.slab {
            Some(slab) => {
                let whole = &slab.whole;
                RotorSource::part(setup, &whole.grid, &whole.layout::<D>(), &self.l, &slab.link)
            }
            None => RotorSource::new(setup, &self.cfg.grid, &self.l),
        };
        DeviceRotor::of_tables(&self.gpu, source, &self.l, &self.vel)
    }

    /// The velocity components' device pointers, as a 3-axis kernel argument list.
    fn vel_ptrs(&self) -> impl Iterator<Item = u64> + '_ {
        self.vel.iter().map(|b| b.ptr)
    }

    /// Launches the kernel `name` of `module` (`projection_kernels` or `poisson_kernels`) on the
    /// compute stream.
    fn launch(
        &self,
        module: &Module,
        name: &'static str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        a: Args,
    ) -> Result<(), CudaError> {
        self.launch_from(module, Stream::Compute, name, grid, block, a)
    }

    /// Whether the compute stream's kernels start early ([`Gpu::launch_on`]: every kernel of
    /// `projection_kernels` and `poisson_kernels` begins by waiting for the one before): on one
    /// GPU; not on a part of a decomposed grid, where NCCL calls and the exchange stream's events
    /// sit between kernels.
    fn starts_early(&self) -> bool {
        self.slab.is_none()
    }

    /// Launches the kernel `name` of `module` (`projection_kernels` or `poisson_kernels`) on
    /// `stream`, on the compute stream early where [`CudaProjection::starts_early`].
    fn launch_from(
        &self,
        module: &Module,
        stream: Stream,
        name: &'static str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        a: Args,
    ) -> Result<(), CudaError> {
        let f = module.function(name)?;
        // SAFETY: every call site passes the arguments of the named kernel in kernels/*.cu, in
        // order, with buffers allocated for this solver's grid (sanitizer-checked).
        let early = matches!(stream, Stream::Compute) && self.starts_early();
        unsafe { self.gpu.launch_on(stream, f, (grid, block), &a, early) }
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }
}
