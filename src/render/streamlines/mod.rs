//! Streamlines of a velocity field in `D = 2` or `3` dimensions: seeding (grid, rake, points,
//! and evenly spaced lines in [`even`], 2D) and integration of the arc-length-parametrised path
//! equation `dx/ds = u(x) / |u(x)|` with classical fixed-step RK4 or the adaptive Dormand-Prince
//! 5(4) pair (local extrapolation, error-per-step control), one source for both dimensions.
//!
//! A trace stops at a wall (a stage leaves the domain), at stagnation (`|u|` below a threshold),
//! when it closes on itself (a Poincaré-section test: it crosses the line (2D) or plane (3D)
//! through the seed normal to the initial tangent again, in the initial direction, within
//! [`Limits::closure`] of the seed), when a caller's test refuses a point (evenly spaced lines),
//! or at the length or step limit.

pub mod even;
pub mod spatial;

/// A velocity field that can be sampled anywhere in its domain; `None` outside.
pub trait VelocityField<const D: usize = 2> {
    fn velocity(&self, p: [f64; D]) -> Option<[f64; D]>;
}

/// Multilinear (bilinear, trilinear) interpolation of cell-centred velocity components on a
/// uniform grid (`x` fastest). Inside the half cell along the walls the nearest centre values
/// are extended (constant extrapolation).
#[derive(Clone, Debug)]
pub struct GridVelocity<const D: usize = 2> {
    pub n: [usize; D],
    pub origin: [f64; D],
    pub spacing: [f64; D],
    /// `u`, `v` (and `w`), one value a cell each.
    pub components: [Vec<f64>; D],
}

impl<const D: usize> Default for GridVelocity<D> {
    fn default() -> Self {
        Self {
            n: [0; D],
            origin: [0.0; D],
            spacing: [0.0; D],
            components: std::array::from_fn(|_| Vec::new()),
        }
    }
}

impl<const D: usize> GridVelocity<D> {
    /// Multilinear interpolation of one cell-centred array of this grid (a velocity component
    /// or any other field) at `p` (inside the domain): the weighted sum over the `2^D` centres
    /// around it.
    pub fn interp(&self, f: &[f64], p: [f64; D]) -> f64 {
        let mut lower = [0usize; D];
        let mut upper = [0usize; D];
        let mut t = [0.0; D];
        for a in 0..D {
            let x = ((p[a] - self.origin[a]) / self.spacing[a] - 0.5).clamp(0.0, (self.n[a] - 1) as f64);
            lower[a] = x.floor() as usize;
            upper[a] = (lower[a] + 1).min(self.n[a] - 1);
            t[a] = x - lower[a] as f64;
        }
        let mut sum = 0.0;
        for corner in 0..1usize << D {
            let (mut k, mut stride, mut w) = (0, 1, 1.0);
            for a in 0..D {
                let high = corner >> a & 1 == 1;
                k += stride * if high { upper[a] } else { lower[a] };
                w *= if high { t[a] } else { 1.0 - t[a] };
                stride *= self.n[a];
            }
            sum += w * f[k];
        }
        sum
    }

    pub fn contains(&self, p: [f64; D]) -> bool {
        (0..D).all(|a| {
            let x = p[a] - self.origin[a];
            x >= 0.0 && x <= self.spacing[a] * self.n[a] as f64
        })
    }
}

impl<const D: usize> VelocityField<D> for GridVelocity<D> {
    fn velocity(&self, p: [f64; D]) -> Option<[f64; D]> {
        if self.components[0].is_empty() || !self.contains(p) {
            return None;
        }
        Some(std::array::from_fn(|a| self.interp(&self.components[a], p)))
    }
}

/// Integration scheme of the path equation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Integrator {
    /// Classical fourth-order Runge-Kutta with a fixed arc-length step.
    Rk4 { step: f64 },
    /// Dormand-Prince 5(4) with step-size control to an absolute tolerance (length units) per step.
    Rk45 { tolerance: f64 },
}

/// Why a trace ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    Wall,
    Stagnation,
    Closed,
    /// The caller's acceptance test refused the next point (too close to another line).
    Crowded,
    /// [`Limits::max_length`] or [`Limits::max_steps`] reached.
    Length,
}

