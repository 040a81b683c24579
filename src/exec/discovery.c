#include "exec/discovery.h"

#include <stdlib.h>
#include <string.h>

#include "core/interrupt.h"
#include "core/units.h"
#include "exec/plan_run.h"

void gq_discovery_opts_default(gq_discovery_opts *o)
{
    memset(o, 0, sizeof *o);
    o->bytes = 64 * GQ_MiB;
    o->method = GQ_METHOD_CE;
    gq_harness_opts_default(&o->harness);
    gq_domains_opts_default(&o->domains);
    gq_bn_opts_default(&o->bottlenecks);
}

void gq_discovery_free(gq_discovery *d)
{
    if (!d)
        return;
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
    gq_discovery *d;
    int done, total, from;
    gq_harness_opts retry; /* the options of a retry by duration */
} ctx;

/* When the aggregate of a concurrent run failed only the overlap rule, the
 * round length to retry with by duration: long enough that the longest copy
 * of the attempt is 0.8% of it (so every window ends within 1% of the common
 * deadline). 0 when no retry is warranted. */
static double retry_duration(const gq_recordset *rs, int first)
{
    bool overlap_only = false;
    double cmax = 0;
    for (int i = first; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (r->aggregate) {
            if (r->flags & (GQ_FLAG_ERROR | GQ_FLAG_VERIFY_FAILED | GQ_FLAG_IMPOSSIBLE))
                return 0;
            if (r->flags & GQ_FLAG_OVERLAP)
                overlap_only = true;
        } else if (!r->sum && r->value.median > 0) {
            double c = (double)r->bytes / (r->value.median * 1e9);
            if (c > cmax)
                cmax = c;
        }
    }
    if (!overlap_only || cmax <= 0)
        return 0;
    double d = cmax / 0.008;
    return d < 0.25 ? 0.25 : d > GQ_DISCOVERY_MAX_RETRY_S ? GQ_DISCOVERY_MAX_RETRY_S : d;
}

static void fill_probe(void *arg, gq_exec_step *s, gq_measurement *m)
{
    ctx *c = arg;
    gq_probe_measurement(&c->d->plan.v[c->from + s->index], c->o->bytes, c->o->method, true, m);
}

static void before_probe(void *arg, const gq_exec_step *s)
{
    ctx *c = arg;
    if (c->o->progress)
        c->o->progress(c->o->progress_arg, ++c->done, c->total, &c->d->plan.v[c->from + s->index]);
}

static gq_exec_next after_probe(void *arg, gq_exec_step *s, int rc, const gq_err *e)
{
    ctx *c = arg;
    /* The failed attempt stays in the records, flagged; the retry is a new
     * group. */
    double dur = rc == GQ_OK && !s->ho ? retry_duration(&c->d->records, s->first) : 0;
    if (dur > 0 && !gq_interrupt_requested()) {
        c->retry = c->o->harness;
        c->retry.reps = 0;
        c->retry.duration_s = dur;
        c->d->retries++;
        s->ho = &c->retry;
        return GQ_EXEC_AGAIN;
    }
    /* a failed group leaves invalid records behind; the rest still run */
    return rc && rc != GQ_E_BACKEND && rc != GQ_E_FAIL && rc != GQ_E_INTR ? GQ_EXEC_ABORT : GQ_EXEC_NEXT;
}

static int run_from(ctx *c, int from, int total, gq_err *err)
{
    c->from = from;
    c->total = total;
    gq_exec_opts xo = {.before = before_probe, .after = after_probe, .arg = c};
    gq_exec_result res;
    int rc = gq_exec_items(c->be, c->topo, c->d->plan.n - from, fill_probe, c, &c->o->harness, c->o->journal,
                           &xo, &c->d->records, &res, err);
    if (res.interrupted)
        c->d->interrupted = true;
    return rc;
}

int gq_settle_rounds(const gq_recordset *rs, int group, int rounds, int pass)
{
    for (int i = 0; rs && i < rs->n; i++)
        if (rs->v[i].group == group && (rs->v[i].aggregate || rs->v[i].sum) &&
            (rs->v[i].flags & GQ_FLAG_OVERLAP))
            return rounds;
    long r = (long)(rounds > 0 ? rounds : 1) * (GQ_SETTLE_ROUNDS_X << (pass > 0 ? pass : 0));
    return r > GQ_MAX_ROUNDS ? GQ_MAX_ROUNDS : (int)r;
}

