//! The displayed fields of a staggered-grid state in device memory (the projection method's and
//! SIMPLE's), derived by `kernels/display.cu` (compiled for the grid's dimension) into a
//! cell-centred buffer for [`crate::backend::cuda::Readback`]: every field of
//! [`super::FIELDS_2D`] or [`super::FIELDS_3D`] by the CPU's formulas (`derived/`), the stream
//! function by the CPU's path integral, the 3D vortex measures, and for SIMPLE the viscosity.

use crate::backend::cuda::{Args, CudaError, DevBuf, Gpu, KernelSet, Module};
use crate::solver::grid::Grid;
use std::sync::{Arc, Mutex};

/// 2D thread block of the display kernel (one block layer per z index in 3D).
const BX: u32 = 32;
const BY: u32 = 8;

/// The display kernels of one precision and the stream function's corner buffer (allocated when
/// first shown).
pub struct StaggeredDisplay {
    md: Module,
    psi: Mutex<Option<DevBuf<f64>>>,
}

/// The state the fields are derived from: the ghosted staggered velocity components
/// (`(nx + 2) (ny + 2) (nz + 2)`), the cell-centred `p` (`nx ny nz`) shown as `p * p_scale`, and
/// for the viscosity field the ghosted cell viscosity.
pub struct StaggeredState<'a, T> {
    pub vel: &'a [&'a DevBuf<T>],
    pub p: &'a DevBuf<T>,
    pub p_scale: f64,
    pub viscosity: Option<&'a DevBuf<T>>,
}

impl StaggeredDisplay {
    pub fn new(gpu: &Arc<Gpu>, precision: &str, dim: usize) -> Result<Self, CudaError> {
        Ok(Self {
            md: gpu.module_dim(KernelSet::Display, precision, dim)?,
            psi: Mutex::new(None),
        })
    }

    /// Enqueues the kernels that write field `name` (its position in `fields`: [`super::FIELDS_3D`]
    /// in 3D, [`super::FIELDS_2D`] in 2D, and after either list "viscosity" for SIMPLE) of `s` into `dst`
    /// (one value per cell, `x` fastest): for the stream function first its corner values (one
    /// thread per corner row), then the cell values.
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
        let [nx, ny, nz] = grid.n;
        let [dx, dy, dz] = grid.spacing;
        let layers = if grid.dim == 3 { nz } else { 1 };
        let mut psi = self.psi.lock().expect("psi lock");
        let launch = |kernel, grid, block, a| {
            let f = self.md.function(kernel)?;
            // SAFETY: the arguments of the named kernel of kernels/display.cu, in order; the
            // velocity and the viscosity are ghosted, p and dst one value per cell, psi
            // (nx + 1) (ny + 1) (2D).
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
                    .p(s.vel[0])
                    .p(s.vel[1])
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
        let a = Args::new().axes(s.vel.iter().map(|b| b.ptr)).p(p);
        let a = match psi.as_ref().filter(|_| name == "stream_function") {
            Some(corners) => a.p(corners),
            None => a.null(),
        };
        let a = a
            .p(dst)
            .i(nx as i64)
            .i(ny as i64)
            .i(layers as i64)
            .i(code as i64)
            .r(dx)
            .r(dy)
            .r(dz)
            .r(s.p_scale);
        let g = ((nx as u32).div_ceil(BX), (ny as u32).div_ceil(BY), layers as u32);
        launch("staggered_display", g, (BX, BY, 1), a)
    }
}
