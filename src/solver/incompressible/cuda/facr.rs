//! The transform pressure solve of a 2D grid whose y sides pair up (both Neumann or both
//! Dirichlet) by FACR(0) (Hockney 1970): cuFFT's batched real-to-complex transform of each row,
//! one tridiagonal system along y per x wavenumber (kernels/facr.cuh: chunks of `FACR_CHUNK`
//! rows in f32, the chunks' separators coupled in f64), the inverse transform of each row. It
//! solves the discrete system of the 2D transforms (`dct_divide`) with two passes of cuFFT fewer.
//!
//! Index conventions: the spectrum holds `ny` rows of `h = nx / 2 + 1` complex entries; entry m
//! carries two real columns `2 m` and `2 m + 1` (kernels/facr.cuh); chunk q holds rows
//! `q FACR_CHUNK ..`, its last row the separator q (all chunks but the last).

use super::CudaProjection;
use super::spectral::SpectralWork;
use crate::backend::cuda::{Args, CudaError, DevBuf, Gpu};
use crate::solver::incompressible::pressure_poisson::spectral::{Axes, AxisTransform};
use crate::solver::real::Real;
use std::sync::Arc;

/// Rows a chunk, separator included (kernels/facr.cuh `FACR_CHUNK`).
pub(super) const CHUNK: usize = 16;
/// Threads a block of the chunk kernels along x (kernels/facr.cuh `FACR_THREADS`).
const THREADS: u32 = 64;

/// The grid's side of a FACR solve: the x axis' transform and eigenvalues, the y sides.
#[derive(Clone, Debug)]
pub(super) struct Columns {
    pub nx: usize,
    pub ny: usize,
    /// `lambda_x` of each x wavenumber (DCT index for a cosine axis, DFT index for a periodic one).
    pub lambda_x: Vec<f64>,
    pub hy2: f64,
    pub cosine_x: bool,
    pub neumann_y: bool,
}

impl Columns {
    /// The columns of a 2D operator whose y axis is a cosine axis, `hy2` its y spacing squared
    /// (else `None`: the 2D transforms).
    pub fn of(axes: &Axes, n: [usize; 2], hy2: f64) -> Option<Self> {
        let AxisTransform::Cosine { flip } = axes.transform[1] else {
            return None;
        };
        Some(Self {
            nx: n[0],
            ny: n[1],
            lambda_x: axes.lambda[0].clone(),
            hy2,
            cosine_x: axes.transform[0] != AxisTransform::Hartley,
            neumann_y: !flip,
        })
    }

    /// Real columns (two a spectrum entry).
    pub fn count(&self) -> usize {
        2 * (self.nx / 2 + 1)
    }

    pub fn chunks(&self) -> usize {
        self.ny.div_ceil(CHUNK)
    }

    /// Column `col`'s shift `sigma = lambda_x hy^2` (that of lambda 1 for an absent column, whose
    /// right-hand side is zero) and whether it is the pinned singular column (kernels/facr.cuh
    /// `facr_columns`).
    pub fn column(&self, col: usize) -> (f64, bool) {
        let m = col / 2;
        let k = if self.cosine_x && col % 2 == 1 {
            self.nx - m
        } else {
            m
        };
        let l = if k < self.nx { self.lambda_x[k] } else { 1.0 };
        (l * self.hy2, self.neumann_y && l == 0.0)
    }

    /// Whether some column is singular (Neumann y sides and a zero x eigenvalue), so that the
    /// solve ends by removing its mean (`facr_zero_mean`).
    pub fn has_pinned(&self) -> bool {
        (0..self.count()).any(|c| self.column(c).1)
    }

    /// Row j's diagonal in column (sigma, pinned), as kernels/facr.cuh `facr_diagonal`; `None`
    /// for the pinned row (x = 0).
    fn diagonal(&self, j: usize, sigma: f64, pinned: bool) -> Option<f64> {
        let end = if self.neumann_y { -1.0 } else { -3.0 };
        if pinned && j == self.ny - 1 {
            return None;
        }
        Some(if j == 0 || j == self.ny - 1 { end } else { -2.0 } + sigma)
    }

