/* The typed card's one codec (doc/card_codec.h): gq_card_to_json writes
 * what the card concludes into the card section; gq_card_from_json reads a
 * saved card section back, fail closed, and reads a schema-1 card as
 * schema 2. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "analysis/card.h"
#include "doc/card_codec.h"

typedef struct rd {
    const char *file;
    gq_err *err;
    int version;
} rd;

__attribute__((format(printf, 3, 4))) static int bad(rd *R, const char *path, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return gq_err_set(R->err, GQ_E_USAGE, "%s: %s %s", R->file, path, what);
}

/* "is \"X\"", "is missing", "is not a string" ... for a value that is not what was expected. */
static const char *seen(const json_t *v, char *buf, size_t n)
{
    if (!v)
        return "is missing";
    if (json_is_string(v)) {
        char q[128];
        snprintf(buf, n, "is \"%s\"", gq_ellipsize(q, sizeof q, json_string_value(v), 80));
        return buf;
    }
    return json_is_null(v) ? "is null" : "is not a string";
}

/* A string field that must be one of the names parse accepts. */
static int enum_field(rd *R, const json_t *o, const char *path, const char *key, bool nullable,
                      bool (*ok)(const char *), const char *expected)
{
    const json_t *v = json_object_get(o, key);
    if (nullable && json_is_null(v))
        return GQ_OK;
    if (json_is_string(v) && ok(json_string_value(v)))
        return GQ_OK;
    char p[160], b[120];
    snprintf(p, sizeof p, "%s.%s", path, key);
    return bad(R, p, "%s, expected %s%s", seen(v, b, sizeof b), expected, nullable ? " or null" : "");
}

static bool ok_check_verdict(const char *s)
{
    gq_verdict v;
    return gq_verdict_parse(s, &v);
}
static bool ok_evidence(const char *s)
{
    gq_evidence v;
    return gq_evidence_parse(s, &v);
}
static bool ok_reason(const char *s)
{
    gq_ev_reason v;
    return gq_ev_reason_parse(s, &v);
}
static bool ok_step(const char *s)
{
    gq_card_step_id v;
    return gq_card_step_parse(s, &v);
}
static bool ok_level(const char *s)
{
    gq_card_level v;
    return gq_card_level_parse(s, &v);
}
static bool ok_status(const char *s)
{
    for (int i = GQ_CSS_PLANNED; i <= GQ_CSS_FAILED; i++)
        if (!strcmp(s, gq_card_step_status_name((gq_card_step_status)i)))
            return true;
    return false;
}
static bool ok_string(const char *s)
{
    (void)s;
    return true;
}

#define VERDICTS "\"pass\", \"warn\", \"fail\", \"info\" or \"skip\""
#define EVIDENCE "\"measured\", \"skipped\", \"failed\" or \"unknown\""
#define REASONS                                                                                              \
    "\"budget\", \"one_gpu\", \"not_applicable\", \"user\", \"interrupted\", \"error\", \"level\", "         \
    "\"no_library\""

/* One check or row: its verdict, and in schema 2 its evidence, reason and
 * step; never a judged verdict on evidence that was not measured. */
static int entry(rd *R, const json_t *e, const char *path, const char *name_key, bool step_nullable)
{
    int rc;
    if (!json_is_object(e))
        return bad(R, path, "is not an object");
    if ((rc = enum_field(R, e, path, name_key, false, ok_string, "a string")) ||
        (rc = enum_field(R, e, path, "verdict", false, ok_check_verdict, VERDICTS)))
        return rc;
    if (R->version < 2)
        return GQ_OK;
    if ((rc = enum_field(R, e, path, "evidence", false, ok_evidence, EVIDENCE)) ||
        (rc = enum_field(R, e, path, "evidence_reason", true, ok_reason, REASONS)) ||
        (rc = enum_field(R, e, path, "step", step_nullable, ok_step, "a step of the plan")))
        return rc;
    const char *ev = json_string_value(json_object_get(e, "evidence"));
    const char *v = json_string_value(json_object_get(e, "verdict"));
    const char *why = json_string_value(json_object_get(e, "evidence_reason"));
    /* a library the step needs was missing (no NCCL): said as info, never judged */
    bool said = !strcmp(ev, "skipped") && why && !strcmp(why, "no_library") && !strcmp(v, "info");
    if (strcmp(ev, "measured") && strcmp(v, "skip") && !said) {
        char p[160];
        snprintf(p, sizeof p, "%s.verdict", path);
        return bad(R, p,
                   "is \"%s\" on evidence \"%s\", expected \"skip\" (nothing passes on evidence not "
                   "measured; \"info\" where a library was not found)",
                   v, ev);
    }
    return GQ_OK;
}

