/* The card's step runner (exec/card_run.h). */
#include "exec/card_run.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bottlenecks.h"
#include "analysis/domains.h"
#include "analysis/placement.h"
#include "analysis/probes.h"
#include "analysis/sweepfit.h"
#include "core/interrupt.h"
#include "core/units.h"
#include "exec/discovery.h"
#include "exec/place_verify.h"
#include "exec/plan_run.h"
#include "exec/stress_run.h"
#include "exec/tp_place.h"
#include "measure/catalog.h"
#include "measure/cleanroom.h"
#include "measure/harness.h"
#include "doc/analysis_json.h"
#include "doc/card_compose.h"

/* ---- execution ------------------------------------------------------------ */

static bool p2p_possible(const gq_topo *t, int a, int b)
{
    return t->p2p_cuda[a][b] != 0;
}

typedef struct runner {
    gq_backend *be;
    const gq_topo *t;
    const gq_card_opts *o;
    gq_card_plan *plan;
    gq_journal *j;
    gq_card_progress_fn progress;
    void *parg;
    gq_card_result *res;
    gq_harness_opts ho;
    gq_measurement *m;  /* scratch (large) */
    gq_discovery *disc; /* the discovery pipeline's stages, one card step each */
    double t0;
    double done_s; /* estimated seconds of finished work */
    gq_card_step_id cur;
    double step_t0, step_done0;
    int nrun, idx;
} runner;

static void report(runner *R, double frac_of_step)
{
    if (!R->progress)
        return;
    gq_card_progress p = {
        .step = R->cur, .step_index = R->idx, .nsteps = R->nrun, .title = gq_card_step_title(R->cur)};
    p.total_s = R->plan->est_total_s;
    double est = R->plan->step[R->cur].est_s;
    p.done_s = R->step_done0 + (frac_of_step >= 0 ? frac_of_step * est : R->done_s - R->step_done0);
    if (p.done_s > p.total_s)
        p.done_s = p.total_s;
    p.elapsed_s = gq_now_mono() - R->t0;
    /* Scale the estimate left by how fast the work has gone so far. */
    double rate = p.done_s > 1 && p.elapsed_s > 1 ? p.elapsed_s / p.done_s : 1.0;
    if (rate < 0.2)
        rate = 0.2;
    if (rate > 5)
        rate = 5;
    p.left_s = (p.total_s - p.done_s) * rate;
    R->progress(R->parg, &p);
}

static int measure(runner *R, gq_err *err)
{
    gq_err e = {0};
    int rc = gq_exec_one(R->be, R->t, R->m, &R->ho, R->j, &R->res->rs, &e);
    R->done_s +=
        gq_card_estimate_measurement(R->m->nflows, R->ho.rounds, R->ho.round_s, R->m->flows[0].bytes);
    report(R, -1);
    if (rc == GQ_E_INTR || gq_interrupt_requested())
        return GQ_E_INTR;
    if (rc == GQ_E_NOMEM)
        return gq_err_set(err, rc, "%s", e.msg);
    /* Other errors are recorded as invalid records by the harness; the card
     * goes on and the verdict reports them. */
    return GQ_OK;
}

static void host_flow(gq_flow *f, int gpu, gq_direction d, uint64_t bytes, int tag)
{
    memset(f, 0, sizeof *f);
    gq_endpoint h = {.kind = GQ_EP_HOST, .index = GQ_NUMA_LOCAL}, g = {.kind = GQ_EP_GPU, .index = gpu};
    f->src = d == GQ_DIR_H2D ? h : g;
    f->dst = d == GQ_DIR_H2D ? g : h;
    f->method = GQ_METHOD_CE;
    f->exec_gpu = gpu;
    f->bytes = bytes;
    f->tag = tag;
}

static void p2p_flow(gq_flow *f, int src, int dst, bool staged, uint64_t bytes, int tag)
{
    memset(f, 0, sizeof *f);
    f->src = (gq_endpoint){.kind = GQ_EP_GPU, .index = src};
    f->dst = (gq_endpoint){.kind = GQ_EP_GPU, .index = dst};
    f->method = staged ? GQ_METHOD_STAGED : GQ_METHOD_CE;
    f->exec_gpu = staged ? src : dst; /* read: the destination pulls */
    f->bytes = bytes;
    f->tag = tag;
}

static void m_reset(gq_measurement *m, const char *test)
{
    m->nflows = 0;
    m->aggregate = m->direction_sums = false;
    snprintf(m->test, sizeof m->test, "%s", test);
}

