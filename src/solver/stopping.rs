//! Running a solver until a stop criterion: a step count, an end time (landed on exactly by
//! capping the last steps) or a steady state (the solver's `steady_change`, the relative change
//! of the solution per unit time, below a tolerance), or a request from outside (a signal).

use super::{CappedSolve, Solver, SolverError};
use crate::case::{Invalid, Stop, validate::positive};
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

/// What the criteria of a [`StopRule`] are called where they were given: keys of a case's
/// `[stop]` ([`StopKeys::CASE`]) or `flowlab run` options ([`StopKeys::CLI`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopKeys {
    pub steps: &'static str,
    pub t_end: &'static str,
    pub steady_tol: &'static str,
}

impl StopKeys {
    pub const CASE: StopKeys = StopKeys {
        steps: "stop.steps",
        t_end: "stop.t_end",
        steady_tol: "stop.steady_tol",
    };
    pub const CLI: StopKeys = StopKeys {
        steps: "--steps",
        t_end: "--t-end",
        steady_tol: "--until-steady",
    };
}

impl StopRule {
    pub fn is_empty(&self) -> bool {
        self.steps.is_none() && self.t_end.is_none() && self.steady_tol.is_none()
    }

    /// The criteria of a case's `[stop]`.
    pub fn of_case(stop: &Stop) -> StopRule {
        StopRule {
            steps: stop.steps,
            t_end: stop.t_end,
            steady_tol: stop.steady_tol,
            interrupt: None,
        }
    }

    /// `Err` naming the criterion (as `keys` calls it) that could never end a run after a
    /// step: a step count below 1, an end time or steady tolerance that is not a finite
    /// number > 0 (NaN would never be reached, infinity never either, and 0 or less is met
    /// before the first step).
    pub fn check(&self, keys: StopKeys) -> Result<(), Invalid> {
        if self.steps == Some(0) {
            return Err(Invalid::new(keys.steps, "must be at least 1"));
        }
        if let Some(t) = self.t_end {
            positive(keys.t_end, t)?;
        }
        if let Some(t) = self.steady_tol {
            positive(keys.steady_tol, t)?;
        }
        Ok(())
    }
}

/// The pressure solves of a run that stopped at their iteration cap short of their tolerance
/// ([`Solver::capped_pressure_solve`]): the first is logged once (`log::warn!`) with its
/// numbers, all are counted for the run's summary.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CappedSolves {
    /// Steps whose pressure solve stopped at the cap.
    pub steps: u64,
    /// The first such step and its solve.
    pub first: Option<(u64, CappedSolve)>,
    /// The largest residual left by a capped solve.
    pub worst_residual: f64,
}

impl CappedSolves {
    /// Records the solver's last step.
    pub fn observe(&mut self, solver: &dyn Solver) {
        let Some(c) = solver.capped_pressure_solve() else {
            return;
        };
        if self.first.is_none() {
            self.first = Some((solver.steps(), c));
            log::warn!(
                "step {}: the pressure solve stopped at its iteration cap ({} iterations) with \
                 residual {:.3e} > tolerance {:.3e}; the results are not converged (raise \
                 solver.max_iterations, use a stronger solver.pressure_solver, or check the \
                 grid's aspect ratio). Further capped solves are counted in summary.json",
                solver.steps(),
                c.iterations,
                c.residual,
                c.tolerance
            );
        }
        self.steps += 1;
        self.worst_residual = self.worst_residual.max(c.residual);
    }

    /// One line for the summary's warnings, if any solve was capped.
    pub fn warning(&self) -> Option<String> {
        let (step, c) = self.first?;
        Some(format!(
            "the pressure solve stopped at its iteration cap ({} iterations) without reaching its \
             tolerance {:.3e} in {} step(s), first at step {step}; largest residual left {:.3e}",
            c.iterations, c.tolerance, self.steps, self.worst_residual
        ))
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
