//! Momentum coefficients of one velocity component on its staggered control volume (Patankar
//! 1980, ch. 5 and 6.3-6.4): `a_P q_P = sum_nb a_nb q_nb + b`, the pressure term added apart.
//!
//! Component `c` (0 = u, 1 = v) at ghosted node `(i, j)` (`staggered` layout): "along" is its
//! own axis (x for u), "across" the other. The control volume spans the two cells the node
//! separates; its faces carry the mass fluxes `F` [kg/(s m)] (`rho` times the interpolated
//! normal velocity times the face length) and conductances `D = mu A / h` [kg/(s m)] with `mu`
//! at the cell centres (along faces) and cell corners (across faces). With `P = F / D`:
//! `a_plus = D A(|P|) + max(-F, 0)`, `a_minus = D A(|P|) + max(F, 0)`, `a_P = sum a_nb`
//! (continuity taken as satisfied, Patankar eq. 5.62), and
//! - power law: `A(|P|) = max(0, (1 - 0.1 |P|)^5)` (Patankar sec. 5.2-7);
//! - deferred correction: `A = 1` (upwind convection, central diffusion) and the explicit source
//!   `-sum_f (+/-) F_f (q_f^lim - q_f^up)` with the limited face values of [`face_value`].
//!
//! Boundaries: a normal neighbour on a boundary face is a known value moved into `b`. A
//! tangential wall or inflow is imposed through the ghost value of a quadratic through the wall
//! value `U` and the first two nodes, `q_g = (8 U - 6 q_1 + q_2) / 3`, whose wall gradient is
//! second order and exact for a parabola (so plane Poiseuille flow is reproduced to solver
//! tolerance): `a_P += 2 a_g`, `a_opposite += a_g / 3`, `b += 8/3 a_g U`. Outflow and symmetry
//! sides have zero tangential gradient (no link). Under-relaxation by a factor (Patankar eq.
//! 6.36) and by a pseudo-time step `dtau` (Patankar sec. 6.7-2; `a_P^0 = rho V / dtau`, `V` the
//! control volume's area): `a_P' = a_P / alpha + a_P^0`, `b += ((1 - alpha) a_P / alpha + a_P^0)
//! q_old`; `d = A_along / a_P'` (SIMPLE, SIMPLER) or `d = A_along / (a_P' - sum a_nb)` (SIMPLEC,
//! Van Doormaal & Raithby 1984; positive for `alpha < 1` or a pseudo-time step, as the boundary
//! rules only add to `a_P - sum a_nb`). The factor relaxes each node in proportion to its own `a_P`,
//! which freezes nodes of very large viscosity (a power-law fluid where the shear vanishes);
//! the pseudo-time step relaxes all nodes alike in time.
//!
//! A generalized Newtonian fluid's stress is `mu (grad q + grad q^T)`; the implicit
//! coefficients carry `div(mu grad q)`, and [`transpose_stress`] adds `div(mu grad q^T)` to `b`
//! from the current velocities (deferred). With constant `mu` that term is `mu grad(div q)`,
//! zero for a solenoidal field, so Newtonian cases leave it out.

use super::config::Scheme;
use crate::case::{Convection, Side};
use crate::solver::incompressible::Flow;
use crate::solver::incompressible::convection::face_value;
use crate::solver::incompressible::staggered::{Layout, side_velocity};
use crate::solver::limiter::Limiter;
use crate::solver::linear::Stencil;

/// Grid and fluid constants of the assembly.
pub struct Constants<'a> {
    pub l: Layout<2>,
    pub flow: &'a Flow,
    pub spacing: [f64; 2],
    pub density: f64,
    pub scheme: Scheme,
    pub alpha: f64,
    /// SIMPLEC's velocity-correction coefficient `A / (a_P' - sum a_nb)`.
    pub consistent: bool,
    /// Add [`transpose_stress`] (viscosity not constant).
    pub transpose: bool,
    /// Pseudo-time step [s] (infinite: none).
    pub pseudo_dt: f64,
    /// Mean pressure gradient component along the velocity component [Pa/m].
    pub gradient: f64,
}

/// The unknown nodes of component `c`: the range of the along index and their count across.
pub fn unknowns(
    l: &Layout<2>,
    c: usize,
) -> (std::ops::RangeInclusive<usize>, std::ops::RangeInclusive<usize>) {
    if c == 0 {
        (l.unknowns(0), 1..=l.n[1])
    } else {
        (1..=l.n[0], l.unknowns(1))
    }
}

/// Patankar's `A(|P|)`.
#[inline]
fn a_of(scheme: Scheme, f: f64, d: f64) -> f64 {
    match scheme {
        Scheme::PowerLaw if d > 0.0 => (1.0 - 0.1 * (f / d).abs()).max(0.0).powi(5),
        Scheme::PowerLaw => 0.0,
        Scheme::Deferred(_) => 1.0,
    }
}

