// SIMPLE, SIMPLEC and SIMPLER on the staggered grid in 2D and 3D (-DDIM; src/solver/incompressible/
// simple/ on the CPU, `Simple<D>`):
// generalized Newtonian viscosity, momentum coefficients (power law or deferred-correction TVD),
// the pressure force, the pressure(-correction) equation with its mass sums, the velocity and
// pressure corrections, the outflow mass-flow correction and the quadratic wall rule. Every
// formula is the CPU's in its operation order (no FMA contraction), so element-wise values round
// alike; sums are block partials combined by one block. The linear systems are stencil.cu's
// layout: one buffer of a_P, each axis' upper and lower links, b (n values each).
//
// Every kernel takes the grid as STAG (cells and periodicity per axis; nz = 1, pz = 0 in 2D) and
// the velocity as three component arrays (the third unused in 2D); node index idx is ghosted
// (staggered.rs `Layout`), component c at idx on the upper face of cell idx normal to axis c.
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

#define STAG int nx, int ny, int nz, int px, int py, int pz
#define VEL const real* __restrict__ u0, const real* __restrict__ u1, const real* __restrict__ u2

// The box of the cells, 1..=n along every axis.
__device__ __forceinline__ void cell_box(const Stag& g, int lo[DIM], int hi[DIM]) {
#pragma unroll
    for (int a = 0; a < DIM; ++a) lo[a] = 1, hi[a] = g.n[a];
}

// This thread's node of the box lo..=hi (x fastest): its indices idx and flat index k; false
// past the box's last node.
__device__ __forceinline__ bool thread_node(const Stag& g, const int lo[DIM], const int hi[DIM], int idx[DIM], int& k) {
    int m[DIM];
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= box_len(lo, hi, m)) return false;
    k = box_node(g, t, lo, m, idx);
    return true;
}

// Area of a cell face normal to `axis`: the product of the other spacings, ascending
// (coefficients.rs `face_area`).
__device__ __forceinline__ real face_area(const real h[DIM], int axis) {
    real a = 0;
    bool first = true;
#pragma unroll
    for (int b = 0; b < DIM; ++b) {
        if (b == axis) continue;
        a = first ? h[b] : a * h[b];
        first = false;
    }
    return a;
}

// Index of the edge array of the axis pair (c, a) (coefficients.rs `edge`).
__device__ __forceinline__ int edge_of(int c, int a) { return min(c, a) + max(c, a) - 1; }

// The velocity gradient of viscosity_field.rs `Gradient` at cell centres.
struct Gradient {
    Stag g;
    real h[DIM];
    const real* vel[DIM];

    // dq_a/dx_a across cell k.
    __device__ __forceinline__ real normal(int a, int k) const {
        return (vel[a][k] - vel[a][k - g.st[a]]) / h[a];
    }
    // Component c at the centre of cell k.
    __device__ __forceinline__ real centred(int c, int k) const {
        return (real)0.5 * (vel[c][k - g.st[c]] + vel[c][k]);
    }
    // dq_c/dx_a + dq_a/dx_c at the centre of cell k, central differences.
    __device__ __forceinline__ real shear_at_centre(int c, int a, int k) const {
        return (centred(c, k + g.st[a]) - centred(c, k - g.st[a])) / ((real)2.0 * h[a]) +
               (centred(a, k + g.st[c]) - centred(a, k - g.st[c])) / ((real)2.0 * h[c]);
    }
    // 2 S:S at the centre of cell k without the shear of the pair (skip_c, skip_a) (-1: none).
    __device__ __forceinline__ real strain_at_centre(int k, int skip_c, int skip_a) const {
        real s = 0;
#pragma unroll
        for (int a = 0; a < DIM; ++a) {
            const real n = normal(a, k);
            s = s + (real)2.0 * (n * n);
        }
#pragma unroll
        for (int c = 0; c < DIM; ++c)
            for (int a = c + 1; a < DIM; ++a) {
                if (c == skip_c && a == skip_a) continue;
                const real sh = shear_at_centre(c, a, k);
                s = s + sh * sh;
            }
        return s;
    }
};

__device__ __forceinline__ Gradient make_gradient(const Stag& g, const real* u0, const real* u1, const real* u2,
                                                  real hx, real hy, real hz) {
    Gradient d;
    d.g = g;
    const real h3[3] = {hx, hy, hz};
    const real* v3[3] = {u0, u1, u2};
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        d.h[a] = h3[a];
        d.vel[a] = v3[a];
    }
    return d;
}

