// The CE/SE scheme on the device, kernel for kernel the CPU's (src/solver/compressible/cese.rs):
// per step euler_step_dt, euler_ghosts (values and gradients, y then x), cese_corners (centres ->
// corners, one thread per corner), cese_centres (corners -> centres, one thread per interior
// cell, the step reduction fused in), euler_reduce_finalize. Storage and operation order: see
// euler.cuh. Each half-step's block first computes the terms of its old points that do not depend
// on the new point (store_terms) once, into a tile in shared memory, where the 2^dim new points
// around each old point read them. The tiling depends on the precision (CESE_OVERLAP).
//
// A solution point carries u, u_x and (2D) u_y, P = 4 (1 + dim) values. Centre gradients live
// in qx, qy (padded layout like q; qy only in 2D). Corner (ci, cj), 0 <= ci <= nx,
// 0 <= cj <= ny (cj = 0 in 1D), is number m = cj (nx + 1) + ci of nc; its value p (0: u, 1: u_x,
// 2: u_y), component c at corners[(4 p + c) nc + m].
#include "common.cuh"
#include "euler.cuh"

// Blocks of 256 threads per multiprocessor the CE/SE kernels are compiled for, so their register
// budget is 65536 / (256 CESE_MIN_BLOCKS) a thread: 85 in float, 128 in double. Chosen on the
// kernels before their tiles, which left free took 118 and 198 registers and ran 21 % (float) and
// 37 % (double) slower on an H200 (3 blocks in double spilled 1.2 kB and ran 1.6x slower); the
// tiled kernels take 64 registers in float (4 blocks a multiprocessor) and 122-126 in double,
// without spills (BENCHMARKS.md, issue 23).
#define CESE_MIN_BLOCKS (sizeof(real) == 4 ? 3 : 2)

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

// x^alpha in the weights (cese.rs `weight_power`): the exact product for alpha 0, 1 and 2, pow
// otherwise.
__device__ __forceinline__ real weight_power(real x, real alpha) {
    if (alpha == (real)0) return (real)1;
    if (alpha == (real)1) return x;
    if (alpha == (real)2) return x * x;
    return libm_pow_real(x, alpha);
}

// The alpha-weighted average of M candidate gradients cand[i] = (x, y), per variable:
// W = sum_i w_i grad_i / sum_i w_i, w_i = prod_{l != i} (|grad_l| / max |grad|)^alpha, the plain
// average where all candidates vanish. The ratios to the largest norm are products with its
// reciprocal (at most 1 / sqrt(the least subnormal), finite); the weighted sums are divided by
// their weight, which may be subnormal. Each power is computed once and reused in the products
// (the same factors, multiplied in the same order as the CPU).
template <int M>
__device__ __forceinline__ void weighted(real alpha, const q4 (*cand)[2], q4* gx, q4* gy) {
#pragma unroll
    for (int k = 0; k < 4; k++) {
        real theta[M];
        real tmax = 0;
#pragma unroll
        for (int i = 0; i < M; i++) {
            theta[i] = sqrt(cand[i][0].c[k] * cand[i][0].c[k] + cand[i][1].c[k] * cand[i][1].c[k]);
            tmax = fmax(tmax, theta[i]);
        }
        real wsum = 0, acc0 = 0, acc1 = 0;
        if (tmax > (real)0) {
            const real inv_tmax = (real)1 / tmax;
            real pw[M];
#pragma unroll
            for (int l = 0; l < M; l++) pw[l] = weight_power(theta[l] * inv_tmax, alpha);
#pragma unroll
            for (int i = 0; i < M; i++) {
                real w = 1;
#pragma unroll
                for (int l = 0; l < M; l++)
                    if (l != i) w = w * pw[l];
                wsum = wsum + w;
                acc0 = acc0 + w * cand[i][0].c[k];
                acc1 = acc1 + w * cand[i][1].c[k];
            }
        }
        if (wsum > (real)0) {
            gx->c[k] = acc0 / wsum;
            gy->c[k] = acc1 / wsum;
        } else {
            const real inv = (real)1 / (real)M;
            real s0 = 0, s1 = 0;
#pragma unroll
            for (int i = 0; i < M; i++) {
                s0 = s0 + cand[i][0].c[k];
                s1 = s1 + cand[i][1].c[k];
            }
            gx->c[k] = s0 * inv;
            gy->c[k] = s1 * inv;
        }
    }
}

