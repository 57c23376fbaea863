// The MUSCL-Hancock scheme on the device, step for step the CPU's
// (src/solver/compressible/muscl_hancock.rs, riemann.rs, exact_riemann.rs): per step
// euler_ghosts (y then x), mh_faces_<limiter> (slopes and the Hancock half-step, one thread per
// cell), mh_flux_update_<riemann solver> (per block, the fluxes through its cells' faces into
// shared memory, then the update of its cells, the step reduction fused in),
// euler_reduce_finalize (which also chooses the next step's dt).
// Storage and operation order: see euler.cuh.
#include "common.cuh"
#include "euler.cuh"

// Riemann solvers: RS_* of src/backend/cuda/slots.rs.

// ---- The exact Riemann solver (Toro 2009 ch. 4), in double as on the CPU ----

// +infinity in double.
#define DBL_INF __longlong_as_double(0x7ff0000000000000LL)

struct gas {
    double rho, u, p;
};

struct exact_rp {
    double g;
    gas l, r;
    bool has_star;
    double ps, us, rho_l, rho_r;
};

__device__ __forceinline__ double gas_c(double g, gas w) { return sqrt(g * w.p / w.rho); }

// Toro's pressure function f_K(p) and its derivative (eqs. 4.6, 4.7, 4.37).
__device__ void pressure_function(double g, double p, gas k, double* f, double* df) {
    if (p > k.p) {
        const double a = 2.0 / ((g + 1.0) * k.rho);
        const double b = (g - 1.0) / (g + 1.0) * k.p;
        const double q = sqrt(a / (p + b));
        *f = (p - k.p) * q;
        *df = q * (1.0 - 0.5 * (p - k.p) / (b + p));
    } else {
        const double c = gas_c(g, k);
        const double ratio = p / k.p;
        *f = 2.0 * c / (g - 1.0) * (libm_pow_f64(ratio, (g - 1.0) / (2.0 * g)) - 1.0);
        *df = libm_pow_f64(ratio, -(g + 1.0) / (2.0 * g)) / (k.rho * c);
    }
}

// Toro's adaptive initial guess (sec. 9.5.1).
__device__ double star_guess(double g, gas l, gas r) {
    const double cl = gas_c(g, l), cr = gas_c(g, r);
    const double ppv = fmax(0.5 * (l.p + r.p) - 0.125 * (r.u - l.u) * (l.rho + r.rho) * (cl + cr), 0.0);
    const double pmin = fmin(l.p, r.p), pmax = fmax(l.p, r.p);
    if (pmax / pmin <= 2.0 && ppv >= pmin && ppv <= pmax) return ppv;
    if (ppv < pmin) {
        const double z = (g - 1.0) / (2.0 * g);
        const double num = cl + cr - 0.5 * (g - 1.0) * (r.u - l.u);
        return libm_pow_f64(num / (cl / libm_pow_f64(l.p, z) + cr / libm_pow_f64(r.p, z)), 1.0 / z);
    }
    const double gl = sqrt(2.0 / ((g + 1.0) * l.rho) / ((g - 1.0) / (g + 1.0) * l.p + ppv));
    const double gr = sqrt(2.0 / ((g + 1.0) * r.rho) / ((g - 1.0) / (g + 1.0) * r.p + ppv));
    return fmax((gl * l.p + gr * r.p - (r.u - l.u)) / (gl + gr), 1e-12 * pmin);
}

__device__ exact_rp exact_new(double g, gas l, gas r) {
    exact_rp e;
    e.g = g;
    e.l = l;
    e.r = r;
    e.has_star = false;
    e.ps = e.us = e.rho_l = e.rho_r = 0.0;
    if (!(l.rho > 0.0 && r.rho > 0.0)) return e;
    const double critical = 2.0 * (gas_c(g, l) + gas_c(g, r)) / (g - 1.0);
    if (!(critical > r.u - l.u)) return e;
    const double du = r.u - l.u;
    double p = fmax(star_guess(g, l, r), 2.2250738585072014e-308);
    double fl, dl, fr, dr;
    for (int it = 0; it < 200; it++) {
        pressure_function(g, p, l, &fl, &dl);
        pressure_function(g, p, r, &fr, &dr);
        double next = p - (fl + fr + du) / (dl + dr);
        if (next <= 0.0) next = 0.1 * p;
        const double change = fabs(next - p) / (0.5 * (next + p));
        p = next;
        if (change <= 1e-15) break;
    }
    pressure_function(g, p, l, &fl, &dl);
    pressure_function(g, p, r, &fr, &dr);
    e.has_star = true;
    e.ps = p;
    e.us = 0.5 * (l.u + r.u) + 0.5 * (fr - fl);
    const double gm = (g - 1.0) / (g + 1.0);
    double ratio = p / l.p;
    e.rho_l = p > l.p ? l.rho * (ratio + gm) / (gm * ratio + 1.0) : l.rho * libm_pow_f64(ratio, 1.0 / g);
    ratio = p / r.p;
    e.rho_r = p > r.p ? r.rho * (ratio + gm) / (gm * ratio + 1.0) : r.rho * libm_pow_f64(ratio, 1.0 / g);
    return e;
}

