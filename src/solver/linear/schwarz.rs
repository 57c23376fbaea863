//! Overlapping Schwarz domain decomposition of a [`FivePoint`] system (Schwarz 1870; the
//! multiplicative, coloured variant of Smith, Bjørstad & Gropp 1996, ch. 1-2; the SIMPLE
//! subdomains of Lohry 2010, ch. 3).
//!
//! The `nj` rows (index `j` of `j * ni + i`) are cut into `n` strips along y, strip `s` owning
//! rows `s nj / n .. (s + 1) nj / n` (contiguous memory). Each strip's local system is its own
//! rows extended by `overlap` rows on each side (clipped at the block's ends); the links that
//! leave the extended block (`a_S` of its first row, `a_N` of its last) are moved into the
//! local `b` with the current values of those rows. One [`Schwarz::solve`] is one multiplicative
//! pass: the even strips solve their local systems at the same time (rayon) from the current
//! `x`, their own rows are written back, then the odd strips solve with the even strips' new
//! values. Each local solve is the chosen inner [`LinearSolver`] from the current values, to the
//! same tolerance and iteration cap. Strips of one colour neither read nor write each other's
//! rows when every strip has at least `overlap + 1` rows (the odd strip between two even ones is
//! wider than the overlap), so the result does not depend on the number of threads. A periodic
//! y axis is not decomposed (the wrap-around link would join the first and last strips).
//!
//! With `n = 1` the pass is the inner solver on the whole system, unchanged.

use super::{FivePoint, LinearSolver, LinearStats};
use crate::case::LinearSolverKind;
use crate::solver::real::Real;
use rayon::prelude::*;
use std::ops::Range;

/// The subdomains of one system size, each with its local system and inner solver.
pub struct Schwarz<T> {
    whole: Option<LinearSolver<T>>,
    strips: Vec<Strip<T>>,
    partial: Vec<T>,
}

struct Strip<T> {
    /// Owned rows, and the rows of the local system (owned plus the overlap).
    own: Range<usize>,
    ext: Range<usize>,
    sys: FivePoint<T>,
    x: Vec<T>,
    solver: LinearSolver<T>,
    iterations: usize,
}

/// Rows owned by strip `s` of `n` over `nj` rows, and its extended rows with `overlap`.
pub fn strip_rows(s: usize, n: usize, nj: usize, overlap: usize) -> (Range<usize>, Range<usize>) {
    let own = s * nj / n..(s + 1) * nj / n;
    let ext = own.start.saturating_sub(overlap)..(own.end + overlap).min(nj);
    (own, ext)
}

impl<T: Real> Schwarz<T> {
    /// `n` strips of an `ni x nj` system with `overlap` rows; `n = 1` is the plain inner solver.
    /// Panics unless every strip has at least `overlap + 1` rows when `n > 1` (the case
    /// validation says so first).
    pub fn new(
        kind: LinearSolverKind,
        ni: usize,
        nj: usize,
        n: usize,
        overlap: usize,
        periodic: [bool; 2],
    ) -> Self {
        assert!(n >= 1, "at least one subdomain");
        if n == 1 {
            return Self {
                whole: Some(LinearSolver::new(kind, ni, nj)),
                strips: Vec::new(),
                partial: Vec::new(),
            };
        }
        assert!(
            nj / n > overlap && !periodic[1],
            "{n} strips of {nj} rows with overlap {overlap} (periodic y: {})",
            periodic[1]
        );
        let strips = (0..n)
            .map(|s| {
                let (own, ext) = strip_rows(s, n, nj, overlap);
                let rows = ext.len();
                Strip {
                    own,
                    ext,
                    sys: FivePoint::new(ni, rows, [periodic[0], false]),
                    x: vec![T::zero(); ni * rows],
                    solver: LinearSolver::new(kind, ni, rows),
                    iterations: 0,
                }
            })
            .collect();
        Self {
            whole: None,
            strips,
            partial: vec![T::zero(); nj],
        }
    }

    /// One multiplicative Schwarz pass on `x` (or the inner solve when undecomposed). The
    /// statistics are the whole system's residual norms before and after the pass, and the
    /// inner iterations summed over the strips.
    pub fn solve(&mut self, sys: &FivePoint<T>, x: &mut [T], tol: f64, max: usize) -> LinearStats {
        if let Some(whole) = &mut self.whole {
            return whole.solve(sys, x, tol, max);
        }
        let r0 = sys.residual_norm(x, &mut self.partial);
        if r0 == T::zero() {
            return LinearStats {
                iterations: 0,
                initial_residual: 0.0,
                final_residual: 0.0,
                converged: true,
            };
        }
        let ni = sys.ni;
        for colour in 0..2 {
            let xr: &[T] = x;
            self.strips
                .par_iter_mut()
                .enumerate()
                .filter(|(s, _)| s % 2 == colour)
                .for_each(|(_, strip)| strip.solve(sys, xr, tol, max));
            for strip in self.strips.iter().skip(colour).step_by(2) {
                let from = (strip.own.start - strip.ext.start) * ni;
                x[strip.own.start * ni..strip.own.end * ni]
                    .copy_from_slice(&strip.x[from..from + strip.own.len() * ni]);
            }
        }
        let r = sys.residual_norm(x, &mut self.partial);
        LinearStats {
            iterations: self.strips.iter().map(|s| s.iterations).sum(),
            initial_residual: r0.f64(),
            final_residual: r.f64(),
            converged: r <= T::of(tol) * r0,
        }
    }
}

impl<T: Real> Strip<T> {
    /// Copies the extended rows of `sys` and `x`, moves the links leaving them into `b`, and
    /// solves the local system from the current values.
    fn solve(&mut self, sys: &FivePoint<T>, x: &[T], tol: f64, max: usize) {
        let ni = sys.ni;
        let range = self.ext.start * ni..self.ext.end * ni;
        let l = &mut self.sys;
        l.ap.copy_from_slice(&sys.ap[range.clone()]);
        l.ae.copy_from_slice(&sys.ae[range.clone()]);
        l.aw.copy_from_slice(&sys.aw[range.clone()]);
        l.an.copy_from_slice(&sys.an[range.clone()]);
        l.as_.copy_from_slice(&sys.as_[range.clone()]);
        l.b.copy_from_slice(&sys.b[range.clone()]);
        self.x.copy_from_slice(&x[range]);
        if self.ext.start > 0 {
            let below = (self.ext.start - 1) * ni;
            for i in 0..ni {
                l.b[i] = l.b[i] + l.as_[i] * x[below + i];
            }
        }
        if self.ext.end < sys.nj {
            let (above, last) = (self.ext.end * ni, (l.nj - 1) * ni);
            for i in 0..ni {
                l.b[last + i] = l.b[last + i] + l.an[last + i] * x[above + i];
            }
        }
        self.iterations = self.solver.solve(l, &mut self.x, tol, max).iterations;
    }
}
