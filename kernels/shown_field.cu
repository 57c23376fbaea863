// The shown field's way to the screen without the host (src/backend/cuda/readback.rs,
// Readback::read_shown_on_device): a display buffer of the solver's precision narrowed (or a
// plane of it cut) into the f32 buffer the renderer draws from (memory Vulkan exported and CUDA imported), and what its
// colour scale needs (crate::solver::ValueStats): the least and greatest finite value, the
// smallest positive magnitude, and the subsample of every `stride`-th value the robust range's
// percentiles are taken from. The view computes the same from host values; min and max do not
// depend on the order they are taken in, so both paths give one range.
#include "common.cuh"

// SHOWN_BLOCK (threads per block) comes from src/backend/cuda/slots.rs.
// +infinity (NVRTC has no math.h macros).
#define SHOWN_INF __int_as_float(0x7f800000)

// dst[k] = (float)src[k] for k < n: the host's `as f32` (round to nearest).
extern "C" __global__ void shown_narrow(const real* __restrict__ src, float* __restrict__ dst, long long n) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride) dst[k] = (float)src[k];
}

// The plane of src (n0 x n1 x n2 cells, x fastest) normal to axis a, over the plane's axes
// p (fastest) and q, between layers lo and hi with weight t on hi: dst[i + n_p j] =
// (float)((1 - t) x_lo + t x_hi) in double, or (float)x_lo where t is 0, as the host's
// Slice::cut_into (crate::solver::PlaneCut).
extern "C" __global__ void shown_cut(const real* __restrict__ src, float* __restrict__ dst, long long n0,
                                     long long n1, long long n2, int a, int p, int q, long long lo, long long hi,
                                     double t) {
    const long long n[3] = {n0, n1, n2};
    const long long stride[3] = {1, n0, n0 * n1};
    const long long count = n[p] * n[q];
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < count; k += step) {
        const long long base = (k % n[p]) * stride[p] + (k / n[p]) * stride[q];
        const double x0 = (double)src[base + lo * stride[a]];
        const double x1 = (double)src[base + hi * stride[a]];
        dst[k] = (float)(t == 0.0 ? x0 : (1.0 - t) * x0 + t * x1);
    }
}

// Over block b's grid-stride share of v[0, n): partial[3 b] the least finite value (+inf if
// none), partial[3 b + 1] the greatest (-inf if none), partial[3 b + 2] the smallest |v| > 0
// (+inf if none; NaN is not > 0). Blocks of SHOWN_BLOCK threads.
extern "C" __global__ void __launch_bounds__(SHOWN_BLOCK) shown_stats(const float* __restrict__ v, long long n,
                                                                    float* __restrict__ partial) {
    __shared__ float lo[SHOWN_BLOCK], hi[SHOWN_BLOCK], small[SHOWN_BLOCK];
    float l = SHOWN_INF, h = -SHOWN_INF, s = SHOWN_INF;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride) {
        const float x = v[k];
        if (isfinite(x)) {
            l = fminf(l, x);
            h = fmaxf(h, x);
        }
        const float a = fabsf(x);
        if (a > 0.0f) s = fminf(s, a);
    }
    const int t = threadIdx.x;
    lo[t] = l;
    hi[t] = h;
    small[t] = s;
    __syncthreads();
    for (int half = SHOWN_BLOCK / 2; half > 0; half /= 2) {
        if (t < half) {
            lo[t] = fminf(lo[t], lo[t + half]);
            hi[t] = fmaxf(hi[t], hi[t + half]);
            small[t] = fminf(small[t], small[t + half]);
        }
        __syncthreads();
    }
    if (t == 0) {
        partial[3 * blockIdx.x] = lo[0];
        partial[3 * blockIdx.x + 1] = hi[0];
        partial[3 * blockIdx.x + 2] = small[0];
    }
}

// sample[j] = v[j * stride] for j < count.
extern "C" __global__ void shown_sample(const float* __restrict__ v, long long stride, long long count,
                                        float* __restrict__ sample) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < count; j += step) sample[j] = v[j * stride];
}
