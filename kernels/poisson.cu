// Pressure Poisson kernels (pressure_poisson/*.rs on the GPU): damped Jacobi, red-black SOR /
// Gauss-Seidel colour sweeps, residuals, multigrid transfers, the single-block coarse-grid CG,
// PCG vector updates, and the scalar finalize kernels that keep the convergence logic on the
// device. `ctrl` (int) and `sc` (REAL) are the control and scalar blocks (common.cuh); a kernel
// given a non-null `ctrl` returns at once once ctrl[CTRL_DONE] is set, so the host can enqueue
// several iterations and read the flag only every few.
#include "common.cuh"

#define JACOBI_WEIGHT ((real)0.9)

// The sizes and coefficients every stencil kernel takes: (nx, ny, nz, pbc, 1/dx^2, 1/dy^2,
// 1/dz^2); nz and 1/dz^2 are read in 3D only.
#define BOX_PARAMS int nx, int ny, int nz, int pbc, real idx2, real idy2, real idz2
#define BOX make_cells(nx, ny, nz, pbc, idx2, idy2, idz2)

// Damped Jacobi sweep src -> dst; partial[block] = block sum of (b - L src)^2. A block of
// TBX x TBY threads covers TBX x TILE_H cells, TROWS rows per thread (TBY apart), so each thread
// has several independent loads in flight and the block reduction is paid once per TROWS cells.
// The neighbours come through the L1 cache (a shared-memory tile measured 10-13 % slower on an
// H100: BENCHMARKS.md).
extern "C" __global__ void __launch_bounds__(TILE_THREADS)
    jacobi_sweep(const real* __restrict__ src, real* __restrict__ dst, const real* __restrict__ b,
                 real* __restrict__ partial, const int* __restrict__ ctrl, BOX_PARAMS) {
    GUARD(ctrl)
    const Cells c = BOX;
    real r2 = 0;
#pragma unroll
    for (int q = 0; q < TROWS; ++q) {
        int idx[DIM];
        if (tile_cell(c, q, idx)) {
            const int k = cell_index(c, idx);
            real s, d;
            stencil(src, idx, k, c, &s, &d);
            const real x = src[k];
            const real r = b[k] - (s - d * x);
            r2 = r2 + r * r;
            dst[k] = x + JACOBI_WEIGHT * ((s - b[k]) / d - x);
        }
    }
    const real t = block_sum(r2);
    if (thread_linear() == 0) partial[block_linear()] = t;
}

// Whether cell idx touches a periodic seam across which cells of one colour meet (odd periodic
// sizes); those cells are updated by colour_seam in order, as on the CPU.
__device__ __forceinline__ bool seam(const int idx[DIM], const Cells& c) {
    bool on = false;
#pragma unroll
    for (int a = 0; a < DIM; ++a)
        on = on || ((c.n[a] & 1) && pside(c.pbc, 2 * a) == P_PERIODIC && (idx[a] == 0 || idx[a] + 1 == c.n[a]));
    return on;
}

// Red-black colour sweep: cells with (i + j + k) % 2 == colour get
// x <- x + omega ((sum_f c_f x_nb - b) / sum_f c_f - x). The grid covers (nx/2 + 1) x ny (x nz)
// threads.
extern "C" __global__ void colour_sweep(real* __restrict__ x, const real* __restrict__ b,
                                        const int* __restrict__ ctrl, BOX_PARAMS, int colour, real omega) {
    GUARD(ctrl)
    const Cells c = BOX;
    const int j = blockIdx.y * blockDim.y + threadIdx.y, k = blockIdx.z;
    const int i = 2 * (blockIdx.x * blockDim.x + threadIdx.x) + ((colour + j + k) & 1);
    int idx[DIM];
    if (!cell_at(c, i, j, k, idx) || seam(idx, c)) return;
    const int here = cell_index(c, idx);
    real s, d;
    stencil(x, idx, here, c, &s, &d);
    const real old = x[here];
    x[here] = old + omega * ((s - b[here]) / d - old);
}

// The seam cells of one colour, in row order, by one thread (odd periodic sizes only).
extern "C" __global__ void colour_seam(real* __restrict__ x, const real* __restrict__ b,
                                       const int* __restrict__ ctrl, BOX_PARAMS, int colour, real omega) {
    GUARD(ctrl)
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const Cells c = BOX;
    const int rows = cell_count(c) / nx;
    for (int r = 0; r < rows; ++r) {
        int idx[DIM];
        cell_of(c, r * nx, idx);
        int par = colour;
#pragma unroll
        for (int a = 1; a < DIM; ++a) par += idx[a];
        for (idx[0] = par % 2; idx[0] < nx; idx[0] += 2) {
            if (!seam(idx, c)) continue;
            const int k = cell_index(c, idx);
            real s, d;
            stencil(x, idx, k, c, &s, &d);
            x[k] = x[k] + omega * ((s - b[k]) / d - x[k]);
        }
    }
}

