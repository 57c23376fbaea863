//! Checks that apply to every case (grid, boundaries, stop criteria), then the solver family's
//! own checks through [`crate::solver::check_case`].

use super::schema::*;
use crate::solver::stopping::{StopKeys, StopRule};

/// A rejected key and what is allowed instead.
#[derive(Clone, Debug, PartialEq)]
pub struct Invalid {
    pub key: String,
    pub message: String,
}

impl Invalid {
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            message: message.into(),
        }
    }
}

/// The largest iteration cap of a linear solve (`solver.max_iterations`,
/// `solver.linear_solver.momentum_iterations`).
pub const MAX_ITERATIONS: usize = 1_000_000;

/// `Err` unless `x` is finite and `> 0`.
pub fn positive(key: &str, x: f64) -> Result<(), Invalid> {
    if x.is_finite() && x > 0.0 {
        Ok(())
    } else {
        Err(Invalid::new(key, format!("must be a finite number > 0, got {x}")))
    }
}

pub(super) fn validate(spec: &CaseSpec) -> Result<(), Invalid> {
    let dim = spec.case.dim as usize;
    if !(1..=3).contains(&dim) {
        return Err(Invalid::new("case.dim", format!("must be 1, 2 or 3, got {dim}")));
    }
    check_grid(&spec.grid, dim)?;
    check_boundaries(&spec.boundary, dim)?;
    let s = &spec.solver;
    if let Some(c) = s.cfl {
        positive("solver.cfl", c)?;
    }
    if let Some(t) = s.tolerance {
        if !(t > 0.0 && t < 1.0) {
            return Err(Invalid::new(
                "solver.tolerance",
                format!("must lie in (0, 1) (a relative residual), got {t}"),
            ));
        }
    }
    if let Some(n) = s.max_iterations
        && !(1..=MAX_ITERATIONS).contains(&n)
    {
        return Err(Invalid::new(
            "solver.max_iterations",
            format!("must lie in [1, {MAX_ITERATIONS}] (a solve not converged by then will not be), got {n}"),
        ));
    }
    if let Some(n) = s.linear_solver.as_ref().and_then(|l| l.momentum_iterations)
        && n > MAX_ITERATIONS
    {
        return Err(Invalid::new(
            "solver.linear_solver.momentum_iterations",
            format!("must be at most {MAX_ITERATIONS} (a solve not converged by then will not be), got {n}"),
        ));
    }
    StopRule::of_case(&spec.stop).check(StopKeys::CASE)?;
    crate::solver::check_case(spec)
}

fn check_grid(g: &GridSpec, dim: usize) -> Result<(), Invalid> {
    let counts = [("grid.nx", g.nx), ("grid.ny", g.ny), ("grid.nz", g.nz)];
    for (axis, (key, n)) in counts.iter().enumerate() {
        if axis < dim && *n < 4 {
            return Err(Invalid::new(*key, format!("must be at least 4 cells, got {n}")));
        }
        if axis >= dim && *n != 1 {
            return Err(Invalid::new(
                *key,
                format!("a {dim}D case has one cell along this axis; remove the key (got {n})"),
            ));
        }
    }
    if g.extents.len() != dim {
        return Err(Invalid::new(
            "grid.extents",
            format!("needs {dim} lengths (one per dimension), got {}", g.extents.len()),
        ));
    }
    for &e in &g.extents {
        positive("grid.extents", e)?;
    }
    if !(g.origin.is_empty() || g.origin.len() == dim) {
        return Err(Invalid::new(
            "grid.origin",
            format!("needs {dim} coordinates, got {}", g.origin.len()),
        ));
    }
    if g.origin.iter().any(|o| !o.is_finite()) {
        return Err(Invalid::new("grid.origin", "must be finite"));
    }
    Ok(())
}

fn check_boundaries(b: &Boundaries, dim: usize) -> Result<(), Invalid> {
    for side in Side::ALL {
        let key = format!("boundary.{}", side.name());
        let used = side.axis() < dim;
        match (b.get(side), used) {
            (None, true) => {
                return Err(Invalid::new(
                    key,
                    "missing; give type = \"wall\", \"inflow\", \"outflow\", \"opening\", \"periodic\" or \"symmetry\"",
                ));
            }
            (Some(_), false) => {
                return Err(Invalid::new(
                    key,
                    format!("a {dim}D case has no {} side", side.name()),
                ));
            }
            (Some(Boundary::Periodic {}), true)
                if !matches!(b.get(side.opposite()), Some(Boundary::Periodic {})) =>
            {
                return Err(Invalid::new(
                    key,
                    format!(
                        "periodic needs the opposite side (boundary.{}) to be periodic too",
                        side.opposite().name()
                    ),
                ));
            }
            (Some(Boundary::Wall { velocity }), true) => {
                velocity
                    .check(side, dim)
                    .map_err(|e| Invalid::new(format!("{key}.velocity"), e))?;
            }
            (Some(Boundary::Inflow { velocity, .. }), true) => {
                if velocity.len() != dim || velocity.iter().any(|v| !v.is_finite()) {
                    return Err(Invalid::new(
                        format!("{key}.velocity"),
                        format!("needs {dim} finite components, got {velocity:?}"),
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}
