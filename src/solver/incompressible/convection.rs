//! Face values of a transported velocity component for the convective flux `a q_f`
//! (advecting velocity `a`, interpolated quantity `q_f`) on the staggered grid.
//!
//! Along a line of nodes `q_{-2}, q_{-1} | q_{+1}, q_{+2}` with the face between `q_{-1}` and
//! `q_{+1}`, the upwind node is `U = q_{-1}` when `a > 0` (else `q_{+1}`), `D` the other, and
//! `UU` the node upwind of `U`:
//! - central: `(q_{-1} + q_{+1}) / 2` (second order; Thibault & Senocak 2009);
//! - upwind: `q_U` (first order, donor cell);
//! - TVD: `q_U + psi(r)/2 (q_D - q_U)`, `r = (q_U - q_UU)/(q_D - q_U)` (Sweby 1984);
//! - QUICK: `3/4 q_U + 3/8 q_D - 1/8 q_UU` (Leonard 1979).
//!
//! Where `UU` lies outside the stored range (next to a non-periodic boundary) it is taken equal
//! to `U`, which makes TVD first order and QUICK `5/8 q_U + 3/8 q_D` on that face.

use crate::case::Convection;
use crate::solver::limiter::{Limiter, tvd_face};
use crate::solver::real::Real;

/// Face value for the scheme; `qm2`, `qp2` are `None` outside the stored range.
#[inline(always)]
pub fn face_value<T: Real>(
    scheme: Convection,
    limiter: Limiter,
    a: T,
    qm2: Option<T>,
    qm1: T,
    qp1: T,
    qp2: Option<T>,
) -> T {
    let (uu, u, d) = if a >= T::zero() {
        (qm2.unwrap_or(qm1), qm1, qp1)
    } else {
        (qp2.unwrap_or(qp1), qp1, qm1)
    };
    match scheme {
        Convection::Central => T::of(0.5) * (qm1 + qp1),
        Convection::Upwind => u,
        Convection::Tvd => tvd_face(limiter, uu, u, d),
        Convection::Quick => T::of(0.75) * u + T::of(0.375) * d - T::of(0.125) * uu,
        Convection::PowerLaw => unreachable!("Config::from_spec rejects power_law for the projection method"),
    }
}
