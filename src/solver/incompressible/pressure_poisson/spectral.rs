//! Direct solution of the pressure equation by fast transforms, for boxes whose sides pair up
//! along each axis: both Neumann (walls, inflow), both Dirichlet (outflow) or periodic.
//!
//! The [`Laplacian`] separates, `L = A_x (x) I (x) I + I (x) A_y (x) I + I (x) I (x) A_z`, and
//! each 1D operator `A` (second difference with face conditions, spacing `h`, `n` cells) is
//! diagonalised by a real transform (Schumann & Sweet 1988; Strang 1999, "The discrete cosine
//! transform"). With `X_k = sum_i x_i cos(pi k (2i + 1) / (2n))` (DCT-II, `k, i in 0..n`):
//!
//! - Neumann on both sides: `A` has the DCT-II basis and eigenvalues
//!   `lambda_k = -(4 / h^2) sin^2(pi k / (2n))`;
//! - Dirichlet on both faces: `A` has the DST-II basis `sin(pi m (2i + 1) / (2n))`,
//!   `m = 1..n`, with `lambda = -(4 / h^2) sin^2(pi m / (2n))`. As `DST-II(x)_{n-1-k} =
//!   DCT-II((-1)^i x_i)_k`, the same DCT serves after flipping the sign of odd cells, with
//!   `lambda_k = -(4 / h^2) cos^2(pi k / (2n))` for DCT index `k`;
//! - periodic: `A` is circulant with eigenvalues `lambda_k = -(4 / h^2) sin^2(pi k / n)` on the
//!   Fourier modes `k` and `n - k`, which share them; the discrete Hartley transform
//!   `H_k = sum_i x_i cas(2 pi k i / n)` (`cas = cos + sin`; Bracewell 1983), `Re F_k - Im F_k` of
//!   the DFT `F`, mixes only those two modes and is real and its own inverse up to `1/n`.
//!
//! So `p = T^-1 [T b / sum_a lambda_a]` with `T` the product of the axes' transforms: exact up to
//! rounding, `O(n log n)`, no iteration. The zero eigenvalue (no Dirichlet axis) is the constant
//! mode: it is dropped, which solves the compatible problem with zero-mean `p` (the convention of
//! every pressure solver here). Mixed Neumann/Dirichlet axes need other transforms and are
//! refused by [`check_axis`]. The CUDA backend uses the same [`axis_eigenvalues`] with cuFFT.

use super::{FaceBc, Laplacian};
use crate::solver::real::Real;
use rayon::prelude::*;
use rustdct::rustfft::{Fft, FftPlanner, num_complex::Complex};
use rustdct::{DctPlanner, TransformType2And3};
use std::sync::Arc;

/// The transform that diagonalises one axis' second difference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisTransform {
    /// DCT-II; `flip`: odd cells change sign first (both sides Dirichlet).
    Cosine { flip: bool },
    /// The discrete Hartley transform (periodic).
    Hartley,
}

/// Side names of each axis, for messages.
const SIDES: [[&str; 2]; 3] = [["left", "right"], ["bottom", "top"], ["front", "back"]];

/// Eigenvalues of axis `axis`' second difference (`n` cells, `inv_h2 = 1/h^2`), indexed by
/// transform wavenumber, and its transform; `Err` names the unsupported pair of sides.
pub fn axis_eigenvalues(
    n: usize,
    inv_h2: f64,
    [lo, hi]: [FaceBc; 2],
    axis: usize,
) -> Result<(Vec<f64>, AxisTransform), String> {
    let s = 4.0 * inv_h2;
    let arg = |k: usize| std::f64::consts::PI * k as f64 / (2 * n) as f64;
    match (lo, hi) {
        (FaceBc::Neumann, FaceBc::Neumann) => Ok((
            (0..n).map(|k| -s * arg(k).sin().powi(2)).collect(),
            AxisTransform::Cosine { flip: false },
        )),
        (FaceBc::Dirichlet, FaceBc::Dirichlet) => Ok((
            (0..n).map(|k| -s * arg(k).cos().powi(2)).collect(),
            AxisTransform::Cosine { flip: true },
        )),
        (FaceBc::Periodic, FaceBc::Periodic) => Ok((
            (0..n).map(|k| -s * arg(2 * k).sin().powi(2)).collect(),
            AxisTransform::Hartley,
        )),
        _ => Err(format!(
            "the fft pressure solver needs the {} and {} sides both closed (walls, inflow: \
             dp/dn = 0), both open (outflow, opening: a held pressure) or periodic, but they are {lo:?} and {hi:?}; use multigrid",
            SIDES[axis][0], SIDES[axis][1]
        )),
    }
}

