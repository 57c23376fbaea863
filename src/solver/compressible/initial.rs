//! Initial states (point values at cell centres) and the exact solutions that exist for them
//! (1D Riemann problems, advected density waves). States are primitive `[rho, u, v, p]`.

use super::exact_riemann::{ExactRiemann, GasState};
use crate::case::Initial;
use crate::solver::Grid;
use std::f64::consts::PI;

/// `[rho, u, (v,) p]` as given in a case, widened to `[rho, u, v, p]`.
fn widen(s: &[f64]) -> [f64; 4] {
    match s.len() {
        3 => [s[0], s[1], 0.0, s[2]],
        _ => [s[0], s[1], s[2], s[3]],
    }
}

/// The initial primitive state at point `x = [x, y]` (checked by the case validation).
pub fn initial_state(init: &Initial, grid: &Grid, x: [f64; 2]) -> [f64; 4] {
    match init {
        Initial::UniformGas {
            density,
            velocity,
            pressure,
        } => [
            *density,
            velocity[0],
            velocity.get(1).copied().unwrap_or(0.0),
            *pressure,
        ],
        Initial::Riemann {
            left,
            right,
            x0,
            axis,
        } => {
            let c = x[*axis as usize];
            widen(if c < *x0 { left } else { right })
        }
        Initial::Blast {
            left,
            middle,
            right,
            x1,
            x2,
        } => widen(if x[0] < *x1 {
            left
        } else if x[0] < *x2 {
            middle
        } else {
            right
        }),
        Initial::Quadrant {
            center,
            ne,
            nw,
            sw,
            se,
        } => widen(match (x[0] >= center[0], x[1] >= center[1]) {
            (true, true) => ne,
            (false, true) => nw,
            (false, false) => sw,
            (true, false) => se,
        }),
        Initial::ShuOsher {
            left,
            x0,
            amplitude,
            wavenumber,
        } => {
            if x[0] < *x0 {
                widen(left)
            } else {
                [1.0 + amplitude * (wavenumber * x[0]).sin(), 0.0, 0.0, 1.0]
            }
        }
        Initial::CylindricalExplosion {
            center,
            radius,
            inside,
            outside,
        } => {
            let s = if (x[0] - center[0]).hypot(x[1] - center[1]) <= *radius {
                inside
            } else {
                outside
            };
            [s[0], 0.0, 0.0, s[1]]
        }
        Initial::DensityWave { .. } => {
            exact_state(init, grid, x, 0.0, 1.4).expect("density waves have an exact solution")
        }
        Initial::Rest {}
        | Initial::Uniform { .. }
        | Initial::EthierSteinman { .. }
        | Initial::TaylorGreen { .. } => {
            unreachable!("rejected by the compressible validation")
        }
    }
}

/// The exact primitive state at `x` and time `t`, where the initial data have one: a Riemann
/// problem (valid until waves reach the boundaries) or an advected density wave.
pub fn exact_state(init: &Initial, grid: &Grid, x: [f64; 2], t: f64, gamma: f64) -> Option<[f64; 4]> {
    match init {
        Initial::Riemann {
            left,
            right,
            x0,
            axis,
        } => {
            let a = *axis as usize;
            let (l, r) = (widen(left), widen(right));
            let gas = |w: [f64; 4]| GasState {
                rho: w[0],
                u: w[1 + a],
                p: w[3],
            };
            let s = ExactRiemann::new(gamma, gas(l), gas(r)).at(x[a], t, *x0);
            let tangential = if s.u * t <= x[a] - x0 { r[2 - a] } else { l[2 - a] };
            let mut w = [s.rho, 0.0, 0.0, s.p];
            w[1 + a] = s.u;
            w[2 - a] = tangential;
            Some(w)
        }
        Initial::DensityWave {
            rho0,
            amplitude,
            velocity,
            pressure,
            waves,
        } => {
            let mut phase = 0.0;
            for (d, k) in waves.iter().enumerate() {
                phase += k * (x[d] - velocity[d] * t - grid.origin[d]) / grid.extent(d);
            }
            Some([
                rho0 + amplitude * (2.0 * PI * phase).sin(),
                velocity[0],
                velocity.get(1).copied().unwrap_or(0.0),
                *pressure,
            ])
        }
        _ => None,
    }
}
