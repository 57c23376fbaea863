// The transform pressure solve of a 2D grid by FACR(0) (Hockney 1970, "The potential calculation and
// some applications"): a fast transform along x only, then one tridiagonal system along y for each x
// wavenumber, then the inverse transform (src/solver/incompressible/cuda/facr.rs). Included by
// poisson.cu after transform.cuh (its `cplx`, `load_cplx`). It solves the same discrete system as
// `dct_divide` between the 2D transforms, so its result equals theirs to rounding.
//
// The spectrum V (ny rows of h = nx/2 + 1 complex values, cuFFT's batched real-to-complex transform
// of each row of the right-hand side, reordered along x by `poisson_rhs` for a cosine x axis) holds
// two real columns per entry m: for a cosine x axis the DCT coefficients X(m) = Re(w(m) V(m)) and
// X(nx - m) = Re(w(nx - m) conj(V(m))) (transform.cuh; X(nx) = 0), for a periodic one Re V(m) and
// Im V(m) (the DFT, wavenumber m both). Column k solves, with sigma = lambda_x(k) hy^2,
//   x(j-1) + (-2 + sigma) x(j) + x(j+1) = hy^2 X(j),   j = 0..ny-1,
// whose end rows take -1 + sigma (Neumann: the ghost equals the cell) or -3 + sigma (Dirichlet:
// the ghost is minus the cell). A Neumann column with sigma = 0 is singular (the constant mode):
// its last row is pinned to zero and its mean removed afterwards, as the cosine transform zeroes
// that mode.
//
// The systems are cut into chunks of FACR_CHUNK rows (substructuring): the last row of each chunk
// but the last is a separator. Given the separators, a chunk's other rows (its interior) form a
// small system with known ends. `facr_chunks` solves each interior with zero ends in the solver's
// precision (f32 suffices: an interior of 15 rows is well conditioned); `facr_separators` solves
// the separators' tridiagonal system of every column in double (at low wavenumbers the column's
// system is nearly singular, condition about 1e7 at 4096 rows); `facr_solve` then solves each
// interior with its separators as ends and writes the inverse transform's input in place.
//
// A chunk is always FACR_CHUNK rows long: its separator, the rows past ny and the pinned row are
// identity rows (x = 0, coupled to nothing). Its forward elimination then depends on the column and
// the kind of chunk only (first, middle, last, or the single chunk of a short column), not on the
// right-hand side: the host computes it once in double (facr.rs `Columns::chunk_factors`) as the
// reciprocal pivots g(i) = 1 / (b(i) - g(i-1)) (0 for an identity row), stored [kind][i][column].
// With unit off-diagonals, Thomas is then d(i) = g(i) (r(i) - d(i-1)), x(i) = d(i) - g(i) x(i+1).

#define FACR_CHUNK 16
// Threads of a chunk kernels' block: entries m along x (a warp's rows coalesce), chunks along y
// (neighbouring chunks share the factors in L1).
#define FACR_ENTRIES 32
#define FACR_CHUNKS_PER_BLOCK 8
// Warps of a `facr_separators` block: each takes one segment of the separators of 32 columns.
#define FACR_SEGMENTS 16

// Kind of chunk q of `chunks` (index into the factors): 0 middle, 1 first, 2 last, 3 the only one.
__device__ __forceinline__ int facr_kind(int q, int chunks) { return (q == 0) | ((q == chunks - 1) << 1); }

// The thread's entry m, chunk q (with its first row s0) and the chunks' count; false past the
// last entry or chunk.
struct FacrChunk {
    int m, q, chunks, s0;
};

__device__ __forceinline__ bool facr_chunk(int nx, int ny, FacrChunk* k) {
    k->m = blockIdx.x * FACR_ENTRIES + threadIdx.x;
    k->q = blockIdx.y * FACR_CHUNKS_PER_BLOCK + threadIdx.y;
    k->chunks = (ny + FACR_CHUNK - 1) / FACR_CHUNK;
    k->s0 = k->q * FACR_CHUNK;
    return k->m < nx / 2 + 1 && k->q < k->chunks;
}

