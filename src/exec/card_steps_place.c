/* The card's steps that run whole analyses (analysis/card_steps.h): the
 * placement (solved on the measured paths, then verified), the collectives
 * (`place --tp 2`) and the stress run with telemetry, through the runner
 * (exec/card_run_internal.h). */
#include "exec/card_run_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bottlenecks.h"
#include "analysis/placement.h"
#include "core/interrupt.h"
#include "doc/analysis_json.h"
#include "doc/card_compose.h"
#include "exec/place_verify.h"
#include "exec/stress_run.h"
#include "exec/tp_place.h"

static int step_placement(gq_card_runner *R, const gq_domains *dom, gq_err *err)
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
 * to res->sec.coll. GQ_E_NOLIB when the backend has no NCCL (the step is then
 * skipped: not measured, never INCOMPLETE). Journaled as the stress run is
 * (doc/card_compose.h): a resumed card re-uses a clean measured result
 * (res->coll_reused) and measures again one that was not journaled (failed,
 * contaminated, cut short, refused for overlap, or never finished). */
static int step_collectives(gq_card_runner *R, const gq_pairmatrix *pm, gq_err *err)
{
    int n = R->o->ngpus - R->o->ngpus % 2;
    gq_card_step *st = &R->plan->step[GQ_CS_COLLECTIVES];
    if (R->j &&
        gq_card_coll_journal_reusable(R->j, 2, GQ_CARD_COLL_BYTES, R->o->gpus, n, &R->res->sec.coll)) {
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
    else if (rc == GQ_E_NOLIB) { /* skipped: not measured, shown as info */
        snprintf(st->note, sizeof st->note, "%s", e.msg);
        R->skip = GQ_EVR_NO_LIBRARY;
        rc = GQ_OK;
    } else if (rc == GQ_E_NOMEM)
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
        gq_card_coll_view *c = &R->res->sec.coll;
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
    gq_card_runner *R;
    int sent[GQ_MAX_GPUS]; /* samples of GPU slot k already journalled */
} stress_cb;

static void on_stress(void *arg, const gq_stress_result *r, double elapsed_s)
{
    gq_card_runner *R = ((stress_cb *)arg)->R;
    double d = r->duration_s > 0 ? elapsed_s / r->duration_s : 0;
    gq_card_runner_report(R, d > 1 ? 1 : d);
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
static int reuse_stress(gq_card_runner *R, gq_err *err)
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

int gq_card_run_stress(gq_card_runner *R, gq_err *err)
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

int gq_card_run_placement(gq_card_runner *R, gq_err *err)
{
    int src = gq_discovery_domains(R->disc, err);
    if (!src)
        src = step_placement(R, R->disc->domains, err);
    /* its runs feed the inference too: settle what they left open */
    return src ? src : gq_discovery_settle(R->disc, err);
}

int gq_card_run_collectives(gq_card_runner *R, gq_err *err)
{
    int src = gq_discovery_domains(R->disc, err);
    return src ? src : step_collectives(R, R->disc->matrix, err);
}
