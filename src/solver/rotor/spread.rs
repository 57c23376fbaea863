//! Spreading the disk's point forces to the points where one velocity component lives (a
//! staggered grid's faces, or cell centres), conservatively: each disk point's force is shared
//! by the grid points within `3 width` of it with Gaussian weights `exp(-(d / width)^2)`
//! normalised over those points, so the sources times the points' volume sum to the disk
//! points' force to round-off. The width is the smoothing of actuator-disk methods (Sørensen &
//! Shen, J. Fluids Eng. 124, 2002), one to two cells: a disk thinner than a cell is not
//! resolved.
//!
//! The disk's points do not move, so the spreading is a fixed sparse matrix ([`Spreading`]),
//! built once and stored by rows (grid points): a row's source is a sum over the disk points
//! that reach it, in their order. The CPU sums each row in that order; `kernels/rotor_source.cu`
//! `spread_sources` sums a row with a warp (lane `l` entries `l, l + 32, ...`, then a fixed
//! tree), so the two differ by round-off.

use rayon::prelude::*;

/// Points `origin + i * spacing`, `i` in `[0, n)` per axis, x fastest: where one velocity
/// component lives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Points {
    pub origin: [f64; 3],
    pub spacing: [f64; 3],
    pub n: [usize; 3],
}

impl Points {
    /// Grid points in the box `[lo, hi]` of the index range that lies within `reach` of `x`
    /// along every axis, clipped to the lattice; `None` when the box is empty.
    fn index_box(&self, x: [f64; 3], reach: f64) -> Option<[(usize, usize); 3]> {
        let mut range = [(0, 0); 3];
        for a in 0..3 {
            let lo = ((x[a] - reach - self.origin[a]) / self.spacing[a])
                .ceil()
                .max(0.0);
            let hi = ((x[a] + reach - self.origin[a]) / self.spacing[a])
                .floor()
                .min(self.n[a] as f64 - 1.0);
            if hi < lo {
                return None;
            }
            range[a] = (lo as usize, hi as usize);
        }
        Some(range)
    }
}

/// The upper bound of the grid points one disk point reaches with `width` on spacings
/// `spacing`: the index box of the sphere of radius `3 width`.
pub fn reach_bound(spacing: [f64; 3], width: f64) -> u64 {
    spacing
        .iter()
        .map(|h| (2.0 * 3.0 * width / h).floor() as u64 + 1)
        .product()
}

/// The spreading of forces at fixed disk points onto one component's grid points (module docs),
/// scaled by `scale` (for example `1 / rho`, giving accelerations): rows `rows[k]` (indices into
/// the component's array, ascending) with entries `start[k]..start[k + 1]` of `(point, weight)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Spreading {
    pub rows: Vec<u32>,
    pub start: Vec<u32>,
    pub point: Vec<u32>,
    pub weight: Vec<f64>,
}

impl Spreading {
    /// The spreading of disk points at `positions` onto `points` with `width`, each grid point
    /// `i` of `points` stored as row `index(i)` (its place in the component's array). Fails,
    /// naming the disk point, when no grid point lies within `3 width` of one (its force would
    /// be lost), or when the indices pass `u32`.
    pub fn new(
        positions: &[[f64; 3]],
        points: &Points,
        width: f64,
        scale: f64,
        index: impl Fn([usize; 3]) -> usize,
    ) -> Result<Spreading, String> {
        let Points { origin, spacing, .. } = *points;
        let volume = spacing[0] * spacing[1] * spacing[2];
        let reach = 3.0 * width;
        let narrow = |x: usize, what: &str| {
            u32::try_from(x).map_err(|_| format!("the rotor's {what} ({x}) pass 32-bit indices"))
        };
        // (row, point, weight) in the disk points' order.
        let mut entries: Vec<(u32, u32, f64)> = Vec::new();
        for (s, x) in positions.iter().enumerate() {
            let first = entries.len();
            let mut total = 0.0;
            if let Some(range) = points.index_box(*x, reach) {
                for k in range[2].0..=range[2].1 {
                    for j in range[1].0..=range[1].1 {
                        for i in range[0].0..=range[0].1 {
                            let p = [i, j, k];
                            let d2: f64 = (0..3)
                                .map(|a| {
                                    let d = origin[a] + p[a] as f64 * spacing[a] - x[a];
                                    d * d
                                })
                                .sum();
                            if d2 <= reach * reach {
                                let w = (-d2 / (width * width)).exp();
                                total += w;
                                entries.push((
                                    narrow(index(p), "grid indices")?,
                                    narrow(s, "disk points")?,
                                    w,
                                ));
                            }
                        }
                    }
                }
            }
            if total <= 0.0 {
                return Err(format!(
                    "the rotor's disk point at ({:.4}, {:.4}, {:.4}) has no grid point within {reach:.4}: the disk must lie inside the domain",
                    x[0], x[1], x[2]
                ));
            }
            let norm = scale / (total * volume);
            for e in &mut entries[first..] {
                e.2 *= norm;
            }
        }
        // By row; the stable sort keeps each row's disk points in order.
        entries.sort_by_key(|e| e.0);
        let mut out = Spreading {
            rows: Vec::new(),
            start: Vec::new(),
            point: Vec::with_capacity(entries.len()),
            weight: Vec::with_capacity(entries.len()),
        };
        for (k, &(row, point, weight)) in entries.iter().enumerate() {
            if out.rows.last() != Some(&row) {
                out.rows.push(row);
                out.start.push(narrow(k, "source entries")?);
            }
            out.point.push(point);
            out.weight.push(weight);
        }
        out.start.push(narrow(entries.len(), "source entries")?);
        Ok(out)
    }

    /// The rows that `map` sends to `Some` index, renumbered to it (in the same order; `map` must
    /// keep the rows ascending), each with its entries: the rows of a part of the grid
    /// ([`crate::parallel`]) from the whole grid's spreading, so that each row's sum is the
    /// whole grid's bit for bit.
    pub fn restricted(&self, map: impl Fn(usize) -> Option<usize>) -> Spreading {
        let mut out = Spreading {
            rows: Vec::new(),
            start: Vec::new(),
            point: Vec::new(),
            weight: Vec::new(),
        };
        for (k, &row) in self.rows.iter().enumerate() {
            let Some(local) = map(row as usize) else {
                continue;
            };
            let (a, b) = (self.start[k] as usize, self.start[k + 1] as usize);
            out.rows.push(local as u32);
            out.start.push(out.point.len() as u32);
            out.point.extend_from_slice(&self.point[a..b]);
            out.weight.extend_from_slice(&self.weight[a..b]);
        }
        out.start.push(out.point.len() as u32);
        out
    }

    /// `out[rows[k]] = sum of weight * force(point)` over row `k`'s entries, for every row (the
    /// other values of `out` are left alone). The rows are summed in parallel, each in its
    /// entries' order.
    pub fn apply(&self, force: impl Fn(usize) -> f64 + Sync, mut store: impl FnMut(usize, f64)) {
        let sums: Vec<f64> = (0..self.rows.len())
            .into_par_iter()
            .map(|k| {
                let (a, b) = (self.start[k] as usize, self.start[k + 1] as usize);
                (a..b).fold(0.0, |acc, e| acc + self.weight[e] * force(self.point[e] as usize))
            })
            .collect();
        for (&row, sum) in self.rows.iter().zip(sums) {
            store(row as usize, sum);
        }
    }
}
