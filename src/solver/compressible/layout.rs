//! Cell arrays with ghost layers. A 1D or 2D grid of `nx * ny` cells is stored row by row,
//! `x` fastest, with `g` ghost cells on each side of every used axis (none along `y` in 1D);
//! interior cell `(i, j)` (`0 <= i < nx`, `0 <= j < ny`) lives at `(j + gy) * stride + i + g`.

/// Shape of a padded cell array.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    /// Interior cells per axis.
    pub n: [usize; 2],
    /// Ghost layers per axis (`[g, 0]` in 1D).
    pub g: [usize; 2],
    pub stride: usize,
    pub rows: usize,
    pub dim: usize,
}

impl Layout {
    pub fn new(dim: usize, n: [usize; 2], ghosts: usize) -> Layout {
        let g = [ghosts, if dim == 2 { ghosts } else { 0 }];
        Layout {
            n,
            g,
            stride: n[0] + 2 * g[0],
            rows: n[1] + 2 * g[1],
            dim,
        }
    }

    pub fn len(&self) -> usize {
        self.stride * self.rows
    }

    /// Index of cell `(i, j)`; ghosts have indices `-g..0` and `n..n + g`.
    #[inline(always)]
    pub fn at(&self, i: isize, j: isize) -> usize {
        ((j + self.g[1] as isize) as usize) * self.stride + (i + self.g[0] as isize) as usize
    }

    /// Cell coordinates `(i, j)` of index `k` (ghosts negative or `>= n`).
    #[inline(always)]
    pub fn ij(&self, k: usize) -> [isize; 2] {
        [
            (k % self.stride) as isize - self.g[0] as isize,
            (k / self.stride) as isize - self.g[1] as isize,
        ]
    }

    /// Index offset of one cell along axis `d`.
    #[inline(always)]
    pub fn step(&self, d: usize) -> usize {
        if d == 0 { 1 } else { self.stride }
    }

    /// Whether `(i, j)` lies within `widen` cells of the interior along the used axes.
    #[inline(always)]
    pub fn within(&self, c: [isize; 2], widen: isize) -> bool {
        (0..self.dim).all(|d| c[d] >= -widen && c[d] < self.n[d] as isize + widen)
            && (self.dim == 2 || c[1] == 0)
    }
}
