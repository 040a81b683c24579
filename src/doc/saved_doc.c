/* A saved document's head and machine (doc/saved_doc.h). */
#include "doc/saved_doc.h"

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

const char *gq_summary_hostname(const json_t *node)
{
    return json_string_value(json_object_get(node, "hostname"));
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
