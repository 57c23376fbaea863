//! What the field view shows (field, colormap, range, overlays), the pan/zoom camera, and the
//! per-frame gathering of the shown fields into the f32 arrays the GPU pipelines consume.

use super::colormap::Colormap;
pub use super::slice::Slice;
use super::streamlines::{self, Integrator};
use crate::solver::ValueStats;
use crate::solver::rotor::Rotor;
use glam::{Mat4, Vec2, Vec3};

/// Colour range of the field view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Range {
    /// From the data of each frame, smallest to largest value (symmetric about zero for the
    /// diverging colormap).
    Auto,
    /// From the 1st to the 99th percentile of each frame's data (symmetric as `Auto`): the
    /// few values of a singularity (the cavity's lid corners in vorticity, a shock in
    /// schlieren) saturate instead of washing out the rest of the field.
    Robust,
    Fixed {
        min: f64,
        max: f64,
    },
}

/// Contour lines of the shown field or of another one.
#[derive(Clone, Debug, PartialEq)]
pub struct Contours {
    pub enabled: bool,
    /// Number of iso-levels, evenly spaced inside the field's range.
    pub levels: u32,
    /// Field to contour; `None` contours the shown field.
    pub field: Option<String>,
}

/// Where streamlines start.
#[derive(Clone, Debug, PartialEq)]
pub enum Seeding {
    Off,
    /// Centres of an `n * n` lattice over the domain.
    Grid {
        n: usize,
    },
    /// `count` seeds on the segment the user drew.
    Rake {
        a: [f64; 2],
        b: [f64; 2],
        count: usize,
    },
    /// Where the user clicked.
    Points(Vec<[f64; 2]>),
    /// Evenly spaced lines (Jobard & Lefer 1997), `separation` (a fraction of the domain's
    /// larger side) apart.
    Even {
        separation: f64,
    },
}

