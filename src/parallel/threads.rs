//! The [`Communicator`] between the threads of one process: one thread a part, as when one
//! process drives several GPUs ([`crate::solver::parts`]). Every collective call is a
//! rendezvous: each part leaves its bytes in its slot, the last to arrive opens the round, each
//! reads what it needs from the others' slots, and the last to leave closes it.

use super::Communicator;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// The state the parts of one run share.
struct Shared {
    size: usize,
    round: Mutex<Round>,
    turn: Condvar,
}

#[derive(Default)]
struct Round {
    /// Every part's bytes of the current round.
    slots: Vec<Vec<u8>>,
    arrived: usize,
    left: usize,
    /// All parts have arrived and some have not yet read.
    open: bool,
    /// A part has failed: the others stop waiting for it.
    failed: bool,
}

/// One part's end of the communicator (made by [`Threads::new`]).
pub struct Threads {
    shared: Arc<Shared>,
    rank: usize,
    seconds: Mutex<f64>,
}

impl Threads {
    /// The ends of `size` parts, rank order.
    pub fn new(size: usize) -> Vec<Arc<Threads>> {
        let shared = Arc::new(Shared {
            size,
            round: Mutex::new(Round {
                slots: vec![Vec::new(); size],
                ..Round::default()
            }),
            turn: Condvar::new(),
        });
        (0..size)
            .map(|rank| {
                Arc::new(Threads {
                    shared: shared.clone(),
                    rank,
                    seconds: Mutex::new(0.0),
                })
            })
            .collect()
    }

    /// Marks the run failed: every part waiting in (or later entering) a collective call
    /// panics instead of waiting for this one.
    pub fn fail(&self) {
        self.lock().failed = true;
        self.shared.turn.notify_all();
    }

    fn lock(&self) -> MutexGuard<'_, Round> {
        // A part that panicked while holding the lock leaves the round usable: the panic is
        // reported by its thread's join.
        self.shared.round.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits while `busy` holds of the round (panics once a part has failed).
    fn wait_while<'a>(
        &self,
        mut r: MutexGuard<'a, Round>,
        busy: impl Fn(&Round) -> bool,
    ) -> MutexGuard<'a, Round> {
        loop {
            if r.failed {
                drop(r);
                panic!("another part of the run failed");
            }
            if !busy(&r) {
                return r;
            }
            r = self.shared.turn.wait(r).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// One collective round: leaves `mine` in this part's slot and, once every part has,
    /// returns `read` of all slots (rank order).
    fn round<R>(&self, mine: &[u8], read: impl FnOnce(&[Vec<u8>]) -> R) -> R {
        let start = Instant::now();
        let size = self.shared.size;
        let mut r = self.wait_while(self.lock(), |r| r.open);
        r.slots[self.rank].clear();
        r.slots[self.rank].extend_from_slice(mine);
        r.arrived += 1;
        if r.arrived == size {
            r.open = true;
            self.shared.turn.notify_all();
        }
        let mut r = self.wait_while(r, |r| !r.open);
        let out = read(&r.slots);
        r.left += 1;
        if r.left == size {
            r.arrived = 0;
            r.left = 0;
            r.open = false;
            self.shared.turn.notify_all();
        }
        drop(r);
        *self.seconds.lock().unwrap_or_else(|e| e.into_inner()) += start.elapsed().as_secs_f64();
        out
    }
}

impl Communicator for Threads {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.shared.size
    }

    fn exchange(&self, to_lower: &[u8], to_upper: &[u8], from_lower: &mut [u8], from_upper: &mut [u8]) {
        // A slot holds what goes down, then what goes up.
        let mine = [to_lower, to_upper].concat();
        self.round(&mine, |slots| {
            if !from_lower.is_empty() {
                let lower = &slots[self.rank - 1];
                from_lower.copy_from_slice(&lower[lower.len() - from_lower.len()..]);
            }
            if !from_upper.is_empty() {
                from_upper.copy_from_slice(&slots[self.rank + 1][..from_upper.len()]);
            }
        });
    }

    fn all_gather(&self, mine: &[u8], counts: &[usize], all: &mut [u8]) {
        self.round(mine, |slots| concatenate(slots, counts, all));
    }

    fn gather(&self, mine: &[u8], counts: &[usize], all: Option<&mut [u8]>) {
        self.round(mine, |slots| {
            if let Some(all) = all {
                concatenate(slots, counts, all);
            }
        });
    }

    fn all_max(&self, x: f64) -> f64 {
        self.round(&x.to_le_bytes(), |slots| {
            slots
                .iter()
                .map(|s| f64::from_le_bytes(s[..8].try_into().expect("8 bytes")))
                .fold(f64::NEG_INFINITY, f64::max)
        })
    }

    fn seconds(&self) -> f64 {
        *self.seconds.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// `all` = the slots in rank order, `counts[r]` bytes of slot `r`.
fn concatenate(slots: &[Vec<u8>], counts: &[usize], all: &mut [u8]) {
    let mut at = 0;
    for (slot, &n) in slots.iter().zip(counts) {
        all[at..at + n].copy_from_slice(&slot[..n]);
        at += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f` on every part of a 3-part communicator at once.
    fn on_three<R: Send>(f: impl Fn(&Threads) -> R + Sync) -> Vec<R> {
        let ends = Threads::new(3);
        std::thread::scope(|s| {
            let handles: Vec<_> = ends.iter().map(|e| s.spawn(|| f(e))).collect();
            handles.into_iter().map(|h| h.join().expect("part")).collect()
        })
    }

    #[test]
    fn rounds_exchange_gather_and_reduce_in_rank_order() {
        let out = on_three(|c| {
            let r = c.rank() as u8;
            let mut results = Vec::new();
            // Many rounds back to back: a fast part must not overwrite a slot still being read.
            for round in 0..200u8 {
                let (mut lo, mut hi) = (vec![0u8; 2], vec![0u8; 2]);
                let lower = if r > 0 { &mut lo[..] } else { &mut [][..] };
                let upper = if r < 2 { &mut hi[..] } else { &mut [][..] };
                c.exchange(&[r, round], &[r + 10, round], lower, upper);
                let counts = [1, 2, 3];
                let mine = vec![r; counts[r as usize]];
                let mut all = vec![0u8; 6];
                c.all_gather(&mine, &counts, &mut all);
                let max = c.all_max(f64::from(r) + f64::from(round));
                results.push((lo.clone(), hi.clone(), all, max));
            }
            results
        });
        for (r, results) in out.iter().enumerate() {
            for (round, (lo, hi, all, max)) in results.iter().enumerate() {
                let round = round as u8;
                if r > 0 {
                    assert_eq!(lo, &vec![r as u8 - 1 + 10, round], "part {r} from below");
                }
                if r < 2 {
                    assert_eq!(hi, &vec![r as u8 + 1, round], "part {r} from above");
                }
                assert_eq!(all, &vec![0, 1, 1, 2, 2, 2]);
                assert_eq!(*max, 2.0 + f64::from(round));
            }
        }
    }

    #[test]
    fn a_failed_part_releases_the_others() {
        let ends = Threads::new(2);
        let waiting = std::thread::scope(|s| {
            let h = s.spawn(|| ends[0].all_max(1.0));
            std::thread::sleep(std::time::Duration::from_millis(20));
            ends[1].fail();
            h.join()
        });
        assert!(waiting.is_err(), "the waiting part gives up");
    }
}