static int list(rd *R, const json_t *card, const char *key, const char *name_key, bool step_nullable)
{
    const json_t *a = json_object_get(card, key);
    char p[160];
    snprintf(p, sizeof p, "card.%s", key);
    if (!json_is_array(a))
        return bad(R, p, "%s, expected an array", a ? "is not an array" : "is missing");
    size_t i;
    const json_t *e;
    json_array_foreach(a, i, e)
    {
        snprintf(p, sizeof p, "card.%s[%zu]", key, i);
        int rc = entry(R, e, p, name_key, step_nullable);
        if (rc)
            return rc;
    }
    return GQ_OK;
}

static int plan(rd *R, const json_t *card)
{
    const json_t *a = json_object_get(card, "plan");
    if (!json_is_array(a))
        return bad(R, "card.plan", "%s, expected an array of steps", a ? "is not an array" : "is missing");
    size_t i;
    const json_t *e;
    json_array_foreach(a, i, e)
    {
        char p[64];
        snprintf(p, sizeof p, "card.plan[%zu]", i);
        int rc;
        if (!json_is_object(e))
            return bad(R, p, "is not an object");
        if ((rc = enum_field(R, e, p, "step", false, ok_step, "a step name (identity, matrix, ...)")) ||
            (rc = enum_field(R, e, p, "status", false, ok_status,
                             "\"planned\", \"done\", \"skipped\", \"interrupted\" or \"failed\"")) ||
            (rc = enum_field(R, e, p, "reason", true, ok_reason, REASONS)))
            return rc;
    }
    return GQ_OK;
}

/* The card section checked, fail closed; R->version set. */
static int validate(rd *R, const json_t *card)
{
    if (!json_is_object(card))
        return bad(R, "card", "is not an object");
    const json_t *cv = json_object_get(card, "card_version");
    if (cv) {
        if (!json_is_integer(cv) || json_integer_value(cv) < 1)
            return bad(R, "card.card_version", "is not a whole number >= 1");
        if (json_integer_value(cv) > GQ_CARD_VERSION)
            return bad(R, "card.card_version",
                       "is %lld, newer than this gpuqual reads (%d); use a newer gpuqual",
                       (long long)json_integer_value(cv), GQ_CARD_VERSION);
        R->version = (int)json_integer_value(cv);
    }
    const json_t *v = json_object_get(card, "verdict");
    const char *vs = json_string_value(v);
    gq_card_verdict cvd;
    bool ok = gq_card_verdict_parse(vs, &cvd) && (R->version >= 2 || cvd != GQ_CV_INCOMPLETE);
    if (!ok) {
        char b[120];
        return bad(R, "card.verdict", "%s, expected \"pass\", \"warn\"%s \"fail\"%s", seen(v, b, sizeof b),
                   R->version >= 2 ? "," : " or", R->version >= 2 ? " or \"incomplete\"" : "");
    }
    int rc;
    if ((rc = list(R, card, "checks", "id", false)) || (rc = list(R, card, "rows", "check", true)))
        return rc;
    const json_t *fs = json_object_get(card, "findings");
    size_t i;
    const json_t *x;
    json_array_foreach(fs, i, x) if (!json_is_string(x))
    {
        char p[64];
        snprintf(p, sizeof p, "card.findings[%zu]", i);
        return bad(R, p, "is not a string");
    }
    if (R->version < 2)
        return GQ_OK;
    if ((rc = plan(R, card)) ||
        (rc = enum_field(R, card, "card", "level", false, ok_level, "\"quick\", \"standard\" or \"full\"")) ||
        (rc = enum_field(R, card, "card", "verdict_text", false, ok_string, "a string")))
        return rc;
    json_array_foreach(json_object_get(card, "turned_off"), i, x) if (!ok_step(json_string_value(x)))
    {
        char p[64];
        snprintf(p, sizeof p, "card.turned_off[%zu]", i);
        return bad(R, p, "is not a step name");
    }
    const json_t *ec = json_object_get(card, "exit_code");
    if (!json_is_integer(ec) || json_integer_value(ec) != gq_card_verdict_exit_code(cvd))
        return bad(R, "card.exit_code", "does not match the verdict \"%s\" (expected %d)", vs,
                   gq_card_verdict_exit_code(cvd));
    return GQ_OK;
}

static void str_into(char *dst, size_t n, const json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    snprintf(dst, n, "%s", v ? v : "");
}

