/* Helpers shared by the renderers in src/render (json.c, table.c, csv.c,
 * nvbw_json.c, prometheus.c). Not a public contract. */
#ifndef GQ_RENDER_UTIL_H
#define GQ_RENDER_UTIL_H

#include <stddef.h>

#include "core/record.h"
#include "measure/record_json.h"
#include "topo/topo.h"

/* Columns of test's matrix: the topology's GPU count (0 without topo), widened
 * to the highest GPU index any of its records names, at most GQ_MAX_GPUS. */
int gq_rec_ncols(const gq_topo *topo, const gq_recordset *rs, const char *test);

#endif