/// Why axis `axis` with sides `bc` cannot be solved by transforms, if it cannot.
pub fn check_axis(bc: [FaceBc; 2], axis: usize) -> Result<(), String> {
    axis_eigenvalues(1, 1.0, bc, axis).map(|_| ())
}

/// `L` in the transformed basis: one eigenvalue table and transform per axis.
pub struct Axes {
    pub lambda: Vec<Vec<f64>>,
    pub transform: Vec<AxisTransform>,
}

impl Axes {
    pub fn new<T: Real, const D: usize>(op: &Laplacian<T, D>) -> Result<Self, String> {
        let (mut lambda, mut transform) = (Vec::new(), Vec::new());
        for a in 0..D {
            let (l, t) = axis_eigenvalues(op.n[a], op.ih2[a].f64(), op.bc[a], a)?;
            lambda.push(l);
            transform.push(t);
        }
        Ok(Self { lambda, transform })
    }

    /// Whether odd cells of axis `a` change sign around the transforms.
    pub fn flip(&self, a: usize) -> bool {
        self.transform[a] == AxisTransform::Cosine { flip: true }
    }
}

/// The factor applied to the transform coefficient of one wavenumber: `scale / sum_a lambda_a`
/// (the eigenvalues of that wavenumber along each axis, summed in axis order), with `scale` the
/// inverse transforms' normalisation, and zero for the constant mode (the zero eigenvalue of a
/// box without Dirichlet sides). Computed in f64 by both backends (`dct_divide` in
/// `kernels/poisson.cu`).
pub fn multiplier(lambda: &[f64], scale: f64) -> f64 {
    let sum = lambda[1..].iter().fold(lambda[0], |s, l| s + l);
    if sum == 0.0 { 0.0 } else { scale / sum }
}

/// One axis' planned transform.
enum Plan<T: Real> {
    Cosine(Arc<dyn TransformType2And3<T>>),
    Hartley(Arc<dyn Fft<T>>),
}

impl<T: Real> Plan<T> {
    /// Scratch values per line.
    fn scratch_len(&self, n: usize) -> usize {
        match self {
            Plan::Cosine(p) => p.get_scratch_len(),
            Plan::Hartley(f) => 2 * (n + f.get_inplace_scratch_len()),
        }
    }
}

/// The transform solver for one operator, with its plans and workspace (solving does not
/// allocate).
pub struct Spectral<T: Real, const D: usize> {
    n: [usize; D],
    /// Index step along each axis.
    stride: [usize; D],
    /// [`multiplier`] of each wavenumber, laid out as the cells.
    inverse: Vec<T>,
    flip: [bool; D],
    plans: [Plan<T>; D],
    transposed: Vec<T>,
    /// Per-line scratch of the transforms, the largest of `lines * scratch_len` over the axes.
    scratch: Vec<T>,
}

impl<T: Real, const D: usize> Spectral<T, D> {
    /// Plans the transforms of `op`; `Err` when its sides do not pair up (see [`check_axis`]).
    pub fn new(op: &Laplacian<T, D>) -> Result<Self, String> {
        let n = op.n;
        let len = op.len();
        let axes = Axes::new(op)?;
        // DCT-III after DCT-II returns n/2 times the input, the Hartley transform twice n times.
        let numerator: f64 = axes
            .transform
            .iter()
            .map(|t| if *t == AxisTransform::Hartley { 1.0 } else { 2.0 })
            .product();
        let scale = numerator / len as f64;
        let mut lambda = [0.0; D];
        let inverse = (0..len)
            .map(|k| {
                for a in 0..D {
                    lambda[a] = axes.lambda[a][k / op.stride[a] % n[a]];
                }
                T::of(multiplier(&lambda, scale))
            })
            .collect();
        let (mut dct, mut fft) = (DctPlanner::new(), FftPlanner::new());
        let plans: [Plan<T>; D] = std::array::from_fn(|a| match axes.transform[a] {
            AxisTransform::Cosine { .. } => Plan::Cosine(dct.plan_dct2(n[a])),
            AxisTransform::Hartley => Plan::Hartley(fft.plan_fft_forward(n[a])),
        });
        let scratch = (0..D)
            .map(|a| len / n[a] * plans[a].scratch_len(n[a]))
            .max()
            .unwrap_or(0);
        Ok(Self {
            n,
            stride: op.stride,
            inverse,
            flip: std::array::from_fn(|a| axes.flip(a)),
            plans,
            transposed: vec![T::zero(); if D > 1 { len } else { 0 }],
            scratch: vec![T::zero(); scratch],
        })
    }

