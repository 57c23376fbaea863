// The direct pressure solve by fast transforms (pressure_poisson/spectral.rs) on the device,
// included by poisson.cu: the kernel between cuFFT's real-to-complex and complex-to-real
// transforms (src/solver/incompressible/cuda/spectral.rs).
#pragma once

// The DCT-II of an nx x ny (x nz) field, X[k] = sum_i x_i prod_a cos(pi k_a (2 i_a + 1) / 2 n_a),
// is computed from the real-to-complex DFT V of the field reordered along every axis (Makhoul
// 1980, "A fast cosine transform in one and multiple dimensions"): position q of a reordered
// axis holds element 2q for q < (n + 1) / 2 and 2(n - 1 - q) + 1 after. Along one axis, with
// w(k) = exp(-i pi k / 2n) and V the DFT of the (possibly complex) reordered line,
//   DCT(k) = (w(k) V(k) + conj(w(k)) V(-k)) / 2,  and conversely  V(k) = conj(w(k)) (X(k) - i X(n - k))
// with X(n) = 0; applied axis by axis (x, then y, then the slowest axis, whose result is real):
//   2D: X[b][a] = Re(w_y(b) Z_x) / 2, Z_x = w_x(a) V[b][a] + conj(w_x(a)) V[b][-a];
//   3D: X[c][b][a] = Re(w_z(c) (w_y(b) Z_x(b) + conj(w_y(b)) Z_x(-b))) / 4,
// and back V[k] = conj(prod_a w_a(k_a)) sum_e (-i)^|e| X[k ^ e], e over the subsets of axes whose
// index k_a goes to n_a - k_a. Indices are (.., y, x) from slow to fast, -k means (n - k) mod n in
// V and n - k in X. V[b][-a] is read as conj(V[-b][a]) (-c too in 3D), by Hermitian symmetry
// from the stored half (x in 0..=nx/2). Odd cells of a Dirichlet axis change sign on the way in
// and out (DST-II via DCT-II). A periodic axis (the CPU's Hartley transform, which mixes the same
// two Fourier modes k and n - k) is not reordered and keeps its DFT coefficients: with any
// periodic axis the same steps run on complex values, each cosine axis in turn, without the last
// axis' real-part shortcut (`mixed_coefficients`). The twiddle tables hold cos and sin of
// pi k / (2n) for k in 0..n: tw[2k], tw[2k + 1]. The reordering and sign flips (`packed_index` in
// common.cuh) are applied by projection.cu `poisson_rhs` as it writes the right-hand side, and
// undone by `correct` as it reads the solution.

// A complex value; aligned so that one (vector) load or store moves it, as the interleaved
// half spectrum and the twiddle tables hold them.
struct __align__(2 * sizeof(real)) cplx {
    real re, im;
};

// i mod n for i in 0..=n, the only range a wavenumber pair's indices take: common.cuh
// `wrap_index` restricted to it. That one keeps a division for any k; in `dct_divide` its code
// took 1,600 instead of 936 SASS instructions (2D f32) and 76 instead of 66 registers (3D f32).
__device__ __forceinline__ int wrap(int i, int n) { return i == n ? 0 : i; }

// The complex value at flat index `at` of an interleaved array (re, im, re, im, ...).
__device__ __forceinline__ cplx load_cplx(const real* v, int at) { return reinterpret_cast<const cplx*>(v)[at]; }

// The stored entries of the group of k (each k_a in 0..=n_a/2): s[my][mz] = V at (k_x, k_y or
// (n_y - k_y) mod n_y as my is 0 or 1, likewise k_z as mz; mz = 0 in 2D). Every DFT value at an
// index (+-k_x, +-k_y, +-k_z) mod n follows from them by Hermitian symmetry (`group_at`), so a
// thread reads its group's 2^(DIM - 1) entries once rather than each value it combines.
struct Group {
    int k[3];
    cplx s[2][2];
};

