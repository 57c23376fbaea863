//! Numerical fluxes at a cell face from the left and right primitive states in the face's local
//! frame (`[rho, u_normal, u_tangential, p]`, see [`super::state`]); the result is the flux
//! `[mass, normal momentum, tangential momentum, energy]` per unit area and time. The
//! tangential velocity is a passive scalar carried by the contact wave.
//!
//! - exact: Godunov's flux from the exact solution on `x/t = 0` ([`super::exact_riemann`],
//!   Toro 2009 ch. 4; evaluated in `f64`);
//! - HLLC: Toro, Spruce & Speares (1994), Toro eqs. 10.37-10.39;
//! - Roe (1981) with the Harten-Hyman (1983) entropy fix in Toro's form (sec. 11.4.2), or
//!   without it;
//! - HLL: Harten, Lax & van Leer (1983), Toro eq. 10.21;
//! - Rusanov (1961): `F = (F_L + F_R)/2 - S_max (U_R - U_L)/2`.
//!
//! HLL and HLLC use Einfeldt's (1988) wave-speed bounds
//! `S_L = min(u_L - c_L, u~ - c~)`, `S_R = max(u_R + c_R, u~ + c~)` from Roe averages, which make
//! HLL positively conservative (Einfeldt et al. 1991).
//!
//! The approximate solvers see each side of the face as a `Side`: its sound speed, enthalpy
//! and star energy come from one reciprocal `1 / rho` a side (the CUDA kernels' `side_of` in
//! `kernels/muscl_hancock.cu`, operation for operation, so both backends round alike).

use super::exact_riemann::{ExactRiemann, GasState};
use super::state::{Q, conserved, flux as euler_flux, sound_speed};
use crate::case::RiemannSolver;
use crate::solver::real::Real;

/// The numerical flux of `solver` between the local primitive states `l` and `r`.
#[inline]
pub fn flux<T: Real>(solver: RiemannSolver, g: T, l: Q<T>, r: Q<T>) -> Q<T> {
    match solver {
        RiemannSolver::Exact => exact(g, l, r),
        RiemannSolver::Hllc => hllc(g, l, r),
        RiemannSolver::Roe => roe(g, l, r, true),
        RiemannSolver::RoeNoFix => roe(g, l, r, false),
        RiemannSolver::Hll => hll(g, l, r),
        RiemannSolver::Rusanov => rusanov(g, l, r),
    }
}

fn exact<T: Real>(g: T, l: Q<T>, r: Q<T>) -> Q<T> {
    let gas = |w: Q<T>| GasState {
        rho: w[0].f64(),
        u: w[1].f64(),
        p: w[3].f64(),
    };
    let e = ExactRiemann::new(g.f64(), gas(l), gas(r));
    let s = e.sample(0.0);
    let contact = match e.star() {
        Some(star) => star.u,
        None => e.wave_speeds().contact,
    };
    let v = if contact >= 0.0 { l[2] } else { r[2] };
    if s.rho <= 0.0 {
        return [T::zero(); 4];
    }
    euler_flux(g, [T::of(s.rho), T::of(s.u), v, T::of(s.p)])
}

/// Roe-averaged velocity components, enthalpy and sound speed.
struct RoeAverage<T> {
    u: T,
    v: T,
    h: T,
    c: T,
}

/// One side of a face for the approximate solvers: the local primitive state `w`, its conserved
/// state `q` and flux `f`, `1 / rho` and the sound speed `sqrt(g p (1 / rho))`.
struct Side<T> {
    w: Q<T>,
    q: Q<T>,
    f: Q<T>,
    inv_rho: T,
    c: T,
}

impl<T: Real> Side<T> {
    fn of(g: T, w: Q<T>) -> Self {
        let inv_rho = T::one() / w[0];
        Side {
            w,
            q: conserved(g, w),
            f: euler_flux(g, w),
            inv_rho,
            c: (g * w[3] * inv_rho).sqrt(),
        }
    }
}

/// Roe averages (Toro eqs. 11.60), the enthalpy `H = (E + p) / rho` of each side from its
/// reciprocal.
fn roe_average<T: Real>(g: T, l: &Side<T>, r: &Side<T>) -> RoeAverage<T> {
    let (sl, sr) = (l.w[0].sqrt(), r.w[0].sqrt());
    let w = T::one() / (sl + sr);
    let u = (sl * l.w[1] + sr * r.w[1]) * w;
    let v = (sl * l.w[2] + sr * r.w[2]) * w;
    let h = (sl * (l.q[3] + l.w[3]) * l.inv_rho + sr * (r.q[3] + r.w[3]) * r.inv_rho) * w;
    let c2 = (g - T::one()) * (h - T::of(0.5) * (u * u + v * v));
    RoeAverage {
        u,
        v,
        h,
        c: c2.max(T::zero()).sqrt(),
    }
}

/// Einfeldt's bounds `(S_L, S_R)`.
fn einfeldt<T: Real>(g: T, l: &Side<T>, r: &Side<T>) -> (T, T) {
    let a = roe_average(g, l, r);
    ((l.w[1] - l.c).min(a.u - a.c), (r.w[1] + r.c).max(a.u + a.c))
}

fn hll<T: Real>(g: T, l: Q<T>, r: Q<T>) -> Q<T> {
    let (l, r) = (Side::of(g, l), Side::of(g, r));
    let (sl, sr) = einfeldt(g, &l, &r);
    if sl >= T::zero() {
        return l.f;
    }
    if sr <= T::zero() {
        return r.f;
    }
    std::array::from_fn(|k| (sr * l.f[k] - sl * r.f[k] + sl * sr * (r.q[k] - l.q[k])) / (sr - sl))
}