#if DIM == 2
// Two colour sweeps in one launch, out of place (2D): dst = src after the colour sweep of `first`
// and then of the other colour (the same operations as two colour_sweep launches, omega and all).
// The block loads its TBX x TILE_H cells of src with a halo of two into shared memory, updates
// the first colour on its cells and on the ring of one cell around them (the values its second
// colour reads; the neighbouring block computes those ring cells too, with the same operations,
// so blocks exchange nothing), then the second colour on its cells, and writes each of its cells
// once, coalesced: src and b are read and dst written once, 3 values per cell for both colours
// against 2 x 2 (and strided) for two colour_sweep launches. Threads are assigned to the cells of
// the colour being updated (no idle half-warps). Not for odd periodic sizes (seam cells:
// colour_sweep and colour_seam).
extern "C" __global__ void __launch_bounds__(TILE_THREADS)
    rb_sweep(const real* __restrict__ src, real* __restrict__ dst, const real* __restrict__ b,
             const int* __restrict__ ctrl, BOX_PARAMS, int first, real omega) {
    GUARD(ctrl)
    const Cells c = BOX;
    __shared__ real tile[TILE_H + 4][TBX + 4];
    // Tile position (tx, ty) holds cell (i0 + tx - 2, j0 + ty - 2); i0 and j0 are even, so its
    // colour is (tx + ty) & 1. Ring: rows 1..=TILE_H + 2, RH cells of one colour per row, the
    // first at tx = 1 + ((first + ty + 1) & 1); the block's own cells: rows 2..=TILE_H + 1, IH
    // cells of the other colour per row, the first at tx = 2 + ((first + ty + 1) & 1).
    constexpr int RH = (TBX + 2) / 2, RN = RH * (TILE_H + 2), RQ = (RN + TILE_THREADS - 1) / TILE_THREADS;
    constexpr int IH = TBX / 2, IQ = IH * TILE_H / TILE_THREADS;
    const bool px = pside(pbc, 0) == P_PERIODIC || pside(pbc, 1) == P_PERIODIC;
    const bool py = pside(pbc, 2) == P_PERIODIC || pside(pbc, 3) == P_PERIODIC;
    const int i0 = blockIdx.x * TBX, j0 = blockIdx.y * TILE_H, t0 = thread_linear();
    // b of this thread's cells of both phases, loaded with the tile (all in flight together).
    real rb[RQ], bv[IQ];
    bool rk[RQ];
#pragma unroll
    for (int q = 0; q < RQ; ++q) {
        const int p = t0 + q * TILE_THREADS, ty = p / RH + 1;
        const int tx = 1 + 2 * (p - (ty - 1) * RH) + ((first + ty + 1) & 1);
        int gi = i0 + tx - 2, gj = j0 + ty - 2;
        if (px) gi = wrap_index(gi, nx);
        if (py) gj = wrap_index(gj, ny);
        rk[q] = p < RN && gi >= 0 && gi < nx && gj >= 0 && gj < ny;
        rb[q] = rk[q] ? b[gj * nx + gi] : (real)0;
    }
#pragma unroll
    for (int q = 0; q < IQ; ++q) {
        const int p = t0 + q * TILE_THREADS, ty = p / IH + 2;
        const int tx = 2 + 2 * (p - (ty - 2) * IH) + ((first + ty + 1) & 1);
        const int i = i0 + tx - 2, j = j0 + ty - 2;
        bv[q] = i < nx && j < ny ? b[j * nx + i] : (real)0;
    }
    load_tile<2>(src, tile, i0, j0, nx, ny, pbc);
    __syncthreads();
#pragma unroll
    for (int q = 0; q < RQ; ++q) {
        if (rk[q]) {
            const int p = t0 + q * TILE_THREADS, ty = p / RH + 1;
            const int tx = 1 + 2 * (p - (ty - 1) * RH) + ((first + ty + 1) & 1);
            int gi = i0 + tx - 2, gj = j0 + ty - 2;
            if (px) gi = wrap_index(gi, nx);
            if (py) gj = wrap_index(gj, ny);
            real s, d;
            stencil_tile<2>(tile, tx, ty, gi, gj, c, &s, &d);
            const real old = tile[ty][tx];
            tile[ty][tx] = old + omega * ((s - rb[q]) / d - old);
        }
    }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < IQ; ++q) {
        const int p = t0 + q * TILE_THREADS, ty = p / IH + 2;
        const int tx = 2 + 2 * (p - (ty - 2) * IH) + ((first + ty + 1) & 1);
        const int i = i0 + tx - 2, j = j0 + ty - 2;
        if (i < nx && j < ny) {
            real s, d;
            stencil_tile<2>(tile, tx, ty, i, j, c, &s, &d);
            const real old = tile[ty][tx];
            tile[ty][tx] = old + omega * ((s - bv[q]) / d - old);
        }
    }
    __syncthreads();
    const int i = i0 + threadIdx.x;
