//! One step's kernels outside the pressure solve: the clock's `dt` and health check, the
//! predictor, the Poisson right-hand side, the correction with its statistics and ghosts, and
//! the speed maxima.

use super::rotor::AllGather;
use super::slab::Partials;
use super::{BX, BY, CudaProjection, blocks_tile, faces3, fill_ghosts, grid_plane, grid_tile, ints3, pad3};
use crate::backend::cuda::{Args, CudaError, DevBuf, Stream, limiter_code};
use crate::case::{Boundary, Convection, TimeIntegrator};
use crate::solver::incompressible::opening::opening_sides;
use crate::solver::incompressible::staggered::fill_velocity_ghosts;
use crate::solver::real::Real;

/// The predictor kernel with convection scheme `c` compiled in (`predict_*` of
/// kernels/projection.cu).
fn predictor_kernel(c: Convection) -> &'static str {
    match c {
        Convection::Central => "predict_central",
        Convection::Upwind => "predict_upwind",
        Convection::Tvd => "predict_tvd",
        Convection::Quick => "predict_quick",
        Convection::PowerLaw => unreachable!("Config::from_spec rejects power_law for the projection method"),
    }
}

impl<T: Real, const D: usize> CudaProjection<T, D> {
    /// The layout's sizes and periodic flags as the kernels take them (`STAG_PARAMS`).
    fn layout_args(&self, a: Args) -> Args {
        a.is(&ints3(self.l.n))
            .is(&pad3(self.l.periodic.map(i64::from), 0))
    }

    /// Enqueues the max speeds of a state not made by a step (`max_speed`) into `sc`.
    pub(super) fn max_speeds(&self) -> Result<(), CudaError> {
        let a = Args::new().axes(self.vel_ptrs()).p(&self.part_b);
        self.launch(
            &self.projection_kernels,
            "max_speed",
            grid_tile(faces3(self.l.n)),
            (BX, BY, 1),
            self.layout_args(a).p(&self.ctrl),
        )?;
        self.finalize(false)
    }

    /// The block maxima of the speeds (`max_speed`'s or `correct`'s, `D` runs in `part_b`) as
    /// `step_dt` and `step_finalize` read them: on a part, gathered from all parts into the
    /// slab's buffer, where they stay until the next step's `dt`.
    fn speed_partials(&self) -> Result<(u64, usize), CudaError> {
        self.partials(&self.part_b, Partials::Faces { segments: D }, true, false)
    }

    /// Combines the block maxima (of `max_speed` or `correct`) and, after a correction, its
    /// change sums in `part_a`, into `sc` (`step_finalize`).
    fn finalize(&self, after_correct: bool) -> Result<(), CudaError> {
        let (pm, nm) = self.speed_partials()?;
        let (pc, nc) = if after_correct {
            self.partials(&self.part_a, Partials::Faces { segments: 2 }, false, false)?
        } else {
            (self.part_a.ptr, 0)
        };
        self.launch(
            &self.projection_kernels,
            "step_finalize",
            (1, 1, 1),
            (1024, 1, 1),
            Args::new()
                .l(pc as i64)
                .i(nc as i64)
                .l(pm as i64)
                .i(nm as i64)
                .p(&self.sc)
                .p(&self.ctrl),
        )
    }

    /// The step's health check, `dt` and AB2 weights, into the clock, from the speed maxima
    /// in `part_b` (`step_dt`: config.rs `check_health` and `time_step` on the device).
    pub(super) fn step_dt(&self) -> Result<(), CudaError> {
        let lim = self.whole_config().step_limits();
        // On a part, the maxima its last correction gathered.
        let (pm, nm) = match &self.slab {
            Some(s) => (s.maxima.ptr, self.whole_face_layers()),
            None => (self.part_b.ptr, blocks_tile(faces3(self.l.n))),
        };
        self.launch(
            &self.projection_kernels,
            "step_dt",
            (1, 1, 1),
            (1024, 1, 1),
            Args::new()
                .p(&self.clock)
                .p(&self.ctrl)
                .l(pm as i64)
                .i(nm as i64)
                .p(&self.sc)
                .r(lim.viscous)
                .rs(&lim.h)
                .r(lim.wall)
                .r(lim.cell_reynolds.unwrap_or(0.0))
                .i(lim.cell_reynolds.is_some() as i64)
                .r(lim.cfl)
                .r(self.cfg.blow_up_limit())
                .i(matches!(self.cfg.integrator, TimeIntegrator::Ab2) as i64),
        )
    }