    /// `p = L^-1 b` (`b` compatible when `L` is singular: zero mean).
    pub fn solve(&mut self, p: &mut [T], b: &[T]) {
        p.copy_from_slice(b);
        self.flip_odd(p);
        for a in 0..D {
            self.along(p, a, Pass::Forward);
        }
        p.par_iter_mut()
            .zip(&self.inverse)
            .for_each(|(x, s)| *x = *x * *s);
        for a in (0..D).rev() {
            self.along(p, a, Pass::Inverse);
        }
        self.flip_odd(p);
    }

    /// Transforms every line of `x` along axis `a`: in place for x, else between transposes
    /// that make the axis contiguous (blocks of `n[a]` rows of `stride[a]` values).
    fn along(&mut self, x: &mut [T], a: usize, pass: Pass) {
        let plan = &self.plans[a];
        if a == 0 {
            rows(x, self.n[0], &mut self.scratch, plan, pass);
            return;
        }
        let (inner, na) = (self.stride[a], self.n[a]);
        let block = inner * na;
        let t = &mut self.transposed;
        x.par_chunks(block)
            .zip(t.par_chunks_mut(block))
            .for_each(|(x, t)| transpose::transpose(x, t, inner, na));
        rows(t, na, &mut self.scratch, plan, pass);
        t.par_chunks(block)
            .zip(x.par_chunks_mut(block))
            .for_each(|(t, x)| transpose::transpose(t, x, na, inner));
    }

    /// Multiplies each cell by `(-1)^(number of Dirichlet axes along which its index is odd)`
    /// (the DST-II to DCT-II map).
    fn flip_odd(&self, p: &mut [T]) {
        if !self.flip.contains(&true) {
            return;
        }
        let (n, stride, flip) = (self.n, self.stride, self.flip);
        p.par_chunks_mut(n[0]).enumerate().for_each(|(r, row)| {
            let k0 = r * n[0];
            let odd_rows = (1..D)
                .filter(|&a| flip[a] && (k0 / stride[a] % n[a]) % 2 == 1)
                .count();
            for (i, x) in row.iter_mut().enumerate() {
                if (odd_rows + (flip[0] && i % 2 == 1) as usize) % 2 == 1 {
                    *x = -*x;
                }
            }
        });
    }
}

#[derive(Clone, Copy)]
enum Pass {
    /// DCT-II, or the Hartley transform.
    Forward,
    /// DCT-III, the inverse of DCT-II up to the factor `2 / n`; the Hartley transform again.
    Inverse,
}

/// Transforms every line of length `n` of `x` in parallel, each with its own scratch.
fn rows<T: Real>(x: &mut [T], n: usize, scratch: &mut [T], plan: &Plan<T>, pass: Pass) {
    let per = plan.scratch_len(n);
    let lines = x.par_chunks_mut(n);
    let work = |(line, s): (&mut [T], &mut [T])| match (plan, pass) {
        (Plan::Cosine(p), Pass::Forward) => p.process_dct2_with_scratch(line, s),
        (Plan::Cosine(p), Pass::Inverse) => p.process_dct3_with_scratch(line, s),
        (Plan::Hartley(f), _) => hartley(f.as_ref(), line, s),
    };
    if per == 0 {
        lines.for_each(|line| work((line, &mut [])));
    } else {
        lines.zip(scratch.par_chunks_mut(per)).for_each(work);
    }
}

/// `line <- H line`, the discrete Hartley transform `H_k = Re F_k - Im F_k` through the FFT
/// `F`; `scratch` holds the complex line and the FFT's own scratch, as real pairs.
fn hartley<T: Real>(fft: &dyn Fft<T>, line: &mut [T], scratch: &mut [T]) {
    let n = line.len();
    let (buffer, work) = scratch.split_at_mut(2 * n);
    let buffer: &mut [Complex<T>] = bytemuck_complex(buffer);
    let work: &mut [Complex<T>] = bytemuck_complex(work);
    for (c, x) in buffer.iter_mut().zip(line.iter()) {
        *c = Complex::new(*x, T::zero());
    }
    fft.process_with_scratch(buffer, work);
    for (x, c) in line.iter_mut().zip(buffer.iter()) {
        *x = c.re - c.im;
    }
}

