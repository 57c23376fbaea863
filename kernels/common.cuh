// Shared definitions of the flowlab CUDA kernels. Every kernel file is compiled twice by NVRTC,
// with -DREAL=float and -DREAL=double, and --fmad=false so that element-wise arithmetic rounds
// exactly like the CPU reference (no fused multiply-add contraction). The staggered-grid sets
// (projection.cu, poisson.cu, display.cu) are compiled once more per dimension, -DDIM=2 or 3, and
// SIMPLE's (simple.cu) with -DDIM=2; the definitions that depend on DIM are compiled only for
// them (the compressible sets do not define it).
//
// Index conventions (as on the CPU): staggered velocity arrays are (nx + 2) x (ny + 2)
// (x (nz + 2)) with one ghost layer, index i + (nx + 2) (j + (ny + 2) k); cell-centred pressure
// arrays are nx x ny (x nz), index (k ny + j) nx + i (0-based), x fastest in both. Kernels take
// three sizes (nx, ny, nz) in either dimension and read nz only in 3D; 2D grids have one block
// layer in z. Reductions are deterministic: every block writes one partial result (block index
// order) and a single-block finalize kernel combines the partials in a fixed order.
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

// a / b rounded to nearest (IEEE 754), for quotients whose numerator is often exactly zero (a
// uniform or quiescent region): the compiled division leaves its fast path for a zero numerator
// and calls a routine of about 60 instructions, which a warp runs if any of its threads needs it.
// For a finite nonzero b the quotient 0 / b is the zero a * b (the sign the product of the signs),
// so that case skips the division and gives the same bits; every other case divides.
__device__ __forceinline__ real div_zero_numerator(real a, real b) {
    if (a == (real)0 && isfinite(b) && b != (real)0) return a * b;
    return a / b;
}

// The slots of the device scalar block `sc` (REAL: SC_*) and of the control block `ctrl` (int:
// CTRL_*) are defined at the top of every compilation unit from src/backend/cuda/slots.rs.

// The first statement of a kernel launched to start early (launch.rs `Launch::starting_early`):
// lets the kernel after it on the stream be launched once every block of this one has begun
// (griddepcontrol.launch_dependents; that kernel's blocks then wait in their own
// AFTER_PREDECESSOR), then waits until the kernel before this one has finished and its writes,
// and so those of every kernel before it, are visible (griddepcontrol.wait). No-ops for an
// ordinary launch; absent before compute capability 9.0 (PTX ISA 7.8).
#if __CUDA_ARCH__ >= 900
#define AFTER_PREDECESSOR() asm volatile("griddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;" ::: "memory")
#else
#define AFTER_PREDECESSOR()
#endif

// Copies the value of type V at `from` (global memory) to `to` (shared memory) without holding it
// in a register (cp.async, compute capability 8.0 on; before it a load and a store). A thread's
// copies since its last `copies_committed` form a group; V is 4, 8 or 16 bytes.
template <typename V>
__device__ __forceinline__ void copy_to_shared(V* to, const V* from) {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"((unsigned)__cvta_generic_to_shared(to)),
                 "l"(from), "n"(sizeof(V)));
#else
    *to = *from;
#endif
}

// Closes this thread's group of `copy_to_shared` copies.
__device__ __forceinline__ void copies_committed() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Waits until every committed group of this thread's copies but the last PENDING has arrived
// (groups arrive in the order they were committed); the thread may then read them.
template <int PENDING>
__device__ __forceinline__ void copies_arrived() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(PENDING) : "memory");
#endif
}

// A kernel given a control block returns at once when the solve it belongs to has converged.
// The flag, like every input, may be written by the kernel before it, so the guard first waits
// for that kernel (AFTER_PREDECESSOR): a kernel that begins with it may start early.
#define GUARD(ctrl)         \
    AFTER_PREDECESSOR();    \
    if ((ctrl) != 0 && (ctrl)[CTRL_DONE] != 0) return;

