// Included by stencil.cu after its system layout, Block and nb_sum_of (one compilation unit).
// Additive-correction multigrid V-cycle, CG's preconditioner for the pressure systems
// (src/solver/linear/additive_correction.rs, every value rounded as there): levels of 2 x 2
// aggregates with Galerkin coefficients, weighted Jacobi smoothing, over-corrected prolongation.
// A level's right-hand side `rhs` is separate from its coefficients (the finest level's is CG's
// residual, a coarse level's the b slot of its system).
#define MG_WEIGHT ((real)0.8)
#define MG_OVER_CORRECTION ((real)1.7)
#define MG_COARSEST 64
#define MG_COARSE_SWEEPS 48

// x + w_J (rhs + sum a_nb y_nb - a_P x) / a_P of unknown k at idx, x where a_P = 0 (`relaxed`).
template <class Y>
__device__ __forceinline__ real mg_relaxed(const real* __restrict__ sys, const Block& b, const real* __restrict__ rhs,
                                           real x, Y y, long long k, const int idx[3]) {
    const real ap = sys[k];
    if (ap == (real)0) return x;
    const real r = rhs[k] + nb_sum_of(sys, b, y, k, idx) - ap * x;
    return x + MG_WEIGHT * r / ap;
}

// The fine unknown (index, position) of child `c` of the coarse unknown at cidx (bit a of `c`
// steps one cell along axis a: (2I, 2J), (2I + 1, 2J), (2I, 2J + 1), ... as the CPU's
// `children`); false where it lies outside the fine block.
__device__ __forceinline__ bool mg_child(const Block& fine, const int cidx[3], int c, long long& k, int idx[3]) {
    k = 0;
    for (int a = 2; a >= 0; --a) {
        idx[a] = a < DIM ? 2 * cidx[a] + ((c >> a) & 1) : 0;
        if (idx[a] >= fine.n[a]) return false;
        k = k * fine.n[a] + idx[a];
    }
    return true;
}

// The fine block F of the SHAPE parameters, the coarse block C (`nic x njc x nkc`, the fine one's
// periodicity), and this thread's coarse unknown kc with its indices cidx; threads past the last
// coarse unknown return.
#define THREAD_COARSE_UNKNOWN                                                \
    const Block F = block_of(ni, nj, nk, px, py, pz), C = block_of(nic, njc, nkc, px, py, pz); \
    const long long kc = (long long)blockIdx.x * blockDim.x + threadIdx.x;   \
    if (kc >= C.len) return;                                                 \
    int cidx[3];                                                             \
    position(C, kc, cidx);

// Galerkin coefficients of the coarse level (`coarsen`): one thread per coarse cell, its
// children in mg_child order, each adding a_P, then its links axis by axis, upper before lower:
// subtracted from a_P inside the block, added to the coarse link of their direction across it,
// skipped where they leave a non-periodic block.
extern "C" __global__ void mg_coarsen(const real* __restrict__ fine, real* __restrict__ coarse, SHAPE, int nic,
                                      int njc, int nkc) {
    THREAD_COARSE_UNKNOWN
    real p = 0;
    real links[DIM][2];
#pragma unroll
    for (int a = 0; a < DIM; ++a) links[a][0] = links[a][1] = 0;
    for (int c = 0; c < (1 << DIM); ++c) {
        long long k;
        int idx[3];
        if (!mg_child(F, cidx, c, k, idx)) continue;
        p = p + fine[k];
#pragma unroll
        for (int a = 0; a < DIM; ++a) {
            const int m = F.n[a], i = idx[a];
            // Upper (side 1) then lower (side 0): read, and the neighbour's block along a.
            for (int side = 1; side >= 0; --side) {
                const bool read = side == 1 ? (i + 1 < m || F.p[a]) : (i > 0 || F.p[a]);
                if (!read) continue;
                const int other = side == 1 ? ((i + 1) % m) / 2 : ((i + m - 1) % m) / 2;
                const real l = fine[(side == 1 ? SYS_UPPER(a, F.len) : SYS_LOWER(a, F.len)) + k];
                if (other == cidx[a]) p = p - l;
                else links[a][side] = links[a][side] + l;
            }
        }
    }
    coarse[kc] = p;
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        coarse[SYS_UPPER(a, C.len) + kc] = links[a][1];
        coarse[SYS_LOWER(a, C.len) + kc] = links[a][0];
    }
}