#pragma unroll
    for (int q = 0; q < TROWS; ++q) {
        const int ty = threadIdx.y + q * TBY + 2, j = j0 + ty - 2;
        if (i < nx && j < ny) dst[j * nx + i] = tile[ty][threadIdx.x + 2];
    }
}
#endif

// r = b - L x (r may be null: norm only); partial[block] = block sum of r^2 when partial != null.
// Blocks and rows as jacobi_sweep.
extern "C" __global__ void __launch_bounds__(TILE_THREADS)
    residual(const real* __restrict__ x, const real* __restrict__ b, real* __restrict__ r,
             real* __restrict__ partial, const int* __restrict__ ctrl, BOX_PARAMS) {
    GUARD(ctrl)
    const Cells c = BOX;
    real r2 = 0;
#pragma unroll
    for (int q = 0; q < TROWS; ++q) {
        int idx[DIM];
        if (tile_cell(c, q, idx)) {
            const int k = cell_index(c, idx);
            real s, d;
            stencil(x, idx, k, c, &s, &d);
            const real rr = b[k] - (s - d * x[k]);
            if (r) r[k] = rr;
            r2 = r2 + rr * rr;
        }
    }
    if (partial) {
        const real t = block_sum(r2);
        if (thread_linear() == 0) partial[block_linear()] = t;
    }
}

// q = L d; partial[block] = block sum of d . q (PCG). Blocks and rows as jacobi_sweep.
extern "C" __global__ void __launch_bounds__(TILE_THREADS)
    apply_dot(const real* __restrict__ d, real* __restrict__ q, real* __restrict__ partial,
              const int* __restrict__ ctrl, BOX_PARAMS) {
    GUARD(ctrl)
    const Cells c = BOX;
    real dq = 0;
#pragma unroll
    for (int m = 0; m < TROWS; ++m) {
        int idx[DIM];
        if (tile_cell(c, m, idx)) {
            const int k = cell_index(c, idx);
            real s, w;
            stencil(d, idx, k, c, &s, &w);
            const real qq = s - w * d[k];
            q[k] = qq;
            dq = dq + d[k] * qq;
        }
    }
    const real t = block_sum(dq);
    if (thread_linear() == 0) partial[block_linear()] = t;
}

// partial[block] = block sum of a . b over n values (1D grid).
extern "C" __global__ void dot_partial(const real* __restrict__ a, const real* __restrict__ b,
                                       real* __restrict__ partial, const int* __restrict__ ctrl, int n) {
    GUARD(ctrl)
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    const real v = k < n ? a[k] * b[k] : (real)0;
    const real t = block_sum(v);
    if (thread_linear() == 0) partial[blockIdx.x] = t;
}

// partial[block] = block sum of x over n values.
extern "C" __global__ void sum_partial(const real* __restrict__ x, real* __restrict__ partial,
                                       const int* __restrict__ ctrl, int n) {
    GUARD(ctrl)
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    const real t = block_sum(k < n ? x[k] : (real)0);
    if (thread_linear() == 0) partial[blockIdx.x] = t;
}

// x -= sc[SC_MEAN].
extern "C" __global__ void subtract_mean(real* __restrict__ x, const real* __restrict__ sc,
                                         const int* __restrict__ ctrl, int n) {
    GUARD(ctrl)
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) x[k] = x[k] - sc[SC_MEAN];
}

// One block: sc[SC_MEAN] = sum(partial) / n.
extern "C" __global__ void finalize_mean(const real* __restrict__ partial, int nb, real* __restrict__ sc,
                                         const int* __restrict__ ctrl, real n) {
    GUARD(ctrl)
    const real s = sum_partials(partial, nb);
    if (thread_linear() == 0) sc[SC_MEAN] = s / n;
}

// One block, start of a solve: ||b|| from the partials, the target tol ||b||, the control block
// reset; a zero right-hand side ends the solve at once with p = 0 (ctrl[CTRL_ZERO]).
extern "C" __global__ void finalize_bnorm(const real* __restrict__ partial, int nb, real* __restrict__ sc,
                                          int* __restrict__ ctrl, real tol) {
    const real bn = sqrt(sum_partials(partial, nb));
    if (thread_linear() == 0) {
        sc[SC_BNORM] = bn;
        sc[SC_TARGET] = tol * bn;
        sc[SC_RNORM] = 0;
        const int zero = bn == (real)0;
        ctrl[CTRL_DONE] = zero;
        ctrl[CTRL_ITERS] = 0;
        ctrl[CTRL_ZERO] = zero;
    }
}

// One block: sc[SC_RNORM] = sqrt(sum(partial)); converged (or `it >= max`) sets the done flag
// and records `it` as the iteration count. `until_not_greater` = 1 stops unless r > target (the
// multigrid loop's test, which a NaN residual ends), 0 stops when r <= target (Jacobi, SOR, PCG).
extern "C" __global__ void finalize_check(const real* __restrict__ partial, int nb, real* __restrict__ sc,
                                          int* __restrict__ ctrl, int it, int max, int until_not_greater) {
    GUARD(ctrl)
    const real r = sqrt(sum_partials(partial, nb));
    if (thread_linear() == 0) {
        sc[SC_RNORM] = r;
        const bool converged = until_not_greater ? !(r > sc[SC_TARGET]) : r <= sc[SC_TARGET];
        if (converged || it >= max) {
            ctrl[CTRL_DONE] = 1;
            ctrl[CTRL_ITERS] = it;
        }
    }
}

