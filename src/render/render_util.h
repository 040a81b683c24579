/* Helpers shared by the renderers in src/render (json.c, table.c, csv.c,
 * nvbw_json.c, prometheus.c) and the journal. Not a public contract. */
#ifndef GQ_RENDER_UTIL_H
#define GQ_RENDER_UTIL_H

#include <stddef.h>

#include "core/record.h"
#include "topo/topo.h"

/* "gpu:N", "host:N", "host:local", and "gpu:*" / "host:*" for GQ_EP_MANY. */
const char *gq_rec_endpoint(gq_endpoint e, char *buf, size_t n);
/* The inverse; 0 on success, -1 when s is none of those forms. */
int gq_rec_parse_endpoint(const char *s, gq_endpoint *e);

/* Unix seconds <-> "2026-11-30T12:34:56.789Z" (UTC, milliseconds). */
const char *gq_iso_time(double unix_s, char *buf, size_t n);
int gq_parse_iso_time(const char *s, double *out);

/* Columns of test's matrix: the topology's GPU count (0 without topo), widened
 * to the highest GPU index any of its records names, at most GQ_MAX_GPUS. */
int gq_rec_ncols(const gq_topo *topo, const gq_recordset *rs, const char *test);

#endif
