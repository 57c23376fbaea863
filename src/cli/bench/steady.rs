//! `flowlab bench --family steady` (time to a steady cavity) and `--family schwarz` (SIMPLER
//! with overlapping Schwarz subdomains).

use super::*;

/// Outer iterations and time to steady state of the SIMPLER cavity (Re = 100) versus the number
/// of Schwarz subdomains and the overlap, with each of `args.threads`.
pub(super) fn schwarz(args: &Args) -> anyhow::Result<()> {
    println!("Cavity Re = 100, SIMPLER, to the normalised residual 1e-6 (stop.steps = 20000 at most)\n");
    println!(
        "| cells | subdomains | overlap | threads | outer iterations | steady | seconds | ms/iteration | momentum its/iteration | pressure its/iteration |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &n in &args.schwarz_sizes {
        for &parts in &args.subdomains {
            let overlaps = if parts == 1 { &[2][..] } else { &args.overlaps[..] };
            for &overlap in overlaps {
                for &threads in &args.threads {
                    let mut case = Case::parse(CAVITY_SIMPLE, "bench cavity Re 100 SIMPLER")?;
                    for s in [
                        "solver.method=\"simpler\"".to_string(),
                        format!("grid.nx={n}"),
                        format!("grid.ny={n}"),
                        format!("solver.linear_solver.subdomains={parts}"),
                        format!("solver.linear_solver.overlap={overlap}"),
                    ] {
                        case.set_assignment(&s)?;
                    }
                    let mut s =
                        solver::build(&case.spec).map_err(|e| anyhow::anyhow!("{}: {}", e.key, e.message))?;
                    let rule = solver::StopRule {
                        steps: Some(20_000),
                        t_end: None,
                        steady_tol: case.spec.stop.steady_tol,
                        ..Default::default()
                    };
                    let pool = crate::backend::cpu::thread_pool(threads)?;
                    let start = Instant::now();
                    // Inner iterations summed over the run: momentum (u and v), pressure.
                    let mut inner = [0.0; 2];
                    let out = pool.install(|| {
                        solver::run_until(s.as_mut(), &rule, None, |_, step| {
                            for (k, v) in &step.residuals {
                                match *k {
                                    "momentum_iterations" => inner[0] += v,
                                    "pressure_iterations" => inner[1] += v,
                                    _ => {}
                                }
                            }
                        })
                    })?;
                    let seconds = start.elapsed().as_secs_f64();
                    let its = s.steps();
                    let shown = if parts == 1 {
                        "-".to_string()
                    } else {
                        overlap.to_string()
                    };
                    println!(
                        "| {n}^2 | {parts} | {shown} | {} | {its} | {} | {seconds:.1} | {:.2} | {:.1} | {:.1} |",
                        pool.current_num_threads(),
                        if out.reason == solver::StopReason::Steady {
                            "yes"
                        } else {
                            "no (cap)"
                        },
                        1e3 * seconds / its as f64,
                        inner[0] / its as f64,
                        inner[1] / its as f64
                    );
                }
            }
        }
    }
    Ok(())
}

