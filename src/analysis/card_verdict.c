/* The typed card's verdict from its checks and its steps' evidence, the
 * rows' evidence, and the exit code (analysis/card.h). Pure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/card.h"

void gq_card_init(gq_card *c)
{
    memset(c, 0, sizeof *c);
    c->level = GQ_LEVEL_STANDARD;
    c->complete = true;
    c->exit_code = 1;
    c->verdict = GQ_CV_INCOMPLETE;
}

void gq_card_free(gq_card *c)
{
    if (!c)
        return;
    gq_checklist_free(&c->checks);
    free(c->findings);
    c->findings = NULL;
    c->nfindings = c->capfindings = 0;
}

int gq_card_add_finding(gq_card *c, const char *text)
{
    if (c->nfindings == c->capfindings) {
        int cap = c->capfindings ? 2 * c->capfindings : 16;
        void *p = realloc(c->findings, (size_t)cap * sizeof c->findings[0]);
        if (!p)
            return GQ_E_NOMEM;
        c->findings = p;
        c->capfindings = cap;
    }
    snprintf(c->findings[c->nfindings++], sizeof c->findings[0], "%s", text);
    return GQ_OK;
}

void gq_card_rest_rows(gq_card *c)
{
    for (int i = 0; i < c->nrows; i++) {
        gq_card_row *r = &c->rows[i];
        int s = gq_card_row_step(r->check);
        r->step = s;
        r->evidence = s < 0 ? GQ_EV_SKIPPED : c->step_ev[s];
        r->reason = s < 0                           ? GQ_EVR_NOT_APPLICABLE
                    : r->evidence == GQ_EV_MEASURED ? GQ_EVR_NONE
                                                    : c->step_why[s];
        if (r->evidence == GQ_EV_MEASURED || (s < 0 && r->verdict == GQ_V_SKIP))
            continue;
        if (s < 0) { /* a row of no step gpuqual knows that claims a verdict: unknown, never pass */
            r->evidence = GQ_EV_UNKNOWN;
            r->reason = GQ_EVR_NONE;
        }
        snprintf(r->result, sizeof r->result, "not measured (%s)",
                 r->evidence == GQ_EV_UNKNOWN ? "the card does not say whether this step ran"
                 : r->reason                  ? gq_ev_reason_words(r->reason)
                                              : gq_evidence_name(r->evidence));
        /* a library the step needs is missing (no NCCL): said, not a gap in the card */
        r->verdict = r->evidence == GQ_EV_SKIPPED && r->reason == GQ_EVR_NO_LIBRARY ? GQ_V_INFO : GQ_V_SKIP;
    }
}

gq_verdict gq_card_summarize(gq_card *c)
{
    for (int v = 0; v < 5; v++)
        c->counts[v] = gq_checklist_count(&c->checks, (gq_verdict)v);
    gq_verdict worst = gq_checklist_overall(&c->checks);
    c->verdict = gq_card_overall((int)worst, c->complete, c->level, c->step_ev, c->step_why, c->turned_off,
                                 c->verdict_text, sizeof c->verdict_text);
    if (c->nbusy) {
        char gpus[120] = "";
        size_t used = 0;
        int k = 0;
        for (int g = 0; g < GQ_MAX_GPUS && used < sizeof gpus; g++)
            if (c->busy_records[g])
                used += (size_t)snprintf(gpus + used, sizeof gpus - used, "%s%d", k++ ? "," : "", g);
        size_t t = strlen(c->verdict_text);
        if (!c->allow_busy) {
            c->verdict = GQ_CV_INCOMPLETE;
            snprintf(c->verdict_text, sizeof c->verdict_text, "INCOMPLETE: GPU%s %s busy", k > 1 ? "s" : "",
                     gpus);
        } else if (t < sizeof c->verdict_text)
            snprintf(c->verdict_text + t, sizeof c->verdict_text - t, " (GPU%s %s busy, allowed)",
                     k > 1 ? "s" : "", gpus);
    }
    c->exit_code = gq_card_verdict_exit_code(c->verdict);
    return worst;
}

bool gq_verdict_parse(const char *s, gq_verdict *out)
{
    for (int v = GQ_V_SKIP; s && v <= GQ_V_FAIL; v++)
        if (!strcmp(s, gq_verdict_name((gq_verdict)v))) {
            *out = (gq_verdict)v;
            return true;
        }
    return false;
}
