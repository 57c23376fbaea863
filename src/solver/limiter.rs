//! Flux / slope limiters shared by every solver family (TVD interpolation in the incompressible
//! convection term, MUSCL slopes in the compressible schemes, deferred correction in SIMPLE).
//!
//! Every entry of Pereira (2011) Table 2.1 (after Darwish & Moukalled's list of convection
//! schemes in flux-limiter form) is a [`Limiter`]: the linear schemes (upwind = `none`, downwind,
//! central, SOU, Fromm, QUICK) are `psi` linear in `r`, the TVD ones (minmod, superbee, Osher,
//! van Leer, MUSCL = `mc`) lie in Sweby's region. MUSCL slopes ([`Limiter::slope`]) need the
//! symmetric TVD limiters of [`Limiter::ALL`].
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
    #[serde(alias = "upwind")]
    None,
    /// `psi = max(0, min(1, r))` (Roe 1986).
    Minmod,
    /// `psi = max(0, min(2r, 1), min(r, 2))` (Roe 1985).
    Superbee,
    /// `psi = (r + |r|) / (1 + |r|)` (van Leer 1974).
    VanLeer,
    /// Monotonized central, `psi = max(0, min(2r, (1 + r)/2, 2))` (van Leer 1977); Pereira's
    /// "MUSCL".
    #[serde(alias = "muscl")]
    Mc,
    /// `psi = (r^2 + r) / (r^2 + 1)` for r > 0, else 0 (van Albada et al. 1982).
    VanAlbada,
    /// `psi = max(0, min(r, 2))` (Chakravarthy & Osher 1983, with beta = 2 as in Pereira's table).
    Osher,
    /// `psi = 2`: the downwind value (unstable on its own; a teaching entry of Pereira's table).
    Downwind,
    /// `psi = 1`: the central (linear) interpolation.
    Central,
    /// `psi = r`: second-order upwind (linear extrapolation from `UU`, `U`).
    Sou,
    /// `psi = (1 + r) / 2`: Fromm's scheme (the mean of central and SOU).
    Fromm,
    /// `psi = (3 + r) / 4`: Leonard's QUICK, unlimited.
    Quick,
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

    /// Pereira (2011) Table 2.1: every face interpolation the SIMPLE family offers through
    /// deferred correction (`none` is upwind, `mc` is MUSCL).
    pub const TABLE_2_1: [Limiter; 11] = [
        Limiter::None,
        Limiter::Downwind,
        Limiter::Central,
        Limiter::Sou,
        Limiter::Fromm,
        Limiter::Quick,
        Limiter::Minmod,
        Limiter::Superbee,
        Limiter::Osher,
        Limiter::VanLeer,
        Limiter::Mc,
    ];

    /// True for the symmetric TVD limiters (`psi(r)/r = psi(1/r)`) that MUSCL slopes need.
    pub fn symmetric(self) -> bool {
        Limiter::ALL.contains(&self)
    }

    /// Case-file spelling.
    pub fn name(self) -> &'static str {
        match self {
            Limiter::None => "none",
            Limiter::Minmod => "minmod",
            Limiter::Superbee => "superbee",
            Limiter::VanLeer => "van_leer",
            Limiter::Mc => "mc",
            Limiter::VanAlbada => "van_albada",
            Limiter::Osher => "osher",
            Limiter::Downwind => "downwind",
            Limiter::Central => "central",
            Limiter::Sou => "sou",
            Limiter::Fromm => "fromm",
            Limiter::Quick => "quick",
        }
    }

    /// Sweby's limiter function `psi(r)`; `psi(1) = 1` for all but `None` and `Downwind`; the
    /// TVD choices lie in the second-order TVD region, the linear ones do not.
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
            Limiter::Osher => zero.max(r.min(two)),
            Limiter::Downwind => two,
            Limiter::Central => one,
            Limiter::Sou => r,
            Limiter::Fromm => (one + r) * T::of(0.5),
            Limiter::Quick => (T::of(3.0) + r) * T::of(0.25),
        }
    }

    /// Limited slope from the backward difference `a = q_i - q_{i-1}` and the forward difference
    /// `b = q_{i+1} - q_i` (MUSCL reconstruction: `q_{i±1/2} = q_i ± slope/2`). Zero at extrema.
    /// Meant for the [`Limiter::symmetric`] limiters (the compressible family rejects the others).
    ///
    /// For `a b > 0` this is `b psi(a / b)`, written without the ratio: minmod, superbee and MC
    /// as a min or max of `|a|`, `|b|` and their multiples (exact but for MC's mean) with `b`'s
    /// sign, van Leer as `2 a b / (a + b)`, van Albada as `a b (a + b) / (a^2 + b^2)`. Each is
    /// symmetric in `(a, b)` to the bit (`psi(r)/r = psi(1/r)`), and costs at most one division
    /// (`kernels/common.cuh` `limited_slope`, the same operations).
    #[inline(always)]
    pub fn slope<T: Real>(self, a: T, b: T) -> T {
        let (zero, two) = (T::zero(), T::of(2.0));
        if a * b <= zero {
            return zero;
        }
        let (ma, mb) = (a.abs(), b.abs());
        let m = match self {
            Limiter::Minmod => ma.min(mb),
            Limiter::Superbee => (two * ma).min(mb).max(ma.min(two * mb)),
            Limiter::VanLeer => return two * a * b / (a + b),
            Limiter::Mc => (two * ma).min((ma + mb) * T::of(0.5)).min(two * mb),
            Limiter::VanAlbada => return a * b * (a + b) / (a * a + b * b),
            _ => return b * self.psi(a / b),
        };
        if b > zero { m } else { -m }
    }
}

