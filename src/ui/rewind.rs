//! Going back in a running simulation: a bounded ring of complete solver states
//! ([`crate::solver::Snapshot`]) taken at a fixed interval of simulated time (outer iterations
//! for the steady methods) while the run plays, so a teacher can return to the moment a vortex
//! sheds and replay it; and whole-state files (the case with a checkpoint,
//! [`crate::solver::snapshot`]), so a lesson prepared at `t = 20` reopens at `t = 20`.
//!
//! The ring never holds more than its budget of bytes: the oldest states are dropped first, and
//! going back to a state drops the ones after it (the replay makes them anew).

use crate::solver::Solver;
use crate::solver::snapshot::Ring;

/// Default memory budget of the ring.
pub const DEFAULT_BUDGET_MB: usize = 256;

/// `bytes`, or less: at most a quarter of the host's available memory plus the `held` bytes
/// the ring already takes (checked before the ring grows, so a budget set on a small machine
/// cannot take the memory the solver and the window need).
fn affordable(bytes: usize, held: usize) -> usize {
    let quarter = crate::solver::memory::host_available() / 4;
    bytes.min(
        usize::try_from(quarter)
            .unwrap_or(usize::MAX)
            .saturating_add(held),
    )
}

/// The app's rewind: the ring and when to fill it.
#[derive(Debug)]
pub struct Rewind {
    pub ring: Ring,
    /// Whether states are kept while the run plays.
    pub enabled: bool,
    /// Simulated time (steady methods: outer iterations) between kept states.
    pub interval: f64,
    /// Clock of the last state kept.
    last: Option<f64>,
    /// The kept state the panel's slider points at.
    pub selected: usize,
}

impl Rewind {
    /// A ring of `budget_mb` megabytes (at most a quarter of the host's available memory,
    /// [`affordable`]) keeping a state every `interval`.
    pub fn new(interval: f64, budget_mb: usize) -> Rewind {
        Rewind {
            ring: Ring::new(affordable(budget_mb << 20, 0)),
            enabled: true,
            interval,
            last: None,
            selected: 0,
        }
    }

    /// The interval for a case: 1/200 of its end time, else 0.1 time units; 10 outer
    /// iterations for a steady method.
    pub fn interval_for(steady: bool, t_end: Option<f64>) -> f64 {
        match (steady, t_end) {
            (true, _) => 10.0,
            (false, Some(t)) => t / 200.0,
            (false, None) => 0.1,
        }
    }

    /// The clock the interval counts on: time, or the step count of a steady method.
    fn clock(solver: &dyn Solver, steady: bool) -> f64 {
        if steady {
            solver.steps() as f64
        } else {
            solver.time()
        }
    }

    /// Keeps the solver's state if the interval has passed since the last one kept (always the
    /// first); returns whether it did.
    pub fn after_steps(&mut self, solver: &dyn Solver, steady: bool) -> bool {
        let now = Self::clock(solver, steady);
        if !self.enabled || self.last.is_some_and(|t| now < t + self.interval) {
            return false;
        }
        let kept = self.ring.push(solver);
        if kept {
            self.last = Some(now);
        }
        kept
    }

    /// Restores state `k` of the ring into `solver` and forgets the states after it.
    pub fn go_back(&mut self, k: usize, solver: &mut dyn Solver, steady: bool) -> Result<(), String> {
        let state = self.ring.get(k).ok_or_else(|| format!("no kept state {k}"))?;
        solver
            .restore(state)
            .map_err(|e| format!("{}: {}", e.key, e.message))?;
        self.ring.truncate(k);
        self.last = Some(Self::clock(solver, steady));
        Ok(())
    }

    /// Forgets every state (a new run, grid or method).
    pub fn clear(&mut self) {
        self.ring.clear();
        self.last = None;
    }

    /// Changes the memory budget (at most what [`affordable`] allows), dropping the oldest
    /// states that no longer fit.
    pub fn set_budget_mb(&mut self, mb: usize) {
        let held = self.ring.bytes();
        self.ring.set_budget(affordable(mb << 20, held));
    }