// The chunk's rows of entry m's two columns, r[i] = (column 2m, column 2m + 1) of row s0 + i:
// hy^2 X (zero past ny).
__device__ __forceinline__ void facr_load(const real* V, const FacrChunk& k, int nx, int ny, const real* twx,
                                          bool cosine_x, real hy2, cplx r[FACR_CHUNK]) {
    const int h = nx / 2 + 1;
    const cplx w = cosine_x ? load_cplx(twx, k.m) : cplx{1, 0};
    // The second column's twiddle w(nx - m); the absent column X(nx) (m = 0) is zero.
    const cplx u = cosine_x && k.m > 0 ? load_cplx(twx, nx - k.m) : cplx{0, 0};
#pragma unroll
    for (int i = 0; i < FACR_CHUNK; ++i) {
        const int j = k.s0 + i;
        const cplx v = j < ny ? load_cplx(V, j * h + k.m) : cplx{0, 0};
        r[i] = cosine_x ? cplx{(w.re * v.re + w.im * v.im) * hy2, (u.re * v.re - u.im * v.im) * hy2}
                        : cplx{v.re * hy2, v.im * hy2};
    }
}

// Thomas on the chunk of both columns with the factors g of its kind (see the top), in place.
__device__ __forceinline__ void facr_thomas(const real* __restrict__ g, const FacrChunk& k, int cols,
                                            cplx r[FACR_CHUNK]) {
    const real* gk = g + (size_t)facr_kind(k.q, k.chunks) * FACR_CHUNK * cols;
    cplx f[FACR_CHUNK];
    cplx d = {0, 0};
#pragma unroll
    for (int i = 0; i < FACR_CHUNK; ++i) {
        f[i] = load_cplx(gk + (size_t)i * cols, k.m);
        d = {f[i].re * (r[i].re - d.re), f[i].im * (r[i].im - d.im)};
        r[i] = d;
    }
#pragma unroll
    for (int i = FACR_CHUNK - 2; i >= 0; --i)
        r[i] = {r[i].re - f[i].re * r[i + 1].re, r[i].im - f[i].im * r[i + 1].im};
}

// The chunk kernels' grid parameters.
#define FACR_PARAMS int nx, int ny, const real *__restrict__ twx, double hy2, int cosine_x

// Per chunk q and column: the interior's solution with zero ends at its first and last row (row 0
// and row FACR_CHUNK - 2: the last chunk's is not used) and the right-hand side of the chunk's
// separator, into ends[k][q][column], k = 0, 1, 2; for column 0 the sum of the interior's solution
// into sums[q] (the mean of the singular column, `facr_separators`).
extern "C" __global__ void __launch_bounds__(FACR_ENTRIES* FACR_CHUNKS_PER_BLOCK)
    facr_chunks(const real* __restrict__ V, real* __restrict__ ends, real* __restrict__ sums,
                const real* __restrict__ g, const int* __restrict__ ctrl, FACR_PARAMS) {
    GUARD(ctrl)
    FacrChunk k;
    if (!facr_chunk(nx, ny, &k)) return;
    cplx r[FACR_CHUNK];
    facr_load(V, k, nx, ny, twx, cosine_x, (real)hy2, r);
    const cplx separator = r[FACR_CHUNK - 1];
    const int cols = 2 * (nx / 2 + 1);
    facr_thomas(g, k, cols, r);
    const size_t layer = (size_t)k.chunks * cols, at = (size_t)k.q * cols;
    reinterpret_cast<cplx*>(ends + at)[k.m] = r[0];
    reinterpret_cast<cplx*>(ends + layer + at)[k.m] = r[FACR_CHUNK - 2];
    reinterpret_cast<cplx*>(ends + 2 * layer + at)[k.m] = separator;
    if (k.m == 0) {
        real s = 0;
#pragma unroll
        for (int i = 0; i < FACR_CHUNK; ++i) s += r[i].re;
        sums[k.q] = s;
    }
}

// A separator's row: for the forward substitution its right-hand side, lower coefficient and
// (reciprocal) pivot, for the back substitution its upper coefficient; and the back substitution's
// row alone, d and the upper coefficient.
struct FacrRow {
    double rhs, lower, pivot, upper;
};
struct FacrBack {
    double d, upper;
};

// Rows a batch of a segment's sweep (`facr_sweep`).
#define FACR_BATCH 4

// The rows q of [q0, q1) through step(q, u, cached, row), forward or (Backward) reversed, in
// batches of FACR_BATCH rows aligned at q0 (u the row's place in its batch): a batch's rows are
// loaded before their steps, so that a recurrence waits for memory once a batch rather than once a
// row, and the first batch's rows come from registers (`first`, `cached`): a segment of at most
// FACR_BATCH rows reads memory once for all of its sweeps.
template <bool Backward, class Row, class Load, class Step>
__device__ __forceinline__ void facr_sweep(int q0, int q1, const Row (&first)[FACR_BATCH], const Load& load,
                                           const Step& step) {
    const int batches = (q1 - q0 + FACR_BATCH - 1) / FACR_BATCH;
    for (int i = 0; i < batches; ++i) {
        const int b = Backward ? batches - 1 - i : i, base = q0 + b * FACR_BATCH;
        Row v[FACR_BATCH];
#pragma unroll
        for (int u = 0; u < FACR_BATCH; ++u) v[u] = b == 0 ? first[u] : base + u < q1 ? load(base + u) : Row{};
#pragma unroll
        for (int k = 0; k < FACR_BATCH; ++k) {
            const int u = Backward ? FACR_BATCH - 1 - k : k;
            if (base + u < q1) step(base + u, u, b == 0, v[u]);
        }
    }
}

