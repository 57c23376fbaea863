//! The projection method's invariants: divergence after projection at the pressure solver's
//! tolerance, thread-count independence, f32/f64 agreement, live settings, blow-up reporting.

mod common;

use flowlab::solver::{self, Solver};

fn rms(v: &[f64]) -> f64 {
    (v.iter().map(|x| x * x).sum::<f64>() / v.len() as f64).sqrt()
}

fn residual(s: &dyn Solver, name: &str) -> f64 {
    s.residuals().iter().find(|(n, _)| *n == name).unwrap().1
}

const SOLVERS: [&str; 5] = ["jacobi", "sor", "pcg", "multigrid", "fft"];

#[test]
fn projection_leaves_divergence_at_the_pressure_tolerance() {
    for ps in SOLVERS {
        for tol in [1e-4, 1e-8] {
            let case = common::case(
                "lid_driven_cavity_re100",
                &[
                    "grid.nx=48",
                    "grid.ny=40",
                    &format!("solver.pressure_solver={ps}"),
                    &format!("solver.tolerance={tol}"),
                    "solver.max_iterations=100000",
                ],
            );
            let mut s = solver::build(&case.spec).unwrap();
            let mut div = Vec::new();
            for _ in 0..15 {
                s.step().unwrap();
                s.field("divergence", &mut div).unwrap();
                let after = rms(&div);
                let before = residual(s.as_ref(), "predicted_divergence");
                // div u = dt (b - L p): its RMS is the relative residual times RMS div(F).
                let expected = residual(s.as_ref(), "pressure_residual") * before;
                assert!(
                    after <= tol * before * (1.0 + 1e-6),
                    "{ps} tol {tol}: {after:e} vs {before:e}"
                );
                assert!(
                    (after - expected).abs() <= 1e-6 * before,
                    "{ps}: {after:e} != {expected:e}"
                );
                assert!(
                    before > 1e3 * after,
                    "{ps}: the predictor must create divergence to remove"
                );
            }
        }
    }
}

#[test]
fn results_do_not_depend_on_the_number_of_threads() {
    for ps in SOLVERS {
        for conv in ["central", "tvd", "quick"] {
            let run = |threads: usize| {
                let pool = flowlab::backend::cpu::thread_pool(threads).unwrap();
                pool.install(|| {
                    let case = common::case(
                        "lid_driven_cavity_re1000",
                        &[
                            "grid.nx=40",
                            "grid.ny=36",
                            &format!("solver.pressure_solver={ps}"),
                            &format!("solver.convection={conv}"),
                            "solver.time_integrator=ab2",
                        ],
                    );
                    let mut s = solver::build(&case.spec).unwrap();
                    for _ in 0..30 {
                        s.step().unwrap();
                    }
                    let mut u = Vec::new();
                    s.field("u", &mut u).unwrap();
                    let mut p = Vec::new();
                    s.field("p", &mut p).unwrap();
                    (u, p, s.time())
                })
            };
            assert_eq!(run(1), run(2), "{ps} {conv}: 1 and 2 threads differ");
        }
    }
}

#[test]
fn f32_tracks_f64() {
    let run = |precision: &str| {
        let case = common::case(
            "lid_driven_cavity_re100",
            &[
                "grid.nx=32",
                "grid.ny=32",
                "solver.tolerance=1e-4",
                &format!("solver.precision={precision}"),
            ],
        );
        let mut s = solver::build(&case.spec).unwrap();
        for _ in 0..400 {
            s.step().unwrap();
        }
        assert_eq!(s.info().precision, precision);
        let mut u = Vec::new();
        s.field("u", &mut u).unwrap();
        u
    };
    let (a, b) = (run("f64"), run("f32"));
    let diff = a.iter().zip(&b).map(|(x, y)| (x - y).powi(2)).sum::<f64>().sqrt();
    let norm = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    // Both with the pressure tolerance 1e-4 that f32 can reach.
    assert!(diff / norm < 1e-3, "relative L2 difference {:e}", diff / norm);
}

#[test]
fn live_settings_change_without_losing_the_flow() {
    let mut case = common::case("lid_driven_cavity_re100", &["grid.nx=32", "grid.ny=32"]);
    let mut s = solver::build(&case.spec).unwrap();
    for _ in 0..50 {
        s.step().unwrap();
    }
    let mut before = Vec::new();
    s.field("u", &mut before).unwrap();
    for set in [
        "physics.re=400",
        "solver.convection=tvd",
        "solver.limiter=superbee",
        "solver.pressure_solver=pcg",
        "solver.cfl=0.3",
        "solver.time_integrator=ab2",
    ] {
        case.set_assignment(set).unwrap();
        s.update(&case.spec).unwrap();
    }
    assert_eq!(s.summary()["viscosity"].as_f64(), Some(1.0 / 400.0));
    let mut after = Vec::new();
    s.field("u", &mut after).unwrap();
    assert_eq!(before, after, "update must not touch the state");
    s.step().unwrap();
    assert_eq!(s.steps(), 51);
    case.set_assignment("grid.nx=64").unwrap();
    assert!(s.update(&case.spec).is_err(), "a grid change needs a reset");
}

