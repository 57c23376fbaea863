//! Derived fields of the staggered velocity: in 2D vorticity and stream function at cell corners
//! and the primary vortex (the minimum of the stream function); in 3D the velocity gradient at
//! cell centres and the vortex measures built on it ([`vortex`]); [`View`], the fields, samples
//! and summary of a staggered state in either dimension.

pub mod vortex;

use super::staggered::{Layout, multilinear};
use crate::solver::Grid;
use crate::solver::real::Real;
use rayon::prelude::*;

/// The fields of a 2D staggered state at cell centres, then `extra` (a solver's own fields).
macro_rules! staggered_fields_2d {
    ($($extra:literal),*) => {
        &["u", "v", "speed", "p", "vorticity", "stream_function", "divergence" $(, $extra)*]
    };
}

/// The fields of a 3D staggered state at cell centres: the velocity, its magnitude, pressure, the
/// vorticity vector and its magnitude, the Q-criterion, lambda-2, helicity and the divergence;
/// then `extra` (a solver's own fields). (In 2D `vorticity` is the signed scalar
/// `dv/dx - du/dy`, 3D's `vorticity_z`.)
macro_rules! staggered_fields_3d {
    ($($extra:literal),*) => {
        &[
            "u",
            "v",
            "w",
            "speed",
            "p",
            "vorticity_x",
            "vorticity_y",
            "vorticity_z",
            "vorticity_magnitude",
            "q_criterion",
            "lambda2",
            "helicity",
            "divergence"
            $(, $extra)*
        ]
    };
}
pub(crate) use {staggered_fields_2d, staggered_fields_3d};

/// Fields of a 2D staggered state ([`staggered_fields_2d`]).
pub const FIELDS_2D: &[&str] = staggered_fields_2d!();

/// Fields of a 3D staggered state ([`staggered_fields_3d`]).
pub const FIELDS_3D: &[&str] = staggered_fields_3d!();

/// The fields of a `D`-dimensional staggered state.
pub fn fields<const D: usize>() -> &'static [&'static str] {
    if D == 2 { FIELDS_2D } else { FIELDS_3D }
}

/// Vorticity `omega = dv/dx - du/dy` at the corners `(i dx, j dy)`, `i in 0..=nx`,
/// `j in 0..=ny`, index `j * (nx + 1) + i`; ghost values put wall vorticity on walls.
pub fn vorticity<T: Real>(l: &Layout<2>, u: &[T], v: &[T], dx: f64, dy: f64) -> Vec<f64> {
    let [nx, ny] = l.n;
    let mut w = vec![0.0; (nx + 1) * (ny + 1)];
    for j in 0..=ny {
        for i in 0..=nx {
            let dvdx = (v[l.at([i + 1, j])] - v[l.at([i, j])]).f64() / dx;
            let dudy = (u[l.at([i, j + 1])] - u[l.at([i, j])]).f64() / dy;
            w[j * (nx + 1) + i] = dvdx - dudy;
        }
    }
    w
}