// The block's segments' maps out = a in + b chained, forward or (Backward) from the last segment,
// one thread a column: the incoming value of the thread's segment.
template <bool Backward>
__device__ __forceinline__ double facr_chain(double (&map_a)[FACR_SEGMENTS][32], double (&map_b)[FACR_SEGMENTS][32],
                                             double a, double b) {
    const int lane = threadIdx.x, s = threadIdx.y;
    __syncthreads();
    map_a[s][lane] = a;
    map_b[s][lane] = b;
    __syncthreads();
    if (s == 0) {
        double v = 0;
        for (int i = 0; i < FACR_SEGMENTS; ++i) {
            const int t = Backward ? FACR_SEGMENTS - 1 - i : i;
            const double in = v;
            v = map_a[t][lane] * v + map_b[t][lane];
            map_a[t][lane] = in;
        }
    }
    __syncthreads();
    return map_a[s][lane];
}

// The separators' tridiagonal system of each column, in double, from the chunks' `ends` and the
// factors `lower`, `pivot` (reciprocal) and `upper` of its forward elimination, which depend on the
// grid only (facr.rs `Columns::separator_factors`), into sep[q][column]. Row q's right-hand side is
// b(separator q) - y(q)[last] - y(q + 1)[first]. The forward substitution d(q) = pivot (rhs - lower
// d(q - 1)) and the back substitution x(q) = d(q) - upper x(q + 1) are linear recurrences: warp s
// of a block takes segment s of the separators of the block's 32 columns, composes its segment's
// affine map, the block chains the maps (one thread a column) and each warp then runs its segment
// from its true start (a scan of affine maps in two levels). scratch[q][column] holds d past
// a segment's first batch, which stays in registers.
// The block of column 0 also forms the singular column's mean: the interiors' sums plus each
// separator times its weight (1 minus the sums of the two interiors' responses to it, facr.rs
// `Columns::mean_weights`), over ny, into mean[0].
extern "C" __global__ void __launch_bounds__(32 * FACR_SEGMENTS)
    facr_separators(const real* __restrict__ ends, real* __restrict__ sep, double* __restrict__ scratch,
                    const real* __restrict__ sums, const double* __restrict__ weights, double* __restrict__ mean,
                    const int* __restrict__ ctrl, const double* __restrict__ lower,
                    const double* __restrict__ pivot, const double* __restrict__ upper, int cols, int chunks,
                    int ny) {
    GUARD(ctrl)
    __shared__ double map_a[FACR_SEGMENTS][32], map_b[FACR_SEGMENTS][32];
    const int lane = threadIdx.x, s = threadIdx.y;
    const int col = blockIdx.x * 32 + lane;
    const int seps = chunks - 1, per = (seps + FACR_SEGMENTS - 1) / FACR_SEGMENTS;
    // The thread's segment [q0, q1), none past the last column.
    const int q0 = min(s * per, seps), q1 = col < cols ? min(q0 + per, seps) : q0;
    const size_t layer = (size_t)chunks * cols;
    // Row q of the forward substitution: its right-hand side, lower coefficient and pivot, and
    // the upper coefficient of the back substitution.
    const auto forward_row = [&](int q) {
        const size_t at = (size_t)q * cols + col;
        const double rhs = (double)ends[2 * layer + at] - (double)ends[layer + at] - (double)ends[at + cols];
        return FacrRow{rhs, lower[at], pivot[at], upper[at]};
    };
    const auto back_row = [&](int q) {
        const size_t at = (size_t)q * cols + col;
        return FacrBack{scratch[at], upper[at]};
    };
    FacrRow first[FACR_BATCH];
#pragma unroll
    for (int u = 0; u < FACR_BATCH; ++u) first[u] = q0 + u < q1 ? forward_row(q0 + u) : FacrRow{};
    // Forward: the segment's map d(q1 - 1) = a d(q0 - 1) + b, then d from the true start.
    double a = 1, b = 0;
    facr_sweep<false>(q0, q1, first, forward_row, [&](int, int, bool, FacrRow r) {
        b = (r.rhs - r.lower * b) * r.pivot;
        a *= -r.lower * r.pivot;
    });
    double d = facr_chain<false>(map_a, map_b, a, b);
    FacrBack back_first[FACR_BATCH] = {};
    facr_sweep<false>(q0, q1, first, forward_row, [&](int q, int u, bool cached, FacrRow r) {
        d = (r.rhs - r.lower * d) * r.pivot;
        if (cached)
            back_first[u] = {d, r.upper};
        else
            scratch[(size_t)q * cols + col] = d;
    });
    // Backward: the segment's map x(q0) = a x(q1) + b, then x from the true start.
    a = 1;
    b = 0;
    facr_sweep<true>(q0, q1, back_first, back_row, [&](int, int, bool, FacrBack r) {
        b = r.d - r.upper * b;
        a *= -r.upper;
    });
    double x = facr_chain<true>(map_a, map_b, a, b), total = 0;
    facr_sweep<true>(q0, q1, back_first, back_row, [&](int q, int, bool, FacrBack r) {
        x = r.d - r.upper * x;
        sep[(size_t)q * cols + col] = (real)x;
        if (col == 0) total += weights[q] * (double)(real)x;
    });
    // The singular column's mean (column 0: lane 0 of block 0): the interiors' sums, a segment of
    // chunks a warp, and the separators' part.
    if (blockIdx.x != 0) return;
    const int cper = (chunks + FACR_SEGMENTS - 1) / FACR_SEGMENTS;
    for (int q = s * cper; q < min((s + 1) * cper, chunks); ++q) total += (double)sums[q];
    __syncthreads();
    map_a[s][lane] = total;
    __syncthreads();
    if (s == 0 && lane == 0) {
        double m = 0;
        for (int t = 0; t < FACR_SEGMENTS; ++t) m += map_a[t][0];
        mean[0] = m / ny;
    }
}

