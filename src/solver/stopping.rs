//! Running a solver until a stop criterion: a step count, an end time (landed on exactly by
//! capping the last steps) or a steady state (the solver's `steady_change`, the relative change
//! of the solution per unit time, below a tolerance), or a request from outside (a signal).

use super::{Solver, SolverError};
use std::sync::atomic::{AtomicBool, Ordering};

/// When to stop; the first criterion met ends the run. At least one of `steps`, `t_end` and
/// `steady_tol` must be set.
#[derive(Clone, Copy, Debug, Default)]
pub struct StopRule {
    pub steps: Option<u64>,
    pub t_end: Option<f64>,
    pub steady_tol: Option<f64>,
    /// Raised from outside (e.g. by a SIGINT handler): the run ends after the step under way,
    /// as [`StopReason::Interrupted`].
    pub interrupt: Option<&'static AtomicBool>,
}

impl StopRule {
    pub fn is_empty(&self) -> bool {
        self.steps.is_none() && self.t_end.is_none() && self.steady_tol.is_none()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    Steps,
    EndTime,
    Steady,
    Interrupted,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    pub reason: StopReason,
    /// The last `steady_change` (NaN if the solver reports none).
    pub steady_change: f64,
}

/// Steps `solver` until `rule` is met, calling `after_step` after every step.
pub fn run_until(
    solver: &mut dyn Solver,
    rule: &StopRule,
    mut after_step: impl FnMut(&dyn Solver),
) -> Result<Outcome, SolverError> {
    assert!(!rule.is_empty(), "a stop rule needs at least one criterion");
    let start = solver.steps();
    loop {
        let steady_change = solver
            .residuals()
            .iter()
            .find(|(n, _)| *n == "steady_change")
            .map_or(f64::NAN, |(_, v)| *v);
        let done = |reason| Outcome {
            reason,
            steady_change,
        };
        if rule.interrupt.is_some_and(|flag| flag.load(Ordering::Relaxed)) {
            solver.set_dt_cap(f64::INFINITY);
            return Ok(done(StopReason::Interrupted));
        }
        if rule.steps.is_some_and(|n| solver.steps() - start >= n) {
            return Ok(done(StopReason::Steps));
        }
        if let Some(t_end) = rule.t_end {
            let left = t_end - solver.time();
            if left <= 1e-12 * t_end.abs().max(1.0) {
                solver.set_dt_cap(f64::INFINITY);
                return Ok(done(StopReason::EndTime));
            }
            solver.set_dt_cap(left);
        }
        if let Some(tol) = rule.steady_tol {
            if solver.steps() > start && steady_change < tol {
                return Ok(done(StopReason::Steady));
            }
        }
        solver.step()?;
        after_step(solver);
    }
}
