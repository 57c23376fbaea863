// The shown field's way to the screen without the host (src/backend/cuda/readback.rs,
// Readback::read_shown_on_device): a display buffer of the solver's precision narrowed into the
// f32 buffer the renderer draws from (memory Vulkan exported and CUDA imported), and what its
// colour scale needs (crate::solver::ValueStats): the least and greatest finite value, the
// smallest positive magnitude, and the subsample of every `stride`-th value the robust range's
// percentiles are taken from. The view computes the same from host values; min and max do not
// depend on the order they are taken in, so both paths give one range.
#include "common.cuh"

#define SHOWN_BLOCK 256
// +infinity (NVRTC has no math.h macros).
#define SHOWN_INF __int_as_float(0x7f800000)

// dst[k] = (float)src[k] for k < n: the host's `as f32` (round to nearest).
extern "C" __global__ void shown_narrow(const real* __restrict__ src, float* __restrict__ dst, long long n) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride) dst[k] = (float)src[k];
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
