//! Thread pools for the CPU backend.

pub use rayon::ThreadPool;

/// A rayon pool with `threads` workers (0 = one per logical core).
pub fn thread_pool(threads: usize) -> Result<ThreadPool, rayon::ThreadPoolBuildError> {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build()
}

/// Runs `op` on a worker thread of rayon's global pool and waits for it. Called from a thread
/// outside the pool (the app's solver thread), every parallel loop of a solver step would be
/// handed across threads (wake a worker, wait on a latch): dozens per step (multigrid's levels),
/// which on two busy cores cost far more than a small grid's step itself. Run on a worker, the
/// loops split their work with the other workers directly, as in `flowlab run`'s pool.
pub fn on_global_pool<R: Send>(op: impl FnOnce() -> R + Send) -> R {
    rayon::scope(|_| op())
}
