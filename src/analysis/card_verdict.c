/* The card's verdict from its checks and its steps' evidence, the rows'
 * evidence, the exit code, and reading a schema-1 card into schema 2
 * (analysis/card.h). Pure: walks the card section only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/card.h"

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *checks_json(const gq_checklist *cl)
{
    json_t *a = json_array();
    for (int i = 0; i < cl->n; i++) {
        const gq_check *c = &cl->v[i];
        const char *why = gq_ev_reason_name(c->reason);
        json_array_append_new(
            a, json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:s, s:s, s:s, s:o}", "id", c->id, "subject",
                         c->subject, "source", c->source, "verdict", gq_verdict_name(c->verdict), "figure",
                         jnum(c->figure), "threshold", jnum(c->threshold), "unit", c->unit, "text", c->text,
                         "step", gq_card_step_name(c->step), "evidence", gq_evidence_name(c->evidence),
                         "evidence_reason", why ? json_string(why) : json_null()));
    }
    return a;
}

/* The checks, their counts, the card's verdict (from its steps' evidence),
 * the expectations used and the exit code, written into card; returns the
 * worst check verdict. */
gq_verdict gq_card_judge_summary(json_t *card, const gq_checklist *cl, const gq_expect *ex,
                                 const gq_evidence *ev, const gq_ev_reason *why)
{
    json_object_set_new(card, "checks", checks_json(cl));
    gq_verdict worst = gq_checklist_overall(cl);
    json_object_set_new(
        card, "counts",
        json_pack("{s:i, s:i, s:i, s:i, s:i}", "pass", gq_checklist_count(cl, GQ_V_PASS), "warn",
                  gq_checklist_count(cl, GQ_V_WARN), "fail", gq_checklist_count(cl, GQ_V_FAIL), "info",
                  gq_checklist_count(cl, GQ_V_INFO), "skip", gq_checklist_count(cl, GQ_V_SKIP)));
    gq_card_level level = GQ_LEVEL_STANDARD; /* a schema-1 card: today's standard card */
    if (!gq_card_level_parse(json_string_value(json_object_get(card, "level")), &level))
        json_object_set_new(card, "level", json_string(gq_card_level_name(level)));
    bool complete = !json_is_false(json_object_get(card, "complete"));
    bool off[GQ_CS_COUNT];
    char text[160];
    gq_card_verdict v = gq_card_overall((int)worst, complete, level, ev, why, off, text, sizeof text);
    json_object_set_new(card, "card_version", json_integer(GQ_CARD_VERSION));
    json_object_set_new(card, "verdict", json_string(gq_card_verdict_name(v)));
    json_object_set_new(card, "verdict_text", json_string(text));
    json_t *to = json_array();
    for (int s = 0; s < GQ_CS_COUNT; s++)
        if (off[s])
            json_array_append_new(to, json_string(gq_card_step_name((gq_card_step_id)s)));
    json_object_set_new(card, "turned_off", to);
    json_object_set_new(card, "expectations",
                        ex && ex->nmodels
                            ? json_pack("{s:s, s:s}", "file", ex->path[0] ? ex->path : "(inline)",
                                        "description", ex->description)
                            : json_null());
    json_object_set_new(card, "exit_code", json_integer(gq_card_verdict_exit_code(v)));
    return worst;
}

/* Each row's step and evidence (the step's); a row whose evidence is not
 * measured says "not measured" and why, and is skip: never a pass. */
