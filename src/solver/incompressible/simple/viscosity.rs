//! Generalized Newtonian viscosity `mu(gamma_dot)` [Pa s] of the local shear rate
//! `gamma_dot = sqrt(2 (du/dx)^2 + 2 (dv/dy)^2 + (du/dy + dv/dx)^2)` [1/s] (Bird, Armstrong &
//! Hassager 1987, ch. 4; Pereira 2011, eq. 2.6 for Bird-Carreau), updated from the velocity of
//! each outer iteration.

use crate::case::{CaseSpec, FluidModel, Invalid, validate::positive};

/// Shear rates below this [1/s] count as this (the power law's viscosity is infinite at rest).
pub const GAMMA_DOT_MIN: f64 = 1e-9;

/// Bounds of the flow-behaviour index `n` (power law, Carreau).
pub const N_MIN: f64 = 0.1;
pub const N_MAX: f64 = 2.0;
const N_RANGE: &str = "measured fluids range from about 0.1, strongly shear-thinning polymer melts, to \
                       about 2, shear-thickening suspensions; beyond, gamma_dot^(n - 1) spans more \
                       decades over the flow's shear rates than the momentum equations can balance";
/// Largest dynamic viscosity or consistency [Pa s] (`mu0`, `mu_inf`, `k`).
pub const MU_MAX: f64 = 1e12;
const MU_RANGE: &str = "1e12 Pa s is glass at its transition; more is a solid, not a fluid";
/// Largest Carreau time constant [s].
pub const LAMBDA_MAX: f64 = 1e6;
const LAMBDA_RANGE: &str = "relaxation times of polymer melts reach seconds to hours; 1e6 s is days";

/// A viscosity model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Viscosity {
    /// `mu` constant.
    Newtonian { mu: f64 },
    /// Ostwald-de Waele: `mu = k gamma_dot^(n - 1)`.
    PowerLaw { k: f64, n: f64 },
    /// Bird-Carreau: `mu = mu_inf + (mu0 - mu_inf) (1 + (lambda gamma_dot)^2)^((n - 1)/2)`.
    Carreau {
        mu0: f64,
        mu_inf: f64,
        lambda: f64,
        n: f64,
    },
}

impl Viscosity {
    /// The model of `[fluid]`, or Newtonian with `mu_physics` (density times the kinematic
    /// viscosity of `physics.re` / `physics.viscosity`) when there is no `[fluid]`.
    pub fn from_spec(spec: &CaseSpec, mu_physics: Option<f64>) -> Result<Viscosity, Invalid> {
        let Some(f) = &spec.fluid else {
            return mu_physics.map(|mu| Viscosity::Newtonian { mu }).ok_or_else(|| {
                Invalid::new(
                    "physics.re",
                    "missing; give physics.re, physics.viscosity or a [fluid] model",
                )
            });
        };
        if mu_physics.is_some() {
            let key = if spec.physics.re.is_some() {
                "physics.re"
            } else {
                "physics.viscosity"
            };
            return Err(Invalid::new(key, "[fluid] sets the viscosity; remove this key"));
        }
        let model = match f.model {
            FluidModel::Newtonian => "newtonian",
            FluidModel::PowerLaw => "power_law",
            FluidModel::Carreau => "carreau",
        };
        let keys = [
            (
                "mu0",
                f.mu0,
                matches!(f.model, FluidModel::Newtonian | FluidModel::Carreau),
            ),
            ("mu_inf", f.mu_inf, f.model == FluidModel::Carreau),
            ("lambda", f.lambda, f.model == FluidModel::Carreau),
            (
                "n",
                f.n,
                matches!(f.model, FluidModel::PowerLaw | FluidModel::Carreau),
            ),
            ("k", f.k, f.model == FluidModel::PowerLaw),
        ];
        for (key, value, used) in keys {
            let full = format!("fluid.{key}");
            match (value, used) {
                (Some(_), false) => {
                    return Err(Invalid::new(
                        full,
                        format!("not a parameter of model = \"{model}\""),
                    ));
                }
                (None, true) => {
                    return Err(Invalid::new(
                        full,
                        format!("missing; model = \"{model}\" needs it"),
                    ));
                }
                (Some(x), true) if key == "mu_inf" => {
                    if !(x.is_finite() && x >= 0.0) {
                        return Err(Invalid::new(
                            full,
                            format!("must be a finite number >= 0, got {x}"),
                        ));
                    }
                }
                (Some(x), true) => positive(&full, x)?,
                (None, false) => {}
            }
            if let (Some(x), true) = (value, used) {
                let (lo, hi, why) = match key {
                    "n" => (N_MIN, N_MAX, N_RANGE),
                    "lambda" => (0.0, LAMBDA_MAX, LAMBDA_RANGE),
                    _ => (0.0, MU_MAX, MU_RANGE),
                };
                if !(x >= lo && x <= hi) {
                    return Err(Invalid::new(
                        full,
                        format!("must lie in [{lo}, {hi:e}] ({why}), got {x}"),
                    ));
                }
            }
        }
        let get = |x: Option<f64>| x.expect("checked above");
        Ok(match f.model {
            FluidModel::Newtonian => Viscosity::Newtonian { mu: get(f.mu0) },
            FluidModel::PowerLaw => Viscosity::PowerLaw {
                k: get(f.k),
                n: get(f.n),
            },
            FluidModel::Carreau => {
                let (mu0, mu_inf) = (get(f.mu0), get(f.mu_inf));
                if mu_inf > mu0 {
                    return Err(Invalid::new(
                        "fluid.mu_inf",
                        format!("must not exceed fluid.mu0 ({mu0}), got {mu_inf}"),
                    ));
                }
                Viscosity::Carreau {
                    mu0,
                    mu_inf,
                    lambda: get(f.lambda),
                    n: get(f.n),
                }
            }
        })
    }

