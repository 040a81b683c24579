// Probe: nvbandwidth's split-warp SM copy against gpuqual's, host <-> GPU, on
// one GPU. Not part of gpuqual; it answers why gpuqual's split-warp figure
// sits 1.5-1.8 % below nvbandwidth's on the H200 pair. Every variant moves
// the same bytes each way per launch; the figure is bytes (both ways) x
// loops / time / 2, i.e. per direction, as nvbandwidth reports it.
//   nvcc -O3 -arch=sm_90 -o split_warp bench/probes/split_warp.cu && ./split_warp [GPU] [MiB]
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x)                                                                                                \
    do {                                                                                                     \
        cudaError_t e_ = (x);                                                                                \
        if (e_ != cudaSuccess) {                                                                             \
            printf("%s: %s\n", #x, cudaGetErrorString(e_));                                                  \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

// nvbandwidth v0.8's kernel: one 16-byte element per thread, the same element
// every loop; odd warps copy src -> dst, even warps dst -> src, one buffer pair.
__global__ void nvb_split(unsigned long long loops, uint4 *dst, uint4 *src)
{
    for (unsigned int i = 0; i < loops; i++) {
        unsigned int idx = blockIdx.x * blockDim.x + threadIdx.x;
        unsigned int w = idx / warpSize, l = idx % warpSize;
        uint4 *d, *s;
        if (w & 1) {
            d = dst + (w * warpSize + l);
            s = src + (w * warpSize + l);
        } else {
            d = src + (w * warpSize + l);
            s = dst + (w * warpSize + l);
        }
        __stcg(d, __ldcg(s));
    }
}

// gpuqual's layout: even warps copy pair A, odd warps pair B, each half of the
// grid striding over its own buffers, U loads in flight per thread.
template <int U>
__global__ void gq_split(uint4 *da, const uint4 *sa, uint4 *db, const uint4 *sb, unsigned long long n,
                         int loops)
{
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned w = tid / 32, lane = tid % 32;
    uint4 *d = (w & 1) ? db : da;
    const uint4 *s = (w & 1) ? sb : sa;
    const unsigned long long T = (unsigned long long)gridDim.x * blockDim.x / 2;
    const unsigned long long t0 = (unsigned long long)(w / 2) * 32 + lane;
    for (int l = 0; l < loops; l++) {
        unsigned long long i = t0;
        for (; i + (U - 1) * T < n; i += U * T) {
            uint4 v[U];
#pragma unroll
            for (int u = 0; u < U; u++)
                v[u] = s[i + u * T];
#pragma unroll
            for (int u = 0; u < U; u++)
                d[i + u * T] = v[u];
        }
        for (; i < n; i += T)
            d[i] = s[i];
    }
}

// One 16-byte element per thread, warps alternating between pair A and pair
// B (nvbandwidth's layout over two buffer pairs), one launch per copy: no
// element is copied twice within a launch.
__global__ void flat_split(uint4 *da, const uint4 *sa, uint4 *db, const uint4 *sb, unsigned long long n)
{
    const unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long w = tid / 32, lane = tid % 32;
    const unsigned long long i = (w / 2) * 32 + lane;
    if (i >= n)
        return;
    if (w & 1)
        __stcg(db + i, __ldcg(sb + i));
    else
        __stcg(da + i, __ldcg(sa + i));
}

static float timeit(cudaStream_t st, void (*launch)(cudaStream_t, void *), void *arg)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    launch(st, arg); // warm-up
    CK(cudaStreamSynchronize(st));
    float best = 1e30f, ms;
    for (int r = 0; r < 5; r++) {
        CK(cudaEventRecord(a, st));
        launch(st, arg);
        CK(cudaEventRecord(b, st));
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&ms, a, b));
        float m = ms;
        printf(" %.2f", m);
        if (m < best)
            best = m;
    }
    return best;
}

