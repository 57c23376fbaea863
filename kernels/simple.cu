// SIMPLE and SIMPLER on the staggered grid (src/solver/incompressible/simple/ on the CPU):
// generalized Newtonian viscosity, momentum coefficients (power law or deferred-correction TVD),
// the pressure force, the pressure(-correction) equation with its mass sums, the velocity and
// pressure corrections, the outflow mass-flow correction and the quadratic wall rule. Every
// formula is the CPU's in its operation order (no FMA contraction), so element-wise values round
// alike; sums are block partials combined by one block. The linear systems are stencil.cu's
// layout: one buffer of a_P, a_E, a_W, a_N, a_S, b (n values each).
#include "common.cuh"
#include "staggered.cuh"

// The slots of the SIMPLE scalar block (S_*) come from src/backend/cuda/slots.rs (SC_MEAN is
// the mean the pressure kernels subtract).

// Viscosity models (viscosity.rs `Viscosity`; codes fixed by src/solver/incompressible/simple/cuda.rs).
#define MU_POWER_LAW 1
#define MU_CARREAU 2
#define GAMMA_DOT_MIN ((real)1e-9)

// mu(gamma_dot) [Pa s] of the model, parameters m = (k, n) for the power law and
// (mu0, mu_inf, lambda, n) for Bird-Carreau (Viscosity::mu).
__device__ __forceinline__ real mu_of(int model, const real* m, real g) {
    g = fmax(fabs(g), GAMMA_DOT_MIN);
    if (model == MU_POWER_LAW) return m[0] * libm_pow_real(g, m[1] - (real)1.0);
    const real lg = m[2] * g;
    return m[1] + (m[0] - m[1]) * libm_pow_real((real)1.0 + lg * lg, (real)0.5 * (m[3] - (real)1.0));
}

// Viscosity at the cell centres (i, j in 1..=n) and at the corners (i, j in 0..=n; corner (i, j)
// the top-right one of cell (i, j)) from the shear rate of u, v (Simple::update_viscosity).
extern "C" __global__ void simple_viscosity(const real* __restrict__ u, const real* __restrict__ v,
                                            real* __restrict__ mu_c, real* __restrict__ mu_n, int nx, int ny,
                                            real dx, real dy, int model, real m0, real m1, real m2, real m3) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i > nx || j > ny) return;
    const int s = nx + 2;
    const real m[4] = {m0, m1, m2, m3};
#define AT(a, b) ((b) * s + (a))
#define UX(a, b) ((u[AT(a, b)] - u[AT((a) - 1, b)]) / dx)
#define VY(a, b) ((v[AT(a, b)] - v[AT(a, (b) - 1)]) / dy)
#define UC(a, b) ((real)0.5 * (u[AT((a) - 1, b)] + u[AT(a, b)]))
#define VC(a, b) ((real)0.5 * (v[AT(a, (b) - 1)] + v[AT(a, b)]))
    if (i >= 1 && j >= 1) {
        const real shear = (UC(i, j + 1) - UC(i, j - 1)) / ((real)2.0 * dy) +
                           (VC(i + 1, j) - VC(i - 1, j)) / ((real)2.0 * dx);
        const real ux = UX(i, j), vy = VY(i, j);
        const real g = sqrt((real)2.0 * (ux * ux) + (real)2.0 * (vy * vy) + shear * shear);
        mu_c[AT(i, j)] = mu_of(model, m, g);
    }
    const real shear = (u[AT(i, j + 1)] - u[AT(i, j)]) / dy + (v[AT(i + 1, j)] - v[AT(i, j)]) / dx;
    real normal = 0;
    const int ca[4] = {i, i + 1, i, i + 1}, cb[4] = {j, j, j + 1, j + 1};
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        const int a = min(max(ca[q], 1), nx), b = min(max(cb[q], 1), ny);
        const real ux = UX(a, b), vy = VY(a, b);
        normal = normal + ((real)2.0 * (ux * ux) + (real)2.0 * (vy * vy));
    }
    normal = normal / (real)4.0;
    mu_n[AT(i, j)] = mu_of(model, m, sqrt(normal + shear * shear));
