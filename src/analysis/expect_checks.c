/* Verdicts, checklists and a card's facts: what the judging (expect.c) fills,
 * and the key checks shared with the expectation files' reader
 * (doc/expect_load.c) and --set (expect_set.c). */
#include "analysis/expect.h"
#include "analysis/expect_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"

static const char *const verdict_names[] = {
    [GQ_V_SKIP] = "skip", [GQ_V_INFO] = "info", [GQ_V_PASS] = "pass",
    [GQ_V_WARN] = "warn", [GQ_V_FAIL] = "fail",
};

const char *gq_verdict_name(gq_verdict v)
{
    return (unsigned)v <= GQ_V_FAIL ? verdict_names[v] : "?";
}

int gq_verdict_exit_code(gq_verdict v)
{
    return v == GQ_V_FAIL ? 1 : v == GQ_V_WARN ? 4 : 0;
}

/* ---- key checks shared with the loader (doc/expect_load.c) ---------------- */

int gq_expect_unknown_key(gq_err *err, const char *where, const char *key, const char *const *cands)
{
    const char *best = gq_closest(key, cands);
    if (best)
        return gq_err_set(err, GQ_E_USAGE, "%s: unknown key '%s'; did you mean '%s'?", where, key, best);
    char list[600] = "";
    size_t used = 0;
    for (int i = 0; cands[i]; i++) {
        int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", cands[i]);
        if (w < 0 || (size_t)w >= sizeof list - used)
            break;
        used += (size_t)w;
    }
    return gq_err_set(err, GQ_E_USAGE, "%s: unknown key '%s' (known: %s)", where, key, list);
}

const char *gq_expect_key_bound(int k, double v)
{
    switch (k) {
    case GQ_EXK_SPREAD_PCT_MAX: return v >= 0 ? NULL : "0 % or more"; /* 0: every GPU alike */
    case GQ_EXK_TEMP_C_MAX: return v > -273.15 ? NULL : "above absolute zero (-273.15 °C)";
    default: return v > 0 ? NULL : "above 0"; /* no bandwidth, latency, clock, size or count is 0 or less */
    }
}

/* ---- facts and checks ----------------------------------------------------- */

void gq_check_rest_on(gq_check *c, const gq_evidence *step_ev, const gq_ev_reason *step_why)
{
    c->step = gq_card_check_step(c->id);
    c->evidence = step_ev[c->step];
    c->reason = c->evidence == GQ_EV_MEASURED ? GQ_EVR_NONE : step_why[c->step];
    if (c->evidence == GQ_EV_MEASURED || c->verdict == GQ_V_SKIP)
        return;
    /* Never judged on evidence that was not measured. */
    c->verdict = GQ_V_SKIP;
    char was[sizeof c->text];
    snprintf(was, sizeof was, "%s", c->text);
    const char *w = gq_ev_reason_words(c->reason);
    snprintf(c->text, sizeof c->text, "Not measured (%s %s%s%s): %s", gq_card_step_name(c->step),
             gq_evidence_name(c->evidence), *w ? ", " : "", w, was);
}

void gq_card_facts_init(gq_card_facts *f)
{
    memset(f, 0, sizeof *f);
    f->coll_min_alone_gbps = f->coll_min_once_gbps = NAN;
    for (int i = 0; i < GQ_MAX_GPUS; i++) {
        gq_gpu_facts *g = &f->gpu[i];
        g->index = i;
        g->mem_mib = g->power_limit_w = NAN;
        g->pcie_gen_cur = g->pcie_width_cur = g->pcie_gen_max = g->pcie_width_max = -1;
        g->h2d_gbps = g->d2h_gbps = g->host_latency_ns = NAN;
        g->h2d_lo = g->h2d_hi = g->d2h_lo = g->d2h_hi = NAN;
        g->temp_max_c = g->sm_clock_avg_mhz = g->power_capped_pct = NAN;
        g->stress_verdict = GQ_V_SKIP;
        for (int j = 0; j < GQ_MAX_GPUS; j++) {
            f->p2p_gbps[i][j] = NAN;
            f->p2p_lat_ns[i][j] = NAN;
            f->nvlinks[i][j] = -1;
        }
    }
}

int gq_checklist_push(gq_checklist *cl, const gq_check *c)
{
    if (cl->n == cl->cap) {
        int cap = cl->cap ? cl->cap * 2 : 32;
        gq_check *v = realloc(cl->v, (size_t)cap * sizeof *v);
        if (!v)
            return GQ_E_NOMEM;
        cl->v = v;
        cl->cap = cap;
    }
    cl->v[cl->n++] = *c;
    return GQ_OK;
}

void gq_checklist_free(gq_checklist *cl)
{
    if (!cl)
        return;
    free(cl->v);
    cl->v = NULL;
    cl->n = cl->cap = 0;
}

gq_verdict gq_checklist_overall(const gq_checklist *cl)
{
    gq_verdict w = GQ_V_PASS;
    for (int i = 0; i < cl->n; i++)
        if (cl->v[i].verdict > w)
            w = cl->v[i].verdict;
    return w;
}

int gq_checklist_count(const gq_checklist *cl, gq_verdict v)
{
    int c = 0;
    for (int i = 0; i < cl->n; i++)
        c += cl->v[i].verdict == v;
    return c;
}
