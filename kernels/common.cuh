// Shared definitions of the flowlab CUDA kernels. Every kernel file is compiled twice by NVRTC,
// with -DREAL=float and -DREAL=double, and --fmad=false so that element-wise arithmetic rounds
// exactly like the CPU reference (no fused multiply-add contraction).
//
// Index conventions (as on the CPU): staggered velocity arrays are (nx + 2) x (ny + 2) with one
// ghost layer, index j * (nx + 2) + i; cell-centred pressure arrays are nx x ny, index
// j * nx + i (0-based). Reductions are deterministic: every block writes one partial result
// (block index order) and a single-block finalize kernel combines the partials in a fixed order.
#pragma once

#ifndef REAL
#error "compile with -DREAL=float or -DREAL=double"
#endif
typedef REAL real;

// x^y through the CUDA math library, outside the kernels' own arithmetic: pow's implementation
// (libdevice) uses fused multiply-adds internally for its accuracy (2 ulp in double, 4 in float
// here; the host's libm is within 1), so it is kept in functions of these names, and
// tests/cuda_kernels.rs checks that fma instructions occur in them only.
extern "C" __device__ __noinline__ double libm_pow_f64(double x, double y) { return pow(x, y); }
extern "C" __device__ __noinline__ real libm_pow_real(real x, real y) { return pow(x, y); }

// The slots of the device scalar block `sc` (REAL: SC_*) and of the control block `ctrl` (int:
// CTRL_*) are defined at the top of every compilation unit from src/backend/cuda/slots.rs.

// A kernel given a control block returns at once when the solve it belongs to has converged.
#define GUARD(ctrl) \
    if ((ctrl) != 0 && (ctrl)[CTRL_DONE] != 0) return;

__device__ __forceinline__ int block_linear() { return blockIdx.y * gridDim.x + blockIdx.x; }
__device__ __forceinline__ int thread_linear() { return threadIdx.y * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int block_threads() { return blockDim.x * blockDim.y; }

// Sum over the block (fixed order: warp shuffles, then warp 0); valid in thread 0.
// Every thread of the block must call it.
__device__ __forceinline__ real block_sum(real v) {
    __shared__ real warp_part[32];
    const int t = thread_linear();
    const int lane = t & 31, w = t >> 5;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (lane == 0) warp_part[w] = v;
    __syncthreads();
    const int nw = (block_threads() + 31) >> 5;
    if (w == 0) {
        v = lane < nw ? warp_part[lane] : (real)0;
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    }
    __syncthreads();
    return v;
}

// Maximum over the block (order-independent); valid in thread 0. NaNs are skipped (fmax), as
// the CPU's fold with f64::max does.
__device__ __forceinline__ real block_max(real v) {
    __shared__ real warp_part[32];
    const int t = thread_linear();
    const int lane = t & 31, w = t >> 5;
    for (int off = 16; off > 0; off >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, off));
    if (lane == 0) warp_part[w] = v;
    __syncthreads();
    const int nw = (block_threads() + 31) >> 5;
    if (w == 0) {
        v = lane < nw ? warp_part[lane] : (real)0;
        for (int off = 16; off > 0; off >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, off));
    }
    __syncthreads();
    return v;
}

// Sum of partial[0..n) by one block (thread t adds t, t + T, ...; then block_sum).
__device__ __forceinline__ real sum_partials(const real* partial, int n) {
    real s = 0;
    for (int k = thread_linear(); k < n; k += block_threads()) s += partial[k];
    return block_sum(s);
}

__device__ __forceinline__ real max_partials(const real* partial, int n) {
    real s = 0;
    for (int k = thread_linear(); k < n; k += block_threads()) s = fmax(s, partial[k]);
    return block_max(s);
}

// Boundary kinds of the velocity conditions (bck[side], sides left, right, bottom, top).
#define BC_WALL 0
#define BC_INFLOW 1
#define BC_OUTFLOW 2
#define BC_SYMMETRY 3
#define BC_PERIODIC 4

// Pressure face conditions, packed two bits per side in `pbc` (left, right, bottom, top).
#define P_NEUMANN 0
#define P_DIRICHLET 1
#define P_PERIODIC 2
__device__ __forceinline__ int pside(int pbc, int side) { return (pbc >> (2 * side)) & 3; }

// Five-point Laplacian row (i, j) from the neighbour values west, east, south, north as the
// operator reads them (the periodic image across a periodic side; any value across another side,
// which is not read): L p = s - d * p_ij (see laplacian.rs; same operation order).
__device__ __forceinline__ void stencil_nb(real w, real e, real so, real no, int i, int j, int nx, int ny,
                                           int pbc, real idx2, real idy2, real* s_out, real* d_out) {
    if (i > 0 && i + 1 < nx && j > 0 && j + 1 < ny) {
        *s_out = (w + e) * idx2 + (so + no) * idy2;
        *d_out = (idx2 + idy2) * (real)2.0;
        return;
    }
    real s = 0, d = 0;
#define FACE(inside, nb, bc, c)                \
    if (inside) {                              \
        s = s + (c) * (nb);                    \
        d = d + (c);                           \
    } else if ((bc) == P_DIRICHLET) {          \
        d = d + (c) * (real)2.0;               \
    } else if ((bc) == P_PERIODIC) {           \
        s = s + (c) * (nb);                    \
        d = d + (c);                           \
    }
    FACE(i > 0, w, pside(pbc, 0), idx2)
    FACE(i + 1 < nx, e, pside(pbc, 1), idx2)
    FACE(j > 0, so, pside(pbc, 2), idy2)
    FACE(j + 1 < ny, no, pside(pbc, 3), idy2)
#undef FACE
    *s_out = s;
    *d_out = d;
}

