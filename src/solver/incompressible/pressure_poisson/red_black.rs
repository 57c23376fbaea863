//! Red-black ordered Gauss-Seidel / SOR sweeps: cells with `(i + j + k) % 2 == 0` (red) are updated
//! first, then black; each colour only reads the other, so a colour updates in parallel and the
//! result does not depend on the number of threads.

use super::laplacian::Laplacian;
use super::{remove_mean, residual_checked, residual_norm};
use crate::backend::cpu::DisjointWriter;
use crate::parallel::RowSums;
use crate::solver::real::Real;
use rayon::prelude::*;

/// Updates the cells of one `colour` (0 red, 1 black):
/// `p <- p + omega ((sum_f c_f p_nb - b)/sum_f c_f - p)`.
pub fn colour_sweep<T: Real, const D: usize>(
    op: &Laplacian<T, D>,
    p: &mut [T],
    b: &[T],
    colour: usize,
    omega: T,
) {
    let nx = op.nx();
    let cells = DisjointWriter::new(p);
    (0..op.rows()).into_par_iter().for_each(|j| {
        // SAFETY: this pass writes only cells of `colour` and reads only their stencil
        // neighbours, which have the other colour (periodic images keep the colour when the
        // periodic size is even; for odd sizes the seam cells are left to the serial pass below).
        let at = |k: usize| unsafe { cells.get(k) };
        let mut idx = op.row_index(j);
        for i in (parity(colour, idx)..nx).step_by(2) {
            idx[0] = i;
            if seam(op, idx) {
                continue;
            }
            let k = j * nx + i;
            let (s, d) = op.stencil_with(at, idx, k);
            let old = at(k);
            unsafe { cells.set(k, old + omega * ((s - b[k]) / d - old)) };
        }
    });
    // Periodic seams of odd-sized grids couple cells of equal colour: update them in order.
    if op.n.iter().any(|n| n % 2 == 1) {
        for j in 0..op.rows() {
            let mut idx = op.row_index(j);
            for i in (parity(colour, idx)..nx).step_by(2) {
                idx[0] = i;
                if seam(op, idx) {
                    let k = j * nx + i;
                    let (s, d) = op.stencil(p, idx, k);
                    p[k] = p[k] + omega * ((s - b[k]) / d - p[k]);
                }
            }
        }
    }
}

/// The first `i` of `colour` in the row of `idx`: `(colour + j + k) % 2`.
#[inline(always)]
fn parity<const D: usize>(colour: usize, idx: [usize; D]) -> usize {
    (1..D).fold(colour, |s, a| s + idx[a]) % 2
}

/// Whether cell `idx` touches a periodic seam across which cells of one colour meet.
#[inline(always)]
fn seam<T: Real, const D: usize>(op: &Laplacian<T, D>, idx: [usize; D]) -> bool {
    use super::laplacian::FaceBc::Periodic;
    (0..D).any(|a| op.n[a] % 2 == 1 && op.bc[a][0] == Periodic && (idx[a] == 0 || idx[a] + 1 == op.n[a]))
}

/// Red-black SOR until `||b - L p|| <= target` (tested every
/// [`RESIDUAL_CHECK`](super::RESIDUAL_CHECK) iterations, since the residual costs one more
/// pass); returns (iterations, residual norm). For a singular `L` the constant component, which
/// SOR leaves undamped and lets drift, is removed at each check so rounding stays at the level
/// of the solution, not of its drifting mean.
pub fn sor_solve<T: Real, const D: usize>(
    op: &Laplacian<T, D>,
    p: &mut [T],
    b: &[T],
    omega: T,
    sums: &mut RowSums<T>,
    target: T,
    max: usize,
) -> (usize, T) {
    let mut it = 0;
    loop {
        if residual_checked(it, max) {
            if op.singular() {
                remove_mean(p, sums, op.nx());
            }
            let r = residual_norm(op, p, b, sums);
            if r <= target || it == max {
                return (it, r);
            }
        }
        red_black_sweep(op, p, b, [0, 1], omega, sums);
        it += 1;
    }
}

/// One red-black sweep of `L x = b` (relaxation `omega`), the colours in `order`. On a part of
/// a decomposed grid the layers it stores but does not own are refreshed once, after both
/// colours: the first colour sweeps every stored layer, and in the layer next to its own a part
/// computes each cell from the values its owner computes it from (the layers exchanged after the
/// last sweep, and `b`, exchanged before the solve), so the second colour reads there what the
/// owner wrote, bit for bit.
pub fn red_black_sweep<T: Real, const D: usize>(
    op: &Laplacian<T, D>,
    x: &mut [T],
    b: &[T],
    order: [usize; 2],
    omega: T,
    sums: &RowSums<T>,
) {
    for colour in order {
        colour_sweep(op, x, b, colour, omega);
    }
    sums.exchange(x);
}

/// Zero-initial-guess symmetric Gauss-Seidel approximation `w ~ L^-1 r` (red, black, red):
/// the forward sweep (red, black) followed by the backward sweep (black, red), in which the
/// repeated black update is a no-op. Symmetric, so usable as a CG preconditioner. On a part of
/// a decomposed grid the layers it stores but does not own are refreshed after each colour.
pub fn symmetric_gauss_seidel<T: Real, const D: usize>(
    op: &Laplacian<T, D>,
    w: &mut [T],
    r: &[T],
    sums: &RowSums<T>,
) {
    w.par_iter_mut().for_each(|x| *x = T::zero());
    for colour in [0, 1, 0] {
        colour_sweep(op, w, r, colour, T::one());
        sums.exchange(w);
    }
}
