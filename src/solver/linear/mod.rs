//! Linear solvers for the five-point (2D) and seven-point (3D) systems of the SIMPLE family
//! (Patankar 1980, ch. 4-6): `a_P x_P = sum_nb a_nb x_nb + b` over the two neighbours along each
//! axis ([`Stencil`]).
//!
//! - [`thomas`] and [`pcr`]: one tridiagonal line (Thomas on the CPU; parallel cyclic reduction
//!   as the reference of the GPU line solver, Lohry 2010 ch. 3-4);
//! - [`adi`]: line-by-line sweeps along x, then y (then z), each line by Thomas;
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

/// The system `a_P x_P = sum_nb a_nb x_nb + b` on an `n[0] x n[1] (x n[2])` block of unknowns,
/// index `i + n0 (j + n1 k)` (x fastest); `a[axis][0]` links each unknown to its lower neighbour
/// along `axis` (Patankar's a_W, a_S, a_B) and `a[axis][1]` to its upper one (a_E, a_N, a_T): the
/// five-point system in 2D, the seven-point one in 3D. A link that leaves the block is not read
/// unless that axis is periodic, where it couples to the opposite end.
#[derive(Clone, Debug, PartialEq)]
pub struct Stencil<T, const D: usize> {
    /// Unknowns per axis.
    pub n: [usize; D],
    /// Periodic axes.
    pub periodic: [bool; D],
    pub ap: Vec<T>,
    pub a: [[Vec<T>; 2]; D],
    pub b: Vec<T>,
}

impl<T: Real, const D: usize> Stencil<T, D> {
    /// A zero system.
    pub fn new(n: [usize; D], periodic: [bool; D]) -> Self {
        let z = vec![T::zero(); n.iter().product()];
        Self {
            n,
            periodic,
            ap: z.clone(),
            a: std::array::from_fn(|_| [z.clone(), z.clone()]),
            b: z,
        }
    }

    pub fn len(&self) -> usize {
        self.n.iter().product()
    }

    /// Unknowns of one row (along x).
    pub fn row_len(&self) -> usize {
        self.n[0]
    }

    /// Rows of unknowns along x (`n1`, or `n1 n2`).
    pub fn rows(&self) -> usize {
        self.len() / self.n[0]
    }

    /// Index step along `axis`.
    pub fn stride(&self, axis: usize) -> usize {
        self.n[..axis].iter().product()
    }

    /// The position of unknown `k` along every axis.
    pub fn position(&self, mut k: usize) -> [usize; D] {
        std::array::from_fn(|a| {
            let i = k % self.n[a];
            k /= self.n[a];
            i
        })
    }

    /// `sum_nb a_nb x_nb` of unknown `k` at position `idx`: the axes in order, the upper
    /// neighbour before the lower.
    #[inline(always)]
    pub fn neighbours(&self, x: impl Fn(usize) -> T, idx: [usize; D], k: usize) -> T {
        let mut s = T::zero();
        let mut st = 1;
        for a in 0..D {
            let (n, i) = (self.n[a], idx[a]);
            let [lower, upper] = &self.a[a];
            if i + 1 < n {
                s = s + upper[k] * x(k + st);
            } else if self.periodic[a] {
                s = s + upper[k] * x(k - (n - 1) * st);
            }
            if i > 0 {
                s = s + lower[k] * x(k - st);
            } else if self.periodic[a] {
                s = s + lower[k] * x(k + (n - 1) * st);
            }
            st *= n;
        }
        s
    }

    /// `r = b + sum a_nb x_nb - a_P x` of unknown `k` at position `idx`.
    #[inline(always)]
    pub fn residual_at(&self, x: &[T], idx: [usize; D], k: usize) -> T {
        self.b[k] + self.neighbours(|m| x[m], idx, k) - self.ap[k] * x[k]
    }

    /// `f(k, idx)` for the unknowns of row `j`, in order.
    #[inline(always)]
    pub fn each_in_row(&self, j: usize, mut f: impl FnMut(usize, [usize; D])) {
        let n0 = self.n[0];
        let mut idx = self.position(j * n0);
        for i in 0..n0 {
            idx[0] = i;
            f(j * n0 + i, idx);
        }
    }

    /// `out[k] = f(k, idx)` over every unknown, rows in parallel.
    pub fn each(&self, out: &mut [T], f: impl Fn(usize, [usize; D]) -> T + Sync) {
        out.par_chunks_mut(self.n[0]).enumerate().for_each(|(j, row)| {
            let mut o = row.iter_mut();
            self.each_in_row(j, |k, idx| *o.next().expect("one value per unknown") = f(k, idx));
        });
    }

