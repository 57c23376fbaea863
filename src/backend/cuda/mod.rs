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
//! `include_str!` and compiled at first use for the device's compute capability
//! (`--gpu-architecture=compute_XY`, PTX that the driver loads for `sm_XY`), once with
//! `-DREAL=float` and once with `-DREAL=double`, always with `--fmad=false` so element-wise
//! arithmetic rounds exactly like the CPU reference. The staggered-grid sets are compiled with
//! `-DDIM=2` or `-DDIM=3` too, per dimension ([`KernelSet::dimensions`]). The PTX
//! is cached per (kernel set, precision, dimension, architecture) for the life of the process.
//!
//! Every driver call returns a [`CudaError`]; the solvers turn it into a
//! [`crate::solver::SolverError`] (an out-of-memory or launch failure never panics).

pub mod fft;

use crate::solver::limiter::Limiter;
use cudarc::driver::result as drv;
use cudarc::driver::sys;
use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, OnceLock};

pub mod readback;
pub use readback::Readback;

/// The shared header every kernel file includes.
pub const COMMON_HEADER: &str = include_str!("../../../kernels/common.cuh");
/// The ideal-gas helpers, ghost cells and step reduction of the compressible kernel files.
pub const EULER_HEADER: &str = include_str!("../../../kernels/euler.cuh");
/// Convection face values and staggered index helpers of the projection and SIMPLE kernels.
pub const STAGGERED_HEADER: &str = include_str!("../../../kernels/staggered.cuh");
/// The transform pressure solve's kernel, included by `kernels/poisson.cu`.
pub const TRANSFORM_HEADER: &str = include_str!("../../../kernels/transform.cuh");

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
    /// `kernels/five_point.cu`: the linear solvers of the SIMPLE family's five-point systems
    /// (line sweeps by parallel cyclic reduction, Jacobi, the Krylov solvers' operator).
    FivePoint,
    /// `kernels/simple.cu` (with `staggered.cuh`): SIMPLE and SIMPLER assembly and corrections.
    Simple,
}

impl KernelSet {
    pub const ALL: [KernelSet; 8] = [
        KernelSet::Projection,
        KernelSet::Poisson,
        KernelSet::Bench,
        KernelSet::MusclHancock,
        KernelSet::Cese,
        KernelSet::Display,
        KernelSet::FivePoint,
        KernelSet::Simple,
    ];

    /// The dimensions the set is compiled for: 2 and 3 for the staggered-grid sets of the
    /// projection method and its display, 2 for the others.
    pub fn dimensions(self) -> &'static [usize] {
        match self {
            KernelSet::Projection | KernelSet::Poisson | KernelSet::Display => &[2, 3],
            _ => &[2],
        }
    }

    /// Whether the set is compiled with `-DDIM` (the staggered-grid sets, SIMPLE's too, which
    /// share `staggered.cuh`); the compressible sets use the name for their own.
    fn uses_dim(self) -> bool {
        matches!(
            self,
            KernelSet::Projection | KernelSet::Poisson | KernelSet::Display | KernelSet::Simple
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
            KernelSet::FivePoint => "five_point.cu",
            KernelSet::Simple => "simple.cu",
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
            KernelSet::FivePoint => include_str!("../../../kernels/five_point.cu"),
            KernelSet::Simple => include_str!("../../../kernels/simple.cu"),
        }
    }

    /// The compilation unit: the file with each `#include "<header>"` line of `kernels/`
    /// (`common.cuh`, `euler.cuh`, `staggered.cuh`, `transform.cuh`) replaced by the header's
    /// text.
    pub fn full_source(self) -> String {
        self.source()
            .replace("#include \"common.cuh\"", COMMON_HEADER)
            .replace("#include \"euler.cuh\"", EULER_HEADER)
            .replace("#include \"staggered.cuh\"", STAGGERED_HEADER)
            .replace("#include \"transform.cuh\"", TRANSFORM_HEADER)
    }
}

