//! The GPU projection solver on one slab of a grid cut over several GPUs ([`crate::parallel`]):
//! what a part adds to [`CudaProjection`]. The slab is stepped by the single-GPU kernels on the
//! part's stored layers (walls where it meets another part, overwritten by the exchange); NCCL
//! refreshes the layers it stores but does not own after each velocity update and each pressure
//! sweep, and gathers the block partials of every reduction from all parts before the
//! single-GPU finalize kernels combine them.
//!
//! A pressure sweep hides its exchange behind its own work, as Thibault & Senocak (2009) do:
//! the own layers next to each neighbour are swept first, NCCL sends them on the exchange stream
//! while the compute stream sweeps the interior layers, and the compute stream waits for the
//! exchange only before the next sweep.
//!
//! In 3D the tile kernels' blocks each cover part of one z layer (their grid's z index is the
//! layer), so the blocks of a part's own layers are a contiguous run of its partials, and the
//! runs of all parts in part order are the single-GPU partials in the single-GPU order. Every
//! reduction first folds its block partials into one value per layer (and segment), on one GPU
//! as on a part (`fold_layers`): a part folds its own layers where they lie and gathers one
//! value per layer instead of the layer's blocks, and the finalize kernels, one block each, add
//! the layer sums in layer order (hundreds of values, not the hundreds of thousands of blocks of
//! a 512^3 grid). The finalize kernels so add the same numbers in the same order, and a
//! decomposed run gives the single-GPU result bit for bit. The 256-value blocks of the linear
//! kernels (`dot_partial`, `sum_partial`, `subtract_mean`) are launched over a part's own cells;
//! they fold by layer when a layer holds a multiple of 256 cells; else their blocks straddle
//! layers, are gathered unfolded, and the sums are the same to round-off.
//! 2D grids stay on one GPU: a 2D tile spans 32 rows, which a cut would split.

use super::jacobi_part::JacobiPipeline;
use super::phase_timing::PhaseTiming;
use super::solver::mirror_config;
use super::{B1, CudaProjection, blocks_tile, cells3, faces3};
use crate::backend::cuda::nccl::Nccl;
use crate::backend::cuda::{self, Args, CudaError, DevBuf, Event, Gpu, Stream};
use crate::case::Invalid;
use crate::parallel::SlabLink;
use crate::solver::Solver;
use crate::solver::incompressible::Projection;
use crate::solver::incompressible::config::Config;
use crate::solver::incompressible::decomposed::SlabPart;
use crate::solver::real::Real;
use std::ops::Range;
use std::sync::Arc;

/// Threads of a `fold_layers` block (a 512^2 layer has 256 tiles).
const FOLD_THREADS: u32 = 256;

/// Which kernel's block partials a reduction combines.
#[derive(Clone, Copy, Debug)]
pub(super) enum Partials {
    /// The tile kernels over the cells (`residual`, `jacobi_sweep`, `apply_dot`): one run of
    /// blocks per layer.
    Cells,
    /// The tile kernels over the faces (`correct`, `max_speed`), `n + 1` layers, `segments`
    /// runs of partials (`partial[s * blocks + block]`).
    Faces { segments: usize },
    /// The linear kernels (`dot_partial`, `sum_partial`, `subtract_mean`) launched over this
    /// part's own cells, 256 values a block.
    Linear,
}

impl Partials {
    /// The most segments a folded reduction has: the speed maxima's three (3D), the
    /// correction's two sums.
    const MAX_SEGMENTS: usize = 3;

    /// Values of a reduction folded by layer ([`CudaProjection::fold_layers`]) over a grid of
    /// `layers` cell layers along the cut axis: one per face layer and segment.
    pub(super) fn folded_len(layers: usize) -> usize {
        (layers + 1) * Self::MAX_SEGMENTS
    }

    /// Runs of partials (one per summed or maximised quantity).
    fn segments(self) -> usize {
        match self {
            Partials::Faces { segments } => segments,
            Partials::Cells | Partials::Linear => 1,
        }
    }

    /// Layers beyond the grid's last cell layer: the top face layer of the face kernels.
    fn extra_layers(self) -> usize {
        matches!(self, Partials::Faces { .. }) as usize
    }

    /// Whether a 3D grid of `n` cells folds these partials by layer
    /// ([`CudaProjection::fold_layers`]): always, except the linear kernels' where a layer is
    /// not a whole number of their blocks (their blocks then straddle layers).
    fn fold_by_layer(self, n: [usize; 3]) -> bool {
        !matches!(self, Partials::Linear) || (n[0] * n[1]).is_multiple_of(B1 as usize)
    }
}

