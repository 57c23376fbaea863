//! Velocity on the staggered (MAC) grid with one ghost layer (Harlow & Welch 1965; layout of
//! Griebel, Dornseifer & Neunhoeffer, Numerical Simulation in Fluid Dynamics, 1998).
//!
//! Cells are `(i, j)`, `i in 1..=nx`, `j in 1..=ny`, with ghost index 0 and `n + 1`. Arrays are
//! `(nx + 2) x (ny + 2)`, index `j * (nx + 2) + i`.
//! - `u[i, j]` sits on the right face of cell `(i, j)`: `x = i dx`, `y = (j - 1/2) dy`;
//!   `u[0, j]` and `u[nx, j]` lie on the left and right boundaries.
//! - `v[i, j]` sits on the top face: `x = (i - 1/2) dx`, `y = j dy`.
//! - Pressure lives at cell centres without ghosts (see `pressure_poisson`).
//!
//! Ghost values carry the boundary conditions: a tangential ghost is the reflection that puts
//! the prescribed value on the wall (`u_ghost = 2 U_wall - u_inside`).

use crate::backend::cpu::par_max;
use crate::case::Boundary;
use crate::solver::real::Real;
use rayon::prelude::*;

/// Index helper for the ghosted arrays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    pub nx: usize,
    pub ny: usize,
    /// Row stride, `nx + 2`.
    pub stride: usize,
    pub periodic_x: bool,
    pub periodic_y: bool,
}

impl Layout {
    pub fn new(nx: usize, ny: usize, bc: &[Boundary; 4]) -> Self {
        Self {
            nx,
            ny,
            stride: nx + 2,
            periodic_x: bc[0] == Boundary::Periodic {},
            periodic_y: bc[2] == Boundary::Periodic {},
        }
    }

    pub fn len(&self) -> usize {
        (self.nx + 2) * (self.ny + 2)
    }

    #[inline(always)]
    pub fn at(&self, i: usize, j: usize) -> usize {
        j * self.stride + i
    }

    /// Range of `i` of the `u` faces the momentum equation advances.
    pub fn u_unknowns_i(&self) -> std::ops::RangeInclusive<usize> {
        1..=if self.periodic_x { self.nx } else { self.nx - 1 }
    }

    /// Range of `j` of the `v` faces the momentum equation advances.
    pub fn v_unknowns_j(&self) -> std::ops::RangeInclusive<usize> {
        1..=if self.periodic_y { self.ny } else { self.ny - 1 }
    }

    /// The largest `|u|` and `|v|` over the grid's faces, boundary faces included and ghosts
    /// not (`u[i, j]` for `i in 0..=nx`, `j in 1..=ny`; `v[i, j]` for `i in 1..=nx`,
    /// `j in 0..=ny`): the speeds of the flow, not the reflections that carry the wall
    /// conditions.
    pub fn max_face_speeds<T: Real>(&self, u: &[T], v: &[T]) -> (T, T) {
        let um = par_max(self.ny, |j| {
            (0..=self.nx)
                .map(|i| u[self.at(i, j + 1)].abs())
                .fold(T::zero(), T::max)
        });
        let vm = par_max(self.ny + 1, |j| {
            (1..=self.nx)
                .map(|i| v[self.at(i, j)].abs())
                .fold(T::zero(), T::max)
        });
        (um, vm)
    }

    /// `u` at possibly out-of-range indices: periodic images where periodic, `None` outside the
    /// stored range otherwise (`i in 0..=nx`, `j in 0..=ny+1`).
    #[inline(always)]
    pub fn u_at<T: Real>(&self, u: &[T], i: isize, j: isize) -> Option<T> {
        let i = wrap(i, self.nx, self.periodic_x, 0, self.nx as isize)?;
        let j = wrap(j, self.ny, self.periodic_y, 0, self.ny as isize + 1)?;
        Some(u[self.at(i, j)])
    }

    /// `v` likewise (`i in 0..=nx+1`, `j in 0..=ny`).
    #[inline(always)]
    pub fn v_at<T: Real>(&self, v: &[T], i: isize, j: isize) -> Option<T> {
        let i = wrap(i, self.nx, self.periodic_x, 0, self.nx as isize + 1)?;
        let j = wrap(j, self.ny, self.periodic_y, 0, self.ny as isize)?;
        Some(v[self.at(i, j)])
    }
}