/// The limiter numbering of `psi` in `kernels/common.cuh`.
pub fn limiter_code(l: Limiter) -> i64 {
    match l {
        Limiter::None => 0,
        Limiter::Minmod => 1,
        Limiter::Superbee => 2,
        Limiter::VanLeer => 3,
        Limiter::Mc => 4,
        Limiter::VanAlbada => 5,
        Limiter::Osher => 6,
        Limiter::Downwind => 7,
        Limiter::Central => 8,
        Limiter::Sou => 9,
        Limiter::Fromm => 10,
        Limiter::Quick => 11,
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

/// What [`probe`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceInfo {
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    pub total_memory: usize,
    /// Driver version as `cuDriverGetVersion` reports it (e.g. 13000 for CUDA 13.0).
    pub driver_version: i32,
    /// How many CUDA devices the driver sees; the solvers run on device 0.
    pub device_count: i32,
}

impl DeviceInfo {
    /// The device in words, e.g. "NVIDIA H200 (sm_90), device 0 of 2".
    pub fn describe(&self) -> String {
        format!(
            "{} (sm_{}{}), device 0 of {}",
            self.name, self.compute_capability.0, self.compute_capability.1, self.device_count
        )
    }
}

/// Whether the NVRTC library can be loaded (checked without touching any other cudarc call).
pub fn nvrtc_available() -> bool {
    // SAFETY: only tries to dlopen the library under cudarc's candidate names.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// Whether the driver library can be loaded.
pub fn driver_available() -> bool {
    // SAFETY: as above.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Probes once per process for the driver library, NVRTC and a device (ordinal 0). `Err` says
/// what is missing, in words fit for a log line or an error message.
pub fn probe() -> Result<&'static DeviceInfo, String> {
    static PROBE: OnceLock<Result<DeviceInfo, String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            if !driver_available() {
                return Err("the CUDA driver library (libcuda.so) was not found".into());
            }
            if !nvrtc_available() {
                return Err(
                    "the NVRTC library (libnvrtc.so or libnvrtc.so.12) was not found on \
                            LD_LIBRARY_PATH"
                        .into(),
                );
            }
            let info = (|| -> Result<DeviceInfo, CudaError> {
                drv::init()?;
                let count = drv::device::get_count()?;
                if count < 1 {
                    return Err(CudaError("no CUDA device is present".into()));
                }
                let dev = drv::device::get(0)?;
                let attr = |a| unsafe { drv::device::get_attribute(dev, a) };
                let major = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
                let minor = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
                let total_memory = unsafe { drv::device::total_mem(dev) }?;
                let mut driver_version = 0;
                unsafe { sys::cuDriverGetVersion(&mut driver_version) }.result()?;
                Ok(DeviceInfo {
                    name: drv::device::get_name(dev)?,
                    compute_capability: (major, minor),
                    total_memory,
                    driver_version,
                    device_count: count,
                })
            })();
            info.map_err(|e| format!("no usable CUDA device: {e}"))
        })
        .as_ref()
        .map_err(|e| e.clone())
}

/// Compiles a kernel set to PTX with NVRTC for `precision` ("f32" or "f64"), dimension `dim`
/// (one of [`KernelSet::dimensions`]) and the compute capability `arch` (major, minor). Cached
/// per (set, precision, dim, arch). This is the code path the solvers use; the
/// kernel-compilation test calls it without a device.
pub fn compile_ptx(
    set: KernelSet,
    precision: &str,
    dim: usize,
    arch: (i32, i32),
) -> Result<Arc<String>, CudaError> {
    type Key = (KernelSet, String, usize, (i32, i32));
    static CACHE: OnceLock<Mutex<HashMap<Key, Arc<String>>>> = OnceLock::new();
    if !set.dimensions().contains(&dim) {
        return Err(CudaError(format!("{} has no {dim}D kernels", set.file_name())));
    }
    let key = (set, precision.to_string(), dim, arch);
    let cache = CACHE.get_or_init(Default::default);
    if let Some(p) = cache.lock().expect("cache lock").get(&key) {
        return Ok(p.clone());
    }
    if !nvrtc_available() {
        return Err(CudaError(
            "the NVRTC library (libnvrtc.so or libnvrtc.so.12) was not found on LD_LIBRARY_PATH".into(),
        ));
    }
    let real = match precision {
        "f32" => "float",
        "f64" => "double",
        other => return Err(CudaError(format!("unknown precision {other}"))),
    };
    let mut options = vec![
        format!("-DREAL={real}"),
        format!("--gpu-architecture=compute_{}{}", arch.0, arch.1),
        "--std=c++17".into(),
        "-lineinfo".into(),
    ];
    if set.uses_dim() {
        options.push(format!("-DDIM={dim}"));
    }
    let opts = cudarc::nvrtc::CompileOptions {
        fmad: Some(false),
        options,
        name: Some(set.file_name().into()),
        ..Default::default()
    };
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(set.full_source(), opts).map_err(|e| {
        CudaError(format!(
            "NVRTC could not compile {} ({precision}): {e:?}",
            set.file_name()
        ))
    })?;
    let ptx = Arc::new(ptx.to_src());
    cache.lock().expect("cache lock").insert(key, ptx.clone());
    Ok(ptx)
}

