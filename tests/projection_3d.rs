//! The 3D projection method on the CPU: Ethier & Steinman's exact solution converges at second
//! order, a cavity periodic in z equals the 2D cavity to round-off, every pressure solver gives
//! the same cubic-cavity flow, the vortex fields of the discrete Taylor-Green vortex match the
//! analytic curl, and results do not depend on the number of threads.

mod common;

use flowlab::case::Case;
use flowlab::solver::incompressible::analytic::Analytic;
use flowlab::solver::{self, Solver};

/// Root-mean-square of `a - b` over cells, relative to the RMS of `b`.
fn rel_rms(a: &[f64], b: &[f64]) -> f64 {
    let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum();
    let n: f64 = b.iter().map(|y| y * y).sum();
    (d / n).sqrt()
}

fn minus_mean(v: &mut [f64]) {
    let m = v.iter().sum::<f64>() / v.len() as f64;
    v.iter_mut().for_each(|x| *x -= m);
}

/// The exact field at the cell centres of `s`'s grid at its time.
fn exact_at_centres(s: &dyn Solver, f: &Analytic, value: impl Fn([f64; 3], f64) -> f64) -> Vec<f64> {
    let g = s.info().grid;
    let mut out = Vec::with_capacity(g.cells());
    for k in 0..g.n[2] {
        for j in 0..g.n[1] {
            for i in 0..g.n[0] {
                let _ = f;
                out.push(value([g.centre(0, i), g.centre(1, j), g.centre(2, k)], s.time()));
            }
        }
    }
    out
}

/// Relative RMS errors of the velocity (all three components) and of the pressure (both with
/// their means removed) at t = 0.05 on n^3 cells.
fn ethier_steinman_errors(n: usize) -> (f64, f64) {
    let nn = n.to_string();
    let case = common::case(
        "ethier_steinman",
        &[
            &format!("grid.nx={nn}"),
            &format!("grid.ny={nn}"),
            &format!("grid.nz={nn}"),
        ],
    );
    let mut s = solver::build(&case.spec).unwrap();
    common::run_to(s.as_mut(), 0.05).unwrap();
    let a = case.spec.initial.clone();
    let flow = Analytic::of(&a, &s.info().grid, 1.0).unwrap();
    let (mut du, mut nu) = (0.0, 0.0);
    for (c, name) in ["u", "v", "w"].iter().enumerate() {
        let num = common::field(s.as_ref(), name);
        let exact = exact_at_centres(s.as_ref(), &flow, |x, t| flow.velocity(x, t)[c]);
        du += num.iter().zip(&exact).map(|(x, y)| (x - y).powi(2)).sum::<f64>();
        nu += exact.iter().map(|y| y * y).sum::<f64>();
    }
    // The pressure in the inner half of the box, |x|, |y|, |z| <= 1/2: Chorin's projection
    // with dp/dn = 0 on the walls leaves a numerical boundary layer in the pressure of
    // thickness ~ sqrt(nu dt) (Guermond, Minev & Shen 2006, sec. 3.1), where its error is
    // only O(dt^1/2) = O(h).
    let inner = exact_at_centres(s.as_ref(), &flow, |x, _| {
        x.iter().all(|c| c.abs() <= 0.5) as u8 as f64
    });
    let keep = |v: Vec<f64>| {
        v.into_iter()
            .zip(&inner)
            .filter(|(_, k)| **k == 1.0)
            .map(|(x, _)| x)
            .collect::<Vec<_>>()
    };
    let mut p = keep(common::field(s.as_ref(), "p"));
    let mut pe = keep(exact_at_centres(s.as_ref(), &flow, |x, t| {
        flow.pressure(x, t).unwrap()
    }));
    minus_mean(&mut p);
    minus_mean(&mut pe);
    ((du / nu).sqrt(), rel_rms(&p, &pe))
}

