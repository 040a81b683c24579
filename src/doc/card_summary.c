/* The node summary of a card document (card_summary.h). */
#include "doc/card_summary.h"

#include <stdbool.h>
#include <string.h>

static const char *str(const json_t *o, const char *key, const char *def)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : def;
}

/* The check's evidence: its own field, else what a card_version 1 document
 * implies (it judged "skip" what it did not measure). */
static json_t *check_summary(const json_t *c)
{
    const char *verdict = str(c, "verdict", "skip");
    const char *evidence = str(c, "evidence", NULL);
    json_t *reason = json_object_get(c, "evidence_reason");
    if (!evidence)
        evidence = strcmp(verdict, "skip") ? "measured" : "skipped";
    json_t *figure = json_object_get(c, "figure");
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(str(c, "id", "check")));
    json_object_set_new(o, "subject", json_string(str(c, "subject", "")));
    json_object_set_new(o, "verdict", json_string(verdict));
    json_object_set_new(o, "evidence", json_string(evidence));
    json_object_set_new(o, "evidence_reason", json_is_string(reason) ? json_copy(reason) : json_null());
    json_object_set_new(o, "step", json_string(str(c, "step", "")));
    json_object_set_new(o, "figure", json_is_number(figure) ? json_copy(figure) : json_null());
    json_object_set_new(o, "unit", json_string(str(c, "unit", "")));
    json_object_set_new(o, "text", json_string(str(c, "text", "")));
    return o;
}

json_t *gq_card_node_summary(const json_t *doc)
{
    const json_t *card = json_object_get(doc, "card");
    if (!json_is_object(card))
        return NULL;
    const char *host = str(card, "hostname", NULL);
    if (!host)
        host = str(json_object_get(doc, "host"), "hostname", "unknown");
    /* card_version 1 says incomplete with complete: false beside the verdict. */
    const char *verdict = str(card, "verdict", "incomplete");
    json_t *complete = json_object_get(card, "complete");
    bool is_complete = !json_is_false(complete) && strcmp(verdict, "incomplete");
    if (!is_complete && strcmp(verdict, "fail"))
        verdict = "incomplete";
    json_t *checks = json_array(), *o = json_object();
    if (!checks || !o) {
        json_decref(checks);
        json_decref(o);
        return NULL;
    }
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(card, "checks"), i, c) json_array_append_new(checks, check_summary(c));
    /* Each check's share of the measured time of the card step that
     * measured it (plan[].elapsed_s), so a node's checks add up to its
     * steps' time; none where the card has no such step. */
    size_t k, j;
    json_t *step, *o2;
    json_array_foreach(json_object_get(card, "plan"), k, step)
    {
        const char *name = str(step, "step", "");
        json_t *el = json_object_get(step, "elapsed_s");
        int n = 0;
        json_array_foreach(checks, j, o2) n += *name && !strcmp(str(o2, "step", ""), name);
        json_array_foreach(checks, j,
                           o2) if (n > 0 && json_is_number(el) && !strcmp(str(o2, "step", ""), name))
            json_object_set_new(o2, "time_s", json_real(json_number_value(el) / n));
    }
    json_object_set_new(o, "hostname", json_string(host));
    json_object_set_new(o, "verdict", json_string(verdict));
    json_object_set_new(o, "exit_code", json_integer(json_integer_value(json_object_get(card, "exit_code"))));
    json_object_set_new(o, "complete", json_boolean(is_complete));
    json_object_set_new(o, "level",
                        json_is_string(json_object_get(card, "level"))
                            ? json_copy(json_object_get(card, "level"))
                            : json_null());
    if (json_is_number(json_object_get(card, "elapsed_s")))
        json_object_set_new(o, "elapsed_s", json_copy(json_object_get(card, "elapsed_s")));
    json_object_set_new(o, "checks", checks);
    return o;
}
