/* The fleet node summary (docs/json.md, kind "fleet-node"): its JSON codec,
 * and how a rank makes it from its card document. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/compare.h"
#include "core/json.h"
#include "core/runid.h"
#include "doc/analysis_json.h"
#include "doc/decode.h"

/* v's string, or def when v is not a string. */
static const char *str_or(const json_t *v, const char *def)
{
    return json_is_string(v) ? json_string_value(v) : def;
}

static json_t *int_or_null(int v)
{
    return v >= 0 ? json_integer(v) : json_null();
}

json_t *gq_node_summary_to_json(const gq_node_summary *s, const char *version)
{
    json_t *root = json_object(), *n = json_object(), *checks = json_array(), *figs = json_object(),
           *ids = json_array();
    if (!root || !n || !checks || !figs || !ids) {
        json_decref(root);
        json_decref(n);
        json_decref(checks);
        json_decref(figs);
        json_decref(ids);
        return NULL;
    }
    json_object_set_new(root, "tool", json_string("gpuqual"));
    json_object_set_new(root, "schema_version", json_integer(GQ_SCHEMA_VERSION));
    json_object_set_new(root, "kind", json_string("fleet-node"));
    json_object_set_new(root, "run_id", json_string(gq_run_id_current()));
    json_object_set_new(root, "version", json_string(version ? version : "unknown"));
    json_object_set_new(n, "hostname", json_string(s->hostname));
    json_object_set_new(n, "rank", json_integer(s->rank));
    json_object_set_new(n, "gpu_model", json_string(s->gpu_model));
    json_object_set_new(n, "ngpus", json_integer(s->ngpus));
    json_object_set_new(n, "level", s->level[0] ? json_string(s->level) : json_null());
    json_object_set_new(n, "stress_s", gq_json_num(s->stress_s));
    json_object_set_new(n, "verdict", json_string(gq_node_verdict_name(s->verdict)));
    json_object_set_new(n, "exit_code", json_integer(s->exit_code));
    json_object_set_new(n, "complete", json_boolean(s->complete));
    json_object_set_new(n, "simulated", json_boolean(s->simulated));
    for (int i = 0; i < s->nchecks; i++) {
        const gq_node_check *c = &s->checks[i];
        json_array_append_new(checks, json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:s}", "id", c->id, "subject",
                                                c->subject, "verdict", c->verdict, "evidence", c->evidence,
                                                "evidence_reason",
                                                c->reason[0] ? json_string(c->reason) : json_null(), "figure",
                                                gq_json_num(c->figure), "unit", c->unit));
    }
    for (int i = 0; i < s->nfig; i++)
        json_object_set_new(figs, s->fig[i].key, gq_json_num(s->fig[i].v));
    for (int i = 0; i < s->nident; i++) {
        const gq_node_identity *d = &s->ident[i];
        json_array_append_new(
            ids, json_pack("{s:i, s:s, s:s, s:s, s:o, s:o, s:o, s:o}", "index", d->index, "uuid", d->uuid,
                           "serial", d->serial[0] ? d->serial : "unknown", "vbios",
                           d->vbios[0] ? d->vbios : "unknown", "pcie_gen_max", int_or_null(d->pcie_gen_max),
                           "pcie_width_max", int_or_null(d->pcie_width_max), "pcie_gen_cur",
                           int_or_null(d->pcie_gen_cur), "pcie_width_cur", int_or_null(d->pcie_width_cur)));
    }
    json_object_set_new(n, "checks", checks);
    json_object_set_new(n, "figures", figs);
    json_object_set_new(n, "identity", ids);
    json_object_set_new(n, "artefacts", json_string(s->artefacts));
    json_object_set_new(root, "node", n);
    return root;
}

