/* Rank 0's gather step of `gpuqual fleet`, without MPI (cli/fleet_gather.h). */
#include "cli/fleet_gather.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "doc/saved_doc.h"
#include "render/analysis_render.h"
#include "render/render.h"

int gq_fleet_displs(const int *lens, int size, int *displs, long long *total, gq_err *err)
{
    long long t = 0;
    *total = 0;
    for (int r = 0; r < size; r++) {
        if (lens[r] < 0)
            return gq_err_set(err, GQ_E_USAGE, "rank %d sent a negative length (%d bytes)", r, lens[r]);
        displs[r] = t <= INT_MAX ? (int)t : 0; /* refused below */
        t += lens[r];
    }
    *total = t;
    if (t > INT_MAX)
        return gq_err_set(err, GQ_E_USAGE,
                          "the %d nodes' summaries need %lld bytes on rank 0, over MPI's 2 GiB "
                          "(%d bytes) for one gather; run smaller fleets",
                          size, t, INT_MAX);
    return GQ_OK;
}

json_t *gq_fleet_summarise(const json_t *doc, int rank, const char *nodedir, gq_err *err)
{
    gq_recordset rs = {0};
    gq_node_summary *s = calloc(1, sizeof *s);
    json_t *j = NULL;
    if (!s) {
        gq_err_set(err, GQ_E_NOMEM, "out of memory summarising the card");
        return NULL;
    }
    gq_saved_sections sec;
    gq_saved_sections_read(doc, &sec);
    if (gq_doc_records_from_json("card", sec.records, -1, &rs, err) == GQ_OK &&
        gq_node_summary_from_card(doc, &rs, rank, nodedir, s, err) == GQ_OK) {
        if (!(j = gq_node_summary_to_json(s, gq_version)))
            gq_err_set(err, GQ_E_NOMEM, "out of memory summarising the card");
        gq_node_summary_free(s);
    }
    gq_records_free(&rs);
    free(s);
    return j;
}

int gq_fleet_gather_init(gq_fleet_gather *g, int size, double threshold_pct, gq_err *err)
{
    memset(g, 0, sizeof *g);
    gq_fleet_init(&g->f, threshold_pct);
    g->size = size;
    g->nodes = json_array();
    g->hosts = json_array();
    g->whys = json_array();
    if (!g->nodes || !g->hosts || !g->whys) {
        gq_fleet_gather_free(g);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    }
    return GQ_OK;
}

void gq_fleet_gather_free(gq_fleet_gather *g)
{
    json_decref(g->nodes);
    json_decref(g->hosts);
    json_decref(g->whys);
    g->nodes = g->hosts = g->whys = NULL;
    gq_fleet_free(&g->f);
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* A summary that decodes: the node; else its error. */
static int add_summary(gq_fleet_gather *g, int r, const char *host, const json_t *card, json_t **node,
                       gq_err *err)
{
    char where[32];
    gq_err serr = {0};
    gq_node_summary *sum = calloc(1, sizeof *sum);
    if (!sum)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    snprintf(where, sizeof where, "rank %d", r);
    int rc;
    if (gq_node_summary_from_json(where, card, sum, &serr) != GQ_OK) {
        rc = gq_fleet_add_error(&g->f, r, host, serr.msg, err);
    } else if (sum->rank != r) {
        gq_err_set(&serr, GQ_E_USAGE, "rank %d: node.rank: is %d, expected %d", r, sum->rank, r);
        gq_node_summary_free(sum);
        rc = gq_fleet_add_error(&g->f, r, host, serr.msg, err);
    } else {
        rc = gq_fleet_add_summary(&g->f, host, sum, err);
        g->simulated |= sum->simulated;
        g->incomplete |= !sum->complete;
        gq_node_summary_free(sum);
        *node = json_incref(gq_summary_node(card));
    }
    free(sum);
    return rc;
}

int gq_fleet_gather_payload(gq_fleet_gather *g, const json_t *p, gq_err *err)
{
    int r = g->next++, rc;
    gq_fleet_payload pl;
    gq_fleet_payload_read(p, &pl);
    const char *host = pl.host, *why = pl.error;
    const json_t *card = pl.summary;
    json_t *node = NULL;
    if (!pl.object || (!card && !why)) {
        rc = gq_fleet_add_error(&g->f, r, host, "rank 0 received no card from this rank", err);
    } else if (why) {
        int st = pl.status;
        if (gq_status_exit_code(st) == GQ_EXIT_USAGE && g->nusage++ == 0)
            gq_err_set(&g->first_usage, st, "%s", why);
        rc = gq_fleet_add_error(&g->f, r, host, why, err);
    } else {
        rc = add_summary(g, r, host, card, &node, err);
    }
    if (json_array_append_new(g->nodes, node ? node : json_null()) ||
        json_array_append_new(g->hosts, str_or_null(host)) ||
        json_array_append_new(g->whys, str_or_null(why)))
        rc = rc ? rc : gq_err_set(err, GQ_E_NOMEM, "out of memory");
    return rc;
}

int gq_fleet_gather_buffer(gq_fleet_gather *g, const char *buf, const int *lens, const int *displs,
                           gq_err *err)
{
    for (int r = 0; r < g->size; r++) {
        json_error_t je;
        json_t *p = json_loadb(buf + displs[r], (size_t)lens[r], JSON_REJECT_DUPLICATES, &je);
        int rc = gq_fleet_gather_payload(g, p, err);
        json_decref(p);
        if (rc)
            return rc;
    }
    return GQ_OK;
}

int gq_fleet_gather_finish(gq_fleet_gather *g, gq_err *err)
{
    return gq_fleet_finish(&g->f, err);
}

json_t *gq_fleet_gather_document(const gq_fleet_gather *g, json_t *options)
{
    json_t *sec = json_object(), *fj = gq_fleet_to_json(&g->f), *doc = NULL;
    if (!sec || !fj) {
        json_decref(sec);
        json_decref(fj);
        return NULL;
    }
    /* each node's entry carries its summary's fields (docs/json.md) */
    gq_fleet_json_merge_nodes(fj, g->nodes);
    json_object_set_new(sec, "fleet", fj);
    gq_doc d = {.kind = "fleet",
                .version = gq_version,
                .git = gq_git_rev,
                .options = options,
                .sections = sec,
                .simulated = g->simulated,
                .incomplete = g->incomplete};
    doc = gq_doc_to_json(&d);
    json_decref(sec);
    return doc;
}
