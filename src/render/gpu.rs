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

/// A device and its queue (plus the adapter it came from); clones share them.
#[derive(Clone)]
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
    // The adapter's own buffer sizes: a 3D field and its isosurface outgrow the downlevel 128 MiB.
    let mut limits = wgpu::Limits::downlevel_defaults().using_resolution(adapter.limits());
    limits.max_storage_buffer_binding_size = adapter.limits().max_storage_buffer_binding_size;
    limits.max_buffer_size = adapter.limits().max_buffer_size;
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("flowlab"),
        required_features: wgpu::Features::empty(),
        required_limits: limits,
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

/// The device for offscreen rendering, one per process: made at the first call and shared by
/// every later one. Vulkan instances and devices are heavy to make, and NVIDIA's driver stopped
/// finding its adapter after about 20 of them made and dropped in one process (the H100's
/// driver 580; see BENCHMARKS.md).
pub fn headless() -> Result<Gpu, GpuError> {
    static SHARED: std::sync::Mutex<Option<Gpu>> = std::sync::Mutex::new(None);
    let mut shared = SHARED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(gpu) = &*shared {
        return Ok(gpu.clone());
    }
    let gpu = acquire(instance(), None)?;
    *shared = Some(gpu.clone());
    Ok(gpu)
}

/// Maps `slice` of a `MAP_READ` buffer whose copy has been submitted, waiting for the GPU, and
/// passes its bytes to `read`.
pub fn read_mapped<R>(
    device: &wgpu::Device,
    slice: wgpu::BufferSlice<'_>,
    read: impl FnOnce(&[u8]) -> R,
) -> Result<R, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    device
        .poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: None,
        })
        .map_err(|e| format!("waiting for the GPU failed: {e}"))?;
    rx.recv()
        .map_err(|e| format!("readback was not completed: {e}"))?
        .map_err(|e| format!("mapping the readback buffer failed: {e}"))?;
    let data = slice
        .get_mapped_range()
        .map_err(|e| format!("reading the readback buffer failed: {e}"))?;
    Ok(read(&data))
}

/// The largest storage buffer `device` binds (and creates), in bytes.
pub fn storage_buffer_limit(device: &wgpu::Device) -> u64 {
    let limits = device.limits();
    limits.max_buffer_size.min(limits.max_storage_buffer_binding_size)
}
