//! Numerical solvers behind one [`Solver`] interface, used unchanged by the headless runner,
//! the benchmarks, the tests and the app: create from a case, step, read fields by name,
//! change live settings, read residuals and diagnostics.

pub mod compressible;
pub mod display;
pub mod grid;
pub mod incompressible;
pub mod limiter;
pub mod linear;
pub mod memory;
pub mod parts;
pub mod real;
pub mod rotor;
pub mod snapshot;
pub mod stopping;

pub use display::{DisplayTarget, PlaneCut, ValueStats};
pub use grid::Grid;
pub use snapshot::Snapshot;
pub use stopping::{Outcome, StepRecord, StopReason, StopRule, run_until};

use crate::case::{BackendChoice, CaseSpec, Invalid, Kind};
use std::fmt;

/// A solver that advances one case in time.
pub trait Solver: Send {
    /// Static description (family, method, backend, precision, grid).
    fn info(&self) -> SolverInfo;
    /// Simulated physical time. A steady solver (the SIMPLE family, whose steps are outer
    /// iterations) has none and reports 0, as its [`Solver::dt`]; [`Solver::steps`] counts its
    /// iterations.
    fn time(&self) -> f64;
    /// Steps taken since the start.
    fn steps(&self) -> u64;
    /// Advances one time step (the step size follows from the CFL settings). On error the
    /// state is that of the failed step and the run must not continue.
    fn step(&mut self) -> Result<(), SolverError>;
    /// Advances `n` time steps as one batch, each exactly as [`Solver::step`] would, and stops
    /// at the first that fails. [`Solver::residuals`] and [`Solver::dt`] then describe the last
    /// step taken. A device backend may run the batch without returning to the host between
    /// steps (the CUDA projection solver with the transform pressure solve and the CUDA
    /// compressible solvers replay one CUDA graph per step and read their scalars once); the
    /// others step one by one.
    fn advance(&mut self, n: u64) -> Result<(), SolverError> {
        for _ in 0..n {
            self.step()?;
        }
        Ok(())
    }
    /// The most steps [`Solver::advance_recorded`] takes without returning to the host: 1 (the
    /// default) where every step returns to it.
    fn batch_limit(&self) -> u64 {
        1
    }
    /// Advances up to `n` steps (at most [`Solver::batch_limit`]) towards the end time `t_end`,
    /// if any: each step's size capped to land on it, no step once it is reached
    /// ([`stopping::time_left`]), as [`stopping::advance_step_by_step`] does (the default).
    /// Pushes each step's [`StepRecord`], also those taken before a step that fails. A device
    /// backend may take the steps as one batch and keep their records on the device until its
    /// end (the CUDA compressible solvers).
    fn advance_recorded(
        &mut self,
        n: u64,
        t_end: Option<f64>,
        records: &mut Vec<StepRecord>,
    ) -> Result<(), SolverError> {
        stopping::advance_step_by_step(self, n, t_end, records)
    }
    /// Size of the last step (0 for a steady solver).
    fn dt(&self) -> f64;
    /// The parts of a grid cut into slabs over several devices of this process
    /// ([`parts::Parts`]); empty when one device or the CPU runs the whole grid.
    fn subdomains(&self) -> Vec<Subdomain> {
        Vec::new()
    }
    /// Caps the size of the following steps (to land on an output time); `f64::INFINITY` lifts it.
    fn set_dt_cap(&mut self, cap: f64);
    /// Residual-type numbers of the last step, by name (for progress, `residuals.csv`, plots).
    /// `steady_change`, when present, is the relative change of the solution per unit time.
    fn residuals(&self) -> &[(&'static str, f64)];
    /// Names of the scalar fields [`Solver::field`] can produce.
    fn field_names(&self) -> &'static [&'static str];
    /// A scalar field at cell centres, `x` fastest (`out[(k * ny + j) * nx + i]`); `None` for an
    /// unknown name. `out` is resized as needed.
    fn field(&self, name: &str, out: &mut Vec<f64>) -> Option<()>;
    /// Announces the fields the next [`Solver::field`] calls of the current state will read, so
    /// a device backend can derive them and start copying them to the host now, overlapped with
    /// whatever comes next (the CUDA solvers: on the device, into pinned memory, on a copy
    /// stream). Unknown names are ignored; the CPU solvers compute fields on request and do
    /// nothing here.
    fn prefetch(&self, _names: &[&str]) {}
    /// Fields `names` of one state for display, one vector per name in `out` (laid out as in
    /// [`Solver::field`]); returns the step count of that state, or `None` if a name is unknown.
    /// A device backend may answer with the state it was last asked to [`Solver::prefetch`]
    /// before the current one instead of waiting for a copy of the current state still under
    /// way: the view then runs one frame behind while that copy overlaps the next steps. The
    /// CPU solvers read the current state.
    fn display_fields(&self, names: &[&str], out: &mut [Vec<f64>]) -> Option<u64> {
        read_fields(self, names, out)
    }
    /// The CUDA device whose memory [`Solver::display_fields_on_device`] writes, for a view
    /// that draws the fields from device memory it shares with CUDA; `None` where fields are
    /// read on the host (the CPU backend, a run over several devices).
    fn display_device(&self) -> Option<std::sync::Arc<crate::backend::cuda::Gpu>> {
        None
    }
    /// [`Solver::display_fields`] into device memory of [`Solver::display_device`]: field
    /// `names[i]` of one state narrowed to f32 into `targets[i]` (whole, or a plane of it) and
    /// the colour-scale statistics of what it holds into `stats[i]`; the targets hold the state
    /// when this returns. `None` if a name is unknown, the solver has no display device, or
    /// (logged) the device failed.
    fn display_fields_on_device(
        &self,
        _names: &[&str],
        _targets: &[DisplayTarget],
        _stats: &mut [ValueStats],
    ) -> Option<u64> {
        None
    }
    /// Brings the state that fields, samples, the summary and snapshots read up to date. On a
    /// run over several processes ([`crate::parallel`]) this gathers every part's state and is
    /// collective: every process calls it at the same point, before any of those reads. The
    /// default (one process) does nothing.
    fn gather(&self) {}
    /// A field's value at a point, interpolated from where the discretisation stores it.
    fn sample(&self, name: &str, point: [f64; 3]) -> Option<f64>;
    /// Applies the live-changeable settings of `spec` (physics, CFL, schemes, solvers) without
    /// touching the state. Settings that need a restart (grid, boundaries, precision) must be
    /// unchanged, or this fails and changes nothing.
    fn update(&mut self, spec: &CaseSpec) -> Result<(), Invalid>;
    /// The pressure (or pressure-correction) solve of the last step when it stopped at its
    /// iteration cap short of its tolerance; `None` when it converged or the solver has none.
    fn capped_pressure_solve(&self) -> Option<CappedSolve> {
        None
    }
    /// The rotor whose loads enter the momentum equations (`[rotor]`), for the view to draw.
    fn rotor(&self) -> Option<rotor::Rotor> {
        None
    }
    /// Family-specific results for `summary.json` (e.g. the primary vortex of a cavity).
    fn summary(&self) -> serde_json::Map<String, serde_json::Value>;
    /// The exact solution of field `name` at cell centres at the current time, where one exists
    /// (e.g. 1D Riemann initial data); layout as in [`Solver::field`].
    fn exact_field(&self, _name: &str, _out: &mut Vec<f64>) -> Option<()> {
        None
    }
    /// Replaces the state by `from`'s, sampled through [`Solver::sample`] (bilinear) at this
    /// solver's own storage points, and takes over its time and step count: a restart on
    /// another grid, precision or backend that keeps the flow. `from` must be of the same
    /// family and dimension ([`check_transfer`]). Multi-step history (AB2's `H^{n-1}`, CE/SE's
    /// gradients) restarts as at `t = 0`. A steady solver's time is 0 ([`Solver::time`]): a
    /// time-dependent solver that takes over a SIMPLE state starts its clock at 0 (the
    /// iterations become its step count). On error nothing changes.
    fn load_state(&mut self, from: &dyn Solver) -> Result<(), Invalid>;
    /// The complete state ([`Snapshot`]: clock, fields and multi-step history), from which
    /// [`Solver::restore`] continues bit for bit as this run would. A device backend reads it
    /// back (a failure is [`SolverError::Device`]).
    fn snapshot(&self) -> Result<Snapshot, SolverError>;
    /// Replaces the state by `state`, taken by [`Solver::snapshot`] of a solver with the same
    /// method, precision and grid (on either backend); the live settings stay this solver's.
    /// On error nothing changes.
    fn restore(&mut self, state: &Snapshot) -> Result<(), Invalid>;
}

/// Fields `names` of `solver`'s current state into `out` (one vector per name, as
/// [`Solver::field`]); returns its step count, or `None` if a name is unknown.
pub fn read_fields<S: Solver + ?Sized>(solver: &S, names: &[&str], out: &mut [Vec<f64>]) -> Option<u64> {
    for (name, out) in names.iter().zip(out) {
        solver.field(name, out)?;
    }
    Some(solver.steps())
}

/// Whether a state can move from a solver described by `from` to one described by `to`
/// ([`Solver::load_state`]): same family and dimension, and the same domain.
pub fn check_transfer(to: &SolverInfo, from: &SolverInfo) -> Result<(), Invalid> {
    if to.kind != from.kind || to.grid.dim != from.grid.dim {
        return Err(Invalid::new(
            "case",
            format!(
                "cannot carry a {:?} {}D state over to a {:?} {}D solver",
                from.kind, from.grid.dim, to.kind, to.grid.dim
            ),
        ));
    }
    let (a, b) = (&to.grid, &from.grid);
    for d in 0..a.dim {
        let tol = 1e-9 * a.extent(d).abs().max(b.extent(d).abs());
        if (a.origin[d] - b.origin[d]).abs() > tol || (a.extent(d) - b.extent(d)).abs() > tol {
            return Err(Invalid::new(
                "grid",
                "the state can only be carried over to a grid on the same domain (origin and extents)",
            ));
        }
    }
    Ok(())
}

/// A linear solve that stopped at its iteration cap without reaching its tolerance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CappedSolve {
    pub iterations: usize,
    /// Relative residual at exit (`||b - A x|| / ||b||` for the projection's pressure,
    /// the residual reduction for the SIMPLE family's solves) and the tolerance it missed.
    pub residual: f64,
    pub tolerance: f64,
}

