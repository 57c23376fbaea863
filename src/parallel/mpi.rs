//! The [`Communicator`] over MPI (rsmpi): one process a part, on one host or many
//! (`mpirun -n N flowlab run ...`).

use super::Communicator;
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::Communicator as _;
use mpi::traits::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

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
            nanos: AtomicU64::new(0),
        })
    }

    /// Ends every process of the run with `code` (after an error on this one, so that the
    /// others do not wait for it forever).
    pub fn abort(&self, code: i32) -> ! {
        self.universe.world().abort(code)
    }
}

/// MPI's world communicator, and the time spent in it.
struct Mpi {
    world: SimpleCommunicator,
    nanos: AtomicU64,
}

impl Mpi {
    fn timed<R>(&self, f: impl FnOnce() -> R) -> R {
        let start = Instant::now();
        let r = f();
        self.nanos
            .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        r
    }
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
        self.timed(|| self.exchange_now(to_lower, to_upper, from_lower, from_upper))
    }

    fn all_gather(&self, mine: &[u8], counts: &[usize], all: &mut [u8]) {
        self.timed(|| self.gather_now(mine, counts, Some(all), true))
    }

    fn gather(&self, mine: &[u8], counts: &[usize], all: Option<&mut [u8]>) {
        self.timed(|| self.gather_now(mine, counts, all, false))
    }

    fn all_max(&self, x: f64) -> f64 {
        self.timed(|| {
            let mut out = 0.0;
            self.world.all_reduce_into(&x, &mut out, SystemOperation::max());
            out
        })
    }

    fn seconds(&self) -> f64 {
        self.nanos.load(Ordering::Relaxed) as f64 * 1e-9
    }
}

impl Mpi {
    fn exchange_now(&self, to_lower: &[u8], to_upper: &[u8], from_lower: &mut [u8], from_upper: &mut [u8]) {
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

    /// `MPI_Allgatherv` (`everywhere`) or `MPI_Gatherv` to rank 0 (`all` there), whose counts
    /// are `int`s: parts' shares over [`CHUNK`] bytes go in rounds of at most that much each,
    /// through a buffer of one round.
    fn gather_now(&self, mine: &[u8], counts: &[usize], mut all: Option<&mut [u8]>, everywhere: bool) {
        const CHUNK: usize = 1 << 30;
        let root = self.world.process_at_rank(0);
        let collect = |send: &[u8], into: Option<(&mut [u8], &[usize], &[usize])>| match into {
            Some((buf, c, d)) => {
                let mut partition = PartitionMut::new(buf, ints(c), ints(d));
                if everywhere {
                    self.world.all_gather_varcount_into(send, &mut partition);
                } else {
                    root.gather_varcount_into_root(send, &mut partition);
                }
            }
            None => root.gather_varcount_into(send),
        };
        let displs = starts(counts);
        let rounds = counts.iter().max().map_or(1, |m| m.div_ceil(CHUNK).max(1));
        if rounds == 1 {
            collect(mine, all.map(|a| (a, counts, &displs[..])));
            return;
        }
        for round in 0..rounds {
            let piece: Vec<usize> = counts
                .iter()
                .map(|&c| c.saturating_sub(round * CHUNK).min(CHUNK))
                .collect();
            let at = starts(&piece);
            let start = (round * CHUNK).min(mine.len());
            let send = &mine[start..start + piece[self.world.rank() as usize]];
            let Some(all) = all.as_deref_mut() else {
                collect(send, None);
                continue;
            };
            let mut buffer = vec![0u8; piece.iter().sum()];
            collect(send, Some((&mut buffer[..], &piece, &at)));
            for p in 0..counts.len() {
                let to = displs[p] + round * CHUNK;
                all[to..to + piece[p]].copy_from_slice(&buffer[at[p]..at[p] + piece[p]]);
            }
        }
    }
}

/// MPI's counts and displacements.
fn ints(v: &[usize]) -> Vec<i32> {
    v.iter().map(|&c| c as i32).collect()
}
/// Where each of `counts` starts when they are laid end to end.
fn starts(counts: &[usize]) -> Vec<usize> {
    counts
        .iter()
        .scan(0, |at, &c| {
            let d = *at;
            *at += c;
            Some(d)
        })
        .collect()
}