/// A slice of real pairs seen as complex numbers (`Complex<T>` is `repr(C)` `{re, im}`).
fn bytemuck_complex<T: Real>(x: &mut [T]) -> &mut [Complex<T>] {
    assert!(x.len() % 2 == 0);
    // SAFETY: Complex<T> is #[repr(C)] with two T fields, so it has T's alignment and twice its
    // size; the length is halved accordingly.
    unsafe { std::slice::from_raw_parts_mut(x.as_mut_ptr().cast::<Complex<T>>(), x.len() / 2) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::RowSums;
    use crate::solver::incompressible::pressure_poisson::residual_norm;

    /// Random right-hand sides on odd, even and non-square grids with unequal spacing: the
    /// transform solution satisfies `L p = b` to rounding (relative residual <= 1e-12 in f64,
    /// where an iterative solver stops at its tolerance).
    #[test]
    fn solves_every_paired_boundary_set_to_rounding() {
        use FaceBc::*;
        for bc in [
            [[Neumann; 2]; 2],
            [[Dirichlet; 2]; 2],
            [[Dirichlet; 2], [Neumann; 2]],
            [[Neumann; 2], [Dirichlet; 2]],
            [[Periodic; 2], [Neumann; 2]],
            [[Dirichlet; 2], [Periodic; 2]],
        ] {
            for (nx, ny) in [(1, 1), (2, 3), (17, 12), (64, 40), (33, 65)] {
                let op = Laplacian::<f64, 2>::new([nx, ny], [0.7 / nx as f64, 1.3 / ny as f64], bc);
                let mut b: Vec<f64> = (0..nx * ny)
                    .map(|k| ((k * 7919 + 13) % 101) as f64 / 50.0 - 1.0)
                    .collect();
                if op.singular() {
                    let mean = b.iter().sum::<f64>() / b.len() as f64;
                    b.iter_mut().for_each(|x| *x -= mean);
                }
                let mut p = vec![0.0; nx * ny];
                Spectral::new(&op).unwrap().solve(&mut p, &b);
                let r = residual_norm(&op, &p, &b, &mut RowSums::whole(ny));
                let bn = b.iter().map(|x| x * x).sum::<f64>().sqrt();
                assert!(r <= 1e-12 * bn, "{bc:?} {nx}x{ny}: residual {:e}", r / bn);
                if op.singular() {
                    let mean = p.iter().sum::<f64>() / p.len() as f64;
                    assert!(mean.abs() < 1e-12, "{bc:?} {nx}x{ny}: mean {mean:e}");
                }
            }
        }
    }

    /// The same in 3D, every pairing of sides on each axis, unequal sizes and spacings.
    #[test]
    fn solves_3d_boxes_to_rounding() {
        use FaceBc::*;
        let pairs = [[Neumann; 2], [Dirichlet; 2], [Periodic; 2]];
        for (m, n) in [(0usize, [6usize, 5, 4]), (1, [8, 3, 7]), (2, [4, 9, 6])] {
            for a in 0..3 {
                for b in 0..3 {
                    let bc = [pairs[m], pairs[a], pairs[b]];
                    let h = [0.7 / n[0] as f64, 1.1 / n[1] as f64, 1.3 / n[2] as f64];
                    let op = Laplacian::<f64, 3>::new(n, h, bc);
                    let len = op.len();
                    let mut b: Vec<f64> = (0..len)
                        .map(|k| ((k * 7919 + 13) % 101) as f64 / 50.0 - 1.0)
                        .collect();
                    if op.singular() {
                        let mean = b.iter().sum::<f64>() / len as f64;
                        b.iter_mut().for_each(|x| *x -= mean);
                    }
                    let mut p = vec![0.0; len];
                    Spectral::new(&op).unwrap().solve(&mut p, &b);
                    let r = residual_norm(&op, &p, &b, &mut RowSums::whole(op.rows()));
                    let bn = b.iter().map(|x| x * x).sum::<f64>().sqrt();
                    assert!(r <= 1e-12 * bn, "{bc:?} {n:?}: residual {:e}", r / bn);
                }
            }
        }
    }

    #[test]
    fn refuses_mixed_axes_naming_the_sides() {
        use FaceBc::*;
        for (bc, axis, side) in [
            ([Neumann, Dirichlet], 0, "left"),
            ([Dirichlet, Neumann], 1, "top"),
            ([Periodic, Neumann], 2, "back"),
        ] {
            let e = check_axis(bc, axis).unwrap_err();
            let odd = bc.iter().find(|s| **s != Neumann).unwrap();
            assert!(
                e.contains("multigrid") && e.contains(&format!("{odd:?}")) && e.contains(side),
                "{e}"
            );
        }
        assert!(check_axis([Periodic, Periodic], 0).is_ok());
    }
}
