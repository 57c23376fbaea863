//! The linear solvers of this module on the GPU (`kernels/stencil.cu`, compiled per dimension,
//! with the Krylov vector kernels of `kernels/poisson.cu`), for five-point (2D) and seven-point
//! (3D) systems whose coefficients stay in device memory ([`DeviceSystem`]): ADI line sweeps with every line solved by parallel cyclic reduction (one
//! block per line, Lohry 2010 ch. 3-4; the CPU solves its lines by Thomas), weighted Jacobi, CG
//! and BiCGSTAB, each with the CPU's iteration, stopping rule and statistics
//! ([`super::LinearSolver::solve`]): iterate from the given `x` until `||r|| <= tol ||r_0||` or
//! the cap.
//!
//! The stopping test runs on the device (a done flag that makes the remaining enqueued kernels
//! return at once); the host enqueues iterations in batches of 1, 2, 4, 8, then 16 and reads the
//! flag between batches, so a solve that converges in one sweep costs one host wait and one that
//! takes hundreds costs one wait per 16 iterations. The start of a solve and each batch are
//! captured as CUDA graphs at first use and replayed after (one launch instead of 20-40 per
//! multigrid-CG iteration); the kernels take the iteration number as an argument, so a batch's
//! graph is keyed by its system, unknowns, first iteration, length and cap, and batches past
//! iteration [`GRAPHED`] are launched kernel by kernel to keep the cache bounded. In f64 the
//! element-wise arithmetic rounds as on the CPU; the tridiagonal lines (PCR instead of Thomas)
//! and the sums (tree instead of row order) round differently, within a few ulps.

use crate::backend::cuda::slots::{
    CTRL_DONE, CTRL_ITERS, CTRL_LEN, PCR_K, PCR_THREADS, SC_BNORM, SC_LEN, SC_RNORM,
};
use crate::backend::cuda::{
    Arg, Args, CudaError, DevBuf, Gpu, Graph, KernelSet, Module, Scalars, graphs_enabled,
};
use crate::case::LinearSolverKind;
use crate::solver::linear::LinearStats;
use crate::solver::linear::additive_correction::{COARSEST, coarse_shapes};
use std::collections::HashMap;

mod finalize;
mod system;

use finalize::Finalize;
use std::sync::Arc;
pub use system::DeviceSystem;
use system::{dims, padded, shape};

/// 1D thread block of the element-wise kernels (and so of their partial sums).
const B1: u32 = 256;
/// Batches that start past this iteration are not captured as graphs.
const GRAPHED: usize = 256;
/// The longest line the line kernel takes (`PCR_THREADS` threads of `PCR_K` equations).
pub const MAX_LINE: usize = PCR_THREADS * PCR_K;

/// Dynamic shared memory of the line kernel for lines of `len` cells: four coefficient arrays.
fn line_shared(len: usize) -> usize {
    4 * len * std::mem::size_of::<f64>()
}

/// An iteration count as a kernel's `int` (saturating).
fn count(n: usize) -> Arg {
    Arg::I32(n.min(i32::MAX as usize) as i32)
}

fn grid1(n: usize) -> (u32, u32, u32) {
    ((n as u32).div_ceil(B1).max(1), 1, 1)
}

/// The kernels' workspace of one solver kind.
enum Work {
    Adi,
    Jacobi {
        next: DevBuf<f64>,
    },
    Cg {
        r: DevBuf<f64>,
        w: DevBuf<f64>,
        d: DevBuf<f64>,
        q: DevBuf<f64>,
    },
    /// CG's r, w, d, q, the finest level's sweep buffer and the coarse levels.
    MultigridCg {
        cg: [DevBuf<f64>; 4],
        tmp: DevBuf<f64>,
        levels: Vec<Level>,
    },
    Bicgstab {
        v: [DevBuf<f64>; 8],
    },
}

