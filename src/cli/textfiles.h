/* The operators' files: --prom FILE (Prometheus textfile) and --junit FILE
 * (JUnit XML), written through the atomic writer (core/outfile.h); "-" is
 * stdout (--format prometheus). */
#ifndef GQ_CLI_TEXTFILES_H
#define GQ_CLI_TEXTFILES_H

#include <jansson.h>

#include "analysis/stress.h"
#include "core/record.h"
#include "core/status.h"
#include "doc/card_summary.h"
#include "topo/topo.h"

/* `gpuqual run`'s records. */
int gq_cli_prom_run(const char *path, const gq_recordset *rs, const gq_topo *topo, bool incomplete,
                    gq_err *err);

/* `gpuqual stress`'s summary. */
int gq_cli_prom_stress(const char *path, const gq_stress_summary *s, const gq_topo *topo, gq_err *err);

/* `gpuqual card` (one card document) and `gpuqual fleet` (rank 0: every
 * node's card document, NULL for a node whose card did not run, with its
 * host and why in errors[]): --prom and --junit from the documents' node
 * summaries (doc/card_summary.h). hosts and errors may be NULL; NULL
 * paths are not written. With topo and one document (`card`), the --prom
 * file also holds the GPUs' identity and the card's measured figures
 * (gpuqual_card_bandwidth_bytes_per_second, ...), with or without
 * --expect. */
int gq_cli_card_files(const char *prom, const char *junit, const char *command, json_t *const *docs,
                      const char *const *hosts, const char *const *errors, int n, const gq_topo *topo,
                      const char *junit_warn, gq_err *err);

/* The same from node summaries already made and typed (fleet: each rank's
 * gathered summary, docs/json.md "fleet node summary", decoded by
 * gq_card_node_from_json; a failed node from gq_cli_failed_node). source
 * names the machine source for the header (may be NULL). junit_warn:
 * --junit-warn (skipped, failure, passed; NULL is skipped). */
int gq_cli_summary_files(const char *prom, const char *junit, const char *command, const gq_card_nodes *nodes,
                         const char *source, const char *junit_warn, gq_err *err);
/* A node whose card did not run into n, an empty node (gq_card_nodes_add):
 * fail, no checks, and why ("the card did not run: WHY"; host NULL is
 * "unknown", why NULL is that rank 0 received nothing). GQ_E_NOMEM. */
int gq_cli_failed_node(gq_card_node *n, const char *host, const char *why);

#endif