// One block (PCG): dq = sum(partial); a zero or non-finite dq stops at iteration `it`,
// else sc[SC_ALPHA] = gamma / dq.
extern "C" __global__ void finalize_alpha(const real* __restrict__ partial, int nb, real* __restrict__ sc,
                                          int* __restrict__ ctrl, int it) {
    GUARD(ctrl)
    const real dq = sum_partials(partial, nb);
    if (thread_linear() == 0) {
        if (dq == (real)0 || !isfinite(dq)) {
            ctrl[CTRL_DONE] = 1;
            ctrl[CTRL_ITERS] = it;
        } else {
            sc[SC_ALPHA] = sc[SC_GAMMA] / dq;
        }
    }
}

// One block (PCG): first = 1: gamma = r.w; else beta = r.w / gamma, gamma = r.w.
extern "C" __global__ void finalize_gamma(const real* __restrict__ partial, int nb, real* __restrict__ sc,
                                          const int* __restrict__ ctrl, int first) {
    GUARD(ctrl)
    const real g = sum_partials(partial, nb);
    if (thread_linear() == 0) {
        if (!first) sc[SC_BETA] = g / sc[SC_GAMMA];
        sc[SC_GAMMA] = g;
    }
}

// PCG: p += alpha d, r -= alpha q; partial[block] = block sum of r^2.
extern "C" __global__ void pcg_axpy(real* __restrict__ p, real* __restrict__ r, const real* __restrict__ d,
                                    const real* __restrict__ q, const real* __restrict__ sc,
                                    real* __restrict__ partial, const int* __restrict__ ctrl, int n) {
    GUARD(ctrl)
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    real r2 = 0;
    if (k < n) {
        const real alpha = sc[SC_ALPHA];
        p[k] = p[k] + alpha * d[k];
        const real rr = r[k] - alpha * q[k];
        r[k] = rr;
        r2 = rr * rr;
    }
    const real t = block_sum(r2);
    if (thread_linear() == 0) partial[blockIdx.x] = t;
}

// PCG: d = w + beta d (first = 0), or d = w (first = 1).
extern "C" __global__ void pcg_direction(real* __restrict__ d, const real* __restrict__ w,
                                         const real* __restrict__ sc, const int* __restrict__ ctrl, int n,
                                         int first) {
    GUARD(ctrl)
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) d[k] = first ? w[k] : w[k] + sc[SC_BETA] * d[k];
}

// x = 0 where ctrl[CTRL_ZERO] is set (zero right-hand side), else nothing.
extern "C" __global__ void zero_if_flag(real* __restrict__ x, const int* __restrict__ ctrl, int n) {
    if (ctrl[CTRL_ZERO] == 0) return;
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) x[k] = 0;
}

// Multigrid restriction (multigrid.rs `restrict`): coarse b = mean of the 2^DIM children of the
// fine residual, summed in child order (bit a of the child: the upper half along axis a).
// Thread (ic, jc) of plane blockIdx.z.
extern "C" __global__ void restrict_mean(const real* __restrict__ r, real* __restrict__ b, int fnx, int fny,
                                         int cnx, int cny, int cnz) {
    const Cells cc = make_cells(cnx, cny, cnz, 0, 0, 0, 0), fc = make_cells(fnx, fny, 2 * cnz, 0, 0, 0, 0);
    int idx[DIM];
    if (!cell_at(cc, blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y, blockIdx.z, idx))
        return;
    int first = 0;
#pragma unroll
    for (int a = 0; a < DIM; ++a) first += 2 * idx[a] * fc.st[a];
    real sum = r[first];
#pragma unroll
    for (int child = 1; child < (1 << DIM); ++child) {
        int off = 0;
#pragma unroll
        for (int a = 0; a < DIM; ++a)
            if ((child >> a) & 1) off += fc.st[a];
        sum = sum + r[first + off];
    }
    b[cell_index(cc, idx)] = sum * (real)(DIM == 2 ? 0.25 : 0.125);
}

// Coarse value at idx with one ghost cell from the homogeneous conditions (laplacian.rs ghosted).
__device__ __forceinline__ real ghosted(const real* e, const int idx[DIM], const Cells& c) {
    real sign = 1;
    int k = 0;
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        int i = idx[a];
        if (i < 0 || i >= c.n[a]) {
            const int bc = pside(c.pbc, 2 * a + (i < 0 ? 0 : 1));
            if (bc == P_PERIODIC) i = i < 0 ? c.n[a] - 1 : 0;
            else {
                if (bc == P_DIRICHLET) sign = -sign;
                i = i < 0 ? 0 : c.n[a] - 1;
            }
        }
        k += i * c.st[a];
    }
    return sign * e[k];
}

