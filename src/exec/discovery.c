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
    o->settle = true;
    o->cluster_with_topo = true;
}

void gq_discovery_free(gq_discovery *d)
{
    if (!d)
        return;
    gq_records_free(&d->records);
    gq_probe_plan_free(&d->plan);
    free(d->m);
    if (d->bottlenecks)
        gq_bottlenecks_free(d->bottlenecks);
    free(d->matrix);
    free(d->domains);
    free(d->bottlenecks);
    memset(d, 0, sizeof *d);
}

typedef struct ctx {
    gq_discovery *d;
    int total, from;
    bool all, host_alone;  /* which probes of d->plan[from..] run */
    bool p2p_only;         /* and no matrix probe of a pair without P2P */
    gq_harness_opts retry; /* the options of a retry by duration */
} ctx;

/* Whether probe pr runs in this stage. */
static bool wanted(const ctx *c, const gq_probe *pr)
{
    if (c->p2p_only && pr->kind == GQ_PROBE_MATRIX && pr->staged[0])
        return false;
    return c->all || (pr->kind == GQ_PROBE_HOST_ALONE) == c->host_alone;
}

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
    const gq_probe *pr = &c->d->plan.v[c->from + s->index];
    if (!wanted(c, pr)) {
        s->skip = true;
        return;
    }
    gq_probe_measurement(pr, c->d->o.bytes, c->d->o.method, true, m);
}

static void before_probe(void *arg, const gq_exec_step *s)
{
    ctx *c = arg;
    gq_discovery *d = c->d;
    ++d->done;
    if (d->o.progress)
        d->o.progress(d->o.progress_arg, d->done, c->total, &d->plan.v[c->from + s->index]);
}

static gq_exec_next after_probe(void *arg, gq_exec_step *s, int rc, const gq_err *e)
{
    ctx *c = arg;
    (void)e;
    /* The failed attempt stays in the records, flagged; the retry is a new
     * group. */
    double dur = rc == GQ_OK && !s->ho ? retry_duration(c->d->rs, s->first) : 0;
    if (dur > 0 && !gq_interrupt_requested()) {
        c->retry = c->d->o.harness;
        c->retry.reps = 0;
        c->retry.duration_s = dur;
        c->d->retries++;
        s->ho = &c->retry;
        return GQ_EXEC_AGAIN;
    }
    /* a failed group leaves invalid records behind; the rest still run */
    return rc && rc != GQ_E_BACKEND && rc != GQ_E_FAIL && rc != GQ_E_INTR ? GQ_EXEC_ABORT : GQ_EXEC_NEXT;
}

/* Run the probes d->plan[from..) the stage wants, with `total` as the
 * progress total: through the caller's measure hook, or the plan runner. */
