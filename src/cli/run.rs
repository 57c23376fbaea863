//! `flowlab run`: a headless run of one case, writing fields, summary, residual history and line
//! samples into an output folder.

use crate::export::csv::{Line, ResidualLog, line_samples, profile};
use crate::export::vti;
use crate::solver::stopping::{CappedSolves, StopKeys};
use crate::solver::{self, Solver, StopReason, StopRule, run_until};
use anyhow::{Context, bail};
use clap::Args as ClapArgs;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Case file (TOML), e.g. cases/lid_driven_cavity_re100.toml.
    pub case: PathBuf,
    /// Override a case key, validated like the file: --set grid.nx=256 --set physics.re=400.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Stop after N steps (overrides [stop] of the case; at least 1).
    #[arg(long, group = "stop", allow_hyphen_values = true)]
    pub steps: Option<u64>,
    /// Stop at simulated time T (the last step lands on it; a finite number > 0).
    #[arg(long, group = "stop", allow_hyphen_values = true)]
    pub t_end: Option<f64>,
    /// Stop when the relative change of the solution per unit time falls below TOL (a finite
    /// number > 0).
    #[arg(long, group = "stop", allow_hyphen_values = true)]
    pub until_steady: Option<f64>,
    /// Sample all fields along x0,y0,x1,y1,N into line_K.csv (repeatable; both ends inside the
    /// domain).
    #[arg(long = "line", value_name = "x0,y0,x1,y1,N", allow_hyphen_values = true)]
    pub lines: Vec<Line>,
    /// Compute backend (overrides solver.backend).
    #[arg(long, value_parser = ["cpu", "auto", "cuda"])]
    pub backend: Option<String>,
    /// Worker threads (0 = one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Output folder (created if needed).
    #[arg(long)]
    pub out: PathBuf,
    /// Overwrite the results of an earlier run in the output folder.
    #[arg(long)]
    pub force: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// Files a run writes; an existing one is only replaced with `--force`.
const OUTPUTS: &[&str] = &["fields.vti", "profile.csv", "summary.json", "residuals.csv"];

pub fn run(args: Args) -> anyhow::Result<()> {
    let mut sets = args.sets.clone();
    if let Some(b) = &args.backend {
        sets.push(format!("solver.backend={b}"));
    }
    let case = super::load_case(&args.case, &sets)?;
    let spec = &case.spec;
    let rule = if args.steps.is_some() || args.t_end.is_some() || args.until_steady.is_some() {
        let rule = StopRule {
            steps: args.steps,
            t_end: args.t_end,
            steady_tol: args.until_steady,
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
    check_lines(
        &args.lines,
        &solver::Grid::from_spec(spec.case.dim as usize, &spec.grid),
    )?;
    prepare_out_dir(&args.out, args.force, args.lines.len())?;
    let pool = crate::backend::cpu::thread_pool(args.threads).context("cannot start the worker threads")?;
    let mut solver = solver::build(spec).map_err(|e| {
        crate::case::CaseError::new(
            crate::case::Origin::File {
                name: case.name.clone(),
                line_col: None,
            },
            Some(e.key),
            e.message,
        )
    })?;
    let bar = progress_bar(args.quiet, &rule);
    let mut log = ResidualLog::default();
    let mut capped = CappedSolves::default();
    let start = Instant::now();
    let mut last_log = start;
    let result = pool.install(|| {
        run_until(solver.as_mut(), &rule, |s| {
            log.record(s);
            capped.observe(s);
            update_bar(&bar, s, &rule, args.quiet, &mut last_log);
        })
    });
    let wall = start.elapsed().as_secs_f64();
    bar.finish_and_clear();
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
    } else {
        vti::write_fields(solver.as_ref(), &args.out.join("fields.vti"))?;
    }
    for (k, line) in args.lines.iter().enumerate() {
        std::fs::write(
            args.out.join(format!("line_{k}.csv")),
            line_samples(solver.as_ref(), line),
        )?;
    }
    if !args.quiet {
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

/// The most `--line` options a run takes.
const MAX_LINES: usize = 64;

/// `Err` when there are more than [`MAX_LINES`] lines or a line has an end outside the case's
/// domain (samples there would be extrapolated).
fn check_lines(lines: &[Line], grid: &solver::Grid) -> anyhow::Result<()> {
    if lines.len() > MAX_LINES {
        bail!("option `--line`: at most {MAX_LINES} lines, got {}", lines.len());
    }
    for line in lines {
        line.check_inside(grid)
            .map_err(|e| anyhow::anyhow!("option `--line`: {e}"))?;
    }
    Ok(())
}

/// Creates the output folder and checks, before the run, that files can be written there.
fn prepare_out_dir(dir: &Path, force: bool, lines: usize) -> anyhow::Result<()> {
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
    for name in OUTPUTS.iter().map(|s| s.to_string()).chain(line_files) {
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
fn update_bar(bar: &ProgressBar, s: &dyn Solver, rule: &StopRule, quiet: bool, last_log: &mut Instant) {
    const LOG_EVERY: Duration = Duration::from_secs(10);
    if quiet || s.steps() % 10 != 0 {
        return;
    }
    let line = || {
        let res: Vec<String> = s
            .residuals()
            .iter()
            .map(|(n, v)| format!("{n} {v:.3e}"))
            .collect();
        format!(
            "step {} t {:.5} dt {:.3e} {}",
            s.steps(),
            s.time(),
            s.dt(),
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
        (Some(_), _) => bar.set_position(s.steps()),
        (None, Some(t)) => bar.set_position((1000.0 * s.time() / t) as u64),
        _ => {}
    }
    bar.set_message(line());
}

fn summary(
    case: &crate::case::Case,
    s: &dyn Solver,
    wall: f64,
    threads: usize,
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
