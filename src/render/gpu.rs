//! Adapter and device acquisition, with errors that say what is missing instead of panicking.

use std::fmt;

/// Why no GPU device could be created.
#[derive(Debug)]
pub struct GpuError(pub String);

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GpuError {}

/// A device and its queue (plus the adapter it came from).
pub struct Gpu {
    pub instance: wgpu::Instance,
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
}

/// The instance every entry point uses (backends from `WGPU_BACKEND`, default all compiled in).
pub fn instance() -> wgpu::Instance {
    wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env())
}

/// Requests an adapter (compatible with `surface` when given) and a device on it.
pub fn acquire(instance: wgpu::Instance, surface: Option<&wgpu::Surface<'_>>) -> Result<Gpu, GpuError> {
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        force_fallback_adapter: false,
        compatible_surface: surface,
        apply_limit_buckets: false,
    }))
    .map_err(|e| {
        GpuError(format!(
            "no GPU adapter found ({e}); flowlab renders with Vulkan: install a Vulkan driver \
             (for software rendering the Mesa lavapipe driver, Debian package mesa-vulkan-drivers)"
        ))
    })?;
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("flowlab"),
        required_features: wgpu::Features::empty(),
        required_limits: wgpu::Limits::downlevel_defaults().using_resolution(adapter.limits()),
        experimental_features: wgpu::ExperimentalFeatures::disabled(),
        memory_hints: wgpu::MemoryHints::Performance,
        trace: wgpu::Trace::Off,
    }))
    .map_err(|e| GpuError(format!("the GPU adapter refused a device: {e}")))?;
    Ok(Gpu {
        instance,
        adapter,
        device,
        queue,
    })
}

/// A device for offscreen rendering.
pub fn headless() -> Result<Gpu, GpuError> {
    acquire(instance(), None)
}
