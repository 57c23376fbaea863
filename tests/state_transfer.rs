//! `Solver::load_state`: carrying a running flow over to a solver on another grid, precision or
//! (in `cuda_parity.rs`) backend, as the app's "Apply" and the coarse-to-fine Ghia runs do.
//!
//! - An analytic divergence-free field loaded onto 32² and 64² cavities: the error is second
//!   order (bilinear sampling at the faces is exact; the projection that follows moves the
//!   faces by the O(h²) discrete divergence of the sampled field), and the loaded velocity is
//!   divergence-free to the pressure tolerance.
//! - Same grid, same precision: the state arrives unchanged (compressible: bit for bit; the
//!   incompressible projection moves it by the pressure tolerance at most), and both solvers
//!   then step on to the same solution.
//! - Another precision: f64 -> f32 arrives to f32 rounding.
//! - Wrong family or domain, or a source without the velocity or the pressure somewhere: a clear
//!   error, nothing changed.

mod common;

use common::rel_l2;

use flowlab::case::Kind;
use flowlab::solver::{Grid, Solver, SolverError, SolverInfo};
use std::f64::consts::PI;

/// A "solver" that only answers `sample` with the divergence-free cavity-like flow of stream
/// function `psi = sin²(pi x) sin²(pi y) / pi` on the unit square (zero normal velocity on every
/// wall), `p = cos(pi x) cos(pi y)`; it has no value of the field `missing` names.
struct Analytic {
    grid: Grid,
    missing: Option<&'static str>,
}

impl Analytic {
    fn velocity(x: f64, y: f64) -> (f64, f64) {
        let (sx, sy) = ((PI * x).sin(), (PI * y).sin());
        (
            2.0 * sx * sx * sy * (PI * y).cos(),
            -2.0 * sy * sy * sx * (PI * x).cos(),
        )
    }
}

impl Solver for Analytic {
    fn info(&self) -> SolverInfo {
        SolverInfo {
            kind: Kind::Incompressible,
            method: "analytic",
            backend: "none",
            precision: "f64",
            grid: self.grid,
        }
    }
    fn time(&self) -> f64 {
        1.5
    }
    fn steps(&self) -> u64 {
        7
    }
    fn step(&mut self) -> Result<(), SolverError> {
        Ok(())
    }
    fn dt(&self) -> f64 {
        0.01
    }
    fn set_dt_cap(&mut self, _cap: f64) {}
    fn residuals(&self) -> &[(&'static str, f64)] {
        &[]
    }
    fn field_names(&self) -> &'static [&'static str] {
        &["u", "v", "p"]
    }
    fn field(&self, _name: &str, _out: &mut Vec<f64>) -> Option<()> {
        None
    }
    fn sample(&self, name: &str, point: [f64; 3]) -> Option<f64> {
        let (x, y) = (point[0], point[1]);
        let (u, v) = Self::velocity(x, y);
        if self.missing == Some(name) {
            return None;
        }
        match name {
            "u" => Some(u),
            "v" => Some(v),
            "p" => Some((PI * x).cos() * (PI * y).cos()),
            _ => None,
        }
    }
    fn update(&mut self, _spec: &flowlab::case::CaseSpec) -> Result<(), flowlab::case::Invalid> {
        Ok(())
    }
    fn summary(&self) -> serde_json::Map<String, serde_json::Value> {
        Default::default()
    }
    fn load_state(&mut self, _from: &dyn Solver) -> Result<(), flowlab::case::Invalid> {
        unreachable!("the analytic flow is only a source")
    }
    fn snapshot(&self) -> Result<flowlab::solver::Snapshot, SolverError> {
        unreachable!("the analytic flow has no state to save")
    }
    fn restore(&mut self, _state: &flowlab::solver::Snapshot) -> Result<(), flowlab::case::Invalid> {
        unreachable!("the analytic flow is only a source")
    }
}

fn cavity(n: usize, sets: &[&str]) -> Box<dyn Solver> {
    let nx = format!("grid.nx={n}");
    let ny = format!("grid.ny={n}");
    let mut all = vec![nx.as_str(), ny.as_str(), "solver.tolerance=1e-10"];
    all.extend_from_slice(sets);
    let case = common::case("lid_driven_cavity_re100", &all);
    flowlab::solver::build(&case.spec).expect("cavity solver")
}

