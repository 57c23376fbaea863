//! Reading the solver's fields into one frame of the view ([`FrameData`]): only the fields the
//! view shows, all of one state, a 3D state cut to the view's slice, colour ranges mapped and
//! streamlines traced.

use super::device_frame::{DeviceLink, DeviceRead, Request};
use super::streamlines::{self, GridVelocity, Limits, spatial};
use super::view::{
    FrameData, MAX_ARROWS, OnDevice, Range, Seeding, Slice, ViewSettings, color_range, color_range_of,
    default_colormap, default_range,
};
use crate::solver::grid::Grid;
use crate::solver::rotor::Rotor;
use crate::solver::{self, Solver, ValueStats};
use rayon::prelude::*;

/// A streamline closes when it returns through its seed's section within this many cells of the
/// seed ([`Limits::closure`]): the orbits of a computed vortex spiral by a fraction of a cell
/// per turn, so they never return exactly.
const CLOSURE_CELLS: f64 = 3.0;

/// Reusable buffers for [`gather`].
#[derive(Default)]
pub struct Scratch {
    /// One per name of [`ViewSettings::shown_fields`], in its order.
    fields: Vec<Vec<f64>>,
    velocity: GridVelocity,
    /// A 3D state's velocity and shown field over the whole grid, for streamlines in space.
    velocity_3d: GridVelocity<3>,
    colour_3d: Vec<f64>,
    /// The shown fields on the 3D view's own slice, as `fields` (which keep their whole-grid
    /// size: cutting them in place cost each next read a new allocation of the whole grid).
    on_slice: Vec<Vec<f64>>,
    /// The shown fields on a further slice of the 3D view, as `fields`.
    planes: Vec<Vec<f64>>,
    /// The renderer's link to a CUDA solver's memory, where the window made one: a 2D view of
    /// the latest state without arrows or streamlines is then drawn from the device.
    pub device: Option<DeviceLink>,
    /// The last [`read`]'s fields, when they were written on the device instead of `fields`.
    device_read: Option<DeviceRead>,
}

impl Scratch {
    /// Buffers for a renderer that draws a CUDA solver's 2D fields from the device where it
    /// can (`link`).
    pub fn drawing_from_device(link: DeviceLink) -> Scratch {
        Scratch {
            device: Some(link),
            ..Scratch::default()
        }
    }
}

impl Scratch {
    /// How the last [`read`] of a GPU solver's fields reached the view: from its memory, or
    /// through the host (with the reason where the link to its memory was refused).
    pub fn fields_through(&self) -> String {
        if self.device_read.is_some() {
            return "GPU memory shared with the view".into();
        }
        match self.device.as_ref().and_then(DeviceLink::refused) {
            Some(why) => format!("host memory: {why}"),
            None => "host memory (the view needs host values)".into(),
        }
    }
}

/// Which state [`gather`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// The current state (screenshots, `flowlab render`).
    Current,
    /// The newest state the solver has ready for display, possibly the one before the current
    /// state (the live view; see [`Solver::display_fields`]).
    Latest,
}

/// The shown fields of one state, read by [`read`] into a [`Scratch`]; [`compose`] makes the
/// frame from them without the solver.
#[derive(Clone, Copy, Debug)]
pub struct Read {
    /// The step count of the state read.
    pub step: u64,
    pub grid: Grid,
    /// The solver's rotor and time ([`FrameData::rotor`]).
    pub rotor: Option<(Rotor, f64)>,
}

/// Reads the fields the view needs from `solver` and makes the frame: [`read`] then
/// [`compose`]. Returns the step count of the state drawn, or `None` if the solver does not
/// know a shown field or is 1D.
pub fn gather(
    solver: &dyn Solver,
    view: &ViewSettings,
    freshness: Freshness,
    scratch: &mut Scratch,
    out: &mut FrameData,
) -> Option<u64> {
    let read = read(solver, view, freshness, scratch)?;
    compose(&read, view, scratch, out);
    Some(read.step)
}

