//! The pressure-correction equation of SIMPLE and the pressure equation of SIMPLER (Patankar
//! 1980, sec. 6.7 and 6.8), both `a_P p_P = sum_nb a_nb p_nb + b` on the cells (2D or 3D):
//! `a_E = rho d_e A_e` (and likewise W, N, S, and B, T in 3D) with the momentum `d` of the face,
//! zero on faces whose velocity is prescribed (walls, inflow, outflow after its mass-flow
//! correction), and `b = sum_axes rho (q_lower - q_upper) A` the mass imbalance [kg/s; kg/(s m)
//! per unit depth in 2D] of the velocities
//! given (the momentum solution `u*` for SIMPLE's `p'`, the pseudo-velocities `u^` for
//! SIMPLER's `p`). With no Dirichlet pressure the system is singular; the mean of `b` is removed
//! (its compatibility) and the mean of the solution after.

use super::coefficients::{cell, face_area};
use crate::solver::incompressible::staggered::{Layout, for_each_index};
use crate::solver::linear::Stencil;

/// Fills `sys` from the face coefficients `d` and the velocities `vel` (ghosted, component `a`
/// normal to axis `a`); returns `(sum |b|, sum over faces of |F|)`, the mass imbalance before
/// the compatibility shift and the mass flux scale it is normalised by.
pub fn assemble<const D: usize>(
    l: &Layout<D>,
    spacing: [f64; D],
    density: f64,
    d: [&[f64]; D],
    vel: [&[f64]; D],
    sys: &mut Stencil<f64, D>,
) -> (f64, f64) {
    let rho_area: [f64; D] = std::array::from_fn(|a| density * face_area(spacing, a));
    let (mut imbalance, mut flux) = (0.0, 0.0);
    let mut n = 0;
    for_each_index([1; D], l.n, |idx| {
        let k = l.at(idx);
        let (mut ap, mut b, mut f) = (0.0, 0.0, 0.0);
        for a in 0..D {
            let s = l.stride[a];
            // d of the lower face, face 0 the image of face n when periodic.
            let lower = if l.periodic[a] && idx[a] == 1 {
                k + (l.n[a] - 1) * s
            } else {
                k - s
            };
            let (plus, minus) = (rho_area[a] * d[a][k], rho_area[a] * d[a][lower]);
            sys.a[a][1][n] = plus;
            sys.a[a][0][n] = minus;
            ap = ap + plus + minus;
            b += rho_area[a] * (vel[a][k - s] - vel[a][k]);
            f += (rho_area[a] * vel[a][k]).abs();
        }
        sys.ap[n] = ap;
        sys.b[n] = b;
        imbalance += b.abs();
        flux += f;
        n += 1;
    });
    let mean = sys.b.iter().sum::<f64>() / sys.b.len() as f64;
    sys.b.iter_mut().for_each(|b| *b -= mean);
    (imbalance, flux)
}

/// Velocity correction `q_c += d_c (p'_P - p'_next)` on every face with `d_c != 0` (the momentum
/// unknowns), `pc` cell-centred with periodic seams wrapping.
pub fn correct_velocity<const D: usize>(l: &Layout<D>, d: [&[f64]; D], pc: &[f64], vel: [&mut [f64]; D]) {
    let mut vel = vel;
    for_each_index([1; D], l.n, |idx| {
        let k = l.at(idx);
        let here = pc[cell(l, idx)];
        for c in 0..D {
            if d[c][k] != 0.0 {
                let mut next = idx;
                next[c] = idx[c] % l.n[c] + 1;
                vel[c][k] += d[c][k] * (here - pc[cell(l, next)]);
            }
        }
    });
}
