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
//!
//! On a part of a grid cut into slabs ([`crate::parallel`]) the levels stay cut while every
//! part keeps at least four layers on even cuts; each level's part stores two layers beyond its
//! own towards each neighbour, refreshed after its right-hand side is restricted, after every
//! red-black smoothing sweep (both colours; `red_black_sweep`) and after prolongation. The
//! first level that cannot be cut is gathered from all parts and cycled (down to the coarse
//! solve and back) on every part alike as the whole grid's hierarchy, and each part
//! prolongs from it: the same operations as on one process, bit for bit.

use super::conjugate_gradient::{self, Preconditioner};
use super::laplacian::Laplacian;
use super::red_black::red_black_sweep;
use super::{remove_mean, residual};
use crate::parallel::{RowSums, SlabLink, Slabs};
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
    /// Reductions and, on a part, the exchange of this level's stored layers.
    sums: RowSums<T>,
    /// Along the last axis, the index in this level of the first child of the next level's
    /// cell 0 (0 on one process; -2 on a part with a lower neighbour).
    offset: isize,
}

impl<T: Real, const D: usize> Level<T, D> {
    fn new(op: Laplacian<T, D>, sums: RowSums<T>) -> Self {
        let n = op.len();
        Self {
            op,
            r: vec![T::zero(); n],
            x: vec![T::zero(); n],
            b: vec![T::zero(); n],
            sums,
            offset: 0,
        }
    }
}

/// On a part, the first level not cut into slabs: the part restricts its own cells' residual
/// into `owned_b`, all parts gather it into `b`, and each cycles `whole` on it and prolongs
/// from `x`.
struct Gathered<T, const D: usize> {
    whole: Multigrid<T, D>,
    link: SlabLink,
    /// The part's own cells of this level (for the restriction).
    owned: Laplacian<T, D>,
    owned_b: Vec<T>,
    b: Vec<T>,
    x: Vec<T>,
    /// As [`Level::offset`], from the finer level's part to `owned` and to the whole level.
    restrict_offset: isize,
    prolong_offset: isize,
}

/// The multigrid hierarchy and its buffers.
pub struct Multigrid<T, const D: usize> {
    levels: Vec<Level<T, D>>,
    coarse_cg: CgWork<T>,
    gathered: Option<Box<Gathered<T, D>>>,
}

impl<T: Real, const D: usize> Multigrid<T, D> {
    pub fn new(op: Laplacian<T, D>) -> Self {
        let mut levels = Vec::new();
        let mut cur = Some(op);
        while let Some(op) = cur {
            levels.push(Level::new(op, RowSums::whole(op.rows())));
            cur = coarser(&op);
        }
        let coarsest = levels.last().expect("at least one level").op.len();
        Self {
            levels,
            coarse_cg: CgWork::new(coarsest),
            gathered: None,
        }
    }

    /// The hierarchy of one part of a grid cut into `link`'s slabs: `op` on its stored cells,
    /// `whole` the whole grid's operator, which must coarsen at least once.
    pub fn part(op: Laplacian<T, D>, whole: &Laplacian<T, D>, link: &SlabLink) -> Self {
        let plan = PartLevels::new(op, whole, &link.slabs, link.rank(), 0);
        let levels = plan
            .cut
            .iter()
            .map(|c| {
                let level_link = SlabLink {
                    slabs: c.slabs.clone(),
                    comm: link.comm.clone(),
                };
                let rows = c.op.rows();
                let sums = RowSums::part(
                    &level_link,
                    rows,
                    rows / c.op.n[D - 1],
                    c.op.nx(),
                    0,
                    c.whole.rows(),
                );
                Level {
                    offset: c.offset,
                    ..Level::new(c.op, sums)
                }
            })
            .collect();
        let g = plan.gathered;
        Self {
            levels,
            coarse_cg: CgWork::new(0),
            gathered: Some(Box::new(Gathered {
                whole: Multigrid::new(g.whole),
                link: SlabLink {
                    slabs: g.slabs,
                    comm: link.comm.clone(),
                },
                owned: g.owned,
                owned_b: vec![T::zero(); g.owned.len()],
                b: vec![T::zero(); g.whole.len()],
                x: vec![T::zero(); g.whole.len()],
                restrict_offset: g.restrict_offset,
                prolong_offset: g.prolong_offset,
            })),
        }
    }