/// Time to a steady cavity: each of `args.steady_methods` at each size and Reynolds number (the
/// shipped case files `lid_driven_cavity_re{100,1000}{,_simple}.toml`, in 3D
/// `cavity_3d_re{100,1000}.toml` and `cavity_3d_re100_simple.toml` with `physics.re`, with the
/// grid replaced), from
/// rest until the steady measure falls below 1e-6 or `args.steady_seconds` pass. SIMPLE's and
/// SIMPLER's measure is the largest normalised residual (momentum u, v (w), mass); the projection
/// method's is its steady change `||u^(n+1) - u^n||_2 / (dt ||u^(n+1)||_2)` (per unit time), with the
/// multigrid pressure solve to 1e-8 so that its noise stays below the target.
pub(super) fn steady(args: &Args) -> anyhow::Result<()> {
    const TOL: f64 = 1e-6;
    println!(
        "Cavity from rest to the steady measure {TOL:e} (backend {}, at most {} s a run)\n",
        args.backend, args.steady_seconds
    );
    println!(
        "| cells | Re | method | momentum solver | pressure solver | backend | threads | outer iterations / steps | steady | seconds | ms/iteration | measure reached | momentum its/iteration | pressure its/iteration |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let three = args.steady_dim == 3;
    for &n in &args.steady_sizes {
        for &re in &args.steady_re {
            // (method, momentum solver (None: the method's), pressure solver); the projection
            // method has neither.
            let momentum: Vec<Option<&String>> = if args.steady_momentum.is_empty() {
                vec![None]
            } else {
                args.steady_momentum.iter().map(Some).collect()
            };
            let variants = args.steady_methods.iter().flat_map(|m| {
                let solvers: Vec<Option<(Option<&String>, &String)>> = if m == "projection" {
                    vec![None]
                } else {
                    momentum
                        .iter()
                        .flat_map(|&mo| args.steady_pressure.iter().map(move |p| Some((mo, p))))
                        .collect()
                };
                solvers.into_iter().map(move |s| (m, s))
            });
            for (method, solvers) in variants {
                let simple = vec![format!("solver.method=\"{method}\"")];
                let (text, mut sets) = match (method.as_str(), re, three) {
                    ("projection", 100, false) => (CAVITY_RE100, vec![]),
                    ("projection", _, false) => (CAVITY, vec![]),
                    (_, 100, false) => (CAVITY_SIMPLE, simple),
                    (_, _, false) => (CAVITY_SIMPLE_RE1000, simple),
                    ("projection", 100, true) => (CAVITY_3D_RE100, vec![]),
                    ("projection", _, true) => (CAVITY_3D, vec![]),
                    (_, _, true) => (
                        CAVITY_3D_SIMPLE,
                        [simple, vec![format!("physics.re={re}.0")]].concat(),
                    ),
                };
                let solver_name = match solvers {
                    Some((mo, p)) => {
                        if let Some(mo) = mo {
                            sets.push(format!("solver.linear_solver.momentum=\"{mo}\""));
                        }
                        sets.push(format!("solver.linear_solver.pressure=\"{p}\""));
                        p.as_str()
                    }
                    None => {
                        sets.push("solver.pressure_solver=\"multigrid\"".into());
                        sets.push("solver.tolerance=1e-8".into());
                        "multigrid"
                    }
                };
                sets.extend([
                    format!("grid.nx={n}"),
                    format!("grid.ny={n}"),
                    format!("solver.backend=\"{}\"", args.backend),
                ]);
                if three {
                    sets.push(format!("grid.nz={n}"));
                }
                let label = format!("bench steady cavity Re {re} {method}");
                let mut case = Case::parse(text, &label)?;
                for s in &sets {
                    case.set_assignment(s)?;
                }
                let momentum_name = match SimpleConfig::from_spec(&case.spec) {
                    Ok(cfg) => cfg.momentum_solver.name(),
                    Err(_) => "-",
                };
                let mut s = solver::build(&case.spec)
                    .map_err(|e| anyhow::anyhow!("{label}: {}: {}", e.key, e.message))?;
                let pool = crate::backend::cpu::thread_pool(0)?;
                let start = Instant::now();
                // Inner iterations summed over the run: momentum (u and v), pressure.
                let mut inner = [0.0; 2];
                let measure = |s: &dyn solver::Solver| {
                    s.residuals()
                        .iter()
                        .find(|(k, _)| *k == "steady_change")
                        .map_or(f64::NAN, |(_, v)| *v)
                };
                let reached = pool.install(|| -> anyhow::Result<bool> {
                    loop {
                        s.step()?;
                        for (k, v) in s.residuals() {
                            match *k {
                                "momentum_iterations" => inner[0] += v,
                                "pressure_iterations" => inner[1] += v,
                                _ => {}
                            }
                        }
                        if measure(s.as_ref()) < TOL {
                            return Ok(true);
                        }
                        if start.elapsed().as_secs_f64() > args.steady_seconds {
                            return Ok(false);
                        }
                    }
                })?;
                let seconds = start.elapsed().as_secs_f64();
                let its = s.steps();
                println!(
                    "| {n}^{} | {re} | {method} | {momentum_name} | {solver_name} | {} | {} | {its} | {} | {seconds:.1} | {:.2} | {:.2e} | {:.1} | {:.1} |",
                    args.steady_dim,
                    s.info().backend,
                    if s.info().backend == "cuda" {
                        "-".to_string()
                    } else {
                        pool.current_num_threads().to_string()
                    },
                    if reached { "yes" } else { "no (time limit)" },
                    1e3 * seconds / its as f64,
                    measure(s.as_ref()),
                    inner[0] / its as f64,
                    inner[1] / its as f64
                );
            }
        }
    }
    Ok(())
}
