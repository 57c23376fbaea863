//! Shared test helpers: an inline lid-driven cavity case, GPU availability policy.

#![allow(dead_code)]

use flowlab::case::Case;
use flowlab::render::headless::Headless;

/// The lid-driven cavity at Reynolds number `re` on an `n x n` grid.
pub fn cavity_toml(re: f64, n: usize) -> String {
    format!(
        r#"# Lid-driven cavity (test copy)
[case]
name = "lid_driven_cavity"
kind = "incompressible"
dim = 2

[grid]
nx = {n}
ny = {n}
extents = [1.0, 1.0]

[physics]
re = {re:?}

[boundary.left]
type = "wall"
[boundary.right]
type = "wall"
[boundary.bottom]
type = "wall"
[boundary.top]
type = "wall"
velocity = 1.0

[solver]
cfl = 0.5
convection = "tvd"
limiter = "van_leer"
pressure_solver = "pcg"
"#
    )
}

pub fn cavity(re: f64, n: usize) -> Case {
    Case::parse(&cavity_toml(re, n), "cavity.toml").expect("the test cavity case is valid")
}

/// Whether this run must have a GPU adapter (and a display, ffmpeg): under CI.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// A headless renderer; without an adapter this fails under CI and skips (returns None) otherwise.
pub fn headless_or_skip(test: &str) -> Option<Headless> {
    match Headless::new() {
        Ok(h) => Some(h),
        Err(e) if in_ci() => panic!("{test}: CI is set but no GPU adapter is available: {e}"),
        Err(e) => {
            eprintln!("{test}: skipped, no GPU adapter: {e}");
            None
        }
    }
}
