//! The [`Solver`] interface of [`CudaProjection`], and the host's views of the device state:
//! the CPU mirror, the device-derived fields, and adopting a CPU state (load, restore).

use super::slab::part_unsupported;
use super::{CTRL_LEN, CudaProjection, DeviceRotor, Mirror, Work, unsupported};
use crate::backend::cuda::readback::readback_methods;
use crate::backend::cuda::{CudaError, DevBuf, Gpu};
use crate::case::{CaseSpec, Invalid, Kind};
use crate::solver::incompressible::Projection;
use crate::solver::incompressible::config::Config;
use crate::solver::incompressible::derived::fields;
use crate::solver::incompressible::device_fields::StaggeredState;
use crate::solver::incompressible::projection::{HISTORY, VELOCITY};
use crate::solver::real::Real;
use crate::solver::{CappedSolve, Snapshot, Solver, SolverError, SolverInfo, check_transfer};
use std::sync::Arc;

/// The CPU mirror's configuration: the solver's without its rotor, whose loads the device
/// evaluates (the mirror never steps; its source tables would only cost memory and time).
pub(super) fn mirror_config(cfg: &Config) -> Config {
    Config {
        rotor: None,
        ..cfg.clone()
    }
}

impl<T: Real, const D: usize> CudaProjection<T, D> {
    /// Makes `cpu`'s state this solver's: velocities and pressure uploaded, its clock (time,
    /// steps, dt) taken, and `cpu` the fresh mirror. With `history` (AB2's `H^{n-1}` of each
    /// component, as [`Solver::snapshot`] saves it) the AB2 flag is `cpu`'s, else AB2 restarts.
    fn adopt(&mut self, mut cpu: Projection<T, D>, history: Option<Vec<Vec<T>>>) -> Result<(), Invalid> {
        let has_history = history.is_some() && cpu.has_ab2_history();
        let (time, steps, dt) = (cpu.time(), cpu.steps(), cpu.dt());
        let (vel, p) = cpu.state_mut();
        (|| {
            for (b, q) in self.vel.iter().zip(vel.iter()) {
                self.gpu.upload(b, q)?;
            }
            self.gpu.upload(&self.p, p)?;
            for (b, h) in self.hist.iter().zip(history.iter().flatten()) {
                self.gpu.upload(b, h)?;
            }
            // A halt of an earlier diverged run no longer applies.
            self.gpu.upload(&self.ctrl, &[0; CTRL_LEN])?;
            self.max_speeds()?;
            (self.time, self.steps, self.dt, self.has_history) = (time, steps, dt, has_history);
            self.write_clock()?;
            self.read_step()
        })()
        .map_err(|e| {
            Invalid::new(
                "solver.backend",
                format!("copying the state to the GPU failed: {e}"),
            )
        })?;
        let mut m = self.mirror.lock().expect("mirror lock");
        m.cpu = Some(cpu);
        m.stale = false;
        self.readback
            .get_mut()
            .expect("readback lock")
            .invalidate(self.steps);
        Ok(())
    }

    /// Copies the velocity and p into the CPU mirror when the device state changed since the
    /// last copy.
    fn with_mirror<R>(&self, f: impl FnOnce(&Projection<T, D>) -> R) -> Option<R> {
        let mut m = self.mirror.lock().expect("mirror lock");
        let result = (|| -> Result<(), CudaError> {
            if m.cpu.is_none() {
                m.cpu = Some(Projection::new(mirror_config(&self.cfg)));
                m.stale = true;
            }
            if m.stale {
                self.gpu.bind()?;
                let bufs = || self.vel.iter().chain([&self.p]);
                if m.staging.is_none() {
                    m.staging = Some(bufs().map(|b| self.gpu.pinned(b.len)).collect::<Result<_, _>>()?);
                }
                let Mirror { cpu, staging, .. } = &mut *m;
                let staging = staging.as_mut().expect("staging allocated");
                for (s, b) in staging.iter_mut().zip(bufs()) {
                    self.gpu.download_async(s, b, b.len)?;
                }
                self.gpu.sync()?;
                let (vel, p) = cpu.as_mut().expect("mirror built").state_mut();
                for (q, s) in vel.iter_mut().map(|v| &mut v[..]).chain([p]).zip(staging.iter()) {
                    q.copy_from_slice(s.as_slice());
                }
                m.stale = false;
            }
            Ok(())
        })();
        match result {
            Ok(()) => Some(f(m.cpu.as_ref().expect("mirror built"))),
            Err(e) => {
                log::error!("reading fields back from the GPU failed: {e}");
                None
            }
        }
    }

    /// Enqueues the derivation of field `name` of the current state into `dst`
    /// ([`StaggeredDisplay::derive`]; the pressure is kinematic, shown times the density).
    ///
    /// [`StaggeredDisplay::derive`]: crate::solver::incompressible::device_fields::StaggeredDisplay::derive
    fn derive(&self, name: &str, dst: &DevBuf<T>) -> Result<(), CudaError> {
        let state = StaggeredState {
            vel: &self.vel.each_ref(),
            p: &self.p,
            p_scale: self.cfg.density,
            viscosity: None,
        };
        self.display
            .derive(&self.gpu, &self.cfg.grid, fields::<D>(), &state, name, dst)
    }

    /// Field `name` derived on the host from the whole state read back into the CPU mirror (the
    /// path [`Solver::field`] took before fields were derived on the device): the reference the
    /// device derivation is tested against, and the baseline of `flowlab bench`'s readback table.
    pub fn host_field(&self, name: &str, out: &mut Vec<f64>) -> Option<()> {
        self.with_mirror(|m| m.field(name, out))?
    }