/// A part's link to the other GPUs.
pub(super) struct GpuSlab<T> {
    pub(super) link: SlabLink,
    nccl: Nccl,
    /// The whole grid's configuration (time step limits, the pressure problem's singularity,
    /// the SOR factor, cell count).
    pub(super) whole: Config,
    /// Whether the whole grid's pressure problem is singular (no Dirichlet side).
    pub(super) singular: bool,
    /// Gathered partials of the sums and of the speed maxima (the latter kept from a correction
    /// to the next step's `dt`).
    pub(super) sums: DevBuf<T>,
    pub(super) maxima: DevBuf<T>,
    /// Timing of the NCCL calls (the communication share of a step) and, traced, of the
    /// step's other phases.
    pub(super) timing: PhaseTiming,
    /// Ordering of an overlapped sweep: its boundary layers swept (compute stream), their
    /// exchange done (exchange stream).
    swept: Event,
    exchanged: Event,
    /// Whether sweeps overlap their exchange ([`cuda::exchange_overlap_enabled`]).
    pub(super) overlap: bool,
    /// The pipelined Jacobi iteration's buffers (made at its first solve).
    pub(super) pipeline: Option<JacobiPipeline<T>>,
}

impl<T: Real> GpuSlab<T> {
    /// The link of `link`'s part of the grid of `whole`, whose pressure problem is `singular`
    /// or not (collective: builds the NCCL communicator).
    pub(super) fn new(
        gpu: &Arc<Gpu>,
        link: SlabLink,
        whole: Config,
        singular: bool,
    ) -> Result<Self, CudaError> {
        let nccl = Nccl::new(gpu.clone(), link.comm.as_ref())?;
        let n: [usize; 3] = std::array::from_fn(|a| whole.grid.n[a]);
        // The largest gathered reduction: the folded values, or, where a layer is not a whole
        // number of the linear kernels' blocks, those blocks (each part rounds its own cells up
        // to one).
        let folded = Partials::folded_len(n[2]);
        let linear = if Partials::Linear.fold_by_layer(n) {
            0
        } else {
            n.iter().product::<usize>().div_ceil(B1 as usize) + link.slabs.parts()
        };
        let len = folded.max(linear);
        Ok(Self {
            overlap: cuda::exchange_overlap_enabled(),
            pipeline: None,
            swept: gpu.marker()?,
            exchanged: gpu.marker()?,
            sums: gpu.alloc_zeros(len)?,
            maxima: gpu.alloc_zeros(len)?,
            nccl,
            link,
            whole,
            singular,
            timing: PhaseTiming::new(gpu, cuda::sweep_trace_enabled()),
        })
    }

    /// Part `r`'s own layers along the cut axis (global indices), with the last part's `extra`
    /// layers beyond the grid's last cell (the top face layer).
    fn own_layers(&self, r: usize, extra: usize) -> Range<usize> {
        let o = self.link.slabs.owned(r);
        let last = r + 1 == self.link.slabs.parts();
        o.start..o.end + if last { extra } else { 0 }
    }

    /// This part's own layers, as indices of its stored layers.
    pub(super) fn own_stored(&self) -> Range<usize> {
        self.own_stored_with(0)
    }

    /// [`Self::own_stored`] with the last part's `extra` layers beyond the grid's last cell.
    fn own_stored_with(&self, extra: usize) -> Range<usize> {
        let o = self.own_layers(self.link.rank(), extra);
        let off = self.link.offset();
        o.start - off..o.end - off
    }

    /// This part's own cells (`layer` cells a layer), as a range of its stored cells.
    pub(super) fn own_cells(&self, layer: usize) -> Range<usize> {
        let own = self.own_stored();
        own.start * layer..own.end * layer
    }

    /// Refreshes the layers of the arrays of `len` values at the device addresses `xs`
    /// (`layer_len` values a layer, `ghosts` ghost layers each side) that this part stores but
    /// does not own, in one NCCL group on `stream`.
    pub(super) fn exchange_at(
        &self,
        stream: Stream,
        xs: &[u64],
        len: usize,
        layer_len: usize,
        ghosts: usize,
    ) -> Result<(), CudaError> {
        self.timing.timed(stream, "nccl exchange", || {
            self.nccl
                .exchange::<T>(stream, xs, len, layer_len, crate::parallel::EXTENSION + ghosts)
        })
    }

