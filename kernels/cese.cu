// The CE/SE scheme on the device, kernel for kernel the CPU's (src/solver/compressible/cese.rs):
// per step euler_step_dt, euler_ghosts (values and gradients, y then x), cese_corners (centres ->
// corners, one thread per corner), cese_centres (corners -> centres, one thread per interior
// cell, the step reduction fused in), euler_reduce_finalize. Storage and operation order: see
// euler.cuh.
//
// A solution point carries u, u_x and (2D) u_y, P = 4 (1 + dim) values. Centre gradients live
// in qx, qy (padded layout like q; qy only in 2D). Corner (ci, cj), 0 <= ci <= nx,
// 0 <= cj <= ny (cj = 0 in 1D), is number m = cj (nx + 1) + ci of nc; its value p (0: u, 1: u_x,
// 2: u_y), component c at corners[(4 p + c) nc + m].
#include "common.cuh"
#include "euler.cuh"

// Blocks of 256 threads per multiprocessor the CE/SE kernels are compiled for, so their register
// budget is 65536 / (256 CESE_MIN_BLOCKS) a thread: 85 in float, 128 in double. Left free they
// take 118 and 198 (occupancy 25 and 12.5 %) and run 21 % (float) and 37 % (double) slower on an
// H200, though the budgets make them spill 176-348 bytes to local memory; 3 blocks in double
// (1.2 kB of spills) runs 1.6x slower (BENCHMARKS.md, issue 23).
#define CESE_MIN_BLOCKS (sizeof(real) == 4 ? 3 : 2)

struct point {
    q4 u, x, y;
};

// Flux Jacobian A(U) v along x, conserved variables.
__device__ __forceinline__ q4 jac_x(real g, q4 q, q4 v) {
    const real u = q.c[1] / q.c[0], w = q.c[2] / q.c[0];
    const real gm = g - (real)1;
    const real k = (real)0.5 * gm * (u * u + w * w);
    const real h = g * q.c[3] / q.c[0] - k;
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
// average where all candidates vanish. Each power is computed once and reused in the products
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
            real pw[M];
#pragma unroll
            for (int l = 0; l < M; l++) pw[l] = weight_power(theta[l] / tmax, alpha);
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

// The new solution point from its 2^DIM old neighbours, old[a + 2 b] at offset signs
// (2a - 1, 2b - 1) (cese.rs `march`: the conservation sum over the box, then the gradients).
// DIM is a compile-time constant, so the point arrays stay in registers.
template <int DIM>
__device__ __forceinline__ point march(real g, real alpha, real dt, real hx, real hy, const point* old) {
    const int n = 1 << DIM;
    const real quarter = (real)0.25, half = (real)0.5, one = (real)1;
    q4 sum = make_q4(0, 0, 0, 0);
    q4 moved[n];
#pragma unroll
    for (int m = 0; m < n; m++) {
        const q4 u = old[m].u, ux = old[m].x, uy = old[m].y;
        const real sx = (m & 1) ? one : -one;
        const q4 w = primitive(g, u);
        const q4 f = euler_flux(g, w);
        const q4 ax = jac(g, 0, u, ux);
        q4 c;
        if constexpr (DIM == 2) {
            const real sy = (m & 2) ? one : -one;
            const q4 gg = to_local(1, euler_flux(g, to_local(1, w)));
            const q4 by = jac(g, 1, u, uy);
            q4 ut;
#pragma unroll
            for (int k = 0; k < 4; k++) ut.c[k] = -(ax.c[k] + by.c[k]);
            const q4 ft = jac(g, 0, u, ut), gt = jac(g, 1, u, ut);
            const q4 fy = jac(g, 0, u, uy), gx = jac(g, 1, u, ux);
#pragma unroll
            for (int k = 0; k < 4; k++) {
                moved[m].c[k] = u.c[k] + half * dt * ut.c[k];
                c.c[k] = u.c[k] - sx * quarter * hx * ux.c[k] - sy * quarter * hy * uy.c[k] -
                         sx * dt / hx * (f.c[k] + quarter * dt * ft.c[k] - sy * quarter * hy * fy.c[k]) -
                         sy * dt / hy * (gg.c[k] + quarter * dt * gt.c[k] - sx * quarter * hx * gx.c[k]);
            }
        } else {
            q4 ut;
#pragma unroll
            for (int k = 0; k < 4; k++) ut.c[k] = -ax.c[k];
            const q4 ft = jac(g, 0, u, ut);
#pragma unroll
            for (int k = 0; k < 4; k++) {
                moved[m].c[k] = u.c[k] + half * dt * ut.c[k];
                c.c[k] = u.c[k] - sx * quarter * hx * ux.c[k] - sx * dt / hx * (f.c[k] + quarter * dt * ft.c[k]);
            }
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
                cand[m][0].c[k] = s * (moved[m].c[k] - up.c[k]) * two / hx;
                cand[m][1].c[k] = 0;
            }
        }
    } else {
        const q4* v = moved;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const real mid = two * up.c[k];
            // Pairs along x at s_y = -1, +1; pairs along y at s_x = -1, +1.
            cand[0][0].c[k] = (v[1].c[k] - v[0].c[k]) / hx;
            cand[0][1].c[k] = -(v[1].c[k] + v[0].c[k] - mid) / hy;
            cand[1][0].c[k] = (v[3].c[k] - v[2].c[k]) / hx;
            cand[1][1].c[k] = (v[3].c[k] + v[2].c[k] - mid) / hy;
            cand[2][1].c[k] = (v[2].c[k] - v[0].c[k]) / hy;
            cand[2][0].c[k] = -(v[2].c[k] + v[0].c[k] - mid) / hx;
            cand[3][1].c[k] = (v[3].c[k] - v[1].c[k]) / hy;
            cand[3][0].c[k] = (v[3].c[k] + v[1].c[k] - mid) / hx;
        }
    }
    weighted<n>(alpha, cand, &p.x, &p.y);
    return p;
}