#define MODEL int model, real m0, real m1, real m2, real m3

// Viscosity at the cell centres from the shear rate of the velocity (viscosity_field.rs `update`).
extern "C" __global__ void simple_viscosity(VEL, real* __restrict__ mu_c, STAG, real hx, real hy, real hz, MODEL) {
    const Stag g = make_stag(nx, ny, nz, px, py, pz);
    int lo[DIM], hi[DIM], idx[DIM], k;
    cell_box(g, lo, hi);
    if (!thread_node(g, lo, hi, idx, k)) return;
    const Gradient d = make_gradient(g, u0, u1, u2, hx, hy, hz);
    const real mp[4] = {m0, m1, m2, m3};
    mu_c[k] = mu_of(model, mp, sqrt(d.strain_at_centre(k, -1, -1)));
}

// Viscosity on the edges of the axis pair (c, a), c < a (0..=n along c and a, 1..=n along the
// third): the pair's shear by the staggered difference there, the rest of 2 S:S the mean of the
// four cells around the edge, clamped to the grid.
extern "C" __global__ void simple_viscosity_edges(VEL, real* __restrict__ mu_e, int c, int a, STAG, real hx, real hy,
                                                  real hz, MODEL) {
    const Stag g = make_stag(nx, ny, nz, px, py, pz);
    int lo[DIM], hi[DIM], idx[DIM], k;
    cell_box(g, lo, hi);
    lo[c] = lo[a] = 0;
    if (!thread_node(g, lo, hi, idx, k)) return;
    const Gradient d = make_gradient(g, u0, u1, u2, hx, hy, hz);
    const real shear = (d.vel[c][k + g.st[a]] - d.vel[c][k]) / d.h[a] + (d.vel[a][k + g.st[c]] - d.vel[a][k]) / d.h[c];
    real rest = 0;
    const int oc[4] = {0, 1, 0, 1}, oa[4] = {0, 0, 1, 1};
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        int at[DIM];
#pragma unroll
        for (int b = 0; b < DIM; ++b) at[b] = idx[b];
        at[c] = min(max(idx[c] + oc[q], 1), g.n[c]);
        at[a] = min(max(idx[a] + oa[q], 1), g.n[a]);
        int f = 0;
#pragma unroll
        for (int b = 0; b < DIM; ++b) f += at[b] * g.st[b];
        rest = rest + d.strain_at_centre(f, c, a);
    }
    rest = rest / (real)4.0;
    const real mp[4] = {m0, m1, m2, m3};
    mu_e[k] = mu_of(model, mp, sqrt(rest + shear * shear));
}

// Ghost cells of the cell viscosity: the periodic image, or the neighbour inside.
extern "C" __global__ void simple_viscosity_ghosts(real* __restrict__ mu_c, STAG) {
    const Stag g = make_stag(nx, ny, nz, px, py, pz);
    int lo[DIM], hi[DIM], idx[DIM], k;
#pragma unroll
    for (int a = 0; a < DIM; ++a) lo[a] = 0, hi[a] = g.n[a] + 1;
    if (!thread_node(g, lo, hi, idx, k)) return;
    int f = 0;
    bool ghost = false;
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        const int i = idx[a], n = g.n[a];
        const int from = i == 0 ? (g.per[a] ? n : 1) : i == n + 1 ? (g.per[a] ? 1 : n) : i;
        ghost = ghost || from != i;
        f += from * g.st[a];
    }
    if (ghost) mu_c[k] = mu_c[f];
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

// The tangential boundary of one side (coefficients.rs): with a wall or inflow value
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

// The sides' tangential conditions for component c, by side 2 axis + s: imposed (wall or inflow)
// and the value of component c there.
#define SIDES int t0, int t1, int t2, int t3, int t4, int t5, real w0, real w1, real w2, real w3, real w4, real w5

