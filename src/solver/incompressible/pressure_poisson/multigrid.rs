//! Geometric multigrid V-cycles for the cell-centred Poisson problem (Briggs, Henson & McCormick,
//! A Multigrid Tutorial, 2nd ed.; Trottenberg, Oosterlee & Schuller, Multigrid, sec. 2.8 for
//! cell-centred transfers).
//!
//! Coarsening merges 2 x 2 (x 2) cells while every size is even; the coarse operators are the
//! same five- (seven-) point Laplacian rediscretised (boundary faces stay where they are).
//! Smoother: red-black Gauss-Seidel, two sweeps before (red, black) and two after (black, red),
//! so the cycle is symmetric. Restriction: mean of the `2^D` children; prolongation:
//! multilinear, weight `(3/4)^(D - m) (1/4)^m` for the coarse cell `m` axes away (bilinear
//! 9/16, 3/16, 3/16, 1/16 in 2D), with ghost values from the boundary conditions. The coarsest
//! grid is solved by conjugate gradients to a tight tolerance.

use super::conjugate_gradient::{self, Preconditioner};
use super::laplacian::Laplacian;
use super::red_black::colour_sweep;
use super::{remove_mean, residual};
use crate::parallel::RowSums;
use crate::solver::linear::CgWork;
use crate::solver::real::Real;
use rayon::prelude::*;

const PRE_SMOOTH: usize = 2;
const POST_SMOOTH: usize = 2;

struct Level<T, const D: usize> {
    op: Laplacian<T, D>,
    /// Residual of this level's current iterate (restricted to the next level's `b`).
    r: Vec<T>,
    /// Correction unknown and right-hand side (coarse levels only; level 0 uses the caller's).
    x: Vec<T>,
    b: Vec<T>,
    sums: RowSums<T>,
}

/// The multigrid hierarchy and its buffers.
pub struct Multigrid<T, const D: usize> {
    levels: Vec<Level<T, D>>,
    coarse_cg: CgWork<T>,
}

impl<T: Real, const D: usize> Multigrid<T, D> {
    pub fn new(op: Laplacian<T, D>) -> Self {
        let mut levels = Vec::new();
        let mut cur = Some(op);
        while let Some(op) = cur {
            let n = op.len();
            levels.push(Level {
                op,
                r: vec![T::zero(); n],
                x: vec![T::zero(); n],
                b: vec![T::zero(); n],
                sums: RowSums::whole(op.rows()),
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
    pub fn solve(
        &mut self,
        p: &mut [T],
        b: &[T],
        sums: &mut RowSums<T>,
        target: T,
        max: usize,
    ) -> (usize, T) {
        let op = self.levels[0].op;
        let mut r_norm = residual(&op, p, b, &mut self.levels[0].r, sums);
        let mut cycles = 0;
        while r_norm > target && cycles < max {
            self.v_cycle(0, p, b);
            cycles += 1;
            r_norm = residual(&op, p, b, &mut self.levels[0].r, sums);
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
        residual(&op, x, b, &mut fine.r, &mut fine.sums);
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
            remove_mean(rhs, &mut level.sums, op.nx());
        }
        let b_norm = level.sums.dot(rhs, rhs, op.nx()).sqrt();
        let target = b_norm * T::of(1e-6).max(T::epsilon() * T::of(100.0));
        conjugate_gradient::solve(
            &op,
            x,
            rhs,
            &mut self.coarse_cg,
            &mut level.sums,
            Preconditioner::Identity,
            target,
            4 * op.len(),
        );
    }
}

/// `coarse_b = mean of the 2^D children of fine_r` (summed in the order of [`children`]).
fn restrict<T: Real, const D: usize>(fine: &Laplacian<T, D>, r: &[T], coarse: &Laplacian<T, D>, b: &mut [T]) {
    let cnx = coarse.nx();
    let scale = T::of(0.5f64.powi(D as i32));
    b.par_chunks_mut(cnx).enumerate().for_each(|(jc, row)| {
        let mut idx = coarse.row_index(jc);
        for (ic, bc) in row.iter_mut().enumerate() {
            idx[0] = ic;
            let first = (0..D).fold(0, |k, a| k + 2 * idx[a] * fine.stride[a]);
            let mut sum = r[first];
            for child in 1..1usize << D {
                sum = sum + r[first + children(fine, child)];
            }
            *bc = sum * scale;
        }
    });
}

/// Offset of child `child` (bit `a` set: the upper half along axis `a`) from the first child.
#[inline(always)]
fn children<T, const D: usize>(fine: &Laplacian<T, D>, child: usize) -> usize {
    (0..D)
        .filter(|a| child >> a & 1 == 1)
        .map(|a| fine.stride[a])
        .sum()
}

/// `x += multilinear interpolation of e` (cell-centred weights `(3/4)^(D - m) (1/4)^m` for the
/// coarse cell `m` axes away, towards the fine cell's side).
fn prolong_add<T: Real, const D: usize>(
    coarse: &Laplacian<T, D>,
    e: &[T],
    fine: &Laplacian<T, D>,
    x: &mut [T],
) {
    let fnx = fine.nx();
    // weight[m] for the neighbours m axes away.
    let weight: [T; 4] =
        std::array::from_fn(|m| T::of(0.75f64.powi(D as i32 - m as i32) * 0.25f64.powi(m as i32)));
    x.par_chunks_mut(fnx).enumerate().for_each(|(jf, row)| {
        let mut fidx = fine.row_index(jf);
        for (if_, xi) in row.iter_mut().enumerate() {
            fidx[0] = if_;
            let centre: [isize; D] = fidx.map(|f| (f / 2) as isize);
            let towards: [isize; D] = fidx.map(|f| if f % 2 == 0 { -1 } else { 1 });
            // Neighbours grouped by how many axes they step along, each group summed in
            // neighbour order (in 2D: 9/16 e00 + 3/16 (e10 + e01) + 1/16 e11).
            let mut v = weight[0] * coarse.ghosted(e, centre);
            for m in 1..=D {
                let mut group: Option<T> = None;
                for corner in 1..1usize << D {
                    if corner.count_ones() as usize != m {
                        continue;
                    }
                    let mut at = centre;
                    for a in 0..D {
                        if corner >> a & 1 == 1 {
                            at[a] += towards[a];
                        }
                    }
                    let g = coarse.ghosted(e, at);
                    group = Some(group.map_or(g, |s| s + g));
                }
                v = v + weight[m] * group.expect("each group has a neighbour");
            }
            *xi = *xi + v;
        }
    });
}
