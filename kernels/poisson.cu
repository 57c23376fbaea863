// Pressure Poisson kernels (pressure_poisson/*.rs on the GPU), for the five-point (DIM = 2) or
// seven-point (DIM = 3) Laplacian: damped Jacobi, red-black SOR / Gauss-Seidel colour sweeps,
// residuals, multigrid transfers, the single-block coarse-grid CG, PCG vector updates, the
// scalar finalize kernels that keep the convergence logic on the device, and (transform.cuh) the
// transform solve's spectral kernel. `ctrl` (int) and `sc` (REAL) are the control and scalar
// blocks (common.cuh); a kernel given a non-null `ctrl` returns at once once ctrl[CTRL_DONE] is
// set, so the host can enqueue several iterations and read the flag only every few.
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
                 real* __restrict__ partial, const int* __restrict__ ctrl, BOX_PARAMS, int z0) {
    GUARD(ctrl)
    const Cells c = BOX;
    real r2 = 0;
#pragma unroll
    for (int q = 0; q < TROWS; ++q) {
        int idx[DIM];
        if (tile_cell_from(c, z0, q, idx)) {
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
    if (thread_linear() == 0) partial[block_linear_from(z0)] = t;
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
// x <- x + omega ((sum_f c_f x_nb - b) / sum_f c_f - x). The grid covers (nx/2 + 1) x ny threads
// of the planes z0, z0 + 1, ... (3D; blockIdx.z + z0 the plane).
extern "C" __global__ void colour_sweep(real* __restrict__ x, const real* __restrict__ b,
                                        const int* __restrict__ ctrl, BOX_PARAMS, int colour, real omega, int z0) {
    GUARD(ctrl)
    const Cells c = BOX;
    const int j = blockIdx.y * blockDim.y + threadIdx.y, k = blockIdx.z + z0;
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

// One block per z layer (3D) and segment: layer_sum[s * layers + l] = the sum (or with `maxima`
// the maximum) of the block partials of layer l of segment s, partial[s * segment + l * per_layer
// ...] (thread t adding t, t + T, ...; then block_sum), `layers` = gridDim.x. The partials are a
// kernel's blocks laid out layer by layer: the tile kernels' over the cells or the faces, or the
// linear kernels' when a layer holds a whole number of their blocks. The finalize kernels then
// add the layer sums in layer order, so a part of a grid cut into slabs folds its own layers
// where they lie and gathers one value per layer (slab.rs), and the result is one GPU's bit for
// bit.
extern "C" __global__ void fold_layers(const real* __restrict__ partial, int per_layer, long long segment,
                                       int maxima, real* __restrict__ layer_sum, const int* __restrict__ ctrl) {
    GUARD(ctrl)
    const real* const p = partial + (size_t)blockIdx.y * segment + (size_t)blockIdx.x * per_layer;
    const real s = maxima ? max_partials(p, per_layer) : sum_partials(p, per_layer);
    if (thread_linear() == 0) layer_sum[(size_t)blockIdx.y * gridDim.x + blockIdx.x] = s;
}

// x -= sc[SC_MEAN]; with `squares` not null, squares[block] = block sum of the new x^2 (the
// partials `dot_partial` of x with itself would give, read in the same pass).
extern "C" __global__ void subtract_mean(real* __restrict__ x, const real* __restrict__ sc,
                                         real* __restrict__ squares, const int* __restrict__ ctrl, int n) {
    GUARD(ctrl)
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    real v = 0;
    if (k < n) {
        v = x[k] - sc[SC_MEAN];
        x[k] = v;
    }
    if (!squares) return;
    const real t = block_sum(v * v);
    if (thread_linear() == 0) squares[blockIdx.x] = t;
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
    AFTER_PREDECESSOR();
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
    AFTER_PREDECESSOR();
    if (ctrl[CTRL_ZERO] == 0) return;
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) x[k] = 0;
}

// Multigrid restriction (multigrid.rs `restrict`): coarse b = mean of the 2^DIM children of the
// fine residual, summed in child order (bit a of the child: the upper half along axis a).
// Thread (ic, jc) of plane blockIdx.z.
extern "C" __global__ void restrict_mean(const real* __restrict__ r, real* __restrict__ b, int fnx, int fny, int fnz,
                                         int cnx, int cny, int cnz, int offset) {
    AFTER_PREDECESSOR();
    const Cells cc = make_cells(cnx, cny, cnz, 0, 0, 0, 0), fc = make_cells(fnx, fny, fnz, 0, 0, 0, 0);
    int idx[DIM];
    if (!cell_at(cc, blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y, blockIdx.z, idx))
        return;
    // Along the last axis the first child is 2 k + offset; cells whose children lie outside
    // the fine box (a part's outer stored layers) are left alone.
    const int child = 2 * idx[DIM - 1] + offset;
    if (child < 0 || child + 1 >= fc.n[DIM - 1]) return;
    int first = child * fc.st[DIM - 1];
#pragma unroll
    for (int a = 0; a < DIM - 1; ++a) first += 2 * idx[a] * fc.st[a];
    real sum = r[first];
#pragma unroll
    for (int c = 1; c < (1 << DIM); ++c) {
        int off = 0;
#pragma unroll
        for (int a = 0; a < DIM; ++a)
            if ((c >> a) & 1) off += fc.st[a];
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
// `pbc` is the coarse operator's; along the last axis fine cell f lies in coarse cell
// floor((f - offset) / 2) (restrict_mean's offset, even); thread (i, j) of plane blockIdx.z.
extern "C" __global__ void prolong_add(const real* __restrict__ e, real* __restrict__ x, int cnx, int cny, int cnz,
                                       int fnx, int fny, int fnz, int pbc, int offset) {
    AFTER_PREDECESSOR();
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
    {
        const int f = fidx[DIM - 1] - offset;
        centre[DIM - 1] = (f >= 0 ? f : f - 1) / 2;
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
    AFTER_PREDECESSOR();
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

#include "transform.cuh"
#include "facr.cuh"
