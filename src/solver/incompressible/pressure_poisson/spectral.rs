//! Direct solution of the pressure equation by fast cosine transforms, for boxes whose sides
//! pair up along each axis: both Neumann (walls, inflow) or both Dirichlet (outflow).
//!
//! The five-point [`Laplacian`] separates, `L = A_x (x) I + I (x) A_y`, and each 1D operator
//! `A` (second difference with face conditions, spacing `h`, `n` cells) is diagonalised by a
//! discrete cosine transform (Schumann & Sweet 1988; Strang 1999, "The discrete cosine
//! transform"). With `X_k = sum_i x_i cos(pi k (2i + 1) / (2n))` (DCT-II, `k, i in 0..n`):
//!
//! - Neumann on both sides: `A` has the DCT-II basis and eigenvalues
//!   `lambda_k = -(4 / h^2) sin^2(pi k / (2n))`;
//! - Dirichlet on both faces: `A` has the DST-II basis `sin(pi m (2i + 1) / (2n))`,
//!   `m = 1..n`, with `lambda = -(4 / h^2) sin^2(pi m / (2n))`. As `DST-II(x)_{n-1-k} =
//!   DCT-II((-1)^i x_i)_k`, the same DCT serves after flipping the sign of odd cells, with
//!   `lambda_k = -(4 / h^2) cos^2(pi k / (2n))` for DCT index `k`.
//!
//! So `p = T^-1 [T b / (lambda_x + lambda_y)]` with `T` the 2D DCT-II: exact up to rounding,
//! `O(n log n)`, no iteration. The zero eigenvalue (both axes Neumann) is the constant mode: it
//! is dropped, which solves the compatible problem with zero-mean `p` (the convention of every
//! pressure solver here). Periodic and mixed Neumann/Dirichlet axes need other transforms and
//! are refused by [`check`]. The CUDA backend uses the same [`axis_eigenvalues`] with cuFFT.

use super::{FaceBc, Laplacian};
use crate::solver::real::Real;
use rayon::prelude::*;
use rustdct::{DctPlanner, TransformType2And3};
use std::sync::Arc;

/// Eigenvalues of one axis' second difference (`n` cells, `inv_h2 = 1/h^2`), indexed by DCT-II
/// wavenumber, and whether odd cells change sign (Dirichlet axes); `Err` names the unsupported
/// pair of sides (`names`, e.g. `["left", "right"]`).
pub fn axis_eigenvalues(
    n: usize,
    inv_h2: f64,
    [lo, hi]: [FaceBc; 2],
    names: [&str; 2],
) -> Result<(Vec<f64>, bool), String> {
    let s = 4.0 * inv_h2;
    let arg = |k: usize| std::f64::consts::PI * k as f64 / (2 * n) as f64;
    match (lo, hi) {
        (FaceBc::Neumann, FaceBc::Neumann) => {
            Ok(((0..n).map(|k| -s * arg(k).sin().powi(2)).collect(), false))
        }
        (FaceBc::Dirichlet, FaceBc::Dirichlet) => {
            Ok(((0..n).map(|k| -s * arg(k).cos().powi(2)).collect(), true))
        }
        _ => Err(format!(
            "the fft pressure solver needs the {} and {} sides both closed (walls, inflow: \
             dp/dn = 0) or both open (outflow: p = 0), but they are {lo:?} and {hi:?}; use multigrid",
            names[0], names[1]
        )),
    }
}

const X: [&str; 2] = ["left", "right"];
const Y: [&str; 2] = ["bottom", "top"];

/// `L` in the transformed basis: one eigenvalue table per axis, and the sign flips.
pub struct Axes {
    pub lambda_x: Vec<f64>,
    pub lambda_y: Vec<f64>,
    /// Dirichlet x axis, Dirichlet y axis.
    pub flip: [bool; 2],
}

