//! Runs over several processes (`mpirun -n N flowlab run`, the grid cut into slabs along its
//! last axis, `flowlab::parallel`) give the single-process results bit for bit: the fields
//! (`fields.vti`), the final residuals and the summary's results, for 2D and 3D, f32 and f64,
//! every convection scheme's reach (TVD and QUICK read two faces across a cut), Jacobi, SOR,
//! PCG and multigrid pressure solves (coarse levels cut into slabs, then gathered), singular (closed) and non-singular (outflow) pressure problems, exact
//! (analytic) sides on a shifted slab, and a checkpoint written over several processes and
//! continued on one. Settings that do not run over several processes are refused by key. On
//! the GPU machine the same holds for one GPU a process and for one process driving several
//! GPUs (`--devices 0,1,...`).
//!
//! Needs the `mpi` feature and an MPI launcher (`.ci/run` installs OpenMPI); in CI a missing
//! launcher fails the test.
#![cfg(feature = "mpi")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `mpirun` with what a CI container needs (root, more processes than cores).
fn mpirun(n: usize) -> Option<Command> {
    let ok = Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(!common::in_ci(), "mpirun is missing (.ci/run installs OpenMPI)");
        eprintln!("SKIPPED {}: no mpirun", common::test_name());
        return None;
    }
    let mut c = Command::new("mpirun");
    c.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "--bind-to",
        "none",
        "-n",
    ])
    .arg(n.to_string())
    .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    .env("RAYON_NUM_THREADS", "1");
    Some(c)
}

/// `flowlab args` on one process, or on `n` under `mpirun` (`None`: no launcher, skipped).
fn flowlab_on(n: usize, args: &[String]) -> Option<Output> {
    let mut cmd = match n {
        1 => Command::new(common::flowlab_bin()),
        n => {
            let mut c = mpirun(n)?;
            c.arg(common::flowlab_bin());
            c
        }
    };
    Some(cmd.args(args).output().expect("flowlab"))
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("flowlab-mpi-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn run_args(case: &Path, sets: &[&str], steps: u64, out: &Path) -> Vec<String> {
    let mut a = vec![
        "run".to_string(),
        case.display().to_string(),
        "--quiet".into(),
        "--force".into(),
    ];
    a.extend([
        "--steps".into(),
        steps.to_string(),
        "--out".into(),
        out.display().to_string(),
    ]);
    for s in sets {
        a.extend(["--set".into(), s.to_string()]);
    }
    a
}

fn check(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).expect("summary.json"))
        .expect("json")
}

/// How close a decomposed run must come to the one-process run.
#[derive(Clone, Copy, Debug)]
enum Agreement {
    /// The same fields file, residuals, time and results, bit for bit.
    Bitwise,
    /// The same state (the checkpoints' arrays), residuals, time and results, bit for bit: a
    /// GPU run's fields file holds fields derived on the device, while a decomposed run derives
    /// them on the first process's CPU from the gathered state.
    SameState,
    /// Every number of the summary (time, residuals, results) within this relative difference
    /// (sums added in another order).
    Within(f64),
}

/// Whether two summary values agree to `rel` (numbers relative to the larger, anything else
/// equal), with the path of the first that does not in `Err`.
fn agree(a: &serde_json::Value, b: &serde_json::Value, rel: f64, path: &str) -> Result<(), String> {
    use serde_json::Value::*;
    match (a, b) {
        (Number(x), Number(y)) => {
            let (x, y) = (x.as_f64().unwrap_or(f64::NAN), y.as_f64().unwrap_or(f64::NAN));
            let scale = x.abs().max(y.abs()).max(1e-300);
            ((x - y).abs() <= rel * scale || x == y)
                .then_some(())
                .ok_or(format!("{path}: {x} vs {y}"))
        }
        (Object(x), Object(y)) if x.len() == y.len() => x
            .iter()
            .try_for_each(|(k, v)| agree(v, y.get(k).unwrap_or(&Null), rel, &format!("{path}.{k}"))),
        (Array(x), Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .try_for_each(|(i, (v, w))| agree(v, w, rel, &format!("{path}[{i}]"))),
        _ => (a == b).then_some(()).ok_or(format!("{path}: {a} vs {b}")),
    }
}

/// Runs `case` with `sets` for `steps` steps on one process and on each of `parts`, and asserts
/// that every decomposed run wrote the same fields, residuals and results.
fn same_as_one_process(name: &str, case: &str, sets: &[&str], steps: u64, parts: &[usize]) {
    agrees_with_one_process(name, case, sets, steps, parts, Agreement::Bitwise);
}

/// How the parts of a decomposed run are started.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Launch {
    /// One process a part, under `mpirun`.
    Processes,
    /// One process driving a GPU a part (`--devices 0,1,...`).
    Devices,
}

