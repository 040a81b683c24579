/* The node summary of a card document (card_summary.h). */
#include "doc/card_summary.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"

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

/* ---- typed ------------------------------------------------------------- */

void gq_card_nodes_init(gq_card_nodes *l)
{
    memset(l, 0, sizeof *l);
}

static void node_free(gq_card_node *n)
{
    for (int k = 0; k < n->nchecks; k++) {
        gq_card_node_check *c = &n->checks[k];
        free(c->id);
        free(c->subject);
        free(c->verdict);
        free(c->evidence);
        free(c->reason);
        free(c->step);
        free(c->unit);
        free(c->text);
    }
    free(n->checks);
    free(n->hostname);
    free(n->verdict);
    free(n->error);
}

void gq_card_nodes_free(gq_card_nodes *l)
{
    for (int i = 0; i < l->n; i++)
        node_free(&l->node[i]);
    free(l->node);
    gq_card_nodes_init(l);
}

gq_card_node *gq_card_nodes_add(gq_card_nodes *l)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        gq_card_node *p = realloc(l->node, (size_t)cap * sizeof *p);
        if (!p)
            return NULL;
        l->node = p;
        l->cap = cap;
    }
    gq_card_node *n = &l->node[l->n++];
    memset(n, 0, sizeof *n);
    n->elapsed_s = NAN;
    return n;
}

/* o's string at key, copied into *out (NULL: none); false when out of memory. */
static bool dup_str(const json_t *o, const char *key, char **out)
{
    const char *s = json_string_value(json_object_get(o, key));
    *out = s ? strdup(s) : NULL;
    return !s || *out;
}

static double num_or_nan(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static int check_from_json(const json_t *c, gq_card_node_check *out)
{
    out->figure = num_or_nan(c, "figure");
    out->time_s = num_or_nan(c, "time_s");
    bool ok = dup_str(c, "id", &out->id) && dup_str(c, "subject", &out->subject) &&
              dup_str(c, "verdict", &out->verdict) && dup_str(c, "evidence", &out->evidence) &&
              dup_str(c, "evidence_reason", &out->reason) && dup_str(c, "step", &out->step) &&
              dup_str(c, "unit", &out->unit) && dup_str(c, "text", &out->text);
    return ok ? GQ_OK : GQ_E_NOMEM;
}

int gq_card_node_from_json(const json_t *node, gq_card_node *out)
{
    const json_t *rank = json_object_get(node, "rank"), *checks = json_object_get(node, "checks");
    out->has_rank = json_is_integer(rank);
    out->rank = json_integer_value(rank);
    out->exit_code = json_integer_value(json_object_get(node, "exit_code"));
    out->complete = json_is_true(json_object_get(node, "complete"));
    out->elapsed_s = num_or_nan(node, "elapsed_s");
    if (!dup_str(node, "hostname", &out->hostname) || !dup_str(node, "verdict", &out->verdict) ||
        !dup_str(node, "error", &out->error))
        return GQ_E_NOMEM;
    size_t n = json_array_size(checks);
    if (n == 0)
        return GQ_OK;
    if (n > (size_t)INT_MAX || !(out->checks = calloc(n, sizeof *out->checks)))
        return GQ_E_NOMEM;
    for (size_t k = 0; k < n; k++) {
        out->nchecks++; /* freed with the node, whole or not */
        if (check_from_json(json_array_get(checks, k), &out->checks[k]))
            return GQ_E_NOMEM;
    }
    return GQ_OK;
}

int gq_card_nodes_from_json(const json_t *nodes, gq_card_nodes *l)
{
    for (size_t i = 0; i < json_array_size(nodes); i++) {
        gq_card_node *n = gq_card_nodes_add(l);
        if (!n || gq_card_node_from_json(json_array_get(nodes, i), n))
            return GQ_E_NOMEM;
    }
    return GQ_OK;
}

int gq_card_node_from_doc(const json_t *doc, gq_card_node *out)
{
    if (!json_is_object(json_object_get(doc, "card")))
        return 1;
    json_t *s = gq_card_node_summary(doc);
    if (!s)
        return GQ_E_NOMEM;
    int rc = gq_card_node_from_json(s, out);
    json_decref(s);
    return rc;
}
