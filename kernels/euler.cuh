// The Euler equations of an ideal gas on the device: state conversions and fluxes
// (src/solver/compressible/state.rs), ghost cells (boundary.rs) and the step reduction
// (max wave rate for dt, min density and pressure, first inadmissible cell), shared by
// muscl_hancock.cu and cese.cu. Include after common.cuh.
//
// Storage (src/solver/compressible/layout.rs): a padded cell array of `len = stride * rows`
// cells, x fastest, g0 ghost cells on each side in x and g1 in y (0 in 1D); interior cell (i, j)
// (0 <= i < nx, 0 <= j < ny) is k = (j + g1) * stride + i + g0. Four-component fields are stored
// as structure of arrays: component c of cell k at q[c * len + k] (c: rho, rho u, rho v, E for
// conserved, rho, u, v, p for primitive variables), so a warp reads consecutive addresses.
// Every expression keeps the operation order of the CPU code (compiled without FMA contraction),
// so the results round identically.

struct q4 {
    real c[4];
};

__device__ __forceinline__ q4 make_q4(real a, real b, real c, real d) {
    q4 r;
    r.c[0] = a;
    r.c[1] = b;
    r.c[2] = c;
    r.c[3] = d;
    return r;
}

__device__ __forceinline__ q4 load_q4(const real* __restrict__ q, long long len, long long k) {
    return make_q4(q[k], q[len + k], q[2 * len + k], q[3 * len + k]);
}

__device__ __forceinline__ void store_q4(real* __restrict__ q, long long len, long long k, q4 v) {
    q[k] = v.c[0];
    q[len + k] = v.c[1];
    q[2 * len + k] = v.c[2];
    q[3 * len + k] = v.c[3];
}

// Conserved from primitive: [rho, rho u, rho v, p / (gamma - 1) + rho (u^2 + v^2) / 2].
__device__ __forceinline__ q4 conserved(real g, q4 w) {
    const real half = (real)0.5;
    return make_q4(w.c[0], w.c[0] * w.c[1], w.c[0] * w.c[2],
                   w.c[3] / (g - (real)1) + half * w.c[0] * (w.c[1] * w.c[1] + w.c[2] * w.c[2]));
}

// Primitive from conserved: [rho, u, v, (gamma - 1) (E - rho (u^2 + v^2) / 2)].
__device__ __forceinline__ q4 primitive(real g, q4 q) {
    const real half = (real)0.5;
    const real u = q.c[1] / q.c[0];
    const real v = q.c[2] / q.c[0];
    return make_q4(q.c[0], u, v, (g - (real)1) * (q.c[3] - half * q.c[0] * (u * u + v * v)));
}

__device__ __forceinline__ real sound_speed(real g, real rho, real p) { return sqrt(g * p / rho); }

// Velocity components into (d = 1) or out of the local frame of axis d: the swap is its own
// inverse.
__device__ __forceinline__ q4 to_local(int d, q4 w) {
    return d == 0 ? w : make_q4(w.c[0], w.c[2], w.c[1], w.c[3]);
}

// Euler flux normal to the local x axis from a local primitive state.
__device__ __forceinline__ q4 euler_flux(real g, q4 w) {
    const q4 q = conserved(g, w);
    return make_q4(q.c[1], q.c[1] * w.c[1] + w.c[3], q.c[2] * w.c[1], w.c[1] * (q.c[3] + w.c[3]));
}

// Euler flux along axis d in the global frame.
__device__ __forceinline__ q4 flux_along(real g, int d, q4 w) { return to_local(d, euler_flux(g, to_local(d, w))); }

// Mirror image across a wall normal to axis d (component 1 + d negated; constant indices keep
// w in registers where d is not a compile-time constant).
__device__ __forceinline__ q4 mirror(int d, q4 w) {
    if (d == 0) {
        w.c[1] = -w.c[1];
    } else {
        w.c[2] = -w.c[2];
    }
    return w;
}

