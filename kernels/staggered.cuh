// Staggered-grid helpers shared by the projection (projection.cu), display (display.cu) and
// SIMPLE (simple.cu) kernels: face values of the convection schemes
// (src/solver/incompressible/convection.rs), the ghosted layout in DIM dimensions (staggered.rs
// `Layout`), the stored components at possibly out-of-range indices (`Layout::component_at`;
// SIMPLE's 2D `u_at`, `v_at`) and the faces of the speed maxima.
#pragma once

// Convection schemes, the template argument of `face_value` (projection.cu compiles one predictor
// per scheme, named in src/solver/incompressible/cuda/step.rs); the limiters are in common.cuh.
#define CONV_CENTRAL 0
#define CONV_UPWIND 1
#define CONV_TVD 2
#define CONV_QUICK 3

__device__ __forceinline__ real tvd_face(int lim, real uu, real u, real d) {
    const real delta = d - u;
    if (fabs(delta) <= (real)1e-30) return u;
    const real r = (u - uu) / delta;
    return u + (real)0.5 * psi(lim, r) * delta;
}

// Face value between q_{-1} and q_{+1} for advecting velocity a (convection.rs); the scheme is a
// template parameter, and qm2 / qp2 (present where hm2 / hp2) are read only by TVD and QUICK.
template <int SCHEME>
__device__ __forceinline__ real face_value(int lim, real a, bool hm2, real qm2, real qm1, real qp1, bool hp2,
                                           real qp2) {
    if (SCHEME == CONV_CENTRAL) return (real)0.5 * (qm1 + qp1);
    real uu, u, d;
    if (a >= (real)0) {
        uu = hm2 ? qm2 : qm1;
        u = qm1;
        d = qp1;
    } else {
        uu = hp2 ? qp2 : qp1;
        u = qp1;
        d = qm1;
    }
    if (SCHEME == CONV_UPWIND) return u;
    if (SCHEME == CONV_TVD) return tvd_face(lim, uu, u, d);
    return (real)0.75 * u + (real)0.375 * d - (real)0.125 * uu;
}

__device__ __forceinline__ bool wrap(int k, int n, int periodic, int lo, int hi, int* out) {
    if (k >= lo && k <= hi) {
        *out = k;
        return true;
    }
    if (periodic) {
        const int kk = k < lo ? k + n : k - n;
        if (kk >= lo && kk <= hi) {
            *out = kk;
            return true;
        }
    }
    return false;
}

// u at (i, j): stored range i in 0..=nx, j in 0..=ny+1, periodic images where periodic.
__device__ __forceinline__ bool u_at(const real* u, int i, int j, int nx, int ny, int px, int py, real* v) {
    int a, b;
    if (!wrap(i, nx, px, 0, nx, &a)) return false;
    if (!wrap(j, ny, py, 0, ny + 1, &b)) return false;
    *v = u[b * (nx + 2) + a];
    return true;
}

// v at (i, j): i in 0..=nx+1, j in 0..=ny.
__device__ __forceinline__ bool v_at(const real* v, int i, int j, int nx, int ny, int px, int py, real* w) {
    int a, b;
    if (!wrap(i, nx, px, 0, nx + 1, &a)) return false;
    if (!wrap(j, ny, py, 0, ny, &b)) return false;
    *w = v[b * (nx + 2) + a];
    return true;
}

// The ghosted staggered layout of staggered.rs `Layout<DIM>`: cells per axis, index steps
// (1, nx + 2, (nx + 2)(ny + 2)), periodic axes. Component c at index idx sits on the upper face of
// cell idx normal to axis c.
struct Stag {
    int n[DIM];
    int st[DIM];
    int per[DIM];
};

__device__ __forceinline__ Stag make_stag(int nx, int ny, int nz, int px, int py, int pz) {
    const int p3[3] = {px, py, pz};
    Stag g;
    box_axes(nx, ny, nz, 2, g.n, g.st);
#pragma unroll
    for (int a = 0; a < DIM; ++a) g.per[a] = p3[a];
    return g;
}

// idx of ghosted index (i, j, k) (k read in 3D only) and its flat index.
__device__ __forceinline__ int stag_at(const Stag& g, int i, int j, int k, int idx[DIM]) {
    const int i3[3] = {i, j, k};
    int f = 0;
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        idx[a] = i3[a];
        f += i3[a] * g.st[a];
    }
    return f;
}

// The ghosted node idx of the t-th node of the box lo + [0, m) (x fastest) and its flat index.
__device__ __forceinline__ int box_node(const Stag& g, long long t, const int lo[DIM], const int m[DIM], int idx[DIM]) {
    int f = 0;
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        idx[a] = lo[a] + (int)(t % m[a]);
        t /= m[a];
        f += idx[a] * g.st[a];
    }
    return f;
}

// Nodes in the box lo..=hi.
__device__ __forceinline__ long long box_len(const int lo[DIM], const int hi[DIM], int m[DIM]) {
    long long n = 1;
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        m[a] = hi[a] - lo[a] + 1;
        n *= m[a];
    }
    return n;
}

// Index of cell idx (1..=n per axis) in the cell-centred arrays without ghosts
// (coefficients.rs `cell`).
__device__ __forceinline__ long long cell_of(const Stag& g, const int idx[DIM]) {
    long long k = 0;
#pragma unroll
    for (int a = DIM - 1; a >= 0; --a) k = k * g.n[a] + idx[a] - 1;
    return k;
}

// Component c at flat index f + m steps along axis a, where idx[a] is the position of f along a
// (Layout::component_at along one axis): the periodic image where periodic, false outside the
// stored range 0..=n (axis c) or 0..=n + 1 (the others).
__device__ __forceinline__ bool far_value(const real* q, const Stag& g, int c, int a, const int idx[DIM], int f, int m,
                                          real* out) {
    int t;
    if (!wrap(idx[a] + m, g.n[a], g.per[a], 0, g.n[a] + (a != c), &t)) return false;
    *out = q[f + (t - idx[a]) * g.st[a]];
    return true;
}

// Whether face idx of component c is one of staggered.rs `Layout::max_face_speeds` (index 0..=n
// along axis c, 1..=n along the others; ghosts excluded), less the first face of a periodic axis,
// which repeats the last (so the maxima need not wait for the ghosts).
__device__ __forceinline__ bool speed_face(const Stag& g, int c, const int idx[DIM]) {
    bool in = true;
#pragma unroll
    for (int a = 0; a < DIM; ++a)
        in = in && idx[a] <= g.n[a] && (a == c ? !(g.per[a] && idx[a] == 0) : idx[a] >= 1);
    return in;
}

#if DIM == 2
// |u| and |v| at k = j (nx + 2) + i on their `speed_face`s, else 0 (SIMPLE's max_abs).
__device__ __forceinline__ void face_speeds(const real* __restrict__ u, const real* __restrict__ v, int k, int i,
                                            int j, int nx, int ny, int px, int py, real* um, real* vm) {
    const Stag g = make_stag(nx, ny, 1, px, py, 0);
    const int idx[2] = {i, j};
    *um = speed_face(g, 0, idx) ? fabs(u[k]) : (real)0;
    *vm = speed_face(g, 1, idx) ? fabs(v[k]) : (real)0;
}
#endif
