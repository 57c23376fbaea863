//! Boundary conditions through ghost cells (Toro 2009, sec. 14.2). Ghost layer `k = 1..=g`
//! outside a side takes its value from an interior cell:
//! reflective: the mirror cell `k - 1` inside with the normal momentum reversed;
//! transmissive: the boundary cell (zero gradient); periodic: the cell `n - k` from the
//! opposite side; inflow: the prescribed state.
//!
//! Solution gradients stored with the values (the CE/SE scheme) follow the same mapping:
//! mirrored gradients change sign along the wall normal except for the normal momentum
//! (an odd function's derivative is even), and vanish at transmissive and inflow sides.
//! Along `y` the ghost rows are filled for interior columns first, then the `x` ghosts for all
//! rows, which fills the corners.

use super::config::Bc;
use super::layout::Layout;
use super::state::{Q, conserved, mirror};
use crate::solver::real::Real;

/// Fills the ghost cells of `u` (conserved) and, when given, of its `x` and `y` gradients.
pub fn fill<T: Real>(
    l: &Layout,
    bc: &[Bc; 4],
    gamma: T,
    u: &mut [Q<T>],
    mut grads: Option<[&mut [Q<T>]; 2]>,
) {
    for d in (0..l.dim).rev() {
        let (n, g) = (l.n[d] as isize, l.g[d] as isize);
        let span = if d == 1 {
            0..l.n[0] as isize
        } else {
            -(l.g[1] as isize)..l.n[1] as isize + l.g[1] as isize
        };
        for t in span {
            let at = |c: isize| if d == 0 { l.at(c, t) } else { l.at(t, c) };
            for k in 1..=g {
                for (side, ghost) in [(2 * d, -k), (2 * d + 1, n - 1 + k)] {
                    let lo = side % 2 == 0;
                    let src = match bc[side] {
                        Bc::Reflective => {
                            if lo {
                                k - 1
                            } else {
                                n - k
                            }
                        }
                        Bc::Transmissive | Bc::Inflow(_) => {
                            if lo {
                                0
                            } else {
                                n - 1
                            }
                        }
                        Bc::Periodic => {
                            if lo {
                                n - k
                            } else {
                                k - 1
                            }
                        }
                    };
                    let (dst, src) = (at(ghost), at(src));
                    u[dst] = match bc[side] {
                        Bc::Reflective => mirror(d, u[src]),
                        Bc::Inflow(w) => conserved(gamma, w.map(T::of)),
                        _ => u[src],
                    };
                    if let Some(gr) = grads.as_mut() {
                        for (e, a) in gr.iter_mut().enumerate() {
                            a[dst] = match bc[side] {
                                Bc::Periodic => a[src],
                                Bc::Reflective if e == d => mirror(d, a[src]).map(|x| -x),
                                Bc::Reflective => mirror(d, a[src]),
                                _ => [T::zero(); 4],
                            };
                        }
                    }
                }
            }
        }
    }
}
