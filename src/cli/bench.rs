//! `flowlab bench`: throughput of full solver steps, in million cell updates per second, for
//! each pressure solver and grid size, with one thread and with all threads.
//!
//! Each configuration starts the Re = 1000 cavity from rest, takes `warmup` steps (so the
//! pressure solves are warm-started, as in a real run), then times steps for at least
//! `seconds` (and at least one step).

use crate::case::Case;
use crate::solver;
use clap::Args as ClapArgs;
use std::fmt::Write as _;
use std::time::Instant;

const CAVITY: &str = include_str!("../../cases/lid_driven_cavity_re1000.toml");

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Grid sizes N (N x N cells).
    #[arg(long, value_delimiter = ',', default_values_t = [256usize, 1024])]
    pub sizes: Vec<usize>,
    /// Pressure solvers to measure.
    #[arg(long, value_delimiter = ',', default_values = ["jacobi", "sor", "pcg", "multigrid"])]
    pub solvers: Vec<String>,
    /// Thread counts (0 = one per core).
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 0])]
    pub threads: Vec<usize>,
    /// Untimed steps before timing.
    #[arg(long, default_value_t = 10)]
    pub warmup: u64,
    /// Minimum timed seconds per configuration.
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Pressure iteration cap per step (slow solvers at large sizes hit it; the table says so).
    #[arg(long, default_value_t = 2000)]
    pub max_iterations: usize,
    /// Precision (f64 or f32).
    #[arg(long, default_value = "f64", value_parser = ["f64", "f32"])]
    pub precision: String,
}

/// One measured configuration.
#[derive(Clone, Debug)]
pub struct Measurement {
    pub size: usize,
    pub solver: String,
    pub threads: usize,
    pub steps: u64,
    pub seconds: f64,
    pub mcups: f64,
    pub mean_pressure_iterations: f64,
    pub converged_every_step: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    println!(
        "| grid | pressure solver | threads | steps | ms/step | Mcell-updates/s | pressure its/step | converged |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for &n in &args.sizes {
        for name in &args.solvers {
            for &t in &args.threads {
                let m = measure(&args, n, name, t)?;
                println!(
                    "| {n}^2 | {} | {} | {} | {:.2} | {:.1} | {:.1} | {} |",
                    m.solver,
                    m.threads,
                    m.steps,
                    1e3 * m.seconds / m.steps as f64,
                    m.mcups,
                    m.mean_pressure_iterations,
                    if m.converged_every_step { "yes" } else { "no (cap)" }
                );
                rows.push(m);
            }
        }
    }
    let mut speedups = String::new();
    for r in rows.iter().filter(|r| r.threads > 1) {
        if let Some(one) = rows
            .iter()
            .find(|o| o.threads == 1 && o.size == r.size && o.solver == r.solver)
        {
            let _ = write!(
                speedups,
                " {}^2 {}: {:.2}x;",
                r.size,
                r.solver,
                r.mcups / one.mcups
            );
        }
    }
    if !speedups.is_empty() {
        println!("\nspeed-up of all threads over one:{speedups}");
    }
    Ok(())
}

fn measure(args: &Args, n: usize, solver_name: &str, threads: usize) -> anyhow::Result<Measurement> {
    let mut case = Case::parse(CAVITY, "bench cavity")?;
    for s in [
        format!("grid.nx={n}"),
        format!("grid.ny={n}"),
        format!("solver.pressure_solver=\"{solver_name}\""),
        format!("solver.max_iterations={}", args.max_iterations),
        format!("solver.precision=\"{}\"", args.precision),
    ] {
        case.set_assignment(&s)?;
    }
    let pool = crate::backend::cpu::thread_pool(threads)?;
    let mut s = solver::build(&case.spec).map_err(|e| anyhow::anyhow!("{}: {}", e.key, e.message))?;
    pool.install(|| -> anyhow::Result<Measurement> {
        for _ in 0..args.warmup {
            s.step()?;
        }
        let start = Instant::now();
        let (mut steps, mut its, mut converged) = (0u64, 0.0, true);
        while steps == 0 || start.elapsed().as_secs_f64() < args.seconds {
            s.step()?;
            steps += 1;
            let get = |k: &str| {
                s.residuals()
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map_or(0.0, |(_, v)| *v)
            };
            its += get("pressure_iterations");
            converged &= get("pressure_iterations") < args.max_iterations as f64;
        }
        let seconds = start.elapsed().as_secs_f64();
        Ok(Measurement {
            size: n,
            solver: solver_name.to_string(),
            threads: pool.current_num_threads(),
            steps,
            seconds,
            mcups: (n * n) as f64 * steps as f64 / seconds / 1e6,
            mean_pressure_iterations: its / steps as f64,
            converged_every_step: converged,
        })
    })
}
