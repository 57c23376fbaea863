//! Floating-point precision of a solver: one generic numerical core for `f32` and `f64`.

use num_traits::{Float, FromPrimitive, ToPrimitive};
use std::fmt::{Debug, Display};
use std::iter::Sum;

/// The scalar type a solver computes in. Implemented for `f32` and `f64`; every numerical
/// routine is generic over it so both precisions share one source.
pub trait Real:
    Float
    + FromPrimitive
    + ToPrimitive
    + Sum
    + Debug
    + Display
    + Default
    + Send
    + Sync
    + bytemuck::Pod
    + rustdct::DctNum
    + 'static
{
    /// Name used in case files and reports (`"f32"` or `"f64"`).
    const NAME: &'static str;

    /// Converts an `f64` constant or setting into this precision.
    #[inline(always)]
    fn of(x: f64) -> Self {
        Self::from_f64(x).expect("f64 converts to every Real")
    }

    /// Widens to `f64` for reports and exports.
    #[inline(always)]
    fn f64(self) -> f64 {
        self.to_f64().expect("every Real converts to f64")
    }
}

impl Real for f32 {
    const NAME: &'static str = "f32";
}

impl Real for f64 {
    const NAME: &'static str = "f64";
}