    /// One line for the panel: states held, their time span and the memory they take.
    pub fn describe(&self, steady: bool) -> String {
        let mb = |b: usize| b as f64 / (1 << 20) as f64;
        let unit = if steady { "iteration" } else { "t" };
        match self.ring.span() {
            Some((a, b)) => format!(
                "{} states, {unit} {a:.4} to {b:.4}; {:.1} of {:.0} MB",
                self.ring.len(),
                mb(self.ring.bytes()),
                mb(self.ring.budget())
            ),
            None => match self.ring.refused() {
                Some(b) => format!(
                    "no states kept: one state takes {:.0} MB, more than the budget of {:.0} MB",
                    mb(b),
                    mb(self.ring.budget())
                ),
                None => format!("no states kept; budget {:.0} MB", mb(self.ring.budget())),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Case;

    fn cavity() -> Box<dyn Solver> {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("cases/lid_driven_cavity_re100.toml"),
        )
        .unwrap();
        let mut case = Case::parse(&text, "cavity").unwrap();
        for s in ["grid.nx=16", "grid.ny=16", "solver.backend=cpu"] {
            case.set_assignment(s).unwrap();
        }
        crate::solver::build(&case.spec).unwrap()
    }

    #[test]
    fn keeps_states_at_the_interval_within_the_budget_and_goes_back_exactly() {
        let mut s = cavity();
        let one = s.snapshot().unwrap().bytes();
        // Room for four states.
        let mut r = Rewind::new(0.0, 1);
        r.ring.set_budget(4 * one + one / 2);
        let mut times = Vec::new();
        for _ in 0..10 {
            s.step().unwrap();
            assert!(r.after_steps(s.as_ref(), false));
            times.push(s.time());
        }
        assert_eq!(r.ring.len(), 4, "the budget holds four states");
        assert!(r.ring.bytes() <= r.ring.budget());
        assert_eq!(
            r.ring.span(),
            Some((times[6], times[9])),
            "the oldest were dropped"
        );
        let u_at_8 = {
            let mut t = cavity();
            t.advance(8).unwrap();
            let mut u = Vec::new();
            t.field("u", &mut u).unwrap();
            u
        };
        r.go_back(1, s.as_mut(), false).unwrap();
        assert_eq!(s.steps(), 8);
        let mut u = Vec::new();
        s.field("u", &mut u).unwrap();
        assert_eq!(u, u_at_8, "going back restores the state of step 8 exactly");
        assert_eq!(r.ring.len(), 2, "the states after it are forgotten");

        let mut spaced = Rewind::new(3.5 * times[0], 64);
        let mut t = cavity();
        let kept = (0..10)
            .filter(|_| {
                t.step().unwrap();
                spaced.after_steps(t.as_ref(), false)
            })
            .count();
        assert!((2..=4).contains(&kept), "a state every 3.5 first steps: {kept}");
        assert!(spaced.describe(false).contains("states, t "));
    }

    #[test]
    fn a_state_larger_than_the_budget_is_refused_and_not_taken_again_until_it_fits() {
        let mut s = cavity();
        let one = s.snapshot().unwrap().bytes();
        let mut r = Rewind::new(0.0, 1);
        r.ring.set_budget(one / 2);
        s.step().unwrap();
        assert!(!r.after_steps(s.as_ref(), false));
        assert_eq!(r.ring.refused(), Some(one), "the size of the state refused");
        let told = r.describe(false);
        assert!(told.contains("more than the budget"), "{told}");
        s.step().unwrap();
        assert!(!r.after_steps(s.as_ref(), false));
        r.ring.set_budget(2 * one);
        assert_eq!(r.ring.refused(), None, "the budget now holds a state");
        assert!(r.after_steps(s.as_ref(), false));
        r.ring.set_budget(one / 2);
        r.clear();
        assert_eq!(r.ring.refused(), None, "a new run tries again");
    }
}
