//! `flowlab bench`: throughput of full solver steps, in million cell updates per second, with one
//! thread and with all threads.
//!
//! - incompressible: the Re = 1000 cavity at each size with each pressure solver, the cubic
//!   Re = 1000 cavity at each `--sizes-3d` size, and with `--box` Thibault & Senocak's
//!   1024 x 32 x 1024 box (`cases/thibault_senocak_box.toml`);
//! - compressible: Sod in 1D (10^4 and 10^6 cells) and the Riemann quadrant (configuration 3) in
//!   2D, with MUSCL-Hancock + HLLC and each `--limiters` limiter (MC, as Taichi's `euler.py`,
//!   the peer it is measured beside), and with CE/SE.
//!
//! Each configuration starts from the case's initial state, takes `warmup` untimed steps (so the
//! pressure solves are warm-started as in a real run), then times steps for at least `seconds`
//! (and at least one step). The cavity's pressure tolerance is 1e-6 in f64 and 1e-4 in f32 unless
//! `--tolerance` says otherwise.
//!
//! `--family steady` (not part of `all`) times the cavity from rest to steady state for SIMPLE,
//! SIMPLER and the projection method at each `--steady-sizes` size and `--steady-re` Reynolds
//! number, on `--backend` ([`steady`]).
//!
//! `--family readback` (with `--backend cuda`, not part of `all`) measures only the per-frame
//! readback table ([`readback`]) and what a field costs per frame up to a drawn image, through
//! pinned host memory and from device memory shared with Vulkan ([`screen`]).
//!
//! `--family render` (not part of `all`) times the 3D view on the wgpu adapter at hand
//! ([`render`]): field upload, isosurface extraction, drawing and volume rendering.
//!
//! `--family schwarz` (not part of `all`) runs the Re = 100 cavity with SIMPLER to steady state
//! (`stop.steady_tol` = 1e-6 of the case file, normalised residual) at each `--schwarz-sizes`
//! size, for each number of overlapping Schwarz subdomains and overlap, and prints the outer
//! iterations and the time to steady (Lohry 2010, ch. 3: 232, 269, 276 iterations on 1, 2, 4
//! subdomains at 128^2).
//!
//! With `--backend cuda` both families are measured on the GPU (thread counts do not apply),
//! preceded by the device-to-device copy bandwidth (the ceiling) and each main kernel's time
//! (CUDA events), bytes moved by the models of
//! [`crate::solver::incompressible::CudaProjection::kernel_timings`] and
//! [`crate::solver::compressible::CudaEuler::kernel_timings`], GB/s and fraction of the
//! ceiling, and what showing a field of the projection solver costs per frame ([`readback`]). The compressible cases
//! are also run on the CPU (all threads) for the speed-up, except above [`CPU_MAX_CELLS`] cells,
//! where the table says "skipped".

mod device;
mod render;
mod screen;
mod steady;
mod view_load;

use crate::backend::cuda;
use crate::case::Case;
use crate::solver::incompressible::SimpleConfig;
use crate::solver::limiter::Limiter;
use crate::solver::real::Real;
use crate::solver::{self, Solver as _};
use clap::Args as ClapArgs;
use clap::builder::PossibleValuesParser;
use device::{compressible_cuda, device, projection_kernels, readback};
use std::fmt::Write as _;
use std::time::Instant;
use steady::{schwarz, steady};

const CAVITY: &str = include_str!("../../../cases/lid_driven_cavity_re1000.toml");
const CAVITY_3D: &str = include_str!("../../../cases/cavity_3d_re1000.toml");
const BOX_3D: &str = include_str!("../../../cases/thibault_senocak_box.toml");
const CAVITY_SIMPLE: &str = include_str!("../../../cases/lid_driven_cavity_re100_simple.toml");
const CAVITY_RE100: &str = include_str!("../../../cases/lid_driven_cavity_re100.toml");
const CAVITY_SIMPLE_RE1000: &str = include_str!("../../../cases/lid_driven_cavity_re1000_simple.toml");
const CAVITY_3D_RE100: &str = include_str!("../../../cases/cavity_3d_re100.toml");
const CAVITY_3D_SIMPLE: &str = include_str!("../../../cases/cavity_3d_re100_simple.toml");
const SOD: &str = include_str!("../../../cases/sod.toml");
const QUADRANT: &str = include_str!("../../../cases/riemann_quadrant_config3.toml");
const CESE_SOD: &str = include_str!("../../../cases/cese_sod.toml");
const CESE_QUADRANT: &str = include_str!("../../../cases/cese_quadrant_2d.toml");

