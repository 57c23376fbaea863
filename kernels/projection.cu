// Projection-method kernels on the staggered grid: the step's time step, predictor, predictor
// boundary faces, Poisson right-hand side, correction, velocity ghosts, max-speed and step
// reductions. They reproduce src/solver/incompressible/projection.rs operation by operation.
//
// A step's scalars live on the device, in the clock (double): `step_dt` computes dt from the
// previous step's max speeds there, so that steps follow one another with no host round trip
// (and can be replayed as one CUDA graph). When the health check fails, `step_dt` sets
// ctrl[CTRL_HALT] (and ctrl[CTRL_DONE], which the pressure kernels' GUARD tests) and every step
// kernel returns at once, so the state stays the last one computed.
#include "common.cuh"
#include "staggered.cuh"

#define CTRL_HALT 3
#define HALTED(ctrl) \
    if ((ctrl) != 0 && (ctrl)[CTRL_HALT] != 0) return;

// Slots of the clock: the current step's dt (the previous step's between steps), the time
// after it, AB2's weights, whether the predictor stored the history H of a step (AB2 only),
// the steps taken, and the host's cap on dt (Solver::set_dt_cap).
#define CK_DT 0
#define CK_TIME 1
#define CK_W_NEW 2
#define CK_W_OLD 3
#define CK_HISTORY 4
#define CK_STEPS 5
#define CK_DT_CAP 6

// One block: the largest speeds of the state from the block maxima `pm` (nm blocks each of |u|
// and |v|, written by `correct` or `max_speed`) into sc[SC_UMAX], sc[SC_VMAX]; then, in thread
// 0, the health check and dt of the next step (config.rs `check_health` and `time_step`, in the
// same order of operations): with the largest speeds m = max(umax, vmax),
// the step halts unless m is finite and m <= `limit`; else dt = min(cfl min(dt_visc, dx / um,
// dy / vm, re_num / (um^2 + vm^2) for central schemes), dt_cap) with um, vm the speeds raised to
// the walls' `wall`, and AB2's weights 1 + r/2, -r/2 for r = dt / dt_old.
extern "C" __global__ void step_dt(double* __restrict__ clock, int* __restrict__ ctrl, const real* __restrict__ pm,
                                   int nm, real* __restrict__ sc, double dt_visc, double dx, double dy, double wall,
                                   double re_num, int central, double cfl, double limit, int ab2) {
    const real bu = max_partials(pm, nm);
    const real bv = max_partials(pm + nm, nm);
    if (thread_linear() != 0) return;
    sc[SC_UMAX] = bu;
    sc[SC_VMAX] = bv;
    const double umax = (double)bu, vmax = (double)bv;
    const double m = fmax(umax, vmax);
    const int halt = !(isfinite(m) && m <= limit);
    ctrl[CTRL_HALT] = halt;
    ctrl[CTRL_DONE] = halt;
    if (halt) return;
    const double um = fmax(umax, wall), vm = fmax(vmax, wall);
    double dt = dt_visc;
    if (um > 0.0) dt = fmin(dt, dx / um);
    if (vm > 0.0) dt = fmin(dt, dy / vm);
    if (central && um + vm > 0.0) dt = fmin(dt, re_num / (um * um + vm * vm));
    dt = fmin(cfl * dt, clock[CK_DT_CAP]);
    double w_new = 1.0, w_old = 0.0;
    if (ab2 && clock[CK_HISTORY] != 0.0) {
        const double r = dt / clock[CK_DT];
        w_new = 1.0 + 0.5 * r;
        w_old = -0.5 * r;
    }
    clock[CK_DT] = dt;
    clock[CK_TIME] = clock[CK_TIME] + dt;
    clock[CK_W_NEW] = w_new;
    clock[CK_W_OLD] = w_old;
    clock[CK_HISTORY] = ab2 ? 1.0 : 0.0;
    clock[CK_STEPS] = clock[CK_STEPS] + 1.0;
}

