//! `flowlab run`: a headless run of one case, writing fields, summary, residual history and line
//! samples into an output folder.
//!
//! Losing no work: `--checkpoint-every N` writes the complete state ([`crate::solver::Snapshot`]
//! with the case) to `checkpoint.flowlab` every N steps, atomically, and the residual history so
//! far with it; SIGINT or SIGTERM ends the run after the step under way, writes the results so
//! far and a checkpoint, and prints the command that resumes it. `--restart FILE` continues a
//! checkpoint bit for bit as the uninterrupted run would have gone on.

use crate::export::csv::{ResidualLog, profile};
use crate::export::mesh::{Iso, iso_mesh, write_ply};
use crate::export::sampling::{Line, Plane, line_samples, plane_samples};
use crate::export::vti;
use crate::solver::snapshot::{read_checkpoint, write_checkpoint};
use crate::solver::stopping::{CappedSolves, StopKeys};
use crate::solver::{self, Snapshot, Solver, StepRecord, StopReason, StopRule, run_until};
use anyhow::{Context, bail};
use clap::Args as ClapArgs;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Case file (TOML), e.g. cases/lid_driven_cavity_re100.toml; with --restart, the case saved
    /// in the checkpoint when absent.
    #[arg(required_unless_present = "restart")]
    pub case: Option<PathBuf>,
    /// Override a case key, validated like the file: --set grid.nx=256 --set physics.re=400.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Stop at step N, counted from t = 0 (also after --restart; overrides [stop] of the case;
    /// at least 1).
    #[arg(long, group = "stop", allow_hyphen_values = true)]
    pub steps: Option<u64>,
    /// Stop at simulated time T (the last step lands on it; a finite number > 0).
    #[arg(long, group = "stop", allow_hyphen_values = true)]
    pub t_end: Option<f64>,
    /// Stop when the relative change of the solution per unit time falls below TOL (a finite
    /// number > 0).
    #[arg(long, group = "stop", allow_hyphen_values = true)]
    pub until_steady: Option<f64>,
    /// Sample all fields along x0,y0,x1,y1,N (3D: x0,y0,z0,x1,y1,z1,N) into line_K.csv
    /// (repeatable; both ends inside the domain).
    #[arg(long = "line", value_name = "x0,y0,x1,y1,N", allow_hyphen_values = true)]
    pub lines: Vec<Line>,
    /// Sample all fields over the plane AXIS=VALUE of a 3D case (e.g. z=0.5) at the cell centres
    /// into plane_K.csv (repeatable).
    #[arg(long = "plane", value_name = "AXIS=VALUE", allow_hyphen_values = true)]
    pub planes: Vec<Plane>,
    /// Write the isosurface FIELD = LEVEL of a 3D case's final state as a binary PLY mesh,
    /// iso_K.ply (repeatable; e.g. --iso speed=0.2).
    #[arg(long = "iso", value_name = "FIELD=LEVEL", allow_hyphen_values = true)]
    pub isos: Vec<Iso>,
    /// Compute backend (overrides solver.backend).
    #[arg(long, value_parser = ["cpu", "auto", "cuda"])]
    pub backend: Option<String>,
    /// CUDA devices, e.g. 0,1 (overrides solver.devices): one process cuts the grid over all
    /// of them; under `mpirun -n N flowlab run` process r of a host takes the (r mod count)-th.
    #[arg(long, value_delimiter = ',', value_name = "D0,D1,...")]
    pub devices: Vec<usize>,
    /// Worker threads (0 = one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Write the complete state to OUT/checkpoint.flowlab every N steps (atomically replaced).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub checkpoint_every: Option<u64>,
    /// Continue the run saved in a checkpoint file (written by --checkpoint-every or on Ctrl-C).
    #[arg(long, value_name = "FILE")]
    pub restart: Option<PathBuf>,
    /// Output folder (created if needed).
    #[arg(long)]
    pub out: PathBuf,
    /// Overwrite the results of an earlier run in the output folder.
    #[arg(long)]
    pub force: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Do not write fields.vti (timing runs of grids whose fields would fill gigabytes).
    #[arg(long)]
    pub no_fields: bool,
}