impl Seeding {
    /// The seeds of a lattice, rake or points on the rectangle `origin + [0, extent]` (at most
    /// [`streamlines::MAX_GRID_SEEDS`] a side, [`streamlines::MAX_SEEDS`] on a rake or
    /// clicked); none when off or evenly spaced (that seeds itself as it traces).
    pub fn seeds(&self, origin: [f64; 2], extent: [f64; 2]) -> Vec<[f64; 2]> {
        match self {
            Seeding::Off | Seeding::Even { .. } => Vec::new(),
            Seeding::Grid { n } => {
                let n = (*n).min(streamlines::MAX_GRID_SEEDS);
                streamlines::grid_seeds(origin, extent, n, n)
            }
            Seeding::Rake { a, b, count } => {
                streamlines::rake_seeds(*a, *b, (*count).min(streamlines::MAX_SEEDS))
            }
            Seeding::Points(p) => p[..p.len().min(streamlines::MAX_SEEDS)].to_vec(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Streamlines {
    pub seeding: Seeding,
    pub integrator: Integrator,
    /// Length limit of each trace, in multiples of the domain's larger extent.
    pub max_length: f64,
}

/// Everything the 2D view draws.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewSettings {
    pub field: String,
    pub colormap: Colormap,
    pub range: Range,
    pub log_scale: bool,
    pub contours: Contours,
    pub streamlines: Streamlines,
    /// Velocity arrows, this many across the domain's width (2 to [`MAX_ARROWS`]).
    pub arrows: Option<u32>,
    /// The plane of a 3D state the field view shows (2D states: always `z`).
    pub slice: Slice,
    /// The 3D view of a 3D state.
    pub view3d: View3d,
}

/// The 3D view of a 3D state ([`crate::render::scene3d`]): the domain's box, the [`Slice`] in
/// place, isosurfaces.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct View3d {
    /// Draw the 3D view (else the slice alone, flat, as a 2D field).
    pub enabled: bool,
    /// Draw the slice in the 3D view.
    pub slice: bool,
    /// The isosurfaces' field, and their levels (at most
    /// [`crate::render::surface::MAX_LEVELS`]; none: one chosen from the data when shown).
    pub iso_field: Option<String>,
    pub iso_levels: Vec<f64>,
    /// The field colouring the isosurfaces, through its colormap ([`default_colormap`]; none:
    /// a colour per level), and their opacity when transparent (0 to 1; none: opaque).
    pub iso_colour: Option<String>,
    pub iso_opacity: Option<f32>,
    /// Direct volume rendering of a field ([`crate::render::volume_render`]), when on.
    pub volume: Option<VolumeSettings>,
    /// Slices beyond the view's own [`ViewSettings::slice`], drawn with it in the 3D view (at
    /// most [`MAX_SLICES`] in all), each coloured, contoured and with arrows as it is.
    pub more_slices: Vec<Slice>,
}

/// Most slices the 3D view draws at once.
pub const MAX_SLICES: usize = 3;

/// The volume rendering's field and transfer function: the field's colormap
/// ([`default_colormap`]) and these opacities per unit length of one cell at 0, 1/3, 2/3 and 1
/// of its colour scale, linear in between.
#[derive(Clone, Debug, PartialEq)]
pub struct VolumeSettings {
    pub field: String,
    pub opacity: [f32; 4],
}

impl VolumeSettings {
    /// The opacity curve a volume rendering starts with: clear at the low end of the scale,
    /// at the top a cell's length takes half of the light.
    pub const DEFAULT_OPACITY: [f32; 4] = [0.0, 0.03, 0.15, 0.5];

    pub fn of(field: &str) -> VolumeSettings {
        VolumeSettings {
            field: field.to_string(),
            opacity: Self::DEFAULT_OPACITY,
        }
    }
}

impl View3d {
    /// The view a 3D case opens with: the slice, and isosurfaces of `iso_field`.
    pub fn opening(iso_field: Option<&str>) -> View3d {
        View3d {
            enabled: true,
            slice: true,
            iso_field: iso_field.map(str::to_string),
            iso_levels: Vec::new(),
            iso_colour: None,
            iso_opacity: None,
            volume: None,
            more_slices: Vec::new(),
        }
    }

    /// The further slices the 3D view draws ([`View3d::more_slices`]; none when the slice is
    /// hidden or the 3D view off).
    pub fn shown_more_slices(&self) -> &[Slice] {
        if self.enabled && self.slice {
            &self.more_slices[..self.more_slices.len().min(MAX_SLICES - 1)]
        } else {
            &[]
        }
    }

    /// A further slice, normal to the first axis no shown slice is normal to (else x), at the
    /// middle; none when [`MAX_SLICES`] are shown.
    pub fn add_slice(&mut self, first: &Slice) {
        if 1 + self.more_slices.len() >= MAX_SLICES {
            return;
        }
        let taken = |a: usize| first.axis == a || self.more_slices.iter().any(|s| s.axis == a);
        let axis = (0..3).find(|&a| !taken(a)).unwrap_or(0);
        self.more_slices.push(Slice { axis, position: 0.5 });
    }

    /// The volume-rendered field, when the 3D view draws it.
    pub fn shown_volume_field(&self) -> Option<&str> {
        self.volume
            .as_ref()
            .filter(|_| self.enabled)
            .map(|v| v.field.as_str())
    }

    /// The isosurfaces' field, when the 3D view draws them.
    pub fn shown_iso_field(&self) -> Option<&str> {
        self.iso_field.as_deref().filter(|_| self.enabled)
    }

    /// The field colouring the isosurfaces, when the 3D view draws them so.
    pub fn shown_iso_colour(&self) -> Option<&str> {
        self.iso_colour
            .as_deref()
            .filter(|_| self.shown_iso_field().is_some())
    }
}

/// Most velocity arrows along either side of the domain.
pub const MAX_ARROWS: u32 = 200;

impl ViewSettings {
    /// The fields [`gather`] reads for this view, each named once: the coloured field, the
    /// contoured one (when contours are drawn), and `u` and `v` when arrows or streamlines are
    /// on. The app announces them to the solver ([`crate::solver::Solver::prefetch`]) after a
    /// frame's steps.
    pub fn shown_fields(&self) -> Vec<&str> {
        let mut names = vec![self.field.as_str()];
        if let Some(c) = self.contour_field() {
            names.push(c);
        }
        if self.needs_velocity() {
            names.extend(self.slice.velocity_names());
        }
        if self.arrows.is_some() {
            for s in self.view3d.shown_more_slices() {
                names.extend(s.velocity_names());
            }
        }
        if self.traces_in_space() {
            names.extend(["u", "v", "w"]);
        }
        names.extend(self.view3d.shown_iso_field());
        names.extend(self.view3d.shown_iso_colour());
        names.extend(self.view3d.shown_volume_field());
        let mut unique = Vec::with_capacity(names.len());
        for n in names {
            if !unique.contains(&n) {
                unique.push(n);
            }
        }
        unique
    }

    /// The contoured field, when contours are drawn.
    pub(super) fn contour_field(&self) -> Option<&str> {
        (self.contours.enabled && self.contours.levels > 0)
            .then(|| self.contours.field.as_deref().unwrap_or(&self.field))
    }

    /// Whether streamlines are traced in space, from seeds on the slice, for the 3D view (a
    /// lattice, rake or points; evenly spaced lines stay in the slice's plane).
    pub fn traces_in_space(&self) -> bool {
        self.view3d.enabled
            && matches!(
                self.streamlines.seeding,
                Seeding::Grid { .. } | Seeding::Rake { .. } | Seeding::Points(_)
            )
    }

    /// Whether arrows or streamlines need the velocity.
    pub(super) fn needs_velocity(&self) -> bool {
        self.arrows.is_some() || self.streamlines.seeding != Seeding::Off
    }

    /// The view of `field` with the colormap that suits it (diverging for vorticity).
    pub fn for_field(field: &str) -> ViewSettings {
        ViewSettings {
            field: field.to_string(),
            colormap: default_colormap(field),
            range: default_range(field),
            log_scale: false,
            contours: Contours {
                enabled: false,
                levels: 12,
                field: None,
            },
            streamlines: Streamlines {
                seeding: Seeding::Off,
                integrator: Integrator::Rk45 { tolerance: 1e-5 },
                max_length: 4.0,
            },
            arrows: None,
            slice: Slice::default(),
            view3d: View3d::default(),
        }
    }
}

/// Robust (percentile) ranges for fields whose extremes sit in a few cells (derivatives of the
/// velocity or density), the full data range otherwise.
pub fn default_range(field: &str) -> Range {
    match field {
        "vorticity"
        | "vorticity_x"
        | "vorticity_y"
        | "vorticity_z"
        | "vorticity_magnitude"
        | "q_criterion"
        | "lambda2"
        | "helicity"
        | "schlieren"
        | "divergence" => Range::Robust,
        _ => Range::Auto,
    }
}

/// Diverging for signed fields centred on zero (vorticity and its components, the vortex
/// criteria, helicity), viridis otherwise.
pub fn default_colormap(field: &str) -> Colormap {
    match field {
        "vorticity" | "vorticity_x" | "vorticity_y" | "vorticity_z" | "q_criterion" | "lambda2"
        | "helicity" => Colormap::Diverging,
        _ => Colormap::Viridis,
    }
}

/// Pan/zoom state: the world point at the viewport centre and a zoom factor relative to the view
/// that fits the whole domain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    pub center: Vec2,
    pub zoom: f32,
}

impl Camera {
    /// The view of the whole rectangle `origin + [0, extent]`.
    pub fn fit(origin: [f64; 2], extent: [f64; 2]) -> Camera {
        Camera {
            center: Vec2::new(
                (origin[0] + 0.5 * extent[0]) as f32,
                (origin[1] + 0.5 * extent[1]) as f32,
            ),
            zoom: 1.0,
        }
    }

