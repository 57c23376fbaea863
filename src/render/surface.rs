//! The 3D view of isosurfaces (`shaders/surface.wgsl`): a scalar field of a 3D case uploaded
//! once per frame as a storage buffer, each level's surface extracted on the GPU
//! ([`super::isosurface::gpu`]) into a vertex buffer drawn straight from there, in a colour per
//! level or coloured by another field (sampled at the vertices), lit by a headlight,
//! depth-tested, opaque (rasterised in compute, [`super::surface_raster`], or through the
//! pipeline) or transparent (drawn after the opaque scene, unsorted, without writing depth),
//! inside the domain's bounding box, seen through an [`OrbitCamera`].

use super::camera::OrbitCamera;
use super::colormap::Colormap;
use super::field_lattice::{self, ColouredField, FieldBuffers, FieldLattice};
use super::isosurface::gpu::{Extractor, GpuLattice, Surface, Vertex};
use super::pipeline::{Depth, PipelineSpec, STORAGE, UNIFORM, entry, render_pipeline};
use super::surface_raster::{RasterLevel, Rasteriser, SurfaceRaster};
use crate::solver::rotor::Rotor;
use bytemuck::{Pod, Zeroable};
use glam::Vec3;

const SHADER: &str = include_str!("../../shaders/surface.wgsl");
/// The depth buffer's format.
pub const DEPTH: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// Most isosurface levels drawn at once.
pub const MAX_LEVELS: usize = 8;
/// The bounding box's colour.
const BOX: [f32; 4] = [0.75, 0.75, 0.78, 1.0];
/// The rotor disk's colour.
const ROTOR: [f32; 4] = [1.0, 0.55, 0.1, 1.0];

/// `Uniforms` in the shader.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Uniforms {
    view_projection: [[f32; 4]; 4],
    light: [f32; 4],
    colour: [f32; 4],
    /// The field colouring the surfaces; `range[3]` 1 when it does.
    lattice: FieldLattice,
}

/// What one frame shows: `n` lattice values of a field (x fastest, point `(i, j, k)` at
/// `origin + spacing * (i, j, k)`), the surfaces at `levels` coloured by `colour_by` (else a
/// colour per level) with `opacity` (1: opaque), the domain `min..max`.
pub struct SurfaceFrame<'a> {
    /// The field's values on the host, uploaded here; or, where `on_device` is given, that
    /// buffer of them is extracted from as it is (the solver wrote it, [`crate::render::device_frame`]).
    pub values: &'a [f32],
    pub on_device: Option<&'a wgpu::Buffer>,
    pub n: [u32; 3],
    pub origin: Vec3,
    pub spacing: Vec3,
    pub levels: &'a [f32],
    pub colour_by: Option<ColouredField<'a>>,
    pub opacity: f32,
    pub min: Vec3,
    pub max: Vec3,
    /// Line-list vertices of a rotor's disk ([`disk_lines`]), drawn with the box.
    pub rotor_lines: &'a [[f32; 3]],
}

/// One drawn item's uniforms and its colour.
struct Item {
    uniforms: wgpu::Buffer,
    group: wgpu::BindGroup,
    colour: [f32; 4],
}

/// The pipelines and the GPU state of the 3D view.
pub struct SurfaceScene {
    surfaces: wgpu::RenderPipeline,
    transparent: wgpu::RenderPipeline,
    lines: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    extractor: Extractor,
    field: Option<wgpu::Buffer>,
    /// The field colouring the surfaces (a placeholder when none does) and its lattice.
    colouring: FieldBuffers,
    lattice: FieldLattice,
    opacity: f32,
    /// Per level: its surface and uniforms.
    levels: Vec<(Option<Surface>, Item)>,
    frame: Item,
    /// The box's 24 vertices, then the rotor's `rotor_vertices`.
    box_lines: wgpu::Buffer,
    rotor: Item,
    rotor_vertices: u32,
    raster: SurfaceRaster,
    /// How the opaque surfaces are drawn.
    pub rasteriser: Rasteriser,
    /// Whether the last [`SurfaceScene::record`] rasterised them (else the pipeline draws them).
    rasterised: std::cell::Cell<bool>,
    /// The last reason the compute rasteriser refused a frame (logged once).
    refusal: std::cell::RefCell<Option<String>>,
}