// Slot of the largest speed of velocity component c.
__device__ __forceinline__ int speed_slot(int c) { return c == 0 ? SC_UMAX : c == 1 ? SC_VMAX : SC_WMAX; }

__device__ __forceinline__ int block_linear() { return (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x; }
__device__ __forceinline__ int block_count() { return gridDim.x * gridDim.y * gridDim.z; }
__device__ __forceinline__ int thread_linear() { return threadIdx.y * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int block_threads() { return blockDim.x * blockDim.y; }

// x folded by `op` over a warp's lanes in a fixed tree (offsets 16, 8, 4, 2, 1); valid in lane 0.
// Every lane of the warp must call it.
template <typename V, typename Op>
__device__ __forceinline__ V warp_shuffle_reduce(V x, Op op) {
    for (int off = 16; off > 0; off >>= 1) x = op(x, __shfl_down_sync(0xffffffffu, x, off));
    return x;
}

struct FoldSum {
    __device__ __forceinline__ real operator()(real a, real b) const { return a + b; }
};
struct FoldMax {
    __device__ __forceinline__ real operator()(real a, real b) const { return fmax(a, b); }
};

// v folded by `op` over the block (fixed order: each warp's tree, then warp 0's over the warps,
// from 0 for lanes past the last warp); valid in thread 0. Every thread of the block must call it.
template <typename Op>
__device__ __forceinline__ real block_fold(real v, Op op) {
    __shared__ real warp_part[32];
    const int t = thread_linear();
    const int lane = t & 31, w = t >> 5;
    v = warp_shuffle_reduce(v, op);
    if (lane == 0) warp_part[w] = v;
    __syncthreads();
    const int nw = (block_threads() + 31) >> 5;
    if (w == 0) v = warp_shuffle_reduce(lane < nw ? warp_part[lane] : (real)0, op);
    __syncthreads();
    return v;
}

// Sum over the block; valid in thread 0.
__device__ __forceinline__ real block_sum(real v) { return block_fold(v, FoldSum()); }

// Maximum over the block (order-independent); valid in thread 0. NaNs are skipped (fmax), as
// the CPU's fold with f64::max does.
__device__ __forceinline__ real block_max(real v) { return block_fold(v, FoldMax()); }

// Loads of one thread in flight in `fold_strided`.
#define FOLD_LOADS 8

// partial[t], partial[t + T], ... (t this thread, T the block's threads) folded by `op` from 0, in
// that order. The loads do not wait for the running value: FOLD_LOADS of them are issued at once,
// so one block reading a whole grid's block partials (a finalize kernel: 131,072 of them at 512^3)
// waits for memory once per FOLD_LOADS values instead of once per value; the fold's order, and so
// its result, is the plain loop's.
template <typename Op>
__device__ __forceinline__ real fold_strided(const real* __restrict__ partial, int n, Op op) {
    const int step = block_threads();
    int k = thread_linear();
    real s = 0;
    for (; k + (FOLD_LOADS - 1) * step < n; k += FOLD_LOADS * step) {
        real v[FOLD_LOADS];
#pragma unroll
        for (int j = 0; j < FOLD_LOADS; ++j) v[j] = partial[k + j * step];
#pragma unroll
        for (int j = 0; j < FOLD_LOADS; ++j) s = op(s, v[j]);
    }
    for (; k < n; k += step) s = op(s, partial[k]);
    return s;
}

// Sum of partial[0..n) by one block (thread t adds t, t + T, ...; then block_sum).
__device__ __forceinline__ real sum_partials(const real* partial, int n) {
    return block_sum(fold_strided(partial, n, FoldSum()));
}

__device__ __forceinline__ real max_partials(const real* partial, int n) {
    return block_max(fold_strided(partial, n, FoldMax()));
}

// Boundary kinds of the velocity conditions (bck[side], side 2 a + s of axis a): BC_* of
// src/backend/cuda/slots.rs. Outflow and opening faces are unknowns of the projection.
__device__ __forceinline__ bool open_kind(int kind) { return kind == BC_OUTFLOW || kind == BC_OPENING; }

// The kinematic pressure an opening face holds (src/solver/incompressible/opening.rs), from its
// normal velocity un (positive along the axis) on side s (0 lower, 1 upper): -un^2 / 2 where the
// fluid enters (total pressure 0), 0 where it leaves.
__device__ __forceinline__ real opening_pressure(real un, int s) {
    const bool enters = s == 0 ? un > (real)0 : un < (real)0;
    return enters ? (real)-0.5 * un * un : (real)0;
}

// Pressure face conditions, packed two bits per side in `pbc` (side 2 a + s of axis a).
#define P_NEUMANN 0
#define P_DIRICHLET 1
#define P_PERIODIC 2
__device__ __forceinline__ int pside(int pbc, int side) { return (pbc >> (2 * side)) & 3; }

#ifdef DIM
#if DIM != 2 && DIM != 3
#error "compile with -DDIM=2 or -DDIM=3"
#endif
// The cell-centred box of the pressure operator (laplacian.rs `Laplacian<T, DIM>`): cells per
// axis, index steps (1, nx, nx ny), 1/h^2 per axis, and the packed face conditions.
struct Cells {
    int n[DIM];
    int st[DIM];
    real ih2[DIM];
    int pbc;
};

// The first DIM of (nx, ny, nz) into n, and the index steps of an array with `ghosts` extra
// values per axis (0: cell-centred, 2: the staggered arrays' ghost layers), x fastest, into st.
__device__ __forceinline__ void box_axes(int nx, int ny, int nz, int ghosts, int n[DIM], int st[DIM]) {
    const int n3[3] = {nx, ny, nz};
    int s = 1;
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        n[a] = n3[a];
        st[a] = s;
        s *= n3[a] + ghosts;
    }
}

__device__ __forceinline__ Cells make_cells(int nx, int ny, int nz, int pbc, real ih2x, real ih2y, real ih2z) {
    const real h3[3] = {ih2x, ih2y, ih2z};
    Cells c;
    box_axes(nx, ny, nz, 0, c.n, c.st);
#pragma unroll
    for (int a = 0; a < DIM; ++a) c.ih2[a] = h3[a];
    c.pbc = pbc;
    return c;
}

__device__ __forceinline__ int cell_count(const Cells& c) {
    int m = 1;
#pragma unroll
    for (int a = 0; a < DIM; ++a) m *= c.n[a];
    return m;
}

// idx of cell (i, j, k) (k read in 3D only); false outside the box.
__device__ __forceinline__ bool cell_at(const Cells& c, int i, int j, int k, int idx[DIM]) {
    const int i3[3] = {i, j, k};
    bool in = true;
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        idx[a] = i3[a];
        in = in && i3[a] < c.n[a];
    }
    return in;
}

