// Projection-method kernels on the staggered grid, in DIM = 2 or 3 dimensions: the step's time
// step, predictor, predictor boundary faces, Poisson right-hand side, correction, velocity
// ghosts, max-speed and step reductions. They reproduce src/solver/incompressible/projection.rs
// (`Projection<T, DIM>`) operation by operation: sums over the axes in axis order x, y, z.
//
// Velocity components, their predictions F and AB2 histories come as three pointers each (u, v,
// w; the third null in 2D); sizes, periodic flags and spacings as three values, the third read
// in 3D only. The face and cell kernels run TBX x TBY blocks over x-y tiles (common.cuh), one
// block layer per z index in 3D (faces: nz + 1 layers, index 0..=nz; cells: nz).
//
// A step's scalars live on the device, in the clock (double): `step_dt` computes dt from the
// previous step's max speeds there, so that steps follow one another with no host round trip
// (and can be replayed as one CUDA graph). When the health check fails, `step_dt` sets
// ctrl[CTRL_HALT] (and ctrl[CTRL_DONE], which the pressure kernels' GUARD tests) and every step
// kernel returns at once, so the state stays the last one computed.
#include "common.cuh"
#include "staggered.cuh"

// The first statement of every kernel here: wait for the kernel before (AFTER_PREDECESSOR, so
// that the step's kernels start early), then return if the step has halted.
#define HALTED(ctrl)         \
    AFTER_PREDECESSOR();     \
    if ((ctrl) != 0 && (ctrl)[CTRL_HALT] != 0) return;

// The clock's slots (CK_*: dt, time, AB2 weights, history flag, steps, the host's cap on dt) and
// CTRL_HALT are defined at the top of the unit from src/backend/cuda/slots.rs.

// The three pointers of a per-component argument.
#define VEC(name) real* __restrict__ name##0, real* __restrict__ name##1, real* __restrict__ name##2
#define CVEC(name) const real* __restrict__ name##0, const real* __restrict__ name##1, const real* __restrict__ name##2
#define STAG_PARAMS int nx, int ny, int nz, int px, int py, int pz
#define STAG make_stag(nx, ny, nz, px, py, pz)

// The face (i, j, k) of row q of this thread in the face kernels' tiles (k = blockIdx.z), its
// idx and flat index.
__device__ __forceinline__ int tile_face(const Stag& g, int q, int idx[DIM]) {
    return stag_at(g, blockIdx.x * TBX + threadIdx.x, blockIdx.y * TILE_H + threadIdx.y + q * TBY, blockIdx.z, idx);
}

// One block: the largest speeds of the state from the block maxima `pm` (nm blocks of each
// component's |q|, written by `correct` or `max_speed`) into sc[speed_slot(c)]; then, in thread
// 0, the health check and dt of the next step (config.rs `check_health` and
// `StepLimits::time_step`, in the same order of operations): with the largest speed m over the
// components, the step halts unless m is finite and m <= `limit`; else, with um_a the speed of
// component a raised to the walls' `wall`, dt = min(cfl min(dt_visc, h_a / um_a over the axes,
// re_num / sum_a um_a^2 for central schemes), dt_cap), and AB2's weights 1 + r/2, -r/2 for
// r = dt / dt_old.
extern "C" __global__ void step_dt(double* __restrict__ clock, int* __restrict__ ctrl, const real* __restrict__ pm,
                                   int nm, real* __restrict__ sc, double dt_visc, double dx, double dy, double dz,
                                   double wall, double re_num, int central, double cfl, double limit, int ab2) {
    AFTER_PREDECESSOR();
    real b[DIM];
#pragma unroll
    for (int a = 0; a < DIM; ++a) b[a] = max_partials(pm + a * nm, nm);
    if (thread_linear() != 0) return;
    const double h[3] = {dx, dy, dz};
    double um[DIM];
    double m = (double)b[0];
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        sc[speed_slot(a)] = b[a];
        if (a > 0) m = fmax(m, (double)b[a]);
    }
    const int halt = !(isfinite(m) && m <= limit);
    ctrl[CTRL_HALT] = halt;
    ctrl[CTRL_DONE] = halt;
    if (halt) return;
    double dt = dt_visc;
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        um[a] = fmax((double)b[a], wall);
        if (um[a] > 0.0) dt = fmin(dt, h[a] / um[a]);
    }
    if (central) {
        double sum = um[0], sq = um[0] * um[0];
#pragma unroll
        for (int a = 1; a < DIM; ++a) {
            sum = sum + um[a];
            sq = sq + um[a] * um[a];
        }
        if (sum > 0.0) dt = fmin(dt, re_num / sq);
    }
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

