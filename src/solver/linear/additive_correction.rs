//! Additive-correction multigrid (Hutchinson & Raithby 1986, Numer. Heat Transfer 9, 511-537)
//! as the preconditioner of CG for the symmetric stencil systems of the pressure (correction)
//! equation: the Jacobi-preconditioned CG of these systems needs O(n) iterations (about 1200 per
//! outer iteration at 512^2), one V-cycle per iteration makes the count nearly independent of
//! the grid.
//!
//! Coarse levels aggregate 2 x 2 (x 2) cells (`I = i / 2`, `J = j / 2`, `K = k / 2`; a last
//! single layer where a size is odd) until at most [`COARSEST`] unknowns remain. Their coefficients are the
//! Galerkin product `A_c = P^T A P` of piecewise-constant prolongation `P` ([`coarsen`]): a link
//! between two cells of one block drops out of `a_P` (`a_P,c = sum a_P - sum internal links`),
//! a link across a block face adds to that face's coarse link, so the coarse system is again
//! five- (seven-) point, symmetric, with the fine one's periodicity, and singular when the fine one is.
//!
//! The V-cycle `w = M^-1 r` smooths by two sweeps of weighted Jacobi (`x += w_J (b + sum a_nb
//! x_nb - a_P x) / a_P`, `w_J = `[`WEIGHT`]) from zero, restricts the residual by summing over
//! each block, adds [`OVER_CORRECTION`] times the coarse solution and smooths twice again; the
//! coarsest level takes [`COARSE_SWEEPS`] Jacobi sweeps from zero. Jacobi sweeps are their own
//! adjoint and every level starts from zero, so `M^-1` is a fixed symmetric linear operator, as
//! CG needs; with `w_J < 1` it is positive definite on a system whose `D^-1 A` has eigenvalues
//! in `[0, 2]`.
//!
//! The GPU runs the same cycle (`mg_*` kernels of `kernels/additive_correction.cuh`, one kernel for the
//! two sweeps from zero and one for the prolongation with the first sweep after it), each value
//! rounded as here.

use super::Stencil;
use crate::backend::cpu::DisjointWriter;
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

/// Size of the level below a level of `n` unknowns per axis.
pub fn coarse_shape<const D: usize>(n: [usize; D]) -> [usize; D] {
    n.map(|m| m.div_ceil(2))
}

/// The shapes of the coarse levels of a system of `n` unknowns per axis, finest first (empty
/// when it is already small enough).
pub fn coarse_shapes<const D: usize>(n: [usize; D]) -> Vec<[usize; D]> {
    let mut shapes = Vec::new();
    let mut m = n;
    while m.iter().product::<usize>() > COARSEST && m.iter().any(|&a| a > 1) {
        m = coarse_shape(m);
        shapes.push(m);
    }
    shapes
}

/// The fine unknowns (index, position) of the coarse unknown at `coarse` in their summation
/// order: offset bit `a` of the child number steps one cell along axis `a` (2D: `(2I, 2J)`,
/// `(2I + 1, 2J)`, `(2I, 2J + 1)`, `(2I + 1, 2J + 1)`), those that exist.
fn children<T: Real, const D: usize>(
    fine: &Stencil<T, D>,
    coarse: [usize; D],
) -> impl Iterator<Item = (usize, [usize; D])> + '_ {
    (0..1usize << D).filter_map(move |child| {
        let idx: [usize; D] = std::array::from_fn(|a| 2 * coarse[a] + (child >> a & 1));
        (0..D).all(|a| idx[a] < fine.n[a]).then(|| {
            let k = (0..D).rev().fold(0, |k, a| k * fine.n[a] + idx[a]);
            (k, idx)
        })
    })
}