/* The discovery pipeline's measure hook: its probe (the same measurement
 * `gpuqual domains` runs, so that its analysis and saved documents read the
 * card's records unchanged), or a group measured again with ho's rounds,
 * measured the card's way. */
static int disc_measure(void *arg, const gq_probe *pr, int done, int total, gq_measurement *m,
                        const gq_harness_opts *ho, gq_err *err)
{
    runner *R = arg;
    (void)pr, (void)done, (void)total;
    gq_measurement *save_m = R->m;
    gq_harness_opts save_ho = R->ho;
    R->m = m;
    if (ho)
        R->ho.rounds = ho->rounds;
    int rc = measure(R, err);
    R->m = save_m;
    R->ho = save_ho;
    return rc;
}

static void begin_step(runner *R, gq_card_step_id s)
{
    R->cur = s;
    R->idx++;
    R->step_t0 = gq_now_mono();
    R->step_done0 = R->done_s;
    report(R, 0);
    /* The clean room samples the GPUs' load before each step, gpuqual idle
     * (the frame sampled before the first one). */
    gq_cleanroom *cr = gq_cleanroom_installed();
    if (cr && R->idx > 1)
        gq_cleanroom_step(cr, R->o->gpus, R->o->ngpus, GQ_CLEAN_STEP_S);
}

static void end_step(runner *R, gq_card_step_id s, gq_card_step_status st)
{
    gq_card_step *step = &R->plan->step[s];
    step->elapsed_s = gq_now_mono() - R->step_t0;
    step->status = st;
    step->reason = st == GQ_CSS_DONE          ? GQ_EVR_NONE
                   : st == GQ_CSS_INTERRUPTED ? GQ_EVR_INTERRUPTED
                   : st == GQ_CSS_FAILED      ? GQ_EVR_ERROR
                                              : GQ_EVR_NOT_APPLICABLE;
    R->done_s = R->step_done0 + step->est_s;
    report(R, 1.0);
    /* the step's journal lines synced together; a failed fsync stops the
     * card at its next journal line, as a failed write does */
    gq_err e = {0};
    if (R->j)
        (void)gq_journal_sync(R->j, &e);
}

static int step_sweep(runner *R, const gq_pairmatrix *pm, const gq_domains *dom, gq_err *err)
{
    /* The paths (analysis/card.h: gq_card_sweep_paths_plan), each at every size. */
    gq_card_sweep_paths P;
    gq_card_sweep_paths_plan(R->t, R->o, &R->res->rs, pm, dom, &P);
    uint64_t sizes[32];
    int np = gq_card_sweep_sizes(R->plan->sweep_points, sizes);
    gq_harness_opts ho = R->ho;
    ho.rounds = R->ho.rounds < 3 ? R->ho.rounds : 3;
    int rc = GQ_OK;
    char test[64];
    for (int p = 0; p < P.n && !rc; p++)
        for (int k = 0; k < np && !rc; k++) {
            bool host = P.v[p][1] < 0;
            snprintf(test, sizeof test, "%s%s", GQ_CARD_TEST_SWEEP_PREFIX,
                     host ? GQ_CARD_TEST_H2D : GQ_CARD_TEST_MATRIX);
            m_reset(R->m, test);
            if (host)
                host_flow(&R->m->flows[0], P.v[p][0], GQ_DIR_H2D, sizes[k], 0);
            else
                p2p_flow(&R->m->flows[0], P.v[p][0], P.v[p][1], false, sizes[k], 0);
            R->m->report[0] = true;
            R->m->nflows = 1;
            gq_harness_opts save = R->ho;
            R->ho = ho;
            rc = measure(R, err);
            R->ho = save;
        }
    return rc;
}

/* The latency step's items: each GPU's pointer chase to host memory, then
 * every ordered pair with P2P. They go through the plan runner like every
 * other measurement (numbered through the journal, each marked done), so a
 * resumed card re-uses the finished ones. */
typedef struct lat_items {
    runner *R;
    gq_latency_req q;
    bool unsupported; /* the host chase cannot run here: the step is skipped */
} lat_items;

static double lat_est_s(const runner *R)
{
    return (R->ho.rounds + 0.1) * GQ_CARD_LAT_ROUND_S + 0.05;
}

