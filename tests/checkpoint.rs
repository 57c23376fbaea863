//! Saved states: a run restored from a checkpoint continues bit for bit as the uninterrupted
//! run (every family and method, multi-step history included, on the CPU and on CUDA); a solver
//! rewound to an earlier state of its own run replays it exactly (the app's rewind); damaged or
//! mismatched checkpoints are refused with the file named; `flowlab run --checkpoint-every`,
//! `--restart` and an interrupted run (SIGINT) lose no work.

mod common;

use flowlab::case::Case;
use flowlab::solver::snapshot::{read_checkpoint, write_checkpoint};
use flowlab::solver::{Solver, build};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs that a restart must continue exactly: each method, both precisions, AB2's history,
/// CE/SE's gradients, iterative pressure solvers (warm-started from the saved pressure) and a
/// generalized Newtonian fluid. `(case, overrides, steps)`.
const RUNS: &[(&str, &[&str], u64)] = &[
    (
        "lid_driven_cavity_re100",
        &[
            "grid.nx=32",
            "grid.ny=32",
            "solver.time_integrator=ab2",
            "solver.pressure_solver=pcg",
        ],
        40,
    ),
    (
        "lid_driven_cavity_re100",
        &[
            "grid.nx=32",
            "grid.ny=32",
            "solver.tolerance=1e-5",
            "solver.precision=f32",
            "solver.time_integrator=ab2",
            "solver.convection=tvd",
        ],
        40,
    ),
    (
        "lid_driven_cavity_re100",
        &["grid.nx=32", "grid.ny=32", "solver.pressure_solver=fft"],
        40,
    ),
    (
        "lid_driven_cavity_re100_simple",
        &["grid.nx=24", "grid.ny=24"],
        16,
    ),
    (
        "lid_driven_cavity_re100_simple",
        &["grid.nx=24", "grid.ny=24", "solver.method=simpler"],
        16,
    ),
    ("poiseuille_carreau_n05", &[], 16),
    ("sod", &["grid.nx=200"], 60),
    ("riemann_quadrant_config3", &["grid.nx=48", "grid.ny=48"], 30),
    ("cese_sod", &["grid.nx=200"], 60),
    ("cese_quadrant_2d", &["grid.nx=48", "grid.ny=48"], 30),
];

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn case_on(name: &str, sets: &[&str], backend: &str) -> Case {
    let backend = format!("solver.backend={backend}");
    let mut all = sets.to_vec();
    all.push(&backend);
    common::case(name, &all)
}

/// `a` and `b` hold the same state: clock, every saved array and every field, bit for bit.
fn assert_identical(a: &dyn Solver, b: &dyn Solver, label: &str) {
    assert_eq!(a.steps(), b.steps(), "{label}: steps");
    assert_eq!(a.time().to_bits(), b.time().to_bits(), "{label}: time");
    let (sa, sb) = (a.snapshot().unwrap(), b.snapshot().unwrap());
    assert_eq!(sa.arrays.len(), sb.arrays.len(), "{label}: saved arrays");
    for ((name, x), (_, y)) in sa.arrays.iter().zip(&sb.arrays) {
        assert!(x == y, "{label}: saved array {name} differs");
    }
    for f in a.field_names() {
        let (x, y) = (common::field(a, f), common::field(b, f));
        let same = x.iter().zip(&y).all(|(p, q)| p.to_bits() == q.to_bits());
        assert!(same && x.len() == y.len(), "{label}: field {f} differs");
    }
}