/// A coarse level of the additive-correction multigrid: its system (laid out as a
/// [`DeviceSystem`]'s, the right-hand side in the b slot), solution and sweep buffer.
struct Level {
    /// Unknowns per axis (1 beyond the dimension).
    n: [usize; 3],
    dim: usize,
    sys: DevBuf<f64>,
    x: DevBuf<f64>,
    tmp: DevBuf<f64>,
}

impl Level {
    /// Device address of the right-hand side (the b slot).
    fn rhs(&self) -> u64 {
        let n: usize = self.n.iter().product();
        self.sys.ptr + ((1 + 2 * self.dim) * n * std::mem::size_of::<f64>()) as u64
    }
}

/// What a captured graph replays: the start of a solve to `tol` (`first` = 0, `len` = 0) or
/// iterations `first .. first + len` with the cap `max`, of system `sys` on unknowns `x`
/// (device addresses).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Replay {
    sys: u64,
    x: u64,
    tol: u64,
    first: usize,
    len: usize,
    max: usize,
}

/// A GPU linear solver of one kind for systems of one size, with its own scalar and control
/// blocks (so its statistics are read with its done flag).
pub struct DeviceLinearSolver {
    pub kind: LinearSolverKind,
    gpu: Arc<Gpu>,
    m: Module,
    poisson_kernels: Module,
    work: Work,
    partial: DevBuf<f64>,
    sc: Scalars<f64>,
    ctrl: Scalars<i32>,
    fin: Finalize,
    /// Unknowns per axis of the systems it solves (1 beyond the dimension).
    n: [usize; 3],
    graphs: HashMap<Replay, Graph>,
    /// Graphs are enabled and none has failed to capture.
    graphs_on: bool,
}

impl DeviceLinearSolver {
    /// A solver of `kind` for systems of `shape` unknowns per axis; `Err` when a line is longer
    /// than [`MAX_LINE`].
    pub fn new<const D: usize>(
        gpu: &Arc<Gpu>,
        kind: LinearSolverKind,
        shape: [usize; D],
    ) -> Result<Self, CudaError> {
        let longest = shape.iter().copied().max().unwrap_or(1);
        if kind == LinearSolverKind::Adi && longest > MAX_LINE {
            return Err(CudaError(format!(
                "the GPU line solver takes lines of at most {MAX_LINE} cells, this grid has {longest}"
            )));
        }
        let (n3, _) = padded(shape, [false; D]);
        let n: usize = shape.iter().product();
        let v = || gpu.alloc_zeros::<f64>(n);
        let work = match kind {
            LinearSolverKind::Adi => Work::Adi,
            LinearSolverKind::Jacobi => Work::Jacobi { next: v()? },
            LinearSolverKind::Cg => Work::Cg {
                r: v()?,
                w: v()?,
                d: v()?,
                q: v()?,
            },
            LinearSolverKind::MultigridCg => Work::MultigridCg {
                cg: [v()?, v()?, v()?, v()?],
                tmp: v()?,
                levels: coarse_shapes(shape)
                    .into_iter()
                    .map(|c| {
                        let len: usize = c.iter().product();
                        Ok(Level {
                            n: padded(c, [false; D]).0,
                            dim: D,
                            sys: gpu.alloc_zeros((2 + 2 * D) * len)?,
                            x: gpu.alloc_zeros(len)?,
                            tmp: gpu.alloc_zeros(len)?,
                        })
                    })
                    .collect::<Result<_, CudaError>>()?,
            },
            LinearSolverKind::Bicgstab => Work::Bicgstab {
                v: [v()?, v()?, v()?, v()?, v()?, v()?, v()?, v()?],
            },
        };
        let m = gpu.module_dim(KernelSet::Stencil, "f64", D)?;
        if kind == LinearSolverKind::Adi {
            gpu.allow_shared(m.function("fp_lines")?, line_shared(longest))?;
        }
        let poisson_kernels = gpu.module(KernelSet::Poisson, "f64")?;
        let partial = gpu.alloc_zeros(2 * grid1(n).0 as usize + 2)?;
        let (sc, ctrl) = (Scalars::new(gpu, SC_LEN)?, Scalars::new(gpu, CTRL_LEN)?);
        Ok(Self {
            kind,
            fin: Finalize::new(
                &m,
                &poisson_kernels,
                &partial,
                grid1(n).0 as usize,
                &sc.dev,
                &ctrl.dev,
            )?,
            m,
            poisson_kernels,
            work,
            partial,
            sc,
            ctrl,
            gpu: gpu.clone(),
            n: n3,
            graphs: HashMap::new(),
            graphs_on: graphs_enabled(),
        })
    }