static void fill_latency(void *arg, gq_exec_step *s, gq_measurement *m)
{
    lat_items *L = arg;
    const runner *R = L->R;
    int n = R->o->ngpus, k = s->index;
    (void)m;
    memset(&L->q, 0, sizeof L->q);
    L->q.kind = GQ_LAT_POINTER_CHASE;
    L->q.iters = GQ_CATALOG_CHASE_ITERS;
    if (k < n) {
        L->q.target = (gq_endpoint){.kind = GQ_EP_HOST, .index = GQ_NUMA_LOCAL};
        L->q.exec_gpu = R->o->gpus[k];
        s->test = GQ_CARD_TEST_HOST_LAT;
    } else {
        int a = (k - n) / n, b = (k - n) % n;
        L->q.target = (gq_endpoint){.kind = GQ_EP_GPU, .index = R->o->gpus[b]};
        L->q.exec_gpu = R->o->gpus[a];
        L->q.p2p = true;
        s->test = GQ_CARD_TEST_P2P_LAT;
        s->skip = a == b || !p2p_possible(R->t, R->o->gpus[a], R->o->gpus[b]);
    }
    s->lat = &L->q;
}

static gq_exec_next after_latency(void *arg, gq_exec_step *s, int rc, const gq_err *e)
{
    lat_items *L = arg;
    runner *R = L->R;
    R->done_s += lat_est_s(R);
    report(R, -1);
    if (rc == GQ_E_UNSUPP && s->index < R->o->ngpus) {
        /* The record the harness kept says why; no use asking again. */
        L->unsupported = true;
        R->res->rs.n = s->first;
        snprintf(R->plan->step[GQ_CS_LATENCY].note, sizeof R->plan->step[GQ_CS_LATENCY].note, "%s", e->msg);
        return GQ_EXEC_ABORT;
    }
    return rc == GQ_E_NOMEM ? GQ_EXEC_ABORT : GQ_EXEC_NEXT;
}

static int step_latency(runner *R, gq_err *err)
{
    int n = R->o->ngpus;
    lat_items L = {.R = R};
    gq_exec_opts xo = {.after = after_latency, .arg = &L};
    gq_exec_result xr;
    gq_err e = {0};
    int rc = gq_exec_items(R->be, R->t, n + n * n, fill_latency, &L, &R->ho, R->j, &xo, &R->res->rs, &xr, &e);
    R->done_s += xr.reused * lat_est_s(R);
    if (L.unsupported)
        return GQ_E_UNSUPP;
    if (xr.interrupted || gq_interrupt_requested())
        return GQ_E_INTR;
    /* Other errors are in the records, as for every measurement of the card. */
    return rc == GQ_E_NOMEM ? gq_err_set(err, rc, "%s", e.msg) : GQ_OK;
}

/* Threshold and agreement checks on the host figures alone that their
 * intervals would leave undetermined (gq_expect_open_host, against the
 * expectations the card is judged by): those GPUs' runs alone measured again
 * with more rounds, at the end of the host step. */
static int settle_host(runner *R, gq_err *err)
{
    gq_bottlenecks *bn = calloc(1, sizeof *bn);
    gq_card_facts *f = malloc(sizeof *f);
    int rc = GQ_OK;
    if (!bn || !f) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        goto out;
    }
    gq_bn_opts bo;
    gq_bn_opts_default(&bo);
    bo.bytes = R->o->bytes;
    for (int pass = 0; pass < GQ_SETTLE_PASSES && !rc; pass++) {
        gq_err e = {0};
        if (gq_bottlenecks_infer(&R->res->rs, R->t, NULL, &bo, bn, &e)) {
            rc = gq_err_set(err, GQ_E_NOMEM, "%s", e.msg);
            break;
        }
        gq_card_facts_init(f);
        f->ngpu = R->o->ngpus;
        for (int k = 0; k < R->o->ngpus; k++) {
            int g = R->o->gpus[k];
            gq_gpu_facts *G = &f->gpu[k];
            G->index = g;
            snprintf(G->name, sizeof G->name, "%s", R->t->gpu[g].name);
            G->h2d_gbps = bn->alone[0][g];
            G->d2h_gbps = bn->alone[1][g];
            G->h2d_lo = bn->alone_lo[0][g];
            G->h2d_hi = bn->alone_hi[0][g];
            G->d2h_lo = bn->alone_lo[1][g];
            G->d2h_hi = bn->alone_hi[1][g];
        }
        bool open[2][GQ_MAX_GPUS];
        int groups[GQ_SETTLE_MAX_GROUPS], n = 0;
        if (gq_expect_open_host(R->o->expect, f, open[0], open[1]))
            for (int d = 0; d < 2; d++)
                for (int k = 0; k < R->o->ngpus && n < GQ_SETTLE_MAX_GROUPS; k++) {
                    int r = bn->alone_record[d][R->o->gpus[k]];
                    if (open[d][k] && r >= 0)
                        groups[n++] = R->res->rs.v[r].group;
                }
        gq_bottlenecks_free(bn);
        if (!n)
            break;
        rc = gq_discovery_remeasure(R->disc, groups, n, pass, err);
    }
