// Linear solvers for the five-point systems of the SIMPLE family on the GPU (src/solver/linear on
// the CPU): a_P x_P = a_E x_E + a_W x_W + a_N x_N + a_S x_S + b on ni x nj unknowns, index
// j * ni + i, a link leaving the block read only across a periodic axis (px, py), where it wraps.
//
// A system is one buffer `sys` of 6 n values (n = ni nj): a_P, a_E, a_W, a_N, a_S, b, in that
// order (FivePoint in src/solver/linear/mod.rs). Each element-wise formula is the CPU's, in its
// operation order (compiled without FMA contraction), so the element-wise results round alike;
// sums are block partials combined by one block (common.cuh). The iteration control stays on the
// device: a kernel given `ctrl` returns at once when ctrl[CTRL_DONE] is set (GUARD), and the
// finalize kernels set it, so the host enqueues batches of iterations and reads the flag between
// them. The Krylov solvers' kernels that do not read the system (dot_partial, finalize_bnorm,
// finalize_alpha, finalize_gamma, pcg_direction) are poisson.cu's.
#include "common.cuh"

// BiCGSTAB's scalars in `sc` (SC_RHO, SC_OMEGA) and the control slot recording the iteration at
// which the half-step residual s converged (CTRL_LAST) come from src/backend/cuda/slots.rs.

#define JACOBI_WEIGHT ((real)0.9)
// Equations per thread of the line solver and its largest block (PCR_K, PCR_THREADS of
// src/backend/cuda/slots.rs): a line of len <= PCR_K PCR_THREADS equations takes a block of
// ceil(len / PCR_K) threads or more (src/solver/linear/cuda.rs picks it). The bound keeps the
// 4 PCR_K values each thread holds through a reduction step in registers (1024 threads would
// leave 64 registers a thread, too few to launch).

// sum_nb a_nb x(m) of unknown (i, j) (FivePoint::neighbours, same order), x(m) the value of
// unknown m.
template <class X>
__device__ __forceinline__ real nb_sum_of(const real* __restrict__ sys, long long n, X x, int i, int j, int ni,
                                          int nj, int px, int py) {
    const long long k = (long long)j * ni + i;
    const real* ae = sys + n;
    const real* aw = sys + 2 * n;
    const real* an = sys + 3 * n;
    const real* as = sys + 4 * n;
    real s = 0;
    if (i + 1 < ni) s = s + ae[k] * x(k + 1);
    else if (px) s = s + ae[k] * x(k + 1 - ni);
    if (i > 0) s = s + aw[k] * x(k - 1);
    else if (px) s = s + aw[k] * x(k + ni - 1);
    if (j + 1 < nj) s = s + an[k] * x(k + ni);
    else if (py) s = s + an[k] * x((long long)i);
    if (j > 0) s = s + as[k] * x(k - ni);
    else if (py) s = s + as[k] * x((long long)(nj - 1) * ni + i);
    return s;
}

// sum_nb a_nb x_nb of unknown (i, j) from the array x.
__device__ __forceinline__ real nb_sum(const real* __restrict__ sys, long long n, const real* x, int i, int j,
                                       int ni, int nj, int px, int py) {
    return nb_sum_of(sys, n, [x](long long m) { return x[m]; }, i, j, ni, nj, px, py);
}