/// The primary context of device 0 and two streams on it. All work of a solver goes to its
/// compute `stream`, in order; `copy` carries the asynchronous field copies of [`Readback`],
/// ordered against the compute stream by events only, so they overlap the following steps. The
/// host waits only where it reads scalars or fields.
pub struct Gpu {
    dev: sys::CUdevice,
    ctx: sys::CUcontext,
    pub stream: sys::CUstream,
    copy: sys::CUstream,
    pub info: DeviceInfo,
}

/// One of a [`Gpu`]'s two streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// The solver's work, in order (kernels, scalar reads, synchronous copies).
    Compute,
    /// The asynchronous field copies of [`Readback`].
    Copy,
}

// SAFETY: the context and stream handles may be used from any thread once the context is made
// current there ([`Gpu::bind`]); a solver is used by one thread at a time (`Solver: Send`).
unsafe impl Send for Gpu {}
unsafe impl Sync for Gpu {}

impl Gpu {
    pub fn new() -> Result<Arc<Gpu>, CudaError> {
        let info = probe().map_err(CudaError)?.clone();
        let dev = drv::device::get(0)?;
        let ctx = unsafe { drv::primary_ctx::retain(dev) }?;
        unsafe { drv::ctx::set_current(ctx) }?;
        let stream = drv::stream::create(drv::stream::StreamKind::NonBlocking)?;
        let copy = drv::stream::create(drv::stream::StreamKind::NonBlocking)?;
        Ok(Arc::new(Gpu {
            dev,
            ctx,
            stream,
            copy,
            info,
        }))
    }

    fn handle(&self, s: Stream) -> sys::CUstream {
        match s {
            Stream::Compute => self.stream,
            Stream::Copy => self.copy,
        }
    }

    /// Free memory of the device in bytes (`cuMemGetInfo`).
    pub fn free_memory(&self) -> Result<u64, CudaError> {
        self.bind()?;
        let (free, _total) = drv::mem_get_info()?;
        Ok(free as u64)
    }

    /// Makes the context current on the calling thread.
    pub fn bind(&self) -> Result<(), CudaError> {
        unsafe { drv::ctx::set_current(self.ctx) }?;
        Ok(())
    }

    /// Loads the module of a kernel set in a precision, for 2D grids (compiling it on first use).
    pub fn module(self: &Arc<Self>, set: KernelSet, precision: &str) -> Result<Module, CudaError> {
        self.module_dim(set, precision, 2)
    }

    /// Loads the module of a kernel set in a precision and dimension (compiling it on first use).
    pub fn module_dim(
        self: &Arc<Self>,
        set: KernelSet,
        precision: &str,
        dim: usize,
    ) -> Result<Module, CudaError> {
        let ptx = compile_ptx(set, precision, dim, self.info.compute_capability)?;
        self.bind()?;
        let image = CString::new(ptx.as_str()).map_err(|_| CudaError("PTX contains a NUL byte".into()))?;
        let m = unsafe { drv::module::load_data(image.as_ptr() as *const c_void) }?;
        Ok(Module {
            m,
            gpu: self.clone(),
            funcs: Mutex::new(HashMap::new()),
        })
    }

    /// Device allocation of `len` values (uninitialised).
    pub fn alloc<T: Copy>(self: &Arc<Self>, len: usize) -> Result<DevBuf<T>, CudaError> {
        self.bind()?;
        let bytes = (len.max(1)) * std::mem::size_of::<T>();
        let ptr = unsafe { drv::malloc_sync(bytes) }.map_err(|e| {
            CudaError(format!(
                "{} while allocating {bytes} bytes of device memory",
                CudaError::from(e)
            ))
        })?;
        Ok(DevBuf {
            ptr,
            len,
            gpu: self.clone(),
            _t: PhantomData,
        })
    }

