#include "backend/backend.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"

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
    if (ops->options && !ops->opt_parse)
        return gq_err_set(err, GQ_E_FAIL, "backend %s: options without the 'opt_parse' hook", ops->name);
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

int gq_backend_opts_add(gq_backend_opts *o, const char *key, const char *value, gq_err *err)
{
    for (int i = 0; i < o->nkv; i++)
        if (!strcmp(o->kv[i].key, key)) {
            o->kv[i].value = value;
            return GQ_OK;
        }
    if (o->nkv == GQ_BACKEND_MAX_KV)
        return gq_err_set(err, GQ_E_USAGE, "--%s: more than %d backend options", key, GQ_BACKEND_MAX_KV);
    o->kv[o->nkv].key = key;
    o->kv[o->nkv].value = value;
    o->nkv++;
    return GQ_OK;
}

int gq_backend_opts_addf(gq_backend_opts *o, gq_err *err, const char *key, const char *fmt, ...)
{
    size_t room = sizeof o->store - o->used;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->store + o->used, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= room)
        return gq_err_set(err, GQ_E_USAGE, "--%s: the backend options' values are too long", key);
    const char *v = o->store + o->used;
    o->used += (size_t)n + 1;
    return gq_backend_opts_add(o, key, v, err);
}

const char *gq_backend_opts_get(const gq_backend_opts *o, const char *key)
{
    for (int i = 0; o && i < o->nkv; i++)
        if (!strcmp(o->kv[i].key, key))
            return o->kv[i].value;
    return NULL;
}

const gq_backend_opt *gq_backend_options(const char *name)
{
    const gq_backend_ops *ops = gq_backend_find(name);
    return ops ? ops->options : NULL;
}

static const gq_backend_opt *opt_find(const gq_backend_ops *ops, const char *key)
{
    for (const gq_backend_opt *t = ops->options; t && t->name; t++)
        if (!strcmp(t->name, key))
            return t;
    return NULL;
}

/* One KEY=VALUE: a known option, a value of its kind within its bounds,
 * then the backend's own check. */
static int opt_one(const gq_backend_ops *ops, void *bopts, const gq_backend_kv *kv, gq_err *err)
{
    const gq_backend_opt *t = opt_find(ops, kv->key);
    if (!t || !ops->opt_parse) {
        const char *cands[32];
        int n = 0;
        for (const gq_backend_opt *x = ops->options; x && x->name && n < 31; x++)
            cands[n++] = x->name;
        cands[n] = NULL;
        const char *near = gq_closest(kv->key, cands);
        return gq_err_set(err, GQ_E_USAGE, "--%s: the %s backend has no such option%s%s%s", kv->key,
                          ops->name, near ? " (did you mean --" : "", near ? near : "", near ? "?)" : "");
    }
    gq_backend_val v = {.str = kv->value};
    gq_err e = {0};
    bool bounded = t->lo < t->hi;
    if (!kv->value || !*kv->value)
        return gq_err_set(err, GQ_E_USAGE, "--%s needs a non-empty value", t->name);
    switch (t->kind) {
    case GQ_BE_OPT_STR: break;
    case GQ_BE_OPT_INT: {
        long x;
        long lo = bounded ? (long)t->lo : -2147483647L, hi = bounded ? (long)t->hi : 2147483647L;
        if (gq_parse_int(kv->value, lo, hi, &x, &e))
            return gq_err_set(err, GQ_E_USAGE, "--%s: %s", t->name, e.msg);
        v.i = x;
        v.d = (double)x;
        break;
    }
    case GQ_BE_OPT_DOUBLE:
        if (gq_parse_double(kv->value, &v.d, &e))
            return gq_err_set(err, GQ_E_USAGE, "--%s: %s", t->name, e.msg);
        if (bounded && (v.d < t->lo || v.d > t->hi))
            return gq_err_set(err, GQ_E_USAGE, "--%s %s is out of range, expected %g..%g", t->name, kv->value,
                              t->lo, t->hi);
        break;
    }
    return ops->opt_parse(bopts, t, &v, err);
}

/* The backend's options struct, defaulted and filled from o; *out NULL
 * when the backend has none. */
static int opts_parse(const gq_backend_ops *ops, const gq_backend_opts *o, void **out, gq_err *err)
{
    *out = NULL;
    void *b = NULL;
    if (ops->opts_size) {
        if (!(b = calloc(1, ops->opts_size)))
            return gq_err_set(err, GQ_E_NOMEM, "out of memory");
        if (ops->opt_default)
            ops->opt_default(b);
    }
    for (int i = 0; o && i < o->nkv; i++) {
        int rc = opt_one(ops, b, &o->kv[i], err);
        if (rc) {
            free(b);
            return rc;
        }
    }
    *out = b;
    return GQ_OK;
}

int gq_backend_check_opts(const char *name, const gq_backend_opts *o, gq_err *err)
{
    const gq_backend_ops *ops = gq_backend_find(name);
    if (!ops)
        return gq_err_set(err, GQ_E_UNSUPP, "backend '%s' is not built into this gpuqual", name);
    void *b;
    int rc = opts_parse(ops, o, &b, err);
    free(b);
    return rc;
}

int gq_backend_open(gq_backend *be, const char *name, const gq_backend_opts *o, gq_err *err)
{
    memset(be, 0, sizeof *be);
    const gq_backend_ops *ops = gq_backend_find(name);
    if (!ops)
        return gq_err_set(err, GQ_E_UNSUPP, "backend '%s' is not built into this gpuqual", name);
    gq_backend_opts none = {0};
    if (!o)
        o = &none;
    void *bopts;
    int rc = opts_parse(ops, o, &bopts, err);
    if (rc)
        return rc;
    be->ops = ops;
    rc = ops->init(be, o, bopts, err);
    free(bopts);
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
