//! Incompressible Navier-Stokes: the projection method on a staggered grid.

mod config;
mod convection;
mod derived;
pub mod pressure_poisson;
mod projection;
mod staggered;

pub use config::Config;
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