// State inside the rarefaction fan of k on the ray s (Toro eqs. 4.56, 4.63).
__device__ gas exact_fan(double g, gas k, double s, bool left) {
    const double c = gas_c(g, k);
    const double sign = left ? 1.0 : -1.0;
    const double base = 2.0 / (g + 1.0) + sign * (g - 1.0) / ((g + 1.0) * c) * (k.u - s);
    gas out;
    out.rho = k.rho * libm_pow_f64(base, 2.0 / (g - 1.0));
    out.u = 2.0 / (g + 1.0) * (sign * c + 0.5 * (g - 1.0) * k.u + s);
    out.p = k.p * libm_pow_f64(base, 2.0 * g / (g - 1.0));
    return out;
}

// Left edge of a vacuum region (the contact speed of a solution without a star region).
__device__ double vacuum_left_edge(const exact_rp& e) {
    return e.l.rho > 0.0 ? e.l.u + 2.0 * gas_c(e.g, e.l) / (e.g - 1.0) : -DBL_INF;
}

// The state on the ray s (ExactRiemann::sample), vacuum cases included (Toro sec. 4.6).
__device__ gas exact_sample(const exact_rp& e, double s) {
    const double g = e.g;
    const gas l = e.l, r = e.r;
    const gas vac = {0.0, 0.0, 0.0};
    if (!e.has_star) {
        double lh = -DBL_INF, rh = DBL_INF, rt = DBL_INF;
        const double lt = vacuum_left_edge(e);
        if (l.rho > 0.0) lh = l.u - gas_c(g, l);
        if (r.rho > 0.0) {
            const double cr = gas_c(g, r);
            rh = r.u + cr;
            rt = r.u - 2.0 * cr / (g - 1.0);
        }
        if (s <= lt) return s <= lh ? l : exact_fan(g, l, s, true);
        if (s >= rt) return s >= rh ? r : exact_fan(g, r, s, false);
        return vac;
    }
    const gas star_l = {e.rho_l, e.us, e.ps}, star_r = {e.rho_r, e.us, e.ps};
    if (s <= e.us) {
        if (l.rho <= 0.0) return vac;
        const double cl = gas_c(g, l);
        if (e.ps > l.p) {
            const double sl = l.u - cl * sqrt((g + 1.0) / (2.0 * g) * e.ps / l.p + (g - 1.0) / (2.0 * g));
            return s <= sl ? l : star_l;
        }
        const double head = l.u - cl;
        const double tail = e.us - cl * libm_pow_f64(e.ps / l.p, (g - 1.0) / (2.0 * g));
        if (s <= head) return l;
        if (s >= tail) return star_l;
        return exact_fan(g, l, s, true);
    }
    const double cr = gas_c(g, r);
    if (e.ps > r.p) {
        const double sr = r.u + cr * sqrt((g + 1.0) / (2.0 * g) * e.ps / r.p + (g - 1.0) / (2.0 * g));
        return s >= sr ? r : star_r;
    }
    const double head = r.u + cr;
    const double tail = e.us + cr * libm_pow_f64(e.ps / r.p, (g - 1.0) / (2.0 * g));
    if (s >= head) return r;
    if (s <= tail) return star_r;
    return exact_fan(g, r, s, false);
}

// Godunov's flux from the exact solution on x/t = 0; the tangential velocity is upwinded by the
// contact.
__device__ q4 flux_exact(real g, q4 l, q4 r) {
    const gas gl = {(double)l.c[0], (double)l.c[1], (double)l.c[3]};
    const gas gr = {(double)r.c[0], (double)r.c[1], (double)r.c[3]};
    const exact_rp e = exact_new((double)g, gl, gr);
    const gas s = exact_sample(e, 0.0);
    const double contact = e.has_star ? e.us : vacuum_left_edge(e);
    const real v = contact >= 0.0 ? l.c[2] : r.c[2];
    if (s.rho <= 0.0) return make_q4(0, 0, 0, 0);
    return euler_flux(g, make_q4((real)s.rho, (real)s.u, v, (real)s.p));
}

// ---- Approximate Riemann solvers (riemann.rs) ----

struct roe_avg {
    real u, v, h, c;
};

// One side of a face for the approximate Riemann solvers (riemann.rs `Side`): primitive state w,
// conserved state q, flux f, 1/rho and the sound speed sqrt(g p (1/rho)): one division a side.
struct side {
    q4 w, q, f;
    real inv_rho, c;
};

__device__ __forceinline__ side side_of(real g, q4 w) {
    side s;
    s.w = w;
    s.q = conserved(g, w);
    s.f = euler_flux(g, w);
    s.inv_rho = (real)1 / w.c[0];
    s.c = sqrt(g * w.c[3] * s.inv_rho);
    return s;
}