/// Compressible cases larger than this are not run on the CPU for the GPU/CPU ratio (10^8 cells
/// in f64 need about 25 GB of CPU work arrays and minutes per step).
pub const CPU_MAX_CELLS: usize = 20_000_000;

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Which solver family to measure.
    #[arg(long, default_value = "all", value_parser = ["all", "incompressible", "compressible", "schwarz", "steady", "readback", "render"])]
    pub family: String,
    /// Cavity grid sizes N (N x N cells).
    #[arg(long, value_delimiter = ',', default_values_t = [256usize, 1024])]
    pub sizes: Vec<usize>,
    /// Cubic cavity grid sizes N (N^3 cells).
    #[arg(long, value_delimiter = ',', default_values_t = [64usize])]
    pub sizes_3d: Vec<usize>,
    /// Also time Thibault & Senocak's 1024 x 32 x 1024 box (33.5 million cells).
    #[arg(long)]
    pub r#box: bool,
    /// Pressure solvers to measure.
    #[arg(long, value_delimiter = ',', default_values = ["jacobi", "sor", "pcg", "multigrid", "fft"],
          value_parser = ["jacobi", "sor", "pcg", "multigrid", "fft"])]
    pub solvers: Vec<String>,
    /// 1D shock-tube sizes (cells).
    #[arg(long, value_delimiter = ',', default_values_t = [10_000usize, 1_000_000])]
    pub sizes_1d: Vec<usize>,
    /// 2D shock-problem sizes N (N x N cells).
    #[arg(long, value_delimiter = ',', default_values_t = [1024usize])]
    pub sizes_2d: Vec<usize>,
    /// MUSCL-Hancock's slope limiters (the default, MC, is the limiter of the peer, Taichi's
    /// `euler.py`).
    #[arg(long, value_delimiter = ',', default_values = ["mc"],
          value_parser = PossibleValuesParser::new(Limiter::ALL.map(Limiter::name)))]
    pub limiters: Vec<String>,
    /// Thread counts (0 = one per core).
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 0])]
    pub threads: Vec<usize>,
    /// Untimed steps before timing.
    #[arg(long, default_value_t = 10)]
    pub warmup: u64,
    /// Minimum timed seconds per configuration.
    #[arg(long, default_value_t = 2.0, allow_hyphen_values = true)]
    pub seconds: f64,
    /// Steps per `Solver::advance` call in the second timing of each configuration (the app
    /// advances a frame's steps as one batch; the CUDA transform-solve step then runs as graph
    /// replays with one host read per batch).
    #[arg(long, default_value_t = 16)]
    pub batch: u64,
    /// Pressure iteration cap per step (slow solvers at large sizes hit it; the table says so).
    #[arg(long, default_value_t = 2000)]
    pub max_iterations: usize,
    /// Precision (f64 or f32).
    #[arg(long, default_value = "f64", value_parser = ["f64", "f32"])]
    pub precision: String,
    /// Compute backend.
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "cuda"])]
    pub backend: String,
    /// Relative tolerance of the pressure solve (default 1e-6 in f64, 1e-4 in f32).
    #[arg(long, allow_hyphen_values = true)]
    pub tolerance: Option<f64>,
    /// Timed launches per kernel, and frames of the readback table (cuda).
    #[arg(long, default_value_t = 50)]
    pub kernel_reps: usize,
    /// Field sizes N (N^3 cells) of the 3D view's table (`--family render`).
    #[arg(long, value_delimiter = ',', default_values_t = [128usize, 256])]
    pub render_sizes: Vec<usize>,
    /// Target size of the 3D view's table (`--family render`).
    #[arg(long, default_value = "1920x1080")]
    pub render_resolution: String,
    /// Cavity sizes N of the Schwarz table (`--family schwarz`).
    #[arg(long, value_delimiter = ',', default_values_t = [64usize, 128])]
    pub schwarz_sizes: Vec<usize>,
    /// Numbers of overlapping Schwarz subdomains (`--family schwarz`).
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 2, 4])]
    pub subdomains: Vec<usize>,
    /// Overlaps in rows (`--family schwarz`).
    #[arg(long, value_delimiter = ',', default_values_t = [2usize])]
    pub overlaps: Vec<usize>,
    /// Dimension of the time-to-steady cavity (`--family steady`): 2 (square) or 3 (cube).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(2..=3))]
    pub steady_dim: u8,
    /// Cavity sizes N of the time-to-steady table (`--family steady`).
    #[arg(long, value_delimiter = ',', default_values_t = [128usize, 512])]
    pub steady_sizes: Vec<usize>,
    /// Reynolds numbers of the time-to-steady table (100 or 1000: their case files).
    #[arg(long, value_delimiter = ',', default_values_t = [100u32, 1000])]
    pub steady_re: Vec<u32>,
    /// Methods of the time-to-steady table.
    #[arg(long, value_delimiter = ',', default_values = ["simple", "simplec", "simpler", "projection"],
          value_parser = ["simple", "simplec", "simpler", "projection"])]
    pub steady_methods: Vec<String>,
    /// Pressure(-correction) solvers of SIMPLE and SIMPLER in the time-to-steady table
    /// (`solver.linear_solver.pressure`; the projection method takes multigrid).
    #[arg(long, value_delimiter = ',', default_values = ["multigrid_cg", "cg"],
          value_parser = ["adi", "jacobi", "cg", "multigrid_cg", "bicgstab"])]
    pub steady_pressure: Vec<String>,
    /// Momentum solvers of the SIMPLE family in the time-to-steady table
    /// (`solver.linear_solver.momentum`; none given: each method's default).
    #[arg(long, value_delimiter = ',', value_parser = ["adi", "jacobi", "bicgstab"])]
    pub steady_momentum: Vec<String>,
    /// Wall-clock limit of one time-to-steady run [s]; a run stopped by it is reported with the
    /// residual it reached.
    #[arg(long, default_value_t = 600.0, allow_hyphen_values = true)]
    pub steady_seconds: f64,
    /// Cavity sizes N of the readback table (cuda).
    #[arg(long, value_delimiter = ',', default_values_t = [1024usize, 4096])]
    pub readback_sizes: Vec<usize>,
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
    /// Seconds per step, and million cell updates per second, advanced in batches of `--batch`.
    batched: f64,
    batched_mcups: f64,
    /// Mean pressure iterations per step and whether every solve converged (incompressible).
    pressure: Option<(f64, bool)>,
}

