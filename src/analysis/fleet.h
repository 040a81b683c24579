/* The fleet: the acceptance cards of many nodes (one per MPI rank of
 * `gpuqual fleet`), each gathered as its node summary (below; the whole card
 * stays in the node's folder), the same figures lined up across them, and
 * the outliers named (README "gpuqual fleet").
 *
 * A summary's figures are keyed exactly as `gpuqual compare` keys them
 * (analysis/compare.h: one key per record, the stress figures per GPU; invalid
 * records left out), one node at a time, so the number of nodes is not bound
 * by GQ_CMP_MAX_RUNS. Nodes are grouped by GPU model and stress duration
 * (a mixed fleet's H200s are not measured against its A100s, nor a 60 s
 * stress against a 5 min one). For each figure present on at least two nodes
 * of a group, the group median is taken over them; a node is an outlier on
 * that figure when it is worse than its group's median by more than the
 * threshold: bandwidth, clocks and power below it, latency above it, and
 * temperature above it by more than threshold_c degrees (absolute, not %).
 * With two nodes the median is their mean, so a gap of twice the threshold
 * flags both: two nodes cannot say which one is off.
 *
 * A node is flagged when it has an outlier figure, or its card's verdict is
 * warn or fail, or its card is incomplete, or its card did not run (error).
 * The fleet's verdict and exit code: fail (1) when a node failed or did not
 * run; else incomplete (5) when a card is incomplete; else warn (4) when a
 * node warned or has an outlier; else pass (0).
 *
 * Pure: no MPI, no I/O. Its JSON section and printed summary are in
 * render/analysis_render.h.
 */
#ifndef GQ_ANALYSIS_FLEET_H
#define GQ_ANALYSIS_FLEET_H

#include <stdbool.h>

#include "core/record.h"
#include "core/status.h"
#include "core/types.h"

/* ---- the fleet node summary (docs/json.md, kind "fleet-node") ----------
 * What one rank sends rank 0 instead of its whole card document: a few KB.
 * Its JSON codec is doc/fleet_node.c; built from a card there too. */

#define GQ_NODE_MAX_CHECKS 256

typedef struct gq_node_check {
    char id[48];
    char subject[128]; /* "model:NVIDIA RTX PRO 6000 Blackwell Server Edition" fits whole */
    char verdict[12];  /* the card's check verdict ("pass", "warn", "fail", "skip", ...) */
    char evidence[16]; /* "measured", "skipped", "failed", "unknown" */
    char reason[16];   /* evidence_reason when not measured ("budget", "user", ...); "" none */
    double figure;     /* NAN: none */
    char unit[12];
} gq_node_check;

typedef struct gq_node_figure {
    char key[200]; /* as gpuqual compare keys it */
    double v;
} gq_node_figure;

typedef struct gq_node_identity {
    int index;
    char uuid[80], serial[64], vbios[64];
    int pcie_gen_max, pcie_width_max, pcie_gen_cur, pcie_width_cur; /* -1 unknown */
} gq_node_identity;

typedef enum gq_node_verdict {
    GQ_NODE_PASS = 0,
    GQ_NODE_WARN,
    GQ_NODE_FAIL,
    GQ_NODE_INCOMPLETE,
} gq_node_verdict;
/* "pass", "warn", "fail", "incomplete"; the inverse is -1 for any other
 * string (exact case). */
const char *gq_node_verdict_name(gq_node_verdict v);
int gq_node_verdict_from_name(const char *s);

typedef struct gq_node_summary {
    char hostname[64]; /* the card's hostname (the simulated machine's under --sim) */
    int rank;
    char gpu_model[96];
    int ngpus;
    char level[16]; /* "" = null (a card without levels) */
    double stress_s;
    gq_node_verdict verdict;
    int exit_code;
    bool complete;
    bool simulated;
    int nchecks;
    gq_node_check checks[GQ_NODE_MAX_CHECKS];
    int nfig, capfig;
    gq_node_figure *fig; /* owned */
    int nident;
    gq_node_identity ident[GQ_MAX_GPUS];
    char artefacts[512];
} gq_node_summary;