// Multigrid prolongation (multigrid.rs `prolong_add`): x += multilinear interpolation of the
// coarse correction e, weight (3/4)^(DIM - m) (1/4)^m for the coarse cells m axes away towards
// the fine cell's side, each group summed in corner order (2D: 9/16, 3/16 (e10 + e01), 1/16).
// `pbc` is the coarse operator's; thread (i, j) of plane blockIdx.z.
extern "C" __global__ void prolong_add(const real* __restrict__ e, real* __restrict__ x, int cnx, int cny, int cnz,
                                       int fnx, int fny, int fnz, int pbc) {
    const Cells cc = make_cells(cnx, cny, cnz, pbc, 0, 0, 0), fc = make_cells(fnx, fny, fnz, 0, 0, 0, 0);
    int fidx[DIM];
    if (!cell_at(fc, blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y, blockIdx.z, fidx))
        return;
    int centre[DIM], towards[DIM];
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        centre[a] = fidx[a] / 2;
        towards[a] = (fidx[a] % 2 == 0) ? -1 : 1;
    }
    const real w[4] = {(real)(DIM == 2 ? 9.0 / 16.0 : 27.0 / 64.0), (real)(DIM == 2 ? 3.0 / 16.0 : 9.0 / 64.0),
                       (real)(DIM == 2 ? 1.0 / 16.0 : 3.0 / 64.0), (real)(1.0 / 64.0)};
    real v = w[0] * ghosted(e, centre, cc);
#pragma unroll
    for (int m = 1; m <= DIM; ++m) {
        real group = 0;
        bool any = false;
#pragma unroll
        for (int corner = 1; corner < (1 << DIM); ++corner) {
            if (__popc(corner) != m) continue;
            int at[DIM];
#pragma unroll
            for (int a = 0; a < DIM; ++a) at[a] = centre[a] + (((corner >> a) & 1) ? towards[a] : 0);
            const real g = ghosted(e, at, cc);
            group = any ? group + g : g;
            any = true;
        }
        v = v + w[m] * group;
    }
    const int k = cell_index(fc, fidx);
    x[k] = x[k] + v;
}

// Coarsest multigrid level, one block: rhs = b (mean removed when singular), then unpreconditioned
// CG on L x = rhs from the given x to ||r|| <= tol ||rhs|| or 4 n iterations
// (multigrid.rs coarse_solve + conjugate_gradient.rs with the identity preconditioner).
extern "C" __global__ void coarse_cg(real* __restrict__ x, const real* __restrict__ b, real* __restrict__ rhs,
                                     real* __restrict__ r, real* __restrict__ w, real* __restrict__ d,
                                     real* __restrict__ q, BOX_PARAMS, int singular, real tol) {
    __shared__ real bc_val;
    const Cells c = BOX;
    const int n = cell_count(c);
    const int t0 = thread_linear(), nt = block_threads();
    for (int k = t0; k < n; k += nt) rhs[k] = b[k];
    __syncthreads();
    if (singular) {
        real s = 0;
        for (int k = t0; k < n; k += nt) s += rhs[k];
        s = block_sum(s);
        if (t0 == 0) bc_val = s / (real)n;
        __syncthreads();
        const real mean = bc_val;
        for (int k = t0; k < n; k += nt) rhs[k] = rhs[k] - mean;
        __syncthreads();
    }
    real acc = 0;
    for (int k = t0; k < n; k += nt) acc += rhs[k] * rhs[k];
    acc = block_sum(acc);
    if (t0 == 0) bc_val = sqrt(acc);
    __syncthreads();
    const real target = bc_val * tol;
    // r = rhs - L x
    acc = 0;
    for (int k = t0; k < n; k += nt) {
        int idx[DIM];
        cell_of(c, k, idx);
        real s, dg;
        stencil(x, idx, k, c, &s, &dg);
        const real rr = rhs[k] - (s - dg * x[k]);
        r[k] = rr;
        acc += rr * rr;
    }
    acc = block_sum(acc);
    if (t0 == 0) bc_val = sqrt(acc);
    __syncthreads();
    if (bc_val <= target) return;
    acc = 0;
    for (int k = t0; k < n; k += nt) {
        w[k] = -r[k];
        d[k] = w[k];
        acc += r[k] * w[k];
    }
    acc = block_sum(acc);
    if (t0 == 0) bc_val = acc;
    __syncthreads();
    real gamma = bc_val;
    const int max = 4 * n;
    for (int it = 1; it <= max; ++it) {
        __syncthreads();
        acc = 0;
        for (int k = t0; k < n; k += nt) {
            int idx[DIM];
            cell_of(c, k, idx);
            real s, dg;
            stencil(d, idx, k, c, &s, &dg);
            const real qq = s - dg * d[k];
            q[k] = qq;
            acc += d[k] * qq;
        }
        acc = block_sum(acc);
        if (t0 == 0) bc_val = acc;
        __syncthreads();
        const real dq = bc_val;
        if (dq == (real)0 || !isfinite(dq)) return;
        const real alpha = gamma / dq;
        acc = 0;
        for (int k = t0; k < n; k += nt) {
            x[k] = x[k] + alpha * d[k];
            const real rr = r[k] - alpha * q[k];
            r[k] = rr;
            acc += rr * rr;
        }
        acc = block_sum(acc);
        if (t0 == 0) bc_val = sqrt(acc);
        __syncthreads();
        if (bc_val <= target || it == max) return;
        acc = 0;
        for (int k = t0; k < n; k += nt) {
            w[k] = -r[k];
            acc += r[k] * w[k];
        }
        acc = block_sum(acc);
        if (t0 == 0) bc_val = acc;
        __syncthreads();
        const real beta = bc_val / gamma;
        gamma = bc_val;
        for (int k = t0; k < n; k += nt) d[k] = w[k] + beta * d[k];
    }
}

