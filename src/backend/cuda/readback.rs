//! Asynchronous readback of displayed fields: a field is derived on the device (by the solver's
//! kernels of `kernels/display.cu`) into a cell-centred display buffer of `nx * ny` values of the
//! solver's precision (`x` fastest, as [`crate::solver::Solver::field`]), then copied to pinned
//! host memory on the copy stream, so only the fields on screen cross the bus, one value per
//! cell, and the copy overlaps whatever the compute stream does next.
//!
//! Each field name has a slot: a display buffer, a pinned buffer of the same size and two
//! events. [`Readback::prefetch`] enqueues, per name, on the compute stream (after the last step
//! enqueued there): a wait for the slot's previous copy (so the derivation cannot overwrite a
//! display buffer that is still being copied), the derivation, and the event `derived`; then on
//! the copy stream a wait for `derived`, the device-to-pinned copy and the event `copied`. The
//! host does not wait. [`Readback::read`] waits for `copied` only (a prefetched field of the
//! current state), or prefetches the one field first and then waits (the synchronous path). The
//! solver calls [`Readback::invalidate`] whenever its state changes, so a slot never answers for
//! another state than the one it was derived from.
//!
//! Slots are reused: a name keeps its slot, a new name takes a slot that holds no current field,
//! and only when every slot holds a field of the current state is another allocated, so there
//! are as many slots as names read between two state changes (at most the solver's field count).

use super::{CudaError, DevBuf, Event, Gpu, Pinned, Stream};
use crate::solver::real::Real;
use rayon::prelude::*;
use std::sync::Arc;

struct Slot<T> {
    name: String,
    dev: DevBuf<T>,
    host: Pinned<T>,
    /// Recorded on the compute stream after the derivation into `dev`.
    derived: Event,
    /// Recorded on the copy stream after the copy from `dev` into `host`.
    copied: Event,
    /// Whether the slot's last derivation was of the current state.
    fresh: bool,
}

/// What [`Readback`] does for a name, given each slot's (name, fresh).
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

/// The display buffers, pinned staging buffers and events of one solver's field readback.
pub struct Readback<T> {
    gpu: Arc<Gpu>,
    /// Values per field (`nx * ny`).
    cells: usize,
    slots: Vec<Slot<T>>,
}

impl<T: Real> Readback<T> {
    /// Readback of fields of `cells` values; nothing is allocated before the first field.
    pub fn new(gpu: &Arc<Gpu>, cells: usize) -> Self {
        Readback {
            gpu: gpu.clone(),
            cells,
            slots: Vec::new(),
        }
    }

    /// The state changed: no slot holds a current field any more.
    pub fn invalidate(&mut self) {
        for s in &mut self.slots {
            s.fresh = false;
        }
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
        for &name in names {
            let k = match pick(self.slots.iter().map(|s| (s.name.as_str(), s.fresh)), name) {
                Pick::Current(_) => continue,
                Pick::Derive(k) => k,
                Pick::New => {
                    self.slots.push(Slot {
                        name: String::new(),
                        dev: self.gpu.alloc(self.cells)?,
                        host: self.gpu.pinned(self.cells)?,
                        derived: self.gpu.marker()?,
                        copied: self.gpu.marker()?,
                        fresh: false,
                    });
                    self.slots.len() - 1
                }
            };
            let gpu = &self.gpu;
            let slot = &mut self.slots[k];
            gpu.wait_event(Stream::Compute, &slot.copied)?;
            derive(name, &slot.dev)?;
            slot.derived.record()?;
            gpu.wait_event(Stream::Copy, &slot.derived)?;
            gpu.download_on(Stream::Copy, &mut slot.host, &slot.dev, self.cells)?;
            slot.copied.record_on(Stream::Copy)?;
            slot.name.clear();
            slot.name.push_str(name);
            slot.fresh = true;
        }
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
        let slot = self
            .slots
            .iter()
            .find(|s| s.name == name && s.fresh)
            .expect("prefetch leaves a current slot for the name");
        slot.copied.sync()?;
        out.resize(self.cells, 0.0);
        // In parallel: widening 4096^2 values on one core takes longer than their copy.
        out.par_iter_mut()
            .zip(slot.host.as_slice().par_iter())
            .with_min_len(1 << 14)
            .for_each(|(o, v)| *o = v.f64());
        Ok(())
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
    use super::{Pick, pick};

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
}
