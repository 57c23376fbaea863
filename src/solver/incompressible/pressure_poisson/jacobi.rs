//! Point Jacobi iteration `p_new = (sum_f c_f p_nb - b) / sum_f c_f` (Thibault & Senocak 2009).

use super::laplacian::Laplacian;
use crate::backend::cpu::ordered_sum;
use crate::solver::real::Real;
use rayon::prelude::*;

/// One sweep `src -> dst`; returns `||b - L src||_2`, computed in the same pass.
fn sweep<T: Real>(op: &Laplacian<T>, src: &[T], dst: &mut [T], b: &[T], partial: &mut [T]) -> T {
    let nx = op.nx;
    let dst_rows = crate::backend::cpu::DisjointWriter::new(dst);
    ordered_sum(partial, |j| {
        let mut r2 = T::zero();
        for i in 0..nx {
            let k = j * nx + i;
            let (s, d) = op.stencil(src, i, j);
            let r = b[k] - (s - d * src[k]);
            r2 = r2 + r * r;
            // SAFETY: row j of dst is written by this closure call only.
            unsafe { dst_rows.set(k, (s - b[k]) / d) };
        }
        r2
    })
    .sqrt()
}

/// Iterates until `||b - L p|| <= target`; returns (sweeps, final residual norm).
pub fn solve<T: Real>(
    op: &Laplacian<T>,
    p: &mut [T],
    b: &[T],
    next: &mut [T],
    partial: &mut [T],
    target: T,
    max: usize,
) -> (usize, T) {
    let mut it = 0;
    loop {
        let r = sweep(op, p, next, b, partial);
        if r <= target || it == max {
            return (it, r);
        }
        it += 1;
        let r = sweep(op, next, p, b, partial);
        if r <= target || it == max {
            p.par_iter_mut().zip(next.par_iter()).for_each(|(a, &b)| *a = b);
            return (it, r);
        }
        it += 1;
    }
}
