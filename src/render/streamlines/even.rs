//! Evenly spaced streamlines after Jobard & Lefer (1997), "Creating evenly-spaced streamlines of
//! arbitrary density" (Visualization in Scientific Computing '97, pp. 43-55).
//!
//! Lines are kept a separating distance `d_sep` apart: a new line starts only at a seed at least
//! `d_sep` from every line, and a line stops when its next point would come closer than
//! `d_test = TEST_RATIO * d_sep` to another line, or to a part of itself more than half a turn of
//! a `d_test` circle back along it. Seeds are taken from candidates `d_sep` either side of each
//! point of the lines already drawn, oldest line first; when no candidate is left, the centres of
//! the background grid (cells of size `d_sep`, which also answer the distance queries) that are
//! still at least `d_sep` from every line start new lines, so regions no line reaches (another
//! recirculation zone) are filled too. Every point of the domain whose nearest cell centre is not
//! a stagnation point then lies within `d_sep (1 + 1/sqrt 2)` of a line.

use super::{Integrator, Limits, Stop, VelocityField, trace_accepting};
use std::collections::VecDeque;

/// `d_test / d_sep` (Jobard & Lefer's choice).
pub const TEST_RATIO: f64 = 0.5;
/// Smallest separation, as a fraction of the domain's larger side.
pub const MIN_SEPARATION: f64 = 0.005;
/// Largest separation, as a fraction of the domain's larger side.
pub const MAX_SEPARATION: f64 = 0.5;
/// The app's separation: about 30 lines across the domain.
pub const DEFAULT_SEPARATION: f64 = 0.03;

/// A point of a line in the background grid: its line and its signed arc length from the
/// line's seed.
#[derive(Clone, Copy)]
struct Sample {
    p: [f64; 2],
    line: usize,
    arc: f64,
}

/// The points of every line drawn so far, bucketed in square cells of side `d_sep`.
struct Occupancy {
    origin: [f64; 2],
    cell: f64,
    n: [usize; 2],
    cells: Vec<Vec<Sample>>,
}

impl Occupancy {
    fn new(origin: [f64; 2], extent: [f64; 2], cell: f64) -> Occupancy {
        let n = [0, 1].map(|a| ((extent[a] / cell).ceil() as usize).max(1));
        Occupancy {
            origin,
            cell,
            n,
            cells: vec![Vec::new(); n[0] * n[1]],
        }
    }

    /// The cell holding `p` (points on or past the far edges go to the last cell).
    fn cell_of(&self, p: [f64; 2]) -> [usize; 2] {
        [0, 1].map(|a| (((p[a] - self.origin[a]) / self.cell).floor().max(0.0) as usize).min(self.n[a] - 1))
    }

    fn insert(&mut self, s: Sample) {
        let [i, j] = self.cell_of(s.p);
        self.cells[j * self.n[0] + i].push(s);
    }

    /// Whether a point closer than `radius` (at most one cell) to `p` belongs to another line
    /// than `own`, or to line `own` at an arc length `exempt` does not pass.
    fn crowded(&self, p: [f64; 2], radius: f64, own: usize, exempt: impl Fn(f64) -> bool) -> bool {
        let [ci, cj] = self.cell_of(p);
        for j in cj.saturating_sub(1)..=(cj + 1).min(self.n[1] - 1) {
            for i in ci.saturating_sub(1)..=(ci + 1).min(self.n[0] - 1) {
                for s in &self.cells[j * self.n[0] + i] {
                    if (s.p[0] - p[0]).hypot(s.p[1] - p[1]) >= radius {
                        continue;
                    }
                    if s.line != own || !exempt(s.arc) {
                        return true;
                    }
                }
            }
        }
        false
    }
}

