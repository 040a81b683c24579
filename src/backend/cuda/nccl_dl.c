/* NCCL through dlopen (nccl_dl.h). */
#include "backend/cuda/nccl_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gq_nccl fns;
static bool loaded;

const char *gq_nccl_libname(void)
{
    const char *env = getenv("GQ_NCCL_LIB");
    return env && *env ? env : "libnccl.so.2";
}

void gq_nccl_version_text(int code, char *buf, size_t n)
{
    if (code >= 10000)
        snprintf(buf, n, "%d.%d.%d", code / 10000, code % 10000 / 100, code % 100);
    else
        snprintf(buf, n, "%d.%d.%d", code / 1000, code % 1000 / 100, code % 100);
}

const char *gq_nccl_strerror(const gq_nccl *nc, gq_ncclResult_t r)
{
    static _Thread_local char buf[32];
    const char *s = nc && nc->get_error_string ? nc->get_error_string(r) : NULL;
    if (s && *s)
        return s;
    snprintf(buf, sizeof buf, "NCCL error %d", (int)r);
    return buf;
}

static void *sym(void *lib, const char *name, char *missing, size_t n)
{
    void *p = dlsym(lib, name);
    if (!p && !missing[0])
        snprintf(missing, n, "%s", name);
    return p;
}

int gq_nccl_load(const gq_nccl **out, gq_err *err)
{
    int rc = GQ_OK;
    pthread_mutex_lock(&lock);
    if (!loaded) {
        const char *name = gq_nccl_libname();
        void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        char missing[64] = "";
        if (!lib) {
            const char *why = dlerror();
            if (!why)
                why = "not found";
            /* dlerror usually starts with the name already ("libnccl.so.2: cannot open ...") */
            size_t nl = strlen(name);
            bool named = strncmp(why, name, nl) == 0 && why[nl] == ':';
            /* kept under 240 characters (gq_coll_info's why), the advice always whole */
            if (named)
                rc = gq_err_set(err, GQ_E_NOLIB,
                                "NCCL not found: %.170s; install NCCL (libnccl2) or set GQ_NCCL_LIB", why);
            else
                rc = gq_err_set(err, GQ_E_NOLIB,
                                "NCCL not found: %.80s: %.90s; install NCCL (libnccl2) or set GQ_NCCL_LIB",
                                name, why);
        } else {
            gq_nccl f;
            memset(&f, 0, sizeof f);
            *(void **)&f.get_version = sym(lib, "ncclGetVersion", missing, sizeof missing);
            *(void **)&f.comm_init_all = sym(lib, "ncclCommInitAll", missing, sizeof missing);
            *(void **)&f.comm_destroy = sym(lib, "ncclCommDestroy", missing, sizeof missing);
            *(void **)&f.comm_abort = sym(lib, "ncclCommAbort", missing, sizeof missing);
            *(void **)&f.comm_get_async_error = sym(lib, "ncclCommGetAsyncError", missing, sizeof missing);
            *(void **)&f.get_error_string = sym(lib, "ncclGetErrorString", missing, sizeof missing);
            *(void **)&f.group_start = sym(lib, "ncclGroupStart", missing, sizeof missing);
            *(void **)&f.group_end = sym(lib, "ncclGroupEnd", missing, sizeof missing);
            *(void **)&f.all_reduce = sym(lib, "ncclAllReduce", missing, sizeof missing);
            *(void **)&f.all_gather = sym(lib, "ncclAllGather", missing, sizeof missing);
            *(void **)&f.reduce_scatter = sym(lib, "ncclReduceScatter", missing, sizeof missing);
            *(void **)&f.broadcast = sym(lib, "ncclBroadcast", missing, sizeof missing);
            *(void **)&f.send = sym(lib, "ncclSend", missing, sizeof missing);
            *(void **)&f.recv = sym(lib, "ncclRecv", missing, sizeof missing);
            gq_ncclResult_t r = gq_ncclSuccess;
            if (!missing[0])
                r = f.get_version(&f.version);
            if (missing[0]) {
                /* ncclSend/ncclRecv came with 2.7, ncclCommGetAsyncError with 2.4 */
                rc = gq_err_set(
                    err, GQ_E_NOLIB,
                    "NCCL too old or not NCCL: %s has no %s; install NCCL 2.7 or later (libnccl2) or set "
                    "GQ_NCCL_LIB",
                    name, missing);
                dlclose(lib);
            } else if (r != gq_ncclSuccess) {
                rc = gq_err_set(err, GQ_E_NOLIB, "NCCL unusable: %s: ncclGetVersion: %s", name,
                                gq_nccl_strerror(&f, r));
                dlclose(lib);
            } else {
                char v[32];
                gq_nccl_version_text(f.version, v, sizeof v);
                /* the name as given (a path from GQ_NCCL_LIB: its last part) */
                const char *base = strrchr(name, '/');
                snprintf(f.library, sizeof f.library, "%.120s (NCCL %s)", base ? base + 1 : name, v);
                fns = f;
                loaded = true;
            }
        }
    }
    pthread_mutex_unlock(&lock);
    if (rc == GQ_OK)
        *out = &fns;
    return rc;
}
