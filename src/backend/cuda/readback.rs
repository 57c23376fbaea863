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
//! Drawn from the device: when the renderer draws the fields from device memory it shares with
//! CUDA ([`Readback::read_shown_on_device`]), the copies are device buffers instead: `prefetch`
//! derives each field straight into the slot's other device copy on the compute stream (no
//! copy at all), and the display read narrows the chosen copy into the renderer's buffer and
//! computes its colour-scale statistics on the copy stream (`kernels/shown_field.cu`), reading
//! back a few kilobytes. The kind of copy follows the last display read (host or device);
//! changing it drops every slot. [`Readback::read`] answers from either kind.
//!
//! Slots are reused: a name keeps its slot, a new name takes a slot that holds no current field,
//! and only when every slot holds a field of the current state is another allocated, so there
//! are as many slots as names read between two state changes (at most the solver's field count).

use super::slots::SHOWN_BLOCK;
use super::{Arg, Args, CudaError, DevBuf, Event, Gpu, Kernel, KernelSet, Module, Pinned, Stream};
use crate::solver::display::{self, DisplayTarget, PlaneCut, ValueStats};
use crate::solver::real::Real;
use rayon::prelude::*;
use std::sync::Arc;

/// Where a copy of a display buffer is held.
enum Held<T> {
    /// Pinned host memory, copied into on the copy stream.
    Host(Pinned<T>),
    /// Device memory, derived into on the compute stream (the view draws from the device).
    Device(DevBuf<T>),
}

/// One copy of a display buffer.
struct HeldCopy<T> {
    held: Held<T>,
    /// Recorded after the copy into `held` (on the copy stream; for a device copy, after the
    /// derivation into it on the compute stream).
    copied: Event,
    /// The state (`Readback::epoch`) and its step count that `held` holds or is receiving.
    epoch: u64,
    step: u64,
}

struct Slot<T> {
    name: String,
    /// The display buffer host copies are made from (allocated with the first host copy).
    dev: Option<DevBuf<T>>,
    /// Recorded on the compute stream after the derivation into `dev`.
    derived: Event,
    /// At most two; `copies[latest]` is the last one started.
    copies: Vec<HeldCopy<T>>,
    latest: usize,
}

impl<T> Slot<T> {
    /// Whether the slot's last derivation was of state `epoch`.
    fn holds(&self, epoch: u64) -> bool {
        self.copies.get(self.latest).is_some_and(|c| c.epoch == epoch)
    }

    fn latest(&self) -> &HeldCopy<T> {
        &self.copies[self.latest]
    }

