//! The cell-centred five-point Laplacian with face boundary conditions.
//!
//! Unknowns `p[j * nx + i]` at cell centres, `i in 0..nx` (x), `j in 0..ny` (y), spacing
//! `dx, dy`. Row `(i, j)` of `L p` is the sum over the four faces `f` of
//! `c_f (p_nb(f) - p_ij)`, with `c_f = 1/h^2` towards an interior neighbour and, on a boundary
//! face, `c_f = 0` (Neumann, `dp/dn = 0`), `c_f = 2/h^2` with `p_nb = 0` (Dirichlet `p = 0` on
//! the face, half a cell away) or the periodic image. `L` is symmetric negative (semi-)definite;
//! it is singular (constants in its null space) when no side is Dirichlet.

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

/// Sides in the order left (x = 0), right, bottom (y = 0), top.
#[derive(Clone, Copy, Debug)]
pub struct Laplacian<T> {
    pub nx: usize,
    pub ny: usize,
    /// `1/dx^2`, `1/dy^2`.
    pub idx2: T,
    pub idy2: T,
    pub bc: [FaceBc; 4],
}

impl<T: Real> Laplacian<T> {
    pub fn new(nx: usize, ny: usize, dx: f64, dy: f64, bc: [FaceBc; 4]) -> Self {
        Self {
            nx,
            ny,
            idx2: T::of(1.0 / (dx * dx)),
            idy2: T::of(1.0 / (dy * dy)),
            bc,
        }
    }

    pub fn len(&self) -> usize {
        self.nx * self.ny
    }

    /// True when constants are in the null space (no Dirichlet side): `L p = b` then needs
    /// `sum(b) = 0` and fixes `p` only up to a constant.
    pub fn singular(&self) -> bool {
        !self.bc.contains(&FaceBc::Dirichlet)
    }

    /// `(sum_f c_f p_nb(f), sum_f c_f)` for cell `(i, j)`: `L p = first - second * p_ij`.
    #[inline(always)]
    pub fn stencil(&self, p: &[T], i: usize, j: usize) -> (T, T) {
        self.stencil_with(|k| p[k], i, j)
    }

    /// [`Laplacian::stencil`] reading the field through `p(k)` (for raw-pointer sweeps).
    #[inline(always)]
    pub fn stencil_with(&self, p: impl Fn(usize) -> T, i: usize, j: usize) -> (T, T) {
        let (nx, ny) = (self.nx, self.ny);
        let row = j * nx;
        if i > 0 && i + 1 < nx && j > 0 && j + 1 < ny {
            let s = (p(row + i - 1) + p(row + i + 1)) * self.idx2
                + (p(row - nx + i) + p(row + nx + i)) * self.idy2;
            return (s, (self.idx2 + self.idy2) * T::of(2.0));
        }
        let mut s = T::zero();
        let mut d = T::zero();
        let mut face = |inside: bool, nb: usize, wrap: usize, bc: FaceBc, c: T| {
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
        };
        let here = row + i;
        face(i > 0, here.wrapping_sub(1), row + nx - 1, self.bc[0], self.idx2);
        face(i + 1 < nx, here + 1, row, self.bc[1], self.idx2);
        face(
            j > 0,
            here.wrapping_sub(nx),
            (ny - 1) * nx + i,
            self.bc[2],
            self.idy2,
        );
        face(j + 1 < ny, here + nx, i, self.bc[3], self.idy2);
        (s, d)
    }

    /// The operator on the next coarser grid (cells merged 2 x 2), if the grid halves evenly
    /// and stays at least 2 x 2.
    pub fn coarsen(&self) -> Option<Self> {
        if self.nx % 2 != 0 || self.ny % 2 != 0 || self.nx < 4 || self.ny < 4 {
            return None;
        }
        Some(Self {
            nx: self.nx / 2,
            ny: self.ny / 2,
            idx2: self.idx2 * T::of(0.25),
            idy2: self.idy2 * T::of(0.25),
            bc: self.bc,
        })
    }

    /// Value of a cell-centred field at `(i, j)` allowing one ghost cell outside the box, filled
    /// as the homogeneous boundary condition implies (mirror for Neumann, odd mirror for
    /// Dirichlet, periodic image). Used by multigrid prolongation.
    #[inline(always)]
    pub fn ghosted(&self, e: &[T], i: isize, j: isize) -> T {
        let (nx, ny) = (self.nx as isize, self.ny as isize);
        let mut sign = T::one();
        let fold = |k: isize, n: isize, lo: FaceBc, hi: FaceBc, sign: &mut T| -> isize {
            if k < 0 {
                match lo {
                    FaceBc::Periodic => n - 1,
                    FaceBc::Dirichlet => {
                        *sign = -*sign;
                        0
                    }
                    FaceBc::Neumann => 0,
                }
            } else if k >= n {
                match hi {
                    FaceBc::Periodic => 0,
                    FaceBc::Dirichlet => {
                        *sign = -*sign;
                        n - 1
                    }
                    FaceBc::Neumann => n - 1,
                }
            } else {
                k
            }
        };
        let ii = fold(i, nx, self.bc[0], self.bc[1], &mut sign);
        let jj = fold(j, ny, self.bc[2], self.bc[3], &mut sign);
        sign * e[(jj * nx + ii) as usize]
    }
}
