//! The host's side of the GPU projection's steps: runs a batch of steps ([`Solver::advance`]),
//! waits for the device, reads the scalar, control and clock blocks back, checks the run's
//! health, and on a part of a cut grid times the step's phases (`phase_timing.rs`).
//!
//! [`Solver::advance`]: crate::solver::Solver::advance

use super::{CudaProjection, SC_SPEED, Work, err};
use crate::backend::cuda::slots::{
    CK_DT, CK_DT_CAP, CK_HISTORY, CK_LEN, CK_STEPS, CK_TIME, CTRL_HALT, CTRL_ITERS, CTRL_LEN, SC_BNORM,
    SC_CHANGE, SC_LEN, SC_NORM, SC_RNORM,
};
use crate::backend::cuda::{CudaError, Stream};
use crate::case::PressureSolverKind;
use crate::solver::incompressible::projection::{steady_change, with_nan};
use crate::solver::real::Real;
use crate::solver::{CappedSolve, SolverError};

impl<T: Real, const D: usize> CudaProjection<T, D> {
    /// Reads the scalar, control and clock blocks (one host wait) into the host's copies.
    pub(super) fn read_step(&mut self) -> Result<(), CudaError> {
        self.gpu.download_async(&mut self.sc_host, &self.sc, SC_LEN)?;
        self.gpu
            .download_async(&mut self.ctrl_host, &self.ctrl, CTRL_LEN)?;
        self.gpu
            .download_async(&mut self.clock_host, &self.clock, CK_LEN)?;
        if let Some(r) = &mut self.rotor {
            r.download(&self.gpu)?;
        }
        self.wait()?;
        let sc = self.sc_host.as_slice();
        self.speeds = std::array::from_fn(|c| sc[SC_SPEED[c]].f64());
        if let Some(r) = &mut self.rotor {
            r.take_totals();
        }
        let c = self.clock_host.as_slice();
        self.dt = c[CK_DT];
        self.time = c[CK_TIME];
        self.steps = c[CK_STEPS] as u64;
        self.has_history = c[CK_HISTORY] != 0.0;
        Ok(())
    }

    /// Uploads the host's time, steps, dt, AB2 history flag and dt cap to the clock (waits).
    pub(super) fn write_clock(&mut self) -> Result<(), CudaError> {
        let mut c = [0.0; CK_LEN];
        c[CK_DT] = self.dt;
        c[CK_TIME] = self.time;
        c[CK_HISTORY] = if self.has_history { 1.0 } else { 0.0 };
        c[CK_STEPS] = self.steps as f64;
        c[CK_DT_CAP] = self.dt_cap;
        self.gpu.upload(&self.clock, &c)?;
        self.clock_stale = false;
        Ok(())
    }

    pub(super) fn read_ctrl(&mut self) -> Result<[i32; CTRL_LEN], CudaError> {
        self.gpu
            .download_async(&mut self.ctrl_host, &self.ctrl, CTRL_LEN)?;
        self.wait()?;
        let c = self.ctrl_host.as_slice();
        Ok([c[0], c[1], c[2], c[3]])
    }

    /// Runs `n` steps and reads their scalars once. With the transform solve the steps follow
    /// one another on the device (one graph launch each; the health check on the device halts
    /// the rest of the batch); the iterative solvers wait for their convergence flag, so they
    /// take one step at a time (`n` = 1).
    fn run(&mut self, n: u64) -> Result<(), CudaError> {
        let start = std::time::Instant::now();
        self.gpu.bind()?;
        if self.clock_stale {
            self.write_clock()?;
        }
        if matches!(self.work, Work::Spectral(_)) {
            // The steady-change sums only for the last step, whose scalars are read.
            for k in 0..n {
                self.launch_spectral_step(k + 1 == n)?;
            }
            self.spectral_stats()?;
        } else {
            assert_eq!(n, 1, "the iterative pressure solvers step one at a time");
            self.step_phase("step: time step and health check", || self.step_dt())?;
            self.step_phase("step: predictor", || self.predict_only())?;
            self.step_phase("step: right-hand side", || self.rhs(self.rhs.ptr, -1, false))?;
            self.solve_pressure()?;
            self.step_phase("step: correction", || self.correct(None, true))?;
        }
        self.read_step()?;
        if let Some(s) = &self.slab {
            s.timing.host_since("host: the whole step", start);
        }
        Ok(())
    }

