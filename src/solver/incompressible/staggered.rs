//! Velocity on the staggered (MAC) grid with one ghost layer, in `D = 2` or `3` dimensions
//! (Harlow & Welch 1965; layout of Griebel, Dornseifer & Neunhoeffer, Numerical Simulation in
//! Fluid Dynamics, 1998).
//!
//! Cells are `(i, j, k)`, each index in `1..=n` along its axis, with ghost index 0 and `n + 1`.
//! Every velocity component is stored in one array of `(nx + 2)(ny + 2)(nz + 2)` values, x
//! fastest: index `i + (nx + 2) (j + (ny + 2) k)` ([`Layout::at`]).
//! - Component `c` at index `idx` sits on the upper face of cell `idx` normal to axis `c`: in 2D
//!   `u[i, j]` at `x = i dx, y = (j - 1/2) dy`, `v[i, j]` at `x = (i - 1/2) dx, y = j dy`; so
//!   `u[0, j]` and `u[nx, j]` lie on the left and right boundaries.
//! - Pressure lives at cell centres without ghosts (see `pressure_poisson`).
//!
//! Ghost values carry the boundary conditions: a tangential ghost is the reflection that puts
//! the prescribed value on the wall (`u_ghost = 2 U_wall - u_inside`).

use super::analytic::Analytic;
use super::projection::VELOCITY;
use crate::backend::cpu::par_max;
use crate::case::{Boundary, Invalid, Side};
use crate::solver::real::Real;
use crate::solver::{Grid, Solver};
use std::ops::RangeInclusive;

/// Index helper for the ghosted arrays of a `D`-dimensional staggered grid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout<const D: usize> {
    /// Cells per axis.
    pub n: [usize; D],
    /// Index step along each axis: `1`, `nx + 2`, `(nx + 2)(ny + 2)`.
    pub stride: [usize; D],
    pub periodic: [bool; D],
}

/// The side of the box at `axis`, `s = 0` (lower) or `1` (upper).
pub fn side(axis: usize, s: usize) -> Side {
    Side::ALL[2 * axis + s]
}

impl<const D: usize> Layout<D> {
    /// The layout of the `D`-dimensional `grid` with sides `bc` (panics for a grid of another
    /// dimension).
    pub fn of_grid(grid: &Grid, bc: &[[Boundary; 2]]) -> Self {
        assert_eq!(grid.dim, D, "a {D}D solver of a {}D case", grid.dim);
        Self::new(std::array::from_fn(|a| grid.n[a]), bc)
    }

    pub fn new(n: [usize; D], bc: &[[Boundary; 2]]) -> Self {
        let mut stride = [1; D];
        for a in 1..D {
            stride[a] = stride[a - 1] * (n[a - 1] + 2);
        }
        Self {
            n,
            stride,
            periodic: std::array::from_fn(|a| bc[a][0] == Boundary::Periodic {}),
        }
    }

    pub fn len(&self) -> usize {
        self.stride[D - 1] * (self.n[D - 1] + 2)
    }

    /// Number of x rows (lines of `nx + 2` values) of a ghosted array.
    pub fn rows(&self) -> usize {
        self.len() / self.stride[1]
    }

    /// Flat index of `idx`.
    #[inline(always)]
    pub fn at(&self, idx: [usize; D]) -> usize {
        (0..D).fold(0, |k, a| k + idx[a] * self.stride[a])
    }

    /// The index of the first value of x row `r` (its `i` is 0).
    #[inline(always)]
    pub fn row_index(&self, r: usize) -> [usize; D] {
        let mut idx = [0; D];
        let mut rest = r;
        for a in 1..D {
            idx[a] = rest % (self.n[a] + 2);
            rest /= self.n[a] + 2;
        }
        idx
    }

    /// Range along axis `c` of the component-`c` faces the momentum equation advances (the
    /// upper boundary face too where the axis is periodic).
    pub fn unknowns(&self, c: usize) -> RangeInclusive<usize> {
        1..=if self.periodic[c] {
            self.n[c]
        } else {
            self.n[c] - 1
        }
    }

    /// The largest `|velocity_c|` of each component over the grid's faces, boundary faces
    /// included and ghosts not (index `0..=n` along axis `c`, `1..=n` along the others): the
    /// speeds of the flow, not the reflections that carry the wall conditions.
    pub fn max_face_speeds<T: Real>(&self, vel: [&[T]; D]) -> [T; D] {
        std::array::from_fn(|c| {
            let q = vel[c];
            par_max(self.rows(), |r| {
                let idx = self.row_index(r);
                let inside = (1..D).all(|a| {
                    let lo = if a == c { 0 } else { 1 };
                    (lo..=self.n[a]).contains(&idx[a])
                });
                if !inside {
                    return T::zero();
                }
                let (lo, hi) = if c == 0 { (0, self.n[0]) } else { (1, self.n[0]) };
                let k = self.at(idx);
                q[k + lo..=k + hi].iter().fold(T::zero(), |m, x| m.max(x.abs()))
            })
        })
    }

