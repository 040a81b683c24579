/* Renderers: the only code that formats results. Each reads records (and the
 * topology / analysis sections of a document) and writes one format.
 *
 * The saved document (docs/json.md) is the root of every JSON output:
 *   { "tool":"gpuqual", "schema_version":2, "kind":"<command>", "run_id":..., "version":..,
 *     "git":.., "timestamp":"ISO-8601", "simulated":bool, "incomplete":bool,
 *     "options":{every option in force}, "host":{driver,cuda,hostname,..},
 *     "gpus":[{index,name,uuid,..}], "records":[...], <command sections> }
 * report/compare/place read documents back with gq_doc_load() (doc/document.h).
 */
#ifndef GQ_RENDER_RENDER_H
#define GQ_RENDER_RENDER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "core/record.h"
#include "measure/record_json.h"
#include "topo/snapshot.h"
#include "topo/topo.h"
#include "doc/document.h"

/* The saved document and its loader: doc/document.h. */

/* Terminal tables: nvbandwidth-like matrices for each test, with N/A where a
 * cell does not apply and the largest spread of each matrix shown;
 * aggregates and direction sums listed under each matrix with their overlap;
 * invalid figures marked and explained. The title line names the machine and
 * says "(simulated)" when the figures come from the simulator. Tests are laid
 * out by the catalog (measure/catalog.h); other tests (from other commands) as
 * source x destination matrices. GQ_E_NOMEM (the tables cut short) when out
 * of memory, else GQ_OK. */
int gq_render_table(FILE *f, const gq_topo *topo, const gq_recordset *rs);
/* One row per record, header first (RFC 4180 quoting). */
void gq_render_csv(FILE *f, const gq_recordset *rs);
/* nvbandwidth's JSON format (see shared/reference/ *.json), for existing
 * parsers: {"nvbandwidth": {"CUDA Runtime Version", "Driver Version",
 * "GPU Device list", "git_version", "testcases": [{name, status,
 * bandwidth_description, bandwidth_matrix (strings, "N/A"), sum}], "version"}}.
 * Cells hold the medians; a cell whose record is invalid is "N/A" and the
 * testcase's status is "Error". version: gpuqual's version (may be NULL). */
json_t *gq_render_nvbandwidth_json(const gq_topo *topo, const gq_recordset *rs, const char *version);
/* Prometheus textfiles: render/prometheus.h. */

#endif