impl Axes {
    pub fn new<T: Real>(op: &Laplacian<T>) -> Result<Self, String> {
        let (lambda_x, fx) = axis_eigenvalues(op.nx, op.idx2.f64(), [op.bc[0], op.bc[1]], X)?;
        let (lambda_y, fy) = axis_eigenvalues(op.ny, op.idy2.f64(), [op.bc[2], op.bc[3]], Y)?;
        Ok(Self {
            lambda_x,
            lambda_y,
            flip: [fx, fy],
        })
    }
}

/// The factor applied to the transform coefficient of wavenumber `(kx, ky)`:
/// `scale / (lambda_x + lambda_y)`, with `scale` the inverse transform's normalisation, and zero
/// for the constant mode (the zero eigenvalue of an all-Neumann box). Computed in f64 by both
/// backends (`dct_divide` in `kernels/poisson.cu`).
pub fn multiplier(lambda_x: f64, lambda_y: f64, scale: f64) -> f64 {
    let lambda = lambda_x + lambda_y;
    if lambda == 0.0 { 0.0 } else { scale / lambda }
}

/// Why `op` cannot be solved by transforms (the sides are in `laplacian.rs` order), if it cannot.
pub fn check(bc: [FaceBc; 4]) -> Result<(), String> {
    axis_eigenvalues(1, 1.0, [bc[0], bc[1]], X)?;
    axis_eigenvalues(1, 1.0, [bc[2], bc[3]], Y).map(|_| ())
}

/// The transform solver for one operator, with its plans and workspace (solving does not
/// allocate).
pub struct Spectral<T: Real> {
    nx: usize,
    ny: usize,
    /// `1 / (lambda_x[i] + lambda_y[j])`, times the inverse transforms' scale `(2/nx)(2/ny)`,
    /// zero for the constant mode; stored `[i * ny + j]` (the transposed layout).
    inverse: Vec<T>,
    flip: [bool; 2],
    dct_x: Arc<dyn TransformType2And3<T>>,
    dct_y: Arc<dyn TransformType2And3<T>>,
    transposed: Vec<T>,
    /// Per-line scratch of the transforms, `max(ny * scratch_x, nx * scratch_y)`.
    scratch: Vec<T>,
}

impl<T: Real> Spectral<T> {
    /// Plans the transforms of `op`; `Err` when its sides do not pair up (see [`check`]).
    pub fn new(op: &Laplacian<T>) -> Result<Self, String> {
        let (nx, ny) = (op.nx, op.ny);
        let axes = Axes::new(op)?;
        // DCT-III after DCT-II returns n/2 times the input, per axis.
        let scale = 4.0 / (nx * ny) as f64;
        let inverse = (0..nx * ny)
            .map(|k| T::of(multiplier(axes.lambda_x[k / ny], axes.lambda_y[k % ny], scale)))
            .collect();
        let mut planner = DctPlanner::new();
        let (dct_x, dct_y) = (planner.plan_dct2(nx), planner.plan_dct2(ny));
        let scratch = (ny * dct_x.get_scratch_len()).max(nx * dct_y.get_scratch_len());
        Ok(Self {
            nx,
            ny,
            inverse,
            flip: axes.flip,
            dct_x,
            dct_y,
            transposed: vec![T::zero(); nx * ny],
            scratch: vec![T::zero(); scratch],
        })
    }

    /// `p = L^-1 b` (`b` compatible when `L` is singular: zero mean).
    pub fn solve(&mut self, p: &mut [T], b: &[T]) {
        let (nx, ny) = (self.nx, self.ny);
        p.copy_from_slice(b);
        self.flip_odd(p);
        rows(p, nx, &mut self.scratch, &self.dct_x, Pass::Forward);
        transpose::transpose(p, &mut self.transposed, nx, ny);
        let t = &mut self.transposed;
        rows(t, ny, &mut self.scratch, &self.dct_y, Pass::Forward);
        t.par_iter_mut()
            .zip(&self.inverse)
            .for_each(|(x, s)| *x = *x * *s);
        rows(t, ny, &mut self.scratch, &self.dct_y, Pass::Inverse);
        transpose::transpose(t, p, ny, nx);
        rows(p, nx, &mut self.scratch, &self.dct_x, Pass::Inverse);
        self.flip_odd(p);
    }