// The share of an old solution point in the conservation sum of `march` that does not depend on
// which side of the new point it lies, computed once per old point and shared by the 2^DIM new
// points around it (cese.rs `march`, per old point): with u_t = -(A u_x + B u_y) (A, B the flux
// Jacobians, F, G the fluxes), moved = u + dt/2 u_t, ax = h_x/4 u_x, ay = h_y/4 u_y,
// p = F + dt/4 A u_t, b = h_y/4 A u_y, q = G + dt/4 B u_t, c = h_x/4 B u_x (1D: u, ax, p and
// moved, with u_t = -A u_x). The share in the sum at offset signs (s_x, s_y) is then
// u - s_x ax - s_y ay - s_x (dt/h_x) (p - s_y b) - s_y (dt/h_y) (q - s_x c): the CPU's expression,
// whose factors s = +-1 multiply exactly, so it rounds as the CPU's does.
enum { T_U, T_MOVED, T_AX, T_P, T_AY, T_B, T_Q, T_C };
// The host sizes the tiles by these counts (launches.rs).
static_assert(T_P + 1 == CESE_TERMS_1D && T_C + 1 == CESE_TERMS_2D, "CE/SE terms: slots.rs CESE_TERMS_*");

// The terms of old point o into tile slot t (term e, component k at tile[(4 e + k) tn + t]).
template <int DIM>
__device__ __forceinline__ void store_terms(real* tile, int tn, int t, real g, real dt, real hx, real hy, point o) {
    const real quarter = (real)0.25, half = (real)0.5;
    const q4 u = o.u, ux = o.x, uy = o.y;
    const q4 w = primitive(g, u);
    const q4 f = euler_flux(g, w);
    const q4 ax = jac(g, 0, u, ux);
    q4 ut, moved, hux, p;
    if constexpr (DIM == 2) {
        const q4 gg = to_local(1, euler_flux(g, to_local(1, w)));
        const q4 by = jac(g, 1, u, uy);
#pragma unroll
        for (int k = 0; k < 4; k++) ut.c[k] = -(ax.c[k] + by.c[k]);
        const q4 ft = jac(g, 0, u, ut), gt = jac(g, 1, u, ut);
        const q4 fy = jac(g, 0, u, uy), gx = jac(g, 1, u, ux);
        q4 huy, b, qq, c;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            huy.c[k] = quarter * hy * uy.c[k];
            b.c[k] = quarter * hy * fy.c[k];
            qq.c[k] = gg.c[k] + quarter * dt * gt.c[k];
            c.c[k] = quarter * hx * gx.c[k];
        }
        store_q4(tile + 4 * T_AY * tn, tn, t, huy);
        store_q4(tile + 4 * T_B * tn, tn, t, b);
        store_q4(tile + 4 * T_Q * tn, tn, t, qq);
        store_q4(tile + 4 * T_C * tn, tn, t, c);
    } else {
#pragma unroll
        for (int k = 0; k < 4; k++) ut.c[k] = -ax.c[k];
    }
    const q4 ft = jac(g, 0, u, ut);
#pragma unroll
    for (int k = 0; k < 4; k++) {
        moved.c[k] = u.c[k] + half * dt * ut.c[k];
        hux.c[k] = quarter * hx * ux.c[k];
        p.c[k] = f.c[k] + quarter * dt * ft.c[k];
    }
    store_q4(tile + 4 * T_U * tn, tn, t, u);
    store_q4(tile + 4 * T_MOVED * tn, tn, t, moved);
    store_q4(tile + 4 * T_AX * tn, tn, t, hux);
    store_q4(tile + 4 * T_P * tn, tn, t, p);
}

