//! Accuracy, conservation, robustness and symmetry of the compressible schemes.

mod common;
use common::*;
use flowlab::case::Case;
use flowlab::solver::Solver;

/// Sod's problem with every Riemann solver and limiter on the CPU ([`sod_convergence_failures`]).
#[test]
fn sod_l1_density_error_converges_for_every_riemann_solver_and_limiter() {
    let failures = sod_convergence_failures("cpu");
    assert!(failures.is_empty(), "{failures:?}");
}

/// Athena++'s Sod regression bar: RMS over conserved variables of the mean absolute error.
#[test]
fn athena_sod_accuracy_bar() {
    for lim in ["mc", "van_leer"] {
        let rms: Vec<f64> = [128usize, 256]
            .iter()
            .map(|&n| {
                let text = riemann_1d(
                    n,
                    1.0,
                    -0.5,
                    [1.0, 0.0, 1.0],
                    [0.125, 0.0, 0.1],
                    0.0,
                    0.25,
                    &format!("riemann = \"hllc\"\nlimiter = \"{lim}\"\ncfl = 0.3"),
                );
                let mut s = solver(&text);
                run_to(s.as_mut(), 0.25).unwrap();
                let q = |f: &dyn Fn(&str) -> Vec<f64>| {
                    let (r, u, p) = (f("rho"), f("u"), f("p"));
                    (0..n)
                        .map(|i| [r[i], r[i] * u[i], p[i] / 0.4 + 0.5 * r[i] * u[i] * u[i]])
                        .collect::<Vec<_>>()
                };
                let num = q(&|name| field(s.as_ref(), name));
                let ex = q(&|name| exact(s.as_ref(), name));
                let err: Vec<f64> = (0..3)
                    .map(|c| (0..n).map(|i| (ex[i][c] - num[i][c]).abs()).sum::<f64>() / n as f64)
                    .collect();
                err.iter().map(|e| e * e).sum::<f64>().sqrt()
            })
            .collect();
        println!(
            "athena sod hllc+{lim}: RMS(128) = {:.5}, RMS(256) = {:.5}, ratio {:.3}",
            rms[0],
            rms[1],
            rms[1] / rms[0]
        );
        assert!(rms[0] <= 0.011 && rms[1] / rms[0] <= 0.6, "{lim}: {rms:?}");
    }
}

#[test]
fn cese_sod_converges_within_twice_muscl_minmod() {
    let mut prev = f64::INFINITY;
    for n in NS {
        let mut c = solver(&sod(n, "method = \"cese\"\nalpha = 2.0\ncfl = 0.8"));
        run_to(c.as_mut(), 0.2).unwrap();
        let mut m = solver(&sod(n, "riemann = \"hllc\"\nlimiter = \"minmod\"\ncfl = 0.8"));
        run_to(m.as_mut(), 0.2).unwrap();
        let (ec, em) = (l1(c.as_ref(), "rho"), l1(m.as_ref(), "rho"));
        println!(
            "sod n = {n}: CE/SE L1(rho) {ec:.4e}, MUSCL-HLLC-minmod {em:.4e}, ratio {:.3}",
            ec / em
        );
        assert!(ec < prev && ec <= 2.0 * em, "n = {n}: {ec} vs {em}");
        prev = ec;
    }
}

fn density_wave(n: usize, solver_lines: &str, dim: usize) -> String {
    let (grid, bcs, vel, waves) = if dim == 1 {
        (
            format!("nx = {n}\nextents = [1.0]"),
            "left right",
            "[1.0]",
            "[1.0]",
        )
    } else {
        (
            format!("nx = {n}\nny = {n}\nextents = [1.0, 1.0]"),
            "left right bottom top",
            "[1.0, 0.5]",
            "[1.0, 1.0]",
        )
    };
    let b: String = bcs
        .split(' ')
        .map(|s| format!("[boundary.{s}]\ntype = \"periodic\"\n"))
        .collect();
    format!(
        "[case]\nname = \"w\"\nkind = \"compressible\"\ndim = {dim}\n[grid]\n{grid}\n{b}[initial]\ntype = \"density_wave\"\n\
         rho0 = 1.0\namplitude = 0.2\nvelocity = {vel}\npressure = 1.0\nwaves = {waves}\n[solver]\n{solver_lines}\n[stop]\nt_end = 1.0\n"
    )
}

