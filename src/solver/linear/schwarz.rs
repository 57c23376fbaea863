//! Overlapping Schwarz domain decomposition of a [`Stencil`] system (Schwarz 1870; the
//! multiplicative, coloured variant of Smith, Bjørstad & Gropp 1996, ch. 1-2; the SIMPLE
//! subdomains of Lohry 2010, ch. 3).
//!
//! The `nj` layers along the last axis (rows along y in 2D, x-y planes along z in 3D; contiguous
//! memory) are cut into `n` strips (slabs in 3D), strip `s` owning layers `s nj / n .. (s + 1) nj
//! / n`. Each strip's local system is its own layers extended by `overlap` layers on each side
//! (clipped at the block's ends); the links that leave the extended block (the lower link of its
//! first layer, the upper link of its last) are moved into the local `b` with the current values
//! of those layers. One [`Schwarz::solve`] is one multiplicative
//! pass: the even strips solve their local systems at the same time (rayon) from the current
//! `x`, their own rows are written back, then the odd strips solve with the even strips' new
//! values. Each local solve is the chosen inner [`LinearSolver`] from the current values, to the
//! same tolerance and iteration cap. Strips of one colour neither read nor write each other's
//! rows when every strip has at least `overlap + 1` rows (the odd strip between two even ones is
//! wider than the overlap), so the result does not depend on the number of threads. A periodic
//! last axis is not decomposed (the wrap-around link would join the first and last strips).
//!
//! With `n = 1` the pass is the inner solver on the whole system, unchanged.
//!
//! Over several processes ([`Schwarz::part`]) process `r` is strip `r`: it stores the system's
//! rows of its extended strip and one more each side ([`Layers`]), solves its strip in its
//! colour, and after each colour every process sends its own rows to the neighbours that store
//! them. The residual norms are the owned rows' partial sums gathered and added in global row
//! order and the iterations are summed in strip order, so the pass is the one-process pass with
//! `n` strips bit for bit.

use super::{LinearSolver, LinearStats, Stencil};
use crate::case::LinearSolverKind;
use crate::parallel::{Communicator, Layers, sum_over_parts};
use crate::solver::real::Real;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;

/// The subdomains of one system size, each with its local system and inner solver.
pub struct Schwarz<T, const D: usize> {
    whole: Option<LinearSolver<T, D>>,
    strips: Vec<Strip<T, D>>,
    partial: Vec<T>,
    /// Over several processes: the one strip this process solves, and its link to the others.
    shared: Option<Shared<T>>,
}

/// The processes sharing one system, each solving its own strip.
struct Shared<T> {
    comm: Arc<dyn Communicator>,
    /// The system's layers along the last axis: each process's strip owns its layers, and it
    /// stores its extended strip's and one more each side.
    layers: Layers,
    /// Buffers of the gathers: every process's row sums and their bytes, and one value a
    /// process and its bytes.
    rows: Vec<T>,
    row_bytes: Vec<usize>,
    each: Vec<f64>,
    each_bytes: Vec<usize>,
}

struct Strip<T, const D: usize> {
    /// Owned rows, and the rows of the local system (owned plus the overlap).
    own: Range<usize>,
    ext: Range<usize>,
    sys: Stencil<T, D>,
    x: Vec<T>,
    solver: LinearSolver<T, D>,
    iterations: usize,
}

/// Layers owned by strip `s` of `n` over `nj` layers, and its extended layers with `overlap`.
pub fn strip_rows(s: usize, n: usize, nj: usize, overlap: usize) -> (Range<usize>, Range<usize>) {
    let own = s * nj / n..(s + 1) * nj / n;
    let ext = own.start.saturating_sub(overlap)..(own.end + overlap).min(nj);
    (own, ext)
}

impl<T: Real, const D: usize> Schwarz<T, D> {
    /// `n` strips of a system of `shape` unknowns with `overlap` layers; `n = 1` is the plain
    /// inner solver. Panics unless every strip has at least `overlap + 1` layers when `n > 1`
    /// (the case validation says so first).
    pub fn new(
        kind: LinearSolverKind,
        shape: [usize; D],
        n: usize,
        overlap: usize,
        periodic: [bool; D],
    ) -> Self {
        assert!(n >= 1, "at least one subdomain");
        if n == 1 {
            return Self {
                whole: Some(LinearSolver::new(kind, shape)),
                strips: Vec::new(),
                partial: Vec::new(),
                shared: None,
            };
        }
        let last = D - 1;
        let nj = shape[last];
        assert!(
            nj / n > overlap && !periodic[last],
            "{n} strips of {nj} layers with overlap {overlap} (periodic last axis: {})",
            periodic[last]
        );
        let strips = (0..n)
            .map(|s| {
                let (own, ext) = strip_rows(s, n, nj, overlap);
                Strip::new(kind, shape, periodic, own, ext)
            })
            .collect();
        Self {
            whole: None,
            strips,
            partial: vec![T::zero(); shape.iter().product::<usize>() / shape[0]],
            shared: None,
        }
    }