    /// [`Solver::advance`] by one batch of `n` steps ([`CudaProjection::run`]).
    ///
    /// [`Solver::advance`]: crate::solver::Solver::advance
    pub(super) fn batch(&mut self, n: u64) -> Result<(), SolverError> {
        self.cfg.check_health(&self.speeds, self.steps, self.time)?;
        if n == 0 {
            return Ok(());
        }
        self.mirror.lock().expect("mirror lock").stale = true;
        let start = self.steps;
        self.readback
            .get_mut()
            .expect("readback lock")
            .invalidate(start + n);
        self.run(n).map_err(err(self.steps, self.time))?;
        if self.steps != start + n {
            self.readback
                .get_mut()
                .expect("readback lock")
                .invalidate(self.steps);
        }
        let sc = self.sc_host.as_slice();
        let ctrl = self.ctrl_host.as_slice();
        let (change, norm) = (sc[SC_CHANGE].f64(), sc[SC_NORM].f64());
        let (b_norm, r_norm) = (sc[SC_BNORM].f64(), sc[SC_RNORM].f64());
        let iterations = if b_norm == 0.0 {
            0
        } else {
            ctrl[CTRL_ITERS] as usize
        };
        let relative = if b_norm == 0.0 { 0.0 } else { r_norm / b_norm };
        let poisson = self.cfg.poisson;
        self.capped = (poisson.kind != PressureSolverKind::Fft
            && iterations >= poisson.max_iterations
            && relative > poisson.tolerance)
            .then_some(CappedSolve {
                iterations,
                residual: relative,
                tolerance: poisson.tolerance,
            });
        let dt = self.dt;
        let steady_change = steady_change(change, norm, dt);
        let cells = self.whole_cells() as f64;
        self.residuals.clear();
        self.residuals.extend_from_slice(&[
            ("steady_change", steady_change),
            ("pressure_iterations", iterations as f64),
            ("pressure_residual", relative),
            ("predicted_divergence", dt * b_norm / cells.sqrt()),
            (
                "max_velocity",
                self.speeds[1..].iter().fold(self.speeds[0], |m, s| m.max(*s)),
            ),
        ]);
        if let Some(r) = &self.rotor {
            self.residuals.extend_from_slice(&r.setup.residuals(&r.loads));
        }
        debug_assert_eq!(ctrl[CTRL_HALT] != 0, self.steps != start + n);
        self.cfg
            .check_health(&with_nan(self.speeds, steady_change), self.steps, self.time)
    }

    /// Waits for the stream; on a part, first reads the timing pairs complete at its last wait
    /// (while the GPU works), and marks those enqueued since complete.
    fn wait(&self) -> Result<(), CudaError> {
        match &self.slab {
            None => self.gpu.sync(),
            Some(s) => {
                s.timing.read_complete()?;
                s.timing
                    .host_traced("host: waits for the GPU", || self.gpu.sync())?;
                s.timing.completed();
                Ok(())
            }
        }
    }

    /// `f` (work on the compute stream), timed as phase `name` on a part whose steps are
    /// traced.
    pub(super) fn step_phase(
        &self,
        name: &'static str,
        f: impl FnOnce() -> Result<(), CudaError>,
    ) -> Result<(), CudaError> {
        match &self.slab {
            Some(s) => s.timing.traced(Stream::Compute, name, f),
            None => f(),
        }
    }
}
