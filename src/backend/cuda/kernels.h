/* Device kernels of the CUDA backend, behind extern "C" launch wrappers so
 * that the host code stays C11 (kernels.cu is the only CUDA C++ file).
 *
 * Every wrapper enqueues on the given stream of the CURRENT device and returns
 * the launch's cudaError_t (cudaGetLastError() right after the launch); none
 * synchronizes. Pointers are device-usable addresses (device memory, peer
 * memory with peer access enabled, or mapped pinned host memory).
 *
 * The data pattern is a hash of the 32-bit word index and a seed, so that any
 * misplaced chunk (wrong offset, stale staging buffer, missing copy) shows up
 * as a mismatch at a known byte offset.
 */
#ifndef GQ_BACKEND_CUDA_KERNELS_H
#define GQ_BACKEND_CUDA_KERNELS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Threads per block of the SM copy kernel. */
#define GQ_K_COPY_THREADS 512

/* Blocks per SM that the copy kernel can keep resident (occupancy), >= 1. */
int gq_k_copy_max_blocks_per_sm(void);

/* Copy `bytes` from src to dst `loops` times over with 16-byte accesses
 * (nvbandwidth-style: grid-strided, 12 independent loads in flight per thread
 * before the stores). grid_blocks is the grid size cap (SM count x blocks per
 * SM); smaller buffers use fewer blocks. src and dst must be 16-byte aligned. */
cudaError_t gq_k_copy(void *dst, const void *src, uint64_t bytes, int loops, int grid_blocks, cudaStream_t s);

/* nvbandwidth's split-warp copy: ONE kernel whose even warps copy src_a ->
 * dst_a and odd warps src_b -> dst_b, `bytes` each, `loops` times over, so
 * that both directions of a path run in the same kernel at once. */
cudaError_t gq_k_copy_split(void *dst_a, const void *src_a, void *dst_b, const void *src_b, uint64_t bytes,
                            int loops, int grid_blocks, cudaStream_t s);

/* The same split-warp copy in nvbandwidth's layout: a grid of one 16-byte
 * element per thread over the whole copy (the GPU's every SM, full
 * occupancy), launched `loops` times; faster than the strided form when the
 * pair has the GPU to itself. */
cudaError_t gq_k_copy_split_flat(void *dst_a, const void *src_a, void *dst_b, const void *src_b,
                                 uint64_t bytes, int loops, cudaStream_t s);

/* Fill `bytes` at p with the pattern of `seed`. */
cudaError_t gq_k_fill(void *p, uint64_t bytes, uint32_t seed, int grid_blocks, cudaStream_t s);

/* Compare `bytes` at p with the pattern of `seed`. result[0] gets the number of
 * mismatching 4-byte words, result[1] the lowest mismatching byte offset
 * (UINT64_MAX when none). result is device memory of 2 uint64; the wrapper
 * resets it on the stream first. */
cudaError_t gq_k_check(const void *p, uint64_t bytes, uint32_t seed, unsigned long long *result,
                       int grid_blocks, cudaStream_t s);

/* Test-only (gq_cuda_test_corrupt_dst): one thread flips every bit of the
 * byte at p[offset], so that a later gq_k_check must report that offset. */
cudaError_t gq_k_flip_byte(void *p, uint64_t offset, cudaStream_t s);

/* One thread spins until *latch != 0 (the host writes it through the
 * mapping), or until timeout_ns of GPU time have passed; then it sets
 * *timed_out = 1. Work enqueued behind it on the stream starts at release. */
cudaError_t gq_k_spin(volatile int *latch, int *timed_out, unsigned long long timeout_ns, cudaStream_t s);

/* Link a pointer chain in memory at base: node k of `order` (n entries, each a
 * node index) points to node k+1 (cyclic); nodes are `stride` bytes apart.
 * base is the address the chasing GPU will use. order is device memory. */
cudaError_t gq_k_chain(void *base, const uint32_t *order, uint32_t n, uint32_t stride, cudaStream_t s);

/* A grid of `grid` one-thread blocks of which only block `target` works: it
 * follows the chain from *cursor for `iters` dependent loads, writes where it
 * stopped back to *cursor (so a next launch goes on with fresh lines), and
 * adds the GPU-timer nanoseconds of the loads to *ns. Timing inside the
 * kernel keeps launch overhead out; the timer reads wait for the pointer they
 * follow, so no load is left out of the interval. cursor and ns are device
 * memory on the chasing GPU. */
cudaError_t gq_k_chase(void **cursor, unsigned long long iters, int grid, int target, unsigned long long *ns,
                       cudaStream_t s);

/* Collectives (cuda_coll.c): float32 buffers of small integers, exact in any
 * summation order. Rank r's send buffer element j is gq_k_coll_val(r, j /
 * chunk, j % chunk), a whole number in 1..509 (for n ranks a sum is at most
 * 509 n, far below 2^24). op is a gq_coll_op. */
float gq_k_coll_val(uint32_t rank, uint64_t block, uint64_t i);
cudaError_t gq_k_coll_fill(float *p, uint64_t count, int rank, uint64_t chunk, int grid_blocks,
                           cudaStream_t s);
/* Compare rank `rank`'s receive buffer (count floats) with what op gives over
 * nranks ranks filled by gq_k_coll_fill (all-reduce and broadcast: chunk =
 * the count; the others: chunk = the per-rank block; broadcast's root is 0).
 * result[0]: mismatching elements, result[1]: the lowest mismatching byte
 * offset (UINT64_MAX when none); device memory, reset on the stream first. */
cudaError_t gq_k_coll_check(const float *p, uint64_t count, int op, int rank, int nranks, uint64_t chunk,
                            unsigned long long *result, int grid_blocks, cudaStream_t s);
/* The same over nslices outputs of count elements, stride elements apart
 * (nccl-tests' shifted slices, cuda_coll.c); result[1] is from p. */
cudaError_t gq_k_coll_check_slices(const float *p, uint64_t count, uint64_t stride, uint64_t nslices, int op,
                                   int rank, int nranks, uint64_t chunk, unsigned long long *result,
                                   int grid_blocks, cudaStream_t s);

/* The pattern word at 32-bit word index i, for host-side checks in tests. */
uint32_t gq_k_pattern_word(uint64_t i, uint32_t seed);

#ifdef __cplusplus
}
#endif

#endif