#include "predictor.cuh"

// The predictor of every component on its advanced faces (upper index hi_c along axis c), dt and
// the AB2 weights from the clock, with the momentum sources s (null pointers: none). Threads as
// in the Poisson stencil kernels (common.cuh TBX x TBY, TROWS rows each, TBY apart), each row's
// loads issued together (`predict_rows`). The entry points
// predict_central, predict_upwind, predict_tvd and predict_quick compile one scheme each, so
// that each gets the registers its own faces need.
// BOUNDS: the kernel's `__launch_bounds__`. In 3D the central and upwind predictors are held to
// 80 registers (a few bytes spilled) so that 3 blocks fit a multiprocessor instead of 2; TVD and
// QUICK need about 160 registers and are left alone.
#define PREDICT(name, SCHEME, BOUNDS)                                                                           \
    extern "C" __global__ void __launch_bounds__(BOUNDS)                                                       \
        name(CVEC(u), VEC(f), VEC(hq), CVEC(s), STAG_PARAMS, int hi0, int hi1, int hi2, int lim, real ihx,     \
             real ihy, real ihz, real idx2, real idy2, real idz2, real nu, int ab2, const double* __restrict__ clock, \
             const int* __restrict__ ctrl) {                                                                   \
        HALTED(ctrl)                                                                                           \
        const real dt = (real)clock[CK_DT], w_new = (real)clock[CK_W_NEW], w_old = (real)clock[CK_W_OLD];     \
        const Stag g = STAG;                                                                                   \
        const real* const vel[3] = {u0, u1, u2};                                                               \
        real* const pred[3] = {f0, f1, f2};                                                                    \
        real* const hist[3] = {hq0, hq1, hq2};                                                                 \
        const real* const src[3] = {s0, s1, s2};                                                               \
        const int hi[3] = {hi0, hi1, hi2};                                                                     \
        const real ih[3] = {ihx, ihy, ihz}, ih2[3] = {idx2, idy2, idz2};                                       \
        if (tile_advanced(g, hi))                                                                              \
            predict_rows<SCHEME, true>(g, vel, pred, hist, src, hi, lim, ih, ih2, nu, ab2, dt, w_new, w_old);  \
        else                                                                                                   \
            predict_rows<SCHEME, false>(g, vel, pred, hist, src, hi, lim, ih, ih2, nu, ab2, dt, w_new, w_old); \
    }
#if DIM == 3
#define LEAN TILE_THREADS, 3
#else
#define LEAN TILE_THREADS
#endif
PREDICT(predict_central, CONV_CENTRAL, LEAN)
PREDICT(predict_upwind, CONV_UPWIND, LEAN)
PREDICT(predict_tvd, CONV_TVD, TILE_THREADS)
PREDICT(predict_quick, CONV_QUICK, TILE_THREADS)
#undef LEAN
#undef PREDICT