    /// The own layers (indices of this part's box) next to a neighbour (what the neighbours
    /// receive), and the rest.
    pub(super) fn sweep_layers(&self) -> (Vec<Range<usize>>, Range<usize>) {
        let own = self.own_stored();
        let reach = crate::parallel::EXTENSION;
        let lo = if self.link.has_lower() {
            reach.min(own.len())
        } else {
            0
        };
        let hi = if self.link.has_upper() {
            reach.min(own.len() - lo)
        } else {
            0
        };
        let boundary = [own.start..own.start + lo, own.end - hi..own.end]
            .into_iter()
            .filter(|r| !r.is_empty())
            .collect();
        (boundary, own.start + lo..own.end - hi)
    }

    /// Every part's `counts[r]` values (at the device address `mine` on this part) concatenated
    /// into `dst` in part order on every part, on the compute stream.
    pub(super) fn all_gather<X: Real>(
        &self,
        mine: u64,
        counts: &[usize],
        dst: &DevBuf<X>,
    ) -> Result<(), CudaError> {
        self.timing.timed(Stream::Compute, "nccl all-gather", || {
            self.nccl.all_gather(Stream::Compute, mine, 0, counts, 1, dst)
        })
    }

    /// Gathers every part's own partials of `kind` into `dst`, in the single-GPU order, on
    /// `stream`: where they fold by layer ([`Partials::fold_by_layer`]), one value per own layer
    /// and segment from the start of `src` ([`CudaProjection::fold_layers`]' output), else the
    /// linear kernels' block partials over its own cells (`n` the stored box). Returns the whole
    /// grid's count per segment, the `nb` of the finalize kernels reading `dst`.
    pub(super) fn gather(
        &self,
        stream: Stream,
        src: &DevBuf<T>,
        kind: Partials,
        n: [usize; 3],
        dst: &DevBuf<T>,
    ) -> Result<usize, CudaError> {
        let parts = 0..self.link.slabs.parts();
        let counts: Vec<usize> = if kind.fold_by_layer(n) {
            parts
                .map(|r| self.own_layers(r, kind.extra_layers()).len())
                .collect()
        } else {
            let layer = n[0] * n[1];
            parts
                .map(|r| (self.link.slabs.owned(r).len() * layer).div_ceil(B1 as usize))
                .collect()
        };
        let stride = counts[self.link.rank()];
        self.timing.timed(stream, "nccl gather of partials", || {
            self.nccl
                .all_gather(stream, src.ptr, stride, &counts, kind.segments(), dst)
        })?;
        Ok(counts.iter().sum())
    }
}

impl<T: Real, const D: usize> CudaProjection<T, D> {
    /// Whether the pressure problem is singular (of the whole grid, on a part).
    pub(super) fn singular(&self) -> bool {
        self.slab
            .as_ref()
            .map_or_else(|| self.op.singular(), |s| s.singular)
    }

    /// Cells of the whole grid.
    pub(super) fn whole_cells(&self) -> usize {
        self.whole_config().grid.n[..D].iter().product()
    }

    /// Face layers of the whole grid along the cut axis: the count of a part's gathered speed
    /// maxima, folded by layer.
    pub(super) fn whole_face_layers(&self) -> usize {
        self.whole_config().grid.n[D - 1] + 1
    }

    /// The whole grid's configuration (this solver's own unless it steps a part).
    pub(super) fn whole_config(&self) -> &Config {
        self.slab.as_ref().map_or(&self.cfg, |s| &s.whole)
    }

    /// The partials of `kind` in `src` as the finalize kernels read them, and their count per
    /// segment: in 3D folded by layer where [`Partials::fold_by_layer`] ([`Self::fold_layers`];
    /// the maxima with `maxima`; with `guard` skipped once the pressure solve has converged),
    /// else `src` itself; on a part, every part's own partials gathered (into the slab's `maxima`
    /// buffer for the speed maxima, else `sums`).
    pub(super) fn partials(
        &self,
        src: &DevBuf<T>,
        kind: Partials,
        maxima: bool,
        guard: bool,
    ) -> Result<(u64, usize), CudaError> {
        let n = cells3(self.l.n);
        let (src, count) = if D == 3 && kind.fold_by_layer(n) {
            let layers = self.fold_layers(Stream::Compute, src, kind, maxima, guard)?;
            (
                if maxima {
                    &self.layer_maxima
                } else {
                    &self.layer_sums
                },
                layers,
            )
        } else {
            let count = match kind {
                Partials::Cells => blocks_tile(n),
                Partials::Faces { .. } => blocks_tile(faces3(self.l.n)),
                Partials::Linear => super::grid1(self.reduced_cells().len()).0 as usize,
            };
            (src, count)
        };
        match &self.slab {
            None => Ok((src.ptr, count)),
            Some(s) => {
                let dst = if maxima { &s.maxima } else { &s.sums };
                let nb = s.gather(Stream::Compute, src, kind, n, dst)?;
                Ok((dst.ptr, nb))
            }
        }
    }

