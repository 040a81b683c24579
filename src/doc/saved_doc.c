/* A saved document's head and machine (doc/saved_doc.h). */
#include "doc/saved_doc.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "measure/record_json.h"
#include "topo/snapshot.h"

void gq_saved_head_read(const json_t *root, gq_saved_head *h)
{
    memset(h, 0, sizeof *h);
    const char *tool = json_string_value(json_object_get(root, "tool"));
    const char *kind = json_string_value(json_object_get(root, "kind"));
    h->gpuqual = tool && !strcmp(tool, "gpuqual");
    if (kind)
        snprintf(h->kind, sizeof h->kind, "%s", kind);
    h->simulated = json_is_true(json_object_get(root, "simulated"));
    h->has_card = json_is_object(json_object_get(root, "card"));
}

bool gq_saved_topology(const json_t *root, gq_topo *topo)
{
    const json_t *tj = json_object_get(root, "topology");
    return tj && gq_topo_from_json(tj, topo, NULL) == GQ_OK;
}

static int above(const json_t *ix, int n)
{
    if (json_is_integer(ix) && json_integer_value(ix) + 1 > n && json_integer_value(ix) < GQ_MAX_GPUS)
        return (int)json_integer_value(ix) + 1;
    return n;
}

int gq_saved_ngpu(const json_t *root, const gq_recordset *rs, gq_topo *topo, bool *have_topo)
{
    *have_topo = gq_saved_topology(root, topo) && topo->ngpu > 0;
    if (*have_topo)
        return topo->ngpu;
    int n = 0;
    size_t i0, k;
    const json_t *v, *g;
    json_array_foreach(json_object_get(root, "gpus"), i0, v) n = above(json_object_get(v, "index"), n);
    json_array_foreach(json_object_get(root, "domains"), i0, v) json_array_foreach(v, k, g) n = above(g, n);
    for (int i = 0; i < rs->n; i++)
        for (int x = 0; x < 2; x++) {
            gq_endpoint e = x ? rs->v[i].dst : rs->v[i].src;
            if (e.kind == GQ_EP_GPU && e.index + 1 > n)
                n = e.index + 1;
        }
    return n;
}

void gq_saved_copy_sections(json_t *dst, const json_t *src, const char *const *keys)
{
    for (const char *const *k = keys; *k; k++)
        if (json_object_get(src, *k))
            json_object_set(dst, *k, json_object_get(src, *k));
}

void gq_journal_head_read(const json_t *h, gq_journal_head *out)
{
    memset(out, 0, sizeof *out);
    out->command = json_string_value(json_object_get(h, "command"));
    out->version = json_string_value(json_object_get(h, "version"));
    out->git = json_string_value(json_object_get(h, "git"));
    out->topology = json_object_get(h, "topology");
    out->options = json_object_get(h, "options");
    out->run_id = json_object_get(h, "run_id");
    out->simulated = json_is_true(json_object_get(json_object_get(h, "machine"), "simulated"));
}

int gq_saved_records(const json_t *doc, gq_recordset *rs, gq_err *err)
{
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(doc, "records"), i, x)
    {
        gq_record r;
        gq_err rerr = {0};
        if (gq_record_from_json(x, &r, &rerr))
            continue;
        if (gq_records_push(rs, &r))
            return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    }
    return GQ_OK;
}

const char *gq_saved_source(const json_t *doc)
{
    return json_string_value(json_object_get(json_object_get(doc, "host"), "source"));
}

void gq_fleet_payload_read(const json_t *p, gq_fleet_payload *out)
{
    memset(out, 0, sizeof *out);
    out->object = json_is_object(p);
    out->host = json_string_value(json_object_get(p, "host"));
    out->summary = json_object_get(p, "summary");
    out->error = json_string_value(json_object_get(p, "error"));
    out->status = (int)json_integer_value(json_object_get(p, "status"));
}

void gq_saved_sections_read(const json_t *root, gq_saved_sections *s)
{
    memset(s, 0, sizeof *s);
    if (!json_is_object(root))
        return;
    json_t *card = json_object_get(root, "card");
    s->card_present = card != NULL;
    s->card = json_is_object(card) ? card : NULL;
    s->topology = json_object_get(root, "topology");
    s->stress = json_object_get(root, "stress");
    s->bottlenecks = json_object_get(root, "bottlenecks");
    s->records = json_object_get(root, "records");
    s->incomplete = json_is_true(json_object_get(root, "incomplete"));
}

void gq_saved_merge_sections(json_t *dst, const json_t *src)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)src, k, v) json_object_set(dst, k, v);
}

int gq_card_gpu_names(const json_t *card, const char **names, int max)
{
    const json_t *gpus = json_object_get(json_object_get(card, "identity"), "gpus");
    size_t n = json_array_size(gpus);
    for (size_t k = 0; k < n && k < (size_t)max; k++)
        names[k] = json_string_value(json_object_get(json_array_get(gpus, k), "name"));
    return n > INT_MAX ? INT_MAX : (int)n;
}

const char *gq_saved_list_str(const json_t *a, size_t i)
{
    return json_string_value(json_array_get(a, i));
}

void gq_saved_domains_as_assumed(json_t *sections, json_t *plan)
{
    json_object_set(plan, "assumed_domains", json_object_get(sections, "domains"));
    json_object_del(sections, "domains");
    json_object_del(sections, "domain_analysis");
}

json_t *gq_summary_node(const json_t *summary)
{
    return json_object_get(summary, "node");
}

void gq_fleet_json_merge_nodes(json_t *fj, const json_t *nodes)
{
    json_t *entries = json_object_get(fj, "nodes");
    for (size_t i = 0; i < json_array_size(nodes); i++)
        if (json_is_object(json_array_get(nodes, i)))
            json_object_update_missing(json_array_get(entries, i), json_array_get(nodes, i));
}

json_t *gq_saved_list_item(const json_t *a, size_t i)
{
    return json_array_get(a, i);
}

void gq_saved_replace(json_t *o, const char *k, json_t *v)
{
    if (json_object_get(o, k))
        json_object_set_new(o, k, v);
    else
        json_decref(v);
}
