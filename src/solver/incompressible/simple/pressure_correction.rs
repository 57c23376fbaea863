//! The pressure-correction equation of SIMPLE and the pressure equation of SIMPLER (Patankar
//! 1980, sec. 6.7 and 6.8), both `a_P p_P = sum_nb a_nb p_nb + b` on the cells (2D or 3D):
//! `a_E = rho d_e A_e` (and likewise W, N, S, and B, T in 3D) with the momentum `d` of the face,
//! zero on faces whose velocity is prescribed (walls, inflow, outflow after its mass-flow
//! correction), and `b = sum_axes rho (q_lower - q_upper) A` the mass imbalance [kg/s; kg/(s m)
//! per unit depth in 2D] of the velocities
//! given (the momentum solution `u*` for SIMPLE's `p'`, the pseudo-velocities `u^` for
//! SIMPLER's `p`). With no Dirichlet pressure the system is singular; the caller removes the
//! mean of `b` (its compatibility) and the mean of the solution after, from sums of the rows'
//! partial sums that [`assemble`] writes.

use super::coefficients::{cell, face_area};
use crate::solver::incompressible::staggered::{Layout, for_each_index};
use crate::solver::linear::Stencil;

/// Sums of one row of cells (along x) of the pressure(-correction) equation: `sum |b|` (the
/// mass imbalance), `sum |F|` over the cells' upper faces (the mass flux scale it is normalised
/// by) and `sum b` (the compatibility shift).
pub const ROW_SUMS: usize = 3;

/// Fills `sys` from the face coefficients `d` and the velocities `vel` (ghosted, component `a`
/// normal to axis `a`), `b` before the compatibility shift, and `rows[s][j]` with sum `s` of
/// [`ROW_SUMS`] over row `j`.
pub fn assemble<const D: usize>(
    l: &Layout<D>,
    spacing: [f64; D],
    density: f64,
    d: [&[f64]; D],
    vel: [&[f64]; D],
    sys: &mut Stencil<f64, D>,
    rows: [&mut [f64]; ROW_SUMS],
) {
    let rho_area: [f64; D] = std::array::from_fn(|a| density * face_area(spacing, a));
    let mut rows = rows;
    rows.iter_mut().for_each(|r| r.iter_mut().for_each(|s| *s = 0.0));
    let row_len = l.n[0];
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
        let j = n / row_len;
        rows[0][j] += b.abs();
        rows[1][j] += f;
        rows[2][j] += b;
        n += 1;
    });
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
