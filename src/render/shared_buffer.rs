//! A wgpu storage buffer whose memory another API can write: Vulkan allocates it exportable
//! (`VK_KHR_external_memory_fd`, an opaque file descriptor), wgpu binds it as any storage
//! buffer, and the CUDA backend imports the descriptor (`cuImportExternalMemory`) and writes
//! the shown field into it on the device ([`crate::backend::cuda::SharedBuffer`]), so the field
//! reaches the view without crossing the bus (issue 23).
//!
//! Only the Vulkan backend exports memory; [`export`] says why not elsewhere, and the view then
//! reads the field back through pinned host memory as before.

use ash::vk;
use std::os::fd::{FromRawFd, OwnedFd};

/// The handle type of every export: an opaque POSIX file descriptor, what CUDA imports as
/// `CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD`.
const HANDLE: vk::ExternalMemoryHandleTypeFlags = vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD;

/// A storage buffer of `values` f32 values in exportable memory.
pub struct ExportedBuffer {
    /// Bound as a read-only storage buffer by the views; also a copy source (captures).
    pub buffer: wgpu::Buffer,
    /// A descriptor of the memory, for one import (the importer owns it afterwards).
    pub fd: OwnedFd,
    /// Bytes of the Vulkan allocation (what the importer must be told; at least the buffer's).
    pub allocation: u64,
    pub values: usize,
}

/// The UUID of the physical device behind `device` (`VkPhysicalDeviceIDProperties`), which
/// CUDA reports for its devices too (`cuDeviceGetUuid`): memory moves only between the two
/// APIs' views of one GPU. `None` off Vulkan.
pub fn device_uuid(device: &wgpu::Device) -> Option<[u8; 16]> {
    // SAFETY: only queries of the physical device; no handle outlives the guard.
    unsafe {
        let hal = device.as_hal::<wgpu::hal::api::Vulkan>()?;
        let instance = hal.shared_instance().raw_instance();
        let mut id = vk::PhysicalDeviceIDProperties::default();
        let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
        instance.get_physical_device_properties2(hal.raw_physical_device(), &mut props);
        Some(id.device_uuid)
    }
}

