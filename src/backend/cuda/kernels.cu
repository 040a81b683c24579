/* Kernels of the CUDA backend; see kernels.h for the contracts. */
#include "backend/cuda/kernels.h"

#include <stdint.h>

#define GQ_K_UNROLL 12

__host__ __device__ static inline uint32_t pat_word(uint64_t i, uint32_t seed)
{
    /* murmur3 finalizer over the word index: neighbouring words differ, and so
     * does the same offset of two different seeds. */
    uint32_t x = (uint32_t)i * 0x9E3779B1u ^ (uint32_t)(i >> 32) * 0x7FEB352Du ^ seed;
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

__device__ static inline unsigned char pat_byte(uint64_t off, uint32_t seed)
{
    return (unsigned char)(pat_word(off / 4, seed) >> (8 * (off % 4)));
}

/* Loads are issued as a batch before the stores, so each thread keeps
 * GQ_K_UNROLL 16-byte requests in flight: that is what hides the latency of
 * peer (NVLink) and host (PCIe) memory. One 512-thread block per SM (the
 * predicated tail needs ~124 registers; with a 64-register cap it spills,
 * and two blocks per SM measured no faster on H200). */
__global__ void __launch_bounds__(GQ_K_COPY_THREADS, 1)
    k_copy(uint4 *dst, const uint4 *src, uint64_t n, unsigned char *dtail, const unsigned char *stail,
           unsigned ntail, int loops)
{
    const uint64_t T = (uint64_t)gridDim.x * blockDim.x;
    const uint64_t t0 = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int l = 0; l < loops; l++) {
        uint64_t i = t0;
        for (; i + (GQ_K_UNROLL - 1) * T < n; i += GQ_K_UNROLL * T) {
            uint4 v[GQ_K_UNROLL];
#pragma unroll
            for (int u = 0; u < GQ_K_UNROLL; u++)
                v[u] = src[i + u * T];
#pragma unroll
            for (int u = 0; u < GQ_K_UNROLL; u++)
                dst[i + u * T] = v[u];
        }
        /* The rest (fewer than GQ_K_UNROLL per thread) as one predicated
         * batch too: a plain loop would wait out one round trip per element. */
        if (i < n) {
            uint4 v[GQ_K_UNROLL];
#pragma unroll
            for (int u = 0; u < GQ_K_UNROLL; u++)
                if (i + u * T < n)
                    v[u] = src[i + u * T];
#pragma unroll
            for (int u = 0; u < GQ_K_UNROLL; u++)
                if (i + u * T < n)
                    dst[i + u * T] = v[u];
        }
        if (t0 < ntail)
            dtail[t0] = stail[t0];
    }
}

/* The split-warp copy (nvbandwidth's bidirectional SM method): even warps
 * of the grid copy pair A, odd warps pair B, so one kernel moves both ways
 * at once with the same batched 16-byte accesses as k_copy. Each half of
 * the warps strides over its own buffer pair; both pairs are n elements. */
__global__ void __launch_bounds__(GQ_K_COPY_THREADS, 1)
    k_copy_split(uint4 *dst_a, const uint4 *src_a, uint4 *dst_b, const uint4 *src_b, uint64_t n,
                 unsigned ntail, int loops)
{
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned warp = tid / 32, lane = tid % 32;
    const bool b_half = (warp & 1u) != 0;
    uint4 *dst = b_half ? dst_b : dst_a;
    const uint4 *src = b_half ? src_b : src_a;
    const uint64_t T = (uint64_t)gridDim.x * blockDim.x / 2;
    const uint64_t t0 = (uint64_t)(warp / 2) * 32 + lane;
    for (int l = 0; l < loops; l++) {
        uint64_t i = t0;
        for (; i + (GQ_K_UNROLL - 1) * T < n; i += GQ_K_UNROLL * T) {
            uint4 v[GQ_K_UNROLL];
#pragma unroll
            for (int u = 0; u < GQ_K_UNROLL; u++)
                v[u] = src[i + u * T];
#pragma unroll
            for (int u = 0; u < GQ_K_UNROLL; u++)
                dst[i + u * T] = v[u];
        }
        if (i < n) {
            uint4 v[GQ_K_UNROLL];
#pragma unroll
            for (int u = 0; u < GQ_K_UNROLL; u++)
                if (i + u * T < n)
                    v[u] = src[i + u * T];
#pragma unroll
            for (int u = 0; u < GQ_K_UNROLL; u++)
                if (i + u * T < n)
                    dst[i + u * T] = v[u];
        }
        if (t0 < ntail)
            ((unsigned char *)(dst + n))[t0] = ((const unsigned char *)(src + n))[t0];
    }
}