    /// Folds the 3D block partials of `kind` in `src` over this part's own layers (one GPU: all)
    /// into one value per layer and segment, the sum of the layer's blocks (with `maxima` their
    /// maximum), at the start of `layer_sums` (`layer_maxima`) (`[s * layers + l]`; `fold_layers`, one block a
    /// layer and segment), on `stream`; returns the folded layers. With `guard` the kernel is
    /// skipped once the pressure solve has converged.
    pub(super) fn fold_layers(
        &self,
        stream: Stream,
        src: &DevBuf<T>,
        kind: Partials,
        maxima: bool,
        guard: bool,
    ) -> Result<usize, CudaError> {
        let n = cells3(self.l.n);
        let extra = kind.extra_layers();
        let layers = self
            .slab
            .as_ref()
            .map_or(0..n[2] + extra, |s| s.own_stored_with(extra));
        let (per_layer, first, segment) = match kind {
            Partials::Cells => (blocks_tile(n) / n[2], layers.start, 0),
            Partials::Faces { .. } => {
                let f = faces3::<3>(n);
                (blocks_tile(f) / f[2], layers.start, blocks_tile(f))
            }
            // Launched from the first own cell: the own layers' blocks from partial 0.
            Partials::Linear => (n[0] * n[1] / B1 as usize, 0, 0),
        };
        self.launch_from(
            &self.poisson_kernels,
            stream,
            "fold_layers",
            (layers.len() as u32, kind.segments() as u32, 1),
            (FOLD_THREADS, 1, 1),
            Args::new()
                .l((src.ptr + (first * per_layer * std::mem::size_of::<T>()) as u64) as i64)
                .i(per_layer as i64)
                .l(segment as i64)
                .i(maxima as i64)
                .p(if maxima {
                    &self.layer_maxima
                } else {
                    &self.layer_sums
                })
                .l(if guard { self.ctrl.ptr } else { 0 } as i64),
        )?;
        Ok(layers.len())
    }

    /// The cells a linear reduction runs over: all (one GPU) or this part's own.
    pub(super) fn reduced_cells(&self) -> Range<usize> {
        let layer = self.op.stride[D - 1];
        self.slab
            .as_ref()
            .map_or(0..self.op.len(), |s| s.own_cells(layer))
    }

    /// Refreshes the layers of the cell-centred array at `x` (a device address) that this part
    /// stores but does not own (one GPU: nothing).
    pub(super) fn exchange_cells(&self, x: u64) -> Result<(), CudaError> {
        match &self.slab {
            Some(s) => s.exchange_at(Stream::Compute, &[x], self.op.len(), self.op.stride[D - 1], 0),
            None => Ok(()),
        }
    }

    /// `sweep` (a stencil kernel over a range of the stored x-y planes, writing the
    /// cell-centred array at `x`, launched on the stream it is given) with the layers this part
    /// stores but does not own refreshed after it. One GPU: one launch over every plane. On a
    /// part: the own layers next to each neighbour are swept on the exchange stream, once the
    /// compute stream's work so far is done, and exchanged from there, while the compute stream
    /// sweeps the own interior (a colour or Jacobi sweep reads no cell another layer's sweep
    /// writes); the compute stream waits for the exchange after the interior. The layers the
    /// part does not own are not swept (the exchange overwrites them).
    pub(super) fn swept(
        &self,
        x: u64,
        sweep: impl Fn(Stream, Range<usize>) -> Result<(), CudaError>,
    ) -> Result<(), CudaError> {
        let Some(s) = &self.slab else {
            return sweep(Stream::Compute, 0..cells3(self.op.n)[2]);
        };
        if !s.overlap {
            sweep(Stream::Compute, s.own_stored())?;
            return self.exchange_cells(x);
        }
        self.swept_then(x, sweep, || Ok(()))
    }

