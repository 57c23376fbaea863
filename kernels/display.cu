// Display fields: the cell-centred scalar fields of `Solver::field`, derived on the device from
// the solver state into one buffer of nx * ny REAL values, index j * nx + i (0-based interior
// cell (i, j), x fastest), which src/backend/cuda/readback.rs copies to pinned host memory.
//
// Every formula is the CPU's, in its operation order and precision: the incompressible fields of
// src/solver/incompressible/derived.rs (`View::field`, `vorticity`, `stream_function`) and the
// compressible ones of src/solver/compressible/mod.rs (`cell_value`). Sums and differences of
// stored values are taken in REAL (as the CPU does in T), everything after their conversion in
// double, without FMA contraction, so in f64 the values are bitwise the CPU's; in f32 the double
// result is rounded to float once, at the store (the display reads f32 anyway).
#include "common.cuh"
#include "euler.cuh"

// hypot through the CUDA math library: like pow (euler.cuh), its implementation fuses
// multiply-adds internally (within 1 ulp of the host's), so it lives in a function of this name,
// which tests/cuda_kernels.rs allows fma instructions in.
extern "C" __device__ __noinline__ double libm_hypot_f64(double x, double y) { return hypot(x, y); }

// Incompressible field codes: positions in `FIELDS` of src/solver/incompressible/projection.rs.
#define SF_U 0
#define SF_V 1
#define SF_SPEED 2
#define SF_P 3
#define SF_VORTICITY 4
#define SF_STREAM_FUNCTION 5
#define SF_DIVERGENCE 6
#define SF_VISCOSITY 7

// Compressible field codes: positions in `FIELDS_2D` of src/solver/compressible/mod.rs.
#define EF_RHO 0
#define EF_U 1
#define EF_V 2
#define EF_P 3
#define EF_MACH 4
#define EF_E 5
#define EF_SCHLIEREN 6

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

// One incompressible field at the cell centres: cell (i, j) of the staggered arrays is 1-based,
// (i0 + 1, j0 + 1). u, v: the two face values averaged, 0.5 (u[i-1, j] + u[i, j]); speed:
// hypot(u, v); p: p[j0 nx + i0] p_scale (p_scale: density for kinematic pressure); divergence:
// (u[i, j] - u[i-1, j]) / dx + (v[i, j] - v[i, j-1]) / dy; vorticity and stream function: the
// mean of the four corners, 0.25 (c[i-1, j-1] + c[i, j-1] + c[i-1, j] + c[i, j]) (corner index
// (i, j) at x = i dx), psi from stream_function_corners (null for the other fields); viscosity
// (SIMPLE): p is the ghosted cell viscosity, read at (i, j).
extern "C" __global__ void staggered_display(const real* __restrict__ u, const real* __restrict__ v,
                                             const real* __restrict__ p, const double* __restrict__ psi,
                                             real* __restrict__ out, int nx, int ny, int field, double dx,
                                             double dy, double p_scale) {
    const int i0 = blockIdx.x * blockDim.x + threadIdx.x;
    const int j0 = blockIdx.y * blockDim.y + threadIdx.y;
    if (i0 >= nx || j0 >= ny) return;
    const int s = nx + 2, i = i0 + 1, j = j0 + 1;
    const double uc = 0.5 * (double)(u[j * s + i - 1] + u[j * s + i]);
    const double vc = 0.5 * (double)(v[(j - 1) * s + i] + v[j * s + i]);
    double r;
    switch (field) {
    case SF_U: r = uc; break;
    case SF_V: r = vc; break;
    case SF_SPEED: r = libm_hypot_f64(uc, vc); break;
    case SF_P: r = (double)p[j0 * nx + i0] * p_scale; break;
    case SF_VISCOSITY: r = (double)p[j * s + i]; break;
    case SF_DIVERGENCE:
        r = (double)(u[j * s + i] - u[j * s + i - 1]) / dx + (double)(v[j * s + i] - v[(j - 1) * s + i]) / dy;
        break;
    case SF_VORTICITY:
        r = 0.25 * (corner_vorticity(u, v, s, i - 1, j - 1, dx, dy) + corner_vorticity(u, v, s, i, j - 1, dx, dy) +
                    corner_vorticity(u, v, s, i - 1, j, dx, dy) + corner_vorticity(u, v, s, i, j, dx, dy));
        break;
    default: {
        const long long w = nx + 1, a = (long long)(j - 1) * w + i - 1, b = (long long)j * w + i - 1;
        r = 0.25 * (psi[a] + psi[a + 1] + psi[b] + psi[b + 1]);
    }
    }
    out[(long long)j0 * nx + i0] = (real)r;
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