// The tiling, CESE_OVERLAP_F32 or _F64 of slots.rs. Overlapping (1): each thread computes one old
// point's terms, and a block of bx x by threads the (bx - 1) x (by - 1) new points between them
// (bx - 1 in 1D), neighbouring blocks' old points overlapping by one. Not (0): each thread
// computes one new point, and the block's threads fill its tile of (bx + 1) x (by + 1) old points
// (bx + 1 in 1D) in two rounds. Measured on an H200 (BENCHMARKS.md, issue 23), overlapping 32 x 8
// blocks ran 1-14 % faster in float (64 registers a thread, 4 blocks a multiprocessor) and
// overlapping blocks 10-18 % slower in double (2 blocks of 32 x 8 or 4 of 32 x 4 or 16 x 8).
#define CESE_OVERLAP (sizeof(real) == 4 ? CESE_OVERLAP_F32 : CESE_OVERLAP_F64)

// The new points of a block along axis 0 (x) and 1 (y).
template <int DIM>
__device__ __forceinline__ int points_per_block(int axis) {
    return axis == 0 ? blockDim.x - CESE_OVERLAP : DIM == 2 ? blockDim.y - CESE_OVERLAP : 1;
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
    if (CESE_OVERLAP) {
        fill(thread_linear());
    } else {
        for (int t = thread_linear(); t < tn; t += block_threads()) fill(t);
    }
    __syncthreads();
}

// This thread's new point (x0 + threadIdx.x, y0 + threadIdx.y) of the block whose first is
// (x0, y0), if the thread computes one, and the block's tile width and height (1 in 1D).
template <int DIM>
struct block_points {
    int x0, y0, tw, th;
    __device__ __forceinline__ block_points()
        : x0(blockIdx.x * points_per_block<DIM>(0)),
          y0(DIM == 2 ? blockIdx.y * points_per_block<DIM>(1) : 0),
          tw(points_per_block<DIM>(0) + 1),
          th(DIM == 2 ? points_per_block<DIM>(1) + 1 : 1) {}
    __device__ __forceinline__ bool marches() const {
        return (int)threadIdx.x < points_per_block<DIM>(0) && (int)threadIdx.y < points_per_block<DIM>(1);
    }
};

