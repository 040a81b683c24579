#include "backend/backend.h"

#include <stdio.h>
#include <string.h>

#define GQ_MAX_BACKENDS 8

static const gq_backend_ops *registry[GQ_MAX_BACKENDS];
static const char *names[GQ_MAX_BACKENDS + 1];
static int nregistered;

int gq_backend_register(const gq_backend_ops *ops, gq_err *err)
{
    if (!ops || !ops->name)
        return gq_err_set(err, GQ_E_FAIL, "backend: ops without a name");
    if (ops->version != GQ_BACKEND_OPS_VERSION)
        return gq_err_set(err, GQ_E_FAIL, "backend %s: ops version %d, expected %d", ops->name, ops->version,
                          GQ_BACKEND_OPS_VERSION);
    static const struct {
        size_t off;
        const char *name;
    } required[] = {
        {offsetof(gq_backend_ops, init), "init"},         {offsetof(gq_backend_ops, fini), "fini"},
        {offsetof(gq_backend_ops, discover), "discover"}, {offsetof(gq_backend_ops, prepare), "prepare"},
        {offsetof(gq_backend_ops, run), "run"},           {offsetof(gq_backend_ops, release), "release"},
    };
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        void *fn;
        memcpy(&fn, (const char *)ops + required[i].off, sizeof fn);
        if (!fn)
            return gq_err_set(err, GQ_E_FAIL, "backend %s: required hook '%s' is missing", ops->name,
                              required[i].name);
    }
    for (int i = 0; i < nregistered; i++)
        if (registry[i] == ops || strcmp(registry[i]->name, ops->name) == 0)
            return GQ_OK;
    if (nregistered == GQ_MAX_BACKENDS)
        return gq_err_set(err, GQ_E_FAIL, "backend %s: registry full", ops->name);
    registry[nregistered] = ops;
    names[nregistered] = ops->name;
    nregistered++;
    names[nregistered] = NULL;
    return GQ_OK;
}

const gq_backend_ops *gq_backend_find(const char *name)
{
    for (int i = 0; i < nregistered; i++)
        if (strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

const char *const *gq_backend_names(void)
{
    return names;
}

int gq_backend_open(gq_backend *be, const char *name, const gq_backend_opts *o, gq_err *err)
{
    memset(be, 0, sizeof *be);
    const gq_backend_ops *ops = gq_backend_find(name);
    if (!ops)
        return gq_err_set(err, GQ_E_UNSUPP, "backend '%s' is not built into this gpuqual", name);
    be->ops = ops;
    gq_backend_opts none = {0};
    int rc = ops->init(be, o ? o : &none, err);
    if (rc != GQ_OK) {
        be->ops = NULL;
        be->priv = NULL;
    }
    return rc;
}

void gq_backend_close(gq_backend *be)
{
    if (be && be->ops) {
        be->ops->fini(be);
        be->ops = NULL;
        be->priv = NULL;
    }
}

/* Split-warp pairs: both flows name each other, are SM copies executed by
 * the same GPU, and move the same bytes. */
int gq_flows_check_splits(const gq_flow *flows, int n, gq_err *err)
{
    for (int i = 0; i < n; i++) {
        const gq_flow *f = &flows[i];
        if (!f->split_with)
            continue;
        int j = f->split_with - 1;
        if (j < 0 || j >= n || j == i)
            return gq_err_set(err, GQ_E_USAGE,
                              "flow %d: split_with %d names no other flow of the group (1-%d)", i,
                              f->split_with, n);
        const gq_flow *o = &flows[j];
        if (o->split_with != i + 1)
            return gq_err_set(err, GQ_E_USAGE,
                              "flow %d: its split-warp partner, flow %d, does not name it back", i, j);
        if (f->method != GQ_METHOD_SM || o->method != GQ_METHOD_SM)
            return gq_err_set(err, GQ_E_USAGE, "flows %d and %d: a split-warp pair needs method sm", i, j);
        if (f->exec_gpu != o->exec_gpu || f->bytes != o->bytes)
            return gq_err_set(err, GQ_E_USAGE,
                              "flows %d and %d: a split-warp pair needs the same executing GPU and size", i,
                              j);
        if (f->interferer != o->interferer)
            return gq_err_set(err, GQ_E_USAGE,
                              "flows %d and %d: a split-warp pair is measured or interferes as one", i, j);
    }
    return GQ_OK;
}

uint64_t gq_flow_stage_chunk(const gq_flow *f)
{
    const uint64_t max_chunks = 128;
    uint64_t chunk = f->chunk_bytes ? f->chunk_bytes : 8ull * 1024 * 1024;
    if (chunk > f->bytes)
        chunk = f->bytes;
    if (chunk == 0)
        return 1;
    if ((f->bytes + chunk - 1) / chunk > max_chunks) {
        chunk = (f->bytes + max_chunks - 1) / max_chunks;
        chunk = (chunk + 4095) & ~4095ull;
    }
    return chunk;
}

uint64_t gq_flow_piece_quantum(const gq_flow *f)
{
    return f->method == GQ_METHOD_STAGED ? gq_flow_stage_chunk(f) : 16;
}
