//! The view's fields drawn straight from the solver's GPU (issues 23, 21): buffers the
//! renderer's Vulkan device allocates and exports ([`shared_buffer`]), imported into the CUDA
//! solver's context once; each frame the solver narrows the shown fields into them on the
//! device, a 3D state's slice cut there too ([`Solver::display_fields_on_device`]), and the 2D
//! scene, the slice in the 3D view and the isosurface extraction bind them as their field
//! buffers. Only each field's colour-scale statistics cross the bus.
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
use crate::solver::display;
use crate::solver::{DisplayTarget, PlaneCut, Solver, ValueStats};
use std::sync::Arc;

/// One shown field's buffer, seen by wgpu and by CUDA.
struct Shared {
    /// Dropped before `buffer`: CUDA's mapping ends before Vulkan frees the memory.
    cuda: SharedBuffer,
    buffer: wgpu::Buffer,
    values: usize,
}

/// The buffers of one CUDA device.
struct Link {
    gpu: Arc<Gpu>,
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
    /// Why fields are read on the host instead, for the solver's device of that address (a
    /// rebuilt solver, with its own context, is tried again).
    refused: Option<(usize, String)>,
}

/// One field a view asks for: the whole field or a plane of it, with the sample its colour
/// scale needs or not.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    pub name: &'a str,
    pub plane: Option<PlaneCut>,
    pub sample: bool,
}

/// The result of one [`DeviceLink::read`]: the state's step count and, per request, its buffer
/// (a handle the scene binds) and colour-scale statistics.
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

    /// Writes the `requests` of `solver`'s display state (whole fields of `cells` values, or
    /// planes of them) into the shared buffers; `None` if this solver's fields cannot be drawn
    /// from the device (see [`DeviceLink::refused`]) or the solver refused a name, and the
    /// caller reads them on the host.
    pub fn read(&mut self, solver: &dyn Solver, requests: &[Request], cells: usize) -> Option<DeviceRead> {
        let gpu = solver.display_device()?;
        let key = Arc::as_ptr(&gpu) as usize;
        if self.refused.as_ref().is_some_and(|(refused, _)| *refused == key) {
            return None;
        }
        let sizes: Vec<usize> = requests
            .iter()
            .map(|r| display::shown_values(r.plane.as_ref(), cells))
            .collect();
        let set = match self.prepare(&gpu, &sizes) {
            Ok(set) => set,
            Err(why) => {
                log::info!("the view reads fields on the host: {why}");
                self.link = None;
                self.refused = Some((key, why));
                return None;
            }
        };
        let link = self.link.as_mut().expect("prepared");
        let shared = &link.sets[set][..requests.len()];
        let targets: Vec<DisplayTarget> = shared
            .iter()
            .zip(requests)
            .map(|(s, r)| DisplayTarget {
                buffer: &s.cuda,
                plane: r.plane,
                sample: r.sample,
            })
            .collect();
        let names: Vec<&str> = requests.iter().map(|r| r.name).collect();
        let mut stats = vec![ValueStats::default(); requests.len()];
        let Some(step) = solver.display_fields_on_device(&names, &targets, &mut stats) else {
            // Not tried again for this device: each try and its fallback would change the
            // solver's copies from device to host memory and back every frame.
            let why = "the solver did not write its fields on the device (see the log)";
            log::info!("the view reads fields on the host: {why}");
            self.refused = Some((key, why.into()));
            return None;
        };
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

    /// Links `gpu` (again, if it is another device) and returns the set to write next, once the
    /// submission that drew it last has ended, with buffers of at least `sizes` values.
    fn prepare(&mut self, gpu: &Arc<Gpu>, sizes: &[usize]) -> Result<usize, String> {
        if !self.link.as_ref().is_some_and(|l| Arc::ptr_eq(&l.gpu, gpu)) {
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
                sets: [Vec::new(), Vec::new()],
                drawn: [None, None],
                shown: 1,
            });
        }
        let link = self.link.as_mut().expect("made above");
        let set = 1 - link.shown;
        if let Some(index) = link.drawn[set].take() {
            let wait = wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: None,
            };
            self.device
                .poll(wait)
                .map_err(|e| format!("waiting for the view's last draw failed: {e}"))?;
        }
        let buffers = &mut link.sets[set];
        for (k, &values) in sizes.iter().enumerate() {
            if buffers.get(k).is_some_and(|b| b.values >= values) {
                continue;
            }
            let exported = shared_buffer::export(&self.device, values)?;
            // SAFETY: the descriptor is of `exported.allocation` bytes on this GPU (UUIDs
            // checked), kept allocated by `buffer`, which outlives the import (field order).
            let cuda =
                unsafe { gpu.import(exported.fd, exported.allocation, values) }.map_err(|e| e.to_string())?;
            let shared = Shared {
                cuda,
                buffer: exported.buffer,
                values,
            };
            if k < buffers.len() {
                buffers[k] = shared;
            } else {
                buffers.push(shared);
            }
        }
        Ok(set)
    }
}