impl CappedSolve {
    /// `Some` when a SIMPLE-family linear solve of tolerance `tolerance` did not converge.
    pub fn of_linear(stats: &linear::LinearStats, tolerance: f64) -> Option<CappedSolve> {
        (!stats.converged).then(|| CappedSolve {
            iterations: stats.iterations,
            residual: stats.reduction(),
            tolerance,
        })
    }
}

/// What a solver is.
#[derive(Clone, Debug, PartialEq)]
pub struct SolverInfo {
    pub kind: Kind,
    pub method: &'static str,
    pub backend: &'static str,
    pub precision: &'static str,
    pub grid: Grid,
}

/// One part of a grid cut into slabs: its own cells along the cut `axis` (the last) and the
/// GPU that steps it (`None`: the CPU).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subdomain {
    pub axis: usize,
    pub layers: std::ops::Range<usize>,
    pub device: Option<usize>,
}

/// Why a run stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum SolverError {
    /// The solution blew up or became unphysical.
    Diverged { step: u64, time: f64, message: String },
    /// The compute device failed (out of memory, a kernel fault, a lost device).
    Device { step: u64, time: f64, message: String },
    /// This process of a run over several holds only its part of the state
    /// ([`crate::parallel`]); the first process reads the whole.
    PartOnly { process: usize },
}