/// For every run of [`RUNS`] on `backend`: steps straight through, and half way, saved to a
/// file, read back into a new solver built from the saved case text, and continued; then the
/// first solver rewound to the half-way state and stepped again. All three must agree bit for
/// bit.
fn restarts_continue_bit_for_bit(backend: &str) {
    let dir = tmp(&format!("checkpoint_{backend}"));
    for (k, (name, sets, n)) in RUNS.iter().enumerate() {
        let label = format!("{name} {sets:?} on {backend}");
        let case = case_on(name, sets, backend);
        let mut straight = build(&case.spec).unwrap();
        assert_eq!(straight.info().backend, backend, "{label}");
        straight.advance(*n).unwrap();

        let mut first = build(&case.spec).unwrap();
        first.advance(n / 2).unwrap();
        let half = first.snapshot().unwrap();
        let file = dir.join(format!("run{k}.flowlab"));
        write_checkpoint(&file, &case.to_toml(), &half).unwrap();
        let (text, read) = read_checkpoint(&file).unwrap();
        assert!(read == half, "{label}: the checkpoint reads back as written");
        let saved = Case::parse(&text, "saved").unwrap();
        let mut resumed = build(&saved.spec).unwrap();
        resumed.restore(&read).unwrap();
        resumed.advance(n - n / 2).unwrap();
        assert_identical(
            straight.as_ref(),
            resumed.as_ref(),
            &format!("{label}, restarted"),
        );

        first.advance(n - n / 2).unwrap();
        first.restore(&half).unwrap();
        assert_eq!(first.steps(), n / 2, "{label}");
        first.advance(n - n / 2).unwrap();
        assert_identical(straight.as_ref(), first.as_ref(), &format!("{label}, rewound"));
        eprintln!("{label}: restarted and rewound runs equal the straight run after {n} steps");
    }
}

#[test]
fn cpu_restarts_continue_bit_for_bit() {
    restarts_continue_bit_for_bit("cpu");
}

#[test]
fn cuda_restarts_continue_bit_for_bit() {
    if !common::gpu() {
        return;
    }
    restarts_continue_bit_for_bit("cuda");
}

/// A state saved on the GPU restores on the CPU and the CPU run goes on from it (the same
/// discretisation: within the parity bounds of `cuda_parity`, not bitwise).
#[test]
fn cuda_state_continues_on_the_cpu() {
    if !common::gpu() {
        return;
    }
    let case = case_on("lid_driven_cavity_re100", &["grid.nx=32", "grid.ny=32"], "cuda");
    let mut gpu = build(&case.spec).unwrap();
    gpu.advance(20).unwrap();
    let mut cpu =
        build(&case_on("lid_driven_cavity_re100", &["grid.nx=32", "grid.ny=32"], "cpu").spec).unwrap();
    cpu.restore(&gpu.snapshot().unwrap()).unwrap();
    gpu.advance(20).unwrap();
    cpu.advance(20).unwrap();
    let d = common::rel_l2(
        &common::field(cpu.as_ref(), "u"),
        &common::field(gpu.as_ref(), "u"),
    );
    eprintln!("GPU state continued on the CPU: rel L2 of u after 20 more steps {d:.3e}");
    assert!(d <= 1e-10, "rel L2 {d:e}");
}

#[test]
fn mismatched_and_damaged_checkpoints_are_refused() {
    let dir = tmp("checkpoint_bad");
    let case = case_on("lid_driven_cavity_re100", &["grid.nx=16", "grid.ny=16"], "cpu");
    let mut s = build(&case.spec).unwrap();
    s.advance(3).unwrap();
    let state = s.snapshot().unwrap();

    let other = case_on("lid_driven_cavity_re100", &["grid.nx=32", "grid.ny=32"], "cpu");
    let err = build(&other.spec).unwrap().restore(&state).unwrap_err();
    assert!(
        err.message.contains("16x16x1") && err.message.contains("32x32x1"),
        "{}",
        err.message
    );
    let simple = case_on(
        "lid_driven_cavity_re100_simple",
        &["grid.nx=16", "grid.ny=16"],
        "cpu",
    );
    let err = build(&simple.spec).unwrap().restore(&state).unwrap_err();
    assert!(
        err.message.contains("projection") && err.message.contains("simple"),
        "{}",
        err.message
    );

    let file = dir.join("good.flowlab");
    write_checkpoint(&file, &case.to_toml(), &state).unwrap();
    let bytes = std::fs::read(&file).unwrap();
    let truncated = dir.join("truncated.flowlab");
    std::fs::write(&truncated, &bytes[..bytes.len() - 5]).unwrap();
    let e = read_checkpoint(&truncated).unwrap_err();
    assert!(
        e.contains("truncated.flowlab") && e.contains("bytes of data"),
        "{e}"
    );
    let mut flipped = bytes.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    let altered = dir.join("altered.flowlab");
    std::fs::write(&altered, &flipped).unwrap();
    let e = read_checkpoint(&altered).unwrap_err();
    assert!(e.contains("altered.flowlab") && e.contains("checksum"), "{e}");
    let e = read_checkpoint(&dir.join("missing.flowlab")).unwrap_err();
    assert!(e.contains("missing.flowlab"), "{e}");
    let e = read_checkpoint(Path::new(&common::root().join("cases/sod.toml"))).unwrap_err();
    assert!(e.contains("FLOWLAB-CHECKPOINT"), "{e}");
}

