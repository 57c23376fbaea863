//! The CPU backend: rayon thread pools and parallel primitives whose results do not depend on
//! the number of threads (reductions go row by row into a buffer, then are summed in order).

mod disjoint;
mod pool;

pub use disjoint::DisjointWriter;
pub use pool::{ThreadPool, on_global_pool, thread_pool};

use crate::solver::real::Real;
use rayon::prelude::*;

/// Sum of `row(j)` for `j in 0..partial.len()`, evaluated in parallel and added in row order,
/// so the result is bitwise the same for any number of threads. `partial` is caller-owned
/// scratch (one entry per row) so a solver step does not allocate.
pub fn ordered_sum<T: Real>(partial: &mut [T], row: impl Fn(usize) -> T + Sync + Send) -> T {
    partial.par_iter_mut().enumerate().for_each(|(j, s)| *s = row(j));
    partial.iter().fold(T::zero(), |acc, &x| acc + x)
}

/// Largest value of `row(j)` over rows (exact in any order).
pub fn par_max<T: Real>(rows: usize, row: impl Fn(usize) -> T + Sync + Send) -> T {
    (0..rows).into_par_iter().map(row).reduce(
        || T::neg_infinity(),
        |a, b| if b > a || b.is_nan() { b } else { a },
    )
}