__device__ __forceinline__ roe_avg roe_average(real g, const side& l, const side& r) {
    const real sl = sqrt(l.w.c[0]), sr = sqrt(r.w.c[0]);
    const real w = (real)1 / (sl + sr);
    roe_avg a;
    a.u = (sl * l.w.c[1] + sr * r.w.c[1]) * w;
    a.v = (sl * l.w.c[2] + sr * r.w.c[2]) * w;
    a.h = (sl * (l.q.c[3] + l.w.c[3]) * l.inv_rho + sr * (r.q.c[3] + r.w.c[3]) * r.inv_rho) * w;
    const real c2 = (g - (real)1) * (a.h - (real)0.5 * (a.u * a.u + a.v * a.v));
    a.c = sqrt(fmax(c2, (real)0));
    return a;
}

// Einfeldt's bounds (S_L, S_R).
__device__ __forceinline__ void einfeldt(real g, const side& l, const side& r, real* sl, real* sr) {
    const roe_avg a = roe_average(g, l, r);
    *sl = fmin(l.w.c[1] - l.c, a.u - a.c);
    *sr = fmax(r.w.c[1] + r.c, a.u + a.c);
}

__device__ q4 flux_hll(real g, q4 wl, q4 wr) {
    const side l = side_of(g, wl), r = side_of(g, wr);
    real sl, sr;
    einfeldt(g, l, r, &sl, &sr);
    if (sl >= (real)0) return l.f;
    if (sr <= (real)0) return r.f;
    q4 out;
    for (int k = 0; k < 4; k++)
        out.c[k] = div_zero_numerator(sr * l.f.c[k] - sl * r.f.c[k] + sl * sr * (r.q.c[k] - l.q.c[k]), sr - sl);
    return out;
}

__device__ __forceinline__ q4 hllc_star(const side& a, real s, real m, real s_star) {
    const real k = m / (s - s_star);
    const real e = a.q.c[3] * a.inv_rho + (s_star - a.w.c[1]) * (s_star + a.w.c[3] / m);
    const q4 u_star = make_q4(k, k * s_star, k * a.w.c[2], k * e);
    q4 out;
    for (int i = 0; i < 4; i++) out.c[i] = a.f.c[i] + s * (u_star.c[i] - a.q.c[i]);
    return out;
}

__device__ q4 flux_hllc(real g, q4 wl, q4 wr) {
    const side l = side_of(g, wl), r = side_of(g, wr);
    real sl, sr;
    einfeldt(g, l, r, &sl, &sr);
    if (sl >= (real)0) return l.f;
    if (sr <= (real)0) return r.f;
    const real ml = wl.c[0] * (sl - wl.c[1]);
    const real mr = wr.c[0] * (sr - wr.c[1]);
    const real s_star = div_zero_numerator(wr.c[3] - wl.c[3] + wl.c[1] * ml - wr.c[1] * mr, ml - mr);
    return s_star >= (real)0 ? hllc_star(l, sl, ml, s_star) : hllc_star(r, sr, mr, s_star);
}

__device__ q4 flux_rusanov(real g, q4 wl, q4 wr) {
    const side l = side_of(g, wl), r = side_of(g, wr);
    const real s = fmax(fabs(wl.c[1]) + l.c, fabs(wr.c[1]) + r.c);
    const real half = (real)0.5;
    q4 out;
    for (int k = 0; k < 4; k++) out.c[k] = half * (l.f.c[k] + r.f.c[k]) - half * s * (r.q.c[k] - l.q.c[k]);
    return out;
}

__device__ q4 flux_roe(real g, q4 wl, q4 wr, bool entropy_fix) {
    const side l = side_of(g, wl), r = side_of(g, wr);
    const roe_avg a = roe_average(g, l, r);
    const real half = (real)0.5, one = (real)1, zero = (real)0;
    q4 dq;
    for (int k = 0; k < 4; k++) dq.c[k] = r.q.c[k] - l.q.c[k];
    // Wave strengths (Toro eqs. 11.68-11.70, with the tangential momentum as the shear wave).
    const real shear = dq.c[2] - a.v * dq.c[0];
    const real de = dq.c[3] - shear * a.v;
    const real a2 = (g - one) / (a.c * a.c) * (dq.c[0] * (a.h - a.u * a.u) + a.u * dq.c[1] - de);
    const real a1 = (dq.c[0] * (a.u + a.c) - dq.c[1] - a.c * a2) / ((real)2 * a.c);
    const real a5 = dq.c[0] - (a1 + a2);
    const q4 k1 = make_q4(one, a.u - a.c, a.v, a.h - a.u * a.c);
    const q4 k2 = make_q4(one, a.u, a.v, half * (a.u * a.u + a.v * a.v));
    const q4 k3 = make_q4(zero, zero, one, a.v);
    const q4 k5 = make_q4(one, a.u + a.c, a.v, a.h + a.u * a.c);
    const real l1 = a.u - a.c, l2 = a.u, l5 = a.u + a.c;
    q4 out;
    if (entropy_fix) {
        // Harten-Hyman: a transonic rarefaction in the left (right) acoustic wave.
        q4 sl, sr;
        for (int k = 0; k < 4; k++) {
            sl.c[k] = l.q.c[k] + a1 * k1.c[k];
            sr.c[k] = r.q.c[k] - a5 * k5.c[k];
        }
        const q4 star_l = primitive(g, sl), star_r = primitive(g, sr);
        const real lam1_l = wl.c[1] - l.c;
        const real lam1_r = star_l.c[1] - sound_speed(g, star_l.c[0], star_l.c[3]);
        if (lam1_l < zero && zero < lam1_r) {
            const real lam = lam1_l * (lam1_r - l1) / (lam1_r - lam1_l);
            for (int k = 0; k < 4; k++) out.c[k] = l.f.c[k] + lam * a1 * k1.c[k];
            return out;
        }
        const real lam5_l = star_r.c[1] + sound_speed(g, star_r.c[0], star_r.c[3]);
        const real lam5_r = wr.c[1] + r.c;
        if (lam5_l < zero && zero < lam5_r) {
            const real lam = lam5_r * (l5 - lam5_l) / (lam5_r - lam5_l);
            for (int k = 0; k < 4; k++) out.c[k] = r.f.c[k] - lam * a5 * k5.c[k];
            return out;
        }
    }
    for (int k = 0; k < 4; k++)
        out.c[k] = half * (l.f.c[k] + r.f.c[k]) -
                   half * (fabs(l1) * a1 * k1.c[k] + fabs(l2) * (a2 * k2.c[k] + shear * k3.c[k]) +
                           fabs(l5) * a5 * k5.c[k]);
    return out;
}