/// Reads the fields `view` shows (only those, all of one state) from `solver` into `scratch`,
/// the only part of a frame that needs the solver: the window holds the solver's state for
/// this alone. `None` if the solver does not know a shown field or is 1D.
pub fn read(
    solver: &dyn Solver,
    view: &ViewSettings,
    freshness: Freshness,
    scratch: &mut Scratch,
) -> Option<Read> {
    let grid = solver.info().grid;
    if grid.dim < 2 {
        return None;
    }
    let names = view.shown_fields();
    let rotor = solver.rotor().map(|r| (r, solver.time()));
    scratch.device_read = None;
    if freshness == Freshness::Latest
        && let Some(link) = scratch.device.as_mut()
        && let Some(requests) = device_requests(view, &grid)
        && let Some(r) = link.read(solver, &requests, grid.cells())
    {
        let step = r.step;
        scratch.device_read = Some(r);
        return Some(Read { step, grid, rotor });
    }
    scratch.fields.resize_with(names.len(), Vec::new);
    let step = match freshness {
        Freshness::Current => solver::read_fields(solver, &names, &mut scratch.fields)?,
        Freshness::Latest => solver.display_fields(&names, &mut scratch.fields)?,
    };
    Some(Read { step, grid, rotor })
}

/// Makes the frame of `view` from the fields [`read`] left in `scratch` (for the same view):
/// maps ranges and, for a 3D state, cuts the view's [`Slice`]s (the in-plane velocity drives
/// arrows and streamlines in the plane) and copies the fields shown over the whole grid; in
/// the 3D view streamlines start on the slice and run through the whole velocity
/// ([`streamlines::spatial`]). The fields in `scratch` are consumed.
pub fn compose(read: &Read, view: &ViewSettings, scratch: &mut Scratch, out: &mut FrameData) {
    let g = read.grid;
    let [p, q] = if g.dim == 3 {
        view.slice.plane_axes()
    } else {
        [0, 1]
    };
    out.n = [g.n[p], g.n[q]];
    out.origin = [g.origin[p], g.origin[q]];
    out.extent = [g.extent(p), g.extent(q)];
    let names = view.shown_fields();
    out.on_device = None;
    if let Some(r) = &scratch.device_read {
        out.volume.clear();
        out.iso_colour.clear();
        out.rendered.clear();
        out.paths.clear();
        out.segments.clear();
        out.more_slices.clear();
        out.rotor = read.rotor.filter(|_| g.dim == 3);
        frame_on_device(view, g.dim, r, out);
        return;
    }
    let Scratch {
        fields,
        velocity: vel,
        velocity_3d,
        colour_3d,
        on_slice,
        planes,
        ..
    } = scratch;
    let index = |name: &str| names.iter().position(|n| *n == name).expect("a shown field");
    out.volume.clear();
    out.paths.clear();
    out.rotor = read.rotor.filter(|_| g.dim == 3);
    let in_space = g.dim == 3 && view.traces_in_space();
    if g.dim == 3 {
        if let Some(iso) = view.view3d.shown_iso_field() {
            to_f32(&fields[index(iso)], &mut out.volume);
        }
        // Fields over the whole grid on their own colour scales: the surfaces' colouring and
        // the volume rendering.
        let whole = |name: Option<&str>, values: &mut Vec<f32>, range: &mut [f32; 2]| {
            values.clear();
            if let Some(name) = name {
                to_f32(&fields[index(name)], values);
                let diverging = default_colormap(name).is_diverging();
                *range = color_range(values, default_range(name), false, diverging);
            }
        };
        whole(
            view.view3d.shown_iso_colour(),
            &mut out.iso_colour,
            &mut out.iso_colour_range,
        );
        whole(
            view.view3d.shown_volume_field(),
            &mut out.rendered,
            &mut out.rendered_range,
        );
        if in_space {
            velocity_3d.n = g.n;
            velocity_3d.origin = g.origin;
            velocity_3d.spacing = g.spacing;
            for (a, name) in ["u", "v", "w"].into_iter().enumerate() {
                velocity_3d.components[a].clone_from(&fields[index(name)]);
            }
            colour_3d.clone_from(&fields[0]);
        }
        // The further slices, cut from the whole grid before the view's own slice is.
        let extras = view.view3d.shown_more_slices();
        out.more_slices.resize_with(extras.len(), FrameData::default);
        planes.resize_with(names.len(), Vec::new);
        for (slice, frame) in extras.iter().zip(&mut out.more_slices) {
            let wanted = plane_fields(view, slice);
            for ((name, f), plane) in names.iter().zip(fields.iter()).zip(planes.iter_mut()) {
                plane.clear();
                if wanted.contains(name) {
                    slice.cut_into(f, g.n, plane);
                }
            }
            let [p, q] = slice.plane_axes();
            frame.n = [g.n[p], g.n[q]];
            frame.origin = [g.origin[p], g.origin[q]];
            frame.extent = [g.extent(p), g.extent(q)];
            plane_frame(view, &names, planes, slice.velocity_names(), frame);
        }
        on_slice.resize_with(names.len(), Vec::new);
        for (f, plane) in fields.iter().zip(on_slice.iter_mut()) {
            view.slice.cut_into(f, g.n, plane);
        }
    } else {
        out.more_slices.clear();
    }
    // The fields on the view's plane: its slice of a 3D state, a 2D state's own.
    let plane = if g.dim == 3 { on_slice } else { fields };
    plane_frame(view, &names, plane, view.slice.velocity_names(), out);
    out.segments.clear();
    let s = &view.streamlines;
    if s.seeding != Seeding::Off && !in_space {
        vel.n = out.n;
        vel.origin = out.origin;
        vel.spacing = [g.spacing[p], g.spacing[q]];
        // The velocity moves out of the plane's buffers (they are refilled next frame).
        let [along, up] = view.slice.velocity_names();
        std::mem::swap(&mut vel.components[0], &mut plane[index(along)]);
        std::mem::swap(&mut vel.components[1], &mut plane[index(up)]);
        let seeds = s.seeding.seeds(out.origin, out.extent);
        let h = g.spacing[p].min(g.spacing[q]);
        let max_speed = vel.components[0]
            .iter()
            .zip(&vel.components[1])
            .map(|(a, b)| a.hypot(*b))
            .fold(0.0f64, f64::max);
        let limits = Limits {
            max_length: s.max_length * out.extent[0].max(out.extent[1]),
            min_speed: 1e-4 * max_speed.max(1e-300),
            scale: 0.5 * h,
            max_step: 2.0 * h,
            closure: CLOSURE_CELLS * h,
            max_steps: streamlines::MAX_TRACE_STEPS,
        };
        if let Seeding::Even { separation } = s.seeding {
            let lines =
                streamlines::even::lines(&*vel, out.origin, out.extent, separation, s.integrator, &limits);
            for line in &lines {
                streamlines::push_segments(line, &mut out.segments);
            }
        } else {
            streamlines::segments(&*vel, &seeds, s.integrator, &limits, &mut out.segments);
        }
    }
    if in_space {
        let s = &view.streamlines;
        let h = g.spacing.iter().copied().fold(f64::INFINITY, f64::min);
        let extent = [g.extent(0), g.extent(1), g.extent(2)];
        let max_speed = (0..velocity_3d.components[0].len())
            .map(|k| {
                let c = &velocity_3d.components;
                (c[0][k] * c[0][k] + c[1][k] * c[1][k] + c[2][k] * c[2][k]).sqrt()
            })
            .fold(0.0f64, f64::max);
        let limits = Limits {
            max_length: s.max_length * extent.into_iter().fold(0.0, f64::max),
            min_speed: 1e-4 * max_speed.max(1e-300),
            scale: 0.5 * h,
            max_step: 2.0 * h,
            closure: CLOSURE_CELLS * h,
            max_steps: spatial::MAX_TRACE_STEPS_3D,
        };
        let seeds = spatial::slice_seeds(&s.seeding, &view.slice, g.origin, extent);
        out.paths = spatial::paths(velocity_3d, colour_3d, &seeds, s.integrator, &limits);
    }
    one_scale(view, out);
}

