// Projection-method kernels on the staggered grid: predictor, predictor boundary faces,
// Poisson right-hand side, correction, velocity ghosts, max-speed and step reductions.
// They reproduce src/solver/incompressible/projection.rs operation by operation.
#include "common.cuh"
#include "staggered.cuh"

// Predictor F = u + dt (w_new H + w_old H_old), H = nu lap(u) - div(u u), for the u faces
// (i in 1..=iu_hi, j in 1..=ny) and v faces (i in 1..=nx, j in 1..=jv_hi); H is stored for AB2.
// One instance per convection scheme, so that central and upwind differencing neither read the
// second neighbours nor evaluate their periodic wrap (the predictor is issue-bound, not
// bandwidth-bound).
template <int SCHEME>
__device__ __forceinline__ void predict_faces(const real* __restrict__ u, const real* __restrict__ v,
                                              real* __restrict__ f, real* __restrict__ g, real* __restrict__ hu,
                                              real* __restrict__ hv, int nx, int ny, int px, int py, int iu_hi,
                                              int jv_hi, int lim, real dx, real dy, real idx2, real idy2, real nu,
                                              real dt, real w_new, real w_old) {
    constexpr bool FAR = SCHEME == CONV_TVD || SCHEME == CONV_QUICK;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
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
        f[k] = uc + dt * (w_new * h + w_old * hu[k]);
        hu[k] = h;
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
        g[k] = vc + dt * (w_new * h + w_old * hv[k]);
        hv[k] = h;
    }
#undef FAR_U
#undef FAR_V
}

extern "C" __global__ void predict(const real* __restrict__ u, const real* __restrict__ v, real* __restrict__ f,
                                   real* __restrict__ g, real* __restrict__ hu, real* __restrict__ hv, int nx,
                                   int ny, int px, int py, int iu_hi, int jv_hi, int scheme, int lim, real dx,
                                   real dy, real idx2, real idy2, real nu, real dt, real w_new, real w_old) {
#define PREDICT(S) \
    predict_faces<S>(u, v, f, g, hu, hv, nx, ny, px, py, iu_hi, jv_hi, lim, dx, dy, idx2, idy2, nu, dt, w_new, w_old)
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
                                                const int* __restrict__ bck, int nx, int ny) {
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

// rhs = div(F, G) / dt at cell centres; partial[block] = block sum of rhs (for the mean).
extern "C" __global__ void poisson_rhs(const real* __restrict__ f, const real* __restrict__ g,
                                       real* __restrict__ rhs, real* __restrict__ partial, int nx, int ny,
                                       real idx, real idy, real idt) {
    const int i0 = blockIdx.x * blockDim.x + threadIdx.x;
    const int j0 = blockIdx.y * blockDim.y + threadIdx.y;
    const int s = nx + 2;
    real val = 0;
    if (i0 < nx && j0 < ny) {
        const int k = (j0 + 1) * s + i0 + 1;
        val = ((f[k] - f[k - 1]) * idx + (g[k] - g[k - s]) * idy) * idt;
        rhs[j0 * nx + i0] = val;
    }
    const real b = block_sum(val);
    if (thread_linear() == 0) partial[block_linear()] = b;
}

// u = F - dt dp/dx, v = G - dt dp/dy on the faces the projection moves; partial sums of the
// squared change (partial[block]) and of u^2 + v^2 over the cells' right and top faces
// (partial[nblocks + block]).
extern "C" __global__ void correct(real* __restrict__ u, real* __restrict__ v, const real* __restrict__ f,
                                   const real* __restrict__ g, const real* __restrict__ p,
                                   real* __restrict__ partial, int nx, int ny, int px, int py, int i_lo,
                                   int i_hi, int j_lo, int j_hi, real dtdx, real dtdy) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    const int s = nx + 2;
    const real two = (real)2.0;
    real d2 = 0, n2 = 0;
#define PC(a, b) p[((b) - 1) * nx + ((a) - 1)]
    if (i <= nx && j <= ny) {
        const int k = j * s + i;
        if (j >= 1 && i >= i_lo && i <= i_hi) {
            real grad;
            if (i == 0) grad = PC(1, j) * two;
            else if (i == nx && !px) grad = -PC(nx, j) * two;
            else grad = PC(i == nx ? 1 : i + 1, j) - PC(i, j);
            const real nw = f[k] - dtdx * grad;
            const real old = u[k];
            u[k] = nw;
            d2 = d2 + (nw - old) * (nw - old);
        }
        if (j >= j_lo && j <= j_hi && i >= 1) {
            real grad;
            if (j == 0) grad = PC(i, 1) * two;
            else if (j == ny && !py) grad = -PC(i, ny) * two;
            else grad = PC(i, j == ny ? 1 : j + 1) - PC(i, j);
            const real nw = g[k] - dtdy * grad;
            const real old = v[k];
            v[k] = nw;
            d2 = d2 + (nw - old) * (nw - old);
        }
        if (i >= 1 && j >= 1) {
            const real a = u[k], b = v[k];
            n2 = a * a + b * b;
        }
    }
#undef PC
    const real sd = block_sum(d2);
    const real sn = block_sum(n2);
    if (thread_linear() == 0) {
        const int nb = gridDim.x * gridDim.y;
        partial[block_linear()] = sd;
        partial[nb + block_linear()] = sn;
    }
}

// Ghost values on the left and right sides, rows 1..=ny (staggered.rs fill_velocity_ghosts).
extern "C" __global__ void ghosts_x(real* __restrict__ u, real* __restrict__ v, const int* __restrict__ bck,
                                    const real* __restrict__ bcv, int nx, int ny) {
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
                                    const real* __restrict__ bcv, int nx, int ny) {
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

// Block maxima of |u| (rows 1..=ny, i in 0..=nx) and |v| (rows 0..=ny, i in 1..=nx), into
// partial[block] and partial[nblocks + block].
extern "C" __global__ void max_speed(const real* __restrict__ u, const real* __restrict__ v,
                                     real* __restrict__ partial, int nx, int ny) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    const int k = j * (nx + 2) + i;
    real um = 0, vm = 0;
    if (i <= nx && j >= 1 && j <= ny) um = fabs(u[k]);
    if (i >= 1 && i <= nx && j <= ny) vm = fabs(v[k]);
    const real bu = block_max(um);
    const real bv = block_max(vm);
    if (thread_linear() == 0) {
        const int nb = gridDim.x * gridDim.y;
        partial[block_linear()] = bu;
        partial[nb + block_linear()] = bv;
    }
}

// One block: combines the partials of `correct` (nc blocks, may be 0) and `max_speed`
// (nm blocks) into sc[SC_CHANGE], sc[SC_NORM], sc[SC_UMAX], sc[SC_VMAX].
extern "C" __global__ void step_finalize(const real* __restrict__ pc, int nc, const real* __restrict__ pm, int nm,
                                         real* __restrict__ sc) {
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