#undef UX
#undef VY
#undef UC
#undef VC
}

// Ghost cells of the cell viscosity: the periodic image, or the neighbour inside.
extern "C" __global__ void simple_viscosity_ghosts(real* __restrict__ mu_c, int nx, int ny, int px, int py) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i > nx + 1 || j > ny + 1) return;
    if (i >= 1 && i <= nx && j >= 1 && j <= ny) return;
    const int s = nx + 2;
    const int si = i == 0 ? (px ? nx : 1) : i == nx + 1 ? (px ? 1 : nx) : i;
    const int sj = j == 0 ? (py ? ny : 1) : j == ny + 1 ? (py ? 1 : ny) : j;
    mu_c[AT(i, j)] = mu_c[AT(si, sj)];
}

// Patankar's A(|P|) of the power-law scheme (lim < 0), 1 for deferred correction.
__device__ __forceinline__ real a_of(int lim, real f, real d) {
    if (lim >= 0) return (real)1.0;
    if (!(d > (real)0)) return (real)0;
    const real t = fmax((real)1.0 - (real)0.1 * fabs(f / d), (real)0);
    const real t2 = t * t;
    return t * (t2 * t2);
}

// Deferred correction f (q_f^lim - q_f^upwind) of one face (coefficients.rs `corr`).
__device__ __forceinline__ real corr(int lim, real f, bool hm2, real qm2, real qm1, real qp1, bool hp2, real qp2) {
    if (f == (real)0) return (real)0;
    return f * (face_value<CONV_TVD>(lim, f, hm2, qm2, qm1, qp1, hp2, qp2) -
                face_value<CONV_TVD>(LIM_NONE, f, hm2, qm2, qm1, qp1, hp2, qp2));
}

// The tangential boundary of one side across (coefficients.rs): with a wall or inflow value
// (`imposed`), the quadratic wall rule through it and the first two nodes (a_P += 2 a, b += 8/3
// a U, the opposite link += a / 3); else zero gradient (a_P -= a). The side's link `a` is
// dropped either way.
__device__ __forceinline__ void tangential_side(int imposed, real wall, real& ap, real& b, real& a, real& a_opposite) {
    if (imposed) {
        ap = ap + (real)2.0 * a;
        b = b + (real)8.0 / (real)3.0 * a * wall;
        a_opposite = a_opposite + a / (real)3.0;
    } else {
        ap = ap - a;
    }
    a = 0;
}