__device__ __forceinline__ Group load_group(const real* V, const int k[DIM], const Cells& c) {
    const int ny = c.n[1], nz = DIM == 3 ? c.n[DIM - 1] : 1, h = c.n[0] / 2 + 1;
    Group g = {{k[0], k[1], DIM == 3 ? k[DIM - 1] : 0}, {}};
#pragma unroll
    for (int my = 0; my < 2; ++my)
#pragma unroll
        for (int mz = 0; mz < (DIM == 3 ? 2 : 1); ++mz) {
            const int y = my ? wrap(ny - g.k[1], ny) : g.k[1], z = mz ? wrap(nz - g.k[2], nz) : g.k[2];
            const int at = (z * ny + y) * h + g.k[0];
            g.s[my][mz] = load_cplx(V, at);
        }
    return g;
}

// V at DFT index (x, y, z) of the group g (x one of k_x, n_x - k_x; y and z likewise, mod n; z
// is 0 in 2D): the stored entry where x <= n_x / 2, else conj(V(n_x - x, -y, -z)).
__device__ __forceinline__ cplx group_at(const Group& g, int x, int y, int z) {
    const int my = y == g.k[1] ? 0 : 1, mz = DIM == 3 && z != g.k[2] ? 1 : 0;
    if (x == g.k[0]) return g.s[my][mz];
    const cplx m = g.s[1 - my][DIM == 3 ? 1 - mz : 0];
    return {m.re, -m.im};
}

// conj(V) at (x, -y, -z): V at (-x, y, z) by Hermitian symmetry.
__device__ __forceinline__ cplx mirrored(const Group& g, int x, int y, int z, const Cells& c) {
    const int nz = DIM == 3 ? c.n[DIM - 1] : 1;
    const cplx m = group_at(g, x, wrap(c.n[1] - y, c.n[1]), wrap(nz - z, nz));
    return {m.re, -m.im};
}

// w A + conj(w) B for w = cos - i sin.
__device__ __forceinline__ cplx combine(real cs, real sn, cplx a, cplx b) {
    return {cs * (a.re + b.re) + sn * (a.im - b.im), cs * (a.im + b.im) - sn * (a.re - b.re)};
}

// The tables of one transform solve: twiddles and eigenvalues per axis, the normalisation.
struct Transform {
    const real* tw[3];
    const double* lambda[3];
    double scale;
};

// The solve's multiplier scale / sum_a lambda_a[j_a] of the eigenvalues at j (summed in axis
// order, in double as spectral.rs `multiplier`, zero for the constant mode), in REAL.
__device__ __forceinline__ real multiplier(const int j[DIM], const Transform& t) {
    double lambda = t.lambda[0][j[0]];
#pragma unroll
    for (int a = 1; a < DIM; ++a) lambda = lambda + t.lambda[a][j[a]];
    return (real)(lambda == 0.0 ? 0.0 : t.scale / lambda);
}

// X at j (each j_a in 0..=n_a) times its `multiplier`, every axis a cosine axis; zero where some
// j_a = n_a.
__device__ __forceinline__ real solved_coefficient(const Group& g, const int j[DIM], const Cells& c,
                                                   const Transform& t) {
#pragma unroll
    for (int a = 0; a < DIM; ++a)
        if (j[a] == c.n[a]) return 0;
    const int x = j[0], s = DIM - 1;
    const cplx wx = load_cplx(t.tw[0], x);
    const real cx = wx.re, sx = wx.im;
#if DIM == 2
    const cplx zx = combine(cx, sx, group_at(g, x, j[1], 0), mirrored(g, x, j[1], 0, c));
    const real half = (real)0.5;
#else
    const int z = j[DIM - 1];
    cplx zy[2];
    for (int m = 0; m < 2; ++m) {
        const int y = m ? wrap(c.n[1] - j[1], c.n[1]) : j[1];
        zy[m] = combine(cx, sx, group_at(g, x, y, z), mirrored(g, x, y, z, c));
    }
    const cplx wy = load_cplx(t.tw[1], j[1]);
    const cplx zx = combine(wy.re, wy.im, zy[0], zy[1]);
    const real half = (real)0.25;
#endif
    const cplx ws = load_cplx(t.tw[s], j[s]);
    const real X = (ws.re * zx.re + ws.im * zx.im) * half;
    return X * multiplier(j, t);
}