// The ghosted index of this thread's point on the plane normal to axis a: the other axes in
// order take (blockIdx.x blockDim.x + threadIdx.x, blockIdx.y) plus `lo` of each (lo[b] = 0 for
// the axes before a, 1 after, in the ghost kernels; 1 in predictor_boundaries); idx[a] = 0.
// False outside 0..=n + 1 (lo 0) or 1..=n (lo 1).
__device__ __forceinline__ bool plane_point(const Stag& g, int a, const int lo[DIM], int idx[DIM], int* f) {
    const int t[2] = {(int)(blockIdx.x * blockDim.x + threadIdx.x), (int)blockIdx.y};
    int m = 0;
    bool in = true;
    *f = 0;
#pragma unroll
    for (int b = 0; b < DIM; ++b) {
        if (b == a) {
            idx[b] = 0;
            continue;
        }
        idx[b] = t[m++] + lo[b];
        in = in && idx[b] <= g.n[b] + 1 - lo[b];
        *f += idx[b] * g.st[b];
    }
    return in;
}

// The boundary face of F_a on side s of the line through face k (its flat index: face 0 for
// side 0, face n for side 1), from the side's kind (projection.rs predictor_boundaries): the
// inner F on an outflow or opening face (`inner`, the value of face 1 or n - 1), the periodic
// image on a seam, else the face's velocity (prescribed by the ghosts). A periodic side's face 0
// takes its image, face n (which no thread writes then); face n is its own image and is not
// called for.
__device__ __forceinline__ real boundary_f(const Stag& g, const real* fa, const real* __restrict__ ua, int kind,
                                           int a, int k, real inner) {
    if (open_kind(kind)) return inner;
    if (kind == BC_PERIODIC) return __ldg(&fa[k + g.n[a] * g.st[a]]);
    return ua[k];
}

// F on faces the momentum equation does not advance (projection.rs predictor_boundaries), on a
// part of a decomposed grid and in 3D (on one GPU in 2D `poisson_rhs` sets them, `rhs_rows`):
// for each component c, its two boundary faces normal to axis c at every point of the plane of
// the other axes (interior indices; `plane_point`), `boundary_f`.
extern "C" __global__ void predictor_boundaries(CVEC(u), VEC(f), const int* __restrict__ bck, STAG_PARAMS,
                                                const int* __restrict__ ctrl) {
    HALTED(ctrl)
    const Stag g = STAG;
    const real* const vel[3] = {u0, u1, u2};
    real* const pred[3] = {f0, f1, f2};
    int lo[DIM];
#pragma unroll
    for (int a = 0; a < DIM; ++a) lo[a] = 1;
#pragma unroll
    for (int c = 0; c < DIM; ++c) {
        int idx[DIM], base;
        if (!plane_point(g, c, lo, idx, &base)) continue;
        const int n = g.n[c], st = g.st[c];
        real* __restrict__ fc = pred[c];
        for (int s = 0; s < 2; ++s) {
            const int kind = bck[2 * c + s];
            if (s == 1 && kind == BC_PERIODIC) continue;
            const int face = base + (s == 0 ? 0 : n) * st;
            fc[face] = boundary_f(g, fc, vel[c], kind, c, face, fc[base + (s == 0 ? 1 : n - 1) * st]);
        }
    }
}

