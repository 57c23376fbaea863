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

// A packed array of len four-component states (private to a scheme's kernels, unlike the
// structure-of-arrays state): 16-byte vectors of QV = 16 / sizeof(real) components (4 in float,
// 2 in double), 4 / QV of them a state, component c of entry k at
// a[((c / QV) len + k) QV + c % QV]. A thread stores or loads an entry in 4 / QV vector accesses,
// and each access of a warp covers whole 32-byte sectors. `a` is 16-byte aligned.
#define QV (16 / (int)sizeof(real))

__device__ __forceinline__ void store_q4v(real* __restrict__ a, long long len, long long k, q4 v) {
    if constexpr (QV == 4) {
        reinterpret_cast<float4*>(a)[k] = make_float4(v.c[0], v.c[1], v.c[2], v.c[3]);
    } else {
        double2* at = reinterpret_cast<double2*>(a) + k;
        at[0] = make_double2(v.c[0], v.c[1]);
        at[len] = make_double2(v.c[2], v.c[3]);
    }
}

__device__ __forceinline__ q4 load_q4v(const real* __restrict__ a, long long len, long long k) {
    if constexpr (QV == 4) {
        const float4 v = reinterpret_cast<const float4*>(a)[k];
        return make_q4(v.x, v.y, v.z, v.w);
    } else {
        const double2* at = reinterpret_cast<const double2*>(a) + k;
        const double2 lo = at[0], hi = at[len];
        return make_q4(lo.x, lo.y, hi.x, hi.y);
    }
}

// One 16-byte vector access of a packed array: QV values.
struct __align__(16) q4_vector {
    real c[QV];
};

// Entry `from_k` of the packed array `from` (global memory, `from_len` entries) copied into entry
// `to_k` of the packed array `to` (shared memory, `to_len` entries) with copy_to_shared, a vector
// at a time, through no register.
__device__ __forceinline__ void copy_q4v_to_shared(real* to, long long to_len, long long to_k, const real* from,
                                                   long long from_len, long long from_k) {
    q4_vector* dst = reinterpret_cast<q4_vector*>(to) + to_k;
    const q4_vector* src = reinterpret_cast<const q4_vector*>(from) + from_k;
#pragma unroll
    for (int v = 0; v < 4 / QV; v++) copy_to_shared(dst + v * to_len, src + v * from_len);
}

// Conserved from primitive: [rho, rho u, rho v, p (1 / (gamma - 1)) + rho (u^2 + v^2) / 2]. The
// reciprocal depends on gamma only, so a kernel computes it once (state.rs `conserved`).
__device__ __forceinline__ q4 conserved(real g, q4 w) {
    const real half = (real)0.5;
    const real inv_gm1 = (real)1 / (g - (real)1);
    return make_q4(w.c[0], w.c[0] * w.c[1], w.c[0] * w.c[2],
                   w.c[3] * inv_gm1 + half * w.c[0] * (w.c[1] * w.c[1] + w.c[2] * w.c[2]));
}

