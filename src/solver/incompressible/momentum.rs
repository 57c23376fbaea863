//! The explicit right-hand side of one momentum component at a staggered node,
//! `H = nu lap(q) - div(a q)` in flux form over the node's control volume:
//! `div(a q) = sum_a (a_+ q_+ - a_- q_-) / h_a` over the axes (multiplied by `1 / h_a`, as the GPU
//! predictor does: a multiplication issues far fewer instructions there than an IEEE division), with the face values `q_f` of
//! [`face_value`] and the advecting velocities `a_f` averaged to the faces, and the five-point
//! (2D) or seven-point (3D) Laplacian for the viscous term. Every component's equation shares
//! it; they differ only in which velocities advect (see `Projection::predict`).

use super::convection::face_value;
use crate::case::Convection;
use crate::solver::limiter::Limiter;
use crate::solver::real::Real;

/// Scheme and grid constants of the momentum right-hand side.
#[derive(Clone, Copy, Debug)]
pub struct Momentum<T, const D: usize> {
    pub scheme: Convection,
    pub limiter: Limiter,
    pub nu: T,
    /// `1/h_a`, the inverse cell size per axis.
    pub ih: [T; D],
    /// `1/h_a^2`.
    pub ih2: [T; D],
}

/// The values around one node: the centre `c`, its neighbours `plus[a]`, `minus[a]` one node up
/// and down axis `a`, and the advecting velocities on the control volume's faces,
/// `a_plus[a]`, `a_minus[a]`.
pub struct Node<T, const D: usize> {
    pub c: T,
    pub plus: [T; D],
    pub minus: [T; D],
    pub a_plus: [T; D],
    pub a_minus: [T; D],
}

impl<T: Real, const D: usize> Momentum<T, D> {
    /// `H` at a node, with the far values `far(a, m)` `m` nodes along axis `a` (`None` outside
    /// the stored range). Summed in axis order (in 2D:
    /// `(a_e q_e - a_w q_w) (1/dx) + (a_n q_n - a_s q_s) (1/dy)` and
    /// `nu ((e - 2c + w)/dx^2 + (n - 2c + s)/dy^2)`).
    #[inline(always)]
    pub fn rhs(&self, node: &Node<T, D>, far: impl Fn(usize, isize) -> Option<T>) -> T {
        let (sc, lim, c) = (self.scheme, self.limiter, node.c);
        let flux = |a: usize| {
            let (p, m) = (node.plus[a], node.minus[a]);
            let q_p = face_value(sc, lim, node.a_plus[a], far(a, -1), c, p, far(a, 2));
            let q_m = face_value(sc, lim, node.a_minus[a], far(a, -2), m, c, far(a, 1));
            (node.a_plus[a] * q_p - node.a_minus[a] * q_m) * self.ih[a]
        };
        let viscous = |a: usize| (node.plus[a] - c - c + node.minus[a]) * self.ih2[a];
        let (mut conv, mut lap) = (flux(0), viscous(0));
        for a in 1..D {
            conv = conv + flux(a);
            lap = lap + viscous(a);
        }
        self.nu * lap - conv
    }
}
