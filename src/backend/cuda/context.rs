//! Device probe, the context of device 0 and its two streams.

use super::{CudaError, Event};
use cudarc::driver::result as drv;
use cudarc::driver::sys;
use std::sync::{Arc, OnceLock};

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

/// The primary context of one device (0 unless [`Gpu::on`] names another) and three streams on
/// it. All work of a solver goes to its compute `stream`, in order; `copy` carries the
/// asynchronous field copies of [`Readback`] and `exchange` the halo exchanges of a part of a
/// grid cut over several GPUs, each ordered against the compute stream by events only, so they
/// overlap the compute stream's work. The host waits only where it reads scalars or fields.
pub struct Gpu {
    pub(super) dev: sys::CUdevice,
    /// The device's ordinal among the driver's devices.
    pub ordinal: usize,
    pub(super) ctx: sys::CUcontext,
    pub stream: sys::CUstream,
    copy: sys::CUstream,
    exchange: sys::CUstream,
    pub info: DeviceInfo,
}

/// One of a [`Gpu`]'s three streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// The solver's work, in order (kernels, scalar reads, synchronous copies).
    Compute,
    /// The asynchronous field copies of [`Readback`].
    Copy,
    /// The halo exchanges that overlap a stencil sweep's interior (`nccl`).
    Exchange,
}

// SAFETY: the context and stream handles may be used from any thread once the context is made
// current there ([`Gpu::bind`]); a solver is used by one thread at a time (`Solver: Send`).
unsafe impl Send for Gpu {}
unsafe impl Sync for Gpu {}

impl Gpu {
    pub fn new() -> Result<Arc<Gpu>, CudaError> {
        Self::on(0)
    }

    /// The device of ordinal `ordinal` (an error names the devices present when it is absent).
    pub fn on(ordinal: usize) -> Result<Arc<Gpu>, CudaError> {
        let mut info = probe().map_err(CudaError)?.clone();
        if ordinal >= info.device_count as usize {
            return Err(CudaError(format!(
                "device {ordinal} was asked for; the driver sees {} (0..{})",
                info.device_count, info.device_count
            )));
        }
        let dev = drv::device::get(ordinal as i32)?;
        if ordinal != 0 {
            info.name = drv::device::get_name(dev)?;
        }
        let ctx = unsafe { drv::primary_ctx::retain(dev) }?;
        unsafe { drv::ctx::set_current(ctx) }?;
        let stream = drv::stream::create(drv::stream::StreamKind::NonBlocking)?;
        let copy = drv::stream::create(drv::stream::StreamKind::NonBlocking)?;
        // The exchange stream at the device's highest priority: its NCCL kernels take the
        // multiprocessors as soon as they are ready, ahead of the sweep they overlap, whose
        // remaining blocks would otherwise hold them until it ends.
        let (mut least, mut greatest) = (0, 0);
        unsafe { sys::cuCtxGetStreamPriorityRange(&mut least, &mut greatest) }.result()?;
        let mut exchange = std::ptr::null_mut();
        let flags = sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32;
        unsafe { sys::cuStreamCreateWithPriority(&mut exchange, flags, greatest) }.result()?;
        Ok(Arc::new(Gpu {
            dev,
            ordinal,
            ctx,
            stream,
            copy,
            exchange,
            info,
        }))
    }

    pub(super) fn handle(&self, s: Stream) -> sys::CUstream {
        match s {
            Stream::Compute => self.stream,
            Stream::Copy => self.copy,
            Stream::Exchange => self.exchange,
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

    /// Makes later work on `stream` wait until `event`'s last recording has completed (at once
    /// if it was never recorded); the host does not wait.
    pub fn wait_event(&self, stream: Stream, event: &Event) -> Result<(), CudaError> {
        let flags = sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT;
        unsafe { drv::stream::wait_event(self.handle(stream), event.e, flags) }?;
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
}

impl Drop for Gpu {
    fn drop(&mut self) {
        unsafe {
            let _ = drv::ctx::set_current(self.ctx);
            let _ = drv::stream::synchronize(self.stream);
            let _ = drv::stream::synchronize(self.copy);
            let _ = drv::stream::synchronize(self.exchange);
            let _ = drv::stream::destroy(self.stream);
            let _ = drv::stream::destroy(self.copy);
            let _ = drv::stream::destroy(self.exchange);
            let _ = drv::primary_ctx::release(self.dev);
        }
    }
}