static double num_or_nan(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The evidence fields of a schema-2 check or row (validated before). */
static void evidence_of(const json_t *o, int *step, gq_evidence *ev, gq_ev_reason *why)
{
    gq_card_step_id s;
    *step = gq_card_step_parse(json_string_value(json_object_get(o, "step")), &s) ? (int)s : -1;
    if (!gq_evidence_parse(json_string_value(json_object_get(o, "evidence")), ev))
        *ev = GQ_EV_UNKNOWN;
    if (!gq_ev_reason_parse(json_string_value(json_object_get(o, "evidence_reason")), why))
        *why = GQ_EVR_NONE;
}

static int decode_checks(const json_t *card, int version, gq_card *c)
{
    const json_t *cj = json_object_get(card, "checks");
    size_t n = json_array_size(cj), i;
    if (n && !(c->checks.v = calloc(n, sizeof *c->checks.v)))
        return GQ_E_NOMEM;
    c->checks.cap = (int)n;
    const json_t *x;
    json_array_foreach(cj, i, x)
    {
        gq_check *k = &c->checks.v[c->checks.n++];
        str_into(k->id, sizeof k->id, x, "id");
        str_into(k->subject, sizeof k->subject, x, "subject");
        str_into(k->source, sizeof k->source, x, "source");
        str_into(k->unit, sizeof k->unit, x, "unit");
        str_into(k->text, sizeof k->text, x, "text");
        k->figure = num_or_nan(x, "figure");
        k->threshold = num_or_nan(x, "threshold");
        const json_t *fi = json_object_get(x, "figure_interval");
        k->figure_lo = json_is_number(json_array_get(fi, 0)) ? json_number_value(json_array_get(fi, 0)) : NAN;
        k->figure_hi = json_is_number(json_array_get(fi, 1)) ? json_number_value(json_array_get(fi, 1)) : NAN;
        k->undetermined = json_is_true(json_object_get(x, "undetermined"));
        gq_verdict_parse(json_string_value(json_object_get(x, "verdict")), &k->verdict);
        if (version < 2) {
            gq_check_rest_on(k, c->step_ev, c->step_why); /* schema 1: from the plan */
        } else {
            int step;
            evidence_of(x, &step, &k->evidence, &k->reason);
            k->step = step < 0 ? GQ_CS_IDENTITY : (gq_card_step_id)step;
        }
    }
    return GQ_OK;
}

static void decode_rows(const json_t *card, int version, gq_card *c)
{
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(card, "rows"), i, x)
    {
        if (c->nrows >= GQ_CARD_MAX_ROWS)
            break;
        gq_card_row *r = &c->rows[c->nrows++];
        str_into(r->check, sizeof r->check, x, "check");
        /* schema 1 called the row's words "evidence" */
        str_into(r->measurement, sizeof r->measurement, x, version < 2 ? "evidence" : "measurement");
        str_into(r->result, sizeof r->result, x, "result");
        str_into(r->decision, sizeof r->decision, x, "decision");
        gq_verdict_parse(json_string_value(json_object_get(x, "verdict")), &r->verdict);
        if (version >= 2)
            evidence_of(x, &r->step, &r->evidence, &r->reason);
    }
    if (version < 2)
        gq_card_rest_rows(c);
}

/* "allow_busy" and "busy" (opt): GPUs the clean room saw busy; an entry
 * whose GPU is not an index is ignored. */
static void decode_busy(const json_t *card, gq_card *out)
{
    out->allow_busy = json_is_true(json_object_get(card, "allow_busy"));
    size_t i;
    const json_t *b;
    json_array_foreach(json_object_get(card, "busy"), i, b)
    {
        json_int_t g = json_integer_value(json_object_get(b, "gpu"));
        json_int_t n = json_integer_value(json_object_get(b, "records"));
        if (!json_is_integer(json_object_get(b, "gpu")) || g < 0 || g >= GQ_MAX_GPUS || out->busy_records[g])
            continue;
        out->busy_records[g] = n > 0 && n < 1000000000 ? (int)n : 1;
        out->nbusy++;
        str_into(out->busy_what[g], sizeof out->busy_what[g], b, "what");
    }
}