// Predictor F = u + dt (w_new H + w_old H_old), H = nu lap(u) - div(u u), for the u faces
// (i in 1..=iu_hi, j in 1..=ny) and v faces (i in 1..=nx, j in 1..=jv_hi); with `ab2` H is
// stored as the next step's H_old, else F = u + dt H (forward Euler, no history traffic).
// One instance per convection scheme, so that central and upwind differencing neither read the
// second neighbours nor evaluate their periodic wrap (the predictor is issue-bound, not
// bandwidth-bound). Faces (i, j), i.e. u face i of row j and v face j of column i.
template <int SCHEME>
__device__ __forceinline__ void predict_faces(int i, int j, const real* __restrict__ u, const real* __restrict__ v,
                                              real* __restrict__ f, real* __restrict__ g, real* __restrict__ hu,
                                              real* __restrict__ hv, int nx, int ny, int px, int py, int iu_hi,
                                              int jv_hi, int lim, real dx, real dy, real idx2, real idy2, real nu,
                                              int ab2, real dt, real w_new, real w_old) {
    constexpr bool FAR = SCHEME == CONV_TVD || SCHEME == CONV_QUICK;
    const int s = nx + 2;
    const real half = (real)0.5;
    if (i < 1 || j < 1) return;
    const int k = j * s + i;
    real a2 = 0, b2 = 0;
    bool h2 = false, h3 = false;
#define FAR_U(ia, ja, ib, jb)                                   \
    if (FAR) {                                                  \
        h2 = u_at(u, ia, ja, nx, ny, px, py, &a2);              \
        h3 = u_at(u, ib, jb, nx, ny, px, py, &b2);              \
    }
#define FAR_V(ia, ja, ib, jb)                                   \
    if (FAR) {                                                  \
        h2 = v_at(v, ia, ja, nx, ny, px, py, &a2);              \
        h3 = v_at(v, ib, jb, nx, ny, px, py, &b2);              \
    }
    if (i <= iu_hi && j <= ny) {
        const real uc = u[k], ue = u[k + 1], uw = u[k - 1], un = u[k + s], us = u[k - s];
        const real a_e = half * (uc + ue);
        const real a_w = half * (uw + uc);
        FAR_U(i - 1, j, i + 2, j)
        const real q_e = face_value<SCHEME>(lim, a_e, h2, a2, uc, ue, h3, b2);
        FAR_U(i - 2, j, i + 1, j)
        const real q_w = face_value<SCHEME>(lim, a_w, h2, a2, uw, uc, h3, b2);
        const real a_n = half * (v[k] + v[k + 1]);
        const real a_s = half * (v[k - s] + v[k - s + 1]);
        FAR_U(i, j - 1, i, j + 2)
        const real q_n = face_value<SCHEME>(lim, a_n, h2, a2, uc, un, h3, b2);
        FAR_U(i, j - 2, i, j + 1)
        const real q_s = face_value<SCHEME>(lim, a_s, h2, a2, us, uc, h3, b2);
        const real conv = (a_e * q_e - a_w * q_w) / dx + (a_n * q_n - a_s * q_s) / dy;
        const real diff = nu * ((ue - uc - uc + uw) * idx2 + (un - uc - uc + us) * idy2);
        const real h = diff - conv;
        if (ab2) {
            f[k] = uc + dt * (w_new * h + w_old * hu[k]);
            hu[k] = h;
        } else {
            f[k] = uc + dt * h;
        }
    }
    if (j <= jv_hi && i <= nx) {
        const real vc = v[k], ve = v[k + 1], vw = v[k - 1], vn = v[k + s], vs = v[k - s];
        const real a_n = half * (vc + vn);
        const real a_s = half * (vs + vc);
        FAR_V(i, j - 1, i, j + 2)
        const real q_n = face_value<SCHEME>(lim, a_n, h2, a2, vc, vn, h3, b2);
        FAR_V(i, j - 2, i, j + 1)
        const real q_s = face_value<SCHEME>(lim, a_s, h2, a2, vs, vc, h3, b2);
        const real a_e = half * (u[k] + u[k + s]);
        const real a_w = half * (u[k - 1] + u[k - 1 + s]);
        FAR_V(i - 1, j, i + 2, j)
        const real q_e = face_value<SCHEME>(lim, a_e, h2, a2, vc, ve, h3, b2);
        FAR_V(i - 2, j, i + 1, j)
        const real q_w = face_value<SCHEME>(lim, a_w, h2, a2, vw, vc, h3, b2);
        const real conv = (a_e * q_e - a_w * q_w) / dx + (a_n * q_n - a_s * q_s) / dy;
        const real diff = nu * ((ve - vc - vc + vw) * idx2 + (vn - vc - vc + vs) * idy2);
        const real h = diff - conv;
        if (ab2) {
            g[k] = vc + dt * (w_new * h + w_old * hv[k]);
            hv[k] = h;
        } else {
            g[k] = vc + dt * h;
        }
    }
#undef FAR_U
#undef FAR_V
}

