//! Geometric multigrid V-cycles for the cell-centred Poisson problem (Briggs, Henson & McCormick,
//! A Multigrid Tutorial, 2nd ed.; Trottenberg, Oosterlee & Schuller, Multigrid, sec. 2.8 for
//! cell-centred transfers).
//!
//! Coarsening merges 2 x 2 cells while both sizes are even; the coarse operators are the same
//! five-point Laplacian rediscretised (boundary faces stay where they are). Smoother: red-black
//! Gauss-Seidel, two sweeps before (red, black) and two after (black, red), so the cycle is
//! symmetric. Restriction: mean of the four children; prolongation: bilinear
//! (weights 9/16, 3/16, 3/16, 1/16) with ghost values from the boundary conditions. The coarsest
//! grid is solved by conjugate gradients to a tight tolerance.

use super::conjugate_gradient::{self, Preconditioner};
use super::laplacian::Laplacian;
use super::red_black::colour_sweep;
use super::{dot, remove_mean, residual};
use crate::solver::linear::CgWork;
use crate::solver::real::Real;
use rayon::prelude::*;

const PRE_SMOOTH: usize = 2;
const POST_SMOOTH: usize = 2;

struct Level<T> {
    op: Laplacian<T>,
    /// Residual of this level's current iterate (restricted to the next level's `b`).
    r: Vec<T>,
    /// Correction unknown and right-hand side (coarse levels only; level 0 uses the caller's).
    x: Vec<T>,
    b: Vec<T>,
    partial: Vec<T>,
}

/// The multigrid hierarchy and its buffers.
pub struct Multigrid<T> {
    levels: Vec<Level<T>>,
    coarse_cg: CgWork<T>,
}

impl<T: Real> Multigrid<T> {
    pub fn new(op: Laplacian<T>) -> Self {
        let mut levels = Vec::new();
        let mut cur = Some(op);
        while let Some(op) = cur {
            let n = op.len();
            levels.push(Level {
                op,
                r: vec![T::zero(); n],
                x: vec![T::zero(); n],
                b: vec![T::zero(); n],
                partial: vec![T::zero(); op.ny],
            });
            cur = if n > 64 { op.coarsen() } else { None };
        }
        let coarsest = levels.last().expect("at least one level").op.len();
        Self {
            levels,
            coarse_cg: CgWork::new(coarsest),
        }
    }

    /// Number of grid levels (the finest included).
    pub fn depth(&self) -> usize {
        self.levels.len()
    }

    /// V-cycles until `||b - L p|| <= target`; returns (cycles, residual norm).
    pub fn solve(&mut self, p: &mut [T], b: &[T], partial: &mut [T], target: T, max: usize) -> (usize, T) {
        let op = self.levels[0].op;
        let mut r_norm = residual(&op, p, b, &mut self.levels[0].r, partial);
        let mut cycles = 0;
        while r_norm > target && cycles < max {
            self.v_cycle(0, p, b);
            cycles += 1;
            r_norm = residual(&op, p, b, &mut self.levels[0].r, partial);
        }
        (cycles, r_norm)
    }

    /// One V-cycle on level `k` for `L x = b`.
    fn v_cycle(&mut self, k: usize, x: &mut [T], b: &[T]) {
        let op = self.levels[k].op;
        if k + 1 == self.levels.len() {
            self.coarse_solve(x, b);
            return;
        }
        for _ in 0..PRE_SMOOTH {
            colour_sweep(&op, x, b, 0, T::one());
            colour_sweep(&op, x, b, 1, T::one());
        }
        let (fine, coarse) = self.levels.split_at_mut(k + 1);
        let fine = &mut fine[k];
        residual(&op, x, b, &mut fine.r, &mut fine.partial);
        let c = &mut coarse[0];
        restrict(&op, &fine.r, &c.op, &mut c.b);
        c.x.par_iter_mut().for_each(|v| *v = T::zero());
        // Recurse with the coarse buffers moved out so `self` stays borrowable.
        let mut cx = std::mem::take(&mut c.x);
        let cb = std::mem::take(&mut c.b);
        self.v_cycle(k + 1, &mut cx, &cb);
        let c = &mut self.levels[k + 1];
        prolong_add(&c.op, &cx, &op, x);
        c.x = cx;
        c.b = cb;
        for _ in 0..POST_SMOOTH {
            colour_sweep(&op, x, b, 1, T::one());
            colour_sweep(&op, x, b, 0, T::one());
        }
    }

    fn coarse_solve(&mut self, x: &mut [T], b: &[T]) {
        let level = self.levels.last_mut().expect("at least one level");
        let op = level.op;
        // The restricted residual of a compatible problem is compatible up to rounding; the
        // coarsest level's `r` (unused there otherwise) holds the mean-free copy.
        let rhs = &mut level.r;
        rhs.copy_from_slice(b);
        if op.singular() {
            remove_mean(rhs, &mut level.partial, op.nx);
        }
        let b_norm = dot(rhs, rhs, &mut level.partial, op.nx).sqrt();
        let target = b_norm * T::of(1e-6).max(T::epsilon() * T::of(100.0));
        conjugate_gradient::solve(
            &op,
            x,
            rhs,
            &mut self.coarse_cg,
            &mut level.partial,
            Preconditioner::Identity,
            target,
            4 * op.len(),
        );
    }
}

/// `coarse_b = mean of the four children of fine_r`.
fn restrict<T: Real>(fine: &Laplacian<T>, r: &[T], coarse: &Laplacian<T>, b: &mut [T]) {
    let (fnx, cnx) = (fine.nx, coarse.nx);
    let quarter = T::of(0.25);
    b.par_chunks_mut(cnx).enumerate().for_each(|(jc, row)| {
        for (ic, bc) in row.iter_mut().enumerate() {
            let k = 2 * jc * fnx + 2 * ic;
            *bc = (r[k] + r[k + 1] + r[k + fnx] + r[k + fnx + 1]) * quarter;
        }
    });
}

/// `x += bilinear interpolation of e` (cell-centred 9-3-3-1 weights).
fn prolong_add<T: Real>(coarse: &Laplacian<T>, e: &[T], fine: &Laplacian<T>, x: &mut [T]) {
    let fnx = fine.nx;
    let (w9, w3, w1) = (T::of(9.0 / 16.0), T::of(3.0 / 16.0), T::of(1.0 / 16.0));
    x.par_chunks_mut(fnx).enumerate().for_each(|(jf, row)| {
        let jc = (jf / 2) as isize;
        let sj = if jf % 2 == 0 { -1 } else { 1 };
        for (if_, xi) in row.iter_mut().enumerate() {
            let ic = (if_ / 2) as isize;
            let si = if if_ % 2 == 0 { -1 } else { 1 };
            let v = w9 * coarse.ghosted(e, ic, jc)
                + w3 * (coarse.ghosted(e, ic + si, jc) + coarse.ghosted(e, ic, jc + sj))
                + w1 * coarse.ghosted(e, ic + si, jc + sj);
            *xi = *xi + v;
        }
    });
}