    /// Takes the settings of `cfg`, whose grid, sides, initial state and precision are this
    /// solver's (on a part of a grid cut over several GPUs, with `whole` the whole grid's).
    pub(crate) fn update_config(&mut self, cfg: Config, whole: Option<Config>) -> Result<(), Invalid> {
        if !cfg.same_layout(&self.cfg) {
            return Err(Invalid::new(
                "grid",
                "the grid, boundaries, initial state and precision apply on reset only",
            ));
        }
        if let Some(e) = unsupported(&cfg).or_else(|| self.slab.as_ref().and_then(|_| part_unsupported(&cfg)))
        {
            return Err(e);
        }
        if cfg.poisson.kind != self.cfg.poisson.kind {
            self.work = Self::workspace(&self.gpu, &self.op, cfg.poisson.kind, self.slab.as_ref())
                .map_err(|e| Invalid::new("solver.pressure_solver", format!("CUDA: {e}")))?;
            // Its kernels read the old workspace's buffers.
            self.v_cycle_graph = None;
        }
        if cfg.integrator != self.cfg.integrator {
            self.has_history = false;
            self.clock_stale = true;
        }
        if cfg.rotor != self.cfg.rotor {
            let mut rotor = self.rotor.take();
            let built = DeviceRotor::follow(&mut rotor, cfg.rotor, |r| self.device_rotor(r));
            self.rotor = rotor;
            built.map_err(|e| Invalid::new("rotor", format!("CUDA: {e}")))?;
        }
        // Its kernel arguments are the old settings'.
        self.step_graphs = [None, None];
        if let Some(cpu) = self.mirror.get_mut().expect("mirror lock").cpu.as_mut() {
            cpu.update_config(mirror_config(&cfg), None);
        }
        // The density scales the reported pressure.
        self.readback
            .get_mut()
            .expect("readback lock")
            .invalidate(self.steps);
        if let (Some(s), Some(w)) = (self.slab.as_mut(), whole) {
            s.whole = w;
        }
        self.cfg = cfg;
        Ok(())
    }
}

impl<T: Real, const D: usize> Solver for CudaProjection<T, D> {
    fn info(&self) -> SolverInfo {
        SolverInfo {
            kind: Kind::Incompressible,
            method: "projection",
            backend: "cuda",
            precision: T::NAME,
            grid: self.cfg.grid,
        }
    }

    fn time(&self) -> f64 {
        self.time
    }

    fn steps(&self) -> u64 {
        self.steps
    }

    fn dt(&self) -> f64 {
        self.dt
    }

    fn set_dt_cap(&mut self, cap: f64) {
        if cap != self.dt_cap {
            self.dt_cap = cap;
            self.clock_stale = true;
        }
    }

    fn step(&mut self) -> Result<(), SolverError> {
        self.batch(1)
    }

    fn advance(&mut self, n: u64) -> Result<(), SolverError> {
        if matches!(self.work, Work::Spectral(_)) {
            return self.batch(n);
        }
        for _ in 0..n {
            self.batch(1)?;
        }
        Ok(())
    }

    fn residuals(&self) -> &[(&'static str, f64)] {
        &self.residuals
    }

    fn field_names(&self) -> &'static [&'static str] {
        fields::<D>()
    }

    readback_methods!(self, fields::<D>());

    fn display_device(&self) -> Option<Arc<Gpu>> {
        self.slab.is_none().then(|| self.gpu.clone())
    }

    fn sample(&self, name: &str, point: [f64; 3]) -> Option<f64> {
        self.with_mirror(|m| m.sample(name, point))?
    }

    fn update(&mut self, spec: &CaseSpec) -> Result<(), Invalid> {
        self.update_config(Config::from_spec(spec)?, None)
    }

    fn load_state(&mut self, from: &dyn Solver) -> Result<(), Invalid> {
        check_transfer(&self.info(), &from.info())?;
        // Sampling and the divergence-free projection run on the CPU once; the result goes
        // to the device and becomes the (fresh) mirror.
        let mut cpu = Projection::<T, D>::new(mirror_config(&self.cfg));
        cpu.load_state(from)?;
        self.adopt(cpu, None)
    }

    fn snapshot(&self) -> Result<Snapshot, SolverError> {
        let device = |e: CudaError| SolverError::Device {
            step: self.steps,
            time: self.time,
            message: format!("reading the state back failed: {e}"),
        };
        let mut s = Snapshot::new(&self.info(), self.time, self.steps, self.dt);
        // The CPU solver's names and order: the components, p, the histories.
        let named = (self.vel.iter().zip(VELOCITY))
            .chain([(&self.p, "p")])
            .chain(self.hist.iter().zip(HISTORY));
        for (b, name) in named {
            s.put(name, &self.gpu.download(b).map_err(device)?);
        }
        s.put_scalar("has_history", if self.has_history { 1.0 } else { 0.0 });
        Ok(s)
    }

    fn restore(&mut self, state: &Snapshot) -> Result<(), Invalid> {
        let mut cpu = Projection::<T, D>::new(mirror_config(&self.cfg));
        cpu.restore(state)?;
        let history = HISTORY[..D]
            .iter()
            .map(|name| state.values::<T>(name))
            .collect::<Result<_, _>>()?;
        self.adopt(cpu, Some(history))
    }

    fn capped_pressure_solve(&self) -> Option<CappedSolve> {
        self.capped
    }

    fn rotor(&self) -> Option<crate::solver::rotor::Rotor> {
        self.rotor.as_ref().map(|r| r.setup.rotor)
    }

    fn summary(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = self.with_mirror(|m| m.summary()).unwrap_or_default();
        // The mirror does not step: the rotor's loads are the device's.
        if let Some(r) = &self.rotor {
            m.insert("rotor".into(), r.setup.summary(&r.loads));
        }
        m
    }
}