// Two Jacobi sweeps from zero (`smooth_from_zero`): the first sweep's w_J rhs / a_P formed where
// the second reads it.
extern "C" __global__ void mg_smooth_zero(const real* __restrict__ sys, const real* __restrict__ rhs,
                                          real* __restrict__ out, const int* __restrict__ ctrl, SHAPE) {
    GUARD(ctrl)
    THREAD_UNKNOWN
    auto first = [sys, rhs](long long m) { return sys[m] == (real)0 ? (real)0 : MG_WEIGHT * rhs[m] / sys[m]; };
    out[k] = mg_relaxed(sys, B, rhs, first(k), first, k, idx);
}

// Block sums of the residual rhs + sum a_nb x_nb - a_P x into the coarse right-hand side
// (`restrict_residual`).
extern "C" __global__ void mg_restrict(const real* __restrict__ sys, const real* __restrict__ rhs,
                                       const real* __restrict__ x, real* __restrict__ coarse_rhs,
                                       const int* __restrict__ ctrl, SHAPE, int nic, int njc, int nkc) {
    GUARD(ctrl)
    THREAD_COARSE_UNKNOWN
    real s = 0;
    for (int c = 0; c < (1 << DIM); ++c) {
        long long k;
        int idx[3];
        if (!mg_child(F, cidx, c, k, idx)) continue;
        s = s + (rhs[k] + nb_sum(sys, F, x, k, idx) - sys[k] * x[k]);
    }
    coarse_rhs[kc] = s;
}

// x + c xc[parent] (c the over-correction) and one sweep from it, into out (`prolong_and_sweep`).
extern "C" __global__ void mg_prolong_sweep(const real* __restrict__ sys, const real* __restrict__ rhs,
                                            const real* __restrict__ x, const real* __restrict__ xc,
                                            real* __restrict__ out, const int* __restrict__ ctrl, SHAPE, int nic,
                                            int njc) {
    GUARD(ctrl)
    THREAD_UNKNOWN
    auto y = [x, xc, B, nic, njc](long long m) {
        int at[3];
        position(B, m, at);
        const long long parent = ((long long)(at[2] / 2) * njc + at[1] / 2) * nic + at[0] / 2;
        return x[m] + MG_OVER_CORRECTION * xc[parent];
    };
    out[k] = mg_relaxed(sys, B, rhs, y(k), y, k, idx);
}

// One Jacobi sweep x -> out (`sweep`).
extern "C" __global__ void mg_sweep(const real* __restrict__ sys, const real* __restrict__ rhs,
                                    const real* __restrict__ x, real* __restrict__ out,
                                    const int* __restrict__ ctrl, SHAPE) {
    GUARD(ctrl)
    THREAD_UNKNOWN
    out[k] = mg_relaxed(sys, B, rhs, x[k], [x](long long m) { return x[m]; }, k, idx);
}

// The coarsest level (`coarsest`), one block of MG_COARSEST threads for its n <= MG_COARSEST
// unknowns: MG_COARSE_SWEEPS Jacobi sweeps from zero in shared memory, the result into x.
extern "C" __global__ void mg_coarsest(const real* __restrict__ sys, const real* __restrict__ rhs,
                                       real* __restrict__ x, const int* __restrict__ ctrl, SHAPE) {
    GUARD(ctrl)
    __shared__ real a[MG_COARSEST], b[MG_COARSEST];
    const Block B = block_of(ni, nj, nk, px, py, pz);
    const int k = threadIdx.x;
    int idx[3];
    position(B, k, idx);
    if (k < B.len) a[k] = 0;
    __syncthreads();
    for (int s = 0; s < MG_COARSE_SWEEPS / 2; ++s) {
        if (k < B.len) b[k] = mg_relaxed(sys, B, rhs, a[k], [&](long long m) { return a[m]; }, k, idx);
        __syncthreads();
        if (k < B.len) a[k] = mg_relaxed(sys, B, rhs, b[k], [&](long long m) { return b[m]; }, k, idx);
        __syncthreads();
    }
    if (k < B.len) x[k] = a[k];
}
