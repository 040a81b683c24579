/* Reading a saved card section, fail closed (render/card_render.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analysis/card.h"
#include "render/card_render.h"

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
        snprintf(buf, n, "is \"%.80s\"", json_string_value(v));
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
#define REASONS "\"budget\", \"one_gpu\", \"not_applicable\", \"user\", \"interrupted\", \"error\""

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
    if (strcmp(ev, "measured") && strcmp(v, "skip")) {
        char p[160];
        snprintf(p, sizeof p, "%s.verdict", path);
        return bad(
            R, p, "is \"%s\" on evidence \"%s\", expected \"skip\" (nothing passes on evidence not measured)",
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

int gq_card_read(json_t *card, const char *file, gq_err *err)
{
    rd R = {.file = file, .err = err, .version = 1};
    if (!json_is_object(card))
        return bad(&R, "card", "is not an object");
    const json_t *cv = json_object_get(card, "card_version");
    if (cv) {
        if (!json_is_integer(cv) || json_integer_value(cv) < 1)
            return bad(&R, "card.card_version", "is not a whole number >= 1");
        if (json_integer_value(cv) > GQ_CARD_VERSION)
            return bad(&R, "card.card_version",
                       "is %lld, newer than this gpuqual reads (%d); use a newer gpuqual",
                       (long long)json_integer_value(cv), GQ_CARD_VERSION);
        R.version = (int)json_integer_value(cv);
    }
    const json_t *v = json_object_get(card, "verdict");
    const char *vs = json_string_value(v);
    gq_card_verdict cvd;
    bool ok = gq_card_verdict_parse(vs, &cvd) && (R.version >= 2 || cvd != GQ_CV_INCOMPLETE);
    if (!ok) {
        char b[120];
        return bad(&R, "card.verdict", "%s, expected \"pass\", \"warn\"%s \"fail\"%s", seen(v, b, sizeof b),
                   R.version >= 2 ? "," : " or", R.version >= 2 ? " or \"incomplete\"" : "");
    }
    int rc;
    if ((rc = list(&R, card, "checks", "id", false)) || (rc = list(&R, card, "rows", "check", true)))
        return rc;
    if (R.version < 2)
        return gq_card_upgrade_v1(card) ? gq_err_set(err, GQ_E_NOMEM, "out of memory reading the card")
                                        : GQ_OK;
    if ((rc = plan(&R, card)) ||
        (rc =
             enum_field(&R, card, "card", "level", false, ok_level, "\"quick\", \"standard\" or \"full\"")) ||
        (rc = enum_field(&R, card, "card", "verdict_text", false, ok_string, "a string")))
        return rc;
    const json_t *ec = json_object_get(card, "exit_code");
    if (!json_is_integer(ec) || json_integer_value(ec) != gq_card_verdict_exit_code(cvd))
        return bad(&R, "card.exit_code", "does not match the verdict \"%s\" (expected %d)", vs,
                   gq_card_verdict_exit_code(cvd));
    return GQ_OK;
}
