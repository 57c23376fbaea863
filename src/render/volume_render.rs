//! Direct volume rendering of a 3D state's scalar field in the 3D view
//! (`shaders/volume_render.wgsl`): the field, uploaded once a frame as a storage buffer, is
//! ray-marched per pixel through the domain's box with a transfer function made of the
//! colormap and a piecewise-linear opacity curve
//! ([`VolumeSettings::opacity`](super::view::VolumeSettings::opacity)), stopping at the
//! opaque scene's depth. The march is a compute shader writing an image of the canvas (on the
//! GPU machines' datacenter GPUs compute runs far faster than fragment shading); a
//! full-screen pass after the opaque one blends that image over the scene.

use super::camera::OrbitCamera;
use super::field_lattice::{self, ColouredField, FieldBuffers, FieldLattice};
use super::pipeline::{
    Depth, FULL_SCREEN, PipelineSpec, STORAGE, UNIFORM, canvas_pixels, entry, render_pipeline,
};
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

/// The marched image's format.
const IMAGE: wgpu::TextureFormat = wgpu::TextureFormat::Rgba16Float;

/// The marched image and its size.
struct Image {
    view: wgpu::TextureView,
    size: [u32; 2],
}

/// The pipelines and GPU state of the volume rendering.
pub struct VolumeRenderer {
    march: wgpu::ComputePipeline,
    march_layout: wgpu::BindGroupLayout,
    pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    /// The marched image, remade when the canvas's size changes (while drawing).
    image: std::cell::RefCell<Option<Image>>,
    uniforms: wgpu::Buffer,
    field: FieldBuffers,
    /// The last frame's uniforms, less the canvas (set when drawn).
    frame: Option<Uniforms>,
}

impl VolumeRenderer {
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> VolumeRenderer {
        let compute = |binding, ty| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty,
            count: None,
        };
        let march_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("volume march"),
            entries: &[
                compute(0, UNIFORM),
                compute(1, STORAGE),
                compute(2, STORAGE),
                compute(
                    3,
                    wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Depth,
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                ),
                compute(
                    4,
                    wgpu::BindingType::StorageTexture {
                        access: wgpu::StorageTextureAccess::WriteOnly,
                        format: IMAGE,
                        view_dimension: wgpu::TextureViewDimension::D2,
                    },
                ),
            ],
        });
        let shader = [field_lattice::SHADER, FULL_SCREEN, SHADER].concat();
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("volume march"),
            source: wgpu::ShaderSource::Wgsl(shader.as_str().into()),
        });
        let march = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("volume march"),
            layout: Some(&device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("volume march"),
                bind_group_layouts: &[Some(&march_layout)],
                immediate_size: 0,
            })),
            module: &module,
            entry_point: Some("march"),
            compilation_options: Default::default(),
            cache: None,
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("volume composite"),
            entries: &[
                entry(0, UNIFORM),
                entry(
                    5,
                    wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: false },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                ),
            ],
        });
        let pipeline = render_pipeline(
            device,
            &PipelineSpec {
                label: "volume composite",
                shader: &shader,
                layout: &layout,
                vertex: "vs_full_screen",
                fragment: "fs_composite",
                buffers: &[],
                topology: wgpu::PrimitiveTopology::TriangleList,
                depth: Depth::None,
                blend: Some(wgpu::BlendState::PREMULTIPLIED_ALPHA_BLENDING),
                format,
            },
        );
        VolumeRenderer {
            march,
            march_layout,
            pipeline,
            layout,
            image: std::cell::RefCell::new(None),
            uniforms: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("volume rendering uniforms"),
                size: std::mem::size_of::<Uniforms>() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            field: FieldBuffers::new(device, "volume-rendered field"),
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
        self.field.upload(device, queue, f)?;
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

    /// Records the prepared volume, when there is one, over `target` (loaded, not cleared) in
    /// the rectangle `canvas` (x, y, width, height in pixels): the march into the image, then
    /// its pass blending the image over the target; the rays stop at `depth` (the opaque pass's
    /// depth buffer, with texture binding, the target's size).
    pub fn draw(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        depth: &wgpu::TextureView,
        canvas: [f32; 4],
    ) {
        let Some(mut u) = self.frame else {
            return;
        };
        u.canvas = canvas;
        queue.write_buffer(&self.uniforms, 0, bytemuck::bytes_of(&u));
        let size = canvas_pixels(canvas);
        let mut slot = self.image.borrow_mut();
        if slot.as_ref().is_none_or(|i| i.size != size) {
            let texture = device.create_texture(&wgpu::TextureDescriptor {
                label: Some("volume rendering image"),
                size: wgpu::Extent3d {
                    width: size[0],
                    height: size[1],
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: IMAGE,
                usage: wgpu::TextureUsages::STORAGE_BINDING | wgpu::TextureUsages::TEXTURE_BINDING,
                view_formats: &[],
            });
            let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
            *slot = Some(Image { view, size });
        }
        let image = &slot.as_ref().expect("made above").view;
        fn bind<'a>(binding: u32, resource: wgpu::BindingResource<'a>) -> wgpu::BindGroupEntry<'a> {
            wgpu::BindGroupEntry { binding, resource }
        }
        let march = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("volume march"),
            layout: &self.march_layout,
            entries: &[
                bind(0, self.uniforms.as_entire_binding()),
                bind(1, self.field.values.as_entire_binding()),
                bind(2, self.field.lut.as_entire_binding()),
                bind(3, wgpu::BindingResource::TextureView(depth)),
                bind(4, wgpu::BindingResource::TextureView(image)),
            ],
        });
        let composite = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("volume composite"),
            layout: &self.layout,
            entries: &[
                bind(0, self.uniforms.as_entire_binding()),
                bind(5, wgpu::BindingResource::TextureView(image)),
            ],
        });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("volume march"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.march);
            pass.set_bind_group(0, &march, &[]);
            pass.dispatch_workgroups(size[0].div_ceil(8), size[1].div_ceil(8), 1);
        }
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("volume composite"),
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
        pass.set_bind_group(0, &composite, &[]);
        pass.draw(0..3, 0..1);
    }
}
