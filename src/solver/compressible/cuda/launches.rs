//! The device buffers of a compressible solver and its kernels bound to them once
//! ([`Launches`]): the step size, the ghost cells, the scheme's kernels and the step reduction,
//! with the launch shapes and the codes the kernels read. Every argument is bound, the step size
//! included (the kernels read it from the clock), so a step is a fixed launch sequence that a
//! CUDA graph can replay. Each kernel starts early (`Launch::starting_early`): its blocks are
//! placed while the kernel before it finishes, and wait for it (`AFTER_PREDECESSOR`).

use super::super::config::Bc;
use super::super::layout::Layout;
use crate::backend::cuda::{Args, CudaError, DevBuf, Launch, Module, Scalars, slots};
use crate::case::{Method, RiemannSolver};
use crate::solver::limiter::Limiter;
use crate::solver::real::Real;

/// Thread blocks: 32 x 8 for 2D grids, 256 for 1D (the shapes MUSCL-Hancock's kernels are
/// compiled for).
pub(super) const B2: (u32, u32, u32) = (slots::EULER_BLOCK_X, slots::EULER_BLOCK_Y, 1);
pub(super) const B1: (u32, u32, u32) = (slots::EULER_BLOCK_1D, 1, 1);

/// The blocks of the kernels that step the state and reduce it (`mh_flux_update_*` or the
/// CE/SE half-steps, and `euler_reduce`, whose partials are one per block): the block, and the
/// new points (cells, or CE/SE corners) each computes along x and y. MUSCL-Hancock's blocks are
/// 32 x 8 or 256 threads for 32 x 7 or 255 cells, one face a thread along each axis
/// (`kernels/muscl_hancock.cu`). CE/SE's blocks are 32 x 4 or 128 in f64 and 32 x 8 or 256 in f32
/// ([`slots::CESE_THREADS_F64`], `_F32`). In f32 the CE/SE blocks overlap
/// ([`slots::CESE_OVERLAP_F32`]): a thread computes one old point's terms into its block's tile
/// and the new points lie between them (`kernels/cese.cu`), so a block computes one point fewer
/// along each axis than it has threads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct StepBlock {
    pub(super) block: (u32, u32, u32),
    pub(super) points: (u32, u32),
}

impl StepBlock {
    pub(super) fn of<T: Real>(l: &Layout, method: Method) -> StepBlock {
        let f64 = std::mem::size_of::<T>() == 8;
        let block = match (method, l.dim) {
            (Method::Cese, 1) if f64 => (slots::CESE_THREADS_F64, 1, 1),
            (Method::Cese, _) if f64 => (32, slots::CESE_THREADS_F64 / 32, 1),
            (_, 1) => B1,
            _ => B2,
        };
        let points = match method {
            Method::Cese => {
                let overlap = if f64 {
                    slots::CESE_OVERLAP_F64
                } else {
                    slots::CESE_OVERLAP_F32
                };
                (block.0 - overlap, if l.dim == 2 { block.1 - overlap } else { 1 })
            }
            // The faces of the cells: one more than the cells along y (2D) or x (1D).
            _ if l.dim == 2 => (block.0, block.1 - 1),
            _ => (block.0 - 1, 1),
        };
        StepBlock { block, points }
    }

    /// CE/SE's tile of old points' terms in shared memory, in bytes: the points around the
    /// block's new points, each [`slots::CESE_TERMS_2D`] (1D: `_1D`) terms of 4 reals.
    pub(super) fn cese_tile<T: Real>(&self, dim: usize) -> usize {
        let (terms, rows) = if dim == 2 {
            (slots::CESE_TERMS_2D, self.points.1 as usize + 1)
        } else {
            (slots::CESE_TERMS_1D, 1)
        };
        4 * terms * (self.points.0 as usize + 1) * rows * std::mem::size_of::<T>()
    }

    /// The grid over `n` new points (x, y), and the block.
    pub(super) fn shape(&self, n: (usize, usize)) -> ((u32, u32, u32), (u32, u32, u32)) {
        let grid = grid_of(n, (self.points.0, self.points.1, 1));
        (grid, self.block)
    }
}

