//! The exact Riemann solver of the 1D Euler equations for an ideal gas (Toro 2009, ch. 4).
//!
//! Given left and right states `(rho, u, p)` separated at `x0` at `t = 0`, the solution is
//! self-similar in `s = (x - x0) / t`: a left wave (shock or rarefaction), a contact at the star
//! velocity `u*`, a right wave. The star pressure solves `f_L(p) + f_R(p) + u_R - u_L = 0`
//! (Toro eq. 4.5) by Newton's method started from Toro's adaptive guess (sec. 9.5.1); the
//! iteration stops at a relative change below `1e-15`. When the initial data generate vacuum
//! (`2 (c_L + c_R) / (gamma - 1) <= u_R - u_L`, Toro eq. 4.40) or one side is vacuum
//! (`rho = 0`), the vacuum solution of Toro sec. 4.6 is sampled; inside vacuum `rho = p = 0`
//! and `u = 0`. All quantities in consistent case units; `f64` throughout.
//!
//! ```
//! use flowlab::solver::compressible::exact_riemann::{ExactRiemann, GasState};
//! let sod = ExactRiemann::new(
//!     1.4,
//!     GasState { rho: 1.0, u: 0.0, p: 1.0 },
//!     GasState { rho: 0.125, u: 0.0, p: 0.1 },
//! );
//! let star = sod.star().unwrap();
//! assert!((star.p - 0.3031301781).abs() < 1e-9);
//! let w = sod.at(0.7, 0.2, 0.5); // x = 0.7 at t = 0.2, diaphragm at 0.5
//! assert!(w.rho > 0.2 && w.rho < 0.3);
//! ```

/// A 1D gas state: density, velocity, pressure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GasState {
    pub rho: f64,
    pub u: f64,
    pub p: f64,
}

/// The star region between the non-linear waves: pressure, velocity, and the densities left
/// and right of the contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StarState {
    pub p: f64,
    pub u: f64,
    pub rho_l: f64,
    pub rho_r: f64,
}

/// Speeds `dx/dt` of the wave edges, left to right. For a shock `head == tail` (its speed);
/// for a rarefaction `head` is the edge facing the undisturbed state. Without a star region
/// (vacuum) `contact` is the vacuum's left edge and `contact_right` its right edge; otherwise
/// both equal `u*`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WaveSpeeds {
    pub left_head: f64,
    pub left_tail: f64,
    pub contact: f64,
    pub contact_right: f64,
    pub right_tail: f64,
    pub right_head: f64,
}

/// The exact solution of one Riemann problem.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExactRiemann {
    gamma: f64,
    left: GasState,
    right: GasState,
    /// `None` when the solution contains vacuum.
    star: Option<StarState>,
}

const VACUUM: GasState = GasState {
    rho: 0.0,
    u: 0.0,
    p: 0.0,
};

impl ExactRiemann {
    /// Solves the Riemann problem of `left` | `right` for the ratio of specific heats `gamma`.
    /// States need `rho >= 0`, `p >= 0` (zero density means vacuum).
    pub fn new(gamma: f64, left: GasState, right: GasState) -> ExactRiemann {
        let mut r = ExactRiemann {
            gamma,
            left,
            right,
            star: None,
        };
        if left.rho > 0.0 && right.rho > 0.0 {
            let (cl, cr) = (r.c(left), r.c(right));
            let critical = 2.0 * (cl + cr) / (gamma - 1.0);
            if critical > right.u - left.u {
                r.star = Some(r.solve_star());
            }
        }
        r
    }

    /// Star state, or `None` when the solution contains vacuum.
    pub fn star(&self) -> Option<StarState> {
        self.star
    }

    /// The state at `x` and time `t > 0` for a diaphragm at `x0` (the initial data at `t = 0`).
    pub fn at(&self, x: f64, t: f64, x0: f64) -> GasState {
        if t > 0.0 {
            self.sample((x - x0) / t)
        } else if x < x0 {
            self.left
        } else {
            self.right
        }
    }