/* The same split, nvbandwidth's layout: one 16-byte element per thread,
 * warps alternating between pair A (even) and pair B (odd), a grid over the
 * whole copy; each launch moves each byte once. On 2 x H200 it moved 42.05-
 * 42.10 GB/s per direction host <-> GPU where the strided k_copy_split moved
 * 41.48-41.57 (bench/probes/split_warp.cu). */
__global__ void k_copy_split_flat(uint4 *dst_a, const uint4 *src_a, uint4 *dst_b, const uint4 *src_b,
                                  uint64_t n, unsigned ntail)
{
    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint64_t w = tid / 32, lane = tid % 32;
    const uint64_t i = (w / 2) * 32 + lane;
    uint4 *dst = (w & 1) ? dst_b : dst_a;
    const uint4 *src = (w & 1) ? src_b : src_a;
    if (i < n) {
        __stcg(dst + i, __ldcg(src + i));
    } else if (i == n) {
        for (unsigned k = 0; k < ntail; k++)
            ((unsigned char *)(dst + n))[k] = ((const unsigned char *)(src + n))[k];
    }
}

__global__ void k_fill(uint4 *p, uint64_t n, unsigned char *tail, unsigned ntail, uint32_t seed)
{
    const uint64_t T = (uint64_t)gridDim.x * blockDim.x;
    const uint64_t t0 = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (uint64_t i = t0; i < n; i += T) {
        uint4 v;
        v.x = pat_word(4 * i + 0, seed);
        v.y = pat_word(4 * i + 1, seed);
        v.z = pat_word(4 * i + 2, seed);
        v.w = pat_word(4 * i + 3, seed);
        p[i] = v;
    }
    if (t0 < ntail)
        tail[t0] = pat_byte(16 * n + t0, seed);
}

__global__ void k_check(const uint4 *p, uint64_t n, const unsigned char *tail, unsigned ntail, uint32_t seed,
                        unsigned long long *result)
{
    const uint64_t T = (uint64_t)gridDim.x * blockDim.x;
    const uint64_t t0 = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long bad = 0, first = ~0ull;
    for (uint64_t i = t0; i < n; i += T) {
        uint4 v = p[i];
        uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int k = 0; k < 4; k++) {
            uint32_t e = pat_word(4 * i + k, seed);
            if (w[k] != e) {
                bad++;
                if (first == ~0ull) {
                    uint32_t d = w[k] ^ e;
                    int b = 0;
                    while (!(d & 0xffu)) {
                        d >>= 8;
                        b++;
                    }
                    first = 16 * i + 4 * k + b;
                }
            }
        }
    }
    if (t0 < ntail && tail[t0] != pat_byte(16 * n + t0, seed)) {
        bad++;
        if (first == ~0ull)
            first = 16 * n + t0;
    }
    if (bad) {
        atomicAdd(&result[0], bad);
        atomicMin(&result[1], first);
    }
}

__global__ void k_flip_byte(unsigned char *p, uint64_t offset)
{
    p[offset] ^= 0xffu;
}

__global__ void k_reset_result(unsigned long long *result)
{
    result[0] = 0;
    result[1] = ~0ull;
}

__device__ static inline unsigned long long globaltimer(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void k_spin(volatile int *latch, int *timed_out, unsigned long long timeout_ns)
{
    const unsigned long long t0 = globaltimer();
    while (*latch == 0) {
        if (globaltimer() - t0 > timeout_ns) {
            *timed_out = 1;
            break;
        }
    }
}

__global__ void k_chain(char *base, const uint32_t *order, uint32_t n, uint32_t stride)
{
    const uint64_t T = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += T) {
        char *self = base + (uint64_t)order[k] * stride;
        char *next = base + (uint64_t)order[(k + 1) % n] * stride;
        *(char **)self = next;
    }
}

__global__ void k_chase(void **cursor, unsigned long long iters, int target, unsigned long long *ns)
{
    if ((int)blockIdx.x != target)
        return;
    void *p = *cursor;
    unsigned long long t0, t1;
    /* p as an input: the timer is read only once p has arrived. */
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0) : "l"(p));
    for (unsigned long long i = 0; i < iters; i++)
        p = *(void **)p;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1) : "l"(p));
    *cursor = p;
    *ns += t1 - t0;
}

static int blocks_for(uint64_t items, int threads, int cap)
{
    uint64_t b = (items + threads - 1) / threads;
    if (b < 1)
        b = 1;
    if (b > (uint64_t)cap)
        b = (uint64_t)cap;
    return (int)b;
}