/// Files a run writes; an existing one is only replaced with `--force`, or by the run that
/// continues the checkpoint in that folder.
const OUTPUTS: &[&str] = &[
    "fields.vti",
    "profile.csv",
    "summary.json",
    "residuals.csv",
    CHECKPOINT,
];

/// The checkpoint's name in the output folder.
pub const CHECKPOINT: &str = "checkpoint.flowlab";

/// A run ended by SIGINT or SIGTERM after writing its results and a checkpoint; `main` exits
/// with status 130 and this message, which names the resume command.
#[derive(Debug)]
pub struct Interrupted(pub String);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Interrupted {}

/// Raised by the SIGINT/SIGTERM handler; a second signal exits at once.
static INTERRUPT: AtomicBool = AtomicBool::new(false);

fn install_signal_handler() {
    // Fails only if a handler is already installed (a second run in this process): keep it.
    let _ = ctrlc::set_handler(|| {
        if INTERRUPT.swap(true, Ordering::SeqCst) {
            eprintln!("\ninterrupted twice: exiting without writing results");
            std::process::exit(130);
        }
        eprintln!(
            "\ninterrupt: finishing the step under way, then writing the results (Ctrl-C again to exit now)"
        );
    });
}

/// The case to run and, with `--restart`, the state to continue from.
fn load(args: &Args, sets: &[String]) -> anyhow::Result<(crate::case::Case, Option<Snapshot>)> {
    let Some(file) = &args.restart else {
        let path = args
            .case
            .as_ref()
            .expect("clap requires a case without --restart");
        return Ok((super::load_case(path, sets)?, None));
    };
    let (text, state) = read_checkpoint(file).map_err(anyhow::Error::msg)?;
    let case = match &args.case {
        Some(path) => super::load_case(path, sets)?,
        None => {
            let mut case = crate::case::Case::parse(&text, &format!("{} (its saved case)", file.display()))?;
            for s in sets {
                case.set_assignment(s)?;
            }
            case
        }
    };
    Ok((case, Some(state)))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match crate::parallel::launcher_size() {
        Some(n) if n > 1 => run_parts(args, n),
        _ => run_on(args, None),
    }
}

/// A run over the `n` processes an MPI launcher started (`mpirun -n N flowlab run ...`): each
/// steps its slab of the grid; the first writes the results. An error on any process ends
/// them all.
#[cfg(feature = "mpi")]
fn run_parts(args: Args, n: usize) -> anyhow::Result<()> {
    let session = crate::parallel::mpi::Session::start().with_context(|| {
        format!("started by an MPI launcher as one of {n} processes, but MPI could not be initialised")
    })?;
    let comm = session.world();
    let rank = comm.rank();
    match run_on(args, Some(comm)) {
        Ok(()) => Ok(()),
        Err(e) => {
            eprintln!("flowlab run (process {rank} of {n}): {e:#}");
            session.abort(1)
        }
    }
}

#[cfg(not(feature = "mpi"))]
fn run_parts(_args: Args, n: usize) -> anyhow::Result<()> {
    bail!(
        "started by an MPI launcher as one of {n} processes, but this flowlab was built without MPI: \
         build it with `cargo build --release --features mpi` (needs an MPI library such as libopenmpi-dev, and libclang)"
    )
}