/// Limits of one trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Largest arc length.
    pub max_length: f64,
    /// Speeds below this count as stagnation.
    pub min_speed: f64,
    /// Initial RK45 step; RK45 retries a step that left the domain down to `1e-3 * scale`.
    pub scale: f64,
    /// Largest RK45 step.
    pub max_step: f64,
    /// A return through the seed's section (the line through the seed normal to the initial
    /// tangent) in the initial direction closes the trace if it passes within this distance of
    /// the seed: a closed orbit, or one turn of a slow spiral, is drawn once.
    pub closure: f64,
    /// Largest number of accepted steps (bounds the work of one trace whatever the step).
    pub max_steps: usize,
}

/// One integrated path.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace<const D: usize = 2> {
    pub points: Vec<[f64; D]>,
    /// Accepted steps.
    pub steps: usize,
    /// Rejected RK45 steps.
    pub rejected: usize,
    pub length: f64,
    pub stop: Stop,
}

/// `|a - b|`.
fn distance<const D: usize>(a: [f64; D], b: [f64; D]) -> f64 {
    norm::<D>(std::array::from_fn(|i| a[i] - b[i]))
}

/// `|v|` (in 2D `hypot`, which rounds as the 2D streamlines always have).
fn norm<const D: usize>(v: [f64; D]) -> f64 {
    match D {
        2 => v[0].hypot(v[1]),
        _ => v.iter().map(|x| x * x).sum::<f64>().sqrt(),
    }
}

/// `(a - b) . c`.
fn dot_from<const D: usize>(a: [f64; D], b: [f64; D], c: [f64; D]) -> f64 {
    (0..D).map(|i| (a[i] - b[i]) * c[i]).sum()
}

/// The unit tangent `sign * u / |u|`, or why there is none.
fn direction<const D: usize>(
    f: &dyn VelocityField<D>,
    p: [f64; D],
    sign: f64,
    min_speed: f64,
) -> Result<[f64; D], Stop> {
    let v = f.velocity(p).ok_or(Stop::Wall)?;
    let s = norm(v);
    if !(s > min_speed) {
        return Err(Stop::Stagnation);
    }
    Ok(v.map(|x| sign * x / s))
}

fn axpy<const D: usize>(p: [f64; D], h: f64, terms: &[(f64, [f64; D])]) -> [f64; D] {
    let mut q = p;
    for (c, k) in terms {
        for a in 0..D {
            q[a] += h * c * k[a];
        }
    }
    q
}

/// One classical RK4 step of length `h`.
fn rk4_step<const D: usize>(
    f: &dyn VelocityField<D>,
    p: [f64; D],
    h: f64,
    sign: f64,
    min_speed: f64,
) -> Result<[f64; D], Stop> {
    let k1 = direction(f, p, sign, min_speed)?;
    let k2 = direction(f, axpy(p, h, &[(0.5, k1)]), sign, min_speed)?;
    let k3 = direction(f, axpy(p, h, &[(0.5, k2)]), sign, min_speed)?;
    let k4 = direction(f, axpy(p, h, &[(1.0, k3)]), sign, min_speed)?;
    Ok(axpy(
        p,
        h,
        &[(1.0 / 6.0, k1), (1.0 / 3.0, k2), (1.0 / 3.0, k3), (1.0 / 6.0, k4)],
    ))
}