    /// Component `c` at a possibly out-of-range index: the periodic image where periodic,
    /// `None` outside the stored range otherwise (`0..=n` along axis `c`, `0..=n + 1` along the
    /// others).
    #[inline(always)]
    pub fn component_at<T: Real>(&self, q: &[T], c: usize, idx: [isize; D]) -> Option<T> {
        let mut at = [0; D];
        for a in 0..D {
            let hi = self.n[a] as isize + (a != c) as isize;
            at[a] = wrap(idx[a], self.n[a], self.periodic[a], hi)?;
        }
        Some(q[self.at(at)])
    }
}

#[inline(always)]
fn wrap(k: isize, n: usize, periodic: bool, hi: isize) -> Option<usize> {
    if k >= 0 && k <= hi {
        return Some(k as usize);
    }
    if periodic {
        let n = n as isize;
        let k = if k < 0 { k + n } else { k - n };
        return (k >= 0 && k <= hi).then_some(k as usize);
    }
    None
}

/// Calls `f` for every index of the box `lo..=hi` (per axis), x fastest.
pub fn for_each_index<const D: usize>(lo: [usize; D], hi: [usize; D], mut f: impl FnMut([usize; D])) {
    if (0..D).any(|a| lo[a] > hi[a]) {
        return;
    }
    let mut idx = lo;
    loop {
        f(idx);
        let mut a = 0;
        loop {
            if a == D {
                return;
            }
            if idx[a] < hi[a] {
                idx[a] += 1;
                break;
            }
            idx[a] = lo[a];
            a += 1;
        }
    }
}

/// The velocity a side prescribes (a wall's or an inflow's), `None` for the others.
pub fn side_velocity(b: &Boundary, side: Side) -> Option<[f64; 3]> {
    match b {
        Boundary::Wall { velocity } => Some(velocity.vector(side)),
        Boundary::Inflow { velocity, .. } => {
            let mut v = [0.0; 3];
            v.iter_mut().zip(velocity).for_each(|(v, c)| *v = *c);
            Some(v)
        }
        _ => None,
    }
}

/// The analytic velocity that `exact` sides prescribe, at `time`, on `grid`.
#[derive(Clone, Copy)]
pub struct ExactSides<'a> {
    pub field: &'a Analytic,
    pub grid: &'a Grid,
    pub time: f64,
}

impl ExactSides<'_> {
    /// Component `c` at the point of stored node `idx` of component `c`, with its axis-`a`
    /// coordinate moved onto the side `s` of the box.
    fn on_side<const D: usize>(&self, c: usize, idx: [usize; D], a: usize, s: usize) -> f64 {
        let g = self.grid;
        let mut x = node_position(g, c, idx);
        x[a] = g.origin[a] + s as f64 * g.extent(a);
        self.field.velocity(x, self.time)[c]
    }
}

/// Where node `idx` of component `c` sits: its face along axis `c`, the cell centre along the
/// others (ghost nodes half a cell outside the box).
pub fn node_position<const D: usize>(g: &Grid, c: usize, idx: [usize; D]) -> [f64; 3] {
    let mut x = [0.0; 3];
    for a in 0..D {
        let i = idx[a] as f64 - if a == c { 0.0 } else { 0.5 };
        x[a] = g.origin[a] + i * g.spacing[a];
    }
    x
}

/// Why a solver cannot take over another's flow ([`Solver::load_state`]): `from` has no velocity
/// or pressure somewhere on this grid.
pub fn flow_unavailable() -> Invalid {
    Invalid::new("case", "the running solver cannot provide the velocity and p")
}

/// `vel` with every velocity component sampled at its nodes inside the box (`node_position`;
/// component `c` from index 0 along axis `c`, from 1 along the others) from `from`'s fields `u`,
/// `v` and `w` ([`Solver::sample`]), its ghost nodes as they were; [`flow_unavailable`] where
/// `from` has no value there.
pub fn sample_velocity<T: Real, const D: usize>(
    l: &Layout<D>,
    g: &Grid,
    vel: &[Vec<T>; D],
    from: &dyn Solver,
) -> Result<[Vec<T>; D], Invalid> {
    let mut vel = vel.clone();
    for (c, q) in vel.iter_mut().enumerate() {
        let mut lo = [1; D];
        lo[c] = 0;
        let mut missing = false;
        for_each_index(lo, l.n, |idx| {
            match from.sample(VELOCITY[c], node_position(g, c, idx)) {
                Some(v) => q[l.at(idx)] = T::of(v),
                None => missing = true,
            }
        });
        if missing {
            return Err(flow_unavailable());
        }
    }
    Ok(vel)
}

