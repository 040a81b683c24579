/* Shared by tests/sim/test_discovery_*.c: run the discovery pipeline
 * (exec/discovery.h) on a simulated machine through the backend seam and
 * the harness, exactly as `gpuqual domains` does, and helpers to compare its
 * answer with a seed's. The analysis sees only records. */
#ifndef GQ_TEST_DISCOVERY_UTIL_H
#define GQ_TEST_DISCOVERY_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/discovery.h"
#include "backend/backend.h"
#include "backend/sim/sim.h"

/* Run discovery on `machine` (a built-in name or a topology file) with the
 * given noise (<0: the topology's default) and seed. Fails the test with the
 * error text when the backend cannot be opened. topo may be NULL. */
static inline void disc_run(const char *machine, double noise, uint64_t seed, int rounds, gq_discovery *d,
                            gq_topo *topo_out)
{
    static int registered;
    if (!registered) {
        gq_backend_register_builtin();
        registered = 1;
    }
    gq_backend be = {0};
    gq_backend_opts bo;
    gq_sim_opts(&bo, machine, seed, noise, NULL);
    gq_err err = {0};
    gq_topo *topo = calloc(1, sizeof *topo);
    assert_non_null(topo);
    if (gq_backend_open(&be, "sim", &bo, &err))
        fail_msg("sim %s: %s", machine, err.msg);
    gq_topo_init(topo);
    if (be.ops->discover(&be, topo, &err))
        fail_msg("sim %s discover: %s", machine, err.msg);
    int gpus[GQ_MAX_GPUS];
    for (int i = 0; i < topo->ngpu; i++)
        gpus[i] = i;
    gq_discovery_opts o;
    gq_discovery_opts_default(&o);
    o.harness.rounds = rounds;
    int rc = gq_discovery_run(&be, topo, gpus, topo->ngpu, &o, d, &err);
    if (rc)
        fail_msg("discovery on %s: %s", machine, err.msg);
    if (topo_out)
        *topo_out = *topo;
    gq_backend_close(&be);
    free(topo);
}

/* "{0-3}{4-7}" */
static inline const char *disc_domains_str(const gq_domains *d, char *out, size_t n)
{
    char buf[256];
    out[0] = 0;
    for (int k = 0; k < d->ndomains; k++) {
        gq_domains_set_str(d->member[k], d->size[k], buf, sizeof buf);
        size_t l = strlen(out);
        snprintf(out + l, n - l, "{%s}", buf);
    }
    return out;
}

/* "h2d:0-3 h2d:4-7 d2h:0-3 ..." sorted as the analysis lists them. */
static inline const char *disc_bottlenecks_str(const gq_bottlenecks *b, char *out, size_t n)
{
    char buf[256];
    out[0] = 0;
    for (int i = 0; i < b->n; i++) {
        gq_domains_set_str(b->v[i].gpus, b->v[i].ngpus, buf, sizeof buf);
        size_t l = strlen(out);
        snprintf(out + l, n - l, "%s%s:%s", i ? " " : "", gq_direction_name(b->v[i].direction), buf);
    }
    return out;
}

static inline int disc_find(const gq_bottlenecks *b, gq_direction d, const char *set)
{
    char buf[256];
    for (int i = 0; i < b->n; i++)
        if (b->v[i].direction == d &&
            !strcmp(gq_domains_set_str(b->v[i].gpus, b->v[i].ngpus, buf, sizeof buf), set))
            return i;
    return -1;
}

#endif