// x = 0 (guarded; the PCG preconditioner starts from zero).
extern "C" __global__ void zero_fill(real* __restrict__ x, const int* __restrict__ ctrl, int n) {
    GUARD(ctrl)
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) x[k] = 0;
}

// ---- Direct solve by cosine transforms (pressure_poisson/spectral.rs) through cuFFT ----------
// The DCT-II of an nx x ny (x nz) field, X[k] = sum_i x_i prod_a cos(pi k_a (2 i_a + 1) / 2 n_a),
// is computed from the real-to-complex DFT V of the field reordered along every axis (Makhoul
// 1980, "A fast cosine transform in one and multiple dimensions"): position q of a reordered
// axis holds element 2q for q < (n + 1) / 2 and 2(n - 1 - q) + 1 after. Along one axis, with
// w(k) = exp(-i pi k / 2n) and V the DFT of the (possibly complex) reordered line,
//   DCT(k) = (w(k) V(k) + conj(w(k)) V(-k)) / 2,  and conversely  V(k) = conj(w(k)) (X(k) - i X(n - k))
// with X(n) = 0; applied axis by axis (x, then y, then the slowest axis, whose result is real):
//   2D: X[b][a] = Re(w_y(b) Z_x) / 2, Z_x = w_x(a) V[b][a] + conj(w_x(a)) V[b][-a];
//   3D: X[c][b][a] = Re(w_z(c) (w_y(b) Z_x(b) + conj(w_y(b)) Z_x(-b))) / 4,
// and back V[k] = conj(prod_a w_a(k_a)) sum_e (-i)^|e| X[k ^ e], e over the subsets of axes whose
// index k_a goes to n_a - k_a. Indices are (.., y, x) from slow to fast, -k means (n - k) mod n in
// V and n - k in X. V[b][-a] is read as conj(V[-b][a]) (-c too in 3D), by Hermitian symmetry
// from the stored half (x in 0..=nx/2). Odd cells of a Dirichlet axis change sign on the way in
// and out (DST-II via DCT-II). A periodic axis (the CPU's Hartley transform, which mixes the same
// two Fourier modes k and n - k) is not reordered and keeps its DFT coefficients: with any
// periodic axis the same steps run on complex values, each cosine axis in turn, without the last
// axis' real-part shortcut (`mixed_coefficients`). The twiddle tables hold cos and sin of
// pi k / (2n) for k in 0..n: tw[2k], tw[2k + 1]. The reordering and sign flips (`packed_index` in
// common.cuh) are applied by projection.cu `poisson_rhs` as it writes the right-hand side, and
// undone by `correct` as it reads the solution.

struct cplx {
    real re, im;
};

// V at DFT index (x, y, z) (each in 0..n) from the stored half (x in 0..=nx/2), by Hermitian
// symmetry; z is 0 in 2D.
__device__ __forceinline__ cplx spectrum_at(const real* V, int x, int y, int z, const Cells& c) {
    const int nx = c.n[0], ny = c.n[1], nz = DIM == 3 ? c.n[DIM - 1] : 1, h = nx / 2 + 1;
    if (x < h) {
        const int k = (z * ny + y) * h + x;
        return {V[2 * k], V[2 * k + 1]};
    }
    const int k = (((nz - z) % nz) * ny + (ny - y) % ny) * h + (nx - x);
    return {V[2 * k], -V[2 * k + 1]};
}

// conj(V) at (x, -y, -z): V at (-x, y, z) by Hermitian symmetry.
__device__ __forceinline__ cplx mirrored(const real* V, int x, int y, int z, const Cells& c) {
    const int nz = DIM == 3 ? c.n[DIM - 1] : 1;
    const cplx m = spectrum_at(V, x, (c.n[1] - y) % c.n[1], (nz - z) % nz, c);
    return {m.re, -m.im};
}

// w A + conj(w) B for w = cos - i sin.
__device__ __forceinline__ cplx combine(real cs, real sn, cplx a, cplx b) {
    return {cs * (a.re + b.re) + sn * (a.im - b.im), cs * (a.im + b.im) - sn * (a.re - b.re)};
}

