//! `run_until` in batches ([`Solver::batch_limit`], [`Solver::advance_recorded`]), as a device
//! backend runs them: a solver that takes up to 7 steps a batch records the same steps, to the
//! bit, as the same solver one step at a time (the step count, the time landing on the end time,
//! dt and the residuals), stops for the same reason, and ends a batch at every multiple of
//! `sync_every`, where the solver is at the recorded step (a checkpoint reads it there). The
//! device's own batches are held to the steps one at a time in `tests/cuda_parity_compressible.rs`.

mod common;

use flowlab::case::{CaseSpec, Invalid};
use flowlab::solver::{
    self, Outcome, Snapshot, Solver, SolverError, SolverInfo, StepRecord, StopReason, StopRule, run_until,
};

/// A solver taking up to `limit` steps a batch, by the default [`Solver::advance_recorded`].
struct Batched {
    inner: Box<dyn Solver>,
    limit: u64,
}

impl Solver for Batched {
    fn info(&self) -> SolverInfo {
        self.inner.info()
    }
    fn time(&self) -> f64 {
        self.inner.time()
    }
    fn steps(&self) -> u64 {
        self.inner.steps()
    }
    fn step(&mut self) -> Result<(), SolverError> {
        self.inner.step()
    }
    fn batch_limit(&self) -> u64 {
        self.limit
    }
    fn dt(&self) -> f64 {
        self.inner.dt()
    }
    fn set_dt_cap(&mut self, cap: f64) {
        self.inner.set_dt_cap(cap)
    }
    fn residuals(&self) -> &[(&'static str, f64)] {
        self.inner.residuals()
    }
    fn field_names(&self) -> &'static [&'static str] {
        self.inner.field_names()
    }
    fn field(&self, name: &str, out: &mut Vec<f64>) -> Option<()> {
        self.inner.field(name, out)
    }
    fn sample(&self, name: &str, point: [f64; 3]) -> Option<f64> {
        self.inner.sample(name, point)
    }
    fn update(&mut self, spec: &CaseSpec) -> Result<(), Invalid> {
        self.inner.update(spec)
    }
    fn summary(&self) -> serde_json::Map<String, serde_json::Value> {
        self.inner.summary()
    }
    fn load_state(&mut self, from: &dyn Solver) -> Result<(), Invalid> {
        self.inner.load_state(from)
    }
    fn snapshot(&self) -> Result<Snapshot, SolverError> {
        self.inner.snapshot()
    }
    fn restore(&mut self, state: &Snapshot) -> Result<(), Invalid> {
        self.inner.restore(state)
    }
}

/// A run of `inner` under `rule` with batches of up to `limit` steps ending at multiples of
/// `sync`: its outcome, its records, and how many records the callback saw with the solver
/// past them (inside a batch). At every multiple of `sync` the solver must be at the record.
fn run(
    inner: Box<dyn Solver>,
    rule: &StopRule,
    limit: u64,
    sync: Option<u64>,
) -> (Result<Outcome, SolverError>, Vec<StepRecord>, usize) {
    let mut s = Batched { inner, limit };
    let (mut records, mut inside) = (Vec::new(), 0);
    let outcome = run_until(&mut s, rule, sync, |s, step| {
        if sync.is_some_and(|n| step.steps % n == 0) {
            assert_eq!(s.steps(), step.steps, "a batch ends at step {}", step.steps);
        }
        inside += usize::from(s.steps() != step.steps);
        records.push(step.clone());
    });
    (outcome, records, inside)
}

#[test]
fn batches_record_the_steps_taken_one_at_a_time() {
    let rules = [
        // Sod to t = 0.2: the last step lands on the end time.
        (
            "sod",
            StopRule {
                t_end: Some(0.2),
                ..Default::default()
            },
            Some(5),
        ),
        // A step count that is no multiple of the batch, before the end time.
        (
            "cese_sod",
            StopRule {
                steps: Some(23),
                t_end: Some(0.2),
                ..Default::default()
            },
            None,
        ),
        (
            "sod",
            StopRule {
                steps: Some(40),
                ..Default::default()
            },
            Some(10),
        ),
    ];
    for (case, rule, sync) in rules {
        let build = || solver::build(&common::case(case, &[]).spec).expect("solver");
        let (one, one_records, one_inside) = run(build(), &rule, 1, sync);
        let (batched, records, inside) = run(build(), &rule, 7, sync);
        let (one, batched) = (one.expect("runs"), batched.expect("runs"));
        let last = records.last().expect("steps were taken");
        eprintln!(
            "{case}: {} steps to t = {}, {inside} records seen inside a batch, stopped by {:?}",
            records.len(),
            last.time,
            batched.reason
        );
        assert_eq!(one_inside, 0, "one step at a time, the solver is at each record");
        assert!(inside > 0, "{case}: the steps ran in batches");
        assert_eq!(batched.reason, one.reason, "{case}");
        assert!(records == one_records, "{case}: the records differ");
        assert!(
            records.iter().enumerate().all(|(k, r)| r.steps == k as u64 + 1),
            "{case}: every step is recorded once, in order"
        );
        match (rule.steps, rule.t_end) {
            (Some(n), _) if batched.reason == StopReason::Steps => assert_eq!(last.steps, n),
            (_, Some(t)) => {
                assert_eq!(batched.reason, StopReason::EndTime);
                assert!(
                    (last.time - t).abs() <= 1e-12 * t,
                    "{case}: ends at {} not {t}",
                    last.time
                );
            }
            _ => panic!("{case}: stopped by {:?}", batched.reason),
        }
    }
}

/// Roe without the entropy fix on two rarefactions fails inside a batch (at step 38: the sixth
/// batch of 7): the same error as one step at a time, and the same records, which end before the
/// failing step.
#[test]
fn a_batch_that_fails_records_the_steps_before_the_failure() {
    let rule = StopRule {
        t_end: Some(0.15),
        ..Default::default()
    };
    let build = || common::solver(&common::roe_rarefactions("cpu", 0.8, 0.1));
    let (one, one_records, _) = run(build(), &rule, 1, None);
    let (batched, records, inside) = run(build(), &rule, 7, None);
    let (one, batched) = (one.expect_err("Roe fails"), batched.expect_err("Roe fails"));
    eprintln!("{} steps recorded before: {batched}", records.len());
    assert!(inside > 0, "the steps ran in batches");
    assert_eq!(batched, one);
    assert!(
        !records.is_empty() && records == one_records,
        "the records differ"
    );
    let SolverError::Diverged { step, .. } = batched else {
        panic!("not a divergence: {batched}");
    };
    assert_eq!(
        records.last().map(|r| r.steps + 1),
        Some(step),
        "recorded up to the failing step"
    );
}
