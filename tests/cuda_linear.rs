//! The GPU linear solvers of the SIMPLE family (`kernels/stencil.cu`) against their CPU twins on
//! random five-point (2D) and seven-point (3D) systems: the line solver (parallel cyclic
//! reduction, one block a line) along every axis, and ADI, Jacobi, CG, multigrid CG and BiCGSTAB
//! solves. Skipped (with the reason printed) where no CUDA device, driver or NVRTC is usable.
//!
//! Bounds (f64): PCR lines equal the CPU's `pcr` bit for bit (the same operations in the same
//! order, no FMA contraction) and the Thomas solution to 1e-12 relative; a GPU linear solve
//! takes the CPU's iteration count (+-1, where a residual lands within rounding of the target),
//! the same initial residual to 1e-12 and ends within 1e-10 relative of the CPU's solution.

mod common;

use common::{gpu, rel_l2};
use flowlab::backend::cuda::{DevBuf, Gpu};
use flowlab::case::LinearSolverKind;
use flowlab::solver::linear::cuda::{DeviceLinearSolver, DeviceSystem};
use flowlab::solver::linear::{LinearSolver, Stencil, pcr, thomas};
use std::sync::Arc;

/// A small deterministic generator (xorshift64*), uniform in [0, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A random diagonally dominant stencil system (links in [0, 1), `a_P` their sum plus
/// [0.05, 0.55)), symmetric when asked (each lower link the upper link of the unknown below it,
/// wrapping across periodic seams).
fn random_system<const D: usize>(
    rng: &mut Rng,
    n: [usize; D],
    periodic: [bool; D],
    symmetric: bool,
) -> Stencil<f64, D> {
    let mut s = Stencil::new(n, periodic);
    let len = s.len();
    for k in 0..len {
        for a in 0..D {
            s.a[a][1][k] = rng.next();
            s.a[a][0][k] = rng.next();
        }
        s.b[k] = 2.0 * rng.next() - 1.0;
    }
    if symmetric {
        for k in 0..len {
            let idx = s.position(k);
            for a in 0..D {
                let st = s.stride(a);
                let below = if idx[a] > 0 { k - st } else { k + (n[a] - 1) * st };
                s.a[a][0][k] = s.a[a][1][below];
            }
        }
    }
    for k in 0..len {
        let links: f64 = (0..D).map(|a| s.a[a][1][k] + s.a[a][0][k]).sum();
        s.ap[k] = links + 0.05 + 0.5 * rng.next();
    }
    s
}

fn download(gpu: &Arc<Gpu>, b: &DevBuf<f64>) -> Vec<f64> {
    let mut host = gpu.pinned::<f64>(b.len).unwrap();
    gpu.download_async(&mut host, b, b.len).unwrap();
    gpu.sync().unwrap();
    host.as_slice().to_vec()
}

fn upload(gpu: &Arc<Gpu>, x: &[f64]) -> DevBuf<f64> {
    let b = gpu.alloc(x.len()).unwrap();
    gpu.upload(&b, x).unwrap();
    b
}

/// One GPU sweep along `axis` of a system whose links across that axis are zero solves every
/// line exactly: bit for bit the CPU's `pcr` of the line, within 1e-12 of Thomas.
fn lines_along<const D: usize>(g: &Arc<Gpu>, rng: &mut Rng, n: [usize; D], axis: usize) {
    let mut sys = random_system(rng, n, [false; D], false);
    for a in (0..D).filter(|&a| a != axis) {
        sys.a[a][0].iter_mut().for_each(|x| *x = 0.0);
        sys.a[a][1].iter_mut().for_each(|x| *x = 0.0);
    }
    let d = DeviceSystem::new(g, n, [false; D]).unwrap();
    d.upload(g, &sys).unwrap();
    let x = upload(g, &vec![0.0; sys.len()]);
    let solver = DeviceLinearSolver::new(g, LinearSolverKind::Adi, n).unwrap();
    solver.sweep(&d, &x, axis).unwrap();
    let got = download(g, &x);
    let (len, st) = (n[axis], sys.stride(axis));
    let mut scratch = vec![0.0; 8 * len];
    for first in (0..sys.len()).filter(|&k| sys.position(k)[axis] == 0) {
        let line: Vec<usize> = (0..len).map(|m| first + m * st).collect();
        let pick = |v: &[f64], neg: bool| -> Vec<f64> {
            line.iter().map(|&k| if neg { -v[k] } else { v[k] }).collect()
        };
        let (a, c) = (pick(&sys.a[axis][0], true), pick(&sys.a[axis][1], true));
        let (b, rhs) = (pick(&sys.ap, false), pick(&sys.b, false));
        let mut want = vec![0.0; len];
        pcr(&a, &b, &c, &rhs, &mut want, &mut scratch);
        let mine = pick(&got, false);
        assert_eq!(mine, want, "{n:?} axis {axis}: PCR line at {first}");
        let mut t = vec![0.0; len];
        thomas(&a, &b, &c, &rhs, &mut t, &mut scratch);
        let e = rel_l2(&mine, &t);
        assert!(e <= 1e-12, "{n:?} axis {axis}: PCR vs Thomas {e:e}");
    }
}

