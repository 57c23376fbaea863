//! Analytic incompressible flows: initial states, and the exact solution a validation case's
//! `exact` boundaries and error norms read.
//!
//! - Ethier & Steinman (1994), "Exact fully 3D Navier-Stokes solutions for benchmarking", Int.
//!   J. Numer. Meth. Fluids 19, 369-375 (density 1, kinematic viscosity `nu`):
//!   `u = -a [e^{ax} sin(ay + dz) + e^{az} cos(ax + dy)] e^{-nu d^2 t}` and cyclic permutations
//!   for `v`, `w`; `p = -(a^2/2) [e^{2ax} + e^{2ay} + e^{2az} + 2 sin(ax + dy) cos(az + dx)
//!   e^{a(y + z)} + 2 sin(ay + dz) cos(ax + dy) e^{a(z + x)} + 2 sin(az + dx) cos(ay + dz)
//!   e^{a(x + y)}] e^{-2 nu d^2 t}`. Checked numerically by the tests below (divergence and
//!   momentum residual of the formulas).
//! - The Taylor-Green vortex (an initial state, not a solution in 3D): see
//!   [`crate::case::Initial::TaylorGreen`].
//!
//! Coordinates are the case's (lengths), times in its time unit.

use crate::case::Initial;
use crate::solver::Grid;
use std::f64::consts::PI;

/// An analytic velocity field of a case.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Analytic {
    /// Ethier & Steinman's exact solution.
    EthierSteinman { a: f64, d: f64, nu: f64 },
    /// The Taylor-Green initial vortex of amplitude `velocity`, wavenumbers `k`.
    TaylorGreen { velocity: f64, k: [f64; 3] },
}

impl Analytic {
    /// The analytic field of `initial`, if it has one (`nu` the kinematic viscosity).
    pub fn of(initial: &Initial, grid: &Grid, nu: f64) -> Option<Analytic> {
        match initial {
            Initial::EthierSteinman { a, d } => Some(Analytic::EthierSteinman { a: *a, d: *d, nu }),
            Initial::TaylorGreen { velocity } => Some(Analytic::TaylorGreen {
                velocity: *velocity,
                k: std::array::from_fn(|a| {
                    if a < grid.dim {
                        2.0 * PI / grid.extent(a)
                    } else {
                        0.0
                    }
                }),
            }),
            _ => None,
        }
    }

    /// Whether this is a solution of the Navier-Stokes equations at every time (so `exact`
    /// boundaries may use it).
    pub fn is_solution(&self) -> bool {
        matches!(self, Analytic::EthierSteinman { .. })
    }

    /// The velocity at point `x` and time `t`.
    pub fn velocity(&self, x: [f64; 3], t: f64) -> [f64; 3] {
        match *self {
            Analytic::EthierSteinman { a, d, nu } => {
                let decay = (-nu * d * d * t).exp();
                let [x, y, z] = x;
                [
                    -a * ((a * x).exp() * (a * y + d * z).sin() + (a * z).exp() * (a * x + d * y).cos())
                        * decay,
                    -a * ((a * y).exp() * (a * z + d * x).sin() + (a * x).exp() * (a * y + d * z).cos())
                        * decay,
                    -a * ((a * z).exp() * (a * x + d * y).sin() + (a * y).exp() * (a * z + d * x).cos())
                        * decay,
                ]
            }
            Analytic::TaylorGreen { velocity, k } => {
                let (s, c) = (|a: usize| (k[a] * x[a]).sin(), |a: usize| (k[a] * x[a]).cos());
                [velocity * s(0) * c(1) * c(2), -velocity * c(0) * s(1) * c(2), 0.0]
            }
        }
    }

    /// The kinematic pressure at `x` and time `t` (Ethier-Steinman; `None` for an initial state
    /// only).
    pub fn pressure(&self, x: [f64; 3], t: f64) -> Option<f64> {
        let Analytic::EthierSteinman { a, d, nu } = *self else {
            return None;
        };
        let [x, y, z] = x;
        let e = |v: f64| v.exp();
        Some(
            -0.5 * a
                * a
                * (e(2.0 * a * x)
                    + e(2.0 * a * y)
                    + e(2.0 * a * z)
                    + 2.0 * (a * x + d * y).sin() * (a * z + d * x).cos() * e(a * (y + z))
                    + 2.0 * (a * y + d * z).sin() * (a * x + d * y).cos() * e(a * (z + x))
                    + 2.0 * (a * z + d * x).sin() * (a * y + d * z).cos() * e(a * (x + y)))
                * e(-2.0 * nu * d * d * t),
        )
    }