__device__ __forceinline__ bool admissible(q4 w) {
    return w.c[0] > (real)0 && w.c[3] > (real)0 && isfinite(w.c[0]) && isfinite(w.c[1]) && isfinite(w.c[2]) &&
           isfinite(w.c[3]);
}

// Boundary kinds, two bits per side (left, right, bottom, top) in `bcs`: EBC_* of
// src/backend/cuda/slots.rs.

// Ghost cells along axis d (boundary.rs `fill`): one thread per (t, ghost layer k = 1..g, side),
// t over the interior columns (d = 1) or over all rows, ghost rows included (d = 0), so launching
// d = 1 first and then d = 0 fills the corners as the CPU does. Reflective: the mirror cell k - 1
// inside, normal momentum reversed; transmissive and inflow: the boundary cell (inflow then takes
// the prescribed conserved state inflow[4 side + c]); periodic: cell n - k of the opposite side.
// With gradients (gx, gy non-null, CE/SE): copied at periodic sides, mirrored at reflective ones
// (sign flipped along the wall normal except the normal momentum), zero elsewhere.
extern "C" __global__ void euler_ghosts(real* __restrict__ q, real* __restrict__ gx, real* __restrict__ gy,
                                        const real* __restrict__ inflow, long long len, int stride, int g0,
                                        int g1, int nx, int ny, int d, int bcs) {
    const int g = d == 0 ? g0 : g1;
    const int n = d == 0 ? nx : ny;
    const int span = d == 1 ? nx : ny + 2 * g1;
    const int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= span * g * 2) return;
    const int hi = id % 2;
    const int k = id / 2 % g + 1;
    const int t = id / (2 * g) - (d == 1 ? 0 : g1);
    const int side = 2 * d + hi;
    const int kind = (bcs >> (2 * side)) & 3;
    const int ghost = hi ? n - 1 + k : -k;
    int src;
    if (kind == EBC_REFLECTIVE) {
        src = hi ? n - k : k - 1;
    } else if (kind == EBC_PERIODIC) {
        src = hi ? k - 1 : n - k;
    } else {
        src = hi ? n - 1 : 0;
    }
    const long long dst = d == 0 ? (long long)(t + g1) * stride + ghost + g0 : (long long)(ghost + g1) * stride + t + g0;
    const long long from = d == 0 ? (long long)(t + g1) * stride + src + g0 : (long long)(src + g1) * stride + t + g0;
    q4 v = load_q4(q, len, from);
    if (kind == EBC_REFLECTIVE) v = mirror(d, v);
    if (kind == EBC_INFLOW) v = make_q4(inflow[4 * side], inflow[4 * side + 1], inflow[4 * side + 2], inflow[4 * side + 3]);
    store_q4(q, len, dst, v);
    if (gx == 0) return;
    for (int e = 0; e < 2; e++) {
        real* a = e == 0 ? gx : gy;
        if (a == 0) continue;
        q4 s = load_q4(a, len, from);
        if (kind == EBC_REFLECTIVE) {
            s = mirror(d, s);
            if (e == d) s = make_q4(-s.c[0], -s.c[1], -s.c[2], -s.c[3]);
        } else if (kind != EBC_PERIODIC) {
            s = make_q4(0, 0, 0, 0);
        }
        store_q4(a, len, dst, s);
    }
}

// Reduction over the block with an identity element (any blockDim up to 1024); valid in thread 0.
// Every thread of the block must call it. Max and min are exact, so the order does not matter.
template <typename T, typename Op>
__device__ __forceinline__ T block_reduce(T v, T identity, Op op) {
    __shared__ T part[32];
    const int t = thread_linear();
    const int lane = t & 31, w = t >> 5;
    for (int off = 16; off > 0; off >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, off));
    if (lane == 0) part[w] = v;
    __syncthreads();
    const int nw = (block_threads() + 31) >> 5;
    if (w == 0) {
        v = lane < nw ? part[lane] : identity;
        for (int off = 16; off > 0; off >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, off));
    }
    __syncthreads();
    return v;
}

