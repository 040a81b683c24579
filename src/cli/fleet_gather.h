/* Rank 0's side of `gpuqual fleet`, without MPI: what it does with the bytes
 * MPI_Gatherv brought (one JSON payload per rank, laid end to end), so that
 * the MPI gather, its replay from files (bench/fleet_replay.c) and `report
 * fleet.json` run the same code.
 *
 * A payload is {"rank":N,"host":H,"summary":<fleet-node document>} from a
 * rank whose card ran, or {"rank":N,"host":H,"error":WHY,"status":S} from one
 * whose card did not. A payload rank 0 cannot read, or whose summary fails
 * the fail-closed decoder (doc/fleet_node.c), makes that node an error,
 * never a pass. */
#ifndef GQ_CLI_FLEET_GATHER_H
#define GQ_CLI_FLEET_GATHER_H

#include <jansson.h>
#include <stdbool.h>

#include "analysis/fleet.h"
#include "core/status.h"

typedef struct gq_fleet_gather {
    gq_fleet f;
    int size;        /* ranks */
    int next;        /* payloads added so far */
    json_t *nodes;   /* per rank: the summary's "node" object, or null (card did not run) */
    json_t *hosts;   /* per rank: where it ran (string or null) */
    json_t *whys;    /* per rank: why its card did not run (string or null) */
    bool simulated;  /* a node ran simulated */
    bool incomplete; /* a node's card is incomplete */
    int nusage;      /* ranks that refused the (same) input as bad */
    gq_err first_usage;
} gq_fleet_gather;

/* A rank's card document as the node summary it sends rank 0 (a few KB;
 * the whole card stays in nodedir): the fleet-node document. New reference,
 * or NULL with *err. */
json_t *gq_fleet_summarise(const json_t *doc, int rank, const char *nodedir, gq_err *err);

/* MPI_Gatherv's displacements are int: displs[r] = sum of lens[0..r-1].
 * *total: the bytes rank 0 will hold. GQ_E_USAGE, with one line naming the
 * total, when it would not fit an int (2 GiB), or when a length is negative. */
int gq_fleet_displs(const int *lens, int size, int *displs, long long *total, gq_err *err);

/* threshold_pct as gq_fleet_init. GQ_E_NOMEM. */
int gq_fleet_gather_init(gq_fleet_gather *g, int size, double threshold_pct, gq_err *err);
void gq_fleet_gather_free(gq_fleet_gather *g);

/* The next rank's payload (borrowed; NULL: rank 0 received nothing
 * readable). GQ_E_NOMEM only: a bad payload is that node's error. */
int gq_fleet_gather_payload(gq_fleet_gather *g, const json_t *p, gq_err *err);

/* Every rank's payload from the gathered bytes: rank r's are buf[displs[r]],
 * lens[r] bytes (as MPI_Gatherv lays them). GQ_E_NOMEM. */
int gq_fleet_gather_buffer(gq_fleet_gather *g, const char *buf, const int *lens, const int *displs,
                           gq_err *err);

/* The analysis once every rank is in (gq_fleet_finish). GQ_E_NOMEM. */
int gq_fleet_gather_finish(gq_fleet_gather *g, gq_err *err);

/* The fleet document (docs/json.md; kind "fleet"): each node entry carries
 * its summary's fields next to the fleet's own. options borrowed (may be
 * NULL). New reference, NULL when out of memory. */
json_t *gq_fleet_gather_document(const gq_fleet_gather *g, json_t *options);

/* `gpuqual report` of a fleet document (root, kind "fleet"; cli/report_fleet.c):
 * its nodes through the steps above, rendered as ctx->format says (summary,
 * markdown, html: the node × check heatmap, json: as saved) to ctx->out;
 * *exit_code the fleet's. GQ_E_USAGE naming the key when the document is bad. */
struct gq_ctx;
int gq_report_fleet(struct gq_ctx *ctx, const json_t *root, int *exit_code);

#endif