// Threads as in the Poisson stencil kernels (common.cuh TBX x TBY, TROWS rows each, TBY apart):
// more independent loads in flight per thread.
extern "C" __global__ void __launch_bounds__(TILE_THREADS) predict(const real* __restrict__ u, const real* __restrict__ v, real* __restrict__ f,
                                   real* __restrict__ g, real* __restrict__ hu, real* __restrict__ hv, int nx,
                                   int ny, int px, int py, int iu_hi, int jv_hi, int scheme, int lim, real dx,
                                   real dy, real idx2, real idy2, real nu, int ab2,
                                   const double* __restrict__ clock, const int* __restrict__ ctrl) {
    HALTED(ctrl)
    const real dt = (real)clock[CK_DT], w_new = (real)clock[CK_W_NEW], w_old = (real)clock[CK_W_OLD];
    const int i = blockIdx.x * TBX + threadIdx.x, j0 = blockIdx.y * TILE_H + threadIdx.y;
#define PREDICT(S)                                                                                             \
    _Pragma("unroll") for (int q = 0; q < TROWS; ++q) predict_faces<S>(i, j0 + q * TBY, u, v, f, g, hu, hv, nx, ny, \
                                                                       px, py, iu_hi, jv_hi, lim, dx, dy, idx2,   \
                                                                       idy2, nu, ab2, dt, w_new, w_old)
    switch (scheme) {
        case CONV_CENTRAL: PREDICT(CONV_CENTRAL); break;
        case CONV_UPWIND: PREDICT(CONV_UPWIND); break;
        case CONV_TVD: PREDICT(CONV_TVD); break;
        default: PREDICT(CONV_QUICK); break;
    }
#undef PREDICT
}

// F, G on faces the momentum equation does not advance (projection.rs predictor_boundaries):
// thread t handles row j = t of F (sides left, right) and column i = t of G (bottom, top).
extern "C" __global__ void predictor_boundaries(const real* __restrict__ u, const real* __restrict__ v,
                                                real* __restrict__ f, real* __restrict__ g,
                                                const int* __restrict__ bck, int nx, int ny,
                                                const int* __restrict__ ctrl) {
    HALTED(ctrl)
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const int s = nx + 2;
    if (t >= 1 && t <= ny) {
        const int j = t;
        for (int side = 0; side < 2; ++side) {
            const int face = side == 0 ? 0 : nx, inner = side == 0 ? 1 : nx - 1;
            const int kind = bck[side];
            real val;
            if (kind == BC_OUTFLOW) val = f[j * s + inner];
            else if (kind == BC_PERIODIC) val = f[j * s + (side == 0 ? nx : face)];
            else val = u[j * s + face];
            f[j * s + face] = val;
        }
    }
    if (t >= 1 && t <= nx) {
        const int i = t;
        for (int side = 2; side < 4; ++side) {
            const int face = side == 2 ? 0 : ny, inner = side == 2 ? 1 : ny - 1;
            const int kind = bck[side];
            real val;
            if (kind == BC_OUTFLOW) val = g[inner * s + i];
            else if (kind == BC_PERIODIC) val = g[(side == 2 ? ny : face) * s + i];
            else val = v[face * s + i];
            g[face * s + i] = val;
        }
    }
}

// rhs = div(F, G) / dt at cell centres, 1/dt rounded from the clock's dt as the host rounds it:
// in natural order (pack < 0), or reordered and sign-flipped for the cosine-transform solve
// (`makhoul_position`, `flipped` with flip bits `pack`), which removes its mean by zeroing the
// constant mode. A null ctrl skips the halt check (the statistics of a halted batch's last
// completed step). Threads as in `predict`.
extern "C" __global__ void __launch_bounds__(TILE_THREADS)
    poisson_rhs(const real* __restrict__ f, const real* __restrict__ g, real* __restrict__ rhs, int nx, int ny,
                real idx, real idy, const double* __restrict__ clock, const int* __restrict__ ctrl, int pack) {
    HALTED(ctrl)
    const real idt = (real)(1.0 / clock[CK_DT]);
    const int i0 = blockIdx.x * TBX + threadIdx.x, r0 = blockIdx.y * TILE_H + threadIdx.y;
    const int s = nx + 2;
    if (i0 >= nx) return;
    const int ip = pack < 0 ? i0 : makhoul_position(i0, nx);
#pragma unroll
    for (int q = 0; q < TROWS; ++q) {
        const int j0 = r0 + q * TBY;
        if (j0 >= ny) break;
        const int k = (j0 + 1) * s + i0 + 1;
        const real val = ((f[k] - f[k - 1]) * idx + (g[k] - g[k - s]) * idy) * idt;
        if (pack < 0) rhs[j0 * nx + i0] = val;
        else rhs[makhoul_position(j0, ny) * nx + ip] = flipped(i0, j0, pack) ? -val : val;
    }
}

