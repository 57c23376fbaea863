//! Direct volume rendering of a 3D state's scalar field in the 3D view
//! (`shaders/volume_render.wgsl`): the field, uploaded once a frame as a storage buffer, is
//! ray-marched per pixel through the domain's box with a transfer function made of the
//! colormap and a piecewise-linear opacity curve
//! ([`VolumeSettings::opacity`](super::view::VolumeSettings::opacity)), stopping at the
//! opaque scene's depth, in a pass of its own after the opaque one and blended over it.

use super::camera::OrbitCamera;
use super::colormap::Colormap;
use super::field_lattice::{self, ColouredField, FieldLattice};
use super::pipeline::{Depth, PipelineSpec, UNIFORM, entry, render_pipeline};
use bytemuck::{Pod, Zeroable};
use glam::Vec3;

const SHADER: &str = include_str!("../../shaders/volume_render.wgsl");

/// `Uniforms` in the shader.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Uniforms {
    inverse_view_projection: [[f32; 4]; 4],
    box_min: [f32; 4],
    box_max: [f32; 4],
    lattice: FieldLattice,
    opacity: [f32; 4],
    canvas: [f32; 4],
}

/// What one frame's volume rendering shows: `field` in the box `min..max`, with `opacity` at
/// 0, 1/3, 2/3 and 1 of its colour scale.
pub struct VolumeFrame<'a> {
    pub field: ColouredField<'a>,
    pub min: Vec3,
    pub max: Vec3,
    pub opacity: [f32; 4],
}

/// The pipeline and GPU state of the volume rendering.
pub struct VolumeRenderer {
    pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    uniforms: wgpu::Buffer,
    lut: wgpu::Buffer,
    field: Option<wgpu::Buffer>,
    colormap: Option<Colormap>,
    /// The last frame's uniforms, less the canvas (set when drawn).
    frame: Option<Uniforms>,
}

impl VolumeRenderer {
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> VolumeRenderer {
        let storage = wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: true },
            has_dynamic_offset: false,
            min_binding_size: None,
        };
        let depth = wgpu::BindingType::Texture {
            sample_type: wgpu::TextureSampleType::Depth,
            view_dimension: wgpu::TextureViewDimension::D2,
            multisampled: false,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("volume rendering"),
            entries: &[
                entry(0, UNIFORM),
                entry(1, storage),
                entry(2, storage),
                entry(3, depth),
            ],
        });
        let pipeline = render_pipeline(
            device,
            &PipelineSpec {
                label: "volume rendering",
                shader: &[field_lattice::SHADER, SHADER].concat(),
                layout: &layout,
                vertex: "vs_main",
                fragment: "fs_main",
                buffers: &[],
                topology: wgpu::PrimitiveTopology::TriangleList,
                depth: Depth::None,
                blend: Some(wgpu::BlendState::PREMULTIPLIED_ALPHA_BLENDING),
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
        VolumeRenderer {
            pipeline,
            layout,
            uniforms: buffer(
                "volume rendering uniforms",
                std::mem::size_of::<Uniforms>() as u64,
                wgpu::BufferUsages::UNIFORM,
            ),
            lut: buffer(
                "volume rendering colormap",
                field_lattice::LUT_BYTES,
                wgpu::BufferUsages::STORAGE,
            ),
            field: None,
            colormap: None,
            frame: None,
        }
    }

    /// Uploads `frame` (or, for `None`, draws nothing); an error if the field exceeds the GPU's
    /// storage buffer limit. [`VolumeRenderer::set_camera`] places it before it is drawn.
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        frame: Option<&VolumeFrame>,
    ) -> Result<(), String> {
        self.frame = None;
        let Some(frame) = frame else {
            return Ok(());
        };
        let f = &frame.field;
        let bytes = std::mem::size_of_val(f.values) as u64;
        let limit = super::gpu::storage_buffer_limit(device);
        if bytes > limit {
            return Err(format!(
                "the volume-rendered field is {} MiB, over the GPU's storage buffer limit of {} MiB",
                bytes >> 20,
                limit >> 20
            ));
        }
        if self.field.as_ref().is_none_or(|f| f.size() != bytes) {
            self.field = Some(device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("volume-rendered field"),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
        }
        queue.write_buffer(
            self.field.as_ref().expect("made above"),
            0,
            bytemuck::cast_slice(f.values),
        );
        if self.colormap != Some(f.colormap) {
            queue.write_buffer(
                &self.lut,
                0,
                bytemuck::cast_slice(&field_lattice::lut(f.colormap)),
            );
            self.colormap = Some(f.colormap);
        }
        // The march step (half a cell) and the opacity curve's reference length (a cell).
        let cell = f.spacing.min_element();
        let mut lattice = f.lattice();
        lattice.origin[3] = 0.5 * cell;
        lattice.spacing[3] = cell;
        let p = |v: Vec3| [v.x, v.y, v.z, 0.0];
        self.frame = Some(Uniforms {
            inverse_view_projection: [[0.0; 4]; 4],
            box_min: p(frame.min),
            box_max: p(frame.max),
            lattice,
            opacity: frame.opacity,
            canvas: [0.0; 4],
        });
        Ok(())
    }

    /// Sees the prepared volume through `camera` in a view `aspect` = width / height wide.
    pub fn set_camera(&mut self, camera: &OrbitCamera, aspect: f32) {
        if let Some(u) = &mut self.frame {
            u.inverse_view_projection = camera.view_projection(aspect).inverse().to_cols_array_2d();
        }
    }

    /// Records the prepared volume, when there is one, into a pass of its own over `target`
    /// (loaded, not cleared), drawn in the rectangle `canvas` (x, y, width, height in pixels),
    /// the rays stopping at `depth` (the opaque pass's depth buffer, with texture binding).
    pub fn draw(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        depth: &wgpu::TextureView,
        canvas: [f32; 4],
    ) {
        let (Some(mut u), Some(field)) = (self.frame, &self.field) else {
            return;
        };
        u.canvas = canvas;
        queue.write_buffer(&self.uniforms, 0, bytemuck::bytes_of(&u));
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("volume rendering"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: self.uniforms.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: field.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: self.lut.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: wgpu::BindingResource::TextureView(depth),
                },
            ],
        });
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("volume rendering"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: target,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Load,
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_viewport(canvas[0], canvas[1], canvas[2], canvas[3], 0.0, 1.0);
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.draw(0..3, 0..1);
    }
}
