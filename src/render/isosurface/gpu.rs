//! Isosurface extraction on the GPU (`shaders/isosurface.wgsl`): the marching tetrahedra of
//! [`super::extract`] in a WGSL compute shader over a field already in a storage buffer, one
//! invocation per lattice cube, the triangles appended through an atomic counter into a buffer
//! that stays on the GPU for drawing. Only the counter (4 bytes) comes back, to size the buffer:
//! when the surface outgrows it, the buffer grows (within the device's limits) and the pass runs
//! again.

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

const SHADER: &str = include_str!("../../../shaders/isosurface.wgsl");
/// The WGSL of [`Vertex`], put in front of the shaders that write or read the triangles.
pub const VERTEX_SHADER: &str = include_str!("../../../shaders/surface_vertex.wgsl");
/// Invocations of a workgroup along each axis (`@workgroup_size` in the shader).
const WORKGROUP: u32 = 4;

/// One vertex of the triangle list: position (w = 1) and unit normal (w = 0), towards larger
/// field values (`Vertex` in the shader).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct Vertex {
    pub position: [f32; 4],
    pub normal: [f32; 4],
}

/// Bytes of one triangle.
const TRIANGLE_BYTES: u64 = 3 * std::mem::size_of::<Vertex>() as u64;

/// `Params` in the shader.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    n: [u32; 3],
    level: f32,
    origin: [f32; 3],
    capacity: u32,
    spacing: [f32; 3],
    pad: u32,
}

/// A field on the GPU: `n[0] x n[1] x n[2]` lattice values (f32, x fastest) in `values`, point
/// `(i, j, k)` at `origin + spacing * (i, j, k)`.
pub struct GpuLattice<'a> {
    pub values: &'a wgpu::Buffer,
    pub n: [u32; 3],
    pub origin: Vec3,
    pub spacing: Vec3,
}

/// An extracted surface: `triangles` triangles, three [`Vertex`]es each, at the start of
/// `vertices` (which may hold more).
pub struct Surface {
    pub vertices: wgpu::Buffer,
    pub triangles: u32,
}

/// The compute pipeline and its counter.
pub struct Extractor {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    params: wgpu::Buffer,
    count: wgpu::Buffer,
    count_readback: wgpu::Buffer,
}

impl Extractor {
    pub fn new(device: &wgpu::Device) -> Extractor {
        let entry = |binding: u32, ty: wgpu::BufferBindingType| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let storage = |read_only| wgpu::BufferBindingType::Storage { read_only };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("isosurface"),
            entries: &[
                entry(0, wgpu::BufferBindingType::Uniform),
                entry(1, storage(true)),
                entry(2, storage(false)),
                entry(3, storage(false)),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("isosurface"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("isosurface"),
            source: wgpu::ShaderSource::Wgsl([VERTEX_SHADER, SHADER].concat().into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("isosurface"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("extract"),
            compilation_options: Default::default(),
            cache: None,
        });
        let buffer = |label, size, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        };
        use wgpu::BufferUsages as U;
        Extractor {
            pipeline,
            layout,
            params: buffer(
                "isosurface params",
                std::mem::size_of::<Params>() as u64,
                U::UNIFORM | U::COPY_DST,
            ),
            count: buffer("isosurface count", 4, U::STORAGE | U::COPY_SRC | U::COPY_DST),
            count_readback: buffer("isosurface count readback", 4, U::MAP_READ | U::COPY_DST),
        }
    }

    /// The surface `field = level` of `lattice` into `surface` (its buffer reused, or grown when
    /// the surface needs more room, up to the device's buffer limits: a larger surface is an
    /// error naming its size).
    pub fn extract(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        lattice: &GpuLattice,
        level: f32,
        surface: &mut Option<Surface>,
    ) -> Result<u32, String> {
        let cubes: u64 = lattice
            .n
            .iter()
            .map(|&m| u64::from(m.saturating_sub(1)))
            .product();
        if cubes == 0 {
            if let Some(s) = surface {
                s.triangles = 0;
            }
            return Ok(0);
        }
        // A first guess for a new buffer: a surface crossing the lattice once along each axis.
        let mut capacity = surface.as_ref().map_or_else(
            || 12 * lattice.n.iter().map(|&m| u64::from(m)).max().unwrap_or(1).pow(2),
            |s| s.vertices.size() / TRIANGLE_BYTES,
        );
        loop {
            let out = match surface.take() {
                Some(s) if s.vertices.size() / TRIANGLE_BYTES >= capacity => s,
                _ => Surface {
                    vertices: triangle_buffer(device, capacity)?,
                    triangles: 0,
                },
            };
            let count = self.run(device, queue, lattice, level, &out.vertices)?;
            let fits = u64::from(count) <= out.vertices.size() / TRIANGLE_BYTES;
            *surface = Some(Surface {
                triangles: count,
                ..out
            });
            if fits {
                return Ok(count);
            }
            capacity = u64::from(count) + u64::from(count) / 4;
        }
    }

    /// One pass of the shader into `vertices`; returns the triangles it found (all of them,
    /// also those past the buffer's room).
    fn run(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        lattice: &GpuLattice,
        level: f32,
        vertices: &wgpu::Buffer,
    ) -> Result<u32, String> {
        let capacity = u32::try_from(vertices.size() / TRIANGLE_BYTES).unwrap_or(u32::MAX);
        let params = Params {
            n: lattice.n,
            level,
            origin: lattice.origin.to_array(),
            capacity,
            spacing: lattice.spacing.to_array(),
            pad: 0,
        };
        queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
        queue.write_buffer(&self.count, 0, &0u32.to_le_bytes());
        fn bind(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
            wgpu::BindGroupEntry {
                binding,
                resource: buffer.as_entire_binding(),
            }
        }
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("isosurface"),
            layout: &self.layout,
            entries: &[
                bind(0, &self.params),
                bind(1, lattice.values),
                bind(2, &self.count),
                bind(3, vertices),
            ],
        });
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("isosurface"),
        });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("isosurface"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &group, &[]);
            let groups = lattice.n.map(|m| m.saturating_sub(1).div_ceil(WORKGROUP));
            pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
        }
        encoder.copy_buffer_to_buffer(&self.count, 0, &self.count_readback, 0, 4);
        queue.submit([encoder.finish()]);
        let count = crate::render::gpu::read_mapped(device, self.count_readback.slice(..), |b| {
            u32::from_le_bytes([b[0], b[1], b[2], b[3]])
        });
        self.count_readback.unmap();
        count
    }
}