/// Upwind-biased face value `q_U + psi(r)/2 (q_D - q_U)`, the TVD interpolation of a quantity
/// transported from the upwind node `U` towards the downwind node `D`; `UU` is the node upwind of
/// `U`. Where `q_D = q_U` the face value is `q_U` for every limiter.
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
    fn table_2_1_face_values_match_their_closed_forms() {
        // UU = 1, U = 2, D = 4: r = 1/2.
        let (uu, u, d) = (1.0f64, 2.0, 4.0);
        let expect = [
            (Limiter::None, u),
            (Limiter::Downwind, d),
            (Limiter::Central, 0.5 * (u + d)),
            (Limiter::Sou, 1.5 * u - 0.5 * uu),
            (Limiter::Fromm, u + 0.25 * (d - uu)),
            (Limiter::Quick, 0.75 * u + 0.375 * d - 0.125 * uu),
            (Limiter::Minmod, u + 0.5 * 0.5 * (d - u)),
            (Limiter::Superbee, u + 0.5 * 1.0 * (d - u)),
            (Limiter::Osher, u + 0.5 * 0.5 * (d - u)),
            (Limiter::VanLeer, u + 0.5 * (1.0 / 1.5) * (d - u)),
            (Limiter::Mc, u + 0.5 * 0.75 * (d - u)),
        ];
        assert_eq!(expect.len(), Limiter::TABLE_2_1.len());
        for (lim, want) in expect {
            assert!(Limiter::TABLE_2_1.contains(&lim));
            let got = tvd_face(lim, uu, u, d);
            assert!((got - want).abs() < 1e-14, "{lim:?}: {got} vs {want}");
        }
        assert!(!Limiter::Osher.symmetric() && Limiter::Mc.symmetric());
        // Osher with beta = 2 is TVD: between minmod and superbee.
        for k in 1..400 {
            let r = k as f64 * 0.01;
            let p = Limiter::Osher.psi(r);
            assert!(
                p >= Limiter::Minmod.psi(r) && p <= Limiter::Superbee.psi(r),
                "r = {r}"
            );
        }
    }

    #[test]
    fn slope_is_symmetric_and_zero_at_extrema() {
        for lim in Limiter::ALL {
            for &(a, b) in &[(1.0f64, 2.0), (0.3, 0.1), (-1.0, -4.0), (1.0, -1.0), (0.0, 1.0)] {
                let s1 = lim.slope(a, b);
                let s2 = lim.slope(b, a);
                assert_eq!(s1, s2, "{lim:?} not symmetric for ({a},{b})");
                if a * b <= 0.0 {
                    assert_eq!(s1, 0.0);
                }
            }
        }
    }

    /// The slopes written without the ratio are `b psi(a / b)` to rounding: within 4 units in the
    /// last place of `|b|` (each form rounds 2-4 times) over ratios from 1e-3 to 1e3 of both signs.
    #[test]
    fn slope_is_b_psi_of_the_ratio() {
        for lim in Limiter::ALL {
            for k in -300..=300 {
                for &b in &[1.0f64, -0.37, 2.5e4, -3.1e-6] {
                    let a = b * 10f64.powf(k as f64 / 100.0) * if k % 2 == 0 { 1.0 } else { 1.3 };
                    let (got, want) = (lim.slope(a, b), b * lim.psi(a / b));
                    assert!(
                        (got - want).abs() <= 4.0 * f64::EPSILON * b.abs().max(want.abs()),
                        "{lim:?}: slope({a}, {b}) = {got}, b psi(a / b) = {want}"
                    );
                }
            }
        }
    }
}
