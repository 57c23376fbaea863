//! Domain decomposition of the structured solvers over several processes (MPI) or devices.
//!
//! The grid is cut into slabs along its last axis (rows in 2D, z layers in 3D; Thibault &
//! Senocak 2009 split their 3D projection solver so across up to four GPUs). Each part owns a
//! contiguous range of cells and stores [`EXTENSION`] more layers on each side that borders
//! another part ([`Slabs`]), refreshed from their owner after every update that a stencil
//! reads across the cut ([`SlabLink::exchange`]). Sums are formed per grid row, the rows' partial
//! sums gathered from every part and added in global row order ([`RowSums`]): the same
//! additions in the same order as on one process, so a decomposed run gives bit for bit the
//! single-process result.
//!
//! [`Layers`] is the general form for solvers whose arrays are cut differently: one owned and
//! one stored range of layers a part for each array (the SIMPLE family's parts, whose cuts
//! follow the Schwarz strips of each linear system).
//!
//! The transport is a [`Communicator`]: MPI between processes and hosts (`mpi`, the `mpi`
//! feature, rsmpi over the system's MPI library), or [`threads`] between the threads of one
//! process that drives several GPUs. Parts on GPUs (one a process) move their
//! device data over NCCL instead (`backend::cuda::nccl`); the communicator carries NCCL's id and
//! the host-side gathers.

mod layers;
#[cfg(feature = "mpi")]
pub mod mpi;
mod row_sums;
mod slabs;
pub mod threads;

pub use layers::Layers;
pub use row_sums::RowSums;
pub use slabs::{EXTENSION, SlabLink, Slabs};

/// The number of processes an MPI launcher (`mpirun`, `srun`) started this one among, read
/// from the launchers' environment before MPI is initialised; `None` without a launcher.
pub fn launcher_size() -> Option<usize> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

/// This process's index among those a launcher started on its host (`OMPI_COMM_WORLD_LOCAL_RANK`,
/// `MPI_LOCALRANKID`, `SLURM_LOCALID`): the default GPU of a process of a run over several.
pub fn launcher_local_rank() -> Option<usize> {
    [
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "MPI_LOCALRANKID",
        "SLURM_LOCALID",
        "PMIX_LOCAL_RANK",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

/// `x` of every part added in rank order (the same additions on every part); `all` and
/// `counts` are the gather's buffers, one entry a part.
pub fn sum_over_parts(comm: &dyn Communicator, x: f64, all: &mut [f64], counts: &[usize]) -> f64 {
    comm.all_gather(bytemuck::bytes_of(&x), counts, bytemuck::cast_slice_mut(all));
    all.iter().fold(0.0, |s, &v| s + v)
}

/// The operations a decomposed solver needs from its transport, on raw bytes (the solver's
/// `f32` or `f64` values reinterpreted): every method is collective over all parts except
/// [`Communicator::exchange`], which pairs each part with its neighbours.
pub trait Communicator: Send + Sync {
    /// This part's index, `0..size`.
    fn rank(&self) -> usize;
    /// Number of parts.
    fn size(&self) -> usize;
    /// Sends `to_lower` to part `rank - 1` and `to_upper` to `rank + 1` and receives
    /// `from_lower` from `rank - 1` and `from_upper` from `rank + 1`; the buffers towards a
    /// missing neighbour (the first and last part) are empty.
    fn exchange(&self, to_lower: &[u8], to_upper: &[u8], from_lower: &mut [u8], from_upper: &mut [u8]);
    /// Concatenates every part's `mine` in rank order into `all`; `counts[r]` is part `r`'s
    /// length in bytes.
    fn all_gather(&self, mine: &[u8], counts: &[usize], all: &mut [u8]);
    /// [`Communicator::all_gather`] into the first part only (`all` is `Some` there, `None` on
    /// the others).
    fn gather(&self, mine: &[u8], counts: &[usize], all: Option<&mut [u8]>);
    /// The largest `x` over all parts.
    fn all_max(&self, x: f64) -> f64;
    /// Seconds this part has spent in the calls above, waiting for the others included.
    fn seconds(&self) -> f64;
}