// Momentum coefficients of component c (0 = u, 1 = v) on its unknowns, ni x nj of them from
// node (1, 1) (coefficients.rs `assemble`): the relaxed system into `sys` (b without the
// pressure force; transpose = 1 adds div(mu grad q^T), for a variable viscosity),
// d = A_along / a_P' (consistent = 1, SIMPLEC: A_along / (a_P' - sum a_nb)) into the ghosted
// `d`, and partial[block] = block sum of |a_P q_P| with the unrelaxed a_P. lim: the deferred-correction limiter, -1 for the power law.
// tan_plus / tan_minus: 1 where the tangential side across-plus / across-minus imposes a velocity
// (wall, inflow: wall_plus / wall_minus), 0 where it has zero tangential gradient.
extern "C" __global__ void momentum_assemble(const real* __restrict__ q, const real* __restrict__ o,
                                             const real* __restrict__ mu_c, const real* __restrict__ mu_n,
                                             real* __restrict__ sys, real* __restrict__ d, real* __restrict__ partial,
                                             int c, int nx, int ny, int px, int py, int ni, int nj, int lim,
                                             int tan_plus, real wall_plus, int tan_minus, real wall_minus,
                                             real h_along, real h_across, real rho, real alpha, int consistent, int transpose,
                                             real ap0, real b0) {
    const long long n = (long long)ni * nj;
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    real norm_acc = 0;
    if (idx < n) {
        const int bi = (int)(idx / ni), ai = (int)(idx - (long long)bi * ni);
        const int i = ai + 1, j = bi + 1;
        const int s = nx + 2;
        const int sa = c == 0 ? 1 : s, sc = c == 0 ? s : 1;
        const real area_along = h_across, area_across = h_along;
        const int n_across = c == 0 ? ny : nx, periodic_across = c == 0 ? py : px;
        const int periodic_along = c == 0 ? px : py;
        const int along_hi = c == 0 ? (px ? nx : nx - 1) : (py ? ny : ny - 1);
        const long long kk = (long long)j * s + i;
        const real half = (real)0.5 * rho;
        const real f_pa = half * area_along * (q[kk] + q[kk + sa]);
        const real f_ma = half * area_along * (q[kk - sa] + q[kk]);
        const real f_pc = half * area_across * (o[kk] + o[kk + sa]);
        const real f_mc = half * area_across * (o[kk - sc] + o[kk - sc + sa]);
        const real d_pa = mu_c[kk + sa] * area_along / h_along;
        const real d_ma = mu_c[kk] * area_along / h_along;
        const real d_pc = mu_n[kk] * area_across / h_across;
        const real d_mc = mu_n[kk - sc] * area_across / h_across;
        real a_pa = d_pa * a_of(lim, f_pa, d_pa) + fmax(-f_pa, (real)0);
        real a_ma = d_ma * a_of(lim, f_ma, d_ma) + fmax(f_ma, (real)0);
        real a_pc = d_pc * a_of(lim, f_pc, d_pc) + fmax(-f_pc, (real)0);
        real a_mc = d_mc * a_of(lim, f_mc, d_mc) + fmax(f_mc, (real)0);
        real ap = a_pa + a_ma + a_pc + a_mc;
        real b = b0;
        if (lim >= 0) {
            // Nodes along (da) and across (dc) from (i, j), as stored or periodic images.
            real f[8];
            bool h[8];
            const int da[8] = {-1, 2, -2, 1, 0, 0, 0, 0}, dc[8] = {0, 0, 0, 0, -1, 2, -2, 1};
#pragma unroll
            for (int t = 0; t < 8; ++t) {
                const int di = c == 0 ? da[t] : dc[t], dj = c == 0 ? dc[t] : da[t];
                h[t] = c == 0 ? u_at(q, i + di, j + dj, nx, ny, px, py, &f[t])
                              : v_at(q, i + di, j + dj, nx, ny, px, py, &f[t]);
            }
            b = b - (corr(lim, f_pa, h[0], f[0], q[kk], q[kk + sa], h[1], f[1]) -
                     corr(lim, f_ma, h[2], f[2], q[kk - sa], q[kk], h[3], f[3]) +
                     corr(lim, f_pc, h[4], f[4], q[kk], q[kk + sc], h[5], f[5]) -
                     corr(lim, f_mc, h[6], f[6], q[kk - sc], q[kk], h[7], f[7]));
        }
        if (transpose) {
            // div(mu grad q^T) (coefficients.rs `transpose_stress`, same operation order).
            b = b + (area_along * (mu_c[kk + sa] * (q[kk + sa] - q[kk]) - mu_c[kk] * (q[kk] - q[kk - sa])) +
                     area_across * (mu_n[kk] * (o[kk + sa] - o[kk]) - mu_n[kk - sc] * (o[kk - sc + sa] - o[kk - sc]))) /
                        h_along;
        }
        // Normal neighbours on boundary faces: known values.
        const int pos_along = c == 0 ? i : j;
        if (pos_along + 1 > along_hi && !periodic_along) {
            b = b + a_pa * q[kk + sa];
            a_pa = 0;
        }
        if (pos_along == 1 && !periodic_along) {
            b = b + a_ma * q[kk - sa];
            a_ma = 0;
        }
        // Tangential boundaries: the quadratic wall rule, or zero gradient.
        const int pos_across = c == 0 ? j : i;
        if (pos_across == n_across && !periodic_across)
            tangential_side(tan_plus, wall_plus, ap, b, a_pc, a_mc);
        if (pos_across == 1 && !periodic_across)
            tangential_side(tan_minus, wall_minus, ap, b, a_mc, a_pc);
        norm_acc = fabs(ap * q[kk]);
        real ap_r = ap / alpha;
        b = b + (((real)1.0 - alpha) * ap_r + ap0) * q[kk];
        ap_r = ap_r + ap0;
        sys[idx] = ap_r;
        sys[n + idx] = c == 0 ? a_pa : a_pc;      // a_E
        sys[2 * n + idx] = c == 0 ? a_ma : a_mc;  // a_W
        sys[3 * n + idx] = c == 0 ? a_pc : a_pa;  // a_N
        sys[4 * n + idx] = c == 0 ? a_mc : a_ma;  // a_S
        sys[5 * n + idx] = b;
        const real nb = a_pa + a_ma + a_pc + a_mc;
        d[kk] = area_along / (consistent ? ap_r - nb : ap_r);
    }
    const real t = block_sum(norm_acc);
    if (thread_linear() == 0) partial[blockIdx.x] = t;
}