// Momentum coefficients of component c on its unknowns (coefficients.rs `assemble`): the relaxed
// system into `sys` (b without the pressure force; transpose = 1 adds div(mu grad q^T), for a
// variable viscosity), d = A_c / a_P' (consistent = 1, SIMPLEC: A_c / (a_P' - sum a_nb)) into the
// ghosted `d`, and partial[block] = block sum of |a_P q_P| with the unrelaxed a_P. The faces'
// sums run along c first, then the other axes ascending (`along_first`). lim: the
// deferred-correction limiter, -1 for the power law; mu_e0..2 the edge viscosities (xy, xz, yz);
// src: a momentum source per unit mass on component c's nodes (a rotor's accelerations; null
// without one), added as rho src vol with vol the control volume.
extern "C" __global__ void momentum_assemble(VEL, const real* __restrict__ mu_c, const real* __restrict__ mu_e0,
                                             const real* __restrict__ mu_e1, const real* __restrict__ mu_e2,
                                             real* __restrict__ sys, real* __restrict__ d, real* __restrict__ partial,
                                             int c, STAG, real hx, real hy, real hz, int lim, SIDES, real rho,
                                             real alpha, int consistent, int transpose, real ap0, real b0,
                                             const real* __restrict__ src, real vol) {
    const Stag g = make_stag(nx, ny, nz, px, py, pz);
    const real h3[3] = {hx, hy, hz};
    const real* v3[3] = {u0, u1, u2};
    const real* e3[3] = {mu_e0, mu_e1, mu_e2};
    const int imposed[6] = {t0, t1, t2, t3, t4, t5};
    const real wall[6] = {w0, w1, w2, w3, w4, w5};
    real h[DIM];
    const real* vel[DIM];
#pragma unroll
    for (int a = 0; a < DIM; ++a) h[a] = h3[a], vel[a] = v3[a];
    int lo[DIM], hi[DIM], m[DIM], idx[DIM];
    cell_box(g, lo, hi);
    const int last_along = g.per[c] ? g.n[c] : g.n[c] - 1;
    hi[c] = last_along;
    const long long n = box_len(lo, hi, m);
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    real norm_acc = 0;
    if (t < n) {
        const int kk = box_node(g, t, lo, m, idx);
        const real* q = vel[c];
        const int sc = g.st[c];
        const real area_c = face_area(h, c);
        const real half = (real)0.5 * rho;
        real plus[DIM], minus[DIM], f_plus[DIM], f_minus[DIM];
        f_plus[c] = half * area_c * (q[kk] + q[kk + sc]);
        f_minus[c] = half * area_c * (q[kk - sc] + q[kk]);
        {
            const real dp = mu_c[kk + sc] * area_c / h[c];
            const real dm = mu_c[kk] * area_c / h[c];
            plus[c] = dp * a_of(lim, f_plus[c], dp) + fmax(-f_plus[c], (real)0);
            minus[c] = dm * a_of(lim, f_minus[c], dm) + fmax(f_minus[c], (real)0);
        }
        real ap = plus[c] + minus[c];
        // div(mu grad q^T) (coefficients.rs `transpose_stress`, same operation order): the along
        // faces, then each other axis' faces in the loop below.
        real ts = transpose ? area_c * (mu_c[kk + sc] * (q[kk + sc] - q[kk]) - mu_c[kk] * (q[kk] - q[kk - sc])) : (real)0;
#pragma unroll
        for (int a = 0; a < DIM; ++a) {
            if (a == c) continue;
            const real* o = vel[a];
            const real* mu = e3[edge_of(c, a)];
            const int sa = g.st[a];
            const real area = face_area(h, a);
            f_plus[a] = half * area * (o[kk] + o[kk + sc]);
            f_minus[a] = half * area * (o[kk - sa] + o[kk - sa + sc]);
            const real dp = mu[kk] * area / h[a];
            const real dm = mu[kk - sa] * area / h[a];
            plus[a] = dp * a_of(lim, f_plus[a], dp) + fmax(-f_plus[a], (real)0);
            minus[a] = dm * a_of(lim, f_minus[a], dm) + fmax(f_minus[a], (real)0);
            ap += plus[a];
            ap += minus[a];
            if (transpose) ts += area * (mu[kk] * (o[kk + sc] - o[kk]) - mu[kk - sa] * (o[kk - sa + sc] - o[kk - sa]));
        }
        real b = b0;
        if (src != 0) b = b + rho * src[kk] * vol;
        if (lim >= 0) {
            real tc = 0;
            for (int r = 0; r < DIM; ++r) {
                const int a = r == 0 ? c : (r <= c ? r - 1 : r);
                const int sa = g.st[a];
                real f1, f2, f3, f4;
                const bool b1 = far_value(q, g, c, a, idx, kk, -1, &f1);
                const bool b2 = far_value(q, g, c, a, idx, kk, 2, &f2);
                const bool b3 = far_value(q, g, c, a, idx, kk, -2, &f3);
                const bool b4 = far_value(q, g, c, a, idx, kk, 1, &f4);
                tc += corr(lim, f_plus[a], b1, f1, q[kk], q[kk + sa], b2, f2);
                tc -= corr(lim, f_minus[a], b3, f3, q[kk - sa], q[kk], b4, f4);
            }
            b -= tc;
        }
        if (transpose) b += ts / h[c];
        // Normal neighbours on boundary faces: known values.
        if (!g.per[c]) {
            if (idx[c] == last_along) {
                b += plus[c] * q[kk + sc];
                plus[c] = 0;
            }
            if (idx[c] == 1) {
                b += minus[c] * q[kk - sc];
                minus[c] = 0;
            }
        }
        // Tangential boundaries: the quadratic wall rule, or zero gradient.
#pragma unroll
        for (int a = 0; a < DIM; ++a) {
            if (a == c || g.per[a]) continue;
            if (idx[a] == g.n[a]) tangential_side(imposed[2 * a + 1], wall[2 * a + 1], ap, b, plus[a], minus[a]);
            if (idx[a] == 1) tangential_side(imposed[2 * a], wall[2 * a], ap, b, minus[a], plus[a]);
        }
        norm_acc = fabs(ap * q[kk]);
        real ap_r = ap / alpha;
        b += (((real)1.0 - alpha) * ap_r + ap0) * q[kk];
        ap_r = ap_r + ap0;
        real nb = 0;
        for (int r = 0; r < DIM; ++r) {
            const int a = r == 0 ? c : (r <= c ? r - 1 : r);
            nb = nb + plus[a] + minus[a];
        }
        sys[t] = ap_r;
#pragma unroll
        for (int a = 0; a < DIM; ++a) {
            sys[(1 + 2 * a) * n + t] = plus[a];
            sys[(2 + 2 * a) * n + t] = minus[a];
        }
        sys[(1 + 2 * DIM) * n + t] = b;
        d[kk] = area_c / (consistent ? ap_r - nb : ap_r);
    }
    const real tsum = block_sum(norm_acc);
    if (thread_linear() == 0) partial[blockIdx.x] = tsum;
}