// The new solution point of this thread from its 2^DIM old neighbours' terms in the tile, old
// point a + 2 b at offset signs (2a - 1, 2b - 1) in tile slot (threadIdx.x + a, threadIdx.y + b)
// (cese.rs `march`: the conservation sum over the box, then the gradients). DIM is a
// compile-time constant, so the point arrays stay in registers.
template <int DIM>
__device__ __forceinline__ point march(real alpha, real dt, real hx, real hy, const real* tile, int tw, int tn) {
    const int n = 1 << DIM;
    const real one = (real)1;
    const real rx = dt / hx, ry = dt / hy;
    const real inv_hx = one / hx, inv_hy = one / hy;
    q4 sum = make_q4(0, 0, 0, 0);
    q4 moved[n];
#pragma unroll
    for (int m = 0; m < n; m++) {
        const int t = (threadIdx.y + (m >> 1)) * tw + threadIdx.x + (m & 1);
        const auto term = [&](int e) { return load_q4(tile + 4 * e * tn, tn, t); };
        const q4 u = term(T_U), ax = term(T_AX), p = term(T_P);
        moved[m] = term(T_MOVED);
        const real sx = (m & 1) ? one : -one;
        q4 c;
        if constexpr (DIM == 2) {
            const q4 ay = term(T_AY), b = term(T_B), q = term(T_Q), cc = term(T_C);
            const real sy = (m & 2) ? one : -one;
#pragma unroll
            for (int k = 0; k < 4; k++)
                c.c[k] = u.c[k] - sx * ax.c[k] - sy * ay.c[k] - sx * rx * (p.c[k] - sy * b.c[k]) -
                         sy * ry * (q.c[k] - sx * cc.c[k]);
        } else {
#pragma unroll
            for (int k = 0; k < 4; k++) c.c[k] = u.c[k] - sx * ax.c[k] - sx * rx * p.c[k];
        }
#pragma unroll
        for (int k = 0; k < 4; k++) sum.c[k] = sum.c[k] + c.c[k];
    }
    const real inv = one / (real)n;
    point p;
#pragma unroll
    for (int k = 0; k < 4; k++) p.u.c[k] = sum.c[k] * inv;
    const q4 up = p.u;
    q4 cand[n][2];
    const real two = (real)2;
    if constexpr (DIM == 1) {
#pragma unroll
        for (int m = 0; m < 2; m++) {
            const real s = m == 0 ? -one : one;
#pragma unroll
            for (int k = 0; k < 4; k++) {
                cand[m][0].c[k] = s * (moved[m].c[k] - up.c[k]) * two * inv_hx;
                cand[m][1].c[k] = 0;
            }
        }
    } else {
        const q4* v = moved;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const real mid = two * up.c[k];
            // Pairs along x at s_y = -1, +1; pairs along y at s_x = -1, +1.
            cand[0][0].c[k] = (v[1].c[k] - v[0].c[k]) * inv_hx;
            cand[0][1].c[k] = -(v[1].c[k] + v[0].c[k] - mid) * inv_hy;
            cand[1][0].c[k] = (v[3].c[k] - v[2].c[k]) * inv_hx;
            cand[1][1].c[k] = (v[3].c[k] + v[2].c[k] - mid) * inv_hy;
            cand[2][1].c[k] = (v[2].c[k] - v[0].c[k]) * inv_hy;
            cand[2][0].c[k] = -(v[2].c[k] + v[0].c[k] - mid) * inv_hx;
            cand[3][1].c[k] = (v[3].c[k] - v[1].c[k]) * inv_hy;
            cand[3][0].c[k] = (v[3].c[k] + v[1].c[k] - mid) * inv_hx;
        }
    }
    weighted<n>(alpha, cand, &p.x, &p.y);
    return p;
}

// The CE/SE kernels' blocks: in float 32 x 8 threads in 2D, over 31 x 7 new points (their tile
// of 32 x 8 old points' terms of 8 reals is 32 kB), 256 in 1D over 255; in double 32 x 4 over
// 32 x 4 (a tile of 33 x 5 points, 42 kB), 256 in 1D over 256. The host launches both half-steps
// and euler_reduce with them (launches.rs `StepBlock`).
// First half-step: the corner points from the centre points around them (ghosts filled), one
// thread per corner (2D grid over (nx + 1) x (ny + 1), or nx + 1 in 1D); corner (ci, cj) is
// between centre cells ci - 1, ci and cj - 1, cj, so the tile of the block of first corner
// (x0, y0) holds the terms of cells (x0 - 1 .., y0 - 1 ..) (dynamic shared memory: 8 terms of 4
// reals a point in 2D, 4 in 1D).
template <int DIM>
__device__ __forceinline__ void corners_of_block(const real* __restrict__ q, const real* __restrict__ qx,
                                                 const real* __restrict__ qy, real* __restrict__ corners,
                                                 long long len, int stride, int g0, int g1, int nx, int ny, real g,
                                                 real alpha, real dt, real hx, real hy, real* tile) {
    const block_points<DIM> b;
    const int x0 = b.x0, y0 = b.y0;
    fill_tile<DIM>(tile, b.tw, b.th, x0 - 1, y0 - 1, g, dt, hx, hy, [&](int i, int j, point& o) {
        if (DIM == 1) j = 0;
        if (i < -g0 || i >= nx + g0 || j < -g1 || j >= ny + g1) return false;
        const long long k = (long long)(j + g1) * stride + i + g0;
        o.u = load_q4(q, len, k);
        o.x = load_q4(qx, len, k);
        o.y = DIM == 2 ? load_q4(qy, len, k) : make_q4(0, 0, 0, 0);
        return true;
    });
    const int ci = x0 + threadIdx.x, cj = y0 + threadIdx.y;
    const int cy = DIM == 2 ? ny + 1 : 1;
    if (!b.marches() || ci > nx || cj >= cy) return;
    const point p = march<DIM>(alpha, dt, hx, hy, tile, b.tw, b.tw * b.th);
    const long long nc = (long long)(nx + 1) * cy, m = (long long)cj * (nx + 1) + ci;
    store_q4(corners, nc, m, p.u);
    store_q4(corners + 4 * nc, nc, m, p.x);
    if (DIM == 2) store_q4(corners + 8 * nc, nc, m, p.y);
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
        o.u = load_q4(corners, nc, c);
        o.x = load_q4(corners + 4 * nc, nc, c);
        o.y = DIM == 2 ? load_q4(corners + 8 * nc, nc, c) : make_q4(0, 0, 0, 0);
        return true;
    });
    *i = x0 + threadIdx.x;
    *j = y0 + threadIdx.y;
    if (!b.marches() || *i >= nx || *j >= ny) return false;
    const point p = march<DIM>(alpha, dt, hx, hy, tile, b.tw, b.tw * b.th);
    const long long k = (long long)(*j + g1) * stride + *i + g0;
    store_q4(q, len, k, p.u);
    store_q4(qx, len, k, p.x);
    if (DIM == 2) store_q4(qy, len, k, p.y);
    *u = p.u;
    return true;
}