// Residual of every unknown: mode 0 and 1, r = b + sum a_nb x_nb - a_P x (FivePoint::residual_at),
// partial[block] = block sum of r^2 (mode 0) or |r| (mode 1); mode 2, r = b - (a_P x - sum a_nb
// x_nb) (the Krylov solvers' b - A x), block sum of r^2. r may be null (norm only).
extern "C" __global__ void fp_residual(const real* __restrict__ sys, const real* __restrict__ x,
                                       real* __restrict__ r, real* __restrict__ partial,
                                       const int* __restrict__ ctrl, int mode, int ni, int nj, int px, int py) {
    GUARD(ctrl)
    const long long n = (long long)ni * nj;
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    real acc = 0;
    if (k < n) {
        const int j = (int)(k / ni), i = (int)(k - (long long)j * ni);
        const real s = nb_sum(sys, n, x, i, j, ni, nj, px, py);
        const real ap = sys[k], b = sys[5 * n + k];
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
                                    const int* __restrict__ ctrl, int ni, int nj, int px, int py) {
    GUARD(ctrl)
    const long long n = (long long)ni * nj;
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    real da = 0, db = 0;
    if (k < n) {
        const int j = (int)(k / ni), i = (int)(k - (long long)j * ni);
        const real o = sys[k] * x[k] - nb_sum(sys, n, x, i, j, ni, nj, px, py);
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
                                     real* __restrict__ next, const int* __restrict__ ctrl, int ni, int nj, int px,
                                     int py) {
    GUARD(ctrl)
    const long long n = (long long)ni * nj;
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const int j = (int)(k / ni), i = (int)(k - (long long)j * ni);
    const real r = sys[5 * n + k] + nb_sum(sys, n, x, i, j, ni, nj, px, py) - sys[k] * x[k];
    next[k] = x[k] + JACOBI_WEIGHT * r / sys[k];
}

// out = (sum a_nb x_nb + b) / a_P (SIMPLER's pseudo-velocities, Simple::pseudo_velocity).
extern "C" __global__ void fp_point_solution(const real* __restrict__ sys, const real* __restrict__ x,
                                             real* __restrict__ out, int ni, int nj, int px, int py) {
    const long long n = (long long)ni * nj;
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const int j = (int)(k / ni), i = (int)(k - (long long)j * ni);
    out[k] = (nb_sum(sys, n, x, i, j, ni, nj, px, py) + sys[5 * n + k]) / sys[k];
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
// Lines along x (along_x = 1) are rows j, along y columns i. Colour 0 takes the even lines, 1 the
// odd ones, 2 the last line of an odd count across a periodic axis (which neighbours line 0);
// block b solves line `colour + 2 b` (colour 2: the last line). The right-hand side takes the
// neighbouring lines' current values (of the other colours) and, on a periodic line, its own
// wrap-around links lagged, exactly as the CPU sweep.
extern "C" __global__ void __launch_bounds__(PCR_THREADS) fp_lines(const real* __restrict__ sys, real* __restrict__ x, const int* __restrict__ ctrl,
                                    int ni, int nj, int px, int py, int along_x, int colour) {
    GUARD(ctrl)
    extern __shared__ __align__(16) unsigned char pcr_shared[];
    real* ca = (real*)pcr_shared;
    const long long n = (long long)ni * nj;
    const int len = along_x ? ni : nj, lines = along_x ? nj : ni;
    const int along = along_x ? 1 : ni, across = along_x ? ni : 1;
    const int periodic_line = along_x ? px : py, periodic_across = along_x ? py : px;
    const int l = colour == 2 ? lines - 1 : colour + 2 * (int)blockIdx.x;
    real* cb = ca + len;
    real* cc = cb + len;
    real* cd = cc + len;
    const long long first = (long long)l * across;
    for (int m = threadIdx.x; m < len; m += blockDim.x) {
        const long long k = first + (long long)m * along;
        // Links along the line (lower, upper) and across it (next, previous line).
        const real lo = along_x ? sys[2 * n + k] : sys[4 * n + k];
        const real hi = along_x ? sys[n + k] : sys[3 * n + k];
        const real next = along_x ? sys[3 * n + k] : sys[n + k];
        const real prev = along_x ? sys[4 * n + k] : sys[2 * n + k];
        real rhs = sys[5 * n + k];
        if (l + 1 < lines) rhs = rhs + next * x[k + across];
        else if (periodic_across) rhs = rhs + next * x[k - (long long)l * across];
        if (l > 0) rhs = rhs + prev * x[k - across];
        else if (periodic_across) rhs = rhs + prev * x[k + (long long)(lines - 1) * across];
        if (periodic_line && m == 0) rhs = rhs + lo * x[k + (long long)(len - 1) * along];
        if (periodic_line && m + 1 == len) rhs = rhs + hi * x[first];
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

// Additive-correction multigrid V-cycle, CG's preconditioner for the pressure systems
// (src/solver/linear/additive_correction.rs, every value rounded as there): levels of 2 x 2
// aggregates with Galerkin coefficients, weighted Jacobi smoothing, over-corrected prolongation.
// A level's right-hand side `rhs` is separate from its coefficients (the finest level's is CG's
// residual, a coarse level's the b slot of its system).
#define MG_WEIGHT ((real)0.8)
#define MG_OVER_CORRECTION ((real)1.7)
#define MG_COARSEST 64
#define MG_COARSE_SWEEPS 48

// x + w_J (rhs + sum a_nb y_nb - a_P x) / a_P of unknown (i, j), x where a_P = 0 (`relaxed`).
template <class Y>
__device__ __forceinline__ real mg_relaxed(const real* __restrict__ sys, long long n, const real* __restrict__ rhs,
                                           real x, Y y, int i, int j, int ni, int nj, int px, int py) {
    const long long k = (long long)j * ni + i;
    const real ap = sys[k];
    if (ap == (real)0) return x;
    const real r = rhs[k] + nb_sum_of(sys, n, y, i, j, ni, nj, px, py) - ap * x;
    return x + MG_WEIGHT * r / ap;
}

// Galerkin coefficients of the coarse level (`coarsen`): one thread per coarse cell, its
// children (2ic, 2jc), (2ic + 1, 2jc), (2ic, 2jc + 1), (2ic + 1, 2jc + 1) in that order, each
// adding a_P, then its links E, W, N, S: subtracted from a_P inside the block, added to the
// coarse link of their direction across it, skipped where they leave a non-periodic block.
extern "C" __global__ void mg_coarsen(const real* __restrict__ fine, real* __restrict__ coarse, int ni, int nj,
                                      int px, int py, int nic, int njc) {
    const long long nc = (long long)nic * njc;
    const long long kc = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (kc >= nc) return;
    const long long n = (long long)ni * nj;
    const int jc = (int)(kc / nic), ic = (int)(kc - (long long)jc * nic);
    real p = 0, e = 0, w = 0, no = 0, so = 0;
    for (int c = 0; c < 4; ++c) {
        const int i = 2 * ic + (c & 1), j = 2 * jc + (c >> 1);
        if (i >= ni || j >= nj) continue;
        const long long k = (long long)j * ni + i;
        p = p + fine[k];
        const real a[4] = {fine[n + k], fine[2 * n + k], fine[3 * n + k], fine[4 * n + k]};
        const bool read[4] = {i + 1 < ni || px, i > 0 || px, j + 1 < nj || py, j > 0 || py};
        const int other[4] = {((i + 1) % ni) / 2, ((i + ni - 1) % ni) / 2, ((j + 1) % nj) / 2,
                              ((j + nj - 1) % nj) / 2};
        const int own[4] = {ic, ic, jc, jc};
        real* sum[4] = {&e, &w, &no, &so};
        for (int d = 0; d < 4; ++d) {
            if (!read[d]) continue;
            if (other[d] == own[d]) p = p - a[d];
            else *sum[d] = *sum[d] + a[d];
        }
    }
    coarse[kc] = p;
    coarse[nc + kc] = e;
    coarse[2 * nc + kc] = w;
    coarse[3 * nc + kc] = no;
    coarse[4 * nc + kc] = so;
}

// Two Jacobi sweeps from zero (`smooth_from_zero`): the first sweep's w_J rhs / a_P formed where
// the second reads it.
extern "C" __global__ void mg_smooth_zero(const real* __restrict__ sys, const real* __restrict__ rhs,
                                          real* __restrict__ out, const int* __restrict__ ctrl, int ni, int nj,
                                          int px, int py) {
    GUARD(ctrl)
    const long long n = (long long)ni * nj;
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const int j = (int)(k / ni), i = (int)(k - (long long)j * ni);
    auto first = [sys, rhs](long long m) { return sys[m] == (real)0 ? (real)0 : MG_WEIGHT * rhs[m] / sys[m]; };
    out[k] = mg_relaxed(sys, n, rhs, first(k), first, i, j, ni, nj, px, py);
}

// Block sums of the residual rhs + sum a_nb x_nb - a_P x into the coarse right-hand side
// (`restrict_residual`).
extern "C" __global__ void mg_restrict(const real* __restrict__ sys, const real* __restrict__ rhs,
                                       const real* __restrict__ x, real* __restrict__ coarse_rhs,
                                       const int* __restrict__ ctrl, int ni, int nj, int px, int py, int nic,
                                       int njc) {
    GUARD(ctrl)
    const long long nc = (long long)nic * njc;
    const long long kc = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (kc >= nc) return;
    const long long n = (long long)ni * nj;
    const int jc = (int)(kc / nic), ic = (int)(kc - (long long)jc * nic);
    real s = 0;
    for (int c = 0; c < 4; ++c) {
        const int i = 2 * ic + (c & 1), j = 2 * jc + (c >> 1);
        if (i >= ni || j >= nj) continue;
        const long long k = (long long)j * ni + i;
        s = s + (rhs[k] + nb_sum(sys, n, x, i, j, ni, nj, px, py) - sys[k] * x[k]);
    }
    coarse_rhs[kc] = s;
}

// x + c xc[block] (c the over-correction) and one sweep from it, into out (`prolong_and_sweep`).
extern "C" __global__ void mg_prolong_sweep(const real* __restrict__ sys, const real* __restrict__ rhs,
                                            const real* __restrict__ x, const real* __restrict__ xc,
                                            real* __restrict__ out, const int* __restrict__ ctrl, int ni, int nj,
                                            int px, int py, int nic) {
    GUARD(ctrl)
    const long long n = (long long)ni * nj;
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const int j = (int)(k / ni), i = (int)(k - (long long)j * ni);
    auto y = [x, xc, ni, nic](long long m) { return x[m] + MG_OVER_CORRECTION * xc[(m / ni / 2) * nic + (m % ni) / 2]; };
    out[k] = mg_relaxed(sys, n, rhs, y(k), y, i, j, ni, nj, px, py);
}

// One Jacobi sweep x -> out (`sweep`).
extern "C" __global__ void mg_sweep(const real* __restrict__ sys, const real* __restrict__ rhs,
                                    const real* __restrict__ x, real* __restrict__ out,
                                    const int* __restrict__ ctrl, int ni, int nj, int px, int py) {
    GUARD(ctrl)
    const long long n = (long long)ni * nj;
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const int j = (int)(k / ni), i = (int)(k - (long long)j * ni);
    out[k] = mg_relaxed(sys, n, rhs, x[k], [x](long long m) { return x[m]; }, i, j, ni, nj, px, py);
}

// The coarsest level (`coarsest`), one block of MG_COARSEST threads for its n <= MG_COARSEST
// unknowns: MG_COARSE_SWEEPS Jacobi sweeps from zero in shared memory, the result into x.
extern "C" __global__ void mg_coarsest(const real* __restrict__ sys, const real* __restrict__ rhs,
                                       real* __restrict__ x, const int* __restrict__ ctrl, int ni, int nj, int px,
                                       int py) {
    GUARD(ctrl)
    __shared__ real a[MG_COARSEST], b[MG_COARSEST];
    const long long n = (long long)ni * nj;
    const int k = threadIdx.x;
    const int j = k / ni, i = k - j * ni;
    if (k < n) a[k] = 0;
    __syncthreads();
    for (int s = 0; s < MG_COARSE_SWEEPS / 2; ++s) {
        if (k < n) b[k] = mg_relaxed(sys, n, rhs, a[k], [&](long long m) { return a[m]; }, i, j, ni, nj, px, py);
        __syncthreads();
        if (k < n) a[k] = mg_relaxed(sys, n, rhs, b[k], [&](long long m) { return b[m]; }, i, j, ni, nj, px, py);
        __syncthreads();
    }
    if (k < n) x[k] = a[k];
}
