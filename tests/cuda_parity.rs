//! The CUDA backend against the CPU reference: the same case stepped 200 times on 128 x 128 by
//! both, every convection scheme and limiter, both time integrators, every pressure solver and
//! every boundary type, in f64 and f32; then the Ghia cavity on the GPU. Skipped (with the reason
//! printed) where no CUDA device, driver or NVRTC is usable.
//!
//! Bounds: relative L2 difference of u, v and p at most 1e-10 in f64 and 1e-4 in f32 (or twice
//! the CPU's own f32-to-f64 distance where f32 rounding alone moves a choice further; see
//! `common::parity::run_matrix`). The element-wise kernels round exactly as the CPU does (no FMA contraction,
//! same operation order); the differences come only from sums (norms, means, dot products)
//! added in another order, which shift the pressure at the rounding level.

mod common;

use common::{gpu, parity, rel_l2};

use flowlab::solver::{self, Solver, StopReason, StopRule, run_until};

fn cavity(sets: &[String]) -> flowlab::case::Case {
    let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
    common::case("lid_driven_cavity_re1000", &refs)
}

fn run_matrix(name: &str, variants: &[Vec<String>]) {
    parity::run_matrix(name, &cavity, &["u", "v", "p"], variants);
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[test]
fn parity_convection_schemes_and_limiters() {
    let limiters = ["none", "minmod", "superbee", "van_leer", "mc", "van_albada"];
    run_matrix("convection", &parity::convection_variants(&limiters));
}

#[test]
fn parity_ab2() {
    run_matrix(
        "ab2",
        &[
            s(&["solver.time_integrator=\"ab2\"", "solver.convection=\"central\""]),
            s(&[
                "solver.time_integrator=\"ab2\"",
                "solver.convection=\"tvd\"",
                "solver.limiter=\"superbee\"",
            ]),
        ],
    );
}

#[test]
fn parity_pressure_solvers() {
    run_matrix(
        "pressure",
        &[
            s(&["solver.pressure_solver=\"multigrid\""]),
            s(&["solver.pressure_solver=\"jacobi\"", "solver.max_iterations=400"]),
            s(&["solver.pressure_solver=\"sor\""]),
            s(&["solver.pressure_solver=\"pcg\""]),
            s(&["solver.pressure_solver=\"fft\""]),
            // Dirichlet on the y axis: the sign-flipped (DST) transform; unequal sides; flow through
            // the box so that the predictor makes divergence everywhere.
            s(&[
                "solver.pressure_solver=\"fft\"",
                "grid.nx=96",
                "grid.extents=[1.5, 1.0]",
                "boundary={left={type=\"wall\", velocity=0.5}, right={type=\"wall\", velocity=0.0}, \
                 bottom={type=\"outflow\"}, top={type=\"outflow\"}}",
                "initial={type=\"uniform\", velocity=[0.3, 0.5]}",
            ]),
            // FACR's line solves along y (cuda/facr.rs): an odd x count and columns of three
            // chunks with a short last one (37 rows of chunks of 16)...
            s(&["solver.pressure_solver=\"fft\"", "grid.nx=45", "grid.ny=37"]),
            // ...and of less than one chunk, with Dirichlet x sides (the sign-flipped transform
            // of the rows) and flow through the box.
            s(&[
                "solver.pressure_solver=\"fft\"",
                "grid.ny=9",
                "boundary={left={type=\"outflow\"}, right={type=\"outflow\"}, \
                 bottom={type=\"wall\", velocity=0.0}, top={type=\"wall\", velocity=1.0}}",
                "initial={type=\"uniform\", velocity=[0.4, 0.3]}",
            ]),
            // ...and of 69 chunks: 68 separators over `facr_separators`' 16 segments, five a
            // segment, so that a segment's sweeps run a batch from registers and one from memory.
            s(&["solver.pressure_solver=\"fft\"", "grid.nx=8", "grid.ny=1100"]),
        ],
    );
}

/// The transform-solve step in batches ([`Solver::advance`]: one CUDA graph replay per step, the
/// dt, AB2 weights and health check on the device, one host read per batch) equals the same
/// steps taken one by one, bit for bit: fields, time, dt and residuals, in f64 and f32, Euler
/// and AB2. A run that diverges (TVD with the anti-diffusive downwind limiter, 64^2) halts on
/// the device inside a batch at the step where the one-by-one run stops, with that step's
/// state, and where the CPU stops.
#[test]
fn batched_steps_equal_single_steps() {
    if !gpu() {
        return;
    }
    for precision in ["f64", "f32"] {
        for integrator in ["euler", "ab2"] {
            let case = cavity(&s(&[
                "solver.backend=\"cuda\"",
                "solver.pressure_solver=\"fft\"",
                "solver.tolerance=1e-4",
                &format!("solver.precision=\"{precision}\""),
                &format!("solver.time_integrator=\"{integrator}\""),
            ]));
            parity::batches_equal_single_steps(
                &case,
                &["u", "v", "p"],
                [25, 35],
                &format!("{precision} {integrator}"),
            );
        }
    }
    let diverging = s(&[
        "grid.nx=64",
        "grid.ny=64",
        "solver.convection=\"tvd\"",
        "solver.limiter=\"downwind\"",
        "solver.pressure_solver=\"fft\"",
    ]);
    let halt = |backend: &str, batch: u64| {
        let mut case = cavity(&diverging);
        case.set_assignment(&format!("solver.backend=\"{backend}\""))
            .unwrap();
        let mut s = solver::build(&case.spec).expect("solver");
        loop {
            match s.advance(batch) {
                Ok(()) => assert!(s.steps() < 1000, "{backend}: no divergence in 1000 steps"),
                Err(solver::SolverError::Diverged { step, time, .. }) => {
                    assert_eq!(step, s.steps());
                    return (step, time, common::field(s.as_ref(), "u"));
                }
                Err(e) => panic!("{backend}: {e}"),
            }
        }
    };
    let (cpu, one, many) = (halt("cpu", 1), halt("cuda", 1), halt("cuda", 500));
    eprintln!(
        "diverged at step {} (cpu), {} (cuda, one by one), {} (cuda, a batch of 500)",
        cpu.0, one.0, many.0
    );
    assert_eq!((one.0, many.0), (cpu.0, cpu.0), "halting step");
    assert_eq!(one.1.to_bits(), many.1.to_bits(), "halting time");
    assert!(
        (one.1 - cpu.1).abs() <= 1e-10 * cpu.1,
        "time {} vs cpu {}",
        one.1,
        cpu.1
    );
    assert!(
        one.2.iter().zip(&many.2).all(|(x, y)| x.to_bits() == y.to_bits()),
        "halted state"
    );
}

/// A switch of time integrator mid-run (Euler to AB2 and back, through [`Solver::update`]):
/// Euler steps store no history, so AB2 restarts with one Euler-weighted step on both backends.
/// The CUDA run in batches ([`Solver::advance`]) stays within the f64 parity bound of the CPU.
#[test]
fn parity_integrator_switch() {
    if !gpu() {
        return;
    }
    let mut case = cavity(&s(&["solver.pressure_solver=\"fft\"", "solver.backend=\"cpu\""]));
    let mut cpu = solver::build(&case.spec).expect("cpu solver");
    case.set_assignment("solver.backend=\"cuda\"").unwrap();
    let mut cuda = solver::build(&case.spec).expect("cuda solver");
    for integrator in ["euler", "ab2", "euler", "ab2"] {
        case.set_assignment(&format!("solver.time_integrator=\"{integrator}\""))
            .unwrap();
        cuda.update(&case.spec).expect("cuda update");
        case.set_assignment("solver.backend=\"cpu\"").unwrap();
        cpu.update(&case.spec).expect("cpu update");
        case.set_assignment("solver.backend=\"cuda\"").unwrap();
        cpu.advance(40).expect("cpu steps");
        cuda.advance(40).expect("cuda steps");
    }
    let mut worst: f64 = (cpu.time() - cuda.time()).abs() / cpu.time();
    for f in ["u", "v", "p"] {
        worst = worst.max(rel_l2(
            &common::field(cuda.as_ref(), f),
            &common::field(cpu.as_ref(), f),
        ));
    }
    eprintln!("integrator switches, 160 steps: worst relative L2 {worst:.2e}");
    assert!(worst <= 1e-10, "worst relative L2 {worst:.2e}");
}

/// Inflow/outflow channel (Dirichlet pressure) and a periodic channel with symmetry sides (odd
/// periodic size: the serial seam cells), each with every iterative pressure solver, the periodic
/// channel with the transform solve too (the DFT along x); the periodic channel at an even size
/// with multigrid too (the fused two-colour smoother across the periodic sides); opening sides on
/// x (transform solve) and on y (multigrid).
#[test]
fn parity_boundaries() {
    let inflow = [
        "boundary={left={type=\"inflow\", velocity=[1.0, 0.0]}, right={type=\"outflow\"}, \
         bottom={type=\"symmetry\"}, top={type=\"wall\", velocity=0.0}}",
    ];
    let periodic = [
        "boundary={left={type=\"periodic\"}, right={type=\"periodic\"}, bottom={type=\"symmetry\"}, \
         top={type=\"wall\", velocity=1.0}}",
        "initial={type=\"uniform\", velocity=[0.5, 0.0]}",
        "grid.nx=127",
    ];
    let mut variants = Vec::new();
    for solver in ["multigrid", "sor", "pcg", "jacobi"] {
        for base in [&inflow[..], &periodic[..]] {
            let mut v = s(base);
            v.push(format!("solver.pressure_solver=\"{solver}\""));
            v.push("solver.max_iterations=400".into());
            v.push("solver.convection=\"tvd\"".into());
            variants.push(v);
        }
    }
    // The transform solve with a periodic axis (the DFT along x; odd size).
    let mut fft = s(&periodic);
    fft.extend(s(&[
        "solver.pressure_solver=\"fft\"",
        "solver.convection=\"tvd\"",
    ]));
    variants.push(fft);
    let mut even = s(&periodic[..2]);
    even.extend(s(&[
        "grid.nx=128",
        "solver.pressure_solver=\"multigrid\"",
        "solver.max_iterations=400",
        "solver.convection=\"tvd\"",
    ]));
    variants.push(even);
    // Opening sides in 2D (a held total pressure where the fluid enters, `opening_pressure`): on
    // x with the transform solve, on y, across from an inflow's tangential velocity, with
    // multigrid.
    variants.push(s(&[
        "boundary={left={type=\"opening\"}, right={type=\"opening\"}, \
         bottom={type=\"wall\", velocity=0.0}, top={type=\"wall\", velocity=1.0}}",
        "initial={type=\"uniform\", velocity=[0.5, 0.1]}",
        "solver.pressure_solver=\"fft\"",
        "solver.convection=\"tvd\"",
    ]));
    variants.push(s(&[
        "boundary={left={type=\"wall\", velocity=0.0}, right={type=\"inflow\", velocity=[-0.5, 0.2]}, \
         bottom={type=\"opening\"}, top={type=\"opening\"}}",
        "initial={type=\"uniform\", velocity=[-0.2, 0.5]}",
        "solver.pressure_solver=\"multigrid\"",
        "solver.convection=\"tvd\"",
    ]));
    run_matrix("boundaries", &variants);
}

/// The transform solve's reported residual with opening sides, in f64: the statistics'
/// right-hand side must hold the opening pressures of the velocity the step started from, as the
/// solve's did, so the relative residual is at the rounding level as on the CPU (2.5e-15 after
/// 200 steps). Recomputed after the correction, from the new velocity, it read 2.6e-3. Checked
/// after a single step and after batches (the step graph's statistics slot).
#[test]
fn transform_solve_reports_its_residual_with_openings() {
    if !gpu() {
        return;
    }
    let case = cavity(&s(&[
        "boundary={left={type=\"opening\"}, right={type=\"opening\"}, \
         bottom={type=\"wall\", velocity=0.0}, top={type=\"wall\", velocity=1.0}}",
        "initial={type=\"uniform\", velocity=[0.5, 0.1]}",
        "solver.pressure_solver=\"fft\"",
        "solver.backend=\"cuda\"",
    ]));
    let mut gpu = solver::build(&case.spec).expect("cuda solver");
    for batch in [1, 1, 8, 16] {
        gpu.advance(batch).expect("batch");
        let r = common::residual(gpu.as_ref(), "pressure_residual");
        eprintln!("OPENINGS step {}: pressure_residual {r:.3e}", gpu.steps());
        assert!(r < 1e-12, "step {}: pressure_residual {r:e}", gpu.steps());
    }
}

/// The velocity's ghosts and boundary faces filled on the device (`ghosts`, both axes in one
/// launch, each point written by the thread of the last axis that sets it) against the CPU's
/// fill (axis by axis), bit for bit, on a velocity scrambled everywhere
/// (`common::ghosts::device_fill_equals_host`): every side kind (wall and moving wall, inflow,
/// outflow, opening, symmetry, periodic), corners where two kinds meet, in f64 and f32.
#[test]
fn velocity_ghosts_equal_the_host_fill() {
    if !gpu() {
        return;
    }
    let sides = [
        (
            "inflow-outflow",
            "{left={type=\"inflow\", velocity=[1.0, 0.25]}, right={type=\"outflow\"}, bottom={type=\"symmetry\"}, top={type=\"wall\", velocity=1.0}}",
            "13",
            "9",
        ),
        (
            "periodic-x",
            "{left={type=\"periodic\"}, right={type=\"periodic\"}, bottom={type=\"symmetry\"}, top={type=\"wall\", velocity=1.0}}",
            "12",
            "7",
        ),
        (
            "openings-x",
            "{left={type=\"opening\"}, right={type=\"opening\"}, bottom={type=\"wall\", velocity=0.0}, top={type=\"wall\", velocity=1.0}}",
            "9",
            "11",
        ),
        (
            "openings-y",
            "{left={type=\"wall\", velocity=0.0}, right={type=\"inflow\", velocity=[-0.5, 0.2]}, bottom={type=\"opening\"}, top={type=\"opening\"}}",
            "10",
            "8",
        ),
        (
            "outflow-y",
            "{left={type=\"wall\", velocity=0.5}, right={type=\"symmetry\"}, bottom={type=\"inflow\", velocity=[0.3, 1.0]}, top={type=\"outflow\"}}",
            "7",
            "12",
        ),
        (
            "periodic-y",
            "{left={type=\"inflow\", velocity=[1.0, -0.5]}, right={type=\"outflow\"}, bottom={type=\"periodic\"}, top={type=\"periodic\"}}",
            "11",
            "6",
        ),
    ];
    let variants: Vec<(&str, Vec<String>)> = sides
        .iter()
        .map(|(name, bc, nx, ny)| {
            let sets = vec![
                format!("boundary={bc}"),
                format!("grid.nx={nx}"),
                format!("grid.ny={ny}"),
            ];
            (*name, sets)
        })
        .collect();
    common::ghosts::in_both_precisions::<2>(&variants, cavity);
}

/// Ghia, Ghia & Shin (1982) on the GPU: the same stations and bounds as tests/cavity_ghia.rs.
#[test]
fn cuda_cavity_ghia_re100() {
    ghia(100, 2, 0.01);
}

#[test]
fn cuda_cavity_ghia_re1000() {
    ghia(1000, 4, 0.02);
}

fn ghia(re: u32, column: usize, max_dev: f64) {
    if !gpu() {
        return;
    }
    {
        let case = common::case(&format!("lid_driven_cavity_re{re}"), &["solver.backend=\"cuda\""]);
        let mut s = solver::build(&case.spec).expect("cuda solver");
        // The case's own stop rule, as in the CPU validation (tests/cavity_ghia.rs).
        let stop = &case.spec.stop;
        let rule = StopRule {
            steady_tol: stop.steady_tol,
            t_end: stop.t_end,
            steps: None,
            ..Default::default()
        };
        let start = std::time::Instant::now();
        let outcome = run_until(s.as_mut(), &rule, None, |_, step| {
            if step.steps % 5000 == 0 {
                eprintln!(
                    "  step {} t = {:.3} wall {:.1} s {:?}",
                    step.steps,
                    step.time,
                    start.elapsed().as_secs_f64(),
                    step.residuals
                );
            }
        })
        .expect("runs");
        eprintln!(
            "  outcome {outcome:?} after {} steps, t = {:.3}",
            s.steps(),
            s.time()
        );
        let mut worst: f64 = 0.0;
        let (header, u_rows) = common::reference_csv("ghia1982_u_vertical_centerline.csv");
        for r in &u_rows {
            worst = worst.max((s.sample("u", [0.5, r[1], 0.0]).unwrap() - r[column]).abs());
        }
        let (_, v_rows) = common::reference_csv("ghia1982_v_horizontal_centerline.csv");
        for r in &v_rows {
            worst = worst.max((s.sample("v", [r[1], 0.5, 0.0]).unwrap() - r[column]).abs());
        }
        eprintln!(
            "GHIA cuda Re {re} ({}): steps {} t = {:.2} wall {:.1} s, max |dev| = {worst:.4} (bound {max_dev}), psi_min = {:.6}",
            header[column],
            s.steps(),
            s.time(),
            start.elapsed().as_secs_f64(),
            s.summary()["psi_min"].as_f64().unwrap()
        );
        assert!(worst <= max_dev, "Re {re}: max deviation {worst} > {max_dev}");
        assert_eq!(outcome.reason, StopReason::Steady, "Re {re} not steady");
    }
}

/// `backend = "cuda"` without a device is an error naming solver.backend, for both families, and
/// `auto` (also the default when the case names no backend) falls back to the CPU; with a device
/// both families build on it. Without a device this checks the fallback, and fails under
/// `FLOWLAB_REQUIRE_GPU=1`.
#[test]
fn cuda_backend_choice() {
    let device = common::gpu();
    for name in ["lid_driven_cavity_re100", "sod"] {
        let case = common::case(name, &["solver.backend=\"cuda\""]);
        let auto = common::case(name, &["solver.backend=\"auto\""]);
        let default =
            flowlab::case::Case::load(&common::root().join(format!("cases/{name}.toml"))).expect("case");
        assert_eq!(default.spec.solver.backend, None, "{name} names no backend");
        let default_backend = solver::build(&default.spec).expect("default").info().backend;
        if device {
            assert_eq!(solver::build(&case.spec).expect("cuda").info().backend, "cuda");
            assert_eq!(solver::build(&auto.spec).expect("auto").info().backend, "cuda");
            assert_eq!(default_backend, "cuda", "{name}: the default is auto");
        } else {
            assert_eq!(default_backend, "cpu", "{name}: auto falls back");
            let e = solver::build(&case.spec)
                .err()
                .expect("no device: cuda is an error");
            assert_eq!(e.key, "solver.backend");
            eprintln!("{name} on cuda: {}", e.message);
            assert_eq!(
                solver::build(&auto.spec).expect("auto falls back").info().backend,
                "cpu"
            );
        }
    }
}

/// The app's backend switch: a CPU run carried over to the GPU ([`Solver::load_state`]) and
/// back steps on as the CPU run does.
#[test]
fn state_moves_between_backends() {
    if !gpu() {
        return;
    }
    let mut case = cavity(&[]);
    case.set_assignment("solver.backend=\"cpu\"").unwrap();
    let mut cpu = solver::build(&case.spec).expect("cpu solver");
    for _ in 0..100 {
        cpu.step().expect("cpu step");
    }
    case.set_assignment("solver.backend=\"cuda\"").unwrap();
    let mut gpu = solver::build(&case.spec).expect("cuda solver");
    gpu.load_state(cpu.as_ref()).expect("cpu -> cuda");
    assert_eq!(gpu.steps(), 100);
    for _ in 0..100 {
        cpu.step().expect("cpu step");
        gpu.step().expect("cuda step");
    }
    case.set_assignment("solver.backend=\"cpu\"").unwrap();
    let mut back = solver::build(&case.spec).expect("cpu solver");
    back.load_state(gpu.as_ref()).expect("cuda -> cpu");
    for (name, s) in [("cuda", gpu.as_ref()), ("back on the cpu", back.as_ref())] {
        let d = ["u", "v", "p"]
            .map(|f| rel_l2(&common::field(s, f), &common::field(cpu.as_ref(), f)))
            .into_iter()
            .fold(0.0, f64::max);
        eprintln!("TRANSFER {name}: rel L2 from the cpu run {d:.3e}");
        // The load re-projects the velocity (a change at the 1e-7 pressure tolerance of the
        // divergence left, measured 1e-12 on the CPU), then parity as above.
        assert!(d < 1e-9, "{name}: {d:e}");
    }
}

/// The fields derived on the device (`kernels/display.cu`, read back one at a time) against the
/// CPU's derivation (`derived::View`) of the same device state read back whole
/// (`CudaProjection::host_field`), every field, on a non-square grid with a density that scales
/// the pressure: relative L2 at most 1e-12 in f64 (the same operations in the same order; only
/// `hypot` is the device's, within an ulp) and 1e-6 in f32 (the device rounds the f64 value to
/// f32 once). Covers the synchronous path (no prefetch), the prefetched one, and a prefetch
/// followed by a step (the field must be that of the new state).
#[test]
fn device_derived_fields_equal_the_host_derivation() {
    if !gpu() {
        return;
    }
    fields_match::<f64>(1e-12);
    fields_match::<f32>(1e-6);
}

fn fields_match<T: flowlab::solver::real::Real>(bound: f64) {
    use flowlab::solver::incompressible::{CudaProjection, FIELDS_2D};
    let case = cavity(&s(&[
        "grid.nx=96",
        "grid.ny=64",
        "physics.density=1.25",
        "solver.tolerance=1e-5",
        &format!("solver.precision=\"{}\"", T::NAME),
    ]));
    let cfg = flowlab::solver::incompressible::Config::from_spec(&case.spec).expect("config");
    let mut g = CudaProjection::<T, 2>::new(cfg, 0).expect("cuda solver");
    common::device_fields_match(&mut g, FIELDS_2D, CudaProjection::host_field, T::NAME, bound);
    let mut out = Vec::new();
    assert!(g.field("no_such_field", &mut out).is_none());
}

/// The live view's read ([`Solver::display_fields`]) right after a prefetch, on 1024^2 in f32,
/// where the copy back takes a few hundred microseconds: every answer is of one state, either
/// the current one or the one prefetched before it, and equals (bitwise) that state's fields as
/// the synchronous [`Solver::field`] read them; while the current copy is under way the answer is
/// the earlier state (it must happen: that is the overlap of the copy with the next steps).
#[test]
fn shown_fields_are_one_state_at_most_one_prefetch_behind() {
    if !gpu() {
        return;
    }
    let case = cavity(&s(&[
        "solver.backend=\"cuda\"",
        "grid.nx=1024",
        "grid.ny=1024",
        // The app's frame (flowlab bench --family readback): f32 multigrid to 1e-4. A tighter
        // tolerance sits at f32's rounding floor, where every step runs to the iteration cap.
        "solver.tolerance=1e-4",
        "solver.max_iterations=50",
        "solver.precision=\"f32\"",
    ]));
    let mut g = solver::build(&case.spec).expect("cuda solver");
    assert_eq!(g.info().backend, "cuda");
    let names = ["speed", "u", "v"];
    let read = |g: &dyn Solver| -> Vec<Vec<f64>> { names.iter().map(|n| common::field(g, n)).collect() };
    let mut behind = 0;
    for frame in 0..10 {
        g.step().expect("cuda step");
        let (k, earlier) = (g.steps(), read(g.as_ref()));
        g.step().expect("cuda step");
        g.prefetch(&names);
        let mut shown = vec![Vec::new(); names.len()];
        let step = g.display_fields(&names, &mut shown).expect("known fields");
        let current = read(g.as_ref());
        let expected = if step == k {
            behind += 1;
            &earlier
        } else {
            assert_eq!(
                step,
                g.steps(),
                "frame {frame}: step {step}, not {k} or {}",
                g.steps()
            );
            &current
        };
        assert!(
            shown == *expected,
            "frame {frame}: the fields shown are not those of step {step}"
        );
    }
    eprintln!("display_fields answered the earlier state in {behind} of 10 frames");
    assert!(behind > 0, "the view never ran ahead of the copy: no overlap");
}
