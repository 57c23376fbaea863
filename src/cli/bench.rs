//! `flowlab bench`: throughput of full solver steps, in million cell updates per second, for
//! each pressure solver and grid size, with one thread and with all threads.
//!
//! Each configuration starts the Re = 1000 cavity from rest, takes `warmup` steps (so the
//! pressure solves are warm-started, as in a real run), then times steps for at least
//! `seconds` (and at least one step).
//!
//! With `--backend cuda` the same table is measured on the GPU (the thread counts do not apply),
//! preceded by the device-to-device copy bandwidth (the ceiling) and each main kernel's time
//! (CUDA events), bytes moved by the model of
//! [`crate::solver::incompressible::CudaProjection::kernel_timings`], GB/s and fraction of the
//! ceiling.

use crate::case::Case;
use crate::solver::{self, Solver as _};
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
    /// Compute backend.
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "cuda"])]
    pub backend: String,
    /// Relative tolerance of the pressure solve (default: the case's, 1e-6 in f64, 1e-4 in f32).
    #[arg(long)]
    pub tolerance: Option<f64>,
    /// Timed launches per kernel (cuda).
    #[arg(long, default_value_t = 50)]
    pub kernel_reps: usize,
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
    if args.backend == "cuda" {
        kernels(&args)?;
    }
    let threads = if args.backend == "cuda" {
        vec![0]
    } else {
        args.threads.clone()
    };
    let mut rows = Vec::new();
    println!(
        "| grid | pressure solver | threads | steps | ms/step | Mcell-updates/s | pressure its/step | converged |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for &n in &args.sizes {
        for name in &args.solvers {
            for &t in &threads {
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
        format!("solver.backend=\"{}\"", args.backend),
    ] {
        case.set_assignment(&s)?;
    }
    // The bench case asks for 1e-6, which single precision cannot reach: f32 uses its default
    // 1e-4 unless --tolerance says otherwise.
    let tol = args.tolerance.or((args.precision == "f32").then_some(1e-4));
    if let Some(tol) = tol {
        case.set_assignment(&format!("solver.tolerance={tol}"))?;
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

/// The copy-bandwidth ceiling and the per-kernel table of the CUDA backend.
fn kernels(args: &Args) -> anyhow::Result<()> {
    use crate::backend::cuda;
    use crate::solver::incompressible::{Config, CudaProjection};
    let info = cuda::probe().map_err(|e| anyhow::anyhow!("--backend cuda: {e}"))?;
    println!(
        "device: {} (sm_{}{}, {:.1} GiB), driver {}.{}",
        info.name,
        info.compute_capability.0,
        info.compute_capability.1,
        info.total_memory as f64 / (1u64 << 30) as f64,
        info.driver_version / 1000,
        info.driver_version % 1000 / 10
    );
    let gpu = cuda::Gpu::new()?;
    let ceiling = cuda::copy_bandwidth(&gpu, 1 << 30, 20)?;
    println!("device-to-device copy (1 GiB, read + write): {ceiling:.0} GB/s\n");
    println!("| grid | precision | kernel | us/launch | MB moved (model) | GB/s | of copy |");
    println!("|---|---|---|---|---|---|---|");
    for &n in &args.sizes {
        let mut case = Case::parse(CAVITY, "bench cavity")?;
        for s in [
            format!("grid.nx={n}"),
            format!("grid.ny={n}"),
            format!("solver.precision=\"{}\"", args.precision),
            format!(
                "solver.tolerance={}",
                if args.precision == "f32" { 1e-4 } else { 1e-6 }
            ),
        ] {
            case.set_assignment(&s)?;
        }
        let cfg = Config::from_spec(&case.spec).map_err(|e| anyhow::anyhow!("{}: {}", e.key, e.message))?;
        let rows = if args.precision == "f32" {
            let mut s = CudaProjection::<f32>::new(cfg)?;
            for _ in 0..3 {
                s.step()?;
            }
            s.kernel_timings(args.kernel_reps)?
        } else {
            let mut s = CudaProjection::<f64>::new(cfg)?;
            for _ in 0..3 {
                s.step()?;
            }
            s.kernel_timings(args.kernel_reps)?
        };
        for (name, ms, bytes) in rows {
            let gbs = bytes / (ms * 1e-3) / 1e9;
            println!(
                "| {n}^2 | {} | {name} | {:.1} | {:.1} | {gbs:.0} | {:.0} % |",
                args.precision,
                ms * 1e3,
                bytes / 1e6,
                100.0 * gbs / ceiling
            );
        }
    }
    println!();
    Ok(())
}