/// Writes boundary-face and ghost values of the velocity components for the conditions `bc`
/// (`bc[axis][0]` the lower side, `[1]` the upper). Outflow and opening faces are left alone (they are
/// unknowns of the projection). Axes are filled in order, the sides of axis `a` over the ghost
/// layers of the axes before it (so edges and corners take the later axis' condition).
pub fn fill_velocity_ghosts<T: Real, const D: usize>(
    l: &Layout<D>,
    bc: &[[Boundary; 2]],
    vel: [&mut [T]; D],
) {
    fill_velocity_ghosts_with(l, bc, vel, None)
}

/// [`fill_velocity_ghosts`], with the values of `exact` sides from `exact`.
pub fn fill_velocity_ghosts_with<T: Real, const D: usize>(
    l: &Layout<D>,
    bc: &[[Boundary; 2]],
    mut vel: [&mut [T]; D],
    exact: Option<ExactSides<'_>>,
) {
    let two = T::of(2.0);
    for a in 0..D {
        let n = l.n[a];
        let (mut lo, mut hi) = ([1; D], l.n);
        for b in 0..a {
            (lo[b], hi[b]) = (0, l.n[b] + 1);
        }
        (lo[a], hi[a]) = (0, 0);
        let step = l.stride[a];
        for s in 0..2 {
            let b = &bc[a][s];
            let prescribed = side_velocity(b, side(a, s));
            // Offsets along axis a of the normal face, the tangential ghost and its mirror.
            let (face, ghost, inner) = if s == 0 { (0, 0, 1) } else { (n, n + 1, n) };
            for_each_index(lo, hi, |idx| {
                let base = l.at(idx);
                match b {
                    Boundary::Exact {} => {
                        let exact = exact.expect("exact sides come with their analytic field");
                        for (c, q) in vel.iter_mut().enumerate() {
                            let mut at = idx;
                            if c == a {
                                at[a] = face;
                                q[base + face * step] = T::of(exact.on_side(c, at, a, s));
                            } else {
                                at[a] = ghost;
                                let m = q[base + inner * step];
                                q[base + ghost * step] = two * T::of(exact.on_side(c, at, a, s)) - m;
                            }
                        }
                    }
                    Boundary::Periodic {} => {
                        if s == 0 {
                            for q in vel.iter_mut() {
                                q[base] = q[base + n * step];
                                q[base + (n + 1) * step] = q[base + step];
                            }
                        }
                    }
                    _ => {
                        for (c, q) in vel.iter_mut().enumerate() {
                            if c == a {
                                if !b.is_open() {
                                    q[base + face * step] = T::of(prescribed.map_or(0.0, |v| v[c]));
                                }
                            } else {
                                let m = q[base + inner * step];
                                q[base + ghost * step] = match prescribed {
                                    Some(v) => two * T::of(v[c]) - m,
                                    None => m,
                                };
                            }
                        }
                    }
                }
            });
        }
    }
}

/// Multilinear interpolation on a lattice of `n[a]` points `x0[a] + m h[a]` per axis, clamped to
/// the lattice (bilinear in 2D, trilinear in 3D).
pub fn multilinear<const D: usize>(
    n: [usize; D],
    x0: [f64; D],
    h: [f64; D],
    value: impl Fn([usize; D]) -> f64,
    x: [f64; D],
) -> f64 {
    let mut sum = 0.0;
    multilinear_corners(n, x0, h, x, |idx, w| {
        if w != 0.0 {
            sum += w * value(idx);
        }
    });
    sum
}

/// The `2^D` corners of [`multilinear`]'s cell around `x` and their weights, corner `m` (bit
/// `a` set: the upper point along axis `a`) visited in order `m = 0, 1, ...`.
pub fn multilinear_corners<const D: usize>(
    n: [usize; D],
    x0: [f64; D],
    h: [f64; D],
    x: [f64; D],
    mut visit: impl FnMut([usize; D], f64),
) {
    let mut base = [0; D];
    let mut t = [0.0; D];
    for a in 0..D {
        let f = ((x[a] - x0[a]) / h[a]).clamp(0.0, (n[a] - 1) as f64);
        base[a] = (f as usize).min(n[a].saturating_sub(2));
        t[a] = f - base[a] as f64;
    }
    for corner in 0..1usize << D {
        let mut w = 1.0;
        let mut idx = base;
        for a in 0..D {
            if corner >> a & 1 == 1 {
                w *= t[a];
                idx[a] += 1;
            } else {
                w *= 1.0 - t[a];
            }
        }
        visit(idx, w);
    }
}