// Flat index of idx (x fastest).
__device__ __forceinline__ int cell_index(const Cells& c, const int idx[DIM]) {
    int k = 0;
#pragma unroll
    for (int a = 0; a < DIM; ++a) k += idx[a] * c.st[a];
    return k;
}

// idx of flat cell index k.
__device__ __forceinline__ void cell_of(const Cells& c, int k, int idx[DIM]) {
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        idx[a] = k % c.n[a];
        k /= c.n[a];
    }
}

// Laplacian row of cell idx from its neighbour values nb[2 a] (lower) and nb[2 a + 1] (upper)
// along each axis a as the operator reads them (the periodic image across a periodic side; any
// value across another side, which is not read): L p = s - d * p_idx (laplacian.rs
// `stencil_with`, the same operation order: axes in order, lower face before upper).
__device__ __forceinline__ void stencil_nb(const real nb[2 * DIM], const int idx[DIM], const Cells& c, real* s_out,
                                           real* d_out) {
    bool interior = true;
#pragma unroll
    for (int a = 0; a < DIM; ++a) interior = interior && idx[a] > 0 && idx[a] + 1 < c.n[a];
    if (interior) {
        real s = (nb[0] + nb[1]) * c.ih2[0];
        real d = c.ih2[0];
#pragma unroll
        for (int a = 1; a < DIM; ++a) {
            s = s + (nb[2 * a] + nb[2 * a + 1]) * c.ih2[a];
            d = d + c.ih2[a];
        }
        *s_out = s;
        *d_out = d * (real)2.0;
        return;
    }
    real s = 0, d = 0;
#pragma unroll
    for (int f = 0; f < 2 * DIM; ++f) {
        const int a = f >> 1;
        const real w = c.ih2[a];
        const bool inside = (f & 1) ? idx[a] + 1 < c.n[a] : idx[a] > 0;
        const int bc = pside(c.pbc, f);
        if (inside || bc == P_PERIODIC) {
            s = s + w * nb[f];
            d = d + w;
        } else if (bc == P_DIRICHLET) {
            d = d + w * (real)2.0;
        }
    }
    *s_out = s;
    *d_out = d;
}

