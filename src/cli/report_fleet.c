/* `gpuqual report fleet.json`: a saved fleet document rendered again. Its
 * nodes' summaries go through rank 0's gather step once more
 * (cli/fleet_gather.h), so the report and `gpuqual fleet` name the same
 * outliers; a node entry whose summary cannot be read is refused (exit 2),
 * never rendered as a pass. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/fleet_gather.h"
#include "cli/frame.h"
#include "render/analysis_render.h"

/* Entry i of fleet.nodes[] as the payload its rank sent. New reference. */
static json_t *payload_of(const json_t *e, int i)
{
    const json_t *host = json_object_get(e, "host");
    json_t *h = json_is_string(host) ? json_incref((json_t *)host) : json_null();
    if (json_is_string(json_object_get(e, "error")))
        return json_pack("{s:i, s:o, s:O, s:i}", "rank", i, "host", h, "error", json_object_get(e, "error"),
                         "status", GQ_E_BACKEND);
    return json_pack("{s:i, s:o, s:{s:s, s:i, s:s, s:O}}", "rank", i, "host", h, "summary", "tool", "gpuqual",
                     "schema_version", 2, "kind", "fleet-node", "node", e);
}

static int gather_nodes(gq_fleet_gather *g, const char *path, const json_t *fl, gq_err *err)
{
    const json_t *nodes = json_object_get(fl, "nodes"), *th = json_object_get(fl, "threshold_pct");
    const json_t *tc = json_object_get(fl, "threshold_c");
    if (!json_is_array(nodes) || json_array_size(nodes) == 0 || json_array_size(nodes) > (1 << 24))
        return gq_err_set(err, GQ_E_USAGE, "%s: fleet.nodes: expected a list of 1 or more nodes", path);
    double pct = json_number_value(th);
    if (!json_is_number(th) || !(pct > 0 && pct < 1000))
        return gq_err_set(err, GQ_E_USAGE,
                          "%s: fleet.threshold_pct: expected a number above 0 and below 1000", path);
    int rc, n = (int)json_array_size(nodes);
    if ((rc = gq_fleet_gather_init(g, n, pct, err)))
        return rc;
    if (json_is_number(tc) && json_number_value(tc) > 0 && json_number_value(tc) < 1000)
        g->f.threshold_c = json_number_value(tc);
    for (int i = 0; i < n; i++) {
        const json_t *e = json_array_get(nodes, (size_t)i);
        if (!json_is_object(e))
            return gq_err_set(err, GQ_E_USAGE, "%s: fleet.nodes[%d]: expected an object", path, i);
        json_t *p = payload_of(e, i);
        if (!p)
            return gq_err_set(err, GQ_E_NOMEM, "out of memory");
        rc = gq_fleet_gather_payload(g, p, err);
        json_decref(p);
        if (rc)
            return rc;
        /* a node that ran but whose summary does not decode: the file is bad */
        if (!json_is_string(json_object_get(e, "error")) && !strcmp(g->f.node[i].verdict, "error"))
            return gq_err_set(err, GQ_E_USAGE, "%s: fleet.nodes[%d]: %s", path, i, g->f.node[i].error);
    }
    return gq_fleet_gather_finish(g, err);
}

int gq_report_fleet(gq_ctx *ctx, const json_t *root, int *exit_code)
{
    const char *path = ctx->pos[0], *fmt = ctx->format;
    const json_t *fl = json_object_get(root, "fleet");
    if (!json_is_object(fl))
        return gq_err_set(&ctx->err, GQ_E_USAGE, "%s: fleet: expected the fleet section (an object)", path);
    gq_fleet_gather *g = calloc(1, sizeof *g);
    if (!g)
        return gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    int rc = gather_nodes(g, path, fl, &ctx->err);
    if (rc == GQ_OK) {
        if (!strcmp(fmt, "html"))
            rc = gq_fleet_render_html(ctx->out, &g->f, g->nodes, &ctx->err);
        else if (!strcmp(fmt, "json")) {
            if (json_dumpf(root, ctx->out, JSON_INDENT(2)) || fputc('\n', ctx->out) == EOF)
                rc = gq_err_set(&ctx->err, GQ_E_IO, "cannot write the JSON");
        } else
            gq_fleet_print(ctx->out, &g->f, !strcmp(fmt, "markdown"), 0);
        *exit_code = g->f.exit_code;
    }
    gq_fleet_gather_free(g);
    free(g);
    return rc;
}
