/* The card's steps that measure copies and latency (analysis/card_steps.h):
 * identity, matrix, host, contention, bidir, sweep and latency, each run
 * through the discovery pipeline's stages and the runner's measurements
 * (exec/card_run_internal.h). */
#include "exec/card_run_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bottlenecks.h"
#include "analysis/probes.h"
#include "core/interrupt.h"
#include "exec/plan_run.h"
#include "measure/catalog.h"

static bool p2p_possible(const gq_topo *t, int a, int b)
{
    return t->p2p_cuda[a][b] != 0;
}

static int step_sweep(gq_card_runner *R, const gq_pairmatrix *pm, const gq_domains *dom, gq_err *err)
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
            gq_card_runner_m_reset(R->m, test);
            if (host)
                gq_card_runner_host_flow(&R->m->flows[0], P.v[p][0], GQ_DIR_H2D, sizes[k], 0);
            else
                gq_card_runner_p2p_flow(&R->m->flows[0], P.v[p][0], P.v[p][1], false, sizes[k], 0);
            R->m->report[0] = true;
            R->m->nflows = 1;
            gq_harness_opts save = R->ho;
            R->ho = ho;
            rc = gq_card_runner_measure(R, err);
            R->ho = save;
        }
    return rc;
}

/* The latency step's items: each GPU's pointer chase to host memory, then
 * every ordered pair with P2P. They go through the plan runner like every
 * other measurement (numbered through the journal, each marked done), so a
 * resumed card re-uses the finished ones. */
typedef struct lat_items {
    gq_card_runner *R;
    gq_latency_req q;
    bool unsupported; /* the host chase cannot run here: the step is skipped */
} lat_items;

static double lat_est_s(const gq_card_runner *R)
{
    return (R->ho.rounds + 0.1) * GQ_CARD_LAT_ROUND_S + 0.05;
}

static void fill_latency(void *arg, gq_exec_step *s, gq_measurement *m)
{
    lat_items *L = arg;
    const gq_card_runner *R = L->R;
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
    gq_card_runner *R = L->R;
    R->done_s += lat_est_s(R);
    gq_card_runner_report(R, -1);
    if (rc == GQ_E_UNSUPP && s->index < R->o->ngpus) {
        /* The record the harness kept says why; no use asking again. */
        L->unsupported = true;
        R->res->rs.n = s->first;
        snprintf(R->plan->step[GQ_CS_LATENCY].note, sizeof R->plan->step[GQ_CS_LATENCY].note, "%s", e->msg);
        return GQ_EXEC_ABORT;
    }
    return rc == GQ_E_NOMEM ? GQ_EXEC_ABORT : GQ_EXEC_NEXT;
}

int gq_card_run_latency(gq_card_runner *R, gq_err *err)
{
    int n = R->o->ngpus;
    lat_items L = {.R = R};
    gq_exec_opts xo = {.after = after_latency, .arg = &L};
    gq_exec_result xr;
    gq_err e = {0};
    int rc = gq_exec_items(R->be, R->t, n + n * n, fill_latency, &L, &R->ho, R->j, &xo, &R->res->rs, &xr, &e);
    R->done_s += xr.reused * lat_est_s(R);
    if (L.unsupported) { /* the record the harness kept and the note say why */
        R->skip = GQ_EVR_NOT_APPLICABLE;
        return GQ_OK;
    }
    if (xr.interrupted || gq_interrupt_requested())
        return GQ_E_INTR;
    /* Other errors are in the records, as for every measurement of the card. */
    return rc == GQ_E_NOMEM ? gq_err_set(err, rc, "%s", e.msg) : GQ_OK;
}

/* Threshold and agreement checks on the host figures alone that their
 * intervals would leave undetermined (gq_expect_open_host, against the
 * expectations the card is judged by): those GPUs' runs alone measured again
 * with more rounds, at the end of the host step. */
static int settle_host(gq_card_runner *R, gq_err *err)
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

