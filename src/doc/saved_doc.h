/* What a saved gpuqual document says about itself and its machine, read by
 * key here so that the commands that load one (place --input, kv --input,
 * the card and fleet directories) read typed fields. */
#ifndef GQ_DOC_SAVED_DOC_H
#define GQ_DOC_SAVED_DOC_H

#include <jansson.h>
#include <stdbool.h>

#include "core/record.h"
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

/* The sections keys[] (NULL-terminated) that src holds, set in dst (shared). */
void gq_saved_copy_sections(json_t *dst, const json_t *src, const char *const *keys);

#endif