impl fmt::Display for SolverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SolverError::Diverged { step, time, message } => {
                write!(f, "the run diverged at step {step} (t = {time:.6}): {message}")
            }
            SolverError::Device { step, time, message } => {
                write!(
                    f,
                    "the CUDA device failed at step {step} (t = {time:.6}): {message}"
                )
            }
            SolverError::PartOnly { process } => {
                write!(
                    f,
                    "process {process} holds only its slab of the grid; the first process reads the whole state"
                )
            }
        }
    }
}

impl std::error::Error for SolverError {}

/// The family-specific checks of a case (settings a family does not use are errors), and the
/// memory its solver needs against the host's ([`memory::check_host`]).
pub fn check_case(spec: &CaseSpec) -> Result<(), Invalid> {
    match spec.case.kind {
        Kind::Incompressible => incompressible::check(spec),
        Kind::Compressible => compressible::Config::from_spec(spec).map(|_| ()),
    }?;
    memory::check_host(spec).map(|_| ())
}

/// Builds this process's part of a case cut over `comm`'s processes (the incompressible
/// projection method on the CPU backend, or on one GPU a process with `backend = "cuda"`;
/// [`crate::parallel`]). The memory check counts this
/// process's slab, and on the first process the whole grid's copy it gathers for output.
pub fn build_part(
    spec: &CaseSpec,
    comm: std::sync::Arc<dyn crate::parallel::Communicator>,
) -> Result<Box<dyn Solver>, Invalid> {
    // On the CUDA backend, this process's GPU.
    let device = match spec.solver.backend {
        Some(BackendChoice::Cuda) => {
            let local = crate::parallel::launcher_local_rank().unwrap_or(comm.rank());
            Some(device_ordinal(spec, Some(local))?)
        }
        _ => None,
    };
    build_part_on(spec, comm, device)
}