static int run_from(ctx *c, int from, int total, gq_err *err)
{
    gq_discovery *d = c->d;
    c->from = from;
    c->total = total;
    if (d->o.measure) {
        for (int i = from; i < d->plan.n; i++) {
            const gq_probe *pr = &d->plan.v[i];
            if (!wanted(c, pr))
                continue;
            gq_probe_measurement(pr, d->o.bytes, d->o.method, true, d->m);
            if (!d->m->nflows)
                continue;
            int rc = d->o.measure(d->o.measure_arg, pr, ++d->done, total, d->m, NULL, err);
            if (rc)
                return rc;
        }
        return GQ_OK;
    }
    gq_exec_opts xo = {.before = before_probe, .after = after_probe, .arg = c};
    gq_exec_result res;
    int rc = gq_exec_items(d->be, d->topo, d->plan.n - from, fill_probe, c, &d->o.harness, d->o.journal, &xo,
                           d->rs, &res, err);
    if (res.interrupted)
        d->interrupted = true;
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

int gq_discovery_remeasure(gq_discovery *d, const int *groups, int n, int pass, gq_err *err)
{
    gq_harness_opts ho = d->o.harness;
    int rc = GQ_OK;
    for (int k = 0; k < n && !rc; k++) {
        if (!gq_measurement_from_group(d->rs, groups[k], d->m))
            continue;
        ho.rounds = gq_settle_rounds(d->rs, groups[k], d->o.harness.rounds, pass);
        if (d->o.measure) {
            rc = d->o.measure(d->o.measure_arg, NULL, d->done, d->plan.n, d->m, &ho, err);
            d->remeasured++;
            continue;
        }
        gq_err e = {0};
        int r = gq_exec_one(d->be, d->topo, d->m, &ho, d->o.journal, d->rs, &e);
        d->remeasured++;
        if (r == GQ_E_INTR) {
            d->interrupted = true;
            break;
        }
        if (r == GQ_E_NOMEM || r == GQ_E_IO)
            rc = gq_err_set(err, r, "%s", e.msg);
    }
    return rc;
}

int gq_discovery_domains(gq_discovery *d, gq_err *err)
{
    gq_pairmatrix_init(d->matrix, d->gpus, d->n);
    if (gq_pairmatrix_from_records(d->matrix, d->rs, d->o.matrix_tests) < 0)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    gq_domains_opts dopt = d->o.domains;
    if (!dopt.topo && d->o.cluster_with_topo)
        dopt.topo = d->topo;
    gq_err e = {0};
    int rc = gq_domains_cluster(d->matrix, &dopt, d->domains, &e);
    if (rc && rc != GQ_E_NOMEM && d->o.assume_on_error) {
        gq_probes_assume_domains(d->topo, d->gpus, d->n, d->domains);
        return GQ_OK;
    }
    if (rc && err)
        *err = e;
    return rc;
}

int gq_discovery_settle_domains(gq_discovery *d, gq_err *err)
{
    int rc = GQ_OK;
    for (int pass = 0; pass < GQ_SETTLE_PASSES && !rc && !gq_interrupt_requested(); pass++) {
        if (!d->domains->nopen)
            break;
        int groups[GQ_SETTLE_MAX_GROUPS];
        int n = gq_domains_open_groups(d->domains, d->matrix, d->rs, groups, GQ_SETTLE_MAX_GROUPS);
        if (!n)
            break;
        rc = gq_discovery_remeasure(d, groups, n, pass, err);
        if (rc || d->interrupted)
            break;
        rc = gq_discovery_domains(d, err);
    }
    return rc;
}

int gq_discovery_settle(gq_discovery *d, gq_err *err)
{
    gq_bottlenecks *bn = calloc(1, sizeof *bn);
    int rc = GQ_OK;
    if (!bn)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    gq_bn_opts bo = d->o.bottlenecks;
    bo.bytes = d->o.bytes;
    for (int pass = 0; pass < GQ_SETTLE_PASSES && !rc && !gq_interrupt_requested(); pass++) {
        int groups[GQ_SETTLE_MAX_GROUPS];
        if ((rc = gq_bottlenecks_infer(d->rs, d->topo, d->domains, &bo, bn, err)))
            break;
        int n = gq_bottlenecks_open_groups(bn, d->rs, groups, GQ_SETTLE_MAX_GROUPS);
        gq_bottlenecks_free(bn);
        if (!n)
            break;
        rc = gq_discovery_remeasure(d, groups, n, pass, err);
        if (d->interrupted)
            break;
    }
    free(bn);
    return rc;
}

int gq_discovery_infer(gq_discovery *d, gq_err *err)
{
    gq_bn_opts bo = d->o.bottlenecks;
    bo.bytes = d->o.bytes;
    gq_bottlenecks_free(d->bottlenecks);
    return gq_bottlenecks_infer(d->rs, d->topo, d->domains, &bo, d->bottlenecks, err);
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

int gq_discovery_begin(gq_discovery *d, gq_backend *be, const gq_topo *topo, const int *gpus, int n,
                       const gq_discovery_opts *o, gq_recordset *rs, gq_err *err)
{
    memset(d, 0, sizeof *d);
    if (o)
        d->o = *o;
    else
        gq_discovery_opts_default(&d->o);
    d->be = be;
    d->topo = topo;
    d->n = n < 0 ? 0 : n > GQ_MAX_GPUS ? GQ_MAX_GPUS : n;
    memcpy(d->gpus, gpus, sizeof *gpus * (size_t)d->n);
    d->rs = rs ? rs : &d->records;
    d->matrix = malloc(sizeof *d->matrix);
    d->domains = calloc(1, sizeof *d->domains);
    d->bottlenecks = calloc(1, sizeof *d->bottlenecks);
    d->m = calloc(1, sizeof *d->m);
    if (!d->matrix || !d->domains || !d->bottlenecks || !d->m)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    return GQ_OK;
}

int gq_discovery_matrix(gq_discovery *d, bool p2p_only, gq_err *err)
{
    gq_probe_plan_free(&d->plan);
    memset(&d->plan, 0, sizeof d->plan);
    int rc = gq_probes_plan_matrix(&d->plan, d->topo, d->gpus, d->n, err);
    if (rc)
        return rc;
    ctx c = {.d = d, .all = true, .p2p_only = p2p_only};
    bool counted = d->o.progress || d->o.measure;
    return run_from(&c, 0, d->plan.n + (counted ? planned_contention(d->topo, d->gpus, d->n) : 0), err);
}

/* The contention probes planned on their own (the planner leaves out a split
 * probe whose pairs the plan already has), then added to d->plan. */
static int plan_apart(gq_discovery *d, gq_err *err)
{
    gq_probe_plan tmp = {0};
    int rc = gq_probes_plan_contention(&tmp, d->topo, d->gpus, d->n, d->domains, err);
    if (!rc && d->plan.n + tmp.n > d->plan.cap) {
        int cap = d->plan.n + tmp.n;
        gq_probe *v = realloc(d->plan.v, (size_t)cap * sizeof *v);
        if (!v)
            rc = gq_err_set(err, GQ_E_NOMEM, "out of memory planning probes");
        else {
            d->plan.v = v;
            d->plan.cap = cap;
        }
    }
    if (!rc && tmp.n) {
        memcpy(d->plan.v + d->plan.n, tmp.v, (size_t)tmp.n * sizeof *tmp.v);
        d->plan.n += tmp.n;
        for (int k = 0; k < GQ_PROBE_NKINDS; k++)
            d->plan.count[k] += tmp.count[k];
    }
    gq_probe_plan_free(&tmp);
    return rc;
}

int gq_discovery_contention(gq_discovery *d, bool all, bool host_alone, gq_err *err)
{
    int from = d->plan.n;
    int rc = d->o.contention_apart
                 ? plan_apart(d, err)
                 : gq_probes_plan_contention(&d->plan, d->topo, d->gpus, d->n, d->domains, err);
    if (rc)
        return rc;
    ctx c = {.d = d, .all = all, .host_alone = host_alone};
    return run_from(&c, from, d->plan.n, err);
}

int gq_discovery_run(gq_backend *be, const gq_topo *topo, const int *gpus, int n, const gq_discovery_opts *o,
                     gq_discovery *out, gq_err *err)
{
    int rc;
    if ((rc = gq_discovery_begin(out, be, topo, gpus, n, o, NULL, err)))
        return rc;
    /* 1. the matrix, one pair at a time */
    if ((rc = gq_discovery_matrix(out, false, err)))
        return rc;
    /* 2. domains from it, the open boundaries measured again */
    if ((rc = gq_discovery_domains(out, err)))
        return rc;
    if (out->o.settle && (rc = gq_discovery_settle_domains(out, err)))
        return rc;
    /* 3. contention probes from the domains and the tree */
    if ((rc = gq_discovery_contention(out, true, false, err)))
        return rc;
    /* 4. bottlenecks, once the open decisions were measured again */
    if (out->o.settle && !out->interrupted && (rc = gq_discovery_settle(out, err)))
        return rc;
    return gq_discovery_infer(out, err);
}
