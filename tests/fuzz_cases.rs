//! Deterministic mutation fuzzing of the shipped case files: every mutant must end in a run of at
//! most three steps or a clean error, never a panic, an abort or a hang, and a mutant that adds
//! an unknown key must be rejected. Then the hand-written bad command lines of issue 18, each run
//! as a subprocess with a time limit.

use flowlab::case::Case;
use flowlab::solver;
use proptest::prelude::Rng as _;
use proptest::test_runner::{RngAlgorithm, TestRng};
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Mutants generated (over all shipped cases).
const MUTANTS: usize = 1200;
/// A valid mutant is stepped only when its solver needs less than this (bytes): the test's own
/// bound on time and memory (larger valid grids count as "valid, too large to step").
const STEP_MEMORY: u64 = 64 << 20;

/// Values a mutation puts in place of a key's value (TOML source).
const VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "0.5",
    "1e308",
    "-1e308",
    "9223372036854775807",
    "nan",
    "inf",
    "-inf",
    "\"\"",
    "\"nonsense\"",
    "true",
    "[]",
    "[1.0, 2.0, 3.0]",
    "[0, 0]",
    "{}",
    "100000",
];

/// Spellings the enum-swap mutation chooses from (valid for some key, wrong for most).
const NAMES: &[&str] = &[
    "incompressible",
    "compressible",
    "projection",
    "muscl_hancock",
    "cese",
    "simple",
    "simplec",
    "simpler",
    "wall",
    "inflow",
    "outflow",
    "opening",
    "transmissive",
    "periodic",
    "symmetry",
    "reflective",
    "rest",
    "uniform",
    "riemann",
    "blast",
    "quadrant",
    "jacobi",
    "sor",
    "pcg",
    "multigrid",
    "fft",
    "hllc",
    "roe",
    "exact",
    "minmod",
    "superbee",
    "f32",
    "f64",
    "cpu",
    "auto",
    "cuda",
    "central",
    "upwind",
    "tvd",
    "quick",
    "power_law",
    "euler",
    "ab2",
    "x",
    "y",
];

struct Dice(TestRng);

impl Dice {
    fn below(&mut self, n: usize) -> usize {
        (self.0.next_u64() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Dotted paths of the document's tables (`boundary.left`, `initial`, ...) and of its values.
fn paths(doc: &toml_edit::DocumentMut) -> (Vec<String>, Vec<String>) {
    fn walk(t: &dyn toml_edit::TableLike, prefix: &str, tables: &mut Vec<String>, values: &mut Vec<String>) {
        for (k, item) in t.iter() {
            let path = if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            };
            if let Some(sub) = item.as_table_like() {
                tables.push(path.clone());
                walk(sub, &path, tables, values);
            } else if item.is_value() {
                values.push(path);
            }
        }
    }
    let (mut tables, mut values) = (Vec::new(), Vec::new());
    walk(doc.as_table(), "", &mut tables, &mut values);
    (tables, values)
}

fn table_of<'a>(doc: &'a mut toml_edit::DocumentMut, path: &str) -> &'a mut dyn toml_edit::TableLike {
    let mut t: &mut dyn toml_edit::TableLike = doc.as_table_mut();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        t = t
            .get_mut(part)
            .and_then(|i| i.as_table_like_mut())
            .expect("a table path");
    }
    t
}

fn split(path: &str) -> (&str, &str) {
    path.rsplit_once('.').unwrap_or(("", path))
}

