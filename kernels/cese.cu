// The CE/SE scheme on the device, kernel for kernel the CPU's (src/solver/compressible/cese.rs):
// per step cese_corners (centres -> corners, one thread per corner, the ghost cells derived where
// they are read), cese_centres (corners -> centres, one thread per interior cell, the step
// reduction fused in), euler_reduce_finalize (which also chooses the next step's dt). Storage
// and operation order: see euler.cuh. Each half-step's block first computes the terms of its old
// points that do not depend on the new point (store_terms) once, into a tile in shared memory,
// where the 2^dim new points around each old point read them. The tiling depends on the
// precision (CESE_OVERLAP).
//
// A solution point carries u, u_x and (2D) u_y, P = 4 (1 + dim) values. Centre gradients live
// in qx, qy (padded layout like q; qy only in 2D). Corner (ci, cj), 0 <= ci <= nx,
// 0 <= cj <= ny (cj = 0 in 1D), is number m = cj (nx + 1) + ci of nc; its value p (0: u, 1: u_x,
// 2: u_y) is entry m of the packed array of nc states from corners + 4 p nc (store_q4v,
// euler.cuh).
#include "common.cuh"
#include "euler.cuh"

// The threads of a CE/SE block (slots.rs CESE_THREADS_F32, _F64; launches.rs `StepBlock`) and the
// blocks a multiprocessor the kernels are compiled for, so their register budget is
// 65536 / (CESE_THREADS CESE_MIN_BLOCKS) a thread: 64 in float (4 blocks of 256), 96 in double
// (5 blocks of 128). Before their tiles the kernels left free took 118 and 198 registers and ran
// 21 % (float) and 37 % (double) slower on an H200 (3 blocks of 256 in double spilled 1.2 kB and
// ran 1.6x slower). The tiled kernels take 64 registers in float without spills (72 if let, with
// 3 blocks a multiprocessor instead of 4), and 96 in double with 12-40 bytes of spills (122-128
// if let, with 4 blocks; BENCHMARKS.md, issue 23).
#define CESE_THREADS (sizeof(real) == 4 ? CESE_THREADS_F32 : CESE_THREADS_F64)
#define CESE_MIN_BLOCKS (sizeof(real) == 4 ? 4 : 5)

struct point {
    q4 u, x, y;
};

// Flux Jacobian A(U) v along x, conserved variables, from the one reciprocal 1 / rho.
__device__ __forceinline__ q4 jac_x(real g, q4 q, q4 v) {
    const real inv_rho = (real)1 / q.c[0];
    const real u = q.c[1] * inv_rho, w = q.c[2] * inv_rho;
    const real gm = g - (real)1;
    const real k = (real)0.5 * gm * (u * u + w * w);
    const real h = g * q.c[3] * inv_rho - k;
    return make_q4(v.c[1], (k - u * u) * v.c[0] + ((real)3 - g) * u * v.c[1] - gm * w * v.c[2] + gm * v.c[3],
                   -u * w * v.c[0] + w * v.c[1] + u * v.c[2],
                   u * (k - h) * v.c[0] + (h - gm * u * u) * v.c[1] - gm * u * w * v.c[2] + g * u * v.c[3]);
}

// Flux Jacobian along axis d applied to v.
__device__ __forceinline__ q4 jac(real g, int d, q4 q, q4 v) { return to_local(d, jac_x(g, to_local(d, q), to_local(d, v))); }

// x^alpha in the weights from the square r2 = x^2 (cese.rs `weight_power`): the exact value for
// alpha 0, 1 (sqrt) and 2 (r2 itself), pow(r2, alpha / 2) otherwise.
__device__ __forceinline__ real weight_power(real r2, real alpha) {
    if (alpha == (real)0) return (real)1;
    if (alpha == (real)1) return sqrt(r2);
    if (alpha == (real)2) return r2;
    return libm_pow_real(r2, alpha * (real)0.5);
}

// The least positive normal number of real: its reciprocal is finite.
#define REAL_MIN_NORMAL ((real)(sizeof(real) == 4 ? 1.17549435082228750797e-38 : 2.22507385850720138309e-308))

