//! The CUDA backend: device probe, context and stream, run-time compilation of the kernels in
//! `kernels/*.cu` by NVRTC with a module cache, device buffers, pinned staging buffers for field
//! readback, kernel launches and events.
//!
//! The driver (`libcuda`) and NVRTC (`libnvrtc`) are loaded at run time (cudarc's
//! `dynamic-loading`), so the binary runs on machines without them; [`probe`] checks for both
//! libraries and a device before anything else in cudarc is touched (cudarc panics on a missing
//! library otherwise). NVRTC is looked up under the names cudarc tries: `libnvrtc.so`,
//! `libnvrtc.so.12`, `libnvrtc.so.11`, ... on `LD_LIBRARY_PATH` and the system paths.
//!
//! Kernels: each file `kernels/<set>.cu` includes `kernels/common.cuh`; both are embedded with
//! `include_str!`, preceded by the `#define`s of the constants the host shares with them
//! ([`slots`]), and compiled at first use for the device's compute capability
//! (`--gpu-architecture=compute_XY`, PTX that the driver loads for `sm_XY`), once with
//! `-DREAL=float` and once with `-DREAL=double`, always with `--fmad=false` so element-wise
//! arithmetic rounds exactly like the CPU reference. The staggered-grid sets are compiled with
//! `-DDIM=2` or `-DDIM=3` too, per dimension ([`KernelSet::dimensions`]). The PTX
//! is cached per (kernel set, precision, dimension, architecture) for the life of the process.
//!
//! Modules: [`context`] (probe, context, streams), [`memory`] (device and pinned buffers,
//! copies, scalar blocks and staged readbacks), [`module`] (NVRTC, the kernels' parameter lists
//! read from their PTX, modules), [`launch`] (typed arguments checked against those lists,
//! bound launches), [`graph`] (graphs, events), [`external`] (the renderer's memory imported), [`slots`] (shared constants), [`readback`]
//! (displayed fields), [`fft`] (cuFFT).
//!
//! Every driver call returns a [`CudaError`]; the solvers turn it into a
//! [`crate::solver::SolverError`] (an out-of-memory or launch failure never panics).

pub mod fft;

pub mod context;
pub mod external;
pub mod graph;
pub mod launch;
pub mod memory;
pub mod module;
pub mod nccl;
pub mod readback;
pub mod slots;

pub use context::{DeviceInfo, Gpu, Stream, driver_available, nvrtc_available, probe};
pub use external::SharedBuffer;
pub use graph::{Event, Graph, exchange_overlap_enabled, graphs_enabled, sweep_trace_enabled};
pub use launch::{Arg, ArgKind, Args, Launch};
pub use memory::{DevBuf, HostMirror, Pinned, Scalars};
pub use module::{Kernel, Module, Ptx, compile_ptx};
pub use readback::Readback;

use crate::solver::limiter::Limiter;
use cudarc::driver::result as drv;
use std::fmt;
use std::sync::Arc;

/// The shared header every kernel file includes.
pub const COMMON_HEADER: &str = include_str!("../../../kernels/common.cuh");
/// The ideal-gas helpers, ghost cells and step reduction of the compressible kernel files.
pub const EULER_HEADER: &str = include_str!("../../../kernels/euler.cuh");
/// Convection face values and staggered index helpers of the projection and SIMPLE kernels.
pub const STAGGERED_HEADER: &str = include_str!("../../../kernels/staggered.cuh");
/// The transform pressure solve's kernel, included by `kernels/poisson.cu`.
pub const TRANSFORM_HEADER: &str = include_str!("../../../kernels/transform.cuh");
/// The transform pressure solve's line solves along y (FACR), included by `kernels/poisson.cu`.
pub const FACR_HEADER: &str = include_str!("../../../kernels/facr.cuh");
/// The momentum predictor of the projection method, included by `kernels/projection.cu`.
pub const PREDICTOR_HEADER: &str = include_str!("../../../kernels/predictor.cuh");
/// The additive-correction multigrid V-cycle of `kernels/stencil.cu`.
pub const ADDITIVE_CORRECTION_HEADER: &str = include_str!("../../../kernels/additive_correction.cuh");

