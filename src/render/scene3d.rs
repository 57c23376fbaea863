//! The 3D view of a 3D state, for the window, its screenshots and videos, and `flowlab render`
//! alike: the domain's bounding box and a rotor's disk, the view's [`Slice`](super::view::Slice) and its further
//! slices drawn in place ([`super::slice_plane`]), the isosurfaces of the view's field ([`super::surface`]) and the
//! streamlines as tubes coloured like the slice ([`super::stream_tubes`]), seen through an
//! [`OrbitCamera`] and depth-tested together.

use super::camera::OrbitCamera;
use super::colormap::{Colormap, scale_position};
use super::field_lattice::ColouredField;
use super::slice_plane::SlicePlane;
use super::stream_tubes::StreamTubes;
use super::surface::{SurfaceFrame, SurfaceScene, depth_cleared, disk_lines};
use super::surface_raster::Rasteriser;
use super::view::default_colormap;
use super::view::{FrameData, ViewSettings};
use super::volume_render::{VolumeFrame, VolumeRenderer};
use crate::solver::grid::Grid;
use glam::{DVec3, Vec3};

/// The pipelines and GPU state of the 3D view.
pub struct Scene3d {
    surfaces: SurfaceScene,
    /// The view's slice and its further slices, the first `shown_slices` drawn.
    slices: Vec<SlicePlane>,
    shown_slices: usize,
    tubes: StreamTubes,
    volume: VolumeRenderer,
    /// The targets' format (for slices made later).
    format: wgpu::TextureFormat,
}

/// The usage of the 3D view's depth buffer: drawn into, then read by the volume rendering.
pub const DEPTH_USAGE: wgpu::TextureUsages =
    wgpu::TextureUsages::RENDER_ATTACHMENT.union(wgpu::TextureUsages::TEXTURE_BINDING);

/// The streamline tubes' radius, a fraction of the domain's diagonal.
const TUBE_RADIUS: f32 = 0.0035;

/// The domain `grid` covers, as a box `(min, max)` in world coordinates.
pub fn domain(grid: &Grid) -> (Vec3, Vec3) {
    let min = DVec3::from_slice(&grid.origin).as_vec3();
    let extent = DVec3::new(grid.extent(0), grid.extent(1), grid.extent(2)).as_vec3();
    (min, min + extent)
}

impl Scene3d {
    /// The pipelines drawing into targets of `format` (with a [`super::surface::DEPTH`] attachment).
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Scene3d {
        Scene3d {
            surfaces: SurfaceScene::new(device, format),
            slices: Vec::new(),
            shown_slices: 0,
            tubes: StreamTubes::new(device, format),
            volume: VolumeRenderer::new(device, format),
            format,
        }
    }