fn flowlab(args: &[&str]) -> std::process::Output {
    Command::new(common::flowlab_bin())
        .args(args)
        .current_dir(common::root())
        .output()
        .expect("flowlab runs")
}

/// Runs `flowlab` and asserts that it succeeded.
fn run_ok(args: &[&str]) {
    let o = flowlab(args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The runs in folders `a` and `b` wrote the same fields, byte for byte.
fn assert_same_fields(a: &Path, b: &Path, what: &str) {
    let read = |d: &Path| std::fs::read(d.join("fields.vti")).unwrap();
    assert!(read(a) == read(b), "{what}");
}

/// `flowlab run --checkpoint-every` then `--restart` into the same folder gives the files of
/// the straight run: the same fields, and the whole residual history.
#[test]
fn run_restarts_from_its_checkpoint() {
    let (a, b) = (tmp("cli_restart_straight"), tmp("cli_restart_resumed"));
    let case = [
        "run",
        "cases/riemann_quadrant_config3.toml",
        "--set",
        "grid.nx=40",
        "--set",
        "grid.ny=40",
    ];
    run_ok(
        &[
            &case[..],
            &["--steps", "30", "--quiet", "--out", a.to_str().unwrap()],
        ]
        .concat(),
    );
    run_ok(
        &[
            &case[..],
            &[
                "--steps",
                "20",
                "--checkpoint-every",
                "10",
                "--quiet",
                "--out",
                b.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    let checkpoint = b.join("checkpoint.flowlab");
    let too_few = flowlab(&[
        "run",
        "--restart",
        checkpoint.to_str().unwrap(),
        "--steps",
        "20",
        "--out",
        b.to_str().unwrap(),
    ]);
    let e = String::from_utf8_lossy(&too_few.stderr);
    assert!(
        !too_few.status.success() && e.contains("checkpoint is at step 20"),
        "{e}"
    );
    run_ok(&[
        "run",
        "--restart",
        checkpoint.to_str().unwrap(),
        "--steps",
        "30",
        "--quiet",
        "--out",
        b.to_str().unwrap(),
    ]);
    assert_same_fields(&a, &b, "the resumed run's fields equal the straight run's");
    let rows = |d: &Path| std::fs::read_to_string(d.join("residuals.csv")).unwrap();
    assert_eq!(
        rows(&a),
        rows(&b),
        "the residual history runs on across the restart"
    );
}

/// `flowlab run` of the Re 100 cavity on 48 x 48 cells.
const CAVITY_48: [&str; 6] = [
    "run",
    "cases/lid_driven_cavity_re100.toml",
    "--set",
    "grid.nx=48",
    "--set",
    "grid.ny=48",
];

/// SIGINT ends a long run after the step under way: status 130, the results so far written
/// (summary with the reason, residuals, fields, checkpoint) and the resume command printed;
/// resuming to a later step gives the straight run's fields.
#[test]
fn an_interrupted_run_keeps_its_results_and_resumes() {
    let (a, b) = (tmp("cli_sigint_straight"), tmp("cli_sigint_resumed"));
    let child = Command::new(common::flowlab_bin())
        .args(CAVITY_48)
        .args([
            "--steps",
            "1000000",
            "--checkpoint-every",
            "25",
            "--quiet",
            "--out",
            b.to_str().unwrap(),
        ])
        .current_dir(common::root())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("flowlab starts");
    let checkpoint = b.join("checkpoint.flowlab");
    let start = std::time::Instant::now();
    while !checkpoint.exists() {
        assert!(start.elapsed().as_secs() < 120, "no checkpoint after 120 s");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{e}");
    assert!(
        e.contains("interrupted at step") && e.contains("--restart"),
        "{e}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(b.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["stop_reason"], "Interrupted");
    assert!(b.join("fields.vti").exists() && b.join("residuals.csv").exists());
    let steps = summary["steps"].as_u64().unwrap();
    let (_, state) = read_checkpoint(&checkpoint).unwrap();
    assert_eq!(state.steps, steps, "the checkpoint holds the interrupted state");

    let end = (steps + 15).to_string();
    run_ok(&[
        "run",
        "--restart",
        checkpoint.to_str().unwrap(),
        "--steps",
        &end,
        "--quiet",
        "--out",
        b.to_str().unwrap(),
    ]);
    run_ok(
        &[
            &CAVITY_48[..],
            &["--steps", &end, "--quiet", "--out", a.to_str().unwrap()],
        ]
        .concat(),
    );
    assert_same_fields(
        &a,
        &b,
        &format!("interrupted at step {steps} and resumed to {end}: the straight run's fields"),
    );
    let rows = std::fs::read_to_string(b.join("residuals.csv")).unwrap();
    assert_eq!(
        rows.lines().count() as u64,
        steps + 15 + 1,
        "one residual row per step and a header"
    );
}

/// The app's whole-state file reopens the run where it was saved, and going back to a kept
/// state and playing on replays the run exactly.
#[test]
fn the_app_reopens_a_saved_state_and_replays_after_going_back() {
    use flowlab::ui::state::AppState;
    let dir = tmp("app_state");
    let case = case_on("lid_driven_cavity_re100", &["grid.nx=24", "grid.ny=24"], "cpu");
    let mut app = AppState::new(case).unwrap();
    app.rewind.interval = 0.0;
    for _ in 0..5 {
        assert!(app.single_step());
    }
    assert_eq!(app.rewind.ring.len(), 6, "the start and every step kept");
    let file = dir.join("lesson.flowlab");
    app.state_path = file.display().to_string();
    app.save_state().unwrap();
    let reopened = AppState::open_state(&file, &[]).unwrap();
    assert_identical(app.solver.as_ref(), reopened.solver.as_ref(), "reopened");

    app.go_back(2).unwrap();
    assert_eq!(app.solver.steps(), 2);
    assert!(
        app.history.iter().all(|(s, _, _)| *s <= 2),
        "the plots' history is cut back"
    );
    assert_eq!(app.rewind.ring.len(), 3, "the states after it are forgotten");
    for _ in 0..3 {
        assert!(app.single_step());
    }
    assert_identical(
        app.solver.as_ref(),
        reopened.solver.as_ref(),
        "replayed after going back",
    );
}

/// A checkpoint that cannot be written fails the run, after its results are written.
#[test]
fn a_failed_checkpoint_still_writes_the_results() {
    let out = tmp("cli_checkpoint_fails");
    // A folder where the checkpoint file should go: the rename onto it fails.
    std::fs::create_dir_all(out.join("checkpoint.flowlab")).unwrap();
    let o = flowlab(
        &[
            &CAVITY_48[..],
            &[
                "--steps",
                "10",
                "--checkpoint-every",
                "5",
                "--force",
                "--quiet",
                "--out",
                out.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && e.contains("writing a checkpoint failed"),
        "{e}"
    );
    assert!(
        out.join("summary.json").exists() && out.join("fields.vti").exists(),
        "{e}"
    );
}