extern "C" __global__ void __launch_bounds__(256, CESE_MIN_BLOCKS) cese_corners(const real* __restrict__ q, const real* __restrict__ qx,
                                        const real* __restrict__ qy, real* __restrict__ corners, long long len,
                                        int stride, int g0, int g1, int nx, int ny, int dim, real g, real alpha,
                                        const double* __restrict__ clock, real hx, real hy) {
    extern __shared__ unsigned char tile_bytes[];
    real* tile = (real*)tile_bytes;
    const real dt = (real)clock[EK_DT];
    if (dim == 2) {
        corners_of_block<2>(q, qx, qy, corners, len, stride, g0, g1, nx, ny, g, alpha, dt, hx, hy, tile);
    } else {
        corners_of_block<1>(q, qx, qy, corners, len, stride, g0, g1, nx, ny, g, alpha, dt, hx, hy, tile);
    }
}

// Second half-step: the interior centre points from their corners, one thread per cell (2D grid
// over nx x ny), written to q, qx and (2D) qy, with the step reduction of the new state fused in
// (write_partials of cell_stats; inv_dx, inv_dy as euler_reduce). Nothing once the step is
// halted.
extern "C" __global__ void __launch_bounds__(256, CESE_MIN_BLOCKS) cese_centres(real* __restrict__ q, real* __restrict__ qx, real* __restrict__ qy,
                                        const real* __restrict__ corners, long long len, int stride, int g0, int g1,
                                        int nx, int ny, int dim, real g, real alpha, const double* __restrict__ clock,
                                        real hx, real hy, real inv_dx, real inv_dy, real* __restrict__ part,
                                        int* __restrict__ bad) {
    HALTED(clock);
    extern __shared__ unsigned char tile_bytes[];
    real* tile = (real*)tile_bytes;
    const real dt = (real)clock[EK_DT];
    q4 u;
    int i, j;
    const bool interior =
        dim == 2
            ? centres_of_block<2>(q, qx, qy, corners, len, stride, g0, g1, nx, ny, g, alpha, dt, hx, hy, tile, &i, &j, &u)
            : centres_of_block<1>(q, qx, qy, corners, len, stride, g0, g1, nx, ny, g, alpha, dt, hx, hy, tile, &i, &j, &u);
    write_partials(interior ? cell_stats(g, dim, inv_dx, inv_dy, u, i, j, nx) : no_stats(), part, bad);
}
