// The transform pressure solve of a 2D grid by FACR(0) (Hockney 1970, "The potential calculation and
// some applications"): a fast transform along x only, then one tridiagonal system along y for each x
// wavenumber, then the inverse transform (src/solver/incompressible/cuda/facr.rs). Included by
// poisson.cu after transform.cuh (its `cplx`, `load_cplx`). It solves the same discrete system as
// `dct_divide` between the 2D transforms, so its result equals theirs to rounding.
//
// The spectrum V (ny rows of nx/2 + 1 complex values, cuFFT's batched real-to-complex transform of
// each row of the right-hand side, reordered along x by `poisson_rhs` for a cosine x axis) holds two
// real columns per entry m: for a cosine x axis the DCT coefficients X(m) = Re(w(m) V(m)) and
// X(nx - m) = Re(w(nx - m) conj(V(m))) (transform.cuh; X(nx) = 0), for a periodic one Re V(m) and
// Im V(m) (the DFT, wavenumber m both). Column k solves, with sigma = lambda_x(k) hy^2,
//   x(j-1) + (-2 + sigma) x(j) + x(j+1) = hy^2 X(j),   j = 0..ny-1,
// whose end rows take -1 + sigma (Neumann: the ghost equals the cell) or -3 + sigma (Dirichlet:
// the ghost is minus the cell). A Neumann column with sigma = 0 is singular (the constant mode):
// its last row is pinned to zero and `facr_zero_mean` then removes the column's mean, as the
// cosine transform zeroes that mode.
//
// The systems are cut into chunks of FACR_CHUNK rows (substructuring): the last row of each chunk
// but the last is a separator. Given the separators, a chunk's other rows (its interior) form a
// small system with known ends. `facr_chunks` solves each interior with zero ends (f32 suffices:
// an interior of 15 rows is well conditioned); `facr_separators` forms and solves, one thread per
// column, the tridiagonal system of the separators in double (at low wavenumbers the column's
// system is nearly singular, condition about 1e7 at 4096 rows, so its coupled part needs double);
// `facr_solve` then solves each interior with its separators as ends and writes the inverse
// transform's input in place.

#define FACR_CHUNK 16

// The two real columns of spectrum entry m: their x wavenumbers' shifts sigma (that of lambda 1
// for the absent column, the cosine axis' X(nx), whose right-hand side is zero), and whether each
// is the pinned singular column (facr.rs `Columns::column`).
struct FacrColumns {
    real sigma[2];
    bool pinned[2];
};

__device__ __forceinline__ FacrColumns facr_columns(int m, int nx, const double* __restrict__ lx, double hy2,
                                                    bool cosine_x, bool neumann_y) {
    FacrColumns c;
    const int k[2] = {m, cosine_x ? nx - m : m};
#pragma unroll
    for (int s = 0; s < 2; ++s) {
        const double l = k[s] < nx ? lx[k[s]] : 1.0;
        c.sigma[s] = (real)(l * hy2);
        c.pinned[s] = neumann_y && l == 0.0;
    }
    return c;
}

// Row j's two right-hand sides hy^2 X(j) of entry m (zero for an absent column).
__device__ __forceinline__ void facr_load_row(const real* V, int j, int m, int h, int nx, const real* twx,
                                              bool cosine_x, real hy2, real x[2]) {
    const cplx v = load_cplx(V, j * h + m);
    if (cosine_x) {
        const cplx w = load_cplx(twx, m);
        x[0] = (w.re * v.re + w.im * v.im) * hy2;
        if (nx - m < nx) {
            const cplx u = load_cplx(twx, nx - m);
            x[1] = (u.re * v.re - u.im * v.im) * hy2;
        } else {
            x[1] = 0;
        }
    } else {
        x[0] = v.re * hy2;
        x[1] = v.im * hy2;
    }
}

// The diagonal of row j of a column (before pinning).
__device__ __forceinline__ real facr_diagonal(int j, int ny, real sigma, real end) {
    return (j == 0 || j == ny - 1 ? end : (real)-2) + sigma;
}