    /// The state on the ray `s = (x - x0) / t`.
    pub fn sample(&self, s: f64) -> GasState {
        let (l, r) = (self.left, self.right);
        let Some(star) = self.star else {
            return self.sample_vacuum(s);
        };
        let g = self.gamma;
        if s <= star.u {
            if l.rho <= 0.0 {
                return VACUUM;
            }
            let cl = self.c(l);
            if star.p > l.p {
                let sl = l.u - cl * ((g + 1.0) / (2.0 * g) * star.p / l.p + (g - 1.0) / (2.0 * g)).sqrt();
                if s <= sl { l } else { self.star_side(star, true) }
            } else {
                let head = l.u - cl;
                let tail = star.u - cl * (star.p / l.p).powf((g - 1.0) / (2.0 * g));
                if s <= head {
                    l
                } else if s >= tail {
                    self.star_side(star, true)
                } else {
                    self.fan(l, s, true)
                }
            }
        } else {
            let cr = self.c(r);
            if star.p > r.p {
                let sr = r.u + cr * ((g + 1.0) / (2.0 * g) * star.p / r.p + (g - 1.0) / (2.0 * g)).sqrt();
                if s >= sr { r } else { self.star_side(star, false) }
            } else {
                let head = r.u + cr;
                let tail = star.u + cr * (star.p / r.p).powf((g - 1.0) / (2.0 * g));
                if s >= head {
                    r
                } else if s <= tail {
                    self.star_side(star, false)
                } else {
                    self.fan(r, s, false)
                }
            }
        }
    }

    /// Speeds of the wave edges (see [`WaveSpeeds`]).
    pub fn wave_speeds(&self) -> WaveSpeeds {
        let (l, r, g) = (self.left, self.right, self.gamma);
        let z = (g - 1.0) / (2.0 * g);
        match self.star {
            Some(star) => {
                let (cl, cr) = (self.c(l), self.c(r));
                let (left_head, left_tail) = if star.p > l.p {
                    let s = l.u - cl * ((g + 1.0) / (2.0 * g) * star.p / l.p + z).sqrt();
                    (s, s)
                } else {
                    (l.u - cl, star.u - cl * (star.p / l.p).powf(z))
                };
                let (right_head, right_tail) = if star.p > r.p {
                    let s = r.u + cr * ((g + 1.0) / (2.0 * g) * star.p / r.p + z).sqrt();
                    (s, s)
                } else {
                    (r.u + cr, star.u + cr * (star.p / r.p).powf(z))
                };
                WaveSpeeds {
                    left_head,
                    left_tail,
                    contact: star.u,
                    contact_right: star.u,
                    right_tail,
                    right_head,
                }
            }
            None => {
                let (lh, lt) = if l.rho > 0.0 {
                    let cl = self.c(l);
                    (l.u - cl, l.u + 2.0 * cl / (g - 1.0))
                } else {
                    (f64::NEG_INFINITY, f64::NEG_INFINITY)
                };
                let (rh, rt) = if r.rho > 0.0 {
                    let cr = self.c(r);
                    (r.u + cr, r.u - 2.0 * cr / (g - 1.0))
                } else {
                    (f64::INFINITY, f64::INFINITY)
                };
                WaveSpeeds {
                    left_head: lh,
                    left_tail: lt,
                    contact: lt,
                    contact_right: rt,
                    right_tail: rt,
                    right_head: rh,
                }
            }
        }
    }

    fn c(&self, w: GasState) -> f64 {
        (self.gamma * w.p / w.rho).sqrt()
    }

    /// Toro's pressure function `f_K(p)` and its derivative (eqs. 4.6, 4.7, 4.37).
    fn pressure_function(&self, p: f64, k: GasState) -> (f64, f64) {
        let g = self.gamma;
        if p > k.p {
            let a = 2.0 / ((g + 1.0) * k.rho);
            let b = (g - 1.0) / (g + 1.0) * k.p;
            let q = (a / (p + b)).sqrt();
            ((p - k.p) * q, q * (1.0 - 0.5 * (p - k.p) / (b + p)))
        } else {
            let c = self.c(k);
            let ratio = p / k.p;
            (
                2.0 * c / (g - 1.0) * (ratio.powf((g - 1.0) / (2.0 * g)) - 1.0),
                ratio.powf(-(g + 1.0) / (2.0 * g)) / (k.rho * c),
            )
        }
    }

    /// Toro's adaptive initial guess (sec. 9.5.1): PVRS, else two-rarefaction or two-shock.
    fn guess(&self) -> f64 {
        let (l, r, g) = (self.left, self.right, self.gamma);
        let (cl, cr) = (self.c(l), self.c(r));
        let ppv = (0.5 * (l.p + r.p) - 0.125 * (r.u - l.u) * (l.rho + r.rho) * (cl + cr)).max(0.0);
        let (pmin, pmax) = (l.p.min(r.p), l.p.max(r.p));
        if pmax / pmin <= 2.0 && ppv >= pmin && ppv <= pmax {
            ppv
        } else if ppv < pmin {
            let z = (g - 1.0) / (2.0 * g);
            let num = cl + cr - 0.5 * (g - 1.0) * (r.u - l.u);
            (num / (cl / l.p.powf(z) + cr / r.p.powf(z))).powf(1.0 / z)
        } else {
            let gk = |k: GasState| (2.0 / ((g + 1.0) * k.rho) / ((g - 1.0) / (g + 1.0) * k.p + ppv)).sqrt();
            let (gl, gr) = (gk(l), gk(r));
            ((gl * l.p + gr * r.p - (r.u - l.u)) / (gl + gr)).max(1e-12 * pmin)
        }
    }

