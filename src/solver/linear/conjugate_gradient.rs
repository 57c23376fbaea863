//! Preconditioned conjugate gradients (Hestenes & Stiefel 1952; Saad, Iterative Methods for
//! Sparse Linear Systems, alg. 9.1) for a symmetric definite operator `A x = b` given through
//! [`CgOperator`]. `A` may be positive definite (the SIMPLE pressure systems) or negative
//! definite (the projection's Laplacian `L`) as long as the preconditioner `M ~ A` has the same
//! sign: with the residual `r = b - A x` and `w = M^-1 r` the iteration is `gamma = r.w`,
//! `alpha = gamma / (d . A d)`, `x += alpha d`, `r -= alpha A d`, `d = w + (gamma_new / gamma) d`.

use crate::solver::real::Real;
use rayon::prelude::*;

/// A symmetric definite operator, its preconditioner and its inner product.
pub trait CgOperator<T: Real>: Sync {
    /// `out = A x`.
    fn apply(&self, x: &[T], out: &mut [T]);
    /// `w = M^-1 r`, `M` a symmetric approximation of `A` of the same sign (`&mut` for a
    /// preconditioner with its own workspace).
    fn precondition(&mut self, r: &[T], w: &mut [T]);
    /// `a . b`, in a fixed order (thread-count independent; on a decomposed grid summed over
    /// every part).
    fn dot(&mut self, a: &[T], b: &[T]) -> T;
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

/// PCG until `||r|| <= target` or `max` iterations; returns (iterations, `||r||`).
pub fn solve<T: Real>(
    op: &mut impl CgOperator<T>,
    p: &mut [T],
    b: &[T],
    work: &mut CgWork<T>,
    target: T,
    max: usize,
) -> (usize, T) {
    let CgWork { r, w, d, q } = work;
    op.apply(p, r);
    r.par_iter_mut().zip(b.par_iter()).for_each(|(r, &b)| *r = b - *r);
    let mut r_norm = op.dot(r, r).sqrt();
    if r_norm <= target {
        return (0, r_norm);
    }
    op.precondition(r, w);
    d.par_iter_mut().zip(w.par_iter()).for_each(|(d, &w)| *d = w);
    let mut gamma = op.dot(r, w);
    for it in 1..=max {
        op.apply(d, q);
        let dq = op.dot(d, q);
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
        r_norm = op.dot(r, r).sqrt();
        if r_norm <= target || it == max {
            return (it, r_norm);
        }
        op.precondition(r, w);
        let gamma_new = op.dot(r, w);
        let beta = gamma_new / gamma;
        gamma = gamma_new;
        d.par_iter_mut()
            .zip(w.par_iter())
            .for_each(|(d, &w)| *d = w + beta * *d);
    }
    (max, r_norm)
}