out:
    free(bn);
    free(f);
    return rc;
}

static int step_bidir(runner *R, gq_err *err)
{
    m_reset(R->m, GQ_CARD_TEST_BIDIR_SET);
    int n = R->o->ngpus, k = 0;
    for (int i = 0; i < n && k + 1 < GQ_MAX_FLOWS; i++) {
        host_flow(&R->m->flows[k], R->o->gpus[i], GQ_DIR_H2D, R->o->bytes, k);
        R->m->report[k] = true;
        k++;
        host_flow(&R->m->flows[k], R->o->gpus[i], GQ_DIR_D2H, R->o->bytes, k);
        R->m->report[k] = true;
        k++;
    }
    R->m->nflows = k;
    R->m->aggregate = true;
    R->m->direction_sums = true;
    return measure(R, err);
}

static int step_placement(runner *R, const gq_domains *dom, gq_err *err)
{
    int n = R->o->ngpus;
    gq_place_model *pm = calloc(1, sizeof *pm);
    gq_place_result *pr = calloc(1, sizeof *pr);
    gq_bottlenecks *bn = calloc(1, sizeof *bn);
    int rc = GQ_OK;
    gq_card_step *st = &R->plan->step[GQ_CS_PLACEMENT];
    if (!pm || !pr || !bn) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory planning the placement");
        goto out;
    }
    /* The measured domains and the bottlenecks inferred from the records so
     * far (shared host budgets among them), typed, as `gpuqual place` reads
     * them from a domains document. */
    gq_bn_opts bo;
    gq_bn_opts_default(&bo);
    bo.bytes = R->o->bytes;
    gq_err e = {0};
    bool have_bn = gq_bottlenecks_infer(&R->res->rs, R->t, dom, &bo, bn, &e) == GQ_OK;
    memset(&e, 0, sizeof e);
    int ngpu_model = 0;
    for (int i = 0; i < n; i++)
        if (R->o->gpus[i] + 1 > ngpu_model)
            ngpu_model = R->o->gpus[i] + 1;
    if ((rc = gq_place_model_build_typed(pm, ngpu_model, &R->res->rs, dom, have_bn ? bn : NULL, R->t, &e))) {
        snprintf(st->note, sizeof st->note, "%s", e.msg);
        rc = GQ_E_FAIL;
        goto out;
    }
    gq_place_roles roles = {0};
    roles.prefill = R->o->prefill;
    roles.decode = R->o->decode;
    if (!roles.prefill && !roles.decode && n >= 2) {
        roles.prefill = n / 2;
        roles.decode = n / 2;
    }
    roles.offload = R->o->offload >= 0 ? R->o->offload : (n >= 2 ? n / 2 : 1);
    for (int i = 0; i < n; i++)
        roles.usable |= (gq_gpuset)1 << R->o->gpus[i];
    if ((rc = gq_place_roles_check(&roles, ngpu_model, &e)) || (rc = gq_place_solve(pm, &roles, pr, &e))) {
        snprintf(st->note, sizeof st->note, "%s", e.msg);
        rc = GQ_E_FAIL;
        goto out;
    }
    rc = gq_place_verify(R->be, R->t, pm, pr, R->o->bytes, &R->ho, &R->res->rs, R->j, &e);
    R->done_s += st->est_s;
    if (rc == GQ_E_INTR || gq_interrupt_requested())
        rc = GQ_E_INTR;
    else if (rc) {
        snprintf(st->note, sizeof st->note, "verification: %s", e.msg);
        rc = GQ_OK; /* the solved mapping is still worth reporting */
    }
    R->res->place_model = pm;
    R->res->place_result = pr;
    R->res->place_default_split = !(R->o->prefill || R->o->decode);
    pm = NULL;
    pr = NULL;
out:
    if (bn)
        gq_bottlenecks_free(bn); /* whatever the inference returned; a zeroed one frees nothing */
    free(bn);
    free(pm);
    free(pr);
    return rc;
}

