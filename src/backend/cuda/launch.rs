//! Typed kernel arguments and launches. Every argument carries its kind (pointer, `int`,
//! `long long`, `float`, `double`); a launch checks the arguments against the kernel's
//! parameters as its PTX declares them ([`super::module::Signature`]) before any driver call,
//! so a missing argument, an `int` for a `long long` or a `float` for a `double` is refused
//! with an error naming the kernel, the parameter and both kinds rather than read as garbage.
//!
//! [`Args`] builds an argument list per launch; [`Launch`] binds a kernel, its grid, block,
//! shared memory and the arguments that stay fixed (buffers, sizes) once, when a solver is
//! built, and is run as is or with the few trailing scalars that change per launch (a time
//! step, an iteration number).

use super::module::{Kernel, Module};
use super::{CudaError, DevBuf, Gpu, Stream};
use crate::solver::real::Real;
use cudarc::driver::result as drv;
use cudarc::driver::sys;
use std::ffi::c_void;
use std::fmt;

/// The most parameters a launched kernel may have (the kernels have at most about 30).
const MAX_PARAMS: usize = 64;

/// What an argument is, for checking it against a kernel parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    Pointer,
    I32,
    I64,
    F32,
    F64,
}

impl fmt::Display for ArgKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ArgKind::Pointer => "a pointer",
            ArgKind::I32 => "an int",
            ArgKind::I64 => "a long long",
            ArgKind::F32 => "a float",
            ArgKind::F64 => "a double",
        })
    }
}

/// One kernel argument, by value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arg {
    /// A device address (0 for a null pointer).
    Ptr(u64),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
}

impl Arg {
    pub fn kind(&self) -> ArgKind {
        match self {
            Arg::Ptr(_) => ArgKind::Pointer,
            Arg::I32(_) => ArgKind::I32,
            Arg::I64(_) => ArgKind::I64,
            Arg::F32(_) => ArgKind::F32,
            Arg::F64(_) => ArgKind::F64,
        }
    }

    /// A real of the value's own precision (`f32` or `f64`).
    pub fn real<T: Real>(v: T) -> Arg {
        match T::NAME {
            "f32" => Arg::F32(v.to_f32().expect("an f32")),
            _ => Arg::F64(v.f64()),
        }
    }

    /// The address of the value, as `cuLaunchKernel` takes each parameter; the driver copies
    /// as many bytes as the parameter declares, which the launch checked to be the value's size.
    fn address(&self) -> *mut c_void {
        match self {
            Arg::Ptr(v) => v as *const u64 as *mut c_void,
            Arg::I32(v) => v as *const i32 as *mut c_void,
            Arg::I64(v) => v as *const i64 as *mut c_void,
            Arg::F32(v) => v as *const f32 as *mut c_void,
            Arg::F64(v) => v as *const f64 as *mut c_void,
        }
    }
}

/// A kernel's argument list, in parameter order.
#[derive(Clone, Debug, Default)]
pub struct Args(Vec<Arg>);

impl Args {
    pub fn new() -> Self {
        Args(Vec::with_capacity(24))
    }

    pub fn arg(mut self, a: Arg) -> Self {
        self.0.push(a);
        self
    }

    /// A device pointer.
    pub fn p<T>(self, b: &DevBuf<T>) -> Self {
        self.arg(Arg::Ptr(b.ptr))
    }

    /// A null pointer.
    pub fn null(self) -> Self {
        self.arg(Arg::Ptr(0))
    }

    /// An `int` (the low 32 bits of `v`).
    pub fn i(self, v: i64) -> Self {
        self.arg(Arg::I32(v as i32))
    }

    /// A `long long`.
    pub fn l(self, v: i64) -> Self {
        self.arg(Arg::I64(v))
    }

    /// A `double`, whatever the solver's precision.
    pub fn d(self, v: f64) -> Self {
        self.arg(Arg::F64(v))
    }

    /// A `real` (the value's own precision).
    pub fn r<T: Real>(self, v: T) -> Self {
        self.arg(Arg::real(v))
    }

    /// One device pointer per axis of a 3-axis argument list (`u, v, w`), null for the axes
    /// beyond the pointers given.
    pub fn axes(self, ptrs: impl IntoIterator<Item = u64>) -> Self {
        let mut a = self;
        let mut n = 0;
        for p in ptrs {
            a = a.arg(Arg::Ptr(p));
            n += 1;
        }
        (n..3).fold(a, |a, _| a.null())
    }