    /// The overlapped sweep of [`Self::swept`] on a part, with `after_interior` enqueued once
    /// the interior is, before the compute stream waits for the exchange.
    pub(super) fn swept_then(
        &self,
        x: u64,
        sweep: impl Fn(Stream, Range<usize>) -> Result<(), CudaError>,
        after_interior: impl FnOnce() -> Result<(), CudaError>,
    ) -> Result<(), CudaError> {
        let s = self.slab.as_ref().expect("a part");
        let (boundary, interior) = s.sweep_layers();
        s.swept.record_on(Stream::Compute)?;
        self.gpu.wait_event(Stream::Exchange, &s.swept)?;
        s.timing
            .traced(Stream::Exchange, "sweep of the boundary layers", || {
                boundary
                    .into_iter()
                    .try_for_each(|layers| sweep(Stream::Exchange, layers))
            })?;
        // The interior is enqueued before the NCCL calls, whose enqueue takes the host longer
        // than a launch, so the compute stream starts it sooner (after a host wait, at once).
        if !interior.is_empty() {
            s.timing.traced(Stream::Compute, "sweep of the interior", || {
                sweep(Stream::Compute, interior)
            })?;
        }
        s.exchange_at(Stream::Exchange, &[x], self.op.len(), self.op.stride[D - 1], 0)?;
        s.exchanged.record_on(Stream::Exchange)?;
        after_interior()?;
        s.timing
            .traced(Stream::Compute, "compute waits for the exchange", || {
                self.gpu.wait_event(Stream::Compute, &s.exchanged)
            })
    }
}

/// Logs why a part's phase timing could not be read (the summary then leaves it out).
fn timing_unread(e: CudaError) {
    log::warn!("reading the timing events of a GPU part failed: {e}");
}

/// A setting of `cfg` (a case cut over several GPUs) that such a run cannot have, as the error
/// naming its key.
pub(crate) fn part_unsupported(cfg: &Config) -> Option<Invalid> {
    if cfg.grid.dim != 3 {
        return Some(Invalid::new(
            "case.dim",
            "on several GPUs the grid is 3D (a 2D kernel tile spans 32 rows, which a cut would split); \
             2D cases run over several processes on backend = \"cpu\"",
        ));
    }
    None
}

impl<T: Real, const D: usize> SlabPart<T, D> for CudaProjection<T, D> {
    fn part(cfg: Config, whole: &Config, link: &SlabLink, device: usize) -> Result<Self, Invalid> {
        CudaProjection::part(cfg, whole, link, device)
            .map_err(|e| Invalid::new("solver.backend", format!("CUDA, device {device}: {e}")))
    }

    fn unsupported(cfg: &Config) -> Option<Invalid> {
        super::unsupported(cfg).or_else(|| part_unsupported(cfg))
    }

    fn reconfigure(&mut self, cfg: Config, whole: Config) -> Result<(), Invalid> {
        self.update_config(cfg, Some(whole))
    }

    /// Reads this part's state back into a CPU solver of its slab, then gathers as the CPU parts
    /// do. A failed read is logged and the slab's initial state is sent instead, so the
    /// collective completes.
    fn gather_into(&self, mut whole: Option<&mut Projection<T, D>>, link: &SlabLink) {
        let mut host = Projection::new(mirror_config(&self.cfg));
        match self.snapshot() {
            Ok(s) => {
                if let Err(e) = host.restore(&s) {
                    log::error!(
                        "part {}: reading its state: {}: {}",
                        link.rank(),
                        e.key,
                        e.message
                    );
                }
            }
            Err(e) => log::error!(
                "part {}: reading its state back from the GPU failed: {e}",
                link.rank()
            ),
        }
        Projection::gather_parts(whole.as_deref_mut(), &host, link);
        // Every part's device rotor holds the whole disk's last loads.
        if let (Some(w), Some(r)) = (whole, &self.rotor) {
            w.set_rotor_loads(r.loads);
        }
    }

    fn device_communication_seconds(&self) -> Option<f64> {
        let s = self.slab.as_ref()?;
        s.timing.communication_seconds().map_err(timing_unread).ok()
    }

    fn device_phase_seconds(&self) -> Option<std::collections::BTreeMap<&'static str, f64>> {
        let s = self.slab.as_ref()?;
        s.timing.phase_seconds().map_err(timing_unread).ok()
    }

    fn take_slab(&mut self, whole: &Projection<T, D>, link: &SlabLink) -> Result<(), Invalid> {
        let mut host = Projection::new(mirror_config(&self.cfg));
        whole.scatter_part(&mut host, link);
        let state = host
            .snapshot()
            .map_err(|e| Invalid::new("solver.backend", e.to_string()))?;
        self.restore(&state)
    }
}