// b += A_along (p_P - p_next) on every unknown of component c (coefficients.rs `add_pressure`).
extern "C" __global__ void add_pressure(const real* __restrict__ p, real* __restrict__ sys, int c, int nx, int ny,
                                        int ni, int nj, real area) {
    const long long n = (long long)ni * nj;
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n) return;
    const int bi = (int)(idx / ni), ai = (int)(idx - (long long)bi * ni);
    const int i = ai + 1, j = bi + 1;
    const int i2 = c == 0 ? i % nx + 1 : i, j2 = c == 0 ? j : j % ny + 1;
    const real here = p[(long long)(j - 1) * nx + i - 1];
    const real next = p[(long long)(j2 - 1) * nx + i2 - 1];
    sys[5 * n + idx] = sys[5 * n + idx] + area * (here - next);
}

// x[b ni + a] = q at node (a + 1, b + 1) of the ghosted array (to_x = 1), or back (to_x = 0).
extern "C" __global__ void unknowns_copy(real* __restrict__ q, real* __restrict__ x, int nx, int ni, int nj,
                                         int to_x) {
    const long long n = (long long)ni * nj;
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n) return;
    const int bi = (int)(idx / ni), ai = (int)(idx - (long long)bi * ni);
    const long long k = (long long)(bi + 1) * (nx + 2) + ai + 1;
    if (to_x) x[idx] = q[k];
    else q[k] = x[idx];
}

// The periodic seam faces of the pseudo-velocities: u^[0, j] = u^[nx, j], v^[i, 0] = v^[i, ny].
extern "C" __global__ void hat_seams(real* __restrict__ u, real* __restrict__ v, int nx, int ny, int px, int py) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const int s = nx + 2;
    if (px && t >= 1 && t <= ny) u[t * s] = u[t * s + nx];
    if (py && t >= 1 && t <= nx) v[t] = v[ny * s + t];
}

// The pressure(-correction) equation on the nx x ny cells (pressure_correction.rs `assemble`):
// a_E = rho d_e A_e etc., b the mass imbalance of u, v; partial holds the block sums of b, then
// of |b|, then of the face fluxes |F| (three runs of gridDim.x).
extern "C" __global__ void pressure_assemble(const real* __restrict__ du, const real* __restrict__ dv,
                                             const real* __restrict__ u, const real* __restrict__ v,
                                             real* __restrict__ sys, real* __restrict__ partial, int nx, int ny,
                                             int px, int py, real ax, real ay) {
    const long long n = (long long)nx * ny;
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    real sb = 0, ab = 0, fl = 0;
    if (idx < n) {
        const int j0 = (int)(idx / nx), i0 = (int)(idx - (long long)j0 * nx);
        const int i = i0 + 1, j = j0 + 1, s = nx + 2;
        const long long k = (long long)j * s + i;
        const int iw = px && i - 1 == 0 ? nx : i - 1, js = py && j - 1 == 0 ? ny : j - 1;
        const real ae = ax * du[k], aw = ax * du[(long long)j * s + iw];
        const real an = ay * dv[k], as = ay * dv[(long long)js * s + i];
        sys[n + idx] = ae;
        sys[2 * n + idx] = aw;
        sys[3 * n + idx] = an;
        sys[4 * n + idx] = as;
        sys[idx] = ae + aw + an + as;
        const real b = ax * (u[k - 1] - u[k]) + ay * (v[k - s] - v[k]);
        sys[5 * n + idx] = b;
        sb = b;
        ab = fabs(b);
        fl = fabs(ax * u[k]) + fabs(ay * v[k]);
    }
    const real t0 = block_sum(sb);
    const real t1 = block_sum(ab);
    const real t2 = block_sum(fl);
    if (thread_linear() == 0) {
        partial[blockIdx.x] = t0;
        partial[gridDim.x + blockIdx.x] = t1;
        partial[2 * gridDim.x + blockIdx.x] = t2;
    }
}