/* "overrides" (opt): the --set overrides the card was judged with. */
static void decode_overrides(const json_t *card, gq_card *out)
{
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(card, "overrides"), i, x)
    {
        if (out->noverrides >= GQ_EXPECT_MAX_OVERRIDES || !json_is_object(x))
            continue;
        gq_expect_override *o = &out->overrides[out->noverrides++];
        str_into(o->spec, sizeof o->spec, x, "spec");
        str_into(o->key, sizeof o->key, x, "key");
        str_into(o->level, sizeof o->level, x, "level");
        str_into(o->was, sizeof o->was, x, "was");
        o->value = json_is_number(json_object_get(x, "value"))
                       ? json_number_value(json_object_get(x, "value"))
                       : NAN;
    }
}

int gq_card_from_json(const json_t *card, const char *file, gq_card *out, gq_err *err)
{
    rd R = {.file = file, .err = err, .version = 1};
    gq_card_init(out);
    int rc = validate(&R, card);
    if (rc)
        return rc;
    gq_card_plan_evidence(card, out->step_ev, out->step_why);
    out->complete = !json_is_false(json_object_get(card, "complete"));
    if (!gq_card_level_parse(json_string_value(json_object_get(card, "level")), &out->level))
        out->level = GQ_LEVEL_STANDARD;
    decode_busy(card, out);
    decode_overrides(card, out);
    const json_t *ex = json_object_get(card, "expectations");
    if ((out->have_expect = json_is_object(ex))) {
        str_into(out->expect_file, sizeof out->expect_file, ex, "file");
        str_into(out->expect_description, sizeof out->expect_description, ex, "description");
    }
    if (decode_checks(card, R.version, out)) {
        gq_card_free(out);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory reading the card");
    }
    decode_rows(card, R.version, out);
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(card, "findings"), i,
                       x) if (gq_card_add_finding(out, json_string_value(x)))
    {
        gq_card_free(out);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory reading the card");
    }
    if (R.version < 2) { /* judged again on the evidence its plan gives */
        gq_card_summarize(out);
        return GQ_OK;
    }
    for (int v = 0; v < 5; v++)
        out->counts[v] = gq_checklist_count(&out->checks, (gq_verdict)v);
    gq_card_verdict_parse(json_string_value(json_object_get(card, "verdict")), &out->verdict);
    str_into(out->verdict_text, sizeof out->verdict_text, card, "verdict_text");
    out->exit_code = gq_card_verdict_exit_code(out->verdict);
    json_array_foreach(json_object_get(card, "turned_off"), i, x)
    {
        gq_card_step_id s;
        if (gq_card_step_parse(json_string_value(x), &s))
            out->turned_off[s] = true;
    }
    return GQ_OK;
}

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *jreason(gq_ev_reason r)
{
    const char *w = gq_ev_reason_name(r);
    return w ? json_string(w) : json_null();
}

