/* Stress load kernels: GEMM inputs and the result check (stress_kernels.h). */
#include "backend/cuda/stress_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

/* Enum values of gq_precision (backend/backend.h is C; the values are fixed there). */
enum { P_BF16 = 0, P_FP16 = 1, P_FP32 = 2, P_FP64 = 3 };

static __device__ __forceinline__ uint64_t mix64(uint64_t z)
{
    /* splitmix64's finaliser: consecutive indices give unrelated values. */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static __device__ __forceinline__ double uniform_pm1(uint64_t i, uint64_t seed)
{
    uint64_t h = mix64(i * 0x9e3779b97f4a7c15ull + seed);
    return (double)(h >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
}

template <typename T> struct conv;
template <> struct conv<__nv_bfloat16> {
    static __device__ __nv_bfloat16 from(double v)
    {
        return __float2bfloat16((float)v);
    }
    static __device__ double to(__nv_bfloat16 v)
    {
        return (double)__bfloat162float(v);
    }
};
template <> struct conv<__half> {
    static __device__ __half from(double v)
    {
        return __float2half((float)v);
    }
    static __device__ double to(__half v)
    {
        return (double)__half2float(v);
    }
};
template <> struct conv<float> {
    static __device__ float from(double v)
    {
        return (float)v;
    }
    static __device__ double to(float v)
    {
        return (double)v;
    }
};
template <> struct conv<double> {
    static __device__ double from(double v)
    {
        return v;
    }
    static __device__ double to(double v)
    {
        return v;
    }
};

template <typename T> __global__ void fill_kernel(T *p, uint64_t n, uint64_t seed)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        p[i] = conv<T>::from(uniform_pm1(i, seed));
}

template <typename T>
__global__ void compare_kernel(const T *c, const T *ref, uint64_t n, double rtol, double scale,
                               unsigned long long *counter)
{
    unsigned long long bad = 0;
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double a = conv<T>::to(c[i]), b = conv<T>::to(ref[i]);
        /* Written so that NaN in c counts as faulty. */
        if (!(fabs(a - b) <= rtol * (fabs(b) + scale)))
            bad++;
    }
    /* Warp-reduce, one atomic per warp. */
    for (int off = 16; off > 0; off >>= 1)
        bad += __shfl_down_sync(0xffffffffu, bad, off);
    if ((threadIdx.x & 31) == 0 && bad)
        atomicAdd(counter, bad);
}

__global__ void publish_kernel(const unsigned long long *src, volatile unsigned long long *dst)
{
    *dst = *src;
    __threadfence_system();
}

static int grid_for(uint64_t n)
{
    int dev = 0, sms = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    uint64_t want = (n + 255) / 256;
    uint64_t cap = (uint64_t)(sms > 0 ? sms : 80) * 8;
    return (int)(want < cap ? (want ? want : 1) : cap);
}

extern "C" cudaError_t gq_k_stress_fill(void *p, uint64_t n, int prec, uint64_t seed, cudaStream_t s)
{
    int g = grid_for(n);
    switch (prec) {
    case P_BF16: fill_kernel<<<g, 256, 0, s>>>((__nv_bfloat16 *)p, n, seed); break;
    case P_FP16: fill_kernel<<<g, 256, 0, s>>>((__half *)p, n, seed); break;
    case P_FP32: fill_kernel<<<g, 256, 0, s>>>((float *)p, n, seed); break;
    case P_FP64: fill_kernel<<<g, 256, 0, s>>>((double *)p, n, seed); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t gq_k_stress_compare(const void *c, const void *ref, uint64_t n, int prec, double rtol,
                                           double scale, unsigned long long *counter, cudaStream_t s)
{
    int g = grid_for(n);
    switch (prec) {
    case P_BF16:
        compare_kernel<<<g, 256, 0, s>>>((const __nv_bfloat16 *)c, (const __nv_bfloat16 *)ref, n, rtol, scale,
                                         counter);
        break;
    case P_FP16:
        compare_kernel<<<g, 256, 0, s>>>((const __half *)c, (const __half *)ref, n, rtol, scale, counter);
        break;
    case P_FP32:
        compare_kernel<<<g, 256, 0, s>>>((const float *)c, (const float *)ref, n, rtol, scale, counter);
        break;
    case P_FP64:
        compare_kernel<<<g, 256, 0, s>>>((const double *)c, (const double *)ref, n, rtol, scale, counter);
        break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t gq_k_stress_publish(const unsigned long long *src, unsigned long long *dst,
                                           cudaStream_t s)
{
    publish_kernel<<<1, 1, 0, s>>>(src, dst);
    return cudaGetLastError();
}