// The numerical flux of Riemann solver RS (RS_* of src/backend/cuda/slots.rs) between local
// primitive states l and r (riemann.rs `flux`). The solver is a template parameter, so a flux
// kernel holds its own solver only: with any of the six callable (the exact solver iterates in
// double) the flux kernel of the time needed 86 registers a thread and ran at 25 % occupancy;
// with HLLC alone 42 registers, 54 %, and 35-40 % less time (BENCHMARKS.md, issue 23).
template <int RS>
__device__ __forceinline__ q4 riemann_flux(real g, q4 l, q4 r) {
    switch (RS) {
        case RS_EXACT: return flux_exact(g, l, r);
        case RS_HLLC: return flux_hllc(g, l, r);
        case RS_ROE: return flux_roe(g, l, r, true);
        case RS_ROE_NO_FIX: return flux_roe(g, l, r, false);
        case RS_HLL: return flux_hll(g, l, r);
        default: return flux_rusanov(g, l, r);
    }
}

// ---- The scheme ----

// Limited slope of local primitive states wm, wc, wp, of the primitive or (characteristic != 0)
// the characteristic variables of the primitive-variable Jacobian (Toro 2009 sec. 14.4.3).
__device__ __forceinline__ q4 mh_slope(int lim, int characteristic, real g, q4 wm, q4 wc, q4 wp) {
    q4 a, b, out;
    for (int k = 0; k < 4; k++) {
        a.c[k] = wc.c[k] - wm.c[k];
        b.c[k] = wp.c[k] - wc.c[k];
    }
    if (!characteristic) {
        for (int k = 0; k < 4; k++) out.c[k] = limited_slope(lim, a.c[k], b.c[k]);
        return out;
    }
    const real rho = wc.c[0], c = sound_speed(g, wc.c[0], wc.c[3]);
    const real h = (real)0.5 / c, c2 = (real)1 / (c * c);
    const real half = (real)0.5;
    const q4 ca = make_q4(-rho * h * a.c[1] + half * c2 * a.c[3], a.c[0] - c2 * a.c[3], a.c[2],
                          rho * h * a.c[1] + half * c2 * a.c[3]);
    const q4 cb = make_q4(-rho * h * b.c[1] + half * c2 * b.c[3], b.c[0] - c2 * b.c[3], b.c[2],
                          rho * h * b.c[1] + half * c2 * b.c[3]);
    q4 m;
    for (int k = 0; k < 4; k++) m.c[k] = limited_slope(lim, ca.c[k], cb.c[k]);
    return make_q4(m.c[0] + m.c[1] + m.c[3], (m.c[3] - m.c[0]) * c / rho, m.c[2], (m.c[0] + m.c[3]) * c * c);
}

// Face values: face e (x-, x+, y-, y+) of cell k is entry k of the e-th packed array of len
// states (store_q4v, euler.cuh) from faces + 4 e len, primitive. (Stored as 16 scalar planes,
// mh_faces took 26 % longer in f32; a face of doubles as one 32-byte run, stored in two halves that
// each covered half of every sector, 21 % longer in f64: H200, BENCHMARKS.md.)

// Threads of a block (EULER_BLOCK_* of src/backend/cuda/slots.rs, launches.rs B2, B1): 32 x 8 in
// 2D, 256 in 1D.
#define MH_BX EULER_BLOCK_X
#define MH_BY EULER_BLOCK_Y
#define MH_BLOCK EULER_BLOCK_1D
static_assert(MH_BX * MH_BY == MH_BLOCK, "2D and 1D blocks of as many threads");
// Cells of mh_faces' tile: its block's cells and the ring around them, (32 + 2) x (8 + 2) in 2D
// (the 256 + 2 of 1D fit).
#define MH_TILE ((MH_BX + 2) * (MH_BY + 2))

