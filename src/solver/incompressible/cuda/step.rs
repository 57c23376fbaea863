//! One step's kernels outside the pressure solve: the clock's `dt` and health check, the
//! predictor, the Poisson right-hand side, the correction with its statistics and ghosts, and
//! the speed maxima.

use super::{B1, BX, BY, CudaProjection, blocks_tile, fill_ghosts, grid_tile, grid1};
use crate::backend::cuda::{Args, CudaError, limiter_code};
use crate::case::{Boundary, Convection, TimeIntegrator};
use crate::solver::real::Real;

fn convection_code(c: Convection) -> i64 {
    match c {
        Convection::Central => 0,
        Convection::Upwind => 1,
        Convection::Tvd => 2,
        Convection::Quick => 3,
        Convection::PowerLaw => unreachable!("Config::from_spec rejects power_law for the projection method"),
    }
}

impl<T: Real> CudaProjection<T> {
    /// Enqueues the max speeds of a state not made by a step (`max_speed`) into `sc`.
    pub(super) fn max_speeds(&self) -> Result<(), CudaError> {
        let l = self.l;
        self.kp(
            "max_speed",
            grid_tile(l.n[0] + 1, l.n[1] + 1),
            (BX, BY, 1),
            Args::new()
                .p(&self.u)
                .p(&self.v)
                .p(&self.part_b)
                .i(l.n[0] as i64)
                .i(l.n[1] as i64)
                .i(l.periodic[0] as i64)
                .i(l.periodic[1] as i64)
                .p(&self.ctrl),
        )?;
        self.finalize(false)
    }

    /// Combines the block maxima in `part_b` (of `max_speed` or `correct`) and, after a
    /// correction, its change sums in `part_a`, into `sc` (`step_finalize`).
    fn finalize(&self, after_correct: bool) -> Result<(), CudaError> {
        let nb = blocks_tile(self.l.n[0] + 1, self.l.n[1] + 1);
        self.kp(
            "step_finalize",
            (1, 1, 1),
            (1024, 1, 1),
            Args::new()
                .p(&self.part_a)
                .i(if after_correct { nb as i64 } else { 0 })
                .p(&self.part_b)
                .i(nb as i64)
                .p(&self.sc)
                .p(&self.ctrl),
        )
    }

    /// The step's health check, `dt` and AB2 weights, into the clock, from the speed maxima
    /// in `part_b` (`step_dt`: config.rs `check_health` and `time_step` on the device).
    pub(super) fn step_dt(&self) -> Result<(), CudaError> {
        let lim = self.cfg.step_limits();
        self.kp(
            "step_dt",
            (1, 1, 1),
            (1024, 1, 1),
            Args::new()
                .p(&self.clock)
                .p(&self.ctrl)
                .p(&self.part_b)
                .i(blocks_tile(self.l.n[0] + 1, self.l.n[1] + 1) as i64)
                .p(&self.sc)
                .r(lim.viscous)
                .r(lim.h[0])
                .r(lim.h[1])
                .r(lim.wall)
                .r(lim.cell_reynolds.unwrap_or(0.0))
                .i(lim.cell_reynolds.is_some() as i64)
                .r(lim.cfl)
                .r(self.cfg.blow_up_limit())
                .i(matches!(self.cfg.integrator, TimeIntegrator::Ab2) as i64),
        )
    }

    /// Predictor and its boundary faces (dt and the AB2 weights from the clock).
    pub(super) fn predict_only(&self) -> Result<(), CudaError> {
        let c = &self.cfg;
        let l = self.l;
        let (dx, dy) = (T::of(c.grid.spacing[0]), T::of(c.grid.spacing[1]));
        let (idx2, idy2) = (T::one() / (dx * dx), T::one() / (dy * dy));
        let args = Args::new()
            .p(&self.u)
            .p(&self.v)
            .p(&self.f)
            .p(&self.g)
            .p(&self.hu)
            .p(&self.hv)
            .i(l.n[0] as i64)
            .i(l.n[1] as i64)
            .i(l.periodic[0] as i64)
            .i(l.periodic[1] as i64)
            .i(*l.unknowns(0).end() as i64)
            .i(*l.unknowns(1).end() as i64)
            .i(convection_code(c.convection))
            .i(limiter_code(c.limiter))
            .r(dx)
            .r(dy)
            .r(idx2)
            .r(idy2)
            .r(T::of(c.nu))
            .i(matches!(c.integrator, TimeIntegrator::Ab2) as i64)
            .p(&self.clock)
            .p(&self.ctrl);
        self.kp("predict", grid_tile(l.n[0] + 1, l.n[1] + 1), (BX, BY, 1), args)?;
        self.kp(
            "predictor_boundaries",
            grid1(l.n[0].max(l.n[1]) + 1),
            (B1, 1, 1),
            Args::new()
                .p(&self.u)
                .p(&self.v)
                .p(&self.f)
                .p(&self.g)
                .p(&self.bck)
                .i(l.n[0] as i64)
                .i(l.n[1] as i64)
                .p(&self.ctrl),
        )
    }