/// Smooth advection: second order in L1. Limiters clip the slope at the two extrema of the sine,
/// where the error is O(dx) on O(1) cells, which costs O(dx^2) in L1 (not in the max norm).
#[test]
fn density_wave_is_second_order_with_van_leer_and_mc() {
    let ns = [64usize, 128, 256, 512];
    for lim in ["van_leer", "mc"] {
        let errs: Vec<f64> = ns
            .iter()
            .map(|&n| {
                let mut s = solver(&density_wave(
                    n,
                    &format!("riemann = \"hllc\"\nlimiter = \"{lim}\"\ncfl = 0.8"),
                    1,
                ));
                run_to(s.as_mut(), 1.0).unwrap();
                l1(s.as_ref(), "rho")
            })
            .collect();
        let fine = (errs[2] / errs[3]).log2();
        println!(
            "density wave {lim}: L1(rho) {:?}, order fit {:.3}, finest pair {fine:.3}",
            errs.map_e(),
            order(&ns, &errs)
        );
        assert!(fine >= 1.8, "{lim}: {errs:?}");
    }
}

fn totals(s: &dyn Solver, key: &str) -> [f64; 4] {
    let t = &s.summary()[key];
    [
        t["mass"].as_f64().unwrap(),
        t["momentum"][0].as_f64().unwrap(),
        t["momentum"][1].as_f64().unwrap(),
        t["energy"].as_f64().unwrap(),
    ]
}

#[test]
fn periodic_and_reflective_boundaries_conserve() {
    // 2D periodic density wave (MUSCL and CE/SE): all four totals.
    for method in [
        "riemann = \"hllc\"\nlimiter = \"mc\"\ncfl = 0.4",
        "method = \"cese\"\ncfl = 0.8",
    ] {
        let mut s = solver(&density_wave(32, method, 2));
        run_to(s.as_mut(), 0.5).unwrap();
        let (a, b) = (
            totals(s.as_ref(), "totals_start"),
            totals(s.as_ref(), "totals_end"),
        );
        let scale = a[3];
        let worst = (0..4).map(|k| (a[k] - b[k]).abs() / scale).fold(0.0, f64::max);
        println!(
            "periodic 2D {}: totals {a:?} -> {b:?}, max change / energy {worst:.2e}",
            method.lines().next().unwrap()
        );
        assert!(worst < 1e-13, "{a:?} {b:?}");
    }
    // Reflective walls: the Woodward-Colella blast keeps mass and energy.
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/cases/woodward_colella_blast.toml"
    ))
    .unwrap();
    let mut s = solver(&text);
    run_to(s.as_mut(), 0.038).unwrap();
    let (a, b) = (
        totals(s.as_ref(), "totals_start"),
        totals(s.as_ref(), "totals_end"),
    );
    let (dm, de) = ((a[0] - b[0]).abs() / a[0], (a[3] - b[3]).abs() / a[3]);
    println!("reflective blast: mass change {dm:.2e}, energy change {de:.2e} (relative)");
    assert!(dm < 1e-13 && de < 1e-13);
}

