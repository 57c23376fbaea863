//! Derived fields of the staggered velocity: vorticity and stream function at cell corners, and
//! the primary vortex (the minimum of the stream function).

use super::staggered::Layout;
use crate::solver::real::Real;

/// Vorticity `omega = dv/dx - du/dy` at the corners `(i dx, j dy)`, `i in 0..=nx`,
/// `j in 0..=ny`, index `j * (nx + 1) + i`; ghost values put wall vorticity on walls.
pub fn vorticity<T: Real>(l: &Layout, u: &[T], v: &[T], dx: f64, dy: f64) -> Vec<f64> {
    let (nx, ny) = (l.nx, l.ny);
    let mut w = vec![0.0; (nx + 1) * (ny + 1)];
    for j in 0..=ny {
        for i in 0..=nx {
            let dvdx = (v[l.at(i + 1, j)] - v[l.at(i, j)]).f64() / dx;
            let dudy = (u[l.at(i, j + 1)] - u[l.at(i, j)]).f64() / dy;
            w[j * (nx + 1) + i] = dvdx - dudy;
        }
    }
    w
}

/// Stream function (`u = dpsi/dy`, `v = -dpsi/dx`) at the corners, by integrating the face
/// fluxes from `psi(0, 0) = 0`: up the left boundary with `u`, then along each row with `-v`.
/// For a discretely divergence-free field the result is path independent, and it is constant
/// along walls; the cavity's walls get `psi = 0`.
pub fn stream_function<T: Real>(l: &Layout, u: &[T], v: &[T], dx: f64, dy: f64) -> Vec<f64> {
    let (nx, ny) = (l.nx, l.ny);
    let mut psi = vec![0.0; (nx + 1) * (ny + 1)];
    for j in 1..=ny {
        psi[j * (nx + 1)] = psi[(j - 1) * (nx + 1)] + u[l.at(0, j)].f64() * dy;
    }
    for j in 0..=ny {
        for i in 1..=nx {
            psi[j * (nx + 1) + i] = psi[j * (nx + 1) + i - 1] - v[l.at(i, j)].f64() * dx;
        }
    }
    psi
}

/// Minimum of a corner field and its location, refined by a parabola through the minimum and its
/// two neighbours in each direction. Returns `(value, x, y)` with `x, y` from the lower-left corner.
pub fn corner_minimum(psi: &[f64], nx: usize, ny: usize, dx: f64, dy: f64) -> (f64, f64, f64) {
    let w = nx + 1;
    let (mut k, mut best) = (0, f64::INFINITY);
    for (idx, &p) in psi.iter().enumerate() {
        if p < best {
            best = p;
            k = idx;
        }
    }
    let (i, j) = (k % w, k / w);
    // Vertex of the parabola through (-1, a), (0, b), (1, c): offset (a - c) / (2 (a - 2b + c)).
    // The vertex lies below b by (a - c) t / 4; the two directions add (separable quadratic).
    let refine = |a: f64, b: f64, c: f64| -> (f64, f64) {
        let curv = a - 2.0 * b + c;
        if curv <= 0.0 {
            return (0.0, 0.0);
        }
        let t = ((a - c) / (2.0 * curv)).clamp(-0.5, 0.5);
        (t, 0.25 * (a - c) * t)
    };
    let (mut x, mut y, mut val) = (i as f64 * dx, j as f64 * dy, best);
    if i > 0 && i < nx {
        let (t, drop) = refine(psi[k - 1], best, psi[k + 1]);
        x += t * dx;
        val -= drop;
    }
    if j > 0 && j < ny {
        let (t, drop) = refine(psi[k - w], best, psi[k + w]);
        y += t * dy;
        val -= drop;
    }
    (val, x, y)
}
