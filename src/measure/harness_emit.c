/* The records of a measurement: one per reported flow, then one aggregate
 * per direction and the sum over directions, each with its flags (errors,
 * overlap, data check, NUMA placement, spread, sanity against the path's
 * capacity). The rounds themselves are run by harness.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/harness_internal.h"
#include "measure/sanity.h"

/* A share below a rule's bound as a percentage with one decimal, rounded
 * down, so that a figure under the bound never prints as the bound
 * ("98.96 %" reads 98.9 %, never "99.0 % < 99 %"). */
static double pct_down(double share)
{
    return floor(share * 1000.0 + 1e-9) / 10.0;
}

static bool is_host(gq_endpoint e)
{
    return e.kind == GQ_EP_HOST;
}

static void add_gpu(gq_record *r, int g)
{
    if (g < 0)
        return;
    for (int i = 0; i < r->ngpus; i++)
        if (r->gpus[i] == g)
            return;
    if (r->ngpus >= GQ_MAX_GPUS)
        return;
    int i = r->ngpus++;
    while (i > 0 && r->gpus[i - 1] > g) {
        r->gpus[i] = r->gpus[i - 1];
        i--;
    }
    r->gpus[i] = g;
}

void gq_hrec_add_flow_gpus(gq_record *r, const gq_flow *f)
{
    if (f->src.kind == GQ_EP_GPU)
        add_gpu(r, f->src.index);
    if (f->dst.kind == GQ_EP_GPU)
        add_gpu(r, f->dst.index);
}

void gq_hrec_set_error(gq_record *r, unsigned flag, const char *msg)
{
    r->flags |= flag;
    r->valid = false;
    if (!msg || !msg[0])
        return;
    if (!r->error[0]) {
        snprintf(r->error, sizeof r->error, "%s", msg);
    } else if (!strstr(r->error, msg)) {
        size_t l = strlen(r->error);
        snprintf(r->error + l, sizeof r->error - l, "; %s", msg);
    }
}

static double median_of(const double *v, int n)
{
    if (n <= 0)
        return 0;
    gq_stat s = gq_stat_compute(v, n);
    return s.median;
}

void gq_hrec_fill_value(gq_record *r, const double *samples, int n)
{
    if (n > GQ_MAX_ROUNDS)
        n = GQ_MAX_ROUNDS;
    r->rounds = n;
    if (n > 0) {
        memcpy(r->samples, samples, (size_t)n * sizeof *samples);
        r->value = gq_stat_compute(samples, n);
    }
}

/* The record fields every record of the measurement shares. */
static void base_record(gq_record *r, const gq_measurement *m, int group, double t0, bool simulated)
{
    memset(r, 0, sizeof *r);
    snprintf(r->test, sizeof r->test, "%s", m->test);
    r->valid = true;
    r->group = group;
    r->flow_tag = -1;
    r->exec_gpu = -1;
    r->overlap = -1;
    r->host_numa_req = -1;
    r->host_numa_actual = -1;
    r->timestamp = t0;
    r->simulated = simulated;
}

int gq_hrec_host_numa_req(const gq_flow *f)
{
    if (is_host(f->src))
        return f->src.index;
    if (is_host(f->dst))
        return f->dst.index;
    return -1;
}

static bool misplaced(const gq_topo *topo, const gq_flow *f, int actual)
{
    if (actual == -1 || (!is_host(f->src) && !is_host(f->dst)))
        return false;
    int req = gq_hrec_host_numa_req(f);
    if (req < 0) {
        int g = is_host(f->src) ? f->dst.index : f->src.index;
        if (!topo || g < 0 || g >= topo->ngpu || topo->gpu[g].numa_node < 0)
            return false;
        req = topo->gpu[g].numa_node;
    }
    return actual != req; /* includes -2, "mixed" */
}

/* Endpoint common to the members on one side, or GQ_EP_MANY where they
 * differ. A sum over both directions has hosts and GPUs on both sides: it is
 * written host side -> GPU side ("host:0" -> "gpu:*"). */
