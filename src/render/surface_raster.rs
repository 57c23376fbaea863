//! The opaque isosurfaces rasterised in compute (`shaders/surface_raster.wgsl`): each level's
//! triangles, straight from the buffer the extraction wrote, one invocation a triangle, in two
//! passes (nearest depth per pixel by `atomicMax`, then the shade of the triangle at that
//! depth) into one buffer of the canvas's pixels; a full-screen pass then writes those colours
//! with their depth into the 3D view, depth-tested with the slices, lines and tubes the
//! pipeline draws. On the GPU machines' datacenter GPUs only a few multiprocessors run the
//! graphics pipeline, so a 256^3 field's million triangles of a pixel or two drew at about
//! 0.45 G triangles/s there (BENCHMARKS.md); this runs on all of them. Transparent surfaces
//! keep the pipeline (their blending needs the pipeline's ordered writes).

use super::field_lattice::FieldBuffers;
use super::isosurface::gpu::VERTEX_SHADER;
use super::pipeline::{Depth, FULL_SCREEN, PipelineSpec, canvas_pixels, render_pipeline};
use super::surface::MAX_LEVELS;
use bytemuck::{Pod, Zeroable};
use std::cell::RefCell;

const SHADER: &str = include_str!("../../shaders/surface_raster.wgsl");
/// Invocations of a workgroup (`WORKGROUP` in the shader).
const RASTER_WORKGROUP: u32 = 64;
/// Bytes between two dispatches' parameters in their uniform buffer (the largest uniform
/// offset alignment a device may ask for).
const SLOT: u64 = 256;
/// Bytes a canvas pixel takes: its depth key and its colour (four 16-bit channels).
const PIXEL_BYTES: u64 = 4 + 8;

/// How the view draws its opaque isosurfaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Rasteriser {
    /// In compute, on every multiprocessor (this module).
    #[default]
    Compute,
    /// Through the graphics pipeline (as the transparent surfaces are drawn).
    Pipeline,
}

/// `Raster` in the shader.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Raster {
    canvas: [f32; 4],
    size: [u32; 2],
    triangles: u32,
    stage: u32,
}

/// One level to rasterise: its uniforms (`Uniforms` of `shaders/surface.wgsl`: camera, light,
/// colour) and its `triangles` triangles at the start of `vertices`.
pub struct RasterLevel<'a> {
    pub uniforms: &'a wgpu::Buffer,
    pub vertices: &'a wgpu::Buffer,
    pub triangles: u32,
}

/// The buffer of a canvas's pixels (`drawn` in the shader) and the composite pass's bind
/// group over it.
struct CanvasBuffers {
    size: [u32; 2],
    drawn: wgpu::Buffer,
    composite: wgpu::BindGroup,
}

/// The compute and composite pipelines and the canvas's buffers.
pub struct SurfaceRaster {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    composite: wgpu::RenderPipeline,
    composite_layout: wgpu::BindGroupLayout,
    /// Each dispatch's parameters, `SLOT` bytes apart: level `k`'s pass `s` at slot `2k + s`.
    params: wgpu::Buffer,
    /// Made, and remade when the canvas's size changes, while recording.
    canvas: RefCell<Option<CanvasBuffers>>,
}

/// A layout entry at `binding` seen by `stages`.
fn entry(binding: u32, stages: wgpu::ShaderStages, ty: wgpu::BindingType) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: stages,
        ty,
        count: None,
    }
}

fn storage(read_only: bool) -> wgpu::BindingType {
    wgpu::BindingType::Buffer {
        ty: wgpu::BufferBindingType::Storage { read_only },
        has_dynamic_offset: false,
        min_binding_size: None,
    }
}

/// The parameters' binding: one `Raster` at a dynamic offset.
const PARAMS: wgpu::BindingType = wgpu::BindingType::Buffer {
    ty: wgpu::BufferBindingType::Uniform,
    has_dynamic_offset: true,
    min_binding_size: std::num::NonZeroU64::new(std::mem::size_of::<Raster>() as u64),
};