bool gq_measurement_from_group(const gq_recordset *rs, int group, gq_measurement *m)
{
    memset(m, 0, sizeof *m);
    for (int i = 0; rs && i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (r->group != group || r->is_latency)
            continue;
        if (r->aggregate) {
            m->aggregate = true;
            continue;
        }
        if (r->sum) {
            m->direction_sums = true;
            continue;
        }
        if (m->nflows >= GQ_MAX_FLOWS)
            break;
        if (!m->nflows)
            snprintf(m->test, sizeof m->test, "%s", r->test);
        gq_flow *f = &m->flows[m->nflows];
        f->src = r->src;
        f->dst = r->dst;
        f->method = r->method;
        f->exec_gpu = r->exec_gpu;
        f->bytes = r->bytes;
        f->tag = r->flow_tag >= 0 ? r->flow_tag : m->nflows;
        m->report[m->nflows++] = true;
    }
    if (m->direction_sums)
        m->aggregate = true;
    return m->nflows > 0;
}

static int add_group(int *groups, int n, int max, int g)
{
    for (int i = 0; i < n; i++)
        if (groups[i] == g)
            return n;
    if (n < max)
        groups[n++] = g;
    return n;
}

int gq_domains_open_groups(const gq_domains *dom, const gq_pairmatrix *m, const gq_recordset *rs, int *groups,
                           int max)
{
    int n = 0;
    for (int u = 0; u < dom->nopen; u++)
        for (int p = 0; p < dom->open[u].npairs; p++) {
            int a = -1, b = -1;
            for (int k = 0; k < m->n; k++) {
                if (m->gpu[k] == dom->open[u].pair_a[p])
                    a = k;
                if (m->gpu[k] == dom->open[u].pair_b[p])
                    b = k;
            }
            if (a < 0 || b < 0)
                continue;
            const int rec[2] = {m->record[a][b], m->record[b][a]};
            for (int d = 0; d < 2; d++)
                if (rec[d] >= 0 && rec[d] < rs->n)
                    n = add_group(groups, n, max, rs->v[rec[d]].group);
        }
    return n;
}

/* Measure groups[0..n-1] again with more rounds (gq_settle_rounds for this
 * pass) through the plan runner, into the discovery's records. An
 * interruption stops it and sets c->d->interrupted; running out of memory or
 * a journal that cannot be written is an error. */
static int remeasure(ctx *c, gq_measurement *m, const int *groups, int n, int pass, gq_err *err)
{
    gq_harness_opts ho = c->o->harness;
    int rc = GQ_OK;
    for (int k = 0; k < n && !rc; k++) {
        if (!gq_measurement_from_group(&c->d->records, groups[k], m))
            continue;
        ho.rounds = gq_settle_rounds(&c->d->records, groups[k], c->o->harness.rounds, pass);
        gq_err e = {0};
        int r = gq_exec_one(c->be, c->topo, m, &ho, c->o->journal, &c->d->records, &e);
        c->d->remeasured++;
        if (r == GQ_E_INTR) {
            c->d->interrupted = true;
            break;
        }
        if (r == GQ_E_NOMEM || r == GQ_E_IO)
            rc = gq_err_set(err, r, "%s", e.msg);
    }
    return rc;
}

/* The boundaries the matrix leaves open: the pairs nearest each measured
 * again with more rounds (see GQ_SETTLE_*), and the domains clustered again
 * into *out. */
static int settle_domains(ctx *c, const gq_domains_opts *dopt, gq_err *err)
{
    gq_measurement *m = calloc(1, sizeof *m);
    int rc = GQ_OK;
    if (!m)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    for (int pass = 0; pass < GQ_SETTLE_PASSES && !rc && !gq_interrupt_requested(); pass++) {
        if (!c->d->domains->nopen)
            break;
        int groups[GQ_SETTLE_MAX_GROUPS];
        int n =
            gq_domains_open_groups(c->d->domains, c->d->matrix, &c->d->records, groups, GQ_SETTLE_MAX_GROUPS);
        rc = remeasure(c, m, groups, n, pass, err);
        if (rc || c->d->interrupted)
            break;
        int gl[GQ_MAX_GPUS], ng = c->d->matrix->n;
        memcpy(gl, c->d->matrix->gpu, sizeof gl);
        gq_pairmatrix_init(c->d->matrix, gl, ng);
        gq_pairmatrix_from_records(c->d->matrix, &c->d->records, NULL);
        rc = gq_domains_cluster(c->d->matrix, dopt, c->d->domains, err);
    }
    free(m);
    return rc;
}

