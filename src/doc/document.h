/* The saved document (docs/json.md): the root every JSON output shares,
 * written from the typed run (gq_doc_to_json) and read back fail closed
 * (gq_doc_load), in doc/document.c. */
#ifndef GQ_DOC_DOCUMENT_H
#define GQ_DOC_DOCUMENT_H

#include <jansson.h>
#include <stdbool.h>

#include "core/record.h"
#include "core/status.h"
#include "measure/record_json.h"
#include "topo/snapshot.h"
#include "topo/topo.h"

typedef struct gq_doc {
    const char *kind;            /* "run", "domains", "card", ... */
    const char *run_id;          /* NULL: this process's (gq_run_id_current) */
    const char *version;         /* gpuqual version (the CLI passes gq_version); NULL = "unknown" */
    const char *git;             /* git revision (gq_git_rev); NULL = "unknown" */
    json_t *options;             /* borrowed; options in force (may be NULL) */
    const gq_topo *topo;         /* may be NULL */
    const gq_recordset *records; /* may be NULL */
    json_t *sections;            /* borrowed; object whose keys are merged into the root (may be NULL) */
    bool simulated;
    bool incomplete;
} gq_doc;

/* Build the root object (new reference). "host" and "gpus" summarise the
 * identity (driver, CUDA versions, UUIDs...) and "topology" holds the whole
 * gq_topo (gq_topo_to_json) so that saved runs can be re-analysed. */
json_t *gq_doc_to_json(const gq_doc *d);

/* The one loader of saved documents (docs/json.md): reads the file (a
 * directory is refused as one; FIFOs and /dev/fd/N are read as streams),
 * refuses duplicate keys, requires tool=="gpuqual" and schema_version 1..
 * GQ_SCHEMA_VERSION (a newer one is refused, naming both versions), checks
 * gpus[] (indices 0..n-1, each once), decodes the topology and the analysis
 * sections (gq_doc_check_sections) and, when out_records is non-NULL, the
 * records (gq_doc_records_from_json). Every refusal is GQ_E_USAGE with one
 * line naming the file and the key path. On success *root is a new
 * reference. */
int gq_doc_load(const char *path, json_t **root, gq_recordset *out_records, gq_err *err);
/* The analysis sections other commands read back, each through its decoder
 * when present: domains, bottlenecks (GPU indices below ngpu when ngpu >= 0),
 * and the card section's shape. gq_doc_load calls it. */
int gq_doc_check_sections(const char *path, const json_t *root, int ngpu, gq_err *err);

/* The records array of a document (path names the file in messages), each
 * through gq_record_from_json; a GPU index at or beyond ngpu (when ngpu >= 0)
 * is refused. Messages: "FILE: records[3].gbps.median: ...". */
int gq_doc_records_from_json(const char *path, const json_t *recs, int ngpu, gq_recordset *out, gq_err *err);

/* Write a JSON value to a file atomically (tmp + rename) or "-" for stdout. */
int gq_doc_write_file(const json_t *j, const char *path, gq_err *err);

#endif
