//! Boundary faces and ghost values of the SIMPLE family's velocity (Patankar 1980, sec. 6.9),
//! in 2D and 3D.
//!
//! 1. The shared ghost rules ([`fill_velocity_ghosts`]): prescribed normal faces, reflected
//!    tangential ghosts, periodic images.
//! 2. Outflow: each outflow face takes its inner neighbour's value (zero normal gradient),
//!    scaled so that the total outflow equals the inflow through the other sides (the mass-flow
//!    correction that lets the pressure-correction equation be compatible). Each side's flow is
//!    summed by layers along the last axis and the layers' sums added in order by the caller's
//!    `total` (the same additions on one process or over several, [`super::part`]), then the
//!    sides in order.
//! 3. The quadratic wall rule for tangential ghosts of walls and inflow sides,
//!    `q_g = (8 U - 6 q_1 + q_2) / 3` through the wall value `U` and the first two nodes: the
//!    ghost the momentum coefficients ([`super::coefficients`]) assume.

use super::coefficients::face_area;
use crate::case::Boundary;
use crate::solver::incompressible::Flow;
use crate::solver::incompressible::staggered::{
    Layout, fill_velocity_ghosts, for_each_index, side, side_velocity,
};

/// Applies the three steps to `vel` (ghosted, component `a` normal to axis `a`) on a grid of
/// `spacing` [m]; `total` adds the partial sums of the ghosted layers along the last axis in
/// order (over every process's owned layers on a part), `layers` (one value a ghosted layer)
/// holds them.
pub fn apply<const D: usize>(
    l: &Layout<D>,
    flow: &Flow,
    spacing: [f64; D],
    mut vel: [&mut [f64]; D],
    layers: &mut [f64],
    total: impl Fn(&[f64]) -> f64,
) {
    fill_velocity_ghosts(l, &flow.bc, vel.each_mut().map(|q| &mut **q));
    // The faces normal to axis `a` on its side `s`: fixed along `a`, the cells across.
    let faces = |a: usize, s: usize| {
        let (mut lo, mut hi) = ([1; D], l.n);
        (lo[a], hi[a]) = (s * l.n[a], s * l.n[a]);
        (lo, hi)
    };
    let last = D - 1;
    let has_outflow = flow.bc.iter().flatten().any(|b| *b == Boundary::Outflow {});
    // Net inflow through the fixed boundary faces, and the raw outflow; one side's by layers.
    let (mut inflow, mut outflow) = (0.0, 0.0);
    for a in 0..D {
        let area = face_area(spacing, a);
        for s in 0..2 {
            let b = &flow.bc[a][s];
            let sign = if s == 0 { 1.0 } else { -1.0 };
            let inner = if s == 0 {
                l.stride[a] as isize
            } else {
                -(l.stride[a] as isize)
            };
            let q = &mut *vel[a];
            let (lo, hi) = faces(a, s);
            layers.iter_mut().for_each(|x| *x = 0.0);
            for_each_index(lo, hi, |idx| {
                let k = l.at(idx);
                let layer = &mut layers[idx[last]];
                if *b == (Boundary::Outflow {}) {
                    q[k] = q[(k as isize + inner) as usize];
                    *layer -= sign * q[k] * area;
                } else if *b != (Boundary::Periodic {}) {
                    *layer += sign * q[k] * area;
                }
            });
            if !has_outflow || *b == (Boundary::Periodic {}) {
                continue;
            }
            let side = total(layers);
            if *b == (Boundary::Outflow {}) {
                outflow += side;
            } else {
                inflow += side;
            }
        }
    }
    if outflow != 0.0 {
        let scale = inflow / outflow;
        for a in 0..D {
            for s in (0..2).filter(|&s| flow.bc[a][s] == Boundary::Outflow {}) {
                let (lo, hi) = faces(a, s);
                for_each_index(lo, hi, |idx| vel[a][l.at(idx)] *= scale);
            }
        }
    }
    // Quadratic wall rule.
    let rule = |wall: f64, q1: f64, q2: f64| (8.0 * wall - 6.0 * q1 + q2) / 3.0;
    for a in 0..D {
        for s in 0..2 {
            let Some(wall) = side_velocity(&flow.bc[a][s], side(a, s)) else {
                continue;
            };
            let step = l.stride[a];
            // Ghost, first and second node along `a`, as offsets of the ghost index.
            let (ghost, toward) = if s == 0 {
                (0, step as isize)
            } else {
                (l.n[a] + 1, -(step as isize))
            };
            for c in (0..D).filter(|&c| c != a) {
                let q = &mut *vel[c];
                let (mut lo, mut hi) = ([1; D], l.n);
                lo[c] = 0;
                (lo[a], hi[a]) = (ghost, ghost);
                for_each_index(lo, hi, |idx| {
                    let k = l.at(idx);
                    let at = |m: isize| q[(k as isize + m * toward) as usize];
                    q[k] = rule(wall[c], at(1), at(2));
                });
            }
        }
    }
}
