//! Preconditioned conjugate gradients for `L p = b` (Hestenes & Stiefel 1952; Saad, Iterative
//! Methods for Sparse Linear Systems, alg. 9.1) applied to the SPD system `(-L) p = -b`.
//!
//! Written in terms of `L` and the L-residual `r = b - L p`: with `w = M^-1 r`, where `M`
//! approximates `L` (so the preconditioner of `-L` maps `-r` to `w`), the iteration is
//! `gamma = r.w`, `alpha = gamma / (d . L d)`, `p += alpha d`, `r -= alpha L d`,
//! `d = w + (gamma_new / gamma) d`.

use super::laplacian::Laplacian;
use super::red_black::symmetric_gauss_seidel;
use super::{dot, residual};
use crate::solver::real::Real;
use rayon::prelude::*;

/// Preconditioner of the CG iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preconditioner {
    /// None (`M = -I` in the L-form above, so `w = -r`).
    Identity,
    /// One symmetric red-black Gauss-Seidel sweep from zero (SSOR with omega = 1).
    SymmetricGaussSeidel,
}

/// CG vectors, allocated once.
pub struct CgWork<T> {
    r: Vec<T>,
    w: Vec<T>,
    d: Vec<T>,
    q: Vec<T>,
}

impl<T: Real> CgWork<T> {
    pub fn new(n: usize) -> Self {
        Self {
            r: vec![T::zero(); n],
            w: vec![T::zero(); n],
            d: vec![T::zero(); n],
            q: vec![T::zero(); n],
        }
    }
}

fn precondition<T: Real>(op: &Laplacian<T>, m: Preconditioner, r: &[T], w: &mut [T]) {
    match m {
        Preconditioner::Identity => w.par_iter_mut().zip(r).for_each(|(w, &r)| *w = -r),
        Preconditioner::SymmetricGaussSeidel => symmetric_gauss_seidel(op, w, r),
    }
}

/// `q = L d`.
fn apply<T: Real>(op: &Laplacian<T>, d: &[T], q: &mut [T]) {
    let nx = op.nx;
    q.par_chunks_mut(nx).enumerate().for_each(|(j, row)| {
        for (i, qi) in row.iter_mut().enumerate() {
            let (s, c) = op.stencil(d, i, j);
            *qi = s - c * d[j * nx + i];
        }
    });
}

/// PCG until `||r|| <= target` or `max` iterations; returns (iterations, `||r||`).
#[allow(clippy::too_many_arguments)]
pub fn solve<T: Real>(
    op: &Laplacian<T>,
    p: &mut [T],
    b: &[T],
    work: &mut CgWork<T>,
    partial: &mut [T],
    m: Preconditioner,
    target: T,
    max: usize,
) -> (usize, T) {
    let nx = op.nx;
    let CgWork { r, w, d, q } = work;
    let mut r_norm = residual(op, p, b, r, partial);
    if r_norm <= target {
        return (0, r_norm);
    }
    precondition(op, m, r, w);
    d.par_iter_mut().zip(w.par_iter()).for_each(|(d, &w)| *d = w);
    let mut gamma = dot(r, w, partial, nx);
    for it in 1..=max {
        apply(op, d, q);
        let dq = dot(d, q, partial, nx);
        if dq == T::zero() || !dq.is_finite() {
            return (it, r_norm);
        }
        let alpha = gamma / dq;
        p.par_iter_mut()
            .zip(d.par_iter())
            .for_each(|(p, &d)| *p = *p + alpha * d);
        r.par_iter_mut()
            .zip(q.par_iter())
            .for_each(|(r, &q)| *r = *r - alpha * q);
        r_norm = dot(r, r, partial, nx).sqrt();
        if r_norm <= target || it == max {
            return (it, r_norm);
        }
        precondition(op, m, r, w);
        let gamma_new = dot(r, w, partial, nx);
        let beta = gamma_new / gamma;
        gamma = gamma_new;
        d.par_iter_mut()
            .zip(w.par_iter())
            .for_each(|(d, &w)| *d = w + beta * *d);
    }
    (max, r_norm)
}
