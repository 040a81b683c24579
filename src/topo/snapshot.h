/* Snapshots: what discovery found, saved as JSON and replayed later without
 * a GPU (as hwloc replays captured sysfs trees). The topology object itself
 * is gq_topo_to_json()/gq_topo_from_json() (declared here);
 * a snapshot wraps it with the document header. Schema: docs/json-topo.md.
 *
 *   { "tool":"gpuqual", "kind":"gpuqual-snapshot", "schema_version":1,
 *     "version":"0.1.0", "git":"...", "timestamp":"2026-11-30T12:00:00Z",
 *     "comment":"...",                      (optional, ignored)
 *     "source":..., "simulated":..., "synthetic":..., "host":{...},
 *     "gpus":[...], "links":{...}, "pci":[...], "warnings":[...] }
 *
 * The output of `gpuqual topo --json FILE` ("kind":"topo") carries the same
 * topology keys and is accepted as a snapshot too.
 */
#ifndef GQ_TOPO_SNAPSHOT_H
#define GQ_TOPO_SNAPSHOT_H

#include <jansson.h>
#include <stddef.h>

#include "core/status.h"
#include "topo/topo.h"

#define GQ_SNAPSHOT_KIND "gpuqual-snapshot"
#define GQ_SNAPSHOT_SCHEMA 1

/* Topology <-> JSON: the topology keys of every document and of a snapshot.
 * to_json returns a new reference (NULL on allocation failure); from_json
 * fills *t (gq_topo_init()ed first) or returns GQ_E_USAGE naming the key. */
json_t *gq_topo_to_json(const gq_topo *t);
int gq_topo_from_json(const json_t *j, gq_topo *t, gq_err *err);

/* A GPU's identity fields (serial, vbios, ecc_mode, mig_mode,
 * persistence_mode) into the object x, and back: absent fields stay unknown
 * (schema 1), a mode not among the four names is GQ_E_USAGE naming
 * where (the key prefix, e.g. "gpus[2].") and the key. */
void gq_gpu_identity_to_json(const gq_gpu_info *g, json_t *x);
int gq_gpu_identity_from_json(const json_t *x, const char *where, gq_gpu_info *g, gq_err *err);

/* A document root: tool, kind, schema_version, version, git, timestamp
 * (now, UTC), then the keys of gq_topo_to_json(t) merged in. New reference,
 * NULL on allocation failure. */
json_t *gq_topo_doc(const gq_topo *t, const char *kind, int schema_version);

/* The snapshot document of t (gq_topo_doc with GQ_SNAPSHOT_KIND). */
json_t *gq_snapshot_to_json(const gq_topo *t);

/* Read a snapshot file. Errors name the file: GQ_E_IO when it cannot be
 * read, GQ_E_USAGE when it is not JSON (with jansson's line and column), not
 * a gpuqual snapshot, of a newer schema, or has a missing or mistyped field.
 * On success t->source is "snapshot:<file name>". */
int gq_snapshot_load(const char *path, gq_topo *t, gq_err *err);

#endif
