/* The card's figures, composed from a run (analysis/card_compose.c): the
 * typed content of the card section's figures, computed from the records,
 * the topology and what the stress and placement steps produced. Pure: reads
 * records and the topology, never measures and writes no document; the
 * card's codec (doc/card_compose.h: gq_card_compose) writes them as the
 * card section and judges it.
 *
 * What each part becomes in the card section (docs/json-card.md):
 * identity (PCIe links as the stress run saw them under load, the uplinks
 * above the GPUs), matrices (P2P read, P2P write, driver-staged), domains,
 * host (alone, all at once, the contention probes' subsets with the reason
 * each was measured, both directions at once), undetermined, pairs (within
 * against across a domain), sweeps (with their fits, the fastest and slowest
 * path named) and latency. */
#ifndef GQ_ANALYSIS_CARD_COMPOSE_H
#define GQ_ANALYSIS_CARD_COMPOSE_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/bottlenecks.h"
#include "analysis/card.h"
#include "analysis/domains.h"
#include "analysis/sweepfit.h"
#include "core/record.h"
#include "core/status.h"
#include "topo/topo.h"

/* What the composition needs besides the records; everything but topo and
 * rs may be NULL / 0. */
typedef struct gq_card_figures_in {
    const gq_topo *topo;
    const gq_recordset *rs;
    const gq_card_plan *plan; /* steps with their status; NULL: inferred from what the run holds */
    const gq_card_opts *opts; /* the GPUs (NULL or none: every GPU in topo) */
    uint64_t bytes;           /* main buffer size; 0: the most common size among the records */
    bool have_stress;         /* a stress section exists (an inferred plan's stress step) */
    bool have_placement;      /* a placement section exists (an inferred plan's placement step) */
    /* By GPU index, the lowest PCIe generation and width the stress run saw
     * under load (NAN: not seen); NULL when there was no stress run. */
    const double (*loaded_pcie)[2];
} gq_card_figures_in;

/* A switch or root port above the selected GPUs whose uplink discovery read. */
typedef struct gq_card_uplink {
    int node; /* index in topo->pci */
    int ngpus;
    int gpus[GQ_MAX_GPUS]; /* the selected GPUs behind it */
} gq_card_uplink;

#define GQ_CARD_MAX_SWEEPS 16
#define GQ_CARD_SWEEP_MAX_POINTS 128

typedef struct gq_card_sweep {
    char label[160]; /* "GPU 0 → GPU 1", "fastest path: host → GPU 3" */
    char src[24], dst[24];
    const char *test; /* the record's test without GQ_TID_SWEEP_PREFIX (points into rs) */
    int np;
    uint64_t bytes[GQ_CARD_SWEEP_MAX_POINTS];
    double gbps[GQ_CARD_SWEEP_MAX_POINTS]; /* NAN: the point is not usable */
    bool have_fit;                         /* the fit converged and every figure of it is finite */
    gq_sweepfit fit;
} gq_card_sweep;

typedef struct gq_card_figures {
    int n, sel[GQ_MAX_GPUS]; /* the GPUs, in order */
    uint64_t bytes;
    gq_card_plan plan; /* the run's, or inferred */
    /* identity: each selected GPU's PCIe link (under load where the stress run saw it) */
    int pcie_gen[GQ_MAX_GPUS], pcie_width[GQ_MAX_GPUS];
    bool pcie_loaded[GQ_MAX_GPUS];
    int nuplinks;
    gq_card_uplink *uplinks; /* owned */
    /* matrices, one pair at a time: read (with staged and SM reads), write, driver-staged */
    gq_pairmatrix *read, *write, *driver; /* owned */
    bool any_read, any_write, any_driver;
    /* the domains the read matrix shows */
    bool have_dom;
    gq_domains *dom; /* owned */
    gq_bottlenecks bn;
    /* host: the largest group of each direction (h2d, d2h) covering every GPU (index in bn.obs,
     * -1 none); the contention probes' subsets (indices in bn.obs) with the reason each was
     * planned ("" none); both directions at once */
    int host_all[2];
    int nsubsets;
    int *subset;            /* owned */
    char (*subset_why)[96]; /* owned */
    bool have_bidir;
    double bidir_agg[2], bidir_sum;
    /* pairs within and across a domain (indices in bn.obs, -1 none); multi: a domain of 2+ GPUs */
    bool multi;
    int pairs_within, pairs_across;
    int nsweeps;
    gq_card_sweep *sweeps; /* owned */
    /* latency by position in sel: host (ns), p2p[row runs the chase][column's memory] */
    bool lat_host_any, lat_p2p_any;
    double lat_host[GQ_MAX_GPUS];
    double (*lat_p2p)[GQ_MAX_GPUS]; /* owned, n rows */
} gq_card_figures;

/* Compose. GQ_E_NOMEM, or GQ_E_USAGE when topo or rs is missing; on failure
 * nothing is left to free. */
int gq_card_figures_make(const gq_card_figures_in *in, gq_card_figures *f, gq_err *err);
void gq_card_figures_free(gq_card_figures *f);

/* The figure of the pair src -> dst in m (NAN: not measured). */
double gq_card_pair_isolated(const gq_pairmatrix *m, int src, int dst);

#endif
