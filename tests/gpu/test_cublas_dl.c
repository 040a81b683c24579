/* cuBLAS through dlopen (backend/cuda/cublas_dl.h): found, every entry point
 * resolved; and, with GQ_CUBLAS_LIB naming a missing file, one line saying
 * which library is missing and how to install it. Needs no GPU, only the
 * CUDA build (it is a tests/gpu program, built with CUDA; tests/gpu/run.sh
 * runs it). Arguments run.sh passes to every program are ignored. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cublas_dl.h"

int main(void)
{
    int fails = 0;
    const gq_cublas *c = NULL;
    gq_err err = {0};
    /* First the refusal (nothing is loaded yet), then the real library. */
    setenv("GQ_CUBLAS_LIB", "libcublas-absent.so.99", 1);
    if (gq_cublas_load(&c, &err) != GQ_E_UNSUPP ||
        !strstr(err.msg, "stress needs cuBLAS, and libcublas-absent.so.99 "
                         "could not be loaded") ||
        !strstr(err.msg, "LD_LIBRARY_PATH")) {
        printf("FAIL without cuBLAS: '%s'\n", err.msg);
        fails++;
    } else
        printf("without cuBLAS: %s\n", err.msg);
    unsetenv("GQ_CUBLAS_LIB");
    memset(&err, 0, sizeof err);
    if (gq_cublas_load(&c, &err) != GQ_OK || !c || !c->create || !c->destroy || !c->set_stream ||
        !c->gemm_ex) {
        printf("FAIL loading %s: %s\n", gq_cublas_libname(), err.msg);
        fails++;
    } else
        printf("loaded %s with every entry point\n", gq_cublas_libname());
    printf(fails ? "RESULT: FAIL (%d)\n" : "RESULT: PASS\n", fails);
    return fails ? 1 : 0;
}