// The index along axis a of the group of k in pattern e (bit a: n_a - k_a).
__device__ __forceinline__ int pattern_index(int k, int n, int e, int a) { return ((e >> a) & 1) ? n - k : k; }

// The stored entry that pattern `own` (bit a: index n_a - k_a along axis a; bit 0 clear, x
// stays k_x) of the group of k stands for, as its index r and flat index in the half spectrum
// (x in 0..=nx/2); false where that entry is the same as a pattern with fewer bits (k_a = 0 or
// n_a - k_a = k_a along a set bit), which its own pattern writes.
__device__ __forceinline__ bool owned_entry(const int k[DIM], int own, const Cells& c, int r[DIM], int* at) {
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        const bool up = (own >> a) & 1;
        r[a] = up ? c.n[a] - k[a] : k[a];
        if (up && (k[a] == 0 || r[a] == k[a])) return false;
    }
    const int h = c.n[0] / 2 + 1;
    *at = DIM == 3 ? (r[DIM - 1] * c.n[1] + r[1]) * h + r[0] : r[1] * h + r[0];
    return true;
}

// With periodic axes (`pack`'s periodic bits): the stored entries of the group of k, owned as in
// dct_divide, from the DFT V to the spectrum of the solution, in place. The group's 2^DIM values
// (V at the index patterns, by Hermitian symmetry) go through the cosine axes in order,
// z(k) = w(k) z(k) + conj(w(k)) z(-k) (zero at index n), are scaled by the `multiplier` of their
// wavenumbers (DCT index along cosine axes, DFT index mod n along periodic ones) and by 1/2 per
// cosine axis, and come back through the cosine axes, z(k) = conj(w(k)) (z(k) - i z(n - k)).
__device__ __forceinline__ void mixed_coefficients(real* V, const int k[DIM], const Cells& c, const Transform& t,
                                                   int pack) {
    constexpr int G = 1 << DIM;
    const Group grp = load_group(V, k, c);
    cplx z[G];
#pragma unroll
    for (int e = 0; e < G; ++e) {
        int j[3] = {0, 0, 0};
#pragma unroll
        for (int a = 0; a < DIM; ++a) j[a] = wrap(pattern_index(k[a], c.n[a], e, a), c.n[a]);
        z[e] = group_at(grp, j[0], j[1], j[2]);
    }
    real half = 1;
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        if (PACK_NATURAL(pack, a)) continue;
        half = half * (real)0.5;
        cplx y[G];
#pragma unroll
        for (int e = 0; e < G; ++e) {
            const int i = pattern_index(k[a], c.n[a], e, a);
            if (i == c.n[a]) {
                y[e] = {0, 0};
                continue;
            }
            const cplx w = load_cplx(t.tw[a], i);
            y[e] = combine(w.re, w.im, z[e], z[e ^ (1 << a)]);
        }
#pragma unroll
        for (int e = 0; e < G; ++e) z[e] = y[e];
    }
#pragma unroll
    for (int e = 0; e < G; ++e) {
        int j[DIM];
#pragma unroll
        for (int a = 0; a < DIM; ++a) {
            const int i = pattern_index(k[a], c.n[a], e, a);
            j[a] = PACK_NATURAL(pack, a) ? wrap(i, c.n[a]) : i;
        }
        bool zero = false;
#pragma unroll
        for (int a = 0; a < DIM; ++a) zero = zero || j[a] == c.n[a];
        const real m = zero ? (real)0 : multiplier(j, t) * half;
        z[e] = {z[e].re * m, z[e].im * m};
    }
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        if (PACK_NATURAL(pack, a)) continue;
        cplx y[G];