// A corner point from the centre points around it.
template <int DIM>
__device__ __forceinline__ void corner(const real* __restrict__ q, const real* __restrict__ qx,
                                       const real* __restrict__ qy, real* __restrict__ corners, long long len,
                                       int stride, int g0, int g1, int nx, int cy, int ci, int cj, real g, real alpha,
                                       real dt, real hx, real hy) {
    point old[1 << DIM];
#pragma unroll
    for (int m = 0; m < (1 << DIM); m++) {
        const int i = ci - 1 + (m & 1), j = DIM == 2 ? cj - 1 + ((m >> 1) & 1) : 0;
        const long long k = (long long)(j + g1) * stride + i + g0;
        old[m].u = load_q4(q, len, k);
        old[m].x = load_q4(qx, len, k);
        old[m].y = DIM == 2 ? load_q4(qy, len, k) : make_q4(0, 0, 0, 0);
    }
    const point p = march<DIM>(g, alpha, dt, hx, hy, old);
    const long long nc = (long long)(nx + 1) * cy, m = (long long)cj * (nx + 1) + ci;
    store_q4(corners, nc, m, p.u);
    store_q4(corners + 4 * nc, nc, m, p.x);
    if (DIM == 2) store_q4(corners + 8 * nc, nc, m, p.y);
}

// A centre point from its corners; returns its new conserved state.
template <int DIM>
__device__ __forceinline__ q4 centre(real* __restrict__ q, real* __restrict__ qx, real* __restrict__ qy,
                                       const real* __restrict__ corners, long long len, int stride, int g0, int g1,
                                       int nx, int cy, int i, int j, real g, real alpha, real dt, real hx, real hy) {
    const long long nc = (long long)(nx + 1) * cy;
    point old[1 << DIM];
#pragma unroll
    for (int m = 0; m < (1 << DIM); m++) {
        const long long c = (long long)(j + (m >> 1)) * (nx + 1) + i + (m & 1);
        old[m].u = load_q4(corners, nc, c);
        old[m].x = load_q4(corners + 4 * nc, nc, c);
        old[m].y = DIM == 2 ? load_q4(corners + 8 * nc, nc, c) : make_q4(0, 0, 0, 0);
    }
    const point p = march<DIM>(g, alpha, dt, hx, hy, old);
    const long long k = (long long)(j + g1) * stride + i + g0;
    store_q4(q, len, k, p.u);
    store_q4(qx, len, k, p.x);
    if (DIM == 2) store_q4(qy, len, k, p.y);
    return p.u;
}

// First half-step: the corner points from the centre points around them (ghosts filled), one
// thread per corner (2D grid over (nx + 1) x (ny + 1), or nx + 1 in 1D).
extern "C" __global__ void __launch_bounds__(256, CESE_MIN_BLOCKS) cese_corners(const real* __restrict__ q, const real* __restrict__ qx,
                                        const real* __restrict__ qy, real* __restrict__ corners, long long len,
                                        int stride, int g0, int g1, int nx, int ny, int dim, real g, real alpha,
                                        const double* __restrict__ clock, real hx, real hy) {
    const real dt = (real)clock[EK_DT];
    const int ci = blockIdx.x * blockDim.x + threadIdx.x;
    const int cj = blockIdx.y * blockDim.y + threadIdx.y;
    const int cy = dim == 2 ? ny + 1 : 1;
    if (ci > nx || cj >= cy) return;
    if (dim == 2) {
        corner<2>(q, qx, qy, corners, len, stride, g0, g1, nx, cy, ci, cj, g, alpha, dt, hx, hy);
    } else {
        corner<1>(q, qx, qy, corners, len, stride, g0, g1, nx, cy, ci, cj, g, alpha, dt, hx, hy);
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
    const real dt = (real)clock[EK_DT];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    step_stats st = no_stats();
    if (i < nx && j < ny) {
        const int cy = dim == 2 ? ny + 1 : 1;
        const q4 u = dim == 2 ? centre<2>(q, qx, qy, corners, len, stride, g0, g1, nx, cy, i, j, g, alpha, dt, hx, hy)
                              : centre<1>(q, qx, qy, corners, len, stride, g0, g1, nx, cy, i, j, g, alpha, dt, hx, hy);
        st = cell_stats(g, dim, inv_dx, inv_dy, u, i, j, nx);
    }
    write_partials(st, part, bad);
}