/// Ethier & Steinman (1994): with the exact velocity on every face (nu = 1, so the viscous
/// step limit makes dt ~ h^2 and the splitting error second order in h), the velocity error over
/// the whole box and the pressure error in its inner half fall at second order: observed orders
/// >= 1.8 over 8^3, 16^3, 32^3 (the pressure over the whole box, boundary layer included, falls
/// at order 1.6 to 1.7: see `ethier_steinman_errors`).
#[test]
fn ethier_steinman_converges_at_second_order() {
    let ns = [8, 16, 32];
    let errs: Vec<(f64, f64)> = ns.iter().map(|&n| ethier_steinman_errors(n)).collect();
    eprintln!("Ethier-Steinman relative RMS errors (velocity, inner pressure) at 8^3, 16^3, 32^3: {errs:?}");
    for w in errs.windows(2) {
        let (u_order, p_order) = ((w[0].0 / w[1].0).log2(), (w[0].1 / w[1].1).log2());
        assert!(
            u_order >= 1.8 && p_order >= 1.8,
            "orders {u_order:.2} (velocity), {p_order:.2} (pressure): {errs:?}"
        );
    }
    assert!(
        errs[2].0 < 2e-3 && errs[2].1 < 2e-2,
        "errors at 32^3: {:?}",
        errs[2]
    );
}

fn cavity_2d(n: usize) -> String {
    common::cavity_toml(100.0, n).replace("pressure_solver = \"pcg\"", "pressure_solver = \"fft\"")
}

/// A cavity periodic in z with a z-independent start stays z-independent, and each z-plane
/// equals the 2D cavity at the same time steps (f64, the transform pressure solve, which is
/// direct in both): to round-off after 100 steps.
#[test]
fn cavity_periodic_in_z_equals_the_2d_cavity() {
    let n = 24;
    let text2 = cavity_2d(n);
    let mut s2 = common::solver(&text2);
    let text3 = text2
        .replace("dim = 2", "dim = 3")
        .replace(&format!("ny = {n}"), &format!("ny = {n}\nnz = 4"))
        .replace("extents = [1.0, 1.0]", "extents = [1.0, 1.0, 0.25]")
        .replace(
            "[solver]",
            "[boundary.front]\ntype = \"periodic\"\n[boundary.back]\ntype = \"periodic\"\n\n[solver]",
        );
    let mut s3 = common::solver(&text3);
    for s in [s2.as_mut(), s3.as_mut()] {
        s.set_dt_cap(2e-3);
    }
    for _ in 0..100 {
        s2.step().unwrap();
        s3.step().unwrap();
        assert_eq!(s2.dt(), s3.dt());
    }
    let cells = n * n;
    for name in ["u", "v", "p"] {
        let a = common::field(s2.as_ref(), name);
        let b = common::field(s3.as_ref(), name);
        let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        for plane in 0..4 {
            let diff = a
                .iter()
                .zip(&b[plane * cells..(plane + 1) * cells])
                .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
            assert!(
                diff <= 1e-12 * scale,
                "{name}, plane {plane}: {diff:e} (scale {scale:e})"
            );
        }
    }
    let w = common::field(s3.as_ref(), "w");
    assert!(
        w.iter().all(|x| x.abs() <= 1e-14),
        "w = {:e}",
        w.iter().fold(0.0f64, |m, x| m.max(x.abs()))
    );
}