void gq_node_summary_init(gq_node_summary *s);
void gq_node_summary_free(gq_node_summary *s);
/* Append a figure. GQ_E_NOMEM. */
int gq_node_summary_add_fig(gq_node_summary *s, const char *key, double v);
/* A figure's unit and better direction from its key, as compare assigns
 * them (stress temperature: °C, lower; clocks: MHz; power: W; a latency
 * test: ns, lower; else GB/s, higher). */
void gq_node_fig_unit(const char *key, char *unit, size_t n, bool *higher_is_better);

typedef struct gq_fleet_node {
    char label[128];    /* "<host>-rank<N>" */
    char host[64];      /* where the rank ran */
    char card_host[64]; /* the card's hostname (the simulated machine's name under --sim) */
    int rank;
    char verdict[12]; /* "pass", "warn", "fail", "incomplete" or "error" */
    int exit_code;    /* the card's (0, 4, 1, 5), or 1 for an error */
    char error[512];  /* why the card did not run ("" when it ran) */
    bool simulated;
    int noutliers;   /* figures on which this node is an outlier */
    bool flagged;    /* after gq_fleet_finish */
    char model[128]; /* GPU model(s) of its card ("" unknown) */
    double stress_s; /* its stress duration (NAN: none) */
    int group;       /* index into groups; -1 for a node whose card did not run */
} gq_fleet_node;

/* Nodes of one GPU model and one stress duration. */
typedef struct gq_fleet_group {
    char model[128];
    double stress_s;
    int nnodes;
} gq_fleet_group;

typedef struct gq_fleet_fig {
    char key[200];
    char unit[8];
    bool higher_is_better;
    bool absolute; /* compared in its unit (°C), not in % */
    int present;   /* nodes that have it (after finish) */
    double median; /* over the nodes of the first group with two or more (NAN: none) */
} gq_fleet_fig;

typedef struct gq_fleet_outlier {
    int node, fig, group;
    double value, median; /* median of the node's group */
    double delta_pct;     /* against the median, signed; NAN for °C figures */
    double delta_abs;     /* value - median, in the figure's unit */
} gq_fleet_outlier;

typedef struct gq_fleet_value {
    int fig, group, node;
    double v;
} gq_fleet_value;

typedef struct gq_fleet {
    double threshold_pct; /* > 0 */
    double threshold_c;   /* °C, > 0 (GQ_CMP_TEMP_THRESHOLD_C) */
    int ngroups, capgroups;
    gq_fleet_group *groups; /* owned */
    int nnodes, capnodes;
    gq_fleet_node *node; /* owned */
    int nfig, capfig;
    gq_fleet_fig *fig; /* owned */
    int nval, capval;
    gq_fleet_value *val; /* owned */
    int nout, capout;
    gq_fleet_outlier *out; /* owned; by node, then figure order */
    int ncompared;         /* figures present on at least two nodes of a group */
    int nflagged;
    char verdict[12]; /* fleet verdict (after finish) */
    int exit_code;
} gq_fleet;

/* threshold_pct <= 0 means 5. */
void gq_fleet_init(gq_fleet *f, double threshold_pct);
void gq_fleet_free(gq_fleet *f);

/* Add a node whose card ran, from its summary (borrowed). host is where
 * the rank ran (NULL: the summary's hostname). GQ_E_NOMEM. */
int gq_fleet_add_summary(gq_fleet *f, const char *host, const gq_node_summary *s, gq_err *err);

/* Add a node whose card did not run: why, in one line. GQ_E_NOMEM. */
int gq_fleet_add_error(gq_fleet *f, int rank, const char *host, const char *why, gq_err *err);

/* Medians, outliers, flags, the fleet's verdict and exit code (after the
 * last add). GQ_E_NOMEM. */
int gq_fleet_finish(gq_fleet *f, gq_err *err);

#endif