    /// `div(F, G) / dt` into `out`: in natural order (`pack` < 0), or reordered for the transform
    /// solve with its flip bits `pack` (`poisson_rhs`). Only the
    /// reordered one, a part of the batched step, obeys the halt flag: the natural one serves
    /// the iterative solvers (whose steps the host checks first) and the statistics of the last
    /// completed step of a batch.
    pub(super) fn rhs(&self, out: u64, pack: i64) -> Result<(), CudaError> {
        let l = self.l;
        let c = &self.cfg;
        let halt = if pack >= 0 { self.ctrl.ptr } else { 0 };
        self.kp(
            "poisson_rhs",
            grid_tile(l.n[0], l.n[1]),
            (BX, BY, 1),
            Args::new()
                .p(&self.f)
                .p(&self.g)
                .l(out as i64)
                .i(l.n[0] as i64)
                .i(l.n[1] as i64)
                .r(T::of(1.0 / c.grid.spacing[0]))
                .r(T::of(1.0 / c.grid.spacing[1]))
                .p(&self.clock)
                .l(halt as i64)
                .i(pack),
        )
    }

    /// Correction (from `p`, or from the transform solve's reordered solution `(v, flip bits)`,
    /// which it also unpacks into `p`) and ghosts. The speed maxima stay in `part_b` for the
    /// next `step_dt`; with `stats` (a step whose scalars the host reads) the steady-change sums
    /// and the maxima are combined into `sc` too.
    pub(super) fn correct(&self, packed: Option<(u64, i64)>, stats: bool) -> Result<(), CudaError> {
        self.correct_kernel(packed, stats)?;
        fill_ghosts(
            &self.gpu,
            &self.mp,
            &self.l,
            &self.u,
            &self.v,
            (&self.bck, &self.bcv),
            Some(&self.ctrl),
        )?;
        if stats {
            self.finalize(true)?;
        }
        Ok(())
    }

    /// `u = F - dt grad p` with the speed maxima and, with `stats`, the steady-change sums (dt
    /// from the clock).
    pub(super) fn correct_kernel(&self, packed: Option<(u64, i64)>, stats: bool) -> Result<(), CudaError> {
        let (v, pack) = packed.unwrap_or((0, -1));
        let l = self.l;
        let bc = &self.cfg.bc;
        let out = |b: &Boundary| matches!(b, Boundary::Outflow {});
        let (i_lo, i_hi) = (
            if out(&bc[0][0]) { 0 } else { 1 },
            *l.unknowns(0).end() + out(&bc[0][1]) as usize,
        );
        let (j_lo, j_hi) = (
            if out(&bc[1][0]) { 0 } else { 1 },
            *l.unknowns(1).end() + out(&bc[1][1]) as usize,
        );
        self.kp(
            "correct",
            grid_tile(l.n[0] + 1, l.n[1] + 1),
            (BX, BY, 1),
            Args::new()
                .p(&self.u)
                .p(&self.v)
                .p(&self.f)
                .p(&self.g)
                .p(&self.p)
                .l(v as i64)
                .i(pack)
                .i(stats as i64)
                .p(&self.part_a)
                .p(&self.part_b)
                .i(l.n[0] as i64)
                .i(l.n[1] as i64)
                .i(l.periodic[0] as i64)
                .i(l.periodic[1] as i64)
                .i(i_lo as i64)
                .i(i_hi as i64)
                .i(j_lo as i64)
                .i(j_hi as i64)
                .r(self.cfg.grid.spacing[0])
                .r(self.cfg.grid.spacing[1])
                .p(&self.clock)
                .p(&self.ctrl),
        )
    }
}
