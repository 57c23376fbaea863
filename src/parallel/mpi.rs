//! The [`Communicator`] over MPI (rsmpi): one process a part, on one host or many
//! (`mpirun -n N flowlab run ...`).

use super::Communicator;
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::Communicator as _;
use mpi::traits::*;
use std::sync::Arc;

/// MPI for the length of a run: initialised with `MPI_THREAD_SERIALIZED` (the solver steps on
/// a worker thread of rayon's pool, one thread at a time), finalised when dropped.
pub struct Session {
    universe: mpi::environment::Universe,
}

impl Session {
    /// Initialises MPI; `None` when it cannot be (or already was).
    pub fn start() -> Option<Self> {
        mpi::initialize_with_threading(mpi::Threading::Serialized).map(|(universe, _)| Self { universe })
    }

    /// The world communicator, all processes of the run.
    pub fn world(&self) -> Arc<dyn Communicator> {
        Arc::new(Mpi {
            world: self.universe.world(),
        })
    }

    /// Ends every process of the run with `code` (after an error on this one, so that the
    /// others do not wait for it forever).
    pub fn abort(&self, code: i32) -> ! {
        self.universe.world().abort(code)
    }
}

/// MPI's world communicator.
struct Mpi {
    world: SimpleCommunicator,
}

// SAFETY: MPI is initialised with MPI_THREAD_SERIALIZED and a solver calls it from one
// thread at a time.
unsafe impl Send for Mpi {}
unsafe impl Sync for Mpi {}

impl Communicator for Mpi {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn exchange(&self, to_lower: &[u8], to_upper: &[u8], from_lower: &mut [u8], from_upper: &mut [u8]) {
        let rank = self.world.rank();
        let size = self.world.size();
        // Upward first (every part sends its top to the part above), then downward.
        if rank + 1 < size && rank > 0 {
            let (up, down) = (
                self.world.process_at_rank(rank + 1),
                self.world.process_at_rank(rank - 1),
            );
            mpi::point_to_point::send_receive_into(to_upper, &up, from_lower, &down);
            mpi::point_to_point::send_receive_into(to_lower, &down, from_upper, &up);
        } else if rank + 1 < size {
            let up = self.world.process_at_rank(rank + 1);
            up.send(to_upper);
            up.receive_into(from_upper);
        } else if rank > 0 {
            let down = self.world.process_at_rank(rank - 1);
            down.receive_into(from_lower);
            down.send(to_lower);
        }
    }

    fn all_gather(&self, mine: &[u8], counts: &[usize], all: &mut [u8]) {
        let counts: Vec<i32> = counts
            .iter()
            .map(|&c| i32::try_from(c).expect("a part's share of a gather stays under 2 GiB"))
            .collect();
        let displs: Vec<i32> = counts
            .iter()
            .scan(0, |at, &c| {
                let d = *at;
                *at += c;
                Some(d)
            })
            .collect();
        let mut partition = PartitionMut::new(all, counts, displs);
        self.world.all_gather_varcount_into(mine, &mut partition);
    }

    fn all_max(&self, x: f64) -> f64 {
        let mut out = 0.0;
        self.world.all_reduce_into(&x, &mut out, SystemOperation::max());
        out
    }
}