// One block: sc[SC_MEAN] = sum(b) / n (the compatibility shift), sc[S_IMBALANCE] = sum |b|,
// sc[S_FLUX] = sum |F|, from pressure_assemble's partials (nb blocks).
extern "C" __global__ void mass_finalize(const real* __restrict__ partial, int nb, real* __restrict__ sc, real n) {
    const real sb = sum_partials(partial, nb);
    const real ab = sum_partials(partial + nb, nb);
    const real fl = sum_partials(partial + 2 * nb, nb);
    if (thread_linear() == 0) {
        sc[SC_MEAN] = sb / n;
        sc[S_IMBALANCE] = ab;
        sc[S_FLUX] = fl;
    }
}

// One block: sc[slot] = sum of partial[0..nb) (a momentum residual or norm).
extern "C" __global__ void sum_into(const real* __restrict__ partial, int nb, real* __restrict__ sc, int slot) {
    const real s = sum_partials(partial, nb);
    if (thread_linear() == 0) sc[slot] = s;
}

// u += d (p'_P - p'_E), v += d (p'_P - p'_N) on every face with d != 0, p' cell-centred with
// periodic seams wrapping (pressure_correction.rs `correct_velocity`); with alpha_p > 0 (SIMPLE)
// also p += alpha_p p'.
extern "C" __global__ void correct_velocity(const real* __restrict__ du, const real* __restrict__ dv,
                                            const real* __restrict__ pc, real* __restrict__ u, real* __restrict__ v,
                                            real* __restrict__ p, real alpha_p, int nx, int ny) {
    const int i0 = blockIdx.x * blockDim.x + threadIdx.x;
    const int j0 = blockIdx.y * blockDim.y + threadIdx.y;
    if (i0 >= nx || j0 >= ny) return;
    const int i = i0 + 1, j = j0 + 1;
    const long long k = (long long)j * (nx + 2) + i, c = (long long)j0 * nx + i0;
    const real here = pc[c];
    if (du[k] != (real)0) u[k] = u[k] + du[k] * (here - pc[(long long)j0 * nx + i % nx]);
    if (dv[k] != (real)0) v[k] = v[k] + dv[k] * (here - pc[(long long)(j % ny) * nx + i0]);
    if (alpha_p > (real)0) p[c] = p[c] + alpha_p * here;
}

// Index (ghosted layout) of boundary face t (0-based along the side) of side 0-3 (left, right:
// u faces of rows t + 1; bottom, top: v faces of columns t + 1).
__device__ __forceinline__ long long boundary_face(int side, int t, int nx, int ny) {
    const long long s = nx + 2;
    switch (side) {
        case 0: return (long long)(t + 1) * s;
        case 1: return (long long)(t + 1) * s + nx;
        case 2: return (long long)(t + 1);
        default: return (long long)ny * s + t + 1;
    }
}