// Steps 1-3 of the scheme for every fluid cell within one cell of the interior, a block of BX x
// BY threads over BX x BY cells of the padded array (2D grid, stride x (ny + 2 g1); 1D: BY = 1):
// limited slopes along each axis (a solid neighbour is replaced by the mirror image of the cell),
// face values W -/+ D/2, and the unsplit Hancock half-step U <- U + sum_d half_dt_d (F_d(W_d^-) -
// F_d(W_d^+)) on each, half_dt_d = dt / (2 dx_d) with dt the clock's (rounded from double as the
// host rounds it; dx, dy in double; one thread of the block divides). Where an evolved value is
// inadmissible all faces of the cell fall back to its average. The 2 dim faces go to `faces`
// (store_q4v), primitive, in the global frame.
// The block first converts its cells and the ring around them (the two cells beside them in 1D)
// to primitive states in shared memory (`tile`, component c of tile cell s at tile[c MH_TILE + s];
// `tile_solid`), so every cell is converted once, not once for itself and once for each
// neighbour. The loops over the axes and faces are unrolled and stop at the dimension, so the
// face array lives in registers (rolled, it took 64 (f32) or 128 (f64) bytes of local memory a
// thread). The limiter LIM (LIM_* of src/backend/cuda/slots.rs) is a template parameter, so its
// slopes compile without branches between them.
template <int LIM, int BX, int BY>
__device__ __forceinline__ void mh_faces_block(const real* __restrict__ q, const unsigned char* __restrict__ solid,
                                               real* __restrict__ faces, long long len, int stride, int g0, int g1,
                                               int nx, int ny, real g, int characteristic,
                                               const double* __restrict__ clock, double dx, double dy,
                                               real* __restrict__ tile, unsigned char* __restrict__ tile_solid) {
    constexpr int dim = BY == 1 ? 1 : 2;
    // The tile: TW x TH cells, its first at (x0, y0) of the padded array.
    constexpr int TW = BX + 2, TH = dim == 2 ? BY + 2 : 1;
    static_assert(TW * TH <= MH_TILE, "the tile fits");
    __shared__ real half_dt[2];
    const int t = threadIdx.y * BX + threadIdx.x;
    if (t == 0) {
        half_dt[0] = (real)(0.5 * clock[EK_NEXT_DT] / dx);
        half_dt[1] = (real)(0.5 * clock[EK_NEXT_DT] / dy);
    }
    const int rows = ny + 2 * g1;
    const int x0 = blockIdx.x * BX - 1, y0 = blockIdx.y * BY - (dim == 2 ? 1 : 0);
    // Each thread fills tile cells t, t + BX BY, ...: all of its loads first, then the conversions,
    // so that its rounds' loads are in flight together.
    constexpr int ROUNDS = (TW * TH + BX * BY - 1) / (BX * BY);
    q4 v[ROUNDS];
    int flag[ROUNDS];
#pragma unroll
    for (int r = 0; r < ROUNDS; r++) {
        const int s = t + r * BX * BY, xx = x0 + s % TW, yy = y0 + s / TW;
        flag[r] = -1;
        if (s < TW * TH && xx >= 0 && xx < stride && yy >= 0 && yy < rows) {
            const long long k = (long long)yy * stride + xx;
            v[r] = load_q4(q, len, k);
            flag[r] = solid[k];
        }
    }
#pragma unroll
    for (int r = 0; r < ROUNDS; r++) {
        if (flag[r] < 0) continue;
        const int s = t + r * BX * BY;
        tile_solid[s] = (unsigned char)flag[r];
        const q4 w = primitive(g, v[r]);
        for (int c = 0; c < 4; c++) tile[c * MH_TILE + s] = w.c[c];
    }
    __syncthreads();
    const int ii = blockIdx.x * BX + threadIdx.x, jj = blockIdx.y * BY + threadIdx.y;
    if (ii >= stride || jj >= rows) return;
    const int i = ii - g0, j = jj - g1;
    if (i < -1 || i > nx || (dim == 2 && (j < -1 || j > ny))) return;
    // The cell in the tile.
    const int s = (threadIdx.y + (dim == 2 ? 1 : 0)) * TW + threadIdx.x + 1;
    if (tile_solid[s]) return;
    const long long k = (long long)jj * stride + ii;
    const auto at = [&](int u) {
        return make_q4(tile[u], tile[MH_TILE + u], tile[2 * MH_TILE + u], tile[3 * MH_TILE + u]);
    };
    const q4 wc = at(s);
    const real half = (real)0.5;
    q4 out[2 * dim];
#pragma unroll
    for (int d = 0; d < dim; d++) {
        const int st = d == 0 ? 1 : TW;
        const q4 wm = tile_solid[s - st] ? mirror(d, wc) : at(s - st);
        const q4 wp = tile_solid[s + st] ? mirror(d, wc) : at(s + st);
        const q4 lc = to_local(d, wc);
        const q4 sl = mh_slope(LIM, characteristic, g, to_local(d, wm), lc, to_local(d, wp));
        q4 lo, hi;
        for (int c = 0; c < 4; c++) {
            lo.c[c] = lc.c[c] - half * sl.c[c];
            hi.c[c] = lc.c[c] + half * sl.c[c];
        }
        out[2 * d] = to_local(d, lo);
        out[2 * d + 1] = to_local(d, hi);
    }
    q4 delta;
    {
        const q4 fm = flux_along(g, 0, out[0]), fp = flux_along(g, 0, out[1]);
        for (int c = 0; c < 4; c++) delta.c[c] = half_dt[0] * (fm.c[c] - fp.c[c]);
    }
    if constexpr (dim == 2) {
        const q4 fm = flux_along(g, 1, out[2]), fp = flux_along(g, 1, out[3]);
        for (int c = 0; c < 4; c++) delta.c[c] = delta.c[c] + half_dt[1] * (fm.c[c] - fp.c[c]);
    }
    bool ok = true;
#pragma unroll
    for (int e = 0; e < 2 * dim; e++) {
        q4 u = conserved(g, out[e]);
        for (int c = 0; c < 4; c++) u.c[c] = u.c[c] + delta.c[c];
        out[e] = primitive(g, u);
        ok = ok && admissible(out[e]);
    }
#pragma unroll
    for (int e = 0; e < 2 * dim; e++) {
        store_q4v(faces + 4 * e * len, len, k, ok ? out[e] : wc);
    }
}

