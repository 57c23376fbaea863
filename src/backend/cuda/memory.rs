//! Device buffers, pinned host buffers and the copies between them.

use super::{CudaError, Gpu, Stream};
use cudarc::driver::result as drv;
use cudarc::driver::sys;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::Arc;

impl Gpu {
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

    pub fn copy<T: Copy>(&self, dst: &DevBuf<T>, src: &DevBuf<T>) -> Result<(), CudaError> {
        self.copy_on(Stream::Compute, dst, src)
    }

    /// Device to device on `stream`, asynchronous.
    pub fn copy_on<T: Copy>(
        &self,
        stream: Stream,
        dst: &DevBuf<T>,
        src: &DevBuf<T>,
    ) -> Result<(), CudaError> {
        assert_eq!(dst.len, src.len, "copy size");
        unsafe { drv::memcpy_dtod_async(dst.ptr, src.ptr, src.bytes(), self.handle(stream)) }?;
        Ok(())
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
    /// A buffer over `len` values at `ptr`, memory the driver mapped (imported memory), which
    /// `cuMemFree` releases as it does allocations.
    pub(super) fn mapped(gpu: &Arc<Gpu>, ptr: sys::CUdeviceptr, len: usize) -> Self {
        DevBuf {
            ptr,
            len,
            gpu: gpu.clone(),
            _t: PhantomData,
        }
    }

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

/// A small device block the kernels write (reduced scalars, control flags) and its pinned host
/// copy, read with one host wait.
pub struct Scalars<T> {
    pub dev: DevBuf<T>,
    host: Pinned<T>,
}

impl<T: Copy + Default> Scalars<T> {
    /// `len` values, zero on the device.
    pub fn new(gpu: &Arc<Gpu>, len: usize) -> Result<Self, CudaError> {
        Ok(Scalars {
            dev: gpu.alloc_zeros(len)?,
            host: gpu.pinned(len)?,
        })
    }

    /// Enqueues the copy of the block to the host on the compute stream (after the work
    /// enqueued so far); [`Scalars::host`] holds it once the stream is synchronised.
    pub fn fetch(&mut self) -> Result<(), CudaError> {
        let gpu = self.dev.gpu.clone();
        gpu.download_async(&mut self.host, &self.dev, self.dev.len)
    }

    /// Fetches the block and waits for it.
    pub fn read(&mut self) -> Result<&[T], CudaError> {
        self.fetch()?;
        self.dev.gpu.sync()?;
        Ok(self.host.as_slice())
    }

    /// The host copy as of the last fetch the host waited for.
    pub fn host(&self) -> &[T] {
        self.host.as_slice()
    }

    /// The host copy, to fill before [`Scalars::push`]; call only after the stream was
    /// synchronised past the last copy from or into it.
    pub fn host_mut(&mut self) -> &mut [T] {
        unsafe { std::slice::from_raw_parts_mut(self.host.ptr, self.host.len) }
    }

    /// Enqueues the copy of the host copy's first `len` values to the device on the compute
    /// stream (before the work enqueued after it), without waiting.
    pub fn push(&mut self, len: usize) -> Result<(), CudaError> {
        assert!(len <= self.dev.len, "push size");
        let gpu = self.dev.gpu.clone();
        gpu.bind()?;
        let src = &self.host.as_slice()[..len];
        unsafe { drv::memcpy_htod_async(self.dev.ptr, src, gpu.stream) }?;
        Ok(())
    }
}

/// A CPU copy of a solver's device state (`cpu`, e.g. the CPU solver whose code samples,
/// summarises and snapshots), refreshed from the device on first use after the device state
/// changed, through one pinned staging buffer of values `T`.
pub struct HostMirror<C, T> {
    pub cpu: C,
    stale: bool,
    staging: Option<Pinned<T>>,
}

/// Brings device buffers to the host for [`HostMirror::fresh`], through the mirror's staging
/// buffer (grown to the largest buffer read).
pub struct Stage<'a, T> {
    gpu: &'a Arc<Gpu>,
    host: &'a mut Option<Pinned<T>>,
}

impl<T: Copy + Default> Stage<'_, T> {
    /// The values of `src` after the work enqueued so far on the compute stream (waits).
    pub fn read(&mut self, src: &DevBuf<T>) -> Result<&[T], CudaError> {
        if self.host.as_ref().is_none_or(|h| h.len < src.len) {
            *self.host = Some(self.gpu.pinned(src.len)?);
        }
        let host = self.host.as_mut().expect("staging allocated");
        self.gpu.download_async(host, src, src.len)?;
        self.gpu.sync()?;
        Ok(&host.as_slice()[..src.len])
    }
}

impl<C, T: Copy + Default> HostMirror<C, T> {
    /// A mirror whose copy `cpu` is current.
    pub fn new(cpu: C) -> Self {
        HostMirror {
            cpu,
            stale: false,
            staging: None,
        }
    }

    /// The device state changed: the next [`HostMirror::fresh`] reads it.
    pub fn invalidate(&mut self) {
        self.stale = true;
    }

    /// The CPU copy, first refreshed by `read` (given the copy and a [`Stage`]) if the device
    /// state changed since the last refresh; after an error the copy stays stale.
    pub fn fresh(
        &mut self,
        gpu: &Arc<Gpu>,
        read: impl FnOnce(&mut C, &mut Stage<T>) -> Result<(), CudaError>,
    ) -> Result<&mut C, CudaError> {
        if self.stale {
            gpu.bind()?;
            let mut stage = Stage {
                gpu,
                host: &mut self.staging,
            };
            read(&mut self.cpu, &mut stage)?;
            self.stale = false;
        }
        Ok(&mut self.cpu)
    }
}