/* The collectives step: place --tp 2 on the first even count of the selected
 * GPUs, on the matrix step's pairwise copies (a pair it lacks is copied
 * again). Its records are kept apart (copies measured here would join the
 * matrix's figures; the "collectives" section holds the figures, an invalid
 * group's as null); the chosen groups' all-reduce busbw alone and at once go
 * to res->coll. GQ_E_NOLIB when the backend has no NCCL (the step is then
 * skipped: not measured, never INCOMPLETE). Journaled as the stress run is
 * (doc/card_compose.h): a resumed card re-uses a clean measured result
 * (res->coll_reused) and measures again one that was not journaled (failed,
 * contaminated, cut short, refused for overlap, or never finished). */
static int step_collectives(runner *R, const gq_pairmatrix *pm, gq_err *err)
{
    int n = R->o->ngpus - R->o->ngpus % 2;
    gq_card_step *st = &R->plan->step[GQ_CS_COLLECTIVES];
    if (R->j && gq_card_coll_journal_reusable(R->j, 2, GQ_CARD_COLL_BYTES, R->o->gpus, n, &R->res->coll)) {
        R->res->coll_reused = true;
        R->done_s += st->est_s;
        return GQ_OK;
    }
    gq_tp_result *tr = calloc(1, sizeof *tr);
    double(*known)[GQ_MAX_GPUS] = malloc(sizeof(double[GQ_MAX_GPUS][GQ_MAX_GPUS]));
    gq_recordset rs = {0};
    if (!tr || !known) {
        free(tr);
        free(known);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory measuring the collectives");
    }
    /* the matrix step's pairwise copies (the probe place --tp measures) are not measured again */
    for (int a = 0; a < GQ_MAX_GPUS; a++)
        for (int b = 0; b < GQ_MAX_GPUS; b++)
            known[a][b] = NAN;
    for (int a = 0; a < pm->n; a++)
        for (int b = 0; b < pm->n; b++)
            if (pm->gpu[a] >= 0 && pm->gpu[b] >= 0)
                known[pm->gpu[a]][pm->gpu[b]] = pm->gbps[a][b];
    gq_tp_opts to = {.tp = 2,
                     .budget = GQ_CARD_COLL_BUDGET,
                     .bytes = GQ_CARD_COLL_BYTES,
                     .rounds = R->ho.rounds,
                     .warmup = 5,
                     .iters = GQ_CARD_COLL_ITERS,
                     .ho = &R->ho,
                     .known_copy = (const double(*)[GQ_MAX_GPUS])known};
    gq_err e = {0};
    int rc = gq_tp_place(R->be, R->t, R->o->gpus, n, &to, NULL, &rs, tr, &e);
    R->done_s += st->est_s;
    if (rc == GQ_E_INTR || gq_interrupt_requested())
        rc = GQ_E_INTR;
    else if (rc == GQ_E_NOLIB)
        snprintf(st->note, sizeof st->note, "%s", e.msg);
    else if (rc == GQ_E_NOMEM)
        rc = gq_err_set(err, rc, "%s", e.msg);
    else if (rc) {
        /* every group contaminated (other work on a GPU): the card's busy GPUs say so, and the
         * card is INCOMPLETE unless the user allowed it, as for every other step */
        bool busy = false;
        for (int i = 0; i < rs.n && !busy; i++)
            busy = (rs.v[i].flags & GQ_FLAG_CONTAMINATED) != 0;
        snprintf(st->note, sizeof st->note, "%s%s", e.msg, busy ? " (a GPU was busy)" : "");
        rc = busy ? GQ_OK : GQ_E_FAIL;
    } else {
        gq_card_coll_view *c = &R->res->coll;
        memset(c, 0, sizeof *c);
        c->present = true;
        c->tp = 2;
        c->bytes = GQ_CARD_COLL_BYTES;
        c->measured = tr->measured;
        c->kept_naive = tr->kept_naive;
        c->ngroups =
            tr->chosen.ngroups < GQ_CARD_COLL_MAX_GROUPS ? tr->chosen.ngroups : GQ_CARD_COLL_MAX_GROUPS;
        c->min_alone = c->min_once = NAN;
        for (int g = 0; g < c->ngroups; g++) {
            const gq_tp_cand *k = &tr->st.cand[tr->chosen.idx[g]];
            c->set[g] = k->set;
            c->alone[g] = k->busbw;
            c->once[g] = tr->chosen_once[g];
            if (k->busbw >= 0 && !(c->min_alone <= k->busbw))
                c->min_alone = k->busbw;
            if (tr->chosen_once[g] >= 0 && !(c->min_once <= tr->chosen_once[g]))
                c->min_once = tr->chosen_once[g];
        }
        c->naive_min_once = tr->naive_min_once >= 0 ? tr->naive_min_once : NAN;
        /* journaled only when clean: what a resume would not re-use among items either */
        bool clean = true;
        for (int i = 0; i < rs.n && clean; i++)
            clean = !(rs.v[i].flags & GQ_JOURNAL_NOT_REUSABLE);
        if (R->j && clean)
            gq_card_coll_journal_done(R->j, c);
    }
    gq_records_free(&rs);
    free(tr);
    free(known);
    return rc;
}