    /// The interior rows `[s, s + n)` of chunk q (all of its rows but the separator, the last one,
    /// of every chunk but the last).
    pub fn interior(&self, q: usize) -> (usize, usize) {
        let s = q * CHUNK;
        let rows = CHUNK.min(self.ny - s);
        (s, if q + 1 < self.chunks() { rows - 1 } else { rows })
    }

    /// Thomas in f64 on rows `[s, s + r.len())` of a column with unit off-diagonals and
    /// right-hand side `r` (its solution overwrites it), as kernels/facr.cuh `facr_thomas`: the
    /// pinned row is x = 0 and couples to nothing.
    pub fn solve_rows(&self, s: usize, sigma: f64, pinned: bool, r: &mut [f64]) {
        let n = r.len();
        let mut cp = vec![0.0; n];
        let (mut c_prev, mut d_prev) = (0.0, 0.0);
        for i in 0..n {
            let b = self.diagonal(s + i, sigma, pinned);
            let a = if i > 0 && b.is_some() { 1.0 } else { 0.0 };
            let inv = 1.0 / (b.unwrap_or(1.0) - a * c_prev);
            c_prev = if i + 1 < n && b.is_some() { inv } else { 0.0 };
            cp[i] = c_prev;
            d_prev = (if b.is_some() { r[i] } else { 0.0 } - a * d_prev) * inv;
            r[i] = d_prev;
        }
        for i in (0..n.saturating_sub(1)).rev() {
            r[i] -= cp[i] * r[i + 1];
        }
    }

    /// The interior's responses (first, last value) to a unit coupling at its first row (`v`,
    /// from the separator before it) and at its last row (`w`, from its own separator).
    fn spikes(&self, q: usize, sigma: f64, pinned: bool) -> ([f64; 2], [f64; 2]) {
        let (s, n) = self.interior(q);
        let unit = |first: bool| {
            let mut r = vec![0.0; n];
            r[if first { 0 } else { n - 1 }] = 1.0;
            self.solve_rows(s, sigma, pinned, &mut r);
            [r[0], r[n - 1]]
        };
        (unit(true), unit(false))
    }

    /// The forward elimination of every column's separator system (kernels/facr.cuh
    /// `facr_separators`), `[q][column]` each: the coefficient of separator q - 1 in row q, the
    /// reciprocal pivot, and the eliminated coefficient of separator q + 1. Row q, with x_int the
    /// chunks' interiors given their ends,
    ///   x_int(q)[last] + (-2 + sigma) x_sep(q) + x_int(q + 1)[first] = b(separator q),
    ///   x_int(q) = y(q) - x_sep(q - 1) v(q) - x_sep(q) w(q),
    /// gives -v(q)[last] x_sep(q - 1) + (-2 + sigma - w(q)[last] - v(q + 1)[first]) x_sep(q)
    /// - w(q + 1)[first] x_sep(q + 1) = b - y(q)[last] - y(q + 1)[first].
    pub fn separator_factors(&self) -> [Vec<f64>; 3] {
        let (cols, seps) = (self.count(), self.chunks() - 1);
        let mut out = [
            vec![0.0; seps * cols],
            vec![0.0; seps * cols],
            vec![0.0; seps * cols],
        ];
        for col in 0..cols {
            let (sigma, pinned) = self.column(col);
            // The chunks between the first and the last have the same interior (no end row).
            let last = self.chunks() - 1;
            let [first, middle, end] = [0, 1.min(last), last].map(|q| self.spikes(q, sigma, pinned));
            let spikes = |q: usize| match q {
                0 => first,
                q if q == last => end,
                _ => middle,
            };
            let mut c_prev = 0.0;
            for q in 0..seps {
                let lower = if q > 0 { -spikes(q).0[1] } else { 0.0 };
                let diagonal = -2.0 + sigma - spikes(q).1[1] - spikes(q + 1).0[0];
                let upper = if q + 1 < seps { -spikes(q + 1).1[0] } else { 0.0 };
                let pivot = 1.0 / (diagonal - lower * c_prev);
                c_prev = upper * pivot;
                let at = q * cols + col;
                out[0][at] = lower;
                out[1][at] = pivot;
                out[2][at] = c_prev;
            }
        }
        out
    }
}