/// `int_V div(mu grad q^T)_c dV` over component `c`'s control volume at ghosted node `kk`
/// [N/m, per unit depth], `q` this component, `o` the other, `mu_c`/`mu_n` as in [`assemble`].
/// For u: `h_y [mu du/dx]_w^e + h_x [mu dv/dx]_s^n`, `du/dx` at the cell centres either side (the
/// along faces), `dv/dx` at the cell corners above and below (the across faces), each a
/// central difference of the two nodes beside it; v alike with x and y exchanged. Second order;
/// with constant `mu` it is `mu h_y` times the difference of the two cells' discrete
/// divergences.
#[allow(clippy::too_many_arguments)]
pub fn transpose_stress(
    l: &Layout<2>,
    c: usize,
    spacing: [f64; 2],
    q: &[f64],
    o: &[f64],
    mu_c: &[f64],
    mu_n: &[f64],
    kk: usize,
) -> f64 {
    let s = l.stride[1];
    let (sa, sc) = if c == 0 { (1, s) } else { (s, 1) };
    let (h_along, h_across) = if c == 0 {
        (spacing[0], spacing[1])
    } else {
        (spacing[1], spacing[0])
    };
    let (area_along, area_across) = (h_across, h_along);
    (area_along * (mu_c[kk + sa] * (q[kk + sa] - q[kk]) - mu_c[kk] * (q[kk] - q[kk - sa]))
        + area_across * (mu_n[kk] * (o[kk + sa] - o[kk]) - mu_n[kk - sc] * (o[kk - sc + sa] - o[kk - sc])))
        / h_along
}

