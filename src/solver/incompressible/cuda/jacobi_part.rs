//! The pipelined Jacobi iteration of a part of a grid cut over several GPUs (`slab.rs`): the
//! convergence test of a sweep `k` that tests its residual (every
//! [`RESIDUAL_CHECK`](crate::solver::incompressible::pressure_poisson::RESIDUAL_CHECK)-th) runs
//! one sweep behind, while sweep `k + 1` sweeps, so that the compute stream never waits for an
//! NCCL call (Thibault & Senocak 2009 overlap the exchange with the interior the same way).

use super::slab::Partials;
use super::{CHECK_EVERY, CTRL_DONE, CTRL_ITERS, CudaProjection, Work, cells3};
use crate::backend::cuda::{CudaError, DevBuf, Event, Stream};
use crate::solver::incompressible::pressure_poisson::residual_checked;
use crate::solver::real::Real;

/// What the pipelined Jacobi iteration of a part ([`CudaProjection::jacobi_part`]) adds to the
/// single-GPU workspace: a third iterate, second buffers of the sweep partials and of their
/// gathered copy, and the order of the gather against the sweeps.
pub(super) struct JacobiPipeline<T> {
    third: DevBuf<T>,
    partials: DevBuf<T>,
    sums: DevBuf<T>,
    /// A sweep's interior swept (compute stream), its partials gathered (exchange stream).
    interior: Event,
    gathered: Event,
}

impl<T: Real, const D: usize> CudaProjection<T, D> {
    /// Damped Jacobi (`pressure_poisson/jacobi.rs`) on a part, its convergence test one sweep
    /// behind so that no NCCL call is waited for: sweep `k` (`src = x[k % 3]`, `dst = x[(k + 1)
    /// % 3]`, partials into buffer `k % 2`) sweeps its boundary layers and exchanges them while
    /// it sweeps the interior ([`Self::swept`]). A sweep that tests its residual
    /// ([`residual_checked`]) then gathers its layer sums on the exchange stream while sweep
    /// `k + 1` runs; the check of sweep `k` runs on the compute stream before sweep `k + 2`, the
    /// first to overwrite `src` of sweep `k` (the result if that check ends the solve). Sweep
    /// `k + 1` is then one sweep too many, whose result is not used: the sweeps, checks and
    /// result are the single GPU's, bit for bit. The other sweeps gather nothing.
    pub(super) fn jacobi_part(&mut self, max: usize) -> Result<(), CudaError> {
        let n = self.op.len();
        let s = self.slab.as_mut().expect("a part");
        if s.pipeline.is_none() {
            s.pipeline = Some(JacobiPipeline {
                third: self.gpu.alloc_zeros(n)?,
                partials: self.gpu.alloc_zeros(self.part_a.len)?,
                sums: self.gpu.alloc_zeros(s.sums.len)?,
                interior: self.gpu.marker()?,
                gathered: self.gpu.marker()?,
            });
        }
        let mut it = 0;
        loop {
            self.jacobi_part_batch(&mut it, max)?;
            let c = self.read_ctrl()?;
            if c[CTRL_DONE] != 0 {
                // The result is the source of the converged sweep.
                let at = c[CTRL_ITERS] as usize % 3;
                if at != 0 {
                    let s = self.slab.as_ref().expect("a part");
                    let line = s.pipeline.as_ref().expect("made above");
                    let Work::Jacobi { next } = &self.work else {
                        unreachable!("Jacobi's workspace")
                    };
                    self.gpu.copy(&self.p, if at == 1 { next } else { &line.third })?;
                }
                return Ok(());
            }
        }
    }

    /// Enqueues the next [`CHECK_EVERY`] sweeps of [`Self::jacobi_part`] from sweep `it` (at most
    /// to sweep `max`) and their checks.
    fn jacobi_part_batch(&self, it: &mut usize, max: usize) -> Result<(), CudaError> {
        let Work::Jacobi { next } = &self.work else {
            unreachable!("Jacobi's workspace")
        };
        let s = self.slab.as_ref().expect("a part");
        let line = s.pipeline.as_ref().expect("made above");
        let x = [self.p.ptr, next.ptr, line.third.ptr];
        let partials = [&self.part_a, &line.partials];
        let sums = [&s.sums, &line.sums];
        let (rhs, ctrl) = (self.rhs.ptr, self.ctrl.ptr);
        let box_cells = cells3(self.l.n);
        // The check of this sweep waits for its partials' gather: (sweep, partial count).
        let check = |k: usize, nb: usize| -> Result<(), CudaError> {
            s.timing
                .traced(Stream::Compute, "compute waits for the gathered partials", || {
                    self.gpu.wait_event(Stream::Compute, &line.gathered)
                })?;
            s.timing.traced(Stream::Compute, "convergence check", || {
                self.finalize_check_of(sums[k % 2].ptr, nb, k, max, false)
            })
        };
        let mut pending = None;
        for _ in 0..CHECK_EVERY {
            if *it > max {
                break;
            }
            let (src, dst, partial) = (x[*it % 3], x[(*it + 1) % 3], partials[*it % 2]);
            let checked = residual_checked(*it, max);
            let mut nb = 0;
            self.swept_then(
                dst,
                |stream, layers| self.jacobi(src, dst, rhs, partial, ctrl, stream, layers),
                || {
                    if checked {
                        line.interior.record_on(Stream::Compute)?;
                    }
                    if let Some((k, nb)) = pending.take() {
                        check(k, nb)?;
                    }
                    if !checked {
                        return Ok(());
                    }
                    self.gpu.wait_event(Stream::Exchange, &line.interior)?;
                    s.timing
                        .traced(Stream::Exchange, "fold of the partials by layer", || {
                            self.fold_layers(Stream::Exchange, partial, Partials::Cells, false, true)
                                .map(|_| ())
                        })?;
                    let (kind, folded) = (Partials::Cells, &self.layer_sums);
                    nb = s.gather(Stream::Exchange, folded, kind, box_cells, sums[*it % 2])?;
                    line.gathered.record_on(Stream::Exchange)
                },
            )?;
            if checked {
                pending = Some((*it, nb));
            }
            *it += 1;
        }
        if let Some((k, nb)) = pending {
            check(k, nb)?;
        }
        Ok(())
    }
}
