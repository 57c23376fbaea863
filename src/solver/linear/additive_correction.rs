//! Additive-correction multigrid (Hutchinson & Raithby 1986, Numer. Heat Transfer 9, 511-537)
//! as the preconditioner of CG for the symmetric five-point systems of the pressure (correction)
//! equation: the Jacobi-preconditioned CG of these systems needs O(n) iterations (about 1200 per
//! outer iteration at 512^2), one V-cycle per iteration makes the count nearly independent of
//! the grid.
//!
//! Coarse levels aggregate 2 x 2 cells (`I = i / 2`, `J = j / 2`; a last single row or column
//! where a size is odd) until at most [`COARSEST`] unknowns remain. Their coefficients are the
//! Galerkin product `A_c = P^T A P` of piecewise-constant prolongation `P` ([`coarsen`]): a link
//! between two cells of one block drops out of `a_P` (`a_P,c = sum a_P - sum internal links`),
//! a link across a block face adds to that face's coarse link, so the coarse system is again
//! five-point, symmetric, with the fine one's periodicity, and singular when the fine one is.
//!
//! The V-cycle `w = M^-1 r` smooths by two sweeps of weighted Jacobi (`x += w_J (b + sum a_nb
//! x_nb - a_P x) / a_P`, `w_J = `[`WEIGHT`]) from zero, restricts the residual by summing over
//! each block, adds [`OVER_CORRECTION`] times the coarse solution and smooths twice again; the
//! coarsest level takes [`COARSE_SWEEPS`] Jacobi sweeps from zero. Jacobi sweeps are their own
//! adjoint and every level starts from zero, so `M^-1` is a fixed symmetric linear operator, as
//! CG needs; with `w_J < 1` it is positive definite on a system whose `D^-1 A` has eigenvalues
//! in `[0, 2]`.
//!
//! The GPU runs the same cycle (`mg_*` kernels of `kernels/five_point.cu`, one kernel for the
//! two sweeps from zero and one for the prolongation with the first sweep after it), each value
//! rounded as here.

use super::FivePoint;
use crate::solver::real::Real;
use rayon::prelude::*;

/// Unknowns of the coarsest level at most.
pub const COARSEST: usize = 64;
/// Jacobi sweeps from zero on the coarsest level.
pub const COARSE_SWEEPS: usize = 48;
/// Weight of the smoothing Jacobi sweeps.
pub const WEIGHT: f64 = 0.8;
/// Factor of the coarse correction. Piecewise-constant prolongation makes the Galerkin coarse
/// operator too stiff for smooth errors (about twice a rediscretisation's coupling), so the
/// unscaled correction falls short; scaling it (over-correction, Braess 1995, Computing 55,
/// 379-393; Blaheta 1986) keeps `M^-1` symmetric and, below 2, positive definite. Measured on
/// the pressure systems of the tests: CG to 1e-10 at 512^2 in 20 iterations with 1.7, 90 with 1.
pub const OVER_CORRECTION: f64 = 1.7;

/// Size of the level below an `ni x nj` level.
pub fn coarse_shape(ni: usize, nj: usize) -> (usize, usize) {
    (ni.div_ceil(2), nj.div_ceil(2))
}

/// The shapes of the coarse levels of an `ni x nj` system, finest first (empty when it is
/// already small enough).
pub fn coarse_shapes(ni: usize, nj: usize) -> Vec<(usize, usize)> {
    let mut shapes = Vec::new();
    let (mut a, mut b) = (ni, nj);
    while a * b > COARSEST && (a > 1 || b > 1) {
        (a, b) = coarse_shape(a, b);
        shapes.push((a, b));
    }
    shapes
}

/// The fine cells of coarse cell `(ic, jc)` in their summation order: `(2ic, 2jc)`,
/// `(2ic + 1, 2jc)`, `(2ic, 2jc + 1)`, `(2ic + 1, 2jc + 1)`, those that exist.
fn children(ic: usize, jc: usize, ni: usize, nj: usize) -> impl Iterator<Item = (usize, usize)> {
    [(0, 0), (1, 0), (0, 1), (1, 1)]
        .into_iter()
        .map(move |(a, b)| (2 * ic + a, 2 * jc + b))
        .filter(move |&(i, j)| i < ni && j < nj)
}

