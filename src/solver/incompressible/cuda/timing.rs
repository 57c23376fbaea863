//! Kernel timings with CUDA events for `flowlab bench`.

use super::{CudaProjection, Work, cells3};
use crate::backend::cuda::{CudaError, Stream};
use crate::case::TimeIntegrator;
use crate::solver::real::Real;

impl<T: Real, const D: usize> CudaProjection<T, D> {
    /// Times the main kernels with CUDA events (`reps` back-to-back launches each, after one
    /// warm-up launch) on this solver's buffers; the state is scrambled afterwards, so use a
    /// solver built for the purpose. Returns (kernel, milliseconds per launch, bytes per launch by
    /// the model: every array the kernel touches read or written once, `n` values each (one per
    /// cell, `D` arrays per velocity); a colour sweep reads all of `x` and half of `b`, and writes
    /// half of `x`; the fused two-colour sweep (2D) reads `x` and `b` and writes `x` once).
    pub fn kernel_timings(&mut self, reps: usize) -> Result<Vec<(&'static str, f64, f64)>, CudaError> {
        self.gpu.bind()?;
        let n = self.op.len() as f64;
        let d = D as f64;
        let sz = std::mem::size_of::<T>() as f64;
        let op = self.op;
        // A valid dt and AB2 weights in the clock for the step kernels.
        self.step_dt()?;
        // The predictor reads the velocity and writes F; AB2 also reads and writes its history.
        let predict_arrays = match self.cfg.integrator {
            TimeIntegrator::Euler => 2.0 * d,
            TimeIntegrator::Ab2 => 4.0 * d,
        };
        let (p, rhs) = (self.p.ptr, self.rhs.ptr);
        let scratch = self.gpu.alloc_zeros::<T>(op.len())?;
        let sp = scratch.ptr;
        type Launch<T, const D: usize> = Box<dyn Fn(&mut CudaProjection<T, D>) -> Result<(), CudaError>>;
        let mut kernels: Vec<(&'static str, f64, Launch<T, D>)> = vec![
            ("predict", predict_arrays, Box::new(|s| s.predict_only())),
            // F in, rhs out; F, p and the velocity in, the velocity out.
            ("poisson_rhs", d + 1.0, Box::new(move |s| s.rhs(rhs, -1, false))),
            (
                "correct",
                3.0 * d + 1.0,
                Box::new(|s| s.correct_kernel(None, true)),
            ),
            (
                "correct (no statistics)",
                2.0 * d + 1.0,
                Box::new(|s| s.correct_kernel(None, false)),
            ),
            ("max_speed", d, Box::new(|s| s.max_speeds())),
            (
                "jacobi_sweep",
                3.0,
                Box::new(move |s| s.jacobi(p, sp, rhs, &s.part_a, 0, Stream::Compute, 0..cells3(op.n)[2])),
            ),
            (
                "residual",
                3.0,
                Box::new(move |s| s.residual(&op, p, rhs, sp, true, 0)),
            ),
            (
                "colour_sweep",
                2.0,
                Box::new(move |s| s.colour(&op, p, rhs, 0, T::one(), 0)),
            ),
        ];
        if D == 2 {
            kernels.push((
                "rb_sweep (both colours)",
                3.0,
                Box::new(move |s| s.rb_sweep(&op, p, sp, rhs, 0)),
            ));
        }
        if matches!(self.work, Work::Multigrid { .. }) {
            // Bytes model of a V-cycle: per level of n cells, 4 fused two-colour sweeps (3n
            // each), the residual (3n), restriction (1.25n), the coarse zeroing (0.25n) and the
            // prolongation (2.25n): 18.75n, times 4/3 over the levels, 25 fine arrays.
            kernels.push(("v_cycle (launches)", 25.0, Box::new(|s| s.launched_v_cycle())));
            if self.graphs {
                kernels.push(("v_cycle (graph)", 25.0, Box::new(|s| s.top_v_cycle())));
            }
        }
        if let Work::Spectral(w) = &self.work {
            let (v, spectrum) = (w.v.ptr, w.spectrum.ptr);
            // Each real-to-complex or complex-to-real transform reads and writes about n values.
            kernels.push((
                "cuFFT r2c + c2r",
                4.0,
                Box::new(move |s| {
                    let Work::Spectral(w) = &s.work else {
                        unreachable!()
                    };
                    // SAFETY: the buffers and sizes of this plan.
                    unsafe {
                        w.fft.forward(v, spectrum)?;
                        w.fft.inverse(spectrum, v)
                    }
                }),
            ));
            let pack = w.pack;
            kernels.push((
                "poisson_rhs (fft order)",
                d + 1.0,
                Box::new(move |s| s.rhs(v, pack, false)),
            ));
            // The solve of a step: the transforms (4n) and the spectral division (2n), or with
            // FACR the transforms of the rows (4n), the chunks' read (n) and the second solve's
            // read and write (2n); the right-hand side is written reordered by `poisson_rhs`, the
            // solution unpacked by `correct`.
            let solve = if w.facr.is_some() { 7.0 } else { 6.0 };
            kernels.push((
                "pressure solve (fft)",
                solve,
                Box::new(|s| {
                    let Work::Spectral(w) = &s.work else {
                        unreachable!()
                    };
                    s.spectral_solve(w)
                }),
            ));
            // The whole step of a batch (one graph when graphs are on): predict (2Dn Euler, 4Dn
            // AB2), rhs ((D + 1)n), the solve, correct without the statistics, unpacking p
            // ((2D + 2)n).
            kernels.push((
                "step (fft)",
                predict_arrays + 3.0 * d + 3.0 + solve,
                Box::new(|s| s.launch_spectral_step(false)),
            ));
        }
        let mut out = Vec::new();
        for (name, arrays, launch) in kernels {
            launch(self)?;
            let (a, b) = (self.gpu.event()?, self.gpu.event()?);
            a.record()?;
            for _ in 0..reps {
                launch(self)?;
            }
            b.record()?;
            let ms = a.elapsed_ms(&b)? as f64 / reps as f64;
            out.push((name, ms, arrays * n * sz));
        }
        self.gpu.sync()?;
        drop(scratch);
        Ok(out)
    }
}
