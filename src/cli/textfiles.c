/* --prom FILE and --junit FILE (textfiles.h). */
#include "cli/textfiles.h"

#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "core/outfile.h"
#include "doc/saved_doc.h"
#include "core/units.h"
#include "measure/record_json.h"
#include "doc/card_summary.h"
#include "render/junit.h"
#include "render/prometheus.h"

typedef struct prom_arg {
    const char *command;
    const gq_recordset *rs;
    const char *rec_prefix; /* "gpuqual" (run) or "gpuqual_card" (the card's measured figures) */
    const gq_stress_summary *stress;
    const gq_topo *topo;
    bool run_status; /* run: write gpuqual_run_incomplete */
    bool incomplete;
    const gq_card_nodes *nodes;
    const char *hostname, *source;
} prom_arg;

static int write_prom(FILE *f, void *p, gq_err *err)
{
    const prom_arg *a = p;
    gq_prom_header(f, a->command, a->topo ? a->topo->hostname : a->hostname,
                   a->topo ? a->topo->source : a->source, gq_now_unix());
    gq_prom_gpus(f, a->topo, a->command);
    if (a->run_status)
        gq_prom_run_incomplete(f, a->topo, a->incomplete);
    if (a->rs)
        gq_prom_records(f, a->rs, a->topo, a->rec_prefix);
    if (a->stress)
        gq_prom_stress(f, a->stress, a->topo);
    if (a->nodes)
        gq_prom_nodes(f, a->nodes);
    return GQ_OK;
}

static int prefixed(int rc, const char *opt, gq_err *err)
{
    return rc ? gq_err_prefix(err, "%s", opt) : GQ_OK;
}

typedef struct junit_arg {
    const gq_card_nodes *nodes;
    gq_junit_warn warn;
} junit_arg;

static int write_junit(FILE *f, void *p, gq_err *err)
{
    const junit_arg *a = p;
    gq_junit_nodes(f, a->nodes, a->warn);
    return GQ_OK;
}

static int junit_file(const char *path, const gq_card_nodes *nodes, const char *warn, gq_err *err)
{
    junit_arg a = {.nodes = nodes};
    if (warn && gq_junit_warn_parse(warn, &a.warn))
        return gq_err_set(err, GQ_E_USAGE, "--junit-warn: '%s' is not one of skipped, failure, passed", warn);
    return prefixed(gq_outfile_write(path, write_junit, &a, err), "--junit", err);
}

int gq_cli_prom_run(const char *path, const gq_recordset *rs, const gq_topo *topo, bool incomplete,
                    gq_err *err)
{
    prom_arg a = {.command = "run",
                  .rs = rs,
                  .rec_prefix = "gpuqual",
                  .topo = topo,
                  .run_status = true,
                  .incomplete = incomplete};
    return path ? prefixed(gq_outfile_write(path, write_prom, &a, err), "--prom", err) : GQ_OK;
}

int gq_cli_prom_stress(const char *path, const gq_stress_summary *s, const gq_topo *topo, gq_err *err)
{
    prom_arg a = {.command = "stress", .stress = s, .topo = topo};
    return path ? prefixed(gq_outfile_write(path, write_prom, &a, err), "--prom", err) : GQ_OK;
}

/* A node whose card did not run: failed, no checks, and why. */
int gq_cli_failed_node(gq_card_node *n, const char *host, const char *why)
{
    const char *lead = "the card did not run: ";
    if (!why)
        why = "rank 0 received nothing from this node";
    n->hostname = strdup(host ? host : "unknown");
    n->verdict = strdup("fail");
    n->exit_code = GQ_EXIT_FAIL;
    n->complete = false;
    if ((n->error = malloc(strlen(lead) + strlen(why) + 1)))
        strcat(strcpy(n->error, lead), why);
    return n->hostname && n->verdict && n->error ? GQ_OK : GQ_E_NOMEM;
}

int gq_cli_card_files(const char *prom, const char *junit, const char *command, json_t *const *docs,
                      const char *const *hosts, const char *const *errors, int n, const gq_topo *topo,
                      const char *junit_warn, gq_err *err)
{
    if (!prom && !junit)
        return GQ_OK;
    gq_card_nodes nodes;
    gq_card_nodes_init(&nodes);
    const char *source = NULL;
    int rc = GQ_OK;
    for (int i = 0; !rc && i < n; i++) {
        gq_card_node *s = gq_card_nodes_add(&nodes);
        if (!s) {
            rc = GQ_E_NOMEM;
            break;
        }
        if (!source && docs[i])
            source = gq_saved_source(docs[i]);
        rc = docs[i] ? gq_card_node_from_doc(docs[i], s) : 1;
        if (rc == 1)
            rc = gq_cli_failed_node(s, hosts ? hosts[i] : NULL, errors ? errors[i] : NULL);
        if (!strcmp(command, "fleet")) { /* simulated nodes share a hostname: the rank tells them apart */
            s->has_rank = true;
            s->rank = i;
        }
    }
    if (rc) {
        gq_card_nodes_free(&nodes);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    }
    if (topo && n == 1 && docs[0]) { /* one card: its GPUs and measured figures besides the checks */
        gq_recordset rs = {0};
        prom_arg a = {.command = command,
                      .rs = &rs,
                      .rec_prefix = "gpuqual_card",
                      .topo = topo,
                      .nodes = &nodes,
                      .source = source};
        rc = gq_saved_records(docs[0], &rs, err);
        if (!rc && prom)
            rc = prefixed(gq_outfile_write(prom, write_prom, &a, err), "--prom", err);
        if (!rc && junit)
            rc = junit_file(junit, &nodes, junit_warn, err);
        gq_records_free(&rs);
    } else
        rc = gq_cli_summary_files(prom, junit, command, &nodes, source, junit_warn, err);
    gq_card_nodes_free(&nodes);
    return rc;
}

int gq_cli_summary_files(const char *prom, const char *junit, const char *command, const gq_card_nodes *nodes,
                         const char *source, const char *junit_warn, gq_err *err)
{
    if (!prom && !junit)
        return GQ_OK;
    const char *host = nodes->n == 1 ? nodes->node[0].hostname : NULL;
    prom_arg a = {.command = command, .nodes = nodes, .hostname = host, .source = source};
    int rc = GQ_OK;
    if (prom)
        rc = prefixed(gq_outfile_write(prom, write_prom, &a, err), "--prom", err);
    if (!rc && junit)
        rc = junit_file(junit, nodes, junit_warn, err);
    return rc;
}