fn cubic_cavity(n: usize, sets: &[&str]) -> Box<dyn Solver> {
    let nn = n.to_string();
    let mut all = vec![
        format!("grid.nx={nn}"),
        format!("grid.ny={nn}"),
        format!("grid.nz={nn}"),
    ];
    all.extend(sets.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    let case = common::case("cavity_3d_re100", &refs);
    solver::build(&case.spec).unwrap()
}

/// Every pressure solver gives the cubic cavity the same flow (to its tolerance) and leaves the
/// divergence at that tolerance; every 3D field is finite.
#[test]
fn every_pressure_solver_gives_the_same_cubic_cavity() {
    let reference = {
        let mut s = cubic_cavity(12, &["solver.pressure_solver=\"fft\""]);
        for _ in 0..30 {
            s.step().unwrap();
        }
        common::field(s.as_ref(), "u")
    };
    for ps in ["jacobi", "sor", "pcg", "multigrid"] {
        let mut s = cubic_cavity(
            12,
            &[
                &format!("solver.pressure_solver=\"{ps}\""),
                "solver.tolerance=1e-9",
            ],
        );
        for _ in 0..30 {
            s.step().unwrap();
        }
        let u = common::field(s.as_ref(), "u");
        let d = rel_rms(&u, &reference);
        assert!(d < 1e-6, "{ps}: u differs from the transform solve's by {d:e}");
        let div = common::field(s.as_ref(), "divergence");
        assert!(div.iter().all(|x| x.abs() < 1e-5), "{ps}: divergence");
        for name in s.field_names() {
            let f = common::field(s.as_ref(), name);
            assert!(f.iter().all(|x| x.is_finite()), "{ps}: {name} not finite");
        }
    }
}

/// The discrete Taylor-Green vortex at t = 0: the vorticity vector derived from the staggered
/// velocity matches the analytic curl to second order (relative RMS error at 32^3 below 1.5 %:
/// the cross-derivative's central difference and the averaging to centres leave
/// `(1/6 + 1/8) (kh)^2 = 1.1 %` at `h = 2 pi / 32`; falling about four times from 16^3), and the helicity, zero for this flow, stays below 1 %
/// of `|u| |omega|`.
#[test]
fn taylor_green_vorticity_matches_the_analytic_curl() {
    let errors: Vec<f64> = [16usize, 32]
        .iter()
        .map(|&n| {
            let case = common::case(
                "taylor_green_3d",
                &[
                    &format!("grid.nx={n}"),
                    &format!("grid.ny={n}"),
                    &format!("grid.nz={n}"),
                ],
            );
            let s = solver::build(&case.spec).unwrap();
            // u = sin x cos y cos z, v = -cos x sin y cos z, w = 0 (V = 1, k = 1):
            // curl = (-cos x sin y sin z, -sin x cos y sin z, 2 sin x sin y cos z).
            let curl = |x: [f64; 3]| {
                let (s, c) = (|a: usize| x[a].sin(), |a: usize| x[a].cos());
                [-c(0) * s(1) * s(2), -s(0) * c(1) * s(2), 2.0 * s(0) * s(1) * c(2)]
            };
            let flow = Analytic::of(&case.spec.initial, &s.info().grid, 0.0).unwrap();
            let mut worst: f64 = 0.0;
            for (c, name) in ["vorticity_x", "vorticity_y", "vorticity_z"].iter().enumerate() {
                let num = common::field(s.as_ref(), name);
                let exact = exact_at_centres(s.as_ref(), &flow, |x, _| curl(x)[c]);
                worst = worst.max(rel_rms(&num, &exact));
            }
            let rms = |name: &str| {
                let f = common::field(s.as_ref(), name);
                (f.iter().map(|x| x * x).sum::<f64>() / f.len() as f64).sqrt()
            };
            let helicity = rms("helicity") / (rms("speed") * rms("vorticity_magnitude"));
            assert!(helicity < 1e-2, "{n}^3: helicity {helicity:e} of |u| |omega|");
            worst
        })
        .collect();
    assert!(errors[1] < 1.5e-2, "{errors:?}");
    assert!(errors[0] / errors[1] > 3.5, "{errors:?}");
}

/// Rows are reduced in a fixed order: one and two threads give bitwise the same 3D state.
#[test]
fn results_do_not_depend_on_the_thread_count() {
    let run = |threads: usize| {
        let pool = flowlab::backend::cpu::thread_pool(threads).unwrap();
        pool.install(|| {
            let mut s = cubic_cavity(
                10,
                &["solver.convection=\"tvd\"", "solver.time_integrator=\"ab2\""],
            );
            for _ in 0..20 {
                s.step().unwrap();
            }
            ["u", "v", "w", "p"].map(|n| common::field(s.as_ref(), n))
        })
    };
    assert_eq!(run(1), run(2));
}

/// The shipped 3D cases load, validate and take a step (the large ones on a coarse grid).
#[test]
fn shipped_3d_cases_run() {
    for name in [
        "cavity_3d_re100",
        "cavity_3d_re400",
        "cavity_3d_re1000",
        "cavity_3d_periodic_z",
        "ethier_steinman",
        "taylor_green_3d",
        "thibault_senocak_box",
    ] {
        let mut case: Case = common::case(name, &[]);
        assert_eq!(case.spec.case.dim, 3, "{name}");
        for key in ["grid.nx=8", "grid.ny=8", "grid.nz=8"] {
            case.set_assignment(key).unwrap();
        }
        let mut s = solver::build(&case.spec).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        s.step().unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}