typedef struct stress_cb {
    runner *R;
    int sent[GQ_MAX_GPUS]; /* samples of GPU slot k already journalled */
} stress_cb;

static void on_stress(void *arg, const gq_stress_result *r, double elapsed_s)
{
    runner *R = ((stress_cb *)arg)->R;
    double d = r->duration_s > 0 ? elapsed_s / r->duration_s : 0;
    report(R, d > 1 ? 1 : d);
}

/* Each tick's telemetry samples to the journal as the load runs ("sample"
 * lines, as stress --journal writes them). */
static int journal_samples(void *arg, const gq_stress_result *r, gq_err *err)
{
    stress_cb *cb = arg;
    gq_journal *j = cb->R->j;
    for (int k = 0; j && k < r->ngpu; k++)
        for (; cb->sent[k] < r->gpu[k].npoints; cb->sent[k]++) {
            int rc = gq_stress_journal_sample(j, r->gpu[k].gpu, &r->gpu[k].pts[cb->sent[k]], err);
            if (rc)
                return rc;
        }
    return GQ_OK;
}

/* Resuming: the journal's completed stress run of this card, read back typed
 * (one that does not read back is measured again). 1: re-used; 0; GQ_E_NOMEM. */
static int reuse_stress(runner *R, gq_err *err)
{
    const json_t *done =
        R->j ? gq_stress_journal_reusable(R->j, R->t, R->o->gpus, R->o->ngpus, R->o->stress_s) : NULL;
    if (!done)
        return 0;
    gq_stress_summary *sum = calloc(1, sizeof *sum);
    gq_err e = {0};
    int rc = sum ? gq_stress_from_json(done, &R->res->stress, sum, &e) : GQ_E_NOMEM;
    if (rc == GQ_OK) {
        R->res->stress_summary = sum;
        R->res->have_stress = R->res->stress_reused = true;
        return 1;
    }
    free(sum);
    gq_stress_result_free(&R->res->stress);
    return rc == GQ_E_NOMEM ? gq_err_set(err, rc, "out of memory re-using the stress run") : 0;
}

static int step_stress(runner *R, gq_err *err)
{
    int rc = reuse_stress(R, err);
    if (rc)
        return rc > 0 ? GQ_OK : rc;
    gq_stress_opts so;
    gq_stress_opts_default(&so);
    so.duration_s = R->o->stress_s;
    so.interval_s = R->o->stress_s >= 10 ? 1.0 : fmax(0.1, R->o->stress_s / 10);
    so.ngpus = R->o->ngpus;
    memcpy(so.gpus, R->o->gpus, sizeof so.gpus);
    stress_cb cb = {.R = R};
    so.progress = on_stress;
    so.progress_arg = &cb;
    so.on_tick = journal_samples;
    so.tick_arg = &cb;
    gq_err e = {0};
    gq_card_step *st = &R->plan->step[GQ_CS_STRESS];
    rc = gq_stress_run(R->be, R->t, &so, &R->res->stress, &e);
    if (rc && rc != GQ_E_INTR) {
        snprintf(st->note, sizeof st->note, "%s", e.msg);
        gq_stress_result_free(&R->res->stress);
        return rc == GQ_E_NOMEM ? gq_err_set(err, rc, "%s", e.msg) : GQ_E_FAIL;
    }
    R->res->have_stress = true;
    gq_stress_summary *sum = calloc(1, sizeof *sum);
    if (!sum)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory summarising the stress run");
    gq_stress_summarize(&R->res->stress, NULL, sum);
    R->res->stress_summary = sum;
    if (rc == GQ_OK && R->j)
        gq_stress_journal_done(R->j, &R->res->stress, sum);
    return rc;
}

/* Runs step s of the plan through the discovery pipeline's stages (D: its
 * matrix, domains, contention probes and the measuring again of what a
 * decision rests on) and the card's own measurements. GQ_E_UNSUPP: the
 * backend cannot measure the step (latency), which is then skipped. */