// The tables of one transform solve: twiddles and eigenvalues per axis, the normalisation.
struct Transform {
    const real* tw[3];
    const double* lambda[3];
    double scale;
};

// The solve's multiplier scale / sum_a lambda_a[j_a] of the eigenvalues at j (summed in axis
// order, in double as spectral.rs `multiplier`, zero for the constant mode), in REAL.
__device__ __forceinline__ real multiplier(const int j[DIM], const Transform& t) {
    double lambda = t.lambda[0][j[0]];
#pragma unroll
    for (int a = 1; a < DIM; ++a) lambda = lambda + t.lambda[a][j[a]];
    return (real)(lambda == 0.0 ? 0.0 : t.scale / lambda);
}

// X at j (each j_a in 0..=n_a) times its `multiplier`, every axis a cosine axis; zero where some
// j_a = n_a.
__device__ __forceinline__ real solved_coefficient(const real* V, const int j[DIM], const Cells& c,
                                                   const Transform& t) {
#pragma unroll
    for (int a = 0; a < DIM; ++a)
        if (j[a] == c.n[a]) return 0;
    const int x = j[0], s = DIM - 1;
    const real cx = t.tw[0][2 * x], sx = t.tw[0][2 * x + 1];
#if DIM == 2
    const cplx zx = combine(cx, sx, spectrum_at(V, x, j[1], 0, c), mirrored(V, x, j[1], 0, c));
    const real half = (real)0.5;
#else
    const int z = j[DIM - 1];
    cplx zy[2];
    for (int m = 0; m < 2; ++m) {
        const int y = m ? (c.n[1] - j[1]) % c.n[1] : j[1];
        zy[m] = combine(cx, sx, spectrum_at(V, x, y, z, c), mirrored(V, x, y, z, c));
    }
    const cplx zx = combine(t.tw[1][2 * j[1]], t.tw[1][2 * j[1] + 1], zy[0], zy[1]);
    const real half = (real)0.25;
#endif
    const real X = (t.tw[s][2 * j[s]] * zx.re + t.tw[s][2 * j[s] + 1] * zx.im) * half;
    return X * multiplier(j, t);
}

// The index along axis a of the group of k in pattern e (bit a: n_a - k_a).
__device__ __forceinline__ int pattern_index(int k, int n, int e, int a) { return ((e >> a) & 1) ? n - k : k; }

// With periodic axes (`pack`'s periodic bits): the stored entries of the group of k, owned as in
// dct_divide, from the DFT V to the spectrum of the solution, in place. The group's 2^DIM values
// (V at the index patterns, by Hermitian symmetry) go through the cosine axes in order,
// z(k) = w(k) z(k) + conj(w(k)) z(-k) (zero at index n), are scaled by the `multiplier` of their
// wavenumbers (DCT index along cosine axes, DFT index mod n along periodic ones) and by 1/2 per
// cosine axis, and come back through the cosine axes, z(k) = conj(w(k)) (z(k) - i z(n - k)).
__device__ __forceinline__ void mixed_coefficients(real* V, const int k[DIM], const Cells& c, const Transform& t,
                                                   int pack) {
    constexpr int G = 1 << DIM;
    cplx z[G];
#pragma unroll
    for (int e = 0; e < G; ++e) {
        int j[3] = {0, 0, 0};
#pragma unroll
        for (int a = 0; a < DIM; ++a) j[a] = pattern_index(k[a], c.n[a], e, a) % c.n[a];
        z[e] = spectrum_at(V, j[0], j[1], j[2], c);
    }
    real half = 1;
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        if (PACK_PERIODIC(pack, a)) continue;
        half = half * (real)0.5;
        cplx y[G];
#pragma unroll
        for (int e = 0; e < G; ++e) {
            const int i = pattern_index(k[a], c.n[a], e, a);
            y[e] = i == c.n[a] ? cplx{0, 0} : combine(t.tw[a][2 * i], t.tw[a][2 * i + 1], z[e], z[e ^ (1 << a)]);
        }
#pragma unroll
        for (int e = 0; e < G; ++e) z[e] = y[e];
    }
#pragma unroll
    for (int e = 0; e < G; ++e) {
        int j[DIM];
#pragma unroll
        for (int a = 0; a < DIM; ++a) {
            const int i = pattern_index(k[a], c.n[a], e, a);
            j[a] = PACK_PERIODIC(pack, a) ? i % c.n[a] : i;
        }
        bool zero = false;
#pragma unroll
        for (int a = 0; a < DIM; ++a) zero = zero || j[a] == c.n[a];
        const real m = zero ? (real)0 : multiplier(j, t) * half;
        z[e] = {z[e].re * m, z[e].im * m};
    }
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        if (PACK_PERIODIC(pack, a)) continue;
        cplx y[G];