    /// Device allocation filled with zero bytes.
    pub fn alloc_zeros<T: Copy>(self: &Arc<Self>, len: usize) -> Result<DevBuf<T>, CudaError> {
        let b = self.alloc(len)?;
        self.memset_zero(&b)?;
        Ok(b)
    }

    pub fn memset_zero<T: Copy>(&self, b: &DevBuf<T>) -> Result<(), CudaError> {
        unsafe { drv::memset_d8_async(b.ptr, 0, b.bytes(), self.stream) }?;
        Ok(())
    }

    /// Host to device (waits for the copy).
    pub fn upload<T: Copy>(&self, dst: &DevBuf<T>, src: &[T]) -> Result<(), CudaError> {
        assert_eq!(src.len(), dst.len, "upload size");
        self.bind()?;
        unsafe { drv::memcpy_htod_async(dst.ptr, src, self.stream) }?;
        self.sync()
    }

    /// Device to host into a new vector (waits; pageable memory: for whole states, not for
    /// the per-frame display path).
    pub fn download<T: Copy + Default>(&self, src: &DevBuf<T>) -> Result<Vec<T>, CudaError> {
        self.bind()?;
        let mut out = vec![T::default(); src.len];
        unsafe { drv::memcpy_dtoh_async(&mut out[..], src.ptr, self.stream) }?;
        self.sync()?;
        Ok(out)
    }

    /// Device to (pinned) host on the compute stream, asynchronous: call [`Gpu::sync`] before
    /// reading `dst`.
    pub fn download_async<T: Copy>(
        &self,
        dst: &mut Pinned<T>,
        src: &DevBuf<T>,
        len: usize,
    ) -> Result<(), CudaError> {
        self.download_on(Stream::Compute, dst, src, len)
    }

    /// Device to (pinned) host on `stream` (the compute or the copy stream), asynchronous: wait
    /// for the stream, or an event recorded on it after the copy, before reading `dst`.
    pub fn download_on<T: Copy>(
        &self,
        stream: Stream,
        dst: &mut Pinned<T>,
        src: &DevBuf<T>,
        len: usize,
    ) -> Result<(), CudaError> {
        assert!(len <= dst.len && len <= src.len, "download size");
        let slice = unsafe { std::slice::from_raw_parts_mut(dst.ptr, len) };
        unsafe { drv::memcpy_dtoh_async(slice, src.ptr, self.handle(stream)) }?;
        Ok(())
    }

    /// Makes later work on `stream` wait until `event`'s last recording has completed (at once
    /// if it was never recorded); the host does not wait.
    pub fn wait_event(&self, stream: Stream, event: &Event) -> Result<(), CudaError> {
        let flags = sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT;
        unsafe { drv::stream::wait_event(self.handle(stream), event.e, flags) }?;
        Ok(())
    }

    pub fn copy<T: Copy>(&self, dst: &DevBuf<T>, src: &DevBuf<T>) -> Result<(), CudaError> {
        assert_eq!(dst.len, src.len, "copy size");
        unsafe { drv::memcpy_dtod_async(dst.ptr, src.ptr, src.bytes(), self.stream) }?;
        Ok(())
    }

    /// Waits for the compute stream; asynchronous kernel faults surface here.
    pub fn sync(&self) -> Result<(), CudaError> {
        self.sync_on(Stream::Compute)
    }

    /// Waits for `stream`.
    pub fn sync_on(&self, stream: Stream) -> Result<(), CudaError> {
        unsafe { drv::stream::synchronize(self.handle(stream)) }?;
        Ok(())
    }

    /// Launches `f` on the stream.
    ///
    /// # Safety
    /// `args` must match the kernel's parameter list (count, order, sizes), and every pointer
    /// must address device memory of the extent the kernel touches for this grid.
    pub unsafe fn launch(
        &self,
        f: Kernel,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        args: &Args,
    ) -> Result<(), CudaError> {
        unsafe { self.launch_shared(f, grid, block, 0, args) }
    }