    /// Uploads one frame: `frame` gathered for `view` ([`super::gather`]: its 2D field is the
    /// slice, its volume the isosurfaces' field) of a state on `grid`. The levels are
    /// `view.view3d.iso_levels`. Only a new frame needs this; [`Scene3d::set_camera`] places
    /// the prepared one before every draw.
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        frame: &FrameData,
        view: &ViewSettings,
        grid: &Grid,
    ) -> Result<(), String> {
        let (min, max) = domain(grid);
        let h = DVec3::from_slice(&grid.spacing).as_vec3();
        let iso_on_device = frame.on_device.as_ref().and_then(|d| d.volume.as_ref());
        let levels: Vec<f32> = if frame.volume.is_empty() && iso_on_device.is_none() {
            Vec::new()
        } else {
            view.view3d.iso_levels.iter().map(|l| *l as f32).collect()
        };
        let coloured = |values, range, name: &str| {
            let colormap = default_colormap(name);
            ColouredField {
                values,
                n: grid.n.map(|m| m as u32),
                origin: min + 0.5 * h,
                spacing: h,
                range,
                log_scale: false,
                diverging: colormap.is_diverging(),
                colormap,
            }
        };
        let v3 = &view.view3d;
        let rotor_lines = frame
            .rotor
            .as_ref()
            .map(|(r, t)| disk_lines(r, *t))
            .unwrap_or_default();
        let surfaces = SurfaceFrame {
            values: &frame.volume,
            on_device: iso_on_device,
            n: grid.n.map(|m| m as u32),
            origin: min + 0.5 * h,
            spacing: h,
            levels: &levels,
            colour_by: v3
                .shown_iso_colour()
                .filter(|_| !frame.iso_colour.is_empty())
                .map(|name| coloured(&frame.iso_colour, frame.iso_colour_range, name)),
            opacity: v3.iso_opacity.unwrap_or(1.0),
            min,
            max,
            rotor_lines: &rotor_lines,
        };
        self.surfaces.prepare(device, queue, &surfaces)?;
        let colormap = frame.colormap.unwrap_or(Colormap::Viridis);
        let colour =
            |v: f32| colormap.color(scale_position(v, frame.range, frame.log_scale, frame.diverging) as f64);
        let radius = TUBE_RADIUS * min.distance(max);
        self.tubes.prepare(device, queue, &frame.paths, radius, colour)?;
        let rendered = v3.volume.as_ref().filter(|_| !frame.rendered.is_empty());
        let volume = rendered.map(|v| VolumeFrame {
            field: coloured(&frame.rendered, frame.rendered_range, &v.field),
            min,
            max,
            opacity: v.opacity,
        });
        self.volume.prepare(device, queue, volume.as_ref())?;
        self.shown_slices = 0;
        if view.view3d.slice && (!frame.field.is_empty() || frame.on_device.is_some()) {
            let further = view.view3d.shown_more_slices().iter().zip(&frame.more_slices);
            for (s, plane) in std::iter::once((&view.slice, frame)).chain(further) {
                if self.slices.len() == self.shown_slices {
                    self.slices.push(SlicePlane::new(device, self.format));
                }
                let coordinate = s.coordinate(grid.origin[s.axis], grid.extent(s.axis)) as f32;
                self.slices[self.shown_slices].prepare(
                    device,
                    queue,
                    plane,
                    s.plane_axes(),
                    s.axis,
                    coordinate,
                );
                self.shown_slices += 1;
            }
        }
        Ok(())
    }

    /// Sees the prepared frame through `camera` in a view `aspect` = width / height wide.
    pub fn set_camera(&mut self, queue: &wgpu::Queue, camera: &OrbitCamera, aspect: f32) {
        self.surfaces.set_camera(queue, camera, aspect);
        self.tubes.set_camera(queue, camera, aspect);
        self.volume.set_camera(camera, aspect);
        for slice in &self.slices[..self.shown_slices] {
            slice.set_camera(queue, camera.view_projection(aspect));
        }
    }

    /// Triangles of the prepared isosurfaces.
    pub fn triangles(&self) -> u64 {
        self.surfaces.triangles()
    }

    /// How the opaque isosurfaces are drawn (in compute unless set otherwise).
    pub fn set_rasteriser(&mut self, rasteriser: Rasteriser) {
        self.surfaces.rasteriser = rasteriser;
    }

    /// Records the prepared frame over `target`, cleared to `background`, in the rectangle
    /// `canvas` (x, y, width, height in pixels): the isosurfaces rasterised in compute, the
    /// view's pass with `depth` (a [`super::surface::DEPTH`] texture of the target's size
    /// made with [`DEPTH_USAGE`], cleared to the far plane), then the volume rendering, when
    /// the frame has one, in a pass of its own that reads that depth.
    #[allow(clippy::too_many_arguments)]
    pub fn draw(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        depth: &wgpu::TextureView,
        canvas: [f32; 4],
        background: wgpu::Color,
    ) {
        self.surfaces.record(device, queue, encoder, canvas);
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("3D view"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: target,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(background),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: Some(depth_cleared(depth)),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_viewport(canvas[0], canvas[1], canvas[2], canvas[3], 0.0, 1.0);
            self.surfaces.paint(&mut pass);
            self.tubes.paint(&mut pass);
            for slice in &self.slices[..self.shown_slices] {
                slice.paint(&mut pass);
            }
            self.surfaces.paint_transparent(&mut pass);
        }
        self.volume.draw(device, queue, encoder, target, depth, canvas);
    }
}
