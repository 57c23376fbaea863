//! Helpers shared by the compressible integration tests.
#![allow(dead_code)]

use flowlab::case::Case;
use flowlab::solver::{Solver, SolverError, build};

/// Builds the solver of a case given as TOML text.
pub fn solver(text: &str) -> Box<dyn Solver> {
    let case = Case::parse(text, "test").unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    build(&case.spec).unwrap_or_else(|e| panic!("{e:?}"))
}

/// Steps until `stop.t_end` (the solver lands on it exactly).
pub fn run_to(s: &mut dyn Solver, t_end: f64) -> Result<(), SolverError> {
    while s.time() < t_end {
        s.step()?;
        assert!(s.steps() < 1_000_000);
    }
    Ok(())
}

pub fn field(s: &dyn Solver, name: &str) -> Vec<f64> {
    let mut v = Vec::new();
    s.field(name, &mut v).expect("known field");
    v
}

pub fn exact(s: &dyn Solver, name: &str) -> Vec<f64> {
    let mut v = Vec::new();
    s.exact_field(name, &mut v).expect("exact solution");
    v
}

/// A 1D Riemann problem on `[origin, origin + length]`.
pub fn riemann_1d(
    nx: usize,
    length: f64,
    origin: f64,
    left: [f64; 3],
    right: [f64; 3],
    x0: f64,
    t_end: f64,
    solver: &str,
) -> String {
    format!(
        "[case]\nname = \"r\"\nkind = \"compressible\"\ndim = 1\n[grid]\nnx = {nx}\nextents = [{length}]\n\
         origin = [{origin}]\n[boundary.left]\ntype = \"outflow\"\n[boundary.right]\ntype = \"outflow\"\n\
         [initial]\ntype = \"riemann\"\nleft = {left:?}\nright = {right:?}\nx0 = {x0}\n[solver]\n{solver}\n\
         [stop]\nt_end = {t_end}\n"
    )
}

pub fn sod(nx: usize, solver: &str) -> String {
    riemann_1d(
        nx,
        1.0,
        0.0,
        [1.0, 0.0, 1.0],
        [0.125, 0.0, 0.1],
        0.5,
        0.2,
        solver,
    )
}

/// Least-squares slope of `-log(err)` against `log(n)`.
pub fn order(ns: &[usize], errs: &[f64]) -> f64 {
    let xs: Vec<f64> = ns.iter().map(|&n| (n as f64).ln()).collect();
    let ys: Vec<f64> = errs.iter().map(|e| -e.ln()).collect();
    let (mx, my) = (
        xs.iter().sum::<f64>() / xs.len() as f64,
        ys.iter().sum::<f64>() / ys.len() as f64,
    );
    let num: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let den: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    num / den
}

pub fn l1(s: &dyn Solver, var: &str) -> f64 {
    s.summary()["l1_error"][var].as_f64().expect("l1_error")
}
