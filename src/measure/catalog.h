/* The test catalog: every transfer test `gpuqual run` knows, by name (after
 * nccl-tests' struct testColl). A test supplies only WHAT runs together: its
 * plan function turns the topology, the chosen GPUs and the options into a
 * list of measurements (groups of concurrent flows) and latency requests;
 * the harness (measure/harness.h) owns how they are timed.
 *
 * nvbandwidth's tests keep nvbandwidth's names and meanings, with one
 * difference: concurrent tests also report the measured aggregate and its
 * overlap. GPU<->GPU "read" means the destination GPU executes the copy
 * (pulls), "write" the source GPU (pushes); matrices put the executing GPU in
 * the row, as nvbandwidth does.
 *
 * Ownership: the catalog is static const; a gq_plan owns its arrays and is
 * freed with gq_plan_free().
 */
#ifndef GQ_CORE_CATALOG_H
#define GQ_CORE_CATALOG_H

#include <stdbool.h>
#include <stdint.h>

#include "core/flow.h"
#include "core/record.h"
#include "measure/catalog_ids.h"
#include "measure/measurement.h"
#include "topo/topo.h"

/* --host-numa all: every NUMA node in turn (the GPU x NUMA-node matrix). */
/* Loads per round of the pointer-chase latency tests: every SM in turn
 * walks from the start of a 2 MiB buffer, as nvbandwidth does, so the loads
 * per round set how many pages the chase crosses; 100000 reads within 1 %
 * of nvbandwidth's figure on 2 x H200 (10000 read ~9 % lower, fewer pages). */
#define GQ_CATALOG_CHASE_ITERS 100000
#define GQ_HOST_NUMA_ALL (-2)

/* The test ids (GQ_TID_*) are in measure/catalog_ids.h. */

typedef enum gq_test_kind { GQ_TEST_BANDWIDTH = 0, GQ_TEST_LATENCY = 1 } gq_test_kind;

/* How the table and nvbandwidth-json renderers lay out a test's records. */
typedef enum gq_layout {
    GQ_LAYOUT_HOST_GPU = 0, /* rows: host NUMA node, columns: GPU (per-flow records) */
    GQ_LAYOUT_GPU_GPU,      /* rows: executing GPU, columns: the other GPU (per-flow records) */
    GQ_LAYOUT_GPU_BIDIR,    /* as GPU_GPU, plus a matrix of the pair's sum (bidirectional pairs) */
    GQ_LAYOUT_TARGET,       /* one row, columns: target GPU; cell = aggregate into/out of it */
    GQ_LAYOUT_LOCAL,        /* one row, columns: GPU (local copies) */
    GQ_LAYOUT_SET,          /* a list: each GPU of the set, then the aggregates and sums */
} gq_layout;

typedef struct gq_plan_opts {
    uint64_t bytes; /* buffer size per copy, > 0 */
    int host_numa;  /* NUMA node, GQ_NUMA_LOCAL, or GQ_HOST_NUMA_ALL */
    int numa_nodes; /* for GQ_HOST_NUMA_ALL: nodes 0..numa_nodes-1 (>= 1) */
    int ngpus;      /* the selected GPUs (--gpus), in order */
    int gpus[GQ_MAX_GPUS];
    int lat_chase_iters; /* 0: default 100000 */
    int lat_copy_iters;  /* 0: default 2000 */
} gq_plan_opts;

/* One step of a plan: a measurement (flows[flow_off .. flow_off+nflows)) or a
 * latency request. Compact, so that plans for 64 GPUs stay small. */
typedef struct gq_plan_item {
    bool is_latency;
    int flow_off, nflows;
    bool aggregate, direction_sums;
    gq_latency_req lat;
} gq_plan_item;

typedef struct gq_plan {
    char test[64];
    gq_plan_item *items;
    int n, cap;
    gq_flow *flows;
    bool *report;
    int nflows, flows_cap;
    char note[256]; /* why the test was skipped (n == 0), or a remark */
} gq_plan;

typedef struct gq_test gq_test;
typedef int (*gq_plan_fn)(const gq_test *t, const gq_topo *topo, const gq_plan_opts *o, gq_plan *out,
                          gq_err *err);

struct gq_test {
    const char *name;
    const char *description; /* one line, for --list */
    const char *title;       /* matrix title (nvbandwidth's bandwidth_description for its tests) */
    gq_test_kind kind;
    gq_layout layout;
    int min_gpus;     /* below this the test is skipped with a note */
    bool nvbandwidth; /* one of nvbandwidth's tests */
    gq_plan_fn plan;
    /* parameters of the shared plan functions */
    gq_method method;
    int variant;
};

/* The whole catalog, in --list order; *n gets the count. */
const gq_test *gq_catalog(int *n);
/* By exact name, or NULL. */
const gq_test *gq_catalog_find(const char *name);

/* Resolve a selection: names "a,b,c" (may be NULL) and/or a prefix (may be
 * NULL); neither = every test. Unknown names are GQ_E_USAGE with the closest
 * name suggested; a prefix matching nothing too. out[] gets up to max tests,
 * catalog order, no duplicates. */
int gq_catalog_select(const char *names, const char *prefix, const gq_test **out, int max, int *nout,
                      gq_err *err);

/* Plan one test. On success out->n may be 0: then out->note says why it was
 * skipped (e.g. fewer than 2 GPUs, no GPU pair with peer access). */
int gq_catalog_plan(const gq_test *t, const gq_topo *topo, const gq_plan_opts *o, gq_plan *out, gq_err *err);

/* Expand item i of a plan into a measurement the harness runs. */
void gq_plan_measurement(const gq_plan *p, int i, gq_measurement *m);

/* Bytes the plan's largest measurement needs on one GPU and in pinned host
 * memory (any node), for rejecting a buffer that cannot fit before running. */
void gq_plan_memory(const gq_plan *p, int ngpu, uint64_t *gpu_bytes_max, int *gpu_max,
                    uint64_t *host_bytes_max);

void gq_plan_free(gq_plan *p);

/* For GQ_LAYOUT_TARGET tests: the GPU an aggregate record is about (the one
 * all others write to / read from, or the one writing to / reading from all
 * others), or -1. */
int gq_test_target(const gq_test *t, const gq_record *agg);

/* Matrix coordinates of a per-flow record: row = host node (host tests) or
 * the executing GPU, column = the GPU (host tests) or the other GPU. */
void gq_record_cell(const gq_record *r, int *row, int *col);

#endif
