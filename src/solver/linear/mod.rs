//! Linear solvers for the five-point systems of the SIMPLE family (Patankar 1980, ch. 4-6):
//! `a_P x_P = a_E x_E + a_W x_W + a_N x_N + a_S x_S + b` on an `ni x nj` block of unknowns.
//!
//! - [`thomas`] and [`pcr`]: one tridiagonal line (Thomas on the CPU; parallel cyclic reduction
//!   as the reference of the GPU line solver, Lohry 2010 ch. 3-4);
//! - [`adi`]: line-by-line sweeps along x then y, each line by Thomas;
//! - [`jacobi`]: weighted point Jacobi;
//! - [`conjugate_gradient`]: preconditioned CG for symmetric definite operators (also the
//!   projection method's pressure solver, through its Laplacian);
//! - [`additive_correction`]: additive-correction multigrid (Hutchinson & Raithby 1986), one
//!   V-cycle as CG's preconditioner for the pressure systems (`multigrid_cg`);
//! - [`bicgstab`]: Jacobi-preconditioned BiCGSTAB for the non-symmetric momentum systems;
//! - [`cuda`]: ADI (lines by parallel cyclic reduction), Jacobi, CG and BiCGSTAB on the GPU, for
//!   systems in device memory;
//! - [`schwarz`]: overlapping Schwarz domain decomposition in strips along y, each strip solved by
//!   one of the above (one coloured multiplicative pass per solve).
//!
//! [`LinearSolver::solve`] iterates from the given `x` until `||r|| <= tol ||r_0||` (`r = b + sum
//! a_nb x_nb - a_P x`, `r_0` that of the starting `x`) or the iteration cap. Reductions are
//! ordered by rows ([`crate::backend::cpu::ordered_sum`]) and the ADI lines are coloured, so the
//! results do not depend on the number of threads.

pub mod additive_correction;
pub mod adi;
pub mod bicgstab;
pub mod conjugate_gradient;
pub mod cuda;
pub mod jacobi;
pub mod pcr;
pub mod schwarz;
pub mod thomas;

pub use additive_correction::AdditiveCorrection;
pub use conjugate_gradient::{CgOperator, CgWork};
pub use pcr::pcr;
pub use schwarz::Schwarz;
pub use thomas::thomas;

use crate::backend::cpu::ordered_sum;
use crate::case::LinearSolverKind;
use crate::solver::real::Real;
use rayon::prelude::*;

/// The system `a_P x_P = sum_nb a_nb x_nb + b` on `ni x nj` unknowns, index `j * ni + i`
/// (`i` along x). A link that leaves the block is not read unless that axis is periodic, where
/// it couples to the opposite end.
#[derive(Clone, Debug, PartialEq)]
pub struct FivePoint<T> {
    pub ni: usize,
    pub nj: usize,
    /// Periodic along x, along y.
    pub periodic: [bool; 2],
    pub ap: Vec<T>,
    pub ae: Vec<T>,
    pub aw: Vec<T>,
    pub an: Vec<T>,
    pub as_: Vec<T>,
    pub b: Vec<T>,
}

impl<T: Real> FivePoint<T> {
    /// A zero system.
    pub fn new(ni: usize, nj: usize, periodic: [bool; 2]) -> Self {
        let z = vec![T::zero(); ni * nj];
        Self {
            ni,
            nj,
            periodic,
            ap: z.clone(),
            ae: z.clone(),
            aw: z.clone(),
            an: z.clone(),
            as_: z.clone(),
            b: z,
        }
    }

    pub fn len(&self) -> usize {
        self.ni * self.nj
    }

    /// `sum_nb a_nb x_nb` of unknown `(i, j)`.
    #[inline(always)]
    pub fn neighbours(&self, x: impl Fn(usize) -> T, i: usize, j: usize) -> T {
        let (ni, nj) = (self.ni, self.nj);
        let k = j * ni + i;
        let mut s = T::zero();
        if i + 1 < ni {
            s = s + self.ae[k] * x(k + 1);
        } else if self.periodic[0] {
            s = s + self.ae[k] * x(k + 1 - ni);
        }
        if i > 0 {
            s = s + self.aw[k] * x(k - 1);
        } else if self.periodic[0] {
            s = s + self.aw[k] * x(k + ni - 1);
        }
        if j + 1 < nj {
            s = s + self.an[k] * x(k + ni);
        } else if self.periodic[1] {
            s = s + self.an[k] * x(i);
        }
        if j > 0 {
            s = s + self.as_[k] * x(k - ni);
        } else if self.periodic[1] {
            s = s + self.as_[k] * x((nj - 1) * ni + i);
        }
        s
    }

    /// `r = b + sum a_nb x_nb - a_P x` of unknown `(i, j)`.
    #[inline(always)]
    pub fn residual_at(&self, x: &[T], i: usize, j: usize) -> T {
        let k = j * self.ni + i;
        self.b[k] + self.neighbours(|m| x[m], i, j) - self.ap[k] * x[k]
    }

    /// `||b + sum a_nb x_nb - a_P x||_2`; `partial` has `nj` entries.
    pub fn residual_norm(&self, x: &[T], partial: &mut [T]) -> T {
        ordered_sum(partial, |j| {
            (0..self.ni)
                .map(|i| {
                    let r = self.residual_at(x, i, j);
                    r * r
                })
                .fold(T::zero(), |a, v| a + v)
        })
        .sqrt()
    }

