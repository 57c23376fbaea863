//! The iterative pressure solves on the device (pressure_poisson/ `jacobi.rs`, `red_black.rs`,
//! `pcg.rs`; multigrid's cycles in [`super::multigrid`]), their workspaces, and the kernels
//! they share: colour sweeps, residuals, mean removal and the convergence checks.

use super::slab::{GpuSlab, Partials};
use super::{
    B1, BX, BY, CHECK_EVERY, CTRL_DONE, CTRL_ITERS, CudaProjection, SpectralWork, Work, cells3, grid_tile,
    grid1, grid2, ints3, pack_pbc, pad3,
};
use crate::backend::cuda::{Args, CudaError, DevBuf, Gpu, Stream};
use crate::case::PressureSolverKind;
use crate::solver::incompressible::pressure_poisson::{
    FaceBc, Laplacian, PoissonSettings, optimal_sor_omega, reads_rhs_beyond_own_layers, residual_checked,
};
use crate::solver::real::Real;
use std::ops::Range;
use std::sync::Arc;

/// An operator's sizes, face conditions and `1/h^2` as the stencil kernels take them
/// (`BOX_PARAMS` of kernels/poisson.cu).
pub(super) fn box_args<T: Real, const D: usize>(a: Args, op: &Laplacian<T, D>) -> Args {
    a.is(&ints3(op.n)).i(pack_pbc(op)).rs(&pad3(op.ih2, T::zero()))
}

/// The device address of element `i` of the array at `x`, as a pointer argument.
fn at<T>(x: u64, i: usize) -> i64 {
    (x + (i * std::mem::size_of::<T>()) as u64) as i64
}

/// Whether a periodic axis of odd size couples cells of one colour (the serial seam cells).
pub(super) fn odd_periodic<T, const D: usize>(op: &Laplacian<T, D>) -> bool {
    (0..D).any(|a| op.n[a] % 2 == 1 && op.bc[a][0] == FaceBc::Periodic)
}

impl<T: Real, const D: usize> CudaProjection<T, D> {
    /// The workspace of the pressure solver `kind` for `op` (on a part, `slab` its link).
    pub(super) fn workspace(
        gpu: &Arc<Gpu>,
        op: &Laplacian<T, D>,
        kind: PressureSolverKind,
        slab: Option<&GpuSlab<T>>,
    ) -> Result<Work<T, D>, CudaError> {
        let n = op.len();
        Ok(match kind {
            PressureSolverKind::Jacobi => Work::Jacobi {
                next: gpu.alloc_zeros(n)?,
            },
            PressureSolverKind::Sor => Work::Sor,
            PressureSolverKind::Pcg => Work::Pcg {
                r: gpu.alloc_zeros(n)?,
                w: gpu.alloc_zeros(n)?,
                d: gpu.alloc_zeros(n)?,
                q: gpu.alloc_zeros(n)?,
            },
            PressureSolverKind::Multigrid => super::multigrid::hierarchy(gpu, op, slab)?,
            PressureSolverKind::Fft => Work::Spectral(Box::new(SpectralWork::new(gpu, op)?)),
        })
    }

    /// `x -= mean(x)` (`guard`: skipped once the solve is done; on a part, the whole grid's mean)
    /// over every stored cell; with `squares` over the own cells only, and the block sums of the
    /// new `x^2` into `part_a`, as `dot_partial` of `x` with itself over the own cells leaves
    /// them (for a right-hand side, whose other stored layers are exchanged before a solver reads
    /// them: `reads_rhs_beyond_own_layers`).
    fn remove_mean(&self, x: u64, guard: bool, squares: bool) -> Result<(), CudaError> {
        let ctrl = if guard { self.ctrl.ptr } else { 0 };
        let own = self.reduced_cells();
        self.launch(
            &self.poisson_kernels,
            "sum_partial",
            grid1(own.len()),
            (B1, 1, 1),
            Args::new()
                .l(at::<T>(x, own.start))
                .p(&self.part_a)
                .l(ctrl as i64)
                .i(own.len() as i64),
        )?;
        let (part, nb) = self.partials(&self.part_a, Partials::Linear, false, guard)?;
        self.launch(
            &self.poisson_kernels,
            "finalize_mean",
            (1, 1, 1),
            (1024, 1, 1),
            Args::new()
                .l(part as i64)
                .i(nb as i64)
                .p(&self.sc)
                .l(ctrl as i64)
                .r(T::of(self.whole_cells() as f64)),
        )?;
        let cells = if squares { own } else { 0..self.op.len() };
        self.launch(
            &self.poisson_kernels,
            "subtract_mean",
            grid1(cells.len()),
            (B1, 1, 1),
            Args::new()
                .l(at::<T>(x, cells.start))
                .p(&self.sc)
                .l(if squares { self.part_a.ptr } else { 0 } as i64)
                .l(ctrl as i64)
                .i(cells.len() as i64),
        )
    }

