//! Manufactured-solution tests of the pressure solvers, in 2D and 3D.

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

/// An exact solution `p` with `lap p = f` for a set of sides on the unit box.
struct Problem<const D: usize> {
    bc: [[FaceBc; 2]; D],
    p: fn([f64; 3]) -> f64,
    f: fn([f64; 3]) -> f64,
}

fn problems_2d() -> Vec<(&'static str, Problem<2>)> {
    use FaceBc::*;
    vec![
        (
            "neumann",
            Problem {
                bc: [[Neumann; 2]; 2],
                p: |x| (PI * x[0]).cos() * (PI * x[1]).cos(),
                f: |x| -2.0 * PI * PI * (PI * x[0]).cos() * (PI * x[1]).cos(),
            },
        ),
        (
            "dirichlet_x_neumann_y",
            Problem {
                bc: [[Dirichlet; 2], [Neumann; 2]],
                p: |x| (PI * x[0]).sin() * (PI * x[1]).cos(),
                f: |x| -2.0 * PI * PI * (PI * x[0]).sin() * (PI * x[1]).cos(),
            },
        ),
        (
            "periodic_x_dirichlet_y",
            Problem {
                bc: [[Periodic; 2], [Dirichlet; 2]],
                p: |x| (2.0 * PI * x[0]).cos() * (PI * x[1]).sin(),
                f: |x| -5.0 * PI * PI * (2.0 * PI * x[0]).cos() * (PI * x[1]).sin(),
            },
        ),
    ]
}

fn problems_3d() -> Vec<(&'static str, Problem<3>)> {
    use FaceBc::*;
    vec![
        (
            "neumann",
            Problem {
                bc: [[Neumann; 2]; 3],
                p: |x| (PI * x[0]).cos() * (PI * x[1]).cos() * (PI * x[2]).cos(),
                f: |x| -3.0 * PI * PI * (PI * x[0]).cos() * (PI * x[1]).cos() * (PI * x[2]).cos(),
            },
        ),
        (
            "dirichlet_x_neumann_y_periodic_z",
            Problem {
                bc: [[Dirichlet; 2], [Neumann; 2], [Periodic; 2]],
                p: |x| (PI * x[0]).sin() * (PI * x[1]).cos() * (2.0 * PI * x[2]).cos(),
                f: |x| -6.0 * PI * PI * (PI * x[0]).sin() * (PI * x[1]).cos() * (2.0 * PI * x[2]).cos(),
            },
        ),
        (
            "periodic_x_dirichlet_y_neumann_z",
            Problem {
                bc: [[Periodic; 2], [Dirichlet; 2], [Neumann; 2]],
                p: |x| (2.0 * PI * x[0]).cos() * (PI * x[1]).sin() * (PI * x[2]).cos(),
                f: |x| -6.0 * PI * PI * (2.0 * PI * x[0]).cos() * (PI * x[1]).sin() * (PI * x[2]).cos(),
            },
        ),
    ]
}

/// Cell centre `k` of the unit box with `n` cells per axis.
fn centre<const D: usize>(n: usize, k: usize) -> [f64; 3] {
    let mut x = [0.0; 3];
    let mut rest = k;
    for a in x.iter_mut().take(D) {
        *a = ((rest % n) as f64 + 0.5) / n as f64;
        rest /= n;
    }
    x
}

fn rhs<const D: usize>(pr: &Problem<D>, n: usize) -> (Laplacian<f64, D>, Vec<f64>) {
    let op = Laplacian::<f64, D>::new([n; D], [1.0 / n as f64; D], pr.bc);
    let b = (0..op.len()).map(|k| (pr.f)(centre::<D>(n, k))).collect();
    (op, b)
}

/// Solves the manufactured problem on n^D cells; returns (max error, stats).
fn solve_problem<const D: usize>(
    pr: &Problem<D>,
    n: usize,
    kind: PressureSolverKind,
    tol: f64,
) -> (f64, SolveStats) {
    let (op, mut b) = rhs(pr, n);
    let len = op.len();
    let mut solver = PoissonSolver::new(op, settings(kind, tol));
    let mut exact: Vec<f64> = (0..len).map(|k| (pr.p)(centre::<D>(n, k))).collect();
    if op.singular() {
        let mut partial = RowSums::whole(op.rows());
        remove_mean(&mut exact, &mut partial, n);
    }
    // Start from a rough guess, not zeros, so each solver really iterates.
    let mut p: Vec<f64> = (0..len).map(|k| ((k * 7919) % 13) as f64 * 0.1).collect();
    let stats = solver.solve(&mut p, &mut b);
    let err = p
        .iter()
        .zip(&exact)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    (err, stats)
}

/// Every solver reaches its tolerance, and the error falls at second order, on `sizes`.
fn converge<const D: usize>(
    problems: Vec<(&str, Problem<D>)>,
    sizes: [usize; 3],
    kinds: &[PressureSolverKind],
) {
    for (name, pr) in problems {
        for &kind in kinds {
            if kind == PressureSolverKind::Fft && (0..D).any(|a| spectral::check_axis(pr.bc[a], a).is_err()) {
                continue;
            }
            let mut errs = Vec::new();
            for n in sizes {
                let (err, stats) = solve_problem(&pr, n, kind, 1e-10);
                assert!(stats.converged, "{D}D {name} {kind:?} n={n}: {stats:?}");
                assert!(
                    stats.relative_residual <= 1e-10,
                    "{D}D {name} {kind:?}: {stats:?}"
                );
                assert!(stats.iterations > 0, "{D}D {name} {kind:?} did not iterate");
                if matches!(kind, PressureSolverKind::Jacobi | PressureSolverKind::Sor) {
                    assert_eq!(
                        stats.iterations % RESIDUAL_CHECK,
                        0,
                        "{D}D {name} {kind:?} n={n}: ended between residual tests"
                    );
                }
                errs.push(err);
            }
            for w in errs.windows(2) {
                let order = (w[0] / w[1]).log2();
                assert!(
                    order > 1.8,
                    "{D}D {name} {kind:?}: order {order:.2} from errors {errs:?}"
                );
            }
        }
    }
}

