//! The transform pressure solve of a 2D grid whose y sides pair up (both Neumann or both
//! Dirichlet) by FACR(0) (Hockney 1970): cuFFT's batched real-to-complex transform of each row,
//! one tridiagonal system along y per x wavenumber (kernels/facr.cuh: chunks of `FACR_CHUNK`
//! rows in the solver's precision with pivots computed here in f64, the chunks' separators
//! coupled in f64), the inverse transform of each row. It solves the discrete system of the 2D
//! transforms (`dct_divide`) with two passes of cuFFT fewer.
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
/// A chunk kernels' block: entries along x, chunks along y (kernels/facr.cuh `FACR_ENTRIES`,
/// `FACR_CHUNKS_PER_BLOCK`).
const BLOCK: (u32, u32, u32) = (32, 8, 1);
/// A `facr_separators` block: 32 columns, `FACR_SEGMENTS` segments of their separators.
const SEPARATOR_BLOCK: (u32, u32, u32) = (32, 16, 1);

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
    /// right-hand side is zero) and whether it is a pinned singular column (its pivots,
    /// [`Columns::chunk_factors`]).
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

    /// Whether column 0 is singular (Neumann y sides: its x eigenvalue is 0), so that the solve
    /// removes its mean (kernels/facr.cuh `facr_separators`, `facr_solve`). The only other
    /// singular column, Im V(0) of a periodic x axis, is one the inverse transform ignores.
    pub fn zero_mean(&self) -> bool {
        self.column(0).1
    }

    /// Row j's diagonal in column (sigma, pinned); `None` for the pinned row (x = 0).
    fn diagonal(&self, j: usize, sigma: f64, pinned: bool) -> Option<f64> {
        let end = if self.neumann_y { -1.0 } else { -3.0 };
        if pinned && j == self.ny - 1 {
            return None;
        }
        Some(if j == 0 || j == self.ny - 1 { end } else { -2.0 } + sigma)
    }

    /// Kind of chunk q, the factors' index (kernels/facr.cuh `facr_kind`): 0 middle, 1 first,
    /// 2 last, 3 the only one.
    fn kind(&self, q: usize) -> usize {
        (q == 0) as usize | ((q + 1 == self.chunks()) as usize) << 1
    }

    /// The reciprocal pivots g of chunk q's forward elimination in column (sigma, pinned)
    /// (kernels/facr.cuh): `CHUNK` rows, the separator (the last row of every chunk but the last),
    /// the rows past ny and the pinned row identity rows (g = 0), else g(i) = 1 / (b(i) - g(i-1)).
    fn pivots(&self, q: usize, sigma: f64, pinned: bool) -> [f64; CHUNK] {
        let mut g = [0.0; CHUNK];
        let mut prev = 0.0;
        for (i, gi) in g.iter_mut().enumerate() {
            let j = q * CHUNK + i;
            let separator = i + 1 == CHUNK && q + 1 < self.chunks();
            *gi = match (j < self.ny && !separator).then(|| self.diagonal(j, sigma, pinned)) {
                Some(Some(b)) => 1.0 / (b - prev),
                _ => 0.0,
            };
            prev = *gi;
        }
        g
    }

    /// One chunk of each kind the grid has (the middle, the first, the last or the only one),
    /// with its kind: every chunk of a kind has the same interior.
    fn kinds(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let chunks = self.chunks();
        [1, 0, chunks - 1]
            .into_iter()
            .filter(move |&q| q < chunks)
            .map(|q| (self.kind(q), q))
    }

    /// Every column's pivots for each kind of chunk, `[kind][i][column]` (kernels/facr.cuh
    /// `facr_thomas`); a kind the grid has not is zero.
    pub fn chunk_factors(&self) -> Vec<f64> {
        let cols = self.count();
        let mut out = vec![0.0; 4 * CHUNK * cols];
        for (kind, q) in self.kinds() {
            for col in 0..cols {
                let (sigma, pinned) = self.column(col);
                for (i, g) in self.pivots(q, sigma, pinned).into_iter().enumerate() {
                    out[(kind * CHUNK + i) * cols + col] = g;
                }
            }
        }
        out
    }

    /// Thomas on a chunk with its pivots g and unit off-diagonals, as kernels/facr.cuh
    /// `facr_thomas`: d(i) = g(i) (r(i) - d(i-1)), then x(i) = d(i) - g(i) x(i+1), in place.
    pub fn solve_chunk(g: &[f64; CHUNK], r: &mut [f64; CHUNK]) {
        let mut d = 0.0;
        for (ri, gi) in r.iter_mut().zip(g) {
            d = gi * (*ri - d);
            *ri = d;
        }
        for i in (0..CHUNK - 1).rev() {
            r[i] -= g[i] * r[i + 1];
        }
    }

    /// Chunk q's interior responses to a unit coupling at its first row (`v`, from the separator
    /// before it) and at its last interior row (`w`, row `CHUNK - 2`, from its own separator).
    fn spikes(&self, q: usize, sigma: f64, pinned: bool) -> [[f64; CHUNK]; 2] {
        let g = self.pivots(q, sigma, pinned);
        [0, CHUNK - 2].map(|row| {
            let mut r = [0.0; CHUNK];
            r[row] = 1.0;
            Self::solve_chunk(&g, &mut r);
            r
        })
    }

    /// Chunk q's spikes in column (sigma, pinned), computed once for each kind of chunk.
    fn spikes_by_kind(&self, sigma: f64, pinned: bool) -> impl Fn(usize) -> [[f64; CHUNK]; 2] + '_ {
        let mut by_kind = [[[0.0; CHUNK]; 2]; 4];
        for (kind, q) in self.kinds() {
            by_kind[kind] = self.spikes(q, sigma, pinned);
        }
        move |q| by_kind[self.kind(q)]
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
        let last = CHUNK - 2;
        for col in 0..cols {
            let (sigma, pinned) = self.column(col);
            let spikes = self.spikes_by_kind(sigma, pinned);
            let mut c_prev = 0.0;
            for q in 0..seps {
                let ([_, w], [v_next, w_next]) = (spikes(q), spikes(q + 1));
                let lower = if q > 0 { -spikes(q)[0][last] } else { 0.0 };
                let diagonal = -2.0 + sigma - w[last] - v_next[0];
                let upper = if q + 1 < seps { -w_next[0] } else { 0.0 };
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

    /// Column 0's separators' weights in its sum (kernels/facr.cuh `facr_separators`, the
    /// singular column's mean): the sum of x_int(q) = y(q) - x_sep(q - 1) v(q) - x_sep(q) w(q)
    /// over the chunks plus the separators is sum y + sum_q x_sep(q) (1 - sum w(q) - sum v(q + 1)).
    pub fn mean_weights(&self) -> Vec<f64> {
        let (sigma, pinned) = self.column(0);
        let spikes = self.spikes_by_kind(sigma, pinned);
        let sum = |x: [f64; CHUNK]| x.iter().sum::<f64>();
        (0..self.chunks() - 1)
            .map(|q| 1.0 - sum(spikes(q)[1]) - sum(spikes(q + 1)[0]))
            .collect()
    }
}

/// The device side of a FACR solve ([`Columns`]): the chunks' pivots, the chunks' ends (`3
/// chunks` values a column) and column 0's sums, the separators and their forward elimination
/// (scratch, and its factors), column 0's weights and mean. The pivots and factors depend on the
/// grid only and are uploaded once.
pub(super) struct LineSolves<T> {
    pub(super) columns: Columns,
    pivots: DevBuf<T>,
    ends: DevBuf<T>,
    sums: DevBuf<T>,
    separators: DevBuf<T>,
    scratch: DevBuf<f64>,
    factors: [DevBuf<f64>; 3],
    weights: DevBuf<f64>,
    mean: DevBuf<f64>,
}

impl<T: Real> LineSolves<T> {
    pub(super) fn new(gpu: &Arc<Gpu>, columns: Columns) -> Result<Self, CudaError> {
        let (cols, chunks) = (columns.count(), columns.chunks());
        // A column of one chunk has no separator; keep one value so that every buffer exists.
        let seps = (chunks - 1).max(1);
        let upload = |v: &[f64], len: usize| -> Result<DevBuf<f64>, CudaError> {
            let b = gpu.alloc_zeros(len)?;
            if !v.is_empty() {
                gpu.upload(&b, v)?;
            }
            Ok(b)
        };
        let [lower, pivot, upper] = columns.separator_factors().map(|f| upload(&f, seps * cols));
        let pivots: Vec<T> = columns.chunk_factors().into_iter().map(T::of).collect();
        let chunk_pivots = gpu.alloc(pivots.len())?;
        gpu.upload(&chunk_pivots, &pivots)?;
        Ok(Self {
            pivots: chunk_pivots,
            ends: gpu.alloc_zeros(3 * chunks * cols)?,
            sums: gpu.alloc_zeros(chunks)?,
            separators: gpu.alloc_zeros(seps * cols)?,
            scratch: gpu.alloc_zeros(seps * cols)?,
            factors: [lower?, pivot?, upper?],
            weights: upload(&columns.mean_weights(), seps)?,
            mean: gpu.alloc_zeros(1)?,
            columns,
        })
    }
}

impl<T: Real, const D: usize> CudaProjection<T, D> {
    /// `L p = b` on the spectrum of the rows (cuFFT's batched transform of each row of `w.v`),
    /// in place: `facr_chunks`, `facr_separators` and `facr_solve` (kernels/facr.cuh).
    pub(super) fn facr_solve(&self, w: &SpectralWork<T>, f: &LineSolves<T>) -> Result<(), CudaError> {
        let c = &f.columns;
        let (cols, chunks) = (c.count(), c.chunks());
        let chunk_grid = (
            (c.nx / 2 + 1).div_ceil(BLOCK.0 as usize) as u32,
            chunks.div_ceil(BLOCK.1 as usize) as u32,
            1,
        );
        let k = &self.poisson_kernels;
        // A chunk kernel: its own arguments, then the grid's.
        let chunk_kernel = |name: &'static str, a: Args| {
            let a = a
                .i(c.nx as i64)
                .i(c.ny as i64)
                .p(&w.twiddles[0])
                .d(c.hy2)
                .i(c.cosine_x as i64);
            self.launch(k, name, chunk_grid, BLOCK, a)
        };
        chunk_kernel(
            "facr_chunks",
            Args::new()
                .p(&w.spectrum)
                .p(&f.ends)
                .p(&f.sums)
                .p(&f.pivots)
                .p(&self.ctrl),
        )?;
        let [lower, pivot, upper] = &f.factors;
        self.launch(
            k,
            "facr_separators",
            (cols.div_ceil(SEPARATOR_BLOCK.0 as usize) as u32, 1, 1),
            SEPARATOR_BLOCK,
            Args::new()
                .p(&f.ends)
                .p(&f.separators)
                .p(&f.scratch)
                .p(&f.sums)
                .p(&f.weights)
                .p(&f.mean)
                .p(&self.ctrl)
                .p(lower)
                .p(pivot)
                .p(upper)
                .i(cols as i64)
                .i(chunks as i64)
                .i(c.ny as i64),
        )?;
        chunk_kernel(
            "facr_solve",
            Args::new()
                .p(&w.spectrum)
                .p(&f.separators)
                .p(&f.mean)
                .p(&f.pivots)
                .p(&self.ctrl)
                .i(c.zero_mean() as i64),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole column solved at once in f64 by the CPU's line solver
    /// ([`crate::solver::linear::thomas`]) with unit off-diagonals (the pinned row x = 0, coupled
    /// to nothing), its mean removed where pinned: the reference of the chunked solve.
    fn direct(c: &Columns, sigma: f64, pinned: bool, b: &[f64]) -> Vec<f64> {
        let n = b.len();
        let rows: Vec<Option<f64>> = (0..n).map(|j| c.diagonal(j, sigma, pinned)).collect();
        let coupled = |j: usize| if rows[j].is_some() { 1.0 } else { 0.0 };
        let diagonal: Vec<f64> = rows.iter().map(|d| d.unwrap_or(1.0)).collect();
        let off: Vec<f64> = (0..n).map(coupled).collect();
        let rhs: Vec<f64> = (0..n).map(|j| coupled(j) * b[j]).collect();
        let (mut x, mut scratch) = (vec![0.0; n], vec![0.0; n]);
        crate::solver::linear::thomas(&off, &diagonal, &off, &rhs, &mut x, &mut scratch);
        if pinned {
            remove_mean(&mut x);
        }
        x
    }

    fn remove_mean(x: &mut [f64]) {
        let mean = x.iter().sum::<f64>() / x.len() as f64;
        x.iter_mut().for_each(|v| *v -= mean);
    }

    /// The kernels' pipeline on the host in f64 (kernels/facr.cuh: `facr_chunks` with
    /// [`Columns::chunk_factors`], `facr_separators` with [`Columns::separator_factors`] and, for
    /// the singular column's mean, [`Columns::mean_weights`], then `facr_solve`) against the direct
    /// solve of every column: Neumann and Dirichlet y sides, cosine and periodic x axes, columns
    /// of three chunks (with a short last one, and not), of two, of exactly one chunk and of less
    /// than one, including the singular column. The separators' recurrences run here in order; the
    /// kernel chains their segments' maps, the same sums regrouped.
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
                    let pivots = c.chunk_factors();
                    let [lower, pivot, upper] = c.separator_factors();
                    let weights = c.mean_weights();
                    let seps = chunks - 1;
                    for col in 0..cols {
                        let (sigma, pinned) = c.column(col);
                        let mut b: Vec<f64> = (0..ny).map(|_| random()).collect();
                        if pinned {
                            remove_mean(&mut b);
                        }
                        let rows = |q: usize| -> [f64; CHUNK] {
                            std::array::from_fn(|i| b.get(q * CHUNK + i).copied().unwrap_or(0.0))
                        };
                        let solve = |q: usize, r: &mut [f64; CHUNK]| {
                            let kind = c.kind(q);
                            let g = std::array::from_fn(|i| pivots[(kind * CHUNK + i) * cols + col]);
                            Columns::solve_chunk(&g, r);
                        };
                        // facr_chunks: each interior with zero ends, and its sum.
                        let y: Vec<[f64; CHUNK]> = (0..chunks)
                            .map(|q| {
                                let mut r = rows(q);
                                solve(q, &mut r);
                                r
                            })
                            .collect();
                        // facr_separators.
                        let mut d = vec![0.0; seps];
                        let mut prev = 0.0;
                        for q in 0..seps {
                            let at = q * cols + col;
                            let rhs = rows(q)[CHUNK - 1] - y[q][CHUNK - 2] - y[q + 1][0];
                            prev = (rhs - lower[at] * prev) * pivot[at];
                            d[q] = prev;
                        }
                        let mut sep = vec![0.0; seps];
                        let mut next = 0.0;
                        for q in (0..seps).rev() {
                            next = d[q] - upper[q * cols + col] * next;
                            sep[q] = next;
                        }
                        let sum: f64 = y.iter().flatten().sum::<f64>()
                            + sep.iter().zip(&weights).map(|(s, w)| s * w).sum::<f64>();
                        let mean = if col == 0 && c.zero_mean() {
                            sum / ny as f64
                        } else {
                            0.0
                        };
                        // facr_solve.
                        let mut x = vec![0.0; ny];
                        for q in 0..chunks {
                            let mut r = rows(q);
                            r[0] -= if q > 0 { sep[q - 1] } else { 0.0 };
                            r[CHUNK - 2] -= if q < seps { sep[q] } else { 0.0 };
                            solve(q, &mut r);
                            if q < seps {
                                r[CHUNK - 1] = sep[q];
                            }
                            for (i, v) in r.iter().enumerate() {
                                if let Some(x) = x.get_mut(q * CHUNK + i) {
                                    *x = v - mean;
                                }
                            }
                        }
                        if pinned && col != 0 {
                            // Im V(0) of a periodic x axis, which the inverse transform ignores:
                            // compared up to its constant.
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
