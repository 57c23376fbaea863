// Benchmark kernels: a device-to-device copy (the bandwidth ceiling of the stencil kernels).
#include "common.cuh"

extern "C" __global__ void copy(const real* __restrict__ src, real* __restrict__ dst, long long n) {
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (; k < n; k += stride) dst[k] = src[k];
}