#[test]
fn near_vacuum_and_blast_waves_stay_positive_with_hllc_minmod() {
    for case in [
        "toro_test2",
        "toro_test3",
        "toro_test4",
        "toro_test5",
        "woodward_colella_blast",
    ] {
        let text =
            std::fs::read_to_string(format!("{}/cases/{case}.toml", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let t_end = Case::parse(&text, case).unwrap().spec.stop.t_end.unwrap();
        let mut s = solver(&text);
        run_to(s.as_mut(), t_end).unwrap_or_else(|e| panic!("{case}: {e}"));
        let (r, p) = (field(s.as_ref(), "rho"), field(s.as_ref(), "p"));
        let (rmin, pmin) = (
            r.iter().cloned().fold(f64::MAX, f64::min),
            p.iter().cloned().fold(f64::MAX, f64::min),
        );
        println!("{case}: min rho {rmin:.3e}, min p {pmin:.3e}");
        assert!(rmin > 0.0 && pmin > 0.0);
    }
}

#[test]
fn a_failing_configuration_is_an_error_not_nan() {
    // Roe's linearisation is not positively conservative (Einfeldt et al. 1991): the 123 problem.
    let mut s = solver(&roe_123("cpu"));
    let err = run_to(s.as_mut(), 0.15).expect_err("Roe fails on the 123 problem");
    let msg = err.to_string();
    println!("{msg}");
    assert!(msg.contains("cell") && msg.contains("x = ") && msg.contains("cfl"));
    for name in s.field_names() {
        assert!(field(s.as_ref(), name).iter().all(|v| !v.is_nan()) || *name != "rho");
    }
}

/// Largest jump of density between neighbours inside the exact rarefaction fan.
fn fan_jump(riemann: &str) -> (f64, f64) {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/cases/toro_sonic_rarefaction.toml"
    ))
    .unwrap()
    .replace("riemann = \"roe\"", &format!("riemann = \"{riemann}\""));
    let mut s = solver(&text);
    run_to(s.as_mut(), 0.2).unwrap();
    let (r, e) = (field(s.as_ref(), "rho"), exact(s.as_ref(), "rho"));
    let n = r.len();
    // Fan: x in [0.3 + t (u_L - c_L), 0.3 + t (u* - c*L)] = [0.213, 0.360] at t = 0.2.
    let (a, b) = ((0.213 * n as f64) as usize, (0.360 * n as f64) as usize + 1);
    let jump = (a..b).map(|i| (r[i + 1] - r[i]).abs()).fold(0.0, f64::max);
    let exact_jump = (a..b).map(|i| (e[i + 1] - e[i]).abs()).fold(0.0, f64::max);
    (jump, exact_jump)
}

/// Criterion: an expansion shock is a neighbour-to-neighbour density jump in the fan larger than
/// three times the exact solution's largest jump over one cell there.
#[test]
fn roe_shows_the_expansion_shock_without_the_entropy_fix_only() {
    let (with_fix, ex) = fan_jump("roe");
    let (no_fix, _) = fan_jump("roe_no_fix");
    println!(
        "sonic rarefaction, 100 cells: largest jump in the fan: roe {with_fix:.4}, roe_no_fix {no_fix:.4}, exact {ex:.4}"
    );
    assert!(no_fix > 3.0 * ex, "no expansion shock: {no_fix} vs {ex}");
    assert!(with_fix < 3.0 * ex, "entropy fix failed: {with_fix} vs {ex}");
}