extern "C" int gq_k_copy_max_blocks_per_sm(void)
{
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k_copy, GQ_K_COPY_THREADS, 0) != cudaSuccess ||
        n < 1) {
        (void)cudaGetLastError();
        n = 1;
    }
    return n;
}

extern "C" cudaError_t gq_k_copy(void *dst, const void *src, uint64_t bytes, int loops, int grid_blocks,
                                 cudaStream_t s)
{
    uint64_t n = bytes / 16;
    unsigned ntail = (unsigned)(bytes % 16);
    int blocks = blocks_for(n ? n : 1, GQ_K_COPY_THREADS, grid_blocks);
    k_copy<<<blocks, GQ_K_COPY_THREADS, 0, s>>>((uint4 *)dst, (const uint4 *)src, n,
                                                (unsigned char *)dst + 16 * n,
                                                (const unsigned char *)src + 16 * n, ntail, loops);
    return cudaGetLastError();
}

extern "C" cudaError_t gq_k_copy_split(void *dst_a, const void *src_a, void *dst_b, const void *src_b,
                                       uint64_t bytes, int loops, int grid_blocks, cudaStream_t s)
{
    uint64_t n = bytes / 16;
    unsigned ntail = (unsigned)(bytes % 16);
    /* twice the threads of one copy, at least two warps (one per half) */
    int blocks = blocks_for(2 * (n ? n : 1), GQ_K_COPY_THREADS, grid_blocks);
    k_copy_split<<<blocks, GQ_K_COPY_THREADS, 0, s>>>((uint4 *)dst_a, (const uint4 *)src_a, (uint4 *)dst_b,
                                                      (const uint4 *)src_b, n, ntail, loops);
    return cudaGetLastError();
}