    /// Enqueues `record`'s launches: replayed from the graph of `key` (captured at first use)
    /// where graphs are on, else launched one by one. A failed capture turns graphs off for this
    /// solver with one warning.
    fn replay(
        &mut self,
        key: Replay,
        record: impl Fn(&Self) -> Result<(), CudaError>,
    ) -> Result<(), CudaError> {
        if self.graphs_on && !self.graphs.contains_key(&key) {
            match Graph::capture_or_warn(&self.gpu, "linear-solver iterations", || record(self)) {
                Some(g) => {
                    self.graphs.insert(key, g);
                }
                None => self.graphs_on = false,
            }
        }
        match self.graphs.get(&key) {
            Some(g) => g.launch(),
            None => record(self),
        }
    }

    fn k(
        &self,
        module: &Module,
        name: &'static str,
        grid: (u32, u32, u32),
        block: u32,
        a: Args,
    ) -> Result<(), CudaError> {
        // SAFETY: every call site passes the arguments of the named kernel of
        // kernels/stencil.cu or kernels/poisson.cu in order, with buffers of this solver's
        // system size.
        unsafe { module.launch(name, grid, (block, 1, 1), &a) }
    }

    /// Unknowns of the systems it solves.
    fn len(&self) -> usize {
        self.n.iter().product()
    }

    /// A kernel of stencil.cu over the unknowns.
    fn fp(&self, name: &'static str, a: Args) -> Result<(), CudaError> {
        self.k(&self.m, name, grid1(self.len()), B1, a)
    }

    fn nb(&self) -> i64 {
        grid1(self.len()).0 as i64
    }

    /// `fp_residual` of `x` into `r` (or the norm only), partial sums of `r^2` (mode 0, 2) or
    /// `|r|` (mode 1) into `partial`; `guarded` makes it return once the solve is done.
    fn residual(
        &self,
        sys: &DeviceSystem,
        x: u64,
        r: Option<u64>,
        mode: i64,
        guarded: bool,
    ) -> Result<(), CudaError> {
        let a = Args::new()
            .p(&sys.buf)
            .l(x as i64)
            .l(r.unwrap_or(0) as i64)
            .p(&self.partial);
        let a = if guarded { a.p(&self.ctrl.dev) } else { a.null() };
        self.fp("fp_residual", shape(a.i(mode), sys))
    }

    /// `out = (sum a_nb x_nb + b) / a_P` at every unknown (the point solution from the
    /// neighbours' values: SIMPLER's pseudo-velocities).
    pub fn point_solution(
        &self,
        sys: &DeviceSystem,
        x: &DevBuf<f64>,
        out: &DevBuf<f64>,
    ) -> Result<(), CudaError> {
        self.fp(
            "fp_point_solution",
            shape(Args::new().p(&sys.buf).p(x).p(out), sys),
        )
    }

    /// `sum |b + sum a_nb x_nb - a_P x|` of `sys` at `x` into `sc[slot]` of another scalar block
    /// (`sum_into` of the SIMPLE kernels, `into`).
    pub fn residual_l1(
        &self,
        sys: &DeviceSystem,
        x: &DevBuf<f64>,
        sum_into: impl FnOnce(&DevBuf<f64>, usize) -> Result<(), CudaError>,
    ) -> Result<(), CudaError> {
        self.residual(sys, x.ptr, None, 1, false)?;
        sum_into(&self.partial, self.nb() as usize)
    }