/// One Dormand-Prince step: the fifth-order solution and the norm of its difference to the
/// embedded fourth-order one.
fn dopri_step<const D: usize>(
    f: &dyn VelocityField<D>,
    p: [f64; D],
    h: f64,
    sign: f64,
    min_speed: f64,
) -> Result<([f64; D], f64), Stop> {
    let d = |q: [f64; D]| direction(f, q, sign, min_speed);
    let k1 = d(p)?;
    let k2 = d(axpy(p, h, &[(1.0 / 5.0, k1)]))?;
    let k3 = d(axpy(p, h, &[(3.0 / 40.0, k1), (9.0 / 40.0, k2)]))?;
    let k4 = d(axpy(
        p,
        h,
        &[(44.0 / 45.0, k1), (-56.0 / 15.0, k2), (32.0 / 9.0, k3)],
    ))?;
    let k5 = d(axpy(
        p,
        h,
        &[
            (19372.0 / 6561.0, k1),
            (-25360.0 / 2187.0, k2),
            (64448.0 / 6561.0, k3),
            (-212.0 / 729.0, k4),
        ],
    ))?;
    let k6 = d(axpy(
        p,
        h,
        &[
            (9017.0 / 3168.0, k1),
            (-355.0 / 33.0, k2),
            (46732.0 / 5247.0, k3),
            (49.0 / 176.0, k4),
            (-5103.0 / 18656.0, k5),
        ],
    ))?;
    let y5 = axpy(
        p,
        h,
        &[
            (35.0 / 384.0, k1),
            (500.0 / 1113.0, k3),
            (125.0 / 192.0, k4),
            (-2187.0 / 6784.0, k5),
            (11.0 / 84.0, k6),
        ],
    );
    let k7 = d(y5)?;
    let y4 = axpy(
        p,
        h,
        &[
            (5179.0 / 57600.0, k1),
            (7571.0 / 16695.0, k3),
            (393.0 / 640.0, k4),
            (-92097.0 / 339200.0, k5),
            (187.0 / 2100.0, k6),
            (1.0 / 40.0, k7),
        ],
    );
    Ok((y5, distance(y5, y4)))
}

/// Where the step `p`-`q` crosses the section of `seed` (the line (2D) or plane (3D) through it
/// normal to the unit `tangent`) from behind to ahead within `closure` of the seed: the
/// crossing point and its share of the step.
fn return_crossing<const D: usize>(
    seed: [f64; D],
    tangent: [f64; D],
    p: [f64; D],
    q: [f64; D],
    closure: f64,
) -> Option<([f64; D], f64)> {
    let (a, b) = (dot_from(p, seed, tangent), dot_from(q, seed, tangent));
    if !(a < 0.0 && b >= 0.0) {
        return None;
    }
    let share = a / (a - b);
    let x: [f64; D] = std::array::from_fn(|i| p[i] + share * (q[i] - p[i]));
    // `x` lies in the section, so its distance to the seed is measured within it.
    (distance(x, seed) < closure).then_some((x, share))
}

/// Integrates from `seed` forwards (`sign = 1`) or backwards (`sign = -1`) along the flow.
pub fn trace<const D: usize>(
    f: &dyn VelocityField<D>,
    seed: [f64; D],
    sign: f64,
    integrator: Integrator,
    limits: &Limits,
) -> Trace<D> {
    trace_accepting(f, seed, sign, integrator, limits, &mut |_| true)
}

/// [`trace`] that also stops ([`Stop::Crowded`]) before a point `accept` refuses; `accept` sees
/// every point after the seed in order, and a trace keeps exactly the points it accepted.
pub fn trace_accepting<const D: usize>(
    f: &dyn VelocityField<D>,
    seed: [f64; D],
    sign: f64,
    integrator: Integrator,
    limits: &Limits,
    accept: &mut dyn FnMut([f64; D]) -> bool,
) -> Trace<D> {
    let mut t = Trace {
        points: vec![seed],
        steps: 0,
        rejected: 0,
        length: 0.0,
        stop: Stop::Length,
    };
    let tangent = match direction(f, seed, sign, limits.min_speed) {
        Ok(d) => d,
        Err(stop) => {
            t.stop = stop;
            return t;
        }
    };
    let mut p = seed;
    let mut h = match integrator {
        Integrator::Rk4 { step } => step,
        Integrator::Rk45 { .. } => limits.scale,
    };
    while t.length < limits.max_length && t.steps < limits.max_steps {
        let remaining = limits.max_length - t.length;
        let result = match integrator {
            Integrator::Rk4 { step } => {
                rk4_step(f, p, step.min(remaining), sign, limits.min_speed).map(|q| (q, step.min(remaining)))
            }
            Integrator::Rk45 { tolerance } => loop {
                let hh = h.min(remaining).min(limits.max_step);
                match dopri_step(f, p, hh, sign, limits.min_speed) {
                    Ok((q, err)) => {
                        let factor = if err > 0.0 {
                            (0.9 * (tolerance / err).powf(0.2)).clamp(0.2, 5.0)
                        } else {
                            5.0
                        };
                        if err <= tolerance {
                            h = hh * factor;
                            break Ok((q, hh));
                        }
                        t.rejected += 1;
                        h = hh * factor;
                        if h < 1e-12 * limits.max_length {
                            break Err(Stop::Stagnation);
                        }
                    }
                    Err(stop) => {
                        // A stage left the domain or hit stagnation: retry shorter before stopping.
                        if hh > 1e-3 * limits.scale {
                            t.rejected += 1;
                            h = hh * 0.25;
                        } else {
                            break Err(stop);
                        }
                    }
                }
            },
        };
        let (q, step) = match result {
            Ok(r) => r,
            Err(stop) => {
                t.stop = stop;
                return t;
            }
        };
        t.steps += 1;
        let (q, step, closed) = match return_crossing(seed, tangent, p, q, limits.closure) {
            Some((x, share)) => (x, share * step, true),
            None => (q, step, false),
        };
        if !accept(q) {
            t.stop = Stop::Crowded;
            return t;
        }
        t.length += step;
        t.points.push(q);
        if closed {
            t.stop = Stop::Closed;
            return t;
        }
        p = q;
    }
    t
}

