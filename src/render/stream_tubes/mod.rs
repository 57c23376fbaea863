//! 3D streamlines drawn as lit tubes (`shaders/stream_tubes.wgsl`): each path of
//! [`crate::render::view::FrameData::paths`] swept by a ring of [`SIDES`] vertices whose frame
//! is carried along by parallel transport (Bishop 1975: the ring turns only as the tangent
//! does, so tubes do not twist), closed by flat caps, coloured per point by the view's colour
//! scale. Built on the CPU from the traced points and drawn indexed, depth-tested with the
//! rest of the 3D view.

use super::camera::OrbitCamera;
use super::pipeline::{Depth, PipelineSpec, UNIFORM, entry, render_pipeline};
use bytemuck::{Pod, Zeroable};
use glam::Vec3;

const SHADER: &str = include_str!("../../../shaders/stream_tubes.wgsl");
/// Vertices of a tube's ring.
pub const SIDES: usize = 8;

/// One vertex of a tube: position, outward normal (unit), colour (sRGB-encoded RGBA).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable, PartialEq)]
pub struct TubeVertex {
    pub position: [f32; 3],
    pub normal: [f32; 3],
    pub colour: [u8; 4],
}

/// `Uniforms` in the shader.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Uniforms {
    view_projection: [[f32; 4]; 4],
    light: [f32; 4],
}

/// Appends the tubes of radius `radius` around `paths` (points `(x, y, z, value)`, world
/// coordinates) to `vertices` and `indices` (triangles, counter-clockwise seen from outside),
/// each point coloured `colour(value)`. Repeated points are skipped; a path of fewer than two
/// distinct points draws nothing.
pub fn tube_mesh(
    paths: &[Vec<[f32; 4]>],
    radius: f32,
    colour: impl Fn(f32) -> [u8; 4],
    vertices: &mut Vec<TubeVertex>,
    indices: &mut Vec<u32>,
) {
    for path in paths {
        let mut points: Vec<(Vec3, [u8; 4])> = Vec::with_capacity(path.len());
        for p in path {
            let x = Vec3::new(p[0], p[1], p[2]);
            if points
                .last()
                .is_none_or(|(last, _)| last.distance(x) > 1e-4 * radius)
            {
                points.push((x, colour(p[3])));
            }
        }
        if points.len() < 2 {
            continue;
        }
        let m = points.len();
        let tangent =
            |i: usize| (points[(i + 1).min(m - 1)].0 - points[i.saturating_sub(1)].0).normalize_or_zero();
        let mut t = tangent(0);
        let mut normal = t.any_orthonormal_vector();
        let first = vertices.len() as u32;
        for (i, &(x, c)) in points.iter().enumerate() {
            let ti = tangent(i);
            if ti != Vec3::ZERO {
                t = ti;
            }
            // Parallel transport: the previous normal with its component along the new tangent
            // removed (a new frame where the tangent turned back on itself).
            normal = (normal - normal.dot(t) * t)
                .try_normalize()
                .unwrap_or_else(|| t.any_orthonormal_vector());
            let binormal = t.cross(normal);
            for k in 0..SIDES {
                let angle = std::f32::consts::TAU * k as f32 / SIDES as f32;
                let out = angle.cos() * normal + angle.sin() * binormal;
                vertices.push(TubeVertex {
                    position: (x + radius * out).into(),
                    normal: out.into(),
                    colour: c,
                });
            }
        }
        let ring = |i: usize, k: usize| first + (i * SIDES + k % SIDES) as u32;
        for i in 0..m - 1 {
            for k in 0..SIDES {
                let (a, b, c, d) = (ring(i, k), ring(i, k + 1), ring(i + 1, k), ring(i + 1, k + 1));
                indices.extend_from_slice(&[a, b, d, a, d, c]);
            }
        }
        // Flat caps: a centre vertex facing along the path's end, fanned to its ring.
        for (i, facing) in [(0, -1.0f32), (m - 1, 1.0)] {
            let end_tangent = if i == 0 { tangent(0) } else { tangent(m - 1) };
            let centre = vertices.len() as u32;
            let cap_normal = facing * end_tangent;
            vertices.push(TubeVertex {
                position: points[i].0.into(),
                normal: cap_normal.into(),
                colour: points[i].1,
            });
            for k in 0..SIDES {
                let (a, b) = (ring(i, k), ring(i, k + 1));
                let rim = |v: u32| {
                    let mut r = vertices[v as usize];
                    r.normal = cap_normal.into();
                    r
                };
                let (ra, rb) = (rim(a), rim(b));
                let base = vertices.len() as u32;
                vertices.extend_from_slice(&[ra, rb]);
                if facing > 0.0 {
                    indices.extend_from_slice(&[centre, base, base + 1]);
                } else {
                    indices.extend_from_slice(&[centre, base + 1, base]);
                }
            }
        }
    }
}

