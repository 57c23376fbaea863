//! Tests of the tracers: order of accuracy, closing, stops and the grid sampler.

use super::*;
use std::f64::consts::PI;

/// Solid-body rotation `u = (-y, x)` about the origin in `[-1, 1]^2`.
struct Vortex;
impl VelocityField for Vortex {
    fn velocity(&self, p: [f64; 2]) -> Option<[f64; 2]> {
        (p[0].abs() <= 1.0 && p[1].abs() <= 1.0).then_some([-p[1], p[0]])
    }
}

fn limits(length: f64) -> Limits {
    Limits {
        max_length: length,
        min_speed: 1e-9,
        scale: 0.01,
        max_step: 1.0,
        closure: 0.005,
        max_steps: 1_000_000,
    }
}

fn end_error(t: &Trace, seed: [f64; 2]) -> f64 {
    let q = t.points.last().unwrap();
    (q[0] - seed[0]).hypot(q[1] - seed[1])
}

#[test]
fn rk45_orbit_closes_to_tolerance() {
    let seed = [0.5, 0.0];
    for tol in [1e-4, 1e-6, 1e-8] {
        let mut l = limits(2.0 * PI * 0.5);
        l.scale = 1e-12;
        l.closure = 0.0; // no early closure: measure the end of exactly one revolution
        l.max_step = 0.5;
        let t = trace(&Vortex, seed, 1.0, Integrator::Rk45 { tolerance: tol }, &l);
        assert_eq!(t.stop, Stop::Length);
        // Local errors of at most `tol` per step add up to at most `steps * tol`.
        let err = end_error(&t, seed);
        assert!(
            err < t.steps as f64 * tol,
            "tol {tol}: closure error {err} after {} steps",
            t.steps
        );
        for p in &t.points {
            assert!((p[0].hypot(p[1]) - 0.5).abs() < 10.0 * tol);
        }
    }
}

#[test]
fn rk4_orbit_closes_and_converges_at_high_order() {
    let seed = [0.5, 0.0];
    let run = |h: f64| {
        let mut l = limits(2.0 * PI * 0.5);
        l.scale = 1e-12;
        l.closure = 0.0;
        end_error(&trace(&Vortex, seed, 1.0, Integrator::Rk4 { step: h }, &l), seed)
    };
    // Whole numbers of steps per revolution (length pi), so no shortened last step changes
    // the error constant between the runs. The observed order rises towards 4 as h/r
    // falls (3.10, 3.58, 3.82, 3.92 from 32 to 512 steps): the field's 1/r curvature
    // term is still visible at h/r = 0.2.
    let e: Vec<f64> = [128.0, 256.0, 512.0].iter().map(|n| run(PI / n)).collect();
    assert!(e[2] < 1e-9, "error {}", e[2]);
    let orders: Vec<f64> = e.windows(2).map(|w| (w[0] / w[1]).log2()).collect();
    assert!(
        orders[1] > orders[0] && (orders[1] - 4.0).abs() < 0.1,
        "observed orders {orders:?} (errors {e:?})"
    );
}

#[test]
fn rk45_needs_fewer_steps_than_rk4_for_the_same_accuracy() {
    let seed = [0.5, 0.0];
    let mut l = limits(2.0 * PI * 0.5);
    l.scale = 1e-12;
    l.closure = 0.0;
    l.max_step = 0.5;
    rk45_takes_fewer_steps(&Vortex, seed, &l, |t| end_error(t, seed));
}

/// Asserts that RK45 at tolerance 1e-7 reaches its end point (`error`) in fewer steps than the
/// coarsest RK4 step (0.5, shortened by 0.8 at a time) that is at least as accurate.
fn rk45_takes_fewer_steps<const D: usize>(
    f: &dyn VelocityField<D>,
    seed: [f64; D],
    l: &Limits,
    error: impl Fn(&Trace<D>) -> f64,
) {
    let t45 = trace(f, seed, 1.0, Integrator::Rk45 { tolerance: 1e-7 }, l);
    let e45 = error(&t45);
    let mut h = 0.5;
    let t4 = loop {
        let t = trace(f, seed, 1.0, Integrator::Rk4 { step: h }, l);
        if error(&t) <= e45 {
            break t;
        }
        h *= 0.8;
    };
    assert!(
        t45.steps < t4.steps,
        "RK45 {} steps (error {e45}), RK4 {} steps",
        t45.steps,
        t4.steps
    );
}

