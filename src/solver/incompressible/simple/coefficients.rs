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
use crate::case::Convection;
use crate::solver::incompressible::Flow;
use crate::solver::incompressible::convection::face_value;
use crate::solver::incompressible::staggered::{Layout, for_each_index, side, side_velocity};
use crate::solver::limiter::Limiter;
use crate::solver::linear::Stencil;

/// Grid and fluid constants of the assembly.
pub struct Constants<'a, const D: usize> {
    pub l: Layout<D>,
    pub flow: &'a Flow,
    pub spacing: [f64; D],
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
    /// A momentum source per unit mass along the component (a rotor's accelerations [m/s^2],
    /// ghosted as the velocity), added as `rho s V` to `b`.
    pub source: Option<&'a [f64]>,
}

/// The box of component `c`'s unknown nodes, lowest and highest ghosted index per axis: its
/// inner faces along axis `c` ([`Layout::unknowns`]), the cells `1..=n` along the others.
pub fn unknowns<const D: usize>(l: &Layout<D>, c: usize) -> ([usize; D], [usize; D]) {
    let mut hi = l.n;
    hi[c] = *l.unknowns(c).end();
    ([1; D], hi)
}

/// Unknowns per axis of component `c`'s system (the shape of its [`Stencil`]).
pub fn shape<const D: usize>(l: &Layout<D>, c: usize) -> [usize; D] {
    unknowns(l, c).1
}

/// Index of the edge array of the axis pair `(c, a)`, `c != a`, in the order xy, xz, yz (one
/// array in 2D, the cell corners; three in 3D).
#[inline(always)]
pub fn edge(c: usize, a: usize) -> usize {
    c.min(a) + c.max(a) - 1
}

/// Area [m^2 in 3D, m in 2D] of a cell face normal to `axis`: the product of the other spacings.
#[inline(always)]
pub fn face_area<const D: usize>(spacing: [f64; D], axis: usize) -> f64 {
    (0..D)
        .filter(|&b| b != axis)
        .map(|b| spacing[b])
        .reduce(|x, y| x * y)
        .unwrap_or(1.0)
}