    /// Strip `comm.rank()` of `comm.size()` strips with `overlap` layers, on a process that
    /// stores `layers.stored(rank)` of the system's global layers (`shape`: its part of the
    /// system). Panics unless the process owns its strip's layers and stores its extended
    /// strip's and one more each side (the caller lays the parts out so).
    pub fn part(
        kind: LinearSolverKind,
        shape: [usize; D],
        periodic: [bool; D],
        overlap: usize,
        comm: Arc<dyn Communicator>,
        layers: Layers,
    ) -> Self {
        let (r, n) = (comm.rank(), comm.size());
        let (own, ext) = strip_rows(r, n, layers.whole(), overlap);
        let stored = layers.stored(r);
        assert!(
            own == layers.owned(r)
                && stored.len() == shape[D - 1]
                && (ext.start == 0 || ext.start > stored.start)
                && (ext.end == layers.whole() || ext.end < stored.end),
            "strip {r}: owned {own:?}, extended {ext:?}, stored {stored:?}"
        );
        let local = |x: Range<usize>| x.start - stored.start..x.end - stored.start;
        Self {
            whole: None,
            strips: vec![Strip::new(kind, shape, periodic, local(own), local(ext))],
            partial: vec![T::zero(); shape.iter().product::<usize>() / shape[0]],
            shared: Some(Shared {
                each: vec![0.0; n],
                each_bytes: vec![std::mem::size_of::<f64>(); n],
                rows: Vec::new(),
                row_bytes: Vec::new(),
                comm,
                layers,
            }),
        }
    }

    /// `||b + sum a_nb x_nb - a_P x||_2` of the whole system: over several processes, the owned
    /// rows' partial sums of every process added in global row order.
    fn residual_norm(&mut self, sys: &Stencil<T, D>, x: &[T]) -> T {
        let local = sys.residual_norm(x, &mut self.partial);
        match &mut self.shared {
            None => local,
            Some(sh) => {
                let rows_per_layer = sys.rows() / sys.n[D - 1];
                let (all, bytes) = (&mut sh.rows, &mut sh.row_bytes);
                sh.layers
                    .sum(&*sh.comm, &self.partial, rows_per_layer, all, bytes)
                    .sqrt()
            }
        }
    }

    /// One multiplicative Schwarz pass on `x` (or the inner solve when undecomposed). The
    /// statistics are the whole system's residual norms before and after the pass, and the
    /// inner iterations summed over the strips.
    pub fn solve(&mut self, sys: &Stencil<T, D>, x: &mut [T], tol: f64, max: usize) -> LinearStats {
        if let Some(whole) = &mut self.whole {
            return whole.solve(sys, x, tol, max);
        }
        let r0 = self.residual_norm(sys, x);
        if r0 == T::zero() {
            return LinearStats {
                iterations: 0,
                initial_residual: 0.0,
                final_residual: 0.0,
                converged: true,
            };
        }
        let ni = sys.stride(D - 1);
        // A process's strip has the colour of its rank.
        let first = self.shared.as_ref().map_or(0, |sh| sh.comm.rank());
        for colour in 0..2 {
            let xr: &[T] = x;
            self.strips
                .par_iter_mut()
                .enumerate()
                .filter(|(s, _)| (first + s) % 2 == colour)
                .for_each(|(_, strip)| strip.solve(sys, xr, tol, max));
            for (_, strip) in self
                .strips
                .iter()
                .enumerate()
                .filter(|(s, _)| (first + s) % 2 == colour)
            {
                let from = (strip.own.start - strip.ext.start) * ni;
                x[strip.own.start * ni..strip.own.end * ni]
                    .copy_from_slice(&strip.x[from..from + strip.own.len() * ni]);
            }
            if let Some(sh) = &self.shared {
                sh.layers.exchange(&*sh.comm, x, ni);
            }
        }
        let r = self.residual_norm(sys, x);
        let iterations = self.strips.iter().map(|s| s.iterations).sum();
        LinearStats {
            iterations: match &mut self.shared {
                None => iterations,
                Some(sh) => {
                    sum_over_parts(&*sh.comm, iterations as f64, &mut sh.each, &sh.each_bytes) as usize
                }
            },
            initial_residual: r0.f64(),
            final_residual: r.f64(),
            converged: r <= T::of(tol) * r0,
        }
    }
}

impl<T: Real, const D: usize> Strip<T, D> {
    /// The strip owning layers `own` and solving `ext` of a system of `shape` unknowns (its
    /// last axis not periodic).
    fn new(
        kind: LinearSolverKind,
        shape: [usize; D],
        periodic: [bool; D],
        own: Range<usize>,
        ext: Range<usize>,
    ) -> Self {
        let last = D - 1;
        let mut local = shape;
        local[last] = ext.len();
        let mut local_periodic = periodic;
        local_periodic[last] = false;
        Strip {
            own,
            ext,
            sys: Stencil::new(local, local_periodic),
            x: vec![T::zero(); local.iter().product()],
            solver: LinearSolver::new(kind, local),
            iterations: 0,
        }
    }

    /// Copies the extended layers of `sys` and `x`, moves the links leaving them into `b`, and
    /// solves the local system from the current values.
    fn solve(&mut self, sys: &Stencil<T, D>, x: &[T], tol: f64, max: usize) {
        let last = D - 1;
        // Unknowns per layer.
        let ni = sys.stride(last);
        let range = self.ext.start * ni..self.ext.end * ni;
        let l = &mut self.sys;
        l.ap.copy_from_slice(&sys.ap[range.clone()]);
        for a in 0..D {
            for side in [1, 0] {
                l.a[a][side].copy_from_slice(&sys.a[a][side][range.clone()]);
            }
        }
        l.b.copy_from_slice(&sys.b[range.clone()]);
        self.x.copy_from_slice(&x[range]);
        if self.ext.start > 0 {
            let below = (self.ext.start - 1) * ni;
            for i in 0..ni {
                l.b[i] = l.b[i] + l.a[last][0][i] * x[below + i];
            }
        }
        if self.ext.end < sys.n[last] {
            let (above, top) = (self.ext.end * ni, (l.n[last] - 1) * ni);
            for i in 0..ni {
                l.b[top + i] = l.b[top + i] + l.a[last][1][top + i] * x[above + i];
            }
        }
        self.iterations = self.solver.solve(l, &mut self.x, tol, max).iterations;
    }
}
