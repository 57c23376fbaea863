//! Ideal-gas state: primitive and conserved variables, equation of state, Euler fluxes.
//!
//! Primitive `W = [rho, u, v, p]`, conserved `U = [rho, rho u, rho v, E]` with
//! `E = p / (gamma - 1) + rho (u^2 + v^2) / 2` (energy per unit volume). 1D solvers keep
//! `v = 0`. Units are those of the case (consistent, e.g. SI). A *local frame* along axis `d`
//! (0 = x, 1 = y) reorders the velocity to `[normal, tangential]`, so one 1D Riemann solver
//! serves both directions: [`to_local`] / [`from_local`] swap `u` and `v` for `d = 1`.

use crate::solver::real::Real;

/// Four-component state or flux.
pub type Q<T> = [T; 4];

/// The states `q` as a structure of arrays: component `c` of cell `k` at `c * q.len() + k` (the
/// CUDA solvers' layout, and the layout of saved states).
pub fn to_soa<T: Real>(q: &[Q<T>]) -> Vec<T> {
    (0..4).flat_map(|c| q.iter().map(move |x| x[c])).collect()
}

/// The inverse of [`to_soa`]: `soa` holds `4 * q.len()` values.
pub fn from_soa<T: Real>(soa: &[T], q: &mut [Q<T>]) {
    let len = q.len();
    for (k, x) in q.iter_mut().enumerate() {
        for (c, v) in x.iter_mut().enumerate() {
            *v = soa[c * len + k];
        }
    }
}

/// Conserved from primitive variables, the energy as `p (1 / (gamma - 1)) + rho |u|^2 / 2`: the
/// reciprocal depends on gamma only, so a loop over cells computes it once.
#[inline(always)]
pub fn conserved<T: Real>(g: T, w: Q<T>) -> Q<T> {
    let half = T::of(0.5);
    let inv_gm1 = T::one() / (g - T::one());
    [
        w[0],
        w[0] * w[1],
        w[0] * w[2],
        w[3] * inv_gm1 + half * w[0] * (w[1] * w[1] + w[2] * w[2]),
    ]
}

/// Primitive from conserved variables, the velocity from the one reciprocal `1 / rho`.
#[inline(always)]
pub fn primitive<T: Real>(g: T, q: Q<T>) -> Q<T> {
    let half = T::of(0.5);
    let inv_rho = T::one() / q[0];
    let u = q[1] * inv_rho;
    let v = q[2] * inv_rho;
    [
        q[0],
        u,
        v,
        (g - T::one()) * (q[3] - half * q[0] * (u * u + v * v)),
    ]
}

/// Speed of sound `c = sqrt(gamma p / rho)`.
#[inline(always)]
pub fn sound_speed<T: Real>(g: T, rho: T, p: T) -> T {
    (g * p / rho).sqrt()
}

/// Swaps the velocity components into (`d = 1`) or out of the local frame of axis `d`; the
/// swap is its own inverse.
#[inline(always)]
pub fn to_local<T: Real>(d: usize, w: Q<T>) -> Q<T> {
    if d == 0 { w } else { [w[0], w[2], w[1], w[3]] }
}

/// Inverse of [`to_local`].
#[inline(always)]
pub fn from_local<T: Real>(d: usize, w: Q<T>) -> Q<T> {
    to_local(d, w)
}

/// Euler flux normal to the local x axis from a local primitive state:
/// `F = [rho u, rho u^2 + p, rho u v, u (E + p)]`.
#[inline(always)]
pub fn flux<T: Real>(g: T, w: Q<T>) -> Q<T> {
    let q = conserved(g, w);
    [q[1], q[1] * w[1] + w[3], q[2] * w[1], w[1] * (q[3] + w[3])]
}

/// Mirror image across a wall normal to axis `d` (normal velocity reversed).
#[inline(always)]
pub fn mirror<T: Real>(d: usize, w: Q<T>) -> Q<T> {
    let mut m = w;
    m[1 + d] = -m[1 + d];
    m
}

/// `true` when density and pressure are finite and positive.
#[inline(always)]
pub fn admissible<T: Real>(w: Q<T>) -> bool {
    w[0] > T::zero() && w[3] > T::zero() && w.iter().all(|x| x.is_finite())
}