// div(F) / dt of this thread's TROWS cells into `rhs` (`poisson_rhs`). EDGE: the tile holds cells
// by a side and bck is given (one GPU, 2D); its cells by a side first set F's boundary faces as
// `predictor_boundaries` does (`boundary_f`; side 0 before side 1, as there) and take their
// divergence from those values. Every load of F goes through the read-only path (`__ldg`): a
// face that the launch writes (0, and n unless periodic) is loaded only by the thread that
// writes it, before it does.
template <bool EDGE>
__device__ __forceinline__ void rhs_rows(const Stag& g, const Cells& c, real* const pred[3], const real* const vel[3],
                                         int open, const int* __restrict__ bck, real* __restrict__ rhs,
                                         real* __restrict__ natural, const real ih[3], real idt, int pack) {
    int kind[2 * DIM];
#pragma unroll
    for (int side = 0; side < 2 * DIM; ++side) kind[side] = EDGE ? bck[side] : 0;
#pragma unroll
    for (int q = 0; q < TROWS; ++q) {
        int cell[DIM], idx[DIM];
        if (!tile_cell(c, q, cell)) continue;
        const int k = stag_at(g, cell[0] + 1, cell[1] + 1, DIM == 3 ? cell[DIM - 1] + 1 : 0, idx);
        real val = 0;
#pragma unroll
        for (int a = 0; a < DIM; ++a) {
            const int st = g.st[a];
            // A cell by side 0 loads face 0 and then replaces it, before writing it.
            real lo = __ldg(&pred[a][k - st]), hi = __ldg(&pred[a][k]);
            if (EDGE && cell[a] == 0) {
                lo = boundary_f(g, pred[a], vel[a], kind[2 * a], a, k - st, hi);
                pred[a][k - st] = lo;
            }
            if (EDGE && cell[a] == g.n[a] - 1 && kind[2 * a + 1] != BC_PERIODIC) {
                hi = boundary_f(g, pred[a], vel[a], kind[2 * a + 1], a, k, lo);
                pred[a][k] = hi;
            }
            const real d = (hi - lo) * ih[a];
            val = a == 0 ? d : val + d;
        }
        val = val * idt;
        if (open) {
            const real two = (real)2.0;
#pragma unroll
            for (int a = 0; a < DIM; ++a) {
                if ((open >> (2 * a)) & 1 && cell[a] == 0)
                    val = val - two * ih[a] * ih[a] * opening_pressure(vel[a][k - g.st[a]], 0);
                if ((open >> (2 * a + 1)) & 1 && cell[a] == g.n[a] - 1)
                    val = val - two * ih[a] * ih[a] * opening_pressure(vel[a][k], 1);
            }
        }
        if (pack >= 0) {
            bool neg;
            const int at = packed_index(c, cell, pack, &neg);
            rhs[at] = neg ? -val : val;
            if (natural) natural[cell_index(c, cell)] = val;
        } else {
            rhs[cell_index(c, cell)] = val;
        }
    }
}

// rhs = div(F) / dt = (sum_a (F_a[idx] - F_a[idx - e_a]) / h_a, in axis order) / dt at cell
// centres, 1/dt rounded from the clock's dt as the host rounds it, less 2 p_b / h_a^2 by each face
// of an opening side (bit 2 a + s of `open`) with the pressure p_b its velocity u holds
// (`opening_pressure`; projection.rs poisson_rhs): in natural order (pack < 0),
// or reordered and sign-flipped for the transform solve (`packed_index` with the packing code
// `pack`), which removes its mean by zeroing the constant mode, and then, where `natural` is not
// null, in natural order there too (the statistics' copy, in the batch's last step). A null
// ctrl skips the halt check (the statistics of a halted batch's last completed step). With bck
// (one GPU, 2D) the kernel first sets F's boundary faces (`rhs_rows`); a null bck reads the faces
// `predictor_boundaries` set. (In 3D the tiles by a side are many, 28 of the 64 of a 256^2 plane
// and every tile of the first and last planes: the boundary work there made the launch slower
// than the one it saved.) Threads as in `predict`, over the cells.
extern "C" __global__ void __launch_bounds__(TILE_THREADS)
    poisson_rhs(VEC(f), CVEC(u), int open, const int* __restrict__ bck, real* __restrict__ rhs,
                real* __restrict__ natural, int nx, int ny, int nz, real idx, real idy, real idz,
                const double* __restrict__ clock, const int* __restrict__ ctrl, int pack) {
    HALTED(ctrl)
    const real idt = (real)(1.0 / clock[CK_DT]);
    const Stag g = make_stag(nx, ny, nz, 0, 0, 0);
    const Cells c = make_cells(nx, ny, nz, 0, 0, 0, 0);
    real* const pred[3] = {f0, f1, f2};
    const real* const vel[3] = {u0, u1, u2};
    const real ih[3] = {idx, idy, idz};
    int inner_lo[DIM], inner_hi[DIM];
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        inner_lo[a] = 1;
        inner_hi[a] = g.n[a] - 2;
    }
    if (DIM == 2 && bck != 0 && !tile_within(inner_lo, inner_hi))
        rhs_rows<true>(g, c, pred, vel, open, bck, rhs, natural, ih, idt, pack);
    else
        rhs_rows<false>(g, c, pred, vel, open, bck, rhs, natural, ih, idt, pack);
}