    /// The copy before the latest one, if there is one.
    fn previous(&self) -> Option<&HeldCopy<T>> {
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
    /// Whether `prefetch` makes device copies (the last display read drew from the device).
    on_device: bool,
    /// Host staging for reading a device copy ([`Readback::read`]).
    staging: Option<Pinned<T>>,
    /// The display kernels and buffers of [`Readback::read_shown_on_device`] (made at its first
    /// call).
    shown: Option<ShownKernels>,
}

/// Blocks of the statistics kernel: partial results per field.
const STATS_BLOCKS: usize = 1024;

/// `kernels/shown_field.cu` in the solver's precision and its result buffers, sized for
/// `fields` fields (3 partials a block, then a sample of at most
/// [`display::SAMPLE_VALUES`], per field).
struct ShownKernels {
    _module: Module,
    narrow: Kernel,
    cut: Kernel,
    stats: Kernel,
    sample: Kernel,
    fields: usize,
    dev: DevBuf<f32>,
    host: Pinned<f32>,
}

/// `shown_narrow`'s arguments: `values` values from `src` (the solver's precision) to `dst`.
fn narrow_args(src: u64, dst: u64, values: usize) -> Args {
    Args::new().arg(Arg::Ptr(src)).arg(Arg::Ptr(dst)).l(values as i64)
}

/// `shown_cut`'s arguments: plane `c` of `src` into `dst`.
fn cut_args(src: u64, dst: u64, c: &PlaneCut) -> Args {
    let [p, q] = c.plane_axes;
    let n = c.n.map(|m| m as i64);
    Args::new()
        .arg(Arg::Ptr(src))
        .arg(Arg::Ptr(dst))
        .l(n[0])
        .l(n[1])
        .l(n[2])
        .i(c.axis as i64)
        .i(p as i64)
        .i(q as i64)
        .l(c.lo as i64)
        .l(c.hi as i64)
        .d(c.t)
}

/// `shown_stats`' arguments: `values` values of `field`, partials into `partials`.
fn stats_args(field: u64, values: usize, partials: u64) -> Args {
    Args::new()
        .arg(Arg::Ptr(field))
        .l(values as i64)
        .arg(Arg::Ptr(partials))
}

/// `shown_sample`'s arguments: every `stride`-th of `field`, `count` of them, into `sample`.
fn sample_args(field: u64, stride: usize, count: usize, sample: u64) -> Args {
    Args::new()
        .arg(Arg::Ptr(field))
        .l(stride as i64)
        .l(count as i64)
        .arg(Arg::Ptr(sample))
}

/// Per-field floats of [`ShownKernels`]' buffers.
const SHOWN_FLOATS: usize = 3 * STATS_BLOCKS + display::SAMPLE_VALUES;

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
            on_device: false,
            staging: None,
            shown: None,
        }
    }

    /// Makes `prefetch` hold its copies on the device (`true`) or the host; a change drops
    /// every slot once the copies in flight ended.
    fn hold_on_device(&mut self, device: bool) -> Result<(), CudaError> {
        if self.on_device != device {
            self.gpu.bind()?;
            self.gpu.sync_on(Stream::Copy)?;
            self.gpu.sync()?;
            self.slots.clear();
            self.prefetched = [0; 2];
            self.on_device = device;
        }
        Ok(())
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
                        dev: None,
                        derived: self.gpu.marker()?,
                        copies: Vec::with_capacity(2),
                        latest: 0,
                    });
                    self.slots.len() - 1
                }
            };
            let gpu = &self.gpu;
            let slot = &mut self.slots[k];
            let target = match slot.copies.len() {
                2 => 1 - slot.latest,
                n => {
                    let held = if self.on_device {
                        Held::Device(gpu.alloc(self.cells)?)
                    } else {
                        Held::Host(gpu.pinned(self.cells)?)
                    };
                    slot.copies.push(HeldCopy {
                        held,
                        copied: gpu.marker()?,
                        epoch: 0,
                        step: 0,
                    });
                    n
                }
            };
            if self.on_device {
                // Derived straight into the copy: the display read that drew from it last has
                // ended (it waits for its kernels), and nothing else reads it.
                let copy = &mut slot.copies[target];
                let Held::Device(dst) = &copy.held else {
                    unreachable!("a slot's copies are all of the kind prefetch makes")
                };
                derive(name, dst)?;
                copy.copied.record()?;
            } else {
                if let Some(last) = slot.copies.get(slot.latest) {
                    gpu.wait_event(Stream::Compute, &last.copied)?;
                }
                let src = match &mut slot.dev {
                    Some(d) => &*d,
                    d => d.insert(gpu.alloc(self.cells)?),
                };
                derive(name, src)?;
                slot.derived.record()?;
                // A copy is only ever written by the copy stream, in order: the previous one's
                // copy (into the other buffer) was enqueued before, and reads wait for `copied`.
                let copy = &mut slot.copies[target];
                let Held::Host(host) = &mut copy.held else {
                    unreachable!("a slot's copies are all of the kind prefetch makes")
                };
                gpu.wait_event(Stream::Copy, &slot.derived)?;
                gpu.download_on(Stream::Copy, host, src, self.cells)?;
                copy.copied.record_on(Stream::Copy)?;
            }
            let copy = &mut slot.copies[target];
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

    /// Waits for `copy` and widens it into `out` (a device copy through `staging`).
    fn land(
        gpu: &Arc<Gpu>,
        cells: usize,
        copy: &HeldCopy<T>,
        staging: &mut Option<Pinned<T>>,
        out: &mut Vec<f64>,
    ) -> Result<(), CudaError> {
        let host = match &copy.held {
            Held::Host(host) => {
                copy.copied.sync()?;
                host
            }
            Held::Device(dev) => {
                let staging = match staging {
                    Some(s) => s,
                    s => s.insert(gpu.pinned(cells)?),
                };
                gpu.wait_event(Stream::Copy, &copy.copied)?;
                gpu.download_on(Stream::Copy, staging, dev, cells)?;
                gpu.sync_on(Stream::Copy)?;
                &*staging
            }
        };
        out.resize(cells, 0.0);
        // In parallel: widening 4096^2 values on one core takes longer than their copy.
        out.par_iter_mut()
            .zip(host.as_slice().par_iter())
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
        let mut staging = self.staging.take();
        let landed = Self::land(&self.gpu, self.cells, self.slot(name).latest(), &mut staging, out);
        self.staging = staging;
        landed
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
        self.hold_on_device(false)?;
        self.prefetch(names, derive)?;
        let previous = self.shows_previous(names)?;
        let mut step = self.step;
        let mut staging = self.staging.take();
        for (name, out) in names.iter().zip(out) {
            let copy = self.shown_copy(name, previous);
            step = copy.step;
            if let Err(e) = Self::land(&self.gpu, self.cells, copy, &mut staging, out) {
                self.staging = staging;
                return Err(e);
            }
        }
        self.staging = staging;
        Ok(step)
    }

    /// Whether the display shows the previous prefetched state of `names` rather than the
    /// current one (see [`choose`]).
    fn shows_previous(&self, names: &[&str]) -> Result<bool, CudaError> {
        let mut state = Vec::with_capacity(names.len());
        for name in names {
            let s = self.slot(name);
            state.push((s.latest().copied.done()?, s.previous().map(|c| c.epoch)));
        }
        Ok(choose(state.iter().copied(), self.prefetched[1]) == Choice::Previous)
    }

    /// The copy of `name` the display shows.
    fn shown_copy(&self, name: &str, previous: bool) -> &HeldCopy<T> {
        let s = self.slot(name);
        if previous {
            s.previous().expect("chosen only when every name has one")
        } else {
            s.latest()
        }
    }

    /// Fields `names` of one state for display written into the renderer's buffers (target
    /// `i` of `names[i]`: the whole field, or a plane of it) instead of the host, as
    /// [`Readback::read_shown`] chooses the state; `stats[i]` receives what target `i` holds's
    /// colour-scale statistics, with the sample where the target asks for it. A name may come
    /// more than once (a plane and the whole field). Returns the step count of the state
    /// written; the buffers hold it when this returns.
    pub fn read_shown_on_device(
        &mut self,
        names: &[&str],
        derive: impl Fn(&str, &DevBuf<T>) -> Result<(), CudaError>,
        targets: &[DisplayTarget],
        stats: &mut [ValueStats],
    ) -> Result<u64, CudaError> {
        assert!(
            names.len() == targets.len() && names.len() == stats.len(),
            "one target per name"
        );
        for t in targets {
            let values = t.values(self.cells);
            if t.plane
                .is_some_and(|p| p.n.iter().product::<usize>() != self.cells)
            {
                return Err(CudaError(format!(
                    "a plane of a {:?} grid was asked of a field of {} cells",
                    t.plane.map(|p| p.n),
                    self.cells
                )));
            }
            if t.buffer.buf().len < values {
                return Err(CudaError(format!(
                    "the renderer's buffer holds {} values; the field has {values}",
                    t.buffer.buf().len
                )));
            }
        }
        self.hold_on_device(true)?;
        self.prefetch(names, derive)?;
        let previous = self.shows_previous(names)?;
        if self.shown.as_ref().is_none_or(|k| k.fields < names.len()) {
            self.shown = None;
            let module = self.gpu.module(KernelSet::ShownField, T::NAME)?;
            self.shown = Some(ShownKernels {
                narrow: module.function("shown_narrow")?,
                cut: module.function("shown_cut")?,
                stats: module.function("shown_stats")?,
                sample: module.function("shown_sample")?,
                _module: module,
                fields: names.len(),
                dev: self.gpu.alloc(names.len() * SHOWN_FLOATS)?,
                host: self.gpu.pinned(names.len() * SHOWN_FLOATS)?,
            });
        }
        let k = self.shown.as_ref().expect("made above");
        let gpu = &self.gpu;
        let blocks = |count: usize| {
            (
                count.div_ceil(SHOWN_BLOCK as usize).clamp(1, STATS_BLOCKS) as u32,
                1,
                1,
            )
        };
        let block = (SHOWN_BLOCK, 1, 1);
        let mut step = self.step;
        for (i, (name, target)) in names.iter().zip(targets).enumerate() {
            let copy = self.shown_copy(name, previous);
            step = copy.step;
            let Held::Device(src) = &copy.held else {
                unreachable!("hold_on_device(true) makes device copies")
            };
            let values = target.values(self.cells);
            let stride = display::sample_stride(values);
            let region = k.dev.ptr + (i * SHOWN_FLOATS * 4) as u64;
            let (partials, sample) = (region, region + (3 * STATS_BLOCKS * 4) as u64);
            let dst = target.buffer.buf();
            gpu.wait_event(Stream::Copy, &copy.copied)?;
            // SAFETY: `src` holds `cells` values, `dst` at least `values` (checked above); the
            // region holds STATS_BLOCKS blocks' partials, then SAMPLE_VALUES values, which is at
            // least `values / stride`.
            unsafe {
                let (src, dst) = (src.ptr, dst.ptr);
                match &target.plane {
                    None => {
                        let narrow = narrow_args(src, dst, values);
                        gpu.launch_on(Stream::Copy, k.narrow, (blocks(values), block), &narrow, false)?;
                    }
                    Some(c) => {
                        let cut = cut_args(src, dst, c);
                        gpu.launch_on(Stream::Copy, k.cut, (blocks(values), block), &cut, false)?;
                    }
                }
                let reduce = stats_args(dst, values, partials);
                gpu.launch_on(
                    Stream::Copy,
                    k.stats,
                    ((STATS_BLOCKS as u32, 1, 1), block),
                    &reduce,
                    false,
                )?;
                if target.sample {
                    let count = values.div_ceil(stride);
                    let take = sample_args(dst, stride, count, sample);
                    gpu.launch_on(Stream::Copy, k.sample, (blocks(count), block), &take, false)?;
                }
            }
        }
        let k = self.shown.as_mut().expect("made above");
        gpu.download_on(Stream::Copy, &mut k.host, &k.dev, names.len() * SHOWN_FLOATS)?;
        gpu.sync_on(Stream::Copy)?;
        for (i, (s, target)) in stats.iter_mut().zip(targets).enumerate() {
            let values = target.values(self.cells);
            let region = &k.host.as_slice()[i * SHOWN_FLOATS..(i + 1) * SHOWN_FLOATS];
            let (partials, sample) = region.split_at(3 * STATS_BLOCKS);
            let sample = if target.sample {
                sample[..values.div_ceil(display::sample_stride(values))].to_vec()
            } else {
                Vec::new()
            };
            *s = ValueStats::from_partials(partials, sample);
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

    /// `Solver::display_fields_on_device` of a CUDA solver whose fields are `fields`: `None` if
    /// a name is not among them or (logged) a failed read.
    pub fn solver_display_on_device(
        &mut self,
        fields: &[&str],
        names: &[&str],
        derive: impl Fn(&str, &DevBuf<T>) -> Result<(), CudaError>,
        targets: &[DisplayTarget],
        stats: &mut [ValueStats],
    ) -> Option<u64> {
        if !names.iter().all(|n| fields.contains(n)) {
            return None;
        }
        self.read_shown_on_device(names, derive, targets, stats)
            .map_err(|e| log::error!("writing fields {names:?} for the view on the GPU failed: {e}"))
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

/// The [`crate::solver::Solver`] methods through which a CUDA solver's fields leave it
/// (`field`, `prefetch`, `display_fields`, `display_fields_on_device`), for a solver with a
/// `readback: Mutex<Readback<T>>` and a method `derive(&self, name, dst)` that enqueues field
/// `name` into `dst`; `$fields` (an expression in `$s`, the receiver `self`) lists its fields.
macro_rules! readback_methods {
    ($s:ident, $fields:expr) => {
        fn field(&$s, name: &str, out: &mut Vec<f64>) -> Option<()> {
            let mut r = $s.readback.lock().expect("readback lock");
            r.solver_field($fields, name, |n, dst| $s.derive(n, dst), out)
        }

        fn prefetch(&$s, names: &[&str]) {
            let mut r = $s.readback.lock().expect("readback lock");
            r.solver_prefetch($fields, names, |n, dst| $s.derive(n, dst));
        }

        fn display_fields(&$s, names: &[&str], out: &mut [Vec<f64>]) -> Option<u64> {
            let mut r = $s.readback.lock().expect("readback lock");
            r.solver_display($fields, names, |n, dst| $s.derive(n, dst), out)
        }

        fn display_fields_on_device(
            &$s,
            names: &[&str],
            targets: &[$crate::solver::DisplayTarget],
            stats: &mut [$crate::solver::ValueStats],
        ) -> Option<u64> {
            let mut r = $s.readback.lock().expect("readback lock");
            r.solver_display_on_device($fields, names, |n, dst| $s.derive(n, dst), targets, stats)
        }
    };
}
pub(crate) use readback_methods;

impl<T> Drop for Readback<T> {
    /// Lets the copies in flight end before their buffers are freed.
    fn drop(&mut self) {
        let _ = self.gpu.bind();
        let _ = self.gpu.sync_on(Stream::Copy);
    }
}

#[cfg(test)]
mod tests {
    use super::{Choice, Pick, choose, cut_args, narrow_args, pick, sample_args, stats_args};
    use crate::backend::cuda::{ArgKind, KernelSet, compile_ptx, nvrtc_available};
    use crate::solver::PlaneCut;

    /// The display kernels' arguments as the readback passes them match their PTX parameters
    /// in both precisions (NVRTC only, no device): a mismatch would refuse every launch.
    #[test]
    fn the_shown_field_kernels_take_the_arguments_passed() {
        if !nvrtc_available() {
            eprintln!("skipped: no NVRTC");
            return;
        }
        let cut = PlaneCut {
            n: [4, 5, 6],
            axis: 0,
            plane_axes: [1, 2],
            lo: 1,
            hi: 2,
            t: 0.25,
        };
        for precision in ["f32", "f64"] {
            let ptx = compile_ptx(KernelSet::ShownField, precision, 2, (9, 0)).expect("compiles");
            for (name, args) in [
                ("shown_narrow", narrow_args(1, 2, 3)),
                ("shown_cut", cut_args(1, 2, &cut)),
                ("shown_stats", stats_args(1, 3, 2)),
                ("shown_sample", sample_args(1, 2, 3, 4)),
            ] {
                let kinds: Vec<ArgKind> = args.as_slice().iter().map(|a| a.kind()).collect();
                let entry = ptx.entry(name).unwrap_or_else(|| panic!("{name} in the PTX"));
                entry
                    .check(&kinds)
                    .unwrap_or_else(|e| panic!("{name} ({precision}): {e}"));
            }
        }
    }

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