// Primitive from conserved: [rho, u, v, (gamma - 1) (E - rho (u^2 + v^2) / 2)], the velocity
// from the one reciprocal 1 / rho (state.rs `primitive`).
__device__ __forceinline__ q4 primitive(real g, q4 q) {
    const real half = (real)0.5;
    const real inv_rho = (real)1 / q.c[0];
    const real u = q.c[1] * inv_rho;
    const real v = q.c[2] * inv_rho;
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

// The compressible step clock (doubles, EK_* of src/backend/cuda/slots.rs): the last step's dt,
// the time, the steps, the host's cap on dt, the halt code; the wave rate the last step's dt came
// from; the current state's step reduction; the next step's dt, which the scheme's kernels step
// by. A kernel that writes the state returns at once once the step is halted (choose_next_step),
// so the rest of a batch of steps leaves the state alone.
#define HALTED(clock) \
    if ((clock)[EK_HALT] != 0.0) return;

// Boundary kinds, two bits per side (left, right, bottom, top) in `bcs`: EBC_* of
// src/backend/cuda/slots.rs.

// The interior cell a ghost cell copies along an axis of n cells (boundary.rs `fill`), for its
// index idx < 0 (layer k = -idx of the low side) or idx >= n (layer k = idx - n + 1 of the high
// side) and the side's boundary kind: reflective, the mirror cell k - 1 inside; periodic, cell
// n - k of the opposite side; transmissive and inflow, the boundary cell.
__device__ __forceinline__ int ghost_source(int idx, int n, int kind) {
    const bool hi = idx >= n;
    const int k = hi ? idx - n + 1 : -idx;
    if (kind == EBC_REFLECTIVE) return hi ? n - k : k - 1;
    if (kind == EBC_PERIODIC) return hi ? k - 1 : n - k;
    return hi ? n - 1 : 0;
}

// A ghost cell's conserved state across side `side` (axis side / 2) of boundary kind `kind`, from
// its source cell's v: the normal momentum reversed at a reflective side, the prescribed state
// inflow[4 side + c] at an inflow side, v elsewhere.
__device__ __forceinline__ q4 ghost_state(int side, int kind, q4 v, const real* __restrict__ inflow) {
    if (kind == EBC_REFLECTIVE) return mirror(side / 2, v);
    if (kind == EBC_INFLOW) return make_q4(inflow[4 * side], inflow[4 * side + 1], inflow[4 * side + 2], inflow[4 * side + 3]);
    return v;
}

// A ghost cell's gradient along axis e (CE/SE) across a side of axis d and kind `kind`, from its
// source cell's s: copied at a periodic side, mirrored at a reflective one (the normal momentum's
// sign reversed, and the whole gradient's along the normal, e = d), zero elsewhere.
__device__ __forceinline__ q4 ghost_gradient(int d, int e, int kind, q4 s) {
    if (kind == EBC_REFLECTIVE) {
        s = mirror(d, s);
        return e == d ? make_q4(-s.c[0], -s.c[1], -s.c[2], -s.c[3]) : s;
    }
    return kind == EBC_PERIODIC ? s : make_q4(0, 0, 0, 0);
}

// Ghost cells along axis d (boundary.rs `fill`; MUSCL-Hancock, CE/SE derives its ghosts where it
// reads them, cese.cu): one thread per (t, ghost layer k = 1..g, side), t over the interior columns
// (d = 1) or over all rows, ghost rows included (d = 0), so launching d = 1 first and then d = 0
// fills the corners as the CPU does. Each ghost cell is its ghost_source's ghost_state. Nothing
// once the step is halted.
extern "C" __global__ void euler_ghosts(real* __restrict__ q, const real* __restrict__ inflow, long long len,
                                        int stride, int g0, int g1, int nx, int ny, int d, int bcs,
                                        const double* __restrict__ clock) {
    AFTER_PREDECESSOR();
    HALTED(clock);
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
    const int src = ghost_source(ghost, n, kind);
    const long long dst = d == 0 ? (long long)(t + g1) * stride + ghost + g0 : (long long)(ghost + g1) * stride + t + g0;
    const long long from = d == 0 ? (long long)(t + g1) * stride + src + g0 : (long long)(src + g1) * stride + t + g0;
    store_q4(q, len, dst, ghost_state(side, kind, load_q4(q, len, from), inflow));
}

// NO_BAD_CELL (no inadmissible cell, INT_MAX) comes from src/backend/cuda/slots.rs.
// +infinity in the working precision.
#define REAL_INF ((real)__int_as_float(0x7f800000))

// A cell's share of the step reduction (mod.rs `wave_rate` and `check_state`): the wave rate
// max_d (|u_d| + c) / dx_d, the density, the pressure and, if inadmissible, its row-major index
// j nx + i; the identities for a cell outside the interior or solid.
struct step_stats {
    real rate, rho, p;
    int first;
};

__device__ __forceinline__ step_stats no_stats() {
    step_stats s;
    s.rate = 0;
    s.rho = REAL_INF;
    s.p = REAL_INF;
    s.first = NO_BAD_CELL;
    return s;
}

__device__ __forceinline__ step_stats cell_stats(real g, int dim, real inv_dx, real inv_dy, q4 u, int i, int j,
                                                 int nx) {
    const q4 w = primitive(g, u);
    const real c = sound_speed(g, w.c[0], w.c[3]);
    step_stats s;
    s.rate = (fabs(w.c[1]) + c) * inv_dx;
    if (dim == 2) s.rate = fmax(s.rate, (fabs(w.c[2]) + c) * inv_dy);
    s.rho = w.c[0];
    s.p = w.c[3];
    s.first = admissible(w) ? NO_BAD_CELL : j * nx + i;
    return s;
}

// Reductions over a warp, valid in lane 0; every lane of the warp calls them. warp_max and
// warp_min skip NaN: a NaN enters as the identity `none` (so a warp of NaN gives `none`). In f32
// on sm_80 and later each is one warp reduction (REDUX) of the values' integer keys, which order
// as the floats do (-0 before +0); else five shuffle steps (common.cuh warp_shuffle_reduce; max
// and min are exact in any order).
template <typename V>
__device__ __forceinline__ V shuffle_max(V x, V none) {
    return warp_shuffle_reduce(isnan(x) ? none : x, [](V a, V b) { return fmax(a, b); });
}
template <typename V>
__device__ __forceinline__ V shuffle_min(V x, V none) {
    return warp_shuffle_reduce(isnan(x) ? none : x, [](V a, V b) { return fmin(a, b); });
}
#if __CUDA_ARCH__ >= 800
__device__ __forceinline__ int float_key(float x) {
    const int b = __float_as_int(x);
    return b >= 0 ? b : b ^ 0x7fffffff;
}
__device__ __forceinline__ float key_float(int k) { return __int_as_float(k >= 0 ? k : k ^ 0x7fffffff); }
__device__ __forceinline__ float warp_max(float x, float none) {
    return key_float(__reduce_max_sync(0xffffffffu, float_key(isnan(x) ? none : x)));
}
__device__ __forceinline__ float warp_min(float x, float none) {
    return key_float(__reduce_min_sync(0xffffffffu, float_key(isnan(x) ? none : x)));
}
__device__ __forceinline__ int warp_min(int x) { return __reduce_min_sync(0xffffffffu, x); }
#else
__device__ __forceinline__ float warp_max(float x, float none) { return shuffle_max(x, none); }
__device__ __forceinline__ float warp_min(float x, float none) { return shuffle_min(x, none); }
__device__ __forceinline__ int warp_min(int x) {
    return warp_shuffle_reduce(x, [](int a, int b) { return min(a, b); });
}
#endif
__device__ __forceinline__ double warp_max(double x, double none) { return shuffle_max(x, none); }
__device__ __forceinline__ double warp_min(double x, double none) { return shuffle_min(x, none); }

// The four reductions of step_stats over a warp (valid in lane 0): max, min, min, min.
__device__ __forceinline__ step_stats warp_stats(step_stats s) {
    s.rate = warp_max(s.rate, (real)0);
    s.rho = warp_min(s.rho, REAL_INF);
    s.p = warp_min(s.p, REAL_INF);
    s.first = warp_min(s.first);
    return s;
}

// The four reductions of step_stats over the block (any blockDim up to 1024; valid in thread
// 0), together, with one barrier. Every thread of the block must call it, once per kernel. Max
// and min are exact, so the order does not matter.
__device__ __forceinline__ step_stats block_stats(step_stats s) {
    __shared__ step_stats warps[32];
    const int t = thread_linear();
    const int lane = t & 31, w = t >> 5;
    s = warp_stats(s);
    if (lane == 0) warps[w] = s;
    __syncthreads();
    if (w == 0) s = warp_stats(lane < (block_threads() + 31) >> 5 ? warps[lane] : no_stats());
    return s;
}

// The block's partials of the step reduction: block b of nb writes part[b] (max rate),
// part[nb + b] (min density), part[2 nb + b] (min pressure) and bad[b] (first bad cell)
// (block_stats). Every thread of the block must call it, as its last work.
__device__ __forceinline__ void write_partials(step_stats s, real* __restrict__ part, int* __restrict__ bad) {
    s = block_stats(s);
    if (thread_linear() == 0) {
        const int nb = gridDim.x * gridDim.y, me = block_linear();
        part[me] = s.rate;
        part[nb + me] = s.rho;
        part[2 * nb + me] = s.p;
        bad[me] = s.first;
    }
}

// Step reduction over the interior fluid cells of a state no step has written (after a
// restart or a change of gamma; a step fuses it into its update): write_partials of cell_stats,
// with the blocks of the kernel that fuses it, each over px x py cells (2D grid over nx x ny:
// launches.rs `StepBlock`), threads past them idle.
extern "C" __global__ void euler_reduce(const real* __restrict__ q, const unsigned char* __restrict__ solid,
                                        long long len, int stride, int g0, int g1, int nx, int ny, int dim, int px,
                                        int py, real g, real inv_dx, real inv_dy, real* __restrict__ part,
                                        int* __restrict__ bad) {
    AFTER_PREDECESSOR();
    const int i = blockIdx.x * px + threadIdx.x;
    const int j = blockIdx.y * py + threadIdx.y;
    step_stats s = no_stats();
    if ((int)threadIdx.x < px && (int)threadIdx.y < py && i < nx && j < ny) {
        const long long k = (long long)(j + g1) * stride + i + g0;
        if (!solid[k]) s = cell_stats(g, dim, inv_dx, inv_dy, load_q4(q, len, k), i, j, nx);
    }
    write_partials(s, part, bad);
}

// The slots of the clock a step's bookkeeping reads, loaded together so that their latencies
// overlap.
struct clock_slots {
    double halt, next_dt, time, steps, rate, bad_cell, dt_cap, t_end;
};

__device__ __forceinline__ clock_slots load_clock(const double* __restrict__ clock) {
    clock_slots c;
    c.halt = clock[EK_HALT];
    c.next_dt = clock[EK_NEXT_DT];
    c.time = clock[EK_TIME];
    c.steps = clock[EK_STEPS];
    c.rate = clock[EK_RATE];
    c.bad_cell = clock[EK_BAD_CELL];
    c.dt_cap = clock[EK_DT_CAP];
    c.t_end = clock[EK_T_END];
    return c;
}

// The size of the next step, chosen on the device (mod.rs `time_step`, the same operations in
// double), one thread, from the current state's reduction (wave rate `rate`, first inadmissible
// cell `bad_cell`) at time `time`, with the clock's cap and end time in `c`: the next step halts
// (EK_HALT = HALT_BAD_CELL) where the current state has an inadmissible cell (the CPU's step that
// made it fails), then (HALT_END_TIME) where the time has reached the end time EK_T_END
// (stopping.rs `time_left`, end_tolerance its END_TOLERANCE), then (HALT_WAVE_RATE) where the
// wave rate is not finite and positive; else its dt, EK_NEXT_DT, is min(cfl / rate, cap), the cap
// being the time left where an end time is set.
__device__ __forceinline__ void choose_next_step(double* __restrict__ clock, const clock_slots& c, double rate,
                                                 double bad_cell, double time, double cfl,
                                                 double end_tolerance) {
    if (bad_cell != (double)NO_BAD_CELL) {
        clock[EK_HALT] = HALT_BAD_CELL;
        return;
    }
    double cap = c.dt_cap;
    if (isfinite(c.t_end)) {
        const double left = c.t_end - time;
        if (left <= end_tolerance * fmax(fabs(c.t_end), 1.0)) {
            clock[EK_HALT] = HALT_END_TIME;
            return;
        }
        cap = left;
    }
    if (!(isfinite(rate) && rate > 0.0)) {
        clock[EK_HALT] = HALT_WAVE_RATE;
        return;
    }
    clock[EK_NEXT_DT] = fmin(cfl / rate, cap);
}

// One block: the partials of nb blocks into the clock: EK_RATE (max wave rate), EK_MIN_DENSITY,
// EK_MIN_PRESSURE and EK_BAD_CELL (first inadmissible cell or NO_BAD_CELL), widened to double.
// After a step (step = 1; the last kernel of a step) also the step itself: the clock moves on by
// its dt (EK_NEXT_DT) and one step, with the wave rate that dt came from; the step's record goes
// into the history (EK_HISTORY, its slot EK_STEPS % EK_HISTORY_STEPS); and the next step's size
// is chosen (choose_next_step). Nothing once the step is halted. The clock's slots are read
// before the partials, so that one wait covers both.
extern "C" __global__ void euler_reduce_finalize(const real* __restrict__ part, const int* __restrict__ bad, int nb,
                                                 double* __restrict__ clock, int step, double cfl,
                                                 double end_tolerance) {
    AFTER_PREDECESSOR();
    const clock_slots c = load_clock(clock);
    step_stats s = no_stats();
    for (int k = thread_linear(); k < nb; k += block_threads()) {
        s.rate = fmax(s.rate, part[k]);
        s.rho = fmin(s.rho, part[nb + k]);
        s.p = fmin(s.p, part[2 * nb + k]);
        s.first = min(s.first, bad[k]);
    }
    // Every thread reads the halt before the barrier in block_stats; thread 0 writes it after.
    if (c.halt != 0.0) return;
    s = block_stats(s);
    if (thread_linear() != 0) return;
    const double rate = (double)s.rate, bad_cell = (double)s.first;
    const double rho = (double)s.rho, p = (double)s.p;
    clock[EK_RATE] = rate;
    clock[EK_MIN_DENSITY] = rho;
    clock[EK_MIN_PRESSURE] = p;
    clock[EK_BAD_CELL] = bad_cell;
    if (!step) return;
    const double time = c.time + c.next_dt, steps = c.steps + 1.0;
    clock[EK_DT] = c.next_dt;
    clock[EK_TIME] = time;
    clock[EK_STEPS] = steps;
    clock[EK_STEP_RATE] = c.rate;
    double* rec = clock + EK_HISTORY + EK_RECORD * ((long long)steps % EK_HISTORY_STEPS);
    rec[EK_REC_TIME] = time;
    rec[EK_REC_DT] = c.next_dt;
    rec[EK_REC_STEP_RATE] = c.rate;
    rec[EK_REC_MIN_DENSITY] = rho;
    rec[EK_REC_MIN_PRESSURE] = p;
    choose_next_step(clock, c, rate, bad_cell, time, cfl, end_tolerance);
}

// The next step's size (choose_next_step) after the host wrote the clock, one thread. Nothing
// once the step is halted.
extern "C" __global__ void euler_next_step(double* __restrict__ clock, double cfl, double end_tolerance) {
    AFTER_PREDECESSOR();
    if (threadIdx.x != 0) return;
    const clock_slots c = load_clock(clock);
    if (c.halt != 0.0) return;
    choose_next_step(clock, c, c.rate, c.bad_cell, c.time, cfl, end_tolerance);
}