/// Fills `sys` (relaxed coefficients, `b` without the pressure term) and `d` for component `c`
/// from the current velocities `q` (this component) and `o` (the other), cell and corner
/// viscosities `mu_c`, `mu_n` (ghosted layout, corner `(i, j)` the top-right one of cell
/// `(i, j)`). Returns `sum |a_P q_P|` with the unrelaxed `a_P` (the residual normalisation).
#[allow(clippy::too_many_arguments)]
pub fn assemble(
    k: &Constants,
    c: usize,
    q: &[f64],
    o: &[f64],
    mu_c: &[f64],
    mu_n: &[f64],
    sys: &mut Stencil<f64, 2>,
    d: &mut [f64],
) -> f64 {
    let l = &k.l;
    let s = l.stride[1];
    let (sa, sc) = if c == 0 { (1, s) } else { (s, 1) };
    let (h_along, h_across) = if c == 0 {
        (k.spacing[0], k.spacing[1])
    } else {
        (k.spacing[1], k.spacing[0])
    };
    // Face lengths: an along face is normal to the component's axis.
    let (area_along, area_across) = (h_across, h_along);
    let (n_across, periodic_across) = if c == 0 {
        (l.n[1], l.periodic[1])
    } else {
        (l.n[0], l.periodic[0])
    };
    // Tangential sides: across-plus and across-minus.
    let (side_plus, side_minus) = if c == 0 { (3, 2) } else { (1, 0) };
    let (ia, ja) = unknowns(l, c);
    let ni = ia.clone().count();
    let along_range = if c == 0 { ia.clone() } else { ja.clone() };
    let periodic_along = if c == 0 { l.periodic[0] } else { l.periodic[1] };
    let rho = k.density;
    let q_far = |i: usize, j: usize, da: isize, dc: isize| -> Option<f64> {
        let (di, dj) = if c == 0 { (da, dc) } else { (dc, da) };
        let (ii, jj) = (i as isize + di, j as isize + dj);
        l.component_at(q, c, [ii, jj])
    };
    let mut norm = 0.0;
    for (b_idx, j) in ja.clone().enumerate() {
        for (a_idx, i) in ia.clone().enumerate() {
            let n = b_idx * ni + a_idx;
            let kk = l.at([i, j]);
            let half = 0.5 * rho;
            let f_pa = half * area_along * (q[kk] + q[kk + sa]);
            let f_ma = half * area_along * (q[kk - sa] + q[kk]);
            let f_pc = half * area_across * (o[kk] + o[kk + sa]);
            let f_mc = half * area_across * (o[kk - sc] + o[kk - sc + sa]);
            let d_pa = mu_c[kk + sa] * area_along / h_along;
            let d_ma = mu_c[kk] * area_along / h_along;
            let d_pc = mu_n[kk] * area_across / h_across;
            let d_mc = mu_n[kk - sc] * area_across / h_across;
            let mut a_pa = d_pa * a_of(k.scheme, f_pa, d_pa) + (-f_pa).max(0.0);
            let mut a_ma = d_ma * a_of(k.scheme, f_ma, d_ma) + f_ma.max(0.0);
            let mut a_pc = d_pc * a_of(k.scheme, f_pc, d_pc) + (-f_pc).max(0.0);
            let mut a_mc = d_mc * a_of(k.scheme, f_mc, d_mc) + f_mc.max(0.0);
            let mut ap = a_pa + a_ma + a_pc + a_mc;
            let mut b = -k.gradient * h_along * h_across;
            if let Scheme::Deferred(lim) = k.scheme {
                let corr = |f: f64, qm2, qm1, qp1, qp2| {
                    if f == 0.0 {
                        return 0.0;
                    }
                    f * (face_value(Convection::Tvd, lim, f, qm2, qm1, qp1, qp2)
                        - face_value(Convection::Tvd, Limiter::None, f, qm2, qm1, qp1, qp2))
                };
                let far = |da, dc| q_far(i, j, da, dc);
                b -= corr(f_pa, far(-1, 0), q[kk], q[kk + sa], far(2, 0))
                    - corr(f_ma, far(-2, 0), q[kk - sa], q[kk], far(1, 0))
                    + corr(f_pc, far(0, -1), q[kk], q[kk + sc], far(0, 2))
                    - corr(f_mc, far(0, -2), q[kk - sc], q[kk], far(0, 1));
            }
            if k.transpose {
                b += transpose_stress(l, c, k.spacing, q, o, mu_c, mu_n, kk);
            }
            // Normal neighbours on boundary faces: known values.
            let pos_along = if c == 0 { i } else { j };
            if !along_range.contains(&(pos_along + 1)) && !periodic_along {
                b += a_pa * q[kk + sa];
                a_pa = 0.0;
            }
            if pos_along == 1 && !periodic_along {
                b += a_ma * q[kk - sa];
                a_ma = 0.0;
            }
            // Tangential boundaries.
            let pos_across = if c == 0 { j } else { i };
            let tangential = |side: usize| side_velocity(k.flow.side(side), Side::ALL[side]).map(|v| v[c]);
            if pos_across == n_across && !periodic_across {
                match tangential(side_plus) {
                    Some(wall) => {
                        ap += 2.0 * a_pc;
                        b += 8.0 / 3.0 * a_pc * wall;
                        a_mc += a_pc / 3.0;
                    }
                    None => ap -= a_pc,
                }
                a_pc = 0.0;
            }
            if pos_across == 1 && !periodic_across {
                match tangential(side_minus) {
                    Some(wall) => {
                        ap += 2.0 * a_mc;
                        b += 8.0 / 3.0 * a_mc * wall;
                        a_pc += a_mc / 3.0;
                    }
                    None => ap -= a_mc,
                }
                a_mc = 0.0;
            }
            norm += (ap * q[kk]).abs();
            let ap0 = k.density * k.spacing[0] * k.spacing[1] / k.pseudo_dt;
            let ap_r = ap / k.alpha;
            b += ((1.0 - k.alpha) * ap_r + ap0) * q[kk];
            let ap_r = ap_r + ap0;
            let (ae, aw, an, as_) = if c == 0 {
                (a_pa, a_ma, a_pc, a_mc)
            } else {
                (a_pc, a_mc, a_pa, a_ma)
            };
            sys.ap[n] = ap_r;
            sys.a[0][1][n] = ae;
            sys.a[0][0][n] = aw;
            sys.a[1][1][n] = an;
            sys.a[1][0][n] = as_;
            sys.b[n] = b;
            let nb = a_pa + a_ma + a_pc + a_mc;
            d[kk] = area_along / if k.consistent { ap_r - nb } else { ap_r };
        }
    }
    norm
}

