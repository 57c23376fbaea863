//! Where a GPU part's step goes: pairs of CUDA events around its NCCL calls (always: the
//! communication share of a step) and, when traced (`FLOWLAB_TRACE_SWEEPS=1`), around its
//! other phases, with the host's waits and the whole step's host time beside them.
//!
//! The host reads a pair's elapsed time only after it has waited for the stream, and not right
//! after that wait: the GPU would idle while the host queries every pair (about 5 us each, some
//! 70 pairs a step untraced). The pairs are read just before the host's next wait, when the
//! work enqueued since is queued on the GPU, so the queries overlap it.

use crate::backend::cuda::{CudaError, Event, Gpu, Stream};
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

/// What a pair of timing events brackets: an NCCL call, or (traced) another phase of a step.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Phase {
    communication: bool,
    name: &'static str,
}

/// A start and an end event around one phase's work on a stream.
struct Bracket {
    start: Event,
    end: Event,
    phase: Phase,
}

/// A part's phase timing ([`PhaseTiming::timed`], [`PhaseTiming::traced`]).
pub(super) struct PhaseTiming {
    /// Whether the phases other than the NCCL calls are timed too.
    trace: bool,
    state: Mutex<State>,
}

struct State {
    gpu: Arc<Gpu>,
    /// Pairs enqueued since the host last waited for the streams.
    in_flight: Vec<Bracket>,
    /// Pairs the host has waited for, not yet read.
    complete: VecDeque<Bracket>,
    /// Event pairs free for reuse.
    spare: Vec<(Event, Event)>,
    seconds: BTreeMap<Phase, f64>,
}

impl State {
    /// Adds the elapsed time of the complete pairs and frees their events.
    fn read_all(&mut self) -> Result<(), CudaError> {
        while let Some(b) = self.complete.pop_front() {
            let seconds = b.start.elapsed_ms(&b.end)? as f64 * 1e-3;
            *self.seconds.entry(b.phase).or_default() += seconds;
            self.spare.push((b.start, b.end));
        }
        Ok(())
    }
}

impl PhaseTiming {
    /// Timing on `gpu`'s streams; `trace` times the phases besides the NCCL calls.
    pub(super) fn new(gpu: &Arc<Gpu>, trace: bool) -> Self {
        Self {
            trace,
            state: Mutex::new(State {
                gpu: gpu.clone(),
                in_flight: Vec::new(),
                complete: VecDeque::new(),
                spare: Vec::new(),
                seconds: BTreeMap::new(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("phase timing lock")
    }

    /// Enqueues `f` (NCCL calls on `stream`, named `name`) between two timing events.
    pub(super) fn timed(
        &self,
        stream: Stream,
        name: &'static str,
        f: impl FnOnce() -> Result<(), CudaError>,
    ) -> Result<(), CudaError> {
        let phase = Phase {
            name,
            communication: true,
        };
        self.bracket(stream, phase, f)
    }

    /// Enqueues `f` (work or a wait on `stream`), between two timing events when traced.
    pub(super) fn traced(
        &self,
        stream: Stream,
        name: &'static str,
        f: impl FnOnce() -> Result<(), CudaError>,
    ) -> Result<(), CudaError> {
        if !self.trace {
            return f();
        }
        let phase = Phase {
            name,
            communication: false,
        };
        self.bracket(stream, phase, f)
    }

    /// Runs `f` (host work) and, when traced, adds its wall time to phase `name`.
    pub(super) fn host_traced<R>(&self, name: &'static str, f: impl FnOnce() -> R) -> R {
        if !self.trace {
            return f();
        }
        let start = std::time::Instant::now();
        let r = f();
        self.host_since(name, start);
        r
    }

    /// Adds the host's wall time since `start` to phase `name` when traced.
    pub(super) fn host_since(&self, name: &'static str, start: std::time::Instant) {
        if self.trace {
            let phase = Phase {
                name,
                communication: false,
            };
            *self.lock().seconds.entry(phase).or_default() += start.elapsed().as_secs_f64();
        }
    }

    /// Records `f`'s work on `stream` between a pair of timing events. The lock is not held
    /// while `f` enqueues, so pairs may nest (a traced step phase around its NCCL calls).
    fn bracket(
        &self,
        stream: Stream,
        phase: Phase,
        f: impl FnOnce() -> Result<(), CudaError>,
    ) -> Result<(), CudaError> {
        let at = {
            let mut t = self.lock();
            let (start, end) = match t.spare.pop() {
                Some(pair) => pair,
                None => (t.gpu.event()?, t.gpu.event()?),
            };
            start.record_on(stream)?;
            t.in_flight.push(Bracket { start, end, phase });
            t.in_flight.len() - 1
        };
        let done = f();
        // The end is recorded even when `f` failed, so that reading finds both events.
        self.lock().in_flight[at].end.record_on(stream)?;
        done
    }

    /// Reads the pairs the host waited for before its last wait (call before the next wait).
    pub(super) fn read_complete(&self) -> Result<(), CudaError> {
        self.lock().read_all()
    }

    /// Marks the pairs enqueued so far complete (call after the host waited for the streams,
    /// outside any pair); they are read later.
    pub(super) fn completed(&self) {
        let mut t = self.lock();
        let done = std::mem::take(&mut t.in_flight);
        t.complete.extend(done);
    }

    /// Starts the count afresh (after the solver is built: NCCL sets up its connections in the
    /// first calls).
    pub(super) fn restart(&self) -> Result<(), CudaError> {
        let mut t = self.lock();
        t.read_all()?;
        t.seconds.clear();
        Ok(())
    }

    /// Seconds the GPU spent in NCCL calls (waiting for the other parts included), over the
    /// pairs the host has waited for.
    pub(super) fn communication_seconds(&self) -> Result<f64, CudaError> {
        let mut t = self.lock();
        t.read_all()?;
        Ok(t.seconds
            .iter()
            .filter(|(p, _)| p.communication)
            .map(|(_, s)| s)
            .sum())
    }

    /// Seconds of each timed phase: the NCCL calls by kind and, traced, the sweeps, the step's
    /// other phases, the compute stream's waits and the host's.
    pub(super) fn phase_seconds(&self) -> Result<BTreeMap<&'static str, f64>, CudaError> {
        let mut t = self.lock();
        t.read_all()?;
        Ok(t.seconds.iter().map(|(p, s)| (p.name, *s)).collect())
    }
}
