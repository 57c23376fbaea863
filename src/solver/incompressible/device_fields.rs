//! The displayed fields of a staggered-grid state in device memory (the projection method's and
//! SIMPLE's), derived by `kernels/display.cu` into a cell-centred buffer for
//! [`crate::backend::cuda::Readback`]: every field of [`super::FIELDS`] by the CPU's formulas
//! (`derived.rs`), the stream function by the CPU's path integral, and for SIMPLE the viscosity.

use crate::backend::cuda::{Args, CudaError, DevBuf, Gpu, KernelSet, Module};
use crate::solver::grid::Grid;
use std::sync::{Arc, Mutex};

/// 2D thread block of the display kernel.
const BX: u32 = 32;
const BY: u32 = 8;

/// The display kernels of one precision and the stream function's corner buffer (allocated when
/// first shown).
pub struct StaggeredDisplay {
    md: Module,
    psi: Mutex<Option<DevBuf<f64>>>,
}

/// The state the fields are derived from: ghosted staggered `u`, `v` (`(nx + 2) (ny + 2)`), the
/// cell-centred `p` (`nx ny`) shown as `p * p_scale`, and for the viscosity field the ghosted cell
/// viscosity.
pub struct StaggeredState<'a, T> {
    pub u: &'a DevBuf<T>,
    pub v: &'a DevBuf<T>,
    pub p: &'a DevBuf<T>,
    pub p_scale: f64,
    pub viscosity: Option<&'a DevBuf<T>>,
}

impl StaggeredDisplay {
    pub fn new(gpu: &Arc<Gpu>, precision: &str) -> Result<Self, CudaError> {
        Ok(Self {
            md: gpu.module(KernelSet::Display, precision)?,
            psi: Mutex::new(None),
        })
    }

    /// Enqueues the kernels that write field `name` (its position in `fields`, whose first seven
    /// are [`super::FIELDS`] and the eighth, if any, "viscosity") of `s` into `dst` (`nx * ny`
    /// cell values, `x` fastest): for the stream function first its corner values (one thread
    /// per corner row), then the cell values.
    pub fn derive<T: Copy>(
        &self,
        gpu: &Arc<Gpu>,
        grid: &Grid,
        fields: &[&str],
        s: &StaggeredState<T>,
        name: &str,
        dst: &DevBuf<T>,
    ) -> Result<(), CudaError> {
        let code = fields.iter().position(|f| *f == name).expect("a known field");
        let [nx, ny, _] = grid.n;
        let [dx, dy, _] = grid.spacing;
        let mut psi = self.psi.lock().expect("psi lock");
        let launch = |kernel, grid, block, a| {
            let f = self.md.function(kernel)?;
            // SAFETY: the arguments of the named kernel of kernels/display.cu, in order; u, v
            // and the viscosity are ghosted (nx + 2) (ny + 2), p and dst nx ny, psi
            // (nx + 1) (ny + 1).
            unsafe { gpu.launch(f, grid, block, &a) }
        };
        if name == "stream_function" {
            if psi.is_none() {
                *psi = Some(gpu.alloc((nx + 1) * (ny + 1))?);
            }
            let corners = psi.as_ref().expect("allocated");
            launch(
                "stream_function_corners",
                ((ny as u32 + 1).div_ceil(32), 1, 1),
                (32, 1, 1),
                Args::new()
                    .p(s.u)
                    .p(s.v)
                    .p(corners)
                    .i(nx as i64)
                    .i(ny as i64)
                    .r(dx)
                    .r(dy),
            )?;
        }
        let p = match s.viscosity.filter(|_| name == "viscosity") {
            Some(mu) => mu,
            None => s.p,
        };
        let a = Args::new().p(s.u).p(s.v).p(p);
        let a = match psi.as_ref().filter(|_| name == "stream_function") {
            Some(corners) => a.p(corners),
            None => a.null(),
        };
        let a = a
            .p(dst)
            .i(nx as i64)
            .i(ny as i64)
            .i(code as i64)
            .r(dx)
            .r(dy)
            .r(s.p_scale);
        let g = ((nx as u32).div_ceil(BX), (ny as u32).div_ceil(BY), 1);
        launch("staggered_display", g, (BX, BY, 1), a)
    }
}
