//! The held pressure of an opening side (`type = "opening"`): a far field the fluid crosses
//! both ways. Where it leaves, `p = 0`; where it enters from still surroundings, its total
//! pressure `p + |u|^2 / 2` is 0 (kinematic, `p / rho`), so the face holds `p_b = -u_n^2 / 2`
//! (ANSYS CFX's opening with a total pressure of 0). The projection takes `p_b` from the face's
//! normal velocity at the start of the step: with the ghost `2 p_b - p_P` half a cell outside,
//! the Poisson right-hand side of the cell by the face gains `-2 p_b / h^2` and the face's
//! correction reads `dp/dn = 2 (p_P - p_b) / h` (lower side).

use crate::case::Boundary;
use crate::solver::real::Real;

/// Bit `2 a + s` set for each opening side (axis `a`, lower `s = 0` or upper `s = 1`): the
/// `open` mask of the projection's `poisson_rhs` and `correct` kernels.
pub(crate) fn opening_sides(bc: &[[Boundary; 2]]) -> u32 {
    let mut mask = 0;
    for (side, b) in bc.iter().flatten().enumerate() {
        if matches!(b, Boundary::Opening {}) {
            mask |= 1 << side;
        }
    }
    mask
}

/// The kinematic pressure an opening face holds, from its normal velocity `un` (positive
/// along the axis) on side `s` (0 lower, 1 upper): `-un^2 / 2` where the fluid enters, 0 where
/// it leaves.
#[inline(always)]
pub(crate) fn opening_pressure<T: Real>(un: T, s: usize) -> T {
    let enters = if s == 0 { un > T::zero() } else { un < T::zero() };
    if enters { -T::of(0.5) * un * un } else { T::zero() }
}