int gq_card_run_bidir(gq_card_runner *R, gq_err *err)
{
    gq_card_runner_m_reset(R->m, GQ_CARD_TEST_BIDIR_SET);
    int n = R->o->ngpus, k = 0;
    for (int i = 0; i < n && k + 1 < GQ_MAX_FLOWS; i++) {
        gq_card_runner_host_flow(&R->m->flows[k], R->o->gpus[i], GQ_DIR_H2D, R->o->bytes, k);
        R->m->report[k] = true;
        k++;
        gq_card_runner_host_flow(&R->m->flows[k], R->o->gpus[i], GQ_DIR_D2H, R->o->bytes, k);
        R->m->report[k] = true;
        k++;
    }
    R->m->nflows = k;
    R->m->aggregate = true;
    R->m->direction_sums = true;
    return gq_card_runner_measure(R, err);
}

/* The identity step: discovery already ran; the card composes it. */
int gq_card_run_identity(gq_card_runner *R, gq_err *err)
{
    (void)R, (void)err;
    return GQ_OK;
}

/* The matrix: the discovery pipeline's matrix (quick: the pairs with P2P only); at the standard and
 * full levels the driver's own staged copy where a pair has no P2P, and at the full level the write
 * direction; then the domains, settled. */
int gq_card_run_matrix(gq_card_runner *R, gq_err *err)
{
    const gq_card_opts *o = R->o;
    gq_discovery *D = R->disc;
    int src;
    if ((src = gq_discovery_matrix(D, o->level == GQ_LEVEL_QUICK, err)))
        return src;
    /* standard and full: where a pair has no P2P, the driver's own staged copy (what
     * cudaMemcpyPeer gets) beside gpuqual's pipelined one, one pair per class of staged path */
    if (o->level != GQ_LEVEL_QUICK) {
        int ds[GQ_MAX_GPUS], dd[GQ_MAX_GPUS];
        int nd = gq_card_driver_staged_pairs(R->t, o->gpus, o->ngpus, ds, dd, GQ_MAX_GPUS);
        for (int i = 0; i < nd && !src; i++) {
            gq_card_runner_m_reset(R->m, GQ_CARD_TEST_DRIVER_STAGED);
            gq_card_runner_p2p_flow(&R->m->flows[0], ds[i], dd[i], true, o->bytes, 0);
            R->m->flows[0].method = GQ_METHOD_DRIVER_STAGED;
            R->m->report[0] = true;
            R->m->nflows = 1;
            src = gq_card_runner_measure(R, err);
        }
    }
    /* full: the write direction too (the pair's source pushes) */
    for (int i = 0; i < D->plan.n && !src && o->level == GQ_LEVEL_FULL; i++) {
        gq_probe_measurement(&D->plan.v[i], o->bytes, GQ_METHOD_CE, false, R->m);
        src = R->m->nflows ? gq_card_runner_measure(R, err) : GQ_OK;
    }
    if (!src && !(src = gq_discovery_domains(D, err)))
        src = gq_discovery_settle_domains(D, err);
    return src;
}

/* The host step: each GPU alone (the contention probes' host-alone part), then the runs a threshold
 * or agreement check would leave undetermined measured again. */
int gq_card_run_host(gq_card_runner *R, gq_err *err)
{
    int src;
    if ((src = gq_discovery_domains(R->disc, err)) ||
        (src = gq_discovery_contention(R->disc, false, true, err)))
        return src;
    return settle_host(R, err);
}

/* The contention step: the contention probes but the host-alone ones, then what they left open
 * measured again. */
int gq_card_run_contention(gq_card_runner *R, gq_err *err)
{
    int src;
    if ((src = gq_discovery_domains(R->disc, err)) ||
        (src = gq_discovery_contention(R->disc, false, false, err)))
        return src;
    return gq_discovery_settle(R->disc, err);
}

int gq_card_run_sweep(gq_card_runner *R, gq_err *err)
{
    int src = gq_discovery_domains(R->disc, err);
    return src ? src : step_sweep(R, R->disc->matrix, R->disc->domains, err);
}