impl SurfaceScene {
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> SurfaceScene {
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("surface view"),
            entries: &[entry(0, UNIFORM), entry(1, STORAGE), entry(2, STORAGE)],
        });
        let shader = [field_lattice::SHADER, SHADER].concat();
        let pipeline = |label, vertex, fragment, buffer: wgpu::VertexBufferLayout, topology, depth, blend| {
            render_pipeline(
                device,
                &PipelineSpec {
                    label,
                    shader: &shader,
                    layout: &layout,
                    vertex,
                    fragment,
                    buffers: &[Some(buffer)],
                    topology,
                    depth,
                    blend,
                    format,
                },
            )
        };
        let triangles = wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<Vertex>() as u64,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &wgpu::vertex_attr_array![0 => Float32x4, 1 => Float32x4],
        };
        let surfaces = pipeline(
            "isosurfaces",
            "vs_surface",
            "fs_surface",
            triangles.clone(),
            wgpu::PrimitiveTopology::TriangleList,
            Depth::TestAndWrite,
            None,
        );
        let transparent = pipeline(
            "transparent isosurfaces",
            "vs_surface",
            "fs_surface",
            triangles,
            wgpu::PrimitiveTopology::TriangleList,
            Depth::Test,
            Some(wgpu::BlendState::PREMULTIPLIED_ALPHA_BLENDING),
        );
        let lines = pipeline(
            "bounding box",
            "vs_line",
            "fs_line",
            wgpu::VertexBufferLayout {
                array_stride: 12,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &wgpu::vertex_attr_array![0 => Float32x3],
            },
            wgpu::PrimitiveTopology::LineList,
            Depth::TestAndWrite,
            None,
        );
        let colouring = FieldBuffers::new(device, "field colouring the surfaces");
        let frame = item(device, &layout, &colouring, BOX);
        let rotor = item(device, &layout, &colouring, ROTOR);
        let box_lines = line_buffer(device, 24);
        SurfaceScene {
            surfaces,
            transparent,
            lines,
            extractor: Extractor::new(device),
            field: None,
            colouring,
            lattice: FieldLattice::default(),
            opacity: 1.0,
            levels: Vec::new(),
            frame,
            box_lines,
            rotor,
            rotor_vertices: 0,
            layout,
            raster: SurfaceRaster::new(device, format, &shader),
            rasteriser: Rasteriser::default(),
            rasterised: std::cell::Cell::new(false),
            refusal: std::cell::RefCell::new(None),
        }
    }

    /// Uploads `frame`'s field and box and extracts its surfaces; [`SurfaceScene::set_camera`]
    /// places them before they are drawn.
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        frame: &SurfaceFrame,
    ) -> Result<(), String> {
        if frame.levels.len() > MAX_LEVELS {
            return Err(format!(
                "at most {MAX_LEVELS} isosurface levels, got {}",
                frame.levels.len()
            ));
        }
        let vertices = 24 + frame.rotor_lines.len() as u64;
        if self.box_lines.size() < 12 * vertices {
            self.box_lines = line_buffer(device, vertices);
        }
        queue.write_buffer(
            &self.box_lines,
            0,
            bytemuck::cast_slice(&box_edges(frame.min, frame.max)),
        );
        queue.write_buffer(&self.box_lines, 24 * 12, bytemuck::cast_slice(frame.rotor_lines));
        self.rotor_vertices = frame.rotor_lines.len() as u32;
        self.opacity = frame.opacity.clamp(0.0, 1.0);
        self.colour_by(device, queue, frame.colour_by.as_ref())?;
        if frame.levels.is_empty() {
            for (surface, _) in &mut self.levels {
                if let Some(s) = surface {
                    s.triangles = 0;
                }
            }
            return Ok(());
        }
        if frame.on_device.is_none() {
            self.upload(device, queue, frame.values)?;
        }
        let field = match frame.on_device {
            Some(buffer) => buffer,
            None => self.field.as_ref().expect("uploaded above"),
        };
        let lattice = GpuLattice {
            values: field,
            n: frame.n,
            origin: frame.origin,
            spacing: frame.spacing,
        };
        while self.levels.len() < frame.levels.len() {
            let it = item(device, &self.layout, &self.colouring, BOX);
            self.levels.push((None, it));
        }
        for (k, &level) in frame.levels.iter().enumerate() {
            let (surface, it) = &mut self.levels[k];
            self.extractor.extract(device, queue, &lattice, level, surface)?;
            it.colour = level_colour(k, frame.levels.len());
        }
        for (surface, _) in &mut self.levels[frame.levels.len()..] {
            if let Some(s) = surface {
                s.triangles = 0;
            }
        }
        Ok(())
    }

    /// Uploads the field's host `values` into the scene's own buffer (made or grown here).
    fn upload(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, values: &[f32]) -> Result<(), String> {
        let bytes = std::mem::size_of_val(values) as u64;
        let limit = super::gpu::storage_buffer_limit(device);
        if bytes > limit {
            return Err(format!(
                "the field is {} MiB, over the GPU's storage buffer limit of {} MiB",
                bytes >> 20,
                limit >> 20
            ));
        }
        if self.field.as_ref().is_none_or(|f| f.size() != bytes) {
            self.field = Some(device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("shown 3D field"),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
        }
        let field = self.field.as_ref().expect("made above");
        queue.write_buffer(field, 0, bytemuck::cast_slice(values));
        Ok(())
    }

    /// Uploads the field colouring the surfaces (`None`: a colour per level), remaking the
    /// bind groups when its buffer grows.
    fn colour_by(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        field: Option<&ColouredField>,
    ) -> Result<(), String> {
        let Some(f) = field else {
            self.lattice = FieldLattice::default();
            return Ok(());
        };
        if self.colouring.upload(device, queue, f)? {
            let fixed = [&mut self.frame, &mut self.rotor];
            for it in fixed.into_iter().chain(self.levels.iter_mut().map(|(_, it)| it)) {
                it.group = group(device, &self.layout, &it.uniforms, &self.colouring);
            }
        }
        self.lattice = f.lattice();
        self.lattice.range[3] = 1.0;
        Ok(())
    }

    /// Sees the box and the surfaces through `camera` in a view `aspect` = width / height wide,
    /// lit by a headlight.
    pub fn set_camera(&self, queue: &wgpu::Queue, camera: &OrbitCamera, aspect: f32) {
        let light = camera.backward();
        let mut u = Uniforms {
            view_projection: camera.view_projection(aspect).to_cols_array_2d(),
            light: [light.x, light.y, light.z, 0.0],
            colour: BOX,
            lattice: self.lattice,
        };
        queue.write_buffer(&self.frame.uniforms, 0, bytemuck::bytes_of(&u));
        u.colour = ROTOR;
        queue.write_buffer(&self.rotor.uniforms, 0, bytemuck::bytes_of(&u));
        for (_, it) in &self.levels {
            u.colour = it.colour;
            u.colour[3] = self.opacity;
            queue.write_buffer(&it.uniforms, 0, bytemuck::bytes_of(&u));
        }
    }

    /// Triangles of the prepared surfaces, all levels.
    pub fn triangles(&self) -> u64 {
        self.levels
            .iter()
            .filter_map(|(s, _)| s.as_ref().map(|s| s.triangles as u64))
            .sum()
    }

    /// Records what must run before the view's pass: the opaque surfaces rasterised in compute
    /// for the rectangle `canvas` (x, y, width, height in pixels) of the target, unless they
    /// are transparent, the pipeline draws them, or the rasteriser refuses (the canvas or a
    /// level past the device's limits: logged, and the pipeline draws them).
    pub fn record(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        canvas: [f32; 4],
    ) {
        self.rasterised.set(false);
        if self.opacity < 1.0 || self.rasteriser == Rasteriser::Pipeline {
            return;
        }
        let levels: Vec<RasterLevel> = self
            .levels
            .iter()
            .filter_map(|(s, it)| {
                s.as_ref().filter(|s| s.triangles > 0).map(|s| RasterLevel {
                    uniforms: &it.uniforms,
                    vertices: &s.vertices,
                    triangles: s.triangles,
                })
            })
            .collect();
        if levels.is_empty() {
            return;
        }
        match self
            .raster
            .record(device, queue, encoder, &self.colouring, &levels, canvas)
        {
            Ok(()) => self.rasterised.set(true),
            Err(e) => {
                let mut last = self.refusal.borrow_mut();
                if last.as_ref() != Some(&e) {
                    log::warn!("{e}: the isosurfaces are drawn through the graphics pipeline");
                    *last = Some(e);
                }
            }
        }
    }

    /// Draws the box and the opaque surfaces into `pass` (which has a [`DEPTH`] attachment),
    /// after [`SurfaceScene::record`].
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'_>) {
        pass.set_pipeline(&self.lines);
        pass.set_bind_group(0, &self.frame.group, &[]);
        pass.set_vertex_buffer(0, self.box_lines.slice(..));
        pass.draw(0..24, 0..1);
        if self.rotor_vertices > 0 {
            pass.set_bind_group(0, &self.rotor.group, &[]);
            pass.draw(24..24 + self.rotor_vertices, 0..1);
        }
        if self.opacity >= 1.0 {
            if self.rasterised.get() {
                self.raster.paint(pass);
            } else {
                self.draw_surfaces(pass, &self.surfaces);
            }
        }
    }

    /// Draws the transparent surfaces into `pass`, after everything opaque.
    pub fn paint_transparent(&self, pass: &mut wgpu::RenderPass<'_>) {
        if self.opacity < 1.0 {
            self.draw_surfaces(pass, &self.transparent);
        }
    }

    fn draw_surfaces(&self, pass: &mut wgpu::RenderPass<'_>, pipeline: &wgpu::RenderPipeline) {
        pass.set_pipeline(pipeline);
        for (surface, it) in &self.levels {
            let Some(s) = surface.as_ref().filter(|s| s.triangles > 0) else {
                continue;
            };
            pass.set_bind_group(0, &it.group, &[]);
            pass.set_vertex_buffer(0, s.vertices.slice(..));
            pass.draw(0..3 * s.triangles, 0..1);
        }
    }
}