static int run_step(runner *R, gq_card_step_id s, gq_err *err)
{
    const gq_topo *t = R->t;
    const gq_card_opts *o = R->o;
    gq_discovery *D = R->disc;
    int src = GQ_OK;
    switch (s) {
    case GQ_CS_IDENTITY: break; /* discovery already ran; the card composes it */
    case GQ_CS_MATRIX: {
        /* quick: the pairs with P2P only */
        if ((src = gq_discovery_matrix(D, o->level == GQ_LEVEL_QUICK, err)))
            break;
        /* standard and full: where a pair has no P2P, the driver's own staged copy (what
         * cudaMemcpyPeer gets) beside gpuqual's pipelined one, one pair per class of staged path */
        if (o->level != GQ_LEVEL_QUICK) {
            int ds[GQ_MAX_GPUS], dd[GQ_MAX_GPUS];
            int nd = gq_card_driver_staged_pairs(t, o->gpus, o->ngpus, ds, dd, GQ_MAX_GPUS);
            for (int i = 0; i < nd && !src; i++) {
                m_reset(R->m, GQ_CARD_TEST_DRIVER_STAGED);
                p2p_flow(&R->m->flows[0], ds[i], dd[i], true, o->bytes, 0);
                R->m->flows[0].method = GQ_METHOD_DRIVER_STAGED;
                R->m->report[0] = true;
                R->m->nflows = 1;
                src = measure(R, err);
            }
        }
        /* full: the write direction too (the pair's source pushes) */
        for (int i = 0; i < D->plan.n && !src && o->level == GQ_LEVEL_FULL; i++) {
            gq_probe_measurement(&D->plan.v[i], o->bytes, GQ_METHOD_CE, false, R->m);
            src = R->m->nflows ? measure(R, err) : GQ_OK;
        }
        if (!src && !(src = gq_discovery_domains(D, err)))
            src = gq_discovery_settle_domains(D, err);
        break;
    }
    case GQ_CS_HOST:
    case GQ_CS_CONTENTION:
        if ((src = gq_discovery_domains(D, err)) ||
            (src = gq_discovery_contention(D, false, s == GQ_CS_HOST, err)))
            break;
        if (s == GQ_CS_CONTENTION)
            src = gq_discovery_settle(D, err);
        if (!src && s == GQ_CS_HOST)
            src = settle_host(R, err);
        break;
    case GQ_CS_BIDIR: src = step_bidir(R, err); break;
    case GQ_CS_SWEEP:
        if (!(src = gq_discovery_domains(D, err)))
            src = step_sweep(R, D->matrix, D->domains, err);
        break;
    case GQ_CS_LATENCY: src = step_latency(R, err); break;
    case GQ_CS_PLACEMENT:
        if (!(src = gq_discovery_domains(D, err)))
            src = step_placement(R, D->domains, err);
        /* its runs feed the inference too: settle what they left open */
        if (!src)
            src = gq_discovery_settle(D, err);
        break;
    case GQ_CS_COLLECTIVES:
        if (!(src = gq_discovery_domains(D, err)))
            src = step_collectives(R, D->matrix, err);
        break;
    case GQ_CS_STRESS: src = step_stress(R, err); break;
    default: break;
    }
    return src;
}

/* The discovery pipeline's options for a card: its stages run one card step each. */
static void card_discovery_opts(runner *R, gq_discovery_opts *dso)
{
    /* The discovery pipeline, its stages run one card step each: the card's
     * measurements, its matrix read from the card's matrix tests, domains the
     * tree suggests when clustering fails. */
    static const char *const matrix_tests[] = {GQ_CARD_TEST_MATRIX, GQ_CARD_TEST_STAGED, NULL};
    gq_discovery_opts_default(dso);
    dso->bytes = R->o->bytes;
    dso->method = GQ_METHOD_CE;
    dso->harness = R->ho;
    dso->journal = R->j;
    dso->measure = disc_measure;
    dso->measure_arg = R;
    dso->cluster_with_topo = false;
    dso->assume_on_error = true;
    dso->matrix_tests = matrix_tests;
    dso->contention_apart = true;
}

/* Ends step s after its run returned src: skipped (latency unsupported, collectives without NCCL),
 * interrupted, failed or done. Returns GQ_E_INTR or GQ_E_NOMEM when the card stops there, else GQ_OK. */