#[test]
fn periodic_channel_and_inflow_outflow_run_and_conserve_mass() {
    // Couette-like periodic channel and a plug inflow with an outflow: both stay divergence free.
    let text = include_str!("../cases/lid_driven_cavity_re100.toml");
    let periodic = text
        .replace(
            "[boundary.left]\ntype = \"wall\"",
            "[boundary.left]\ntype = \"periodic\"",
        )
        .replace(
            "[boundary.right]\ntype = \"wall\"",
            "[boundary.right]\ntype = \"periodic\"",
        );
    let inflow = text
        .replace(
            "[boundary.left]\ntype = \"wall\"",
            "[boundary.left]\ntype = \"inflow\"\nvelocity = [1.0, 0.0]",
        )
        .replace(
            "[boundary.right]\ntype = \"wall\"",
            "[boundary.right]\ntype = \"outflow\"",
        )
        .replace("velocity = 1.0   # the lid", "velocity = 0.0   # the lid");
    for (name, text) in [("periodic", periodic), ("inflow", inflow)] {
        let mut case = flowlab::case::Case::parse(&text, name).unwrap();
        common::on_cpu_unless_named(&mut case);
        case.set_assignment("grid.nx=32").unwrap();
        case.set_assignment("grid.ny=16").unwrap();
        let mut s = solver::build(&case.spec).unwrap();
        for _ in 0..200 {
            s.step().unwrap();
        }
        let mut div = Vec::new();
        s.field("divergence", &mut div).unwrap();
        assert!(
            div.iter().all(|d| d.abs() < 1e-3),
            "{name}: divergence {:e}",
            div.iter().fold(0.0f64, |m, d| m.max(d.abs()))
        );
        // Mass flux through every vertical line equals the inflow (1 x height 1) for the channel.
        if name == "inflow" {
            for x in [0.1, 0.5, 0.9] {
                let q: f64 = (0..16)
                    .map(|j| s.sample("u", [x, (j as f64 + 0.5) / 16.0, 0.0]).unwrap() / 16.0)
                    .sum();
                assert!((q - 1.0).abs() < 1e-3, "flux at x = {x}: {q}");
            }
        }
    }
}

/// The direct transform solve and multigrid at a tight tolerance solve the same discrete
/// equations: the flows agree to the multigrid tolerance, on a non-square grid with unequal
/// spacing, in a closed box (Neumann axes) and in one open at top and bottom (Dirichlet axis).
#[test]
fn fft_pressure_matches_converged_multigrid() {
    let open = [
        "boundary.bottom={type=\"outflow\"}",
        "boundary.top={type=\"outflow\"}",
        "boundary.left={type=\"wall\", velocity=0.5}",
        "initial={type=\"uniform\", velocity=[0.3, 0.5]}",
    ];
    for sides in [&[][..], &open[..]] {
        let run = |ps: &str| {
            let mut sets = vec![
                "grid.nx=40",
                "grid.ny=28",
                "grid.extents=[1.4, 1.0]",
                "solver.tolerance=1e-12",
            ];
            sets.extend_from_slice(sides);
            let ps = format!("solver.pressure_solver={ps}");
            sets.push(&ps);
            let case = common::case("lid_driven_cavity_re1000", &sets);
            let mut s = solver::build(&case.spec).unwrap();
            for _ in 0..100 {
                s.step().unwrap();
            }
            assert!(residual(s.as_ref(), "pressure_residual") <= 1e-12);
            // The flow keeps creating divergence for the pressure to remove.
            assert!(residual(s.as_ref(), "predicted_divergence") > 1e-4, "{sides:?}");
            ["u", "v", "p"].map(|f| {
                let mut x = Vec::new();
                s.field(f, &mut x).unwrap();
                x
            })
        };
        let (a, b) = (run("fft"), run("multigrid"));
        for k in 0..3 {
            let d = common::rel_l2(&a[k], &b[k]);
            assert!(d < 1e-9, "{sides:?} field {k}: fft and multigrid differ by {d:e}");
        }
    }
}

/// Sides that do not pair up along an axis (inflow with outflow, periodic) refuse the transform
/// solver when it is set, naming the key, the sides and the way out; the case keeps its solver.
#[test]
fn fft_is_refused_where_the_sides_do_not_pair() {
    for sides in [
        [
            "boundary.left={type=\"inflow\", velocity=[1.0, 0.0]}",
            "boundary.right={type=\"outflow\"}",
        ],
        [
            "boundary={left={type=\"outflow\"}, right={type=\"wall\", velocity=0.0}, \
             bottom={type=\"wall\", velocity=0.0}, top={type=\"wall\", velocity=1.0}}",
            "grid.nx=32",
        ],
    ] {
        let mut case = common::case("lid_driven_cavity_re100", &sides);
        let e = case
            .set_assignment("solver.pressure_solver=\"fft\"")
            .expect_err("refused");
        assert_eq!(e.key.as_deref(), Some("solver.pressure_solver"), "{e:?}");
        assert!(
            e.message.contains("left and right") && e.message.contains("multigrid"),
            "{e:?}"
        );
    }
}