// The box of component c's unknowns (coefficients.rs `unknowns`).
__device__ __forceinline__ long long unknowns_box(const Stag& g, int c, int lo[DIM], int hi[DIM], int m[DIM]) {
    cell_box(g, lo, hi);
    hi[c] = g.per[c] ? g.n[c] : g.n[c] - 1;
    return box_len(lo, hi, m);
}

// b += A_c (p_P - p_next) on every unknown of component c (coefficients.rs `add_pressure`).
extern "C" __global__ void add_pressure(const real* __restrict__ p, real* __restrict__ sys, int c, STAG, real area) {
    const Stag g = make_stag(nx, ny, nz, px, py, pz);
    int lo[DIM], hi[DIM], m[DIM], idx[DIM];
    const long long n = unknowns_box(g, c, lo, hi, m);
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    box_node(g, t, lo, m, idx);
    int next[DIM];
#pragma unroll
    for (int a = 0; a < DIM; ++a) next[a] = idx[a];
    next[c] = idx[c] % g.n[c] + 1;
    const long long b = (1 + 2 * DIM) * n + t;
    sys[b] = sys[b] + area * (p[cell_of(g, idx)] - p[cell_of(g, next)]);
}

// x[t] = q at the t-th unknown of component c (to_x = 1), or back (to_x = 0).
extern "C" __global__ void unknowns_copy(real* __restrict__ q, real* __restrict__ x, int c, STAG, int to_x) {
    const Stag g = make_stag(nx, ny, nz, px, py, pz);
    int lo[DIM], hi[DIM], m[DIM], idx[DIM];
    const long long n = unknowns_box(g, c, lo, hi, m);
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    const int k = box_node(g, t, lo, m, idx);
    if (to_x) x[t] = q[k];
    else q[k] = x[t];
}

// The periodic seam faces of component c's pseudo-velocity: face 0 the image of face n.
extern "C" __global__ void hat_seams(real* __restrict__ hat, int c, STAG) {
    const Stag g = make_stag(nx, ny, nz, px, py, pz);
    if (!g.per[c]) return;
    int lo[DIM], hi[DIM], idx[DIM], k;
    cell_box(g, lo, hi);
    lo[c] = hi[c] = 0;
    if (!thread_node(g, lo, hi, idx, k)) return;
    hat[k] = hat[k + g.n[c] * g.st[c]];
}