// Thomas on rows [s, s + n) of one column with unit off-diagonals, right-hand side r (n <= FACR_CHUNK),
// the pinned row (if any) x = 0; the solution overwrites r.
__device__ __forceinline__ void facr_thomas(real r[FACR_CHUNK], int s, int n, int ny, real sigma, real end,
                                            bool pinned) {
    real cp[FACR_CHUNK];
    real c_prev = 0, d_prev = 0;
#pragma unroll
    for (int i = 0; i < FACR_CHUNK; ++i) {
        if (i >= n) break;
        const int j = s + i;
        const bool pin = pinned && j == ny - 1;
        const real a = (i > 0 && !pin) ? (real)1 : (real)0;
        const real b = pin ? (real)1 : facr_diagonal(j, ny, sigma, end);
        const real inv = (real)1 / (b - a * c_prev);
        c_prev = (i + 1 < n && !pin) ? inv : (real)0;
        cp[i] = c_prev;
        d_prev = ((pin ? (real)0 : r[i]) - a * d_prev) * inv;
        r[i] = d_prev;
    }
#pragma unroll
    for (int i = FACR_CHUNK - 2; i >= 0; --i)
        if (i + 1 < n) r[i] = r[i] - cp[i] * r[i + 1];
}

// Block shape of the chunk kernels: FACR_THREADS entries m a block along x, one chunk a block along y.
#define FACR_THREADS 64

// A thread of the chunk kernels: spectrum entry m (from the threads along x), chunk q (blockIdx.y)
// of `chunks`, its rows [s0, s0 + rows), the count n of its interior rows (all but the separator,
// the last row, of every chunk but the last), its two columns, and their right-hand sides r.
struct FacrChunk {
    int m, q, chunks, cols, s0, rows, n;
    FacrColumns c;
    real end;
};

// The thread's chunk and right-hand sides (false past the last entry).
__device__ __forceinline__ bool facr_begin(const real* V, int nx, int ny, const real* twx, const double* lx,
                                           double hy2, int cosine_x, int neumann_y, FacrChunk* k,
                                           real r[2][FACR_CHUNK]) {
    const int h = nx / 2 + 1;
    k->m = blockIdx.x * blockDim.x + threadIdx.x;
    if (k->m >= h) return false;
    k->q = blockIdx.y;
    k->chunks = gridDim.y;
    k->cols = 2 * h;
    k->s0 = k->q * FACR_CHUNK;
    k->rows = min(FACR_CHUNK, ny - k->s0);
    k->n = k->q + 1 < k->chunks ? k->rows - 1 : k->rows;
    k->c = facr_columns(k->m, nx, lx, hy2, cosine_x, neumann_y);
    k->end = neumann_y ? (real)-1 : (real)-3;
#pragma unroll
    for (int i = 0; i < FACR_CHUNK; ++i) {
        if (i >= k->rows) break;
        real x[2];
        facr_load_row(V, k->s0 + i, k->m, h, nx, twx, cosine_x, (real)hy2, x);
        r[0][i] = x[0];
        r[1][i] = x[1];
    }
    return true;
}

// The chunk kernels' grid parameters, and their first statements: the guard, then the thread's
// chunk `k` and right-hand sides `r` (threads past the last entry return).
#define FACR_PARAMS                                                                                  \
    int nx, int ny, const real *__restrict__ twx, const double *__restrict__ lx, double hy2, int cosine_x, \
        int neumann_y
#define FACR_BEGIN(ctrl)                                                        \
    GUARD(ctrl)                                                                 \
    FacrChunk k;                                                                \
    real r[2][FACR_CHUNK];                                                      \
    if (!facr_begin(V, nx, ny, twx, lx, hy2, cosine_x, neumann_y, &k, r)) return;

// Per chunk q and column (2 m + s): the interior's solution with zero ends at its first and last
// row, and the right-hand side of the chunk's separator, into ends[k][q][column], k = 0, 1, 2.
extern "C" __global__ void __launch_bounds__(FACR_THREADS)
    facr_chunks(const real* __restrict__ V, real* __restrict__ ends, const int* __restrict__ ctrl, FACR_PARAMS) {
    FACR_BEGIN(ctrl)
#pragma unroll
    for (int s = 0; s < 2; ++s) {
        const real separator = k.n < k.rows ? r[s][k.rows - 1] : (real)0;
        facr_thomas(r[s], k.s0, k.n, ny, k.c.sigma[s], k.end, k.c.pinned[s]);
        const size_t col = 2 * k.m + s, layer = (size_t)k.chunks * k.cols;
        const size_t at = (size_t)k.q * k.cols + col;
        ends[at] = r[s][0];
        ends[layer + at] = r[s][k.n - 1];
        ends[2 * layer + at] = separator;
    }
}