    /// One colour sweep of `L x = b` on the operator `op` (plus the serial seam cells of odd
    /// periodic sizes).
    pub(super) fn colour(
        &self,
        op: &Laplacian<T, D>,
        x: u64,
        b: u64,
        colour: i64,
        omega: T,
        ctrl: u64,
    ) -> Result<(), CudaError> {
        self.colour_layers(op, x, b, colour, omega, ctrl, Stream::Compute, 0..cells3(op.n)[2])?;
        if odd_periodic(op) {
            let a = box_args(Args::new().l(x as i64).l(b as i64).l(ctrl as i64), op)
                .i(colour)
                .r(omega);
            self.launch(&self.poisson_kernels, "colour_seam", (1, 1, 1), (1, 1, 1), a)?;
        }
        Ok(())
    }

    /// [`Self::colour`] over the x-y planes `layers` of a 3D box (`0..1` in 2D), seam cells
    /// excepted.
    #[allow(clippy::too_many_arguments)]
    fn colour_layers(
        &self,
        op: &Laplacian<T, D>,
        x: u64,
        b: u64,
        colour: i64,
        omega: T,
        ctrl: u64,
        stream: Stream,
        layers: Range<usize>,
    ) -> Result<(), CudaError> {
        let mut half = cells3(op.n);
        half[0] = op.n[0] / 2 + 1;
        half[2] = layers.len();
        let a = box_args(Args::new().l(x as i64).l(b as i64).l(ctrl as i64), op)
            .i(colour)
            .r(omega)
            .i(layers.start as i64);
        self.launch_from(
            &self.poisson_kernels,
            stream,
            "colour_sweep",
            grid2(half),
            (BX, BY, 1),
            a,
        )
    }

    /// A colour sweep of the pressure operator on `x` with the layers this part stores but does
    /// not own refreshed ([`Self::swept`]; one GPU: [`Self::colour`]).
    pub(super) fn colour_exchanged(
        &self,
        x: u64,
        b: u64,
        colour: i64,
        omega: T,
        ctrl: u64,
    ) -> Result<(), CudaError> {
        let op = &self.op;
        if odd_periodic(op) {
            // The serial seam kernel runs over every layer: no split.
            self.colour(op, x, b, colour, omega, ctrl)?;
            return self.exchange_cells(x);
        }
        self.swept(x, |stream, layers| {
            self.colour_layers(op, x, b, colour, omega, ctrl, stream, layers)
        })
    }

    /// One red-black sweep of the pressure operator, colour `first` then the other, on `x`
    /// (relaxation `omega`), with the layers this part stores but does not own refreshed once,
    /// after the second colour ([`Self::colour_exchanged`]): the first colour sweeps every stored
    /// layer, and in the layer next to its own a part computes each cell from the values its owner
    /// computes it from (the exchanged layers, and `b` exchanged at the start of the solve), so
    /// the second colour reads there what the owner wrote, bit for bit. One GPU: both colours.
    pub(super) fn red_black_exchanged(
        &self,
        x: u64,
        b: u64,
        first: i64,
        omega: T,
        ctrl: u64,
    ) -> Result<(), CudaError> {
        if self.slab.is_some() {
            self.colour(&self.op, x, b, first, omega, ctrl)?;
        } else {
            self.colour_exchanged(x, b, first, omega, ctrl)?;
        }
        self.colour_exchanged(x, b, 1 - first, omega, ctrl)
    }

