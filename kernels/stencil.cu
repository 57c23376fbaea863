// Linear solvers for the stencil systems of the SIMPLE family on the GPU (src/solver/linear on the
// CPU, `Stencil<T, D>`): a_P x_P = sum_nb a_nb x_nb + b, five-point in 2D and seven-point in 3D
// (compiled with -DDIM=2|3), on ni x nj (x nk) unknowns, index (k nj + j) ni + i, a link leaving
// the block read only across a periodic axis (px, py, pz), where it wraps. 2D kernels take nk = 1
// and pz = 0.
//
// A system is one buffer `sys` of (2 + 2 DIM) n values (n = ni nj nk): a_P, then for each axis
// its upper and lower links (a_E, a_W, a_N, a_S, and a_T, a_B in 3D), then b (SYS_UPPER,
// SYS_LOWER, SYS_B). Each element-wise formula is the CPU's, in its operation order (compiled
// without FMA contraction), so the element-wise results round alike; sums are block partials
// combined by one block (common.cuh). The iteration control stays on the device: a kernel given
// `ctrl` returns at once when ctrl[CTRL_DONE] is set (GUARD), and the finalize kernels set it, so
// the host enqueues batches of iterations and reads the flag between them. The Krylov solvers'
// kernels that do not read the system (dot_partial, finalize_bnorm, finalize_alpha,
// finalize_gamma, pcg_direction) are poisson.cu's.
#include "common.cuh"

// BiCGSTAB's scalars in `sc` (SC_RHO, SC_OMEGA) and the control slot recording the iteration at
// which the half-step residual s converged (CTRL_LAST) come from src/backend/cuda/slots.rs.

#define JACOBI_WEIGHT ((real)0.9)
// Equations per thread of the line solver and its largest block (PCR_K, PCR_THREADS of
// src/backend/cuda/slots.rs): a line of len <= PCR_K PCR_THREADS equations takes a block of
// ceil(len / PCR_K) threads or more (src/solver/linear/cuda.rs picks it). The bound keeps the
// 4 PCR_K values each thread holds through a reduction step in registers (1024 threads would
// leave 64 registers a thread, too few to launch).

// Offsets in `sys` of a_P's links along axis a (upper, lower) and of b, for n unknowns.
#define SYS_UPPER(a, n) ((1 + 2 * (a)) * (n))
#define SYS_LOWER(a, n) ((2 + 2 * (a)) * (n))
#define SYS_B(n) ((1 + 2 * DIM) * (n))

// The shape parameters every kernel on a block of unknowns takes, and the block they describe.
#define SHAPE int ni, int nj, int nk, int px, int py, int pz
struct Block {
    int n[3];
    int p[3];
    long long st[3];
    long long len;
};

__device__ __forceinline__ Block block_of(int ni, int nj, int nk, int px, int py, int pz) {
    Block b;
    b.n[0] = ni;
    b.n[1] = nj;
    b.n[2] = nk;
    b.p[0] = px;
    b.p[1] = py;
    b.p[2] = pz;
    b.st[0] = 1;
    b.st[1] = ni;
    b.st[2] = (long long)ni * nj;
    b.len = b.st[2] * nk;
    return b;
}

// Indices along each axis of unknown k.
__device__ __forceinline__ void position(const Block& b, long long k, int idx[3]) {
    const long long row = k / b.n[0];
    idx[0] = (int)(k - row * b.n[0]);
    idx[1] = (int)(row % b.n[1]);
    idx[2] = (int)(row / b.n[1]);
}

// This thread's unknown k of the block B of the SHAPE parameters and its indices idx; threads past
// the last unknown return.
#define THREAD_UNKNOWN                                                  \
    const Block B = block_of(ni, nj, nk, px, py, pz);                   \
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
    if (k >= B.len) return;                                             \
    int idx[3];                                                         \
    position(B, k, idx);

