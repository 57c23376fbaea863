//! Run-time compilation of the kernel sets to PTX, the kernels' declared parameter lists read
//! from that PTX, loaded modules and their kernels.

use super::launch::ArgKind;
use super::{CudaError, Gpu, KernelSet, nvrtc_available};
use cudarc::driver::result as drv;
use cudarc::driver::sys;
use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

/// The type of a kernel parameter as the PTX declares it (`.param .u64 name`, ...). PTX does
/// not tell a pointer from a `long long`: both are 64-bit words (`.u64`, `.s64`, `.b64`), as
/// `int` and `unsigned` are 32-bit words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Param {
    /// `.u64`, `.s64` or `.b64`: a pointer or a `long long`.
    Word64,
    /// `.u32`, `.s32` or `.b32`: an `int`.
    Word32,
    /// `.f32`: a `float`.
    F32,
    /// `.f64`: a `double`.
    F64,
    /// Any other declaration (8- or 16-bit values, aggregates as `.b8 name[n]`), as written;
    /// no argument kind matches it.
    Other(String),
}

impl Param {
    /// Parses one parameter declaration of an entry, e.g. `.param .u64 copy_param_0` or
    /// `.param .align 8 .b8 f_param_1[16]` (the `.ptr`, state space and `.align` qualifiers of
    /// pointer parameters are skipped).
    fn parse(decl: &str) -> Param {
        let tokens: Vec<&str> = decl.split_whitespace().collect();
        if tokens.last().is_some_and(|t| t.contains('[')) {
            return Param::Other(decl.trim().to_string());
        }
        let mut rest = tokens.iter().skip_while(|t| **t == ".param");
        while let Some(&t) = rest.next() {
            match t {
                ".align" => {
                    rest.next();
                }
                ".u64" | ".s64" | ".b64" => return Param::Word64,
                ".u32" | ".s32" | ".b32" => return Param::Word32,
                ".f32" => return Param::F32,
                ".f64" => return Param::F64,
                _ => {}
            }
        }
        Param::Other(decl.trim().to_string())
    }

    /// Whether an argument of `kind` fills this parameter (same size and interpretation).
    pub fn accepts(&self, kind: ArgKind) -> bool {
        matches!(
            (self, kind),
            (Param::Word64, ArgKind::Pointer | ArgKind::I64)
                | (Param::Word32, ArgKind::I32)
                | (Param::F32, ArgKind::F32)
                | (Param::F64, ArgKind::F64)
        )
    }
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Param::Word64 => f.write_str("a pointer or long long (.u64)"),
            Param::Word32 => f.write_str("an int (.u32)"),
            Param::F32 => f.write_str("a float (.f32)"),
            Param::F64 => f.write_str("a double (.f64)"),
            Param::Other(decl) => write!(f, "`{decl}`"),
        }
    }
}

/// A kernel's name and declared parameters, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Signature {
    pub name: String,
    pub params: Vec<Param>,
}

impl Signature {
    /// Checks that `args` fill the parameters from index `first` on, each with an argument of
    /// its kind, and that `first + args.len()` does not exceed the parameter count. An error
    /// names the kernel, the parameter index (from 0) and both kinds.
    pub fn check_from(&self, first: usize, args: &[ArgKind]) -> Result<(), CudaError> {
        let n = self.params.len();
        if first + args.len() > n {
            return Err(CudaError(format!(
                "kernel {} takes {n} parameters; the launch passed {}",
                self.name,
                first + args.len()
            )));
        }
        for (k, (&kind, param)) in args.iter().zip(&self.params[first..]).enumerate() {
            if !param.accepts(kind) {
                return Err(CudaError(format!(
                    "kernel {}: parameter {} is {param}; the launch passed {kind}",
                    self.name,
                    first + k
                )));
            }
        }
        Ok(())
    }

    /// Checks a complete argument list: one argument of the declared kind per parameter.
    pub fn check(&self, args: &[ArgKind]) -> Result<(), CudaError> {
        if args.len() != self.params.len() {
            return Err(CudaError(format!(
                "kernel {} takes {} parameters; the launch passed {}",
                self.name,
                self.params.len(),
                args.len()
            )));
        }
        self.check_from(0, args)
    }
}

/// The PTX of a kernel set and the signatures of its `.entry` kernels.
#[derive(Debug)]
pub struct Ptx {
    pub text: String,
    pub entries: Vec<Signature>,
}

