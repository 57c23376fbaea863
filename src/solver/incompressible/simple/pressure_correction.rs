//! The pressure-correction equation of SIMPLE and the pressure equation of SIMPLER (Patankar
//! 1980, sec. 6.7 and 6.8), both `a_P p_P = sum_nb a_nb p_nb + b` on the `nx x ny` cells:
//! `a_E = rho d_e A_e` (and likewise W, N, S) with the momentum `d` of the face, zero on faces
//! whose velocity is prescribed (walls, inflow, outflow after its mass-flow correction), and
//! `b = rho (u_w - u_e) A + rho (v_s - v_n) A` the mass imbalance [kg/(s m)] of the velocities
//! given (the momentum solution `u*` for SIMPLE's `p'`, the pseudo-velocities `u^` for
//! SIMPLER's `p`). With no Dirichlet pressure the system is singular; the mean of `b` is removed
//! (its compatibility) and the mean of the solution after.

use crate::solver::incompressible::staggered::Layout;
use crate::solver::linear::Stencil;

/// Fills `sys` from the face coefficients `du`, `dv` and the velocities `u`, `v` (ghosted);
/// returns `(sum |b|, sum over faces of |F|)`, the mass imbalance before the compatibility shift
/// and the mass flux scale it is normalised by.
pub fn assemble(
    l: &Layout<2>,
    spacing: [f64; 2],
    density: f64,
    du: &[f64],
    dv: &[f64],
    u: &[f64],
    v: &[f64],
    sys: &mut Stencil<f64, 2>,
) -> (f64, f64) {
    let (nx, ny) = (l.n[0], l.n[1]);
    let (ax, ay) = (density * spacing[1], density * spacing[0]);
    // d of face i (u) at row j, with face 0 the image of face nx when periodic.
    let du_at = |i: usize, j: usize| du[l.at([if l.periodic[0] && i == 0 { nx } else { i }, j])];
    let dv_at = |i: usize, j: usize| dv[l.at([i, if l.periodic[1] && j == 0 { ny } else { j }])];
    let (mut imbalance, mut flux) = (0.0, 0.0);
    for j in 1..=ny {
        for i in 1..=nx {
            let n = (j - 1) * nx + i - 1;
            let k = l.at([i, j]);
            let (ae, aw) = (ax * du_at(i, j), ax * du_at(i - 1, j));
            let (an, as_) = (ay * dv_at(i, j), ay * dv_at(i, j - 1));
            sys.a[0][1][n] = ae;
            sys.a[0][0][n] = aw;
            sys.a[1][1][n] = an;
            sys.a[1][0][n] = as_;
            sys.ap[n] = ae + aw + an + as_;
            let b = ax * (u[k - 1] - u[k]) + ay * (v[k - l.stride[1]] - v[k]);
            sys.b[n] = b;
            imbalance += b.abs();
            flux += (ax * u[k]).abs() + (ay * v[k]).abs();
        }
    }
    let mean = sys.b.iter().sum::<f64>() / sys.b.len() as f64;
    sys.b.iter_mut().for_each(|b| *b -= mean);
    (imbalance, flux)
}

/// Velocity correction `q += d (p'_P - p'_next)` on every face with `d != 0` (the momentum
/// unknowns), `pc` cell-centred with periodic seams wrapping.
pub fn correct_velocity(l: &Layout<2>, du: &[f64], dv: &[f64], pc: &[f64], u: &mut [f64], v: &mut [f64]) {
    let (nx, ny) = (l.n[0], l.n[1]);
    let at = |i: usize, j: usize| pc[(j - 1) * nx + i - 1];
    for j in 1..=ny {
        for i in 1..=nx {
            let k = l.at([i, j]);
            if du[k] != 0.0 {
                u[k] += du[k] * (at(i, j) - at(i % nx + 1, j));
            }
            if dv[k] != 0.0 {
                v[k] += dv[k] * (at(i, j) - at(i, j % ny + 1));
            }
        }
    }
}
