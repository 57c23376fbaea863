//! `flowlab bench`: throughput of full solver steps, in million cell updates per second, with one
//! thread and with all threads.
//!
//! - incompressible: the Re = 1000 cavity at each size with each pressure solver;
//! - compressible: Sod in 1D (10^4 and 10^6 cells) and the Riemann quadrant (configuration 3) in
//!   2D, with MUSCL-Hancock + HLLC + van Leer and with CE/SE.
//!
//! Each configuration starts from the case's initial state, takes `warmup` untimed steps (so the
//! pressure solves are warm-started as in a real run), then times steps for at least `seconds`
//! (and at least one step).

use crate::case::Case;
use crate::solver;
use clap::Args as ClapArgs;
use std::fmt::Write as _;
use std::time::Instant;

const CAVITY: &str = include_str!("../../cases/lid_driven_cavity_re1000.toml");
const SOD: &str = include_str!("../../cases/sod.toml");
const QUADRANT: &str = include_str!("../../cases/riemann_quadrant_config3.toml");
const CESE_SOD: &str = include_str!("../../cases/cese_sod.toml");
const CESE_QUADRANT: &str = include_str!("../../cases/cese_quadrant_2d.toml");

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Which solver family to measure.
    #[arg(long, default_value = "all", value_parser = ["all", "incompressible", "compressible"])]
    pub family: String,
    /// Cavity grid sizes N (N x N cells).
    #[arg(long, value_delimiter = ',', default_values_t = [256usize, 1024])]
    pub sizes: Vec<usize>,
    /// Pressure solvers to measure.
    #[arg(long, value_delimiter = ',', default_values = ["jacobi", "sor", "pcg", "multigrid"])]
    pub solvers: Vec<String>,
    /// 1D shock-tube sizes (cells).
    #[arg(long, value_delimiter = ',', default_values_t = [10_000usize, 1_000_000])]
    pub sizes_1d: Vec<usize>,
    /// 2D shock-problem sizes N (N x N cells).
    #[arg(long, value_delimiter = ',', default_values_t = [1024usize])]
    pub sizes_2d: Vec<usize>,
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

/// One configuration to measure: a case text and its overrides.
struct Config {
    label: String,
    cells: String,
    text: &'static str,
    sets: Vec<String>,
}

/// One measured configuration.
struct Measurement {
    threads: usize,
    steps: u64,
    seconds: f64,
    mcups: f64,
    /// Mean pressure iterations per step and whether every solve converged (incompressible).
    pressure: Option<(f64, bool)>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let configs = configs(&args);
    println!(
        "| case | cells | threads | steps | ms/step | Mcell-updates/s | pressure its/step | converged |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut speedups = String::new();
    for c in &configs {
        let mut one = None;
        for &t in &args.threads {
            let m = measure(&args, c, t)?;
            let (its, conv) = match m.pressure {
                Some((its, ok)) => (format!("{its:.1}"), if ok { "yes" } else { "no (cap)" }),
                None => ("-".into(), "-"),
            };
            println!(
                "| {} | {} | {} | {} | {:.3} | {:.1} | {its} | {conv} |",
                c.label,
                c.cells,
                m.threads,
                m.steps,
                1e3 * m.seconds / m.steps as f64,
                m.mcups
            );
            match one {
                None if m.threads == 1 => one = Some(m.mcups),
                Some(base) if m.threads > 1 => {
                    let _ = write!(
                        speedups,
                        "\n- {} {}: {:.2}x with {} threads",
                        c.label,
                        c.cells,
                        m.mcups / base,
                        m.threads
                    );
                }
                _ => {}
            }
        }
    }
    if !speedups.is_empty() {
        println!("\nspeed-up over one thread:{speedups}");
    }
    Ok(())
}

fn configs(args: &Args) -> Vec<Config> {
    let precision = format!("solver.precision={}", args.precision);
    let mut v = Vec::new();
    if args.family != "compressible" {
        for &n in &args.sizes {
            for ps in &args.solvers {
                v.push(Config {
                    label: format!("cavity Re 1000, projection, {ps}"),
                    cells: format!("{n}^2"),
                    text: CAVITY,
                    sets: vec![
                        format!("grid.nx={n}"),
                        format!("grid.ny={n}"),
                        format!("solver.pressure_solver={ps}"),
                        format!("solver.max_iterations={}", args.max_iterations),
                        precision.clone(),
                    ],
                });
            }
        }
    }
    if args.family != "incompressible" {
        // (scheme, 1D case, 2D case): the MUSCL cases use HLLC + van Leer, the CE/SE ones alpha = 2.
        let muscl = ["solver.riemann=hllc", "solver.limiter=van_leer"];
        let schemes = [
            ("MUSCL-Hancock HLLC van Leer", SOD, QUADRANT, &muscl[..]),
            ("CE/SE", CESE_SOD, CESE_QUADRANT, &[][..]),
        ];
        for (name, one_d, two_d, scheme_sets) in schemes {
            let with = |mut sets: Vec<String>| {
                sets.extend(scheme_sets.iter().map(|s| s.to_string()));
                sets
            };
            for &n in &args.sizes_1d {
                v.push(Config {
                    label: format!("Sod 1D, {name}"),
                    cells: n.to_string(),
                    text: one_d,
                    sets: with(vec![format!("grid.nx={n}"), precision.clone()]),
                });
            }
            for &n in &args.sizes_2d {
                v.push(Config {
                    label: format!("quadrant 2D, {name}"),
                    cells: format!("{n}^2"),
                    text: two_d,
                    sets: with(vec![
                        format!("grid.nx={n}"),
                        format!("grid.ny={n}"),
                        precision.clone(),
                    ]),
                });
            }
        }
    }
    v
}

fn measure(args: &Args, c: &Config, threads: usize) -> anyhow::Result<Measurement> {
    let mut case = Case::parse(c.text, &c.label)?;
    for s in &c.sets {
        case.set_assignment(s)?;
    }
    let pool = crate::backend::cpu::thread_pool(threads)?;
    let mut s =
        solver::build(&case.spec).map_err(|e| anyhow::anyhow!("{}: {}: {}", c.label, e.key, e.message))?;
    let cells = s.info().grid.cells() as f64;
    pool.install(|| -> anyhow::Result<Measurement> {
        for _ in 0..args.warmup {
            s.step()?;
        }
        let start = Instant::now();
        let (mut steps, mut its, mut converged, mut incompressible) = (0u64, 0.0, true, false);
        while steps == 0 || start.elapsed().as_secs_f64() < args.seconds {
            s.step()?;
            steps += 1;
            if let Some((_, n)) = s.residuals().iter().find(|(k, _)| *k == "pressure_iterations") {
                incompressible = true;
                its += n;
                converged &= *n < args.max_iterations as f64;
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        Ok(Measurement {
            threads: pool.current_num_threads(),
            steps,
            seconds,
            mcups: cells * steps as f64 / seconds / 1e6,
            pressure: incompressible.then(|| (its / steps as f64, converged)),
        })
    })
}