// sum_nb a_nb x(m) of unknown k at idx (Stencil::neighbours, same order: axis by axis, the upper
// link before the lower), x(m) the value of unknown m.
template <class X>
__device__ __forceinline__ real nb_sum_of(const real* __restrict__ sys, const Block& b, X x, long long k,
                                          const int idx[3]) {
    real s = 0;
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        const real up = sys[SYS_UPPER(a, b.len) + k], lo = sys[SYS_LOWER(a, b.len) + k];
        const long long wrap = (long long)(b.n[a] - 1) * b.st[a];
        if (idx[a] + 1 < b.n[a]) s = s + up * x(k + b.st[a]);
        else if (b.p[a]) s = s + up * x(k - wrap);
        if (idx[a] > 0) s = s + lo * x(k - b.st[a]);
        else if (b.p[a]) s = s + lo * x(k + wrap);
    }
    return s;
}

// sum_nb a_nb x_nb of unknown k at idx from the array x.
__device__ __forceinline__ real nb_sum(const real* __restrict__ sys, const Block& b, const real* x, long long k,
                                       const int idx[3]) {
    return nb_sum_of(sys, b, [x](long long m) { return x[m]; }, k, idx);
}

// Residual of every unknown: mode 0 and 1, r = b + sum a_nb x_nb - a_P x (FivePoint::residual_at),
// partial[block] = block sum of r^2 (mode 0) or |r| (mode 1); mode 2, r = b - (a_P x - sum a_nb
// x_nb) (the Krylov solvers' b - A x), block sum of r^2. r may be null (norm only).
extern "C" __global__ void fp_residual(const real* __restrict__ sys, const real* __restrict__ x,
                                       real* __restrict__ r, real* __restrict__ partial,
                                       const int* __restrict__ ctrl, int mode, SHAPE) {
    GUARD(ctrl)
    const Block B = block_of(ni, nj, nk, px, py, pz);
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    real acc = 0;
    if (k < B.len) {
        int idx[3];
        position(B, k, idx);
        const real s = nb_sum(sys, B, x, k, idx);
        const real ap = sys[k], b = sys[SYS_B(B.len) + k];
        const real rr = mode == 2 ? b - (ap * x[k] - s) : b + s - ap * x[k];
        if (r) r[k] = rr;
        acc = mode == 1 ? fabs(rr) : rr * rr;
    }
    const real t = block_sum(acc);
    if (thread_linear() == 0) partial[blockIdx.x] = t;
}

// out = A x = a_P x - sum a_nb x_nb; partial[block] = block sum of dot_a . out, and
// partial[gridDim.x + block] that of dot_b . out when dot_b is not null (dot_a may be out).
extern "C" __global__ void fp_apply(const real* __restrict__ sys, const real* __restrict__ x, real* out,
                                    const real* dot_a, const real* dot_b, real* __restrict__ partial,
                                    const int* __restrict__ ctrl, SHAPE) {
    GUARD(ctrl)
    const Block B = block_of(ni, nj, nk, px, py, pz);
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    real da = 0, db = 0;
    if (k < B.len) {
        int idx[3];
        position(B, k, idx);
        const real o = sys[k] * x[k] - nb_sum(sys, B, x, k, idx);
        out[k] = o;
        da = dot_a[k] * o;
        if (dot_b) db = dot_b[k] * o;
    }
    const real ta = block_sum(da);
    const real tb = block_sum(db);
    if (thread_linear() == 0) {
        partial[blockIdx.x] = ta;
        if (dot_b) partial[gridDim.x + blockIdx.x] = tb;
    }
}

// Jacobi preconditioner w = r / a_P; partial[block] = block sum of r . w when partial is not null.
extern "C" __global__ void fp_precondition(const real* __restrict__ sys, const real* __restrict__ r,
                                           real* __restrict__ w, real* __restrict__ partial,
                                           const int* __restrict__ ctrl, long long n) {
    GUARD(ctrl)
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    real d = 0;
    if (k < n) {
        const real ww = r[k] / sys[k];
        w[k] = ww;
        d = r[k] * ww;
    }
    if (partial) {
        const real t = block_sum(d);
        if (thread_linear() == 0) partial[blockIdx.x] = t;
    }
}