    fn check(&self, it: usize, max: usize) -> Result<(), CudaError> {
        self.fin.check.run_with(&self.gpu, &[count(it), count(max)])
    }

    /// Every line along `axis`, colour by colour (adi.rs `sweep`; one axis of an ADI iteration):
    /// colour `d0 + 3 d1` of the digits along the axes across, each digit's positions counted
    /// as the CPU colours them (even, odd, the last of an odd periodic count).
    pub fn sweep(&self, sys: &DeviceSystem, x: &DevBuf<f64>, axis: usize) -> Result<(), CudaError> {
        let len = sys.n[axis];
        // Positions of each colour digit along each axis across (1 beyond the dimension).
        let counts = |a: usize| {
            let (m, p) = (sys.n[a], sys.periodic[a]);
            let odd_seam = p && m % 2 == 1;
            [m.div_ceil(2) - odd_seam as usize, m / 2, odd_seam as usize]
        };
        let across: Vec<usize> = (0..sys.dim).filter(|&a| a != axis).collect();
        let threads = len.div_ceil(32).max(1) * 32;
        let threads = threads.min(PCR_THREADS) as u32;
        let shared = line_shared(len) as u32;
        let f = self.m.function("fp_lines")?;
        for colour in 0..3usize.pow(across.len() as u32) {
            let blocks = [0, 1].map(|q| match across.get(q) {
                Some(&a) => counts(a)[if q == 0 { colour % 3 } else { colour / 3 }],
                None => 1,
            });
            if blocks.contains(&0) {
                continue;
            }
            let a = shape(Args::new().p(&sys.buf).p(x).p(&self.ctrl.dev), sys)
                .i(axis as i64)
                .i(colour as i64);
            // SAFETY: fp_lines' arguments in order; one block per line of this colour, 4 len
            // values of shared memory (allowed in `new`), len <= threads * PCR_K (checked there).
            unsafe {
                self.gpu.launch_shared(
                    f,
                    (blocks[0] as u32, blocks[1] as u32, 1),
                    (threads, 1, 1),
                    shared,
                    &a,
                )?
            };
        }
        Ok(())
    }

    /// The scalar and control blocks to the host (one wait).
    fn read(&mut self) -> Result<(), CudaError> {
        self.sc.fetch()?;
        self.ctrl.fetch()?;
        self.gpu.sync()
    }

    /// Iterates on `x` until `||r|| <= tol ||r_0||` or `max` iterations, as
    /// [`super::LinearSolver::solve`].
    pub fn solve(
        &mut self,
        sys: &DeviceSystem,
        x: &DevBuf<f64>,
        tol: f64,
        max: usize,
    ) -> Result<LinearStats, CudaError> {
        assert_eq!(sys.n, self.n, "system size");
        let key = Replay {
            sys: sys.buf.ptr,
            x: x.ptr,
            tol: tol.to_bits(),
            first: 0,
            len: 0,
            max: 0,
        };
        self.replay(key, |s| s.start(sys, x, tol))?;
        let mut it = 1;
        let mut batch = 1;
        loop {
            let len = batch.min(max + 1 - it);
            if len == 0 {
                if max == 0 {
                    // Nothing iterated: read the start's norms.
                    self.read()?;
                }
                break;
            }
            let key = Replay {
                tol: 0,
                first: it,
                len,
                max,
                ..key
            };
            let iterations = |s: &Self| (it..it + len).try_for_each(|i| s.iteration(sys, x, i, max));
            if it <= GRAPHED {
                self.replay(key, iterations)?;
            } else {
                iterations(self)?;
            }
            it += len;
            self.read()?;
            if self.ctrl.host()[CTRL_DONE] != 0 {
                break;
            }
            batch = (batch * 2).min(16);
        }
        let sc = self.sc.host();
        let ctrl = self.ctrl.host();
        let done = ctrl[CTRL_DONE] != 0;
        let iterations = if done { ctrl[CTRL_ITERS] as usize } else { max };
        let (r0, r) = (sc[SC_BNORM], sc[SC_RNORM]);
        Ok(LinearStats {
            iterations,
            initial_residual: r0,
            final_residual: r,
            converged: r <= tol * r0,
        })
    }