/// The device side of a FACR solve ([`Columns`]): the chunks' ends (`3 chunks` values a column)
/// and separators, the separators' forward elimination (scratch, and its factors, uploaded once:
/// they depend on the grid only).
pub(super) struct LineSolves<T> {
    pub(super) columns: Columns,
    ends: DevBuf<T>,
    separators: DevBuf<T>,
    scratch: DevBuf<f64>,
    factors: [DevBuf<f64>; 3],
}

impl<T: Real> LineSolves<T> {
    pub(super) fn new(gpu: &Arc<Gpu>, columns: Columns) -> Result<Self, CudaError> {
        let (cols, chunks) = (columns.count(), columns.chunks());
        // A column of one chunk has no separator; keep one value so that every buffer exists.
        let seps = (chunks - 1).max(1) * cols;
        let factors = columns.separator_factors().map(|f| {
            let b = gpu.alloc(seps)?;
            if !f.is_empty() {
                gpu.upload(&b, &f)?;
            }
            Ok::<_, CudaError>(b)
        });
        let [lower, pivot, upper] = factors;
        Ok(Self {
            ends: gpu.alloc_zeros(3 * chunks * cols)?,
            separators: gpu.alloc_zeros(seps)?,
            scratch: gpu.alloc_zeros(seps)?,
            factors: [lower?, pivot?, upper?],
            columns,
        })
    }
}

