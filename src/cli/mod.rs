//! The `flowlab` command line: `run` (headless runs), `bench` (throughput), `render`
//! (offscreen images and videos) and `soak` (the app's frame loop for hours, memory sampled).

pub mod bench;
pub mod render;
pub mod run;
pub mod soak;

use crate::case::Case;
use std::path::Path;

/// Loads a case file and applies `--set key=value` overrides, with the case's own error messages.
pub fn load_case(path: &Path, sets: &[String]) -> anyhow::Result<Case> {
    let mut case = Case::load(path)?;
    for s in sets {
        case.set_assignment(s)?;
    }
    Ok(case)
}