/// The Galerkin coarse coefficients `a_P, a_E, a_W, a_N, a_S` of `fine` into `coarse` (its `b`
/// is left alone; its periodicity is the fine one's): for each child in [`children`] order, `a_P += a_P,f`, then its links E, W, N, S
/// in that order, each subtracted from `a_P` when it joins two children of the block and added
/// to the coarse link of its direction when it leaves the block (a link leaving a non-periodic
/// block is not part of the matrix and is skipped).
pub fn coarsen<T: Real>(fine: &FivePoint<T>, coarse: &mut FivePoint<T>) {
    let (ni, nj, [px, py]) = (fine.ni, fine.nj, fine.periodic);
    let nic = coarse.ni;
    coarse.periodic = fine.periodic;
    let rows = coarse
        .ap
        .par_chunks_mut(nic)
        .zip(coarse.ae.par_chunks_mut(nic))
        .zip(coarse.aw.par_chunks_mut(nic))
        .zip(coarse.an.par_chunks_mut(nic))
        .zip(coarse.as_.par_chunks_mut(nic));
    rows.enumerate().for_each(|(jc, ((((ap, ae), aw), an), as_))| {
        for ic in 0..nic {
            let [mut p, mut e, mut w, mut n, mut s] = [T::zero(); 5];
            for (i, j) in children(ic, jc, ni, nj) {
                let k = j * ni + i;
                p = p + fine.ap[k];
                // (coefficient, neighbour's block or None where the link is not read, which
                // coarse link it adds to)
                let east = (i + 1 < ni || px).then(|| ((i + 1) % ni) / 2);
                let west = (i > 0 || px).then(|| ((i + ni - 1) % ni) / 2);
                let north = (j + 1 < nj || py).then(|| ((j + 1) % nj) / 2);
                let south = (j > 0 || py).then(|| ((j + nj - 1) % nj) / 2);
                for (a, other, own, sum) in [
                    (fine.ae[k], east, ic, &mut e),
                    (fine.aw[k], west, ic, &mut w),
                    (fine.an[k], north, jc, &mut n),
                    (fine.as_[k], south, jc, &mut s),
                ] {
                    match other {
                        Some(o) if o == own => p = p - a,
                        Some(_) => *sum = *sum + a,
                        None => {}
                    }
                }
            }
            (ap[ic], ae[ic], aw[ic], an[ic], as_[ic]) = (p, e, w, n, s);
        }
    });
}

/// `x + w_J (rhs + sum a_nb y_nb - a_P x) / a_P` of unknown `(i, j)` with the neighbours' values
/// `y` (unchanged where `a_P = 0`).
#[inline(always)]
fn relaxed<T: Real>(sys: &FivePoint<T>, rhs: &[T], x: T, y: impl Fn(usize) -> T, i: usize, j: usize) -> T {
    let k = j * sys.ni + i;
    let ap = sys.ap[k];
    if ap == T::zero() {
        return x;
    }
    let r = rhs[k] + sys.neighbours(y, i, j) - ap * x;
    x + T::of(WEIGHT) * r / ap
}

/// `out[k] = f(i, j)` over the rows of a level, in parallel.
fn each<T: Real>(ni: usize, out: &mut [T], f: impl Fn(usize, usize) -> T + Sync) {
    out.par_chunks_mut(ni).enumerate().for_each(|(j, row)| {
        for (i, o) in row.iter_mut().enumerate() {
            *o = f(i, j);
        }
    });
}

/// One Jacobi sweep `x -> out` of `sys` with right-hand side `rhs`.
fn sweep<T: Real>(sys: &FivePoint<T>, rhs: &[T], x: &[T], out: &mut [T]) {
    each(sys.ni, out, |i, j| {
        relaxed(sys, rhs, x[j * sys.ni + i], |m| x[m], i, j)
    });
}

/// Two Jacobi sweeps from `x = 0` into `out`: the first sweep's values `w_J rhs / a_P` are formed
/// where the second reads them.
fn smooth_from_zero<T: Real>(sys: &FivePoint<T>, rhs: &[T], out: &mut [T]) {
    let first = |m: usize| {
        if sys.ap[m] == T::zero() {
            T::zero()
        } else {
            T::of(WEIGHT) * rhs[m] / sys.ap[m]
        }
    };
    each(sys.ni, out, |i, j| {
        relaxed(sys, rhs, first(j * sys.ni + i), first, i, j)
    });
}

