//! A run cut into slabs over several GPUs of one process (`solver.devices = [0, 1, ...]`
//! without `mpirun`): one part a device, each the part a process of an `mpirun` run would
//! build ([`super::build_part_on`]), linked by [`Threads`] on the host and NCCL between the
//! GPUs. Every call runs on all parts at once, one thread each, as the processes of an `mpirun`
//! run make the same calls; what the whole grid answers comes from the first part.
//!
//! So the app and `flowlab run` drive several GPUs like one, and the decomposition is tested on
//! the CPU without MPI (the same parts on the CPU backend).

use super::{Snapshot, Solver, SolverError, SolverInfo, Subdomain};
use crate::case::{CaseSpec, Invalid};
use crate::parallel::threads::Threads;
use crate::parallel::{Communicator, Slabs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Every part of a run on one process.
pub struct Parts {
    parts: Vec<Mutex<Box<dyn Solver>>>,
    ends: Vec<Arc<Threads>>,
    /// Whether the first part holds the whole grid's current state (gathered since the last
    /// step), so reads need no collective call.
    gathered: AtomicBool,
    /// The first part's residuals after the last step (read without a lock).
    residuals: Vec<(&'static str, f64)>,
    /// Each part's own layers along the cut axis, and its device.
    slabs: Slabs,
    devices: Vec<Option<usize>>,
}

/// A failed part (its error, or the panic of a part that stopped waiting for it).
enum Failure<E> {
    Error(E),
    Panic,
}

impl Parts {
    /// The parts of `spec` on `devices` (`None`: on the CPU), built at once (collective: the
    /// parts set up their links while being built).
    pub fn build(spec: &CaseSpec, devices: &[Option<usize>]) -> Result<Self, Invalid> {
        let ends = Threads::new(devices.len());
        let built = on_each(
            &ends,
            devices.iter().zip(&ends).map(|(&d, end)| {
                move || super::build_part_on(spec, end.clone() as Arc<dyn Communicator>, d).map(Mutex::new)
            }),
        )
        .map_err(|e| {
            e.unwrap_or_else(|| Invalid::new("solver.devices", "a part failed while the run was built"))
        })?;
        let info = built[0].lock().expect("part").info();
        let layers = info.grid.n[info.grid.dim - 1];
        let slabs = Slabs::new(layers, devices.len()).map_err(|e| Invalid::new("solver.devices", e))?;
        Ok(Self {
            parts: built,
            gathered: AtomicBool::new(true),
            ends,
            residuals: Vec::new(),
            slabs,
            devices: devices.to_vec(),
        })
    }

    fn first(&self) -> MutexGuard<'_, Box<dyn Solver>> {
        self.parts[0].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `f` on every part at once; the first part's answer, or the first error.
    fn all<R: Send, E: Send>(
        &self,
        f: impl Fn(&mut dyn Solver) -> Result<R, E> + Sync,
    ) -> Result<R, Option<E>> {
        let jobs = self.parts.iter().map(|p| {
            let f = &f;
            move || f(p.lock().unwrap_or_else(|e| e.into_inner()).as_mut())
        });
        on_each(&self.ends, jobs).map(|mut answers| answers.swap_remove(0))
    }

    /// [`Parts::all`] of a call that cannot fail (after a part has failed, the call is not
    /// made and the failure logged).
    fn each(&self, f: impl Fn(&mut dyn Solver) + Sync) {
        let done = self.all(|s| {
            f(s);
            Ok::<(), ()>(())
        });
        if done.is_err() {
            log::error!("a part of the run over several devices has failed; the others wait no longer");
        }
    }

    fn refresh_residuals(&mut self) {
        let r = self.first().residuals().to_vec();
        self.residuals = r;
    }
}

/// Runs each job on its own thread at once (job `r` is part `r`'s, on `ends[r]`); a part that
/// fails or panics releases the others from their waits. The answers in part order, or the
/// first part's error (`None`: only panics).
fn on_each<R: Send, E: Send, J: FnOnce() -> Result<R, E> + Send>(
    ends: &[Arc<Threads>],
    jobs: impl Iterator<Item = J>,
) -> Result<Vec<R>, Option<E>> {
    let results: Vec<Result<R, Failure<E>>> = std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .zip(ends)
            .map(|(job, end)| {
                s.spawn(move || {
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    if !matches!(r, Ok(Ok(_))) {
                        end.fail();
                    }
                    r
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(Ok(Ok(v))) => Ok(v),
                Ok(Ok(Err(e))) => Err(Failure::Error(e)),
                _ => Err(Failure::Panic),
            })
            .collect()
    });
    let mut out = Vec::with_capacity(results.len());
    let mut panicked = false;
    for r in results {
        match r {
            Ok(v) => out.push(v),
            Err(Failure::Error(e)) => return Err(Some(e)),
            Err(Failure::Panic) => panicked = true,
        }
    }
    if panicked { Err(None) } else { Ok(out) }
}

impl Solver for Parts {
    fn info(&self) -> SolverInfo {
        self.first().info()
    }

    fn time(&self) -> f64 {
        self.first().time()
    }

    fn steps(&self) -> u64 {
        self.first().steps()
    }

    fn step(&mut self) -> Result<(), SolverError> {
        self.advance(1)
    }

    fn advance(&mut self, n: u64) -> Result<(), SolverError> {
        *self.gathered.get_mut() = false;
        let r = self.all(|s| s.advance(n));
        self.refresh_residuals();
        r.map_err(|e| {
            e.unwrap_or_else(|| SolverError::Device {
                step: self.steps(),
                time: self.time(),
                message: "a part of the run failed".into(),
            })
        })
    }

    fn dt(&self) -> f64 {
        self.first().dt()
    }

    fn subdomains(&self) -> Vec<Subdomain> {
        let axis = self.first().info().grid.dim - 1;
        (0..self.slabs.parts())
            .map(|r| Subdomain {
                axis,
                layers: self.slabs.owned(r),
                device: self.devices[r],
            })
            .collect()
    }

    fn set_dt_cap(&mut self, cap: f64) {
        self.each(|s| s.set_dt_cap(cap));
    }

    fn residuals(&self) -> &[(&'static str, f64)] {
        &self.residuals
    }

    fn field_names(&self) -> &'static [&'static str] {
        self.first().field_names()
    }

    fn field(&self, name: &str, out: &mut Vec<f64>) -> Option<()> {
        self.gather();
        self.first().field(name, out)
    }

    fn prefetch(&self, names: &[&str]) {
        self.gather();
        self.first().prefetch(names);
    }

    fn display_fields(&self, names: &[&str], out: &mut [Vec<f64>]) -> Option<u64> {
        self.gather();
        self.first().display_fields(names, out)
    }

    fn gather(&self) {
        if !self.gathered.swap(true, Ordering::Relaxed) {
            self.each(|s| s.gather());
        }
    }

    fn sample(&self, name: &str, point: [f64; 3]) -> Option<f64> {
        self.gather();
        self.first().sample(name, point)
    }

    fn update(&mut self, spec: &CaseSpec) -> Result<(), Invalid> {
        self.all(|s| s.update(spec)).map_err(|e| {
            e.unwrap_or_else(|| Invalid::new("solver.devices", "a part failed to take the settings"))
        })
    }

    fn capped_pressure_solve(&self) -> Option<super::CappedSolve> {
        self.first().capped_pressure_solve()
    }

    /// The first part's summary (its communication times as on the first process of an
    /// `mpirun` run).
    fn summary(&self) -> serde_json::Map<String, serde_json::Value> {
        self.gather();
        self.first().summary()
    }

    /// Each part in turn (a part takes its slab of `from` without communication).
    fn load_state(&mut self, from: &dyn Solver) -> Result<(), Invalid> {
        for p in &mut self.parts {
            p.get_mut().unwrap_or_else(|e| e.into_inner()).load_state(from)?;
        }
        self.refresh_residuals();
        Ok(())
    }

    fn snapshot(&self) -> Result<Snapshot, SolverError> {
        self.gather();
        self.first().snapshot()
    }

    /// Each part in turn (a part takes its slab of `state` without communication).
    fn restore(&mut self, state: &Snapshot) -> Result<(), Invalid> {
        for p in &mut self.parts {
            p.get_mut().unwrap_or_else(|e| e.into_inner()).restore(state)?;
        }
        self.refresh_residuals();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Case;

    /// The 3D cavity with `sets` (`key=value`).
    fn cavity(sets: &[&str]) -> CaseSpec {
        let mut case = Case::parse(
            include_str!("../../cases/cavity_3d_re100.toml"),
            "cavity_3d_re100.toml",
        )
        .expect("case");
        for s in ["grid.nx=12", "grid.ny=10", "grid.nz=24", "solver.backend=cpu"]
            .iter()
            .chain(sets)
        {
            case.set_assignment(s).expect("setting");
        }
        case.spec
    }

    /// The time, steps, residuals and every field of a solver.
    type State = (f64, u64, Vec<(&'static str, f64)>, Vec<Vec<f64>>);

    /// Every field, the clock and the residuals of `s`.
    fn state(s: &dyn Solver) -> State {
        let fields = s
            .field_names()
            .iter()
            .map(|n| {
                let mut v = Vec::new();
                s.field(n, &mut v).expect("field");
                v
            })
            .collect();
        (s.time(), s.steps(), s.residuals().to_vec(), fields)
    }

    #[test]
    fn parts_on_threads_give_the_one_part_result_bit_for_bit() {
        for solver in ["jacobi", "pcg", "multigrid"] {
            let spec = cavity(&[
                &format!("solver.pressure_solver={solver}"),
                "solver.tolerance=1e-8",
            ]);
            let mut one = super::super::build(&spec).expect("one part");
            one.advance(6).expect("steps");
            for parts in [2, 3] {
                let mut several = Parts::build(&spec, &vec![None; parts]).expect("parts");
                several.advance(6).expect("steps");
                assert!(
                    state(&several) == state(one.as_ref()),
                    "{solver}: {parts} parts differ from one"
                );
                // Each part's own layers, in order, cover the 24 layers of the last axis.
                let owned = several.subdomains();
                assert_eq!(owned.len(), parts);
                assert!(owned.iter().all(|s| s.axis == 2 && s.device.is_none()));
                assert_eq!((owned[0].layers.start, owned[parts - 1].layers.end), (0, 24));
                assert!(owned.windows(2).all(|w| w[0].layers.end == w[1].layers.start));
            }
        }
    }

    /// The rotor in hover on 2 and 3 parts whose cuts cross its disk, with live changes of its
    /// loading (the collective: the tables kept) and of its geometry (the radius: each part's
    /// tables built again from the whole grid's): bit for bit the one-part run, thrust included.
    #[test]
    fn a_rotor_on_parts_follows_live_changes_bit_for_bit() {
        let mut case =
            Case::parse(include_str!("../../cases/rotor_hover.toml"), "rotor_hover.toml").expect("case");
        for s in [
            "grid.nx=32",
            "grid.ny=48",
            "grid.nz=32",
            "solver.backend=cpu",
            "solver.pressure_solver=multigrid",
        ] {
            case.set_assignment(s).expect("setting");
        }
        for parts in [2, 3] {
            let mut one = super::super::build(&case.spec).expect("one part");
            let mut several = Parts::build(&case.spec, &vec![None; parts]).expect("parts");
            one.advance(3).expect("steps");
            several.advance(3).expect("steps");
            let mut live = case.clone();
            for change in ["rotor.collective=10.0", "rotor.radius=1.25"] {
                live.set_assignment(change).expect("change");
                one.update(&live.spec).expect("one part takes the change");
                several.update(&live.spec).expect("the parts take the change");
                one.advance(3).expect("steps");
                several.advance(3).expect("steps");
                assert!(
                    state(&several) == state(one.as_ref()),
                    "{parts} parts differ from one after {change}"
                );
            }
            let thrust = state(one.as_ref())
                .2
                .into_iter()
                .find(|(n, _)| *n == "rotor_thrust");
            assert!(thrust.is_some_and(|(_, t)| t != 0.0), "no thrust: {thrust:?}");
        }
    }

    #[test]
    fn a_part_that_cannot_be_built_fails_the_build_with_its_reason() {
        // 24 layers cannot give 13 parts two layers each.
        let spec = cavity(&["solver.pressure_solver=jacobi"]);
        let e = Parts::build(&spec, &vec![None; 13]).err().expect("refused");
        assert_eq!(e.key, "grid.nz", "{}", e.message);
    }
}
