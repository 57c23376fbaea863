//! The pressure Poisson equation `L p = b` of the projection method and its iterative solvers:
//! Jacobi (Thibault & Senocak 2009), red-black SOR, conjugate gradient preconditioned by a
//! symmetric red-black Gauss-Seidel sweep, geometric multigrid V-cycles, and (for boxes whose
//! sides pair up) a direct solve by fast cosine transforms.
//!
//! Every solver iterates until `||b - L p||_2 <= tol ||b||_2` (or its iteration cap), starting
//! from the `p` it is given (the previous step's pressure), and reports the iterations used.
//! For a singular `L` (no Dirichlet side) the mean of `b` is removed first (the compatibility
//! condition) and the mean of `p` is set to zero after. All reductions are thread-count
//! independent ([`crate::backend::cpu::ordered_sum`]).

mod conjugate_gradient;
mod jacobi;
mod laplacian;
mod multigrid;
mod red_black;
pub mod spectral;

use crate::solver::linear::CgWork;
pub use conjugate_gradient::Preconditioner;
pub use laplacian::{FaceBc, Laplacian};
pub use multigrid::Multigrid;
pub(crate) use multigrid::{PartLevels, coarser};
pub use spectral::Spectral;

use crate::case::PressureSolverKind;
use crate::parallel::RowSums;
use crate::solver::real::Real;
use rayon::prelude::*;

/// Jacobi and SOR test `||b - L p|| <= target` after every this many iterations and after
/// their last allowed one ([`residual_checked`]), on every backend: a test costs SOR a residual
/// pass, a GPU a reduction where a sweep alone takes a few microseconds, and a grid cut into
/// parts a gather from every part. A solve then ends up to `RESIDUAL_CHECK - 1` iterations
/// after the first that reaches the target.
pub const RESIDUAL_CHECK: usize = 4;

/// Whether solver `kind` on a part of a cut grid reads the right-hand side in the layers the part
/// stores but does not own, which each backend then exchanges at the start of a solve: red-black
/// relaxation (SOR, and multigrid's smoother) sweeps its first colour over every stored layer
/// (`red_black.rs`).
pub fn reads_rhs_beyond_own_layers(kind: PressureSolverKind) -> bool {
    matches!(kind, PressureSolverKind::Sor | PressureSolverKind::Multigrid)
}

/// Whether iteration `it` of at most `max` tests its residual ([`RESIDUAL_CHECK`]).
pub fn residual_checked(it: usize, max: usize) -> bool {
    it.is_multiple_of(RESIDUAL_CHECK) || it == max
}

/// What a solve did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SolveStats {
    pub iterations: usize,
    /// `||b - L p|| / ||b||` at exit (0 when `b = 0`).
    pub relative_residual: f64,
    /// `||b||_2` after the compatibility shift.
    pub rhs_norm: f64,
    pub converged: bool,
}

/// Settings that can change between solves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoissonSettings {
    pub kind: PressureSolverKind,
    pub tolerance: f64,
    pub max_iterations: usize,
    /// SOR over-relaxation; `None` picks `2 / (1 + sin(pi / max(nx, ny)))`.
    pub sor_omega: Option<f64>,
}

/// A pressure solver with its preallocated workspace (solving does not allocate).
pub struct PoissonSolver<T: Real, const D: usize> {
    pub op: Laplacian<T, D>,
    pub settings: PoissonSettings,
    work: Workspace<T, D>,
    /// Reductions over the grid's rows (and, on a part of a decomposed grid, the exchange).
    sums: RowSums<T>,
    /// The whole grid's operator (`op` is this part's; the same on one process): its size sets
    /// the SOR factor, its sides whether the problem is singular.
    whole: Laplacian<T, D>,
}

enum Workspace<T: Real, const D: usize> {
    Jacobi { next: Vec<T> },
    Sor,
    Pcg(CgWork<T>),
    Multigrid(Box<Multigrid<T, D>>),
    Spectral(Box<Spectral<T, D>>),
}

impl<T: Real, const D: usize> PoissonSolver<T, D> {
    pub fn new(op: Laplacian<T, D>, settings: PoissonSettings) -> Self {
        Self::part(op, settings, RowSums::whole(op.rows()), &op)
    }

    /// The solver on one part of a decomposed grid: `op` on its stored cells, `sums` its
    /// reductions and exchange, `whole` the whole grid's operator. Every solver but the transform
    /// solve runs on parts (multigrid where the whole grid coarsens at least once).
    pub fn part(
        op: Laplacian<T, D>,
        settings: PoissonSettings,
        sums: RowSums<T>,
        whole: &Laplacian<T, D>,
    ) -> Self {
        let work = Self::workspace(&op, settings.kind, &sums, whole);
        Self {
            sums,
            op,
            settings,
            work,
            whole: *whole,
        }
    }

    /// The workspace of `kind` on `op`, a part of `whole` where `sums` links it to the others.
    fn workspace(
        op: &Laplacian<T, D>,
        kind: PressureSolverKind,
        sums: &RowSums<T>,
        whole: &Laplacian<T, D>,
    ) -> Workspace<T, D> {
        let n = op.len();
        match kind {
            PressureSolverKind::Jacobi => Workspace::Jacobi {
                next: vec![T::zero(); n],
            },
            PressureSolverKind::Sor => Workspace::Sor,
            PressureSolverKind::Pcg => Workspace::Pcg(CgWork::new(n)),
            PressureSolverKind::Multigrid => Workspace::Multigrid(Box::new(match sums.link() {
                None => Multigrid::new(*op),
                Some(link) => Multigrid::part(*op, whole, link),
            })),
            PressureSolverKind::Fft => Workspace::Spectral(Box::new(
                Spectral::new(op).expect("Config::from_spec admits fft for paired sides only"),
            )),
        }
    }