static gq_endpoint common_ep(const gq_measurement *m, const bool *member, bool src)
{
    bool kinds[2] = {false, false};
    for (int i = 0; i < m->nflows; i++)
        if (member[i])
            kinds[(src ? m->flows[i].src : m->flows[i].dst).kind] = true;
    bool mixed = kinds[GQ_EP_HOST] && kinds[GQ_EP_GPU];
    gq_ep_kind want = src ? GQ_EP_HOST : GQ_EP_GPU;
    gq_endpoint e = {mixed ? want : GQ_EP_GPU, GQ_EP_MANY};
    bool first = true;
    for (int i = 0; i < m->nflows; i++) {
        if (!member[i])
            continue;
        const gq_flow *f = &m->flows[i];
        gq_endpoint x = src ? f->src : f->dst;
        if (mixed) /* take the endpoint of the wanted kind, from whichever side holds it */
            x = f->src.kind == want ? f->src : f->dst;
        if (first) {
            e = x;
            first = false;
        } else if (x.index != e.index) {
            e.index = GQ_EP_MANY;
        }
    }
    return e;
}

static int push(gq_recordset *out, gq_journal *j, const gq_record *r0, const gq_contam *cs, gq_err *jerr,
                bool *jfailed)
{
    gq_record rr = *r0, *r = &rr;
    gq_cleanroom_mark(r, cs);
    int rc = gq_records_push(out, r);
    if (rc)
        return rc;
    if (j && !*jfailed) {
        if (gq_journal_append(j, r, jerr))
            *jfailed = true;
    }
    return GQ_OK;
}

/* What every record of one measurement's emission shares. */
typedef struct emit_ctx {
    const hctx *c;
    const gq_topo *topo;
    const gq_harness_opts *o;
    gq_recordset *out;
    gq_journal *j;
    gq_err *jerr;
    bool *jfailed;
    int group;
    double t0;
    bool simulated, incomplete;
} emit_ctx;

/* Member-level facts the aggregates inherit, per direction. */
typedef struct member_facts {
    bool err[NDIR], verify[NDIR], imp[NDIR];
    char msg[NDIR][200];
} member_facts;

/* An interfering flow that failed leaves the measured flows without their
 * interference: the message their records carry ("" when none failed). */
static void interferer_failure(const hctx *c, char *msg, size_t size)
{
    const gq_measurement *m = c->m;
    msg[0] = 0;
    for (int i = 0; i < m->nflows && !msg[0]; i++)
        if (!m->report[i] && c->fs[i].error[0])
            snprintf(msg, size, "the interfering flow failed: %.160s", c->fs[i].error);
}

/* The record of reported flow i. */
static void flow_record(const emit_ctx *ec, int i, double overlap, bool has_interferers,
                        const char *interferer_msg, gq_record *r)
{
    const hctx *c = ec->c;
    const gq_measurement *m = c->m;
    const gq_flow *f = &m->flows[i];
    const flow_state *fs = &c->fs[i];
    int d = (int)gq_flow_direction(f);
    base_record(r, m, ec->group, ec->t0, ec->simulated);
    r->method = f->method;
    r->src = f->src;
    r->dst = f->dst;
    r->direction = (gq_direction)d;
    r->dirs = 1u << d;
    r->bytes = f->bytes;
    r->exec_gpu = f->exec_gpu;
    r->flow_tag = f->tag;
    r->overlap = overlap;
    r->host_numa_req = gq_hrec_host_numa_req(f);
    r->host_numa_actual = fs->numa_actual;
    gq_hrec_add_flow_gpus(r, f);
    gq_hrec_fill_value(r, fs->rate, fs->n);
    r->window_s = median_of(fs->window, fs->n);
    if (c->whole_error[0])
        gq_hrec_set_error(r, GQ_FLAG_ERROR, c->whole_error);
    if (fs->error[0])
        gq_hrec_set_error(r, GQ_FLAG_ERROR, fs->error);
    if (interferer_msg[0])
        gq_hrec_set_error(r, GQ_FLAG_ERROR, interferer_msg);
    if (has_interferers && c->rounds > 0 && c->min_overlap < GQ_OVERLAP_MIN) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "the interfering flows ran during only %.1f%% of the measured window (< %.0f%%)",
                 pct_down(c->min_overlap), 100.0 * GQ_OVERLAP_MIN);
        gq_hrec_set_error(r, GQ_FLAG_OVERLAP, msg);
    }
    if (fs->verify_failed) {
        char msg[160];
        snprintf(msg, sizeof msg, "data check failed: first bad byte at offset %llu of %s",
                 (unsigned long long)fs->bad_offset,
                 r->dst.kind == GQ_EP_HOST ? "the host buffer" : "the GPU buffer");
        gq_hrec_set_error(r, GQ_FLAG_VERIFY_FAILED, msg);
    }
    if (fs->n == 0 && !(r->flags & GQ_FLAG_ERROR))
        gq_hrec_set_error(r, GQ_FLAG_ERROR, "no round completed");
    if (misplaced(ec->topo, f, fs->numa_actual))
        r->flags |= GQ_FLAG_NUMA_MISPLACED;
    if (ec->incomplete)
        r->flags |= GQ_FLAG_INCOMPLETE;
    if (c->overlap_retries > 0 || c->mode_switched)
        r->flags |= GQ_FLAG_OVERLAP_RETRIED;
    if (ec->o->spread_target > 0 && r->value.n > 0 && r->value.spread > ec->o->spread_target)
        r->flags |= GQ_FLAG_SPREAD;
    char why[240];
    double cap = gq_sanity_flow_capacity(ec->topo, f, why, sizeof why);
    gq_sanity_apply(r, cap, why);
}

