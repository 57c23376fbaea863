//! Flux / slope limiters shared by every solver family (TVD interpolation in the incompressible
//! convection term, MUSCL slopes in the compressible schemes, deferred correction in SIMPLE).
//!
//! Convention (Sweby 1984): `psi(r)` with `r = (q_U - q_UU) / (q_D - q_U)`, the ratio of the upwind
//! to the local gradient. The limited face value is `q_f = q_U + psi(r)/2 (q_D - q_U)`.
//! A slope limiter in the form `slope(a, b)` with `a`, `b` the backward and forward differences
//! equals `b * psi(a / b)` for the symmetric limiters used here.

use crate::solver::real::Real;
use serde::{Deserialize, Serialize};

/// Limiter choice, as written in case files (`solver.limiter`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    /// `psi = 0`: first-order upwind / Godunov.
    None,
    /// `psi = max(0, min(1, r))` (Roe 1986).
    Minmod,
    /// `psi = max(0, min(2r, 1), min(r, 2))` (Roe 1985).
    Superbee,
    /// `psi = (r + |r|) / (1 + |r|)` (van Leer 1974).
    VanLeer,
    /// Monotonized central, `psi = max(0, min(2r, (1 + r)/2, 2))` (van Leer 1977).
    Mc,
    /// `psi = (r^2 + r) / (r^2 + 1)` for r > 0, else 0 (van Albada et al. 1982).
    VanAlbada,
}

impl Limiter {
    pub const ALL: [Limiter; 6] = [
        Limiter::None,
        Limiter::Minmod,
        Limiter::Superbee,
        Limiter::VanLeer,
        Limiter::Mc,
        Limiter::VanAlbada,
    ];

    /// Case-file spelling.
    pub fn name(self) -> &'static str {
        match self {
            Limiter::None => "none",
            Limiter::Minmod => "minmod",
            Limiter::Superbee => "superbee",
            Limiter::VanLeer => "van_leer",
            Limiter::Mc => "mc",
            Limiter::VanAlbada => "van_albada",
        }
    }

    /// Sweby's limiter function `psi(r)`; `psi(1) = 1` for all but `None`, and every
    /// choice lies in the second-order TVD region.
    #[inline(always)]
    pub fn psi<T: Real>(self, r: T) -> T {
        let zero = T::zero();
        let one = T::one();
        let two = T::of(2.0);
        match self {
            Limiter::None => zero,
            Limiter::Minmod => zero.max(one.min(r)),
            Limiter::Superbee => zero.max((two * r).min(one)).max(r.min(two)),
            Limiter::VanLeer => (r + r.abs()) / (one + r.abs()),
            Limiter::Mc => zero.max((two * r).min((one + r) * T::of(0.5)).min(two)),
            Limiter::VanAlbada => {
                if r > zero {
                    (r * r + r) / (r * r + one)
                } else {
                    zero
                }
            }
        }
    }

    /// Limited slope from the backward difference `a = q_i - q_{i-1}` and the forward difference
    /// `b = q_{i+1} - q_i` (MUSCL reconstruction: `q_{i±1/2} = q_i ± slope/2`). Zero at extrema.
    #[inline(always)]
    pub fn slope<T: Real>(self, a: T, b: T) -> T {
        let zero = T::zero();
        if a * b <= zero {
            return zero;
        }
        // For a*b > 0 the ratio is finite and positive; psi(a/b)*b is symmetric in (a, b)
        // for all limiters above (psi(r)/r = psi(1/r)).
        b * self.psi(a / b)
    }
}

/// Upwind-biased face value `q_U + psi(r)/2 (q_D - q_U)`, the TVD interpolation of a quantity
/// transported from the upwind node `U` towards the downwind node `D`; `UU` is the node upwind of `U`.
#[inline(always)]
pub fn tvd_face<T: Real>(limiter: Limiter, q_uu: T, q_u: T, q_d: T) -> T {
    let delta = q_d - q_u;
    let eps = T::of(1e-30);
    if delta.abs() <= eps {
        return q_u;
    }
    let r = (q_u - q_uu) / delta;
    q_u + T::of(0.5) * limiter.psi(r) * delta
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_order_limiters_pass_through_one_and_stay_in_sweby_region() {
        for lim in Limiter::ALL {
            if lim == Limiter::None {
                continue;
            }
            assert!((lim.psi(1.0f64) - 1.0).abs() < 1e-15, "{lim:?} psi(1)");
            for k in 0..400 {
                let r = -2.0 + k as f64 * 0.02;
                let p = lim.psi(r);
                if r <= 0.0 {
                    assert_eq!(p, 0.0, "{lim:?} r={r}");
                } else {
                    // TVD region: 0 <= psi <= min(2r, 2); second order: between minmod and superbee.
                    assert!(
                        p >= 0.0 && p <= (2.0 * r).min(2.0) + 1e-12,
                        "{lim:?} r={r} psi={p}"
                    );
                    assert!(
                        p + 1e-12 >= Limiter::Minmod.psi(r),
                        "{lim:?} below minmod at r={r}"
                    );
                    assert!(
                        p <= Limiter::Superbee.psi(r) + 1e-12,
                        "{lim:?} above superbee at r={r}"
                    );
                }
            }
        }
    }

    #[test]
    fn slope_is_symmetric_and_zero_at_extrema() {
        for lim in Limiter::ALL {
            for &(a, b) in &[(1.0f64, 2.0), (0.3, 0.1), (-1.0, -4.0), (1.0, -1.0), (0.0, 1.0)] {
                let s1 = lim.slope(a, b);
                let s2 = lim.slope(b, a);
                assert!((s1 - s2).abs() < 1e-14, "{lim:?} not symmetric for ({a},{b})");
                if a * b <= 0.0 {
                    assert_eq!(s1, 0.0);
                }
            }
        }
    }
}
