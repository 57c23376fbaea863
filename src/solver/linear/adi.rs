//! Line-by-line alternating-direction sweeps (Patankar 1980, sec. 5.9-2; Lohry 2010, ch. 3):
//! one iteration solves every x-line (row) as a tridiagonal system in its own unknowns, with the
//! neighbouring rows' current values on the right-hand side, then every y-line (column) alike.
//! Lines are coloured (even, odd, and for an odd periodic count the last line alone), so lines
//! solved at the same time never neighbour each other: a zebra Gauss-Seidel in lines whose
//! result does not depend on the number of threads. Each line is solved by [`thomas`]; the
//! wrap-around links of a periodic line are taken from the current values (lagged).

use super::{FivePoint, thomas};
use crate::backend::cpu::DisjointWriter;
use crate::solver::real::Real;
use rayon::prelude::*;

/// ADI iterations (x-lines, then y-lines) until `||r|| <= target` or `max`; returns
/// (iterations, `||r||`).
pub fn solve<T: Real>(
    sys: &FivePoint<T>,
    x: &mut [T],
    partial: &mut [T],
    target: T,
    max: usize,
) -> (usize, T) {
    let mut r = sys.residual_norm(x, partial);
    for it in 1..=max {
        sweep(sys, x, true);
        sweep(sys, x, false);
        r = sys.residual_norm(x, partial);
        if r <= target || !r.is_finite() {
            return (it, r);
        }
    }
    (max, r)
}

/// Colour of line `l` of `n`: 0 even, 1 odd, 2 the last line of an odd periodic count (which
/// neighbours line 0).
fn colour(l: usize, n: usize, periodic: bool) -> usize {
    if periodic && n % 2 == 1 && l == n - 1 {
        2
    } else {
        l % 2
    }
}

/// Solves every line along x (`along_x`) or along y, colour by colour.
pub fn sweep<T: Real>(sys: &FivePoint<T>, x: &mut [T], along_x: bool) {
    let (ni, nj) = (sys.ni, sys.nj);
    // Line length, number of lines, and the index steps along and across a line.
    let (len, lines, along, across) = if along_x { (ni, nj, 1, ni) } else { (nj, ni, ni, 1) };
    let (periodic_line, periodic_across) = if along_x {
        (sys.periodic[0], sys.periodic[1])
    } else {
        (sys.periodic[1], sys.periodic[0])
    };
    let xw = DisjointWriter::new(x);
    for c in 0..3 {
        (0..lines)
            .into_par_iter()
            .filter(|&l| colour(l, lines, periodic_across) == c)
            .for_each_init(
                || vec![T::zero(); 6 * len],
                |scratch, l| {
                    let (a, rest) = scratch.split_at_mut(len);
                    let (b, rest) = rest.split_at_mut(len);
                    let (up, rest) = rest.split_at_mut(len);
                    let (d, rest) = rest.split_at_mut(len);
                    let (sol, cp) = rest.split_at_mut(len);
                    let first = l * across;
                    // SAFETY: lines of one colour never neighbour each other, so the values read
                    // from other lines are not written during this colour, and this line's values
                    // are written by this closure call only.
                    let get = |k: usize| unsafe { xw.get(k) };
                    for m in 0..len {
                        let k = first + m * along;
                        // Links along the line (lower, upper) and across it (next, previous line).
                        let (lo, hi, next, prev) = if along_x {
                            (sys.aw[k], sys.ae[k], sys.an[k], sys.as_[k])
                        } else {
                            (sys.as_[k], sys.an[k], sys.ae[k], sys.aw[k])
                        };
                        let mut rhs = sys.b[k];
                        if l + 1 < lines {
                            rhs = rhs + next * get(k + across);
                        } else if periodic_across {
                            rhs = rhs + next * get(k - l * across);
                        }
                        if l > 0 {
                            rhs = rhs + prev * get(k - across);
                        } else if periodic_across {
                            rhs = rhs + prev * get(k + (lines - 1) * across);
                        }
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