#[test]
fn pcr_lines_on_the_gpu_equal_the_cpu_along_every_axis() {
    if !gpu() {
        return;
    }
    let g = Gpu::new().unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // Line lengths not powers of two included, up to one thread per equation and beyond.
    for n in [
        [1, 3],
        [2, 2],
        [7, 5],
        [33, 4],
        [100, 3],
        [1024, 2],
        [1500, 2],
        [512, 2],
        [4096, 1],
    ] {
        lines_along(&g, &mut rng, n, 0);
        lines_along(&g, &mut rng, [n[1], n[0]], 1);
    }
    for n in [[7, 5, 3], [33, 4, 6], [3, 100, 2], [2, 3, 1500], [5, 4, 512]] {
        for axis in 0..3 {
            lines_along(&g, &mut rng, n, axis);
        }
    }
}

/// Every solver kind on random systems of `n` with `periodic` sides: the GPU solve against the
/// CPU's from the same start.
fn solvers_match<const D: usize>(g: &Arc<Gpu>, rng: &mut Rng, n: [usize; D], periodic: [bool; D]) {
    let cases = [
        (LinearSolverKind::Adi, false, 0.1, 20),
        (LinearSolverKind::Adi, false, 1e-10, 200),
        (LinearSolverKind::Jacobi, false, 1e-8, 2000),
        (LinearSolverKind::Cg, true, 1e-10, 2000),
        (LinearSolverKind::MultigridCg, true, 1e-10, 200),
        (LinearSolverKind::Bicgstab, false, 1e-10, 500),
    ];
    for (kind, symmetric, tol, max) in cases {
        let sys = random_system(rng, n, periodic, symmetric);
        let x0: Vec<f64> = (0..sys.len()).map(|_| rng.next() - 0.5).collect();
        let mut cpu = LinearSolver::new(kind, n);
        let mut want = x0.clone();
        let st_c = cpu.solve(&sys, &mut want, tol, max);
        let d = DeviceSystem::new(g, n, periodic).unwrap();
        d.upload(g, &sys).unwrap();
        let x = upload(g, &x0);
        let mut dev = DeviceLinearSolver::new(g, kind, n).unwrap();
        let st_g = dev.solve(&d, &x, tol, max).unwrap();
        let got = download(g, &x);
        let e = rel_l2(&got, &want);
        eprintln!(
            "{kind:?} {n:?} {periodic:?} tol {tol:e}: iterations cpu {} gpu {}, residual {:.3e} / {:.3e}, rel. L2 {e:.2e}",
            st_c.iterations, st_g.iterations, st_c.final_residual, st_g.final_residual
        );
        assert!(
            st_c.iterations.abs_diff(st_g.iterations) <= 1,
            "{kind:?} {n:?}: iteration counts"
        );
        assert_eq!(st_c.converged, st_g.converged, "{kind:?} {n:?}: convergence");
        assert!(
            (st_c.initial_residual - st_g.initial_residual).abs() <= 1e-12 * st_c.initial_residual,
            "{kind:?} {n:?}: initial residual"
        );
        assert!(e <= 1e-10, "{kind:?} {n:?}: rel. L2 {e:e}");
    }
}

#[test]
fn gpu_linear_solvers_match_the_cpu_in_2d() {
    if !gpu() {
        return;
    }
    let g = Gpu::new().unwrap();
    let mut rng = Rng(12345);
    solvers_match(&g, &mut rng, [37, 29], [false, false]);
    solvers_match(&g, &mut rng, [64, 48], [true, false]);
    solvers_match(&g, &mut rng, [31, 33], [true, true]);
}

/// The seven-point systems of the 3D SIMPLE family: closed, periodic along x (a duct), periodic
/// along every axis (odd counts: the third line colour), and a thin box.
#[test]
fn gpu_linear_solvers_match_the_cpu_in_3d() {
    if !gpu() {
        return;
    }
    let g = Gpu::new().unwrap();
    let mut rng = Rng(67890);
    solvers_match(&g, &mut rng, [13, 11, 9], [false; 3]);
    solvers_match(&g, &mut rng, [4, 24, 20], [true, false, false]);
    solvers_match(&g, &mut rng, [9, 11, 7], [true; 3]);
    solvers_match(&g, &mut rng, [40, 3, 24], [false; 3]);
}
