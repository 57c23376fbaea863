//! Asynchronous readback of displayed fields: a field is derived on the device (by the solver's
//! kernels of `kernels/display.cu`) into a cell-centred display buffer of `nx * ny` values of the
//! solver's precision (`x` fastest, as [`crate::solver::Solver::field`]), then copied to pinned
//! host memory on the copy stream, so only the fields on screen cross the bus, one value per
//! cell, and the copy overlaps whatever the compute stream does next.
//!
//! Each field name has a slot: a display buffer, the event `derived`, and two pinned copies
//! (each a host buffer, the event `copied` and the state it holds), written alternately so that
//! the previous state's values stay readable while the current state's copy is under way.
//! [`Readback::prefetch`] enqueues, per name, on the compute stream (after the last step enqueued
//! there): a wait for the slot's last copy out of the display buffer, the derivation, and
//! `derived`; then on the copy stream a wait for `derived`, the device-to-pinned copy into the
//! slot's other host buffer and its `copied`. The host does not wait.
//!
//! Reading: [`Readback::read`] returns the current state of one field (waiting for its copy, or
//! deriving it first if it was not prefetched). [`Readback::read_shown`] returns several fields
//! of one state for display without waiting for a copy still under way: the current state if
//! every copy of it has landed, else the previous prefetched state if every name has a copy of
//! it (one frame behind, the copy of the current state overlapping the next steps), else it
//! waits for the current one. The solver calls [`Readback::invalidate`] whenever its state
//! changes, so no copy answers for another state than the one it was derived from.
//!
//! Slots are reused: a name keeps its slot, a new name takes a slot that holds no current field,
//! and only when every slot holds a field of the current state is another allocated, so there
//! are as many slots as names read between two state changes (at most the solver's field count).

use super::{CudaError, DevBuf, Event, Gpu, Pinned, Stream};
use crate::solver::real::Real;
use rayon::prelude::*;
use std::sync::Arc;

/// One pinned copy of a display buffer.
struct HostCopy<T> {
    host: Pinned<T>,
    /// Recorded on the copy stream after the copy into `host`.
    copied: Event,
    /// The state (`Readback::epoch`) and its step count that `host` holds or is receiving.
    epoch: u64,
    step: u64,
}

struct Slot<T> {
    name: String,
    dev: DevBuf<T>,
    /// Recorded on the compute stream after the derivation into `dev`.
    derived: Event,
    /// At most two; `copies[latest]` is the last one started.
    copies: Vec<HostCopy<T>>,
    latest: usize,
}

impl<T> Slot<T> {
    /// Whether the slot's last derivation was of state `epoch`.
    fn holds(&self, epoch: u64) -> bool {
        self.copies.get(self.latest).is_some_and(|c| c.epoch == epoch)
    }

    fn latest(&self) -> &HostCopy<T> {
        &self.copies[self.latest]
    }

    /// The copy before the latest one, if there is one.
    fn previous(&self) -> Option<&HostCopy<T>> {
        (self.copies.len() == 2).then(|| &self.copies[1 - self.latest])
    }
}

/// What [`Readback`] does for a name, given each slot's (name, holds the current state).
#[derive(Debug, PartialEq, Eq)]
enum Pick {
    /// The slot already holds (or is copying) the field of the current state.
    Current(usize),
    /// Derive into this slot (its own earlier value, or a slot of no current field).
    Derive(usize),
    /// Every slot holds a current field: allocate one more.
    New,
}

fn pick<'a>(slots: impl Iterator<Item = (&'a str, bool)> + Clone, name: &str) -> Pick {
    if let Some(k) = slots.clone().position(|(n, _)| n == name) {
        let fresh = slots.clone().nth(k).is_some_and(|(_, f)| f);
        return if fresh { Pick::Current(k) } else { Pick::Derive(k) };
    }
    match slots.clone().position(|(_, fresh)| !fresh) {
        Some(k) => Pick::Derive(k),
        None => Pick::New,
    }
}