/// A kernel file (one NVRTC compilation unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelSet {
    /// `kernels/projection.cu`: predictor, boundaries, right-hand side, correction, reductions.
    Projection,
    /// `kernels/poisson.cu`: the pressure solvers.
    Poisson,
    /// `kernels/bench.cu`: the copy kernel of the bandwidth ceiling.
    Bench,
    /// `kernels/muscl_hancock.cu` (with `euler.cuh`): the MUSCL-Hancock scheme and the Riemann
    /// solvers.
    MusclHancock,
    /// `kernels/cese.cu` (with `euler.cuh`): the CE/SE scheme.
    Cese,
    /// `kernels/display.cu` (with `euler.cuh`): the displayed fields of both families, derived
    /// from the solver state at the cell centres ([`readback`]).
    Display,
    /// `kernels/stencil.cu`: the linear solvers of the SIMPLE family's five- and seven-point
    /// systems (line sweeps by parallel cyclic reduction, Jacobi, the Krylov solvers' operator,
    /// additive-correction multigrid).
    Stencil,
    /// `kernels/simple.cu` (with `staggered.cuh`): SIMPLE and SIMPLER assembly and corrections.
    Simple,
    /// `kernels/rotor_source.cu`: a rotor's loads and momentum sources.
    RotorSource,
    /// `kernels/shown_field.cu`: a shown field narrowed into the renderer's shared buffer and
    /// its colour-scale statistics ([`readback`]).
    ShownField,
}

impl KernelSet {
    pub const ALL: [KernelSet; 10] = [
        KernelSet::Projection,
        KernelSet::Poisson,
        KernelSet::Bench,
        KernelSet::MusclHancock,
        KernelSet::Cese,
        KernelSet::Display,
        KernelSet::Stencil,
        KernelSet::Simple,
        KernelSet::RotorSource,
        KernelSet::ShownField,
    ];

    /// The dimensions the set is compiled for: 2 and 3 for the staggered-grid sets of the
    /// projection method and its display and for the SIMPLE family and its stencil systems'
    /// linear solvers, 2 for the others.
    pub fn dimensions(self) -> &'static [usize] {
        match self {
            KernelSet::Projection
            | KernelSet::Poisson
            | KernelSet::Display
            | KernelSet::Stencil
            | KernelSet::Simple => &[2, 3],
            _ => &[2],
        }
    }

    /// Whether the set is compiled with `-DDIM` (the staggered-grid sets, SIMPLE's too, which
    /// share `staggered.cuh`); the compressible sets use the name for their own.
    pub(crate) fn uses_dim(self) -> bool {
        matches!(
            self,
            KernelSet::Projection
                | KernelSet::Poisson
                | KernelSet::Display
                | KernelSet::Simple
                | KernelSet::Stencil
        )
    }

    pub fn file_name(self) -> &'static str {
        match self {
            KernelSet::Projection => "projection.cu",
            KernelSet::Poisson => "poisson.cu",
            KernelSet::Bench => "bench.cu",
            KernelSet::MusclHancock => "muscl_hancock.cu",
            KernelSet::Cese => "cese.cu",
            KernelSet::Display => "display.cu",
            KernelSet::Stencil => "stencil.cu",
            KernelSet::Simple => "simple.cu",
            KernelSet::RotorSource => "rotor_source.cu",
            KernelSet::ShownField => "shown_field.cu",
        }
    }

    fn source(self) -> &'static str {
        match self {
            KernelSet::Projection => include_str!("../../../kernels/projection.cu"),
            KernelSet::Poisson => include_str!("../../../kernels/poisson.cu"),
            KernelSet::Bench => include_str!("../../../kernels/bench.cu"),
            KernelSet::MusclHancock => include_str!("../../../kernels/muscl_hancock.cu"),
            KernelSet::Cese => include_str!("../../../kernels/cese.cu"),
            KernelSet::Display => include_str!("../../../kernels/display.cu"),
            KernelSet::Stencil => include_str!("../../../kernels/stencil.cu"),
            KernelSet::Simple => include_str!("../../../kernels/simple.cu"),
            KernelSet::RotorSource => include_str!("../../../kernels/rotor_source.cu"),
            KernelSet::ShownField => include_str!("../../../kernels/shown_field.cu"),
        }
    }

    /// The compilation unit: the shared constants' `#define`s ([`slots::defines`]), then the
    /// file with each `#include "<header>"` line of `kernels/` (`common.cuh`, `euler.cuh`,
    /// `staggered.cuh`, `transform.cuh`, `facr.cuh`, `additive_correction.cuh`, `predictor.cuh`) replaced by
    /// the header's text.
    pub fn full_source(self) -> String {
        slots::defines()
            + &self
                .source()
                .replace("#include \"common.cuh\"", COMMON_HEADER)
                .replace("#include \"euler.cuh\"", EULER_HEADER)
                .replace("#include \"staggered.cuh\"", STAGGERED_HEADER)
                .replace("#include \"transform.cuh\"", TRANSFORM_HEADER)
                .replace("#include \"facr.cuh\"", FACR_HEADER)
                .replace("#include \"predictor.cuh\"", PREDICTOR_HEADER)
                .replace("#include \"additive_correction.cuh\"", ADDITIVE_CORRECTION_HEADER)
    }
}