/// The most threads a measurement asks for.
const MAX_THREADS: usize = 1024;

/// `Err` naming the first option whose value cannot give a measurement (non-positive or
/// non-finite durations and tolerances, zero counts, grids too small for a case, unknown
/// Reynolds numbers); grid sizes too large for the memory are refused by the case check.
fn check(args: &Args) -> anyhow::Result<()> {
    let seconds = |name: &str, x: f64| {
        if !(x.is_finite() && x > 0.0) {
            anyhow::bail!("option `{name}`: must be a finite number of seconds > 0, got {x}");
        }
        Ok(())
    };
    seconds("--seconds", args.seconds)?;
    seconds("--steady-seconds", args.steady_seconds)?;
    if let Some(t) = args.tolerance
        && !(t > 0.0 && t < 1.0)
    {
        anyhow::bail!("option `--tolerance`: must lie in (0, 1) (a relative residual), got {t}");
    }
    let at_least_one = [
        ("--batch", args.batch as usize),
        ("--max-iterations", args.max_iterations),
        ("--kernel-reps", args.kernel_reps),
    ];
    for (name, n) in at_least_one {
        if n == 0 {
            anyhow::bail!("option `{name}`: must be at least 1");
        }
    }
    let sizes = [
        ("--sizes", &args.sizes),
        ("--sizes-3d", &args.sizes_3d),
        ("--sizes-1d", &args.sizes_1d),
        ("--sizes-2d", &args.sizes_2d),
        ("--schwarz-sizes", &args.schwarz_sizes),
        ("--steady-sizes", &args.steady_sizes),
        ("--readback-sizes", &args.readback_sizes),
    ];
    for (name, list) in sizes {
        if let Some(n) = list.iter().find(|&&n| n < 4) {
            anyhow::bail!("option `{name}`: a grid needs at least 4 cells per axis, got {n}");
        }
    }
    if let Some(n) = args.subdomains.iter().find(|&&n| n == 0) {
        anyhow::bail!("option `--subdomains`: must be at least 1, got {n}");
    }
    if let Some(t) = args.threads.iter().find(|&&t| t > MAX_THREADS) {
        anyhow::bail!("option `--threads`: at most {MAX_THREADS} threads (0 = one per core), got {t}");
    }
    if let Some(re) = args.steady_re.iter().find(|&&re| re != 100 && re != 1000) {
        anyhow::bail!("option `--steady-re`: takes 100 and 1000 (the shipped case files), got {re}");
    }
    Ok(())
}