#[test]
fn every_solver_converges_to_tolerance_with_second_order_error() {
    converge(problems_2d(), [16, 32, 64], &KINDS);
}

#[test]
fn every_solver_converges_with_second_order_error_in_3d() {
    let all: Vec<_> = KINDS.into_iter().chain([PressureSolverKind::Fft]).collect();
    converge(problems_3d(), [8, 16, 32], &all);
}

/// The transform solver on the manufactured problems whose sides pair up: one "iteration", a
/// residual at rounding level, and the same second-order discretisation error as the
/// iterative solvers (it solves the same discrete equations).
#[test]
fn fft_solves_paired_problems_directly_with_second_order_error() {
    for (name, pr) in problems_2d() {
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

/// Residual reduction of each of six V-cycles from zero: at least `5x` per cycle (the
/// asymptotic rate), at least `first` for the first cycle from a zero guess, on grids with at
/// least three levels.
fn multigrid_factor<const D: usize>(problems: Vec<(&str, Problem<D>)>, sizes: &[usize], first: f64) {
    for (name, pr) in problems {
        for &n in sizes {
            let (op, mut b) = rhs(&pr, n);
            let mut mg = Multigrid::new(op);
            let mut partial = RowSums::whole(op.rows());
            if op.singular() {
                remove_mean(&mut b, &mut partial, n);
            }
            let mut p = vec![0.0; op.len()];
            let mut last = residual_norm(&op, &p, &b, &mut partial);
            for cycle in 0..6 {
                mg.solve(&mut p, &b, &mut partial, 0.0, 1);
                let r = residual_norm(&op, &p, &b, &mut partial);
                let factor = last / r;
                let bound = if cycle == 0 { first } else { 5.0 };
                assert!(
                    factor >= bound,
                    "{D}D {name} n={n} cycle {cycle}: reduction {factor:.2}"
                );
                last = r;
            }
            assert!(mg.depth() >= 3, "{D}D {name} n={n}: only {} levels", mg.depth());
        }
    }
}

#[test]
fn multigrid_reduces_the_residual_at_least_fivefold_per_v_cycle() {
    multigrid_factor(problems_2d(), &[64, 128, 96], 5.0);
}

/// In 3D the red-black V(2,2) cycle reduces the residual 5.7 to 6.4 times per cycle once the
/// error has its asymptotic shape (measured here at 32^3, 48^3, 64^3); the first cycle from a
/// zero guess on these smooth right-hand sides, 4.1 to 4.8 times.
#[test]
fn multigrid_reduces_the_residual_at_least_fivefold_per_v_cycle_in_3d() {
    multigrid_factor(problems_3d(), &[32, 64, 48], 4.0);
}

/// A thin box (the shape of Thibault & Senocak's 1024 x 32 x 1024, here 128 x 4 x 128 with cubic
/// cells) coarsens past its 4 cells across: 64 x 2 x 64, then 32 x 1 x 32, so the coarsest CG
/// solve has 1,024 unknowns rather than 8,192; the V-cycle still reduces the residual at least
/// fivefold per cycle.
#[test]
fn multigrid_coarsens_a_thin_box_past_its_cells_across() {
    let n = [128, 4, 128];
    let h = 0.25;
    let op = Laplacian::<f64, 3>::new(n, [h; 3], [[FaceBc::Neumann; 2]; 3]);
    let mut partial = RowSums::whole(op.rows());
    let mut b: Vec<f64> = (0..op.len())
        .map(|k| {
            let (i, j, l) = (k % n[0], k / n[0] % n[1], k / (n[0] * n[1]));
            let x = (i as f64 + 0.5) / n[0] as f64;
            let z = (l as f64 + 0.5) / n[2] as f64;
            let y = (j as f64 + 0.5) / n[1] as f64;
            (std::f64::consts::PI * x).cos() * (2.0 * std::f64::consts::PI * z).cos() + 0.3 * y
        })
        .collect();
    remove_mean(&mut b, &mut partial, n[0]);
    let mut mg = Multigrid::new(op);
    assert_eq!(mg.depth(), 3, "128 x 4 x 128 -> 64 x 2 x 64 -> 32 x 1 x 32");
    let mut p = vec![0.0; op.len()];
    let mut last = residual_norm(&op, &p, &b, &mut partial);
    for cycle in 0..6 {
        mg.solve(&mut p, &b, &mut partial, 0.0, 1);
        let r = residual_norm(&op, &p, &b, &mut partial);
        assert!(last / r >= 5.0, "cycle {cycle}: reduction {:.2}", last / r);
        last = r;
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
        let op = Laplacian::<f32, 2>::new([n, n], [h, h], [[FaceBc::Neumann; 2]; 2]);
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