#[test]
fn closed_orbit_detected_and_walls_and_stagnation_stop() {
    // Steps no longer than a few closure distances, as the app sets them (two cells).
    let mut l = limits(100.0);
    l.max_step = 0.02;
    let t = trace(&Vortex, [0.3, 0.0], 1.0, Integrator::Rk45 { tolerance: 1e-6 }, &l);
    assert_eq!(t.stop, Stop::Closed);
    assert!(
        (t.length - 2.0 * PI * 0.3).abs() < 0.01,
        "closed after {}",
        t.length
    );
    // Uniform flow to the right leaves through the wall at x = 1.
    struct Uniform;
    impl VelocityField for Uniform {
        fn velocity(&self, p: [f64; 2]) -> Option<[f64; 2]> {
            (p[0].abs() <= 1.0 && p[1].abs() <= 1.0).then_some([1.0, 0.0])
        }
    }
    let t = trace(
        &Uniform,
        [0.0, 0.0],
        1.0,
        Integrator::Rk4 { step: 0.01 },
        &limits(100.0),
    );
    assert_eq!(t.stop, Stop::Wall);
    assert!(t.points.last().unwrap()[0] > 0.98);
    let t = trace(
        &Vortex,
        [0.0, 0.0],
        1.0,
        Integrator::Rk4 { step: 0.01 },
        &limits(1.0),
    );
    assert_eq!(t.stop, Stop::Stagnation);
    let t = trace(
        &Vortex,
        [0.5, 0.0],
        1.0,
        Integrator::Rk4 { step: 0.01 },
        &limits(1.0),
    );
    assert_eq!(t.stop, Stop::Length);
    assert!((t.length - 1.0).abs() < 1e-12);
}

/// Solid-body rotation with a slow inward drift, `u = (-y - eps x, x - eps y)`: its paths
/// are logarithmic spirals whose radius shrinks by `exp(-2 pi eps)` each turn.
struct Spiral(f64);
impl VelocityField for Spiral {
    fn velocity(&self, p: [f64; 2]) -> Option<[f64; 2]> {
        let e = self.0;
        (p[0].abs() <= 1.0 && p[1].abs() <= 1.0).then_some([-p[1] - e * p[0], p[0] - e * p[1]])
    }
}

#[test]
fn slow_spiral_stops_after_one_turn() {
    let (eps, r0) = (0.005, 0.5);
    // One turn moves the path inwards by r0 (1 - exp(-2 pi eps)) = 0.0155 < closure.
    let pitch = r0 * (1.0 - (-2.0 * PI * eps).exp());
    let one_turn =
        2.0 * PI * r0 * (1.0 - (-2.0 * PI * eps).exp()) / (2.0 * PI * eps) * (1.0 + eps * eps).sqrt();
    for integrator in [
        Integrator::Rk45 { tolerance: 1e-7 },
        Integrator::Rk4 { step: 0.01 },
    ] {
        let mut l = limits(100.0);
        l.max_step = 0.02;
        l.closure = 0.05;
        let t = trace(&Spiral(eps), [r0, 0.0], 1.0, integrator, &l);
        assert_eq!(t.stop, Stop::Closed, "{integrator:?}");
        assert!(
            (t.length - one_turn).abs() < 1e-3,
            "{integrator:?}: closed after {} (one turn {one_turn})",
            t.length
        );
        let end = t.points.last().unwrap();
        assert!(
            ((end[0] - r0).hypot(end[1]) - pitch).abs() < 1e-3,
            "ends at {end:?}"
        );
        // A closure distance below the pitch lets it spiral on to the length limit.
        l.closure = 0.5 * pitch;
        let t = trace(&Spiral(eps), [r0, 0.0], 1.0, integrator, &l);
        assert_eq!(t.stop, Stop::Length, "{integrator:?}");
    }
}

