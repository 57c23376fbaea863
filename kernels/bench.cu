// Benchmark kernels: a device-to-device copy (the bandwidth ceiling of the stencil kernels).
#include "common.cuh"

// 16-byte accesses (n4 float4 values), grid-stride.
extern "C" __global__ void copy(const float4* __restrict__ src, float4* __restrict__ dst, long long n4) {
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (; k < n4; k += stride) dst[k] = src[k];
}