    fn solve_star(&self) -> StarState {
        let (l, r, g) = (self.left, self.right, self.gamma);
        let du = r.u - l.u;
        let mut p = self.guess().max(f64::MIN_POSITIVE);
        for _ in 0..200 {
            let (fl, dl) = self.pressure_function(p, l);
            let (fr, dr) = self.pressure_function(p, r);
            let mut next = p - (fl + fr + du) / (dl + dr);
            if next <= 0.0 {
                next = 0.1 * p;
            }
            let change = (next - p).abs() / (0.5 * (next + p));
            p = next;
            if change <= 1e-15 {
                break;
            }
        }
        let (fl, _) = self.pressure_function(p, l);
        let (fr, _) = self.pressure_function(p, r);
        let u = 0.5 * (l.u + r.u) + 0.5 * (fr - fl);
        let gm = (g - 1.0) / (g + 1.0);
        let rho = |k: GasState| {
            let ratio = p / k.p;
            if p > k.p {
                k.rho * (ratio + gm) / (gm * ratio + 1.0)
            } else {
                k.rho * ratio.powf(1.0 / g)
            }
        };
        StarState {
            p,
            u,
            rho_l: rho(l),
            rho_r: rho(r),
        }
    }

    fn star_side(&self, star: StarState, left: bool) -> GasState {
        GasState {
            rho: if left { star.rho_l } else { star.rho_r },
            u: star.u,
            p: star.p,
        }
    }

    /// State inside the rarefaction fan of `k` on the ray `s` (Toro eqs. 4.56, 4.63).
    fn fan(&self, k: GasState, s: f64, left: bool) -> GasState {
        let g = self.gamma;
        let c = self.c(k);
        let sign = if left { 1.0 } else { -1.0 };
        let base = 2.0 / (g + 1.0) + sign * (g - 1.0) / ((g + 1.0) * c) * (k.u - s);
        GasState {
            rho: k.rho * base.powf(2.0 / (g - 1.0)),
            u: 2.0 / (g + 1.0) * (sign * c + 0.5 * (g - 1.0) * k.u + s),
            p: k.p * base.powf(2.0 * g / (g - 1.0)),
        }
    }

    /// Vacuum solutions (Toro sec. 4.6): vacuum right, vacuum left, or generated vacuum.
    fn sample_vacuum(&self, s: f64) -> GasState {
        let w = self.wave_speeds();
        let (l, r) = (self.left, self.right);
        if s <= w.contact {
            if s <= w.left_head { l } else { self.fan(l, s, true) }
        } else if s >= w.contact_right {
            if s >= w.right_head {
                r
            } else {
                self.fan(r, s, false)
            }
        } else {
            VACUUM
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_vacuum_is_sampled_symmetrically() {
        let l = GasState {
            rho: 1.0,
            u: -5.0,
            p: 0.4,
        };
        let r = GasState {
            rho: 1.0,
            u: 5.0,
            p: 0.4,
        };
        let e = ExactRiemann::new(1.4, l, r);
        assert!(e.star().is_none());
        assert_eq!(e.sample(0.0), VACUUM);
        let (a, b) = (e.sample(-4.0), e.sample(4.0));
        assert!((a.rho - b.rho).abs() < 1e-14 && (a.u + b.u).abs() < 1e-14 && a.rho > 0.0);
        assert_eq!(e.sample(-100.0), l);
    }

    #[test]
    fn vacuum_right_state_gives_a_rarefaction_into_vacuum() {
        let l = GasState {
            rho: 1.0,
            u: 0.0,
            p: 1.0,
        };
        let e = ExactRiemann::new(1.4, l, VACUUM);
        let c = (1.4f64).sqrt();
        let w = e.wave_speeds();
        assert!((w.contact - 2.0 * c / 0.4).abs() < 1e-12);
        assert_eq!(e.sample(w.contact + 1.0), VACUUM);
        let mid = e.sample(0.0);
        assert!(mid.rho > 0.0 && mid.rho < 1.0 && mid.u > 0.0);
    }
}