// Weighted Jacobi x -> next: next = x + w r / a_P (src/solver/linear/jacobi.rs).
extern "C" __global__ void fp_jacobi(const real* __restrict__ sys, const real* __restrict__ x,
                                     real* __restrict__ next, const int* __restrict__ ctrl, SHAPE) {
    GUARD(ctrl)
    THREAD_UNKNOWN
    const real r = sys[SYS_B(B.len) + k] + nb_sum(sys, B, x, k, idx) - sys[k] * x[k];
    next[k] = x[k] + JACOBI_WEIGHT * r / sys[k];
}

// out = (sum a_nb x_nb + b) / a_P (SIMPLER's pseudo-velocities, Simple::pseudo_velocity).
extern "C" __global__ void fp_point_solution(const real* __restrict__ sys, const real* __restrict__ x,
                                             real* __restrict__ out, SHAPE) {
    THREAD_UNKNOWN
    out[k] = (nb_sum(sys, B, x, k, idx) + sys[SYS_B(B.len) + k]) / sys[k];
}

// dst = src.
extern "C" __global__ void fp_copy(real* __restrict__ dst, const real* __restrict__ src,
                                   const int* __restrict__ ctrl, long long n) {
    GUARD(ctrl)
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) dst[k] = src[k];
}

// One block, after an iteration `it`: sc[SC_RNORM] = sqrt(sum(partial)); r <= target, a
// non-finite r or it >= max ends the solve (done flag, iteration count), as the CPU loops do.
extern "C" __global__ void fp_check(const real* __restrict__ partial, int nb, real* __restrict__ sc,
                                    int* __restrict__ ctrl, int it, int max) {
    GUARD(ctrl)
    const real r = sqrt(sum_partials(partial, nb));
    if (thread_linear() == 0) {
        sc[SC_RNORM] = r;
        if (r <= sc[SC_TARGET] || !isfinite(r) || it >= max) {
            ctrl[CTRL_DONE] = 1;
            ctrl[CTRL_ITERS] = it;
        }
    }
}