/// `run` on one process (`comm` `None`) or as one part of a run over several.
fn run_on(args: Args, comm: Option<std::sync::Arc<dyn crate::parallel::Communicator>>) -> anyhow::Result<()> {
    // Only the first process writes files and reports.
    let root = comm.as_ref().is_none_or(|c| c.rank() == 0);
    let quiet = args.quiet || !root;
    let mut sets = args.sets.clone();
    if !args.devices.is_empty() {
        let list: Vec<String> = args.devices.iter().map(|d| d.to_string()).collect();
        sets.push(format!("solver.devices=[{}]", list.join(",")));
    }
    if let Some(b) = &args.backend {
        sets.push(format!("solver.backend={b}"));
    }
    let (case, restored) = load(&args, &sets)?;
    let spec = &case.spec;
    let mut rule = if args.steps.is_some() || args.t_end.is_some() || args.until_steady.is_some() {
        let rule = StopRule {
            steps: args.steps,
            t_end: args.t_end,
            steady_tol: args.until_steady,
            interrupt: None,
        };
        rule.check(StopKeys::CLI)
            .map_err(|e| anyhow::anyhow!("option `{}`: {}", e.key, e.message))?;
        rule
    } else {
        StopRule::of_case(&spec.stop)
    };
    if rule.is_empty() {
        bail!(
            "{}: no stop criterion: give --steps, --t-end or --until-steady, or a [stop] section",
            case.name
        );
    }
    check_samples(
        &args.lines,
        &args.planes,
        &solver::Grid::from_spec(spec.case.dim as usize, &spec.grid),
    )?;
    if !args.isos.is_empty() && spec.case.dim != 3 {
        bail!(
            "option `--iso`: isosurfaces are of 3D cases, {} is {}D",
            case.name,
            spec.case.dim
        );
    }
    if args.isos.len() > MAX_PLANES {
        bail!(
            "option `--iso`: at most {MAX_PLANES} isosurfaces, got {}",
            args.isos.len()
        );
    }
    let continues_here = args
        .restart
        .as_ref()
        .is_some_and(|f| same_dir(f.parent().unwrap_or(Path::new(".")), &args.out));
    if root {
        prepare_out_dir(
            &args.out,
            args.force || continues_here,
            args.lines.len(),
            args.planes.len(),
            args.isos.len(),
        )?;
    }
    let pool = crate::backend::cpu::thread_pool(args.threads).context("cannot start the worker threads")?;
    let case_error = |key: String, message: String| {
        crate::case::CaseError::new(
            crate::case::Origin::File {
                name: case.name.clone(),
                line_col: None,
            },
            Some(key),
            message,
        )
    };
    let mut solver = match &comm {
        None => solver::build(spec),
        Some(c) => solver::build_part(spec, c.clone()),
    }
    .map_err(|e| case_error(e.key, e.message))?;
    if let Some(iso) = args
        .isos
        .iter()
        .find(|i| !solver.field_names().contains(&i.field.as_str()))
    {
        bail!(
            "option `--iso`: {} has no field `{}`; its fields: {}",
            case.name,
            iso.field,
            solver.field_names().join(", ")
        );
    }
    let mut log = ResidualLog::default();
    if let (Some(state), Some(file)) = (&restored, &args.restart) {
        solver
            .restore(state)
            .map_err(|e| anyhow::anyhow!("{}: cannot continue it: {}", file.display(), e.message))?;
        if let Some(n) = rule.steps {
            if n <= state.steps {
                bail!(
                    "{}: the checkpoint is at step {}, the run stops at step {n} (--steps counts from t = 0)",
                    file.display(),
                    state.steps
                );
            }
            rule.steps = Some(n - state.steps);
        }
        if continues_here {
            if let Ok(text) = std::fs::read_to_string(args.out.join("residuals.csv")) {
                log.resume(&text, state.steps);
            }
        }
    }
    // Over several processes Ctrl-C ends them at once (each would see it after another step);
    // `--checkpoint-every` keeps the work.
    if comm.is_none() {
        install_signal_handler();
        rule.interrupt = Some(&INTERRUPT);
    }
    let mut capped = CappedSolves::default();
    let bar = progress_bar(quiet, &rule);
    let start = Instant::now();
    let mut last_log = start;
    let mut checkpoint_error = None;
    let result = pool.install(|| {
        run_until(solver.as_mut(), &rule, args.checkpoint_every, |s, step| {
            log.record(step);
            capped.observe(step);
            update_bar(&bar, step, &rule, quiet, &mut last_log);
            // Batches end at the checkpoints' steps, so `s` is at `step` here.
            if checkpoint_error.is_none()
                && args
                    .checkpoint_every
                    .is_some_and(|n| step.steps.is_multiple_of(n))
            {
                s.gather();
                if root {
                    checkpoint_error = checkpoint(&case, s, &log, &args.out).err();
                }
            }
        })
    });
    let wall = start.elapsed().as_secs_f64();
    bar.finish_and_clear();
    solver.gather();
    if !root {
        // The first process reports the outcome, the same on every process.
        return Ok(());
    }
    std::fs::write(args.out.join("residuals.csv"), log.to_csv())?;
    let (reason, error) = match &result {
        Ok(o) => (Some(o.reason), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let summary = summary(
        &case,
        solver.as_ref(),
        wall,
        pool.current_num_threads(),
        comm.as_ref().map_or(1, |c| c.size()),
        reason,
        error.as_deref(),
        &capped,
    );
    std::fs::write(
        args.out.join("summary.json"),
        serde_json::to_string_pretty(&summary)? + "\n",
    )?;
    if let Err(e) = result {
        bail!("{}: {e}", case.name);
    }
    let g = solver.info().grid;
    if g.dim == 1 {
        std::fs::write(args.out.join("profile.csv"), profile(solver.as_ref()))?;
    } else if !args.no_fields {
        vti::write_fields(solver.as_ref(), &args.out.join("fields.vti"))?;
    }
    for (k, line) in args.lines.iter().enumerate() {
        std::fs::write(
            args.out.join(format!("line_{k}.csv")),
            line_samples(solver.as_ref(), line),
        )?;
    }
    for (k, plane) in args.planes.iter().enumerate() {
        std::fs::write(
            args.out.join(format!("plane_{k}.csv")),
            plane_samples(solver.as_ref(), plane),
        )?;
    }
    for (k, iso) in args.isos.iter().enumerate() {
        let mesh = iso_mesh(solver.as_ref(), iso).context("the isosurface's field")?;
        let path = args.out.join(format!("iso_{k}.ply"));
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
        write_ply(&mesh, &mut out)?;
        std::io::Write::flush(&mut out)?;
    }
    // The run's results are written even when a checkpoint could not be.
    if let Some(e) = checkpoint_error {
        return Err(e.context(format!("{}: writing a checkpoint failed", case.name)));
    }
    if reason == Some(StopReason::Interrupted) {
        checkpoint(&case, solver.as_ref(), &log, &args.out)
            .with_context(|| format!("{}: writing the checkpoint failed", case.name))?;
        let file = args.out.join(CHECKPOINT);
        return Err(Interrupted(format!(
            "{}: interrupted at step {} (t = {:.6}); results so far in {}; resume with\n  flowlab run --restart {} --out {}",
            case.name,
            solver.steps(),
            solver.time(),
            args.out.display(),
            file.display(),
            args.out.display()
        ))
        .into());
    }
    if !quiet {
        eprintln!(
            "{}: {} steps, t = {:.6}, {:.2} s wall, {:.1} Mcell-updates/s -> {}",
            case.name,
            solver.steps(),
            solver.time(),
            wall,
            g.cells() as f64 * solver.steps() as f64 / wall / 1e6,
            args.out.display()
        );
    }
    Ok(())
}

/// Writes `OUT/checkpoint.flowlab` (the case as run and the solver's complete state) and the
/// residual history so far, so that a run killed after it loses no more than the steps since.
fn checkpoint(case: &crate::case::Case, s: &dyn Solver, log: &ResidualLog, out: &Path) -> anyhow::Result<()> {
    let state = s.snapshot()?;
    write_checkpoint(&out.join(CHECKPOINT), &case.to_toml(), &state)
        .with_context(|| format!("cannot write {}", out.join(CHECKPOINT).display()))?;
    std::fs::write(out.join("residuals.csv"), log.to_csv())
        .with_context(|| format!("cannot write {}", out.join("residuals.csv").display()))
}

/// Whether two paths name the same folder.
fn same_dir(a: &Path, b: &Path) -> bool {
    let a = if a.as_os_str().is_empty() {
        Path::new(".")
    } else {
        a
    };
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The most `--line` options a run takes.
const MAX_LINES: usize = 64;
/// The most `--plane` options a run takes.
const MAX_PLANES: usize = 16;

/// `Err` when there are more than [`MAX_LINES`] lines or [`MAX_PLANES`] planes, or one does not
/// fit the case (its dimension, or outside the domain, where samples would be extrapolated).
fn check_samples(lines: &[Line], planes: &[Plane], grid: &solver::Grid) -> anyhow::Result<()> {
    if lines.len() > MAX_LINES {
        bail!("option `--line`: at most {MAX_LINES} lines, got {}", lines.len());
    }
    if planes.len() > MAX_PLANES {
        bail!(
            "option `--plane`: at most {MAX_PLANES} planes, got {}",
            planes.len()
        );
    }
    for line in lines {
        line.check_inside(grid)
            .map_err(|e| anyhow::anyhow!("option `--line`: {e}"))?;
    }
    for plane in planes {
        plane
            .check_inside(grid)
            .map_err(|e| anyhow::anyhow!("option `--plane`: {e}"))?;
    }
    Ok(())
}

/// Creates the output folder and checks, before the run, that files can be written there.
fn prepare_out_dir(dir: &Path, force: bool, lines: usize, planes: usize, isos: usize) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the output folder {} (--out)", dir.display()))?;
    let probe = dir.join(".flowlab-write-test");
    std::fs::write(&probe, b"")
        .and_then(|()| std::fs::remove_file(&probe))
        .with_context(|| format!("cannot write into the output folder {} (--out)", dir.display()))?;
    if force {
        return Ok(());
    }
    let line_files = (0..lines).map(|k| format!("line_{k}.csv"));
    let plane_files = (0..planes).map(|k| format!("plane_{k}.csv"));
    let iso_files = (0..isos).map(|k| format!("iso_{k}.ply"));
    for name in OUTPUTS
        .iter()
        .map(|s| s.to_string())
        .chain(line_files)
        .chain(plane_files)
        .chain(iso_files)
    {
        if dir.join(&name).exists() {
            bail!(
                "{} already holds {name} from another run; choose another --out or pass --force to overwrite",
                dir.display()
            );
        }
    }
    Ok(())
}

fn progress_bar(quiet: bool, rule: &StopRule) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = match (rule.steps, rule.t_end) {
        (Some(n), _) => ProgressBar::new(n),
        (None, Some(_)) => ProgressBar::new(1000),
        _ => ProgressBar::new_spinner(),
    };
    let style = ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// Updates the progress bar; where it is hidden (stderr is no terminal, e.g. CI logs) a plain
/// progress line is logged every `LOG_EVERY` instead.
fn update_bar(bar: &ProgressBar, step: &StepRecord, rule: &StopRule, quiet: bool, last_log: &mut Instant) {
    const LOG_EVERY: Duration = Duration::from_secs(10);
    if quiet || !step.steps.is_multiple_of(10) {
        return;
    }
    let line = || {
        let res: Vec<String> = step
            .residuals
            .iter()
            .map(|(n, v)| format!("{n} {v:.3e}"))
            .collect();
        format!(
            "step {} t {:.5} dt {:.3e} {}",
            step.steps,
            step.time,
            step.dt,
            res.join(" ")
        )
    };
    if bar.is_hidden() {
        if last_log.elapsed() >= LOG_EVERY {
            log::info!("{}", line());
            *last_log = Instant::now();
        }
        return;
    }
    match (rule.steps, rule.t_end) {
        (Some(_), _) => bar.set_position(step.steps),
        (None, Some(t)) => bar.set_position((1000.0 * step.time / t) as u64),
        _ => {}
    }
    bar.set_message(line());
}

fn summary(
    case: &crate::case::Case,
    s: &dyn Solver,
    wall: f64,
    threads: usize,
    processes: usize,
    reason: Option<StopReason>,
    error: Option<&str>,
    capped: &CappedSolves,
) -> serde_json::Value {
    let info = s.info();
    let g = info.grid;
    let residuals: serde_json::Map<String, serde_json::Value> = s
        .residuals()
        .iter()
        .map(|(n, v)| (n.to_string(), (*v).into()))
        .collect();
    serde_json::json!({
        "case": case.spec.case.name,
        "case_file": case.path.as_ref().map(|p| p.display().to_string()),
        "kind": info.kind,
        "method": info.method,
        "grid": { "dim": g.dim, "n": &g.n[..g.dim], "origin": &g.origin[..g.dim], "spacing": &g.spacing[..g.dim] },
        "backend": info.backend,
        "precision": info.precision,
        "threads": threads,
        "processes": processes,
        "steps": s.steps(),
        "time": s.time(),
        "wall_seconds": wall,
        "cell_updates_per_second": g.cells() as f64 * s.steps() as f64 / wall.max(1e-12),
        "final_residuals": residuals,
        "steady": reason == Some(StopReason::Steady),
        "stop_reason": reason.map(|r| format!("{r:?}")),
        "error": error,
        "pressure_solve_capped": capped.steps > 0,
        "capped_pressure_solves": capped.steps,
        "warnings": capped.warning().into_iter().collect::<Vec<_>>(),
        "results": s.summary(),
    })
}
