// A load of the project's own for the clean-room test (bench/gpu-cleanroom.sh):
// holds a context and 1 GiB on a GPU and keeps its SMs busy with a spinning
// kernel for the given seconds.
//   nvcc -O2 -o gpu_load bench/probes/gpu_load.cu && ./gpu_load [GPU] [SECONDS]
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void spin(unsigned long long cycles, float *sink)
{
    unsigned long long t0 = clock64();
    float x = threadIdx.x;
    while (clock64() - t0 < cycles)
        x = x * 1.0000001f + 0.5f;
    if (x == 12345.0f)
        sink[threadIdx.x] = x;
}

int main(int argc, char **argv)
{
    int gpu = argc > 1 ? atoi(argv[1]) : 0;
    double seconds = argc > 2 ? atof(argv[2]) : 30;
    cudaSetDevice(gpu);
    float *buf;
    if (cudaMalloc(&buf, 1ull << 30) != cudaSuccess) {
        fprintf(stderr, "gpu_load: cudaMalloc failed\n");
        return 1;
    }
    int sms = 0, clock_khz = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, gpu);
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, gpu);
    unsigned long long per_launch = (unsigned long long)clock_khz * 100; // about 0.1 s per launch
    int launches = (int)(seconds * 10);
    printf("gpu_load: GPU %d, %d SMs, %d launches of ~0.1 s\n", gpu, sms, launches);
    fflush(stdout);
    for (int i = 0; i < launches; i++) {
        spin<<<sms * 4, 256>>>(per_launch, buf);
        cudaDeviceSynchronize();
    }
    cudaFree(buf);
    return 0;
}