    /// One `int` per value (sizes and flags per axis).
    pub fn is(self, v: &[i64]) -> Self {
        v.iter().fold(self, |a, x| a.i(*x))
    }

    /// One `real` per value.
    pub fn rs<T: Real>(self, v: &[T]) -> Self {
        v.iter().fold(self, |a, x| a.r(*x))
    }

    pub fn as_slice(&self) -> &[Arg] {
        &self.0
    }
}

/// A kernel bound to its launch shape and leading arguments: built (and checked) once, run
/// without rebuilding them. The arguments are the leading parameters of the kernel, all of them
/// or all but a few trailing scalars that [`Launch::run_with`] supplies per launch.
#[derive(Clone, Debug)]
pub struct Launch {
    kernel: Kernel,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    /// Bytes of dynamic shared memory per block.
    shared: u32,
    /// Whether the kernel may start while the kernel before it on the stream finishes
    /// ([`Launch::starting_early`]).
    early: bool,
    args: Args,
}

impl Launch {
    /// Binds `kernel` to a grid, a block and its leading arguments; an error if the arguments
    /// do not match the kernel's first parameters (kinds, count).
    ///
    /// # Safety
    /// Every pointer among `args` must address device memory that outlives every run of the
    /// launch and has the extent the kernel touches for this grid; so must the module of
    /// `kernel`.
    pub unsafe fn new(
        kernel: Kernel,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        args: Args,
    ) -> Result<Launch, CudaError> {
        let kinds: Vec<ArgKind> = args.0.iter().map(Arg::kind).collect();
        kernel.sig.check_from(0, &kinds)?;
        Ok(Launch {
            kernel,
            grid,
            block,
            shared: 0,
            early: false,
            args,
        })
    }

    /// The same launch with `bytes` of dynamic shared memory per block (above 48 KiB only
    /// after [`Gpu::allow_shared`] for that size; the kernel must use no more).
    pub fn with_shared(mut self, bytes: u32) -> Launch {
        self.shared = bytes;
        self
    }

    /// The same launch allowed to start while the kernel before it on the stream is still
    /// finishing, on devices of compute capability 9.0 and later (programmatic
    /// dependent launch: `cuLaunchKernelEx`, of CUDA 12.0 as every driver of such a device, with
    /// the attribute `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`, which a graph
    /// captured from the stream keeps): its blocks are placed as the earlier kernel's last ones
    /// run, and wait there. The kernel must begin with `AFTER_PREDECESSOR` (`common.cuh`), which
    /// waits until the earlier kernels have finished and their writes are visible; elsewhere the
    /// launch is an ordinary one.
    pub fn starting_early(mut self) -> Launch {
        self.early = true;
        self
    }

    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Enqueues the launch on `gpu`'s compute stream (all arguments bound).
    pub fn run(&self, gpu: &Gpu) -> Result<(), CudaError> {
        self.run_with(gpu, &[])
    }

    /// Enqueues the launch with `tail` after the bound arguments (checked against the kernel's
    /// remaining parameters).
    pub fn run_with(&self, gpu: &Gpu, tail: &[Arg]) -> Result<(), CudaError> {
        // SAFETY: the bound pointers are valid by `Launch::new`'s contract; `tail` holds scalars
        // or pointers checked against the declared parameters.
        unsafe {
            enqueue(
                gpu,
                Stream::Compute,
                self.kernel,
                (self.grid, self.block, self.shared),
                self.early,
                &self.args.0,
                tail,
            )
        }
    }
}