    /// Whether `poisson_rhs` sets F's boundary faces ([`Self::rhs`]), so that the step has no
    /// `predictor_boundaries` launch: on one GPU in 2D. In 3D many tiles touch a side (28 of the
    /// 64 of each 256^2 plane, and the first and last planes whole), and there the boundary work
    /// measured slower than the launch it saves (H200, 256^3 f32: `poisson_rhs` 76 -> 123 µs, a
    /// step 1.308 -> 1.340 ms).
    fn rhs_sets_boundaries(&self) -> bool {
        D == 2 && self.slab.is_none()
    }

    /// Predictor (with the rotor's sources, evaluated first in the velocity of the step's
    /// start; dt and the AB2 weights from the clock) and, unless [`Self::rhs_sets_boundaries`],
    /// its boundary faces (`predictor_boundaries`).
    pub(super) fn predict_only(&self) -> Result<(), CudaError> {
        let c = &self.cfg;
        let l = self.l;
        let h: [T; D] = std::array::from_fn(|a| T::of(c.grid.spacing[a]));
        let (ih, ih2) = (h.map(|h| T::one() / h), h.map(|h| T::one() / (h * h)));
        let hi: [i64; D] = std::array::from_fn(|a| *l.unknowns(a).end() as i64);
        let source: Vec<u64> = match &self.rotor {
            Some(r) => {
                let all_gather = self.slab.as_ref().map(|s| {
                    move |mine: u64, counts: &[usize], all: &DevBuf<f64>| s.all_gather(mine, counts, all)
                });
                r.enqueue(&self.gpu, all_gather.as_ref().map(|g| g as AllGather))?;
                r.accel_ptrs().collect()
            }
            None => Vec::new(),
        };
        let a = Args::new()
            .axes(self.vel_ptrs())
            .axes(self.pred.iter().map(|b| b.ptr))
            .axes(self.hist.iter().map(|b| b.ptr))
            .axes(source);
        let args = self
            .layout_args(a)
            .is(&pad3(hi, 0))
            .i(limiter_code(c.limiter))
            .rs(&pad3(ih, T::one()))
            .rs(&pad3(ih2, T::zero()))
            .r(T::of(c.nu))
            .i(matches!(c.integrator, TimeIntegrator::Ab2) as i64)
            .p(&self.clock)
            .p(&self.ctrl);
        self.launch(
            &self.projection_kernels,
            predictor_kernel(c.convection),
            grid_tile(faces3(l.n)),
            (BX, BY, 1),
            args,
        )?;
        if self.rhs_sets_boundaries() {
            return Ok(());
        }
        let a = Args::new()
            .axes(self.vel_ptrs())
            .axes(self.pred.iter().map(|b| b.ptr))
            .p(&self.bck);
        self.launch(
            &self.projection_kernels,
            "predictor_boundaries",
            grid_plane::<D>(l.n.into_iter().max().unwrap_or(1)),
            (super::B1, 1, 1),
            self.layout_args(a).p(&self.ctrl),
        )
    }

    /// `div(F) / dt`, with the opening sides' held pressures, into `out`: in natural order
    /// (`pack` < 0), or reordered for the transform solve with its packing code `pack`
    /// (`poisson_rhs`), and with `stats` (a batch's last step) in natural order into `rhs` too,
    /// the statistics' copy. With [`Self::rhs_sets_boundaries`] it first sets F's boundary faces.
    /// Only the reordered one without `stats`, a part of the batched step, obeys the halt flag:
    /// the natural one serves the iterative solvers (whose steps the host checks first) and the
    /// statistics, which a halted batch takes from its last completed step (its F and velocity
    /// are left as they were, and its reordered copy is not read).
    pub(super) fn rhs(&self, out: u64, pack: i64, stats: bool) -> Result<(), CudaError> {
        let l = self.l;
        let c = &self.cfg;
        let halt = if pack >= 0 && !stats { self.ctrl.ptr } else { 0 };
        let natural = if stats { self.rhs.ptr } else { 0 };
        let boundaries = if self.rhs_sets_boundaries() {
            self.bck.ptr
        } else {
            0
        };
        let ih: [T; D] = std::array::from_fn(|a| T::of(1.0 / c.grid.spacing[a]));
        self.launch(
            &self.projection_kernels,
            "poisson_rhs",
            grid_tile(super::cells3(l.n)),
            (BX, BY, 1),
            Args::new()
                .axes(self.pred.iter().map(|b| b.ptr))
                .axes(self.vel_ptrs())
                .i(opening_sides(&c.bc) as i64)
                .l(boundaries as i64)
                .l(out as i64)
                .l(natural as i64)
                .is(&ints3(l.n))
                .rs(&pad3(ih, T::zero()))
                .p(&self.clock)
                .l(halt as i64)
                .i(pack),
        )
    }

