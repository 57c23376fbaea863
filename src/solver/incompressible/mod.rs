//! Incompressible Navier-Stokes on a staggered grid: the projection method (unsteady) and
//! Patankar's SIMPLE and SIMPLER (steady, [`simple`]).

pub mod analytic;
pub(crate) mod config;
pub(crate) mod convection;
mod cuda;
mod decomposed;
mod derived;
mod device_fields;
mod momentum;
mod opening;
pub mod pressure_poisson;
mod projection;
mod rotor_source;
pub mod simple;
pub(crate) mod staggered;

pub use config::{Config, Flow};
pub use cuda::CudaProjection;
pub use decomposed::{CpuPart, Decomposed, GpuPart, SlabPart};
pub use derived::{FIELDS_2D, FIELDS_3D};
pub use projection::Projection;
pub use simple::{CudaSimple, Simple, SimpleConfig};

use crate::case::{CaseSpec, Invalid, Method, Precision};
use crate::solver::Solver;

/// True when the case asks for SIMPLE, SIMPLEC or SIMPLER.
pub fn steady(spec: &CaseSpec) -> bool {
    spec.solver.method.is_some_and(Method::steady)
}

/// The incompressible family's checks of a case.
pub fn check(spec: &CaseSpec) -> Result<(), Invalid> {
    if steady(spec) {
        SimpleConfig::from_spec(spec).map(|_| ())
    } else {
        Config::from_spec(spec).map(|_| ())
    }
}

/// Builds the incompressible solver of a case in the precision it asks for.
pub fn build(spec: &CaseSpec) -> Result<Box<dyn Solver>, Invalid> {
    if steady(spec) {
        let cfg = SimpleConfig::from_spec(spec)?;
        return Ok(match cfg.flow.grid.dim {
            2 => Box::new(Simple::<2>::new(cfg)),
            _ => Box::new(Simple::<3>::new(cfg)),
        });
    }
    let cfg = Config::from_spec(spec)?;
    if let Some(note) = cfg.flat_multigrid_note() {
        log::warn!("{note}");
    }
    Ok(match (cfg.precision, cfg.grid.dim) {
        (Precision::F64, 2) => Box::new(Projection::<f64, 2>::new(cfg)),
        (Precision::F32, 2) => Box::new(Projection::<f32, 2>::new(cfg)),
        (Precision::F64, _) => Box::new(Projection::<f64, 3>::new(cfg)),
        (Precision::F32, _) => Box::new(Projection::<f32, 3>::new(cfg)),
    })
}

/// Builds this process's part of an incompressible case cut into slabs over `comm`'s
/// processes: the projection method ([`Decomposed`]) on the CPU backend, or on `device`, this
/// process's GPU, NCCL between them; SIMPLE, SIMPLEC and SIMPLER ([`simple::DecomposedSimple`])
/// on the CPU backend.
pub fn build_part(
    spec: &CaseSpec,
    comm: std::sync::Arc<dyn crate::parallel::Communicator>,
    device: Option<usize>,
) -> Result<Box<dyn Solver>, Invalid> {
    if steady(spec) {
        let parts = comm.size();
        if device.is_some() {
            return Err(Invalid::new(
                "solver.backend",
                format!(
                    "on {parts} processes SIMPLE, SIMPLEC and SIMPLER run on the CPU backend: use backend = \"cpu\""
                ),
            ));
        }
        let cfg = SimpleConfig::from_spec(spec)?;
        if let Some(e) = simple::parts_unsupported(&cfg, parts) {
            return Err(e);
        }
        // The strips of every linear solve, checked as on one process with as many subdomains.
        let mut strips = spec.clone();
        strips
            .solver
            .linear_solver
            .get_or_insert_with(Default::default)
            .subdomains = Some(parts);
        SimpleConfig::from_spec(&strips)?;
        return Ok(match cfg.flow.grid.dim {
            2 => Box::new(simple::DecomposedSimple::<2>::new(cfg, comm)?),
            _ => Box::new(simple::DecomposedSimple::<3>::new(cfg, comm)?),
        });
    }
    let cfg = Config::from_spec(spec)?;
    if let Some(device) = device {
        return Ok(match (cfg.precision, cfg.grid.dim) {
            (Precision::F64, 2) => Box::new(GpuPart::<f64, 2>::new(cfg, comm, device)?),
            (Precision::F32, 2) => Box::new(GpuPart::<f32, 2>::new(cfg, comm, device)?),
            (Precision::F64, _) => Box::new(GpuPart::<f64, 3>::new(cfg, comm, device)?),
            (Precision::F32, _) => Box::new(GpuPart::<f32, 3>::new(cfg, comm, device)?),
        });
    }
    Ok(match (cfg.precision, cfg.grid.dim) {
        (Precision::F64, 2) => Box::new(CpuPart::<f64, 2>::new(cfg, comm, 0)?),
        (Precision::F32, 2) => Box::new(CpuPart::<f32, 2>::new(cfg, comm, 0)?),
        (Precision::F64, _) => Box::new(CpuPart::<f64, 3>::new(cfg, comm, 0)?),
        (Precision::F32, _) => Box::new(CpuPart::<f32, 3>::new(cfg, comm, 0)?),
    })
}

/// Builds the incompressible solver of a case on the CUDA backend. `Err` names the key that
/// stops it: `solver.backend` when no usable device or NVRTC is present (or a CUDA call fails
/// while setting up), another key when a setting is not available on the GPU.
pub fn build_cuda(spec: &CaseSpec, device: usize) -> Result<Box<dyn Solver>, Invalid> {
    let failed = |e: crate::backend::cuda::CudaError| Invalid::new("solver.backend", format!("CUDA: {e}"));
    if steady(spec) {
        let cfg = SimpleConfig::from_spec(spec)?;
        if let Some(e) = simple::cuda_unsupported(&cfg) {
            return Err(e);
        }
        return Ok(match cfg.flow.grid.dim {
            2 => Box::new(CudaSimple::<2>::new(cfg, device).map_err(failed)?),
            _ => Box::new(CudaSimple::<3>::new(cfg, device).map_err(failed)?),
        });
    }
    let cfg = Config::from_spec(spec)?;
    if let Some(e) = cuda::unsupported(&cfg) {
        return Err(e);
    }
    if let Some(note) = cfg.flat_multigrid_note() {
        log::warn!("{note}");
    }
    Ok(match (cfg.precision, cfg.grid.dim) {
        (Precision::F64, 2) => Box::new(CudaProjection::<f64, 2>::new(cfg, device).map_err(failed)?),
        (Precision::F32, 2) => Box::new(CudaProjection::<f32, 2>::new(cfg, device).map_err(failed)?),
        (Precision::F64, _) => Box::new(CudaProjection::<f64, 3>::new(cfg, device).map_err(failed)?),
        (Precision::F32, _) => Box::new(CudaProjection::<f32, 3>::new(cfg, device).map_err(failed)?),
    })
}
