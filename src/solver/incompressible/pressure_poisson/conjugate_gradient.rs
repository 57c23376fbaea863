//! The projection's PCG: the generic conjugate gradient of [`crate::solver::linear`] on the
//! Laplacian `L p = b` (negative definite), preconditioned by `M ~ L`.

use super::laplacian::Laplacian;
use super::red_black::symmetric_gauss_seidel;
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
}

impl<T: Real, const D: usize> CgOperator<T> for LaplacianCg<'_, T, D> {
    fn row_len(&self) -> usize {
        self.op.nx()
    }

    /// `q = L d`.
    fn apply(&self, d: &[T], q: &mut [T]) {
        super::apply(self.op, d, q);
    }

    fn precondition(&mut self, r: &[T], w: &mut [T]) {
        match self.m {
            Preconditioner::Identity => w.par_iter_mut().zip(r).for_each(|(w, &r)| *w = -r),
            Preconditioner::SymmetricGaussSeidel => symmetric_gauss_seidel(self.op, w, r),
        }
    }
}

/// PCG on `L p = b` until `||r|| <= target` or `max` iterations; returns (iterations, `||r||`).
#[allow(clippy::too_many_arguments)]
pub fn solve<T: Real, const D: usize>(
    op: &Laplacian<T, D>,
    p: &mut [T],
    b: &[T],
    work: &mut CgWork<T>,
    partial: &mut [T],
    m: Preconditioner,
    target: T,
    max: usize,
) -> (usize, T) {
    cg::solve(&mut LaplacianCg { op, m }, p, b, work, partial, target, max)
}
