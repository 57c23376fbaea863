// Staggered-grid helpers shared by the projection (projection.cu) and SIMPLE (simple.cu) kernels:
// face values of the convection schemes (src/solver/incompressible/convection.rs) and the stored
// u, v values at possibly out-of-range indices (staggered.rs `Layout::u_at`, `v_at`).
#pragma once

// Convection schemes (numbering fixed by src/solver/incompressible/cuda/step.rs); the limiters
// are in common.cuh.
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

// |u| on the u faces (i in 0..=nx, rows 1..=ny) and |v| on the v faces (i in 1..=nx, rows
// 0..=ny) at k = j (nx + 2) + i, else 0: the faces of staggered.rs `Layout::max_face_speeds`
// (ghosts excluded), less the first face of a periodic axis, which repeats the last (so the
// maxima need not wait for the ghosts).
__device__ __forceinline__ void face_speeds(const real* __restrict__ u, const real* __restrict__ v, int k, int i,
                                            int j, int nx, int ny, int px, int py, real* um, real* vm) {
    *um = (i <= nx && j >= 1 && j <= ny && !(px && i == 0)) ? fabs(u[k]) : (real)0;
    *vm = (i >= 1 && i <= nx && j <= ny && !(py && j == 0)) ? fabs(v[k]) : (real)0;
}
