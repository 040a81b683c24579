/* NCCL, loaded at run time with dlopen (as cublas_dl.c loads cuBLAS), so the
 * package does not depend on it: only the collectives (cuda_coll.c) use it,
 * and without it they say so in one line (GQ_E_NOLIB, exit 7).
 *
 * No nccl.h at build time: the few types and constants used are declared
 * here, with the values of NCCL's public header (src/nccl.h.in of
 * NVIDIA/nccl; they have not changed since NCCL 2.0). This header includes
 * no CUDA header either (a stream is the opaque struct CUstream_st *, what
 * cudaStream_t is), so the loader builds and is unit-tested without CUDA
 * (tests/unit/test_nccl_dl.c). */
#ifndef GQ_BACKEND_CUDA_NCCL_DL_H
#define GQ_BACKEND_CUDA_NCCL_DL_H

#include <stddef.h>

#include "core/status.h"

/* ncclResult_t */
typedef enum {
    gq_ncclSuccess = 0,
    gq_ncclUnhandledCudaError = 1,
    gq_ncclSystemError = 2,
    gq_ncclInternalError = 3,
    gq_ncclInvalidArgument = 4,
    gq_ncclInvalidUsage = 5,
    gq_ncclRemoteError = 6,
    gq_ncclInProgress = 7,
} gq_ncclResult_t;

/* ncclDataType_t: only float32 is used */
typedef enum { gq_ncclFloat32 = 7 } gq_ncclDataType_t;
/* ncclRedOp_t: only the sum is used */
typedef enum { gq_ncclSum = 0 } gq_ncclRedOp_t;

typedef struct ncclComm *gq_ncclComm_t;       /* ncclComm_t */
typedef struct CUstream_st *gq_nccl_stream_t; /* cudaStream_t */

typedef struct gq_nccl {
    gq_ncclResult_t (*get_version)(int *version);
    gq_ncclResult_t (*comm_init_all)(gq_ncclComm_t *comms, int ndev, const int *devlist);
    gq_ncclResult_t (*comm_destroy)(gq_ncclComm_t comm);
    gq_ncclResult_t (*comm_abort)(gq_ncclComm_t comm); /* stops its kernels too (a hang, an error) */
    gq_ncclResult_t (*comm_get_async_error)(gq_ncclComm_t comm, gq_ncclResult_t *async_error);
    const char *(*get_error_string)(gq_ncclResult_t result);
    gq_ncclResult_t (*group_start)(void);
    gq_ncclResult_t (*group_end)(void);
    gq_ncclResult_t (*all_reduce)(const void *sendbuff, void *recvbuff, size_t count, gq_ncclDataType_t type,
                                  gq_ncclRedOp_t op, gq_ncclComm_t comm, gq_nccl_stream_t stream);
    gq_ncclResult_t (*all_gather)(const void *sendbuff, void *recvbuff, size_t sendcount,
                                  gq_ncclDataType_t type, gq_ncclComm_t comm, gq_nccl_stream_t stream);
    gq_ncclResult_t (*reduce_scatter)(const void *sendbuff, void *recvbuff, size_t recvcount,
                                      gq_ncclDataType_t type, gq_ncclRedOp_t op, gq_ncclComm_t comm,
                                      gq_nccl_stream_t stream);
    gq_ncclResult_t (*broadcast)(const void *sendbuff, void *recvbuff, size_t count, gq_ncclDataType_t type,
                                 int root, gq_ncclComm_t comm, gq_nccl_stream_t stream);
    gq_ncclResult_t (*send)(const void *sendbuff, size_t count, gq_ncclDataType_t type, int peer,
                            gq_ncclComm_t comm, gq_nccl_stream_t stream);
    gq_ncclResult_t (*recv)(void *recvbuff, size_t count, gq_ncclDataType_t type, int peer,
                            gq_ncclComm_t comm, gq_nccl_stream_t stream);
    int version;       /* ncclGetVersion's code, e.g. 22304 */
    char library[160]; /* "libnccl.so.2 (NCCL 2.23.4)" */
} gq_nccl;

/* The library's name: libnccl.so.2, or what GQ_NCCL_LIB in the environment
 * names (a file name or a path: another build of NCCL, or a missing file to
 * test the refusal). */
const char *gq_nccl_libname(void);

/* Load NCCL once (thread-safe; kept loaded until exit; a failure is not
 * remembered, so the next call tries again). GQ_OK with *out set; or
 * GQ_E_NOLIB with one line in err, e.g. "NCCL not found: libnccl.so.2:
 * cannot open shared object file: No such file or directory; install NCCL
 * (libnccl2) or set GQ_NCCL_LIB", or which entry point the library lacks. */
int gq_nccl_load(const gq_nccl **out, gq_err *err);

/* "major.minor.patch" of an ncclGetVersion code (2.8 and older: X*1000 +
 * Y*100 + Z; 2.9 on: X*10000 + Y*100 + Z). */
void gq_nccl_version_text(int code, char *buf, size_t n);

/* ncclGetErrorString's text for r, or "NCCL error <r>" when it is absent. */
const char *gq_nccl_strerror(const gq_nccl *nc, gq_ncclResult_t r);

#endif
