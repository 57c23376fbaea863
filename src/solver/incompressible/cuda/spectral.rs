//! The transform pressure solve on the device (pressure_poisson/spectral.rs, cuFFT; 2D and 3D,
//! axes whose sides pair up: cosine transforms for both Neumann or both Dirichlet, the DFT for
//! periodic axes): its workspace, the solve, its statistics, and the whole step it makes possible
//! without a host wait (as a CUDA graph when graphs are on). A 2D grid whose y sides are not
//! periodic is solved by FACR ([`super::facr`]: transforms of the rows, line solves along y);
//! other grids by the transforms along every axis and `dct_divide`.

use super::facr::{Columns, LineSolves};
use super::{BX, BY, CudaProjection, Work, cells3, grid2, ints3};
use crate::backend::cuda::fft::RealFft;
use crate::backend::cuda::{Args, CudaError, DevBuf, Gpu, Graph};
use crate::solver::incompressible::pressure_poisson::Laplacian;
use crate::solver::incompressible::pressure_poisson::spectral::{Axes, AxisTransform};
use crate::solver::real::Real;
use std::sync::Arc;

/// Device workspace of the transform solve: the reordered field, its half spectrum, and per axis
/// the twiddles `cos, sin (pi k / 2n)` and the eigenvalues of `spectral::Axes`.
pub(super) struct SpectralWork<T> {
    pub(super) fft: RealFft,
    pub(super) v: DevBuf<T>,
    pub(super) spectrum: DevBuf<T>,
    pub(super) twiddles: Vec<DevBuf<T>>,
    pub(super) lambdas: Vec<DevBuf<f64>>,
    /// The packing code of kernels/common.cuh `packed_index`: bit a a Dirichlet axis a (its odd
    /// cells change sign), bit 3 + a an axis in natural order (a periodic axis; with FACR the y
    /// axis, which is solved by lines, not transformed, so neither reordered nor flipped).
    pub(super) pack: i64,
    /// FACR's line solves along y, where the grid is 2D and its y sides are not periodic.
    pub(super) facr: Option<LineSolves<T>>,
}

impl<T: Real> SpectralWork<T> {
    pub(super) fn new<const D: usize>(gpu: &Arc<Gpu>, op: &Laplacian<T, D>) -> Result<Self, CudaError> {
        let n = op.n;
        let axes = Axes::new(op).map_err(CudaError)?;
        let twiddles = |n: usize| -> Result<DevBuf<T>, CudaError> {
            let t: Vec<T> = (0..n)
                .flat_map(|k| {
                    let a = std::f64::consts::PI * k as f64 / (2 * n) as f64;
                    [T::of(a.cos()), T::of(a.sin())]
                })
                .collect();
            let b = gpu.alloc(2 * n)?;
            gpu.upload(&b, &t)?;
            Ok(b)
        };
        let table = |l: &[f64]| -> Result<DevBuf<f64>, CudaError> {
            let b = gpu.alloc(l.len())?;
            gpu.upload(&b, l)?;
            Ok(b)
        };
        let double = std::mem::size_of::<T>() == 8;
        let columns = match n[..] {
            [nx, ny] => Columns::of(&axes, [nx, ny], 1.0 / op.ih2[1].f64()),
            _ => None,
        };
        // FACR: a batch of ny transforms of the rows; else one transform of the whole grid.
        let (shape, batch, transformed): (Vec<usize>, usize, usize) = match &columns {
            Some(c) => (vec![c.nx], c.ny, 1),
            None => (n.iter().rev().copied().collect(), 1, D),
        };
        let cells = op.len();
        Ok(Self {
            fft: RealFft::new(gpu, &shape, batch, double)?,
            v: gpu.alloc_zeros(cells)?,
            spectrum: gpu.alloc_zeros(2 * cells / n[0] * (n[0] / 2 + 1))?,
            twiddles: n.iter().map(|n| twiddles(*n)).collect::<Result<_, _>>()?,
            lambdas: axes.lambda.iter().map(|l| table(l)).collect::<Result<_, _>>()?,
            pack: (0..D).fold(0, |f, a| {
                let (flip, natural) = if a < transformed {
                    (axes.flip(a), axes.transform[a] == AxisTransform::Hartley)
                } else {
                    (false, true)
                };
                f | (flip as i64) << a | (natural as i64) << (3 + a)
            }),
            facr: columns.map(|c| LineSolves::new(gpu, c)).transpose()?,
        })
    }
}