/* Push the record of every reported flow; note what its aggregates inherit. */
static int emit_flows(const emit_ctx *ec, double overlap, member_facts *mf)
{
    const hctx *c = ec->c;
    const gq_measurement *m = c->m;
    char interferer_msg[200];
    interferer_failure(c, interferer_msg, sizeof interferer_msg);
    bool has_interferers = false;
    for (int i = 0; i < m->nflows; i++)
        has_interferers |= !m->report[i];
    gq_record r;
    int rc;
    for (int i = 0; i < m->nflows; i++) {
        if (!m->report[i])
            continue;
        int d = (int)gq_flow_direction(&m->flows[i]);
        flow_record(ec, i, overlap, has_interferers, interferer_msg, &r);
        if (r.flags & GQ_FLAG_ERROR) {
            mf->err[d] = true;
            if (!mf->msg[d][0])
                snprintf(mf->msg[d], sizeof mf->msg[d], "a member flow failed: %.150s", r.error);
        }
        mf->verify[d] |= (r.flags & GQ_FLAG_VERIFY_FAILED) != 0;
        mf->imp[d] |= (r.flags & GQ_FLAG_IMPOSSIBLE) != 0;
        if ((rc = push(ec->out, ec->j, &r, &ec->c->contam, ec->jerr, ec->jfailed)))
            return rc;
    }
    return GQ_OK;
}

/* The members' directions, GPUs and host NUMA nodes (requested and actual:
 * -1 none or mixed requests; -2 mixed placements). */
static void aggregate_members(const emit_ctx *ec, const bool *member, gq_record *r)
{
    const gq_measurement *m = ec->c->m;
    int nreq = -3, nact = -3;
    for (int i = 0; i < m->nflows; i++) {
        if (!member[i])
            continue;
        const gq_flow *f = &m->flows[i];
        r->dirs |= 1u << gq_flow_direction(f);
        gq_hrec_add_flow_gpus(r, f);
        int q = gq_hrec_host_numa_req(f), a = ec->c->fs[i].numa_actual;
        nreq = nreq == -3 ? q : (nreq == q ? q : -1);
        nact = nact == -3 ? a : (nact == a ? a : (a == -1 || nact == -1 ? -1 : -2));
        if (misplaced(ec->topo, f, a))
            r->flags |= GQ_FLAG_NUMA_MISPLACED;
    }
    r->host_numa_req = nreq == -3 ? -1 : nreq;
    r->host_numa_actual = nact == -3 ? -1 : nact;
}

/* The flags an aggregate inherits from its members and from the rounds. */
static void aggregate_flags(const emit_ctx *ec, int pass, bool is_sum, const member_facts *mf, gq_record *r)
{
    const hctx *c = ec->c;
    bool broken = is_sum ? c->sum_broken : c->agg_broken[pass];
    bool err = false, ver = false, imp = false;
    const char *emsg = NULL;
    for (int d = 0; d < NDIR; d++) {
        if (!is_sum && d != pass)
            continue;
        err |= mf->err[d];
        ver |= mf->verify[d];
        imp |= mf->imp[d];
        if (mf->err[d] && !emsg)
            emsg = mf->msg[d];
    }
    if (c->whole_error[0])
        gq_hrec_set_error(r, GQ_FLAG_ERROR, c->whole_error);
    if (err || broken)
        gq_hrec_set_error(r, GQ_FLAG_ERROR, emsg ? emsg : "a member flow failed");
    if (ver)
        gq_hrec_set_error(r, GQ_FLAG_VERIFY_FAILED, "a member flow failed its data check");
    if (imp)
        gq_hrec_set_error(r, GQ_FLAG_IMPOSSIBLE, "a member flow is above its path's capacity");
    if (c->rounds == 0 && !(r->flags & GQ_FLAG_ERROR))
        gq_hrec_set_error(r, GQ_FLAG_ERROR, "no round completed");
    if (c->rounds > 0 && c->min_overlap < GQ_OVERLAP_MIN) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "overlap %.1f%% < %.0f%%: the flows did not copy at the same time long enough for a sum",
                 pct_down(c->min_overlap), 100.0 * GQ_OVERLAP_MIN);
        gq_hrec_set_error(r, GQ_FLAG_OVERLAP, msg);
    }
    if (ec->incomplete)
        r->flags |= GQ_FLAG_INCOMPLETE;
    if (c->overlap_retries > 0 || c->mode_switched)
        r->flags |= GQ_FLAG_OVERLAP_RETRIED;
    if (ec->o->spread_target > 0 && r->value.n > 0 && r->value.spread > ec->o->spread_target)
        r->flags |= GQ_FLAG_SPREAD;
}