/// Builds part `comm.rank()` of a case cut over `comm`'s parts, on GPU `device` (NCCL between
/// the parts' GPUs) or on the CPU (`None`).
pub fn build_part_on(
    spec: &CaseSpec,
    comm: std::sync::Arc<dyn crate::parallel::Communicator>,
    device: Option<usize>,
) -> Result<Box<dyn Solver>, Invalid> {
    let parts = comm.size();
    if spec.case.kind != Kind::Incompressible {
        return Err(Invalid::new(
            "case.kind",
            format!(
                "on {parts} processes the case kind is incompressible (the compressible solvers run on one process)"
            ),
        ));
    }
    if device.is_some() {
        crate::backend::cuda::probe().map_err(|e| {
            Invalid::new(
                "solver.backend",
                format!("cuda was asked for on {parts} processes, but {e}; use backend = \"cpu\""),
            )
        })?;
    }
    let g = &spec.grid;
    let layers = [g.nx, g.ny, g.nz][(spec.case.dim as usize).clamp(1, 3) - 1];
    // A grid that cannot be cut is refused by the solver, naming why. The SIMPLE family's
    // parts store the Schwarz strips' layers (`simple::part`), the projection's its slabs.
    let rank = comm.rank();
    let stored = if incompressible::steady(spec) {
        let overlap = incompressible::SimpleConfig::from_spec(spec).map(|c| c.overlap);
        overlap
            .ok()
            .filter(|_| layers >= parts)
            .map(|k| incompressible::simple::part_stored_layers(rank, parts, layers, k).len())
    } else {
        crate::parallel::Slabs::new(layers, parts)
            .ok()
            .map(|s| s.stored(rank).len())
    };
    if let Some(stored) = stored {
        memory::check_host_part(spec, stored, layers, rank == 0)?;
        if let Some(d) = device {
            memory::check_device(spec, d, Some((stored, layers)))?;
        }
    }
    incompressible::build_part(spec, comm, device)
}