// The same row with the neighbours read from p (row-major nx x ny).
__device__ __forceinline__ void stencil(const real* p, int i, int j, int nx, int ny, int pbc, real idx2,
                                        real idy2, real* s_out, real* d_out) {
    const int row = j * nx, here = row + i;
    const real w = i > 0 ? p[here - 1] : pside(pbc, 0) == P_PERIODIC ? p[row + nx - 1] : (real)0;
    const real e = i + 1 < nx ? p[here + 1] : pside(pbc, 1) == P_PERIODIC ? p[row] : (real)0;
    const real so = j > 0 ? p[here - nx] : pside(pbc, 2) == P_PERIODIC ? p[(ny - 1) * nx + i] : (real)0;
    const real no = j + 1 < ny ? p[here + nx] : pside(pbc, 3) == P_PERIODIC ? p[i] : (real)0;
    stencil_nb(w, e, so, no, i, j, nx, ny, pbc, idx2, idy2, s_out, d_out);
}

// Blocks of the Poisson stencil kernels (jacobi_sweep, rb_sweep, residual, apply_dot): TBX x TBY
// threads cover TBX x TILE_H cells, TROWS rows per thread (the launch sites use the same shape).
#define TBX 32
#define TBY 8
#define TROWS 4
#define TILE_H (TBY * TROWS)
#define TILE_THREADS (TBX * TBY)

// Index of the periodic image of k in 0..n.
__device__ __forceinline__ int wrap_index(int k, int n) {
    if (k >= 0 && k < n) return k;
    k %= n;
    return k < 0 ? k + n : k;
}

// tile[ty][tx] = x at (i0 + tx - H, j0 + ty - H) for the TBX x TILE_H cells from (i0, j0) and a
// halo of H cells: the periodic image across periodic sides, 0 outside the grid elsewhere.
// Every thread of the block must call it; a __syncthreads() must follow before the tile is read.
template <int H>
__device__ __forceinline__ void load_tile(const real* __restrict__ x, real (*tile)[TBX + 2 * H], int i0, int j0,
                                          int nx, int ny, int pbc) {
    constexpr int W = TBX + 2 * H, N = W * (TILE_H + 2 * H);
    const bool px = pside(pbc, 0) == P_PERIODIC || pside(pbc, 1) == P_PERIODIC;
    const bool py = pside(pbc, 2) == P_PERIODIC || pside(pbc, 3) == P_PERIODIC;
    const int t0 = thread_linear();
#pragma unroll
    for (int q = 0; q < (N + TILE_THREADS - 1) / TILE_THREADS; ++q) {
        const int t = t0 + q * TILE_THREADS;
        if (t < N) {
            const int ty = t / W, tx = t - ty * W;
            int gi = i0 + tx - H, gj = j0 + ty - H;
            if (px) gi = wrap_index(gi, nx);
            if (py) gj = wrap_index(gj, ny);
            tile[ty][tx] = gi >= 0 && gi < nx && gj >= 0 && gj < ny ? x[gj * nx + gi] : (real)0;
        }
    }
}

// The five-point row of cell (i, j) at tile position (tx, ty).
template <int H>
__device__ __forceinline__ void stencil_tile(const real (*tile)[TBX + 2 * H], int tx, int ty, int i, int j, int nx,
                                             int ny, int pbc, real idx2, real idy2, real* s_out, real* d_out) {
    stencil_nb(tile[ty][tx - 1], tile[ty][tx + 1], tile[ty - 1][tx], tile[ty + 1][tx], i, j, nx, ny, pbc, idx2,
               idy2, s_out, d_out);
}

// TVD limiters (src/solver/limiter.rs; LIM_* of src/backend/cuda/slots.rs, as limiter_code
// numbers them): Sweby's psi(r) and the MUSCL slope from backward and forward differences.

__device__ __forceinline__ real psi(int lim, real r) {
    const real zero = 0, one = 1, two = 2;
    switch (lim) {
        case LIM_MINMOD: return fmax(zero, fmin(one, r));
        case LIM_SUPERBEE: return fmax(fmax(zero, fmin(two * r, one)), fmin(r, two));
        case LIM_VAN_LEER: return (r + fabs(r)) / (one + fabs(r));
        case LIM_MC: return fmax(zero, fmin(fmin(two * r, (one + r) * (real)0.5), two));
        case LIM_VAN_ALBADA: return r > zero ? (r * r + r) / (r * r + one) : zero;
        case LIM_OSHER: return fmax(zero, fmin(r, two));
        case LIM_DOWNWIND: return two;
        case LIM_CENTRAL: return one;
        case LIM_SOU: return r;
        case LIM_FROMM: return (one + r) * (real)0.5;
        case LIM_QUICK: return ((real)3 + r) * (real)0.25;
        default: return zero;
    }
}

// Limited slope from the backward difference a and the forward difference b (Limiter::slope; the
// compressible family allows only the symmetric TVD limiters 0-5).
__device__ __forceinline__ real limited_slope(int lim, real a, real b) {
    if (a * b <= (real)0) return (real)0;
    return b * psi(lim, a / b);
}

// The reordering of the fast cosine transform (Makhoul 1980; kernels/poisson.cu `dct_*`):
// element s of an axis of n cells goes to position s / 2 if s is even, n - 1 - s / 2 if odd.
__device__ __forceinline__ int makhoul_position(int s, int n) { return (s & 1) ? n - 1 - (s >> 1) : s >> 1; }

// Whether cell (i, j) changes sign on the way into and out of the transforms: an odd cell of a
// Dirichlet axis (flip bit 0: x, bit 1: y), which turns the DCT-II into the DST-II.
__device__ __forceinline__ bool flipped(int i, int j, int flip) { return ((flip & 1) && (i & 1)) != ((flip & 2) && (j & 1)); }