/// A storage buffer for `triangles` triangles, after checking the device's limits.
fn triangle_buffer(device: &wgpu::Device, triangles: u64) -> Result<wgpu::Buffer, String> {
    let size = triangles.max(1) * TRIANGLE_BYTES;
    let limit = crate::render::gpu::storage_buffer_limit(device);
    if size > limit {
        return Err(format!(
            "the isosurface needs {triangles} triangles ({} MiB), over the GPU's buffer limit of {} MiB",
            size >> 20,
            limit >> 20
        ));
    }
    Ok(device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("isosurface triangles"),
        size,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    }))
}

/// The first `surface.triangles` triangles' vertices, read back (for tests and mesh export).
pub fn read_vertices(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    surface: &Surface,
) -> Result<Vec<Vertex>, String> {
    let bytes = u64::from(surface.triangles) * TRIANGLE_BYTES;
    if bytes == 0 {
        return Ok(Vec::new());
    }
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("isosurface readback"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("isosurface readback"),
    });
    encoder.copy_buffer_to_buffer(&surface.vertices, 0, &staging, 0, bytes);
    queue.submit([encoder.finish()]);
    crate::render::gpu::read_mapped(device, staging.slice(..), |b| bytemuck::cast_slice(b).to_vec())
}

#[cfg(test)]
mod tests {
    use super::super::{Lattice, extract, tests::sampled};
    use super::*;

    /// The shader's surface of a sphere's distance field at two levels equals the CPU reference
    /// (the same triangles, area and enclosed volume to f32 round-off), with the buffer grown
    /// from too small and then reused; its normals are the field's gradient, radial.
    #[test]
    fn the_shader_extracts_the_reference_surface() {
        let gpu = match crate::render::gpu::headless() {
            Ok(g) => g,
            Err(e) => {
                assert!(
                    std::env::var_os("CI").is_none(),
                    "no GPU adapter in CI (lavapipe): {e}"
                );
                eprintln!("the_shader_extracts_the_reference_surface: skipped, no GPU adapter: {e}");
                return;
            }
        };
        let (device, queue) = (&gpu.device, &gpu.queue);
        let m = 64;
        let c = Vec3::splat(0.5);
        let (values, lattice) = sampled(m, |p| (p - c).length());
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("field"),
            size: (values.len() * 4) as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        queue.write_buffer(&buffer, 0, bytemuck::cast_slice(&values));
        let on_gpu = GpuLattice {
            values: &buffer,
            n: [m as u32; 3],
            origin: lattice.origin,
            spacing: lattice.spacing,
        };
        let extractor = Extractor::new(device);
        let mut surface = Some(Surface {
            vertices: triangle_buffer(device, 100).unwrap(),
            triangles: 0,
        });
        let h = 1.0 / m as f32;
        for level in [0.3f32, 0.2] {
            let count = extractor
                .extract(device, queue, &on_gpu, level, &mut surface)
                .unwrap();
            let s = surface.as_ref().unwrap();
            let reference = extract(
                &Lattice {
                    values: &values,
                    ..lattice
                },
                level,
            );
            assert_eq!(
                count as usize,
                reference.triangles.len(),
                "level {level}: triangles"
            );
            let vertices = read_vertices(device, queue, s).unwrap();
            let p = |v: &Vertex| Vec3::from_slice(&v.position[..3]).as_dvec3();
            let (mut area, mut volume) = (0.0, 0.0);
            for t in vertices.chunks_exact(3) {
                let [a, b, cc] = [p(&t[0]), p(&t[1]), p(&t[2])];
                area += 0.5 * (b - a).cross(cc - a).length();
                volume += a.dot(b.cross(cc)) / 6.0;
            }
            let rel = |x: f64, y: f64| (x / y - 1.0).abs();
            assert!(
                rel(area, reference.area()) < 1e-5,
                "level {level}: area {area} vs {}",
                reference.area()
            );
            assert!(
                rel(volume, reference.enclosed_volume()) < 1e-5,
                "level {level}: volume {volume} vs {} (facing outward)",
                reference.enclosed_volume()
            );
            for v in &vertices {
                let q = Vec3::from_slice(&v.position[..3]) - c;
                assert!((q.length() - level).abs() <= 0.5 * h, "vertex {q} off the sphere");
                let n = Vec3::from_slice(&v.normal[..3]);
                assert!(n.dot(q.normalize()) > 0.99, "normal {n} at {q} is not radial");
            }
        }
        // The larger surface grew the buffer of 100 triangles; the smaller reused it.
        assert!(surface.unwrap().vertices.size() / TRIANGLE_BYTES > 100);
    }
}
