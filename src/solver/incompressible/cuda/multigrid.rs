//! The multigrid pressure solve on the device (pressure_poisson/multigrid.rs): the hierarchy's
//! levels, the V-cycle (as a CUDA graph when graphs are on) and its red-black smoother.
//!
//! On a part of a grid cut over several GPUs the hierarchy is the CPU part's
//! ([`PartLevels`]): the levels stay cut into slabs while the slabs allow and the level has at
//! least [`MIN_CUT_CELLS`] cells, each level's layers that the part stores but does not own
//! refreshed over NCCL after its right-hand side is restricted, after every red-black smoothing
//! sweep (both colours: `CudaProjection::red_black_exchanged`) and after prolongation; the first
//! level not cut is gathered from all parts (an all-gather of each part's restricted own cells)
//! and cycled on every part alike as the whole grid's hierarchy, and each part prolongs from it.
//! Every kernel computes a cell from the same values as on one GPU, so the cycle is the single
//! GPU's bit for bit.

use super::pressure::{box_args, odd_periodic};
use super::slab::GpuSlab;
use super::{BX, BY, CudaProjection, Work, cells3, grid_tile, grid2, ints3, pack_pbc};
use crate::backend::cuda::{Args, CudaError, DevBuf, Gpu, Graph, Stream};
use crate::solver::incompressible::pressure_poisson::{Laplacian, PartLevels, coarser};
use crate::solver::real::Real;
use std::sync::Arc;

/// On a part, coarse levels of fewer cells than this (64^3, the whole level's) are gathered
/// even where the slabs could be cut: their sweeps are too short to hide an exchange, and
/// cycling them whole on every GPU costs less (512^3 on 2 H100s: 22.5 ms a step against 24.3 ms
/// when cut while the slabs allow; BENCHMARKS.md).
const MIN_CUT_CELLS: usize = 1 << 18;

/// Where a level lies: on one GPU (or in a part's gathered hierarchy), or cut into slabs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cut {
    Whole,
    /// A part's finest level, the pressure's own: its sweeps overlap their exchange.
    Top,
    /// A part's coarser level cut into slabs: exchanged after each sweep.
    Coarse,
}

/// One level of the multigrid hierarchy: its operator, residual, correction and right-hand side.
pub(super) struct MgLevel<T, const D: usize> {
    pub(super) op: Laplacian<T, D>,
    pub(super) r: DevBuf<T>,
    pub(super) x: DevBuf<T>,
    pub(super) b: DevBuf<T>,
    cut: Cut,
    /// Along the last axis, the index in this level of the first child of the next level's
    /// cell 0 ([`crate::solver::incompressible::pressure_poisson::PartLevels`]; 0 on one GPU).
    offset: isize,
}

/// Below the finest level: the coarsest level's CG vectors (rhs, r, w, d, q), or on a part the
/// gathered level.
pub(super) enum MgCoarse<T, const D: usize> {
    Cg([DevBuf<T>; 5]),
    Gathered(Box<MgGathered<T, D>>),
}

/// A part's first level not cut ([`crate::solver::incompressible::pressure_poisson::GatheredLevel`]).
pub(super) struct MgGathered<T, const D: usize> {
    /// The whole grid's hierarchy from this level down, cycled on every part.
    levels: Vec<MgLevel<T, D>>,
    coarse: MgCoarse<T, D>,
    /// The part's own cells of the level and their restricted residual.
    owned: Laplacian<T, D>,
    owned_b: DevBuf<T>,
    /// Values each part contributes to the gather, in part order.
    counts: Vec<usize>,
    restrict_offset: isize,
    prolong_offset: isize,
}

/// The hierarchy below `op` on one GPU (multigrid.rs `Multigrid::new`): levels while they have
/// over 64 cells and coarsen, CG on the last. Level 0's `x` and `b` are the caller's unless
/// `own_top` (a part's gathered hierarchy).
fn whole_levels<T: Real, const D: usize>(
    gpu: &Arc<Gpu>,
    op: Laplacian<T, D>,
    own_top: bool,
) -> Result<(Vec<MgLevel<T, D>>, MgCoarse<T, D>), CudaError> {
    let mut levels = Vec::new();
    let mut cur = Some(op);
    while let Some(o) = cur {
        let m = o.len();
        let unknowns = if levels.is_empty() && !own_top { 1 } else { m };
        levels.push(MgLevel {
            op: o,
            r: gpu.alloc_zeros(m)?,
            x: gpu.alloc_zeros(unknowns)?,
            b: gpu.alloc_zeros(unknowns)?,
            cut: Cut::Whole,
            offset: 0,
        });
        cur = coarser(&o);
    }
    let m = levels.last().expect("one level").op.len();
    let cg = [(); 5].map(|_| gpu.alloc_zeros(m));
    let [a, b, c, d, e] = cg;
    Ok((levels, MgCoarse::Cg([a?, b?, c?, d?, e?])))
}

