//! Reading the solver's fields into one frame of the view ([`FrameData`]): only the fields the
//! view shows, all of one state, a 3D state cut to the view's slice, colour ranges mapped and
//! streamlines traced.

use super::streamlines::{self, GridVelocity, Limits, spatial};
use super::view::{
    FrameData, MAX_ARROWS, Range, Seeding, ViewSettings, color_range, default_colormap, default_range,
};
use crate::solver::{self, Solver};

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

/// Reads the fields the view needs from `solver` (only those, all of one state), maps ranges,
/// and traces the streamlines. A 3D state is shown on the view's [`Slice`] (its in-plane
/// velocity drives arrows and streamlines in the plane); in the 3D view its streamlines start
/// on the slice and run through the whole velocity ([`streamlines::spatial`]).
/// Returns the step count of the state drawn, or `None` if the solver does not know a shown
/// field or is 1D.
pub fn gather(
    solver: &dyn Solver,
    view: &ViewSettings,
    freshness: Freshness,
    scratch: &mut Scratch,
    out: &mut FrameData,
) -> Option<u64> {
    let g = solver.info().grid;
    if g.dim < 2 {
        return None;
    }
    let [p, q] = if g.dim == 3 {
        view.slice.plane_axes()
    } else {
        [0, 1]
    };
    out.n = [g.n[p], g.n[q]];
    out.origin = [g.origin[p], g.origin[q]];
    out.extent = [g.extent(p), g.extent(q)];
    let names = view.shown_fields();
    let Scratch {
        fields,
        velocity: vel,
        velocity_3d,
        colour_3d,
    } = scratch;
    fields.resize_with(names.len(), Vec::new);
    let step = match freshness {
        Freshness::Current => solver::read_fields(solver, &names, fields)?,
        Freshness::Latest => solver.display_fields(&names, fields)?,
    };
    let index = |name: &str| names.iter().position(|n| *n == name).expect("a shown field");
    out.volume.clear();
    out.paths.clear();
    let in_space = g.dim == 3 && view.traces_in_space();
    if g.dim == 3 {
        if let Some(iso) = view.view3d.shown_iso_field() {
            to_f32(&fields[index(iso)], &mut out.volume);
        }
        out.rendered.clear();
        if let Some(name) = view.view3d.shown_volume_field() {
            to_f32(&fields[index(name)], &mut out.rendered);
            let diverging = default_colormap(name).is_diverging();
            out.rendered_range = color_range(&out.rendered, default_range(name), false, diverging);
        }
        if in_space {
            velocity_3d.n = g.n;
            velocity_3d.origin = g.origin;
            velocity_3d.spacing = g.spacing;
            for (a, name) in ["u", "v", "w"].into_iter().enumerate() {
                velocity_3d.components[a].clone_from(&fields[index(name)]);
            }
            colour_3d.clone_from(&fields[0]);
        }
        fields.iter_mut().for_each(|f| view.slice.cut(f, g.n));
    }
    to_f32(&fields[0], &mut out.field);
    out.colormap = Some(view.colormap);
    out.log_scale = view.log_scale;
    out.diverging = view.colormap.is_diverging();
    out.range = color_range(&out.field, view.range, view.log_scale, out.diverging);
    out.contour = None;
    if let Some(name) = view.contour_field() {
        let mut c = Vec::new();
        if name == view.field {
            c.clone_from(&out.field);
        } else {
            to_f32(&fields[index(name)], &mut c);
        }
        let r = if name == view.field && !view.log_scale {
            out.range
        } else {
            color_range(&c, Range::Auto, false, false)
        };
        out.contour = Some((c, view.contours.levels, r));
    }
    let need_velocity = view.needs_velocity();
    out.velocity = None;
    out.arrows = None;
    out.segments.clear();
    if need_velocity {
        vel.n = out.n;
        vel.origin = out.origin;
        vel.spacing = [g.spacing[p], g.spacing[q]];
        // The velocity moves out of the field buffers (they are refilled next frame).
        let [along, up] = view.slice.velocity_names();
        std::mem::swap(&mut vel.components[0], &mut fields[index(along)]);
        std::mem::swap(&mut vel.components[1], &mut fields[index(up)]);
        if let Some(count) = view.arrows {
            let mut u = Vec::new();
            let mut v = Vec::new();
            to_f32(&vel.components[0], &mut u);
            to_f32(&vel.components[1], &mut v);
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
        let s = &view.streamlines;
        let seeds = s.seeding.seeds(out.origin, out.extent);
        if s.seeding != Seeding::Off && !in_space {
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
                let lines = streamlines::even::lines(
                    &*vel,
                    out.origin,
                    out.extent,
                    separation,
                    s.integrator,
                    &limits,
                );
                for line in &lines {
                    streamlines::push_segments(line, &mut out.segments);
                }
            } else {
                streamlines::segments(&*vel, &seeds, s.integrator, &limits, &mut out.segments);
            }
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
        // One colour scale for the slice and the tubes, over the values of both.
        let mut values = out.field.clone();
        values.extend(out.paths.iter().flatten().map(|p| p[3]));
        out.range = color_range(&values, view.range, view.log_scale, out.diverging);
    }
    Some(step)
}

fn to_f32(src: &[f64], dst: &mut Vec<f32>) {
    dst.clear();
    dst.extend(src.iter().map(|&v| v as f32));
}