/// The axes in the order the sums over a control volume's faces take them: component `c`'s own
/// axis, then the others ascending.
#[inline(always)]
pub fn along_first<const D: usize>(c: usize) -> impl Iterator<Item = usize> {
    std::iter::once(c).chain((0..D).filter(move |&a| a != c))
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
/// [N, per unit depth in 2D], `vel` all components, `mu_c` at cell centres and `mu_e` on the
/// edges as in [`assemble`]: `A_c [mu dq_c/dx_c]` across the two along faces (`dq_c/dx_c` at the
/// cell centres either side) plus, for every other axis `a`, `A_a [mu dq_a/dx_c]` across the two
/// faces normal to `a` (`dq_a/dx_c` on the edges there), each a central difference of the two
/// nodes beside it, all over `h_c`. Second order; with constant `mu` it is `mu A_c` times the
/// difference of the two cells' discrete divergences.
pub fn transpose_stress<const D: usize>(
    l: &Layout<D>,
    c: usize,
    spacing: [f64; D],
    vel: [&[f64]; D],
    mu_c: &[f64],
    mu_e: &[Vec<f64>],
    kk: usize,
) -> f64 {
    let q = vel[c];
    let sc = l.stride[c];
    let mut t =
        face_area(spacing, c) * (mu_c[kk + sc] * (q[kk + sc] - q[kk]) - mu_c[kk] * (q[kk] - q[kk - sc]));
    for a in (0..D).filter(|&a| a != c) {
        let (o, sa, mu) = (vel[a], l.stride[a], &mu_e[edge(c, a)]);
        t += face_area(spacing, a)
            * (mu[kk] * (o[kk + sc] - o[kk]) - mu[kk - sa] * (o[kk - sa + sc] - o[kk - sa]));
    }
    t / spacing[c]
}

/// Fills `sys` (relaxed coefficients, `b` without the pressure term) and `d` for component `c`
/// from the current velocities `vel`, cell viscosities `mu_c` and edge viscosities `mu_e`
/// (ghosted layout; edge array [`edge`]`(c, a)` at index `idx` lies on the upper face of cell
/// `idx` along both `c` and `a`, at its centre along the third axis: in 2D the top-right
/// corner). Face `a` of the control volume (normal to axis `a`) carries the flux of component
/// `a`; the two along faces (`a = c`) take `mu` at the cell centres, the others on the edges.
/// Writes `sum |a_P q_P|` with the unrelaxed `a_P` (the residual normalisation) of each row of
/// the system (its unknowns along x) into `norms`, for the caller to add in row order.
#[allow(clippy::too_many_arguments)]
pub fn assemble<const D: usize>(
    k: &Constants<'_, D>,
    c: usize,
    vel: [&[f64]; D],
    mu_c: &[f64],
    mu_e: &[Vec<f64>],
    sys: &mut Stencil<f64, D>,
    d: &mut [f64],
    norms: &mut [f64],
) {
    let l = &k.l;
    let h = k.spacing;
    let q = vel[c];
    let sc = l.stride[c];
    let area_c = face_area(h, c);
    // a_P^0 = rho V / dtau, V the control volume.
    let ap0 = h.iter().fold(k.density, |m, h| m * h) / k.pseudo_dt;
    let last_along = *l.unknowns(c).end();
    let half = 0.5 * k.density;
    let mut n = 0;
    let (lo, hi) = unknowns(l, c);
    let row_len = hi[0] - lo[0] + 1;
    norms.iter_mut().for_each(|s| *s = 0.0);
    for_each_index(lo, hi, |idx| {
        let kk = l.at(idx);
        // Coefficients of the upper (`plus`) and lower (`minus`) neighbour along each axis, and
        // the face fluxes they come from.
        let (mut plus, mut minus, mut f_plus, mut f_minus) = ([0.0; D], [0.0; D], [0.0; D], [0.0; D]);
        f_plus[c] = half * area_c * (q[kk] + q[kk + sc]);
        f_minus[c] = half * area_c * (q[kk - sc] + q[kk]);
        let d_plus = mu_c[kk + sc] * area_c / h[c];
        let d_minus = mu_c[kk] * area_c / h[c];
        plus[c] = d_plus * a_of(k.scheme, f_plus[c], d_plus) + (-f_plus[c]).max(0.0);
        minus[c] = d_minus * a_of(k.scheme, f_minus[c], d_minus) + f_minus[c].max(0.0);
        let mut ap = plus[c] + minus[c];
        for a in (0..D).filter(|&a| a != c) {
            let (o, sa, mu, area) = (vel[a], l.stride[a], &mu_e[edge(c, a)], face_area(h, a));
            f_plus[a] = half * area * (o[kk] + o[kk + sc]);
            f_minus[a] = half * area * (o[kk - sa] + o[kk - sa + sc]);
            let d_plus = mu[kk] * area / h[a];
            let d_minus = mu[kk - sa] * area / h[a];
            plus[a] = d_plus * a_of(k.scheme, f_plus[a], d_plus) + (-f_plus[a]).max(0.0);
            minus[a] = d_minus * a_of(k.scheme, f_minus[a], d_minus) + f_minus[a].max(0.0);
            ap += plus[a];
            ap += minus[a];
        }
        let mut b = -k.gradient * h[c] * area_c;
        if let Some(s) = k.source {
            b += k.density * s[kk] * (h[c] * area_c);
        }
        if let Scheme::Deferred(lim) = k.scheme {
            let corr = |f: f64, qm2, qm1, qp1, qp2| {
                if f == 0.0 {
                    return 0.0;
                }
                f * (face_value(Convection::Tvd, lim, f, qm2, qm1, qp1, qp2)
                    - face_value(Convection::Tvd, Limiter::None, f, qm2, qm1, qp1, qp2))
            };
            // q `m` nodes away along axis `a` (the periodic image, or none past the boundary).
            let far = |a: usize, m: isize| {
                let mut at = idx.map(|i| i as isize);
                at[a] += m;
                l.component_at(q, c, at)
            };
            let mut t = 0.0;
            for a in along_first::<D>(c) {
                let sa = l.stride[a];
                t += corr(f_plus[a], far(a, -1), q[kk], q[kk + sa], far(a, 2));
                t -= corr(f_minus[a], far(a, -2), q[kk - sa], q[kk], far(a, 1));
            }
            b -= t;
        }
        if k.transpose {
            b += transpose_stress(l, c, h, vel, mu_c, mu_e, kk);
        }
        // Normal neighbours on boundary faces: known values.
        if !l.periodic[c] {
            if idx[c] == last_along {
                b += plus[c] * q[kk + sc];
                plus[c] = 0.0;
            }
            if idx[c] == 1 {
                b += minus[c] * q[kk - sc];
                minus[c] = 0.0;
            }
        }
        // Tangential boundaries: the quadratic wall rule, or no link (zero gradient).
        for a in (0..D).filter(|&a| a != c && !l.periodic[a]) {
            let tangential = |s: usize| side_velocity(k.flow.side(2 * a + s), side(a, s)).map(|v| v[c]);
            if idx[a] == l.n[a] {
                match tangential(1) {
                    Some(wall) => {
                        ap += 2.0 * plus[a];
                        b += 8.0 / 3.0 * plus[a] * wall;
                        minus[a] += plus[a] / 3.0;
                    }
                    None => ap -= plus[a],
                }
                plus[a] = 0.0;
            }
            if idx[a] == 1 {
                match tangential(0) {
                    Some(wall) => {
                        ap += 2.0 * minus[a];
                        b += 8.0 / 3.0 * minus[a] * wall;
                        plus[a] += minus[a] / 3.0;
                    }
                    None => ap -= minus[a],
                }
                minus[a] = 0.0;
            }
        }
        norms[n / row_len] += (ap * q[kk]).abs();
        let ap_r = ap / k.alpha;
        b += ((1.0 - k.alpha) * ap_r + ap0) * q[kk];
        let ap_r = ap_r + ap0;
        let nb = along_first::<D>(c).fold(0.0, |s, a| s + plus[a] + minus[a]);
        sys.ap[n] = ap_r;
        for a in 0..D {
            sys.a[a][1][n] = plus[a];
            sys.a[a][0][n] = minus[a];
        }
        sys.b[n] = b;
        d[kk] = area_c / if k.consistent { ap_r - nb } else { ap_r };
        n += 1;
    });
}

/// Index of the cell-centred (unghosted) array of cell `idx` (ghosted indices, `1..=n`).
#[inline(always)]
pub fn cell<const D: usize>(l: &Layout<D>, idx: [usize; D]) -> usize {
    (0..D).rev().fold(0, |k, a| k * l.n[a] + idx[a] - 1)
}

/// Adds the pressure force `A_c (p_P - p_next)` on every unknown of component `c` to `b`; `p`
/// is cell-centred ([`cell`]), periodic seams wrap.
pub fn add_pressure<const D: usize>(
    l: &Layout<D>,
    c: usize,
    spacing: [f64; D],
    p: &[f64],
    sys: &mut Stencil<f64, D>,
) {
    let area = face_area(spacing, c);
    let (lo, hi) = unknowns(l, c);
    let mut n = 0;
    for_each_index(lo, hi, |idx| {
        let mut next = idx;
        next[c] = idx[c] % l.n[c] + 1;
        sys.b[n] += area * (p[cell(l, idx)] - p[cell(l, next)]);
        n += 1;
    });
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
            let mu_e = std::slice::from_ref(&mn);
            for j in 2..n - 1 {
                for i in 2..n - 1 {
                    let (x, y) = if c == 0 {
                        (i as f64 * h, (j as f64 - 0.5) * h)
                    } else {
                        ((i as f64 - 0.5) * h, j as f64 * h)
                    };
                    let t = transpose_stress(&l, c, [h, h], [&uu, &vv], &mc, mu_e, l.at([i, j])) / (h * h);
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
                let t = transpose_stress(
                    &l,
                    0,
                    [h, h],
                    [&uu, &vv],
                    &mc,
                    std::slice::from_ref(&mn),
                    l.at([i, j]),
                );
                let expected = 0.7 * h * (div(i + 1, j) - div(i, j));
                assert!(
                    (t - expected).abs() <= 1e-12 * (1.0 + expected.abs()),
                    "{t} vs {expected}"
                );
            }
        }
    }

    /// A smooth 3D velocity and viscosity.
    fn q3(c: usize, x: [f64; 3]) -> f64 {
        match c {
            0 => x[0].sin() * (2.0 * x[1]).cos() * (x[2] + 0.3).cos(),
            1 => (3.0 * x[0]).cos() * x[1].sin() * (2.0 * x[2]).sin(),
            _ => (x[0] + 2.0 * x[1]).sin() * x[2].cos(),
        }
    }
    fn mu3(x: [f64; 3]) -> f64 {
        2.0 + (x[0] + x[1] - x[2]).sin()
    }

    /// `sum_a d/dx_a (mu dq_a/dx_c)` at `x` by nested central differences of the formulas (step
    /// 1e-4: error ~1e-8, far below the discretisation's).
    fn exact3(c: usize, x: [f64; 3]) -> f64 {
        let e = 1e-4;
        let shift = |x: [f64; 3], a: usize, d: f64| {
            let mut y = x;
            y[a] += d;
            y
        };
        let flux =
            |a: usize, y: [f64; 3]| mu3(y) * (q3(a, shift(y, c, e)) - q3(a, shift(y, c, -e))) / (2.0 * e);
        (0..3)
            .map(|a| (flux(a, shift(x, a, e)) - flux(a, shift(x, a, -e))) / (2.0 * e))
            .sum()
    }

    /// The largest error of the 3D `transpose_stress / V` on an `n^3` grid of the unit cube, over
    /// nodes at least two cells from the boundary.
    fn max_error_3d(n: usize) -> f64 {
        let wall = || crate::case::Boundary::Wall {
            velocity: Default::default(),
        };
        let l = Layout::<3>::new([n; 3], &[[wall(), wall()], [wall(), wall()], [wall(), wall()]]);
        let h = 1.0 / n as f64;
        // Position of ghosted index `idx`, on the upper face along the axes in `faces`.
        let at = |idx: [usize; 3], faces: &[usize]| {
            std::array::from_fn(|a| (idx[a] as f64 - if faces.contains(&a) { 0.0 } else { 0.5 }) * h)
        };
        let mut vel = [(); 3].map(|_| vec![0.0; l.len()]);
        let mut mu_c = vec![0.0; l.len()];
        let mut mu_e = vec![vec![0.0; l.len()]; 3];
        for_each_index([0; 3], [n + 1; 3], |idx| {
            let k = l.at(idx);
            for c in 0..3 {
                vel[c][k] = q3(c, at(idx, &[c]));
                for a in c + 1..3 {
                    mu_e[edge(c, a)][k] = mu3(at(idx, &[c, a]));
                }
            }
            mu_c[k] = mu3(at(idx, &[]));
        });
        let v = [&vel[0][..], &vel[1][..], &vel[2][..]];
        let mut worst = 0.0f64;
        for c in 0..3 {
            for_each_index([2; 3], [n - 2; 3], |idx| {
                let t = transpose_stress(&l, c, [h; 3], v, &mu_c, &mu_e, l.at(idx)) / (h * h * h);
                worst = worst.max((t - exact3(c, at(idx, &[c]))).abs());
            });
        }
        worst
    }

    #[test]
    fn transpose_stress_is_second_order_in_3d() {
        let e = [8, 16, 32].map(max_error_3d);
        eprintln!("3D max errors {e:?}");
        assert!(e[0] < 0.2, "{e:?}");
        assert!(e[0] / e[1] > 3.5 && e[1] / e[2] > 3.5, "not second order: {e:?}");
    }
}
