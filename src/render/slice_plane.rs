//! The slice in the 3D view (`shaders/slice_plane.wgsl`): a plane through a 3D grid drawn by
//! the 2D field view ([`SceneRenderer`]: colour map, contours, arrows, streamlines of the
//! plane) into a texture, and that texture drawn on the plane in place, depth-tested with the
//! isosurfaces.

use super::offscreen;
use super::pipeline::{Depth, PipelineSpec, UNIFORM, entry, render_pipeline};
use super::scene::SceneRenderer;
use super::view::FrameData;
use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec2, Vec3};

const SHADER: &str = include_str!("../../shaders/slice_plane.wgsl");
/// Pixels along the longer side of the slice's texture: this many per cell of the plane, and
/// at least [`MIN_IMAGE_SIDE`], at most [`MAX_IMAGE_SIDE`] (a coarse grid's slice costs a
/// software renderer a quarter of the largest image's time).
const PIXELS_PER_CELL: u32 = 16;
const MIN_IMAGE_SIDE: u32 = 256;
const MAX_IMAGE_SIDE: u32 = 1024;

/// A corner of the plane: world position and texture coordinates.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Corner {
    position: [f32; 3],
    uv: [f32; 2],
}

/// The slice's texture and the bind group that samples it.
struct Image {
    view: wgpu::TextureView,
    group: wgpu::BindGroup,
    size: [u32; 2],
}

/// The pipelines and GPU state of the slice in the 3D view.
pub struct SlicePlane {
    field_view: SceneRenderer,
    pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    uniforms: wgpu::Buffer,
    corners: wgpu::Buffer,
    sampler: wgpu::Sampler,
    image: Option<Image>,
}

impl SlicePlane {
    /// The pipelines drawing into targets of `format` (with a [`super::surface::DEPTH`] attachment).
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> SlicePlane {
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("slice plane"),
            entries: &[
                entry(0, UNIFORM),
                entry(
                    1,
                    wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                ),
                entry(2, wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering)),
            ],
        });
        let pipeline = render_pipeline(
            device,
            &PipelineSpec {
                label: "slice plane",
                shader: SHADER,
                layout: &layout,
                vertex: "vs_slice",
                fragment: "fs_slice",
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: std::mem::size_of::<Corner>() as u64,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x2],
                })],
                topology: wgpu::PrimitiveTopology::TriangleStrip,
                depth: Depth::TestAndWrite,
                blend: None,
                format,
            },
        );
        let buffer = |label, size, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: usage | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        SlicePlane {
            field_view: SceneRenderer::new(device, offscreen::FORMAT),
            pipeline,
            layout,
            uniforms: buffer("slice plane uniforms", 64, wgpu::BufferUsages::UNIFORM),
            corners: buffer(
                "slice plane corners",
                4 * std::mem::size_of::<Corner>() as u64,
                wgpu::BufferUsages::VERTEX,
            ),
            sampler: device.create_sampler(&wgpu::SamplerDescriptor {
                label: Some("slice plane"),
                mag_filter: wgpu::FilterMode::Linear,
                min_filter: wgpu::FilterMode::Linear,
                ..Default::default()
            }),
            image: None,
        }
    }

    /// Draws `frame` (the plane's 2D field view) into the slice's texture and places it on the
    /// plane: `frame`'s x axis runs along world axis `axes[0]`, its y axis along `axes[1]`, at
    /// `coordinate` along the remaining axis `normal`.
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        frame: &FrameData,
        axes: [usize; 2],
        normal: usize,
        coordinate: f32,
    ) {
        let [ex, ey] = frame.extent.map(|e| e.max(1e-30));
        let cells = frame.n[0].max(frame.n[1]) as u32;
        let side = (PIXELS_PER_CELL.saturating_mul(cells))
            .clamp(MIN_IMAGE_SIDE, MAX_IMAGE_SIDE)
            .min(device.limits().max_texture_dimension_2d);
        let size = if ex >= ey {
            [side, ((side as f64 * ey / ex).round() as u32).max(1)]
        } else {
            [((side as f64 * ex / ey).round() as u32).max(1), side]
        };
        if self.image.as_ref().is_none_or(|i| i.size != size) {
            let usage = wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING;
            let texture =
                offscreen::attachment(device, "slice image", size[0], size[1], offscreen::FORMAT, usage);
            let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
            let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("slice plane"),
                layout: &self.layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: self.uniforms.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: wgpu::BindingResource::TextureView(&view),
                    },
                    wgpu::BindGroupEntry {
                        binding: 2,
                        resource: wgpu::BindingResource::Sampler(&self.sampler),
                    },
                ],
            });
            self.image = Some(Image { view, group, size });
        }
        let image = self.image.as_ref().expect("made above");
        // The whole plane fills the texture, y up.
        let [x0, y0] = frame.origin.map(|o| o as f32);
        let domain = Mat4::orthographic_rh(x0, x0 + ex as f32, y0, y0 + ey as f32, -1.0, 1.0);
        let viewport = Vec2::new(size[0] as f32, size[1] as f32);
        self.field_view.prepare(device, queue, frame);
        self.field_view.set_view(queue, domain, viewport);
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("slice image"),
        });
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("slice image"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &image.view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(super::headless::BACKGROUND),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            self.field_view.paint(&mut pass);
        }
        queue.submit([encoder.finish()]);
        let corner = |s: f32, t: f32| {
            let mut p = Vec3::ZERO;
            p[axes[0]] = x0 + s * ex as f32;
            p[axes[1]] = y0 + t * ey as f32;
            p[normal] = coordinate;
            // Texture row 0 is the top of the image (the plane's largest y).
            Corner {
                position: p.to_array(),
                uv: [s, 1.0 - t],
            }
        };
        let corners = [
            corner(0.0, 0.0),
            corner(1.0, 0.0),
            corner(0.0, 1.0),
            corner(1.0, 1.0),
        ];
        queue.write_buffer(&self.corners, 0, bytemuck::cast_slice(&corners));
    }

    /// Sees the plane through `view_projection`.
    pub fn set_camera(&self, queue: &wgpu::Queue, view_projection: Mat4) {
        queue.write_buffer(
            &self.uniforms,
            0,
            bytemuck::bytes_of(&view_projection.to_cols_array_2d()),
        );
    }

    /// Draws the prepared slice into `pass` (which has a [`super::surface::DEPTH`] attachment).
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'_>) {
        let Some(image) = &self.image else { return };
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &image.group, &[]);
        pass.set_vertex_buffer(0, self.corners.slice(..));
        pass.draw(0..4, 0..1);
    }
}
