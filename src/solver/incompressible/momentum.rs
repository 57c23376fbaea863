//! The explicit right-hand side of one momentum component at a staggered node,
//! `H = nu lap(q) - div(a q)` in flux form over the node's control volume:
//! `div(a q) = (a_e q_e - a_w q_w)/dx + (a_n q_n - a_s q_s)/dy` with the face values `q_f` of
//! [`face_value`] and the advecting velocities `a_f` averaged to the faces, and the five-point
//! Laplacian for the viscous term. The `u` and `v` equations share it; they differ only in which
//! velocities advect (see `Projection::predict`).

use super::convection::face_value;
use crate::case::Convection;
use crate::solver::limiter::Limiter;
use crate::solver::real::Real;

/// Scheme and grid constants of the momentum right-hand side.
#[derive(Clone, Copy, Debug)]
pub struct Momentum<T> {
    pub scheme: Convection,
    pub limiter: Limiter,
    pub nu: T,
    pub dx: T,
    pub dy: T,
    /// `1/dx^2`, `1/dy^2`.
    pub idx2: T,
    pub idy2: T,
}

impl<T: Real> Momentum<T> {
    /// `H` at a node with values `[c, e, w, n, s]` (centre and its four neighbours), the far
    /// values `far(di, dj)` two nodes away (`None` outside the stored range) and the advecting
    /// velocities `[a_e, a_w, a_n, a_s]` on the control volume's faces.
    #[inline(always)]
    pub fn rhs(&self, near: [T; 5], far: impl Fn(isize, isize) -> Option<T>, a: [T; 4]) -> T {
        let [c, e, w, n, s] = near;
        let [a_e, a_w, a_n, a_s] = a;
        let (sc, lim) = (self.scheme, self.limiter);
        let q_e = face_value(sc, lim, a_e, far(-1, 0), c, e, far(2, 0));
        let q_w = face_value(sc, lim, a_w, far(-2, 0), w, c, far(1, 0));
        let q_n = face_value(sc, lim, a_n, far(0, -1), c, n, far(0, 2));
        let q_s = face_value(sc, lim, a_s, far(0, -2), s, c, far(0, 1));
        let conv = (a_e * q_e - a_w * q_w) / self.dx + (a_n * q_n - a_s * q_s) / self.dy;
        let diff = self.nu * ((e - c - c + w) * self.idx2 + (n - c - c + s) * self.idy2);
        diff - conv
    }
}