    /// `sum |b + sum a_nb x_nb - a_P x|` (the L1 norm Patankar's residuals use).
    pub fn residual_l1(&self, x: &[T], partial: &mut [T]) -> T {
        ordered_sum(partial, |j| {
            (0..self.ni)
                .map(|i| self.residual_at(x, i, j).abs())
                .fold(T::zero(), |a, v| a + v)
        })
    }
}

impl<T: Real> FivePoint<T> {
    /// `out = A x`, `A = diag(a_P) - (a_nb links)` (the matrix of the Krylov solvers).
    pub fn apply(&self, x: &[T], out: &mut [T]) {
        let ni = self.ni;
        out.par_chunks_mut(ni).enumerate().for_each(|(j, row)| {
            for (i, o) in row.iter_mut().enumerate() {
                *o = self.ap[j * ni + i] * x[j * ni + i] - self.neighbours(|m| x[m], i, j);
            }
        });
    }

    /// The diagonal (Jacobi) preconditioner `w = r / a_P`.
    pub fn jacobi(&self, r: &[T], w: &mut [T]) {
        w.par_iter_mut()
            .zip(r.par_iter().zip(self.ap.par_iter()))
            .for_each(|(w, (&r, &ap))| *w = r / ap);
    }
}

/// A five-point system as a [`CgOperator`]: preconditioned by its diagonal, or by one
/// additive-correction multigrid V-cycle.
struct Preconditioned<'a, T> {
    sys: &'a FivePoint<T>,
    multigrid: Option<&'a mut AdditiveCorrection<T>>,
}

impl<T: Real> CgOperator<T> for Preconditioned<'_, T> {
    fn row_len(&self) -> usize {
        self.sys.ni
    }

    fn apply(&self, x: &[T], out: &mut [T]) {
        self.sys.apply(x, out);
    }

    fn precondition(&mut self, r: &[T], w: &mut [T]) {
        match &mut self.multigrid {
            Some(mg) => mg.precondition(self.sys, r, w),
            None => self.sys.jacobi(r, w),
        }
    }
}

/// Ordered dot product over rows of length `row_len` (`partial` has one entry per row).
pub fn dot<T: Real>(a: &[T], b: &[T], partial: &mut [T], row_len: usize) -> T {
    ordered_sum(partial, |j| {
        let (ra, rb) = (
            &a[j * row_len..(j + 1) * row_len],
            &b[j * row_len..(j + 1) * row_len],
        );
        ra.iter().zip(rb).fold(T::zero(), |s, (&x, &y)| s + x * y)
    })
}

/// What one linear solve did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinearStats {
    pub iterations: usize,
    /// `||r||_2` at the starting `x`, and at exit.
    pub initial_residual: f64,
    pub final_residual: f64,
    pub converged: bool,
}

impl LinearStats {
    /// `final_residual / initial_residual` (0 for a solve that started at a zero residual).
    pub fn reduction(&self) -> f64 {
        if self.initial_residual > 0.0 {
            self.final_residual / self.initial_residual
        } else {
            0.0
        }
    }
}

/// A linear solver of one kind with its workspace for systems of one size (solving does not
/// allocate, except the ADI's per-thread line buffers).
pub struct LinearSolver<T> {
    pub kind: LinearSolverKind,
    work: Work<T>,
    partial: Vec<T>,
}

enum Work<T> {
    Adi,
    Jacobi(Vec<T>),
    Cg(CgWork<T>),
    MultigridCg(CgWork<T>, AdditiveCorrection<T>),
    Bicgstab(Vec<Vec<T>>),
}

impl<T: Real> LinearSolver<T> {
    pub fn new(kind: LinearSolverKind, ni: usize, nj: usize) -> Self {
        let n = ni * nj;
        let work = match kind {
            LinearSolverKind::Adi => Work::Adi,
            LinearSolverKind::Jacobi => Work::Jacobi(vec![T::zero(); n]),
            LinearSolverKind::Cg => Work::Cg(CgWork::new(n)),
            LinearSolverKind::MultigridCg => {
                Work::MultigridCg(CgWork::new(n), AdditiveCorrection::new(ni, nj))
            }
            LinearSolverKind::Bicgstab => Work::Bicgstab(vec![vec![T::zero(); n]; 8]),
        };
        Self {
            kind,
            work,
            partial: vec![T::zero(); nj],
        }
    }

    /// Iterates on `x` until `||r|| <= tol ||r_0||` or `max` iterations (ADI and Jacobi sweeps,
    /// Krylov iterations).
    pub fn solve(&mut self, sys: &FivePoint<T>, x: &mut [T], tol: f64, max: usize) -> LinearStats {
        let partial = &mut self.partial;
        let r0 = sys.residual_norm(x, partial);
        let target = T::of(tol) * r0;
        let (iterations, r) = if r0 == T::zero() {
            (0, r0)
        } else {
            match &mut self.work {
                Work::Adi => adi::solve(sys, x, partial, target, max),
                Work::Jacobi(next) => jacobi::solve(sys, x, next, partial, target, max),
                Work::Cg(work) => {
                    let mut op = Preconditioned { sys, multigrid: None };
                    conjugate_gradient::solve(&mut op, x, &sys.b, work, partial, target, max)
                }
                Work::MultigridCg(work, mg) => {
                    mg.set_up(sys);
                    let mut op = Preconditioned {
                        sys,
                        multigrid: Some(mg),
                    };
                    conjugate_gradient::solve(&mut op, x, &sys.b, work, partial, target, max)
                }
                Work::Bicgstab(work) => bicgstab::solve(sys, x, work, partial, target, max),
            }
        };
        LinearStats {
            iterations,
            initial_residual: r0.f64(),
            final_residual: r.f64(),
            converged: r <= target,
        }
    }
}

#[cfg(test)]
mod tests;
