//! The MUSCL-Hancock scheme (van Leer 1984; Toro 2009, sec. 14.4), unsplit in 2D.
//!
//! Per step of size `dt`, for every cell (index conventions of [`super::layout`]):
//! 1. limited slopes `D_d` of the primitive variables along each axis `d` from the backward and
//!    forward differences ([`Limiter::slope`]), or of the characteristic variables of the
//!    primitive-variable Jacobian along `d` when characteristic limiting is on (Toro sec. 14.4.3);
//! 2. boundary-extrapolated values `W_d^∓ = W_i ∓ D_d / 2`;
//! 3. the Hancock half-step in conservative form, unsplit:
//!    `U^∓_d <- U^∓_d + dt/2 * sum_e (F_e(W_e^-) - F_e(W_e^+)) / dx_e` added to every face value;
//!    where an evolved value has `rho <= 0` or `p <= 0` the cell falls back to its average
//!    (first order there), which keeps the Riemann problems well posed;
//! 4. fluxes at every face from the Riemann solver ([`super::riemann`]) in the face's local frame;
//! 5. `U_i^{n+1} = U_i^n - (dt/dx (F_{i+1/2} - F_{i-1/2}) + dt/dy (G_{j+1/2} - G_{j-1/2}))`.
//!
//! The unsplit update is symmetric under exchanging `x` and `y` (the two flux differences are
//! added, and addition commutes), so a problem symmetric about the diagonal stays symmetric to
//! the last bit on square grids. Without corner-transport terms the 2D scheme is stable for
//! per-axis Courant numbers up to 1/2 (Toro sec. 16.3); in 1D up to 1.
//!
//! Solid cells (a mask) act as reflective walls: a fluid cell sees the mirror image of itself
//! in place of a solid neighbour, both for slopes and at the shared face.

use super::layout::Layout;
use super::riemann;
use super::state::{Q, admissible, conserved, flux, from_local, mirror, primitive, sound_speed, to_local};
use crate::case::RiemannSolver;
use crate::solver::limiter::Limiter;
use crate::solver::real::Real;
use rayon::prelude::*;

/// The live settings of the scheme.
#[derive(Clone, Copy, Debug)]
pub struct Settings<T> {
    pub gamma: T,
    pub riemann: RiemannSolver,
    pub limiter: Limiter,
    pub characteristic: bool,
}

/// Work arrays, allocated once.
pub struct MusclHancock<T> {
    /// Primitive variables, padded layout.
    w: Vec<Q<T>>,
    /// Evolved face values per cell: `[x-, x+, y-, y+]`, primitive, global frame.
    faces: Vec<[Q<T>; 4]>,
    /// Fluxes through x faces, `(nx + 1) * ny`, face `i` left of cell `i`.
    fx: Vec<Q<T>>,
    /// Fluxes through y faces, `nx * (ny + 1)`.
    fy: Vec<Q<T>>,
    next: Vec<Q<T>>,
}

/// Ghost layers the scheme needs.
pub const GHOSTS: usize = 2;

const MIN_CHUNK: usize = 256;

/// Limited slope of local primitive states `wm, wc, wp` (velocity normal first).
#[inline(always)]
fn slope<T: Real>(s: &Settings<T>, wm: Q<T>, wc: Q<T>, wp: Q<T>) -> Q<T> {
    let a: Q<T> = std::array::from_fn(|k| wc[k] - wm[k]);
    let b: Q<T> = std::array::from_fn(|k| wp[k] - wc[k]);
    if !s.characteristic {
        return std::array::from_fn(|k| s.limiter.slope(a[k], b[k]));
    }
    // Left eigenvectors of the primitive-variable Jacobian (Toro 2009, ch. 3): waves u - c, u (entropy),
    // u (shear), u + c; the right eigenvectors map the limited amplitudes back.
    let (rho, c) = (wc[0], sound_speed(s.gamma, wc[0], wc[3]));
    let (h, c2) = (T::of(0.5) / c, T::one() / (c * c));
    let project = |x: Q<T>| -> Q<T> {
        [
            -rho * h * x[1] + T::of(0.5) * c2 * x[3],
            x[0] - c2 * x[3],
            x[2],
            rho * h * x[1] + T::of(0.5) * c2 * x[3],
        ]
    };
    let (ca, cb) = (project(a), project(b));
    let m: Q<T> = std::array::from_fn(|k| s.limiter.slope(ca[k], cb[k]));
    [
        m[0] + m[1] + m[3],
        (m[3] - m[0]) * c / rho,
        m[2],
        (m[0] + m[3]) * c * c,
    ]
}

/// Euler flux along axis `d` in the global frame.
#[inline(always)]
fn flux_along<T: Real>(g: T, d: usize, w: Q<T>) -> Q<T> {
    from_local(d, flux(g, to_local(d, w)))
}

impl<T: Real> MusclHancock<T> {
    pub fn new(l: &Layout) -> Self {
        let [nx, ny] = l.n;
        Self {
            w: vec![[T::zero(); 4]; l.len()],
            faces: vec![[[T::zero(); 4]; 4]; l.len()],
            fx: vec![[T::zero(); 4]; (nx + 1) * ny],
            fy: vec![[T::zero(); 4]; if l.dim == 2 { nx * (ny + 1) } else { 0 }],
            next: vec![[T::zero(); 4]; l.len()],
        }
    }

