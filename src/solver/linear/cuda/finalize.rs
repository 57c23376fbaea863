//! The one-block finalize kernels of a device linear solver, bound once to its buffers.

use crate::backend::cuda::{Args, CudaError, DevBuf, Launch, Module};

/// The one-block kernels that reduce the block partials of a solver into its scalar and
/// control blocks, bound to its `partial, nb, sc, ctrl`; the trailing arguments named are
/// passed per launch (`it`, `max` as `int`s, saturated by [`count`]).
pub(super) struct Finalize {
    /// `fp_check` (then `it`, `max`) and `cg_check` (then `it`, `max`).
    pub(super) check: Launch,
    pub(super) cg_check: Launch,
    /// `finalize_bnorm` (then `tol`), `finalize_alpha` (then `it`), `finalize_gamma` (then
    /// `first`) of poisson.cu.
    pub(super) bnorm: Launch,
    pub(super) alpha: Launch,
    pub(super) gamma: Launch,
    /// BiCGSTAB's `bicg_start`, `bicg_rho` (then `it`), `bicg_alpha`, `bicg_half_check` (then
    /// `it`), `bicg_omega`.
    pub(super) bicg_start: Launch,
    pub(super) bicg_rho: Launch,
    pub(super) bicg_alpha: Launch,
    pub(super) bicg_half_check: Launch,
    pub(super) bicg_omega: Launch,
}

impl Finalize {
    pub(super) fn new(
        m: &Module,
        poisson_kernels: &Module,
        partial: &DevBuf<f64>,
        nb: usize,
        sc: &DevBuf<f64>,
        ctrl: &DevBuf<i32>,
    ) -> Result<Self, CudaError> {
        let bind = |module: &Module, name: &'static str| {
            let a = Args::new().p(partial).i(nb as i64).p(sc).p(ctrl);
            // SAFETY: the leading arguments of every finalize kernel of stencil.cu and
            // poisson.cu; `partial` holds `nb` block partials (2 per block where a kernel sums two
            // dot products); the solver owns the buffers and the launches together.
            unsafe { module.bind(name, (1, 1, 1), (1024, 1, 1), a) }
        };
        Ok(Finalize {
            check: bind(m, "fp_check")?,
            cg_check: bind(m, "cg_check")?,
            bnorm: bind(poisson_kernels, "finalize_bnorm")?,
            alpha: bind(poisson_kernels, "finalize_alpha")?,
            gamma: bind(poisson_kernels, "finalize_gamma")?,
            bicg_start: bind(m, "bicg_start")?,
            bicg_rho: bind(m, "bicg_rho")?,
            bicg_alpha: bind(m, "bicg_alpha")?,
            bicg_half_check: bind(m, "bicg_half_check")?,
            bicg_omega: bind(m, "bicg_omega")?,
        })
    }
}