/* Measure the groups the open decisions of the bottleneck inference rest on
 * again (see GQ_SETTLE_*), the pipeline's way: through the plan runner. */
static int settle(ctx *c, const gq_domains *dom, const gq_bn_opts *bo, gq_err *err)
{
    gq_bottlenecks *bn = calloc(1, sizeof *bn);
    gq_measurement *m = calloc(1, sizeof *m);
    int rc = GQ_OK;
    if (!bn || !m) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        goto out;
    }
    for (int pass = 0; pass < GQ_SETTLE_PASSES && !rc && !gq_interrupt_requested(); pass++) {
        int groups[GQ_SETTLE_MAX_GROUPS];
        if ((rc = gq_bottlenecks_infer(&c->d->records, c->topo, dom, bo, bn, err)))
            break;
        int n = gq_bottlenecks_open_groups(bn, &c->d->records, groups, GQ_SETTLE_MAX_GROUPS);
        gq_bottlenecks_free(bn);
        if (!n)
            break;
        rc = remeasure(c, m, groups, n, pass, err);
        if (c->d->interrupted)
            goto out;
    }
out:
    free(bn);
    free(m);
    return rc;
}

/* How many contention probes the plan would hold on the domains the tree
 * suggests (what `domains --plan-only` shows): the progress total until the
 * measured domains fix the real plan. 0 when it cannot be planned. */
static int planned_contention(const gq_topo *topo, const int *gpus, int n)
{
    gq_domains *dom = calloc(1, sizeof *dom);
    gq_probe_plan p = {0};
    gq_err e = {0};
    int count = 0;
    if (dom) {
        gq_probes_assume_domains(topo, gpus, n, dom);
        if (!gq_probes_plan_contention(&p, topo, gpus, n, dom, &e))
            count = p.n;
    }
    gq_probe_plan_free(&p);
    free(dom);
    return count;
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
    out->matrix = malloc(sizeof *out->matrix);
    out->domains = calloc(1, sizeof *out->domains);
    out->bottlenecks = calloc(1, sizeof *out->bottlenecks);
    if (!out->matrix || !out->domains || !out->bottlenecks) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        goto out;
    }
    /* 1. the matrix, one pair at a time */
    if ((rc = gq_probes_plan_matrix(&out->plan, topo, gpus, n, err)))
        goto out;
    if ((rc = run_from(&c, 0, out->plan.n + (o->progress ? planned_contention(topo, gpus, n) : 0), err)))
        goto out;
    /* 2. domains from it */
    gq_pairmatrix_init(out->matrix, gpus, n);
    gq_pairmatrix_from_records(out->matrix, &out->records, NULL);
    gq_domains_opts dopt = o->domains;
    if (!dopt.topo)
        dopt.topo = topo;
    if ((rc = gq_domains_cluster(out->matrix, &dopt, out->domains, err)))
        goto out;
    if ((rc = settle_domains(&c, &dopt, err)))
        goto out;
    /* 3. contention probes from the domains and the tree */
    int from = out->plan.n;
    if ((rc = gq_probes_plan_contention(&out->plan, topo, gpus, n, out->domains, err)))
        goto out;
    if ((rc = run_from(&c, from, out->plan.n, err)))
        goto out;
    /* 4. bottlenecks, once the open decisions were measured again */
    gq_bn_opts bo = o->bottlenecks;
    bo.bytes = o->bytes;
    if (!out->interrupted && (rc = settle(&c, out->domains, &bo, err)))
        goto out;
    rc = gq_bottlenecks_infer(&out->records, topo, out->domains, &bo, out->bottlenecks, err);
out:
    return rc;
}