#pragma unroll
        for (int e = 0; e < G; ++e) {
            const int i = pattern_index(k[a], c.n[a], e, a);
            if (i == c.n[a]) {
                y[e] = {0, 0};
                continue;
            }
            // conj(w) (z - i z'), z' the value at n - i (zero at index n).
            const bool far_zero = pattern_index(k[a], c.n[a], e ^ (1 << a), a) == c.n[a];
            const cplx o = far_zero ? cplx{0, 0} : z[e ^ (1 << a)];
            const cplx w = load_cplx(t.tw[a], i);
            const real cs = w.re, sn = w.im;
            const real ur = z[e].re + o.im, ui = z[e].im - o.re;
            y[e] = {cs * ur - sn * ui, cs * ui + sn * ur};
        }
#pragma unroll
        for (int e = 0; e < G; ++e) z[e] = y[e];
    }
#pragma unroll
    for (int own = 0; own < G; own += 2) {
        int r[DIM], at;
        if (!owned_entry(k, own, c, r, &at)) continue;
        reinterpret_cast<cplx*>(V)[at] = z[own];
    }
}

// In place on the R2C spectrum V ((nz x) ny x (nx/2 + 1) complex): forward DCT coefficients,
// divided by the eigenvalues, back to the spectrum of the reordered solution. Thread k (k_a in
// 0..=n_a/2; x from the threads, y and z from the grid) owns the stored entries with index
// k_a or n_a - k_a along y (and z) and k_x along x: their 2^DIM coefficients X[+-k] need no
// other entry, so threads never share data.
extern "C" __global__ void dct_divide(real* __restrict__ V, const int* __restrict__ ctrl, int nx, int ny, int nz,
                                      const real* __restrict__ twx, const real* __restrict__ twy,
                                      const real* __restrict__ twz, const double* __restrict__ lx,
                                      const double* __restrict__ ly, const double* __restrict__ lz,
                                      double scale, int pack) {
    GUARD(ctrl)
    const Cells c = make_cells(nx, ny, nz, 0, 0, 0, 0);
    const Transform t = {{twx, twy, twz}, {lx, ly, lz}, scale};
    const int k3[3] = {(int)(blockIdx.x * blockDim.x + threadIdx.x), (int)(blockIdx.y * blockDim.y + threadIdx.y),
                       (int)blockIdx.z};
    int k[DIM];
#pragma unroll
    for (int a = 0; a < DIM; ++a) {
        k[a] = k3[a];
        if (k[a] > c.n[a] / 2) return;
    }
    if (pack >> 3) {
        mixed_coefficients(V, k, c, t, pack);
        return;
    }
    // y[e]: the coefficient at k with the axes of bit set e (bit a: axis a) at n_a - k_a.
    const Group g = load_group(V, k, c);
    real y[1 << DIM];
#pragma unroll
    for (int e = 0; e < (1 << DIM); ++e) {
        int j[DIM];
#pragma unroll
        for (int a = 0; a < DIM; ++a) j[a] = ((e >> a) & 1) ? c.n[a] - k[a] : k[a];
        y[e] = solved_coefficient(g, j, c, t);
    }
#pragma unroll
    for (int own = 0; own < (1 << DIM); own += 2) {
        int r[DIM], at;
        if (!owned_entry(k, own, c, r, &at)) continue;
        // conj of the twiddles' product, slowest axis first.
        const cplx w0 = load_cplx(t.tw[DIM - 1], r[DIM - 1]);
        real wr = w0.re, wi = w0.im;
#pragma unroll
        for (int a = DIM - 2; a >= 0; --a) {
            const cplx w = load_cplx(t.tw[a], r[a]);
            const real cs = w.re, sn = w.im;
            const real nr = wr * cs - wi * sn;
            wi = wr * sn + wi * cs;
            wr = nr;
        }
#if DIM == 2
        const real zr = y[own] - y[own ^ 3], zi = -(y[own ^ 1] + y[own ^ 2]);
#else
        const real zr = y[own] - (y[own ^ 3] + y[own ^ 5] + y[own ^ 6]);
        const real zi = y[own ^ 7] - (y[own ^ 1] + y[own ^ 2] + y[own ^ 4]);
#endif
        reinterpret_cast<cplx*>(V)[at] = {wr * zr - wi * zi, wr * zi + wi * zr};
    }
}