/// Allocates a buffer of `values` f32 values in device-local memory exported as an opaque file
/// descriptor, and wraps it for wgpu (usage: storage, copy source and destination). An error
/// says why not: another backend than Vulkan, the driver without the extension or unable to
/// export buffers, no device-local memory type, or the allocation failing.
pub fn export(device: &wgpu::Device, values: usize) -> Result<ExportedBuffer, String> {
    let bytes = (values.max(4) as u64)
        .checked_mul(4)
        .filter(|&b| b <= crate::render::gpu::storage_buffer_limit(device))
        .ok_or_else(|| format!("{values} values exceed the device's largest storage buffer"))?;
    // SAFETY: the raw handles come from `device` and are used while its guard lives; every
    // object made here is destroyed on the error paths, or handed to wgpu-hal, which frees the
    // buffer and its memory when the wgpu buffer is dropped.
    let (raw_buffer, memory, fd, allocation) = unsafe {
        let hal = device
            .as_hal::<wgpu::hal::api::Vulkan>()
            .ok_or("the renderer does not run on Vulkan")?;
        if !hal
            .enabled_device_extensions()
            .contains(&ash::khr::external_memory_fd::NAME)
        {
            return Err("the Vulkan driver does not offer VK_KHR_external_memory_fd".into());
        }
        let instance = hal.shared_instance().raw_instance();
        let physical = hal.raw_physical_device();
        let raw = hal.raw_device();
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST;
        let mut external = vk::ExternalBufferProperties::default();
        instance.get_physical_device_external_buffer_properties(
            physical,
            &vk::PhysicalDeviceExternalBufferInfo::default()
                .usage(usage)
                .handle_type(HANDLE),
            &mut external,
        );
        let features = external.external_memory_properties.external_memory_features;
        if !features.contains(vk::ExternalMemoryFeatureFlags::EXPORTABLE) {
            return Err("the Vulkan driver cannot export buffer memory as a file descriptor".into());
        }
        if features.contains(vk::ExternalMemoryFeatureFlags::DEDICATED_ONLY) {
            return Err("the Vulkan driver exports buffer memory only as dedicated allocations".into());
        }
        let mut external_info = vk::ExternalMemoryBufferCreateInfo::default().handle_types(HANDLE);
        let info = vk::BufferCreateInfo::default()
            .size(bytes)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .push_next(&mut external_info);
        let buffer = raw
            .create_buffer(&info, None)
            .map_err(|e| format!("creating an exportable buffer of {bytes} bytes failed: {e}"))?;
        let needs = raw.get_buffer_memory_requirements(buffer);
        let types = instance.get_physical_device_memory_properties(physical);
        let Some(kind) = (0..types.memory_type_count).find(|&k| {
            needs.memory_type_bits & (1 << k) != 0
                && types.memory_types[k as usize]
                    .property_flags
                    .contains(vk::MemoryPropertyFlags::DEVICE_LOCAL)
        }) else {
            raw.destroy_buffer(buffer, None);
            return Err("no device-local memory type holds an exportable buffer".into());
        };
        let mut export_info = vk::ExportMemoryAllocateInfo::default().handle_types(HANDLE);
        let allocate = vk::MemoryAllocateInfo::default()
            .allocation_size(needs.size)
            .memory_type_index(kind)
            .push_next(&mut export_info);
        let memory = match raw.allocate_memory(&allocate, None) {
            Ok(m) => m,
            Err(e) => {
                raw.destroy_buffer(buffer, None);
                return Err(format!(
                    "allocating {} bytes of exportable memory failed: {e}",
                    needs.size
                ));
            }
        };
        let fd = raw.bind_buffer_memory(buffer, memory, 0).and_then(|()| {
            ash::khr::external_memory_fd::Device::new(instance, raw).get_memory_fd(
                &vk::MemoryGetFdInfoKHR::default()
                    .memory(memory)
                    .handle_type(HANDLE),
            )
        });
        match fd {
            Ok(fd) => (buffer, memory, OwnedFd::from_raw_fd(fd), needs.size),
            Err(e) => {
                raw.destroy_buffer(buffer, None);
                raw.free_memory(memory, None);
                return Err(format!("exporting the buffer's memory failed: {e}"));
            }
        }
    };
    let desc = wgpu::BufferDescriptor {
        label: Some("shown field (shared with CUDA)"),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    };
    // SAFETY: the buffer was made on this device for `desc` (size, usages), its memory bound;
    // wgpu-hal owns both from here.
    let buffer = unsafe {
        let hal = wgpu::hal::vulkan::Buffer::from_raw_managed(raw_buffer, memory, 0, bytes);
        device.create_buffer_from_hal::<wgpu::hal::api::Vulkan>(hal, &desc)
    };
    Ok(ExportedBuffer {
        buffer,
        fd,
        allocation,
        values,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a Vulkan driver with the extension (lavapipe has it): the exported buffer is an
    /// ordinary storage buffer to wgpu (written by the queue, copied, read back) and its
    /// descriptor is open. Skips, saying why, where there is no adapter.
    #[test]
    fn an_exported_buffer_is_a_storage_buffer_to_wgpu() {
        let gpu = match crate::render::gpu::headless() {
            Ok(g) => g,
            Err(e) => {
                eprintln!("skipped: {e}");
                return;
            }
        };
        let shared = match export(&gpu.device, 1000) {
            Ok(s) => s,
            Err(e) if e.contains("VK_KHR_external_memory_fd") || e.contains("cannot export") => {
                eprintln!("skipped: {e}");
                return;
            }
            Err(e) => panic!("{e}"),
        };
        assert!(shared.allocation >= 4000);
        assert!(device_uuid(&gpu.device).is_some());
        let values: Vec<f32> = (0..1000).map(|k| k as f32 * 0.5 - 3.0).collect();
        gpu.queue
            .write_buffer(&shared.buffer, 0, bytemuck::cast_slice(&values));
        let read = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 4000,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(&shared.buffer, 0, &read, 0, 4000);
        gpu.queue.submit([encoder.finish()]);
        let back = crate::render::gpu::read_mapped(&gpu.device, read.slice(..), |b| {
            bytemuck::cast_slice::<u8, f32>(b).to_vec()
        })
        .expect("read back");
        assert_eq!(back, values);
        use std::os::fd::AsRawFd;
        assert!(shared.fd.as_raw_fd() >= 0);
    }
}