/// The names of the shown fields a further slice needs: its colour, its contours and, with
/// arrows, its in-plane velocity.
fn plane_fields<'a>(view: &'a ViewSettings, slice: &Slice) -> Vec<&'a str> {
    let mut wanted = vec![view.field.as_str()];
    wanted.extend(view.contour_field());
    if view.arrows.is_some() {
        wanted.extend(slice.velocity_names());
    }
    wanted
}

/// One plane's part of a frame (`out.n`, `out.origin` and `out.extent` set): the coloured
/// field, the contours and the arrows, from the shown fields on the plane (`planes`, in the
/// order of `names`; the in-plane velocity's names `[along, up]`).
fn plane_frame(
    view: &ViewSettings,
    names: &[&str],
    planes: &[Vec<f64>],
    [along, up]: [&str; 2],
    out: &mut FrameData,
) {
    let index = |name: &str| names.iter().position(|n| *n == name).expect("a shown field");
    to_f32(&planes[index(&view.field)], &mut out.field);
    colour_scale(
        view,
        &ValueStats::of(&out.field, view.range == Range::Robust),
        out,
    );
    out.contour = None;
    if let Some(name) = view.contour_field() {
        let mut c = Vec::new();
        if name == view.field {
            c.clone_from(&out.field);
        } else {
            to_f32(&planes[index(name)], &mut c);
        }
        let r = contour_range(view, name, out.range, || ValueStats::of(&c, false));
        out.contour = Some((c, view.contours.levels, r));
    }
    out.velocity = None;
    out.arrows = None;
    if let Some(count) = view.arrows {
        let mut u = Vec::new();
        let mut v = Vec::new();
        to_f32(&planes[index(along)], &mut u);
        to_f32(&planes[index(up)], &mut v);
        let max_speed = u.iter().zip(&v).map(|(a, b)| a.hypot(*b)).fold(0.0f32, f32::max);
        let ax = count.clamp(2, MAX_ARROWS);
        let ay = ((ax as f64 * out.extent[1] / out.extent[0]).round() as u32).clamp(2, MAX_ARROWS);
        let spacing = (out.extent[0] / ax as f64) as f32;
        let scale = if max_speed > 0.0 {
            0.9 * spacing / max_speed
        } else {
            0.0
        };
        out.velocity = Some((u, v));
        out.arrows = Some(([ax, ay], scale));
    }
}