fn rms(a: &[f64]) -> f64 {
    (a.iter().map(|x| x * x).sum::<f64>() / a.len() as f64).sqrt()
}

#[test]
fn an_analytic_flow_loads_at_second_order_and_divergence_free() {
    let mut errors = Vec::new();
    for n in [32, 64] {
        let mut s = cavity(n, &[]);
        let from = Analytic {
            grid: s.info().grid,
            missing: None,
        };
        s.load_state(&from).expect("loads");
        assert_eq!((s.time(), s.steps()), (1.5, 7), "time and step count come along");
        let (u, v) = (common::field(s.as_ref(), "u"), common::field(s.as_ref(), "v"));
        let g = s.info().grid;
        let mut err = 0.0f64;
        for j in 0..n {
            for i in 0..n {
                let (ue, ve) = Analytic::velocity(g.centre(0, i), g.centre(1, j));
                let k = j * n + i;
                err = err.max((u[k] - ue).abs()).max((v[k] - ve).abs());
            }
        }
        let div = rms(&common::field(s.as_ref(), "divergence"));
        let speed = rms(&u).max(rms(&v));
        eprintln!("n = {n}: max velocity error {err:.3e}, RMS divergence {div:.3e}");
        // The pressure solver stops at a relative residual of 1e-10 of div(u_sampled) =
        // O(h²): what is left of the divergence is far below 1e-8 of the speed per cell.
        assert!(div < 1e-8 * speed * n as f64, "divergence {div:e} after loading");
        errors.push(err);
    }
    let order = (errors[0] / errors[1]).log2();
    eprintln!("order {order:.2}");
    assert!(
        errors[1] < 5e-3 && order > 1.8,
        "errors {errors:?}, order {order}"
    );
}

#[test]
fn a_cavity_carries_over_to_the_same_grid_and_steps_on_identically() {
    let mut a = cavity(32, &["solver.time_integrator=\"ab2\""]);
    for _ in 0..60 {
        a.step().expect("step");
    }
    let mut b = cavity(32, &["solver.time_integrator=\"ab2\""]);
    b.load_state(a.as_ref()).expect("loads");
    assert_eq!((b.time(), b.steps()), (a.time(), a.steps()));
    for name in ["u", "v", "p"] {
        let d = rel_l2(&common::field(b.as_ref(), name), &common::field(a.as_ref(), name));
        eprintln!("after loading: {name} differs by {d:.2e}");
        // The loaded velocity is projected again: it moves by the divergence the pressure
        // tolerance (1e-10) left in `a`. The pressure is copied exactly.
        assert!(d < 1e-9, "{name}: {d:e}");
    }
    for _ in 0..40 {
        a.step().expect("step");
        b.step().expect("step");
    }
    for name in ["u", "v", "p"] {
        let d = rel_l2(&common::field(b.as_ref(), name), &common::field(a.as_ref(), name));
        eprintln!("40 steps on: {name} differs by {d:.2e}");
        // b restarts AB2 with one Euler step: a local O(dt²) difference that then decays.
        assert!(d < 1e-4, "{name}: {d:e}");
    }
}

#[test]
fn a_cavity_carries_over_to_a_finer_grid() {
    let mut coarse = cavity(32, &[]);
    for _ in 0..100 {
        coarse.step().expect("step");
    }
    let mut fine = cavity(64, &[]);
    fine.load_state(coarse.as_ref()).expect("loads");
    // Both sampled at the same points agree to the interpolation error.
    let mut worst = 0.0f64;
    for p in [[0.5, 0.9], [0.25, 0.5], [0.7, 0.3], [0.5, 0.5]] {
        for name in ["u", "v"] {
            let (a, b) = (
                coarse.sample(name, [p[0], p[1], 0.0]).expect("sample"),
                fine.sample(name, [p[0], p[1], 0.0]).expect("sample"),
            );
            worst = worst.max((a - b).abs());
        }
    }
    eprintln!("largest pointwise difference coarse/fine: {worst:.2e}");
    assert!(worst < 1e-2, "{worst}");
    let div = rms(&common::field(fine.as_ref(), "divergence"));
    assert!(div < 1e-6, "RMS divergence {div:e} on the fine grid");
    for _ in 0..20 {
        fine.step().expect("the fine solver steps on");
    }
}