impl<T: Real, const D: usize> CudaProjection<T, D> {
    /// Enqueues one step with the transform pressure solve, with no host wait: the clock's
    /// `dt`, the predictor, `div(F)/dt` written straight into the transform's reordering, the
    /// transforms and the division by the eigenvalues (pressure_poisson/spectral.rs), the
    /// inverse reordering into `p`, the correction and the speed maxima of the next `dt`, with
    /// `stats` the steady-change sums too ([`CudaProjection::correct`]). The right-hand side's
    /// mean needs no removal: the division zeroes the constant mode, so `p` has zero mean as the
    /// CPU's mean removal leaves it (to rounding). FACR instead pins its singular column and
    /// removes the solution's mean, which is the same for the compatible right-hand sides the
    /// step makes (mean zero to rounding: closed or periodic sides).
    fn spectral_step(&self, stats: bool) -> Result<(), CudaError> {
        let Work::Spectral(w) = &self.work else {
            unreachable!("spectral_step with a transform workspace only")
        };
        self.step_dt()?;
        self.predict_only()?;
        // With `stats` the statistics' right-hand side in natural order too, while the velocity
        // is still the step's start, whose opening faces hold the pressures the solve used.
        self.rhs(w.v.ptr, w.pack, stats)?;
        self.spectral_solve(w)?;
        self.correct(Some((w.v.ptr, w.pack)), stats)
    }

    /// `L p = b` from the reordered `b` in `w.v`, leaving the reordered `p` there (guarded by the
    /// control block's done flag); `correct` reads it.
    pub(super) fn spectral_solve(&self, w: &SpectralWork<T>) -> Result<(), CudaError> {
        let op = self.op;
        // SAFETY: v holds one real per cell and spectrum the half spectrum's complex values of
        // T, the sizes the plan was made for.
        unsafe { w.fft.forward(w.v.ptr, w.spectrum.ptr) }?;
        if let Some(f) = &w.facr {
            self.facr_solve(w, f)?;
            // SAFETY: as for the forward transform.
            return unsafe { w.fft.inverse(w.spectrum.ptr, w.v.ptr) };
        }
        // One thread per group of coefficients: k_a in 0..=n_a/2.
        let groups = cells3(op.n.map(|n| n / 2 + 1));
        self.launch(
            &self.poisson_kernels,
            "dct_divide",
            grid2(groups),
            (BX, BY, 1),
            Args::new()
                .p(&w.spectrum)
                .p(&self.ctrl)
                .is(&ints3(op.n))
                .axes(w.twiddles.iter().map(|b| b.ptr))
                .axes(w.lambdas.iter().map(|b| b.ptr))
                .r(1.0 / op.len() as f64)
                .i(w.pack),
        )?;
        // SAFETY: as for the forward transform.
        unsafe { w.fft.inverse(w.spectrum.ptr, w.v.ptr) }
    }

    /// The statistics of the last transform solve, as the CPU reports them: the norm of `rhs`
    /// (natural order, written by the batch's last step before its correction; when a batch
    /// halted on divergence, from the last completed step's F and the velocity it left) and the
    /// relative residual `||rhs - L p|| / ||rhs||` as one iteration.
    pub(super) fn spectral_stats(&self) -> Result<(), CudaError> {
        self.rhs_norm()?;
        let op = self.op;
        self.residual(&op, self.p.ptr, self.rhs.ptr, 0, true, self.ctrl.ptr)?;
        self.finalize_check_mode(super::slab::Partials::Cells, 1, 1, true)
    }

    /// [`CudaProjection::spectral_step`] from its graph (captured at first use) when graphs
    /// are on; a failed capture falls back to launching kernel by kernel, with one warning.
    pub(super) fn launch_spectral_step(&mut self, stats: bool) -> Result<(), CudaError> {
        let slot = stats as usize;
        if self.graphs && self.step_graphs[slot].is_none() {
            self.step_graphs[slot] =
                Graph::capture_or_warn(&self.gpu, "the projection step", || self.spectral_step(stats));
            self.graphs = self.step_graphs[slot].is_some();
        }
        match &self.step_graphs[slot] {
            Some(g) => g.launch(),
            None => self.spectral_step(stats),
        }
    }
}