impl SurfaceRaster {
    /// The pipelines, from `surface_shader` (`shaders/field_lattice.wgsl` and
    /// `shaders/surface.wgsl`), drawing into targets of `format`.
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat, surface_shader: &str) -> SurfaceRaster {
        use wgpu::ShaderStages as S;
        let uniform = wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("isosurface raster"),
            entries: &[
                entry(0, S::COMPUTE, uniform),
                entry(1, S::COMPUTE, storage(true)),
                entry(2, S::COMPUTE, storage(true)),
                entry(3, S::COMPUTE, PARAMS),
                entry(4, S::COMPUTE, storage(true)),
                entry(5, S::COMPUTE, storage(false)),
            ],
        });
        let shader = [surface_shader, FULL_SCREEN, VERTEX_SHADER, SHADER].concat();
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("isosurface raster"),
            source: wgpu::ShaderSource::Wgsl(shader.as_str().into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("isosurface raster"),
            layout: Some(&device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("isosurface raster"),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            })),
            module: &module,
            entry_point: Some("rasterise"),
            compilation_options: Default::default(),
            cache: None,
        });
        let composite_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("isosurface composite"),
            entries: &[
                entry(3, S::FRAGMENT, PARAMS),
                entry(6, S::FRAGMENT, storage(true)),
            ],
        });
        let composite = render_pipeline(
            device,
            &PipelineSpec {
                label: "isosurface composite",
                shader: &shader,
                layout: &composite_layout,
                vertex: "vs_full_screen",
                fragment: "fs_raster_composite",
                buffers: &[],
                topology: wgpu::PrimitiveTopology::TriangleList,
                depth: Depth::TestAndWrite,
                blend: None,
                format,
            },
        );
        SurfaceRaster {
            pipeline,
            layout,
            composite,
            composite_layout,
            params: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("isosurface raster parameters"),
                size: 2 * MAX_LEVELS as u64 * SLOT,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            canvas: RefCell::new(None),
        }
    }

    /// Records both passes over `levels` (at least one; coloured by `colouring`) for the rectangle `canvas`
    /// (x, y, width, height in pixels) of the target; [`SurfaceRaster::paint`] then draws
    /// them. An error, and nothing recorded, when the canvas's buffers or a level's dispatch
    /// exceed the device's limits.
    pub fn record(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        colouring: &FieldBuffers,
        levels: &[RasterLevel],
        canvas: [f32; 4],
    ) -> Result<(), String> {
        if levels.len() > MAX_LEVELS {
            return Err(format!(
                "at most {MAX_LEVELS} isosurface levels, got {}",
                levels.len()
            ));
        }
        let size = canvas_pixels(canvas);
        let limits = device.limits();
        let pixels = u64::from(size[0]) * u64::from(size[1]);
        if pixels * PIXEL_BYTES > super::gpu::storage_buffer_limit(device) {
            return Err(format!(
                "the {} x {} canvas needs a rasteriser buffer of {} MiB, over the GPU's storage buffer limit",
                size[0],
                size[1],
                (pixels * PIXEL_BYTES) >> 20
            ));
        }
        let most = limits.max_compute_workgroups_per_dimension;
        let dispatches: Vec<[u32; 2]> = levels
            .iter()
            .map(|l| {
                let groups = l.triangles.div_ceil(RASTER_WORKGROUP);
                let x = groups.clamp(1, most);
                [x, groups.div_ceil(x)]
            })
            .collect();
        if let Some(l) = dispatches.iter().position(|d| d[1] > most) {
            return Err(format!(
                "isosurface level {} has {} triangles, more than one dispatch can rasterise",
                l + 1,
                levels[l].triangles
            ));
        }
        let mut slot = self.canvas.borrow_mut();
        if slot.as_ref().is_none_or(|c| c.size != size) {
            *slot = Some(self.canvas_buffers(device, size, pixels));
        }
        let buffers = slot.as_ref().expect("made above");
        let mut params = vec![0u8; self.params.size() as usize];
        for (k, l) in levels.iter().enumerate() {
            for stage in 0..2u32 {
                let at = (2 * k as u64 + u64::from(stage)) * SLOT;
                let p = Raster {
                    canvas,
                    size,
                    triangles: l.triangles,
                    stage,
                };
                params[at as usize..at as usize + std::mem::size_of::<Raster>()]
                    .copy_from_slice(bytemuck::bytes_of(&p));
            }
        }
        queue.write_buffer(&self.params, 0, &params);
        let groups: Vec<wgpu::BindGroup> = levels
            .iter()
            .map(|l| self.level_group(device, colouring, l, buffers))
            .collect();
        encoder.clear_buffer(&buffers.drawn, 0, Some(pixels * 4));
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("isosurface raster"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&self.pipeline);
        for stage in 0..2u32 {
            for (k, (group, d)) in groups.iter().zip(&dispatches).enumerate() {
                if levels[k].triangles == 0 {
                    continue;
                }
                let offset = ((2 * k as u64 + u64::from(stage)) * SLOT) as u32;
                pass.set_bind_group(0, group, &[offset]);
                pass.dispatch_workgroups(d[0], d[1], 1);
            }
        }
        Ok(())
    }

    /// Draws the recorded surfaces into `pass` (the 3D view's, with its depth attachment and
    /// its viewport on the canvas).
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'_>) {
        let canvas = self.canvas.borrow();
        let Some(c) = canvas.as_ref() else {
            return;
        };
        pass.set_pipeline(&self.composite);
        pass.set_bind_group(0, &c.composite, &[0]);
        pass.draw(0..3, 0..1);
    }

    /// The depth keys and colours of `pixels` pixels (`size`), and the composite's bind group.
    fn canvas_buffers(&self, device: &wgpu::Device, size: [u32; 2], pixels: u64) -> CanvasBuffers {
        let drawn = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("isosurface depth keys and colours"),
            size: pixels * PIXEL_BYTES,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let composite = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("isosurface composite"),
            layout: &self.composite_layout,
            entries: &[self.params_entry(), bind(6, &drawn)],
        });
        CanvasBuffers {
            size,
            drawn,
            composite,
        }
    }

    /// The bind group of one level's passes.
    fn level_group(
        &self,
        device: &wgpu::Device,
        colouring: &FieldBuffers,
        level: &RasterLevel,
        canvas: &CanvasBuffers,
    ) -> wgpu::BindGroup {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("isosurface raster"),
            layout: &self.layout,
            entries: &[
                bind(0, level.uniforms),
                bind(1, &colouring.values),
                bind(2, &colouring.lut),
                self.params_entry(),
                bind(4, level.vertices),
                bind(5, &canvas.drawn),
            ],
        })
    }

    /// The parameters' entry: one `Raster` wide, placed by the dynamic offset.
    fn params_entry(&self) -> wgpu::BindGroupEntry<'_> {
        wgpu::BindGroupEntry {
            binding: 3,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &self.params,
                offset: 0,
                size: wgpu::BufferSize::new(std::mem::size_of::<Raster>() as u64),
            }),
        }
    }
}

fn bind(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}