// u_c = F_c - dt dp/dx_c on the faces the projection moves (range lo_c..=hi_c along axis c,
// 1..=n along the others; projection.rs `correct`): the pressure difference across the face, or
// on a boundary face twice the difference to the face's held pressure (0 at an outflow face, an
// opening face's `opening_pressure` of its velocity before the correction where bit 2 c + s of
// `open` is set); block maxima of each new
// |u_c| (`speed_face`) into pmax[c nblocks + block] (the next step's dt). With `stats`, also
// partial sums of the squared change (partial[block]) and of sum_c u_c^2 over the cells' upper
// faces (partial[nblocks + block]): the steady-change residual, which the host reads for the
// last step of a batch only, so the other steps skip reading the old velocity. pack < 0: the
// pressure is read from p. pack >= 0: it is read from the transform solve's reordered solution
// `packed` (packing code `pack`, undone as kernels/transform.cuh describes) and written to p in
// natural order. Threads as in `predict`, so the block reductions are paid once per TROWS rows.
// Whether this block's tile holds only faces that `correct` moves by an inner pressure difference
// for every component: lo_c..=hi_c along axis c and 1..=n - 1 along every axis (no boundary
// face, every face a `speed_face`), so the block may skip the tests.
__device__ __forceinline__ bool tile_inner(const Stag& g, const int lo[3], const int hi[3]) {
    int lo_all[DIM], hi_all[DIM];
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        lo_all[a] = max(1, lo[a]);
        hi_all[a] = min(g.n[a] - 1, hi[a]);
    }
    return tile_within(lo_all, hi_all);
}

// The correction of this thread's TROWS rows (`correct`), accumulating the squared change d2, the
// squared speeds n2 (with `stats`) and each component's largest speed um. INNER: the tile is
// `tile_inner` and the step takes no statistics; its faces take no test, and with the tests and
// the packing switch (PACKED: pack >= 0) compiled out each row's loads are issued together. (The
// statistics, a batch's last step only, take the tested path: through the untested one they
// measured 3-4 times slower, for a cause not found.)
template <bool INNER, bool PACKED>
__device__ __forceinline__ void correct_rows(const Stag& g, const Cells& cells, real* const vel[3],
                                             const real* const pred[3], int open, real* __restrict__ p,
                                             const real* __restrict__ packed, int pack, int stats,
                                             const int lo[3], const int hi[3], const real dtdh[DIM], real& d2,
                                             real& n2, real um[DIM]) {
    const real two = (real)2.0;
    if (INNER) stats = 0;
    // The pressure of cell idx (1-based).
    auto pc = [&](const int idx[DIM]) -> real {
        int cell[DIM];
#pragma unroll
        for (int a = 0; a < DIM; ++a) cell[a] = idx[a] - 1;
        if (PACKED) {
            bool neg;
            const real x = packed[packed_index(cells, cell, pack, &neg)];
            return neg ? -x : x;
        }
        return p[cell_index(cells, cell)];
    };
#pragma unroll
    for (int q = 0; q < TROWS; ++q) {
        int idx[DIM];
        const int k = tile_face(g, q, idx);
        bool face = true, interior = true;
#pragma unroll
        for (int a = 0; a < DIM; ++a) {
            face = face && idx[a] <= g.n[a];
            interior = interior && idx[a] >= 1;
        }
        if (!INNER && !face) continue;
#pragma unroll
        for (int c = 0; c < DIM; ++c) {
            bool moved = true;
#pragma unroll
            for (int a = 0; a < DIM; ++a) moved = moved && (a == c ? idx[a] >= lo[c] && idx[a] <= hi[c] : idx[a] >= 1);
            if (!INNER && !moved) continue;
            const int at = idx[c], n = g.n[c];
            int nb[DIM];
#pragma unroll
            for (int a = 0; a < DIM; ++a) nb[a] = idx[a];
            // The velocity before the correction: the change's statistics, an opening's pressure.
            const bool edge = !INNER && (at == 0 || at == n);
            const real old = stats || edge ? vel[c][k] : (real)0;
            real grad;
            if (!INNER && at == 0) {
                nb[c] = 1;
                const real held = (open >> (2 * c)) & 1 ? opening_pressure(old, 0) : (real)0;
                grad = (pc(nb) - held) * two;
            } else if (!INNER && at == n && !g.per[c]) {
                const real held = (open >> (2 * c + 1)) & 1 ? opening_pressure(old, 1) : (real)0;
                grad = (held - pc(idx)) * two;
            } else {
                nb[c] = at == n ? 1 : at + 1;
                grad = pc(nb) - pc(idx);
            }
            const real nw = pred[c][k] - dtdh[c] * grad;
            if (stats) d2 = d2 + (nw - old) * (nw - old);
            vel[c][k] = nw;
        }
        if (INNER || interior) {
            if (stats) {
                real sq = vel[0][k] * vel[0][k];
#pragma unroll
                for (int c = 1; c < DIM; ++c) sq = sq + vel[c][k] * vel[c][k];
                n2 = n2 + sq;
            }
            if (PACKED) {
                int cell[DIM];
#pragma unroll
                for (int a = 0; a < DIM; ++a) cell[a] = idx[a] - 1;
                p[cell_index(cells, cell)] = pc(idx);
            }
        }
#pragma unroll
        for (int c = 0; c < DIM; ++c)
            um[c] = fmax(um[c], INNER || speed_face(g, c, idx) ? fabs(vel[c][k]) : (real)0);
    }
}

