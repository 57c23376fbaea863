//! The wgpu pipelines of the 2D field view: colour-mapped field, contour lines, velocity
//! arrows and streamlines, all sharing one bind group of per-frame buffers. [`SceneRenderer::prepare`]
//! uploads one frame's f32 arrays with `queue.write_buffer` (only when the frame changed), or
//! binds the buffers a frame drawn from the solver's memory brings ([`FrameData::on_device`]);
//! [`SceneRenderer::set_view`] places it (every frame: the view's pan and zoom);
//! [`SceneRenderer::paint`] records the draws into a render pass whose viewport is the view's
//! rectangle.

use super::colormap::Colormap;
use super::view::FrameData;
use glam::{Mat4, Vec2};

const COMMON: &str = include_str!("../../shaders/common.wgsl");
const COLORMAP: &str = include_str!("../../shaders/colormap.wgsl");
const CONTOUR: &str = include_str!("../../shaders/contour.wgsl");
const ARROWS: &str = include_str!("../../shaders/arrows.wgsl");
const LINES: &str = include_str!("../../shaders/lines.wgsl");

/// Uniform block, laid out as `Params` in `shaders/common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    view: [[f32; 4]; 4],
    domain: [f32; 4],
    range: [f32; 4],
    viewport: [f32; 4],
    counts: [u32; 4],
    extra: [u32; 4],
}

/// A storage buffer that grows as needed.
struct Storage {
    buffer: wgpu::Buffer,
    label: &'static str,
}

impl Storage {
    fn new(device: &wgpu::Device, label: &'static str, bytes: u64) -> Storage {
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes.max(16),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Storage { buffer, label }
    }

    /// Uploads `data`; returns true if the buffer had to be recreated (bind group stale).
    fn write(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, data: &[u8]) -> bool {
        let grown = data.len() as u64 > self.buffer.size();
        if grown {
            *self = Storage::new(device, self.label, (data.len() as u64).next_power_of_two());
        }
        if !data.is_empty() {
            queue.write_buffer(&self.buffer, 0, data);
        }
        grown
    }
}

/// Pipelines and per-frame GPU state of the field view.
pub struct SceneRenderer {
    field: wgpu::RenderPipeline,
    contour: wgpu::RenderPipeline,
    arrows: wgpu::RenderPipeline,
    lines: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    uniform: wgpu::Buffer,
    storage: [Storage; 5],
    lut: wgpu::Texture,
    lut_view: wgpu::TextureView,
    sampler: wgpu::Sampler,
    bind_group: wgpu::BindGroup,
    colormap: Option<Colormap>,
    /// What the last prepared frame draws.
    draw: Draw,
    /// The last prepared frame's uniforms, less the view ([`SceneRenderer::set_view`]).
    params: Params,
    /// The device buffers bound in place of the field and contour storage (a frame drawn
    /// from the solver's memory, [`FrameData::on_device`]); `None` where the own are bound.
    bound: Option<[wgpu::Buffer; 2]>,
}

#[derive(Clone, Copy, Default)]
struct Draw {
    field: bool,
    contour: bool,
    arrows: u32,
    segments: u32,
}