#[test]
fn closing_needs_the_initial_direction() {
    // Seed 0.01 off the vortex centre with closure 0.05: half a turn later the path passes
    // the seed's section 0.02 from the seed but going the other way, which does not close.
    let mut l = limits(1.0);
    l.max_step = 0.002;
    l.scale = 0.001;
    l.closure = 0.05;
    let t = trace(
        &Vortex,
        [0.01, 0.0],
        1.0,
        Integrator::Rk45 { tolerance: 1e-9 },
        &l,
    );
    assert_eq!(t.stop, Stop::Closed);
    assert!(
        (t.length - 2.0 * PI * 0.01).abs() < 1e-6,
        "closed after {}",
        t.length
    );
}

#[test]
fn step_limit_bounds_a_trace() {
    let mut l = limits(100.0);
    l.max_steps = 50;
    let t = trace(&Vortex, [0.5, 0.0], 1.0, Integrator::Rk4 { step: 1e-6 }, &l);
    assert_eq!((t.stop, t.steps, t.points.len()), (Stop::Length, 50, 51));
}

#[test]
fn grid_sampler_is_bilinear_in_the_interior() {
    let n = [8, 6];
    let (origin, spacing) = ([0.0, 0.0], [0.125, 1.0 / 6.0]);
    let centre = |i: usize, a: usize| origin[a] + (i as f64 + 0.5) * spacing[a];
    let mut g = GridVelocity {
        n,
        origin,
        spacing,
        components: [vec![], vec![]],
    };
    for j in 0..n[1] {
        for i in 0..n[0] {
            g.components[0].push(2.0 * centre(i, 0) + 3.0 * centre(j, 1));
            g.components[1].push(-centre(i, 0));
        }
    }
    let v = g.velocity([0.4, 0.55]).unwrap();
    assert!((v[0] - (0.8 + 1.65)).abs() < 1e-12 && (v[1] + 0.4).abs() < 1e-12);
    assert!(g.velocity([1.2, 0.5]).is_none());
}

/// Helical flow `u = (-w y, w x, c)` in `[-1, 1]^2 x [0, 4]`: the streamline from `(r, 0, z0)`
/// is the helix of radius `r`, its speed `sqrt(w^2 r^2 + c^2)` constant along it, so after arc
/// length `s` (time `t = s / speed`) it is at `(r cos wt, r sin wt, z0 + c t)`.
struct Helix {
    w: f64,
    c: f64,
}

impl Helix {
    fn field(&self, p: [f64; 3]) -> [f64; 3] {
        [-self.w * p[1], self.w * p[0], self.c]
    }

    fn end(&self, r: f64, z0: f64, s: f64) -> [f64; 3] {
        let t = s / (self.w * self.w * r * r + self.c * self.c).sqrt();
        [r * (self.w * t).cos(), r * (self.w * t).sin(), z0 + self.c * t]
    }
}

impl VelocityField<3> for Helix {
    fn velocity(&self, p: [f64; 3]) -> Option<[f64; 3]> {
        let inside = p[0].abs() <= 1.0 && p[1].abs() <= 1.0 && (0.0..=4.0).contains(&p[2]);
        inside.then(|| self.field(p))
    }
}

const HELIX: Helix = Helix { w: 2.0, c: 0.25 };

/// Two turns of the helix of radius 0.5 from z = 0.5 (arc length 2 pi r / (w r) x speed x 2).
fn helix_length() -> f64 {
    let r: f64 = 0.5;
    let speed = (HELIX.w * HELIX.w * r * r + HELIX.c * HELIX.c).sqrt();
    2.0 * (2.0 * PI / HELIX.w) * speed
}

fn helix_error(t: &Trace<3>) -> f64 {
    distance(*t.points.last().unwrap(), HELIX.end(0.5, 0.5, t.length))
}