// The alpha-weighted average of M candidate gradients cand[i] = (x, y) of one variable
// (cese.rs `weighted`): W = sum_i w_i grad_i / sum_i w_i, w_i = prod_{l != i} r_l^(alpha / 2),
// r_l = |grad_l|^2 / max |grad|^2, the plain average where the largest squared norm is not a
// normal number or the weights vanish. The ratios are products with the reciprocal of the largest
// squared norm (finite, as it is normal); the weighted sums are divided by their weight, which
// may be subnormal. Each power is computed once and reused in the products (the same factors,
// multiplied in the same order as the CPU).
template <int M>
__device__ __forceinline__ void weighted(real alpha, const real (*cand)[2], real* gx, real* gy) {
    real sq[M];
    real smax = 0;
#pragma unroll
    for (int i = 0; i < M; i++) {
        sq[i] = cand[i][0] * cand[i][0] + cand[i][1] * cand[i][1];
        smax = fmax(smax, sq[i]);
    }
    real wsum = 0, acc0 = 0, acc1 = 0;
    if (smax >= REAL_MIN_NORMAL) {
        const real inv_smax = (real)1 / smax;
        real pw[M];
#pragma unroll
        for (int l = 0; l < M; l++) pw[l] = weight_power(sq[l] * inv_smax, alpha);
#pragma unroll
        for (int i = 0; i < M; i++) {
            real w = 1;
#pragma unroll
            for (int l = 0; l < M; l++)
                if (l != i) w = w * pw[l];
            wsum = wsum + w;
            acc0 = acc0 + w * cand[i][0];
            acc1 = acc1 + w * cand[i][1];
        }
    }
    if (wsum > (real)0) {
        *gx = div_zero_numerator(acc0, wsum);
        *gy = div_zero_numerator(acc1, wsum);
    } else {
        const real inv = (real)1 / (real)M;
        real s0 = 0, s1 = 0;
#pragma unroll
        for (int i = 0; i < M; i++) {
            s0 = s0 + cand[i][0];
            s1 = s1 + cand[i][1];
        }
        *gx = s0 * inv;
        *gy = s1 * inv;
    }
}

// The share of an old solution point in the conservation sum of `march` that does not depend on
// which side of the new point it lies, computed once per old point and shared by the 2^DIM new
// points around it (cese.rs `Terms`): with u_t = -(A u_x + B u_y) (A, B the flux Jacobians, F, G
// the fluxes), rx = dt/h_x, ry = dt/h_y, moved = u + dt/2 u_t, x = h_x/4 u_x + rx (F + dt/4 A u_t),
// y = h_y/4 u_y + ry (G + dt/4 B u_t), z = rx h_y/4 A u_y + ry h_x/4 B u_x (1D: u, moved and x,
// with u_t = -A u_x). The share in the sum at offset signs (s_x, s_y) is then
// u - s_x x - s_y y + (s_x s_y) z: the CPU's expression, whose factors +-1 multiply exactly, so it
// rounds as the CPU's does.
enum { T_U, T_MOVED, T_X, T_Y, T_Z };
// The host sizes the tiles by these counts (launches.rs).
static_assert(T_X + 1 == CESE_TERMS_1D && T_Z + 1 == CESE_TERMS_2D, "CE/SE terms: slots.rs CESE_TERMS_*");