/// Which state [`Readback::read_shown`] answers with, given per name (latest copy landed,
/// previous copy's epoch) and the state prefetched before the current one: the current one when
/// all of its copies have landed, else that earlier state if every name has a copy of it, else
/// the current one after waiting.
fn choose(names: impl Iterator<Item = (bool, Option<u64>)> + Clone, before: u64) -> Choice {
    if names.clone().all(|(landed, _)| landed) {
        return Choice::Current;
    }
    let mut previous = names.map(|(_, p)| p);
    match previous.next().flatten() {
        Some(e) if e == before && previous.all(|p| p == Some(e)) => Choice::Previous,
        _ => Choice::Current,
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Choice {
    Current,
    Previous,
}

/// The display buffers, pinned staging buffers and events of one solver's field readback.
pub struct Readback<T> {
    gpu: Arc<Gpu>,
    /// Values per field (`nx * ny`).
    cells: usize,
    slots: Vec<Slot<T>>,
    /// The current state: counts [`Readback::invalidate`] calls, from 1 (0 marks no state).
    epoch: u64,
    /// The solver's step count of the current state.
    step: u64,
    /// The last state anything was prefetched of, and the one before it (0: none).
    prefetched: [u64; 2],
}

impl<T: Real> Readback<T> {
    /// Readback of fields of `cells` values; nothing is allocated before the first field.
    pub fn new(gpu: &Arc<Gpu>, cells: usize) -> Self {
        Readback {
            gpu: gpu.clone(),
            cells,
            slots: Vec::new(),
            epoch: 1,
            step: 0,
            prefetched: [0; 2],
        }
    }

    /// The state changed (to one after `step` steps): no slot holds a current field any more.
    pub fn invalidate(&mut self, step: u64) {
        self.epoch += 1;
        self.step = step;
    }

    /// Enqueues the derivation and the asynchronous copy of each field of `names` that is not
    /// already under way for the current state (see the module documentation); no host wait.
    /// `derive(name, dst)` enqueues on the compute stream the kernels that write field `name`
    /// of the current state into `dst` (`cells` values).
    pub fn prefetch(
        &mut self,
        names: &[&str],
        derive: impl Fn(&str, &DevBuf<T>) -> Result<(), CudaError>,
    ) -> Result<(), CudaError> {
        self.gpu.bind()?;
        let epoch = self.epoch;
        if self.prefetched[0] != epoch {
            self.prefetched = [epoch, self.prefetched[0]];
        }
        for &name in names {
            let k = match pick(self.slots.iter().map(|s| (s.name.as_str(), s.holds(epoch))), name) {
                Pick::Current(_) => continue,
                Pick::Derive(k) => k,
                Pick::New => {
                    self.slots.push(Slot {
                        name: String::new(),
                        dev: self.gpu.alloc(self.cells)?,
                        derived: self.gpu.marker()?,
                        copies: Vec::with_capacity(2),
                        latest: 0,
                    });
                    self.slots.len() - 1
                }
            };
            let gpu = &self.gpu;
            let slot = &mut self.slots[k];
            if let Some(last) = slot.copies.get(slot.latest) {
                gpu.wait_event(Stream::Compute, &last.copied)?;
            }
            derive(name, &slot.dev)?;
            slot.derived.record()?;
            let target = match slot.copies.len() {
                2 => 1 - slot.latest,
                n => {
                    slot.copies.push(HostCopy {
                        host: gpu.pinned(self.cells)?,
                        copied: gpu.marker()?,
                        epoch: 0,
                        step: 0,
                    });
                    n
                }
            };
            // A copy is only ever written by the copy stream, in order: the previous one's
            // copy (into the other buffer) was enqueued before, and reads wait for `copied`.
            let copy = &mut slot.copies[target];
            gpu.wait_event(Stream::Copy, &slot.derived)?;
            gpu.download_on(Stream::Copy, &mut copy.host, &slot.dev, self.cells)?;
            copy.copied.record_on(Stream::Copy)?;
            copy.epoch = epoch;
            copy.step = self.step;
            slot.latest = target;
            slot.name.clear();
            slot.name.push_str(name);
        }
        Ok(())
    }

    fn slot(&self, name: &str) -> &Slot<T> {
        self.slots
            .iter()
            .find(|s| s.name == name && s.holds(self.epoch))
            .expect("prefetch leaves a current slot for the name")
    }

    /// Waits for `copy` and widens it into `out`.
    fn land(cells: usize, copy: &HostCopy<T>, out: &mut Vec<f64>) -> Result<(), CudaError> {
        copy.copied.sync()?;
        out.resize(cells, 0.0);
        // In parallel: widening 4096^2 values on one core takes longer than their copy.
        out.par_iter_mut()
            .zip(copy.host.as_slice().par_iter())
            .with_min_len(1 << 14)
            .for_each(|(o, v)| *o = v.f64());
        Ok(())
    }

    /// Field `name` of the current state into `out` (`cells` values, as f64): waits for its
    /// prefetched copy, or derives and copies it now if it was not prefetched.
    pub fn read(
        &mut self,
        name: &str,
        derive: impl Fn(&str, &DevBuf<T>) -> Result<(), CudaError>,
        out: &mut Vec<f64>,
    ) -> Result<(), CudaError> {
        self.prefetch(&[name], derive)?;
        Self::land(self.cells, self.slot(name).latest(), out)
    }

    /// Fields `names` of one state into `out` (one vector per name) for display, the previous
    /// prefetched state rather than a wait for a copy still under way (see the module
    /// documentation); returns the step count of the state read.
    pub fn read_shown(
        &mut self,
        names: &[&str],
        derive: impl Fn(&str, &DevBuf<T>) -> Result<(), CudaError>,
        out: &mut [Vec<f64>],
    ) -> Result<u64, CudaError> {
        self.prefetch(names, derive)?;
        let mut state = Vec::with_capacity(names.len());
        for name in names {
            let s = self.slot(name);
            state.push((s.latest().copied.done()?, s.previous().map(|c| c.epoch)));
        }
        let previous = choose(state.iter().copied(), self.prefetched[1]) == Choice::Previous;
        let mut step = self.step;
        for (name, out) in names.iter().zip(out) {
            let s = self.slot(name);
            let copy = if previous {
                s.previous().expect("chosen only when every name has one")
            } else {
                s.latest()
            };
            step = copy.step;
            Self::land(self.cells, copy, out)?;
        }
        Ok(step)
    }

    /// `Solver::field` of a CUDA solver whose fields are `fields`: `None` for another name or
    /// (logged) a failed read.
    pub fn solver_field(
        &mut self,
        fields: &[&str],
        name: &str,
        derive: impl Fn(&str, &DevBuf<T>) -> Result<(), CudaError>,
        out: &mut Vec<f64>,
    ) -> Option<()> {
        if !fields.contains(&name) {
            return None;
        }
        self.read(name, derive, out)
            .map_err(|e| log::error!("reading field {name} back from the GPU failed: {e}"))
            .ok()
    }

    /// `Solver::display_fields` of a CUDA solver whose fields are `fields`: `None` if a name is
    /// not among them or (logged) a failed read.
    pub fn solver_display(
        &mut self,
        fields: &[&str],
        names: &[&str],
        derive: impl Fn(&str, &DevBuf<T>) -> Result<(), CudaError>,
        out: &mut [Vec<f64>],
    ) -> Option<u64> {
        if !names.iter().all(|n| fields.contains(n)) {
            return None;
        }
        self.read_shown(names, derive, out)
            .map_err(|e| log::error!("reading fields {names:?} back from the GPU failed: {e}"))
            .ok()
    }

    /// `Solver::prefetch` of a CUDA solver whose fields are `fields`: other names are skipped,
    /// a failure is logged (the later `field` call reports it again).
    pub fn solver_prefetch(
        &mut self,
        fields: &[&str],
        names: &[&str],
        derive: impl Fn(&str, &DevBuf<T>) -> Result<(), CudaError>,
    ) {
        let known: Vec<&str> = names.iter().copied().filter(|n| fields.contains(n)).collect();
        if let Err(e) = self.prefetch(&known, derive) {
            log::error!("starting the readback of {known:?} from the GPU failed: {e}");
        }
    }
}

impl<T> Drop for Readback<T> {
    /// Lets the copies in flight end before their buffers are freed.
    fn drop(&mut self) {
        let _ = self.gpu.bind();
        let _ = self.gpu.sync_on(Stream::Copy);
    }
}

#[cfg(test)]
mod tests {
    use super::{Choice, Pick, choose, pick};

    fn slots<'a>(s: &'a [(&'a str, bool)]) -> impl Iterator<Item = (&'a str, bool)> + Clone + 'a {
        s.iter().copied()
    }

    #[test]
    fn a_current_field_is_not_derived_again() {
        assert_eq!(pick(slots(&[("u", true), ("v", true)]), "v"), Pick::Current(1));
    }

    #[test]
    fn a_name_keeps_its_slot_after_the_state_changed() {
        assert_eq!(pick(slots(&[("u", false), ("v", false)]), "v"), Pick::Derive(1));
    }

    #[test]
    fn a_new_name_takes_a_slot_of_no_current_field_before_allocating() {
        assert_eq!(pick(slots(&[("u", true), ("v", false)]), "p"), Pick::Derive(1));
        assert_eq!(pick(slots(&[("u", true), ("v", true)]), "p"), Pick::New);
        assert_eq!(pick(slots(&[]), "p"), Pick::New);
    }

    #[test]
    fn shown_fields_are_of_the_current_state_once_all_of_its_copies_landed() {
        let names = [(true, Some(3)), (true, None)];
        assert_eq!(choose(names.iter().copied(), 3), Choice::Current);
    }

    #[test]
    fn shown_fields_are_of_the_previous_state_while_a_current_copy_is_under_way() {
        let names = [(true, Some(3)), (false, Some(3))];
        assert_eq!(choose(names.iter().copied(), 3), Choice::Previous);
    }

    #[test]
    fn shown_fields_never_mix_states() {
        // No common previous state (a name was not shown then, or shown at another state):
        // wait for the current one rather than draw fields of two states together.
        for names in [
            [(false, Some(3)), (true, Some(2))],
            [(false, Some(3)), (false, None)],
        ] {
            assert_eq!(choose(names.iter().copied(), 3), Choice::Current);
        }
    }

    #[test]
    fn shown_fields_are_never_older_than_the_last_prefetch_before_the_current_state() {
        // The field was last copied at state 2, but state 3 was prefetched since (of other
        // fields): showing state 2 now would jump back in time.
        let names = [(false, Some(2))];
        assert_eq!(choose(names.iter().copied(), 3), Choice::Current);
    }
}