    /// The start of a solve: `||b||` and the target `tol ||b||`, and each Krylov solver's first
    /// residual and direction.
    fn start(&self, sys: &DeviceSystem, x: &DevBuf<f64>, tol: f64) -> Result<(), CudaError> {
        let n = sys.len() as i64;
        self.residual(sys, x.ptr, None, 0, false)?;
        self.fin.bnorm.run_with(&self.gpu, &[Arg::F64(tol)])?;
        // Start of the Krylov solvers.
        match &self.work {
            Work::Cg { r, w, d, .. } => {
                self.residual(sys, x.ptr, Some(r.ptr), 2, true)?;
                self.check(0, usize::MAX)?;
                self.precondition(sys, r, w, true)?;
                self.gamma(1)?;
                self.direction(d, w, 1)?;
            }
            Work::MultigridCg {
                cg: [r, w, d, _],
                levels,
                ..
            } => {
                self.residual(sys, x.ptr, Some(r.ptr), 2, true)?;
                self.check(0, usize::MAX)?;
                let mut fine = (&sys.buf, sys.n);
                for l in levels {
                    let coarse = l.n.iter().fold(
                        dims(Args::new().p(fine.0).p(&l.sys), fine.1, sys.periodic),
                        |a, &m| a.i(m as i64),
                    );
                    self.k(&self.m, "mg_coarsen", grid1(l.n.iter().product()), B1, coarse)?;
                    fine = (&l.sys, l.n);
                }
                self.precondition_multigrid(sys, r, w)?;
                self.gamma(1)?;
                self.direction(d, w, 1)?;
            }
            Work::Bicgstab { v } => {
                let [r, r0, p, vv, ..] = v;
                self.residual(sys, x.ptr, Some(r.ptr), 2, true)?;
                self.fin.bicg_start.run(&self.gpu)?;
                self.fp(
                    "bicg_init",
                    Args::new().p(r).p(r0).p(p).p(vv).p(&self.ctrl.dev).l(n),
                )?;
            }
            _ => {}
        }
        Ok(())
    }

    fn precondition(
        &self,
        sys: &DeviceSystem,
        r: &DevBuf<f64>,
        w: &DevBuf<f64>,
        dot: bool,
    ) -> Result<(), CudaError> {
        let a = Args::new().p(&sys.buf).p(r).p(w);
        let a = if dot { a.p(&self.partial) } else { a.null() };
        self.fp("fp_precondition", a.p(&self.ctrl.dev).l(sys.len() as i64))
    }

    fn gamma(&self, first: i32) -> Result<(), CudaError> {
        self.fin.gamma.run_with(&self.gpu, &[Arg::I32(first)])
    }

    fn direction(&self, d: &DevBuf<f64>, w: &DevBuf<f64>, first: i64) -> Result<(), CudaError> {
        self.k(
            &self.poisson_kernels,
            "pcg_direction",
            grid1(self.len()),
            B1,
            Args::new()
                .p(d)
                .p(w)
                .p(&self.sc.dev)
                .p(&self.ctrl.dev)
                .i(self.len() as i64)
                .i(first),
        )
    }