    /// Pixels per world unit in a viewport of `viewport` pixels showing `extent` at zoom 1 with a margin.
    pub fn pixels_per_unit(&self, viewport: Vec2, extent: [f64; 2]) -> f32 {
        let fit = (viewport.x / extent[0] as f32).min(viewport.y / extent[1] as f32) * 0.94;
        fit * self.zoom
    }

    /// World -> clip-space transform (y up) for a viewport of `viewport` pixels.
    pub fn world_to_clip(&self, viewport: Vec2, extent: [f64; 2]) -> Mat4 {
        let s = self.pixels_per_unit(viewport, extent);
        Mat4::from_scale(Vec3::new(2.0 * s / viewport.x, 2.0 * s / viewport.y, 1.0))
            * Mat4::from_translation(Vec3::new(-self.center.x, -self.center.y, 0.0))
    }

    /// The world point under a pixel position measured from the viewport's top-left corner.
    pub fn screen_to_world(&self, pixel: Vec2, viewport: Vec2, extent: [f64; 2]) -> Vec2 {
        let s = self.pixels_per_unit(viewport, extent);
        let d = pixel - 0.5 * viewport;
        self.center + Vec2::new(d.x, -d.y) / s
    }

    /// The pixel position (from the viewport's top-left corner) of a world point; the inverse of
    /// [`Camera::screen_to_world`].
    pub fn world_to_screen(&self, world: Vec2, viewport: Vec2, extent: [f64; 2]) -> Vec2 {
        let s = self.pixels_per_unit(viewport, extent);
        let d = (world - self.center) * s;
        0.5 * viewport + Vec2::new(d.x, -d.y)
    }

