//! The multigrid pressure solve on the device (pressure_poisson/multigrid.rs): the hierarchy's
//! levels, the V-cycle (as a CUDA graph when graphs are on) and its red-black smoother.

use super::pressure::{box_args, odd_periodic};
use super::{BX, BY, CudaProjection, Work, cells3, grid_tile, grid2, ints3, pack_pbc};
use crate::backend::cuda::{Args, CudaError, DevBuf, Graph};
use crate::solver::incompressible::pressure_poisson::Laplacian;
use crate::solver::real::Real;

/// One level of the multigrid hierarchy: its operator, residual, correction and right-hand side.
pub(super) struct MgLevel<T, const D: usize> {
    pub(super) op: Laplacian<T, D>,
    pub(super) r: DevBuf<T>,
    pub(super) x: DevBuf<T>,
    pub(super) b: DevBuf<T>,
}

impl<T: Real, const D: usize> CudaProjection<T, D> {
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
            let a = cg.iter().fold(Args::new().l(x as i64).l(b as i64), |a, v| a.p(v));
            return self.kq(
                "coarse_cg",
                (1, 1, 1),
                (threads, 1, 1),
                box_args(a, &op).i(op.singular() as i64).r(tol),
            );
        }
        let r = levels[k].r.ptr;
        self.smooth(&op, x, r, b, 0)?;
        let c = &levels[k + 1];
        self.residual(&op, x, b, r, false, 0)?;
        self.kq(
            "restrict_mean",
            grid2(cells3(c.op.n)),
            (BX, BY, 1),
            Args::new()
                .p(&levels[k].r)
                .p(&c.b)
                .i(op.n[0] as i64)
                .i(op.n[1] as i64)
                .is(&ints3(c.op.n)),
        )?;
        self.gpu.memset_zero(&c.x)?;
        self.v_cycle(k + 1, c.x.ptr, c.b.ptr)?;
        self.kq(
            "prolong_add",
            grid2(cells3(op.n)),
            (BX, BY, 1),
            Args::new()
                .p(&c.x)
                .l(x as i64)
                .is(&ints3(c.op.n))
                .is(&ints3(op.n))
                .i(pack_pbc(&c.op)),
        )?;
        self.smooth(&op, x, r, b, 1)
    }

    /// The multigrid smoother: two red-black Gauss-Seidel sweeps (colour `first`, then the
    /// other) of `L x = b`, result in `x`. In 2D each sweep is one fused two-colour launch, from
    /// `x` to `scratch` and back; 3D grids and odd periodic sizes take the single-colour sweeps
    /// (with the serial seam cells) instead.
    fn smooth(
        &self,
        op: &Laplacian<T, D>,
        x: u64,
        scratch: u64,
        b: u64,
        first: i64,
    ) -> Result<(), CudaError> {
        if D == 3 || odd_periodic(op) {
            for _ in 0..2 {
                self.colour(op, x, b, first, T::one(), 0)?;
                self.colour(op, x, b, 1 - first, T::one(), 0)?;
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
        self.kq(
            "rb_sweep",
            grid_tile(cells3(op.n)),
            (BX, BY, 1),
            box_args(a, op).i(first).r(T::one()),
        )
    }
}