// The separators' tridiagonal system of each column (one thread a column), in double, from the
// chunks' `ends` and the factors `lower`, `pivot` (reciprocal) and `upper` of its forward
// elimination, which depend on the grid only (facr.rs `Columns::separator_factors`): forward substitution,
// then back substitution into sep[q][column] (scratch: the eliminated right-hand sides).
extern "C" __global__ void facr_separators(const real* __restrict__ ends, real* __restrict__ sep,
                                           double* __restrict__ scratch, const int* __restrict__ ctrl,
                                           const double* __restrict__ lower, const double* __restrict__ pivot,
                                           const double* __restrict__ upper, int cols, int chunks) {
    GUARD(ctrl)
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int seps = chunks - 1;
    if (col >= cols || seps <= 0) return;
    // ends[k][q][column] and the separators' arrays [q][column] share the index q cols + column.
    const size_t layer = (size_t)chunks * cols;
    double d = 0;
    for (int q = 0; q < seps; ++q) {
        const size_t at = (size_t)q * cols + col;
        const double rhs = (double)ends[2 * layer + at] - (double)ends[layer + at] - (double)ends[at + cols];
        d = (rhs - lower[at] * d) * pivot[at];
        scratch[at] = d;
    }
    double x = 0;
    for (int q = seps - 1; q >= 0; --q) {
        const size_t at = (size_t)q * cols + col;
        x = scratch[at] - upper[at] * x;
        sep[at] = (real)x;
    }
}

// Each chunk's rows solved with its separators as ends, written back as the inverse transform's
// input: the spectrum of the reordered solution, (cos, sin) twiddled for a cosine x axis
// (V(m) = conj(w(m)) (P(m) - i P(nx - m)), transform.cuh) and divided by nx (cuFFT's inverse is
// unnormalised).
extern "C" __global__ void __launch_bounds__(FACR_THREADS)
    facr_solve(real* __restrict__ V, const real* __restrict__ sep, const int* __restrict__ ctrl, FACR_PARAMS) {
    FACR_BEGIN(ctrl)
#pragma unroll
    for (int s = 0; s < 2; ++s) {
        const size_t col = 2 * k.m + s;
        const real left = k.q > 0 ? sep[(size_t)(k.q - 1) * k.cols + col] : (real)0;
        const real right = k.n < k.rows ? sep[(size_t)k.q * k.cols + col] : (real)0;
        r[s][0] = r[s][0] - left;
        r[s][k.n - 1] = r[s][k.n - 1] - right;
        facr_thomas(r[s], k.s0, k.n, ny, k.c.sigma[s], k.end, k.c.pinned[s]);
        if (k.n < k.rows) r[s][k.rows - 1] = right;
    }
    const real inv_n = (real)1 / (real)nx;
    const cplx w = cosine_x ? load_cplx(twx, k.m) : cplx{1, 0};
#pragma unroll
    for (int i = 0; i < FACR_CHUNK; ++i) {
        if (i >= k.rows) break;
        const real p0 = r[0][i], p1 = r[1][i];
        const cplx v = cosine_x ? cplx{w.re * p0 + w.im * p1, w.im * p0 - w.re * p1} : cplx{p0, p1};
        reinterpret_cast<cplx*>(V)[(size_t)(k.s0 + i) * (k.cols / 2) + k.m] = {v.re * inv_n, v.im * inv_n};
    }
}

// The singular column's mean removed (entry m = 0's first column, whose system was pinned): one
// block sums the column's ny values in a fixed order and subtracts their mean, so that p has zero
// mean as the cosine transform leaves it.
extern "C" __global__ void facr_zero_mean(real* __restrict__ V, const int* __restrict__ ctrl, int nx, int ny) {
    GUARD(ctrl)
    const int h = nx / 2 + 1;
    real s = 0;
    for (int j = thread_linear(); j < ny; j += block_threads()) s += V[2 * (size_t)j * h];
    s = block_sum(s);
    __shared__ real mean;
    if (thread_linear() == 0) mean = s / (real)ny;
    __syncthreads();
    for (int j = thread_linear(); j < ny; j += block_threads()) V[2 * (size_t)j * h] -= mean;
}
