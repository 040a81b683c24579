/* The card's step runner (exec/card_run.h): each step of the plan in the
 * order of analysis/card_steps.h, through its run function (the table
 * below; the steps' runs in exec/card_steps*.c), with the progress, the
 * clean room's samples between steps, the journal and Ctrl-C. */
#include "exec/card_run.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/interrupt.h"
#include "core/units.h"
#include "exec/card_run_internal.h"
#include "exec/discovery.h"
#include "exec/plan_run.h"
#include "measure/cleanroom.h"
#include "measure/harness.h"

void gq_card_runner_report(gq_card_runner *R, double frac_of_step)
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

int gq_card_runner_measure(gq_card_runner *R, gq_err *err)
{
    gq_err e = {0};
    int rc = gq_exec_one(R->be, R->t, R->m, &R->ho, R->j, &R->res->rs, &e);
    R->done_s +=
        gq_card_estimate_measurement(R->m->nflows, R->ho.rounds, R->ho.round_s, R->m->flows[0].bytes);
    gq_card_runner_report(R, -1);
    if (rc == GQ_E_INTR || gq_interrupt_requested())
        return GQ_E_INTR;
    if (rc == GQ_E_NOMEM)
        return gq_err_set(err, rc, "%s", e.msg);
    /* Other errors are recorded as invalid records by the harness; the card
     * goes on and the verdict reports them. */
    return GQ_OK;
}

void gq_card_runner_host_flow(gq_flow *f, int gpu, gq_direction d, uint64_t bytes, int tag)
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

void gq_card_runner_p2p_flow(gq_flow *f, int src, int dst, bool staged, uint64_t bytes, int tag)
{
    memset(f, 0, sizeof *f);
    f->src = (gq_endpoint){.kind = GQ_EP_GPU, .index = src};
    f->dst = (gq_endpoint){.kind = GQ_EP_GPU, .index = dst};
    f->method = staged ? GQ_METHOD_STAGED : GQ_METHOD_CE;
    f->exec_gpu = staged ? src : dst; /* read: the destination pulls */
    f->bytes = bytes;
    f->tag = tag;
}

void gq_card_runner_m_reset(gq_measurement *m, const char *test)
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
    gq_card_runner *R = arg;
    (void)pr, (void)done, (void)total;
    gq_measurement *save_m = R->m;
    gq_harness_opts save_ho = R->ho;
    R->m = m;
    if (ho)
        R->ho.rounds = ho->rounds;
    int rc = gq_card_runner_measure(R, err);
    R->m = save_m;
    R->ho = save_ho;
    return rc;
}

static void begin_step(gq_card_runner *R, gq_card_step_id s)
{
    R->cur = s;
    R->idx++;
    R->step_t0 = gq_now_mono();
    R->step_done0 = R->done_s;
    R->skip = GQ_EVR_NONE;
    gq_card_runner_report(R, 0);
    /* The clean room samples the GPUs' load before each step, gpuqual idle
     * (the frame sampled before the first one). */
    gq_cleanroom *cr = gq_cleanroom_installed();
    if (cr && R->idx > 1)
        gq_cleanroom_step(cr, R->o->gpus, R->o->ngpus, GQ_CLEAN_STEP_S);
}

static void end_step(gq_card_runner *R, gq_card_step_id s, gq_card_step_status st)
{
    gq_card_step *step = &R->plan->step[s];
    step->elapsed_s = gq_now_mono() - R->step_t0;
    step->status = st;
    step->reason = st == GQ_CSS_DONE          ? GQ_EVR_NONE
                   : st == GQ_CSS_INTERRUPTED ? GQ_EVR_INTERRUPTED
                   : st == GQ_CSS_FAILED      ? GQ_EVR_ERROR
                                              : GQ_EVR_NOT_APPLICABLE;
    R->done_s = R->step_done0 + step->est_s;
    gq_card_runner_report(R, 1.0);
    /* the step's journal lines synced together; a failed fsync stops the
     * card at its next journal line, as a failed write does */
    gq_err e = {0};
    if (R->j)
        (void)gq_journal_sync(R->j, &e);
}

/* Each step's run, by its line of analysis/card_steps.h. */
static int (*const run_fn[GQ_CS_COUNT])(gq_card_runner *, gq_err *) = {
#define RUN_(ID, NAME, ...) [GQ_CS_##ID] = gq_card_run_##NAME,
    GQ_CARD_STEPS(RUN_)
#undef RUN_
};

/* The discovery pipeline's options for a card: its stages run one card step each. */
static void card_discovery_opts(gq_card_runner *R, gq_discovery_opts *dso)
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

/* Ends step s after its run returned src: skipped (R->skip: latency unsupported, collectives without
 * NCCL), interrupted, failed or done. Returns GQ_E_INTR or GQ_E_NOMEM when the card stops there, else
 * GQ_OK. */
static int end_step_after(gq_card_runner *R, gq_card_step_id s, int src, gq_err *err)
{
    gq_card_step *st = &R->plan->step[s];
    gq_card_result *res = R->res;
    if (src == GQ_OK && R->skip != GQ_EVR_NONE) { /* not measured, and why (no NCCL: shown as info) */
        end_step(R, s, GQ_CSS_SKIPPED);
        st->reason = R->skip;
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
    gq_card_runner R = {
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
        int src = run_fn[s](&R, err);
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
