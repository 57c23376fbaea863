// Display fields: the cell-centred scalar fields of `Solver::field`, derived on the device from
// the solver state into one buffer of nx * ny (* nz) REAL values, index (k ny + j) nx + i (0-based
// interior cell (i, j, k), x fastest), which src/backend/cuda/readback.rs copies to pinned host
// memory.
//
// Every formula is the CPU's, in its operation order and precision: the incompressible fields of
// src/solver/incompressible/derived/ (`View::field`, `vorticity`, `stream_function`; in 3D the
// vortex measures of `vortex.rs`) and the compressible ones of src/solver/compressible/mod.rs
// (`cell_value`, 2D). Sums and differences of
// stored values are taken in REAL (as the CPU does in T), everything after their conversion in
// double, without FMA contraction, so in f64 the values are bitwise the CPU's; in f32 the double
// result is rounded to float once, at the store (the display reads f32 anyway).
#include "common.cuh"
#include "euler.cuh"
#include "staggered.cuh"

// hypot through the CUDA math library: like pow (euler.cuh), its implementation fuses
// multiply-adds internally (within 1 ulp of the host's), so it lives in a function of this name,
// which tests/cuda_kernels.rs allows fma instructions in.
extern "C" __device__ __noinline__ double libm_hypot_f64(double x, double y) { return hypot(x, y); }

// Incompressible field codes: positions in `FIELDS_2D` / `FIELDS_3D` of
// src/solver/incompressible/derived/mod.rs (the velocity components first, codes 0..DIM), and
// SIMPLE's viscosity after either list.
#define SF_SPEED DIM
#define SF_P (DIM + 1)
#if DIM == 2
#define SF_VORTICITY 4
#define SF_STREAM_FUNCTION 5
#define SF_DIVERGENCE 6
#define SF_VISCOSITY 7
#else
#define SF_VORTICITY_X 5
#define SF_VORTICITY_Y 6
#define SF_VORTICITY_Z 7
#define SF_VORTICITY 8
#define SF_Q_CRITERION 9
#define SF_LAMBDA2 10
#define SF_HELICITY 11
#define SF_DIVERGENCE 12
#define SF_VISCOSITY 13
#endif

// Compressible field codes: positions in `FIELDS_2D` of src/solver/compressible/mod.rs.
#define EF_RHO 0
#define EF_U 1
#define EF_V 2
#define EF_P 3
#define EF_MACH 4
#define EF_E 5
#define EF_SCHLIEREN 6

// Component c at the centre of the cell whose upper faces are at flat index k: the mean of its
// two faces, 0.5 (q[k - e_c] + q[k]) (derived/mod.rs `View::centred`).
__device__ __forceinline__ double centred(const real* __restrict__ q, int k, int st) {
    return 0.5 * (double)(q[k - st] + q[k]);
}

#if DIM == 2
// Vorticity dv/dx - du/dy at corner (i, j) = (i dx, j dy), 0 <= i <= nx, 0 <= j <= ny, of the
// ghosted staggered arrays (stride s = nx + 2): (v[i+1, j] - v[i, j]) / dx - (u[i, j+1] - u[i, j]) / dy.
__device__ __forceinline__ double corner_vorticity(const real* __restrict__ u, const real* __restrict__ v, int s,
                                                   int i, int j, double dx, double dy) {
    const double dvdx = (double)(v[j * s + i + 1] - v[j * s + i]) / dx;
    const double dudy = (double)(u[(j + 1) * s + i] - u[j * s + i]) / dy;
    return dvdx - dudy;
}