    /// Advances the conserved state `u` (ghosts filled) by `dt`; `dx` are the cell sizes.
    pub fn advance(
        &mut self,
        l: &Layout,
        s: &Settings<T>,
        u: &mut Vec<Q<T>>,
        solid: &[bool],
        dt: f64,
        dx: [f64; 2],
    ) {
        let g = s.gamma;
        let dim = l.dim;
        self.w
            .par_iter_mut()
            .with_min_len(MIN_CHUNK)
            .zip(u.par_iter())
            .for_each(|(w, q)| *w = primitive(g, *q));
        let w = &self.w;
        let half_dt: [T; 2] = [T::of(0.5 * dt / dx[0]), T::of(0.5 * dt / dx[1])];
        self.faces
            .par_iter_mut()
            .with_min_len(MIN_CHUNK)
            .enumerate()
            .for_each(|(k, f)| {
                if solid[k] || !l.within(l.ij(k), 1) {
                    return;
                }
                let wc = w[k];
                let mut out = [wc; 4];
                for d in 0..dim {
                    let st = l.step(d);
                    let nb = |m: usize| if solid[m] { mirror(d, wc) } else { w[m] };
                    let (lm, lc, lp) = (to_local(d, nb(k - st)), to_local(d, wc), to_local(d, nb(k + st)));
                    let sl = slope(s, lm, lc, lp);
                    let half = T::of(0.5);
                    out[2 * d] = from_local(d, std::array::from_fn(|c| lc[c] - half * sl[c]));
                    out[2 * d + 1] = from_local(d, std::array::from_fn(|c| lc[c] + half * sl[c]));
                }
                let change = |d: usize| -> Q<T> {
                    let (fm, fp) = (flux_along(g, d, out[2 * d]), flux_along(g, d, out[2 * d + 1]));
                    std::array::from_fn(|c| half_dt[d] * (fm[c] - fp[c]))
                };
                let delta = if dim == 2 {
                    let (a, b) = (change(0), change(1));
                    std::array::from_fn(|c| a[c] + b[c])
                } else {
                    change(0)
                };
                let mut evolved = out;
                for e in evolved.iter_mut().take(2 * dim) {
                    let q = conserved(g, *e);
                    *e = primitive(g, std::array::from_fn(|c| q[c] + delta[c]));
                }
                *f = if evolved.iter().take(2 * dim).all(|e| admissible(*e)) {
                    evolved
                } else {
                    [wc; 4]
                };
            });
        let faces = &self.faces;
        // Flux between cells a (low side) and b (high side) along d.
        let face_flux = |a: usize, b: usize, d: usize| -> Q<T> {
            let (sa, sb) = (solid[a], solid[b]);
            if sa && sb {
                return [T::zero(); 4];
            }
            let wl = if sa {
                mirror(d, faces[b][2 * d])
            } else {
                faces[a][2 * d + 1]
            };
            let wr = if sb {
                mirror(d, faces[a][2 * d + 1])
            } else {
                faces[b][2 * d]
            };
            from_local(d, riemann::flux(s.riemann, g, to_local(d, wl), to_local(d, wr)))
        };
        let [nx, _] = l.n;
        self.fx
            .par_iter_mut()
            .with_min_len(MIN_CHUNK)
            .enumerate()
            .for_each(|(f, out)| {
                let (i, j) = ((f % (nx + 1)) as isize, (f / (nx + 1)) as isize);
                *out = face_flux(l.at(i - 1, j), l.at(i, j), 0);
            });
        self.fy
            .par_iter_mut()
            .with_min_len(MIN_CHUNK)
            .enumerate()
            .for_each(|(f, out)| {
                let (i, j) = ((f % nx) as isize, (f / nx) as isize);
                *out = face_flux(l.at(i, j - 1), l.at(i, j), 1);
            });
        let (fx, fy) = (&self.fx, &self.fy);
        let ratio = [T::of(dt / dx[0]), T::of(dt / dx[1])];
        let uu = &*u;
        self.next
            .par_iter_mut()
            .with_min_len(MIN_CHUNK)
            .enumerate()
            .for_each(|(k, out)| {
                let c = l.ij(k);
                if solid[k] || !l.within(c, 0) {
                    *out = uu[k];
                    return;
                }
                let (i, j) = (c[0] as usize, c[1] as usize);
                let (xm, xp) = (fx[j * (nx + 1) + i], fx[j * (nx + 1) + i + 1]);
                *out = if dim == 2 {
                    let (ym, yp) = (fy[j * nx + i], fy[(j + 1) * nx + i]);
                    std::array::from_fn(|q| {
                        uu[k][q] - (ratio[0] * (xp[q] - xm[q]) + ratio[1] * (yp[q] - ym[q]))
                    })
                } else {
                    std::array::from_fn(|q| uu[k][q] - ratio[0] * (xp[q] - xm[q]))
                };
            });
        std::mem::swap(u, &mut self.next);
    }
}