// Every line of one colour of a line-by-line sweep (src/solver/linear/adi.rs `sweep`), each
// tridiagonal line system solved by parallel cyclic reduction (src/solver/linear/pcr.rs; Lohry
// 2010, ch. 3-4): one block per line, the four coefficient arrays of the line in dynamic shared
// memory (4 len values), thread t owning equations t, t + blockDim.x, ... (at most PCR_K).
// Lines run along `axis`. Along each axis across them a line's position has a colour digit: 0 the
// even positions, 1 the odd ones, 2 the last of an odd count across a periodic axis (which
// neighbours position 0); the line's colour is d0 + 3 d1 (d0 of the first axis across, d1 of the
// second in 3D), and block (b0, b1) of colour `colour` solves the line at position `digit + 2 b`
// along each axis across (the last position for digit 2). The right-hand side takes the
// neighbouring lines' current values (of the other colours), axis by axis across (the next line,
// then the previous), and on a periodic line its own wrap-around links lagged, exactly as the CPU
// sweep.
extern "C" __global__ void __launch_bounds__(PCR_THREADS) fp_lines(const real* __restrict__ sys, real* __restrict__ x, const int* __restrict__ ctrl,
                                    SHAPE, int axis, int colour) {
    GUARD(ctrl)
    extern __shared__ __align__(16) unsigned char pcr_shared[];
    real* ca = (real*)pcr_shared;
    const Block B = block_of(ni, nj, nk, px, py, pz);
    const long long n = B.len;
    const int len = B.n[axis];
    const long long along = B.st[axis];
    int across[2] = {0, 0}, pos[2] = {0, 0};
    long long first = 0;
    for (int a = 0, q = 0; a < DIM; ++a) {
        if (a == axis) continue;
        const int digit = q == 0 ? colour % 3 : colour / 3;
        const int b = q == 0 ? (int)blockIdx.x : (int)blockIdx.y;
        across[q] = a;
        pos[q] = digit == 2 ? B.n[a] - 1 : digit + 2 * b;
        first += pos[q] * B.st[a];
        ++q;
    }
    real* cb = ca + len;
    real* cc = cb + len;
    real* cd = cc + len;
    for (int m = threadIdx.x; m < len; m += blockDim.x) {
        const long long k = first + (long long)m * along;
        real rhs = sys[SYS_B(n) + k];
        // Links across the line: each axis across, the next line, then the previous.
        for (int q = 0; q < DIM - 1; ++q) {
            const int a = across[q];
            const real next = sys[SYS_UPPER(a, n) + k], prev = sys[SYS_LOWER(a, n) + k];
            const long long st = B.st[a];
            if (pos[q] + 1 < B.n[a]) rhs = rhs + next * x[k + st];
            else if (B.p[a]) rhs = rhs + next * x[k - (long long)pos[q] * st];
            if (pos[q] > 0) rhs = rhs + prev * x[k - st];
            else if (B.p[a]) rhs = rhs + prev * x[k + (long long)(B.n[a] - 1) * st];
        }
        // Links along the line (lower, upper).
        const real lo = sys[SYS_LOWER(axis, n) + k], hi = sys[SYS_UPPER(axis, n) + k];
        if (B.p[axis] && m == 0) rhs = rhs + lo * x[k + (long long)(len - 1) * along];
        if (B.p[axis] && m + 1 == len) rhs = rhs + hi * x[first];
        ca[m] = m == 0 ? (real)0 : -lo;
        cb[m] = sys[k];
        cc[m] = m + 1 == len ? (real)0 : -hi;
        cd[m] = rhs;
    }
    __syncthreads();
    for (int s = 1; s < len; s *= 2) {
        real na[PCR_K], nb[PCR_K], nc[PCR_K], nd[PCR_K];
#pragma unroll
        for (int q = 0; q < PCR_K; ++q) {
            const int i = threadIdx.x + q * blockDim.x;
            if (i < len) {
                // Equation i minus k1 times equation i - s and k2 times equation i + s.
                real k1 = 0, am = 0, cm = 0, dm = 0, k2 = 0, ap = 0, cp = 0, dp = 0;
                if (i >= s) {
                    k1 = ca[i] / cb[i - s];
                    am = ca[i - s];
                    cm = cc[i - s];
                    dm = cd[i - s];
                }
                if (i + s < len) {
                    k2 = cc[i] / cb[i + s];
                    ap = ca[i + s];
                    cp = cc[i + s];
                    dp = cd[i + s];
                }
                na[q] = -am * k1;
                nb[q] = cb[i] - cm * k1 - ap * k2;
                nc[q] = -cp * k2;
                nd[q] = cd[i] - dm * k1 - dp * k2;
            }
        }
        __syncthreads();
#pragma unroll
        for (int q = 0; q < PCR_K; ++q) {
            const int i = threadIdx.x + q * blockDim.x;
            if (i < len) {
                ca[i] = na[q];
                cb[i] = nb[q];
                cc[i] = nc[q];
                cd[i] = nd[q];
            }
        }
        __syncthreads();
    }
    for (int m = threadIdx.x; m < len; m += blockDim.x) x[first + (long long)m * along] = cd[m] / cb[m];
}