/// The evenly spaced streamlines of `f` over the rectangle `origin + [0, extent]`, `separation`
/// (a fraction of the larger side, clamped to [`MIN_SEPARATION`], [`MAX_SEPARATION`]) apart,
/// each a polyline. Steps are at most `d_test / 2` long so that the distance tests between
/// points see every approach.
pub fn lines(
    f: &dyn VelocityField,
    origin: [f64; 2],
    extent: [f64; 2],
    separation: f64,
    integrator: Integrator,
    limits: &Limits,
) -> Vec<Vec<[f64; 2]>> {
    let side = extent[0].max(extent[1]);
    if !(side > 0.0 && side.is_finite()) {
        return Vec::new();
    }
    let d_sep = separation.clamp(MIN_SEPARATION, MAX_SEPARATION) * side;
    let d_test = TEST_RATIO * d_sep;
    let mut limits = *limits;
    limits.max_step = limits.max_step.min(0.5 * d_test);
    limits.scale = limits.scale.min(limits.max_step);
    let integrator = match integrator {
        Integrator::Rk4 { step } => Integrator::Rk4 {
            step: step.min(limits.max_step),
        },
        rk45 => rk45,
    };
    let mut grid = Occupancy::new(origin, extent, d_sep);
    let mut lines: Vec<Vec<[f64; 2]>> = Vec::new();
    // A seed must have flow and lie at least `d_sep` from every line (1 % slack for the
    // candidate exactly `d_sep` from the point it was offset from).
    let seedable = |grid: &Occupancy, c: [f64; 2]| {
        f.velocity(c).is_some_and(|v| v[0].hypot(v[1]) > limits.min_speed)
            && !grid.crowded(c, 0.99 * d_sep, usize::MAX, |_| false)
    };
    let mut queue = VecDeque::new();
    let centre = [origin[0] + 0.5 * extent[0], origin[1] + 0.5 * extent[1]];
    let n = grid.n;
    let lattice = (0..n[1]).flat_map(move |j| (0..n[0]).map(move |i| (i, j)));
    let starts = std::iter::once(centre).chain(lattice.map(|(i, j)| {
        [
            origin[0] + (i as f64 + 0.5) * d_sep,
            origin[1] + (j as f64 + 0.5) * d_sep,
        ]
    }));
    for start in starts {
        if !seedable(&grid, start) {
            continue;
        }
        queue.push_back(lines.len());
        let line = trace_line(f, start, lines.len(), integrator, &limits, d_test, &mut grid);
        lines.push(line);
        while let Some(k) = queue.pop_front() {
            for i in 0..lines[k].len() {
                let Some(normal) = normal_at(&lines[k], i) else {
                    continue;
                };
                let p = lines[k][i];
                for side in [1.0, -1.0] {
                    let c = [p[0] + side * d_sep * normal[0], p[1] + side * d_sep * normal[1]];
                    if seedable(&grid, c) {
                        queue.push_back(lines.len());
                        let line = trace_line(f, c, lines.len(), integrator, &limits, d_test, &mut grid);
                        lines.push(line);
                    }
                }
            }
        }
    }
    lines
}

/// The unit normal of `line` at point `i` (from the chord of its neighbours), if it has length.
fn normal_at(line: &[[f64; 2]], i: usize) -> Option<[f64; 2]> {
    let a = line[i.saturating_sub(1)];
    let b = line[(i + 1).min(line.len() - 1)];
    let d = [b[0] - a[0], b[1] - a[1]];
    let len = d[0].hypot(d[1]);
    (len > 0.0).then(|| [-d[1] / len, d[0] / len])
}

