//! The linear solvers on seven-point systems: each solution checked against the system assembled
//! independently (explicit `i, j, k` neighbours, periodic wrap by hand), tolerances per test.

use super::tests::Rng;
use super::*;
use crate::case::LinearSolverKind;

/// `max |b + sum a_nb x_nb - a_P x| / max |b|` of `sys` at `x`, the neighbours found from the
/// `(i, j, k)` position, not through [`Stencil::neighbours`].
fn independent_residual(sys: &Stencil<f64, 3>, x: &[f64]) -> f64 {
    let [nx, ny, nz] = sys.n;
    let at = |i: usize, j: usize, k: usize| (k * ny + j) * nx + i;
    let mut worst = 0.0f64;
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let p = at(i, j, k);
                let mut r = sys.b[p] - sys.ap[p] * x[p];
                let steps = [
                    (i, nx, 0, [(i + 1) % nx, j, k], [(i + nx - 1) % nx, j, k]),
                    (j, ny, 1, [i, (j + 1) % ny, k], [i, (j + ny - 1) % ny, k]),
                    (k, nz, 2, [i, j, (k + 1) % nz], [i, j, (k + nz - 1) % nz]),
                ];
                for (pos, n, a, up, down) in steps {
                    if pos + 1 < n || sys.periodic[a] {
                        r += sys.a[a][1][p] * x[at(up[0], up[1], up[2])];
                    }
                    if pos > 0 || sys.periodic[a] {
                        r += sys.a[a][0][p] * x[at(down[0], down[1], down[2])];
                    }
                }
                worst = worst.max(r.abs());
            }
        }
    }
    worst / sys.b.iter().fold(0.0f64, |m, b| m.max(b.abs()))
}

/// Upwind convection at velocity `c` (per axis, in units of the diffusion conductance) with
/// diffusion, Patankar's coefficients with `A(|P|) = 1`, diagonal `sum a_nb / relax` plus the
/// links of closed sides, random right-hand side.
fn convection_diffusion(n: [usize; 3], c: [f64; 3], relax: f64, periodic: [bool; 3]) -> Stencil<f64, 3> {
    let mut rng = Rng(7 + n[0] as u64);
    let mut s = Stencil::new(n, periodic);
    for p in 0..s.len() {
        let idx = s.position(p);
        let mut ap = 0.0;
        for a in 0..3 {
            let (upper, lower) = (1.0 + (-c[a]).max(0.0), 1.0 + c[a].max(0.0));
            ap += upper + lower;
            s.a[a][1][p] = if idx[a] + 1 < n[a] || periodic[a] {
                upper
            } else {
                0.0
            };
            s.a[a][0][p] = if idx[a] > 0 || periodic[a] { lower } else { 0.0 };
        }
        s.ap[p] = ap / relax;
        s.b[p] = rng.next() - 0.5;
    }
    s
}

/// A pressure(-correction) system: symmetric links varying in space between neighbouring cells,
/// closed on every side (singular, `a_P = sum a_nb`), a right-hand side of zero sum.
fn pressure_system(n: [usize; 3]) -> Stencil<f64, 3> {
    let mut rng = Rng(11);
    let mut s = Stencil::new(n, [false; 3]);
    for p in 0..s.len() {
        let idx = s.position(p);
        for a in 0..3 {
            if idx[a] + 1 < n[a] {
                let q = p + s.stride(a);
                let c = 0.5 + rng.next();
                s.a[a][1][p] = c;
                s.a[a][0][q] = c;
            }
        }
        s.b[p] = rng.next() - 0.5;
    }
    for p in 0..s.len() {
        s.ap[p] = (0..3).map(|a| s.a[a][0][p] + s.a[a][1][p]).sum();
    }
    let mean = s.b.iter().sum::<f64>() / s.b.len() as f64;
    s.b.iter_mut().for_each(|b| *b -= mean);
    s
}

/// ADI (lines along x, y and z), point Jacobi and BiCGSTAB solve non-symmetric seven-point
/// systems, periodic along one axis (odd sizes: the third line colour) or none, to the system
/// as assembled independently.
#[test]
fn every_momentum_solver_solves_seven_point_systems() {
    for (n, c, periodic) in [
        ([12, 10, 8], [3.0, -1.0, 2.0], [false, false, false]),
        ([9, 8, 7], [1.0, 2.0, -4.0], [false, false, true]),
        ([7, 9, 6], [-2.0, 0.5, 1.0], [true, false, false]),
    ] {
        let sys = convection_diffusion(n, c, 0.8, periodic);
        for kind in [
            LinearSolverKind::Adi,
            LinearSolverKind::Jacobi,
            LinearSolverKind::Bicgstab,
        ] {
            let mut x = vec![0.0; sys.len()];
            let stats = LinearSolver::new(kind, n).solve(&sys, &mut x, 1e-11, 20_000);
            assert!(stats.converged, "{kind:?} {n:?} {periodic:?}: {stats:?}");
            let r = independent_residual(&sys, &x);
            assert!(r < 1e-9, "{kind:?} {n:?} {periodic:?}: residual {r:e}");
        }
    }
}

/// CG and multigrid-preconditioned CG on a singular seven-point pressure system; the
/// additive-correction V-cycle (2 x 2 x 2 aggregates) cuts CG's iterations at least tenfold at
/// 32^3 (measured: CG 287, multigrid-CG 15).
#[test]
fn multigrid_cg_solves_seven_point_pressure_systems_in_few_iterations() {
    let n = [32, 32, 32];
    let sys = pressure_system(n);
    let mut its = Vec::new();
    for kind in [LinearSolverKind::Cg, LinearSolverKind::MultigridCg] {
        let mut x = vec![0.0; sys.len()];
        let stats = LinearSolver::new(kind, n).solve(&sys, &mut x, 1e-10, 2000);
        assert!(stats.converged, "{kind:?}: {stats:?}");
        let r = independent_residual(&sys, &x);
        assert!(r < 1e-8, "{kind:?}: residual {r:e}");
        its.push(stats.iterations);
    }
    eprintln!("CG {} iterations, multigrid-CG {}", its[0], its[1]);
    assert!(
        10 * its[1] <= its[0],
        "CG {} against multigrid-CG {} iterations",
        its[0],
        its[1]
    );
}

/// Overlapping Schwarz slabs along z (three slabs, overlap 2, ADI inside) converge to the
/// undecomposed solution by repeated passes.
#[test]
fn schwarz_slabs_converge_to_the_undecomposed_solution() {
    let n = [10, 8, 15];
    let sys = convection_diffusion(n, [1.0, -2.0, 3.0], 0.8, [true, false, false]);
    let mut exact = vec![0.0; sys.len()];
    LinearSolver::new(LinearSolverKind::Bicgstab, n).solve(&sys, &mut exact, 1e-14, 2000);
    let mut schwarz = Schwarz::new(LinearSolverKind::Adi, n, 3, 2, sys.periodic);
    let mut x = vec![0.0; sys.len()];
    let mut err = f64::INFINITY;
    for _ in 0..60 {
        schwarz.solve(&sys, &mut x, 1e-12, 500);
        err = x
            .iter()
            .zip(&exact)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        if err < 1e-10 {
            break;
        }
    }
    assert!(err < 1e-10, "after 60 passes: {err:e}");
}