struct MaxOp {
    __device__ real operator()(real a, real b) const { return fmax(a, b); }
};
struct MinOp {
    __device__ real operator()(real a, real b) const { return fmin(a, b); }
};
struct IMinOp {
    __device__ int operator()(int a, int b) const { return a < b ? a : b; }
};

// NO_BAD_CELL (no inadmissible cell, INT_MAX) comes from src/backend/cuda/slots.rs.
// +infinity in the working precision.
#define REAL_INF ((real)__int_as_float(0x7f800000))

// Step reduction over the interior fluid cells, one thread per cell (2D grid over nx x ny):
// the largest wave rate max_d (|u_d| + c) / dx_d (mod.rs `wave_rate`), the smallest density
// and pressure, and the first inadmissible cell (j nx + i, row-major as `check_state`). Block
// b writes part[b], part[nb + b], part[2 nb + b] and bad[b].
extern "C" __global__ void euler_reduce(const real* __restrict__ q, const unsigned char* __restrict__ solid,
                                        long long len, int stride, int g0, int g1, int nx, int ny, int dim,
                                        real g, real inv_dx, real inv_dy, real* __restrict__ part,
                                        int* __restrict__ bad) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    real rate = 0, rho = REAL_INF, p = REAL_INF;
    int first = NO_BAD_CELL;
    if (i < nx && j < ny) {
        const long long k = (long long)(j + g1) * stride + i + g0;
        if (!solid[k]) {
            const q4 w = primitive(g, load_q4(q, len, k));
            const real c = sound_speed(g, w.c[0], w.c[3]);
            rate = (fabs(w.c[1]) + c) * inv_dx;
            if (dim == 2) rate = fmax(rate, (fabs(w.c[2]) + c) * inv_dy);
            rho = w.c[0];
            p = w.c[3];
            if (!admissible(w)) first = j * nx + i;
        }
    }
    const real r = block_reduce(rate, (real)0, MaxOp());
    const real lo_rho = block_reduce(rho, REAL_INF, MinOp());
    const real lo_p = block_reduce(p, REAL_INF, MinOp());
    const int b = block_reduce(first, NO_BAD_CELL, IMinOp());
    if (thread_linear() == 0) {
        const int nb = gridDim.x * gridDim.y, me = block_linear();
        part[me] = r;
        part[nb + me] = lo_rho;
        part[2 * nb + me] = lo_p;
        bad[me] = b;
    }
}

// One block: the partials of euler_reduce (nb blocks) into sc[0] (max wave rate), sc[1] (min
// density), sc[2] (min pressure) and ibad[0] (first inadmissible cell or NO_BAD_CELL).
extern "C" __global__ void euler_reduce_finalize(const real* __restrict__ part, const int* __restrict__ bad, int nb,
                                                 real* __restrict__ sc, int* __restrict__ ibad) {
    real r = 0, lo_rho = REAL_INF, lo_p = REAL_INF;
    int first = NO_BAD_CELL;
    for (int k = thread_linear(); k < nb; k += block_threads()) {
        r = fmax(r, part[k]);
        lo_rho = fmin(lo_rho, part[nb + k]);
        lo_p = fmin(lo_p, part[2 * nb + k]);
        first = min(first, bad[k]);
    }
    r = block_reduce(r, (real)0, MaxOp());
    lo_rho = block_reduce(lo_rho, REAL_INF, MinOp());
    lo_p = block_reduce(lo_p, REAL_INF, MinOp());
    first = block_reduce(first, NO_BAD_CELL, IMinOp());
    if (thread_linear() == 0) {
        sc[0] = r;
        sc[1] = lo_rho;
        sc[2] = lo_p;
        ibad[0] = first;
    }
}