impl SceneRenderer {
    /// Builds the pipelines for render targets of `format`.
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> SceneRenderer {
        let storage_entry = |binding: u32, stages: wgpu::ShaderStages| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: stages,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: true },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let both = wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT;
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("field view"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: both,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
                // Fields are sampled per fragment, velocity and segments per vertex (this keeps
                // within the downlevel limit of four storage buffers per stage).
                storage_entry(1, wgpu::ShaderStages::FRAGMENT),
                storage_entry(2, wgpu::ShaderStages::FRAGMENT),
                storage_entry(3, wgpu::ShaderStages::VERTEX),
                storage_entry(4, wgpu::ShaderStages::VERTEX),
                wgpu::BindGroupLayoutEntry {
                    binding: 5,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 6,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
                storage_entry(7, wgpu::ShaderStages::VERTEX),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("field view"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = |label: &str, source: &str, blend: Option<wgpu::BlendState>| {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(label),
                source: wgpu::ShaderSource::Wgsl(format!("{COMMON}\n{source}").into()),
            });
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(label),
                layout: Some(&pipeline_layout),
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some("vs_main"),
                    compilation_options: Default::default(),
                    buffers: &[],
                },
                primitive: wgpu::PrimitiveState::default(),
                depth_stencil: None,
                multisample: wgpu::MultisampleState::default(),
                fragment: Some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some("fs_main"),
                    compilation_options: Default::default(),
                    targets: &[Some(wgpu::ColorTargetState {
                        format,
                        blend,
                        write_mask: wgpu::ColorWrites::ALL,
                    })],
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        let alpha = Some(wgpu::BlendState::ALPHA_BLENDING);
        let uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("field view params"),
            size: std::mem::size_of::<Params>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let storage = [
            Storage::new(device, "field", 16),
            Storage::new(device, "contour field", 16),
            Storage::new(device, "velocity u", 16),
            Storage::new(device, "velocity v", 16),
            Storage::new(device, "streamline segments", 16),
        ];
        let lut = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("colormap"),
            size: wgpu::Extent3d {
                width: 256,
                height: 1,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8Unorm,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        let lut_view = lut.create_view(&wgpu::TextureViewDescriptor::default());
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("colormap"),
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            ..Default::default()
        });
        let buffers = storage.each_ref().map(|s| &s.buffer);
        let bind_group = Self::bind_group(device, &layout, &uniform, buffers, &lut_view, &sampler);
        SceneRenderer {
            field: pipeline("colormap", COLORMAP, None),
            contour: pipeline("contour", CONTOUR, alpha),
            arrows: pipeline("arrows", ARROWS, alpha),
            lines: pipeline("lines", LINES, alpha),
            layout,
            uniform,
            storage,
            lut,
            lut_view,
            sampler,
            bind_group,
            colormap: None,
            draw: Draw::default(),
            params: Params::default(),
            bound: None,
        }
    }

    fn bind_group(
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        uniform: &wgpu::Buffer,
        storage: [&wgpu::Buffer; 5],
        lut_view: &wgpu::TextureView,
        sampler: &wgpu::Sampler,
    ) -> wgpu::BindGroup {
        fn buf(binding: u32, b: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
            wgpu::BindGroupEntry {
                binding,
                resource: b.as_entire_binding(),
            }
        }
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("field view"),
            layout,
            entries: &[
                buf(0, uniform),
                buf(1, storage[0]),
                buf(2, storage[1]),
                buf(3, storage[2]),
                buf(4, storage[3]),
                wgpu::BindGroupEntry {
                    binding: 5,
                    resource: wgpu::BindingResource::TextureView(lut_view),
                },
                wgpu::BindGroupEntry {
                    binding: 6,
                    resource: wgpu::BindingResource::Sampler(sampler),
                },
                buf(7, storage[4]),
            ],
        })
    }

    /// Uploads one frame; [`SceneRenderer::set_view`] places it before it is drawn.
    pub fn prepare(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, frame: &FrameData) {
        let mut stale = false;
        let empty: &[f32] = &[];
        stale |= self.storage[0].write(device, queue, bytemuck::cast_slice(&frame.field));
        let (contour, levels, crange) = match &frame.contour {
            Some((c, n, r)) => (c.as_slice(), *n, *r),
            None => (empty, 0, [0.0, 1.0]),
        };
        stale |= self.storage[1].write(device, queue, bytemuck::cast_slice(contour));
        // A frame drawn from device memory binds the solver's buffers for the field and the
        // contours (the contours' own buffer when there are none).
        let bound = frame.on_device.as_ref().map(|d| {
            let contour = d.contour.as_ref().unwrap_or(&self.storage[1].buffer);
            [d.field.clone(), contour.clone()]
        });
        stale |= bound != self.bound;
        self.bound = bound;
        let (u, v) = match &frame.velocity {
            Some((u, v)) => (u.as_slice(), v.as_slice()),
            None => (empty, empty),
        };
        stale |= self.storage[2].write(device, queue, bytemuck::cast_slice(u));
        stale |= self.storage[3].write(device, queue, bytemuck::cast_slice(v));
        stale |= self.storage[4].write(device, queue, bytemuck::cast_slice(&frame.segments));
        if stale {
            let mut buffers = self.storage.each_ref().map(|s| &s.buffer);
            if let Some([field, contour]) = &self.bound {
                buffers[0] = field;
                buffers[1] = contour;
            }
            self.bind_group = Self::bind_group(
                device,
                &self.layout,
                &self.uniform,
                buffers,
                &self.lut_view,
                &self.sampler,
            );
        }
        if frame.colormap.is_some() && frame.colormap != self.colormap {
            let lut = frame.colormap.expect("checked").lut();
            queue.write_texture(
                wgpu::TexelCopyTextureInfo {
                    texture: &self.lut,
                    mip_level: 0,
                    origin: wgpu::Origin3d::ZERO,
                    aspect: wgpu::TextureAspect::All,
                },
                bytemuck::cast_slice(&lut),
                wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(256 * 4),
                    rows_per_image: Some(1),
                },
                wgpu::Extent3d {
                    width: 256,
                    height: 1,
                    depth_or_array_layers: 1,
                },
            );
            self.colormap = frame.colormap;
        }
        let (lattice, arrow_scale) = frame.arrows.unwrap_or(([0, 0], 0.0));
        let flags = u32::from(frame.log_scale) | (u32::from(frame.diverging) << 1);
        self.params = Params {
            view: [[0.0; 4]; 4],
            domain: [
                frame.origin[0] as f32,
                frame.origin[1] as f32,
                frame.extent[0] as f32,
                frame.extent[1] as f32,
            ],
            range: [frame.range[0], frame.range[1], crange[0], crange[1]],
            viewport: [0.0, 0.0, arrow_scale, 1.3],
            counts: [frame.n[0] as u32, frame.n[1] as u32, levels, flags],
            extra: [lattice[0], lattice[1], frame.segments.len() as u32, 0],
        };
        let cells = frame.n[0] * frame.n[1];
        let has_field = match &frame.on_device {
            Some(d) => cells > 0 && d.field.size() >= 4 * cells as u64,
            None => !frame.field.is_empty() && frame.field.len() == cells,
        };
        self.draw = Draw {
            field: has_field,
            contour: has_field && levels > 0,
            arrows: if frame.velocity.is_some() {
                lattice[0] * lattice[1]
            } else {
                0
            },
            segments: frame.segments.len() as u32,
        };
    }

    /// Places the prepared frame in a viewport of `viewport` pixels seen through `view` (world
    /// -> clip).
    pub fn set_view(&mut self, queue: &wgpu::Queue, view: Mat4, viewport: Vec2) {
        self.params.view = view.to_cols_array_2d();
        self.params.viewport[0] = viewport.x;
        self.params.viewport[1] = viewport.y;
        queue.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&self.params));
    }

    /// Records the prepared frame's draws.
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'_>) {
        let d = self.draw;
        if !d.field {
            return;
        }
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.set_pipeline(&self.field);
        pass.draw(0..3, 0..1);
        if d.contour {
            pass.set_pipeline(&self.contour);
            pass.draw(0..3, 0..1);
        }
        if d.arrows > 0 {
            pass.set_pipeline(&self.arrows);
            pass.draw(0..9, 0..d.arrows);
        }
        if d.segments > 0 {
            pass.set_pipeline(&self.lines);
            pass.draw(0..6, 0..2 * d.segments);
        }
    }
}