    /// Number of grid levels (the finest included).
    pub fn depth(&self) -> usize {
        self.levels.len() + self.gathered.as_ref().map_or(0, |g| g.whole.depth())
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
        let last = k + 1 == self.levels.len();
        if last && self.gathered.is_none() {
            self.coarse_solve(x, b);
            return;
        }
        self.smooth(k, x, b, [0, 1], PRE_SMOOTH);
        let (fine, coarse) = self.levels.split_at_mut(k + 1);
        let fine = &mut fine[k];
        defect(&op, x, b, &mut fine.r);
        if last {
            let g = self.gathered.as_mut().expect("a gathered level");
            restrict(&op, &fine.r, &g.owned, &mut g.owned_b, g.restrict_offset);
            g.link.all_gather(&g.owned_b, g.owned.stride[D - 1], 0, &mut g.b);
            g.x.par_iter_mut().for_each(|v| *v = T::zero());
            g.whole.v_cycle(0, &mut g.x, &g.b);
            prolong_add(&g.whole.levels[0].op, &g.x, &op, x, g.prolong_offset);
        } else {
            let c = &mut coarse[0];
            restrict(&op, &fine.r, &c.op, &mut c.b, fine.offset);
            // The smoother reads it beyond a part's own layers (red_black_sweep).
            c.sums.exchange(&mut c.b);
            c.x.par_iter_mut().for_each(|v| *v = T::zero());
            // Recurse with the coarse buffers moved out so `self` stays borrowable.
            let mut cx = std::mem::take(&mut c.x);
            let cb = std::mem::take(&mut c.b);
            let offset = fine.offset;
            self.v_cycle(k + 1, &mut cx, &cb);
            let c = &mut self.levels[k + 1];
            prolong_add(&c.op, &cx, &op, x, offset);
            c.x = cx;
            c.b = cb;
        }
        self.levels[k].sums.exchange(x);
        self.smooth(k, x, b, [1, 0], POST_SMOOTH);
    }

