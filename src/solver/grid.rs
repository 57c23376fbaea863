//! Uniform Cartesian grids.

use crate::case::GridSpec;

/// `nx * ny * nz` cells of size `spacing` from `origin`; cell `(i, j, k)` has its centre at
/// `origin + (i + 1/2, j + 1/2, k + 1/2) * spacing`. Unused axes have one cell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid {
    pub dim: usize,
    pub n: [usize; 3],
    pub origin: [f64; 3],
    pub spacing: [f64; 3],
}

impl Grid {
    pub fn from_spec(dim: usize, g: &GridSpec) -> Grid {
        let n = [g.nx, g.ny, g.nz];
        let mut origin = [0.0; 3];
        let mut spacing = [1.0; 3];
        for a in 0..dim {
            origin[a] = g.origin.get(a).copied().unwrap_or(0.0);
            spacing[a] = g.extents[a] / n[a] as f64;
        }
        Grid {
            dim,
            n,
            origin,
            spacing,
        }
    }

    pub fn cells(&self) -> usize {
        self.n.iter().product()
    }

    /// Domain length along `axis`.
    pub fn extent(&self, axis: usize) -> f64 {
        self.spacing[axis] * self.n[axis] as f64
    }

    /// Centre coordinate of cell index `i` along `axis`.
    pub fn centre(&self, axis: usize, i: usize) -> f64 {
        self.origin[axis] + (i as f64 + 0.5) * self.spacing[axis]
    }
}