extern "C" __global__ void __launch_bounds__(TILE_THREADS)
    correct(VEC(u), CVEC(f), int open, real* __restrict__ p, const real* __restrict__ packed, int pack, int stats,
            real* __restrict__ partial, real* __restrict__ pmax, STAG_PARAMS, int lo0, int hi0, int lo1, int hi1,
            int lo2, int hi2, double dx, double dy, double dz, const double* __restrict__ clock,
            const int* __restrict__ ctrl) {
    HALTED(ctrl)
    const Stag g = STAG;
    const Cells cells = make_cells(nx, ny, nz, 0, 0, 0, 0);
    real* const vel[3] = {u0, u1, u2};
    const real* const pred[3] = {f0, f1, f2};
    const int lo[3] = {lo0, lo1, lo2}, hi[3] = {hi0, hi1, hi2};
    const double h[3] = {dx, dy, dz};
    real dtdh[DIM];
#pragma unroll
    for (int a = 0; a < DIM; ++a) dtdh[a] = (real)(clock[CK_DT] / h[a]);
    real d2 = 0, n2 = 0, um[DIM];
#pragma unroll
    for (int c = 0; c < DIM; ++c) um[c] = 0;
    const bool inner = !stats && tile_inner(g, lo, hi);
#define CORRECT(INNER, PACKED) \
    correct_rows<INNER, PACKED>(g, cells, vel, pred, open, p, packed, pack, stats, lo, hi, dtdh, d2, n2, um)
#define CORRECT_INNER(INNER)    \
    if (pack >= 0) {            \
        CORRECT(INNER, true);   \
    } else {                    \
        CORRECT(INNER, false);  \
    }
    if (inner) {
        CORRECT_INNER(true)
    } else {
        CORRECT_INNER(false)
    }
#undef CORRECT_INNER
#undef CORRECT
    const int nb = block_count();
    if (stats) {
        const real sd = block_sum(d2);
        const real sn = block_sum(n2);
        if (thread_linear() == 0) {
            partial[block_linear()] = sd;
            partial[nb + block_linear()] = sn;
        }
    }
#pragma unroll
    for (int c = 0; c < DIM; ++c) {
        const real bm = block_max(um[c]);
        if (thread_linear() == 0) pmax[c * nb + block_linear()] = bm;
    }
}