void gq_card_to_json(const gq_card *c, json_t *card)
{
    json_t *a = json_array();
    for (int i = 0; i < c->checks.n; i++) {
        const gq_check *k = &c->checks.v[i];
        json_t *kj =
            json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:s, s:s, s:s, s:o}", "id", k->id, "subject",
                      k->subject, "source", k->source, "verdict", gq_verdict_name(k->verdict), "figure",
                      jnum(k->figure), "threshold", jnum(k->threshold), "unit", k->unit, "text", k->text,
                      "step", gq_card_step_name(k->step), "evidence", gq_evidence_name(k->evidence),
                      "evidence_reason", jreason(k->reason));
        /* decided on an interval that straddled a threshold: say so */
        if (kj && k->undetermined) {
            json_object_set_new(kj, "undetermined", json_true());
            json_object_set_new(kj, "figure_interval",
                                isfinite(k->figure_lo) && isfinite(k->figure_hi)
                                    ? json_pack("[oo]", jnum(k->figure_lo), jnum(k->figure_hi))
                                    : json_null());
        }
        json_array_append_new(a, kj);
    }
    json_object_set_new(card, "checks", a);
    json_object_set_new(card, "counts",
                        json_pack("{s:i, s:i, s:i, s:i, s:i}", "pass", c->counts[GQ_V_PASS], "warn",
                                  c->counts[GQ_V_WARN], "fail", c->counts[GQ_V_FAIL], "info",
                                  c->counts[GQ_V_INFO], "skip", c->counts[GQ_V_SKIP]));
    json_object_set_new(card, "card_version", json_integer(GQ_CARD_VERSION));
    json_object_set_new(card, "level", json_string(gq_card_level_name(c->level)));
    json_object_set_new(card, "verdict", json_string(gq_card_verdict_name(c->verdict)));
    json_object_set_new(card, "verdict_text", json_string(c->verdict_text));
    json_t *to = json_array();
    for (int s = 0; s < GQ_CS_COUNT; s++)
        if (c->turned_off[s])
            json_array_append_new(to, json_string(gq_card_step_name((gq_card_step_id)s)));
    json_object_set_new(card, "turned_off", to);
    json_object_set_new(card, "allow_busy", json_boolean(c->allow_busy));
    json_t *ov = json_array();
    for (int i = 0; i < c->noverrides; i++) {
        const gq_expect_override *x = &c->overrides[i];
        json_array_append_new(ov, json_pack("{s:s, s:s, s:s, s:f, s:s}", "spec", x->spec, "key", x->key,
                                            "level", x->level, "value", x->value, "was", x->was));
    }
    json_object_set_new(card, "overrides", ov);
    json_t *busy = json_array();
    for (int g = 0; g < GQ_MAX_GPUS; g++)
        if (c->busy_records[g])
            json_array_append_new(busy, json_pack("{s:i, s:i, s:s}", "gpu", g, "records", c->busy_records[g],
                                                  "what", c->busy_what[g]));
    json_object_set_new(card, "busy", busy);
    json_object_set_new(
        card, "expectations",
        c->have_expect ? json_pack("{s:s, s:s}", "file", c->expect_file, "description", c->expect_description)
                       : json_null());
    json_object_set_new(card, "exit_code", json_integer(c->exit_code));
    json_t *rows = json_array();
    for (int i = 0; i < c->nrows; i++) {
        const gq_card_row *r = &c->rows[i];
        json_array_append_new(
            rows,
            json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:o}", "check", r->check, "measurement",
                      r->measurement, "result", r->result, "verdict", gq_verdict_name(r->verdict), "decision",
                      r->decision, "step",
                      r->step < 0 ? json_null() : json_string(gq_card_step_name((gq_card_step_id)r->step)),
                      "evidence", gq_evidence_name(r->evidence), "evidence_reason", jreason(r->reason)));
    }
    json_object_set_new(card, "rows", rows);
    json_t *fs = json_array();
    for (int i = 0; i < c->nfindings; i++)
        json_array_append_new(fs, json_string(c->findings[i]));
    json_object_set_new(card, "findings", fs);
    /* The plan as schema 2 has it. A schema-1 card's plan was not checked
     * (nor had it reasons): the steps gpuqual knows are kept, each with its
     * status, and the reason its evidence has where the reason is missing or
     * not one gpuqual writes; an entry of no known step said nothing about
     * the evidence and is left out; no plan is an empty one (no step known). */
    json_t *plan_out = json_array();
    size_t i;
    json_t *st;
    json_array_foreach(json_object_get(card, "plan"), i, st)
    {
        gq_card_step_id s;
        if (!json_is_object(st) || !gq_card_step_parse(json_string_value(json_object_get(st, "step")), &s) ||
            !json_is_string(json_object_get(st, "status")) ||
            !ok_status(json_string_value(json_object_get(st, "status"))))
            continue;
        const json_t *rj = json_object_get(st, "reason");
        gq_ev_reason known;
        bool ok = rj && (json_is_null(rj) ||
                         (json_is_string(rj) && gq_ev_reason_parse(json_string_value(rj), &known)));
        if (!ok)
            json_object_set_new(st, "reason", jreason(c->step_why[s]));
        json_array_append(plan_out, st);
    }
    json_object_set_new(card, "plan", plan_out);
}

int gq_card_read(json_t *card, const char *file, gq_err *err)
{
    gq_card *c = malloc(sizeof *c);
    if (!c)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory reading the card");
    int rc = gq_card_from_json(card, file, c, err);
    if (!rc)
        gq_card_to_json(c, card);
    gq_card_free(c);
    free(c);
    return rc;
}

int gq_card_judge_json(json_t *card, const json_t *bottlenecks, const json_t *stress, const gq_recordset *rs,
                       const gq_expect *ex, gq_err *err)
{
    gq_card *c = malloc(sizeof *c);
    if (!c)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory judging the card");
    gq_card_facts *f = malloc(sizeof *f);
    if (!f) {
        free(c);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory judging the card");
    }
    gq_card_views *sv = malloc(sizeof *sv);
    if (!sv) {
        free(f);
        free(c);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory judging the card");
    }
    gq_card_facts_from_json(card, stress, rs, f);
    gq_card_views_from_json(card, bottlenecks, stress, sv);
    int rc = gq_card_judge(sv, f, ex, c, err);
    free(f);
    free(sv);
    if (!rc)
        gq_card_to_json(c, card);
    gq_card_free(c);
    free(c);
    return rc;
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