// The pressure(-correction) equation on the cells (pressure_correction.rs `assemble`):
// a_nb = rho d_f A_f, b the mass imbalance of the velocity q0..2; partial holds the block sums of
// b, then of |b|, then of the face fluxes |F| (three runs of gridDim.x).
extern "C" __global__ void pressure_assemble(const real* __restrict__ d0, const real* __restrict__ d1,
                                             const real* __restrict__ d2, VEL, real* __restrict__ sys,
                                             real* __restrict__ partial, STAG, real ra0, real ra1, real ra2) {
    const Stag g = make_stag(nx, ny, nz, px, py, pz);
    const real* d3[3] = {d0, d1, d2};
    const real* v3[3] = {u0, u1, u2};
    const real r3[3] = {ra0, ra1, ra2};
    int lo[DIM], hi[DIM], m[DIM], idx[DIM];
    cell_box(g, lo, hi);
    const long long n = box_len(lo, hi, m);
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    real sb = 0, ab = 0, fl = 0;
    if (t < n) {
        const int k = box_node(g, t, lo, m, idx);
        real ap = 0, b = 0, f = 0;
#pragma unroll
        for (int a = 0; a < DIM; ++a) {
            const int s = g.st[a];
            const int lower = g.per[a] && idx[a] == 1 ? k + (g.n[a] - 1) * s : k - s;
            const real plus = r3[a] * d3[a][k], minus = r3[a] * d3[a][lower];
            sys[(1 + 2 * a) * n + t] = plus;
            sys[(2 + 2 * a) * n + t] = minus;
            ap = ap + plus + minus;
            b += r3[a] * (v3[a][k - s] - v3[a][k]);
            f += fabs(r3[a] * v3[a][k]);
        }
        sys[t] = ap;
        sys[(1 + 2 * DIM) * n + t] = b;
        sb = b;
        ab = fabs(b);
        fl = f;
    }
    const real s0 = block_sum(sb);
    const real s1 = block_sum(ab);
    const real s2 = block_sum(fl);
    if (thread_linear() == 0) {
        partial[blockIdx.x] = s0;
        partial[gridDim.x + blockIdx.x] = s1;
        partial[2 * gridDim.x + blockIdx.x] = s2;
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

// q_c += d_c (p'_P - p'_next) on every face with d_c != 0, p' cell-centred with periodic seams
// wrapping (pressure_correction.rs `correct_velocity`); with alpha_p > 0 (SIMPLE) also
// p += alpha_p p'.
extern "C" __global__ void correct_velocity(const real* __restrict__ d0, const real* __restrict__ d1,
                                            const real* __restrict__ d2, const real* __restrict__ pc,
                                            real* __restrict__ q0, real* __restrict__ q1, real* __restrict__ q2,
                                            real* __restrict__ p, real alpha_p, STAG) {
    const Stag g = make_stag(nx, ny, nz, px, py, pz);
    const real* d3[3] = {d0, d1, d2};
    real* q3[3] = {q0, q1, q2};
    int lo[DIM], hi[DIM], idx[DIM], k;
    cell_box(g, lo, hi);
    if (!thread_node(g, lo, hi, idx, k)) return;
    const long long here_at = cell_of(g, idx);
    const real here = pc[here_at];
#pragma unroll
    for (int c = 0; c < DIM; ++c) {
        if (d3[c][k] == (real)0) continue;
        int next[DIM];
#pragma unroll
        for (int a = 0; a < DIM; ++a) next[a] = idx[a];
        next[c] = idx[c] % g.n[c] + 1;
        q3[c][k] = q3[c][k] + d3[c][k] * (here - pc[cell_of(g, next)]);
    }
    if (alpha_p > (real)0) p[here_at] = p[here_at] + alpha_p * here;
}

// The faces of side s of axis a: fixed along a (0 or n), the cells across.
__device__ __forceinline__ long long side_faces(const Stag& g, int a, int s, int lo[DIM], int hi[DIM], int m[DIM]) {
#pragma unroll
    for (int b = 0; b < DIM; ++b) lo[b] = 1, hi[b] = g.n[b];
    lo[a] = hi[a] = s * g.n[a];
    return box_len(lo, hi, m);
}

// One block: outflow faces take their inner neighbour's value, then all of them are scaled so
// that the outflow equals the net inflow through the other non-periodic faces (boundary.rs
// `apply`). out_mask / per_mask: bit 2 axis + s set on outflow / periodic sides; area of the
// faces normal to each axis.
extern "C" __global__ void outflow_faces(real* __restrict__ q0, real* __restrict__ q1, real* __restrict__ q2, STAG,
                                         int out_mask, int per_mask, real area0, real area1, real area2) {
    const Stag g = make_stag(nx, ny, nz, px, py, pz);
    real* q3[3] = {q0, q1, q2};
    const real ar[3] = {area0, area1, area2};
    real inflow = 0, outflow = 0;
    int lo[DIM], hi[DIM], m[DIM], idx[DIM];
    for (int a = 0; a < DIM; ++a)
        for (int s = 0; s < 2; ++s) {
            const int side = 2 * a + s;
            const real sign = s == 0 ? (real)1.0 : (real)-1.0;
            const int inner = s == 0 ? g.st[a] : -g.st[a];
            real* q = q3[a];
            const long long count = side_faces(g, a, s, lo, hi, m);
            for (long long t = thread_linear(); t < count; t += block_threads()) {
                const int k = box_node(g, t, lo, m, idx);
                if ((out_mask >> side) & 1) {
                    q[k] = q[k + inner];
                    outflow = outflow - sign * q[k] * ar[a];
                } else if (!((per_mask >> side) & 1)) {
                    inflow = inflow + sign * q[k] * ar[a];
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
    for (int a = 0; a < DIM; ++a)
        for (int s = 0; s < 2; ++s) {
            if (!((out_mask >> (2 * a + s)) & 1)) continue;
            const long long count = side_faces(g, a, s, lo, hi, m);
            for (long long t = thread_linear(); t < count; t += block_threads()) {
                const int k = box_node(g, t, lo, m, idx);
                q3[a][k] = q3[a][k] * f;
            }
        }
}

// Quadratic wall rule for the tangential ghosts of component c on side s of axis a (a wall or an
// inflow, tangential value `wall`): q_g = (8 U - 6 q_1 + q_2) / 3 (boundary.rs `apply`), over
// 0..=n along c and the cells along the third axis.
extern "C" __global__ void wall_rule(real* __restrict__ q, int c, int a, int s, real wall, STAG) {
    const Stag g = make_stag(nx, ny, nz, px, py, pz);
    int lo[DIM], hi[DIM], idx[DIM], k;
    cell_box(g, lo, hi);
    lo[c] = 0;
    lo[a] = hi[a] = s == 0 ? 0 : g.n[a] + 1;
    if (!thread_node(g, lo, hi, idx, k)) return;
    const int toward = s == 0 ? g.st[a] : -g.st[a];
    q[k] = ((real)8.0 * wall - (real)6.0 * q[k + toward] + q[k + 2 * toward]) / (real)3.0;
}

// Block maxima of |q_c| over the grid's faces (`speed_face`: ghosts excluded, as simple/mod.rs
// through `Layout::max_face_speeds`) into partial[block], over the ghosted nodes.
extern "C" __global__ void max_abs_partial(VEL, real* __restrict__ partial, STAG) {
    const Stag g = make_stag(nx, ny, nz, px, py, pz);
    const real* v3[3] = {u0, u1, u2};
    int lo[DIM], hi[DIM], m[DIM], idx[DIM];
#pragma unroll
    for (int a = 0; a < DIM; ++a) lo[a] = 0, hi[a] = g.n[a] + 1;
    const long long n = box_len(lo, hi, m);
    real mx = 0;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += (long long)gridDim.x * blockDim.x) {
        const int k = box_node(g, t, lo, m, idx);
#pragma unroll
        for (int c = 0; c < DIM; ++c)
            if (speed_face(g, c, idx)) mx = fmax(mx, fabs(v3[c][k]));
    }
    const real r = block_max(mx);
    if (thread_linear() == 0) partial[blockIdx.x] = r;
}

// One block: sc[S_VMAX] = the largest of max_abs_partial's nb block maxima.
extern "C" __global__ void max_abs(const real* __restrict__ partial, int nb, real* __restrict__ sc) {
    const real r = max_partials(partial, nb);
    if (thread_linear() == 0) sc[S_VMAX] = r;
}