struct args {
    uint4 *h, *d, *h2, *d2;
    size_t bytes;
    int loops, blocks, threads;
};
static void l_nvb(cudaStream_t st, void *p)
{
    args *a = (args *)p;
    unsigned n = (unsigned)(a->bytes / 16);
    nvb_split<<<n / 1024, 1024, 0, st>>>(a->loops, a->d, a->h); // src = host, dst = device
}
template <int U> static void l_gq(cudaStream_t st, void *p)
{
    args *a = (args *)p;
    size_t half = a->bytes / 2 / 16;
    // A: host -> device over the first halves, B: device -> host over second halves (separate regions)
    gq_split<U><<<a->blocks, a->threads, 0, st>>>(a->d, a->h, a->h2, a->d2, half, a->loops);
}
template <int U> static void l_gq_inter(cudaStream_t st, void *p)
{
    args *a = (args *)p;
    size_t half = a->bytes / 2 / 16;
    // A and B in ONE host and ONE device buffer, A in the first half, B in the second
    gq_split<U><<<a->blocks, a->threads, 0, st>>>(a->d, a->h, a->h + half, a->d + half, half, a->loops);
}

static void l_flat(cudaStream_t st, void *p)
{
    args *a = (args *)p;
    size_t half = a->bytes / 2 / 16;
    unsigned long long threads = 2 * ((half + 31) / 32) * 32;
    for (int l = 0; l < a->loops; l++)
        flat_split<<<(unsigned)((threads + 1023) / 1024), 1024, 0, st>>>(a->d, a->h, a->h2, a->d2, half);
}

int main(int argc, char **argv)
{
    int dev = argc > 1 ? atoi(argv[1]) : 0;
    size_t mib = argc > 2 ? strtoul(argv[2], 0, 10) : 512;
    CK(cudaSetDevice(dev));
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    args a = {};
    a.bytes = mib << 20;
    CK(cudaHostAlloc((void **)&a.h, a.bytes, cudaHostAllocMapped | cudaHostAllocPortable));
    CK(cudaHostAlloc((void **)&a.h2, a.bytes / 2, cudaHostAllocMapped | cudaHostAllocPortable));
    CK(cudaMalloc((void **)&a.d, a.bytes));
    CK(cudaMalloc((void **)&a.d2, a.bytes / 2));
    CK(cudaMemset(a.d, 1, a.bytes));
    CK(cudaMemset(a.d2, 2, a.bytes / 2));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    struct {
        const char *name;
        void (*f)(cudaStream_t, void *);
        int loops, bpsm, threads;
    } v[] = {
        {"nvbandwidth kernel, 16 loops", l_nvb, 16, 0, 0},
        {"nvbandwidth kernel, 1 loop", l_nvb, 1, 0, 0},
        {"flat: 1 element/thread, a launch per copy", l_flat, 16, 0, 0},
        {"gpuqual U12 1x512/SM, 2 buffers each side", l_gq<12>, 16, 1, 512},
        {"gpuqual U12 2x512/SM", l_gq<12>, 16, 2, 512},
        {"gpuqual U12 4x512/SM", l_gq<12>, 16, 4, 512},
        {"gpuqual U4 4x512/SM", l_gq<4>, 16, 4, 512},
        {"gpuqual U2 2x1024/SM", l_gq<2>, 16, 2, 1024},
        {"gpuqual U1 2x1024/SM", l_gq<1>, 16, 2, 1024},
        {"gpuqual U12 1x512/SM, 1 buffer each side", l_gq_inter<12>, 16, 1, 512},
        {"gpuqual U4 4x512/SM, 1 buffer each side", l_gq_inter<4>, 16, 4, 512},
    };
    printf("GPU %d, %zu MiB host + device, %d SMs; ms per launch (5 runs), then GB/s per direction\n", dev,
           mib, sms);
    for (auto &x : v) {
        a.loops = x.loops;
        a.blocks = x.bpsm * sms;
        a.threads = x.threads;
        printf("%-45s", x.name);
        float ms = timeit(st, x.f, &a);
        double gbps = (double)a.bytes * a.loops / (ms / 1e3) / 1e9 / 2;
        printf("  -> %.2f GB/s\n", gbps);
    }
    return 0;
}
