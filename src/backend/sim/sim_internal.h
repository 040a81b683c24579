/* The sim backend's private state, shared by its files: sim_backend.c (the
 * ops table, options, init, prepare and latency), sim_discover.c (discover)
 * and sim_run.c (run). Nothing outside src/backend/sim includes this.
 */
#ifndef GQ_BACKEND_SIM_INTERNAL_H
#define GQ_BACKEND_SIM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/backend.h"
#include "core/interrupt.h"
#include "backend/sim/sim.h"
#include "backend/sim/sim_stress.h"

typedef struct sim_priv {
    gq_sim_machine *m;
    uint64_t seed;
    double noise;
    double clock;   /* virtual seconds */
    uint64_t calls; /* runs and latency queries so far: part of the noise key */
    int nc;         /* constraints: 3 per link (two directions, duplex) + 1 per GPU */
    int numa_count;
    gq_sim_stress *stress; /* the stress and telemetry model (sim_stress.c) */
    gq_sim_faults faults;  /* --sim-fault, per GPU */
    long measure_calls;    /* measurement calls so far, for interrupt@N (sim_stress.h) */
    int in_coll;           /* inside a collective run: its copy runs are not counted apart */
} sim_priv;

#define C_DIR(l, d) (3 * (l) + (d))
#define C_DUP(l) (3 * (l) + 2)
#define C_GPU(s, g) (3 * (s)->m->nlink + (g))

enum { K_PLAIN = 0, K_DRIVER = 1 };

struct gq_group {
    int n;
    gq_flow *flows;
    int *kind;
    int *host_numa;  /* host_numa_actual per flow */
    double *flowcap; /* B/s, 0 = none */
    double *phys;    /* B/s: the theoretical rate of the narrowest PCIe link on the path, 0 = none;
                        noise never takes a flow above it (sim_run.c) */
    double *cost;    /* s per copy */
    uint64_t *key;
    /* the noise model (noise.c): each flow's path class, path (its drift's
     * key) and whether it shares a link or its GPU with another flow */
    int *cls;
    uint64_t *path;
    bool *shared;
    int nshared; /* flows with shared true */
    int ndriver;
    gq_sim_problem *main; /* one stream per flow */
    gq_sim_problem *legs; /* flows as in main (drivers off) + two legs per driver flow */
    int *leg0;            /* index in legs of a driver flow's first leg; -1 */
};

static inline sim_priv *P(gq_backend *be)
{
    return (sim_priv *)be->priv;
}

/* One measurement call begins (a copy run, a latency query, a collective
 * run, a stress tick): at --sim-fault interrupt@N's N-th, a Ctrl-C arrives,
 * as the SIGINT handler would report it (core/interrupt.h). */
static inline void gq_sim_measure_call(sim_priv *s)
{
    if (++s->measure_calls == s->faults.interrupt_at)
        gq_interrupt_request();
}

/* GPU index -> node index */
static inline int gnode(const gq_sim_machine *m, int g)
{
    return m->gpus[g].node;
}

/* Lower *cap to v when v is a cap (> 0) and *cap is none (<= 0) or larger. */
static inline void cap_min(double *cap, double v)
{
    if (v > 0 && (*cap <= 0 || v < *cap))
        *cap = v;
}

/* The discover hook (sim_discover.c). */
int gq_sim_be_discover(gq_backend *be, gq_topo *t, gq_err *err);
/* The run hook (sim_run.c). */
int gq_sim_be_run(gq_backend *be, gq_group *g, const gq_run_opts *o, gq_flow_result *res, gq_err *err);

/* The collectives hooks (sim_coll.c): NCCL's ring over the fabric. */
int gq_sim_coll_probe(gq_backend *be, gq_coll_info *info);
int gq_sim_coll_run(gq_backend *be, const gq_coll_req *req, gq_coll_result *res, gq_err *err);

/* The PCIe generation of a rate per lane in GT/s (1..6), -1 when none (sim_discover.c). */
int gq_sim_gen_from_gts(double gts);

#endif
