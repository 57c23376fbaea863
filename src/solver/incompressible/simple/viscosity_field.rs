//! The viscosity of a generalized Newtonian fluid ([`Viscosity`]) where the momentum equations
//! need it: at the cell centres (the along faces of a control volume) and on the cell edges
//! (its other faces; the corners in 2D), from the shear rate of the current velocity,
//! `gamma_dot = sqrt(2 S:S) = sqrt(2 sum_a (dq_a/dx_a)^2 + sum_{a<b} (dq_a/dx_b + dq_b/dx_a)^2)`
//! [1/s] (Bird, Armstrong & Hassager 1987, ch. 4).
//!
//! - At a cell centre the normal strain rates are the staggered differences across the cell, the
//!   shear rates central differences of the centre-interpolated velocities of the neighbours.
//! - On the edge of axes `(c, a)` the shear rate of that pair is the staggered difference there
//!   (second order on the edge); the rest of `2 S:S` (the normal strain rates and, in 3D, the
//!   two other pairs' shear) is the mean of the four cells around the edge, clamped to the grid.
//!
//! Arrays are ghosted ([`Layout`]); ghost cells of `mu_c` copy the cell inside or the periodic
//! image, and edge array [`edge`]`(c, a)` at index `idx` is the edge on the upper faces of cell
//! `idx` along `c` and `a`, over `0..=n` along those two axes and `1..=n` along the third.

use super::coefficients::edge;
use super::viscosity::Viscosity;
use crate::solver::incompressible::staggered::{Layout, for_each_index};

/// The velocity gradient of a ghosted staggered field, evaluated where [`update`] needs it.
struct Gradient<'a, const D: usize> {
    l: &'a Layout<D>,
    h: [f64; D],
    vel: [&'a [f64]; D],
}

impl<const D: usize> Gradient<'_, D> {
    /// `dq_a/dx_a` across cell `k`.
    fn normal(&self, a: usize, k: usize) -> f64 {
        let s = self.l.stride[a];
        (self.vel[a][k] - self.vel[a][k - s]) / self.h[a]
    }

    /// Component `c` interpolated to the centre of cell `k`.
    fn centred(&self, c: usize, k: usize) -> f64 {
        0.5 * (self.vel[c][k - self.l.stride[c]] + self.vel[c][k])
    }

    /// `dq_c/dx_a + dq_a/dx_c` at the centre of cell `k`, central differences.
    fn shear_at_centre(&self, c: usize, a: usize, k: usize) -> f64 {
        let (sc, sa) = (self.l.stride[c], self.l.stride[a]);
        (self.centred(c, k + sa) - self.centred(c, k - sa)) / (2.0 * self.h[a])
            + (self.centred(a, k + sc) - self.centred(a, k - sc)) / (2.0 * self.h[c])
    }

    /// `2 S:S` at the centre of cell `k` without the shear of the pair `skip` (if any).
    fn strain_at_centre(&self, k: usize, skip: Option<(usize, usize)>) -> f64 {
        let mut g = (0..D).fold(0.0, |g, a| g + 2.0 * self.normal(a, k).powi(2));
        for c in 0..D {
            for a in c + 1..D {
                if skip != Some((c, a)) {
                    let s = self.shear_at_centre(c, a, k);
                    g += s * s;
                }
            }
        }
        g
    }
}

/// Sets `mu_c` (cell centres, ghosted) and `mu_e` (the edge arrays) of `model` from the
/// velocity `vel` on a grid of `spacing` [m].
pub fn update<const D: usize>(
    l: &Layout<D>,
    spacing: [f64; D],
    model: Viscosity,
    vel: [&[f64]; D],
    mu_c: &mut [f64],
    mu_e: &mut [Vec<f64>],
) {
    let grad = Gradient { l, h: spacing, vel };
    for_each_index([1; D], l.n, |idx| {
        let k = l.at(idx);
        mu_c[k] = model.mu(grad.strain_at_centre(k, None).sqrt());
    });
    // Ghost cells: the periodic image or the neighbour inside.
    let inside = |k: usize, n: usize, periodic: bool| match k {
        0 if periodic => n,
        0 => 1,
        k if k == n + 1 && periodic => 1,
        k if k == n + 1 => n,
        k => k,
    };
    for_each_index([0; D], l.n.map(|n| n + 1), |idx| {
        let from: [usize; D] = std::array::from_fn(|a| inside(idx[a], l.n[a], l.periodic[a]));
        if from != idx {
            mu_c[l.at(idx)] = mu_c[l.at(from)];
        }
    });
    for c in 0..D {
        for a in c + 1..D {
            let (sc, sa) = (l.stride[c], l.stride[a]);
            let mut lo = [1; D];
            (lo[c], lo[a]) = (0, 0);
            let mu = &mut mu_e[edge(c, a)];
            for_each_index(lo, l.n, |idx| {
                let k = l.at(idx);
                let shear =
                    (vel[c][k + sa] - vel[c][k]) / spacing[a] + (vel[a][k + sc] - vel[a][k]) / spacing[c];
                let rest = [(0, 0), (1, 0), (0, 1), (1, 1)]
                    .iter()
                    .map(|&(oc, oa)| {
                        let mut cell = idx;
                        cell[c] = (idx[c] + oc).clamp(1, l.n[c]);
                        cell[a] = (idx[a] + oa).clamp(1, l.n[a]);
                        grad.strain_at_centre(l.at(cell), Some((c, a)))
                    })
                    .fold(0.0, |s, g| s + g)
                    / 4.0;
                mu[k] = model.mu((rest + shear * shear).sqrt());
            });
        }
    }
}