/* Push the aggregate of direction pass, or the sum over directions (pass == NDIR). */
static int emit_aggregate(const emit_ctx *ec, int pass, const member_facts *facts)
{
    const hctx *c = ec->c;
    const gq_measurement *m = c->m;
    bool is_sum = pass == NDIR;
    bool member[GQ_MAX_FLOWS];
    gq_flow mf[GQ_MAX_FLOWS];
    int nm = 0;
    for (int i = 0; i < m->nflows; i++) {
        member[i] = m->report[i] && (is_sum || (int)gq_flow_direction(&m->flows[i]) == pass);
        if (member[i])
            mf[nm++] = m->flows[i];
    }
    gq_record r;
    base_record(&r, m, ec->group, ec->t0, ec->simulated);
    r.aggregate = !is_sum;
    r.sum = is_sum;
    r.overlap = c->min_overlap;
    r.src = common_ep(m, member, true);
    r.dst = common_ep(m, member, false);
    const gq_flow *f0 = &mf[0];
    r.method = f0->method;
    r.bytes = f0->bytes;
    r.direction = is_sum ? gq_flow_direction(f0) : (gq_direction)pass;
    aggregate_members(ec, member, &r);
    gq_hrec_fill_value(&r, is_sum ? c->sum : c->agg[pass], c->rounds);
    r.window_s = median_of(c->aggwin, c->rounds);
    aggregate_flags(ec, pass, is_sum, facts, &r);
    char why[240];
    double cap = gq_sanity_group_capacity(ec->topo, mf, nm, why, sizeof why);
    gq_sanity_apply(&r, cap, why);
    return push(ec->out, ec->j, &r, &ec->c->contam, ec->jerr, ec->jfailed);
}

int gq_harness_emit(const hctx *c, gq_backend *be, const gq_topo *topo, const gq_harness_opts *o,
                    gq_recordset *out, gq_journal *j, int group, double t0, gq_err *jerr, bool *jfailed)
{
    const gq_measurement *m = c->m;
    emit_ctx ec = {.c = c,
                   .topo = topo,
                   .o = o,
                   .out = out,
                   .j = j,
                   .jerr = jerr,
                   .jfailed = jfailed,
                   .group = group,
                   .t0 = t0,
                   .simulated = gq_backend_simulated(be) || (topo && topo->simulated),
                   .incomplete = c->interrupted && c->rounds < o->rounds};
    int rc;
    bool any_report = false;
    for (int i = 0; i < m->nflows; i++)
        any_report |= m->report[i];
    unsigned ndir = 0;
    for (int d = 0; d < NDIR; d++)
        if (c->dir_present & (1u << d))
            ndir++;
    bool emit_dir_aggs = m->aggregate || (m->direction_sums && ndir >= 2);
    bool emit_sum = m->direction_sums && (ndir >= 2 || !m->aggregate);
    double overlap = m->nflows > 1 ? c->min_overlap : -1;
    if (!any_report)
        return GQ_OK;

    /* member-level facts the aggregates inherit */
    member_facts facts;
    memset(&facts, 0, sizeof facts);
    if ((rc = emit_flows(&ec, overlap, &facts)))
        return rc;

    /* aggregates: one per direction, then the sum over directions */
    for (int pass = 0; pass <= NDIR; pass++) {
        bool is_sum = pass == NDIR;
        if (is_sum ? !emit_sum : (!emit_dir_aggs || !(c->dir_present & (1u << pass))))
            continue;
        if ((rc = emit_aggregate(&ec, pass, &facts)))
            return rc;
    }
    return GQ_OK;
}
