//! The GPU tables of `flowlab bench --backend cuda`: the copy ceiling, each kernel against it,
//! and what showing a field costs per frame.

use super::*;
use crate::solver::incompressible::{Config as ProjectionConfig, CudaProjection};

/// Steps per frame of the readback table's frame loop.
pub(super) const FRAME_STEPS: usize = 8;

/// What showing a field costs per frame, on the Re = 1000 cavity (multigrid to 1e-4) at each
/// `--readback-sizes` size, field `speed`, medians over `max(kernel_reps, 3)` frames:
/// - before: the whole state (u, v with ghosts, p) read back into the CPU mirror and the field
///   derived on the host ([`CudaProjection::host_field`], the path fields took before);
/// - sync: [`Solver::field`] without a prefetch: derived on the device, one value per cell
///   copied back through pinned memory and widened to f64 (bytes and GB/s of that copy);
/// - frames of [`FRAME_STEPS`] steps: alone; followed by [`Solver::prefetch`] (the copy runs on
///   the copy stream, overlapping the next frame's steps); followed by the prefetch and at once
///   the synchronous read (the window thread gathering right after the worker's batch waits for
///   the copy); and followed by the prefetch and at once [`Solver::display_fields`] (the app's
///   order: the view takes the state prefetched the frame before while the copy is under way).
///
/// [`CudaProjection::host_field`]: crate::solver::incompressible::CudaProjection::host_field
/// [`Solver::field`]: crate::solver::Solver::field
/// [`Solver::prefetch`]: crate::solver::Solver::prefetch
/// [`Solver::display_fields`]: crate::solver::Solver::display_fields
pub(super) fn readback(args: &Args) -> anyhow::Result<()> {
    println!(
        "Readback of one field (speed), medians; frames of {FRAME_STEPS} steps (multigrid, tolerance 1e-4)\n"
    );
    println!(
        "| grid | precision | field MB/frame | before: state + host derive (ms) | sync field (ms) | sync GB/s | frame: steps (ms) | + prefetch (ms) | + prefetch + sync read (ms) | + prefetch + display read (ms) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &n in &args.readback_sizes {
        match args.precision.as_str() {
            "f32" => readback_row::<f32>(args, n)?,
            _ => readback_row::<f64>(args, n)?,
        }
    }
    println!();
    Ok(())
}

/// The readback tables' solver: the Re = 1000 cavity on an `n x n` grid, multigrid to 1e-4, in
/// precision `T`, on the GPU.
pub(super) fn frame_cavity<T: Real>(n: usize) -> anyhow::Result<CudaProjection<T, 2>> {
    let mut case = Case::parse(CAVITY, "bench cavity")?;
    for s in [
        format!("grid.nx={n}"),
        format!("grid.ny={n}"),
        "solver.tolerance=1e-4".to_string(),
        format!("solver.precision=\"{}\"", T::NAME),
    ] {
        case.set_assignment(&s)?;
    }
    fits_device(&case)?;
    let cfg =
        ProjectionConfig::from_spec(&case.spec).map_err(|e| anyhow::anyhow!("{}: {}", e.key, e.message))?;
    Ok(CudaProjection::<T, 2>::new(cfg, 0)?)
}