void gq_card_rows_rest_on(json_t *rows, const gq_evidence *step_ev, const gq_ev_reason *step_why)
{
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        int s = gq_card_row_step(json_string_value(json_object_get(r, "check")));
        gq_evidence ev = s < 0 ? GQ_EV_SKIPPED : step_ev[s];
        gq_ev_reason why = s < 0 ? GQ_EVR_NOT_APPLICABLE : ev == GQ_EV_MEASURED ? GQ_EVR_NONE : step_why[s];
        const char *wn = gq_ev_reason_name(why);
        json_object_set_new(r, "step",
                            s < 0 ? json_null() : json_string(gq_card_step_name((gq_card_step_id)s)));
        json_object_set_new(r, "evidence", json_string(gq_evidence_name(ev)));
        json_object_set_new(r, "evidence_reason", wn ? json_string(wn) : json_null());
        if (ev == GQ_EV_MEASURED || s < 0)
            continue;
        char res[160];
        snprintf(res, sizeof res, "not measured (%s)",
                 ev == GQ_EV_UNKNOWN ? "the card does not say whether this step ran"
                 : why               ? gq_ev_reason_words(why)
                                     : gq_evidence_name(ev));
        json_object_set_new(r, "result", json_string(res));
        json_object_set_new(r, "verdict", json_string("skip"));
    }
}

int gq_card_exit_code(const json_t *card)
{
    /* Fail closed: only the verdicts gpuqual writes, spelled as it writes them. */
    gq_card_verdict v;
    if (!gq_card_verdict_parse(json_string_value(json_object_get(card, "verdict")), &v))
        return -1;
    if (json_is_false(json_object_get(card, "complete"))) /* schema 1: incomplete beside the verdict */
        v = GQ_CV_INCOMPLETE;
    return gq_card_verdict_exit_code(v);
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

static double num_or_nan(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static void str_into(char *dst, size_t n, const json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    snprintf(dst, n, "%s", v ? v : "");
}

int gq_card_upgrade_v1(json_t *card)
{
    gq_evidence ev[GQ_CS_COUNT];
    gq_ev_reason why[GQ_CS_COUNT];
    gq_card_plan_evidence(card, ev, why);
    const json_t *cj = json_object_get(card, "checks");
    gq_checklist cl = {0};
    size_t n = json_array_size(cj), i;
    if (n && !(cl.v = calloc(n, sizeof *cl.v)))
        return GQ_E_NOMEM;
    cl.cap = (int)n;
    const json_t *c;
    json_array_foreach(cj, i, c)
    {
        gq_check *k = &cl.v[cl.n++];
        str_into(k->id, sizeof k->id, c, "id");
        str_into(k->subject, sizeof k->subject, c, "subject");
        str_into(k->source, sizeof k->source, c, "source");
        str_into(k->unit, sizeof k->unit, c, "unit");
        str_into(k->text, sizeof k->text, c, "text");
        k->figure = num_or_nan(c, "figure");
        k->threshold = num_or_nan(c, "threshold");
        if (!gq_verdict_parse(json_string_value(json_object_get(c, "verdict")), &k->verdict))
            k->verdict = GQ_V_SKIP; /* the reader refused such a card before */
        gq_check_rest_on(k, ev, why);
    }
    /* The rows: what was measured keeps its words, under its schema-2 key. */
    size_t r;
    json_t *row;
    json_array_foreach(json_object_get(card, "rows"), r, row)
    {
        json_t *e = json_object_get(row, "evidence");
        if (json_is_string(e) && !json_object_get(row, "measurement"))
            json_object_set(row, "measurement", e);
    }
    gq_card_rows_rest_on(json_object_get(card, "rows"), ev, why);
    json_t *expectations = json_incref(json_object_get(card, "expectations"));
    gq_card_judge_summary(card, &cl, NULL, ev, why);
    if (expectations)
        json_object_set_new(card, "expectations", expectations);
    json_t *step;
    json_array_foreach(json_object_get(card, "plan"), r, step)
    {
        gq_card_step_id s;
        if (!json_is_object(step) || json_object_get(step, "reason") ||
            !gq_card_step_parse(json_string_value(json_object_get(step, "step")), &s))
            continue;
        const char *w = gq_ev_reason_name(why[s]);
        json_object_set_new(step, "reason", w ? json_string(w) : json_null());
    }
    gq_checklist_free(&cl);
    return GQ_OK;
}
