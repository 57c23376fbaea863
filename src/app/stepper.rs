//! The solver's worker thread. The window thread never steps the solver: after each frame's UI
//! pass it hands the [`AppState`] to this thread with [`Stepper::go`], which runs one frame's
//! worth of steps ([`AppState::advance_frame`]; a CPU solver's on a worker of rayon's pool,
//! [`on_global_pool`]) while the window thread presents the frame and
//! keeps handling input, announces the fields on screen to the solver
//! ([`AppState::prefetch_shown`]: a GPU solver starts their copy to the host without waiting for
//! it), then wakes the event loop. The next UI pass takes the state with
//! [`Stepper::try_state`], which never waits for a step to finish, and draws the newest state
//! whose copy has landed ([`crate::solver::Solver::display_fields`]): the copy of this batch's
//! fields overlaps the next batch instead of holding up the window thread.

use crate::backend::cpu::on_global_pool;
use crate::ui::state::AppState;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, TryLockError};
use std::thread::JoinHandle;

#[derive(Default)]
struct Signal {
    go: bool,
    quit: bool,
}

pub struct Stepper {
    state: Arc<Mutex<AppState>>,
    signal: Arc<(Mutex<Signal>, Condvar)>,
    worker: Option<JoinHandle<()>>,
}

impl Stepper {
    /// Starts the worker; `wake` is called (on the worker) after every batch of steps.
    pub fn new(state: AppState, wake: impl Fn() + Send + 'static) -> Stepper {
        let state = Arc::new(Mutex::new(state));
        let signal = Arc::new((Mutex::new(Signal::default()), Condvar::new()));
        let worker = {
            let (state, signal) = (state.clone(), signal.clone());
            std::thread::Builder::new()
                .name("flowlab-solver".into())
                .spawn(move || {
                    loop {
                        {
                            let (lock, cv) = &*signal;
                            let mut s = lock.lock().unwrap_or_else(PoisonError::into_inner);
                            while !s.go && !s.quit {
                                s = cv.wait(s).unwrap_or_else(PoisonError::into_inner);
                            }
                            if s.quit {
                                return;
                            }
                            s.go = false;
                        }
                        {
                            let mut s = state.lock().unwrap_or_else(PoisonError::into_inner);
                            let s = &mut *s;
                            let cpu = s.solver.info().backend == "cpu";
                            let mut frame = || {
                                s.advance_frame();
                                s.prefetch_shown();
                            };
                            if cpu {
                                on_global_pool(frame);
                            } else {
                                frame();
                            }
                        }
                        wake();
                    }
                })
                .expect("spawning a thread")
        };
        Stepper {
            state,
            signal,
            worker: Some(worker),
        }
    }

    /// The state, unless the worker is stepping right now.
    pub fn try_state(&self) -> Option<MutexGuard<'_, AppState>> {
        match self.state.try_lock() {
            Ok(g) => Some(g),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// The state, waiting for the worker's current batch to end (closing, final screenshots).
    pub fn state(&self) -> MutexGuard<'_, AppState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Lets the worker run one frame's worth of steps.
    pub fn go(&self) {
        let (lock, cv) = &*self.signal;
        lock.lock().unwrap_or_else(PoisonError::into_inner).go = true;
        cv.notify_one();
    }
}

impl Drop for Stepper {
    /// Stops the worker after its current batch.
    fn drop(&mut self) {
        let (lock, cv) = &*self.signal;
        lock.lock().unwrap_or_else(PoisonError::into_inner).quit = true;
        cv.notify_one();
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Case;
    use std::sync::mpsc;
    use std::time::Duration;

    fn cavity() -> AppState {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("cases/lid_driven_cavity_re100.toml");
        let mut case = Case::load(&path).expect("case");
        case.set_assignment("grid.nx=16").unwrap();
        case.set_assignment("grid.ny=16").unwrap();
        AppState::new(case).expect("state")
    }

    #[test]
    fn steps_run_on_the_worker_and_leave_the_state_free_between_batches() {
        let (tx, rx) = mpsc::channel();
        let stepper = Stepper::new(cavity(), move || {
            let _ = tx.send(std::thread::current().name().map(str::to_string));
        });
        assert_eq!(stepper.try_state().expect("idle worker").solver.steps(), 0);
        let mut last = 0;
        for _ in 0..3 {
            stepper.go();
            let who = rx
                .recv_timeout(Duration::from_secs(30))
                .expect("the worker wakes us");
            assert_eq!(who.as_deref(), Some("flowlab-solver"));
            let steps = stepper.try_state().expect("free after the batch").solver.steps();
            assert!(steps > last, "each go advances the run ({last} -> {steps})");
            last = steps;
        }
        stepper.state().playing = false;
        stepper.go();
        rx.recv_timeout(Duration::from_secs(30))
            .expect("wakes even when paused");
        assert_eq!(stepper.state().solver.steps(), last, "paused: no steps");
    }

    /// Auto steps per frame step as long as the window thread took to draw the last frame,
    /// at least the budget and at most [`crate::ui::state::MAX_STEP_BUDGET`].
    #[test]
    fn an_auto_frame_steps_while_the_window_draws() {
        use crate::ui::state::{MAX_STEP_BUDGET, StepsPerFrame};
        let mut state = cavity();
        let budget = Duration::from_millis(20);
        state.steps_per_frame = StepsPerFrame::Auto { budget };
        for (draw, at_least, at_most) in [
            (Duration::ZERO, budget, Duration::from_millis(200)),
            (
                Duration::from_millis(120),
                Duration::from_millis(120),
                Duration::from_millis(300),
            ),
            (
                Duration::from_secs(5),
                MAX_STEP_BUDGET,
                Duration::from_millis(500),
            ),
        ] {
            state.draw_time = draw;
            let start = std::time::Instant::now();
            state.advance_frame();
            let took = start.elapsed();
            assert!(
                took >= at_least && took < at_most,
                "drawing {draw:?}: stepped {took:?}"
            );
        }
    }
}
