//! Helpers shared by the integration tests.
#![allow(dead_code)]

use flowlab::case::Case;
use std::path::PathBuf;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Loads `cases/<name>.toml` with `--set`-style overrides.
pub fn case(name: &str, sets: &[&str]) -> Case {
    let mut case = Case::load(&root().join("cases").join(format!("{name}.toml"))).expect("case loads");
    for s in sets {
        case.set_assignment(s).expect("override applies");
    }
    case
}

/// Rows of a reference CSV in `tests/data/` (lines starting with `#` are its source header).
pub fn reference_csv(file: &str) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(root().join("tests/data").join(file)).expect("reference data");
    let mut lines = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty());
    let header = lines
        .next()
        .expect("header")
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(|v| v.trim().parse().expect("number")).collect())
        .collect();
    (header, rows)
}
