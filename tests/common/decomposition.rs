//! Runs of a case over several parts (processes under `mpirun`, or the GPUs of one process)
//! against the same run on one process: the launcher, the run's arguments and outputs, and the
//! comparisons (`tests/mpi_decomposition.rs` on the CPU, `tests/gpu_decomposition.rs` on GPUs).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `mpirun` with what a CI container needs (root, more processes than cores).
pub fn mpirun(n: usize) -> Option<Command> {
    let ok = Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(!super::in_ci(), "mpirun is missing (.ci/run installs OpenMPI)");
        eprintln!("SKIPPED {}: no mpirun", super::test_name());
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
pub fn flowlab_on(n: usize, args: &[String]) -> Option<Output> {
    let mut cmd = match n {
        1 => Command::new(super::flowlab_bin()),
        n => {
            let mut c = mpirun(n)?;
            c.arg(super::flowlab_bin());
            c
        }
    };
    Some(cmd.args(args).output().expect("flowlab"))
}

pub fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("flowlab-mpi-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

pub fn run_args(case: &Path, sets: &[&str], steps: u64, out: &Path) -> Vec<String> {
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

pub fn check(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

pub fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).expect("summary.json"))
        .expect("json")
}

/// Runs `case` with `sets` for one step over 2 processes and asserts that it fails with an error
/// naming `key` (`parts`: what the processes stand for, in the message); `None` where no
/// launcher could run it (skipped).
pub fn refused_over_two(case: &Path, sets: &[&str], key: &str, parts: &str) -> Option<()> {
    let dir = out_dir("refused");
    let o = flowlab_on(2, &run_args(case, sets, 1, &dir))?;
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{sets:?} ran over 2 {parts}");
    assert!(
        err.contains(key),
        "{sets:?}: the error does not name {key}:\n{err}"
    );
    Some(())
}

/// How close a decomposed run must come to the one-process run.
#[derive(Clone, Copy, Debug)]
pub enum Agreement {
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
pub fn agree(a: &serde_json::Value, b: &serde_json::Value, rel: f64, path: &str) -> Result<(), String> {
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
pub fn same_as_one_process(name: &str, case: &str, sets: &[&str], steps: u64, parts: &[usize]) {
    agrees_when_launched(
        name,
        case,
        sets,
        steps,
        parts,
        Agreement::Bitwise,
        Launch::Processes,
    );
}

/// How the parts of a decomposed run are started.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Launch {
    /// One process a part, under `mpirun`.
    Processes,
    /// One process driving a GPU a part (`--devices 0,1,...`).
    Devices,
}

/// [`same_as_one_process`] to the `agreement` given, with the parts started by `launch`.
pub fn agrees_when_launched(
    name: &str,
    case: &str,
    sets: &[&str],
    steps: u64,
    parts: &[usize],
    agreement: Agreement,
    launch: Launch,
) {
    let case = super::root().join("cases").join(format!("{case}.toml"));
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

/// A run of `steps` steps of `case` with `sets` written as a checkpoint half way on `first`
/// processes and continued from it on `then`, for each `(first, then)` of `moves`: the fields
/// are those of the uninterrupted one-process run, bit for bit (`name` prefixes the output
/// folders).
pub fn checkpoints_move(name: &str, case: &Path, sets: &[&str], steps: u64, moves: &[(usize, usize)]) {
    let one = out_dir(&format!("{name}-1"));
    let o = flowlab_on(1, &run_args(case, sets, steps, &one)).expect("one process");
    check(&o, "the uninterrupted run");
    let fields = std::fs::read(one.join("fields.vti")).expect("fields.vti");
    for &(first, then) in moves {
        let dir = out_dir(&format!("{name}-{first}-{then}"));
        let mut args = run_args(case, sets, steps / 2, &dir);
        args.extend(["--checkpoint-every".into(), (steps / 2).to_string()]);
        let Some(o) = flowlab_on(first, &args) else { return };
        check(&o, "the first half");
        let checkpoint = dir.join("checkpoint.flowlab");
        let args = [
            "run".to_string(),
            "--restart".into(),
            checkpoint.display().to_string(),
            "--steps".into(),
            steps.to_string(),
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
