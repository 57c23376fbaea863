//! Manufactured-solution tests of the pressure solvers.

use super::*;
use std::f64::consts::PI;

fn settings(kind: PressureSolverKind, tol: f64) -> PoissonSettings {
    PoissonSettings {
        kind,
        tolerance: tol,
        max_iterations: 200_000,
        sor_omega: None,
    }
}

const KINDS: [PressureSolverKind; 4] = [
    PressureSolverKind::Jacobi,
    PressureSolverKind::Sor,
    PressureSolverKind::Pcg,
    PressureSolverKind::Multigrid,
];

/// Exact solutions with `lap p = f` for each boundary set on the unit square.
struct Problem {
    bc: [FaceBc; 4],
    p: fn(f64, f64) -> f64,
    f: fn(f64, f64) -> f64,
}

fn problems() -> Vec<(&'static str, Problem)> {
    use FaceBc::*;
    vec![
        (
            "neumann",
            Problem {
                bc: [Neumann; 4],
                p: |x, y| (PI * x).cos() * (PI * y).cos(),
                f: |x, y| -2.0 * PI * PI * (PI * x).cos() * (PI * y).cos(),
            },
        ),
        (
            "dirichlet_x_neumann_y",
            Problem {
                bc: [Dirichlet, Dirichlet, Neumann, Neumann],
                p: |x, y| (PI * x).sin() * (PI * y).cos(),
                f: |x, y| -2.0 * PI * PI * (PI * x).sin() * (PI * y).cos(),
            },
        ),
        (
            "periodic_x_dirichlet_y",
            Problem {
                bc: [Periodic, Periodic, Dirichlet, Dirichlet],
                p: |x, y| (2.0 * PI * x).cos() * (PI * y).sin(),
                f: |x, y| -5.0 * PI * PI * (2.0 * PI * x).cos() * (PI * y).sin(),
            },
        ),
    ]
}

/// Solves the manufactured problem on n x n; returns (max error, stats).
fn solve_problem(pr: &Problem, n: usize, kind: PressureSolverKind, tol: f64) -> (f64, SolveStats) {
    let h = 1.0 / n as f64;
    let op = Laplacian::<f64>::new(n, n, h, h, pr.bc);
    let mut solver = PoissonSolver::new(op, settings(kind, tol));
    let centre = |k: usize| ((k % n) as f64 + 0.5) * h;
    let mut b: Vec<f64> = (0..n * n)
        .map(|k| (pr.f)(centre(k), (k / n) as f64 * h + 0.5 * h))
        .collect();
    let mut exact: Vec<f64> = (0..n * n)
        .map(|k| (pr.p)(centre(k), (k / n) as f64 * h + 0.5 * h))
        .collect();
    if op.singular() {
        let mut partial = vec![0.0; n];
        remove_mean(&mut exact, &mut partial, n);
    }
    // Start from a rough guess, not zeros, so each solver really iterates.
    let mut p: Vec<f64> = (0..n * n).map(|k| ((k * 7919) % 13) as f64 * 0.1).collect();
    let stats = solver.solve(&mut p, &mut b);
    let err = p
        .iter()
        .zip(&exact)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    (err, stats)
}

#[test]
fn every_solver_converges_to_tolerance_with_second_order_error() {
    for (name, pr) in problems() {
        for kind in KINDS {
            let mut errs = Vec::new();
            for n in [16, 32, 64] {
                let (err, stats) = solve_problem(&pr, n, kind, 1e-10);
                assert!(stats.converged, "{name} {kind:?} n={n}: {stats:?}");
                assert!(stats.relative_residual <= 1e-10, "{name} {kind:?}: {stats:?}");
                assert!(stats.iterations > 0, "{name} {kind:?} did not iterate");
                errs.push(err);
            }
            for w in errs.windows(2) {
                let order = (w[0] / w[1]).log2();
                assert!(
                    order > 1.8,
                    "{name} {kind:?}: order {order:.2} from errors {errs:?}"
                );
            }
        }
    }
}

