//! Point Jacobi iteration (Thibault & Senocak 2009), damped:
//! `p_new = p + w ((sum_f c_f p_nb - b) / sum_f c_f - p)` with `w = 0.9`.
//!
//! The damping matters: with Neumann walls the undamped iteration matrix has the eigenvalue -1
//! (the checkerboard mode, since the neighbour coefficients sum to the diagonal), so plain
//! Jacobi never converges on a closed cavity; `w = 0.9` maps it to -0.8 and slows the smooth
//! modes by only 10 %.

use super::laplacian::Laplacian;
use super::residual_checked;
use crate::parallel::RowSums;
use crate::solver::real::Real;
use rayon::prelude::*;

const WEIGHT: f64 = 0.9;

/// One sweep `src -> dst` over the rows this part owns, then the layers it stores but does not
/// own refreshed. A sweep that tests its residual (`tested`) returns `||b - L src||_2`, computed
/// in the same pass (on a part, the row sums gathered from every part); the others skip the sum.
fn sweep<T: Real, const D: usize>(
    op: &Laplacian<T, D>,
    src: &[T],
    dst: &mut [T],
    b: &[T],
    sums: &mut RowSums<T>,
    tested: bool,
) -> Option<T> {
    let nx = op.nx();
    let weight = T::of(WEIGHT);
    let dst_rows = crate::backend::cpu::DisjointWriter::new(dst);
    let row = |j| {
        let mut r2 = T::zero();
        let mut idx = op.row_index(j);
        for i in 0..nx {
            let k = j * nx + i;
            idx[0] = i;
            let (s, d) = op.stencil(src, idx, k);
            let r = b[k] - (s - d * src[k]);
            r2 = r2 + r * r;
            // SAFETY: row j of dst is written by this closure call only.
            unsafe { dst_rows.set(k, src[k] + weight * ((s - b[k]) / d - src[k])) };
        }
        r2
    };
    let r = if tested {
        Some(sums.sum(row).sqrt())
    } else {
        sums.evaluate(row);
        None
    };
    sums.exchange(dst);
    r
}

/// Iterates until `||b - L p|| <= target`, tested every
/// [`RESIDUAL_CHECK`](super::RESIDUAL_CHECK) sweeps (the norm of sweep `k` is that of its
/// source, so a sweep that ends the solve has its source returned); returns (sweeps, final
/// residual norm).
pub fn solve<T: Real, const D: usize>(
    op: &Laplacian<T, D>,
    p: &mut [T],
    b: &[T],
    next: &mut [T],
    sums: &mut RowSums<T>,
    target: T,
    max: usize,
) -> (usize, T) {
    // The residual of a sweep that ends the solve: tested, and reached or the last allowed.
    let ends = |r: Option<T>, it: usize| r.filter(|&r| r <= target || it == max);
    let mut it = 0;
    loop {
        if let Some(r) = ends(sweep(op, p, next, b, sums, residual_checked(it, max)), it) {
            return (it, r);
        }
        it += 1;
        if let Some(r) = ends(sweep(op, next, p, b, sums, residual_checked(it, max)), it) {
            p.par_iter_mut().zip(next.par_iter()).for_each(|(a, &b)| *a = b);
            return (it, r);
        }
        it += 1;
    }
}