    /// Launches `f` with `shared` bytes of dynamic shared memory (above 48 KiB only after
    /// [`Gpu::allow_shared`] for that size).
    ///
    /// # Safety
    /// As [`Gpu::launch`]; the kernel must not use more dynamic shared memory than `shared`.
    pub unsafe fn launch_shared(
        &self,
        f: Kernel,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared: u32,
        args: &Args,
    ) -> Result<(), CudaError> {
        if let Some(n) = f.params
            && n != args.0.len()
        {
            return Err(CudaError(format!(
                "kernel {} takes {n} parameters; the launch passed {}",
                f.name,
                args.0.len()
            )));
        }
        let mut ptrs: Vec<*mut c_void> = args.0.iter().map(|a| a as *const u64 as *mut c_void).collect();
        unsafe { drv::launch_kernel(f.handle, grid, block, shared, self.stream, &mut ptrs) }?;
        Ok(())
    }

    /// Raises kernel `f`'s dynamic shared memory limit to `bytes` where that exceeds the default
    /// 48 KiB (an error names the size the device refused).
    pub fn allow_shared(&self, f: Kernel, bytes: usize) -> Result<(), CudaError> {
        if bytes <= 48 * 1024 {
            return Ok(());
        }
        let attr = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
        unsafe { drv::function::set_function_attribute(f.handle, attr, bytes as i32) }.map_err(|e| {
            CudaError(format!(
                "{} while allowing {bytes} bytes of shared memory per block",
                CudaError::from(e)
            ))
        })
    }

    /// Pinned (page-locked) host buffer for fast, asynchronous readback.
    pub fn pinned<T: Copy + Default>(self: &Arc<Self>, len: usize) -> Result<Pinned<T>, CudaError> {
        self.bind()?;
        let bytes = len.max(1) * std::mem::size_of::<T>();
        let ptr = unsafe { drv::malloc_host(bytes, 0) }? as *mut T;
        for k in 0..len {
            unsafe { ptr.add(k).write(T::default()) };
        }
        Ok(Pinned {
            ptr,
            len,
            gpu: self.clone(),
        })
    }

    /// An event that records times ([`Event::elapsed_ms`]).
    pub fn event(self: &Arc<Self>) -> Result<Event, CudaError> {
        self.new_event(sys::CUevent_flags::CU_EVENT_DEFAULT)
    }

    /// An event for ordering and waiting only (no timestamps: cheaper to record and wait on).
    pub fn marker(self: &Arc<Self>) -> Result<Event, CudaError> {
        self.new_event(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
    }

    fn new_event(self: &Arc<Self>, flags: sys::CUevent_flags) -> Result<Event, CudaError> {
        self.bind()?;
        Ok(Event {
            e: drv::event::create(flags)?,
            gpu: self.clone(),
        })
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        unsafe {
            let _ = drv::ctx::set_current(self.ctx);
            let _ = drv::stream::synchronize(self.stream);
            let _ = drv::stream::synchronize(self.copy);
            let _ = drv::stream::destroy(self.stream);
            let _ = drv::stream::destroy(self.copy);
            let _ = drv::primary_ctx::release(self.dev);
        }
    }
}

/// A loaded module; functions are looked up once by name.
pub struct Module {
    m: sys::CUmodule,
    gpu: Arc<Gpu>,
    funcs: Mutex<HashMap<&'static str, Kernel>>,
}

/// A kernel of a loaded [`Module`], valid while the module is: its handle, its name, and its
/// number of parameters where the driver reports it, so that [`Gpu::launch`] refuses a launch
/// with another number of arguments (naming the kernel) rather than have it read garbage.
#[derive(Clone, Copy, Debug)]
pub struct Kernel {
    handle: sys::CUfunction,
    name: &'static str,
    params: Option<usize>,
}

/// The number of parameters of kernel `f` (`cuFuncGetParamInfo`, drivers of CUDA 12.4 and
/// later; `None` on older drivers, whose launches go unchecked).
fn param_count(f: sys::CUfunction, driver_version: i32) -> Option<usize> {
    if driver_version < 12040 {
        return None;
    }
    for i in 0..1024 {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: `f` is a function of a loaded module; the driver writes the two sizes.
        match unsafe { sys::cuFuncGetParamInfo(f, i, &mut offset, &mut size) } {
            sys::CUresult::CUDA_SUCCESS => {}
            sys::CUresult::CUDA_ERROR_INVALID_VALUE => return Some(i),
            _ => return None,
        }
    }
    None
}

unsafe impl Send for Module {}
unsafe impl Sync for Module {}

impl Module {
    pub fn function(&self, name: &'static str) -> Result<Kernel, CudaError> {
        let mut funcs = self.funcs.lock().expect("function table");
        if let Some(&k) = funcs.get(name) {
            return Ok(k);
        }
        let c = CString::new(name).expect("kernel names have no NUL");
        let handle = unsafe { drv::module::get_function(self.m, c) }
            .map_err(|e| CudaError(format!("kernel {name}: {}", CudaError::from(e))))?;
        let k = Kernel {
            handle,
            name,
            params: param_count(handle, self.gpu.info.driver_version),
        };
        funcs.insert(name, k);
        Ok(k)
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        unsafe {
            let _ = drv::ctx::set_current(self.gpu.ctx);
            let _ = drv::module::unload(self.m);
        }
    }
}

/// Device memory of `len` values of `T`.
pub struct DevBuf<T> {
    pub ptr: sys::CUdeviceptr,
    pub len: usize,
    gpu: Arc<Gpu>,
    _t: PhantomData<T>,
}

unsafe impl<T> Send for DevBuf<T> {}
unsafe impl<T> Sync for DevBuf<T> {}

impl<T> DevBuf<T> {
    pub fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }
}

