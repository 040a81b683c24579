/* Records and a PCIe tree crafted for the bottleneck tests
 * (test_bottlenecks.c, test_bottlenecks_edges.c): host flows, P2P flows and
 * their aggregates in groups, and a topology with switches under sockets. */
#ifndef GQ_TESTS_BOTTLENECKS_UTIL_H
#define GQ_TESTS_BOTTLENECKS_UTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/bottlenecks.h"
#include "core/units.h"

#define BYTES (256 * GQ_MiB)

static gq_topo T;
static gq_recordset RS;
static int G; /* next group id */

static inline void base(gq_record *r, int group)
{
    memset(r, 0, sizeof *r);
    r->method = GQ_METHOD_CE;
    r->bytes = BYTES;
    r->rounds = 5;
    r->valid = true;
    r->group = group;
    r->overlap = 1.0;
    r->flow_tag = 0;
    r->value.n = 5;
    r->value.spread = 0.004;
}

static inline void set_val(gq_record *r, double v)
{
    r->value.median = r->value.min = r->value.max = v;
}

static inline void host_flow(int group, int gpu, gq_direction d, double v)
{
    gq_record r;
    base(&r, group);
    strcpy(r.test, d == GQ_DIR_H2D ? "host_to_device_set" : "device_to_host_set");
    r.direction = d;
    gq_endpoint h = {GQ_EP_HOST, 0}, g = {GQ_EP_GPU, gpu};
    r.src = d == GQ_DIR_H2D ? h : g;
    r.dst = d == GQ_DIR_H2D ? g : h;
    set_val(&r, v);
    assert_int_equal(gq_records_push(&RS, &r), 0);
}

static inline void aggregate(int group, const int *gpus, int n, gq_direction d, double v, bool valid)
{
    gq_record r;
    base(&r, group);
    strcpy(r.test, d == GQ_DIR_P2P   ? "pairs_read_ce"
                   : d == GQ_DIR_H2D ? "host_to_device_set"
                                     : "device_to_host_set");
    r.direction = d;
    r.aggregate = true;
    r.flow_tag = -1;
    r.ngpus = n;
    memcpy(r.gpus, gpus, (size_t)n * sizeof(int));
    set_val(&r, v);
    if (!valid) {
        r.valid = false;
        r.flags = GQ_FLAG_OVERLAP;
        r.overlap = 0.6;
    }
    assert_int_equal(gq_records_push(&RS, &r), 0);
}

/* A host group: gpus copy at once in direction d, each at rate[i]. */
static inline int host_group(const int *gpus, int n, gq_direction d, const double *rate)
{
    int g = G++;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        host_flow(g, gpus[i], d, rate[i]);
        sum += rate[i];
    }
    if (n > 1)
        aggregate(g, gpus, n, d, sum, true);
    return g;
}

static inline void host_uniform(const int *gpus, int n, gq_direction d, double each)
{
    double r[64];
    for (int i = 0; i < n; i++)
        r[i] = each;
    host_group(gpus, n, d, r);
}

/* host_uniform, returning the group id. */
static inline int host_uniform_group(const int *gpus, int n, gq_direction d, double each)
{
    double r[64];
    for (int i = 0; i < n; i++)
        r[i] = each;
    return host_group(gpus, n, d, r);
}

static inline void p2p_flow(int group, int s, int t, double v)
{
    gq_record r;
    base(&r, group);
    strcpy(r.test, "device_to_device_memcpy_read_ce");
    r.direction = GQ_DIR_P2P;
    r.src = (gq_endpoint){GQ_EP_GPU, s};
    r.dst = (gq_endpoint){GQ_EP_GPU, t};
    set_val(&r, v);
    assert_int_equal(gq_records_push(&RS, &r), 0);
}

static inline void p2p_group(const int *src, const int *dst, const double *rate, int n)
{
    int g = G++;
    int gpus[64], ng = 0;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        p2p_flow(g, src[i], dst[i], rate[i]);
        sum += rate[i];
        gpus[ng++] = src[i];
        gpus[ng++] = dst[i];
    }
    aggregate(g, gpus, ng, GQ_DIR_P2P, sum, true);
}

static inline int setup(void **state)
{
    (void)state;
    gq_records_free(&RS);
    G = 0;
    gq_topo_init(&T);
    return 0;
}

static inline int teardown(void **state)
{
    (void)state;
    gq_records_free(&RS);
    return 0;
}

static inline int add_pci(gq_pci_kind k, int parent, int gpu, const char *bus, double link)
{
    int i = T.npci++;
    T.pci[i].kind = k;
    T.pci[i].parent = parent;
    T.pci[i].gpu = gpu;
    T.pci[i].numa_node = -1;
    snprintf(T.pci[i].bus_id, sizeof T.pci[i].bus_id, "%s", bus);
    T.pci[i].link_gbps = link;
    return i;
}

#endif
