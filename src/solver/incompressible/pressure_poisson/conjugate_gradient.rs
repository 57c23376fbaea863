//! The projection's PCG: the generic conjugate gradient of [`crate::solver::linear`] on the
//! Laplacian `L p = b` (negative definite), preconditioned by `M ~ L`.

use super::laplacian::Laplacian;
use super::red_black::symmetric_gauss_seidel;
use crate::parallel::RowSums;
use crate::solver::linear::conjugate_gradient::{self as cg, CgOperator, CgWork};
use crate::solver::real::Real;
use rayon::prelude::*;

/// Preconditioner of the CG iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preconditioner {
    /// None (`M = -I`, so `w = -r`).
    Identity,
    /// One symmetric red-black Gauss-Seidel sweep from zero (SSOR with omega = 1).
    SymmetricGaussSeidel,
}

/// The Laplacian with its preconditioner, as a [`CgOperator`].
struct LaplacianCg<'a, T, const D: usize> {
    op: &'a Laplacian<T, D>,
    m: Preconditioner,
    sums: &'a mut RowSums<T>,
}

impl<T: Real, const D: usize> CgOperator<T> for LaplacianCg<'_, T, D> {
    /// `q = L d`.
    fn apply(&self, d: &[T], q: &mut [T]) {
        super::apply(self.op, d, q);
    }

    fn precondition(&mut self, r: &[T], w: &mut [T]) {
        match self.m {
            Preconditioner::Identity => w.par_iter_mut().zip(r).for_each(|(w, &r)| *w = -r),
            Preconditioner::SymmetricGaussSeidel => symmetric_gauss_seidel(self.op, w, r, self.sums),
        }
    }

    fn dot(&mut self, a: &[T], b: &[T]) -> T {
        self.sums.dot(a, b, self.op.nx())
    }
}

/// PCG on `L p = b` until `||r|| <= target` or `max` iterations; returns (iterations, `||r||`).
#[allow(clippy::too_many_arguments)]
pub fn solve<T: Real, const D: usize>(
    op: &Laplacian<T, D>,
    p: &mut [T],
    b: &[T],
    work: &mut CgWork<T>,
    sums: &mut RowSums<T>,
    m: Preconditioner,
    target: T,
    max: usize,
) -> (usize, T) {
    cg::solve(&mut LaplacianCg { op, m, sums }, p, b, work, target, max)
}