// The entry points of `mh_faces_block`, one per limiter of the compressible family
// (Limiter::ALL): mh_faces_none, mh_faces_minmod, mh_faces_superbee, mh_faces_van_leer,
// mh_faces_mc and mh_faces_van_albada; blocks of MH_BX x MH_BY threads in 2D, MH_BLOCK in 1D.
#define MH_FACES(name, LIM)                                                                                     \
    extern "C" __global__ void __launch_bounds__(MH_BLOCK)                                                      \
        name(const real* __restrict__ q, const unsigned char* __restrict__ solid, real* __restrict__ faces,     \
             long long len, int stride, int g0, int g1, int nx, int ny, int dim, real g, int characteristic,     \
             const double* __restrict__ clock, double dx, double dy) {                                          \
        __shared__ real tile[4 * MH_TILE];                                                                      \
        __shared__ unsigned char tile_solid[MH_TILE];                                                           \
        AFTER_PREDECESSOR();                                                                                    \
        if (dim == 2)                                                                                           \
            mh_faces_block<LIM, MH_BX, MH_BY>(q, solid, faces, len, stride, g0, g1, nx, ny, g, characteristic,  \
                                              clock, dx, dy, tile, tile_solid);                                 \
        else                                                                                                    \
            mh_faces_block<LIM, MH_BLOCK, 1>(q, solid, faces, len, stride, g0, g1, nx, ny, g, characteristic,   \
                                             clock, dx, dy, tile, tile_solid);                                  \
    }
MH_FACES(mh_faces_none, LIM_NONE)
MH_FACES(mh_faces_minmod, LIM_MINMOD)
MH_FACES(mh_faces_superbee, LIM_SUPERBEE)
MH_FACES(mh_faces_van_leer, LIM_VAN_LEER)
MH_FACES(mh_faces_mc, LIM_MC)
MH_FACES(mh_faces_van_albada, LIM_VAN_ALBADA)

// Step 4's inputs at face (i, j) normal to axis d (left of, or below, cell (i, j)), between cell
// a (low side) and b (high side): a's high face value and b's low face value copied into entry t
// of the packed shared arrays `hi_a` and `lo_b` (copy_q4v_to_shared; read after copies_arrived),
// and the sides' solid flags returned (bit 0: a, bit 1: b). The values are copied whether or not
// a side is solid (a solid cell's are stale and unused), so the copies need not wait for the flags.
__device__ __forceinline__ int mh_face_inputs(const real* __restrict__ faces, const unsigned char* __restrict__ solid,
                                              long long len, int stride, int g0, int g1, int i, int j, int d,
                                              real* hi_a, real* lo_b, int t) {
    const long long b = (long long)(j + g1) * stride + i + g0;
    const long long a = b - (d == 0 ? 1 : stride);
    copy_q4v_to_shared(hi_a, MH_BLOCK, t, faces + 4 * (2 * d + 1) * len, len, a);
    copy_q4v_to_shared(lo_b, MH_BLOCK, t, faces + 4 * (2 * d) * len, len, b);
    return (solid[a] ? 1 : 0) | (solid[b] ? 2 : 0);
}

// Step 4: the flux through a face normal to axis d from a's high face value hi_a and b's low face
// value lo_b (sides: the solid flags of face_inputs): zero between two solid cells, the mirror
// image of the fluid side's face value in place of a solid one.
template <int RS>
__device__ __forceinline__ q4 mh_face_flux(q4 hi_a, q4 lo_b, int sides, int d, real g) {
    const bool sa = sides & 1, sb = sides & 2;
    if (sa && sb) return make_q4(0, 0, 0, 0);
    const q4 wl = sa ? mirror(d, lo_b) : hi_a;
    const q4 wr = sb ? mirror(d, hi_a) : lo_b;
    return to_local(d, riemann_flux<RS>(g, to_local(d, wl), to_local(d, wr)));
}