// CG after alpha (conjugate_gradient.rs, one kernel for three of its vector steps): x += alpha d,
// r -= alpha q, and with the Jacobi preconditioner (w not null) w = r / a_P; partial[block] =
// block sum of r^2, partial[gridDim.x + block] that of r . w.
extern "C" __global__ void cg_update(const real* __restrict__ sys, real* __restrict__ x, real* __restrict__ r,
                                     const real* __restrict__ d, const real* __restrict__ q, real* __restrict__ w,
                                     const real* __restrict__ sc, real* __restrict__ partial,
                                     const int* __restrict__ ctrl, long long n) {
    GUARD(ctrl)
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    real r2 = 0, rw = 0;
    if (k < n) {
        const real alpha = sc[SC_ALPHA];
        x[k] = x[k] + alpha * d[k];
        const real rr = r[k] - alpha * q[k];
        r[k] = rr;
        r2 = rr * rr;
        if (w) {
            const real ww = rr / sys[k];
            w[k] = ww;
            rw = rr * ww;
        }
    }
    const real t2 = block_sum(r2);
    const real tw = block_sum(rw);
    if (thread_linear() == 0) {
        partial[blockIdx.x] = t2;
        if (w) partial[gridDim.x + blockIdx.x] = tw;
    }
}

// One block, end of CG iteration `it`: the test of fp_check on ||r||, and while going on,
// beta = (r . w) / gamma, gamma = r . w (from cg_update's partials).
extern "C" __global__ void cg_check(const real* __restrict__ partial, int nb, real* __restrict__ sc,
                                    int* __restrict__ ctrl, int it, int max) {
    GUARD(ctrl)
    const real r = sqrt(sum_partials(partial, nb));
    const real g = sum_partials(partial + nb, nb);
    if (thread_linear() == 0) {
        sc[SC_RNORM] = r;
        if (r <= sc[SC_TARGET] || !isfinite(r) || it >= max) {
            ctrl[CTRL_DONE] = 1;
            ctrl[CTRL_ITERS] = it;
        } else {
            sc[SC_BETA] = g / sc[SC_GAMMA];
            sc[SC_GAMMA] = g;
        }
    }
}

// One block, start of BiCGSTAB (src/solver/linear/bicgstab.rs): rho = alpha = omega = 1,
// sc[SC_RNORM] = ||r|| from the partials of r . r, no half-step convergence yet.
extern "C" __global__ void bicg_start(const real* __restrict__ partial, int nb, real* __restrict__ sc,
                                      int* __restrict__ ctrl) {
    const real r = sqrt(sum_partials(partial, nb));
    if (thread_linear() == 0) {
        sc[SC_RHO] = 1;
        sc[SC_ALPHA] = 1;
        sc[SC_OMEGA] = 1;
        sc[SC_RNORM] = r;
        ctrl[CTRL_LAST] = -1;
    }
}

// r0 = r, p = v = 0.
extern "C" __global__ void bicg_init(const real* __restrict__ r, real* __restrict__ r0, real* __restrict__ p,
                                     real* __restrict__ v, const int* __restrict__ ctrl, long long n) {
    GUARD(ctrl)
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    r0[k] = r[k];
    p[k] = 0;
    v[k] = 0;
}

// One block, iteration `it`: rho_new = r0 . r; a breakdown (rho_new = 0, omega = 0 or rho_new
// not finite) ends the solve after it - 1 iterations, else beta = (rho_new / rho)(alpha / omega).
extern "C" __global__ void bicg_rho(const real* __restrict__ partial, int nb, real* __restrict__ sc,
                                    int* __restrict__ ctrl, int it) {
    GUARD(ctrl)
    const real rho = sum_partials(partial, nb);
    if (thread_linear() == 0) {
        if (rho == (real)0 || sc[SC_OMEGA] == (real)0 || !isfinite(rho)) {
            ctrl[CTRL_DONE] = 1;
            ctrl[CTRL_ITERS] = it - 1;
        } else {
            sc[SC_BETA] = (rho / sc[SC_RHO]) * (sc[SC_ALPHA] / sc[SC_OMEGA]);
            sc[SC_RHO] = rho;
        }
    }
}