/// Stream function (`u = dpsi/dy`, `v = -dpsi/dx`) at the corners, by integrating the face
/// fluxes from `psi(0, 0) = 0`: up the left boundary with `u`, then along each row with `-v`.
/// For a discretely divergence-free field the result is path independent, and it is constant
/// along walls; the cavity's walls get `psi = 0`.
pub fn stream_function<T: Real>(l: &Layout<2>, u: &[T], v: &[T], dx: f64, dy: f64) -> Vec<f64> {
    let [nx, ny] = l.n;
    let mut psi = vec![0.0; (nx + 1) * (ny + 1)];
    for j in 1..=ny {
        psi[j * (nx + 1)] = psi[(j - 1) * (nx + 1)] + u[l.at([0, j])].f64() * dy;
    }
    for j in 0..=ny {
        for i in 1..=nx {
            psi[j * (nx + 1) + i] = psi[j * (nx + 1) + i - 1] - v[l.at([i, j])].f64() * dx;
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
/// and the summary (shared by the projection and SIMPLE solvers).
pub struct View<'a, T, const D: usize> {
    pub l: Layout<D>,
    pub grid: Grid,
    /// Ghosted velocity arrays (see `staggered`), one per component.
    pub vel: [&'a [T]; D],
    /// Pressure at cell centres, no ghosts, in the solver's units.
    pub p: &'a [T],
    /// Factor from the stored pressure to the reported one (density for kinematic pressure).
    pub p_scale: f64,
}

/// Component names.
const COMPONENTS: [&str; 3] = ["u", "v", "w"];

impl<T: Real, const D: usize> View<'_, T, D> {
    fn h(&self) -> [f64; D] {
        std::array::from_fn(|a| self.grid.spacing[a])
    }

    /// The 2D layout of a 2D view (for the corner fields).
    fn layout_2d(&self) -> Layout<2> {
        Layout {
            n: [self.l.n[0], self.l.n[1]],
            stride: [self.l.stride[0], self.l.stride[1]],
            periodic: [self.l.periodic[0], self.l.periodic[1]],
        }
    }

    /// A 2D corner field (`vorticity`, `stream_function`), `None` for the others or in 3D.
    fn corners(&self, name: &str) -> Option<Vec<f64>> {
        if D != 2 {
            return None;
        }
        let (l, h) = (self.layout_2d(), self.h());
        let (u, v) = (self.vel[0], self.vel[1]);
        match name {
            "vorticity" => Some(vorticity(&l, u, v, h[0], h[1])),
            "stream_function" => Some(stream_function(&l, u, v, h[0], h[1])),
            _ => None,
        }
    }

    /// Component `c` at the centre of cell `idx` (1-based): the mean of its two faces.
    #[inline(always)]
    pub fn centred(&self, c: usize, idx: [usize; D]) -> f64 {
        let k = self.l.at(idx);
        0.5 * (self.vel[c][k - self.l.stride[c]] + self.vel[c][k]).f64()
    }

    /// A cell-centred field at cell `idx` (1-based), except the 2D corner fields; `None` for an
    /// unknown name.
    fn cell(&self, name: &str, idx: [usize; D]) -> Option<f64> {
        let h = self.h();
        if let Some(c) = COMPONENTS[..D].iter().position(|n| *n == name) {
            return Some(self.centred(c, idx));
        }
        Some(match name {
            "speed" => (1..D).fold(self.centred(0, idx), |s, c| s.hypot(self.centred(c, idx))),
            "p" => {
                let cell = (0..D).rev().fold(0, |k, a| k * self.l.n[a] + idx[a] - 1);
                self.p[cell].f64() * self.p_scale
            }
            "divergence" => {
                let k = self.l.at(idx);
                let d = |a: usize| (self.vel[a][k] - self.vel[a][k - self.l.stride[a]]).f64() / h[a];
                (1..D).fold(d(0), |s, a| s + d(a))
            }
            _ if D == 3 => vortex::measure(name, &vortex::gradient(self, idx))?,
            _ => return None,
        })
    }

    pub fn field(&self, name: &str, out: &mut Vec<f64>) -> Option<()> {
        let n = self.l.n;
        let corners = self.corners(name);
        let cells: usize = n.iter().product();
        let value = |idx: [usize; D]| -> Option<f64> {
            match &corners {
                Some(c) => {
                    // The mean of the cell's four corners.
                    let (i, j, w) = (idx[0], idx[1], n[0] + 1);
                    let (a, b) = ((j - 1) * w + i - 1, j * w + i - 1);
                    Some(0.25 * (c[a] + c[a + 1] + c[b] + c[b + 1]))
                }
                None => self.cell(name, idx),
            }
        };
        // An unknown name returns None before any work; rows are then filled in parallel
        // (the display reads a field every frame, at up to 4096^2 cells).
        value([1; D])?;
        out.resize(cells, 0.0);
        out.par_chunks_mut(n[0]).enumerate().for_each(|(r, row)| {
            let mut idx = [1; D];
            let mut rest = r;
            for a in 1..D {
                idx[a] = rest % n[a] + 1;
                rest /= n[a];
            }
            for (i0, o) in row.iter_mut().enumerate() {
                idx[0] = i0 + 1;
                *o = value(idx).expect("a known field");
            }
        });
        Some(())
    }

    pub fn sample(&self, name: &str, point: [f64; 3]) -> Option<f64> {
        let (l, g, h) = (self.l, &self.grid, self.h());
        let x: [f64; D] = std::array::from_fn(|a| point[a] - g.origin[a]);
        // Component c on its faces: n_c + 1 points from 0 along axis c, the n + 2 ghosted rows
        // from -h/2 along the others.
        let face = |c: usize| {
            let n = std::array::from_fn(|a| l.n[a] + if a == c { 1 } else { 2 });
            let x0 = std::array::from_fn(|a| if a == c { 0.0 } else { -0.5 * h[a] });
            multilinear(n, x0, h, |idx| self.vel[c][l.at(idx)].f64(), x)
        };
        if let Some(c) = COMPONENTS[..D].iter().position(|n| *n == name) {
            return Some(face(c));
        }
        if name == "speed" {
            return Some((1..D).fold(face(0), |s, c| s.hypot(face(c))));
        }
        if let Some(c) = self.corners(name) {
            let w = l.n[0] + 1;
            return Some(multilinear(
                std::array::from_fn(|a| l.n[a] + 1),
                [0.0; D],
                h,
                |idx| c[idx[1] * w + idx[0]],
                x,
            ));
        }
        self.cell(name, [1; D])?;
        Some(multilinear(
            l.n,
            h.map(|h| 0.5 * h),
            h,
            |idx| self.cell(name, idx.map(|i| i + 1)).expect("a known field"),
            x,
        ))
    }

    /// Kinetic energy per unit density, `1/2 sum |u|^2 dV` over the cells (cell-centred
    /// velocities), and the extrema over the cell centres of the centrelines through the
    /// domain's centre: `u` along the line parallel to y, `v` along the line parallel to x (the
    /// cavity's profiles; in 3D at the mid-plane z = 0.5).
    fn energy_and_centrelines(&self, m: &mut serde_json::Map<String, serde_json::Value>) {
        let (l, g) = (self.l, &self.grid);
        let volume: f64 = (0..D).map(|a| g.spacing[a]).product();
        let mut energy = 0.0;
        super::staggered::for_each_index([1; D], l.n, |i| {
            let s2: f64 = (0..D).map(|c| self.centred(c, i).powi(2)).sum();
            energy += 0.5 * s2 * volume;
        });
        m.insert("kinetic_energy".into(), energy.into());
        let centre: [f64; 3] = std::array::from_fn(|a| g.origin[a] + 0.5 * g.extent(a));
        for (c, along) in [(0usize, 1usize), (1, 0)] {
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            for s in 0..l.n[along] {
                let mut p = centre;
                p[along] = g.centre(along, s);
                let q = self.sample(COMPONENTS[c], p).expect("a velocity component");
                (lo, hi) = (lo.min(q), hi.max(q));
            }
            let name = COMPONENTS[c];
            m.insert(format!("centreline_{name}_min"), lo.into());
            m.insert(format!("centreline_{name}_max"), hi.into());
        }
    }

    pub fn summary(&self) -> serde_json::Map<String, serde_json::Value> {
        let (l, g, h) = (self.l, &self.grid, self.h());
        let mut m = serde_json::Map::new();
        if let Some(psi) = self.corners("stream_function") {
            let (psi_min, x, y) = corner_minimum(&psi, l.n[0], l.n[1], h[0], h[1]);
            m.insert("psi_min".into(), psi_min.into());
            m.insert("psi_min_x".into(), (g.origin[0] + x).into());
            m.insert("psi_min_y".into(), (g.origin[1] + y).into());
        }
        let mut div = Vec::new();
        self.field("divergence", &mut div);
        let max_div = div.iter().fold(0.0f64, |m, d| m.max(d.abs()));
        m.insert("max_abs_divergence".into(), max_div.into());
        self.energy_and_centrelines(&mut m);
        m
    }
}