impl<T> Drop for DevBuf<T> {
    fn drop(&mut self) {
        unsafe {
            let _ = drv::ctx::set_current(self.gpu.ctx);
            let _ = drv::stream::synchronize(self.gpu.stream);
            let _ = drv::free_sync(self.ptr);
        }
    }
}

/// Page-locked host memory.
pub struct Pinned<T> {
    ptr: *mut T,
    pub len: usize,
    gpu: Arc<Gpu>,
}

unsafe impl<T: Send> Send for Pinned<T> {}
unsafe impl<T: Sync> Sync for Pinned<T> {}

impl<T> Pinned<T> {
    /// The contents; call after the stream was synchronised past the last copy into it.
    pub fn as_slice(&self) -> &[T] {
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T> Drop for Pinned<T> {
    fn drop(&mut self) {
        unsafe {
            let _ = drv::ctx::set_current(self.gpu.ctx);
            let _ = drv::stream::synchronize(self.gpu.stream);
            let _ = drv::free_host(self.ptr as *mut c_void);
        }
    }
}

/// A CUDA graph: a fixed sequence of launches on a solver's stream, captured once and replayed
/// with one launch (the per-kernel launch cost, about 3 us, becomes about 1 us per node on the
/// device). Kernel arguments are frozen at capture, so only work whose buffers and scalars do
/// not change between replays is captured (e.g. a multigrid V-cycle).
pub struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    gpu: Arc<Gpu>,
}

// SAFETY: as for `Gpu`: the handles are used with the context current, by one thread at a time.
unsafe impl Send for Graph {}

impl Graph {
    /// Records the launches `record` makes on `gpu`'s stream (nothing runs while capturing).
    pub fn capture(
        gpu: &Arc<Gpu>,
        record: impl FnOnce() -> Result<(), CudaError>,
    ) -> Result<Graph, CudaError> {
        gpu.bind()?;
        unsafe {
            drv::stream::begin_capture(
                gpu.stream,
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        }?;
        let recorded = record();
        // End the capture whatever happened, so the stream is usable again.
        let graph = unsafe { drv::stream::end_capture(gpu.stream) }?;
        let exec = recorded
            .and_then(|()| Ok(unsafe { drv::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0)) }?));
        match exec {
            Ok(exec) => Ok(Graph {
                graph,
                exec,
                gpu: gpu.clone(),
            }),
            Err(e) => {
                unsafe {
                    let _ = drv::graph::destroy(graph);
                }
                Err(e)
            }
        }
    }

    /// Replays the graph on the stream (asynchronously).
    pub fn launch(&self) -> Result<(), CudaError> {
        unsafe { drv::graph::launch(self.exec, self.gpu.stream) }?;
        Ok(())
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        unsafe {
            let _ = drv::ctx::set_current(self.gpu.ctx);
            let _ = drv::stream::synchronize(self.gpu.stream);
            let _ = drv::graph::exec_destroy(self.exec);
            let _ = drv::graph::destroy(self.graph);
        }
    }
}

/// Whether solvers may replay captured CUDA graphs (`FLOWLAB_CUDA_GRAPHS=0` turns them off, to
/// measure what they save).
pub fn graphs_enabled() -> bool {
    std::env::var("FLOWLAB_CUDA_GRAPHS").map_or(true, |v| v != "0")
}