    /// Changes the settings; a change of method rebuilds the workspace (outside the step).
    pub fn set_settings(&mut self, settings: PoissonSettings) {
        if settings.kind != self.settings.kind {
            self.work = Self::workspace(&self.op, settings.kind, &self.sums, &self.whole);
        }
        self.settings = settings;
    }

    /// Solves `L p = b` in place of `p` (the initial guess). `b` may be shifted by a constant
    /// (compatibility of a singular problem).
    pub fn solve(&mut self, p: &mut [T], b: &mut [T]) -> SolveStats {
        let op = self.op;
        let singular = self.whole.singular();
        let sums = &mut self.sums;
        if singular {
            remove_mean(b, sums, op.nx());
        }
        let b_norm = sums.dot(b, b, op.nx()).sqrt();
        if b_norm == T::zero() {
            p.par_iter_mut().for_each(|x| *x = T::zero());
            return SolveStats {
                iterations: 0,
                relative_residual: 0.0,
                rhs_norm: 0.0,
                converged: true,
            };
        }
        let target = T::of(self.settings.tolerance) * b_norm;
        let max = self.settings.max_iterations;
        if reads_rhs_beyond_own_layers(self.settings.kind) {
            sums.exchange(b);
        }
        let whole_n = self.whole.n;
        let (iterations, r_norm) = match &mut self.work {
            Workspace::Jacobi { next } => jacobi::solve(&op, p, b, next, sums, target, max),
            Workspace::Sor => {
                let omega = self
                    .settings
                    .sor_omega
                    .unwrap_or_else(|| optimal_sor_omega(&whole_n));
                red_black::sor_solve(&op, p, b, T::of(omega), sums, target, max)
            }
            Workspace::Pcg(work) => conjugate_gradient::solve(
                &op,
                p,
                b,
                work,
                sums,
                Preconditioner::SymmetricGaussSeidel,
                target,
                max,
            ),
            Workspace::Multigrid(mg) => mg.solve(p, b, sums, target, max),
            Workspace::Spectral(fft) => {
                fft.solve(p, b);
                (1, residual_norm(&op, p, b, sums))
            }
        };
        if singular {
            remove_mean(p, sums, op.nx());
        }
        SolveStats {
            iterations,
            relative_residual: (r_norm / b_norm).f64(),
            rhs_norm: b_norm.f64(),
            converged: r_norm <= target,
        }
    }
}

/// Optimal red-black SOR factor for the model problem on a grid of `n` cells per axis.
pub fn optimal_sor_omega(n: &[usize]) -> f64 {
    let largest = n.iter().copied().max().unwrap_or(1);
    2.0 / (1.0 + (std::f64::consts::PI / largest as f64).sin())
}

/// Calls `f(k, s, d)` for every cell `k` of x row `j` with the stencil `(s, d)` of `p` there
/// ([`Laplacian::stencil`]).
#[inline(always)]
fn for_row<T: Real, const D: usize>(op: &Laplacian<T, D>, p: &[T], j: usize, mut f: impl FnMut(usize, T, T)) {
    let nx = op.nx();
    let mut idx = op.row_index(j);
    for i in 0..nx {
        idx[0] = i;
        let k = j * nx + i;
        let (s, d) = op.stencil(p, idx, k);
        f(k, s, d);
    }
}

/// `q = L p`.
pub fn apply<T: Real, const D: usize>(op: &Laplacian<T, D>, p: &[T], q: &mut [T]) {
    let nx = op.nx();
    q.par_chunks_mut(nx).enumerate().for_each(|(j, row)| {
        for_row(op, p, j, |k, s, d| row[k - j * nx] = s - d * p[k]);
    });
}

/// `r = b - L p`; returns `||r||_2`.
pub fn residual<T: Real, const D: usize>(
    op: &Laplacian<T, D>,
    p: &[T],
    b: &[T],
    r: &mut [T],
    sums: &mut RowSums<T>,
) -> T {
    let nx = op.nx();
    r.par_chunks_mut(nx).enumerate().for_each(|(j, row)| {
        for_row(op, p, j, |k, s, d| row[k - j * nx] = b[k] - (s - d * p[k]));
    });
    sums.dot(r, r, nx).sqrt()
}

/// `||b - L p||_2` without storing the residual.
pub fn residual_norm<T: Real, const D: usize>(
    op: &Laplacian<T, D>,
    p: &[T],
    b: &[T],
    sums: &mut RowSums<T>,
) -> T {
    sums.sum(|j| {
        let mut sum = T::zero();
        for_row(op, p, j, |k, s, d| {
            let r = b[k] - (s - d * p[k]);
            sum = sum + r * r;
        });
        sum
    })
    .sqrt()
}

/// Subtracts the mean value (over the whole grid, for a part of a decomposed one).
pub fn remove_mean<T: Real>(x: &mut [T], sums: &mut RowSums<T>, nx: usize) {
    let sum = sums.sum(|j| x[j * nx..(j + 1) * nx].iter().copied().sum());
    let mean = sum / T::of((sums.whole_rows() * nx) as f64);
    x.par_iter_mut().for_each(|v| *v = *v - mean);
}

#[cfg(test)]
mod tests;