/// The shown field's colour map, scale and range, from the statistics of its values (both
/// paths: [`plane_frame`], [`frame_on_device`]).
fn colour_scale(view: &ViewSettings, stats: &ValueStats, out: &mut FrameData) {
    out.colormap = Some(view.colormap);
    out.log_scale = view.log_scale;
    out.diverging = view.colormap.is_diverging();
    out.range = color_range_of(stats, view.range, view.log_scale, out.diverging);
}

/// The range of the contours of field `name`: the colour range `colour` where they contour the
/// shown field on a linear scale, else the contoured field's own auto range, from `stats()` of
/// its values.
fn contour_range(
    view: &ViewSettings,
    name: &str,
    colour: [f32; 2],
    stats: impl FnOnce() -> ValueStats,
) -> [f32; 2] {
    if name == view.field && !view.log_scale {
        colour
    } else {
        color_range_of(&stats(), Range::Auto, false, false)
    }
}

/// What the device writes for `view` of a state on `grid` when the view needs no host values
/// (no arrows or streamlines; in 3D one slice, no surface colouring or volume rendering, and
/// the isosurface's levels set, as choosing one reads the field): the coloured field, then the
/// contoured one if another, on the slice of a 3D state; then a 3D state's isosurface field
/// whole. `None`: the view reads its fields on the host.
fn device_requests<'a>(view: &'a ViewSettings, grid: &Grid) -> Option<Vec<Request<'a>>> {
    let v3 = &view.view3d;
    if grid.dim < 2 || view.needs_velocity() {
        return None;
    }
    let plane = if grid.dim == 3 {
        let iso_unset = v3.shown_iso_field().is_some() && v3.iso_levels.is_empty();
        let on_host = !v3.shown_more_slices().is_empty()
            || view.traces_in_space()
            || v3.shown_iso_colour().is_some()
            || v3.shown_volume_field().is_some();
        if iso_unset || on_host {
            return None;
        }
        Some(view.slice.cut(grid.n))
    } else {
        None
    };
    let mut requests = vec![Request {
        name: view.field.as_str(),
        plane,
        sample: view.range == Range::Robust,
    }];
    if let Some(name) = view.contour_field().filter(|c| *c != view.field) {
        requests.push(Request {
            name,
            plane,
            sample: false,
        });
    }
    if grid.dim == 3
        && let Some(name) = v3.shown_iso_field()
    {
        requests.push(Request {
            name,
            plane: None,
            sample: false,
        });
    }
    Some(requests)
}

