//! Thread pools for the CPU backend.

pub use rayon::ThreadPool;

/// A rayon pool with `threads` workers (0 = one per logical core).
pub fn thread_pool(threads: usize) -> Result<ThreadPool, rayon::ThreadPoolBuildError> {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build()
}