    /// `r = b - L x` (r = 0: none stored); with `norm`, block partial sums of r^2 in part_a.
    pub(super) fn residual(
        &self,
        op: &Laplacian<T, D>,
        x: u64,
        b: u64,
        r: u64,
        norm: bool,
        ctrl: u64,
    ) -> Result<(), CudaError> {
        let part = if norm { self.part_a.ptr } else { 0 };
        let a = Args::new()
            .l(x as i64)
            .l(b as i64)
            .l(r as i64)
            .l(part as i64)
            .l(ctrl as i64);
        self.launch(
            &self.poisson_kernels,
            "residual",
            grid_tile(cells3(op.n)),
            (BX, BY, 1),
            box_args(a, op),
        )
    }

    /// One damped Jacobi sweep `src -> dst` of `L p = rhs` over the x-y planes `layers` of a 3D
    /// box (`0..1` in 2D), each block's sum of squared residuals in its slot of `partial` (that
    /// of the launch over every plane; `ctrl` 0: unguarded).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn jacobi(
        &self,
        src: u64,
        dst: u64,
        rhs: u64,
        partial: &DevBuf<T>,
        ctrl: u64,
        stream: Stream,
        layers: Range<usize>,
    ) -> Result<(), CudaError> {
        let a = Args::new()
            .l(src as i64)
            .l(dst as i64)
            .l(rhs as i64)
            .p(partial)
            .l(ctrl as i64);
        let mut n = cells3(self.op.n);
        n[2] = layers.len();
        self.launch_from(
            &self.poisson_kernels,
            stream,
            "jacobi_sweep",
            grid_tile(n),
            (BX, BY, 1),
            box_args(a, &self.op).i(layers.start as i64),
        )
    }

    /// The convergence check of an iteration (`finalize_check`) from the residual partials of
    /// `kind` in `part_a`.
    fn finalize_check(&self, kind: Partials, it: usize, max: usize) -> Result<(), CudaError> {
        self.finalize_check_mode(kind, it, max, false)
    }

    pub(super) fn finalize_check_mode(
        &self,
        kind: Partials,
        it: usize,
        max: usize,
        until_not_greater: bool,
    ) -> Result<(), CudaError> {
        let (part, nb) = self.partials(&self.part_a, kind, false, true)?;
        self.finalize_check_of(part, nb, it, max, until_not_greater)
    }

    /// The convergence check of iteration `it` from the `nb` residual partials at `part`.
    pub(super) fn finalize_check_of(
        &self,
        part: u64,
        nb: usize,
        it: usize,
        max: usize,
        until_not_greater: bool,
    ) -> Result<(), CudaError> {
        self.launch(
            &self.poisson_kernels,
            "finalize_check",
            (1, 1, 1),
            (1024, 1, 1),
            Args::new()
                .l(part as i64)
                .i(nb as i64)
                .p(&self.sc)
                .p(&self.ctrl)
                .i(it.min(i32::MAX as usize) as i64)
                .i(max.min(i32::MAX as usize) as i64)
                .i(until_not_greater as i64),
        )
    }

    /// The start of a solve (pressure_poisson/mod.rs `solve`): the mean of `rhs` removed when
    /// `L` is singular, `||rhs||` and the target residual into `sc`, the control block reset.
    pub(super) fn rhs_norm(&self) -> Result<(), CudaError> {
        if self.singular() {
            // The mean's removal sums the squares in the same pass, in dot_partial's blocks.
            self.remove_mean(self.rhs.ptr, false, true)?;
        } else {
            let own = self.reduced_cells();
            let rhs = at::<T>(self.rhs.ptr, own.start);
            self.launch(
                &self.poisson_kernels,
                "dot_partial",
                grid1(own.len()),
                (B1, 1, 1),
                Args::new()
                    .l(rhs)
                    .l(rhs)
                    .p(&self.part_a)
                    .null()
                    .i(own.len() as i64),
            )?;
        }
        let (part, nb) = self.partials(&self.part_a, Partials::Linear, false, false)?;
        self.launch(
            &self.poisson_kernels,
            "finalize_bnorm",
            (1, 1, 1),
            (1024, 1, 1),
            Args::new()
                .l(part as i64)
                .i(nb as i64)
                .p(&self.sc)
                .p(&self.ctrl)
                .r(T::of(self.cfg.poisson.tolerance)),
        )
    }

    /// Solves `L p = rhs` iteratively (pressure_poisson/mod.rs `solve`); the statistics are read
    /// with the step's scalars.
    pub(super) fn solve_pressure(&mut self) -> Result<(), CudaError> {
        let op = self.op;
        let n = op.len();
        let singular = self.singular();
        let settings: PoissonSettings = self.cfg.poisson;
        let max = settings.max_iterations;
        self.step_phase("solve: norm of the right-hand side", || self.rhs_norm())?;
        let (p, rhs, ctrl) = (self.p.ptr, self.rhs.ptr, self.ctrl.ptr);
        if reads_rhs_beyond_own_layers(settings.kind) {
            self.exchange_cells(rhs)?;
        }
        match &self.work {
            Work::Jacobi { .. } if self.slab.as_ref().is_some_and(|s| s.overlap) => {
                self.jacobi_part(max)?;
            }
            Work::Jacobi { next } => {
                let next = next.ptr;
                let mut it = 0;
                loop {
                    for _ in 0..CHECK_EVERY {
                        // Sweeps 0..=max at most (the check of sweep max ends the solve).
                        if it > max {
                            break;
                        }
                        let (src, dst) = if it % 2 == 0 { (p, next) } else { (next, p) };
                        self.swept(dst, |stream, layers| {
                            self.jacobi(src, dst, rhs, &self.part_a, ctrl, stream, layers)
                        })?;
                        if residual_checked(it, max) {
                            self.finalize_check(Partials::Cells, it, max)?;
                        }
                        it += 1;
                    }
                    let c = self.read_ctrl()?;
                    if c[CTRL_DONE] != 0 {
                        // The result is the source of the converged sweep.
                        if c[CTRL_ITERS] % 2 == 1 {
                            let Work::Jacobi { next } = &self.work else {
                                unreachable!()
                            };
                            self.gpu.copy(&self.p, next)?;
                        }
                        break;
                    }
                }
            }
            Work::Sor => {
                let whole = self.whole_config().pressure_operator::<T, D>();
                let omega = T::of(settings.sor_omega.unwrap_or_else(|| optimal_sor_omega(&whole.n)));
                let mut it = 0;
                loop {
                    for _ in 0..CHECK_EVERY {
                        if residual_checked(it, max) {
                            if singular {
                                self.remove_mean(p, true, false)?;
                            }
                            self.residual(&op, p, rhs, 0, true, ctrl)?;
                            self.finalize_check(Partials::Cells, it, max)?;
                        }
                        self.red_black_exchanged(p, rhs, 0, omega, ctrl)?;
                        it += 1;
                        if it > max {
                            break;
                        }
                    }
                    if self.read_ctrl()?[CTRL_DONE] != 0 {
                        break;
                    }
                }
            }
            Work::Pcg { r, w, d, q } => {
                let (r, w, d, q) = (r.ptr, w.ptr, d.ptr, q.ptr);
                self.residual(&op, p, rhs, r, true, ctrl)?;
                self.finalize_check(Partials::Cells, 0, usize::MAX)?;
                let precondition = |s: &Self| -> Result<(), CudaError> {
                    s.launch(
                        &s.poisson_kernels,
                        "zero_fill",
                        grid1(n),
                        (B1, 1, 1),
                        Args::new().l(w as i64).l(ctrl as i64).i(n as i64),
                    )?;
                    // On a part, the layers it stores but does not own after each colour.
                    for colour in [0, 1, 0] {
                        s.colour_exchanged(w, r, colour, T::one(), ctrl)?;
                    }
                    Ok(())
                };
                let gamma = |s: &Self, first: i64| -> Result<(), CudaError> {
                    let own = s.reduced_cells();
                    s.launch(
                        &s.poisson_kernels,
                        "dot_partial",
                        grid1(own.len()),
                        (B1, 1, 1),
                        Args::new()
                            .l(at::<T>(r, own.start))
                            .l(at::<T>(w, own.start))
                            .p(&s.part_a)
                            .l(ctrl as i64)
                            .i(own.len() as i64),
                    )?;
                    let (part, nb) = s.partials(&s.part_a, Partials::Linear, false, true)?;
                    s.launch(
                        &s.poisson_kernels,
                        "finalize_gamma",
                        (1, 1, 1),
                        (1024, 1, 1),
                        Args::new()
                            .l(part as i64)
                            .i(nb as i64)
                            .p(&s.sc)
                            .l(ctrl as i64)
                            .i(first),
                    )
                };
                let direction = |s: &Self, first: i64| -> Result<(), CudaError> {
                    s.launch(
                        &s.poisson_kernels,
                        "pcg_direction",
                        grid1(n),
                        (B1, 1, 1),
                        Args::new()
                            .l(d as i64)
                            .l(w as i64)
                            .p(&s.sc)
                            .l(ctrl as i64)
                            .i(n as i64)
                            .i(first),
                    )
                };
                precondition(self)?;
                direction(self, 1)?;
                gamma(self, 1)?;
                let mut it = 1;
                'outer: loop {
                    for _ in 0..CHECK_EVERY {
                        if it > max {
                            break 'outer;
                        }
                        let a = Args::new().l(d as i64).l(q as i64).p(&self.part_a).l(ctrl as i64);
                        self.launch(
                            &self.poisson_kernels,
                            "apply_dot",
                            grid_tile(cells3(op.n)),
                            (BX, BY, 1),
                            box_args(a, &op),
                        )?;
                        let (part, nb) = self.partials(&self.part_a, Partials::Cells, false, true)?;
                        self.launch(
                            &self.poisson_kernels,
                            "finalize_alpha",
                            (1, 1, 1),
                            (1024, 1, 1),
                            Args::new()
                                .l(part as i64)
                                .i(nb as i64)
                                .p(&self.sc)
                                .p(&self.ctrl)
                                .i(it as i64),
                        )?;
                        // The update over every stored cell, r.r over this part's own (the
                        // other stored cells' partials go to part_b, unread: on a part the
                        // speed maxima there were gathered at the correction).
                        let own = self.reduced_cells();
                        for (range, partial) in [
                            (0..own.start, &self.part_b),
                            (own.clone(), &self.part_a),
                            (own.end..n, &self.part_b),
                        ] {
                            if range.is_empty() {
                                continue;
                            }
                            self.launch(
                                &self.poisson_kernels,
                                "pcg_axpy",
                                grid1(range.len()),
                                (B1, 1, 1),
                                Args::new()
                                    .l(at::<T>(p, range.start))
                                    .l(at::<T>(r, range.start))
                                    .l(at::<T>(d, range.start))
                                    .l(at::<T>(q, range.start))
                                    .p(&self.sc)
                                    .p(partial)
                                    .l(ctrl as i64)
                                    .i(range.len() as i64),
                            )?;
                        }
                        self.finalize_check(Partials::Linear, it, max)?;
                        precondition(self)?;
                        gamma(self, 0)?;
                        direction(self, 0)?;
                        it += 1;
                    }
                    if self.read_ctrl()?[CTRL_DONE] != 0 {
                        break;
                    }
                }
            }
            Work::Multigrid { levels, .. } => {
                let r0 = levels[0].r.ptr;
                let mut cycles = 0;
                loop {
                    self.residual(&op, p, rhs, r0, true, ctrl)?;
                    self.finalize_check_mode(Partials::Cells, cycles, max, true)?;
                    if self.read_ctrl()?[CTRL_DONE] != 0 {
                        break;
                    }
                    self.top_v_cycle()?;
                    cycles += 1;
                }
            }
            Work::Spectral(_) => unreachable!("the transform solve runs in spectral_step"),
        }
        self.launch(
            &self.poisson_kernels,
            "zero_if_flag",
            grid1(n),
            (B1, 1, 1),
            Args::new().p(&self.p).p(&self.ctrl).i(n as i64),
        )?;
        if singular {
            self.remove_mean(self.p.ptr, false, false)?;
        }
        Ok(())
    }
}