// p = r + beta (p - omega v); y = p / a_P.
extern "C" __global__ void bicg_direction(const real* __restrict__ sys, real* __restrict__ p,
                                          const real* __restrict__ r, const real* __restrict__ v,
                                          real* __restrict__ y, const real* __restrict__ sc,
                                          const int* __restrict__ ctrl, long long n) {
    GUARD(ctrl)
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const real pp = r[k] + sc[SC_BETA] * (p[k] - sc[SC_OMEGA] * v[k]);
    p[k] = pp;
    y[k] = pp / sys[k];
}

// One block: alpha = rho / (r0 . v).
extern "C" __global__ void bicg_alpha(const real* __restrict__ partial, int nb, real* __restrict__ sc,
                                      const int* __restrict__ ctrl) {
    GUARD(ctrl)
    const real d = sum_partials(partial, nb);
    if (thread_linear() == 0) sc[SC_ALPHA] = sc[SC_RHO] / d;
}

// s = r - alpha v; partial[block] = block sum of s^2.
extern "C" __global__ void bicg_half(real* __restrict__ s, const real* __restrict__ r, const real* __restrict__ v,
                                     const real* __restrict__ sc, real* __restrict__ partial,
                                     const int* __restrict__ ctrl, long long n) {
    GUARD(ctrl)
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    real s2 = 0;
    if (k < n) {
        const real ss = r[k] - sc[SC_ALPHA] * v[k];
        s[k] = ss;
        s2 = ss * ss;
    }
    const real t = block_sum(s2);
    if (thread_linear() == 0) partial[blockIdx.x] = t;
}

// One block: ||s|| <= target ends the solve at iteration `it` with x += alpha y only
// (ctrl[CTRL_LAST] = it tells bicg_update).
extern "C" __global__ void bicg_half_check(const real* __restrict__ partial, int nb, real* __restrict__ sc,
                                           int* __restrict__ ctrl, int it) {
    GUARD(ctrl)
    const real s = sqrt(sum_partials(partial, nb));
    if (thread_linear() == 0 && s <= sc[SC_TARGET]) {
        sc[SC_RNORM] = s;
        ctrl[CTRL_DONE] = 1;
        ctrl[CTRL_ITERS] = it;
        ctrl[CTRL_LAST] = it;
    }
}

// One block: omega = (t . s) / (t . t), 0 when t . t is not positive; partial holds t . t, then
// t . s.
extern "C" __global__ void bicg_omega(const real* __restrict__ partial, int nb, real* __restrict__ sc,
                                      const int* __restrict__ ctrl) {
    GUARD(ctrl)
    const real tt = sum_partials(partial, nb);
    const real ts = sum_partials(partial + nb, nb);
    if (thread_linear() == 0) sc[SC_OMEGA] = tt > (real)0 ? ts / tt : (real)0;
}

// Iteration `it`'s update: x += alpha y + omega z, r = s - omega t, partial = block sums of r^2;
// when s converged in this iteration (ctrl[CTRL_LAST] = it), x += alpha y only.
extern "C" __global__ void bicg_update(real* __restrict__ x, real* __restrict__ r, const real* __restrict__ y,
                                       const real* __restrict__ z, const real* __restrict__ s,
                                       const real* __restrict__ t, const real* __restrict__ sc,
                                       real* __restrict__ partial, const int* __restrict__ ctrl, int it, long long n) {
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (ctrl[CTRL_LAST] == it) {
        if (k < n) x[k] = x[k] + sc[SC_ALPHA] * y[k];
        return;
    }
    GUARD(ctrl)
    real r2 = 0;
    if (k < n) {
        x[k] = x[k] + sc[SC_ALPHA] * y[k] + sc[SC_OMEGA] * z[k];
        const real rr = s[k] - sc[SC_OMEGA] * t[k];
        r[k] = rr;
        r2 = rr * rr;
    }
    const real tr = block_sum(r2);
    if (thread_linear() == 0) partial[blockIdx.x] = tr;
}

#include "additive_correction.cuh"
