//! Running a solver until a stop criterion: a step count, an end time (landed on exactly by
//! capping the last steps) or a steady state (the solver's `steady_change`, the relative change
//! of the solution per unit time, below a tolerance), or a request from outside (a signal); the
//! steps in batches a device runs without returning to the host, each step still recorded.

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
    /// Takes in one step's record.
    pub fn observe(&mut self, step: &StepRecord) {
        let Some(c) = step.capped else {
            return;
        };
        if self.first.is_none() {
            self.first = Some((step.steps, c));
            log::warn!(
                "step {}: the pressure solve stopped at its iteration cap ({} iterations) with \
                 residual {:.3e} > tolerance {:.3e}; the results are not converged (raise \
                 solver.max_iterations, use a stronger solver.pressure_solver, or check the \
                 grid's aspect ratio). Further capped solves are counted in summary.json",
                step.steps,
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

/// The relative tolerance within which a run has reached its end time (see [`time_left`]).
pub const END_TOLERANCE: f64 = 1e-12;

/// The time from `time` to the end time `t_end`, or `None` where the end is reached: less than
/// [`END_TOLERANCE`] times `max(|t_end|, 1)` left. The CUDA compressible step
/// (`choose_next_step` of `kernels/euler.cuh`) makes the same test in the same operations.
pub fn time_left(t_end: f64, time: f64) -> Option<f64> {
    let left = t_end - time;
    if left <= END_TOLERANCE * t_end.abs().max(1.0) {
        None
    } else {
        Some(left)
    }
}

/// One step of a run as its history keeps it (`residuals.csv`, progress, the summary's count of
/// capped pressure solves).
#[derive(Clone, Debug, PartialEq)]
pub struct StepRecord {
    /// The steps taken, the time after the step and its size.
    pub steps: u64,
    pub time: f64,
    pub dt: f64,
    /// [`Solver::residuals`] after the step.
    pub residuals: Vec<(&'static str, f64)>,
    /// [`Solver::capped_pressure_solve`] of the step.
    pub capped: Option<CappedSolve>,
}

impl StepRecord {
    /// The record of `solver`'s last step.
    pub fn of<S: Solver + ?Sized>(solver: &S) -> StepRecord {
        StepRecord {
            steps: solver.steps(),
            time: solver.time(),
            dt: solver.dt(),
            residuals: solver.residuals().to_vec(),
            capped: solver.capped_pressure_solve(),
        }
    }

    /// The residual called `name`, if the solver reports it.
    pub fn residual(&self, name: &str) -> Option<f64> {
        self.residuals.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }
}

/// [`Solver::advance_recorded`] one step at a time: before each step, the end test of
/// [`time_left`] and the cap on dt that lands on `t_end`; after it, its record.
pub fn advance_step_by_step<S: Solver + ?Sized>(
    solver: &mut S,
    n: u64,
    t_end: Option<f64>,
    records: &mut Vec<StepRecord>,
) -> Result<(), SolverError> {
    for _ in 0..n {
        if let Some(t_end) = t_end {
            match time_left(t_end, solver.time()) {
                Some(left) => solver.set_dt_cap(left),
                None => break,
            }
        }
        solver.step()?;
        records.push(StepRecord::of(solver));
    }
    Ok(())
}

/// Steps `solver` until `rule` is met, calling `after_step` with every step's record.
///
/// The steps run in batches of up to [`Solver::batch_limit`] ([`Solver::advance_recorded`]; one
/// at a time with a steady tolerance, which is tested after each step): `after_step` sees the
/// solver as of the batch's end, which is the recorded step where the limit is 1. A batch ends
/// at every multiple of `sync_every` steps, where a caller may then read the solver's state of
/// exactly that step (a checkpoint). The interrupt is read between batches.
pub fn run_until(
    solver: &mut dyn Solver,
    rule: &StopRule,
    sync_every: Option<u64>,
    mut after_step: impl FnMut(&dyn Solver, &StepRecord),
) -> Result<Outcome, SolverError> {
    assert!(!rule.is_empty(), "a stop rule needs at least one criterion");
    assert!(sync_every != Some(0), "batches end every sync_every >= 1 steps");
    let start = solver.steps();
    let mut records = Vec::new();
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
        let taken = solver.steps() - start;
        if rule.steps.is_some_and(|n| taken >= n) {
            return Ok(done(StopReason::Steps));
        }
        if rule
            .t_end
            .is_some_and(|t_end| time_left(t_end, solver.time()).is_none())
        {
            solver.set_dt_cap(f64::INFINITY);
            return Ok(done(StopReason::EndTime));
        }
        if rule
            .steady_tol
            .is_some_and(|tol| taken > 0 && steady_change < tol)
        {
            return Ok(done(StopReason::Steady));
        }
        let mut n = match rule.steady_tol {
            Some(_) => 1,
            None => solver.batch_limit().max(1),
        };
        if let Some(steps) = rule.steps {
            n = n.min(steps - taken);
        }
        if let Some(every) = sync_every {
            n = n.min(every - solver.steps() % every);
        }
        records.clear();
        let result = solver.advance_recorded(n, rule.t_end, &mut records);
        for r in &records {
            after_step(solver, r);
        }
        result?;
        if records.is_empty() {
            // Only the end time stops a batch before its first step (the test above, which a
            // device's own test repeats in the same operations).
            solver.set_dt_cap(f64::INFINITY);
            return Ok(done(StopReason::EndTime));
        }
    }
}
