//! Stepping on the device: the step clock written and read, one step's launches, batches of
//! steps as replays of the step's graph, and a halted batch reported as the CPU reports it (the
//! module doc of `cuda/mod.rs` describes the step).

use super::{CudaEuler, err};
use crate::backend::cuda::{CudaError, Graph, slots};
use crate::solver::SolverError;
use crate::solver::compressible::time_step;
use crate::solver::real::Real;

impl<T: Real> CudaEuler<T> {
    /// The step reduction of a state no step wrote (after a restart or a change of gamma), into
    /// the clock, read back (one host wait): the min density and pressure residuals.
    pub(super) fn reduce(&mut self) -> Result<(), CudaError> {
        self.gpu.bind()?;
        self.launches.reduce.run(&self.gpu)?;
        self.launches.finalize.run(&self.gpu)?;
        // The next step's size comes from this reduction (and the launches' CFL number).
        self.clock_stale = true;
        self.read_clock()
    }

    /// Fetches the clock (one host wait) and takes the minima into the residuals.
    pub(super) fn read_clock(&mut self) -> Result<(), CudaError> {
        let c = self.b.clock.read()?;
        self.residuals[1].1 = c[slots::EK_MIN_DENSITY];
        self.residuals[2].1 = c[slots::EK_MIN_PRESSURE];
        Ok(())
    }

    /// Writes the host's slots of the clock (dt, time, steps, cap, no halt, end time) before the
    /// next step, and chooses that step's size on the device (`euler_next_step`).
    pub(super) fn write_clock(&mut self) -> Result<(), CudaError> {
        let c = self.b.clock.host_mut();
        c[slots::EK_DT] = self.dt;
        c[slots::EK_TIME] = self.time;
        c[slots::EK_STEPS] = self.steps as f64;
        c[slots::EK_DT_CAP] = self.dt_cap;
        c[slots::EK_HALT] = 0.0;
        c[slots::EK_T_END] = self.t_end;
        self.b.clock.push(slots::EK_HOST_LEN)?;
        self.launches.next_step.run(&self.gpu)?;
        self.clock_stale = false;
        Ok(())
    }

    /// Enqueues one step (no host wait) of the size in the clock: the ghost cells, the scheme,
    /// the reduction, which moves the clock on and chooses the next step's size.
    pub(super) fn enqueue_step(&self) -> Result<(), CudaError> {
        self.ghosts()?;
        for (_, _, launch) in self.scheme_kernels() {
            launch.run(&self.gpu)?;
        }
        self.launches.finalize_step.run(&self.gpu)
    }

    /// Enqueues `n` steps, as replays of the step's graph where graphs are on (captured at first
    /// use; a failed capture turns them off and the steps are launched one by one), then reads
    /// the clock (one host wait).
    pub(super) fn run(&mut self, n: u64) -> Result<(), CudaError> {
        self.gpu.bind()?;
        if self.clock_stale {
            self.write_clock()?;
        }
        if self.graphs && self.step_graph.is_none() {
            self.step_graph =
                Graph::capture_or_warn(&self.gpu, "the compressible step", || self.enqueue_step());
            self.graphs = self.step_graph.is_some();
        }
        for _ in 0..n {
            match &self.step_graph {
                Some(g) => g.launch()?,
                None => self.enqueue_step()?,
            }
        }
        self.read_clock()
    }

    /// Sets the end time the steps stop at (infinity for none).
    pub(super) fn set_end_time(&mut self, t_end: f64) {
        if t_end != self.t_end {
            self.t_end = t_end;
            self.clock_stale = true;
        }
    }

    /// [`Solver::advance`] by `n` steps on the device ([`CudaEuler::run`]), then the clock, the
    /// residuals and, where the device halted the batch, the error the CPU would report (where
    /// it halted at the end time, none: the next batch clears the halt).
    pub(super) fn batch(&mut self, n: u64) -> Result<(), SolverError> {
        let start = self.steps;
        self.mirror.get_mut().expect("mirror lock").invalidate();
        self.readback
            .get_mut()
            .expect("readback lock")
            .invalidate(start + n);
        self.run(n).map_err(err(self.steps, self.time))?;
        let c = self.b.clock.host();
        (self.dt, self.time, self.steps) = (c[slots::EK_DT], c[slots::EK_TIME], c[slots::EK_STEPS] as u64);
        let (halt, rate, bad) = (c[slots::EK_HALT], c[slots::EK_RATE], c[slots::EK_BAD_CELL]);
        self.residuals[0].1 = c[slots::EK_STEP_RATE];
        if self.steps != start + n {
            self.readback
                .get_mut()
                .expect("readback lock")
                .invalidate(self.steps);
        }
        if halt == slots::HALT_END_TIME as f64 {
            self.clock_stale = true;
        }
        if halt == slots::HALT_WAVE_RATE as f64 {
            return time_step(&self.cfg, rate, self.dt_cap, self.steps, self.time).map(|_| ());
        }
        if halt != slots::HALT_BAD_CELL as f64 {
            return Ok(());
        }
        // The CPU's check names the cell and its state: run it on the read-back state.
        let (found, minima) = self
            .with_mirror(|cpu| (cpu.check_state(), [cpu.residuals[1].1, cpu.residuals[2].1]))
            .map_err(err(self.steps, self.time))?;
        // The CPU check's minima include the offending cell's values (NaN where they are).
        self.residuals[1].1 = minima[0];
        self.residuals[2].1 = minima[1];
        Err(found.err().unwrap_or_else(|| SolverError::Diverged {
            step: self.steps,
            time: self.time,
            message: format!("an inadmissible state in cell {bad} (row-major interior index)"),
        }))
    }
}