// Stream function at the corners, psi[j * (nx + 1) + i] (double), by the CPU's path integral:
// psi(0, 0) = 0, up the left boundary psi(0, j) = psi(0, j - 1) + u[0, j] dy, then along the row
// psi(i, j) = psi(i - 1, j) - v[i, j] dx. One thread per corner row j = 0..ny; each sums its
// left-boundary value itself from j = 1 (the same additions in the same order as the CPU's
// column sweep, so every row starts from the CPU's value), then sweeps its row.
extern "C" __global__ void stream_function_corners(const real* __restrict__ u, const real* __restrict__ v,
                                                   double* __restrict__ psi, int nx, int ny, double dx,
                                                   double dy) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j > ny) return;
    const int s = nx + 2, w = nx + 1;
    double acc = 0.0;
    for (int jj = 1; jj <= j; ++jj) acc = acc + (double)u[jj * s] * dy;
    psi[(long long)j * w] = acc;
    for (int i = 1; i <= nx; ++i) {
        acc = acc - (double)v[j * s + i] * dx;
        psi[(long long)j * w + i] = acc;
    }
}

// The 2D-only fields at cell (i, j) (1-based): vorticity and stream function as the
// mean of the cell's four corners, 0.25 (c[i-1, j-1] + c[i, j-1] + c[i-1, j] + c[i, j]) (corner
// index (i, j) at x = i dx), psi from stream_function_corners.
__device__ __forceinline__ double planar_field(const real* __restrict__ u, const real* __restrict__ v,
                                               const double* __restrict__ psi, int i, int j, int nx, int field,
                                               double dx, double dy) {
    const int s = nx + 2;
    switch (field) {
    case SF_VORTICITY:
        return 0.25 * (corner_vorticity(u, v, s, i - 1, j - 1, dx, dy) + corner_vorticity(u, v, s, i, j - 1, dx, dy) +
                       corner_vorticity(u, v, s, i - 1, j, dx, dy) + corner_vorticity(u, v, s, i, j, dx, dy));
    default: {
        const long long w = nx + 1, a = (long long)(j - 1) * w + i - 1, b = (long long)j * w + i - 1;
        return 0.25 * (psi[a] + psi[a + 1] + psi[b] + psi[b + 1]);
    }
    }
}
#else
// acos and cos through the CUDA math library (fused multiply-adds inside, within an ulp or two
// of the host's), in functions of these names as hypot above.
extern "C" __device__ __noinline__ double libm_acos_f64(double x) { return acos(x); }
extern "C" __device__ __noinline__ double libm_cos_f64(double x) { return cos(x); }

// Eigenvalues of a symmetric 3 x 3 matrix by the trigonometric solution of its characteristic
// cubic (Smith 1961; vortex.rs `symmetric_eigenvalues`, the same operations), the middle one.
__device__ __forceinline__ double middle_eigenvalue(const double m[3][3]) {
    const double p1 = m[0][1] * m[0][1] + m[0][2] * m[0][2] + m[1][2] * m[1][2];
    const double q = (m[0][0] + m[1][1] + m[2][2]) / 3.0;
    double e[3];
    if (p1 == 0.0) {
        e[0] = m[0][0];
        e[1] = m[1][1];
        e[2] = m[2][2];
    } else {
        const double d0 = m[0][0] - q, d1 = m[1][1] - q, d2 = m[2][2] - q;
        const double p2 = d0 * d0 + d1 * d1 + d2 * d2 + 2.0 * p1;
        const double p = sqrt(p2 / 6.0);
        double b[3][3];
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) b[i][j] = (m[i][j] - (i == j ? q : 0.0)) / p;
        const double det = b[0][0] * (b[1][1] * b[2][2] - b[1][2] * b[2][1]) -
                           b[0][1] * (b[1][0] * b[2][2] - b[1][2] * b[2][0]) +
                           b[0][2] * (b[1][0] * b[2][1] - b[1][1] * b[2][0]);
        const double phi = libm_acos_f64(fmin(fmax(det / 2.0, -1.0), 1.0)) / 3.0;
        e[0] = q + 2.0 * p * libm_cos_f64(phi);
        e[2] = q + 2.0 * p * libm_cos_f64(phi + 2.0 * 3.141592653589793 / 3.0);
        e[1] = 3.0 * q - e[0] - e[2];
    }
    return fmax(fmin(e[0], e[1]), fmin(fmax(e[0], e[1]), e[2]));
}