/// The flux-and-update kernel with Riemann solver `r` compiled in (`mh_flux_update_*` of
/// `kernels/muscl_hancock.cu`).
fn flux_update_kernel(r: RiemannSolver) -> &'static str {
    match r {
        RiemannSolver::Exact => "mh_flux_update_exact",
        RiemannSolver::Hllc => "mh_flux_update_hllc",
        RiemannSolver::Roe => "mh_flux_update_roe",
        RiemannSolver::RoeNoFix => "mh_flux_update_roe_no_fix",
        RiemannSolver::Hll => "mh_flux_update_hll",
        RiemannSolver::Rusanov => "mh_flux_update_rusanov",
    }
}

/// The face kernel with limiter `l` compiled in (`mh_faces_*` of `kernels/muscl_hancock.cu`),
/// for the symmetric limiters MUSCL-Hancock takes (the case check refuses the others).
fn faces_kernel(l: Limiter) -> Result<&'static str, CudaError> {
    Ok(match l {
        Limiter::None => "mh_faces_none",
        Limiter::Minmod => "mh_faces_minmod",
        Limiter::Superbee => "mh_faces_superbee",
        Limiter::VanLeer => "mh_faces_van_leer",
        Limiter::Mc => "mh_faces_mc",
        Limiter::VanAlbada => "mh_faces_van_albada",
        other => {
            return Err(CudaError(format!(
                "MUSCL-Hancock has no face kernel for limiter {}",
                other.name()
            )));
        }
    })
}

/// Boundary kinds two bits per side (`EBC_*` of [`slots`]).
fn pack_bc(bc: &[Bc; 4]) -> i64 {
    bc.iter().enumerate().fold(0, |acc, (side, b)| {
        let code = match b {
            Bc::Reflective => slots::EBC_REFLECTIVE,
            Bc::Transmissive => slots::EBC_TRANSMISSIVE,
            Bc::Periodic => slots::EBC_PERIODIC,
            Bc::Inflow(_) => slots::EBC_INFLOW,
        };
        acc | (code << (2 * side))
    })
}

pub(super) fn grid_of(n: (usize, usize), block: (u32, u32, u32)) -> (u32, u32, u32) {
    (
        (n.0 as u32).div_ceil(block.0).max(1),
        (n.1 as u32).div_ceil(block.1).max(1),
        1,
    )
}

/// The block shape and grid of a kernel over `n` threads (x, y) of layout `l`.
pub(super) fn shape(l: &Layout, n: (usize, usize)) -> ((u32, u32, u32), (u32, u32, u32)) {
    let block = if l.dim == 2 { B2 } else { B1 };
    (grid_of(n, block), block)
}

/// Arguments `len, stride, g0, g1, nx, ny` of layout `l` after `a`.
pub(super) fn geometry(a: Args, l: &Layout) -> Args {
    a.l(l.len() as i64)
        .i(l.stride as i64)
        .i(l.g[0] as i64)
        .i(l.g[1] as i64)
        .i(l.n[0] as i64)
        .i(l.n[1] as i64)
}

/// Device work arrays of the scheme.
pub(super) enum Work<T> {
    /// Face values (`2 dim` faces x 4 components per padded cell, packed arrays of 16-byte
    /// vectors: `kernels/euler.cuh` `store_q4v`).
    Muscl { faces: DevBuf<T> },
    /// Centre gradients (padded, `qy` in 2D only) and the corner points
    /// (`4 (1 + dim)` values per corner).
    Cese {
        qx: DevBuf<T>,
        qy: Option<DevBuf<T>>,
        corners: DevBuf<T>,
    },
}

/// The device buffers of a solver.
pub(super) struct Buffers<T> {
    /// Conserved variables, structure of arrays over the padded layout.
    pub(super) q: DevBuf<T>,
    pub(super) solid: DevBuf<u8>,
    /// Conserved inflow state per side (`4 side + c`), for the current gamma.
    pub(super) inflow: DevBuf<T>,
    pub(super) work: Work<T>,
    /// Block partials of the step reduction (3 per block) and first bad cells (1 per block).
    pub(super) part: DevBuf<T>,
    pub(super) bad_part: DevBuf<i32>,
    /// The step clock (`EK_*` of [`slots`]): dt, time, steps, the cap on dt, the halt code, the
    /// end time, the step reduction of the current state and the last steps' records.
    pub(super) clock: Scalars<f64>,
}