/// The limiter code of `psi` in `kernels/common.cuh` ([`slots`]' `LIM_*`).
pub fn limiter_code(l: Limiter) -> i64 {
    match l {
        Limiter::None => slots::LIM_NONE,
        Limiter::Minmod => slots::LIM_MINMOD,
        Limiter::Superbee => slots::LIM_SUPERBEE,
        Limiter::VanLeer => slots::LIM_VAN_LEER,
        Limiter::Mc => slots::LIM_MC,
        Limiter::VanAlbada => slots::LIM_VAN_ALBADA,
        Limiter::Osher => slots::LIM_OSHER,
        Limiter::Downwind => slots::LIM_DOWNWIND,
        Limiter::Central => slots::LIM_CENTRAL,
        Limiter::Sou => slots::LIM_SOU,
        Limiter::Fromm => slots::LIM_FROMM,
        Limiter::Quick => slots::LIM_QUICK,
    }
}

/// A CUDA failure, with the call that failed.
#[derive(Clone, Debug, PartialEq)]
pub struct CudaError(pub String);

impl fmt::Display for CudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CudaError {}

impl From<drv::DriverError> for CudaError {
    fn from(e: drv::DriverError) -> Self {
        let what = e
            .error_string()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        CudaError(format!("CUDA driver error {:?} ({what})", e.0))
    }
}

/// Device-to-device copy bandwidth (GB/s, bytes read plus bytes written per second) of the copy
/// kernel of `kernels/bench.cu` over `bytes` bytes, median of `reps` timed launches after a
/// warm-up: the ceiling the memory-bound stencil kernels are measured against.
pub fn copy_bandwidth(gpu: &Arc<Gpu>, bytes: usize, reps: usize) -> Result<f64, CudaError> {
    let m = gpu.module(KernelSet::Bench, "f32")?;
    let f = m.function("copy")?;
    let n = bytes / 4;
    let src = gpu.alloc_zeros::<f32>(n)?;
    let dst = gpu.alloc_zeros::<f32>(n)?;
    let n4 = n / 4;
    let blocks = (n4 as u64).div_ceil(256).min(132 * 16) as u32;
    let args = Args::new().p(&src).p(&dst).l(n4 as i64);
    // SAFETY: `copy(const float4*, float4*, long long)`; both buffers hold n4 float4 values and
    // outlive the launch.
    let copy = unsafe { Launch::new(f, (blocks, 1, 1), (256, 1, 1), args) }?;
    copy.run(gpu)?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        let (a, b) = (gpu.event()?, gpu.event()?);
        a.record()?;
        copy.run(gpu)?;
        b.record()?;
        times.push(a.elapsed_ms(&b)? as f64);
    }
    times.sort_by(f64::total_cmp);
    let ms = times[times.len() / 2];
    Ok(2.0 * (n4 * 16) as f64 / (ms * 1e-3) / 1e9)
}