/// The 3D view's depth test: nearer fragments win, and are written when `write`.
pub fn depth_test(write: bool) -> wgpu::DepthStencilState {
    wgpu::DepthStencilState {
        format: DEPTH,
        depth_write_enabled: Some(write),
        depth_compare: Some(wgpu::CompareFunction::Less),
        stencil: Default::default(),
        bias: Default::default(),
    }
}

/// A depth attachment of the 3D view on `view`, cleared to the far plane and kept for the
/// volume rendering, which reads it.
pub fn depth_cleared(view: &wgpu::TextureView) -> wgpu::RenderPassDepthStencilAttachment<'_> {
    wgpu::RenderPassDepthStencilAttachment {
        view,
        depth_ops: Some(wgpu::Operations {
            load: wgpu::LoadOp::Clear(1.0),
            // Kept: the volume rendering's pass reads it.
            store: wgpu::StoreOp::Store,
        }),
        stencil_ops: None,
    }
}

/// A uniform buffer and its bind group (with the field `colouring` the surfaces), for an item
/// drawn in `colour`.
fn item(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    colouring: &FieldBuffers,
    colour: [f32; 4],
) -> Item {
    let uniforms = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("surface view uniforms"),
        size: std::mem::size_of::<Uniforms>() as u64,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    Item {
        group: group(device, layout, &uniforms, colouring),
        uniforms,
        colour,
    }
}