/// [`plane_frame`] of a state whose shown fields the solver wrote into the renderer's buffers
/// (the requests of [`device_requests`]): the same ranges, from the statistics the device
/// computed; a 3D state's isosurface field stays in its buffer.
fn frame_on_device(view: &ViewSettings, dim: usize, read: &DeviceRead, out: &mut FrameData) {
    out.field.clear();
    colour_scale(view, &read.stats[0], out);
    let contour = view
        .contour_field()
        .map(|name| (name, usize::from(name != view.field)));
    out.contour = contour.map(|(name, k)| {
        let r = contour_range(view, name, out.range, || read.stats[k].clone());
        (Vec::new(), view.contours.levels, r)
    });
    let iso = (dim == 3 && view.view3d.shown_iso_field().is_some()).then(|| read.buffers.last());
    out.on_device = Some(OnDevice {
        field: read.buffers[0].clone(),
        contour: contour.map(|(_, k)| read.buffers[k].clone()),
        volume: iso.flatten().cloned(),
    });
    out.velocity = None;
    out.arrows = None;
}

/// One colour scale for every slice and the tubes, over the values of all, and one contour
/// scale for the slices, so that colours and contour lines agree where they meet.
fn one_scale(view: &ViewSettings, out: &mut FrameData) {
    if out.more_slices.is_empty() && out.paths.is_empty() {
        return;
    }
    let mut values = out.field.clone();
    for m in &out.more_slices {
        values.extend(&m.field);
    }
    values.extend(out.paths.iter().flatten().map(|p| p[3]));
    out.range = color_range(&values, view.range, view.log_scale, out.diverging);
    let contour_range = out.contour.as_ref().map(|_| {
        if view.contour_field() == Some(view.field.as_str()) && !view.log_scale {
            out.range
        } else {
            let all = out.more_slices.iter().chain(std::iter::once(&*out));
            let c: Vec<f32> = all
                .filter_map(|f| f.contour.as_ref())
                .flat_map(|(c, _, _)| c.iter().copied())
                .collect();
            color_range(&c, Range::Auto, false, false)
        }
    });
    let set = |f: &mut FrameData| {
        if let (Some((_, _, r)), Some(cr)) = (&mut f.contour, contour_range) {
            *r = cr;
        }
    };
    set(out);
    for m in &mut out.more_slices {
        m.range = out.range;
        set(m);
    }
}

/// `src` narrowed into `dst`, in parallel: a 256^3 field is 16.7 million values.
fn to_f32(src: &[f64], dst: &mut Vec<f32>) {
    dst.clear();
    dst.par_extend(src.par_iter().with_min_len(1 << 15).map(|&v| v as f32));
}