    /// `||b + sum a_nb x_nb - a_P x||_2`; `partial` has one entry per row.
    pub fn residual_norm(&self, x: &[T], partial: &mut [T]) -> T {
        ordered_sum(partial, |j| {
            let mut s = T::zero();
            self.each_in_row(j, |k, idx| {
                let r = self.residual_at(x, idx, k);
                s = s + r * r;
            });
            s
        })
        .sqrt()
    }

    /// `sum |b + sum a_nb x_nb - a_P x|` (the L1 norm Patankar's residuals use).
    pub fn residual_l1(&self, x: &[T], partial: &mut [T]) -> T {
        ordered_sum(partial, |j| {
            let mut s = T::zero();
            self.each_in_row(j, |k, idx| s = s + self.residual_at(x, idx, k).abs());
            s
        })
    }

    /// `out = A x`, `A = diag(a_P) - (a_nb links)` (the matrix of the Krylov solvers).
    pub fn apply(&self, x: &[T], out: &mut [T]) {
        self.each(out, |k, idx| {
            self.ap[k] * x[k] - self.neighbours(|m| x[m], idx, k)
        });
    }

    /// The diagonal (Jacobi) preconditioner `w = r / a_P`.
    pub fn jacobi(&self, r: &[T], w: &mut [T]) {
        w.par_iter_mut()
            .zip(r.par_iter().zip(self.ap.par_iter()))
            .for_each(|(w, (&r, &ap))| *w = r / ap);
    }
}

/// A stencil system as a [`CgOperator`]: preconditioned by its diagonal, or by one
/// additive-correction multigrid V-cycle.
struct Preconditioned<'a, T, const D: usize> {
    sys: &'a Stencil<T, D>,
    multigrid: Option<&'a mut AdditiveCorrection<T, D>>,
    /// One entry per row, for [`dot`].
    partial: &'a mut [T],
}

impl<T: Real, const D: usize> CgOperator<T> for Preconditioned<'_, T, D> {
    fn apply(&self, x: &[T], out: &mut [T]) {
        self.sys.apply(x, out);
    }

    fn dot(&mut self, a: &[T], b: &[T]) -> T {
        dot(a, b, self.partial, self.sys.row_len())
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
pub struct LinearSolver<T, const D: usize> {
    pub kind: LinearSolverKind,
    work: Work<T, D>,
    partial: Vec<T>,
}

enum Work<T, const D: usize> {
    Adi,
    Jacobi(Vec<T>),
    Cg(CgWork<T>),
    MultigridCg(CgWork<T>, AdditiveCorrection<T, D>),
    Bicgstab(Vec<Vec<T>>),
}

impl<T: Real, const D: usize> LinearSolver<T, D> {
    /// A solver of `kind` for systems of `shape` unknowns.
    pub fn new(kind: LinearSolverKind, shape: [usize; D]) -> Self {
        let n: usize = shape.iter().product();
        let work = match kind {
            LinearSolverKind::Adi => Work::Adi,
            LinearSolverKind::Jacobi => Work::Jacobi(vec![T::zero(); n]),
            LinearSolverKind::Cg => Work::Cg(CgWork::new(n)),
            LinearSolverKind::MultigridCg => {
                Work::MultigridCg(CgWork::new(n), AdditiveCorrection::new(shape))
            }
            LinearSolverKind::Bicgstab => Work::Bicgstab(vec![vec![T::zero(); n]; 8]),
        };
        Self {
            kind,
            work,
            partial: vec![T::zero(); n / shape[0]],
        }
    }

    /// Iterates on `x` until `||r|| <= tol ||r_0||` or `max` iterations (ADI and Jacobi sweeps,
    /// Krylov iterations).
    pub fn solve(&mut self, sys: &Stencil<T, D>, x: &mut [T], tol: f64, max: usize) -> LinearStats {
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
                    let mut op = Preconditioned {
                        sys,
                        multigrid: None,
                        partial,
                    };
                    conjugate_gradient::solve(&mut op, x, &sys.b, work, target, max)
                }
                Work::MultigridCg(work, mg) => {
                    mg.set_up(sys);
                    let mut op = Preconditioned {
                        sys,
                        multigrid: Some(mg),
                        partial,
                    };
                    conjugate_gradient::solve(&mut op, x, &sys.b, work, target, max)
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
#[cfg(test)]
mod tests_3d;
