// The projection method's momentum predictor at one face and over a thread's rows, included by
// projection.cu (its entry points `predict_*`): what a face reads (`gather_face`), the
// predictor from those values (`predict_face`), which faces the momentum equation advances, and
// the rows of a tile with each row's loads issued together (`predict_rows`). Needs
// staggered.cuh (the layout, face values) and common.cuh (the tiles).
#pragma once

// What the predictor of component C at face idx (flat index f) reads: q = u_C at the face and
// its neighbours along each axis a (qp, qm), the advecting velocities a+_a, a-_a averaged to the
// control volume's faces (q itself along a = C, component a along the others), the AB2 history
// and the momentum source. These loads are issued before any arithmetic of the face
// (`predict_rows`), so a thread keeps them all in flight. (TVD's and QUICK's second neighbours are
// read by `predict_face`, as each face value needs them.)
struct FaceInputs {
    real qc, qp[DIM], qm[DIM], ap[DIM], am[DIM], h_old, s;
};

template <int C>
__device__ __forceinline__ FaceInputs gather_face(const Stag& g, const int idx[DIM], int f, const real* const vel[3],
                                                  const real* __restrict__ hc, const real* __restrict__ src, int ab2) {
    const real half = (real)0.5;
    const real* __restrict__ q = vel[C];
    FaceInputs in;
    in.qc = q[f];
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        const int st = g.st[a];
        in.qp[a] = q[f + st];
        in.qm[a] = q[f - st];
        if (a == C) {
            in.ap[a] = half * (in.qc + in.qp[a]);
            in.am[a] = half * (in.qm[a] + in.qc);
        } else {
            in.ap[a] = half * (vel[a][f] + vel[a][f + g.st[C]]);
            in.am[a] = half * (vel[a][f - st] + vel[a][f - st + g.st[C]]);
        }
    }
    in.h_old = ab2 ? hc[f] : (real)0;
    in.s = src != 0 ? src[f] : (real)0;
    return in;
}

// Predictor of component C at face f from its inputs (momentum.rs `Momentum::rhs` and
// projection.rs `predict`): H = nu sum_a (q+_a - 2 q + q-_a) ih2_a - sum_a (a+_a q+_f - a-_a
// q-_f) ih_a + s (ih_a = 1 / h_a, ih2_a = 1 / h_a^2: multiplications, where an IEEE division
// would issue about ten instructions and a branch), the face values q_f of `face_value`; then
// F = q + dt (w_new H + w_old H_old) with `ab2` (H stored as the next step's H_old), else
// F = q + dt H (forward Euler, no history traffic). A momentum source s (a rotor's
// accelerations, kernels/rotor_source.cu; null without one) is part of H: H = nu lap - conv + s.
// One instance per convection scheme, so that central and upwind differencing neither read the
// second neighbours nor evaluate their periodic wrap.
template <int SCHEME, int C>
__device__ __forceinline__ void predict_face(const FaceInputs& in, const Stag& g, const int idx[DIM], int f,
                                             const real* __restrict__ q, real* __restrict__ fc,
                                             real* __restrict__ hc, bool source, int lim, const real ih[3],
                                             const real ih2[3], real nu, int ab2, real dt, real w_new,
                                             real w_old) {
    constexpr bool FAR = SCHEME == CONV_TVD || SCHEME == CONV_QUICK;
    real conv = 0, lap = 0;
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        real x1 = 0, x2 = 0;
        bool h1 = false, h2 = false;
        if (FAR) {
            h1 = far_value(q, g, C, a, idx, f, -1, &x1);
            h2 = far_value(q, g, C, a, idx, f, 2, &x2);
        }
        const real q_p = face_value<SCHEME>(lim, in.ap[a], h1, x1, in.qc, in.qp[a], h2, x2);
        if (FAR) {
            h1 = far_value(q, g, C, a, idx, f, -2, &x1);
            h2 = far_value(q, g, C, a, idx, f, 1, &x2);
        }
        const real q_m = face_value<SCHEME>(lim, in.am[a], h1, x1, in.qm[a], in.qc, h2, x2);
        const real flux = (in.ap[a] * q_p - in.am[a] * q_m) * ih[a];
        const real visc = (in.qp[a] - in.qc - in.qc + in.qm[a]) * ih2[a];
        conv = a == 0 ? flux : conv + flux;
        lap = a == 0 ? visc : lap + visc;
    }
    real hh = nu * lap - conv;
    if (source) hh = hh + in.s;
    if (ab2) {
        fc[f] = in.qc + dt * (w_new * hh + w_old * in.h_old);
        hc[f] = hh;
    } else {
        fc[f] = in.qc + dt * hh;
    }
}

// Whether face idx of component c is advanced by the momentum equation: 1..=hi[c] along axis c
// (Layout::unknowns), 1..=n along the others.
__device__ __forceinline__ bool advanced(const Stag& g, int c, const int idx[DIM], const int hi[3]) {
    bool in = true;
#pragma unroll
    for (int a = 0; a < DIM; ++a) in = in && idx[a] >= 1 && idx[a] <= (a == c ? hi[c] : g.n[a]);
    return in;
}

// Whether every face of this block's tile is advanced for every component (`advanced`), so the
// block may skip the tests.
__device__ __forceinline__ bool tile_advanced(const Stag& g, const int hi[3]) {
    int lo_all[DIM], hi_all[DIM];
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        lo_all[a] = 1;
        hi_all[a] = min(g.n[a], hi[a]);
    }
    return tile_within(lo_all, hi_all);
}

// The predictor of this thread's TROWS rows, a row at a time: first every load of the row's faces
// (`gather_face`, all components), then their arithmetic and stores, so that a row's loads are in
// flight together rather than one face's at a time. (Gathering several rows at once was measured
// slower: the registers it takes cost more occupancy than the loads it adds in flight.) TVD and
// QUICK, whose faces also read second neighbours through branches, gather each face just before
// its arithmetic. WHOLE: the tile is `tile_advanced`, no face is tested.
template <int SCHEME, bool WHOLE>
__device__ __forceinline__ void predict_rows(const Stag& g, const real* const vel[3], real* const pred[3],
                                             real* const hist[3], const real* const src[3], const int hi[3],
                                             int lim, const real ih[3], const real ih2[3], real nu, int ab2,
                                             real dt, real w_new, real w_old) {
    constexpr bool EACH = SCHEME == CONV_TVD || SCHEME == CONV_QUICK;
#pragma unroll
    for (int q = 0; q < TROWS; ++q) {
        int idx[DIM];
        const int f = tile_face(g, q, idx);
        bool adv[DIM];
        FaceInputs in[DIM];
#pragma unroll
        for (int c = 0; c < DIM; ++c) adv[c] = WHOLE || advanced(g, c, idx, hi);
#define GATHER(C) \
    if (adv[C]) in[C] = gather_face<C>(g, idx, f, vel, hist[C], src[C], ab2)
        if (!EACH) {
            GATHER(0);
            GATHER(1);
#if DIM == 3
            GATHER(2);
#endif
        }
#define PREDICT_FACE(C)                                                                                            \
    if (EACH) GATHER(C);                                                                                           \
    if (adv[C])                                                                                                    \
        predict_face<SCHEME, C>(in[C], g, idx, f, vel[C], pred[C], hist[C], src[C] != 0, lim, ih, ih2, nu, ab2, dt,\
                                w_new, w_old)
        PREDICT_FACE(0);
        PREDICT_FACE(1);
#if DIM == 3
        PREDICT_FACE(2);
#endif
#undef PREDICT_FACE
#undef GATHER
    }
}