#pragma unroll
        for (int e = 0; e < G; ++e) {
            const int i = pattern_index(k[a], c.n[a], e, a);
            if (i == c.n[a]) {
                y[e] = {0, 0};
                continue;
            }
            // conj(w) (z - i z'), z' the value at n - i (zero at index n).
            const bool far_zero = pattern_index(k[a], c.n[a], e ^ (1 << a), a) == c.n[a];
            const cplx o = far_zero ? cplx{0, 0} : z[e ^ (1 << a)];
            const real cs = t.tw[a][2 * i], sn = t.tw[a][2 * i + 1];
            const real ur = z[e].re + o.im, ui = z[e].im - o.re;
            y[e] = {cs * ur - sn * ui, cs * ui + sn * ur};
        }
#pragma unroll
        for (int e = 0; e < G; ++e) z[e] = y[e];
    }
    const int h = c.n[0] / 2 + 1;
#pragma unroll
    for (int own = 0; own < G; own += 2) {
        int r[DIM];
        bool dup = false;
#pragma unroll
        for (int a = 0; a < DIM; ++a) {
            const bool up = (own >> a) & 1;
            r[a] = up ? c.n[a] - k[a] : k[a];
            dup = dup || (up && (k[a] == 0 || r[a] == k[a]));
        }
        if (dup) continue;
        const int at = DIM == 3 ? (r[DIM - 1] * c.n[1] + r[1]) * h + r[0] : r[1] * h + r[0];
        V[2 * at] = z[own].re;
        V[2 * at + 1] = z[own].im;
    }
}

// In place on the R2C spectrum V ((nz x) ny x (nx/2 + 1) complex): forward DCT coefficients,
// divided by the eigenvalues, back to the spectrum of the reordered solution. Thread k (k_a in
// 0..=n_a/2; x from the threads, y and z from the grid) owns the stored entries with index
// k_a or n_a - k_a along y (and z) and k_x along x: their 2^DIM coefficients X[+-k] need no
// other entry, so threads never share data.
extern "C" __global__ void dct_divide(real* __restrict__ V, const int* __restrict__ ctrl, int nx, int ny, int nz,
                                      const real* __restrict__ twx, const real* __restrict__ twy,
                                      const real* __restrict__ twz, const double* __restrict__ lx,
                                      const double* __restrict__ ly, const double* __restrict__ lz,
                                      double scale, int pack) {
    GUARD(ctrl)
    const Cells c = make_cells(nx, ny, nz, 0, 0, 0, 0);
    const Transform t = {{twx, twy, twz}, {lx, ly, lz}, scale};
    const int k3[3] = {(int)(blockIdx.x * blockDim.x + threadIdx.x), (int)(blockIdx.y * blockDim.y + threadIdx.y),
                       (int)blockIdx.z};
    int k[DIM];
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        k[a] = k3[a];
        if (k[a] > c.n[a] / 2) return;
    }
    if (pack >> 3) {
        mixed_coefficients(V, k, c, t, pack);
        return;
    }
    // y[e]: the coefficient at k with the axes of bit set e (bit a: axis a) at n_a - k_a.
    real y[1 << DIM];
#pragma unroll
    for (int e = 0; e < (1 << DIM); ++e) {
        int j[DIM];
#pragma unroll
        for (int a = 0; a < DIM; ++a) j[a] = ((e >> a) & 1) ? c.n[a] - k[a] : k[a];
        y[e] = solved_coefficient(V, j, c, t);
    }
    const int h = nx / 2 + 1;
#pragma unroll
    for (int own = 0; own < (1 << DIM); own += 2) {
        int r[DIM];
        bool dup = false;
#pragma unroll
        for (int a = 0; a < DIM; ++a) {
            const bool up = (own >> a) & 1;
            r[a] = up ? c.n[a] - k[a] : k[a];
            dup = dup || (up && (k[a] == 0 || r[a] == k[a]));
        }
        if (dup) continue;
        // conj of the twiddles' product, slowest axis first.
        real wr = t.tw[DIM - 1][2 * r[DIM - 1]], wi = t.tw[DIM - 1][2 * r[DIM - 1] + 1];
#pragma unroll
        for (int a = DIM - 2; a >= 0; --a) {
            const real cs = t.tw[a][2 * r[a]], sn = t.tw[a][2 * r[a] + 1];
            const real nr = wr * cs - wi * sn;
            wi = wr * sn + wi * cs;
            wr = nr;
        }
#if DIM == 2
        const real zr = y[own] - y[own ^ 3], zi = -(y[own ^ 1] + y[own ^ 2]);
#else
        const real zr = y[own] - (y[own ^ 3] + y[own ^ 5] + y[own ^ 6]);
        const real zi = y[own ^ 7] - (y[own ^ 1] + y[own ^ 2] + y[own ^ 4]);
#endif
        const int at = DIM == 3 ? (r[DIM - 1] * ny + r[1]) * h + r[0] : r[1] * h + r[0];
        V[2 * at] = wr * zr - wi * zi;
        V[2 * at + 1] = wr * zi + wi * zr;
    }
}