// u = F - dt dp/dx, v = G - dt dp/dy on the faces the projection moves; block maxima of the new
// |u|, |v| (`face_speeds`) into pmax[block], pmax[nblocks + block] (the next step's dt). With
// `stats`, also partial sums of the squared change (partial[block]) and of u^2 + v^2 over the
// cells' right and top faces (partial[nblocks + block]): the steady-change residual, which the
// host reads for the last step of a batch only, so the other steps skip reading the old u, v.
// pack < 0: the pressure is read from p. pack >= 0: it is read from the transform solve's
// reordered solution `packed` (flip bits `pack`, undone as kernels/poisson.cu describes) and
// written to p in natural order, cell (i - 1, j - 1) with faces (i, j). Threads as in `predict`, so the four block reductions are paid once per TROWS
// rows.
extern "C" __global__ void __launch_bounds__(TILE_THREADS) correct(real* __restrict__ u, real* __restrict__ v, const real* __restrict__ f,
                                   const real* __restrict__ g, real* __restrict__ p,
                                   const real* __restrict__ packed, int pack, int stats, real* __restrict__ partial,
                                   real* __restrict__ pmax, int nx, int ny, int px, int py, int i_lo, int i_hi,
                                   int j_lo, int j_hi, double dx, double dy, const double* __restrict__ clock,
                                   const int* __restrict__ ctrl) {
    HALTED(ctrl)
    const real dtdx = (real)(clock[CK_DT] / dx), dtdy = (real)(clock[CK_DT] / dy);
    const int i = blockIdx.x * TBX + threadIdx.x, j0 = blockIdx.y * TILE_H + threadIdx.y;
    const int s = nx + 2;
    const real two = (real)2.0;
    real d2 = 0, n2 = 0, um = 0, vm = 0;
    auto pc = [&](int a, int b) -> real {
        if (pack < 0) return p[(b - 1) * nx + (a - 1)];
        const real x = packed[makhoul_position(b - 1, ny) * nx + makhoul_position(a - 1, nx)];
        return flipped(a - 1, b - 1, pack) ? -x : x;
    };
#pragma unroll
    for (int q = 0; q < TROWS; ++q) {
        const int j = j0 + q * TBY;
        if (i > nx || j > ny) continue;
        const int k = j * s + i;
        if (j >= 1 && i >= i_lo && i <= i_hi) {
            real grad;
            if (i == 0) grad = pc(1, j) * two;
            else if (i == nx && !px) grad = -pc(nx, j) * two;
            else grad = pc(i == nx ? 1 : i + 1, j) - pc(i, j);
            const real nw = f[k] - dtdx * grad;
            if (stats) {
                const real old = u[k];
                d2 = d2 + (nw - old) * (nw - old);
            }
            u[k] = nw;
        }
        if (j >= j_lo && j <= j_hi && i >= 1) {
            real grad;
            if (j == 0) grad = pc(i, 1) * two;
            else if (j == ny && !py) grad = -pc(i, ny) * two;
            else grad = pc(i, j == ny ? 1 : j + 1) - pc(i, j);
            const real nw = g[k] - dtdy * grad;
            if (stats) {
                const real old = v[k];
                d2 = d2 + (nw - old) * (nw - old);
            }
            v[k] = nw;
        }
        if (i >= 1 && j >= 1) {
            if (stats) {
                const real a = u[k], b = v[k];
                n2 = n2 + (a * a + b * b);
            }
            if (pack >= 0) p[(j - 1) * nx + (i - 1)] = pc(i, j);
        }
        real a, b;
        face_speeds(u, v, k, i, j, nx, ny, px, py, &a, &b);
        um = fmax(um, a);
        vm = fmax(vm, b);
    }
    const int nb = gridDim.x * gridDim.y;
    if (stats) {
        const real sd = block_sum(d2);
        const real sn = block_sum(n2);
        if (thread_linear() == 0) {
            partial[block_linear()] = sd;
            partial[nb + block_linear()] = sn;
        }
    }
    const real bu = block_max(um);
    const real bv = block_max(vm);
    if (thread_linear() == 0) {
        pmax[block_linear()] = bu;
        pmax[nb + block_linear()] = bv;
    }
}