#[inline(always)]
fn wrap(k: isize, n: usize, periodic: bool, lo: isize, hi: isize) -> Option<usize> {
    if k >= lo && k <= hi {
        return Some(k as usize);
    }
    if periodic {
        let n = n as isize;
        let k = if k < lo { k + n } else { k - n };
        return (k >= lo && k <= hi).then_some(k as usize);
    }
    None
}

/// Writes boundary-face and ghost values of `u, v` for the conditions `bc` (left, right,
/// bottom, top). Outflow faces are left alone (they are unknowns of the projection). Wall
/// velocities are tangential: along +y on left/right, along +x on bottom/top.
pub fn fill_velocity_ghosts<T: Real>(l: &Layout, bc: &[Boundary; 4], u: &mut [T], v: &mut [T]) {
    let (nx, ny) = (l.nx, l.ny);
    let two = T::of(2.0);
    // x-sides, rows 1..=ny (parallel over rows).
    let s = l.stride;
    u.par_chunks_mut(s)
        .zip(v.par_chunks_mut(s))
        .enumerate()
        .filter(|(j, _)| (1..=ny).contains(j))
        .for_each(|(_, (ur, vr))| {
            for (side, (face, ghost, inner)) in [(0, (0, 0, 1)), (1, (nx, nx + 1, nx))] {
                match &bc[side] {
                    Boundary::Wall { velocity } => {
                        ur[face] = T::zero();
                        vr[ghost] = two * T::of(*velocity) - vr[inner];
                    }
                    Boundary::Inflow { velocity, .. } => {
                        ur[face] = T::of(velocity[0]);
                        vr[ghost] = two * T::of(velocity[1]) - vr[inner];
                    }
                    Boundary::Outflow {} => vr[ghost] = vr[inner],
                    Boundary::Symmetry {} => {
                        ur[face] = T::zero();
                        vr[ghost] = vr[inner];
                    }
                    Boundary::Periodic {} => {
                        if side == 0 {
                            ur[0] = ur[nx];
                            ur[nx + 1] = ur[1];
                            vr[0] = vr[nx];
                            vr[nx + 1] = vr[1];
                        }
                    }
                }
            }
        });
    // y-sides, all columns including the ghosts (sets the corners too).
    for (side, (face, ghost, inner)) in [(2, (0, 0, 1)), (3, (ny, ny + 1, ny))] {
        for i in 0..nx + 2 {
            let (f, g, n) = (l.at(i, face), l.at(i, ghost), l.at(i, inner));
            match &bc[side] {
                Boundary::Wall { velocity } => {
                    v[f] = T::zero();
                    u[g] = two * T::of(*velocity) - u[n];
                }
                Boundary::Inflow { velocity, .. } => {
                    v[f] = T::of(velocity[1]);
                    u[g] = two * T::of(velocity[0]) - u[n];
                }
                Boundary::Outflow {} => u[g] = u[n],
                Boundary::Symmetry {} => {
                    v[f] = T::zero();
                    u[g] = u[n];
                }
                Boundary::Periodic {} => {
                    if side == 2 {
                        u[l.at(i, 0)] = u[l.at(i, ny)];
                        u[l.at(i, ny + 1)] = u[l.at(i, 1)];
                        v[l.at(i, 0)] = v[l.at(i, ny)];
                        v[l.at(i, ny + 1)] = v[l.at(i, 1)];
                    }
                }
            }
        }
    }
}

/// Bilinear interpolation on a lattice of `ni x nj` points `(x0 + a dx, y0 + b dy)`, clamped to
/// the lattice.
pub fn bilinear(
    ni: usize,
    nj: usize,
    x0: f64,
    y0: f64,
    dx: f64,
    dy: f64,
    value: impl Fn(usize, usize) -> f64,
    x: f64,
    y: f64,
) -> f64 {
    let fx = ((x - x0) / dx).clamp(0.0, (ni - 1) as f64);
    let fy = ((y - y0) / dy).clamp(0.0, (nj - 1) as f64);
    let (i, j) = ((fx as usize).min(ni - 2), (fy as usize).min(nj - 2));
    let (tx, ty) = (fx - i as f64, fy - j as f64);
    (1.0 - tx) * (1.0 - ty) * value(i, j)
        + tx * (1.0 - ty) * value(i + 1, j)
        + (1.0 - tx) * ty * value(i, j + 1)
        + tx * ty * value(i + 1, j + 1)
}
