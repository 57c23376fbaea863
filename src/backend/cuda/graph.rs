//! CUDA graphs (captured launch sequences) and events (timing, ordering between streams).

use super::{CudaError, Gpu, Stream};
use cudarc::driver::result as drv;
use cudarc::driver::sys;
use std::sync::Arc;

/// A CUDA graph: a fixed sequence of launches on a solver's stream, captured once and replayed
/// with one launch (the per-kernel launch cost, about 3 us, becomes about 1 us per node on the
/// device). Kernel arguments are frozen at capture, so only work whose buffers and scalars do
/// not change between replays is captured (e.g. a multigrid V-cycle).
pub struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    gpu: Arc<Gpu>,
}

// SAFETY: as for `Gpu`: the handles are used with the context current, by one thread at a time.
unsafe impl Send for Graph {}

impl Graph {
    /// Records the launches `record` makes on `gpu`'s stream (nothing runs while capturing).
    pub fn capture(
        gpu: &Arc<Gpu>,
        record: impl FnOnce() -> Result<(), CudaError>,
    ) -> Result<Graph, CudaError> {
        gpu.bind()?;
        unsafe {
            drv::stream::begin_capture(
                gpu.stream,
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        }?;
        let recorded = record();
        // End the capture whatever happened, so the stream is usable again.
        let graph = unsafe { drv::stream::end_capture(gpu.stream) }?;
        let exec = recorded
            .and_then(|()| Ok(unsafe { drv::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0)) }?));
        match exec {
            Ok(exec) => Ok(Graph {
                graph,
                exec,
                gpu: gpu.clone(),
            }),
            Err(e) => {
                unsafe {
                    let _ = drv::graph::destroy(graph);
                }
                Err(e)
            }
        }
    }

    /// [`Graph::capture`], or, where capturing fails, one warning naming `what` and `None`:
    /// the caller then launches `record`'s kernels one by one from then on.
    pub fn capture_or_warn(
        gpu: &Arc<Gpu>,
        what: &str,
        record: impl FnOnce() -> Result<(), CudaError>,
    ) -> Option<Graph> {
        Graph::capture(gpu, record)
            .map_err(|e| {
                log::warn!("capturing {what} as a CUDA graph failed ({e}); launching its kernels one by one")
            })
            .ok()
    }

    /// Replays the graph on the stream (asynchronously).
    pub fn launch(&self) -> Result<(), CudaError> {
        unsafe { drv::graph::launch(self.exec, self.gpu.stream) }?;
        Ok(())
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        unsafe {
            let _ = drv::ctx::set_current(self.gpu.ctx);
            let _ = drv::stream::synchronize(self.gpu.stream);
            let _ = drv::graph::exec_destroy(self.exec);
            let _ = drv::graph::destroy(self.graph);
        }
    }
}

/// Whether solvers may replay captured CUDA graphs (`FLOWLAB_CUDA_GRAPHS=0` turns them off, to
/// measure what they save).
pub fn graphs_enabled() -> bool {
    std::env::var("FLOWLAB_CUDA_GRAPHS").map_or(true, |v| v != "0")
}

/// Whether a part of a grid cut over several GPUs overlaps a sweep's halo exchange with the
/// sweep's interior and Jacobi's gather of residual partials with the next sweep
/// (`FLOWLAB_OVERLAP_EXCHANGE=0` exchanges after the whole sweep and runs each residual test
/// before the next sweep instead, to measure what the overlap saves).
pub fn exchange_overlap_enabled() -> bool {
    std::env::var("FLOWLAB_OVERLAP_EXCHANGE").map_or(true, |v| v != "0")
}

/// Whether a GPU part of a decomposed run times the phases of its step too
/// (`FLOWLAB_TRACE_SWEEPS=1`: the pressure sweeps, the compute stream's waits for the exchange
/// and the gathered partials, the step's other phases and the host's waits, reported per phase
/// in the run's summary beside the NCCL calls; off by default, as each timed phase adds two
/// event records to the host's work).
pub fn sweep_trace_enabled() -> bool {
    std::env::var("FLOWLAB_TRACE_SWEEPS").is_ok_and(|v| v == "1")
}

/// A CUDA event: a point in a stream's work, for timing ([`Gpu::event`]) or for ordering one
/// stream after another and waiting on the host ([`Gpu::marker`]).
pub struct Event {
    pub(super) e: sys::CUevent,
    gpu: Arc<Gpu>,
}

unsafe impl Send for Event {}

impl Event {
    /// Records the event after the work enqueued so far on the compute stream.
    pub fn record(&self) -> Result<(), CudaError> {
        self.record_on(Stream::Compute)
    }

    /// Records the event after the work enqueued so far on `stream`.
    pub fn record_on(&self, stream: Stream) -> Result<(), CudaError> {
        unsafe { drv::event::record(self.e, self.gpu.handle(stream)) }?;
        Ok(())
    }

    /// Waits on the host until the last recording has completed (at once if never recorded).
    pub fn sync(&self) -> Result<(), CudaError> {
        unsafe { drv::event::synchronize(self.e) }?;
        Ok(())
    }

    /// Whether the work before the last recording has completed (true if never recorded); no wait.
    pub fn done(&self) -> Result<bool, CudaError> {
        match unsafe { drv::event::query(self.e) } {
            Ok(()) => Ok(true),
            Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_NOT_READY => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Milliseconds from `self` to `end` (waits for `end`).
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32, CudaError> {
        unsafe { drv::event::synchronize(end.e) }?;
        Ok(unsafe { drv::event::elapsed(self.e, end.e) }?)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        unsafe {
            let _ = drv::event::destroy(self.e);
        }
    }
}

impl Gpu {
    /// An event that records times ([`Event::elapsed_ms`]).
    pub fn event(self: &Arc<Self>) -> Result<Event, CudaError> {
        self.new_event(sys::CUevent_flags::CU_EVENT_DEFAULT)
    }

    /// An event for ordering and waiting only (no timestamps: cheaper to record and wait on).
    pub fn marker(self: &Arc<Self>) -> Result<Event, CudaError> {
        self.new_event(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
    }

    fn new_event(self: &Arc<Self>, flags: sys::CUevent_flags) -> Result<Event, CudaError> {
        self.bind()?;
        Ok(Event {
            e: drv::event::create(flags)?,
            gpu: self.clone(),
        })
    }

    /// Milliseconds per call of `launch` (which enqueues work on the compute stream): one
    /// warm-up call, then `reps` back-to-back calls between two timing events.
    pub fn time_launches(
        self: &Arc<Self>,
        reps: usize,
        mut launch: impl FnMut() -> Result<(), CudaError>,
    ) -> Result<f64, CudaError> {
        launch()?;
        let (a, b) = (self.event()?, self.event()?);
        a.record()?;
        for _ in 0..reps {
            launch()?;
        }
        b.record()?;
        Ok(a.elapsed_ms(&b)? as f64 / reps.max(1) as f64)
    }
}
