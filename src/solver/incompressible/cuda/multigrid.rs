//! The multigrid pressure solve on the device (pressure_poisson/multigrid.rs): the hierarchy's
//! levels, the V-cycle (as a CUDA graph when graphs are on) and its red-black smoother.

use super::{BX, BY, CudaProjection, Work, grid_tile, grid2, pack_pbc};
use crate::backend::cuda::{Args, CudaError, DevBuf, Graph};
use crate::solver::incompressible::pressure_poisson::{FaceBc, Laplacian};
use crate::solver::real::Real;

/// One level of the multigrid hierarchy: its operator, residual, correction and right-hand side.
pub(super) struct MgLevel<T> {
    pub(super) op: Laplacian<T, 2>,
    pub(super) r: DevBuf<T>,
    pub(super) x: DevBuf<T>,
    pub(super) b: DevBuf<T>,
}

impl<T: Real> CudaProjection<T> {
    /// One V-cycle for the pressure, `L p = rhs`: replayed from a captured graph when graphs are
    /// on (its 8 launches per level cost more than the coarse levels' work), else launched
    /// kernel by kernel. A failed capture falls back to direct launches with one warning.
    pub(super) fn top_v_cycle(&mut self) -> Result<(), CudaError> {
        let (p, rhs) = (self.p.ptr, self.rhs.ptr);
        if self.graphs && self.v_cycle_graph.is_none() {
            match Graph::capture(&self.gpu, || self.v_cycle(0, p, rhs)) {
                Ok(g) => self.v_cycle_graph = Some(g),
                Err(e) => {
                    log::warn!(
                        "capturing the multigrid V-cycle as a CUDA graph failed ({e}); launching it kernel by kernel"
                    );
                    self.graphs = false;
                }
            }
        }
        match &self.v_cycle_graph {
            Some(g) => g.launch(),
            None => self.v_cycle(0, p, rhs),
        }
    }

    /// One V-cycle on level `k` for `L x = b` (multigrid.rs `v_cycle`).
    pub(super) fn v_cycle(&self, k: usize, x: u64, b: u64) -> Result<(), CudaError> {
        let Work::Multigrid { levels, cg } = &self.work else {
            unreachable!("v_cycle with a multigrid workspace only")
        };
        let op = levels[k].op;
        if k + 1 == levels.len() {
            let tol = T::of(1e-6).max(T::epsilon() * T::of(100.0));
            // One block; few threads for the tiny coarsest grids (the solve is latency-bound).
            let threads = (op.len() as u32).div_ceil(32).clamp(1, 8) * 32;
            return self.kq(
                "coarse_cg",
                (1, 1, 1),
                (threads, 1, 1),
                Args::new()
                    .l(x as i64)
                    .l(b as i64)
                    .p(&cg[0])
                    .p(&cg[1])
                    .p(&cg[2])
                    .p(&cg[3])
                    .p(&cg[4])
                    .i(op.n[0] as i64)
                    .i(op.n[1] as i64)
                    .i(pack_pbc(&op))
                    .r(op.ih2[0])
                    .r(op.ih2[1])
                    .i(op.singular() as i64)
                    .r(tol),
            );
        }
        let r = levels[k].r.ptr;
        self.smooth(&op, x, r, b, 0)?;
        let c = &levels[k + 1];
        self.residual(&op, x, b, r, false, 0)?;
        self.kq(
            "restrict_mean",
            grid2(c.op.n[0], c.op.n[1]),
            (BX, BY, 1),
            Args::new()
                .p(&levels[k].r)
                .p(&c.b)
                .i(op.n[0] as i64)
                .i(c.op.n[0] as i64)
                .i(c.op.n[1] as i64),
        )?;
        self.gpu.memset_zero(&c.x)?;
        self.v_cycle(k + 1, c.x.ptr, c.b.ptr)?;
        self.kq(
            "prolong_add",
            grid2(op.n[0], op.n[1]),
            (BX, BY, 1),
            Args::new()
                .p(&c.x)
                .l(x as i64)
                .i(c.op.n[0] as i64)
                .i(c.op.n[1] as i64)
                .i(op.n[0] as i64)
                .i(op.n[1] as i64)
                .i(pack_pbc(&c.op)),
        )?;
        self.smooth(&op, x, r, b, 1)
    }

    /// The multigrid smoother: two red-black Gauss-Seidel sweeps (colour `first`, then the
    /// other) of `L x = b`, result in `x`. Each sweep is one fused two-colour launch, from `x`
    /// to `scratch` and back; odd periodic sizes take the single-colour sweeps with their serial
    /// seam cells instead.
    fn smooth(
        &self,
        op: &Laplacian<T, 2>,
        x: u64,
        scratch: u64,
        b: u64,
        first: i64,
    ) -> Result<(), CudaError> {
        let odd_periodic = (op.n[0] % 2 == 1 && op.bc[0][0] == FaceBc::Periodic)
            || (op.n[1] % 2 == 1 && op.bc[1][0] == FaceBc::Periodic);
        if odd_periodic {
            for _ in 0..2 {
                self.colour(op, x, b, first, T::one(), 0)?;
                self.colour(op, x, b, 1 - first, T::one(), 0)?;
            }
            return Ok(());
        }
        self.rb_sweep(op, x, scratch, b, first)?;
        self.rb_sweep(op, scratch, x, b, first)
    }

    /// One fused red-black sweep `dst = sweep(src)` (kernel rb_sweep, omega 1).
    pub(super) fn rb_sweep(
        &self,
        op: &Laplacian<T, 2>,
        src: u64,
        dst: u64,
        b: u64,
        first: i64,
    ) -> Result<(), CudaError> {
        self.kq(
            "rb_sweep",
            grid_tile(op.n[0], op.n[1]),
            (BX, BY, 1),
            Args::new()
                .l(src as i64)
                .l(dst as i64)
                .l(b as i64)
                .null()
                .i(op.n[0] as i64)
                .i(op.n[1] as i64)
                .i(pack_pbc(op))
                .r(op.ih2[0])
                .r(op.ih2[1])
                .i(first)
                .r(T::one()),
        )
    }
}