// The velocity's ghost values and boundary faces (staggered.rs fill_velocity_ghosts), all axes
// in one launch. fill_velocity_ghosts fills the sides of each axis in turn ("pass a"), the sides
// of axis a over the ghost layers of the axes before it and the interior of those after, so that
// edges and corners take the later axis' condition. Per side (kind bck[2 a + s], velocity
// bcv[3 (2 a + s) + c], the wall's or inflow's vector, zero elsewhere), pass a writes:
// - periodic sides: every component's images, q[0] = q[n] and q[n + 1] = q[1] along a;
// - component c = a: the face (0 or n) the prescribed value (0 for symmetry); outflow and opening
//   faces are unknowns, left alone;
// - components c != a: the ghost (0 or n + 1) the reflection 2 v_c - q(inner) (1 or n), or the
//   inner value where nothing is prescribed.
// Here each point is written once, by the thread of the last pass that writes it
// (`ghost_pass_writes`), with that pass' value (`GhostsAfter`): its source's value after the
// passes before is derived from memory, not read back. Every value is the sequential passes' to
// the bit, and no thread reads a point that another writes. Blocks: blockIdx.z = a, threads over
// the plane normal to a (`plane_point`, lo 0 before a, 1 after).

// Whether pass a writes component c at idx.
__device__ __forceinline__ bool ghost_pass_writes(const Stag& g, const int* __restrict__ bck, int a, int c,
                                                  const int idx[DIM]) {
#pragma unroll
    for (int b = 0; b < DIM; ++b)
        if (b > a && (idx[b] < 1 || idx[b] > g.n[b])) return false;
    const int n = g.n[a], i = idx[a];
    if (bck[2 * a] == BC_PERIODIC || c != a) return i == 0 || i == n + 1;
    return (i == 0 && !open_kind(bck[2 * a])) || (i == n && !open_kind(bck[2 * a + 1]));
}

template <int A>
struct GhostsAfter;

// The value pass A writes at (c, idx) (`ghost_pass_writes`).
template <int A>
__device__ __forceinline__ real ghost_pass_value(const Stag& g, const real* const vel[3], const int* __restrict__ bck,
                                                 const real* __restrict__ bcv, int c, const int idx[DIM]) {
    const int n = g.n[A], i = idx[A];
    int src[DIM];
#pragma unroll
    for (int b = 0; b < DIM; ++b) src[b] = idx[b];
    if (bck[2 * A] == BC_PERIODIC) {
        src[A] = i == 0 ? n : 1;
        return GhostsAfter<A>::value(g, vel, bck, bcv, c, src);
    }
    const int side = 2 * A + (i == 0 ? 0 : 1), kind = bck[side];
    const bool prescribed = kind == BC_WALL || kind == BC_INFLOW;
    if (c == A) return prescribed ? bcv[3 * side + c] : (real)0;
    src[A] = i == 0 ? 1 : n;
    const real m = GhostsAfter<A>::value(g, vel, bck, bcv, c, src);
    return prescribed ? (real)2.0 * bcv[3 * side + c] - m : m;
}

// The value of component c at idx after passes 0..A - 1: that of the last of them to write it,
// else memory's.
template <int A>
struct GhostsAfter {
    __device__ __forceinline__ static real value(const Stag& g, const real* const vel[3], const int* __restrict__ bck,
                                                 const real* __restrict__ bcv, int c, const int idx[DIM]) {
        if (ghost_pass_writes(g, bck, A - 1, c, idx)) return ghost_pass_value<A - 1>(g, vel, bck, bcv, c, idx);
        return GhostsAfter<A - 1>::value(g, vel, bck, bcv, c, idx);
    }
};

template <>
struct GhostsAfter<0> {
    __device__ __forceinline__ static real value(const Stag& g, const real* const vel[3], const int* __restrict__,
                                                 const real* __restrict__, int c, const int idx[DIM]) {
        int f = 0;
#pragma unroll
        for (int b = 0; b < DIM; ++b) f += idx[b] * g.st[b];
        return vel[c][f];
    }
};