impl<T: Real, const D: usize> CudaProjection<T, D> {
    /// `L p = b` on the spectrum of the rows (cuFFT's batched transform of each row of `w.v`),
    /// in place: `facr_chunks`, `facr_separators`, `facr_solve` and, with a singular column,
    /// `facr_zero_mean` (kernels/facr.cuh).
    pub(super) fn facr_solve(&self, w: &SpectralWork<T>, f: &LineSolves<T>) -> Result<(), CudaError> {
        let c = &f.columns;
        let (cols, chunks) = (c.count(), c.chunks());
        let chunk_grid = ((c.nx / 2 + 1).div_ceil(THREADS as usize) as u32, chunks as u32, 1);
        let shape = |a: Args| {
            a.i(c.nx as i64)
                .i(c.ny as i64)
                .p(&w.twiddles[0])
                .p(&w.lambdas[0])
                .d(c.hy2)
                .i(c.cosine_x as i64)
                .i(c.neumann_y as i64)
        };
        let k = &self.poisson_kernels;
        self.launch(
            k,
            "facr_chunks",
            chunk_grid,
            (THREADS, 1, 1),
            shape(Args::new().p(&w.spectrum).p(&f.ends).p(&self.ctrl)),
        )?;
        if chunks > 1 {
            let [lower, pivot, upper] = &f.factors;
            self.launch(
                k,
                "facr_separators",
                (cols.div_ceil(128) as u32, 1, 1),
                (128, 1, 1),
                Args::new()
                    .p(&f.ends)
                    .p(&f.separators)
                    .p(&f.scratch)
                    .p(&self.ctrl)
                    .p(lower)
                    .p(pivot)
                    .p(upper)
                    .i(cols as i64)
                    .i(chunks as i64),
            )?;
        }
        self.launch(
            k,
            "facr_solve",
            chunk_grid,
            (THREADS, 1, 1),
            shape(Args::new().p(&w.spectrum).p(&f.separators).p(&self.ctrl)),
        )?;
        if c.has_pinned() {
            self.launch(
                k,
                "facr_zero_mean",
                (1, 1, 1),
                (1024, 1, 1),
                Args::new()
                    .p(&w.spectrum)
                    .p(&self.ctrl)
                    .i(c.nx as i64)
                    .i(c.ny as i64),
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole column solved at once in f64 (the pinned row x = 0), its mean removed where
    /// pinned: the reference of the chunked solve.
    fn direct(c: &Columns, sigma: f64, pinned: bool, b: &[f64]) -> Vec<f64> {
        let mut x = b.to_vec();
        c.solve_rows(0, sigma, pinned, &mut x);
        if pinned {
            remove_mean(&mut x);
        }
        x
    }

    fn remove_mean(x: &mut [f64]) {
        let mean = x.iter().sum::<f64>() / x.len() as f64;
        x.iter_mut().for_each(|v| *v -= mean);
    }

    /// The kernels' pipeline on the host in f64 (kernels/facr.cuh: `facr_chunks`, then
    /// `facr_separators` with [`Columns::separator_factors`], then `facr_solve` and, for the
    /// pinned column, `facr_zero_mean`) against the direct solve of every column: Neumann and
    /// Dirichlet y sides, cosine and periodic x axes, columns of three chunks (with a short last
    /// one, and not), of two, of exactly one chunk and of less than one, including the singular
    /// column.
    #[test]
    fn chunked_line_solves_equal_the_direct_solve() {
        let lambda = |n: usize, periodic: bool| -> Vec<f64> {
            (0..n)
                .map(|k| {
                    let a = std::f64::consts::PI * k as f64 / (2 * n) as f64;
                    -4.0 * if periodic { (2.0 * a).sin() } else { a.sin() }.powi(2)
                })
                .collect()
        };
        let mut seed = 7u64;
        let mut random = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for (nx, ny) in [(10, 37), (9, 48), (7, 20), (8, 16), (6, 5)] {
            for cosine_x in [true, false] {
                for neumann_y in [true, false] {
                    let c = Columns {
                        nx,
                        ny,
                        lambda_x: lambda(nx, !cosine_x),
                        hy2: 0.7,
                        cosine_x,
                        neumann_y,
                    };
                    let (cols, chunks) = (c.count(), c.chunks());
                    let [lower, pivot, upper] = c.separator_factors();
                    for col in 0..cols {
                        let (sigma, pinned) = c.column(col);
                        let mut b: Vec<f64> = (0..ny).map(|_| random()).collect();
                        if pinned {
                            remove_mean(&mut b);
                        }
                        // facr_chunks: each interior with zero ends.
                        let y: Vec<Vec<f64>> = (0..chunks)
                            .map(|q| {
                                let (s, n) = c.interior(q);
                                let mut r = b[s..s + n].to_vec();
                                c.solve_rows(s, sigma, pinned, &mut r);
                                r
                            })
                            .collect();
                        // facr_separators.
                        let seps = chunks - 1;
                        let mut d = vec![0.0; seps];
                        let mut prev = 0.0;
                        for q in 0..seps {
                            let at = q * cols + col;
                            let separator = b[(q + 1) * CHUNK - 1];
                            let rhs = separator - y[q][y[q].len() - 1] - y[q + 1][0];
                            prev = (rhs - lower[at] * prev) * pivot[at];
                            d[q] = prev;
                        }
                        let mut sep = vec![0.0; seps];
                        let mut next = 0.0;
                        for q in (0..seps).rev() {
                            next = d[q] - upper[q * cols + col] * next;
                            sep[q] = next;
                        }
                        // facr_solve, facr_zero_mean.
                        let mut x = vec![0.0; ny];
                        for q in 0..chunks {
                            let (s, n) = c.interior(q);
                            let mut r = b[s..s + n].to_vec();
                            r[0] -= if q > 0 { sep[q - 1] } else { 0.0 };
                            r[n - 1] -= if q < seps { sep[q] } else { 0.0 };
                            c.solve_rows(s, sigma, pinned, &mut r);
                            x[s..s + n].copy_from_slice(&r);
                            if q < seps {
                                x[s + n] = sep[q];
                            }
                        }
                        if pinned {
                            remove_mean(&mut x);
                        }
                        let reference = direct(&c, sigma, pinned, &b);
                        let scale = reference.iter().fold(1e-300f64, |m, v| m.max(v.abs()));
                        let err = x
                            .iter()
                            .zip(&reference)
                            .fold(0.0f64, |m, (a, r)| m.max((a - r).abs()));
                        assert!(
                            err <= 1e-11 * scale,
                            "{nx} x {ny}, cosine x {cosine_x}, Neumann y {neumann_y}, column {col}: {err:e} of {scale:e}"
                        );
                    }
                }
            }
        }
    }
}