    /// Correction (from `p`, or from the transform solve's reordered solution `(v, packing code)`,
    /// which it also unpacks into `p`) and ghosts. The speed maxima stay in `part_b` for the
    /// next `step_dt`; with `stats` (a step whose scalars the host reads) the steady-change sums
    /// and the maxima are combined into `sc` too.
    pub(super) fn correct(&self, packed: Option<(u64, i64)>, stats: bool) -> Result<(), CudaError> {
        self.correct_kernel(packed, stats)?;
        self.velocity_ghosts()?;
        if stats {
            self.finalize(true)
        } else if self.slab.is_some() {
            // The next step's dt reads every part's maxima.
            self.speed_partials().map(|_| ())
        } else {
            Ok(())
        }
    }

    /// The velocity's boundary faces and ghosts and, on a part, the layers it stores but does
    /// not own, from their owners.
    pub(super) fn velocity_ghosts(&self) -> Result<(), CudaError> {
        fill_ghosts(
            &self.gpu,
            &self.projection_kernels,
            &self.l,
            self.vel.each_ref(),
            (&self.bck, &self.bcv),
            Some(&self.ctrl),
            self.starts_early(),
        )?;
        if let Some(s) = &self.slab {
            let vel = self.vel.each_ref().map(|v| v.ptr);
            s.exchange_at(Stream::Compute, &vel, self.l.len(), self.l.stride[D - 1], 1)?;
        }
        Ok(())
    }

    /// For the GPU tests: each velocity component's ghosts and boundary faces filled on the device
    /// (`ghosts`, every axis in one launch) and, from the same values, on the host
    /// (`fill_velocity_ghosts`, axis by axis), as (device, host). One GPU; the device's velocity
    /// stays filled.
    pub fn ghosts_on_device_and_host(&self) -> Result<Vec<(Vec<T>, Vec<T>)>, CudaError> {
        let mut host: [Vec<T>; D] = std::array::from_fn(|_| Vec::new());
        for (h, b) in host.iter_mut().zip(&self.vel) {
            *h = self.gpu.download(b)?;
        }
        fill_velocity_ghosts(&self.l, &self.cfg.bc, host.each_mut().map(|v| &mut v[..]));
        self.velocity_ghosts()?;
        let mut out = Vec::with_capacity(D);
        for (b, h) in self.vel.iter().zip(host) {
            out.push((self.gpu.download(b)?, h));
        }
        Ok(out)
    }

    /// `u = F - dt grad p` with the speed maxima and, with `stats`, the steady-change sums (dt
    /// from the clock).
    pub(super) fn correct_kernel(&self, packed: Option<(u64, i64)>, stats: bool) -> Result<(), CudaError> {
        let (v, pack) = packed.unwrap_or((0, -1));
        let l = self.l;
        let out = Boundary::is_open;
        // The corrected range of component c along axis c (projection.rs `correct`).
        let range: Vec<i64> = (0..D)
            .flat_map(|c| {
                let bc = &self.cfg.bc[c];
                [
                    if out(&bc[0]) { 0 } else { 1 },
                    (*l.unknowns(c).end() + out(&bc[1]) as usize) as i64,
                ]
            })
            .chain(std::iter::repeat(0))
            .take(6)
            .collect();
        let a = Args::new()
            .axes(self.vel_ptrs())
            .axes(self.pred.iter().map(|b| b.ptr))
            .i(opening_sides(&self.cfg.bc) as i64)
            .p(&self.p)
            .l(v as i64)
            .i(pack)
            .i(stats as i64)
            .p(&self.part_a)
            .p(&self.part_b);
        let spacing: [f64; D] = std::array::from_fn(|a| self.cfg.grid.spacing[a]);
        self.launch(
            &self.projection_kernels,
            "correct",
            grid_tile(faces3(l.n)),
            (BX, BY, 1),
            self.layout_args(a)
                .is(&range)
                .rs(&pad3(spacing, 1.0))
                .p(&self.clock)
                .p(&self.ctrl),
        )
    }
}