#[test]
fn f64_state_carries_over_to_f32() {
    let mut a = cavity(32, &[]);
    for _ in 0..50 {
        a.step().expect("step");
    }
    let mut b = cavity(32, &["solver.tolerance=1e-5", "solver.precision=\"f32\""]);
    b.load_state(a.as_ref()).expect("loads");
    assert_eq!(b.info().precision, "f32");
    let d = rel_l2(&common::field(b.as_ref(), "u"), &common::field(a.as_ref(), "u"));
    eprintln!("f64 -> f32: u differs by {d:.2e}");
    // f32 rounding (6e-8) plus the f32 projection, which stops at 1e-5 of the divergence left.
    assert!(d < 1e-5, "{d:e}");
}

#[test]
fn compressible_states_carry_over_bit_for_bit() {
    for (case, steps) in [("sod", 40), ("riemann_quadrant_config3", 10), ("cese_sod", 40)] {
        let build = || {
            let c = common::case(case, &["grid.nx=64"]);
            let mut c = c;
            if case.contains("quadrant") {
                c.set_assignment("grid.ny=64").expect("ny");
            }
            flowlab::solver::build(&c.spec).expect("solver")
        };
        let mut a = build();
        for _ in 0..steps {
            a.step().expect("step");
        }
        let mut b = build();
        b.load_state(a.as_ref()).expect("loads");
        for name in ["rho", "u", "p"] {
            let d = rel_l2(&common::field(b.as_ref(), name), &common::field(a.as_ref(), name));
            // Primitive -> conserved -> primitive: rounding only.
            assert!(d < 1e-14, "{case} {name}: {d:e} after loading");
        }
        for _ in 0..steps {
            a.step().expect("step");
            b.step().expect("step");
        }
        let d = rel_l2(
            &common::field(b.as_ref(), "rho"),
            &common::field(a.as_ref(), "rho"),
        );
        eprintln!("{case}: rho differs by {d:.2e} after {steps} more steps");
        if case.starts_with("cese") {
            // CE/SE restarts its gradients at zero (as at t = 0): a first-order-in-time kink
            // near the waves, not a copy.
            assert!(d < 5e-3, "{case}: {d:e}");
        } else {
            // MUSCL-Hancock has no state beyond the cell averages.
            assert!(d < 1e-13, "{case}: {d:e}");
        }
    }
}

#[test]
fn a_state_cannot_cross_families_or_domains() {
    let cav = cavity(16, &[]);
    let mut sod = flowlab::solver::build(&common::case("sod", &[]).spec).expect("sod");
    let e = sod
        .load_state(cav.as_ref())
        .expect_err("incompressible into compressible");
    assert!(e.message.contains("cannot carry"), "{}", e.message);
    let mut big = cavity(16, &["grid.extents=[2.0, 1.0]"]);
    let e = big.load_state(cav.as_ref()).expect_err("another domain");
    assert_eq!(e.key, "grid");
    assert_eq!(big.steps(), 0, "nothing changed");
}

/// A source that cannot give the velocity's second component, or the pressure, is refused with
/// the reason, and the projection method's and SIMPLE's state stays as it was to the bit (the
/// first velocity component had already been sampled when the second was found missing).
#[test]
fn a_flow_missing_a_field_is_refused_and_changes_nothing() {
    let simple = common::case("lid_driven_cavity_re100_simple", &["grid.nx=16", "grid.ny=16"]);
    let solvers = [
        cavity(16, &[]),
        flowlab::solver::build(&simple.spec).expect("SIMPLE cavity"),
    ];
    for mut s in solvers {
        s.advance(3).expect("steps");
        let fields = |s: &dyn Solver| {
            let names = s.field_names();
            names
                .iter()
                .map(|name| {
                    let mut out = Vec::new();
                    s.field(name, &mut out).expect("field");
                    out
                })
                .collect::<Vec<_>>()
        };
        let before = fields(s.as_ref());
        for missing in ["v", "p"] {
            let from = Analytic {
                grid: s.info().grid,
                missing: Some(missing),
            };
            let e = s.load_state(&from).expect_err("a field is missing");
            assert!(e.message.contains("cannot provide"), "{}", e.message);
            assert_eq!(s.steps(), 3, "{} without {missing}", s.info().method);
            let after = fields(s.as_ref());
            for (a, b) in before.iter().zip(&after) {
                assert!(
                    a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{} without {missing}: a field changed",
                    s.info().method
                );
            }
        }
    }
}