/* checks[]: id and verdict required; the rest typed when present. */
static int checks_from_json(const char *w, const json_t *a, gq_node_summary *s, gq_err *err)
{
    if (!a || json_is_null(a))
        return GQ_OK;
    if (!json_is_array(a) || json_array_size(a) > GQ_NODE_MAX_CHECKS)
        return gq_dec_bad(w, "node.checks", a, "a list of at most 256 checks", err);
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x)
    {
        gq_node_check *c = &s->checks[s->nchecks];
        char k[64];
        int rc;
#define K(f) (snprintf(k, sizeof k, "node.checks[%zu].%s", i, f), k)
        if (!json_is_object(x)) {
            snprintf(k, sizeof k, "node.checks[%zu]", i);
            return gq_dec_bad(w, k, x, "an object {id, subject, verdict, ...}", err);
        }
        if ((rc = gq_dec_str(w, K("id"), json_object_get(x, "id"), false, c->id, sizeof c->id, err)) ||
            (rc = gq_dec_str(w, K("verdict"), json_object_get(x, "verdict"), false, c->verdict,
                             sizeof c->verdict, err)) ||
            (rc = gq_dec_str(w, K("subject"), json_object_get(x, "subject"), true, c->subject,
                             sizeof c->subject, err)) ||
            (rc = gq_dec_str(w, K("evidence"), json_object_get(x, "evidence"), true, c->evidence,
                             sizeof c->evidence, err)) ||
            (!json_is_null(json_object_get(x, "evidence_reason")) &&
             (rc = gq_dec_str(w, K("evidence_reason"), json_object_get(x, "evidence_reason"), true, c->reason,
                              sizeof c->reason, err))) ||
            (rc = gq_dec_str(w, K("unit"), json_object_get(x, "unit"), true, c->unit, sizeof c->unit, err)) ||
            (rc = gq_dec_num(w, K("figure"), json_object_get(x, "figure"), true, -1e300, 1e300, &c->figure,
                             err)))
            return rc;
#undef K
        if (!c->evidence[0])
            snprintf(c->evidence, sizeof c->evidence, "unknown");
        s->nchecks++;
    }
    return GQ_OK;
}

static int figures_from_json(const char *w, const json_t *o, gq_node_summary *s, gq_err *err)
{
    if (!o || json_is_null(o))
        return GQ_OK;
    if (!json_is_object(o))
        return gq_dec_bad(w, "node.figures", o, "an object {key: number}", err);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v)
    {
        char k[240];
        double x;
        snprintf(k, sizeof k, "node.figures[\"%.200s\"]", key);
        int rc = gq_dec_num(w, k, v, true, -1e300, 1e300, &x, err);
        if (rc)
            return rc;
        if (gq_node_summary_add_fig(s, key, x))
            return gq_err_set(err, GQ_E_NOMEM, "out of memory reading a fleet node summary");
    }
    return GQ_OK;
}

static int identity_from_json(const char *w, const json_t *a, gq_node_summary *s, gq_err *err)
{
    if (!a || json_is_null(a))
        return GQ_OK;
    if (!json_is_array(a) || json_array_size(a) > GQ_MAX_GPUS)
        return gq_dec_bad(w, "node.identity", a, "a list of at most 64 GPUs", err);
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x)
    {
        gq_node_identity *d = &s->ident[s->nident];
        char k[64];
        double ix = 0, f[4];
        static const char *pk[] = {"pcie_gen_max", "pcie_width_max", "pcie_gen_cur", "pcie_width_cur"};
        snprintf(k, sizeof k, "node.identity[%zu].index", i);
        int rc = gq_dec_num(w, k, json_object_get(x, "index"), false, 0, GQ_MAX_GPUS - 1, &ix, err);
        if (rc)
            return rc;
        d->index = (int)ix;
        for (int m = 0; m < s->nident; m++)
            if (s->ident[m].index == d->index)
                return gq_err_set(err, GQ_E_USAGE, "%s: %s: GPU %d is repeated, expected each GPU once", w, k,
                                  d->index);
        for (int m = 0; m < 4; m++) {
            snprintf(k, sizeof k, "node.identity[%zu].%s", i, pk[m]);
            if ((rc = gq_dec_num(w, k, json_object_get(x, pk[m]), true, 0, 64, &f[m], err)))
                return rc;
        }
        d->pcie_gen_max = isfinite(f[0]) ? (int)f[0] : -1;
        d->pcie_width_max = isfinite(f[1]) ? (int)f[1] : -1;
        d->pcie_gen_cur = isfinite(f[2]) ? (int)f[2] : -1;
        d->pcie_width_cur = isfinite(f[3]) ? (int)f[3] : -1;
        snprintf(k, sizeof k, "node.identity[%zu].uuid", i);
        if ((rc = gq_dec_str(w, k, json_object_get(x, "uuid"), true, d->uuid, sizeof d->uuid, err)))
            return rc;
        snprintf(k, sizeof k, "node.identity[%zu].serial", i);
        if ((rc = gq_dec_str(w, k, json_object_get(x, "serial"), true, d->serial, sizeof d->serial, err)))
            return rc;
        snprintf(k, sizeof k, "node.identity[%zu].vbios", i);
        if ((rc = gq_dec_str(w, k, json_object_get(x, "vbios"), true, d->vbios, sizeof d->vbios, err)))
            return rc;
        s->nident++;
    }
    return GQ_OK;
}