/// The multigrid workspace for the pressure operator `op`: the single GPU's hierarchy, or on a
/// part (`slab`) its cut levels and gathered hierarchy.
pub(super) fn hierarchy<T: Real, const D: usize>(
    gpu: &Arc<Gpu>,
    op: &Laplacian<T, D>,
    slab: Option<&GpuSlab<T>>,
) -> Result<Work<T, D>, CudaError> {
    let Some(s) = slab else {
        let (levels, coarse) = whole_levels(gpu, *op, false)?;
        return Ok(Work::Multigrid { levels, coarse });
    };
    let whole = s.whole.pressure_operator::<T, D>();
    let plan = PartLevels::new(*op, &whole, &s.link.slabs, s.link.rank(), MIN_CUT_CELLS);
    let levels = plan
        .cut
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let m = c.op.len();
            let unknowns = if k == 0 { 1 } else { m };
            Ok(MgLevel {
                op: c.op,
                r: gpu.alloc_zeros(m)?,
                x: gpu.alloc_zeros(unknowns)?,
                b: gpu.alloc_zeros(unknowns)?,
                cut: if k == 0 { Cut::Top } else { Cut::Coarse },
                offset: c.offset,
            })
        })
        .collect::<Result<Vec<_>, CudaError>>()?;
    let g = plan.gathered;
    let (whole_levels, coarse) = whole_levels(gpu, g.whole, true)?;
    let layer = g.owned.stride[D - 1];
    let counts = (0..g.slabs.parts())
        .map(|r| g.slabs.owned(r).len() * layer)
        .collect();
    Ok(Work::Multigrid {
        levels,
        coarse: MgCoarse::Gathered(Box::new(MgGathered {
            levels: whole_levels,
            coarse,
            owned: g.owned,
            owned_b: gpu.alloc_zeros(g.owned.len())?,
            counts,
            restrict_offset: g.restrict_offset,
            prolong_offset: g.prolong_offset,
        })),
    })
}

impl<T: Real, const D: usize> CudaProjection<T, D> {
    /// One V-cycle for the pressure, `L p = rhs`: replayed from a captured graph when graphs are
    /// on (its 8 launches per level cost more than the coarse levels' work), else launched
    /// kernel by kernel. A failed capture falls back to direct launches with one warning. A
    /// part launches its cycle directly (its NCCL calls are not captured).
    pub(super) fn top_v_cycle(&mut self) -> Result<(), CudaError> {
        if self.slab.is_some() {
            return self.launched_v_cycle();
        }
        if self.graphs && self.v_cycle_graph.is_none() {
            self.v_cycle_graph =
                Graph::capture_or_warn(&self.gpu, "the multigrid V-cycle", || self.launched_v_cycle());
            self.graphs = self.v_cycle_graph.is_some();
        }
        match &self.v_cycle_graph {
            Some(g) => g.launch(),
            None => self.launched_v_cycle(),
        }
    }

    /// One V-cycle for the pressure, launched kernel by kernel.
    pub(super) fn launched_v_cycle(&self) -> Result<(), CudaError> {
        let Work::Multigrid { levels, coarse } = &self.work else {
            unreachable!("v_cycle with a multigrid workspace only")
        };
        self.v_cycle(levels, coarse, 0, self.p.ptr, self.rhs.ptr)
    }

    /// One V-cycle on level `k` of `levels` for `L x = b` (multigrid.rs `v_cycle`).
    fn v_cycle(
        &self,
        levels: &[MgLevel<T, D>],
        coarse: &MgCoarse<T, D>,
        k: usize,
        x: u64,
        b: u64,
    ) -> Result<(), CudaError> {
        let level = &levels[k];
        let op = level.op;
        let last = k + 1 == levels.len();
        if let (true, MgCoarse::Cg(cg)) = (last, coarse) {
            let tol = T::of(1e-6).max(T::epsilon() * T::of(100.0));
            // One block; few threads for the tiny coarsest grids (the solve is latency-bound).
            let threads = (op.len() as u32).div_ceil(32).clamp(1, 8) * 32;
            let a = cg.iter().fold(Args::new().l(x as i64).l(b as i64), |a, v| a.p(v));
            return self.launch(
                &self.poisson_kernels,
                "coarse_cg",
                (1, 1, 1),
                (threads, 1, 1),
                box_args(a, &op).i(op.singular() as i64).r(tol),
            );
        }
        let r = level.r.ptr;
        self.smooth(level, x, r, b, 0)?;
        self.residual(&op, x, b, r, false, 0)?;
        match (levels.get(k + 1), coarse) {
            (Some(c), _) => {
                self.restrict(&op, r, &c.op, c.b.ptr, level.offset)?;
                if c.cut != Cut::Whole {
                    // The smoother reads it beyond the own layers.
                    self.exchange_level(&c.op, c.b.ptr)?;
                }
                self.gpu.memset_zero(&c.x)?;
                self.v_cycle(levels, coarse, k + 1, c.x.ptr, c.b.ptr)?;
                self.prolong(&c.op, c.x.ptr, &op, x, level.offset)?;
            }
            (None, MgCoarse::Gathered(g)) => {
                let s = self.slab.as_ref().expect("a part");
                let top = &g.levels[0];
                self.restrict(&op, r, &g.owned, g.owned_b.ptr, g.restrict_offset)?;
                s.all_gather(g.owned_b.ptr, &g.counts, &top.b)?;
                self.gpu.memset_zero(&top.x)?;
                self.v_cycle(&g.levels, &g.coarse, 0, top.x.ptr, top.b.ptr)?;
                self.prolong(&top.op, top.x.ptr, &op, x, g.prolong_offset)?;
            }
            (None, MgCoarse::Cg(_)) => unreachable!("the CG level is the last"),
        }
        if level.cut != Cut::Whole {
            self.exchange_level(&op, x)?;
        }
        self.smooth(level, x, r, b, 1)
    }