/// The case file `cases/{name}.toml` (a 400 x 400 grid) on an `n` x `n` grid.
fn case_on_grid(name: &str, n: usize) -> String {
    let path = format!("{}/cases/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path)
        .unwrap()
        .replace("nx = 400\nny = 400", &format!("nx = {n}\nny = {n}"))
}

fn quadrant(n: usize, lines: &str) -> String {
    case_on_grid("riemann_quadrant_config3", n).replace(
        "method = \"muscl_hancock\"\nriemann = \"hllc\"\nlimiter = \"mc\"\ncfl = 0.4",
        lines,
    )
}

/// The largest difference between an `n` x `n` solution and its mirror image about the diagonal:
/// `rho(i, j)` against `rho(j, i)` and `u(i, j)` against `v(j, i)` (NaN is skipped by `max`, so
/// callers that need finite fields check them).
fn diagonal_asymmetry(s: &dyn Solver, n: usize) -> f64 {
    let r = field(s, "rho");
    let (u, v) = (field(s, "u"), field(s, "v"));
    let mut worst: f64 = 0.0;
    for j in 0..n {
        for i in 0..n {
            worst = worst
                .max((r[j * n + i] - r[i * n + j]).abs())
                .max((u[j * n + i] - v[i * n + j]).abs());
        }
    }
    worst
}

#[test]
fn configuration_3_stays_symmetric_about_the_diagonal() {
    let n = 128;
    let mut s = solver(&quadrant(n, "riemann = \"hllc\"\nlimiter = \"mc\"\ncfl = 0.4"));
    run_to(s.as_mut(), 0.3).unwrap();
    let worst = diagonal_asymmetry(s.as_ref(), n);
    println!(
        "configuration 3, {n}^2, t = 0.3: max asymmetry {worst:e} (steps {})",
        s.steps()
    );
    assert!(worst <= 1e-12);
}

/// CE/SE (alpha = 2, `cases/cese_quadrant_2d.toml`) on configuration 3: the four shocks run to
/// t = 0.3 with every field finite and the solution symmetric about the diagonal to round-off
/// (the march sums a new point's old neighbours in x-first order, so the mirrored sum is
/// reordered and not equal to the bit). Ahead of each wave the gradients decay towards the
/// underflow range, where a weighting that lost exponent range has diverged (BENCHMARKS.md).
/// Measured: 4.2e-14 after 102 steps; the bound, 1e-12, is that of the MUSCL test above.
#[test]
fn cese_configuration_3_stays_finite_and_symmetric() {
    let n = 128;
    let mut s = solver(&case_on_grid("cese_quadrant_2d", n));
    run_to(s.as_mut(), 0.3).unwrap();
    for name in ["rho", "u", "v"] {
        assert!(field(s.as_ref(), name).iter().all(|x| x.is_finite()), "{name}");
    }
    let worst = diagonal_asymmetry(s.as_ref(), n);
    println!(
        "CE/SE configuration 3, {n}^2, t = 0.3: max asymmetry {worst:e} (steps {})",
        s.steps()
    );
    assert!(worst <= 1e-12, "asymmetry {worst:e}");
}

#[test]
fn two_d_solver_on_aligned_1d_problems_reproduces_1d() {
    let n = 200;
    let solver_lines = "riemann = \"hllc\"\nlimiter = \"van_leer\"\ncfl = 0.4";
    let mut one = solver(&sod(n, solver_lines));
    run_to(one.as_mut(), 0.2).unwrap();
    let r1 = field(one.as_ref(), "rho");
    for axis in ["x", "y"] {
        let (nx, ny, ext) = if axis == "x" {
            (n, 4, "[1.0, 0.02]")
        } else {
            (4, n, "[0.02, 1.0]")
        };
        let b: String = ["left", "right", "bottom", "top"]
            .iter()
            .map(|s| format!("[boundary.{s}]\ntype = \"outflow\"\n"))
            .collect();
        let text = format!(
            "[case]\nname = \"a\"\nkind = \"compressible\"\ndim = 2\n[grid]\nnx = {nx}\nny = {ny}\nextents = {ext}\n{b}\
             [initial]\ntype = \"riemann\"\nleft = [1.0, 0.0, 0.0, 1.0]\nright = [0.125, 0.0, 0.0, 0.1]\nx0 = 0.5\naxis = \"{axis}\"\n\
             [solver]\n{solver_lines}\n[stop]\nt_end = 0.2\n"
        );
        let mut two = solver(&text);
        run_to(two.as_mut(), 0.2).unwrap();
        assert_eq!(two.steps(), one.steps());
        let r2 = field(two.as_ref(), "rho");
        let mut worst: f64 = 0.0;
        for k in 0..4 {
            for i in 0..n {
                let v = if axis == "x" { r2[k * n + i] } else { r2[i * 4 + k] };
                worst = worst.max((v - r1[i]).abs());
            }
        }
        println!("2D Sod along {axis}: max |rho_2D - rho_1D| = {worst:e}");
        assert!(worst <= 1e-14);
    }
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let run = |threads: usize, lines: &str| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let mut s = solver(&quadrant(48, lines));
                for _ in 0..20 {
                    s.step().unwrap();
                }
                (field(s.as_ref(), "rho"), s.summary())
            })
    };
    for lines in [
        "riemann = \"exact\"\nlimiter = \"superbee\"\ncharacteristic_limiting = true\ncfl = 0.4",
        "method = \"cese\"\ncfl = 0.8",
    ] {
        assert_eq!(run(1, lines), run(2, lines));
    }
}