/// Adds the pressure force `A_along (p_P - p_next)` on every unknown of component `c` to `b`;
/// `p` is cell-centred (`nx * ny`), periodic seams wrap.
pub fn add_pressure(l: &Layout<2>, c: usize, spacing: [f64; 2], p: &[f64], sys: &mut Stencil<f64, 2>) {
    let (ia, ja) = unknowns(l, c);
    let ni = ia.clone().count();
    let area = spacing[1 - c];
    let (nx, ny) = (l.n[0], l.n[1]);
    for (b_idx, j) in ja.enumerate() {
        for (a_idx, i) in ia.clone().enumerate() {
            let (i2, j2) = if c == 0 { (i % nx + 1, j) } else { (i, j % ny + 1) };
            let here = p[(j - 1) * nx + i - 1];
            let next = p[(j2 - 1) * nx + i2 - 1];
            sys.b[b_idx * ni + a_idx] += area * (here - next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Smooth fields on the unit square: velocities, viscosity, and the exact
    /// `div(mu grad q^T)` of each component.
    fn u(x: f64, y: f64) -> f64 {
        x.sin() * (2.0 * y).cos()
    }
    fn v(x: f64, y: f64) -> f64 {
        (3.0 * x).cos() * y.sin()
    }
    fn mu(x: f64, y: f64) -> f64 {
        2.0 + (x + y).sin()
    }
    /// `d/dx(mu du/dx) + d/dy(mu dv/dx)` and `d/dy(mu dv/dy) + d/dx(mu du/dy)`.
    fn exact(c: usize, x: f64, y: f64) -> f64 {
        let (m, m_d) = (mu(x, y), (x + y).cos()); // m_d = dmu/dx = dmu/dy
        if c == 0 {
            m_d * x.cos() * (2.0 * y).cos() - m * x.sin() * (2.0 * y).cos()
                + m_d * (-3.0 * (3.0 * x).sin() * y.sin())
                + m * (-3.0 * (3.0 * x).sin() * y.cos())
        } else {
            m_d * (3.0 * x).cos() * y.cos() - m * (3.0 * x).cos() * y.sin()
                + m_d * (-2.0 * x.sin() * (2.0 * y).sin())
                + m * (-2.0 * x.cos() * (2.0 * y).sin())
        }
    }

    /// Ghosted u, v, mu_c, mu_n of an `n x n` grid (every ghost filled from the formulas).
    fn sample(n: usize, mu_of: impl Fn(f64, f64) -> f64) -> (Layout<2>, [Vec<f64>; 4]) {
        let l = Layout::new(
            [n, n],
            &[
                [0, 1].map(|_| crate::case::Boundary::Wall {
                    velocity: Default::default(),
                }),
                [0, 1].map(|_| crate::case::Boundary::Wall {
                    velocity: Default::default(),
                }),
            ],
        );
        let h = 1.0 / n as f64;
        let mut f = [(); 4].map(|_| vec![0.0; l.len()]);
        for j in 0..n + 2 {
            for i in 0..n + 2 {
                let (x, y) = (i as f64 * h, j as f64 * h);
                let k = l.at([i, j]);
                f[0][k] = u(x, y - 0.5 * h); // east face of cell (i, j)
                f[1][k] = v(x - 0.5 * h, y); // north face
                f[2][k] = mu_of(x - 0.5 * h, y - 0.5 * h); // cell centre
                f[3][k] = mu_of(x, y); // top-right corner
            }
        }
        (l, f)
    }

    /// The largest error of `transpose_stress / V` against the exact term at the control
    /// volumes' centres, over nodes at least two cells from the edge.
    fn max_error(n: usize) -> f64 {
        let (l, [uu, vv, mc, mn]) = sample(n, mu);
        let h = 1.0 / n as f64;
        let mut worst = 0.0f64;
        for c in 0..2 {
            let (q, o) = if c == 0 { (&uu, &vv) } else { (&vv, &uu) };
            for j in 2..n - 1 {
                for i in 2..n - 1 {
                    let (x, y) = if c == 0 {
                        (i as f64 * h, (j as f64 - 0.5) * h)
                    } else {
                        ((i as f64 - 0.5) * h, j as f64 * h)
                    };
                    let t = transpose_stress(&l, c, [h, h], q, o, &mc, &mn, l.at([i, j])) / (h * h);
                    worst = worst.max((t - exact(c, x, y)).abs());
                }
            }
        }
        worst
    }

    #[test]
    fn transpose_stress_is_second_order() {
        let e = [16, 32, 64].map(max_error);
        eprintln!("max errors {e:?}");
        assert!(e[0] < 0.05, "{e:?}");
        assert!(e[0] / e[1] > 3.5 && e[1] / e[2] > 3.5, "not second order: {e:?}");
    }

    /// With constant `mu` the term is `mu h_y` times the difference of the two cells' discrete
    /// divergences, for any field (so it vanishes where continuity holds).
    #[test]
    fn transpose_stress_of_constant_viscosity_is_the_divergence_difference() {
        let n = 12;
        let (l, [uu, vv, mc, mn]) = sample(n, |_, _| 0.7);
        let h = 1.0 / n as f64;
        let div = |i: usize, j: usize| {
            (uu[l.at([i, j])] - uu[l.at([i - 1, j])]) / h + (vv[l.at([i, j])] - vv[l.at([i, j - 1])]) / h
        };
        for j in 1..=n {
            for i in 1..n {
                let t = transpose_stress(&l, 0, [h, h], &uu, &vv, &mc, &mn, l.at([i, j]));
                let expected = 0.7 * h * (div(i + 1, j) - div(i, j));
                assert!(
                    (t - expected).abs() <= 1e-12 * (1.0 + expected.abs()),
                    "{t} vs {expected}"
                );
            }
        }
    }
}