/// The Galerkin coarse coefficients `a_P` and links of `fine` into `coarse` (its `b` is left
/// alone; its periodicity is the fine one's): for each child in [`children`] order, `a_P +=
/// a_P,f`, then its links axis by axis, upper before lower (E, W, N, S in 2D), each subtracted
/// from `a_P` when it joins two children of the block and added to the coarse link of its
/// direction when it leaves the block (a link leaving a non-periodic block is not part of the
/// matrix and is skipped).
pub fn coarsen<T: Real, const D: usize>(fine: &Stencil<T, D>, coarse: &mut Stencil<T, D>) {
    coarse.periodic = fine.periodic;
    let (cn, len) = (coarse.n, coarse.len());
    let ap = DisjointWriter::new(&mut coarse.ap);
    let out = coarse
        .a
        .each_mut()
        .map(|[l, u]| [DisjointWriter::new(l), DisjointWriter::new(u)]);
    (0..len).into_par_iter().for_each(|kc| {
        let mut c = [0; D];
        let mut rest = kc;
        for a in 0..D {
            c[a] = rest % cn[a];
            rest /= cn[a];
        }
        let mut p = T::zero();
        let mut links = [[T::zero(); 2]; D];
        for (k, idx) in children(fine, c) {
            p = p + fine.ap[k];
            for a in 0..D {
                let (n, i) = (fine.n[a], idx[a]);
                // (side, the neighbour's block along a, or None where the link is not read)
                for (side, other) in [
                    (1, (i + 1 < n || fine.periodic[a]).then(|| ((i + 1) % n) / 2)),
                    (0, (i > 0 || fine.periodic[a]).then(|| ((i + n - 1) % n) / 2)),
                ] {
                    let l = fine.a[a][side][k];
                    match other {
                        Some(o) if o == c[a] => p = p - l,
                        Some(_) => links[a][side] = links[a][side] + l,
                        None => {}
                    }
                }
            }
        }
        // SAFETY: each coarse unknown is written by its own closure call only.
        unsafe {
            ap.set(kc, p);
            for a in 0..D {
                out[a][0].set(kc, links[a][0]);
                out[a][1].set(kc, links[a][1]);
            }
        }
    });
}

/// `x + w_J (rhs + sum a_nb y_nb - a_P x) / a_P` of unknown `k` at `idx` with the neighbours'
/// values `y` (unchanged where `a_P = 0`).
#[inline(always)]
fn relaxed<T: Real, const D: usize>(
    sys: &Stencil<T, D>,
    rhs: &[T],
    x: T,
    y: impl Fn(usize) -> T,
    idx: [usize; D],
    k: usize,
) -> T {
    let ap = sys.ap[k];
    if ap == T::zero() {
        return x;
    }
    let r = rhs[k] + sys.neighbours(y, idx, k) - ap * x;
    x + T::of(WEIGHT) * r / ap
}

/// One Jacobi sweep `x -> out` of `sys` with right-hand side `rhs`.
fn sweep<T: Real, const D: usize>(sys: &Stencil<T, D>, rhs: &[T], x: &[T], out: &mut [T]) {
    sys.each(out, |k, idx| relaxed(sys, rhs, x[k], |m| x[m], idx, k));
}

/// Two Jacobi sweeps from `x = 0` into `out`: the first sweep's values `w_J rhs / a_P` are formed
/// where the second reads them.
fn smooth_from_zero<T: Real, const D: usize>(sys: &Stencil<T, D>, rhs: &[T], out: &mut [T]) {
    let first = |m: usize| {
        if sys.ap[m] == T::zero() {
            T::zero()
        } else {
            T::of(WEIGHT) * rhs[m] / sys.ap[m]
        }
    };
    sys.each(out, |k, idx| relaxed(sys, rhs, first(k), first, idx, k));
}

/// Block sums of the residual `rhs + sum a_nb x_nb - a_P x` into the coarse right-hand side
/// (`coarse` gives the shape).
fn restrict_residual<T: Real, const D: usize>(
    sys: &Stencil<T, D>,
    rhs: &[T],
    x: &[T],
    coarse: &mut Stencil<T, D>,
) {
    let mut b = std::mem::take(&mut coarse.b);
    coarse.each(&mut b, |_, c| {
        children(sys, c).fold(T::zero(), |s, (k, idx)| {
            s + (rhs[k] + sys.neighbours(|m| x[m], idx, k) - sys.ap[k] * x[k])
        })
    });
    coarse.b = b;
}