    /// `out = A x`, partial sums of `dot_a . out` (and `dot_b . out` after them).
    fn apply(
        &self,
        sys: &DeviceSystem,
        x: &DevBuf<f64>,
        out: &DevBuf<f64>,
        dot_a: &DevBuf<f64>,
        dot_b: Option<&DevBuf<f64>>,
    ) -> Result<(), CudaError> {
        let a = Args::new().p(&sys.buf).p(x).p(out).p(dot_a);
        let a = match dot_b {
            Some(b) => a.p(b),
            None => a.null(),
        };
        self.fp("fp_apply", shape(a.p(&self.partial).p(&self.ctrl.dev), sys))
    }

    /// The vector steps of CG iteration `it` up to the new residual: `q = A d`, `alpha`, then
    /// `x += alpha d`, `r -= alpha q` and (given `w`, the Jacobi preconditioner) `w = r / a_P`,
    /// with the partial sums of `r^2` (and `r . w`).
    fn cg_step(
        &self,
        sys: &DeviceSystem,
        x: &DevBuf<f64>,
        [r, d, q]: [&DevBuf<f64>; 3],
        w: Option<&DevBuf<f64>>,
        it: usize,
    ) -> Result<(), CudaError> {
        self.apply(sys, d, q, d, None)?;
        self.fin.alpha.run_with(&self.gpu, &[count(it)])?;
        let a = Args::new().p(&sys.buf).p(x).p(r).p(d).p(q);
        let a = match w {
            Some(w) => a.p(w),
            None => a.null(),
        };
        self.fp(
            "cg_update",
            a.p(&self.sc.dev)
                .p(&self.partial)
                .p(&self.ctrl.dev)
                .l(sys.len() as i64),
        )
    }

    /// `w = M^-1 r` by one additive-correction V-cycle (additive_correction.rs `cycle`, kernels
    /// `mg_*`), then the partial sums of `r . w`.
    fn precondition_multigrid(
        &self,
        sys: &DeviceSystem,
        r: &DevBuf<f64>,
        w: &DevBuf<f64>,
    ) -> Result<(), CudaError> {
        let Work::MultigridCg { tmp, levels, .. } = &self.work else {
            unreachable!("precondition_multigrid of a multigrid_cg solver")
        };
        // (coefficients, right-hand side, solution, sweep buffer, unknowns per axis) of level l,
        // finest 0.
        let level = |l: usize| match l {
            0 => (sys.buf.ptr, r.ptr, w.ptr, tmp.ptr, sys.n),
            _ => {
                let c = &levels[l - 1];
                (c.sys.ptr, c.rhs(), c.x.ptr, c.tmp.ptr, c.n)
            }
        };
        let (m, p, last) = (&self.m, sys.periodic, levels.len());
        let head = |a: u64, rhs: u64, x: u64| Args::new().l(a as i64).l(rhs as i64).l(x as i64);
        let cells = |n: [usize; 3]| n.iter().product::<usize>();
        for l in 0..last {
            let (a, rhs, x, _, n) = level(l);
            let (_, crhs, _, _, cn) = level(l + 1);
            let args = dims(head(a, rhs, x).p(&self.ctrl.dev), n, p);
            self.k(m, "mg_smooth_zero", grid1(cells(n)), B1, args)?;
            let args = dims(head(a, rhs, x).l(crhs as i64).p(&self.ctrl.dev), n, p);
            let args = cn.iter().fold(args, |a, &c| a.i(c as i64));
            self.k(m, "mg_restrict", grid1(cells(cn)), B1, args)?;
        }
        let (a, rhs, x, _, n) = level(last);
        let args = dims(head(a, rhs, x).p(&self.ctrl.dev), n, p);
        self.k(m, "mg_coarsest", (1, 1, 1), COARSEST as u32, args)?;
        for l in (0..last).rev() {
            let (a, rhs, x, t, n) = level(l);
            let (_, _, xc, _, cn) = level(l + 1);
            let args = dims(head(a, rhs, x).l(xc as i64).l(t as i64).p(&self.ctrl.dev), n, p);
            self.k(
                m,
                "mg_prolong_sweep",
                grid1(cells(n)),
                B1,
                args.i(cn[0] as i64).i(cn[1] as i64),
            )?;
            let args = dims(head(a, rhs, t).l(x as i64).p(&self.ctrl.dev), n, p);
            self.k(m, "mg_sweep", grid1(cells(n)), B1, args)?;
        }
        self.dot_partial(r, w, sys.len())
    }