/// Checks `head` followed by `tail` against `f`'s parameters and launches `f` on `gpu`'s
/// `stream` with its grid, block and dynamic shared memory, allowed to start early where `early`
/// and the device has compute capability 9.0 or later ([`Launch::starting_early`]).
///
/// # Safety
/// The pointers among the arguments must address device memory of the extent the kernel
/// touches for this grid.
unsafe fn enqueue(
    gpu: &Gpu,
    stream: Stream,
    f: Kernel,
    (grid, block, shared): ((u32, u32, u32), (u32, u32, u32), u32),
    early: bool,
    head: &[Arg],
    tail: &[Arg],
) -> Result<(), CudaError> {
    let n = head.len() + tail.len();
    if n != f.sig.params.len() {
        return Err(CudaError(format!(
            "kernel {} takes {} parameters; the launch passed {n}",
            f.name(),
            f.sig.params.len()
        )));
    }
    if n > MAX_PARAMS {
        return Err(CudaError(format!(
            "kernel {} takes {n} parameters, more than the {MAX_PARAMS} a launch passes",
            f.name()
        )));
    }
    let mut kinds = [ArgKind::Pointer; MAX_PARAMS];
    let mut ptrs = [std::ptr::null_mut::<c_void>(); MAX_PARAMS];
    for (k, a) in head.iter().chain(tail).enumerate() {
        kinds[k] = a.kind();
        ptrs[k] = a.address();
    }
    f.sig.check(&kinds[..n])?;
    let stream = gpu.handle(stream);
    if !early || gpu.info.compute_capability.0 < 9 {
        unsafe { drv::launch_kernel(f.handle, grid, block, shared, stream, &mut ptrs[..n]) }?;
        return Ok(());
    }
    // SAFETY: a zeroed attribute is a valid value of the C union; the one set is its
    // programmatic-serialization member.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    let config = sys::CUlaunchConfig {
        gridDimX: grid.0,
        gridDimY: grid.1,
        gridDimZ: grid.2,
        blockDimX: block.0,
        blockDimY: block.1,
        blockDimZ: block.2,
        sharedMemBytes: shared,
        hStream: stream,
        attrs: &mut attr,
        numAttrs: 1,
    };
    // SAFETY: `config` and `attr` outlive the call; the parameters are checked as above.
    unsafe { sys::cuLaunchKernelEx(&config, f.handle, ptrs.as_mut_ptr(), std::ptr::null_mut()) }.result()?;
    Ok(())
}

impl Gpu {
    /// Launches `f` on the compute stream, after checking `args` against its parameters.
    ///
    /// # Safety
    /// Every pointer among `args` must address device memory of the extent the kernel touches
    /// for this grid.
    pub unsafe fn launch(
        &self,
        f: Kernel,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        args: &Args,
    ) -> Result<(), CudaError> {
        unsafe { self.launch_shared(f, grid, block, 0, args) }
    }

    /// Launches `f` on `stream` (the compute, copy or exchange stream), after checking `args`;
    /// with `early` allowed to start while the kernel before it finishes, as
    /// [`Launch::starting_early`] (an ordinary launch before compute capability 9.0).
    ///
    /// # Safety
    /// As [`Gpu::launch`]; with `early`, `f` must begin with `AFTER_PREDECESSOR` (`common.cuh`;
    /// `GUARD` begins with it).
    pub unsafe fn launch_on(
        &self,
        stream: Stream,
        f: Kernel,
        (grid, block): ((u32, u32, u32), (u32, u32, u32)),
        args: &Args,
        early: bool,
    ) -> Result<(), CudaError> {
        unsafe { enqueue(self, stream, f, (grid, block, 0), early, &args.0, &[]) }
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
        unsafe {
            enqueue(
                self,
                Stream::Compute,
                f,
                (grid, block, shared),
                false,
                &args.0,
                &[],
            )
        }
    }
}

impl Module {
    /// Binds kernel `name` of the module to a grid, a block and its leading arguments
    /// ([`Launch::new`]).
    ///
    /// # Safety
    /// As [`Launch::new`].
    pub unsafe fn bind(
        &self,
        name: &'static str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        args: Args,
    ) -> Result<Launch, CudaError> {
        unsafe { Launch::new(self.function(name)?, grid, block, args) }
    }

