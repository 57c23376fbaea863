//! The projection method on a grid cut into slabs over several processes
//! ([`crate::parallel`]; Thibault & Senocak 2009 split their 3D projection solver so over up
//! to four GPUs). Every part steps its slab with the single-grid code, on the CPU
//! ([`Projection`]) or on its own GPU ([`CudaProjection`], NCCL between the GPUs): its
//! stored layers beyond its own are refreshed from their owners after each velocity update and
//! each pressure iteration, and every sum is added in the single-process order, so the parts
//! together compute the single-process result bit for bit (tested under `mpirun`; on the GPU
//! see `cuda/slab.rs` for when the order is the same).
//!
//! Fields, samples, summaries and snapshots are read on the first part, from a copy of the whole
//! grid's state gathered there from all parts ([`Solver::gather`], collective: every part calls
//! it at the same point, as `flowlab run` does); the other parts keep only their slab and answer
//! none of those reads.

use super::config::Config;
use super::cuda::CudaProjection;
use super::derived::fields;
use super::projection::Projection;
use crate::case::{Boundary, CaseSpec, Invalid, PressureSolverKind, WallVelocity};
use crate::parallel::{Communicator, SlabLink, Slabs};
use crate::solver::real::Real;
use crate::solver::{CappedSolve, Snapshot, Solver, SolverError, SolverInfo};
use std::sync::{Arc, Mutex};

/// The solver a part of a decomposed run steps its slab with: the CPU solver or the GPU solver.
pub trait SlabPart<T: Real, const D: usize>: Solver + Sized {
    /// The part of `whole` on `link`'s slab (`cfg`: [`part_config`]), on device `device` where
    /// it runs on a GPU (collective: the parts build their links here).
    fn part(cfg: Config, whole: &Config, link: &SlabLink, device: usize) -> Result<Self, Invalid>;
    /// A setting of the whole grid's `cfg` that this kind of part cannot have, naming its key.
    fn unsupported(cfg: &Config) -> Option<Invalid>;
    /// Takes new settings (`cfg` on the part, `whole` on the whole grid).
    fn reconfigure(&mut self, cfg: Config, whole: Config) -> Result<(), Invalid>;
    /// Gathers every part's state into `whole` on the first part (`None` on the others;
    /// collective).
    fn gather_into(&self, whole: Option<&mut Projection<T, D>>, link: &SlabLink);
    /// Takes this part's slab of the whole grid's state `whole` (no communication).
    fn take_slab(&mut self, whole: &Projection<T, D>, link: &SlabLink) -> Result<(), Invalid>;
    /// Seconds spent in device-to-device communication (NCCL) on a GPU part.
    fn device_communication_seconds(&self) -> Option<f64> {
        None
    }
    /// Seconds of each timed phase on a GPU part: its NCCL calls by kind and, with
    /// `FLOWLAB_TRACE_SWEEPS=1`, its pressure sweeps and the waits between them, the step's
    /// other phases and the host's time.
    fn device_phase_seconds(&self) -> Option<std::collections::BTreeMap<&'static str, f64>> {
        None
    }
}

impl<T: Real, const D: usize> SlabPart<T, D> for Projection<T, D> {
    fn part(cfg: Config, whole: &Config, link: &SlabLink, _device: usize) -> Result<Self, Invalid> {
        Ok(Projection::part(cfg, whole, link))
    }

    fn unsupported(_cfg: &Config) -> Option<Invalid> {
        None
    }

    fn reconfigure(&mut self, cfg: Config, whole: Config) -> Result<(), Invalid> {
        self.update_config(cfg, Some(whole));
        Ok(())
    }

    fn gather_into(&self, whole: Option<&mut Projection<T, D>>, link: &SlabLink) {
        Projection::gather_parts(whole, self, link);
    }

    fn take_slab(&mut self, whole: &Projection<T, D>, link: &SlabLink) -> Result<(), Invalid> {
        whole.scatter_part(self, link);
        Ok(())
    }
}