// The terms of old point o into tile slot t (term e, component k at tile[(4 e + k) tn + t]).
template <int DIM>
__device__ __forceinline__ void store_terms(real* tile, int tn, int t, real g, real dt, real hx, real hy, point o) {
    const real quarter = (real)0.25, half = (real)0.5;
    const real rx = dt / hx, ry = dt / hy;
    const q4 u = o.u, ux = o.x, uy = o.y;
    const q4 w = primitive(g, u);
    const q4 f = euler_flux(g, w);
    const q4 ax = jac(g, 0, u, ux);
    q4 ut, moved, x;
    if constexpr (DIM == 2) {
        const q4 gg = to_local(1, euler_flux(g, to_local(1, w)));
        const q4 by = jac(g, 1, u, uy);
#pragma unroll
        for (int k = 0; k < 4; k++) ut.c[k] = -(ax.c[k] + by.c[k]);
        const q4 gt = jac(g, 1, u, ut);
        const q4 fy = jac(g, 0, u, uy), gx = jac(g, 1, u, ux);
        q4 y, z;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            y.c[k] = quarter * hy * uy.c[k] + ry * (gg.c[k] + quarter * dt * gt.c[k]);
            z.c[k] = rx * (quarter * hy * fy.c[k]) + ry * (quarter * hx * gx.c[k]);
        }
        store_q4(tile + 4 * T_Y * tn, tn, t, y);
        store_q4(tile + 4 * T_Z * tn, tn, t, z);
    } else {
#pragma unroll
        for (int k = 0; k < 4; k++) ut.c[k] = -ax.c[k];
    }
    const q4 ft = jac(g, 0, u, ut);
#pragma unroll
    for (int k = 0; k < 4; k++) {
        moved.c[k] = u.c[k] + half * dt * ut.c[k];
        x.c[k] = quarter * hx * ux.c[k] + rx * (f.c[k] + quarter * dt * ft.c[k]);
    }
    store_q4(tile + 4 * T_U * tn, tn, t, u);
    store_q4(tile + 4 * T_MOVED * tn, tn, t, moved);
    store_q4(tile + 4 * T_X * tn, tn, t, x);
}

// The tiling, CESE_OVERLAP_F32 or _F64 of slots.rs. Overlapping (1): each thread computes one old
// point's terms, and a block of bx x by threads the (bx - 1) x (by - 1) new points between them
// (bx - 1 in 1D), neighbouring blocks' old points overlapping by one. Not (0): each thread
// computes one new point, and the block's threads fill its tile of (bx + 1) x (by + 1) old points
// (bx + 1 in 1D) in two rounds. Measured on an H200 (BENCHMARKS.md, issue 23), overlapping 32 x 8
// blocks ran 1-14 % faster in float (64 registers a thread, 4 blocks a multiprocessor) and
// overlapping blocks 10-18 % slower in double (2 blocks of 32 x 8 or 4 of 32 x 4 or 16 x 8).
#define CESE_OVERLAP (sizeof(real) == 4 ? CESE_OVERLAP_F32 : CESE_OVERLAP_F64)

// The threads of a block along x: 32 in 2D (CESE_THREADS / 32 rows), CESE_THREADS in 1D
// (launches.rs `StepBlock`). The shape is a compile-time constant, so the tiles' indices divide by
// constants and their shared-memory offsets fold into the loads.
template <int DIM>
__device__ constexpr int block_width() {
    return DIM == 2 ? 32 : CESE_THREADS;
}

// The new points of a block along axis 0 (x) and 1 (y).
template <int DIM>
__device__ constexpr int points_per_block(int axis) {
    return axis == 0 ? block_width<DIM>() - CESE_OVERLAP : DIM == 2 ? CESE_THREADS / 32 - CESE_OVERLAP : 1;
}

// The block's tile of old points' terms, tw x th, x fastest: slot t is old point
// (x0 + t % tw, y0 + t / tw), which load(x, y, o) reads into o, or returns false where there is
// none; then waits for the block. One point a thread where the blocks overlap, else in rounds.
template <int DIM, typename Load>
__device__ __forceinline__ void fill_tile(real* tile, int tw, int th, int x0, int y0, real g, real dt, real hx,
                                          real hy, Load load) {
    const int tn = tw * th;
    const auto fill = [&](int t) {
        point o;
        if (load(x0 + t % tw, y0 + t / tw, o)) store_terms<DIM>(tile, tn, t, g, dt, hx, hy, o);
    };
    const int me = threadIdx.y * block_width<DIM>() + threadIdx.x;
    if (CESE_OVERLAP) {
        fill(me);
    } else {
        for (int t = me; t < tn; t += CESE_THREADS) fill(t);
    }
    __syncthreads();
}