fn readback_row<T: Real>(args: &Args, n: usize) -> anyhow::Result<()> {
    use crate::solver::Solver;
    let mut s = frame_cavity::<T>(n)?;
    let reps = args.kernel_reps.max(3);
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        1e3 * v[v.len() / 2]
    };
    let timed = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64()
    };
    let mut out = Vec::new();
    // Warm-up: the flow starts moving, buffers and the mirror are allocated.
    for _ in 0..3 {
        s.step()?;
        s.field("speed", &mut out);
        s.host_field("speed", &mut out);
    }
    let (mut before, mut sync) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        s.step()?;
        before.push(timed(&mut || {
            s.host_field("speed", &mut out);
        }));
        s.step()?;
        sync.push(timed(&mut || {
            s.field("speed", &mut out);
        }));
    }
    let mut frames = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    let mut shown = [Vec::new()];
    for _ in 0..reps {
        for (mode, times) in frames.iter_mut().enumerate() {
            let t = Instant::now();
            for _ in 0..FRAME_STEPS {
                s.step()?;
            }
            if mode > 0 {
                s.prefetch(&["speed"]);
            }
            match mode {
                2 => s.field("speed", &mut out).unwrap_or_default(),
                3 => s
                    .display_fields(&["speed"], &mut shown)
                    .map(drop)
                    .unwrap_or_default(),
                _ => {}
            }
            times.push(t.elapsed().as_secs_f64());
        }
    }
    let bytes = n * n * std::mem::size_of::<T>();
    let [alone, prefetch, read, display] = frames.map(median);
    let sync = median(sync);
    println!(
        "| {n}^2 | {} | {:.1} | {:.2} | {sync:.2} | {:.1} | {alone:.2} | {prefetch:.2} | {read:.2} | {display:.2} |",
        T::NAME,
        bytes as f64 / 1e6,
        median(before),
        bytes as f64 / (sync * 1e-3) / 1e9,
    );
    Ok(())
}

/// Prints the device and returns its device-to-device copy bandwidth (GB/s), the ceiling.
pub(super) fn device() -> anyhow::Result<f64> {
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
    Ok(ceiling)
}

const KERNEL_HEADER: &str = "| grid | precision | kernel | us/launch | MB moved (model) | GB/s | of copy |\n|---|---|---|---|---|---|---|";

/// One row of the kernel table.
fn kernel_row(grid: &str, precision: &str, ceiling: f64, (name, ms, bytes): (&str, f64, f64)) {
    let gbs = bytes / (ms * 1e-3) / 1e9;
    println!(
        "| {grid} | {precision} | {name} | {:.1} | {:.1} | {gbs:.0} | {:.0} % |",
        ms * 1e3,
        bytes / 1e6,
        100.0 * gbs / ceiling
    );
}

/// `Err` naming the grid key when the CUDA solver of `case` does not fit in the device's free
/// memory (the kernel tables build their solvers directly, not through `solver::build`).
fn fits_device(case: &Case) -> anyhow::Result<()> {
    solver::memory::check_device(&case.spec, 0, None)
        .map_err(|e| anyhow::anyhow!("{}: {}: {}", case.name, e.key, e.message))
}

/// Kernel timings of the `D`-dimensional projection solver in precision `T` (after three steps).
fn projection_rows<T: Real, const D: usize>(
    cfg: crate::solver::incompressible::Config,
    reps: usize,
) -> anyhow::Result<Vec<(&'static str, f64, f64)>> {
    let mut s = crate::solver::incompressible::CudaProjection::<T, D>::new(cfg, 0)?;
    for _ in 0..3 {
        s.step()?;
    }
    Ok(s.kernel_timings(reps)?)
}

/// The per-kernel table of the CUDA projection solver: the cavity at each `--sizes` (2D) and
/// `--sizes-3d` (the cubic cavity) size.
pub(super) fn projection_kernels(args: &Args, ceiling: f64) -> anyhow::Result<()> {
    use crate::solver::incompressible::Config;
    println!("{KERNEL_HEADER}");
    let squares = args.sizes.iter().map(|&n| (CAVITY, 2, n, format!("{n}^2")));
    let cubes = args.sizes_3d.iter().map(|&n| (CAVITY_3D, 3, n, format!("{n}^3")));
    for (text, dim, n, label) in squares.chain(cubes) {
        let mut case = Case::parse(text, "bench cavity")?;
        for s in [
            format!("grid.nx={n}"),
            format!("grid.ny={n}"),
            format!(
                "solver.tolerance={}",
                args.tolerance
                    .unwrap_or(if args.precision == "f32" { 1e-4 } else { 1e-6 })
            ),
            format!("solver.precision=\"{}\"", args.precision),
        ] {
            case.set_assignment(&s)?;
        }
        if dim == 3 {
            case.set_assignment(&format!("grid.nz={n}"))?;
        }
        // The case's multigrid solver times the shared kernels and the V-cycle; an fft solver
        // (when measured) adds only its own rows, the transforms and the whole solve.
        let fft = args.solvers.iter().any(|s| s == "fft");
        for (ps, only_own) in [("multigrid", false), ("fft", true)] {
            if only_own && !fft {
                continue;
            }
            case.set_assignment(&format!("solver.pressure_solver=\"{ps}\""))?;
            fits_device(&case)?;
            let cfg =
                Config::from_spec(&case.spec).map_err(|e| anyhow::anyhow!("{}: {}", e.key, e.message))?;
            let rows = match (args.precision == "f32", dim) {
                (true, 2) => projection_rows::<f32, 2>(cfg, args.kernel_reps)?,
                (false, 2) => projection_rows::<f64, 2>(cfg, args.kernel_reps)?,
                (true, _) => projection_rows::<f32, 3>(cfg, args.kernel_reps)?,
                (false, _) => projection_rows::<f64, 3>(cfg, args.kernel_reps)?,
            };
            for row in rows
                .into_iter()
                .filter(|r| !only_own || r.0.contains("fft") || r.0.contains("FFT"))
            {
                kernel_row(&label, &args.precision, ceiling, row);
            }
        }
    }
    println!();
    Ok(())
}