// Steps 4 and 5 per block of BX x BY threads (1D: BY = 1), in place: the fluxes through its
// cells' faces into shared memory (mh_face_flux; a thread computes one x-face and one y-face,
// after requesting both faces' inputs, which it copies into shared memory so that its four loads
// are in flight together and no face's values occupy registers before its flux; its cell's state
// is copied there meanwhile), then
// U -= dt/dx (F_{i+1/2} - F_{i-1/2}) + dt/dy (G_{j+1/2} - G_{j-1/2}) for its interior fluid cells,
// dt/dx and dt/dy rounded from the clock's dt in double (dx, dy; one thread of the block
// divides), with the step reduction of the new state fused in (write_partials of cell_stats;
// inv_dx = 1/dx, inv_dy = 1/dy in the working precision, as euler_reduce). A 2D block of 32 x 8
// threads updates 32 x 7 cells (33 x 7 x-faces and 32 x 8 y-faces: one face a thread), a 1D
// block of 256 threads 255 cells (256 faces) (launches.rs `StepBlock`; the faces on a block's
// edges its neighbour computes too). The block's shape is a template parameter, so its index
// arithmetic divides by constants. Nothing once the step is halted.
template <int RS, int BX, int BY>
__device__ __forceinline__ void mh_flux_update_block(real* __restrict__ q, const unsigned char* __restrict__ solid,
                                                     const real* __restrict__ faces, long long len, int stride,
                                                     int g0, int g1, int nx, int ny,
                                                     const double* __restrict__ clock, double dx, double dy, real g,
                                                     real inv_dx, real inv_dy, real* __restrict__ part,
                                                     int* __restrict__ bad, real* __restrict__ stage) {
    constexpr int dim = BY == 1 ? 1 : 2;
    // Cells of the block along x and y.
    constexpr int cx = dim == 2 ? BX : BX - 1, cy = dim == 2 ? BY - 1 : 1;
    static_assert(BX * BY == MH_BLOCK, "one face a thread along each axis");
    __shared__ real ratio[2];
    HALTED(clock);
    const int t = threadIdx.y * BX + threadIdx.x;
    if (t == 0) {
        const double dt = clock[EK_NEXT_DT];
        ratio[0] = (real)(dt / dx);
        ratio[1] = (real)(dt / dy);
    }
    const int i0 = blockIdx.x * cx, j0 = blockIdx.y * cy;
    // Packed arrays of MH_BLOCK values in `stage`: the x-faces' two sides (0, 1) and the y-faces'
    // (2, 3); each face's flux then replaces its low side's value (arrays 0 and 2).
    real* const at[4] = {stage, stage + 4 * MH_BLOCK, stage + 8 * MH_BLOCK, stage + 12 * MH_BLOCK};
    // x-faces i0..=i0 + cx of rows j0..j0 + cy, (cx + 1) a row; y-faces j0..=j0 + cy of columns
    // i0..i0 + cx, cx a row. Both faces' values are requested before either flux (sides -1: no
    // face).
    int x = -1, y = -1;
    if (t < (cx + 1) * cy) {
        const int i = i0 + t % (cx + 1), j = j0 + t / (cx + 1);
        if (i <= nx && j < ny) x = mh_face_inputs(faces, solid, len, stride, g0, g1, i, j, 0, at[0], at[1], t);
    }
    if (dim == 2 && t < cx * (cy + 1)) {
        const int i = i0 + t % cx, j = j0 + t / cx;
        if (i < nx && j <= ny) y = mh_face_inputs(faces, solid, len, stride, g0, g1, i, j, 1, at[2], at[3], t);
    }
    copies_committed();
    // This thread's cell of the update (ci, cj below): its state, copied into the stage's fifth
    // array (component c at c MH_BLOCK + t), requested now, so that its latency passes while the
    // fluxes are computed. The cell's indices are computed again after the fluxes (and its solid
    // flag, which the faces' inputs brought into the cache, read then), which keeps the registers
    // for them.
    real* const own = stage + 16 * MH_BLOCK;
    {
        const int i = i0 + t % cx, j = j0 + t / cx;
        const long long k = (long long)(j + g1) * stride + i + g0;
        if (t < cx * cy && i < nx && j < ny)
            for (int c = 0; c < 4; c++) copy_to_shared(own + c * MH_BLOCK + t, q + c * len + k);
    }
    copies_committed();
    copies_arrived<1>();
    if (x >= 0)
        store_q4v(at[0], MH_BLOCK, t,
                  mh_face_flux<RS>(load_q4v(at[0], MH_BLOCK, t), load_q4v(at[1], MH_BLOCK, t), x, 0, g));
    if (y >= 0)
        store_q4v(at[2], MH_BLOCK, t,
                  mh_face_flux<RS>(load_q4v(at[2], MH_BLOCK, t), load_q4v(at[3], MH_BLOCK, t), y, 1, g));
    __syncthreads();
    copies_arrived<0>();
    const real rx = ratio[0], ry = ratio[1];
    step_stats st = no_stats();
    // The thread number again, opaque to the compiler, so that it computes the cell's indices anew
    // instead of keeping the copies' across the fluxes (which spilled them).
    int tc = t;
    asm volatile("" : "+r"(tc));
    const int ci = tc % cx, cj = tc / cx;
    const int i = i0 + ci, j = j0 + cj;
    const long long k = (long long)(j + g1) * stride + i + g0;
    if (tc < cx * cy && i < nx && j < ny && !solid[k]) {
        const q4 u = make_q4(own[tc], own[MH_BLOCK + tc], own[2 * MH_BLOCK + tc], own[3 * MH_BLOCK + tc]);
        const int xm = cj * (cx + 1) + ci;
        q4 out;
        const q4 fl = load_q4v(at[0], MH_BLOCK, xm), fr = load_q4v(at[0], MH_BLOCK, xm + 1);
        if (dim == 2) {
            const int ym = cj * cx + ci;
            const q4 gb = load_q4v(at[2], MH_BLOCK, ym), gt = load_q4v(at[2], MH_BLOCK, ym + cx);
            for (int c = 0; c < 4; c++)
                out.c[c] = u.c[c] - (rx * (fr.c[c] - fl.c[c]) + ry * (gt.c[c] - gb.c[c]));
        } else {
            for (int c = 0; c < 4; c++) out.c[c] = u.c[c] - rx * (fr.c[c] - fl.c[c]);
        }
        store_q4(q, len, k, out);
        st = cell_stats(g, dim, inv_dx, inv_dy, out, i, j, nx);
    }
    write_partials(st, part, bad);
}