// Ghost values on the left and right sides, rows 1..=ny (staggered.rs fill_velocity_ghosts).
extern "C" __global__ void ghosts_x(real* __restrict__ u, real* __restrict__ v, const int* __restrict__ bck,
                                    const real* __restrict__ bcv, int nx, int ny, const int* __restrict__ ctrl) {
    HALTED(ctrl)
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < 1 || j > ny) return;
    real* ur = u + j * (nx + 2);
    real* vr = v + j * (nx + 2);
    const real two = (real)2.0;
    for (int side = 0; side < 2; ++side) {
        const int face = side == 0 ? 0 : nx, ghost = side == 0 ? 0 : nx + 1, inner = side == 0 ? 1 : nx;
        switch (bck[side]) {
            case BC_WALL:
                ur[face] = 0;
                vr[ghost] = two * bcv[2 * side] - vr[inner];
                break;
            case BC_INFLOW:
                ur[face] = bcv[2 * side];
                vr[ghost] = two * bcv[2 * side + 1] - vr[inner];
                break;
            case BC_OUTFLOW: vr[ghost] = vr[inner]; break;
            case BC_SYMMETRY:
                ur[face] = 0;
                vr[ghost] = vr[inner];
                break;
            case BC_PERIODIC:
                if (side == 0) {
                    ur[0] = ur[nx];
                    ur[nx + 1] = ur[1];
                    vr[0] = vr[nx];
                    vr[nx + 1] = vr[1];
                }
                break;
        }
    }
}

// Ghost values on the bottom and top sides, all columns 0..nx+2 (corners included).
extern "C" __global__ void ghosts_y(real* __restrict__ u, real* __restrict__ v, const int* __restrict__ bck,
                                    const real* __restrict__ bcv, int nx, int ny, const int* __restrict__ ctrl) {
    HALTED(ctrl)
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > nx + 1) return;
    const int s = nx + 2;
    const real two = (real)2.0;
    for (int side = 2; side < 4; ++side) {
        const int face = side == 2 ? 0 : ny, ghost = side == 2 ? 0 : ny + 1, inner = side == 2 ? 1 : ny;
        const int f = face * s + i, gh = ghost * s + i, n = inner * s + i;
        switch (bck[side]) {
            case BC_WALL:
                v[f] = 0;
                u[gh] = two * bcv[2 * side] - u[n];
                break;
            case BC_INFLOW:
                v[f] = bcv[2 * side + 1];
                u[gh] = two * bcv[2 * side] - u[n];
                break;
            case BC_OUTFLOW: u[gh] = u[n]; break;
            case BC_SYMMETRY:
                v[f] = 0;
                u[gh] = u[n];
                break;
            case BC_PERIODIC:
                if (side == 2) {
                    u[i] = u[ny * s + i];
                    u[(ny + 1) * s + i] = u[s + i];
                    v[i] = v[ny * s + i];
                    v[(ny + 1) * s + i] = v[s + i];
                }
                break;
        }
    }
}

// Block maxima of |u| and |v| (`face_speeds`, faces (i, j) for i in 0..=nx, j in 0..=ny) into
// partial[block] and partial[nblocks + block]: the speeds of a state not made by `correct`.
// Threads as in `correct`.
extern "C" __global__ void __launch_bounds__(TILE_THREADS)
    max_speed(const real* __restrict__ u, const real* __restrict__ v, real* __restrict__ partial, int nx, int ny,
              int px, int py, const int* __restrict__ ctrl) {
    HALTED(ctrl)
    const int i = blockIdx.x * TBX + threadIdx.x, j0 = blockIdx.y * TILE_H + threadIdx.y;
    real um = 0, vm = 0;
#pragma unroll
    for (int q = 0; q < TROWS; ++q) {
        const int j = j0 + q * TBY;
        real a = 0, b = 0;
        if (i <= nx && j <= ny) face_speeds(u, v, j * (nx + 2) + i, i, j, nx, ny, px, py, &a, &b);
        um = fmax(um, a);
        vm = fmax(vm, b);
    }
    const real bu = block_max(um);
    const real bv = block_max(vm);
    if (thread_linear() == 0) {
        const int nb = gridDim.x * gridDim.y;
        partial[block_linear()] = bu;
        partial[nb + block_linear()] = bv;
    }
}

// One block: combines the change sums of `correct` (nc blocks, may be 0) and the speed maxima
// of `correct` or `max_speed` (nm blocks) into sc[SC_CHANGE], sc[SC_NORM], sc[SC_UMAX],
// sc[SC_VMAX].
extern "C" __global__ void step_finalize(const real* __restrict__ pc, int nc, const real* __restrict__ pm, int nm,
                                         real* __restrict__ sc, const int* __restrict__ ctrl) {
    HALTED(ctrl)
    const real change = sum_partials(pc, nc);
    const real norm = sum_partials(pc + nc, nc);
    const real um = max_partials(pm, nm);
    const real vm = max_partials(pm + nm, nm);
    if (thread_linear() == 0) {
        sc[SC_CHANGE] = change;
        sc[SC_NORM] = norm;
        sc[SC_UMAX] = um;
        sc[SC_VMAX] = vm;
    }
}
