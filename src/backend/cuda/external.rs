//! Memory another API allocated, imported into a device's context: the renderer's Vulkan
//! buffers exported as opaque file descriptors ([`crate::render::shared_buffer`]), mapped here
//! as device buffers the display kernels write (`cuImportExternalMemory`,
//! `cuExternalMemoryGetMappedBuffer`), so a shown field reaches the view without leaving the GPU.

use super::{CudaError, DevBuf, Gpu};
use cudarc::driver::result as drv;
use cudarc::driver::sys;
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, IntoRawFd, OwnedFd};
use std::sync::Arc;

/// `values` f32 values of imported memory, mapped into the device's address space.
pub struct SharedBuffer {
    /// The mapping; freed (`cuMemFree`, as the driver requires of mapped buffers) before the
    /// imported memory is destroyed.
    buf: ManuallyDrop<DevBuf<f32>>,
    memory: sys::CUexternalMemory,
}

unsafe impl Send for SharedBuffer {}
unsafe impl Sync for SharedBuffer {}

impl SharedBuffer {
    pub fn buf(&self) -> &DevBuf<f32> {
        &self.buf
    }
}

impl Drop for SharedBuffer {
    fn drop(&mut self) {
        // SAFETY: the mapping is not used after this; the memory is destroyed after it.
        unsafe {
            ManuallyDrop::drop(&mut self.buf);
            let _ = drv::external_memory::destroy_external_memory(self.memory);
        }
    }
}

impl Gpu {
    /// The device's UUID (`cuDeviceGetUuid`), as Vulkan reports it for the same GPU.
    pub fn uuid(&self) -> Result<[u8; 16], CudaError> {
        let id = drv::device::get_uuid(self.dev)?;
        Ok(id.bytes.map(|b| b as u8))
    }

    /// Imports `fd`, an opaque file descriptor of an exported allocation of `allocation` bytes
    /// (not a dedicated one), and maps its first `values` f32 values. The driver owns the
    /// descriptor once the import succeeded; on failure it is closed here.
    ///
    /// # Safety
    /// `fd` must describe memory of this device of at least `allocation` bytes, which stays
    /// allocated while the returned buffer lives.
    pub unsafe fn import(
        self: &Arc<Self>,
        fd: OwnedFd,
        allocation: u64,
        values: usize,
    ) -> Result<SharedBuffer, CudaError> {
        let bytes = values as u64 * 4;
        if bytes > allocation {
            return Err(CudaError(format!(
                "{values} values do not fit the {allocation} bytes exported"
            )));
        }
        self.bind()?;
        let memory =
            unsafe { drv::external_memory::import_external_memory_opaque_fd(fd.as_raw_fd(), allocation) }
                .map_err(|e| {
                    CudaError(format!(
                        "{} while importing the renderer's buffer",
                        CudaError::from(e)
                    ))
                })?;
        // Imported: the descriptor is the driver's now.
        let _ = fd.into_raw_fd();
        match unsafe { drv::external_memory::get_mapped_buffer(memory, 0, bytes) } {
            Ok(ptr) => Ok(SharedBuffer {
                buf: ManuallyDrop::new(DevBuf::mapped(self, ptr, values)),
                memory,
            }),
            Err(e) => {
                let _ = unsafe { drv::external_memory::destroy_external_memory(memory) };
                Err(CudaError(format!(
                    "{} while mapping the renderer's buffer",
                    CudaError::from(e)
                )))
            }
        }
    }
}