/// An item's bind group: its `uniforms`, and the field `colouring` the surfaces.
fn group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    uniforms: &wgpu::Buffer,
    colouring: &FieldBuffers,
) -> wgpu::BindGroup {
    fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
        wgpu::BindGroupEntry {
            binding,
            resource: buffer.as_entire_binding(),
        }
    }
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("surface view"),
        layout,
        entries: &[
            entry(0, uniforms),
            entry(1, &colouring.values),
            entry(2, &colouring.lut),
        ],
    })
}

/// Level `k` of `count`'s colour: spread over the turbo colour map (one level: its middle).
fn level_colour(k: usize, count: usize) -> [f32; 4] {
    let t = if count < 2 {
        0.5
    } else {
        0.15 + 0.7 * k as f64 / (count - 1) as f64
    };
    Colormap::Turbo.color(t).map(|c| f32::from(c) / 255.0)
}

/// A vertex buffer of `vertices` line points (3 floats each).
fn line_buffer(device: &wgpu::Device, vertices: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bounding box and rotor"),
        size: 12 * vertices,
        usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// Segments of a drawn circle.
const CIRCLE_SEGMENTS: usize = 96;

/// The disk of `rotor` at time `time` as line-list vertices: its tip circle, its root
/// cut-out's circle (when it has one) and each blade from root to tip where it stands
/// ([`Rotor::blade_azimuths`]; a uniform disk has none).
pub fn disk_lines(rotor: &Rotor, time: f64) -> Vec<[f32; 3]> {
    let point = |r: f64, psi: f64| rotor.at(r, psi).map(|x| x as f32);
    let mut out = Vec::new();
    let radii = [rotor.radius, rotor.root];
    for r in radii.into_iter().filter(|r| *r > 0.0) {
        for k in 0..CIRCLE_SEGMENTS {
            let psi = |k: usize| std::f64::consts::TAU * k as f64 / CIRCLE_SEGMENTS as f64;
            out.push(point(r, psi(k)));
            out.push(point(r, psi(k + 1)));
        }
    }
    for psi in rotor.blade_azimuths(time) {
        out.push(point(rotor.root, psi));
        out.push(point(rotor.radius, psi));
    }
    out
}

/// The 12 edges of the box `min..max` as 24 line-list vertices.
fn box_edges(min: Vec3, max: Vec3) -> [[f32; 3]; 24] {
    let corner = |i: usize| {
        Vec3::new(
            if i & 1 == 0 { min.x } else { max.x },
            if i & 2 == 0 { min.y } else { max.y },
            if i & 4 == 0 { min.z } else { max.z },
        )
    };
    let mut out = [[0.0; 3]; 24];
    let mut e = 0;
    for a in 0..8usize {
        for bit in [1, 2, 4] {
            if a & bit == 0 {
                out[e] = corner(a).to_array();
                out[e + 1] = corner(a | bit).to_array();
                e += 2;
            }
        }
    }
    out
}

/// The camera of `--camera AZIMUTH,ELEVATION,DISTANCE` (degrees, degrees, a multiple of the
/// distance that frames the box `min..max`).
pub fn camera_from(min: Vec3, max: Vec3, azimuth_deg: f32, elevation_deg: f32, distance: f32) -> OrbitCamera {
    let mut c = OrbitCamera::framing(min, max);
    c.azimuth = 0.0;
    c.elevation = 0.0;
    c.orbit(azimuth_deg.to_radians(), elevation_deg.to_radians());
    c.zoom(distance);
    c
}