/// A CUDA event: a point in a stream's work, for timing ([`Gpu::event`]) or for ordering one
/// stream after another and waiting on the host ([`Gpu::marker`]).
pub struct Event {
    e: sys::CUevent,
    gpu: Arc<Gpu>,
}

unsafe impl Send for Event {}

impl Event {
    /// Records the event after the work enqueued so far on the compute stream.
    pub fn record(&self) -> Result<(), CudaError> {
        self.record_on(Stream::Compute)
    }

    /// Records the event after the work enqueued so far on `stream`.
    pub fn record_on(&self, stream: Stream) -> Result<(), CudaError> {
        unsafe { drv::event::record(self.e, self.gpu.handle(stream)) }?;
        Ok(())
    }

    /// Waits on the host until the last recording has completed (at once if never recorded).
    pub fn sync(&self) -> Result<(), CudaError> {
        unsafe { drv::event::synchronize(self.e) }?;
        Ok(())
    }

    /// Whether the work before the last recording has completed (true if never recorded); no wait.
    pub fn done(&self) -> Result<bool, CudaError> {
        match unsafe { drv::event::query(self.e) } {
            Ok(()) => Ok(true),
            Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_NOT_READY => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Milliseconds from `self` to `end` (waits for `end`).
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32, CudaError> {
        unsafe { drv::event::synchronize(end.e) }?;
        Ok(unsafe { drv::event::elapsed(self.e, end.e) }?)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        unsafe {
            let _ = drv::event::destroy(self.e);
        }
    }
}

/// Kernel arguments, each stored in an 8-byte slot (little-endian: an `int` or `float` parameter
/// reads the low bytes of its slot).
#[derive(Default)]
pub struct Args(Vec<u64>);

impl Args {
    pub fn new() -> Self {
        Args(Vec::with_capacity(24))
    }

    /// A device pointer.
    pub fn p<T>(mut self, b: &DevBuf<T>) -> Self {
        self.0.push(b.ptr);
        self
    }

    /// A null pointer.
    pub fn null(mut self) -> Self {
        self.0.push(0);
        self
    }

    /// An `int`.
    pub fn i(mut self, v: i64) -> Self {
        self.0.push(v as i32 as u32 as u64);
        self
    }

    /// A `long long`.
    pub fn l(mut self, v: i64) -> Self {
        self.0.push(v as u64);
        self
    }

    /// One device pointer per axis of a 3-axis argument list (`u, v, w`), null for the axes
    /// beyond the pointers given.
    pub fn axes(self, ptrs: impl IntoIterator<Item = u64>) -> Self {
        let mut a = self;
        let mut n = 0;
        for p in ptrs {
            a = a.l(p as i64);
            n += 1;
        }
        (n..3).fold(a, |a, _| a.null())
    }

    /// One `int` per value (sizes and flags per axis).
    pub fn is(self, v: &[i64]) -> Self {
        v.iter().fold(self, |a, x| a.i(*x))
    }

    /// One `real` per value.
    pub fn rs<T: bytemuck::Pod>(self, v: &[T]) -> Self {
        v.iter().fold(self, |a, x| a.r(*x))
    }

    /// A `real` (the value's own precision).
    pub fn r<T: bytemuck::Pod>(mut self, v: T) -> Self {
        let mut slot = 0u64;
        let n = std::mem::size_of::<T>();
        assert!(n <= 8);
        bytemuck::bytes_of_mut(&mut slot)[..n].copy_from_slice(bytemuck::bytes_of(&v));
        self.0.push(slot);
        self
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
    // SAFETY: `copy(const float4*, float4*, long long)`; both buffers hold n4 float4 values.
    unsafe { gpu.launch(f, (blocks, 1, 1), (256, 1, 1), &args) }?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        let (a, b) = (gpu.event()?, gpu.event()?);
        a.record()?;
        // SAFETY: as above.
        unsafe { gpu.launch(f, (blocks, 1, 1), (256, 1, 1), &args) }?;
        b.record()?;
        times.push(a.elapsed_ms(&b)? as f64);
    }
    times.sort_by(f64::total_cmp);
    let ms = times[times.len() / 2];
    Ok(2.0 * (n4 * 16) as f64 / (ms * 1e-3) / 1e9)
}