/// One part of a decomposed projection run, stepped by `P` ([`Projection`] on the CPU,
/// [`CudaProjection`] on a GPU).
pub struct Decomposed<T: Real, const D: usize, P> {
    part: P,
    link: SlabLink,
    /// The whole grid's configuration.
    cfg: Config,
    /// On the first part, the whole grid's state, and whether it is the parts' current one.
    whole: Mutex<(Option<Projection<T, D>>, bool)>,
}

/// A part on the CPU.
pub type CpuPart<T, const D: usize> = Decomposed<T, D, Projection<T, D>>;
/// A part on a GPU.
pub type GpuPart<T, const D: usize> = Decomposed<T, D, CudaProjection<T, D>>;

impl<T: Real, const D: usize, P: SlabPart<T, D>> Decomposed<T, D, P> {
    /// This process's part of the case `cfg` cut over `comm`'s processes along its last axis,
    /// on device `device` where the part runs on a GPU.
    pub fn new(cfg: Config, comm: Arc<dyn Communicator>, device: usize) -> Result<Self, Invalid> {
        let last = D - 1;
        let parts = comm.size();
        if let Some(e) = unsupported(&cfg, parts).or_else(|| P::unsupported(&cfg)) {
            return Err(e);
        }
        let slabs = Slabs::new(cfg.grid.n[last], parts).map_err(|e| {
            Invalid::new(
                format!("grid.{}", ["nx", "ny", "nz"][last]),
                format!("cannot cut the grid into slabs along its last axis: {e}"),
            )
        })?;
        let link = SlabLink { slabs, comm };
        let part = P::part(part_config(&cfg, &link), &cfg, &link, device)?;
        let whole = (link.rank() == 0).then(|| Projection::new(cfg.clone()));
        Ok(Self {
            part,
            link,
            cfg,
            whole: Mutex::new((whole, true)),
        })
    }

    /// Runs `f` on the whole grid's state on the first part (`None` on the others), gathering
    /// it from every part first if a step has changed it since (collective).
    fn with_whole<R>(&self, f: impl FnOnce(Option<&Projection<T, D>>) -> R) -> R {
        let mut w = self.whole.lock().expect("whole-grid lock");
        if !w.1 {
            self.part.gather_into(w.0.as_mut(), &self.link);
            w.1 = true;
        }
        f(w.0.as_ref())
    }

    /// Sets every part from the whole-grid solver `whole` (built on every part from the same
    /// state), which the first part keeps.
    fn adopt(&mut self, whole: Projection<T, D>) -> Result<(), Invalid> {
        self.part.take_slab(&whole, &self.link)?;
        *self.whole.get_mut().expect("whole-grid lock") = ((self.link.rank() == 0).then_some(whole), true);
        Ok(())
    }
}

/// `cfg` on the part of `link`: its stored cells along the last axis, walls where it meets
/// another part (their values are overwritten by the exchange).
pub fn part_config(cfg: &Config, link: &SlabLink) -> Config {
    let last = cfg.grid.dim - 1;
    let stored = link.slabs.stored(link.rank());
    let mut local = cfg.clone();
    local.grid.n[last] = stored.len();
    local.grid.origin[last] += stored.start as f64 * cfg.grid.spacing[last];
    for (s, shared) in [link.has_lower(), link.has_upper()].into_iter().enumerate() {
        if shared {
            local.bc[last][s] = Boundary::Wall {
                velocity: WallVelocity::default(),
            };
        }
    }
    local
}

/// A setting of `cfg` that a run over `parts` processes cannot have, as the error naming its key.
fn unsupported(cfg: &Config, parts: usize) -> Option<Invalid> {
    use PressureSolverKind::*;
    let last = cfg.grid.dim - 1;
    let refused = match cfg.poisson.kind {
        Fft => Some("the transform solve does not run on a grid cut into slabs"),
        // `Laplacian::coarsen`'s rule.
        Multigrid
            if cfg.grid.n[..cfg.grid.dim].iter().any(|n| n % 2 != 0)
                || cfg.grid.n[..cfg.grid.dim].iter().all(|&n| n < 4)
                || cfg.grid.n[..cfg.grid.dim].iter().product::<usize>() <= 64 =>
        {
            Some("multigrid needs a grid that coarsens at least once (even sizes, more than 64 cells)")
        }
        _ => None,
    };
    if let Some(why) = refused {
        return Some(Invalid::new(
            "solver.pressure_solver",
            format!("on {parts} processes the pressure solver is jacobi, sor, pcg or multigrid ({why})"),
        ));
    }
    if cfg.bc[last][0] == (Boundary::Periodic {}) {
        let side = super::staggered::side(last, 0).name();
        return Some(Invalid::new(
            format!("boundary.{side}"),
            format!("on {parts} processes the grid is cut along its last axis, which must not be periodic"),
        ));
    }
    None
}