// Pass A's points of this thread (both sides, every component), each written here if no later
// pass writes it.
template <int A>
__device__ __forceinline__ void ghost_pass(const Stag& g, real* const vel[3], const int* __restrict__ bck,
                                           const real* __restrict__ bcv) {
    int lo[DIM], idx[DIM], base;
#pragma unroll
    for (int b = 0; b < DIM; ++b) lo[b] = b < A ? 0 : 1;
    if (!plane_point(g, A, lo, idx, &base)) return;
    const int n = g.n[A];
    const bool periodic = bck[2 * A] == BC_PERIODIC;
    for (int s = 0; s < 2; ++s) {
#pragma unroll
        for (int c = 0; c < DIM; ++c) {
            idx[A] = s == 0 ? 0 : c == A && !periodic ? n : n + 1;
            if (!ghost_pass_writes(g, bck, A, c, idx)) continue;
            bool later = false;
#pragma unroll
            for (int b = A + 1; b < DIM; ++b) later = later || ghost_pass_writes(g, bck, b, c, idx);
            if (later) continue;
            const real* const cvel[3] = {vel[0], vel[1], vel[2]};
            vel[c][base + idx[A] * g.st[A]] = ghost_pass_value<A>(g, cvel, bck, bcv, c, idx);
        }
    }
}

extern "C" __global__ void ghosts(VEC(u), const int* __restrict__ bck, const real* __restrict__ bcv, STAG_PARAMS,
                                  const int* __restrict__ ctrl) {
    HALTED(ctrl)
    const Stag g = STAG;
    real* const vel[3] = {u0, u1, u2};
    if (blockIdx.z == 0) ghost_pass<0>(g, vel, bck, bcv);
    else if (blockIdx.z == 1) ghost_pass<1>(g, vel, bck, bcv);
#if DIM == 3
    else ghost_pass<2>(g, vel, bck, bcv);
#endif
}

// Block maxima of each |u_c| (`speed_face`) into partial[c nblocks + block]: the speeds of a
// state not made by `correct`. Threads as in `correct`.
extern "C" __global__ void __launch_bounds__(TILE_THREADS)
    max_speed(CVEC(u), real* __restrict__ partial, STAG_PARAMS, const int* __restrict__ ctrl) {
    HALTED(ctrl)
    const Stag g = STAG;
    const real* const vel[3] = {u0, u1, u2};
    real um[DIM];
#pragma unroll
    for (int c = 0; c < DIM; ++c) um[c] = 0;
#pragma unroll
    for (int q = 0; q < TROWS; ++q) {
        int idx[DIM];
        const int k = tile_face(g, q, idx);
#pragma unroll
        for (int c = 0; c < DIM; ++c) um[c] = fmax(um[c], speed_face(g, c, idx) ? fabs(vel[c][k]) : (real)0);
    }
    const int nb = block_count();
#pragma unroll
    for (int c = 0; c < DIM; ++c) {
        const real bm = block_max(um[c]);
        if (thread_linear() == 0) partial[c * nb + block_linear()] = bm;
    }
}

// One block: combines the change sums of `correct` (nc blocks, may be 0) and the speed maxima
// of `correct` or `max_speed` (nm blocks per component) into sc[SC_CHANGE], sc[SC_NORM] and
// sc[speed_slot(c)].
extern "C" __global__ void step_finalize(const real* __restrict__ pc, int nc, const real* __restrict__ pm, int nm,
                                         real* __restrict__ sc, const int* __restrict__ ctrl) {
    HALTED(ctrl)
    const real change = sum_partials(pc, nc);
    const real norm = sum_partials(pc + nc, nc);
    real m[DIM];
#pragma unroll
    for (int c = 0; c < DIM; ++c) m[c] = max_partials(pm + c * nm, nm);
    if (thread_linear() == 0) {
        sc[SC_CHANGE] = change;
        sc[SC_NORM] = norm;
#pragma unroll
        for (int c = 0; c < DIM; ++c) sc[speed_slot(c)] = m[c];
    }
}