fn hllc<T: Real>(g: T, l: Q<T>, r: Q<T>) -> Q<T> {
    let (l, r) = (Side::of(g, l), Side::of(g, r));
    let (sl, sr) = einfeldt(g, &l, &r);
    if sl >= T::zero() {
        return l.f;
    }
    if sr <= T::zero() {
        return r.f;
    }
    let ml = l.w[0] * (sl - l.w[1]);
    let mr = r.w[0] * (sr - r.w[1]);
    let s_star = (r.w[3] - l.w[3] + l.w[1] * ml - r.w[1] * mr) / (ml - mr);
    let star = |a: &Side<T>, s: T, m: T| -> Q<T> {
        let (w, q) = (a.w, a.q);
        let k = m / (s - s_star);
        let e = q[3] * a.inv_rho + (s_star - w[1]) * (s_star + w[3] / m);
        let u_star = [k, k * s_star, k * w[2], k * e];
        std::array::from_fn(|i| a.f[i] + s * (u_star[i] - q[i]))
    };
    if s_star >= T::zero() {
        star(&l, sl, ml)
    } else {
        star(&r, sr, mr)
    }
}

fn rusanov<T: Real>(g: T, l: Q<T>, r: Q<T>) -> Q<T> {
    let (l, r) = (Side::of(g, l), Side::of(g, r));
    let s = (l.w[1].abs() + l.c).max(r.w[1].abs() + r.c);
    let half = T::of(0.5);
    std::array::from_fn(|k| half * (l.f[k] + r.f[k]) - half * s * (r.q[k] - l.q[k]))
}

fn roe<T: Real>(g: T, l: Q<T>, r: Q<T>, entropy_fix: bool) -> Q<T> {
    let (l, r) = (Side::of(g, l), Side::of(g, r));
    let a = roe_average(g, &l, &r);
    let half = T::of(0.5);
    let dq: Q<T> = std::array::from_fn(|k| r.q[k] - l.q[k]);
    // Wave strengths (Toro eqs. 11.68-11.70, with the tangential momentum as the shear wave).
    let shear = dq[2] - a.v * dq[0];
    let de = dq[3] - shear * a.v;
    let a2 = (g - T::one()) / (a.c * a.c) * (dq[0] * (a.h - a.u * a.u) + a.u * dq[1] - de);
    let a1 = (dq[0] * (a.u + a.c) - dq[1] - a.c * a2) / (T::of(2.0) * a.c);
    let a5 = dq[0] - (a1 + a2);
    let k1 = [T::one(), a.u - a.c, a.v, a.h - a.u * a.c];
    let k2 = [T::one(), a.u, a.v, half * (a.u * a.u + a.v * a.v)];
    let k3 = [T::zero(), T::zero(), T::one(), a.v];
    let k5 = [T::one(), a.u + a.c, a.v, a.h + a.u * a.c];
    let (l1, l2, l5) = (a.u - a.c, a.u, a.u + a.c);
    if entropy_fix {
        // Harten-Hyman: a transonic rarefaction in the left (right) acoustic wave.
        let p_of = |q: Q<T>| super::state::primitive(g, q);
        let star_l = p_of(std::array::from_fn(|k| l.q[k] + a1 * k1[k]));
        let star_r = p_of(std::array::from_fn(|k| r.q[k] - a5 * k5[k]));
        let lam1_l = l.w[1] - l.c;
        let lam1_r = star_l[1] - sound_speed(g, star_l[0], star_l[3]);
        if lam1_l < T::zero() && T::zero() < lam1_r {
            let lam = lam1_l * (lam1_r - l1) / (lam1_r - lam1_l);
            return std::array::from_fn(|k| l.f[k] + lam * a1 * k1[k]);
        }
        let lam5_l = star_r[1] + sound_speed(g, star_r[0], star_r[3]);
        let lam5_r = r.w[1] + r.c;
        if lam5_l < T::zero() && T::zero() < lam5_r {
            let lam = lam5_r * (l5 - lam5_l) / (lam5_r - lam5_l);
            return std::array::from_fn(|k| r.f[k] - lam * a5 * k5[k]);
        }
    }
    std::array::from_fn(|k| {
        half * (l.f[k] + r.f[k])
            - half * (l1.abs() * a1 * k1[k] + l2.abs() * (a2 * k2[k] + shear * k3[k]) + l5.abs() * a5 * k5[k])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_solver_is_consistent_with_the_euler_flux() {
        let w = [0.7f64, 0.3, -0.2, 1.3];
        let f = euler_flux(1.4, w);
        for s in RiemannSolver::ALL {
            let n = flux(s, 1.4, w, w);
            for k in 0..4 {
                assert!(
                    (n[k] - f[k]).abs() < 1e-13,
                    "{s:?} component {k}: {} vs {}",
                    n[k],
                    f[k]
                );
            }
        }
    }

    #[test]
    fn every_solver_keeps_a_stationary_contact_pressure_flux() {
        // Exact, HLLC and Roe resolve a stationary contact exactly: zero mass flux.
        let (l, r) = ([1.4f64, 0.0, 0.3, 1.0], [1.0, 0.0, -0.1, 1.0]);
        for s in [RiemannSolver::Exact, RiemannSolver::Hllc, RiemannSolver::Roe] {
            let n = flux(s, 1.4, l, r);
            assert!(n[0].abs() < 1e-13 && (n[1] - 1.0).abs() < 1e-13, "{s:?}: {n:?}");
        }
    }
}