pub fn run(args: Args) -> anyhow::Result<()> {
    check(&args)?;
    if args.family == "schwarz" {
        return schwarz(&args);
    }
    if args.family == "steady" {
        return steady(&args);
    }
    if args.family == "render" {
        return render::render(&args);
    }
    if args.family == "readback" {
        if args.backend != "cuda" {
            anyhow::bail!("--family readback measures the GPU's readback; add --backend cuda");
        }
        device()?;
        readback(&args)?;
        return screen::screen(&args);
    }
    let cuda = args.backend == "cuda";
    if cuda {
        let ceiling = device()?;
        if args.family != "compressible" {
            projection_kernels(&args, ceiling)?;
            readback(&args)?;
        }
        if args.family != "incompressible" {
            compressible_cuda(&args, ceiling)?;
        }
        if args.family == "compressible" {
            return Ok(());
        }
    }
    let threads = if cuda { vec![0] } else { args.threads.clone() };
    let configs = configs(&args);
    println!(
        "| case | cells | threads | steps | ms/step | Mcell-updates/s | ms/step, batches of {} | Mcell-updates/s, batches | pressure its/step | converged |",
        args.batch
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut speedups = String::new();
    for c in &configs {
        let mut one = None;
        for &t in &threads {
            let m = measure(&args, c, t)?;
            let (its, conv) = match m.pressure {
                Some((its, ok)) => (format!("{its:.1}"), if ok { "yes" } else { "no (cap)" }),
                None => ("-".into(), "-"),
            };
            println!(
                "| {} | {} | {} | {} | {:.3} | {:.1} | {:.3} | {:.1} | {its} | {conv} |",
                c.label,
                c.cells,
                m.threads,
                m.steps,
                1e3 * m.seconds / m.steps as f64,
                m.mcups,
                1e3 * m.batched,
                m.batched_mcups,
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
    let tolerance = args
        .tolerance
        .unwrap_or(if args.precision == "f32" { 1e-4 } else { 1e-6 });
    let mut v = Vec::new();
    if args.family != "compressible" {
        let grid = |n: usize, axes: &[&str]| axes.iter().map(|k| format!("grid.{k}={n}")).collect::<Vec<_>>();
        let squares = args
            .sizes
            .iter()
            .map(|&n| (CAVITY, "cavity Re 1000", format!("{n}^2"), grid(n, &["nx", "ny"])));
        let cubes = args.sizes_3d.iter().map(|&n| {
            (
                CAVITY_3D,
                "cubic cavity Re 1000",
                format!("{n}^3"),
                grid(n, &["nx", "ny", "nz"]),
            )
        });
        let boxed = args
            .r#box
            .then(|| (BOX_3D, "Thibault-Senocak box", "1024x32x1024".to_string(), vec![]));
        for (text, name, cells, grid) in squares.chain(cubes).chain(boxed) {
            for ps in &args.solvers {
                let mut sets = grid.clone();
                sets.extend([
                    format!("solver.pressure_solver={ps}"),
                    format!("solver.max_iterations={}", args.max_iterations),
                    format!("solver.tolerance={tolerance}"),
                    precision.clone(),
                    format!("solver.backend={}", args.backend),
                ]);
                v.push(Config {
                    label: format!("{name}, projection, {ps}"),
                    cells: cells.clone(),
                    text,
                    sets,
                });
            }
        }
    }
    if args.family != "incompressible" && args.backend == "cpu" {
        v.extend(compressible_configs(args, "cpu"));
    }
    v
}

/// The compressible configurations on `backend`: Sod in 1D and the Riemann quadrant
/// (configuration 3) in 2D, with MUSCL-Hancock + HLLC and each `--limiters` limiter, and with
/// CE/SE (alpha = 2).
fn compressible_configs(args: &Args, backend: &str) -> Vec<Config> {
    let precision = format!("solver.precision={}", args.precision);
    let backend = format!("solver.backend={backend}");
    let muscl = args.limiters.iter().map(|lim| {
        (
            format!("MUSCL-Hancock HLLC {lim}"),
            SOD,
            QUADRANT,
            vec!["solver.riemann=hllc".to_string(), format!("solver.limiter={lim}")],
        )
    });
    let cese = ("CE/SE".to_string(), CESE_SOD, CESE_QUADRANT, Vec::new());
    let mut v = Vec::new();
    for (name, one_d, two_d, scheme_sets) in muscl.chain([cese]) {
        let with = |mut sets: Vec<String>| {
            sets.extend(scheme_sets.iter().cloned());
            sets.push(precision.clone());
            sets.push(backend.clone());
            sets
        };
        for &n in &args.sizes_1d {
            v.push(Config {
                label: format!("Sod 1D, {name}"),
                cells: n.to_string(),
                text: one_d,
                sets: with(vec![format!("grid.nx={n}")]),
            });
        }
        for &n in &args.sizes_2d {
            v.push(Config {
                label: format!("quadrant 2D, {name}"),
                cells: format!("{n}^2"),
                text: two_d,
                sets: with(vec![format!("grid.nx={n}"), format!("grid.ny={n}")]),
            });
        }
    }
    v
}

fn case_of(c: &Config) -> anyhow::Result<Case> {
    let mut case = Case::parse(c.text, &c.label)?;
    for s in &c.sets {
        case.set_assignment(s)?;
    }
    Ok(case)
}

fn measure(args: &Args, c: &Config, threads: usize) -> anyhow::Result<Measurement> {
    let case = case_of(c)?;
    let s =
        solver::build(&case.spec).map_err(|e| anyhow::anyhow!("{}: {}: {}", c.label, e.key, e.message))?;
    time_steps(args, s, threads)
}

/// Steps `s` `args.warmup` times, then times full steps for at least `args.seconds`, one
/// [`solver::Solver::step`] at a time and then in [`solver::Solver::advance`] batches of
/// `args.batch`.
fn time_steps(args: &Args, mut s: Box<dyn solver::Solver>, threads: usize) -> anyhow::Result<Measurement> {
    let pool = crate::backend::cpu::thread_pool(threads)?;
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
        let batch = args.batch.max(1);
        s.advance(batch)?;
        let start = Instant::now();
        let mut batched = 0u64;
        while batched == 0 || start.elapsed().as_secs_f64() < args.seconds {
            s.advance(batch)?;
            batched += batch;
        }
        Ok(Measurement {
            threads: pool.current_num_threads(),
            steps,
            seconds,
            mcups: cells * steps as f64 / seconds / 1e6,
            batched: start.elapsed().as_secs_f64() / batched as f64,
            batched_mcups: cells * batched as f64 / start.elapsed().as_secs_f64() / 1e6,
            pressure: incompressible.then(|| (its / steps as f64, converged)),
        })
    })
}