/// The pipeline and buffers of the 3D view's streamline tubes.
pub struct StreamTubes {
    pipeline: wgpu::RenderPipeline,
    uniforms: wgpu::Buffer,
    group: wgpu::BindGroup,
    vertices: Option<wgpu::Buffer>,
    indices: Option<wgpu::Buffer>,
    index_count: u32,
    /// The mesh of the last frame, kept for its allocations.
    mesh: (Vec<TubeVertex>, Vec<u32>),
}

impl StreamTubes {
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> StreamTubes {
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("stream tubes"),
            entries: &[entry(0, UNIFORM)],
        });
        let pipeline = render_pipeline(
            device,
            &PipelineSpec {
                label: "stream tubes",
                shader: SHADER,
                layout: &layout,
                vertex: "vs_tube",
                fragment: "fs_tube",
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: std::mem::size_of::<TubeVertex>() as u64,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3, 2 => Unorm8x4],
                })],
                topology: wgpu::PrimitiveTopology::TriangleList,
                depth: Depth::TestAndWrite,
                blend: None,
                format,
            },
        );
        let uniforms = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("stream tubes uniforms"),
            size: std::mem::size_of::<Uniforms>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("stream tubes"),
            layout: &layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: uniforms.as_entire_binding(),
            }],
        });
        StreamTubes {
            pipeline,
            uniforms,
            group,
            vertices: None,
            indices: None,
            index_count: 0,
            mesh: (Vec::new(), Vec::new()),
        }
    }

    /// Sees the tubes through `camera` in a view `aspect` = width / height wide, lit by a
    /// headlight.
    pub fn set_camera(&self, queue: &wgpu::Queue, camera: &OrbitCamera, aspect: f32) {
        let light = camera.backward();
        let u = Uniforms {
            view_projection: camera.view_projection(aspect).to_cols_array_2d(),
            light: [light.x, light.y, light.z, 0.0],
        };
        queue.write_buffer(&self.uniforms, 0, bytemuck::bytes_of(&u));
    }

    /// Builds and uploads the tubes of `paths` ([`tube_mesh`]); an error (nothing drawn) if the
    /// mesh would exceed the device's buffer size.
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        paths: &[Vec<[f32; 4]>],
        radius: f32,
        colour: impl Fn(f32) -> [u8; 4],
    ) -> Result<(), String> {
        self.index_count = 0;
        let (vertices, indices) = &mut self.mesh;
        vertices.clear();
        indices.clear();
        tube_mesh(paths, radius, colour, vertices, indices);
        if indices.is_empty() {
            return Ok(());
        }
        let vertex_bytes = std::mem::size_of_val(vertices.as_slice()) as u64;
        let index_bytes = std::mem::size_of_val(indices.as_slice()) as u64;
        let limit = device.limits().max_buffer_size;
        if vertex_bytes.max(index_bytes) > limit {
            return Err(format!(
                "the streamline tubes need {} MiB, over the GPU's buffer limit of {} MiB; seed fewer streamlines",
                vertex_bytes.max(index_bytes) >> 20,
                limit >> 20
            ));
        }
        let fit = |buffer: &mut Option<wgpu::Buffer>, bytes: u64, usage, label| {
            if buffer.as_ref().is_none_or(|b| b.size() < bytes) {
                *buffer = Some(device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size: bytes.next_power_of_two().min(limit),
                    usage: usage | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                }));
            }
        };
        fit(
            &mut self.vertices,
            vertex_bytes,
            wgpu::BufferUsages::VERTEX,
            "stream tube vertices",
        );
        fit(
            &mut self.indices,
            index_bytes,
            wgpu::BufferUsages::INDEX,
            "stream tube indices",
        );
        queue.write_buffer(
            self.vertices.as_ref().expect("made above"),
            0,
            bytemuck::cast_slice(vertices),
        );
        queue.write_buffer(
            self.indices.as_ref().expect("made above"),
            0,
            bytemuck::cast_slice(indices),
        );
        self.index_count = indices.len() as u32;
        Ok(())
    }

    /// Draws the prepared tubes into `pass` (which has a [`super::surface::DEPTH`] attachment).
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'_>) {
        let (Some(v), Some(i)) = (&self.vertices, &self.indices) else {
            return;
        };
        if self.index_count == 0 {
            return;
        }
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.group, &[]);
        pass.set_vertex_buffer(0, v.slice(..));
        pass.set_index_buffer(i.slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..self.index_count, 0, 0..1);
    }
}

#[cfg(test)]
mod tests;