// Blocks of MH_BLOCK threads a multiprocessor must hold of the update with solver RS (the register
// budget ptxas keeps to, 64 K registers a multiprocessor): the occupancy each solver had before the
// sides (`side_of`), the step reduction's REDUX and the staged face inputs, which left alone take
// more registers without needing them (f32 HLLC 47 instead of 40, one block fewer). f32: Roe 5
// blocks (48 registers), Rusanov 7 (32), HLLC, HLL and Roe without the fix 6 (40); the exact
// solver 3 in f32 and f64 (79, 78); f64 Rusanov 4 (60); the other f64 kernels take the registers
// they need. None spills (ptxas, sm_90).
#define MH_UPDATE_MIN_BLOCKS(RS) ((RS) == RS_EXACT ? 3 : sizeof(real) != 4 ? ((RS) == RS_RUSANOV ? 4 : 1) : (RS) == RS_RUSANOV ? 7 : (RS) == RS_ROE ? 5 : 6)

// The entry points of `mh_flux_update_block`, one per Riemann solver: mh_flux_update_exact,
// mh_flux_update_hllc, mh_flux_update_roe, mh_flux_update_roe_no_fix, mh_flux_update_hll and
// mh_flux_update_rusanov; blocks of MH_BX x MH_BY threads in 2D, MH_BLOCK in 1D.
#define MH_FLUX_UPDATE(name, RS)                                                                                 \
    extern "C" __global__ void __launch_bounds__(MH_BLOCK, MH_UPDATE_MIN_BLOCKS(RS))                             \
        name(real* __restrict__ q, const unsigned char* __restrict__ solid, const real* __restrict__ faces,      \
             long long len, int stride, int g0, int g1, int nx, int ny, int dim, const double* __restrict__ clock, \
             double dx, double dy, real g, real inv_dx, real inv_dy, real* __restrict__ part,                    \
             int* __restrict__ bad) {                                                                            \
        __shared__ __align__(16) real stage[20 * MH_BLOCK];                                                      \
        AFTER_PREDECESSOR();                                                                                     \
        if (dim == 2)                                                                                            \
            mh_flux_update_block<RS, MH_BX, MH_BY>(q, solid, faces, len, stride, g0, g1, nx, ny, clock, dx, dy, \
                                                   g, inv_dx, inv_dy, part, bad, stage);                        \
        else                                                                                                     \
            mh_flux_update_block<RS, MH_BLOCK, 1>(q, solid, faces, len, stride, g0, g1, nx, ny, clock, dx, dy,  \
                                                  g, inv_dx, inv_dy, part, bad, stage);                         \
    }
MH_FLUX_UPDATE(mh_flux_update_exact, RS_EXACT)
MH_FLUX_UPDATE(mh_flux_update_hllc, RS_HLLC)
MH_FLUX_UPDATE(mh_flux_update_roe, RS_ROE)
MH_FLUX_UPDATE(mh_flux_update_roe_no_fix, RS_ROE_NO_FIX)
MH_FLUX_UPDATE(mh_flux_update_hll, RS_HLL)
MH_FLUX_UPDATE(mh_flux_update_rusanov, RS_RUSANOV)
