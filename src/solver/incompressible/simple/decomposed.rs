//! SIMPLE, SIMPLEC and SIMPLER over several processes: each process steps its part
//! ([`super::part`]) with the single-grid code, and the parts together compute the
//! one-process run with `solver.linear_solver.subdomains` = the number of processes, bit for bit
//! (tested under `mpirun`).
//!
//! As for the projection method ([`crate::solver::incompressible::Decomposed`]), fields,
//! samples, summaries and snapshots are read on the first process from a copy of the whole
//! grid's state gathered there from every part ([`Solver::gather`], collective); the other
//! processes keep only their part and answer none of those reads.

use super::part::{Part, unsupported};
use super::{Simple, SimpleConfig};
use crate::case::{CaseSpec, Invalid};
use crate::parallel::{Communicator, Layers};
use crate::solver::{CappedSolve, Snapshot, Solver, SolverError, SolverInfo};
use std::sync::{Arc, Mutex};

/// One process's part of a SIMPLE-family run over several.
pub struct DecomposedSimple<const D: usize> {
    part: Simple<D>,
    /// The whole grid's configuration.
    cfg: SimpleConfig,
    /// On the first process, the whole grid's state, and whether it is the parts' current one.
    whole: Mutex<(Option<Simple<D>>, bool)>,
}

impl<const D: usize> DecomposedSimple<D> {
    /// This process's part of the case `cfg` cut over `comm`'s processes along its last axis.
    pub fn new(cfg: SimpleConfig, comm: Arc<dyn Communicator>) -> Result<Self, Invalid> {
        if let Some(e) = unsupported(&cfg, comm.size()) {
            return Err(e);
        }
        let part = Part::new(&cfg, comm)?;
        let whole = (part.rank() == 0).then(|| Simple::new(cfg.clone()));
        let local = part.local_config(&cfg);
        Ok(Self {
            part: Simple::with_part(local, Some(part)),
            cfg,
            whole: Mutex::new((whole, true)),
        })
    }

    fn link(&self) -> &Part {
        self.part
            .part
            .as_ref()
            .expect("a part of a run over several processes")
    }

    /// The layers of state array `i` ([`Simple::state_mut`]'s order: the velocity components,
    /// the pressure, the viscosities) and the values of one layer.
    fn state_layers(&self, i: usize) -> (&Layers, usize) {
        let (p, l) = (self.link(), &self.part.l);
        if i == D {
            (&p.cells, l.n[..D - 1].iter().product())
        } else {
            (&p.ghosted, l.stride[D - 1])
        }
    }

    /// Runs `f` on the whole grid's state on the first process (`None` on the others),
    /// gathering it from every part first if a step has changed it since (collective).
    fn with_whole<R>(&self, f: impl FnOnce(Option<&Simple<D>>) -> R) -> R {
        let mut w = self.whole.lock().expect("whole-grid lock");
        if !w.1 {
            let comm = &*self.link().comm;
            let mut whole = w.0.as_mut().map(|s| s.state_mut());
            for (i, x) in self.part.state().into_iter().enumerate() {
                let (layers, layer_len) = self.state_layers(i);
                let into = whole.as_mut().map(|s| &mut s[i][..]);
                layers.gather(comm, x, layer_len, into);
            }
            if let Some(s) = w.0.as_mut() {
                s.set_steps(self.part.steps);
            }
            w.1 = true;
        }
        f(w.0.as_ref())
    }

    /// Sets every part from the whole-grid solver `whole` (built on every process from the
    /// same state), which the first process keeps.
    fn adopt(&mut self, mut whole: Simple<D>) {
        let rank = self.link().rank();
        let all = whole.state_mut();
        let layers: Vec<(Layers, usize)> = (0..all.len())
            .map(|i| {
                let (l, len) = self.state_layers(i);
                (l.clone(), len)
            })
            .collect();
        for ((x, w), (l, len)) in self.part.state_mut().into_iter().zip(all).zip(layers) {
            l.scatter(rank, w, len, x);
        }
        self.part.steps = whole.steps;
        *self.whole.get_mut().expect("whole-grid lock") = ((rank == 0).then_some(whole), true);
    }
}

impl<const D: usize> Solver for DecomposedSimple<D> {
    fn info(&self) -> SolverInfo {
        let mut info = self.part.info();
        info.grid = self.cfg.flow.grid;
        info
    }

    fn time(&self) -> f64 {
        0.0
    }

    fn steps(&self) -> u64 {
        self.part.steps()
    }

    fn step(&mut self) -> Result<(), SolverError> {
        self.whole.get_mut().expect("whole-grid lock").1 = false;
        self.part.step()
    }

    fn dt(&self) -> f64 {
        0.0
    }

    fn set_dt_cap(&mut self, _cap: f64) {}

    fn residuals(&self) -> &[(&'static str, f64)] {
        self.part.residuals()
    }

    fn field_names(&self) -> &'static [&'static str] {
        super::fields::<D>()
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

    /// New settings (the grid, boundaries, initial state, method and overlap apply on reset
    /// only).
    fn update(&mut self, spec: &CaseSpec) -> Result<(), Invalid> {
        let cfg = SimpleConfig::from_spec(spec)?;
        let parts = self.link().comm.size();
        if let Some(e) = unsupported(&cfg, parts) {
            return Err(e);
        }
        if cfg.overlap != self.cfg.overlap {
            return Err(Invalid::new(
                "solver.linear_solver.overlap",
                format!("on {parts} processes the overlap applies on reset only"),
            ));
        }
        if let Some(w) = &mut self.whole.get_mut().expect("whole-grid lock").0 {
            w.reconfigure(cfg.clone())?;
        }
        let local = self.link().local_config(&cfg);
        self.part.reconfigure(local)?;
        if let Some(p) = &mut self.part.part {
            p.velocity_scale = cfg.velocity_scale();
        }
        self.cfg = cfg;
        Ok(())
    }

    fn capped_pressure_solve(&self) -> Option<CappedSolve> {
        self.part.capped_pressure_solve()
    }

    fn summary(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = self.with_whole(|w| w.map(|w| w.summary())).unwrap_or_default();
        let comm = &self.link().comm;
        m.insert("parts".into(), comm.size().into());
        m.insert("communication_seconds".into(), comm.seconds().into());
        m
    }

    /// Every process loads `from` (the same solver state on every process) into a whole-grid
    /// solver and takes its part.
    fn load_state(&mut self, from: &dyn Solver) -> Result<(), Invalid> {
        let mut whole = Simple::new(self.cfg.clone());
        whole.load_state(from)?;
        self.adopt(whole);
        Ok(())
    }

    /// The whole state, on the first process (an error on the others, which hold only their
    /// part).
    fn snapshot(&self) -> Result<Snapshot, SolverError> {
        self.with_whole(|w| match w {
            Some(w) => w.snapshot(),
            None => Err(SolverError::PartOnly {
                process: self.link().rank(),
            }),
        })
    }

    /// Every process restores `state` (read by every process) into a whole-grid solver and
    /// takes its part.
    fn restore(&mut self, state: &Snapshot) -> Result<(), Invalid> {
        let mut whole = Simple::new(self.cfg.clone());
        whole.restore(state)?;
        self.adopt(whole);
        Ok(())
    }
}