// A vortex measure at the cell with upper faces at k (vortex.rs `gradient` and `measure`): the
// velocity gradient G[c][a] = d u_c / d x_a, along a component's own axis the difference of its
// two faces, across the others the central difference of the neighbours' centred values; the
// vorticity curl u, its magnitude, the Q-criterion (|Omega|^2 - |S|^2) / 2, lambda-2 (the middle
// eigenvalue of S^2 + Omega^2) and the helicity u . omega.
__device__ __forceinline__ double vortex_measure(const real* const vel[3], const Stag& g, int k, int field,
                                                 const double h[3]) {
    double G[3][3], velocity[3];
    for (int c = 0; c < 3; ++c) {
        const int sc = g.st[c];
        velocity[c] = centred(vel[c], k, sc);
        for (int a = 0; a < 3; ++a) {
            const int sa = g.st[a];
            G[c][a] = a == c ? (double)(vel[c][k] - vel[c][k - sc]) / h[a]
                             : (centred(vel[c], k + sa, sc) - centred(vel[c], k - sa, sc)) / (2.0 * h[a]);
        }
    }
    const double w[3] = {G[2][1] - G[1][2], G[0][2] - G[2][0], G[1][0] - G[0][1]};
    switch (field) {
    case SF_VORTICITY_X: return w[0];
    case SF_VORTICITY_Y: return w[1];
    case SF_VORTICITY_Z: return w[2];
    case SF_VORTICITY: return libm_hypot_f64(libm_hypot_f64(w[0], w[1]), w[2]);
    case SF_HELICITY: return velocity[0] * w[0] + velocity[1] * w[1] + velocity[2] * w[2];
    case SF_Q_CRITERION: {
        double s2 = 0.0, o2 = 0.0;
        for (int c = 0; c < 3; ++c)
            for (int a = 0; a < 3; ++a) {
                const double s = 0.5 * (G[c][a] + G[a][c]), o = 0.5 * (G[c][a] - G[a][c]);
                s2 += s * s;
                o2 += o * o;
            }
        return 0.5 * (o2 - s2);
    }
    default: {
        double m[3][3];
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                double t = 0.0;
                for (int l = 0; l < 3; ++l) {
                    const double sa = 0.5 * (G[i][l] + G[l][i]), sb = 0.5 * (G[l][j] + G[j][l]);
                    const double oa = 0.5 * (G[i][l] - G[l][i]), ob = 0.5 * (G[l][j] - G[j][l]);
                    const double x = sa * sb + oa * ob;
                    t = l == 0 ? x : t + x;
                }
                m[i][j] = t;
            }
        return middle_eigenvalue(m);
    }
    }
}
#endif