/// The kernels of a step and of the step reduction, bound to a solver's [`Buffers`] and
/// configuration (rebuilt when the configuration changes).
pub(super) struct Launches {
    /// `euler_next_step`: the next step's size from the clock's wave rate and end time, or the
    /// halt, after the host wrote the clock.
    pub(super) next_step: Launch,
    /// `euler_ghosts` of the y sides (2D), then of the x sides (as `boundary::fill`), for
    /// MUSCL-Hancock; none for CE/SE, whose `cese_corners` derives the ghost cells it reads.
    pub(super) ghosts: Vec<Launch>,
    pub(super) scheme: SchemeLaunches,
    /// The one-block `euler_reduce_finalize` of a step: the scheme's partials into the clock,
    /// the clock moved on by the step, its record, and the next step's size.
    pub(super) finalize_step: Launch,
    /// `euler_reduce` over the interior and `euler_reduce_finalize` into the clock, for a state
    /// no step wrote (a step's last scheme kernel writes the partials itself).
    pub(super) reduce: Launch,
    pub(super) finalize: Launch,
}

pub(super) enum SchemeLaunches {
    /// `mh_faces_<limiter>` and `mh_flux_update_<riemann solver>` (with the step reduction).
    Muscl { faces: Launch, flux_update: Launch },
    /// `cese_corners` and `cese_centres` (with the step reduction).
    Cese { corners: Launch, centres: Launch },
}

