//! Weighted point Jacobi for a [`Stencil`] system: `x += w (b + sum a_nb x_nb - a_P x) / a_P`
//! at every unknown from the previous iterate, `w = 0.9`. Plain Jacobi (`w = 1`) keeps the
//! eigenvalue -1 of the chequerboard mode of a Neumann pressure system and then never converges
//! (as for the projection's Jacobi, `pressure_poisson::jacobi`).

use super::Stencil;
use crate::solver::real::Real;

/// Damping of the Jacobi update.
pub const WEIGHT: f64 = 0.9;

/// Sweeps until `||r|| <= target` or `max` sweeps; returns (sweeps, `||r||`). `next` has the
/// size of `x`, `partial` one entry per row.
pub fn solve<T: Real, const D: usize>(
    sys: &Stencil<T, D>,
    x: &mut [T],
    next: &mut [T],
    partial: &mut [T],
    target: T,
    max: usize,
) -> (usize, T) {
    let w = T::of(WEIGHT);
    let mut r = sys.residual_norm(x, partial);
    for it in 1..=max {
        sys.each(next, |k, idx| x[k] + w * sys.residual_at(x, idx, k) / sys.ap[k]);
        x.copy_from_slice(next);
        r = sys.residual_norm(x, partial);
        if r <= target || !r.is_finite() {
            return (it, r);
        }
    }
    (max, r)
}