/// A periodic axis pairs up too (the Hartley transform): the transform solve gives the flow the
/// multigrid solve gives, to the latter's tolerance.
#[test]
fn fft_solves_a_periodic_axis() {
    let periodic = "boundary={left={type=\"periodic\"}, right={type=\"periodic\"}, \
                    bottom={type=\"wall\", velocity=0.0}, top={type=\"wall\", velocity=1.0}}";
    let run = |ps: &str| {
        let case = common::case(
            "lid_driven_cavity_re100",
            &[
                periodic,
                "grid.nx=33",
                "grid.ny=24",
                &format!("solver.pressure_solver=\"{ps}\""),
                "solver.tolerance=1e-10",
            ],
        );
        let mut s = solver::build(&case.spec).unwrap();
        for _ in 0..40 {
            s.step().unwrap();
        }
        common::field(s.as_ref(), "u")
    };
    let (fft, mg) = (run("fft"), run("multigrid"));
    let d = common::rel_l2(&fft, &mg);
    assert!(d < 1e-8, "fft and multigrid differ by {d:e}");
}

/// A velocity that is no longer a number stops the run with a divergence, on the CPU and (where
/// a GPU is usable) on CUDA: the largest speeds skip NaNs, the steady-change sums do not. One
/// value of u set to NaN through a snapshot.
#[test]
fn a_nan_velocity_stops_the_run() {
    for backend in ["cpu", "cuda"] {
        if backend == "cuda" && !common::gpu() {
            continue;
        }
        let mut case = common::cavity(100.0, 16);
        case.set_assignment(&format!("solver.backend=\"{backend}\""))
            .unwrap();
        let mut s = solver::build(&case.spec).unwrap();
        s.step().unwrap();
        let mut snap = s.snapshot().unwrap();
        let mut u: Vec<f64> = snap.values("u").unwrap();
        let middle = u.len() / 2;
        u[middle] = f64::NAN;
        snap.put("u", &u);
        s.restore(&snap).unwrap();
        match s.step() {
            Err(solver::SolverError::Diverged { message, .. }) => {
                assert!(message.contains("no longer finite"), "{backend}: {message}")
            }
            other => panic!("{backend}: a NaN velocity ran on: {other:?}"),
        }
    }
}

/// A plug flow through a 2D duct with free-slip walls (an exact steady solution), drawn in
/// through the left side by a suction of 1 at the right, or pushed out through it. The left
/// side held at `p = 0` (outflow) leaves the pressure 0 either way; as an opening (total
/// pressure 0 where the fluid enters) it holds `p = -u^2 / 2 = -0.5` where the plug enters and
/// `p = 0` where it leaves. The flow stays the plug to round-off and the pressure matches
/// Bernoulli's to the pressure solve's tolerance (1e-12 relative). On the CPU and (where a GPU
/// is usable) on CUDA.
#[test]
fn an_opening_holds_total_pressure_where_the_fluid_enters() {
    let duct = |backend: &str, left: &str, u: f64| {
        format!(
            r#"
[case]
name = "plug"
kind = "incompressible"
dim = 2
[grid]
nx = 16
ny = 8
extents = [2.0, 1.0]
[physics]
re = 100.0
[boundary.left]
type = "{left}"
[boundary.right]
type = "inflow"
velocity = [{u}, 0.0]
[boundary.bottom]
type = "symmetry"
[boundary.top]
type = "symmetry"
[initial]
type = "uniform"
velocity = [{u}, 0.0]
[solver]
method = "projection"
pressure_solver = "multigrid"
tolerance = 1e-12
backend = "{backend}"
"#
        )
    };
    let backends = if common::gpu() {
        &["cpu", "cuda"][..]
    } else {
        &["cpu"]
    };
    for (backend, left, u, p_expected) in backends.iter().flat_map(|b| {
        [
            (*b, "opening", 1.0, -0.5),
            (*b, "opening", -1.0, 0.0),
            (*b, "outflow", 1.0, 0.0),
            (*b, "outflow", -1.0, 0.0),
        ]
    }) {
        let mut s = common::solver(&duct(backend, left, u));
        assert_eq!(s.info().backend, backend);
        for _ in 0..20 {
            s.step().unwrap();
        }
        let speed = common::field(s.as_ref(), "u");
        let v = common::field(s.as_ref(), "v");
        let p = common::field(s.as_ref(), "p");
        let worst = |f: &[f64], target: f64| f.iter().fold(0.0f64, |m, x| m.max((x - target).abs()));
        let at = format!("{backend}, {left}, u = {u}");
        assert!(worst(&speed, u) < 1e-12, "{at}: u off by {:e}", worst(&speed, u));
        assert!(worst(&v, 0.0) < 1e-12, "{at}: v off by {:e}", worst(&v, 0.0));
        assert!(
            worst(&p, p_expected) < 1e-10,
            "{at}: p off {p_expected} by {:e}",
            worst(&p, p_expected)
        );
    }
}