    /// An upper bound of the speed over the grid's box (the velocity scale of the blow-up check).
    pub fn speed_bound(&self, grid: &Grid) -> f64 {
        match *self {
            Analytic::EthierSteinman { a, .. } => {
                let far = (0..grid.dim)
                    .map(|ax| {
                        grid.origin[ax]
                            .abs()
                            .max((grid.origin[ax] + grid.extent(ax)).abs())
                    })
                    .fold(0.0, f64::max);
                3f64.sqrt() * 2.0 * a.abs() * (a.abs() * far).exp()
            }
            Analytic::TaylorGreen { velocity, .. } => velocity.abs(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Ethier-Steinman formulas satisfy `div u = 0` and
    /// `du/dt + (u . grad) u + grad p - nu lap u = 0` (central differences, h = 1e-4: residuals
    /// O(h^2) against terms O(1)).
    #[test]
    fn ethier_steinman_solves_navier_stokes() {
        let f = Analytic::EthierSteinman {
            a: PI / 4.0,
            d: PI / 2.0,
            nu: 0.3,
        };
        let h = 1e-4;
        for (k, t) in [(0usize, 0.0), (1, 0.4), (2, 1.3)] {
            let x = [0.3 - 0.4 * k as f64, -0.7 + 0.5 * k as f64, 0.2 + 0.1 * k as f64];
            let shift = |a: usize, s: f64| {
                let mut y = x;
                y[a] += s;
                y
            };
            let d = |a: usize, g: &dyn Fn([f64; 3]) -> f64| (g(shift(a, h)) - g(shift(a, -h))) / (2.0 * h);
            let d2 = |a: usize, g: &dyn Fn([f64; 3]) -> f64| {
                (g(shift(a, h)) - 2.0 * g(x) + g(shift(a, -h))) / (h * h)
            };
            let u = f.velocity(x, t);
            let div: f64 = (0..3).map(|a| d(a, &|y| f.velocity(y, t)[a])).sum();
            assert!(div.abs() < 1e-7, "div u = {div:e}");
            for c in 0..3 {
                let q = |y: [f64; 3]| f.velocity(y, t)[c];
                let dt = (f.velocity(x, t + h)[c] - f.velocity(x, t - h)[c]) / (2.0 * h);
                let conv: f64 = (0..3).map(|a| u[a] * d(a, &q)).sum();
                let grad_p = d(c, &|y| f.pressure(y, t).unwrap());
                let lap: f64 = (0..3).map(|a| d2(a, &q)).sum();
                let r = dt + conv + grad_p - 0.3 * lap;
                assert!(r.abs() < 1e-5, "momentum {c} at t = {t}: residual {r:e}");
            }
        }
    }

    #[test]
    fn taylor_green_is_divergence_free_and_periodic() {
        let g = Grid {
            dim: 3,
            n: [8, 8, 8],
            origin: [0.0; 3],
            spacing: [2.0 * PI / 8.0; 3],
        };
        let f = Analytic::of(&Initial::TaylorGreen { velocity: 2.0 }, &g, 0.01).unwrap();
        let h = 1e-5;
        let x = [0.4, 1.1, 2.5];
        let div: f64 = (0..3)
            .map(|a| {
                let (mut p, mut m) = (x, x);
                p[a] += h;
                m[a] -= h;
                (f.velocity(p, 0.0)[a] - f.velocity(m, 0.0)[a]) / (2.0 * h)
            })
            .sum();
        assert!(div.abs() < 1e-8);
        let wrapped = f.velocity([x[0] + 2.0 * PI, x[1], x[2] - 2.0 * PI], 0.0);
        for c in 0..3 {
            assert!((wrapped[c] - f.velocity(x, 0.0)[c]).abs() < 1e-12);
        }
    }
}