/// Traces line number `id` from `seed` both ways, entering its points in `grid` as it goes and
/// stopping each way before a point within `d_test` of another line or of a part of itself more
/// than `pi d_test` back along it. Going forwards, the part within `pi d_test` of the seed does
/// not count either, so an orbit that returns within `d_test` of its seed closes there
/// (`limits.closure = d_test`) and is drawn whole. Returns the line from its backward end to its
/// forward end.
fn trace_line(
    f: &dyn VelocityField,
    seed: [f64; 2],
    id: usize,
    integrator: Integrator,
    limits: &Limits,
    d_test: f64,
    grid: &mut Occupancy,
) -> Vec<[f64; 2]> {
    let gap = std::f64::consts::PI * d_test;
    let limits = Limits {
        closure: d_test,
        ..*limits
    };
    grid.insert(Sample {
        p: seed,
        line: id,
        arc: 0.0,
    });
    let mut line = Vec::new();
    for sign in [1.0, -1.0] {
        let (mut last, mut arc) = (seed, 0.0);
        let t = trace_accepting(f, seed, sign, integrator, &limits, &mut |q| {
            let a = arc + sign * (q[0] - last[0]).hypot(q[1] - last[1]);
            let exempt = |s: f64| (s - a).abs() <= gap || (sign > 0.0 && s <= gap);
            if grid.crowded(q, d_test, id, exempt) {
                return false;
            }
            grid.insert(Sample {
                p: q,
                line: id,
                arc: a,
            });
            (last, arc) = (q, a);
            true
        });
        if sign > 0.0 {
            line = t.points;
            if t.stop == Stop::Closed {
                break;
            }
        } else {
            line.splice(0..0, t.points.into_iter().skip(1).rev());
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    /// Cellular flow `u = (sin(pi x) cos(pi y), -cos(pi x) sin(pi y))` on `[0, 2] x [0, 1]`: two
    /// counter-rotating cells with stagnation points at their centres `(0.5, 0.5)`, `(1.5, 0.5)`
    /// and at the corners of the cells.
    struct Cells;
    impl VelocityField for Cells {
        fn velocity(&self, p: [f64; 2]) -> Option<[f64; 2]> {
            let [x, y] = p;
            ((0.0..=2.0).contains(&x) && (0.0..=1.0).contains(&y))
                .then(|| [(PI * x).sin() * (PI * y).cos(), -(PI * x).cos() * (PI * y).sin()])
        }
    }
    const STAGNATION: [[f64; 2]; 8] = [
        [0.5, 0.5],
        [1.5, 0.5],
        [0.0, 0.0],
        [1.0, 0.0],
        [2.0, 0.0],
        [0.0, 1.0],
        [1.0, 1.0],
        [2.0, 1.0],
    ];

    fn limits() -> Limits {
        Limits {
            max_length: 8.0,
            min_speed: 1e-4,
            scale: 0.005,
            max_step: 0.02,
            closure: 0.02,
            max_steps: crate::render::streamlines::MAX_TRACE_STEPS,
        }
    }

    fn distance(a: [f64; 2], b: [f64; 2]) -> f64 {
        (a[0] - b[0]).hypot(a[1] - b[1])
    }

    /// Distance from `c` to the segment `a`-`b`.
    fn to_segment(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
        let d = [b[0] - a[0], b[1] - a[1]];
        let len2 = d[0] * d[0] + d[1] * d[1];
        let t = if len2 > 0.0 {
            (((c[0] - a[0]) * d[0] + (c[1] - a[1]) * d[1]) / len2).clamp(0.0, 1.0)
        } else {
            0.0
        };
        distance([a[0] + t * d[0], a[1] + t * d[1]], c)
    }

    #[test]
    fn lines_keep_their_distance_cover_the_domain_and_are_bounded() {
        let separation = 0.04;
        let d_sep = separation * 2.0;
        let d_test = TEST_RATIO * d_sep;
        for integrator in [
            Integrator::Rk45 { tolerance: 1e-6 },
            Integrator::Rk4 { step: 0.01 },
        ] {
            let l = limits();
            let lines = lines(&Cells, [0.0, 0.0], [2.0, 1.0], separation, integrator, &l);
            // Bounded: seeds are pairwise at least 0.99 d_sep apart, so disks of radius
            // 0.495 d_sep about them are disjoint and lie in the domain grown by that radius.
            eprintln!(
                "{integrator:?}: {} lines, {} points",
                lines.len(),
                lines.iter().map(Vec::len).sum::<usize>()
            );
            let r = 0.495 * d_sep;
            let bound = (2.0 + 2.0 * r) * (1.0 + 2.0 * r) / (PI * r * r);
            assert!(
                lines.len() > 10 && (lines.len() as f64) <= bound,
                "{integrator:?}: {} lines, bound {bound:.0}",
                lines.len()
            );
            // Separation: points of different lines at least d_test apart; segments at least
            // d_test less the longest step.
            let step = l.max_step.min(0.5 * d_test);
            for (a, la) in lines.iter().enumerate() {
                for lb in &lines[a + 1..] {
                    for p in la {
                        for q in lb {
                            assert!(distance(*p, *q) >= d_test, "{integrator:?}: points {p:?} {q:?}");
                        }
                        for w in lb.windows(2) {
                            assert!(to_segment(w[0], w[1], *p) >= d_test - step);
                        }
                    }
                }
            }
            // Coverage: every point of a fine lattice farther than d_sep from a stagnation
            // point lies within 2 d_sep of a line.
            let mut worst: f64 = 0.0;
            for j in 0..50 {
                for i in 0..100 {
                    let c = [(i as f64 + 0.5) / 50.0, (j as f64 + 0.5) / 50.0];
                    if STAGNATION.iter().any(|s| distance(*s, c) < d_sep) {
                        continue;
                    }
                    let d = lines
                        .iter()
                        .flat_map(|l| l.windows(2))
                        .map(|w| to_segment(w[0], w[1], c))
                        .fold(f64::INFINITY, f64::min);
                    worst = worst.max(d);
                }
            }
            assert!(
                worst < 2.0 * d_sep,
                "{integrator:?}: a point {worst} from every line"
            );
        }
    }

    #[test]
    fn a_closed_orbit_is_drawn_once() {
        // Solid-body rotation in [-1, 1]^2: every line is a circle and ends after one turn.
        struct Vortex;
        impl VelocityField for Vortex {
            fn velocity(&self, p: [f64; 2]) -> Option<[f64; 2]> {
                (p[0].abs() <= 1.0 && p[1].abs() <= 1.0).then_some([-p[1], p[0]])
            }
        }
        let lines = lines(
            &Vortex,
            [-1.0, -1.0],
            [2.0, 2.0],
            0.05,
            Integrator::Rk45 { tolerance: 1e-7 },
            &limits(),
        );
        for line in &lines {
            let r = line[0][0].hypot(line[0][1]);
            let length: f64 = line.windows(2).map(|w| distance(w[0], w[1])).sum();
            assert!(length < 2.0 * PI * r + 0.05, "radius {r}: length {length}");
        }
        // Circles inside the rotating square close on their seeds (within d_test = 0.05): one
        // per d_sep = 0.1 of radius out to the inscribed circle.
        let circles: Vec<f64> = lines
            .iter()
            .map(|l| l[0][0].hypot(l[0][1]))
            .filter(|r| *r < 0.9)
            .collect();
        for line in &lines {
            let r = line[0][0].hypot(line[0][1]);
            let length: f64 = line.windows(2).map(|w| distance(w[0], w[1])).sum();
            if r < 0.9 {
                assert!(
                    (length - 2.0 * PI * r).abs() < 0.05,
                    "radius {r}: length {length}"
                );
            }
        }
        assert!(circles.len() >= 8, "circles of radii {circles:?}");
    }
}
