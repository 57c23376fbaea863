//! Sums over the rows of a field, the same on one part or many.

use super::SlabLink;
use crate::solver::real::Real;
use rayon::prelude::*;
use std::ops::Range;

/// The per-row partial sums of one array layout (rows of `row_len` values along x, x fastest)
/// and, on a part of a decomposed grid, its link to the other parts. A sum evaluates the rows
/// this part contributes ([`SlabLink::contributed`]) in parallel, gathers every part's row sums
/// in global row order and adds them in that order: thread-count independent, and on several
/// parts the same additions as on one.
pub struct RowSums<T> {
    partial: Vec<T>,
    /// Rows of this part's array that it contributes.
    owned: Range<usize>,
    part: Option<Part<T>>,
}

struct Part<T> {
    link: SlabLink,
    /// Values per layer along the cut axis, and ghost layers each side.
    layer_len: usize,
    ghosts: usize,
    /// Every part's row sums, in global row order.
    all: Vec<T>,
    /// Bytes of row sums each part contributes.
    counts: Vec<usize>,
    /// Rows of the whole grid's array.
    rows: usize,
}

impl<T: Real> RowSums<T> {
    /// Sums over all `rows` rows of an undivided grid.
    pub fn whole(rows: usize) -> Self {
        Self {
            partial: vec![T::zero(); rows],
            owned: 0..rows,
            part: None,
        }
    }

    /// Sums over a part's array of `rows` rows of `row_len` values, `rows_per_layer` rows a
    /// layer along the cut axis and `ghosts` ghost layers each side; `whole_rows` rows make the
    /// whole grid's array.
    pub fn part(
        link: &SlabLink,
        rows: usize,
        rows_per_layer: usize,
        row_len: usize,
        ghosts: usize,
        whole_rows: usize,
    ) -> Self {
        let here = link.contributed_here(ghosts);
        let counts = (0..link.slabs.parts())
            .map(|r| link.contributed(r, ghosts).len() * rows_per_layer * std::mem::size_of::<T>())
            .collect();
        Self {
            partial: vec![T::zero(); rows],
            owned: here.start * rows_per_layer..here.end * rows_per_layer,
            part: Some(Part {
                link: link.clone(),
                layer_len: rows_per_layer * row_len,
                ghosts,
                all: vec![T::zero(); whole_rows],
                counts,
                rows: whole_rows,
            }),
        }
    }

    /// The link to the other parts (`None` on an undivided grid).
    pub fn link(&self) -> Option<&SlabLink> {
        self.part.as_ref().map(|p| &p.link)
    }

    /// Rows of the whole grid's array.
    pub fn whole_rows(&self) -> usize {
        self.part.as_ref().map_or(self.partial.len(), |p| p.rows)
    }

    /// `sum_j row(j)` over the rows `j` of this part's array that it contributes, added in
    /// global row order.
    pub fn sum(&mut self, row: impl Fn(usize) -> T + Sync + Send) -> T {
        self.evaluate(row);
        let owned = &self.partial[self.owned.clone()];
        let all = match &mut self.part {
            None => &self.partial[..],
            Some(p) => {
                p.link.comm.all_gather(
                    bytemuck::cast_slice(owned),
                    &p.counts,
                    bytemuck::cast_slice_mut(&mut p.all),
                );
                &p.all[..]
            }
        };
        all.iter().fold(T::zero(), |acc, &x| acc + x)
    }

    /// `row(j)` over the rows `j` of this part's array that it contributes, in parallel, for
    /// what the calls write: their values are neither added nor sent to the other parts (a pass
    /// whose sum is not wanted).
    pub fn evaluate(&mut self, row: impl Fn(usize) -> T + Sync + Send) {
        let start = self.owned.start;
        self.partial[self.owned.clone()]
            .par_iter_mut()
            .enumerate()
            .for_each(|(j, s)| *s = row(start + j));
    }

    /// `a . b` for vectors of rows of `row_len` values.
    pub fn dot(&mut self, a: &[T], b: &[T], row_len: usize) -> T {
        self.sum(|j| {
            let (ra, rb) = (
                &a[j * row_len..(j + 1) * row_len],
                &b[j * row_len..(j + 1) * row_len],
            );
            ra.iter().zip(rb).fold(T::zero(), |s, (&x, &y)| s + x * y)
        })
    }

    /// Refreshes the layers of `x` this part stores but does not own from their owners (no-op
    /// on an undivided grid; [`SlabLink::exchange`]).
    pub fn exchange(&self, x: &mut [T]) {
        if let Some(p) = &self.part {
            p.link.exchange(x, p.layer_len, p.ghosts);
        }
    }

    /// The largest `x` over all parts.
    pub fn max(&self, x: f64) -> f64 {
        match &self.part {
            None => x,
            Some(p) => p.link.comm.all_max(if x.is_nan() { f64::INFINITY } else { x }),
        }
    }
}