impl Launches {
    pub(super) fn new<T: Real>(
        m: &Module,
        cfg: &super::super::Config,
        l: &Layout,
        b: &Buffers<T>,
    ) -> Result<Self, CudaError> {
        let g = T::of(cfg.gamma);
        let h = cfg.grid.spacing;
        type Shape = ((u32, u32, u32), (u32, u32, u32));
        let bind = |name: &'static str, (grid, block): Shape, a: Args| -> Result<Launch, CudaError> {
            // SAFETY: every call passes the leading arguments of the named kernel of
            // kernels/muscl_hancock.cu, cese.cu or euler.cuh, in order, with `b`'s buffers
            // allocated for this layout; the solver owns the buffers and the launches together.
            unsafe { m.bind(name, grid, block, a) }.map(Launch::starting_early)
        };
        // CE/SE derives its ghost cells where it reads them (`cese_corners`).
        let ghost_dims = if matches!(b.work, Work::Muscl { .. }) {
            l.dim
        } else {
            0
        };
        let ghosts = (0..ghost_dims)
            .rev()
            .map(|d| {
                let span = if d == 1 { l.n[0] } else { l.n[1] + 2 * l.g[1] };
                let threads = span * l.g[d] * 2;
                let a = geometry(Args::new().p(&b.q).p(&b.inflow), l)
                    .i(d as i64)
                    .i(pack_bc(&cfg.bc))
                    .p(&b.clock.dev);
                bind("euler_ghosts", (grid_of((threads, 1), B1), B1), a)
            })
            .collect::<Result<_, _>>()?;
        let step = StepBlock::of::<T>(l, cfg.method);
        let interior = step.shape((l.n[0], l.n[1]));
        // The step reduction's last arguments: 1/dx, 1/dy, the partials.
        let partials = |a: Args| {
            a.r(T::of(1.0 / h[0]))
                .r(T::of(1.0 / h[1]))
                .p(&b.part)
                .p(&b.bad_part)
        };
        let scheme = match &b.work {
            Work::Muscl { faces } => {
                let a = geometry(Args::new().p(&b.q).p(&b.solid).p(faces), l)
                    .i(l.dim as i64)
                    .r(g)
                    .i(cfg.characteristic as i64)
                    .p(&b.clock.dev)
                    .d(h[0])
                    .d(h[1]);
                let faces_launch = bind(faces_kernel(cfg.limiter)?, shape(l, (l.stride, l.rows)), a)?;
                let a = geometry(Args::new().p(&b.q).p(&b.solid).p(faces), l)
                    .i(l.dim as i64)
                    .p(&b.clock.dev)
                    .d(h[0])
                    .d(h[1]);
                let flux_update = bind(flux_update_kernel(cfg.riemann), interior, partials(a.r(g)))?;
                SchemeLaunches::Muscl {
                    faces: faces_launch,
                    flux_update,
                }
            }
            Work::Cese { qx, qy, corners } => {
                let a = Args::new().p(&b.q).p(qx);
                let a = match qy {
                    Some(qy) => a.p(qy),
                    None => a.null(),
                };
                let a = geometry(a.p(corners), l)
                    .i(l.dim as i64)
                    .r(g)
                    .r(T::of(cfg.alpha))
                    .p(&b.clock.dev)
                    .r(T::of(h[0]))
                    .r(T::of(h[1]));
                let n_corners = (l.n[0] + 1, if l.dim == 2 { l.n[1] + 1 } else { 1 });
                // At most 26 kB (33 x 5 points of 5 terms in f64): under the 48 KiB every
                // kernel may take without raising its limit.
                let tile = step.cese_tile::<T>(l.dim);
                SchemeLaunches::Cese {
                    corners: bind(
                        "cese_corners",
                        step.shape(n_corners),
                        a.clone().p(&b.inflow).i(pack_bc(&cfg.bc)),
                    )?
                    .with_shared(tile as u32),
                    centres: bind("cese_centres", interior, partials(a))?.with_shared(tile as u32),
                }
            }
        };
        let a = geometry(Args::new().p(&b.q).p(&b.solid), l)
            .i(l.dim as i64)
            .i(step.points.0 as i64)
            .i(step.points.1 as i64);
        let reduce = bind("euler_reduce", interior, partials(a.r(g)))?;
        let blocks = interior.0.0 * interior.0.1;
        let end_tolerance = crate::solver::stopping::END_TOLERANCE;
        let finalize_after = |step: i64| {
            let a = Args::new()
                .p(&b.part)
                .p(&b.bad_part)
                .i(blocks as i64)
                .p(&b.clock.dev)
                .i(step)
                .d(cfg.cfl)
                .d(end_tolerance);
            bind("euler_reduce_finalize", ((1, 1, 1), (1024, 1, 1)), a)
        };
        let (finalize_step, finalize) = (finalize_after(1)?, finalize_after(0)?);
        let a = Args::new().p(&b.clock.dev).d(cfg.cfl).d(end_tolerance);
        let next_step = bind("euler_next_step", ((1, 1, 1), (32, 1, 1)), a)?;
        Ok(Launches {
            next_step,
            ghosts,
            scheme,
            finalize_step,
            reduce,
            finalize,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CE/SE's tiles fit the 48 KiB of shared memory a kernel may take without raising its limit
    /// (the launches do not raise it), in 1D and 2D and both precisions, and its blocks have the
    /// threads its kernels are compiled for.
    #[test]
    fn cese_tiles_fit_the_default_shared_memory() {
        fn check<T: Real>(dim: usize, threads: u32) -> usize {
            let l = Layout::new(dim, [100, if dim == 2 { 80 } else { 1 }], 2);
            let step = StepBlock::of::<T>(&l, Method::Cese);
            let b = step.block;
            assert_eq!(b.0 * b.1 * b.2, threads, "{dim}D: {b:?}");
            let tile = step.cese_tile::<T>(dim);
            assert!(
                tile <= 48 * 1024,
                "{dim}D, {} bytes a real: {tile} bytes",
                std::mem::size_of::<T>()
            );
            tile
        }
        // The kernels are compiled for blocks of CESE_THREADS_F32 / _F64 threads.
        let (f32s, f64s) = (slots::CESE_THREADS_F32, slots::CESE_THREADS_F64);
        let tiles = [
            check::<f32>(1, f32s),
            check::<f32>(2, f32s),
            check::<f64>(1, f64s),
            check::<f64>(2, f64s),
        ];
        // f64 2D: 33 x 5 points of 5 terms of 4 doubles.
        assert_eq!(tiles[3], 33 * 5 * 5 * 4 * 8);
    }
}