    /// Multiplies cell `(i, j)` by `(-1)^i` on a Dirichlet x axis and `(-1)^j` on a Dirichlet y
    /// axis (the DST-II to DCT-II map).
    fn flip_odd(&self, p: &mut [T]) {
        let [fx, fy] = self.flip;
        if !fx && !fy {
            return;
        }
        p.par_chunks_mut(self.nx).enumerate().for_each(|(j, row)| {
            for (i, x) in row.iter_mut().enumerate() {
                if (fx && i % 2 == 1) != (fy && j % 2 == 1) {
                    *x = -*x;
                }
            }
        });
    }
}

#[derive(Clone, Copy)]
enum Pass {
    /// DCT-II.
    Forward,
    /// DCT-III, the inverse of DCT-II up to the factor `2 / n`.
    Inverse,
}

/// Transforms every line of length `n` of `x` in parallel, each with its own scratch.
fn rows<T: Real>(
    x: &mut [T],
    n: usize,
    scratch: &mut [T],
    plan: &Arc<dyn TransformType2And3<T>>,
    pass: Pass,
) {
    let per = plan.get_scratch_len();
    let lines = x.par_chunks_mut(n);
    let work = |(line, s): (&mut [T], &mut [T])| match pass {
        Pass::Forward => plan.process_dct2_with_scratch(line, s),
        Pass::Inverse => plan.process_dct3_with_scratch(line, s),
    };
    if per == 0 {
        lines.for_each(|line| work((line, &mut [])));
    } else {
        lines.zip(scratch.par_chunks_mut(per)).for_each(work);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::incompressible::pressure_poisson::residual_norm;

    /// Random right-hand sides on odd, even and non-square grids with unequal spacing: the
    /// transform solution satisfies `L p = b` to rounding (relative residual <= 1e-12 in f64,
    /// where an iterative solver stops at its tolerance).
    #[test]
    fn solves_every_paired_boundary_set_to_rounding() {
        use FaceBc::*;
        for bc in [
            [Neumann; 4],
            [Dirichlet; 4],
            [Dirichlet, Dirichlet, Neumann, Neumann],
            [Neumann, Neumann, Dirichlet, Dirichlet],
        ] {
            for (nx, ny) in [(1, 1), (2, 3), (17, 12), (64, 40), (33, 65)] {
                let op = Laplacian::<f64>::new(nx, ny, 0.7 / nx as f64, 1.3 / ny as f64, bc);
                let mut b: Vec<f64> = (0..nx * ny)
                    .map(|k| ((k * 7919 + 13) % 101) as f64 / 50.0 - 1.0)
                    .collect();
                if op.singular() {
                    let mean = b.iter().sum::<f64>() / b.len() as f64;
                    b.iter_mut().for_each(|x| *x -= mean);
                }
                let mut p = vec![0.0; nx * ny];
                Spectral::new(&op).unwrap().solve(&mut p, &b);
                let mut partial = vec![0.0; ny];
                let r = residual_norm(&op, &p, &b, &mut partial);
                let bn = b.iter().map(|x| x * x).sum::<f64>().sqrt();
                assert!(r <= 1e-12 * bn, "{bc:?} {nx}x{ny}: residual {:e}", r / bn);
                if op.singular() {
                    let mean = p.iter().sum::<f64>() / p.len() as f64;
                    assert!(mean.abs() < 1e-12, "{bc:?} {nx}x{ny}: mean {mean:e}");
                }
            }
        }
    }

    #[test]
    fn refuses_periodic_and_mixed_axes_naming_the_sides() {
        use FaceBc::*;
        for bc in [
            [Periodic, Periodic, Neumann, Neumann],
            [Neumann, Dirichlet, Neumann, Neumann],
            [Neumann, Neumann, Dirichlet, Neumann],
        ] {
            let e = check(bc).unwrap_err();
            let odd = bc.iter().find(|s| **s != Neumann).unwrap();
            assert!(e.contains("multigrid") && e.contains(&format!("{odd:?}")), "{e}");
        }
        assert!(check([Neumann, Neumann, Dirichlet, Dirichlet]).is_ok());
    }
}
