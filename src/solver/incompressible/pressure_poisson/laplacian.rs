//! The cell-centred Laplacian with face boundary conditions in `D = 2` or `3` dimensions: the
//! five-point stencil in 2D, the seven-point stencil in 3D.
//!
//! Unknowns `p[(k * ny + j) * nx + i]` at cell centres, x fastest, spacing `h_a` per axis.
//! Row `(i, j, k)` of `L p` is the sum over the `2 D` faces `f` of `c_f (p_nb(f) - p_ijk)`, with
//! `c_f = 1/h^2` towards an interior neighbour and, on a boundary face, `c_f = 0` (Neumann,
//! `dp/dn = 0`), `c_f = 2/h^2` with `p_nb = 0` (Dirichlet `p = 0` on the face, half a cell away)
//! or the periodic image. `L` is symmetric negative (semi-)definite; it is singular (constants in
//! its null space) when no side is Dirichlet.

use crate::solver::real::Real;

/// Pressure condition on one side of the box.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaceBc {
    /// `dp/dn = 0` (walls, inflow, symmetry).
    Neumann,
    /// `p = 0` on the boundary face (outflow).
    Dirichlet,
    /// Periodic with the opposite side.
    Periodic,
}

/// The operator on an `n[0] x n[1] (x n[2])` box; `bc[axis]` holds the lower and upper sides
/// (left/right, bottom/top, front/back).
#[derive(Clone, Copy, Debug)]
pub struct Laplacian<T, const D: usize> {
    pub n: [usize; D],
    /// `1/h_a^2`.
    pub ih2: [T; D],
    pub bc: [[FaceBc; 2]; D],
    /// Index step along each axis: `1`, `nx`, `nx ny`.
    pub stride: [usize; D],
}

impl<T: Real, const D: usize> Laplacian<T, D> {
    pub fn new(n: [usize; D], h: [f64; D], bc: [[FaceBc; 2]; D]) -> Self {
        let mut stride = [1; D];
        for a in 1..D {
            stride[a] = stride[a - 1] * n[a - 1];
        }
        Self {
            n,
            ih2: h.map(|h| T::of(1.0 / (h * h))),
            bc,
            stride,
        }
    }

    pub fn len(&self) -> usize {
        self.n.iter().product()
    }

    /// Cells per x row.
    pub fn nx(&self) -> usize {
        self.n[0]
    }

    /// Number of x rows (`ny nz`), the length of the reductions' per-row scratch.
    pub fn rows(&self) -> usize {
        self.len() / self.n[0]
    }

    /// The cell index `(j, k)` part of row `r` (its `i` is 0).
    #[inline(always)]
    pub fn row_index(&self, r: usize) -> [usize; D] {
        let mut idx = [0; D];
        let mut rest = r;
        for a in 1..D {
            idx[a] = rest % self.n[a];
            rest /= self.n[a];
        }
        idx
    }

    /// True when constants are in the null space (no Dirichlet side): `L p = b` then needs
    /// `sum(b) = 0` and fixes `p` only up to a constant.
    pub fn singular(&self) -> bool {
        !self.bc.iter().flatten().any(|b| *b == FaceBc::Dirichlet)
    }

    /// `(sum_f c_f p_nb(f), sum_f c_f)` for cell `idx` at flat index `k`:
    /// `L p = first - second * p_k`.
    #[inline(always)]
    pub fn stencil(&self, p: &[T], idx: [usize; D], k: usize) -> (T, T) {
        self.stencil_with(|k| p[k], idx, k)
    }

    /// [`Laplacian::stencil`] reading the field through `p(k)` (for raw-pointer sweeps).
    #[inline(always)]
    pub fn stencil_with(&self, p: impl Fn(usize) -> T, idx: [usize; D], k: usize) -> (T, T) {
        if (0..D).all(|a| idx[a] > 0 && idx[a] + 1 < self.n[a]) {
            let mut s = (p(k - 1) + p(k + 1)) * self.ih2[0];
            let mut d = self.ih2[0];
            for a in 1..D {
                s = s + (p(k - self.stride[a]) + p(k + self.stride[a])) * self.ih2[a];
                d = d + self.ih2[a];
            }
            return (s, d * T::of(2.0));
        }
        let mut s = T::zero();
        let mut d = T::zero();
        for a in 0..D {
            let (c, st, n) = (self.ih2[a], self.stride[a], self.n[a]);
            // Lower face, then upper face.
            for (inside, nb, wrap, bc) in [
                (idx[a] > 0, k.wrapping_sub(st), k + (n - 1) * st, self.bc[a][0]),
                (
                    idx[a] + 1 < n,
                    k + st,
                    k.wrapping_sub((n - 1) * st),
                    self.bc[a][1],
                ),
            ] {
                if inside {
                    s = s + c * p(nb);
                    d = d + c;
                } else {
                    match bc {
                        FaceBc::Neumann => {}
                        FaceBc::Dirichlet => d = d + c * T::of(2.0),
                        FaceBc::Periodic => {
                            s = s + c * p(wrap);
                            d = d + c;
                        }
                    }
                }
            }
        }
        (s, d)
    }

    /// The operator on the next coarser grid (cells merged 2 x 2 (x 2)), if every axis halves
    /// evenly and some axis keeps at least 2 cells: an axis of 2 cells becomes 1 while a longer
    /// one remains, so a thin box (Thibault & Senocak's 1024 x 32 x 1024) coarsens past its few
    /// cells across to a coarsest grid of 32 x 1 x 32 rather than stopping at 64 x 2 x 64.
    pub fn coarsen(&self) -> Option<Self> {
        if self.n.iter().any(|&n| n % 2 != 0) || self.n.iter().all(|&n| n < 4) {
            return None;
        }
        let mut c = Self::new(self.n.map(|n| n / 2), [1.0; D], self.bc);
        c.ih2 = self.ih2.map(|x| x * T::of(0.25));
        Some(c)
    }

    /// Value of a cell-centred field at `idx` allowing one ghost cell outside the box, filled
    /// as the homogeneous boundary condition implies (mirror for Neumann, odd mirror for
    /// Dirichlet, periodic image). Used by multigrid prolongation.
    #[inline(always)]
    pub fn ghosted(&self, e: &[T], idx: [isize; D]) -> T {
        let mut sign = T::one();
        let mut k = 0;
        for a in 0..D {
            let n = self.n[a] as isize;
            let [lo, hi] = self.bc[a];
            let i = if idx[a] < 0 {
                match lo {
                    FaceBc::Periodic => n - 1,
                    FaceBc::Dirichlet => {
                        sign = -sign;
                        0
                    }
                    FaceBc::Neumann => 0,
                }
            } else if idx[a] >= n {
                match hi {
                    FaceBc::Periodic => 0,
                    FaceBc::Dirichlet => {
                        sign = -sign;
                        n - 1
                    }
                    FaceBc::Neumann => n - 1,
                }
            } else {
                idx[a]
            };
            k += i as usize * self.stride[a];
        }
        sign * e[k]
    }
}