/// [`same_as_one_process`] to the `agreement` given.
fn agrees_with_one_process(
    name: &str,
    case: &str,
    sets: &[&str],
    steps: u64,
    parts: &[usize],
    agreement: Agreement,
) {
    agrees_when_launched(name, case, sets, steps, parts, agreement, Launch::Processes);
}

/// [`agrees_with_one_process`] with the parts started by `launch`.
fn agrees_when_launched(
    name: &str,
    case: &str,
    sets: &[&str],
    steps: u64,
    parts: &[usize],
    agreement: Agreement,
    launch: Launch,
) {
    let case = common::root().join("cases").join(format!("{case}.toml"));
    let args = |dir: &Path| {
        let mut a = run_args(&case, sets, steps, dir);
        if matches!(agreement, Agreement::SameState) {
            a.extend(["--checkpoint-every".into(), steps.to_string()]);
        }
        a
    };
    let one = out_dir(&format!("{name}-1"));
    let o = flowlab_on(1, &args(&one)).expect("one process");
    check(&o, "the one-process run");
    let reference = summary(&one);
    let fields = std::fs::read(one.join("fields.vti")).expect("fields.vti");
    for &n in parts {
        let dir = out_dir(&format!("{name}-{n}"));
        let o = match launch {
            Launch::Processes => flowlab_on(n, &args(&dir)),
            Launch::Devices => {
                let mut a = args(&dir);
                let list: Vec<String> = (0..n).map(|d| d.to_string()).collect();
                a.extend(["--devices".into(), list.join(",")]);
                flowlab_on(1, &a)
            }
        };
        let Some(o) = o else {
            return;
        };
        check(&o, &format!("the run over {n} parts ({launch:?})"));
        let s = summary(&dir);
        let processes = if launch == Launch::Processes { n } else { 1 };
        assert_eq!(s["processes"], processes, "{name}: summary.json's processes");
        assert_eq!(s["steps"], reference["steps"], "{name}, {n} processes: steps");
        assert_eq!(
            s["backend"], reference["backend"],
            "{name}, {n} processes: backend"
        );
        let mut results = s["results"].clone();
        let extra = results.as_object_mut().expect("results");
        assert_eq!(
            extra.remove("parts"),
            Some(n.into()),
            "{name}: the results' parts"
        );
        assert!(
            extra
                .remove("communication_seconds")
                .is_some_and(|t| t.as_f64().is_some_and(|t| t >= 0.0))
        );
        // GPU parts: NCCL's share, measured on the GPU.
        let gpu = s["backend"] == "cuda";
        let nccl = extra
            .remove("device_communication_seconds")
            .and_then(|t| t.as_f64());
        assert_eq!(
            nccl.is_some_and(|t| t > 0.0),
            gpu,
            "{name}: device_communication_seconds on the GPU parts only"
        );
        // GPU parts: the same NCCL time by kind of call (untraced, the only phases timed).
        let phases = extra.remove("device_phase_seconds");
        assert_eq!(
            phases.is_some(),
            gpu,
            "{name}: device_phase_seconds on the GPU parts only"
        );
        if let (Some(phases), Some(nccl)) = (phases, nccl) {
            let by_kind: f64 = phases
                .as_object()
                .expect("a map of phases")
                .iter()
                .map(|(kind, t)| {
                    assert!(kind.starts_with("nccl "), "{name}: phase {kind} timed untraced");
                    t.as_f64().expect("seconds")
                })
                .sum();
            assert!(
                (by_kind - nccl).abs() <= 1e-9 * nccl,
                "{name}: the NCCL calls by kind sum to {by_kind} s, not {nccl} s"
            );
        }
        let reference_results = &reference["results"];
        match agreement {
            Agreement::Bitwise | Agreement::SameState => {
                assert_eq!(s["time"], reference["time"], "{name}, {n} processes: time");
                assert_eq!(
                    s["final_residuals"], reference["final_residuals"],
                    "{name}, {n} processes: residuals"
                );
                assert_eq!(&results, reference_results, "{name}, {n} processes: results");
                if matches!(agreement, Agreement::Bitwise) {
                    let decomposed = std::fs::read(dir.join("fields.vti")).expect("fields.vti");
                    assert!(
                        decomposed == fields,
                        "{name}, {n} processes: fields.vti differs from the one-process run's"
                    );
                } else {
                    let state = |d: &Path| {
                        flowlab::solver::snapshot::read_checkpoint(&d.join("checkpoint.flowlab"))
                            .expect("checkpoint")
                            .1
                    };
                    let (a, b) = (state(&one), state(&dir));
                    assert_eq!(
                        (a.time, a.steps, a.dt),
                        (b.time, b.steps, b.dt),
                        "{name}, {n}: clock"
                    );
                    assert_eq!(a.scalars, b.scalars, "{name}, {n} processes: scalars");
                    for ((na, xa), (nb, xb)) in a.arrays.iter().zip(&b.arrays) {
                        assert!(na == nb && xa == xb, "{name}, {n} processes: array {na} differs");
                    }
                    assert_eq!(a.arrays.len(), b.arrays.len());
                }
                eprintln!("{name}: {n} parts ({launch:?}) = 1 process, bit for bit, after {steps} steps");
            }
            Agreement::Within(rel) => {
                for key in ["time", "final_residuals"] {
                    agree(&s[key], &reference[key], rel, key)
                        .unwrap_or_else(|e| panic!("{name}, {n} processes: {e}"));
                }
                agree(&results, reference_results, rel, "results")
                    .unwrap_or_else(|e| panic!("{name}, {n} processes: {e}"));
                eprintln!("{name}: {n} parts ({launch:?}) = 1 process to {rel:e}, after {steps} steps");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    let _ = std::fs::remove_dir_all(&one);
}

#[test]
fn cavity_3d_pcg_and_tvd_over_two_and_three_processes() {
    same_as_one_process(
        "cavity3d",
        "cavity_3d_re100",
        &[
            "grid.nx=16",
            "grid.ny=12",
            "grid.nz=20",
            "solver.pressure_solver=pcg",
            "solver.convection=tvd",
            "solver.time_integrator=ab2",
        ],
        15,
        &[2, 3],
    );
}

#[test]
fn cavity_2d_f32_sor_quick_and_jacobi() {
    let base = [
        "grid.nx=24",
        "grid.ny=26",
        "solver.tolerance=1e-4",
        "solver.precision=f32",
    ];
    let sor: Vec<&str> = base
        .iter()
        .copied()
        .chain(["solver.pressure_solver=sor", "solver.convection=quick"])
        .collect();
    same_as_one_process("cavity2d-sor", "lid_driven_cavity_re100", &sor, 30, &[3]);
    let jacobi: Vec<&str> = base
        .iter()
        .copied()
        .chain(["solver.pressure_solver=jacobi", "solver.convection=upwind"])
        .collect();
    same_as_one_process("cavity2d-jacobi", "lid_driven_cavity_re100", &jacobi, 20, &[2]);
}

#[test]
fn multigrid_with_cut_and_gathered_levels() {
    // 64^2 over 4: levels 1 and 2 are cut into slabs too, level 3 (8^2) is gathered.
    same_as_one_process(
        "mg-64",
        "lid_driven_cavity_re100",
        &["grid.nx=64", "grid.ny=64"],
        10,
        &[4],
    );
    // 32 x 40 over 3: the cuts (12, 26) do not halve to even cuts, so level 1 is gathered.
    same_as_one_process(
        "mg-40",
        "lid_driven_cavity_re100",
        &["grid.nx=32", "grid.ny=40"],
        10,
        &[3],
    );
    same_as_one_process(
        "mg-3d",
        "cavity_3d_re100",
        &["grid.nx=16", "grid.ny=16", "grid.nz=32", "solver.convection=tvd"],
        5,
        &[2],
    );
}

#[test]
fn exact_sides_on_shifted_slabs() {
    same_as_one_process(
        "ethier-steinman",
        "ethier_steinman",
        &[
            "grid.nx=12",
            "grid.ny=12",
            "grid.nz=16",
            "solver.pressure_solver=pcg",
        ],
        8,
        &[2, 3],
    );
}

#[test]
fn outflow_on_the_cut_axis() {
    // A channel along y (the cut axis in 2D): inflow at the bottom, outflow at the top, where
    // the pressure is fixed, so the pressure problem is not singular.
    same_as_one_process(
        "channel",
        "lid_driven_cavity_re100",
        &[
            "grid.nx=12",
            "grid.ny=32",
            "grid.extents=[1.0, 2.0]",
            "boundary.top={ type = \"outflow\" }",
            "boundary.bottom={ type = \"inflow\", velocity = [0.0, 1.0] }",
            "solver.pressure_solver=pcg",
        ],
        25,
        &[3],
    );
}

/// The rotor in hover (`cases/rotor_hover.toml`) on slabs that cut its disk: the disk spans
/// z in [-1, 1] of [-4, 4], 2 parts cut it at z = 0 and 3 near z = -1.33 and 1.33, within its
/// sources' reach. Each disk point is evaluated by one part, the loads are gathered in point
/// order and the sources keep the whole grid's spreading, so the fields, residuals and the
/// rotor's results are the one process's bit for bit.
#[test]
fn rotor_disk_cut_by_the_slabs() {
    same_as_one_process(
        "rotor",
        "rotor_hover",
        &[
            "grid.nx=32",
            "grid.ny=48",
            "grid.nz=32",
            "solver.backend=cpu",
            "solver.pressure_solver=multigrid",
        ],
        6,
        &[2, 3],
    );
}

#[test]
fn settings_that_do_not_run_over_several_processes_are_refused_by_key() {
    let case = common::root().join("cases/cavity_3d_re100.toml");
    for (sets, key) in [
        (
            &["grid.nz=16", "solver.pressure_solver=fft"][..],
            "solver.pressure_solver",
        ),
        (&["grid.nz=16", "solver.method=simplec"][..], "solver.method"),
        (&["grid.nz=6", "solver.pressure_solver=pcg"][..], "grid.nz"),
        // Each process's slab of a grid too large for the host.
        (
            &[
                "grid.nx=16384",
                "grid.ny=4096",
                "grid.nz=4096",
                "solver.pressure_solver=pcg",
            ][..],
            "grid.nx",
        ),
    ] {
        let dir = out_dir("refused");
        let Some(o) = flowlab_on(2, &run_args(&case, sets, 1, &dir)) else {
            return;
        };
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{sets:?} ran over 2 processes");
        assert!(
            err.contains(key),
            "{sets:?}: the error does not name {key}:\n{err}"
        );
    }
}

#[test]
fn checkpoints_move_between_one_process_and_several() {
    let case = common::root().join("cases/cavity_3d_re100.toml");
    let sets = [
        "grid.nx=12",
        "grid.ny=12",
        "grid.nz=16",
        "solver.pressure_solver=pcg",
        "solver.time_integrator=ab2",
    ];
    let one = out_dir("ckpt-1");
    let o = flowlab_on(1, &run_args(&case, &sets, 20, &one)).expect("one process");
    check(&o, "the uninterrupted run");
    let fields = std::fs::read(one.join("fields.vti")).expect("fields.vti");
    // Written over two processes, continued on one; and written on one, continued over three.
    for (first, then) in [(2, 1), (1, 3)] {
        let dir = out_dir(&format!("ckpt-{first}-{then}"));
        let mut args = run_args(&case, &sets, 10, &dir);
        args.extend(["--checkpoint-every".into(), "10".into()]);
        let Some(o) = flowlab_on(first, &args) else { return };
        check(&o, "the first half");
        let checkpoint = dir.join("checkpoint.flowlab");
        let args = [
            "run".to_string(),
            "--restart".into(),
            checkpoint.display().to_string(),
            "--steps".into(),
            "20".into(),
            "--quiet".into(),
            "--out".into(),
            dir.display().to_string(),
        ];
        let Some(o) = flowlab_on(then, &args) else { return };
        check(&o, "the continued run");
        let continued = std::fs::read(dir.join("fields.vti")).expect("fields.vti");
        assert!(
            continued == fields,
            "{first} then {then} processes: the continued run differs from the uninterrupted one"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    let _ = std::fs::remove_dir_all(&one);
}

/// The GPUs the GPU tests below can use (at least 2, with NCCL), or `None` after skipping the
/// test (a failure under `FLOWLAB_REQUIRE_GPU=1`).
fn gpus() -> Option<usize> {
    if !common::gpu() {
        return None;
    }
    let count = flowlab::backend::cuda::probe().map_or(0, |i| i.device_count as usize);
    if count < 2 {
        common::skip_gpu_test(&format!("two GPUs are needed, the driver sees {count}"));
        return None;
    }
    if !flowlab::backend::cuda::nccl::available() {
        common::skip_gpu_test("the NCCL library (libnccl.so) was not found");
        return None;
    }
    Some(count)
}

/// Parts to try on `count` GPUs: 2, 3 and 4 where present.
fn gpu_parts(count: usize) -> Vec<usize> {
    (2..=count.min(4)).collect()
}

#[test]
fn gpu_slabs_give_the_one_gpu_result_bit_for_bit() {
    let Some(count) = gpus() else { return };
    let parts = gpu_parts(count);
    // Layers of 32 x 32 = 1024 cells: the linear sums' 256-cell blocks fall on the one-GPU blocks.
    let base = ["grid.nx=32", "grid.ny=32", "grid.nz=48", "solver.backend=cuda"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> { base.iter().chain(extra).copied().collect() };
    agrees_with_one_process(
        "gpu-jacobi-tvd-ab2",
        "cavity_3d_re100",
        &with(&[
            "solver.pressure_solver=jacobi",
            "solver.tolerance=1e-5",
            "solver.convection=tvd",
            "solver.time_integrator=ab2",
        ]),
        12,
        &parts,
        Agreement::SameState,
    );
    agrees_with_one_process(
        "gpu-sor-quick-f32",
        "cavity_3d_re100",
        &with(&[
            "solver.pressure_solver=sor",
            "solver.tolerance=1e-4",
            "solver.precision=f32",
            "solver.convection=quick",
        ]),
        12,
        &parts,
        Agreement::SameState,
    );
    agrees_with_one_process(
        "gpu-pcg-upwind",
        "cavity_3d_re100",
        &with(&["solver.pressure_solver=pcg", "solver.convection=upwind"]),
        12,
        &parts,
        Agreement::SameState,
    );
}

#[test]
fn gpu_multigrid_with_cut_and_gathered_levels_gives_the_one_gpu_result_bit_for_bit() {
    let Some(count) = gpus() else { return };
    // 128^3: levels 0 and 1 (64^3, the smallest a GPU part cuts) are cut over 2 and 4 parts,
    // level 0 only over 3 (its cuts at 42 and 84 layers do not halve to even cuts); the next
    // level is gathered and cycled on every part down to its CG solve.
    agrees_with_one_process(
        "gpu-multigrid-tvd",
        "cavity_3d_re100",
        &[
            "grid.nx=128",
            "grid.ny=128",
            "grid.nz=128",
            "solver.backend=cuda",
            "solver.pressure_solver=multigrid",
            "solver.tolerance=1e-8",
            "solver.convection=tvd",
        ],
        12,
        &gpu_parts(count),
        Agreement::SameState,
    );
    let base = ["grid.nx=32", "grid.ny=32", "grid.nz=48", "solver.backend=cuda"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> { base.iter().chain(extra).copied().collect() };
    // An outflow on the cut axis: the pressure problem is not singular.
    agrees_when_launched(
        "gpu-devices-multigrid-outflow-f32",
        "cavity_3d_re100",
        &with(&[
            "boundary.back={ type = \"outflow\" }",
            "boundary.front={ type = \"inflow\", velocity = [0.0, 0.0, 1.0] }",
            "solver.pressure_solver=multigrid",
            "solver.tolerance=1e-4",
            "solver.precision=f32",
        ]),
        12,
        &gpu_parts(count),
        Agreement::SameState,
        Launch::Devices,
    );
}

#[test]
fn gpu_slabs_of_any_layer_size_agree_to_round_off() {
    let Some(count) = gpus() else { return };
    // 20 x 18 = 360 cells a layer: the parts' linear sums are cut differently from one GPU's;
    // an outflow on the cut axis (the pressure problem is not singular) on the last part.
    agrees_with_one_process(
        "gpu-unaligned-outflow",
        "cavity_3d_re100",
        &[
            "grid.nx=20",
            "grid.ny=18",
            "grid.nz=40",
            "boundary.back={ type = \"outflow\" }",
            "boundary.front={ type = \"inflow\", velocity = [0.0, 0.0, 1.0] }",
            "solver.backend=cuda",
            "solver.pressure_solver=jacobi",
            "solver.tolerance=1e-6",
        ],
        10,
        &gpu_parts(count),
        Agreement::Within(1e-9),
    );
}

/// The rotor in hover on GPUs, on slabs that cut its disk (as `rotor_disk_cut_by_the_slabs`
/// on the CPU): each part evaluates the disk points in its own layers, the evaluations are
/// gathered over NCCL and put back in point order, so the fields, residuals and the rotor's
/// results are one GPU's bit for bit (layers of 32 x 48 = 6 x 256 cells). Over processes, and
/// over the GPUs of one process.
#[test]
fn gpu_rotor_disk_cut_by_the_slabs_gives_the_one_gpu_result_bit_for_bit() {
    let Some(count) = gpus() else { return };
    let sets = [
        "grid.nx=32",
        "grid.ny=48",
        "grid.nz=32",
        "solver.backend=cuda",
        "solver.pressure_solver=multigrid",
    ];
    for launch in [Launch::Processes, Launch::Devices] {
        agrees_when_launched(
            &format!("gpu-rotor-{launch:?}"),
            "rotor_hover",
            &sets,
            6,
            &gpu_parts(count),
            Agreement::SameState,
            launch,
        );
    }
}

/// A live change of the rotor's geometry on the GPUs of one process (`solver.devices`, as the
/// app drives them): after 6 steps the disk grows from R = 1 to 1.25 and moves 0.75 along the
/// cut axis (z), so its points move between the parts, each part builds its tables and its
/// share of the disk again, and 6 more steps give one GPU's state (clock, scalars, every
/// array) and rotor totals bit for bit; the larger disk's thrust is higher.
#[test]
fn gpu_parts_take_a_live_rotor_geometry_change_as_one_gpu_does() {
    let Some(count) = gpus() else { return };
    let run = |parts: usize| {
        let mut case = common::case(
            "rotor_hover",
            &[
                "grid.nx=32",
                "grid.ny=48",
                "grid.nz=32",
                "solver.backend=\"cuda\"",
                "solver.pressure_solver=\"multigrid\"",
            ],
        );
        if parts > 1 {
            let list: Vec<String> = (0..parts).map(|d| d.to_string()).collect();
            case.set_assignment(&format!("solver.devices=[{}]", list.join(",")))
                .expect("devices");
        }
        let mut s = flowlab::solver::build(&case.spec).expect("the rotor on the GPUs");
        s.advance(6).expect("steps before");
        let before = common::residual(s.as_ref(), "rotor_thrust");
        for set in ["rotor.radius=1.25", "rotor.centre=[0.0, 0.0, 0.75]"] {
            case.set_assignment(set).expect(set);
        }
        s.update(&case.spec).expect("the new geometry taken live");
        s.advance(6).expect("steps after");
        let rotor = s.summary()["rotor"].clone();
        (before, rotor, s.snapshot().expect("state"))
    };
    let (before, rotor, one) = run(1);
    let after = rotor["thrust"].as_f64().expect("thrust");
    assert!(
        after > 1.2 * before,
        "thrust {before} -> {after} with R 1 -> 1.25"
    );
    for n in gpu_parts(count) {
        let (b, r, state) = run(n);
        assert_eq!(
            b.to_bits(),
            before.to_bits(),
            "{n} GPUs: thrust before the change"
        );
        assert_eq!(r, rotor, "{n} GPUs: the rotor's totals after the change");
        assert_eq!(
            (state.time, state.steps, state.dt),
            (one.time, one.steps, one.dt),
            "{n} GPUs: clock"
        );
        assert_eq!(state.scalars, one.scalars, "{n} GPUs: scalars");
        assert_eq!(state.arrays.len(), one.arrays.len());
        for ((na, xa), (nb, xb)) in state.arrays.iter().zip(&one.arrays) {
            assert!(
                na == nb && xa == xb,
                "{n} GPUs: array {na} differs from one GPU's"
            );
        }
        eprintln!("rotor geometry changed live: {n} GPUs = 1 GPU, bit for bit");
    }
}

#[test]
fn gpu_settings_that_do_not_run_over_several_gpus_are_refused_by_key() {
    if gpus().is_none() {
        return;
    }
    let cube = ["grid.nz=16", "solver.backend=cuda"];
    for (case, sets, key) in [
        (
            "cavity_3d_re100",
            &["solver.pressure_solver=fft"][..],
            "solver.pressure_solver",
        ),
        (
            "cavity_3d_re100",
            &["solver.pressure_solver=multigrid", "grid.nx=15"][..],
            "solver.pressure_solver",
        ),
        (
            "lid_driven_cavity_re100",
            &["solver.pressure_solver=jacobi", "solver.backend=cuda"][..],
            "case.dim",
        ),
        (
            "cavity_3d_re100",
            &["solver.devices=[0, 99]", "solver.pressure_solver=jacobi"][..],
            "solver.backend",
        ),
    ] {
        let dir = out_dir("gpu-refused");
        let case = common::root().join("cases").join(format!("{case}.toml"));
        let mut sets = sets.to_vec();
        if case.ends_with("cavity_3d_re100.toml") {
            sets.extend(cube);
        }
        let Some(o) = flowlab_on(2, &run_args(&case, &sets, 1, &dir)) else {
            return;
        };
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{sets:?} ran over 2 GPUs");
        assert!(
            err.contains(key),
            "{sets:?}: the error does not name {key}:\n{err}"
        );
    }
}

#[test]
fn gpus_of_one_process_give_the_one_gpu_result_bit_for_bit() {
    let Some(count) = gpus() else { return };
    let base = ["grid.nx=32", "grid.ny=32", "grid.nz=48", "solver.backend=cuda"];
    for (name, extra) in [
        (
            "gpu-devices-jacobi-tvd",
            &[
                "solver.pressure_solver=jacobi",
                "solver.tolerance=1e-5",
                "solver.convection=tvd",
            ][..],
        ),
        (
            "gpu-devices-pcg-f32",
            &[
                "solver.pressure_solver=pcg",
                "solver.tolerance=1e-4",
                "solver.precision=f32",
            ][..],
        ),
    ] {
        let sets: Vec<&str> = base.iter().chain(extra).copied().collect();
        agrees_when_launched(
            name,
            "cavity_3d_re100",
            &sets,
            12,
            &gpu_parts(count),
            Agreement::SameState,
            Launch::Devices,
        );
    }
}

#[test]
fn gpus_of_one_process_are_refused_by_key_when_missing_or_listed_twice() {
    if gpus().is_none() {
        return;
    }
    let case = common::root().join("cases").join("cavity_3d_re100.toml");
    for (devices, says) in [("0,99", "device 99 was asked for"), ("0,0", "listed twice")] {
        let dir = out_dir("gpu-devices-refused");
        let mut args = run_args(
            &case,
            &[
                "grid.nz=16",
                "solver.backend=cuda",
                "solver.pressure_solver=jacobi",
            ],
            1,
            &dir,
        );
        args.extend(["--devices".into(), devices.into()]);
        let o = flowlab_on(1, &args).expect("one process");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "--devices {devices} ran");
        assert!(
            err.contains("solver.devices") && err.contains(says),
            "--devices {devices}: the error does not name solver.devices ({says}):\n{err}"
        );
    }
}
