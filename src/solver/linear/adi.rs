//! Line-by-line alternating-direction sweeps (Patankar 1980, sec. 5.9-2; Lohry 2010, ch. 3):
//! one iteration solves every x-line (row) as a tridiagonal system in its own unknowns, with the
//! neighbouring lines' current values on the right-hand side, then every y-line (column) alike,
//! and in 3D every z-line (Lohry's alternation of k, j and i lines). Lines are coloured (even,
//! odd, and for an odd periodic count the last line alone, along each axis across them), so
//! lines solved at the same time never neighbour each other: a zebra Gauss-Seidel in lines whose
//! result does not depend on the number of threads. Each line is solved by [`thomas`]; the
//! wrap-around links of a periodic line are taken from the current values (lagged).

use super::{Stencil, thomas};
use crate::backend::cpu::DisjointWriter;
use crate::solver::real::Real;
use rayon::prelude::*;

/// ADI iterations (x-lines, then y-lines, then z-lines) until `||r|| <= target` or `max`;
/// returns (iterations, `||r||`).
pub fn solve<T: Real, const D: usize>(
    sys: &Stencil<T, D>,
    x: &mut [T],
    partial: &mut [T],
    target: T,
    max: usize,
) -> (usize, T) {
    let mut r = sys.residual_norm(x, partial);
    for it in 1..=max {
        for axis in 0..D {
            sweep(sys, x, axis);
        }
        r = sys.residual_norm(x, partial);
        if r <= target || !r.is_finite() {
            return (it, r);
        }
    }
    (max, r)
}

/// Colour of line `l` of `n` along one axis across the lines: 0 even, 1 odd, 2 the last line of
/// an odd periodic count (which neighbours line 0).
fn colour(l: usize, n: usize, periodic: bool) -> usize {
    if periodic && n % 2 == 1 && l == n - 1 {
        2
    } else {
        l % 2
    }
}

/// Solves every line along `axis`, colour by colour. A line's colour combines its colours along
/// each axis across it (`colour`, digits base 3), so two lines of one colour never neighbour.
pub fn sweep<T: Real, const D: usize>(sys: &Stencil<T, D>, x: &mut [T], axis: usize) {
    let len = sys.n[axis];
    let along = sys.stride(axis);
    let lines = sys.len() / len;
    // The axes across the lines (axis, size, index step, periodic); D - 1 of them, no allocation.
    let mut across_axes = [(0, 0, 0, false); 2];
    for (m, b) in (0..D).filter(|&b| b != axis).enumerate() {
        across_axes[m] = (b, sys.n[b], sys.stride(b), sys.periodic[b]);
    }
    let across = &across_axes[..D - 1];
    let periodic_line = sys.periodic[axis];
    // First unknown of line `l` and its position along the axes across (`across` order).
    let line = |mut l: usize| {
        let mut first = 0;
        let mut pos = [0usize; 2];
        for (m, &(_, n, st, _)) in across.iter().enumerate() {
            pos[m] = l % n;
            first += pos[m] * st;
            l /= n;
        }
        (first, pos)
    };
    let line_colour = |l: usize| {
        let (_, pos) = line(l);
        across
            .iter()
            .enumerate()
            .rev()
            .fold(0, |c, (m, &(_, n, _, p))| 3 * c + colour(pos[m], n, p))
    };
    let colours = 3usize.pow(across.len() as u32);
    let xw = DisjointWriter::new(x);
    for c in 0..colours {
        (0..lines)
            .into_par_iter()
            .filter(|&l| line_colour(l) == c)
            .for_each_init(
                || vec![T::zero(); 6 * len],
                |scratch, l| {
                    let (a, rest) = scratch.split_at_mut(len);
                    let (b, rest) = rest.split_at_mut(len);
                    let (up, rest) = rest.split_at_mut(len);
                    let (d, rest) = rest.split_at_mut(len);
                    let (sol, cp) = rest.split_at_mut(len);
                    let (first, pos) = line(l);
                    // SAFETY: lines of one colour never neighbour each other, so the values read
                    // from other lines are not written during this colour, and this line's values
                    // are written by this closure call only.
                    let get = |k: usize| unsafe { xw.get(k) };
                    for m in 0..len {
                        let k = first + m * along;
                        // Links across the line (each axis across: the next line, the previous).
                        let mut rhs = sys.b[k];
                        for (q, &(other, n, st, periodic)) in across.iter().enumerate() {
                            let [prev, next] = &sys.a[other];
                            let p = pos[q];
                            if p + 1 < n {
                                rhs = rhs + next[k] * get(k + st);
                            } else if periodic {
                                rhs = rhs + next[k] * get(k - p * st);
                            }
                            if p > 0 {
                                rhs = rhs + prev[k] * get(k - st);
                            } else if periodic {
                                rhs = rhs + prev[k] * get(k + (n - 1) * st);
                            }
                        }
                        // Links along the line (lower, upper).
                        let (lo, hi) = (sys.a[axis][0][k], sys.a[axis][1][k]);
                        if periodic_line && m == 0 {
                            rhs = rhs + lo * get(k + (len - 1) * along);
                        }
                        if periodic_line && m + 1 == len {
                            rhs = rhs + hi * get(first);
                        }
                        a[m] = -lo;
                        b[m] = sys.ap[k];
                        up[m] = -hi;
                        d[m] = rhs;
                    }
                    thomas(a, b, up, d, sol, cp);
                    for (m, &v) in sol.iter().enumerate() {
                        // SAFETY: this line's own values (see above).
                        unsafe { xw.set(first + m * along, v) };
                    }
                },
            );
    }
}