#[test]
fn every_case_file_loads_and_runs_a_few_steps() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/cases");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let case = Case::load(&path).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
        if case.spec.case.kind != flowlab::case::Kind::Compressible {
            continue;
        }
        let mut s = flowlab::solver::build(&case.spec).unwrap();
        for _ in 0..3 {
            s.step().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        for name in s.field_names() {
            assert!(
                field(s.as_ref(), name).iter().all(|v| v.is_finite()),
                "{}: {name}",
                path.display()
            );
        }
        n += 1;
    }
    assert!(n >= 18, "{n} compressible cases");
}

#[test]
fn settings_are_validated_and_live() {
    let base = sod(50, "riemann = \"hllc\"\nlimiter = \"minmod\"");
    let bad = [
        ("[physics]\nre = 100.0\n", "physics.re"),
        ("[solver]\nconvection = \"central\"\n", "solver.convection"),
    ];
    for (add, key) in bad {
        let text = base
            .replace("[solver]\n", "")
            .replace("riemann = \"hllc\"\nlimiter = \"minmod\"\n", "")
            + add;
        let e = Case::parse(&text, "t").expect_err(key);
        assert_eq!(e.key.as_deref(), Some(key), "{e:?}");
    }
    let e =
        Case::parse(&sod(50, "method = \"cese\"\nriemann = \"hllc\""), "t").expect_err("riemann with cese");
    assert_eq!(e.key.as_deref(), Some("solver.riemann"));
    let e = Case::parse(&sod(50, "alpha = 1.0"), "t").expect_err("alpha with muscl");
    assert_eq!(e.key.as_deref(), Some("solver.alpha"));
    let e = Case::parse(&sod(50, "cfl = 1.5"), "t").expect_err("cfl");
    assert_eq!(e.key.as_deref(), Some("solver.cfl"));
    // Live: CFL, limiter and Riemann solver change without a restart.
    let mut case = Case::parse(&base, "t").unwrap();
    on_cpu_unless_named(&mut case);
    let mut s = flowlab::solver::build(&case.spec).unwrap();
    s.step().unwrap();
    let dt = s.dt();
    case.set("solver.cfl", "0.4").unwrap();
    case.set("solver.riemann", "\"roe\"").unwrap();
    case.set("solver.limiter", "\"mc\"").unwrap();
    s.update(&case.spec).unwrap();
    s.step().unwrap();
    assert!(s.dt() < 0.6 * dt && s.steps() == 2);
    case.set("grid.nx", "60").unwrap();
    assert!(s.update(&case.spec).is_err());
}

#[test]
fn single_precision_tracks_double() {
    let mut a = solver(&sod(200, "riemann = \"hllc\"\nlimiter = \"van_leer\""));
    let mut b = solver(&sod(
        200,
        "riemann = \"hllc\"\nlimiter = \"van_leer\"\nprecision = \"f32\"",
    ));
    run_to(a.as_mut(), 0.2).unwrap();
    run_to(b.as_mut(), 0.2).unwrap();
    let (ea, eb) = (l1(a.as_ref(), "rho"), l1(b.as_ref(), "rho"));
    println!("sod 200: L1(rho) f64 {ea:.5e}, f32 {eb:.5e}");
    assert!((ea - eb).abs() < 0.05 * ea);
}