    /// Moves the view by a pixel drag.
    pub fn pan(&mut self, delta_pixels: Vec2, viewport: Vec2, extent: [f64; 2]) {
        let s = self.pixels_per_unit(viewport, extent);
        self.center -= Vec2::new(delta_pixels.x, -delta_pixels.y) / s;
    }

    /// Zooms by `factor` keeping the world point under `pixel` fixed.
    pub fn zoom_at(&mut self, pixel: Vec2, factor: f32, viewport: Vec2, extent: [f64; 2]) {
        let before = self.screen_to_world(pixel, viewport, extent);
        self.zoom = (self.zoom * factor).clamp(0.05, 200.0);
        let after = self.screen_to_world(pixel, viewport, extent);
        self.center += before - after;
    }
}

/// The arrays and numbers one frame of the 2D view is drawn from.
#[derive(Clone, Debug, Default)]
pub struct FrameData {
    /// Cells of the shown array.
    pub n: [usize; 2],
    pub origin: [f64; 2],
    pub extent: [f64; 2],
    /// The shown field at cell centres, `x` fastest (empty when it is `on_device`).
    pub field: Vec<f32>,
    /// The shown field and the contoured one in GPU memory the solver wrote them into
    /// ([`super::device_frame`]) instead of `field` and `contour`'s values.
    pub on_device: Option<OnDevice>,
    /// Colour range; with the log scale `lo > 0` is the smallest magnitude resolved.
    pub range: [f32; 2],
    pub log_scale: bool,
    pub diverging: bool,
    pub colormap: Option<Colormap>,
    /// Contoured field (same layout as `field`), its level count and range.
    pub contour: Option<(Vec<f32>, u32, [f32; 2])>,
    /// Cell-centred velocity for arrows.
    pub velocity: Option<(Vec<f32>, Vec<f32>)>,
    /// Arrow lattice and world length per unit speed.
    pub arrows: Option<([u32; 2], f32)>,
    /// Streamline segments `(x0, y0, x1, y1)` in world coordinates.
    pub segments: Vec<[f32; 4]>,
    /// A 3D state's streamlines in space, points `(x, y, z, value of the shown field)` in world
    /// coordinates (empty unless [`ViewSettings::traces_in_space`]).
    pub paths: Vec<Vec<[f32; 4]>>,
    /// A 3D state's isosurface field over the whole grid (cell centres, x fastest; empty
    /// unless the 3D view draws isosurfaces).
    pub volume: Vec<f32>,
    /// The field colouring the isosurfaces over the whole grid (as `volume`; empty unless
    /// [`View3d::iso_colour`] is shown) and its colour range.
    pub iso_colour: Vec<f32>,
    pub iso_colour_range: [f32; 2],
    /// A 3D state's volume-rendered field over the whole grid (as `volume`; empty unless the
    /// 3D view renders one) and its colour range.
    pub rendered: Vec<f32>,
    pub rendered_range: [f32; 2],
    /// The 3D view's further slices ([`View3d::more_slices`], in order): each plane's field,
    /// contours and arrows, on this frame's colour and contour scales.
    pub more_slices: Vec<FrameData>,
    /// A 3D state's rotor and the state's time (where its blades stand), drawn as its disk.
    pub rotor: Option<(Rotor, f64)>,
}

/// A frame's fields drawn from device memory: buffers of (at least) the frame's `n[0] * n[1]`
/// f32 values, laid out as [`FrameData::field`], and of a 3D state's whole grid.
#[derive(Clone, Debug)]
pub struct OnDevice {
    pub field: wgpu::Buffer,
    /// The contoured field's buffer where contours are drawn (the level count and range are in
    /// [`FrameData::contour`], whose values are then empty).
    pub contour: Option<wgpu::Buffer>,
    /// A 3D state's isosurface field over the whole grid, in place of [`FrameData::volume`].
    pub volume: Option<wgpu::Buffer>,
}

/// The colour range of `data` under `range` (see [`FrameData::range`]).
pub fn color_range(data: &[f32], range: Range, log_scale: bool, diverging: bool) -> [f32; 2] {
    let stats = ValueStats::of(data, range == Range::Robust);
    color_range_of(&stats, range, log_scale, diverging)
}

/// The colour range under `range` of a field with statistics `stats` (the sample is needed for
/// [`Range::Robust`] only): what [`color_range`] gives for the field's values, from statistics
/// the device computed when the field never left it.
pub fn color_range_of(stats: &ValueStats, range: Range, log_scale: bool, diverging: bool) -> [f32; 2] {
    let (mut lo, mut hi) = match range {
        Range::Fixed { min, max } => (min as f32, max as f32),
        Range::Auto if stats.min > stats.max => (0.0, 1.0),
        Range::Auto => (stats.min, stats.max),
        Range::Robust => percentiles(&stats.sample, 0.01, 0.99).unwrap_or((0.0, 1.0)),
    };
    if log_scale {
        let top = lo.abs().max(hi.abs());
        let smallest = match range {
            Range::Fixed { min, .. } if min > 0.0 => min as f32,
            _ => stats.smallest_magnitude,
        };
        let top = if top > 0.0 { top } else { 1.0 };
        return [smallest.clamp(top * 1e-6, top * 0.999), top];
    }
    if diverging {
        let m = lo.abs().max(hi.abs());
        (lo, hi) = (-m, m);
    }
    if !(hi > lo) {
        let pad = lo.abs().max(1e-12) * 1e-3;
        (lo, hi) = (lo - pad, hi + pad);
    }
    [lo, hi]
}

/// The `a` and `b` quantiles (`0 <= a < b <= 1`) of the finite values of `sample` (a field's
/// [`ValueStats::sample`]: at most 2^16 of its values taken at an even stride; the range of a
/// smooth field barely moves with the stride, and the cost stays bounded at any grid size);
/// `None` without finite values.
fn percentiles(sample: &[f32], a: f64, b: f64) -> Option<(f32, f32)> {
    let mut s: Vec<f32> = sample.iter().copied().filter(|v| v.is_finite()).collect();
    if s.is_empty() {
        return None;
    }
    let last = s.len() - 1;
    let (ia, ib) = (
        (a * last as f64).round() as usize,
        (b * last as f64).round() as usize,
    );
    let lo = *s.select_nth_unstable_by(ia, f32::total_cmp).1;
    let hi = *s.select_nth_unstable_by(ib, f32::total_cmp).1;
    Some((lo, hi))
}

/// The x-t diagram of a 1D run as a 2D frame: `rows` of `nx` values, x across, time upwards
/// from 0 to `t_end`, drawn square (the time axis is scaled to the domain length).
pub fn xt_frame(
    nx: usize,
    rows: &[f32],
    x0: f64,
    length: f64,
    t_end: f64,
    view: &ViewSettings,
    out: &mut FrameData,
) -> Option<()> {
    if nx == 0 || rows.len() < 2 * nx || !(t_end > 0.0) {
        return None;
    }
    out.n = [nx, rows.len() / nx];
    out.origin = [x0, 0.0];
    out.extent = [length, length];
    out.field.clear();
    out.field.extend_from_slice(&rows[..out.n[0] * out.n[1]]);
    out.colormap = Some(view.colormap);
    out.log_scale = view.log_scale;
    out.diverging = view.colormap.is_diverging();
    out.range = color_range(&out.field, view.range, view.log_scale, out.diverging);
    out.contour = None;
    out.velocity = None;
    out.arrows = None;
    out.segments.clear();
    out.volume.clear();
    Some(())
}

/// An isosurface level chosen from a field's values: the 95th percentile of the finite ones
/// (a surface around the strongest 5 % of the field); `None` when none is finite or that
/// percentile is 0 (a state at rest: the view chooses again from a later state).
pub fn iso_level_of(values: &[f32]) -> Option<f64> {
    let mut v: Vec<f32> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    let k = (v.len() - 1) * 95 / 100;
    let (_, at, _) = v.select_nth_unstable_by(k, f32::total_cmp);
    (*at != 0.0).then_some(*at as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_level_of_a_field_is_its_95th_percentile() {
        let v: Vec<f32> = (0..101).rev().map(|x| x as f32).chain([f32::NAN]).collect();
        assert_eq!(iso_level_of(&v), Some(95.0));
        assert_eq!(iso_level_of(&[f32::NAN]), None);
        assert_eq!(iso_level_of(&[0.0; 10]), None);
    }

    #[test]
    fn camera_round_trips_and_zooms_about_the_cursor() {
        let ext = [1.0, 1.0];
        let vp = Vec2::new(800.0, 600.0);
        let mut c = Camera::fit([0.0, 0.0], ext);
        let centre = c.screen_to_world(0.5 * vp, vp, ext);
        assert!((centre - Vec2::new(0.5, 0.5)).length() < 1e-6);
        let p = Vec2::new(100.0, 200.0);
        let w = c.screen_to_world(p, vp, ext);
        let clip = c.world_to_clip(vp, ext) * w.extend(0.0).extend(1.0);
        let back = Vec2::new((clip.x + 1.0) * 0.5 * vp.x, (1.0 - clip.y) * 0.5 * vp.y);
        assert!((back - p).length() < 1e-3);
        assert!((c.world_to_screen(w, vp, ext) - p).length() < 1e-3);
        c.zoom_at(p, 2.0, vp, ext);
        assert!((c.screen_to_world(p, vp, ext) - w).length() < 1e-5);
        assert!((c.world_to_screen(w, vp, ext) - p).length() < 1e-3);
    }

    #[test]
    fn shown_fields_are_those_gather_reads_each_once() {
        let mut v = ViewSettings::for_field("vorticity");
        assert_eq!(v.shown_fields(), ["vorticity"]);
        v.contours.enabled = true;
        assert_eq!(v.shown_fields(), ["vorticity"], "contours of the coloured field");
        v.contours.field = Some("stream_function".into());
        assert_eq!(v.shown_fields(), ["vorticity", "stream_function"]);
        v.contours.levels = 0;
        assert_eq!(v.shown_fields(), ["vorticity"], "no levels, no contours");
        v.arrows = Some(20);
        assert_eq!(v.shown_fields(), ["vorticity", "u", "v"]);
        let mut v = ViewSettings::for_field("u");
        v.streamlines.seeding = Seeding::Grid { n: 8 };
        assert_eq!(v.shown_fields(), ["u", "v"]);
        // The 3D view traces in space from seeds on the slice (x normal: in-plane v and w).
        v.view3d = View3d::opening(Some("q_criterion"));
        v.slice.axis = 0;
        assert!(v.traces_in_space());
        assert_eq!(v.shown_fields(), ["u", "v", "w", "q_criterion"]);
        v.streamlines.seeding = Seeding::Even { separation: 0.05 };
        assert!(!v.traces_in_space(), "evenly spaced lines stay in the slice");
        assert_eq!(v.shown_fields(), ["u", "v", "w", "q_criterion"]);
    }

    #[test]
    fn ranges() {
        let d = [-1.0f32, 0.5, 2.0];
        assert_eq!(color_range(&d, Range::Auto, false, false), [-1.0, 2.0]);
        assert_eq!(color_range(&d, Range::Auto, false, true), [-2.0, 2.0]);
        assert_eq!(
            color_range(&d, Range::Fixed { min: 0.0, max: 3.0 }, false, false),
            [0.0, 3.0]
        );
        assert_eq!(color_range(&d, Range::Auto, true, false), [0.5, 2.0]);
        // 1000 values in [0, 1) and two spikes: the robust range ignores the spikes.
        let mut d: Vec<f32> = (0..1000).map(|i| i as f32 / 1000.0).collect();
        d.extend([30.0, -30.0, f32::NAN]);
        let [lo, hi] = color_range(&d, Range::Robust, false, false);
        assert!((lo - 0.009).abs() < 2e-3 && (hi - 0.99).abs() < 2e-3, "{lo} {hi}");
        assert_eq!(color_range(&d, Range::Robust, false, true), [-hi, hi]);
        assert_eq!(color_range(&d, Range::Auto, false, false), [-30.0, 30.0]);
    }
}