// The same row with the neighbours read from p (flat index `here` of cell idx).
__device__ __forceinline__ void stencil(const real* p, const int idx[DIM], int here, const Cells& c, real* s_out,
                                        real* d_out) {
    real nb[2 * DIM];
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        const int st = c.st[a], wrap = (c.n[a] - 1) * st;
        nb[2 * a] = idx[a] > 0 ? p[here - st] : pside(c.pbc, 2 * a) == P_PERIODIC ? p[here + wrap] : (real)0;
        nb[2 * a + 1] =
            idx[a] + 1 < c.n[a] ? p[here + st] : pside(c.pbc, 2 * a + 1) == P_PERIODIC ? p[here - wrap] : (real)0;
    }
    stencil_nb(nb, idx, c, s_out, d_out);
}

// Blocks of the Poisson stencil kernels (jacobi_sweep, rb_sweep, residual, apply_dot) and of the
// projection's face and cell kernels: TBX x TBY threads cover TBX x TILE_H cells of one x-y
// plane (blockIdx.z: the plane in 3D), TROWS rows per thread (the launch sites use the same
// shape).
#define TBX 32
#define TBY 8
#define TROWS 4
#define TILE_H (TBY * TROWS)
#define TILE_THREADS (TBX * TBY)

// Cell of row q of this thread in the stencil kernels' tiles (common.cuh TBX x TBY threads, TROWS
// rows each, TBY apart; blockIdx.z the x-y plane in 3D); false outside the box.
__device__ __forceinline__ bool tile_cell(const Cells& c, int q, int idx[DIM]) {
    return cell_at(c, blockIdx.x * TBX + threadIdx.x, blockIdx.y * TILE_H + threadIdx.y + q * TBY, blockIdx.z, idx);
}

// tile_cell of a launch over the planes z0, z0 + 1, ... of the box (blockIdx.z + z0 the plane),
// and the block's index in the launch over every plane (its partial sum's slot).
__device__ __forceinline__ bool tile_cell_from(const Cells& c, int z0, int q, int idx[DIM]) {
    return cell_at(c, blockIdx.x * TBX + threadIdx.x, blockIdx.y * TILE_H + threadIdx.y + q * TBY, blockIdx.z + z0,
                   idx);
}
__device__ __forceinline__ int block_linear_from(int z0) { return block_linear() + z0 * gridDim.x * gridDim.y; }