int gq_node_summary_from_json(const char *where, const json_t *j, gq_node_summary *s, gq_err *err)
{
    gq_node_summary_init(s);
    const json_t *sv = json_object_get(j, "schema_version");
    const char *kind = json_string_value(json_object_get(j, "kind"));
    if (!json_is_object(j) || !kind || strcmp(kind, "fleet-node"))
        return gq_dec_bad(where, "kind", json_object_get(j, "kind"), "\"fleet-node\"", err);
    if (!json_is_integer(sv) || json_integer_value(sv) < 2 || json_integer_value(sv) > GQ_SCHEMA_VERSION)
        return gq_dec_bad(where, "schema_version", sv, "2", err);
    const json_t *n = json_object_get(j, "node");
    if (!json_is_object(n))
        return gq_dec_bad(where, "node", n, "an object", err);
    double rank = 0, ngpus = 0, code = 0;
    int v = 0, rc;
    static const char *const verdicts[] = {"pass", "warn", "fail", "incomplete"};
    if ((rc = gq_dec_str(where, "node.hostname", json_object_get(n, "hostname"), false, s->hostname,
                         sizeof s->hostname, err)) ||
        (rc = gq_dec_num(where, "node.rank", json_object_get(n, "rank"), false, 0, 1 << 24, &rank, err)) ||
        (rc = gq_dec_enum(where, "node.verdict", json_object_get(n, "verdict"), verdicts, 4, &v, err)) ||
        (rc = gq_dec_num(where, "node.exit_code", json_object_get(n, "exit_code"), false, 0, 255, &code,
                         err)) ||
        (rc =
             gq_dec_bool(where, "node.complete", json_object_get(n, "complete"), false, &s->complete, err)) ||
        (rc = gq_dec_bool(where, "node.simulated", json_object_get(n, "simulated"), false, &s->simulated,
                          err)) ||
        (rc = gq_dec_str(where, "node.gpu_model", json_object_get(n, "gpu_model"), true, s->gpu_model,
                         sizeof s->gpu_model, err)) ||
        (rc = gq_dec_num(where, "node.ngpus", json_object_get(n, "ngpus"), true, 0, GQ_MAX_GPUS, &ngpus,
                         err)) ||
        (rc = gq_dec_str(where, "node.level", json_object_get(n, "level"), true, s->level, sizeof s->level,
                         err)) ||
        (rc = gq_dec_num(where, "node.stress_s", json_object_get(n, "stress_s"), true, 0, 1e9, &s->stress_s,
                         err)) ||
        (rc = gq_dec_str(where, "node.artefacts", json_object_get(n, "artefacts"), true, s->artefacts,
                         sizeof s->artefacts, err)))
        return rc;
    if (!json_is_boolean(json_object_get(n, "complete")))
        return gq_dec_bad(where, "node.complete", json_object_get(n, "complete"), "true or false", err);
    s->rank = (int)rank;
    s->ngpus = isfinite(ngpus) ? (int)ngpus : 0;
    s->verdict = (gq_node_verdict)v;
    s->exit_code = (int)code;
    if (!isfinite(s->stress_s))
        s->stress_s = 0;
    if ((rc = checks_from_json(where, json_object_get(n, "checks"), s, err)) ||
        (rc = figures_from_json(where, json_object_get(n, "figures"), s, err)) ||
        (rc = identity_from_json(where, json_object_get(n, "identity"), s, err))) {
        gq_node_summary_free(s);
        return rc;
    }
    return GQ_OK;
}

/* The checks of the card section, as the summary carries them. */
static void checks_from_card(const json_t *card, gq_node_summary *s)
{
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(card, "checks"), i, x)
    {
        if (s->nchecks >= GQ_NODE_MAX_CHECKS || !json_is_object(x))
            break;
        gq_node_check *c = &s->checks[s->nchecks++];
        const char *ev = json_string_value(json_object_get(x, "evidence"));
        snprintf(c->id, sizeof c->id, "%s", str_or(json_object_get(x, "id"), "?"));
        snprintf(c->subject, sizeof c->subject, "%s", str_or(json_object_get(x, "subject"), ""));
        snprintf(c->verdict, sizeof c->verdict, "%s", str_or(json_object_get(x, "verdict"), "?"));
        snprintf(c->evidence, sizeof c->evidence, "%s", ev ? ev : "unknown");
        snprintf(c->reason, sizeof c->reason, "%s", str_or(json_object_get(x, "evidence_reason"), ""));
        snprintf(c->unit, sizeof c->unit, "%s", str_or(json_object_get(x, "unit"), ""));
        json_t *f = json_object_get(x, "figure");
        c->figure = json_is_number(f) ? json_number_value(f) : NAN;
    }
}