/// The CUDA device of this process (`solver.devices`): on one process (`local_rank` `None`) the
/// list's first entry (a list of several cuts the grid over them: [`several_devices`]), or
/// device 0; on process `local_rank` of a host in a run over several, `devices[local_rank %
/// len]`, or by default `local_rank` modulo the number of devices.
pub fn device_ordinal(spec: &CaseSpec, local_rank: Option<usize>) -> Result<usize, Invalid> {
    let devices = spec.solver.devices.as_deref().unwrap_or_default();
    match (local_rank, devices) {
        (None, []) => Ok(0),
        (None, list) => Ok(list[0]),
        (Some(r), []) => {
            let count = crate::backend::cuda::probe()
                .map_err(|e| Invalid::new("solver.backend", e))?
                .device_count
                .max(1) as usize;
            Ok(r % count)
        }
        (Some(r), list) => Ok(list[r % list.len()]),
    }
}

/// The run of one process over the GPUs `devices` (`solver.devices` of several entries): the
/// grid cut into one slab a device ([`parts::Parts`]); each device must exist and appear once.
fn several_devices(spec: &CaseSpec, devices: &[usize]) -> Result<Box<dyn Solver>, Invalid> {
    let count = crate::backend::cuda::probe()
        .map_err(|e| Invalid::new("solver.backend", e))?
        .device_count as usize;
    for (i, &d) in devices.iter().enumerate() {
        if d >= count {
            return Err(Invalid::new(
                "solver.devices",
                format!("device {d} was asked for; the driver sees {count} (0..{count})"),
            ));
        }
        if devices[..i].contains(&d) {
            return Err(Invalid::new(
                "solver.devices",
                format!("device {d} is listed twice; each part of the grid needs its own GPU"),
            ));
        }
    }
    let devices: Vec<Option<usize>> = devices.iter().map(|&d| Some(d)).collect();
    Ok(Box::new(parts::Parts::build(spec, &devices)?))
}

/// Builds the solver a case asks for, on the backend of `solver.backend`:
/// - `cpu`: the CPU reference solvers;
/// - `cuda`: the GPU solver, or an error naming `solver.backend` when no usable device, driver
///   or NVRTC is present, or the key of a setting the CUDA backend does not have;
/// - `auto` (the default when the key is absent): the GPU solver where a device is usable and
///   the case's settings run there, else the CPU solvers (with one warning per process when the
///   device is missing or a setting is CPU-only).
///
/// Before anything is allocated, the memory the solver needs is checked against the host's
/// available memory and, for a CUDA solver, the device's free memory ([`memory`]); a grid too
/// large is an error naming its key, the estimate and the limit.
pub fn build(spec: &CaseSpec) -> Result<Box<dyn Solver>, Invalid> {
    let cpu = |spec: &CaseSpec| {
        memory::check_host(spec)?;
        match spec.case.kind {
            Kind::Incompressible => incompressible::build(spec),
            Kind::Compressible => compressible::build(spec),
        }
    };
    let gpu = |spec: &CaseSpec| {
        if let Some(list @ [_, _, ..]) = spec.solver.devices.as_deref() {
            return several_devices(spec, list);
        }
        let device = device_ordinal(spec, None)?;
        memory::check_device(spec, device, None)?;
        match spec.case.kind {
            Kind::Incompressible => incompressible::build_cuda(spec, device),
            Kind::Compressible => compressible::build_cuda(spec, device),
        }
    };
    match spec.solver.backend.unwrap_or(BackendChoice::Auto) {
        BackendChoice::Cpu => cpu(spec),
        BackendChoice::Cuda => {
            crate::backend::cuda::probe().map_err(|e| {
                Invalid::new(
                    "solver.backend",
                    format!("cuda was asked for, but {e}; use backend = \"cpu\" or \"auto\""),
                )
            })?;
            gpu(spec)
        }
        BackendChoice::Auto => match crate::backend::cuda::probe() {
            Ok(_) => gpu(spec).or_else(|e| {
                log::warn!(
                    "backend = auto: {}: {}; running on the CPU backend",
                    e.key,
                    e.message
                );
                cpu(spec)
            }),
            Err(e) => {
                static WARNED: std::sync::Once = std::sync::Once::new();
                WARNED.call_once(|| log::warn!("backend = auto: {e}; running on the CPU backend"));
                cpu(spec)
            }
        },
    }
}
