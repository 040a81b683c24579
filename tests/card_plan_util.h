/* A synthetic machine and card options for the card-plan tests
 * (tests/unit/test_card_plan.c, tests/sim/test_card_plan_edges.c). */
#ifndef GQ_TESTS_CARD_PLAN_UTIL_H
#define GQ_TESTS_CARD_PLAN_UTIL_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/card.h"
#include "topo/topo.h"

/* n GPUs on PCIe Gen5 x16, one NUMA node; P2P between every pair or none. */
static inline gq_topo *machine(int n, bool p2p)
{
    gq_topo *t = calloc(1, sizeof *t);
    gq_topo_init(t);
    t->ngpu = n;
    t->numa_nodes = 1;
    for (int i = 0; i < n; i++) {
        snprintf(t->gpu[i].name, sizeof t->gpu[i].name, "Test GPU");
        t->gpu[i].index = i;
        t->gpu[i].pcie_gen_cur = t->gpu[i].pcie_gen_max = 5;
        t->gpu[i].pcie_width_cur = t->gpu[i].pcie_width_max = 16;
        for (int j = 0; j < n; j++)
            t->p2p_cuda[i][j] = i == j ? 1 : p2p;
    }
    return t;
}

static inline void opts_for(gq_card_opts *o, int n, double budget, double stress)
{
    gq_card_opts_default(o);
    o->ngpus = n;
    for (int i = 0; i < n; i++)
        o->gpus[i] = i;
    o->budget_s = budget;
    o->stress_s = stress;
}

#endif