extern "C" cudaError_t gq_k_copy_split_flat(void *dst_a, const void *src_a, void *dst_b, const void *src_b,
                                            uint64_t bytes, int loops, cudaStream_t s)
{
    uint64_t n = bytes / 16;
    unsigned ntail = (unsigned)(bytes % 16);
    uint64_t warps_each = (n + 1 + 31) / 32; /* element n carries the tail */
    uint64_t blocks = (2 * warps_each * 32 + 1023) / 1024;
    if (blocks > 0x7fffffffull)
        return cudaErrorInvalidValue;
    for (int l = 0; l < loops; l++) {
        k_copy_split_flat<<<(unsigned)blocks, 1024, 0, s>>>((uint4 *)dst_a, (const uint4 *)src_a,
                                                            (uint4 *)dst_b, (const uint4 *)src_b, n, ntail);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

extern "C" cudaError_t gq_k_fill(void *p, uint64_t bytes, uint32_t seed, int grid_blocks, cudaStream_t s)
{
    uint64_t n = bytes / 16;
    unsigned ntail = (unsigned)(bytes % 16);
    k_fill<<<blocks_for(n ? n : 1, 256, grid_blocks), 256, 0, s>>>((uint4 *)p, n, (unsigned char *)p + 16 * n,
                                                                   ntail, seed);
    return cudaGetLastError();
}

extern "C" cudaError_t gq_k_check(const void *p, uint64_t bytes, uint32_t seed, unsigned long long *result,
                                  int grid_blocks, cudaStream_t s)
{
    uint64_t n = bytes / 16;
    unsigned ntail = (unsigned)(bytes % 16);
    k_reset_result<<<1, 1, 0, s>>>(result);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    k_check<<<blocks_for(n ? n : 1, 256, grid_blocks), 256, 0, s>>>(
        (const uint4 *)p, n, (const unsigned char *)p + 16 * n, ntail, seed, result);
    return cudaGetLastError();
}

extern "C" cudaError_t gq_k_flip_byte(void *p, uint64_t offset, cudaStream_t s)
{
    k_flip_byte<<<1, 1, 0, s>>>((unsigned char *)p, offset);
    return cudaGetLastError();
}

extern "C" cudaError_t gq_k_spin(volatile int *latch, int *timed_out, unsigned long long timeout_ns,
                                 cudaStream_t s)
{
    k_spin<<<1, 1, 0, s>>>(latch, timed_out, timeout_ns);
    return cudaGetLastError();
}

extern "C" cudaError_t gq_k_chain(void *base, const uint32_t *order, uint32_t n, uint32_t stride,
                                  cudaStream_t s)
{
    k_chain<<<blocks_for(n, 256, 1024), 256, 0, s>>>((char *)base, order, n, stride);
    return cudaGetLastError();
}

extern "C" cudaError_t gq_k_chase(void **cursor, unsigned long long iters, int grid, int target,
                                  unsigned long long *ns, cudaStream_t s)
{
    k_chase<<<grid, 1, 0, s>>>(cursor, iters, target, ns);
    return cudaGetLastError();
}

extern "C" uint32_t gq_k_pattern_word(uint64_t i, uint32_t seed)
{
    return pat_word(i, seed);
}

/* ---- collectives (cuda_coll.c) ------------------------------------------- */

/* The op numbers of gq_coll_op (backend/backend.h, which this C++ file does
 * not include); cuda_coll.c checks them at compile time. */
enum { K_ALL_REDUCE = 0, K_ALL_GATHER = 1, K_REDUCE_SCATTER = 2, K_ALL_TO_ALL = 3, K_BROADCAST = 4 };

__host__ __device__ static inline float coll_val(uint32_t rank, uint64_t block, uint64_t i)
{
    return (float)((rank * 131u + (uint32_t)(block % 509u) * 17u + (uint32_t)(i % 509u)) % 509u + 1u);
}

extern "C" float gq_k_coll_val(uint32_t rank, uint64_t block, uint64_t i)
{
    return coll_val(rank, block, i);
}

__global__ void k_coll_fill(float *p, uint64_t count, uint32_t rank, uint64_t chunk)
{
    for (uint64_t j = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; j < count;
         j += (uint64_t)gridDim.x * blockDim.x)
        p[j] = coll_val(rank, j / chunk, j % chunk);
}

__device__ static inline float coll_expect(int op, uint32_t q, int n, uint64_t chunk, uint64_t j)
{
    float v = 0.0f;
    switch (op) {
    case K_ALL_REDUCE: /* sum over ranks of send[j] */
        for (int r = 0; r < n; r++)
            v += coll_val((uint32_t)r, 0, j);
        return v;
    case K_REDUCE_SCATTER: /* rank q gets block q of every rank's send, summed */
        for (int r = 0; r < n; r++)
            v += coll_val((uint32_t)r, q, j);
        return v;
    case K_ALL_GATHER: /* block r of the output is rank r's send (one block of chunk) */
        return coll_val((uint32_t)(j / chunk), 0, j % chunk);
    case K_ALL_TO_ALL: /* block r of rank q's output is block q of rank r's send */
        return coll_val((uint32_t)(j / chunk), q, j % chunk);
    default: /* K_BROADCAST: root 0's send */ return coll_val(0, 0, j);
    }
}

/* nslices outputs of count elements, stride elements apart */
__global__ void k_coll_check(const float *p, uint64_t count, uint64_t stride, uint64_t nslices, int op,
                             uint32_t rank, int n, uint64_t chunk, unsigned long long *result)
{
    for (uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; t < count * nslices;
         t += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t j = t % count, at = t / count * stride + j;
        float want = coll_expect(op, rank, n, chunk, j);
        if (p[at] != want) { /* NaN (the poison) is never equal */
            atomicAdd(&result[0], 1ull);
            atomicMin(&result[1], (unsigned long long)(4 * at));
        }
    }
}

extern "C" cudaError_t gq_k_coll_fill(float *p, uint64_t count, int rank, uint64_t chunk, int grid_blocks,
                                      cudaStream_t s)
{
    k_coll_fill<<<blocks_for(count ? count : 1, 256, grid_blocks), 256, 0, s>>>(p, count, (uint32_t)rank,
                                                                                chunk ? chunk : 1);
    return cudaGetLastError();
}

extern "C" cudaError_t gq_k_coll_check_slices(const float *p, uint64_t count, uint64_t stride,
                                              uint64_t nslices, int op, int rank, int nranks, uint64_t chunk,
                                              unsigned long long *result, int grid_blocks, cudaStream_t s)
{
    k_reset_result<<<1, 1, 0, s>>>(result);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    uint64_t total = count * (nslices ? nslices : 1);
    k_coll_check<<<blocks_for(total ? total : 1, 256, grid_blocks), 256, 0, s>>>(
        p, count, stride, nslices ? nslices : 1, op, (uint32_t)rank, nranks, chunk ? chunk : 1, result);
    return cudaGetLastError();
}

extern "C" cudaError_t gq_k_coll_check(const float *p, uint64_t count, int op, int rank, int nranks,
                                       uint64_t chunk, unsigned long long *result, int grid_blocks,
                                       cudaStream_t s)
{
    return gq_k_coll_check_slices(p, count, count, 1, op, rank, nranks, chunk, result, grid_blocks, s);
}