/// Block sums of the residual `rhs + sum a_nb x_nb - a_P x` into the coarse right-hand side.
fn restrict_residual<T: Real>(sys: &FivePoint<T>, rhs: &[T], x: &[T], nic: usize, coarse_rhs: &mut [T]) {
    let (ni, nj) = (sys.ni, sys.nj);
    each(nic, coarse_rhs, |ic, jc| {
        children(ic, jc, ni, nj).fold(T::zero(), |s, (i, j)| {
            let k = j * ni + i;
            s + (rhs[k] + sys.neighbours(|m| x[m], i, j) - sys.ap[k] * x[k])
        })
    });
}

/// The coarse correction added to `x` and one sweep from the sum, into `out`: the corrected
/// values `x + c x_c[block]` (`c` = [`OVER_CORRECTION`]) are formed where the sweep reads them.
fn prolong_and_sweep<T: Real>(sys: &FivePoint<T>, rhs: &[T], x: &[T], xc: &[T], nic: usize, out: &mut [T]) {
    let ni = sys.ni;
    let y = |m: usize| x[m] + T::of(OVER_CORRECTION) * xc[(m / ni / 2) * nic + (m % ni) / 2];
    each(ni, out, |i, j| relaxed(sys, rhs, y(j * ni + i), y, i, j));
}

/// [`COARSE_SWEEPS`] Jacobi sweeps from zero into `x` (`tmp` of its size).
fn coarsest<T: Real>(sys: &FivePoint<T>, rhs: &[T], x: &mut [T], tmp: &mut [T]) {
    x.fill(T::zero());
    for _ in 0..COARSE_SWEEPS / 2 {
        sweep(sys, rhs, x, tmp);
        sweep(sys, rhs, tmp, x);
    }
}

/// One coarse level: its Galerkin system (right-hand side in `sys.b`), solution and sweep buffer.
struct Level<T> {
    sys: FivePoint<T>,
    x: Vec<T>,
    tmp: Vec<T>,
}

/// The coarse levels of a system of one size, and the fine level's sweep buffer.
pub struct AdditiveCorrection<T> {
    levels: Vec<Level<T>>,
    tmp: Vec<T>,
}

impl<T: Real> AdditiveCorrection<T> {
    pub fn new(ni: usize, nj: usize) -> Self {
        let levels = coarse_shapes(ni, nj)
            .into_iter()
            .map(|(a, b)| Level {
                sys: FivePoint::new(a, b, [false; 2]),
                x: vec![T::zero(); a * b],
                tmp: vec![T::zero(); a * b],
            })
            .collect();
        Self {
            levels,
            tmp: vec![T::zero(); ni * nj],
        }
    }

    /// The coarse systems of `fine` (once per solve: the coefficients change every outer
    /// iteration).
    pub fn set_up(&mut self, fine: &FivePoint<T>) {
        for l in 0..self.levels.len() {
            let (done, rest) = self.levels.split_at_mut(l);
            coarsen(done.last().map_or(fine, |f| &f.sys), &mut rest[0].sys);
        }
    }

    /// `w = M^-1 r`: one V-cycle on `fine` (whose coefficients [`Self::set_up`] coarsened) for
    /// the right-hand side `r`.
    pub fn precondition(&mut self, fine: &FivePoint<T>, r: &[T], w: &mut [T]) {
        cycle(fine, r, w, &mut self.tmp, &mut self.levels);
    }
}

/// The V-cycle from one level down: `sys` with right-hand side `rhs`, solution into `x`.
fn cycle<T: Real>(sys: &FivePoint<T>, rhs: &[T], x: &mut [T], tmp: &mut [T], below: &mut [Level<T>]) {
    let Some((next, rest)) = below.split_first_mut() else {
        return coarsest(sys, rhs, x, tmp);
    };
    smooth_from_zero(sys, rhs, x);
    let nic = next.sys.ni;
    restrict_residual(sys, rhs, x, nic, &mut next.sys.b);
    let Level {
        sys: csys,
        x: cx,
        tmp: ctmp,
    } = next;
    cycle(csys, &csys.b, cx, ctmp, rest);
    prolong_and_sweep(sys, rhs, x, cx, nic, tmp);
    sweep(sys, rhs, tmp, x);
}