// One block: outflow faces take their inner neighbour's value, then all of them are scaled so
// that the outflow equals the net inflow through the other non-periodic faces (Simple::boundaries).
// out[side] = 1 on outflow sides, periodic[side] = 1 on periodic ones.
extern "C" __global__ void outflow_faces(real* __restrict__ u, real* __restrict__ v, int nx, int ny, int out0,
                                         int out1, int out2, int out3, int per0, int per1, int per2, int per3,
                                         real dx, real dy) {
    const int out[4] = {out0, out1, out2, out3}, per[4] = {per0, per1, per2, per3};
    const int s = nx + 2;
    real inflow = 0, outflow = 0;
    for (int side = 0; side < 4; ++side) {
        const real sign = side % 2 == 0 ? (real)1.0 : (real)-1.0;
        const int count = side < 2 ? ny : nx;
        real* q = side < 2 ? u : v;
        const real area = side < 2 ? dy : dx;
        for (int t = thread_linear(); t < count; t += block_threads()) {
            const long long k = boundary_face(side, t, nx, ny);
            const long long inner = side == 0 ? k + 1 : side == 1 ? k - 1 : side == 2 ? k + s : k - s;
            if (out[side]) {
                q[k] = q[inner];
                outflow = outflow - sign * q[k] * area;
            } else if (!per[side]) {
                inflow = inflow + sign * q[k] * area;
            }
        }
    }
    inflow = block_sum(inflow);
    outflow = block_sum(outflow);
    __shared__ real scale;
    __shared__ int apply;
    if (thread_linear() == 0) {
        apply = outflow != (real)0;
        scale = inflow / outflow;
    }
    __syncthreads();
    if (!apply) return;
    const real f = scale;
    for (int side = 0; side < 4; ++side) {
        if (!out[side]) continue;
        const int count = side < 2 ? ny : nx;
        real* q = side < 2 ? u : v;
        for (int t = thread_linear(); t < count; t += block_threads()) {
            const long long k = boundary_face(side, t, nx, ny);
            q[k] = q[k] * f;
        }
    }
}

// Quadratic wall rule for the tangential ghosts of walls and inflow sides:
// q_g = (8 U - 6 q_1 + q_2) / 3 (Simple::boundaries); wall[side] = 1 where the side imposes the
// tangential velocity val[side].
extern "C" __global__ void wall_rule(real* __restrict__ u, real* __restrict__ v, int nx, int ny, int wall0,
                                     int wall1, int wall2, int wall3, real val0, real val1, real val2, real val3) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const int s = nx + 2;
    const int wall[4] = {wall0, wall1, wall2, wall3};
    const real val[4] = {val0, val1, val2, val3};
    for (int side = 0; side < 4; ++side) {
        if (!wall[side]) continue;
        if (side < 2 && t <= ny) {
            const int g = side == 0 ? 0 : nx + 1, a = side == 0 ? 1 : nx, b = side == 0 ? 2 : nx - 1;
            const long long row = (long long)t * s;
            v[row + g] = ((real)8.0 * val[side] - (real)6.0 * v[row + a] + v[row + b]) / (real)3.0;
        }
        if (side >= 2 && t <= nx) {
            const int g = side == 2 ? 0 : ny + 1, a = side == 2 ? 1 : ny, b = side == 2 ? 2 : ny - 1;
            u[(long long)g * s + t] = ((real)8.0 * val[side] - (real)6.0 * u[(long long)a * s + t] +
                                       u[(long long)b * s + t]) / (real)3.0;
        }
    }
}

// One block: sc[S_VMAX] = the largest |u|, |v| over the grid's faces (`face_speeds`: ghosts
// excluded, as simple/mod.rs through `Layout::max_face_speeds`).
extern "C" __global__ void max_abs(const real* __restrict__ u, const real* __restrict__ v, real* __restrict__ sc,
                                   int nx, int ny, int px, int py) {
    const long long s = nx + 2, n = s * (ny + 2);
    real m = 0;
    for (long long k = thread_linear(); k < n; k += block_threads()) {
        real a, b;
        face_speeds(u, v, (int)k, (int)(k % s), (int)(k / s), nx, ny, px, py, &a, &b);
        m = fmax(m, fmax(a, b));
    }
    const real r = block_max(m);
    if (thread_linear() == 0) sc[S_VMAX] = r;
}
#undef AT