/// The transform solver on the manufactured problems whose sides pair up: one "iteration", a
/// residual at rounding level, and the same second-order discretisation error as the
/// iterative solvers (it solves the same discrete equations).
#[test]
fn fft_solves_paired_problems_directly_with_second_order_error() {
    for (name, pr) in problems() {
        if spectral::check(pr.bc).is_err() {
            continue;
        }
        let mut errs = Vec::new();
        for n in [16, 32, 64] {
            let (err, stats) = solve_problem(&pr, n, PressureSolverKind::Fft, 1e-10);
            assert!(
                stats.converged && stats.iterations == 1,
                "{name} n={n}: {stats:?}"
            );
            assert!(stats.relative_residual <= 1e-13, "{name} n={n}: {stats:?}");
            let (mg, _) = solve_problem(&pr, n, PressureSolverKind::Multigrid, 1e-12);
            assert!(
                (err - mg).abs() <= 1e-9 * mg,
                "{name} n={n}: fft {err:e}, multigrid {mg:e}"
            );
            errs.push(err);
        }
        for w in errs.windows(2) {
            let order = (w[0] / w[1]).log2();
            assert!(order > 1.8, "{name} fft: order {order:.2} from errors {errs:?}");
        }
    }
}

#[test]
fn multigrid_reduces_the_residual_at_least_fivefold_per_v_cycle() {
    for (name, pr) in problems() {
        for n in [64, 128, 96] {
            let h = 1.0 / n as f64;
            let op = Laplacian::<f64>::new(n, n, h, h, pr.bc);
            let mut mg = Multigrid::new(op);
            let mut b: Vec<f64> = (0..n * n)
                .map(|k| (pr.f)(((k % n) as f64 + 0.5) * h, ((k / n) as f64 + 0.5) * h))
                .collect();
            let mut partial = vec![0.0; n];
            if op.singular() {
                remove_mean(&mut b, &mut partial, n);
            }
            let mut p = vec![0.0; n * n];
            let mut last = residual_norm(&op, &p, &b, &mut partial);
            for cycle in 0..6 {
                mg.solve(&mut p, &b, &mut partial, 0.0, 1);
                let r = residual_norm(&op, &p, &b, &mut partial);
                let factor = last / r;
                assert!(factor >= 5.0, "{name} n={n} cycle {cycle}: reduction {factor:.2}");
                last = r;
            }
            assert!(mg.depth() >= 3, "{name} n={n}: only {} levels", mg.depth());
        }
    }
}

/// Single precision limits the attainable residual: a red-black SOR sweep leaves a local defect
/// of about `omega / (2 - omega)` times the rounding of `p` (measured on this 32^2 Neumann
/// problem: floors of 4.7e-6, 1.5e-5 and 2.5e-5 for omega = 1, 1.5, 1.82), so 1e-4 is the
/// tolerance an f32 run can ask of every solver.
#[test]
fn f32_solvers_reach_single_precision_tolerances() {
    for kind in KINDS.into_iter().chain([PressureSolverKind::Fft]) {
        let n = 32;
        let h = 1.0 / n as f64;
        let op = Laplacian::<f32>::new(n, n, h, h, [FaceBc::Neumann; 4]);
        let mut solver = PoissonSolver::new(op, settings(kind, 1e-4));
        let mut b: Vec<f32> = (0..n * n)
            .map(|k| {
                let (x, y) = (((k % n) as f64 + 0.5) * h, ((k / n) as f64 + 0.5) * h);
                (-2.0 * PI * PI * (PI * x).cos() * (PI * y).cos()) as f32
            })
            .collect();
        let mut p = vec![0.0f32; n * n];
        let stats = solver.solve(&mut p, &mut b);
        assert!(stats.converged, "{kind:?}: {stats:?}");
    }
}
