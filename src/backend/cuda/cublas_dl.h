/* cuBLAS, loaded at run time with dlopen (as topo/nvml.c loads NVML), so the
 * program needs only the driver: it links cudart statically and no cuBLAS.
 * Only `stress` uses cuBLAS; without it, stress says so in one line. The
 * header cublas_v2.h is still used for the types and constants. */
#ifndef GQ_BACKEND_CUDA_CUBLAS_DL_H
#define GQ_BACKEND_CUDA_CUBLAS_DL_H

#include <cublas_v2.h>

#include "core/status.h"

typedef struct gq_cublas {
    cublasStatus_t (*create)(cublasHandle_t *);
    cublasStatus_t (*destroy)(cublasHandle_t);
    cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t);
    cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                              const void *, const void *, cudaDataType, int, const void *, cudaDataType, int,
                              const void *, void *, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
} gq_cublas;

/* The library's name: libcublas.so.<the major version built against>
 * (GQ_CUBLAS_LIB in the environment names another file, for tests). */
const char *gq_cublas_libname(void);

/* Load cuBLAS once (thread-safe; kept loaded until exit). GQ_OK with *out
 * set, or GQ_E_UNSUPP with one line saying which library could not be
 * loaded, why, and how to install it. */
int gq_cublas_load(const gq_cublas **out, gq_err *err);

#endif