// This thread's new point (x0 + threadIdx.x, y0 + threadIdx.y) of the block whose first is
// (x0, y0), if the thread computes one, and the block's tile width and height (1 in 1D).
template <int DIM>
struct block_points {
    static constexpr int tw = points_per_block<DIM>(0) + 1, th = DIM == 2 ? points_per_block<DIM>(1) + 1 : 1;
    int x0, y0;
    __device__ __forceinline__ block_points()
        : x0(blockIdx.x * points_per_block<DIM>(0)), y0(DIM == 2 ? blockIdx.y * points_per_block<DIM>(1) : 0) {}
    __device__ __forceinline__ bool marches() const {
        return (int)threadIdx.x < points_per_block<DIM>(0) && (int)threadIdx.y < points_per_block<DIM>(1);
    }
};

// The new solution point of this thread from its 2^DIM old neighbours' terms in the tile, old
// point a + 2 b at offset signs (2a - 1, 2b - 1) in tile slot (threadIdx.x + a, threadIdx.y + b)
// (cese.rs `march`: the conservation sum over the box, then the gradients), one variable at a
// time so that few values are live (each variable's operations are the CPU's, in its order).
// DIM is a compile-time constant, so the arrays stay in registers.
template <int DIM>
__device__ __forceinline__ point march(real alpha, real hx, real hy, const real* tile, int tw, int tn) {
    const int n = 1 << DIM;
    const real one = (real)1, two = (real)2;
    const real inv_hx = one / hx, inv_hy = one / hy;
    int t[n];
#pragma unroll
    for (int m = 0; m < n; m++) t[m] = (threadIdx.y + (m >> 1)) * tw + threadIdx.x + (m & 1);
    point p;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const auto term = [&](int e, int m) { return tile[(4 * e + k) * tn + t[m]]; };
        real sum = 0;
        real v[n];
#pragma unroll
        for (int m = 0; m < n; m++) {
            const real sx = (m & 1) ? one : -one;
            real c;
            if constexpr (DIM == 2) {
                const real sy = (m & 2) ? one : -one;
                c = term(T_U, m) - sx * term(T_X, m) - sy * term(T_Y, m) + (sx * sy) * term(T_Z, m);
            } else {
                c = term(T_U, m) - sx * term(T_X, m);
            }
            sum = sum + c;
            v[m] = term(T_MOVED, m);
        }
        const real up = sum * (one / (real)n);
        p.u.c[k] = up;
        real cand[n][2];
        if constexpr (DIM == 1) {
#pragma unroll
            for (int m = 0; m < 2; m++) {
                const real s = m == 0 ? -one : one;
                cand[m][0] = s * (v[m] - up) * two * inv_hx;
                cand[m][1] = 0;
            }
        } else {
            const real mid = two * up;
            // Pairs along x at s_y = -1, +1; pairs along y at s_x = -1, +1.
            cand[0][0] = (v[1] - v[0]) * inv_hx;
            cand[0][1] = -(v[1] + v[0] - mid) * inv_hy;
            cand[1][0] = (v[3] - v[2]) * inv_hx;
            cand[1][1] = (v[3] + v[2] - mid) * inv_hy;
            cand[2][1] = (v[2] - v[0]) * inv_hy;
            cand[2][0] = -(v[2] + v[0] - mid) * inv_hx;
            cand[3][1] = (v[3] - v[1]) * inv_hy;
            cand[3][0] = (v[3] + v[1] - mid) * inv_hx;
        }
        weighted<n>(alpha, cand, &p.x.c[k], &p.y.c[k]);
    }
    return p;
}

