/* Device kernels of the stress load (cuda_stress.c): deterministic random
 * GEMM inputs and the result check. extern "C" launch wrappers, so that the
 * host code stays C11. Each enqueues on stream s of the CURRENT device and
 * returns the launch's cudaError_t; none synchronizes. `prec` is a
 * gq_precision (element type bf16, fp16, fp32 or fp64).
 */
#ifndef GQ_BACKEND_CUDA_STRESS_KERNELS_H
#define GQ_BACKEND_CUDA_STRESS_KERNELS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fill n elements at p with uniform values in [-1, 1) from a hash of the
 * element index and seed: the same seed gives the same matrix on every run. */
cudaError_t gq_k_stress_fill(void *p, uint64_t n, int prec, uint64_t seed, cudaStream_t s);

/* Count the elements of c (n of them) that differ from ref by more than
 * rtol * (|ref| + scale), or that are NaN/Inf where ref is finite; the count
 * is ADDED to *counter (device memory), so it accumulates over checks. */
cudaError_t gq_k_stress_compare(const void *c, const void *ref, uint64_t n, int prec, double rtol,
                                double scale, unsigned long long *counter, cudaStream_t s);

/* *dst = *src, by one GPU thread: dst is mapped host memory, so the value
 * reaches the host without a copy engine (which transfers may keep busy). */
cudaError_t gq_k_stress_publish(const unsigned long long *src, unsigned long long *dst, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