/// One mutation of `text`: its category and the mutated text.
fn mutate(text: &str, rng: &mut Dice) -> (&'static str, String) {
    let mut doc: toml_edit::DocumentMut = text.parse().expect("shipped cases parse");
    let (tables, values) = paths(&doc);
    let category = *rng.pick(&[
        "delete",
        "value",
        "value",
        "rename",
        "unknown_key",
        "enum_swap",
        "dim",
        "element",
    ]);
    match category {
        "delete" => {
            let (t, k) = split(rng.pick(&values).as_str());
            table_of(&mut doc, t).remove(k);
        }
        "value" => {
            let (t, k) = split(rng.pick(&values).as_str());
            let v: toml_edit::Value = rng.pick(VALUES).parse().expect("valid TOML value");
            table_of(&mut doc, t).insert(k, toml_edit::Item::Value(v));
        }
        "rename" => {
            let (t, k) = split(rng.pick(&values).as_str());
            let table = table_of(&mut doc, t);
            let item = table.remove(k).expect("present");
            table.insert(&format!("{k}x"), item);
        }
        "unknown_key" => {
            let t = rng.pick(&tables).clone();
            table_of(&mut doc, &t).insert("flowlab_fuzz_unknown", toml_edit::value(1));
        }
        "enum_swap" => {
            let strings: Vec<&String> = values
                .iter()
                .filter(|p| {
                    let (t, k) = split(p);
                    let mut d = doc.clone();
                    table_of(&mut d, t).get(k).and_then(|i| i.as_str()).is_some()
                })
                .collect();
            let (t, k) = split(rng.pick(&strings).as_str());
            let name = *rng.pick(NAMES);
            table_of(&mut doc, t).insert(k, toml_edit::value(name));
        }
        "dim" => {
            let d = rng.below(5) as i64;
            table_of(&mut doc, "case").insert("dim", toml_edit::value(d));
        }
        _ => {
            // One element of an array value replaced by a value of the list.
            let arrays: Vec<String> = values
                .iter()
                .filter(|p| {
                    let (t, k) = split(p);
                    let mut d = doc.clone();
                    table_of(&mut d, t)
                        .get(k)
                        .and_then(|i| i.as_array())
                        .is_some_and(|a| !a.is_empty())
                })
                .cloned()
                .collect();
            if arrays.is_empty() {
                return ("element", doc.to_string());
            }
            let (t, k) = split(rng.pick(&arrays).as_str());
            let v: toml_edit::Value = rng.pick(VALUES).parse().expect("valid TOML value");
            let table = table_of(&mut doc, t);
            let a = table.get_mut(k).and_then(|i| i.as_array_mut()).expect("array");
            let at = rng.below(a.len());
            a.replace(at, v);
        }
    }
    (category, doc.to_string())
}

/// What a mutant did.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Clone, Copy)]
enum End {
    Ran,
    TooLargeToStep,
    CleanError,
    Failure,
}

/// Parses, builds and steps (at most 3 steps) one case text; a panic is a failure.
fn exercise(text: &str, failures: &mut Vec<String>, label: &str) -> End {
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<bool, String> {
        let mut case = Case::parse(text, "mutant.toml").map_err(|e| e.to_string())?;
        // The harness's own bound on time: a capped pressure solve of a nonsense but valid case
        // must not take minutes (the iteration cap is a legitimate setting).
        let _ = case.set("solver.max_iterations", "200");
        let need = solver::memory::need(&case.spec).map_err(|e| e.message)?;
        if need.host > STEP_MEMORY {
            return Ok(false);
        }
        let mut s = solver::build(&case.spec).map_err(|e| e.message)?;
        for _ in 0..3 {
            if s.step().is_err() {
                break;
            }
        }
        Ok(true)
    }));
    match result {
        Ok(Ok(true)) => End::Ran,
        Ok(Ok(false)) => End::TooLargeToStep,
        Ok(Err(message)) => {
            if message.trim().is_empty() {
                failures.push(format!("{label}: an error without a message"));
                End::Failure
            } else {
                End::CleanError
            }
        }
        Err(_) => {
            failures.push(format!("{label}: panicked\n{text}"));
            End::Failure
        }
    }
}

#[test]
fn mutants_of_the_shipped_cases_end_in_a_run_or_a_clean_error() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("cases");
    let mut cases: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    cases.sort();
    assert!(cases.len() >= 20, "the shipped cases: {}", cases.len());
    std::panic::set_hook(Box::new(|_| {}));
    let mut rng = Dice(TestRng::from_seed(RngAlgorithm::ChaCha, &[18u8; 32]));
    let mut failures = Vec::new();
    let mut counts: BTreeMap<(&str, End), usize> = BTreeMap::new();
    let mut ends: BTreeMap<End, usize> = BTreeMap::new();
    let start = Instant::now();
    for m in 0..MUTANTS {
        let (name, text) = &cases[m % cases.len()];
        let (category, mutant) = mutate(text, &mut rng);
        let label = format!("mutant {m} ({category}) of {name}");
        let end = exercise(&mutant, &mut failures, &label);
        if category == "unknown_key" && end != End::CleanError && end != End::Failure {
            failures.push(format!("{label}: an unknown key was accepted\n{mutant}"));
        }
        *counts.entry((category, end)).or_default() += 1;
        *ends.entry(end).or_default() += 1;
    }
    let _ = std::panic::take_hook();
    println!(
        "{MUTANTS} mutants in {:.1} s: {} valid and stepped, {} valid but too large to step, {} clean errors, {} failures",
        start.elapsed().as_secs_f64(),
        ends.get(&End::Ran).unwrap_or(&0),
        ends.get(&End::TooLargeToStep).unwrap_or(&0),
        ends.get(&End::CleanError).unwrap_or(&0),
        failures.len()
    );
    for ((category, end), n) in &counts {
        println!("  {category:12} {end:?}: {n}");
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(
        ends.get(&End::Ran).is_some_and(|&n| n > 50),
        "some mutants are valid and run"
    );
}