    /// `coarse_b` = the mean of the children of `fine_r` (kernel restrict_mean); along the last
    /// axis the first child of coarse cell `k` is fine cell `2 k + offset`.
    fn restrict(
        &self,
        fine: &Laplacian<T, D>,
        fine_r: u64,
        coarse: &Laplacian<T, D>,
        coarse_b: u64,
        offset: isize,
    ) -> Result<(), CudaError> {
        self.launch(
            &self.poisson_kernels,
            "restrict_mean",
            grid2(cells3(coarse.n)),
            (BX, BY, 1),
            Args::new()
                .l(fine_r as i64)
                .l(coarse_b as i64)
                .is(&ints3(fine.n))
                .is(&ints3(coarse.n))
                .i(offset as i64),
        )
    }

    /// `x += prolongation of e` (kernel prolong_add, [`Self::restrict`]'s offset).
    fn prolong(
        &self,
        coarse: &Laplacian<T, D>,
        e: u64,
        fine: &Laplacian<T, D>,
        x: u64,
        offset: isize,
    ) -> Result<(), CudaError> {
        self.launch(
            &self.poisson_kernels,
            "prolong_add",
            grid2(cells3(fine.n)),
            (BX, BY, 1),
            Args::new()
                .l(e as i64)
                .l(x as i64)
                .is(&ints3(coarse.n))
                .is(&ints3(fine.n))
                .i(pack_pbc(coarse))
                .i(offset as i64),
        )
    }

    /// Refreshes the layers of the level array `x` (of operator `op`) this part stores but does
    /// not own.
    fn exchange_level(&self, op: &Laplacian<T, D>, x: u64) -> Result<(), CudaError> {
        let s = self.slab.as_ref().expect("a part");
        s.exchange_at(Stream::Compute, &[x], op.len(), op.stride[D - 1], 0)
    }

    /// The multigrid smoother: two red-black Gauss-Seidel sweeps (colour `first`, then the
    /// other) of `L x = b` on `level`, result in `x`. In 2D each sweep is one fused two-colour
    /// launch, from `x` to `scratch` and back; 3D grids and odd periodic sizes take the
    /// single-colour sweeps (with the serial seam cells) instead, and on a part each sweep
    /// refreshes the layers the part does not own once, after both colours (the first colour's
    /// values next to the own layers are their owner's: `CudaProjection::red_black_exchanged`).
    fn smooth(
        &self,
        level: &MgLevel<T, D>,
        x: u64,
        scratch: u64,
        b: u64,
        first: i64,
    ) -> Result<(), CudaError> {
        let op = &level.op;
        if D == 3 || odd_periodic(op) || level.cut != Cut::Whole {
            for _ in 0..2 {
                match level.cut {
                    Cut::Top => self.red_black_exchanged(x, b, first, T::one(), 0)?,
                    Cut::Whole | Cut::Coarse => {
                        for colour in [first, 1 - first] {
                            self.colour(op, x, b, colour, T::one(), 0)?;
                        }
                        if level.cut == Cut::Coarse {
                            self.exchange_level(op, x)?;
                        }
                    }
                }
            }
            return Ok(());
        }
        self.rb_sweep(op, x, scratch, b, first)?;
        self.rb_sweep(op, scratch, x, b, first)
    }

    /// One fused red-black sweep `dst = sweep(src)` (kernel rb_sweep, omega 1; 2D).
    pub(super) fn rb_sweep(
        &self,
        op: &Laplacian<T, D>,
        src: u64,
        dst: u64,
        b: u64,
        first: i64,
    ) -> Result<(), CudaError> {
        let a = Args::new().l(src as i64).l(dst as i64).l(b as i64).null();
        self.launch(
            &self.poisson_kernels,
            "rb_sweep",
            grid_tile(cells3(op.n)),
            (BX, BY, 1),
            box_args(a, op).i(first).r(T::one()),
        )
    }
}
