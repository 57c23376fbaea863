//! The 2D view's fields drawn straight from the solver's GPU (issue 23): buffers the renderer's
//! Vulkan device allocates and exports ([`shared_buffer`]), imported into the CUDA solver's
//! context once; each frame the solver narrows the shown fields into them on the device
//! ([`Solver::display_fields_on_device`]) and the scene binds them as its field buffers. Only
//! each field's colour-scale statistics cross the bus.
//!
//! Two sets of buffers are written alternately. The CUDA writes end before
//! [`DeviceLink::read`] returns; before writing a set again, it waits for the submission that
//! last drew from it ([`DeviceLink::drawn`]), so CUDA never overwrites what Vulkan still reads.
//!
//! Where the renderer is not on Vulkan, the driver cannot export memory, the solver is not on
//! one CUDA device or that device is another GPU than the renderer's, the link refuses once
//! (with the reason, [`DeviceLink::refused`]) and the view reads fields on the host as before.
//! `FLOWLAB_DISPLAY_INTEROP=0` refuses it too, to measure or rule out the path.

use super::shared_buffer::{self, device_uuid};
use crate::backend::cuda::{Gpu, SharedBuffer};
use crate::solver::{Solver, ValueStats};
use std::sync::Arc;

/// One shown field's buffer, seen by wgpu and by CUDA.
struct Shared {
    /// Dropped before `buffer`: CUDA's mapping ends before Vulkan frees the memory.
    cuda: SharedBuffer,
    buffer: wgpu::Buffer,
}

/// The buffers of one CUDA device.
struct Link {
    gpu: Arc<Gpu>,
    /// Values per buffer.
    cells: usize,
    sets: [Vec<Shared>; 2],
    /// The submission that last drew from each set.
    drawn: [Option<wgpu::SubmissionIndex>; 2],
    /// The set written last (the one the frame shows).
    shown: usize,
}

/// The renderer's side of fields drawn from the device: the wgpu device and, once a solver's
/// CUDA device was linked, the shared buffers.
pub struct DeviceLink {
    device: wgpu::Device,
    link: Option<Link>,
    /// Why fields are read on the host instead (for the CUDA device of that ordinal).
    refused: Option<(usize, String)>,
}

/// The result of one [`DeviceLink::read`]: the state's step count and, per shown field, its
/// buffer (a handle the scene binds) and colour-scale statistics.
pub struct DeviceRead {
    pub step: u64,
    pub buffers: Vec<wgpu::Buffer>,
    pub stats: Vec<ValueStats>,
}

/// Whether `FLOWLAB_DISPLAY_INTEROP` allows the path (anything but `0`).
pub fn interop_enabled() -> bool {
    std::env::var("FLOWLAB_DISPLAY_INTEROP").map_or(true, |v| v != "0")
}

impl DeviceLink {
    pub fn new(device: &wgpu::Device) -> DeviceLink {
        DeviceLink {
            device: device.clone(),
            link: None,
            refused: None,
        }
    }

    /// Why the last solver's fields are read on the host, if they are.
    pub fn refused(&self) -> Option<&str> {
        self.refused.as_ref().map(|(_, why)| why.as_str())
    }

    /// Whether the link is made (fields last drawn from the device).
    pub fn linked(&self) -> bool {
        self.link.is_some()
    }

    /// Writes fields `names` of `solver`'s display state (`cells` values each) into the shared
    /// buffers, with the sample of the fields where `samples`; `None` if this solver's fields
    /// cannot be drawn from the device (see [`DeviceLink::refused`]) or the solver refused the
    /// names, and the caller reads them on the host.
    pub fn read(
        &mut self,
        solver: &dyn Solver,
        names: &[&str],
        samples: &[bool],
        cells: usize,
    ) -> Option<DeviceRead> {
        let gpu = solver.display_device()?;
        if self
            .refused
            .as_ref()
            .is_some_and(|(ordinal, _)| *ordinal == gpu.ordinal)
        {
            return None;
        }
        if let Err(why) = self.prepare(&gpu, names.len(), cells) {
            log::info!("the view reads fields on the host: {why}");
            self.link = None;
            self.refused = Some((gpu.ordinal, why));
            return None;
        }
        let link = self.link.as_mut().expect("prepared");
        let set = 1 - link.shown;
        if let Some(index) = link.drawn[set].take() {
            let wait = wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: None,
            };
            if let Err(e) = self.device.poll(wait) {
                log::error!("waiting for the view's last draw failed: {e}");
                return None;
            }
        }
        let shared = &link.sets[set][..names.len()];
        let targets: Vec<&SharedBuffer> = shared.iter().map(|s| &s.cuda).collect();
        let mut stats = vec![ValueStats::default(); names.len()];
        let step = solver.display_fields_on_device(names, &targets, samples, &mut stats)?;
        link.shown = set;
        Some(DeviceRead {
            step,
            buffers: shared.iter().map(|s| s.buffer.clone()).collect(),
            stats,
        })
    }

    /// Records that `index` drew the buffers of the last [`DeviceLink::read`].
    pub fn drawn(&mut self, index: wgpu::SubmissionIndex) {
        if let Some(link) = &mut self.link {
            link.drawn[link.shown] = Some(index);
        }
    }

    /// Links `gpu` (again, if it is another device or the sizes changed), with `fields` buffers
    /// of `cells` values per set.
    fn prepare(&mut self, gpu: &Arc<Gpu>, fields: usize, cells: usize) -> Result<(), String> {
        let same = self
            .link
            .as_ref()
            .is_some_and(|l| Arc::ptr_eq(&l.gpu, gpu) && l.cells == cells);
        if !same {
            if !interop_enabled() {
                return Err("FLOWLAB_DISPLAY_INTEROP=0".into());
            }
            let vulkan = device_uuid(&self.device).ok_or("the renderer does not run on Vulkan")?;
            let cuda = gpu.uuid().map_err(|e| e.to_string())?;
            if vulkan != cuda {
                return Err(format!(
                    "the renderer's GPU is not the solver's CUDA device {}",
                    gpu.ordinal
                ));
            }
            // Any previous link's buffers are released after their last draw.
            if self.link.take().is_some() {
                let _ = self.device.poll(wgpu::PollType::wait_indefinitely());
            }
            self.link = Some(Link {
                gpu: gpu.clone(),
                cells,
                sets: [Vec::new(), Vec::new()],
                drawn: [None, None],
                shown: 1,
            });
        }
        let link = self.link.as_mut().expect("made above");
        for set in &mut link.sets {
            while set.len() < fields {
                let exported = shared_buffer::export(&self.device, cells)?;
                // SAFETY: the descriptor is of `exported.allocation` bytes on this GPU (UUIDs
                // checked), kept allocated by `buffer`, which outlives the import (field order).
                let cuda = unsafe { gpu.import(exported.fd, exported.allocation, cells) }
                    .map_err(|e| e.to_string())?;
                set.push(Shared {
                    cuda,
                    buffer: exported.buffer,
                });
            }
        }
        Ok(())
    }
}
