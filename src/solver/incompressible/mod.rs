//! Incompressible Navier-Stokes: the projection method on a staggered grid.

mod config;
mod convection;
mod cuda;
mod derived;
mod momentum;
pub mod pressure_poisson;
mod projection;
mod staggered;

pub use config::Config;
pub use cuda::CudaProjection;
pub use projection::{FIELDS, Projection};

use crate::case::{CaseSpec, Invalid, Precision};
use crate::solver::Solver;

/// Builds the incompressible solver of a case in the precision it asks for.
pub fn build(spec: &CaseSpec) -> Result<Box<dyn Solver>, Invalid> {
    let cfg = Config::from_spec(spec)?;
    Ok(match cfg.precision {
        Precision::F64 => Box::new(Projection::<f64>::new(cfg)),
        Precision::F32 => Box::new(Projection::<f32>::new(cfg)),
    })
}

/// Builds the incompressible solver of a case on the CUDA backend. `Err` names the key that
/// stops it: `solver.backend` when no usable device or NVRTC is present (or a CUDA call fails
/// while setting up), another key when a setting is not available on the GPU.
pub fn build_cuda(spec: &CaseSpec) -> Result<Box<dyn Solver>, Invalid> {
    let cfg = Config::from_spec(spec)?;
    if let Some(e) = cuda::unsupported(&cfg) {
        return Err(e);
    }
    let device = |e: crate::backend::cuda::CudaError| Invalid::new("solver.backend", format!("CUDA: {e}"));
    Ok(match cfg.precision {
        Precision::F64 => Box::new(CudaProjection::<f64>::new(cfg).map_err(device)?),
        Precision::F32 => Box::new(CudaProjection::<f32>::new(cfg).map_err(device)?),
    })
}