    /// Block partial sums of `a . b` over `n` values into `partial` (`dot_partial` of
    /// kernels/poisson.cu).
    fn dot_partial(&self, a: &DevBuf<f64>, b: &DevBuf<f64>, n: usize) -> Result<(), CudaError> {
        self.k(
            &self.poisson_kernels,
            "dot_partial",
            grid1(n),
            B1,
            Args::new()
                .p(a)
                .p(b)
                .p(&self.partial)
                .p(&self.ctrl.dev)
                .i(n as i64),
        )
    }

    /// Enqueues iteration `it` of the solver's kind.
    fn iteration(&self, sys: &DeviceSystem, x: &DevBuf<f64>, it: usize, max: usize) -> Result<(), CudaError> {
        let n = sys.len() as i64;
        let it_i = count(it);
        match &self.work {
            Work::Adi => {
                (0..sys.dim).try_for_each(|axis| self.sweep(sys, x, axis))?;
                self.residual(sys, x.ptr, None, 0, true)?;
                self.check(it, max)
            }
            Work::Jacobi { next } => {
                let a = Args::new().p(&sys.buf).p(x).p(next).p(&self.ctrl.dev);
                self.fp("fp_jacobi", shape(a, sys))?;
                self.fp("fp_copy", Args::new().p(x).p(next).p(&self.ctrl.dev).l(n))?;
                self.residual(sys, x.ptr, None, 0, true)?;
                self.check(it, max)
            }
            Work::Cg { r, w, d, q } => {
                self.cg_step(sys, x, [r, d, q], Some(w), it)?;
                self.fin.cg_check.run_with(&self.gpu, &[it_i, count(max)])?;
                self.direction(d, w, 0)
            }
            Work::MultigridCg { cg: [r, w, d, q], .. } => {
                self.cg_step(sys, x, [r, d, q], None, it)?;
                self.check(it, max)?;
                self.precondition_multigrid(sys, r, w)?;
                self.gamma(0)?;
                self.direction(d, w, 0)
            }
            Work::Bicgstab { v } => {
                let [r, r0, p, vv, y, s, z, t] = v;
                self.dot_partial(r0, r, sys.len())?;

                self.fin.bicg_rho.run_with(&self.gpu, &[it_i])?;
                self.fp(
                    "bicg_direction",
                    Args::new()
                        .p(&sys.buf)
                        .p(p)
                        .p(r)
                        .p(vv)
                        .p(y)
                        .p(&self.sc.dev)
                        .p(&self.ctrl.dev)
                        .l(n),
                )?;
                self.apply(sys, y, vv, r0, None)?;

                self.fin.bicg_alpha.run(&self.gpu)?;
                self.fp(
                    "bicg_half",
                    Args::new()
                        .p(s)
                        .p(r)
                        .p(vv)
                        .p(&self.sc.dev)
                        .p(&self.partial)
                        .p(&self.ctrl.dev)
                        .l(n),
                )?;
                self.fin.bicg_half_check.run_with(&self.gpu, &[it_i])?;
                self.precondition(sys, s, z, false)?;
                self.apply(sys, z, t, t, Some(s))?;
                self.fin.bicg_omega.run(&self.gpu)?;
                self.fp(
                    "bicg_update",
                    Args::new()
                        .p(x)
                        .p(r)
                        .p(y)
                        .p(z)
                        .p(s)
                        .p(t)
                        .p(&self.sc.dev)
                        .p(&self.partial)
                        .p(&self.ctrl.dev)
                        .arg(it_i)
                        .l(n),
                )?;
                self.check(it, max)
            }
        }
    }
}