// Each chunk's rows solved with its separators as ends (the singular column's mean removed where
// `zero_mean`), written back as the inverse transform's input: the spectrum of the reordered
// solution, (cos, sin) twiddled for a cosine x axis (V(m) = conj(w(m)) (P(m) - i P(nx - m)),
// transform.cuh) and divided by nx (cuFFT's inverse is unnormalised).
extern "C" __global__ void __launch_bounds__(FACR_ENTRIES* FACR_CHUNKS_PER_BLOCK)
    facr_solve(real* __restrict__ V, const real* __restrict__ sep, const double* __restrict__ mean,
               const real* __restrict__ g, const int* __restrict__ ctrl, int zero_mean, FACR_PARAMS) {
    GUARD(ctrl)
    FacrChunk k;
    if (!facr_chunk(nx, ny, &k)) return;
    cplx r[FACR_CHUNK];
    facr_load(V, k, nx, ny, twx, cosine_x, (real)hy2, r);
    const int cols = 2 * (nx / 2 + 1);
    const bool last = k.q + 1 == k.chunks;
    const cplx* s = reinterpret_cast<const cplx*>(sep);
    const cplx left = k.q > 0 ? s[(size_t)(k.q - 1) * (cols / 2) + k.m] : cplx{0, 0};
    const cplx right = last ? cplx{0, 0} : s[(size_t)k.q * (cols / 2) + k.m];
    r[0] = {r[0].re - left.re, r[0].im - left.im};
    r[FACR_CHUNK - 2] = {r[FACR_CHUNK - 2].re - right.re, r[FACR_CHUNK - 2].im - right.im};
    facr_thomas(g, k, cols, r);
    if (!last) r[FACR_CHUNK - 1] = right;
    const real shift = zero_mean && k.m == 0 ? (real)mean[0] : (real)0;
    const real inv_n = (real)1 / (real)nx;
    const cplx w = cosine_x ? load_cplx(twx, k.m) : cplx{1, 0};
    const int h = nx / 2 + 1;
#pragma unroll
    for (int i = 0; i < FACR_CHUNK; ++i) {
        const int j = k.s0 + i;
        if (j >= ny) break;
        const real p0 = r[i].re - shift, p1 = r[i].im;
        const cplx v = cosine_x ? cplx{w.re * p0 + w.im * p1, w.im * p0 - w.re * p1} : cplx{p0, p1};
        reinterpret_cast<cplx*>(V)[(size_t)j * h + k.m] = {v.re * inv_n, v.im * inv_n};
    }
}
