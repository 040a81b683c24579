/* cuBLAS through dlopen (cublas_dl.h). */
#include "backend/cuda/cublas_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STR_(x) #x
#define STR(x) STR_(x)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gq_cublas fns;
static bool loaded;

const char *gq_cublas_libname(void)
{
    const char *env = getenv("GQ_CUBLAS_LIB");
    return env && *env ? env : "libcublas.so." STR(CUBLAS_VER_MAJOR);
}

static void *sym(void *lib, const char *name, char *missing, size_t n)
{
    void *p = dlsym(lib, name);
    if (!p && !missing[0])
        snprintf(missing, n, "%s", name);
    return p;
}

int gq_cublas_load(const gq_cublas **out, gq_err *err)
{
    int rc = GQ_OK;
    pthread_mutex_lock(&lock);
    if (!loaded) {
        const char *name = gq_cublas_libname();
        void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        char missing[64] = "";
        if (!lib) {
            const char *why = dlerror();
            rc = gq_err_set(err, GQ_E_UNSUPP,
                            "stress needs cuBLAS, and %s could not be loaded (%s): install cuBLAS %s "
                            "(NVIDIA's libcublas package, or the CUDA toolkit) or add its directory to "
                            "LD_LIBRARY_PATH",
                            name, why ? why : "not found", STR(CUBLAS_VER_MAJOR));
        } else {
            /* cublas_v2.h maps the plain names to these */
            *(void **)&fns.create = sym(lib, "cublasCreate_v2", missing, sizeof missing);
            *(void **)&fns.destroy = sym(lib, "cublasDestroy_v2", missing, sizeof missing);
            *(void **)&fns.set_stream = sym(lib, "cublasSetStream_v2", missing, sizeof missing);
            *(void **)&fns.gemm_ex = sym(lib, "cublasGemmEx", missing, sizeof missing);
            if (missing[0]) {
                rc = gq_err_set(err, GQ_E_UNSUPP,
                                "stress needs cuBLAS %s, and %s has no %s: install cuBLAS %s",
                                STR(CUBLAS_VER_MAJOR), name, missing, STR(CUBLAS_VER_MAJOR));
                dlclose(lib);
            } else
                loaded = true;
        }
    }
    pthread_mutex_unlock(&lock);
    if (rc == GQ_OK)
        *out = &fns;
    return rc;
}