#[test]
fn hand_written_bad_case_keys_are_clean_errors() {
    let read = |name: &str| {
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("cases").join(name)).unwrap()
    };
    let sod = read("sod.toml");
    let cavity = read("lid_driven_cavity_re100.toml");
    let power_law = read("poiseuille_power_law_periodic.toml");
    let bad: &[(&str, &str, &str)] = &[
        (&sod, "boundary.right.anything=1", "unknown field `anything`"),
        (&cavity, "initial.anything=1", "unknown field `anything`"),
        (&cavity, "grid.nx=9223372036854775807", "grid.nx"),
        (&cavity, "grid.nx=18446744073709551615", "grid.nx"),
        (&power_law, "fluid.n=1000", "fluid.n"),
        (&power_law, "fluid.k=1e300", "fluid.k"),
        (
            &cavity,
            "solver.max_iterations=100000000000",
            "solver.max_iterations",
        ),
        (&cavity, "stop.t_end=nan", "stop.t_end"),
        (&cavity, "physics.re=5e-324", "physics.re"),
    ];
    let mut failures = Vec::new();
    for (text, set, expect) in bad {
        let result = catch_unwind(AssertUnwindSafe(|| {
            let mut case = Case::parse(text, "hand.toml").map_err(|e| e.to_string())?;
            case.set_assignment(set).map_err(|e| e.to_string())
        }));
        match result {
            Ok(Err(e)) if e.contains(expect) => {}
            other => failures.push(format!(
                "--set {set}: {other:?}, expected an error naming {expect}"
            )),
        }
    }
    // Both axes large: refused with the estimate and the limit, before anything is allocated.
    let mut case = Case::parse(&cavity, "hand.toml").unwrap();
    case.set("grid.nx", "100000").unwrap();
    let e = case.set("grid.ny", "100000").unwrap_err().to_string();
    assert!(e.contains("GB of host memory"), "{e}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs the binary with a time limit; `None` when it had to be killed.
fn flowlab(args: &[&str], limit: Duration) -> Option<(i32, String)> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_flowlab"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("flowlab starts");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut err = String::new();
            use std::io::Read;
            child.stderr.take().map(|mut s| s.read_to_string(&mut err));
            // A signal (abort, segfault) has no code: -1.
            return Some((status.code().unwrap_or(-1), err));
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn hand_written_bad_command_lines_are_clean_errors() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz_cli");
    let out = out.to_str().unwrap();
    let run = |extra: &[&str]| -> Vec<String> {
        ["run", "cases/sod.toml", "--quiet", "--force", "--out", out]
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            run(&["--set", "boundary.right.anything=1"]),
            "unknown field `anything`",
        ),
        (run(&["--set", "grid.nx=100000000000"]), "grid.nx"),
        (run(&["--set", "grid.nx=9223372036854775807"]), "grid.nx"),
        (run(&["--t-end", "nan"]), "--t-end"),
        (run(&["--t-end", "0"]), "--t-end"),
        (run(&["--t-end", "-1"]), "--t-end"),
        (run(&["--t-end", "inf"]), "--t-end"),
        (run(&["--steps", "0"]), "--steps"),
        (run(&["--steps", "-1"]), "--steps"),
        (run(&["--until-steady", "nan"]), "--until-steady"),
        (run(&["--until-steady", "0"]), "--until-steady"),
        (run(&["--until-steady", "-1"]), "--until-steady"),
        (
            run(&["--steps", "1", "--line", "5,0,6,0,10"]),
            "outside the domain",
        ),
        (
            run(&["--steps", "1", "--line", "0,0,1,0,100000000"]),
            "point count",
        ),
        (
            ["bench", "--seconds", "-1"].map(String::from).to_vec(),
            "--seconds",
        ),
        (
            ["bench", "--seconds", "nan"].map(String::from).to_vec(),
            "--seconds",
        ),
        (["bench", "--batch", "0"].map(String::from).to_vec(), "--batch"),
        (
            ["bench", "--family", "compressible", "--sizes-1d", "0"]
                .map(String::from)
                .to_vec(),
            "--sizes-1d",
        ),
    ];
    let mut failures = Vec::new();
    for (args, expect) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        match flowlab(&args, Duration::from_secs(30)) {
            Some((1, err)) | Some((2, err)) if err.contains(expect) => {}
            other => failures.push(format!(
                "flowlab {}: {other:?}, expected a clean error naming {expect}",
                args.join(" ")
            )),
        }
    }
    println!("{} bad command lines checked", cases.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