// The CE/SE kernels' blocks: in float 32 x 8 threads in 2D, over 31 x 7 new points (their tile
// of 32 x 8 old points' terms of 20 reals is 20 kB), 256 in 1D over 255; in double 32 x 4 over
// 32 x 4 (a tile of 33 x 5 points, 26 kB), 128 in 1D over 128. The host launches both half-steps
// and euler_reduce with them (launches.rs `StepBlock`).
// First half-step: the corner points from the centre points around them (ghosts derived), one
// thread per corner (2D grid over (nx + 1) x (ny + 1), or nx + 1 in 1D); corner (ci, cj) is
// between centre cells ci - 1, ci and cj - 1, cj, so the tile of the block of first corner
// (x0, y0) holds the terms of cells (x0 - 1 .., y0 - 1 ..) (dynamic shared memory: 5 terms of 4
// reals a point in 2D, 3 in 1D).
template <int DIM>
__device__ __forceinline__ void corners_of_block(const real* __restrict__ q, const real* __restrict__ qx,
                                                 const real* __restrict__ qy, real* __restrict__ corners,
                                                 long long len, int stride, int g0, int g1, int nx, int ny, real g,
                                                 real alpha, real dt, real hx, real hy, real* tile,
                                                 const real* __restrict__ inflow, int bcs) {
    const block_points<DIM> b;
    const int x0 = b.x0, y0 = b.y0;
    fill_tile<DIM>(tile, b.tw, b.th, x0 - 1, y0 - 1, g, dt, hx, hy, [&](int i, int j, point& o) {
        if (DIM == 1) j = 0;
        if (i < -g0 || i >= nx + g0 || j < -g1 || j >= ny + g1) return false;
        // A ghost cell is derived from the interior here in boundary.rs `fill`'s order: y sides
        // first, then x sides (over the ghost rows too), each side by ghost_source, ghost_state
        // and ghost_gradient.
        const bool ghost_x = i < 0 || i >= nx, ghost_y = DIM == 2 && (j < 0 || j >= ny);
        const int side_x = i < 0 ? 0 : 1, side_y = j < 0 ? 2 : 3;
        const int kind_x = (bcs >> (2 * side_x)) & 3, kind_y = (bcs >> (2 * side_y)) & 3;
        const int si = ghost_x ? ghost_source(i, nx, kind_x) : i, sj = ghost_y ? ghost_source(j, ny, kind_y) : j;
        const long long k = (long long)(sj + g1) * stride + si + g0;
        o.u = load_q4(q, len, k);
        o.x = load_q4(qx, len, k);
        o.y = DIM == 2 ? load_q4(qy, len, k) : make_q4(0, 0, 0, 0);
        if (ghost_y) {
            o.u = ghost_state(side_y, kind_y, o.u, inflow);
            o.x = ghost_gradient(1, 0, kind_y, o.x);
            o.y = ghost_gradient(1, 1, kind_y, o.y);
        }
        if (ghost_x) {
            o.u = ghost_state(side_x, kind_x, o.u, inflow);
            o.x = ghost_gradient(0, 0, kind_x, o.x);
            o.y = DIM == 2 ? ghost_gradient(0, 1, kind_x, o.y) : o.y;
        }
        return true;
    });
    const int ci = x0 + threadIdx.x, cj = y0 + threadIdx.y;
    const int cy = DIM == 2 ? ny + 1 : 1;
    if (!b.marches() || ci > nx || cj >= cy) return;
    const point p = march<DIM>(alpha, hx, hy, tile, b.tw, b.tw * b.th);
    const long long nc = (long long)(nx + 1) * cy, m = (long long)cj * (nx + 1) + ci;
    store_q4v(corners, nc, m, p.u);
    store_q4v(corners + 4 * nc, nc, m, p.x);
    if (DIM == 2) store_q4v(corners + 8 * nc, nc, m, p.y);
}

