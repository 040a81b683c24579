/* What a saved gpuqual document says about itself and its machine, read by
 * key here so that the commands that load one (place --input, kv --input,
 * the card and fleet directories) read typed fields. */
#ifndef GQ_DOC_SAVED_DOC_H
#define GQ_DOC_SAVED_DOC_H

#include <jansson.h>
#include <stdbool.h>

#include "core/record.h"
#include "core/status.h"
#include "topo/topo.h"

typedef struct gq_saved_head {
    bool gpuqual;   /* "tool" is "gpuqual" */
    char kind[32];  /* "kind", "" when absent or not a string */
    bool simulated; /* "simulated" is true */
    bool has_card;  /* a "card" object */
} gq_saved_head;

/* The head of root (NULL: all false, kind ""). */
void gq_saved_head_read(const json_t *root, gq_saved_head *h);

/* The saved run's machine: its "topology" section decoded into *topo. false
 * when there is none or it does not decode. */
bool gq_saved_topology(const json_t *root, gq_topo *topo);

/* How many GPUs a saved run names: its topology's (*have_topo, *topo set),
 * else one more than the highest GPU index of its "gpus", its "domains" and
 * the records rs. */
int gq_saved_ngpu(const json_t *root, const gq_recordset *rs, gq_topo *topo, bool *have_topo);

/* A journal's header line (measure/journal.h's gq_journal_header), its
 * fields borrowed from h: NULL when absent or of another type. */
typedef struct gq_journal_head {
    const char *command, *version, *git;
    json_t *topology, *options, *run_id;
    bool simulated; /* "machine": {"simulated": true} */
} gq_journal_head;
void gq_journal_head_read(const json_t *h, gq_journal_head *out);

/* The records of a document this build wrote, each that reads appended to
 * rs (one that does not is left out). GQ_E_NOMEM only. */
int gq_saved_records(const json_t *doc, gq_recordset *rs, gq_err *err);

/* Where a document's figures come from ("host": {"source"}), borrowed; NULL if none. */
const char *gq_saved_source(const json_t *doc);

/* One rank's payload in `gpuqual fleet` (after MPI_Gatherv): its host, and
 * either its card's node summary or the error that stopped it with its
 * status. Fields borrowed from p; object false when p is not an object. */
typedef struct gq_fleet_payload {
    bool object;
    const char *host, *error;
    const json_t *summary;
    int status;
} gq_fleet_payload;
void gq_fleet_payload_read(const json_t *p, gq_fleet_payload *out);

/* The sections keys[] (NULL-terminated) that src holds, set in dst (shared). */
void gq_saved_copy_sections(json_t *dst, const json_t *src, const char *const *keys);

/* The top-level sections of a saved document that the commands hand on to
 * other codecs, borrowed from root: NULL where absent (card: also where it is
 * not an object, with card_present set). */
typedef struct gq_saved_sections {
    json_t *card, *topology, *stress, *bottlenecks, *records;
    bool card_present; /* a "card" key, whatever its type */
    bool incomplete;   /* "incomplete": true */
} gq_saved_sections;
void gq_saved_sections_read(const json_t *root, gq_saved_sections *s);

/* Every section of src set in dst, replacing dst's of the same name (shared). */
void gq_saved_merge_sections(json_t *dst, const json_t *src);

/* The names of a card's GPUs (card.identity.gpus[k].name, NULL where not a
 * string), at most max of them; how many GPUs the card lists (may exceed max). */
int gq_card_gpu_names(const json_t *card, const char **names, int max);

/* A node summary's (fleet-node document's) "node" object, borrowed; NULL if none. */
json_t *gq_summary_node(const json_t *summary);

/* Each entry of the fleet section fj's "nodes" given the fields of nodes[i]
 * it lacks (nodes: per rank a node object or null, as gq_fleet_gather keeps). */
void gq_fleet_json_merge_nodes(json_t *fj, const json_t *nodes);

/* o[k] set to v (a new reference, stolen) where o has a key k; else v is
 * dropped and o left as it was. */
void gq_saved_replace(json_t *o, const char *k, json_t *v);

/* The item a[i], borrowed; NULL when absent. */
json_t *gq_saved_list_item(const json_t *a, size_t i);

/* The string a[i], borrowed; NULL when absent or not a string. */
const char *gq_saved_list_str(const json_t *a, size_t i);

/* sections' "domains" moved into plan as "assumed_domains", and its
 * "domains" and "domain_analysis" dropped: `domains --plan-only`, whose
 * domains are assumed, not measured. */
void gq_saved_domains_as_assumed(json_t *sections, json_t *plan);

#endif