/// A compressible case on the GPU in precision `T`: the kernel timings (after `warmup` steps),
/// then the full steps.
fn euler_on_gpu<T: Real>(
    args: &Args,
    cfg: crate::solver::compressible::Config,
) -> anyhow::Result<(Vec<(&'static str, f64, f64)>, Measurement)> {
    let mut s = crate::solver::compressible::CudaEuler::<T>::new(cfg, 0)?;
    for _ in 0..args.warmup {
        s.step()?;
    }
    let rows = s.kernel_timings(args.kernel_reps)?;
    Ok((rows, time_steps(args, Box::new(s), 0)?))
}

/// The compressible cases on the GPU (kernel table, then full steps with the CPU for the ratio).
pub(super) fn compressible_cuda(args: &Args, ceiling: f64) -> anyhow::Result<()> {
    let mut steps = format!(
        "| case | cells | precision | cuda steps | cuda ms/step | cuda Mcell-updates/s | cuda ms/step, batches of {} | \
         cpu threads | cpu ms/step | cpu Mcell-updates/s | cuda / cpu |\n|---|---|---|---|---|---|---|---|---|---|---|",
        args.batch.max(1)
    );
    println!("{KERNEL_HEADER}");
    for c in compressible_configs(args, "cuda") {
        let case = case_of(&c)?;
        fits_device(&case)?;
        let cfg = crate::solver::compressible::Config::from_spec(&case.spec)
            .map_err(|e| anyhow::anyhow!("{}: {}: {}", c.label, e.key, e.message))?;
        let cells = cfg.grid.cells();
        let (rows, gpu) = if args.precision == "f32" {
            euler_on_gpu::<f32>(args, cfg)?
        } else {
            euler_on_gpu::<f64>(args, cfg)?
        };
        for row in rows {
            kernel_row(&format!("{} {}", c.label, c.cells), &args.precision, ceiling, row);
        }
        let cpu = if cells <= CPU_MAX_CELLS {
            let cpu_case = Config {
                label: c.label.clone(),
                cells: c.cells.clone(),
                text: c.text,
                sets: c
                    .sets
                    .iter()
                    .cloned()
                    .chain(["solver.backend=cpu".to_string()])
                    .collect(),
            };
            let m = measure(args, &cpu_case, 0)?;
            format!(
                "{} | {:.3} | {:.1} | {:.1}x",
                m.threads,
                1e3 * m.seconds / m.steps as f64,
                m.mcups,
                gpu.mcups / m.mcups
            )
        } else {
            format!("- | skipped (over {CPU_MAX_CELLS} cells) | - | -")
        };
        let _ = write!(
            steps,
            "\n| {} | {} | {} | {} | {:.3} | {:.1} | {:.3} | {cpu} |",
            c.label,
            c.cells,
            args.precision,
            gpu.steps,
            1e3 * gpu.seconds / gpu.steps as f64,
            gpu.mcups,
            1e3 * gpu.batched
        );
    }
    println!("\n{steps}\n");
    Ok(())
}