impl<T: Real, const D: usize, P: SlabPart<T, D>> Solver for Decomposed<T, D, P> {
    fn info(&self) -> SolverInfo {
        let mut info = self.part.info();
        info.grid = self.cfg.grid;
        info
    }

    fn time(&self) -> f64 {
        self.part.time()
    }

    fn steps(&self) -> u64 {
        self.part.steps()
    }

    fn step(&mut self) -> Result<(), SolverError> {
        self.whole.get_mut().expect("whole-grid lock").1 = false;
        self.part.step()
    }

    fn dt(&self) -> f64 {
        self.part.dt()
    }

    fn set_dt_cap(&mut self, cap: f64) {
        self.part.set_dt_cap(cap);
    }

    fn residuals(&self) -> &[(&'static str, f64)] {
        self.part.residuals()
    }

    fn field_names(&self) -> &'static [&'static str] {
        fields::<D>()
    }

    fn gather(&self) {
        self.with_whole(|_| ());
    }

    fn field(&self, name: &str, out: &mut Vec<f64>) -> Option<()> {
        self.with_whole(|w| w?.field(name, out))
    }

    fn sample(&self, name: &str, point: [f64; 3]) -> Option<f64> {
        self.with_whole(|w| w?.sample(name, point))
    }

    fn update(&mut self, spec: &CaseSpec) -> Result<(), Invalid> {
        let cfg = Config::from_spec(spec)?;
        if let Some(e) = unsupported(&cfg, self.link.slabs.parts()).or_else(|| P::unsupported(&cfg)) {
            return Err(e);
        }
        if let Some(w) = &mut self.whole.get_mut().expect("whole-grid lock").0 {
            w.update(spec)?;
        }
        self.part
            .reconfigure(part_config(&cfg, &self.link), cfg.clone())?;
        self.cfg = cfg;
        Ok(())
    }

    fn capped_pressure_solve(&self) -> Option<CappedSolve> {
        self.part.capped_pressure_solve()
    }

    fn summary(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = self.with_whole(|w| w.map(|w| w.summary())).unwrap_or_default();
        m.insert("parts".into(), self.link.slabs.parts().into());
        m.insert("communication_seconds".into(), self.link.comm.seconds().into());
        if let Some(t) = self.part.device_communication_seconds() {
            m.insert("device_communication_seconds".into(), t.into());
        }
        if let Some(phases) = self.part.device_phase_seconds() {
            let phases: serde_json::Map<String, serde_json::Value> = phases
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.into()))
                .collect();
            m.insert("device_phase_seconds".into(), phases.into());
        }
        m
    }

    /// Every part loads `from` (the same solver state on every process) into a whole-grid
    /// solver and takes its slab.
    fn load_state(&mut self, from: &dyn Solver) -> Result<(), Invalid> {
        let mut whole = Projection::new(self.cfg.clone());
        whole.load_state(from)?;
        self.adopt(whole)
    }

    /// The whole state, on the first part (an error on the others, which hold only their slab).
    fn snapshot(&self) -> Result<Snapshot, SolverError> {
        self.with_whole(|w| match w {
            Some(w) => w.snapshot(),
            None => Err(SolverError::PartOnly {
                process: self.link.rank(),
            }),
        })
    }

    /// Every part restores `state` (read by every process) into a whole-grid solver and takes
    /// its slab.
    fn restore(&mut self, state: &Snapshot) -> Result<(), Invalid> {
        let mut whole = Projection::new(self.cfg.clone());
        whole.restore(state)?;
        self.adopt(whole)
    }
}
