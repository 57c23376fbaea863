//! Batches of one-, two- and three-dimensional real-to-complex and complex-to-real FFTs by cuFFT,
//! on a [`Gpu`]'s stream.
//!
//! cuFFT is loaded at run time like the driver and NVRTC: [`available`] probes for the library
//! first, since cudarc panics on a missing one. Layout (cuFFT's basic one): the real array holds
//! `batch` arrays of the shape `n0 (x n1 (x n2))` one after another, row-major (the last axis
//! fastest); its transform likewise `batch` arrays of `n0 / 2 + 1` (`n0 x (n1 / 2 + 1)`,
//! `n0 x n1 x (n2 / 2 + 1)`) interleaved complex values (the non-redundant half of the Hermitian
//! spectrum along the fast axis). Neither direction scales: `inverse(forward(x)) = n0 (n1 (n2)) x`.

use super::{CudaError, Gpu};
use cudarc::cufft::sys;
use std::sync::Arc;

/// True when the cuFFT library can be loaded.
pub fn available() -> bool {
    // SAFETY: only tries to open the shared library.
    unsafe { sys::is_culib_present() }
}

impl From<cudarc::cufft::result::CufftError> for CudaError {
    fn from(e: cudarc::cufft::result::CufftError) -> Self {
        CudaError(format!("cuFFT error {:?}", e.0))
    }
}

/// A forward (real to complex) and an inverse (complex to real) plan of one shape and precision.
pub struct RealFft {
    gpu: Arc<Gpu>,
    forward: sys::cufftHandle,
    inverse: sys::cufftHandle,
    double: bool,
}

// SAFETY: plans are used from one thread at a time, with the solver's context current.
unsafe impl Send for RealFft {}
unsafe impl Sync for RealFft {}

impl RealFft {
    /// Plans `batch` transforms of `shape` (1 to 3 sizes, slowest axis first) in f64 (`double`)
    /// or f32, enqueued on `gpu`'s stream.
    pub fn new(gpu: &Arc<Gpu>, shape: &[usize], batch: usize, double: bool) -> Result<Self, CudaError> {
        if !available() {
            return Err(CudaError(
                "the cuFFT library (libcufft) was not found; the fft pressure solver needs it on the \
                 CUDA backend"
                    .into(),
            ));
        }
        gpu.bind()?;
        let (fwd, inv) = if double {
            (sys::cufftType::CUFFT_D2Z, sys::cufftType::CUFFT_Z2D)
        } else {
            (sys::cufftType::CUFFT_R2C, sys::cufftType::CUFFT_C2R)
        };
        let plan = |kind| -> Result<sys::cufftHandle, CudaError> {
            let mut h: sys::cufftHandle = 0;
            let mut n: Vec<i32> = shape.iter().map(|n| *n as i32).collect();
            if !(1..=3).contains(&n.len()) {
                return Err(CudaError(format!("no {}D transform", n.len())));
            }
            let null = std::ptr::null_mut();
            // SAFETY: `h` is written by cuFFT; `n` outlives the call; null embeddings select
            // the basic layout (the distances are then ignored); sizes and the batch are
            // positive and fit an int (grids are far below 2^31 cells).
            unsafe {
                sys::cufftPlanMany(
                    &mut h,
                    n.len() as i32,
                    n.as_mut_ptr(),
                    null,
                    1,
                    0,
                    null,
                    1,
                    0,
                    kind,
                    batch as i32,
                )
                .result()?;
                sys::cufftSetStream(h, gpu.stream as sys::cudaStream_t).result()?;
            }
            Ok(h)
        };
        let forward = plan(fwd)?;
        let inverse = plan(inv).inspect_err(|_| {
            // SAFETY: `forward` was created above and is not used again.
            unsafe { sys::cufftDestroy(forward) };
        })?;
        Ok(Self {
            gpu: gpu.clone(),
            forward,
            inverse,
            double,
        })
    }

    /// Enqueues `spectrum = FFT(real)`.
    ///
    /// # Safety
    /// `real` and `spectrum` are device pointers to as many reals as the shape has cells and
    /// to the half spectrum's complex values (see the module's layout), of this plan's precision.
    pub unsafe fn forward(&self, real: u64, spectrum: u64) -> Result<(), CudaError> {
        unsafe {
            if self.double {
                sys::cufftExecD2Z(self.forward, real as *mut f64, spectrum as *mut _).result()?;
            } else {
                sys::cufftExecR2C(self.forward, real as *mut f32, spectrum as *mut _).result()?;
            }
        }
        Ok(())
    }

    /// Enqueues `real = FFT^-1(spectrum)` (unscaled; `spectrum` is overwritten).
    ///
    /// # Safety
    /// As for [`RealFft::forward`].
    pub unsafe fn inverse(&self, spectrum: u64, real: u64) -> Result<(), CudaError> {
        unsafe {
            if self.double {
                sys::cufftExecZ2D(self.inverse, spectrum as *mut _, real as *mut f64).result()?;
            } else {
                sys::cufftExecC2R(self.inverse, spectrum as *mut _, real as *mut f32).result()?;
            }
        }
        Ok(())
    }
}

impl Drop for RealFft {
    fn drop(&mut self) {
        // SAFETY: both handles were created by `new` and are destroyed once, after the stream
        // has finished the transforms enqueued with them.
        unsafe {
            let _ = cudarc::driver::result::stream::synchronize(self.gpu.stream);
            sys::cufftDestroy(self.forward);
            sys::cufftDestroy(self.inverse);
        }
    }
}