// Second half-step's points of the block (as corners_of_block: cell (i, j) is between corners i,
// i + 1 and j, j + 1, so the tile holds the terms of corners (x0 .., y0 ..)); returns whether this
// thread computes an interior cell, (i, j), and its new conserved state in u.
template <int DIM>
__device__ __forceinline__ bool centres_of_block(real* __restrict__ q, real* __restrict__ qx, real* __restrict__ qy,
                                                 const real* __restrict__ corners, long long len, int stride, int g0,
                                                 int g1, int nx, int ny, real g, real alpha, real dt, real hx, real hy,
                                                 real* tile, int* i, int* j, q4* u) {
    const block_points<DIM> b;
    const int x0 = b.x0, y0 = b.y0;
    const int cy = DIM == 2 ? ny + 1 : 1;
    const long long nc = (long long)(nx + 1) * cy;
    fill_tile<DIM>(tile, b.tw, b.th, x0, y0, g, dt, hx, hy, [&](int ci, int cj, point& o) {
        if (ci > nx || cj >= cy) return false;
        const long long c = (long long)cj * (nx + 1) + ci;
        o.u = load_q4v(corners, nc, c);
        o.x = load_q4v(corners + 4 * nc, nc, c);
        o.y = DIM == 2 ? load_q4v(corners + 8 * nc, nc, c) : make_q4(0, 0, 0, 0);
        return true;
    });
    *i = x0 + threadIdx.x;
    *j = y0 + threadIdx.y;
    if (!b.marches() || *i >= nx || *j >= ny) return false;
    const point p = march<DIM>(alpha, hx, hy, tile, b.tw, b.tw * b.th);
    const long long k = (long long)(*j + g1) * stride + *i + g0;
    store_q4(q, len, k, p.u);
    store_q4(qx, len, k, p.x);
    if (DIM == 2) store_q4(qy, len, k, p.y);
    *u = p.u;
    return true;
}

extern "C" __global__ void __launch_bounds__(CESE_THREADS, CESE_MIN_BLOCKS) cese_corners(const real* __restrict__ q, const real* __restrict__ qx,
                                        const real* __restrict__ qy, real* __restrict__ corners, long long len,
                                        int stride, int g0, int g1, int nx, int ny, int dim, real g, real alpha,
                                        const double* __restrict__ clock, real hx, real hy,
                                        const real* __restrict__ inflow, int bcs) {
    AFTER_PREDECESSOR();
    extern __shared__ unsigned char tile_bytes[];
    real* tile = (real*)tile_bytes;
    const real dt = (real)clock[EK_NEXT_DT];
    if (dim == 2) {
        corners_of_block<2>(q, qx, qy, corners, len, stride, g0, g1, nx, ny, g, alpha, dt, hx, hy, tile, inflow, bcs);
    } else {
        corners_of_block<1>(q, qx, qy, corners, len, stride, g0, g1, nx, ny, g, alpha, dt, hx, hy, tile, inflow, bcs);
    }
}

// Second half-step: the interior centre points from their corners, one thread per cell (2D grid
// over nx x ny), written to q, qx and (2D) qy, with the step reduction of the new state fused in
// (write_partials of cell_stats; inv_dx, inv_dy as euler_reduce). Nothing once the step is
// halted.
extern "C" __global__ void __launch_bounds__(CESE_THREADS, CESE_MIN_BLOCKS) cese_centres(real* __restrict__ q, real* __restrict__ qx, real* __restrict__ qy,
                                        const real* __restrict__ corners, long long len, int stride, int g0, int g1,
                                        int nx, int ny, int dim, real g, real alpha, const double* __restrict__ clock,
                                        real hx, real hy, real inv_dx, real inv_dy, real* __restrict__ part,
                                        int* __restrict__ bad) {
    AFTER_PREDECESSOR();
    const real dt = (real)clock[EK_NEXT_DT];
    HALTED(clock);
    extern __shared__ unsigned char tile_bytes[];
    real* tile = (real*)tile_bytes;
    q4 u;
    int i, j;
    const bool interior =
        dim == 2
            ? centres_of_block<2>(q, qx, qy, corners, len, stride, g0, g1, nx, ny, g, alpha, dt, hx, hy, tile, &i, &j, &u)
            : centres_of_block<1>(q, qx, qy, corners, len, stride, g0, g1, nx, ny, g, alpha, dt, hx, hy, tile, &i, &j, &u);
    write_partials(interior ? cell_stats(g, dim, inv_dx, inv_dy, u, i, j, nx) : no_stats(), part, bad);
}