// One incompressible field at the cell centres: cell (i0, j0, k0) of the staggered arrays is
// 1-based, (i0 + 1, j0 + 1, k0 + 1), flat index k. Components: `centred`; speed: their hypot, in
// axis order; p: p[cell] p_scale (p_scale: density for kinematic pressure); divergence:
// sum_a (q_a[k] - q_a[k - e_a]) / h_a in axis order; viscosity (SIMPLE): p is the ghosted cell
// viscosity, read at k; 2D: `planar_field` (psi from
// stream_function_corners, null for the other fields); 3D: `vortex_measure`. Threads (x, y) of
// plane blockIdx.z.
extern "C" __global__ void staggered_display(const real* __restrict__ u, const real* __restrict__ v,
                                             const real* __restrict__ w, const real* __restrict__ p,
                                             const double* __restrict__ psi, real* __restrict__ out, int nx, int ny,
                                             int nz, int field, double dx, double dy, double dz, double p_scale) {
    const Cells cells = make_cells(nx, ny, nz, 0, 0, 0, 0);
    int cell[DIM], idx[DIM];
    if (!cell_at(cells, blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y, blockIdx.z,
                 cell))
        return;
    const Stag g = make_stag(nx, ny, nz, 0, 0, 0);
    const int k = stag_at(g, cell[0] + 1, cell[1] + 1, DIM == 3 ? cell[DIM - 1] + 1 : 0, idx);
    const real* const vel[3] = {u, v, w};
    const double h[3] = {dx, dy, dz};
    double r;
    if (field < DIM) {
        r = centred(vel[field], k, g.st[field]);
    } else if (field == SF_SPEED) {
        r = centred(vel[0], k, g.st[0]);
        for (int c = 1; c < DIM; ++c) r = libm_hypot_f64(r, centred(vel[c], k, g.st[c]));
    } else if (field == SF_P) {
        r = (double)p[cell_index(cells, cell)] * p_scale;
    } else if (field == SF_DIVERGENCE) {
        r = (double)(vel[0][k] - vel[0][k - g.st[0]]) / h[0];
        for (int a = 1; a < DIM; ++a) r = r + (double)(vel[a][k] - vel[a][k - g.st[a]]) / h[a];
    } else if (field == SF_VISCOSITY) {
        // SIMPLE: p is the ghosted cell viscosity.
        r = (double)p[k];
    } else {
#if DIM == 2
        r = planar_field(u, v, psi, idx[0], idx[1], nx, field, dx, dy);
#else
        r = vortex_measure(vel, g, k, field, h);
#endif
    }
    out[cell_index(cells, cell)] = (real)r;
}

// One compressible field at the cell centres, from the conserved state q (structure of arrays
// over the padded layout, euler.cuh) through the primitive variables w = (rho, u, v, p) of
// `primitive` (in REAL, gamma rounded to REAL as the CPU's T::of does), then in double with the
// unrounded gamma: rho, u, v, p; mach = hypot(u, v) / sqrt(gamma p / rho);
// e = p / ((gamma - 1) rho); schlieren = hypot(gx, gy), the central density differences
// gx = (rho[i+1, j] - rho[i-1, j]) / (2 dx) (one-sided at the first and last cell, the
// neighbour index clamped to the interior), gy likewise.
extern "C" __global__ void euler_display(const real* __restrict__ q, real* __restrict__ out, long long len,
                                         int stride, int g0, int g1, int nx, int ny, int field, double gamma,
                                         double dx, double dy) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nx || j >= ny) return;
    const long long k = (long long)(j + g1) * stride + i + g0;
    const q4 w = primitive((real)gamma, load_q4(q, len, k));
    const double rho = (double)w.c[0], u = (double)w.c[1], v = (double)w.c[2], p = (double)w.c[3];
    double r;
    switch (field) {
    case EF_RHO: r = rho; break;
    case EF_U: r = u; break;
    case EF_V: r = v; break;
    case EF_P: r = p; break;
    case EF_MACH: r = libm_hypot_f64(u, v) / sqrt(gamma * p / rho); break;
    case EF_E: r = p / ((gamma - 1.0) * rho); break;
    default: {
        const int il = i > 0 ? i - 1 : 0, ih = i + 1 < nx ? i + 1 : nx - 1;
        const int jl = j > 0 ? j - 1 : 0, jh = j + 1 < ny ? j + 1 : ny - 1;
        const long long row = (long long)(j + g1) * stride + g0;
        const double gx = (double)(q[row + ih] - q[row + il]) / ((double)(ih - il) * dx);
        const double gy = (double)(q[(long long)(jh + g1) * stride + i + g0] - q[(long long)(jl + g1) * stride + i + g0]) /
                          ((double)(jh - jl) * dy);
        r = libm_hypot_f64(gx, gy);
    }
    }
    out[(long long)j * nx + i] = (real)r;
}
