/* --prom FILE and --junit FILE (textfiles.h). */
#include "cli/textfiles.h"

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
    json_t *nodes;
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
        gq_prom_cards(f, a->nodes);
    return GQ_OK;
}

static int prefixed(int rc, const char *opt, gq_err *err)
{
    return rc ? gq_err_prefix(err, "%s", opt) : GQ_OK;
}

typedef struct junit_arg {
    const json_t *nodes;
    gq_junit_warn warn;
} junit_arg;

static int write_junit(FILE *f, void *p, gq_err *err)
{
    const junit_arg *a = p;
    gq_junit_cards(f, a->nodes, a->warn);
    return GQ_OK;
}

static int junit_file(const char *path, const json_t *nodes, const char *warn, gq_err *err)
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
json_t *gq_cli_failed_node(const char *host, const char *why)
{
    return json_pack("{s:s, s:s, s:i, s:b, s:[], s:s+}", "hostname", host ? host : "unknown", "verdict",
                     "fail", "exit_code", GQ_EXIT_FAIL, "complete", 0, "checks", "error",
                     "the card did not run: ", why ? why : "rank 0 received nothing from this node");
}

int gq_cli_card_files(const char *prom, const char *junit, const char *command, json_t *const *docs,
                      const char *const *hosts, const char *const *errors, int n, const gq_topo *topo,
                      const char *junit_warn, gq_err *err)
{
    if (!prom && !junit)
        return GQ_OK;
    json_t *nodes = json_array();
    const char *source = NULL;
    for (int i = 0; nodes && i < n; i++) {
        json_t *s = docs[i] ? gq_card_node_summary(docs[i]) : NULL;
        if (!source && docs[i])
            source = gq_saved_source(docs[i]);
        if (!s)
            s = gq_cli_failed_node(hosts ? hosts[i] : NULL, errors ? errors[i] : NULL);
        if (s && !strcmp(command, "fleet")) /* simulated nodes share a hostname: the rank tells them apart */
            json_object_set_new(s, "rank", json_integer(i));
        if (json_array_append_new(nodes, s)) {
            json_decref(nodes);
            nodes = NULL;
        }
    }
    if (!nodes)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    int rc = GQ_OK;
    if (topo && n == 1 && docs[0]) { /* one card: its GPUs and measured figures besides the checks */
        gq_recordset rs = {0};
        prom_arg a = {.command = command,
                      .rs = &rs,
                      .rec_prefix = "gpuqual_card",
                      .topo = topo,
                      .nodes = nodes,
                      .source = source};
        rc = gq_saved_records(docs[0], &rs, err);
        if (!rc && prom)
            rc = prefixed(gq_outfile_write(prom, write_prom, &a, err), "--prom", err);
        if (!rc && junit)
            rc = junit_file(junit, nodes, junit_warn, err);
        gq_records_free(&rs);
    } else
        rc = gq_cli_summary_files(prom, junit, command, nodes, source, junit_warn, err);
    json_decref(nodes);
    return rc;
}

int gq_cli_summary_files(const char *prom, const char *junit, const char *command, json_t *nodes,
                         const char *source, const char *junit_warn, gq_err *err)
{
    if (!prom && !junit)
        return GQ_OK;
    const char *host = json_array_size(nodes) == 1 ? gq_summary_hostname(gq_saved_list_item(nodes, 0)) : NULL;
    prom_arg a = {.command = command, .nodes = nodes, .hostname = host, .source = source};
    int rc = GQ_OK;
    if (prom)
        rc = prefixed(gq_outfile_write(prom, write_prom, &a, err), "--prom", err);
    if (!rc && junit)
        rc = junit_file(junit, nodes, junit_warn, err);
    return rc;
}
