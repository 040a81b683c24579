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
#include "doc/card_summary.h"
#include "doc/fleet_doc.h"
#include "render/analysis_render.h"

static int gather_nodes(gq_fleet_gather *g, const char *path, const gq_fleet_doc *fd, gq_err *err)
{
    int rc;
    if ((rc = gq_fleet_gather_init(g, fd->n, fd->threshold_pct, err)))
        return rc;
    if (fd->threshold_c > 0)
        g->f.threshold_c = fd->threshold_c;
    for (int i = 0; i < fd->n; i++) {
        json_t *p;
        bool is_error;
        if ((rc = gq_fleet_doc_payload(fd, path, i, &p, &is_error, err)))
            return rc;
        rc = gq_fleet_gather_payload(g, p, err);
        json_decref(p);
        if (rc)
            return rc;
        /* a node that ran but whose summary does not decode: the file is bad */
        if (!is_error && !strcmp(g->f.node[i].verdict, "error"))
            return gq_err_set(err, GQ_E_USAGE, "%s: fleet.nodes[%d]: %s", path, i, g->f.node[i].error);
    }
    return gq_fleet_gather_finish(g, err);
}

int gq_report_fleet(gq_ctx *ctx, const json_t *root, int *exit_code)
{
    const char *path = ctx->pos[0], *fmt = ctx->format;
    gq_fleet_doc fd;
    int rc = gq_fleet_doc_read(root, path, &fd, &ctx->err);
    if (rc)
        return rc;
    gq_fleet_gather *g = calloc(1, sizeof *g);
    if (!g)
        return gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    rc = gather_nodes(g, path, &fd, &ctx->err);
    if (rc == GQ_OK) {
        if (!strcmp(fmt, "html")) {
            gq_card_nodes nodes;
            gq_card_nodes_init(&nodes);
            rc = gq_card_nodes_from_json(g->nodes, &nodes)
                     ? gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory")
                     : gq_fleet_render_html(ctx->out, &g->f, &nodes, &ctx->err);
            gq_card_nodes_free(&nodes);
        } else if (!strcmp(fmt, "json")) {
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
