//! Derived fields of the staggered velocity: vorticity and stream function at cell corners, and
//! the primary vortex (the minimum of the stream function); [`View`], the fields, samples and summary
//! of a staggered state.

use super::staggered::{Layout, bilinear};
use crate::solver::Grid;
use crate::solver::real::Real;
use rayon::prelude::*;

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

/// A staggered velocity and cell-centred pressure seen as fields at cell centres, point samples
/// and the cavity summary (shared by the projection and SIMPLE solvers).
pub struct View<'a, T> {
    pub l: Layout,
    pub grid: Grid,
    /// Ghosted velocity arrays (see `staggered`).
    pub u: &'a [T],
    pub v: &'a [T],
    /// Pressure at cell centres, `nx * ny`, in the solver's units.
    pub p: &'a [T],
    /// Factor from the stored pressure to the reported one (density for kinematic pressure).
    pub p_scale: f64,
}

impl<T: Real> View<'_, T> {
    pub fn field(&self, name: &str, out: &mut Vec<f64>) -> Option<()> {
        let l = self.l;
        let (nx, ny) = (l.nx, l.ny);
        let (dx, dy) = (self.grid.spacing[0], self.grid.spacing[1]);
        let (u, v) = (&self.u, &self.v);
        let corners = match name {
            "vorticity" => Some(vorticity(&l, u, v, dx, dy)),
            "stream_function" => Some(stream_function(&l, u, v, dx, dy)),
            _ => None,
        };
        let value = |i: usize, j: usize| -> Option<f64> {
            // 1-based cell (i, j).
            let uc = 0.5 * (u[l.at(i - 1, j)] + u[l.at(i, j)]).f64();
            let vc = 0.5 * (v[l.at(i, j - 1)] + v[l.at(i, j)]).f64();
            Some(match name {
                "u" => uc,
                "v" => vc,
                "speed" => uc.hypot(vc),
                "p" => self.p[(j - 1) * nx + i - 1].f64() * self.p_scale,
                "divergence" => {
                    (u[l.at(i, j)] - u[l.at(i - 1, j)]).f64() / dx
                        + (v[l.at(i, j)] - v[l.at(i, j - 1)]).f64() / dy
                }
                "vorticity" | "stream_function" => {
                    let c = corners.as_ref().expect("computed above");
                    let w = nx + 1;
                    let (a, b) = ((j - 1) * w + i - 1, j * w + i - 1);
                    0.25 * (c[a] + c[a + 1] + c[b] + c[b + 1])
                }
                _ => return None,
            })
        };
        // An unknown name returns None before any work; rows are then filled in parallel
        // (the display reads a field every frame, at up to 4096^2 cells).
        value(1, 1)?;
        out.resize(nx * ny, 0.0);
        out.par_chunks_mut(nx).enumerate().for_each(|(j0, row)| {
            for (i0, o) in row.iter_mut().enumerate() {
                *o = value(i0 + 1, j0 + 1).expect("a known field");
            }
        });
        Some(())
    }

    pub fn sample(&self, name: &str, point: [f64; 3]) -> Option<f64> {
        let l = self.l;
        let (nx, ny) = (l.nx, l.ny);
        let g = &self.grid;
        let (dx, dy) = (g.spacing[0], g.spacing[1]);
        let (x, y) = (point[0] - g.origin[0], point[1] - g.origin[1]);
        let (u, v) = (&self.u, &self.v);
        let su = || {
            bilinear(
                nx + 1,
                ny + 2,
                0.0,
                -0.5 * dy,
                dx,
                dy,
                |i, j| u[l.at(i, j)].f64(),
                x,
                y,
            )
        };
        let sv = || {
            bilinear(
                nx + 2,
                ny + 1,
                -0.5 * dx,
                0.0,
                dx,
                dy,
                |i, j| v[l.at(i, j)].f64(),
                x,
                y,
            )
        };
        let centre = |f: &dyn Fn(usize, usize) -> f64| bilinear(nx, ny, 0.5 * dx, 0.5 * dy, dx, dy, f, x, y);
        let corner =
            |c: Vec<f64>| bilinear(nx + 1, ny + 1, 0.0, 0.0, dx, dy, |i, j| c[j * (nx + 1) + i], x, y);
        Some(match name {
            "u" => su(),
            "v" => sv(),
            "speed" => su().hypot(sv()),
            "p" => centre(&|i, j| self.p[j * nx + i].f64() * self.p_scale),
            "divergence" => centre(&|i, j| {
                let (i, j) = (i + 1, j + 1);
                (u[l.at(i, j)] - u[l.at(i - 1, j)]).f64() / dx
                    + (v[l.at(i, j)] - v[l.at(i, j - 1)]).f64() / dy
            }),
            "vorticity" => corner(vorticity(&l, u, v, dx, dy)),
            "stream_function" => corner(stream_function(&l, u, v, dx, dy)),
            _ => return None,
        })
    }

    pub fn summary(&self) -> serde_json::Map<String, serde_json::Value> {
        let l = self.l;
        let g = &self.grid;
        let (dx, dy) = (g.spacing[0], g.spacing[1]);
        let psi = stream_function(&l, self.u, self.v, dx, dy);
        let (psi_min, x, y) = corner_minimum(&psi, l.nx, l.ny, dx, dy);
        let mut div = Vec::new();
        self.field("divergence", &mut div);
        let max_div = div.iter().fold(0.0f64, |m, d| m.max(d.abs()));
        let mut m = serde_json::Map::new();
        m.insert("psi_min".into(), psi_min.into());
        m.insert("psi_min_x".into(), (g.origin[0] + x).into());
        m.insert("psi_min_y".into(), (g.origin[1] + y).into());
        m.insert("max_abs_divergence".into(), max_div.into());
        m
    }
}