    /// `sweeps` red-black Gauss-Seidel sweeps on level `k`, colours in `order`; on a part the
    /// stored layers are refreshed after each sweep ([`red_black_sweep`]).
    fn smooth(&self, k: usize, x: &mut [T], b: &[T], order: [usize; 2], sweeps: usize) {
        let level = &self.levels[k];
        for _ in 0..sweeps {
            red_black_sweep(&level.op, x, b, order, T::one(), &level.sums);
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

/// The levels of one part's hierarchy on a grid cut into slabs along the last axis, for the CPU
/// ([`Multigrid::part`]) and the GPU parts alike: the levels cut into slabs while every part
/// keeps at least four layers on even cuts and the level still coarsens, then the first level
/// gathered from all parts.
pub(crate) struct PartLevels<T, const D: usize> {
    /// The cut levels, finest first.
    pub cut: Vec<CutLevel<T, D>>,
    pub gathered: GatheredLevel<T, D>,
}

/// A level cut into slabs.
pub(crate) struct CutLevel<T, const D: usize> {
    /// The operator on the part's stored cells (walls where it meets another part).
    pub op: Laplacian<T, D>,
    /// The whole grid's operator of this level.
    pub whole: Laplacian<T, D>,
    pub slabs: Slabs,
    /// Along the last axis, the index in this level of the first child of the next cut level's
    /// cell 0 (-2 on a part with a lower neighbour, else 0; 0 on the last cut level).
    pub offset: isize,
}

/// The first level not cut: each part restricts its own cells' residual into `owned`, all
/// parts gather it into the whole level, and each cycles `whole` and prolongs from it.
pub(crate) struct GatheredLevel<T, const D: usize> {
    pub whole: Laplacian<T, D>,
    /// Which of the level's cells each part restricts to (the last cut level's slabs halved).
    pub slabs: Slabs,
    /// The part's own cells of this level.
    pub owned: Laplacian<T, D>,
    /// As [`CutLevel::offset`], from the last cut level to `owned` and to `whole`.
    pub restrict_offset: isize,
    pub prolong_offset: isize,
}

impl<T: Real, const D: usize> PartLevels<T, D> {
    /// The levels of part `rank` of `slabs`, `op` on its stored cells; `whole`, the whole
    /// grid's operator, must coarsen at least once. A coarse level of fewer than
    /// `min_cut_cells` cells (the whole level's) is gathered even where the slabs could be cut.
    pub(crate) fn new(
        op: Laplacian<T, D>,
        whole: &Laplacian<T, D>,
        slabs: &Slabs,
        rank: usize,
        min_cut_cells: usize,
    ) -> Self {
        let last = D - 1;
        let mut cut = vec![CutLevel {
            op,
            whole: *whole,
            slabs: slabs.clone(),
            offset: 0,
        }];
        loop {
            let fine = cut.last_mut().expect("level 0");
            let next = coarser(&fine.whole).expect("a grid cut into slabs coarsens at least once");
            let fine_start = fine.slabs.stored(rank).start as isize;
            let cut_next = coarser(&next).is_some() && next.len() >= min_cut_cells;
            match fine.slabs.coarser().filter(|_| cut_next) {
                Some(slabs) => {
                    let stored = slabs.stored(rank);
                    fine.offset = 2 * stored.start as isize - fine_start;
                    let mut n = next.n;
                    n[last] = stored.len();
                    let op = with_cells(&next, n, fine.op.bc);
                    cut.push(CutLevel {
                        op,
                        whole: next,
                        slabs,
                        offset: 0,
                    });
                }
                None => {
                    let owned = fine.slabs.owned(rank);
                    let mut n = next.n;
                    n[last] = owned.len() / 2;
                    let gathered = GatheredLevel {
                        whole: next,
                        slabs: fine.slabs.halved(),
                        owned: with_cells(&next, n, fine.op.bc),
                        restrict_offset: owned.start as isize - fine_start,
                        prolong_offset: -fine_start,
                    };
                    return Self { cut, gathered };
                }
            }
        }
    }
}

/// The next coarser level of the hierarchy, while `op` has more than 64 cells and coarsens.
pub(crate) fn coarser<T: Real, const D: usize>(op: &Laplacian<T, D>) -> Option<Laplacian<T, D>> {
    if op.len() > 64 { op.coarsen() } else { None }
}

/// `level`'s operator on a box of `n` cells with the sides `bc` (a part's).
fn with_cells<T: Real, const D: usize>(
    level: &Laplacian<T, D>,
    n: [usize; D],
    bc: [[super::FaceBc; 2]; D],
) -> Laplacian<T, D> {
    let mut op = Laplacian::new(n, [1.0; D], bc);
    op.ih2 = level.ih2;
    op
}

/// `r = b - L x` (the residual without its norm).
fn defect<T: Real, const D: usize>(op: &Laplacian<T, D>, x: &[T], b: &[T], r: &mut [T]) {
    super::apply(op, x, r);
    r.par_iter_mut().zip(b.par_iter()).for_each(|(r, &b)| *r = b - *r);
}

/// `coarse_b = mean of the 2^D children of fine_r` (summed in the order of [`children`]). Along
/// the last axis the first child of coarse cell `k` is fine cell `2 k + offset`; coarse cells
/// whose children lie outside the fine box (a part's outer stored layers) are left alone.
fn restrict<T: Real, const D: usize>(
    fine: &Laplacian<T, D>,
    r: &[T],
    coarse: &Laplacian<T, D>,
    b: &mut [T],
    offset: isize,
) {
    let cnx = coarse.nx();
    let last = D - 1;
    let scale = T::of(0.5f64.powi(D as i32));
    b.par_chunks_mut(cnx).enumerate().for_each(|(jc, row)| {
        // The fine index of the first child, x at 0.
        let mut idx = coarse.row_index(jc).map(|c| 2 * c);
        let child = idx[last] as isize + offset;
        if child < 0 || child + 1 >= fine.n[last] as isize {
            return;
        }
        idx[last] = child as usize;
        for (ic, bc) in row.iter_mut().enumerate() {
            idx[0] = 2 * ic;
            let first = (0..D).fold(0, |k, a| k + idx[a] * fine.stride[a]);
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
/// coarse cell `m` axes away, towards the fine cell's side); along the last axis fine cell `f`
/// lies in coarse cell `(f - offset) / 2` ([`restrict`]'s offset, even).
fn prolong_add<T: Real, const D: usize>(
    coarse: &Laplacian<T, D>,
    e: &[T],
    fine: &Laplacian<T, D>,
    x: &mut [T],
    offset: isize,
) {
    let fnx = fine.nx();
    // weight[m] for the neighbours m axes away.
    let weight: [T; 4] =
        std::array::from_fn(|m| T::of(0.75f64.powi(D as i32 - m as i32) * 0.25f64.powi(m as i32)));
    x.par_chunks_mut(fnx).enumerate().for_each(|(jf, row)| {
        let mut fidx = fine.row_index(jf);
        for (if_, xi) in row.iter_mut().enumerate() {
            fidx[0] = if_;
            let mut centre: [isize; D] = fidx.map(|f| (f / 2) as isize);
            centre[D - 1] = (fidx[D - 1] as isize - offset).div_euclid(2);
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