impl Ptx {
    /// Reads every `.entry name(.param ..., ...)` header of `text`.
    pub fn parse(text: String) -> Ptx {
        let mut entries = Vec::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find(".entry ") {
            let header = &rest[at + ".entry ".len()..];
            let (Some(open), Some(close)) = (header.find('('), header.find(')')) else {
                break;
            };
            let params = header[open + 1..close]
                .split(',')
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(Param::parse)
                .collect();
            entries.push(Signature {
                name: header[..open].trim().to_string(),
                params,
            });
            rest = &header[close..];
        }
        Ptx { text, entries }
    }

    /// The signature of kernel `name`.
    pub fn entry(&self, name: &str) -> Option<&Signature> {
        self.entries.iter().find(|s| s.name == name)
    }
}

/// Compiles a kernel set to PTX with NVRTC for `precision` ("f32" or "f64"), dimension `dim`
/// (one of [`KernelSet::dimensions`]) and the compute capability `arch` (major, minor), and
/// reads its kernels' signatures. Cached per (set, precision, dim, arch) for the life of the
/// process. This is the code path the solvers use; the kernel-compilation test calls it without
/// a device.
pub fn compile_ptx(
    set: KernelSet,
    precision: &str,
    dim: usize,
    arch: (i32, i32),
) -> Result<&'static Ptx, CudaError> {
    type Key = (KernelSet, String, usize, (i32, i32));
    static CACHE: OnceLock<Mutex<HashMap<Key, &'static Ptx>>> = OnceLock::new();
    if !set.dimensions().contains(&dim) {
        return Err(CudaError(format!("{} has no {dim}D kernels", set.file_name())));
    }
    let key = (set, precision.to_string(), dim, arch);
    let cache = CACHE.get_or_init(Default::default);
    if let Some(&p) = cache.lock().expect("cache lock").get(&key) {
        return Ok(p);
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
    // Kept for the life of the process, as the cache that holds it.
    let ptx: &'static Ptx = Box::leak(Box::new(Ptx::parse(ptx.to_src())));
    cache.lock().expect("cache lock").insert(key, ptx);
    Ok(ptx)
}

/// A loaded module; functions are looked up once by name.
pub struct Module {
    m: sys::CUmodule,
    ptx: &'static Ptx,
    pub(super) gpu: Arc<Gpu>,
    funcs: Mutex<HashMap<&'static str, Kernel>>,
}

/// A kernel of a loaded [`Module`], valid while the module is: its handle and its signature
/// from the PTX, against which every launch's arguments are checked
/// ([`super::launch`]).
#[derive(Clone, Copy, Debug)]
pub struct Kernel {
    pub(super) handle: sys::CUfunction,
    pub(super) sig: &'static Signature,
}

// SAFETY: a function handle may be used from any thread with its context current; launches
// bind the context first.
unsafe impl Send for Kernel {}
unsafe impl Sync for Kernel {}

impl Kernel {
    pub fn name(&self) -> &'static str {
        &self.sig.name
    }

    /// The declared parameters, in order.
    pub fn signature(&self) -> &'static Signature {
        self.sig
    }
}

unsafe impl Send for Module {}
unsafe impl Sync for Module {}

impl Module {
    /// Kernel `name`; an error if the module's PTX has no such entry.
    pub fn function(&self, name: &'static str) -> Result<Kernel, CudaError> {
        let mut funcs = self.funcs.lock().expect("function table");
        if let Some(&k) = funcs.get(name) {
            return Ok(k);
        }
        let sig = self
            .ptx
            .entry(name)
            .ok_or_else(|| CudaError(format!("kernel {name} is not in the module")))?;
        let c = CString::new(name).expect("kernel names have no NUL");
        let handle = unsafe { drv::module::get_function(self.m, c) }
            .map_err(|e| CudaError(format!("kernel {name}: {}", CudaError::from(e))))?;
        let k = Kernel { handle, sig };
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

impl Gpu {
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
        let image =
            CString::new(ptx.text.as_str()).map_err(|_| CudaError("PTX contains a NUL byte".into()))?;
        let m = unsafe { drv::module::load_data(image.as_ptr() as *const c_void) }?;
        Ok(Module {
            m,
            ptx,
            gpu: self.clone(),
            funcs: Mutex::new(HashMap::new()),
        })
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
}