static int end_step_after(runner *R, gq_card_step_id s, int src, gq_err *err)
{
    gq_card_step *st = &R->plan->step[s];
    gq_card_result *res = R->res;
    if (src == GQ_E_UNSUPP && s == GQ_CS_LATENCY) {
        end_step(R, s, GQ_CSS_SKIPPED);
        return GQ_OK;
    }
    if (src == GQ_E_NOLIB && s == GQ_CS_COLLECTIVES) { /* no NCCL: not measured, shown as info */
        end_step(R, s, GQ_CSS_SKIPPED);
        st->reason = GQ_EVR_NO_LIBRARY;
        return GQ_OK;
    }
    if (src == GQ_E_INTR) {
        end_step(R, s, GQ_CSS_INTERRUPTED);
        res->interrupted = true;
        res->stopped_at = s;
        return GQ_E_INTR;
    } else if (src == GQ_E_NOMEM) {
        end_step(R, s, GQ_CSS_FAILED);
        return src;
    } else if (src) {
        if (!st->note[0] && err)
            snprintf(st->note, sizeof st->note, "%s", err->msg);
        end_step(R, s, GQ_CSS_FAILED);
        res->nfailed++;
    } else {
        end_step(R, s, GQ_CSS_DONE);
    }
    return GQ_OK;
}

/* After the steps: where an interrupted card stopped, and every step still planned, skipped with why. */
static void close_planned_steps(gq_card_plan *plan, gq_card_result *res, int rc)
{
    if (rc == GQ_E_INTR && res->stopped_at == GQ_CS_COUNT) {
        res->interrupted = true;
        for (int s = 0; s < GQ_CS_COUNT; s++)
            if (plan->step[s].run && plan->step[s].status == GQ_CSS_PLANNED) {
                res->stopped_at = (gq_card_step_id)s;
                break;
            }
    }
    for (int s = 0; s < GQ_CS_COUNT; s++)
        if (plan->step[s].status == GQ_CSS_PLANNED) {
            plan->step[s].status = GQ_CSS_SKIPPED;
            plan->step[s].reason = rc == GQ_E_NOMEM ? GQ_EVR_ERROR : GQ_EVR_INTERRUPTED;
            /* Only an interrupt or running out of memory leaves a planned step behind. */
            snprintf(plan->step[s].note, sizeof plan->step[s].note, "not run: %s",
                     rc == GQ_E_NOMEM ? "out of memory" : "the card was interrupted");
        }
}

int gq_card_execute(gq_backend *be, const gq_topo *t, const gq_card_opts *o, gq_card_plan *plan,
                    gq_journal *j, gq_card_progress_fn progress, void *parg, gq_card_result *res, gq_err *err)
{
    runner R = {
        .be = be, .t = t, .o = o, .plan = plan, .j = j, .progress = progress, .parg = parg, .res = res};
    int rc = GQ_OK;
    R.m = calloc(1, sizeof *R.m);
    if (!R.m)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    gq_harness_opts_default(&R.ho);
    R.ho.rounds = plan->rounds;
    R.ho.round_s = plan->round_s;
    R.ho.verify = o->verify;
    R.ho.trace = o->trace;
    R.ho.trace_arg = o->trace_arg;
    R.t0 = gq_now_mono();
    for (int s = 0; s < GQ_CS_COUNT; s++)
        R.nrun += plan->step[s].run;
    res->stopped_at = GQ_CS_COUNT;
    gq_discovery_opts dso;
    card_discovery_opts(&R, &dso);
    gq_discovery *D = calloc(1, sizeof *D);
    if (!D || gq_discovery_begin(D, be, t, o->gpus, o->ngpus, &dso, &res->rs, err)) {
        gq_discovery_free(D);
        free(D);
        free(R.m);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    }
    R.disc = D;

    for (int s = 0; s < GQ_CS_COUNT && rc != GQ_E_INTR && rc != GQ_E_NOMEM; s++) {
        gq_card_step *st = &plan->step[s];
        if (!st->run)
            continue;
        if (gq_interrupt_requested()) {
            rc = GQ_E_INTR;
            break;
        }
        begin_step(&R, (gq_card_step_id)s);
        int src = run_step(&R, (gq_card_step_id)s, err);
        rc = end_step_after(&R, (gq_card_step_id)s, src, err);
    }
    close_planned_steps(plan, res, rc);
    res->elapsed_s = gq_now_mono() - R.t0;
    if (j) { /* items are numbered through the journal, re-used or measured */
        res->reused = j->reused;
        res->measured = j->next_item - j->reused;
    }
    res->remeasured += D->remeasured;
    D->rs = NULL;
    gq_discovery_free(D);
    free(D);
    free(R.m);
    if (rc == GQ_E_INTR)
        return gq_err_set(err, GQ_E_INTR, "interrupted during %s", gq_card_step_name(res->stopped_at));
    return rc;
}