// Whether every face of this block's tile lies in lo..=hi along every axis.
__device__ __forceinline__ bool tile_within(const int lo[DIM], const int hi[DIM]) {
    const int first[3] = {(int)(blockIdx.x * TBX), (int)(blockIdx.y * TILE_H), (int)blockIdx.z};
    const int last[3] = {first[0] + TBX - 1, first[1] + TILE_H - 1, first[2]};
    bool in = true;
#pragma unroll
    for (int a = 0; a < DIM; ++a) in = in && first[a] >= lo[a] && last[a] <= hi[a];
    return in;
}

#endif

// Index of the periodic image of k in 0..n.
__device__ __forceinline__ int wrap_index(int k, int n) {
    if (k >= 0 && k < n) return k;
    k %= n;
    return k < 0 ? k + n : k;
}

#if defined(DIM) && DIM == 2
// tile[ty][tx] = x at (i0 + tx - H, j0 + ty - H) for the TBX x TILE_H cells from (i0, j0) and a
// halo of H cells: the periodic image across periodic sides, 0 outside the grid elsewhere.
// Every thread of the block must call it; a __syncthreads() must follow before the tile is read.
// (2D: the fused red-black sweep.)
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
__device__ __forceinline__ void stencil_tile(const real (*tile)[TBX + 2 * H], int tx, int ty, int i, int j,
                                             const Cells& c, real* s_out, real* d_out) {
    const real nb[4] = {tile[ty][tx - 1], tile[ty][tx + 1], tile[ty - 1][tx], tile[ty + 1][tx]};
    const int idx[2] = {i, j};
    stencil_nb(nb, idx, c, s_out, d_out);
}
#endif

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
// compressible family allows only the symmetric TVD limiters 0-5): b psi(a / b) written without
// the ratio, on the magnitudes |a|, |b| with b's sign where the limiter is a min or max of them.
__device__ __forceinline__ real limited_slope(int lim, real a, real b) {
    const real zero = 0, two = 2;
    if (a * b <= zero) return zero;
    const real ma = fabs(a), mb = fabs(b);
    real m;
    switch (lim) {
        case LIM_MINMOD: m = fmin(ma, mb); break;
        case LIM_SUPERBEE: m = fmax(fmin(two * ma, mb), fmin(ma, two * mb)); break;
        case LIM_VAN_LEER: return two * a * b / (a + b);
        case LIM_MC: m = fmin(fmin(two * ma, (ma + mb) * (real)0.5), two * mb); break;
        case LIM_VAN_ALBADA: return a * b * (a + b) / (a * a + b * b);
        default: return b * psi(lim, a / b);
    }
    return b > zero ? m : -m;
}

// The reordering of the fast cosine transform (Makhoul 1980; kernels/transform.cuh `dct_divide`):
// element s of an axis of n cells goes to position s / 2 if s is even, n - 1 - s / 2 if odd.
__device__ __forceinline__ int makhoul_position(int s, int n) { return (s & 1) ? n - 1 - (s >> 1) : s >> 1; }

#ifdef DIM
// The transform solve's packing code `pack`: bit a (a < 3) a Dirichlet axis a, whose odd cells
// change sign on the way into and out of the transforms (the DCT-II of that axis becomes the
// DST-II); bit 3 + a an axis in natural order: a periodic axis, transformed by the plain DFT, or
// FACR's y axis, solved by lines (facr.cuh).
#define PACK_NATURAL(pack, a) (((pack) >> (3 + (a))) & 1)

// Flat index of cell idx in the transform solve's reordering (`makhoul_position` along every
// cosine axis, the natural order along periodic ones), and in *neg whether its value changes
// sign (an odd number of odd indices along Dirichlet axes).
__device__ __forceinline__ int packed_index(const Cells& c, const int idx[DIM], int pack, bool* neg) {
    int k = 0;
    bool odd = false;
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        k += (PACK_NATURAL(pack, a) ? idx[a] : makhoul_position(idx[a], c.n[a])) * c.st[a];
        odd = odd != (((pack >> a) & 1) && (idx[a] & 1));
    }
    *neg = odd;
    return k;
}
#endif
