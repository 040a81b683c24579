#include "analysis/discovery.h"

#include <stdlib.h>
#include <string.h>

#include "core/interrupt.h"
#include "core/units.h"

void gq_discovery_opts_default(gq_discovery_opts *o)
{
    memset(o, 0, sizeof *o);
    o->bytes = 256 * GQ_MiB;
    o->method = GQ_METHOD_CE;
    gq_harness_opts_default(&o->harness);
    gq_domains_opts_default(&o->domains);
    gq_bn_opts_default(&o->bottlenecks);
}

void gq_discovery_free(gq_discovery *d)
{
    gq_records_free(&d->records);
    gq_probe_plan_free(&d->plan);
    if (d->bottlenecks)
        gq_bottlenecks_free(d->bottlenecks);
    free(d->matrix);
    free(d->domains);
    free(d->bottlenecks);
    memset(d, 0, sizeof *d);
}

typedef struct ctx {
    gq_backend *be;
    const gq_topo *topo;
    const gq_discovery_opts *o;
    gq_measurement *m;
    gq_discovery *d;
    int done;
} ctx;

static int run_from(ctx *c, int from, int total, gq_err *err)
{
    for (int i = from; i < c->d->plan.n && !c->d->interrupted; i++) {
        const gq_probe *pr = &c->d->plan.v[i];
        if (c->o->progress)
            c->o->progress(c->o->progress_arg, ++c->done, total, pr);
        gq_probe_measurement(pr, c->o->bytes, c->o->method, true, c->m);
        int rc = gq_harness_measure(c->be, c->topo, c->m, &c->o->harness, &c->d->records, c->o->journal, err);
        if (rc == GQ_E_INTR || gq_interrupt_requested()) {
            c->d->interrupted = true;
            break;
        }
        /* a failed group leaves invalid records behind; the rest still run */
        if (rc && rc != GQ_E_BACKEND && rc != GQ_E_FAIL)
            return rc;
    }
    return GQ_OK;
}

int gq_discovery_run(gq_backend *be, const gq_topo *topo, const int *gpus, int n, const gq_discovery_opts *o,
                     gq_discovery *out, gq_err *err)
{
    gq_discovery_opts def;
    if (!o) {
        gq_discovery_opts_default(&def);
        o = &def;
    }
    memset(out, 0, sizeof *out);
    int rc;
    ctx c = {.be = be, .topo = topo, .o = o, .d = out};
    c.m = malloc(sizeof *c.m);
    out->matrix = malloc(sizeof *out->matrix);
    out->domains = calloc(1, sizeof *out->domains);
    out->bottlenecks = calloc(1, sizeof *out->bottlenecks);
    if (!c.m || !out->matrix || !out->domains || !out->bottlenecks) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        goto out;
    }
    /* 1. the matrix, one pair at a time */
    if ((rc = gq_probes_plan_matrix(&out->plan, topo, gpus, n, err)))
        goto out;
    if ((rc = run_from(&c, 0, out->plan.n + 2 * n, err)))
        goto out;
    /* 2. domains from it */
    gq_pairmatrix_init(out->matrix, gpus, n);
    gq_pairmatrix_from_records(out->matrix, &out->records, NULL);
    if ((rc = gq_domains_cluster(out->matrix, &o->domains, out->domains, err)))
        goto out;
    /* 3. contention probes from the domains and the tree */
    int from = out->plan.n;
    if ((rc = gq_probes_plan_contention(&out->plan, topo, gpus, n, out->domains, err)))
        goto out;
    if ((rc = run_from(&c, from, out->plan.n, err)))
        goto out;
    /* 4. bottlenecks */
    gq_bn_opts bo = o->bottlenecks;
    bo.bytes = o->bytes;
    rc = gq_bottlenecks_infer(&out->records, topo, out->domains, &bo, out->bottlenecks, err);
out:
    free(c.m);
    return rc;
}