/// Most seeds per side of [`grid_seeds`] a view may ask for.
pub const MAX_GRID_SEEDS: usize = 64;
/// Most seeds on a rake or clicked points a view may ask for.
pub const MAX_SEEDS: usize = 1000;
/// Most accepted steps of one trace.
pub const MAX_TRACE_STEPS: usize = 20_000;

/// Seeds at the centres of an `nx * ny` lattice over the rectangle `origin + [0, extent]`.
pub fn grid_seeds(origin: [f64; 2], extent: [f64; 2], nx: usize, ny: usize) -> Vec<[f64; 2]> {
    let mut s = Vec::with_capacity(nx * ny);
    for j in 0..ny {
        for i in 0..nx {
            s.push([
                origin[0] + (i as f64 + 0.5) / nx as f64 * extent[0],
                origin[1] + (j as f64 + 0.5) / ny as f64 * extent[1],
            ]);
        }
    }
    s
}

/// `n` seeds evenly spaced on the segment `a`-`b`, end points included.
pub fn rake_seeds(a: [f64; 2], b: [f64; 2], n: usize) -> Vec<[f64; 2]> {
    if n < 2 {
        return vec![[(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0]];
    }
    (0..n)
        .map(|k| {
            let t = k as f64 / (n - 1) as f64;
            [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])]
        })
        .collect()
}

/// The streamline through `seed` as one polyline in the direction of the flow: traced
/// backwards, then forwards; a closed orbit is traced forwards only (once round).
pub fn through<const D: usize>(
    f: &dyn VelocityField<D>,
    seed: [f64; D],
    integrator: Integrator,
    limits: &Limits,
) -> Vec<[f64; D]> {
    let forward = trace(f, seed, 1.0, integrator, limits);
    if forward.stop == Stop::Closed {
        return forward.points;
    }
    let mut points = trace(f, seed, -1.0, integrator, limits).points;
    points.reverse();
    points.extend_from_slice(&forward.points[1..]);
    points
}

/// Traces every seed both ways ([`through`]) and appends the paths as line segments
/// `(x0, y0, x1, y1)`.
pub fn segments(
    f: &dyn VelocityField,
    seeds: &[[f64; 2]],
    integrator: Integrator,
    limits: &Limits,
    out: &mut Vec<[f32; 4]>,
) {
    out.clear();
    for &seed in seeds {
        push_segments(&through(f, seed, integrator, limits), out);
    }
}

/// Appends the polyline `points` as line segments `(x0, y0, x1, y1)`.
pub fn push_segments(points: &[[f64; 2]], out: &mut Vec<[f32; 4]>) {
    for w in points.windows(2) {
        out.push([w[0][0] as f32, w[0][1] as f32, w[1][0] as f32, w[1][1] as f32]);
    }
}

#[cfg(test)]
mod tests;
