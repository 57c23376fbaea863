//! BiCGSTAB (van der Vorst, SIAM J. Sci. Stat. Comput. 13, 1992; Saad, Iterative Methods for
//! Sparse Linear Systems, alg. 7.7) with right preconditioning by the diagonal, for the
//! non-symmetric momentum systems `A x = b`, `A = diag(a_P) - (a_nb links)`.

use super::{Stencil, dot};
use crate::solver::real::Real;
use rayon::prelude::*;

/// Iterates until `||r|| <= target` or `max` iterations; returns (iterations, `||r||`). `work`
/// holds eight vectors of the system's size, `partial` one entry per row. A breakdown
/// (`rho = 0` or `omega = 0`) ends the iteration with the residual reached.
pub fn solve<T: Real, const D: usize>(
    sys: &Stencil<T, D>,
    x: &mut [T],
    work: &mut [Vec<T>],
    partial: &mut [T],
    target: T,
    max: usize,
) -> (usize, T) {
    let ni = sys.row_len();
    let [r, r0, p, v, y, s, z, t] = work else {
        unreachable!("LinearSolver::new gives BiCGSTAB eight vectors")
    };
    sys.apply(x, r);
    r.par_iter_mut()
        .zip(sys.b.par_iter())
        .for_each(|(r, &b)| *r = b - *r);
    r0.copy_from_slice(r);
    p.iter_mut().for_each(|e| *e = T::zero());
    v.iter_mut().for_each(|e| *e = T::zero());
    let (mut rho, mut alpha, mut omega) = (T::one(), T::one(), T::one());
    let mut r_norm = dot(r, r, partial, ni).sqrt();
    for it in 1..=max {
        let rho_new = dot(r0, r, partial, ni);
        if rho_new == T::zero() || omega == T::zero() || !rho_new.is_finite() {
            return (it - 1, r_norm);
        }
        let beta = (rho_new / rho) * (alpha / omega);
        rho = rho_new;
        p.par_iter_mut()
            .zip(r.par_iter().zip(v.par_iter()))
            .for_each(|(p, (&r, &v))| *p = r + beta * (*p - omega * v));
        sys.jacobi(p, y);
        sys.apply(y, v);
        alpha = rho / dot(r0, v, partial, ni);
        s.par_iter_mut()
            .zip(r.par_iter().zip(v.par_iter()))
            .for_each(|(s, (&r, &v))| *s = r - alpha * v);
        let s_norm = dot(s, s, partial, ni).sqrt();
        if s_norm <= target {
            x.par_iter_mut()
                .zip(y.par_iter())
                .for_each(|(x, &y)| *x = *x + alpha * y);
            return (it, s_norm);
        }
        sys.jacobi(s, z);
        sys.apply(z, t);
        let tt = dot(t, t, partial, ni);
        omega = if tt > T::zero() {
            dot(t, s, partial, ni) / tt
        } else {
            T::zero()
        };
        x.par_iter_mut()
            .zip(y.par_iter().zip(z.par_iter()))
            .for_each(|(x, (&y, &z))| *x = *x + alpha * y + omega * z);
        r.par_iter_mut()
            .zip(s.par_iter().zip(t.par_iter()))
            .for_each(|(r, (&s, &t))| *r = s - omega * t);
        r_norm = dot(r, r, partial, ni).sqrt();
        if r_norm <= target || !r_norm.is_finite() {
            return (it, r_norm);
        }
    }
    (max, r_norm)
}