    pub fn is_newtonian(&self) -> bool {
        matches!(self, Viscosity::Newtonian { .. })
    }

    /// `mu(gamma_dot)` [Pa s].
    #[inline]
    pub fn mu(&self, gamma_dot: f64) -> f64 {
        let g = gamma_dot.abs().max(GAMMA_DOT_MIN);
        match *self {
            Viscosity::Newtonian { mu } => mu,
            Viscosity::PowerLaw { k, n } => k * g.powf(n - 1.0),
            Viscosity::Carreau {
                mu0,
                mu_inf,
                lambda,
                n,
            } => mu_inf + (mu0 - mu_inf) * (1.0 + (lambda * g).powi(2)).powf(0.5 * (n - 1.0)),
        }
    }

    /// Centreline speed of a channel of width `l` driven by the pressure gradient `g`, for the
    /// lowest viscosity of the model (an upper bound of the real one; infinite when that
    /// viscosity is 0).
    pub fn channel_speed(&self, g: f64, l: f64) -> f64 {
        if g == 0.0 {
            return 0.0;
        }
        match *self {
            Viscosity::Newtonian { mu } => g * l * l / (8.0 * mu),
            Viscosity::Carreau { mu_inf, mu0, n, .. } => {
                g * l * l / (8.0 * if n < 1.0 { mu_inf } else { mu0 })
            }
            Viscosity::PowerLaw { k, n } => {
                n / (n + 1.0) * (g / k).powf(1.0 / n) * (0.5 * l).powf((n + 1.0) / n)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carreau_tends_to_its_newtonian_limits() {
        let (mu0, mu_inf, lambda) = (1.3e4, 1e-3, 5.4e-2);
        for n in [0.2, 0.5, 0.8, 1.5] {
            let c = Viscosity::Carreau {
                mu0,
                mu_inf,
                lambda,
                n,
            };
            // Low shear (lambda gamma_dot = 1e-6): mu0 to 1e-9 relative.
            assert!((c.mu(1e-6 / lambda) - mu0).abs() <= 1e-9 * mu0, "n = {n}");
            if n < 1.0 {
                // High shear: mu -> mu_inf; at lambda gamma_dot = 1e12 the excess over mu_inf is
                // (mu0 - mu_inf) 1e12^(n - 1) (1 + O(1e-24)).
                let g = 1e12 / lambda;
                let excess = (mu0 - mu_inf) * (1e12f64).powf(n - 1.0);
                assert!((c.mu(g) - mu_inf - excess).abs() <= 1e-9 * excess, "n = {n}");
                // The share of mu0 - mu_inf left at lambda gamma_dot = 1e40 is 1e40^(n - 1) <= 1e-8.
                assert!(
                    (c.mu(1e40 / lambda) - mu_inf) / (mu0 - mu_inf) <= 1.0001e-8,
                    "n = {n}"
                );
            }
            // Monotone in the shear rate: decreasing (n < 1) or increasing (n > 1).
            let (a, b) = (c.mu(1.0), c.mu(100.0));
            assert!(if n < 1.0 { b < a } else { b > a }, "n = {n}");
        }
        // n = 1 is Newtonian with mu0 at every shear rate.
        let c = Viscosity::Carreau {
            mu0,
            mu_inf,
            lambda,
            n: 1.0,
        };
        assert_eq!(c.mu(1e3), mu0);
        // The power law is the high-shear Carreau with mu_inf = 0, k = mu0 lambda^(n - 1).
        let n = 0.5;
        let p = Viscosity::PowerLaw {
            k: mu0 * lambda.powf(n - 1.0),
            n,
        };
        let c = Viscosity::Carreau {
            mu0,
            mu_inf: 0.0,
            lambda,
            n,
        };
        let g = 1e8 / lambda;
        assert!((c.mu(g) / p.mu(g) - 1.0).abs() < 1e-12);
    }
}