/* Each GPU's identity from the document's gpus[]. */
static void identity_from_doc(const json_t *doc, gq_node_summary *s)
{
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(doc, "gpus"), i, g)
    {
        if (s->nident >= GQ_MAX_GPUS)
            break;
        gq_node_identity *d = &s->ident[s->nident++];
        static const char *pk[] = {"pcie_gen_max", "pcie_width_max", "pcie_gen", "pcie_width"};
        int *dst[] = {&d->pcie_gen_max, &d->pcie_width_max, &d->pcie_gen_cur, &d->pcie_width_cur};
        d->index = (int)json_integer_value(json_object_get(g, "index"));
        snprintf(d->uuid, sizeof d->uuid, "%s", str_or(json_object_get(g, "uuid"), ""));
        snprintf(d->serial, sizeof d->serial, "%s", str_or(json_object_get(g, "serial"), ""));
        snprintf(d->vbios, sizeof d->vbios, "%s", str_or(json_object_get(g, "vbios"), ""));
        for (int m = 0; m < 4; m++) {
            json_t *v = json_object_get(g, pk[m]);
            *dst[m] = json_is_integer(v) ? (int)json_integer_value(v) : -1;
        }
    }
}

int gq_node_summary_from_card(const json_t *doc, const gq_recordset *rs, int rank, const char *artefacts,
                              gq_node_summary *s, gq_err *err)
{
    gq_node_summary_init(s);
    const json_t *card = json_object_get(doc, "card");
    if (!json_is_object(card))
        return gq_err_set(err, GQ_E_USAGE, "the card document has no card section");
    static const char *const verdicts[] = {"pass", "warn", "fail", "incomplete"};
    int v = 0,
        rc = gq_dec_enum("card", "card.verdict", json_object_get(card, "verdict"), verdicts, 4, &v, err);
    if (rc)
        return rc;
    s->rank = rank;
    s->verdict = (gq_node_verdict)v;
    s->complete = !json_is_false(json_object_get(card, "complete")) && s->verdict != GQ_NODE_INCOMPLETE;
    if (!s->complete)
        s->verdict = GQ_NODE_INCOMPLETE;
    s->exit_code = s->verdict == GQ_NODE_PASS   ? 0
                   : s->verdict == GQ_NODE_WARN ? 4
                   : s->verdict == GQ_NODE_FAIL ? 1
                                                : 5;
    s->simulated = json_is_true(json_object_get(doc, "simulated"));
    snprintf(s->hostname, sizeof s->hostname, "%s", str_or(json_object_get(card, "hostname"), "?"));
    snprintf(s->level, sizeof s->level, "%s", str_or(json_object_get(card, "level"), ""));
    snprintf(s->artefacts, sizeof s->artefacts, "%s", artefacts ? artefacts : "");
    const json_t *gpus = json_object_get(doc, "gpus");
    s->ngpus = (int)json_array_size(gpus);
    snprintf(s->gpu_model, sizeof s->gpu_model, "%s",
             str_or(json_object_get(json_array_get(gpus, 0), "name"), ""));
    /* the stress duration asked (as compare groups runs), else what ran */
    const json_t *st = json_object_get(doc, "stress");
    const json_t *el = json_object_get(st, "duration_s");
    if (!json_is_number(el))
        el = json_object_get(st, "elapsed_s");
    s->stress_s = json_is_number(el) ? json_number_value(el) : 0;
    checks_from_card(card, s);
    identity_from_doc(doc, s);
    /* The figures, keyed exactly as compare keys them: the node alone in a comparison. */
    gq_compare *c = malloc(sizeof *c);
    gq_cmp_doc *cd = malloc(sizeof *cd);
    if (!c || !cd) {
        free(c);
        free(cd);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory summarising the card");
    }
    gq_compare_init(c, 5);
    rc = gq_cmp_doc_from_json("card", doc, cd, err);
    if (!rc)
        rc = gq_compare_add(c, "node", rs, cd, err);
    free(cd);
    for (int i = 0; !rc && i < c->nfig; i++)
        if (!isnan(c->fig[i].v[0]) && gq_node_summary_add_fig(s, c->fig[i].key, c->fig[i].v[0]))
            rc = gq_err_set(err, GQ_E_NOMEM, "out of memory summarising the card");
    gq_compare_free(c);
    free(c);
    if (rc)
        gq_node_summary_free(s);
    return rc;
}