    /// Launches kernel `name` of the module once ([`Gpu::launch`]).
    ///
    /// # Safety
    /// As [`Gpu::launch`].
    pub unsafe fn launch(
        &self,
        name: &'static str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        args: &Args,
    ) -> Result<(), CudaError> {
        unsafe { self.gpu.launch(self.function(name)?, grid, block, args) }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{KernelSet, compile_ptx, module::Param};
    use super::*;

    /// Every kernel of the sets launched to start early (the compressible sets by
    /// [`Launch::starting_early`], the projection's and the pressure solves' by [`Gpu::launch_on`]
    /// with `early`) must first wait for the kernel before it (`AFTER_PREDECESSOR`, which `GUARD`
    /// and the projection's `HALTED` begin with): in its PTX for compute capability 9.0,
    /// in both precisions and every dimension of the set, `griddepcontrol.wait` comes before any
    /// load other than of a parameter, any store and any atomic.
    #[test]
    fn every_kernel_launched_early_waits_for_the_one_before() {
        if !super::super::nvrtc_available() {
            eprintln!("skipped: NVRTC cannot be loaded");
            return;
        }
        let sets = [
            KernelSet::MusclHancock,
            KernelSet::Cese,
            KernelSet::Projection,
            KernelSet::Poisson,
        ];
        for set in sets {
            for &dim in set.dimensions() {
                for precision in ["f32", "f64"] {
                    let ptx = compile_ptx(set, precision, dim, (9, 0)).expect("compiles");
                    assert!(ptx.entries.len() >= 4, "{set:?}: {} kernels", ptx.entries.len());
                    for e in &ptx.entries {
                        let header = format!(".entry {}(", e.name);
                        let start = ptx.text.find(&header).expect("the entry's header");
                        let body = &ptx.text[start + header.len()..];
                        let body = &body[..body.find(".entry").unwrap_or(body.len())];
                        let wait = body.find("griddepcontrol.wait").unwrap_or_else(|| {
                            panic!("{set:?} {precision} {dim}D: {} does not wait", e.name)
                        });
                        let touches = |line: &str| {
                            let op = line.trim_start();
                            (op.starts_with("ld.") && !op.starts_with("ld.param"))
                                || ["st.", "atom.", "red."].iter().any(|p| op.starts_with(p))
                        };
                        let early = body[..wait].lines().find(|l| touches(l));
                        assert!(
                            early.is_none(),
                            "{set:?} {precision} {dim}D: {} before the wait: {early:?}",
                            e.name
                        );
                    }
                }
            }
        }
    }

    /// The signatures of a real kernel set's PTX, as NVRTC wrote it (skipped without NVRTC).
    #[test]
    fn kernel_signatures_are_read_from_the_ptx() {
        if !super::super::nvrtc_available() {
            eprintln!("skipped: NVRTC cannot be loaded");
            return;
        }
        let ptx = compile_ptx(KernelSet::Bench, "f32", 2, (9, 0)).expect("bench.cu compiles");
        let copy = ptx.entry("copy").expect("the copy kernel");
        assert_eq!(copy.params, [Param::Word64, Param::Word64, Param::Word64]);
        for precision in ["f32", "f64"] {
            let ptx = compile_ptx(KernelSet::MusclHancock, precision, 2, (9, 0)).expect("compiles");
            let real = if precision == "f32" {
                Param::F32
            } else {
                Param::F64
            };
            // mh_flux_update_hllc(q, solid, faces, len, stride, g0, g1, nx, ny, dim, clock, dx,
            // dy, g, inv_dx, inv_dy, part, bad).
            let update = ptx.entry("mh_flux_update_hllc").expect("mh_flux_update_hllc");
            let mut want = vec![Param::Word64; 4];
            want.extend(vec![Param::Word32; 6]);
            want.extend([Param::Word64, Param::F64, Param::F64]);
            want.extend(vec![real; 3]);
            want.extend([Param::Word64, Param::Word64]);
            assert_eq!(update.params, want, "{precision}");
        }
    }

    /// Arguments of the wrong kind or number are refused, naming the kernel, the parameter and
    /// both kinds; the right list passes.
    #[test]
    fn a_mismatched_argument_list_is_refused() {
        let sig = super::super::module::Ptx::parse(
            ".visible .entry k(\n\t.param .u64 k_param_0,\n\t.param .u32 k_param_1,\n\t.param .f64 k_param_2\n)\n{\n}\n"
                .into(),
        );
        let sig = sig.entry("k").expect("entry k");
        let kinds = |a: Args| a.as_slice().iter().map(Arg::kind).collect::<Vec<_>>();
        assert!(sig.check(&kinds(Args::new().null().i(3).r(1.0f64))).is_ok());
        let e = sig.check(&kinds(Args::new().null().i(3).r(1.0f32))).unwrap_err();
        assert_eq!(
            e.0,
            "kernel k: parameter 2 is a double (.f64); the launch passed a float"
        );
        let e = sig.check(&kinds(Args::new().null().l(3).r(1.0f64))).unwrap_err();
        assert_eq!(
            e.0,
            "kernel k: parameter 1 is an int (.u32); the launch passed a long long"
        );
        let e = sig.check(&kinds(Args::new().null().i(3))).unwrap_err();
        assert_eq!(e.0, "kernel k takes 3 parameters; the launch passed 2");
        // A bound prefix, with the rest supplied per launch.
        assert!(sig.check_from(0, &kinds(Args::new().null().i(3))).is_ok());
        assert!(sig.check_from(2, &[ArgKind::F64]).is_ok());
        assert!(sig.check_from(2, &[ArgKind::F64, ArgKind::F64]).is_err());
    }
}