#[test]
fn rk4_and_rk45_follow_a_helix_to_its_analytic_end_point() {
    let seed = [0.5, 0.0, 0.5];
    let mut l = limits(helix_length());
    l.closure = 0.0;
    let rk4 = trace(&HELIX, seed, 1.0, Integrator::Rk4 { step: 0.01 }, &l);
    assert_eq!(rk4.stop, Stop::Length);
    assert!((rk4.length - helix_length()).abs() < 1e-12);
    assert!(
        helix_error(&rk4) < 1e-8,
        "RK4 end point off by {}",
        helix_error(&rk4)
    );
    for tol in [1e-6, 1e-8] {
        let rk45 = trace(&HELIX, seed, 1.0, Integrator::Rk45 { tolerance: tol }, &l);
        let err = helix_error(&rk45);
        assert!(
            err < rk45.steps as f64 * tol,
            "tol {tol}: end point off by {err} after {} steps",
            rk45.steps
        );
    }
    // Backwards: the helix down from z = 3.5 reaches the point the forward trace started at.
    let top = HELIX.end(0.5, 0.5, helix_length());
    let back = trace(&HELIX, top, -1.0, Integrator::Rk4 { step: 0.01 }, &l);
    assert!(distance(*back.points.last().unwrap(), seed) < 1e-8);
}

#[test]
fn rk45_needs_fewer_steps_than_rk4_for_the_same_accuracy_in_3d() {
    let seed = [0.5, 0.0, 0.5];
    let mut l = limits(helix_length());
    l.closure = 0.0;
    l.max_step = 0.5;
    rk45_takes_fewer_steps(&HELIX, seed, &l, helix_error);
}

#[test]
fn a_helix_through_the_trilinear_grid_sampler_and_its_stops() {
    // The helical field at the centres of 20 x 20 x 40 cells: linear, so the trilinear sampler
    // is exact away from the outer half cells.
    let n = [20, 20, 40];
    let (origin, spacing) = ([-1.0, -1.0, 0.0], [0.1, 0.1, 0.1]);
    let mut g = GridVelocity::<3> {
        n,
        origin,
        spacing,
        ..Default::default()
    };
    for k in 0..n[2] {
        for j in 0..n[1] {
            for i in 0..n[0] {
                let c = [i, j, k].map(|x| x as f64 + 0.5);
                let u = HELIX.field(std::array::from_fn(|a| origin[a] + c[a] * spacing[a]));
                for (component, value) in g.components.iter_mut().zip(u) {
                    component.push(value);
                }
            }
        }
    }
    let p = [0.33, -0.21, 1.7];
    let (exact, sampled) = (HELIX.field(p), g.velocity(p).unwrap());
    assert!(distance(exact, sampled) < 1e-12, "{sampled:?} against {exact:?}");
    let seed = [0.5, 0.0, 0.5];
    let mut l = limits(helix_length());
    l.closure = 0.0;
    let t = trace(&g, seed, 1.0, Integrator::Rk45 { tolerance: 1e-9 }, &l);
    assert!(helix_error(&t) < 1e-6, "end point off by {}", helix_error(&t));
    // Upwards for ever: the trace stops at the top wall.
    l.max_length = 100.0;
    assert_eq!(
        trace(&g, seed, 1.0, Integrator::Rk4 { step: 0.02 }, &l).stop,
        Stop::Wall
    );
    assert!(g.velocity([0.0, 0.0, 4.5]).is_none());
}

#[test]
fn a_closed_orbit_in_a_plane_of_a_3d_field_closes_after_one_turn() {
    // No axial flow: the helix degenerates to circles in planes z = const.
    let flat = Helix { w: 1.0, c: 0.0 };
    let mut l = limits(20.0);
    l.closure = 0.01;
    let t = trace(
        &flat,
        [0.5, 0.0, 2.0],
        1.0,
        Integrator::Rk45 { tolerance: 1e-8 },
        &l,
    );
    assert_eq!(t.stop, Stop::Closed);
    assert!(
        (t.length - 2.0 * PI * 0.5).abs() < 1e-3,
        "closed after {}",
        t.length
    );
    assert!(t.points.iter().all(|p| (p[2] - 2.0).abs() < 1e-12));
}