/// The coarse correction added to `x` and one sweep from the sum, into `out`: the corrected
/// values `x + c x_c[block]` (`c` = [`OVER_CORRECTION`]) are formed where the sweep reads them.
fn prolong_and_sweep<T: Real, const D: usize>(
    sys: &Stencil<T, D>,
    rhs: &[T],
    x: &[T],
    xc: &[T],
    cn: [usize; D],
    out: &mut [T],
) {
    let y = |m: usize| {
        let idx = sys.position(m);
        let kc = (0..D).rev().fold(0, |k, a| k * cn[a] + idx[a] / 2);
        x[m] + T::of(OVER_CORRECTION) * xc[kc]
    };
    sys.each(out, |k, idx| relaxed(sys, rhs, y(k), y, idx, k));
}

/// [`COARSE_SWEEPS`] Jacobi sweeps from zero into `x` (`tmp` of its size).
fn coarsest<T: Real, const D: usize>(sys: &Stencil<T, D>, rhs: &[T], x: &mut [T], tmp: &mut [T]) {
    x.fill(T::zero());
    for _ in 0..COARSE_SWEEPS / 2 {
        sweep(sys, rhs, x, tmp);
        sweep(sys, rhs, tmp, x);
    }
}

/// One coarse level: its Galerkin system (right-hand side in `sys.b`), solution and sweep buffer.
struct Level<T, const D: usize> {
    sys: Stencil<T, D>,
    x: Vec<T>,
    tmp: Vec<T>,
}

/// The coarse levels of a system of one size, and the fine level's sweep buffer.
pub struct AdditiveCorrection<T, const D: usize> {
    levels: Vec<Level<T, D>>,
    tmp: Vec<T>,
}

impl<T: Real, const D: usize> AdditiveCorrection<T, D> {
    /// The hierarchy below a system of `n` unknowns per axis.
    pub fn new(n: [usize; D]) -> Self {
        let levels = coarse_shapes(n)
            .into_iter()
            .map(|m| {
                let len = m.iter().product();
                Level {
                    sys: Stencil::new(m, [false; D]),
                    x: vec![T::zero(); len],
                    tmp: vec![T::zero(); len],
                }
            })
            .collect();
        Self {
            levels,
            tmp: vec![T::zero(); n.iter().product()],
        }
    }

    /// The coarse systems of `fine` (once per solve: the coefficients change every outer
    /// iteration).
    pub fn set_up(&mut self, fine: &Stencil<T, D>) {
        for l in 0..self.levels.len() {
            let (done, rest) = self.levels.split_at_mut(l);
            coarsen(done.last().map_or(fine, |f| &f.sys), &mut rest[0].sys);
        }
    }

    /// `w = M^-1 r`: one V-cycle on `fine` (whose coefficients [`Self::set_up`] coarsened) for
    /// the right-hand side `r`.
    pub fn precondition(&mut self, fine: &Stencil<T, D>, r: &[T], w: &mut [T]) {
        cycle(fine, r, w, &mut self.tmp, &mut self.levels);
    }
}

/// The V-cycle from one level down: `sys` with right-hand side `rhs`, solution into `x`.
fn cycle<T: Real, const D: usize>(
    sys: &Stencil<T, D>,
    rhs: &[T],
    x: &mut [T],
    tmp: &mut [T],
    below: &mut [Level<T, D>],
) {
    let Some((next, rest)) = below.split_first_mut() else {
        return coarsest(sys, rhs, x, tmp);
    };
    smooth_from_zero(sys, rhs, x);
    restrict_residual(sys, rhs, x, &mut next.sys);
    let Level {
        sys: csys,
        x: cx,
        tmp: ctmp,
    } = next;
    cycle(csys, &csys.b, cx, ctmp, rest);
    prolong_and_sweep(sys, rhs, x, cx, csys.n, tmp);
    sweep(sys, rhs, tmp, x);
}
