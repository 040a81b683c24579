/* The harness against a fake backend (fio's "null engine" idea): run()
 * returns crafted windows and byte counts, so the overlap rule, direction
 * sums, statistics, early stop, the sanity guard, integrity checks, per-flow
 * errors, interruption and the journal are checked without a GPU and without
 * the simulator. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "measure/harness.h"
#include "core/interrupt.h"
#include "measure/journal.h"
#include "measure/sanity.h"
#include "core/units.h"
#include "../test_util.h"

/* ---- the fake backend ---------------------------------------------------- */

typedef void (*script_fn)(int call, const gq_run_opts *o, const gq_flow *flows, int n, gq_flow_result *res);

static struct {
    script_fn script;
    int calls;
    int prepare_rc;
    int fail_call; /* run() returns GQ_E_BACKEND on this call (-1 never) */
    gq_run_opts opts[64];
    uint64_t grain[64][4]; /* opts[k].grain[0..3], copied (the harness frees its array) */
    gq_flow flows[GQ_MAX_FLOWS];
    int nflows;
    int released;
    double lat[8];
    int nlat, lat_calls;
    int lat_iters[16];
    int lat_intr_at; /* > 0: latency call number lat_intr_at (from 1) asks for an interruption */
} fake;

struct gq_group {
    int dummy;
};
static struct gq_group the_group;

static int f_init(gq_backend *be, const gq_backend_opts *o, const void *bopts, gq_err *err)
{
    return GQ_OK;
}
static void f_fini(gq_backend *be)
{
}
static int f_discover(gq_backend *be, gq_topo *t, gq_err *err)
{
    return GQ_OK;
}
static int f_prepare(gq_backend *be, const gq_flow *flows, int n, gq_group **out, gq_err *err)
{
    if (fake.prepare_rc)
        return gq_err_set(err, fake.prepare_rc, "cudaMalloc: out of memory");
    memcpy(fake.flows, flows, (size_t)n * sizeof *flows);
    fake.nflows = n;
    *out = &the_group;
    return GQ_OK;
}
static int f_run(gq_backend *be, gq_group *g, const gq_run_opts *o, gq_flow_result *res, gq_err *err)
{
    int call = fake.calls++;
    if (call < 64) {
        fake.opts[call] = *o;
        for (int i = 0; o->grain && i < fake.nflows && i < 4; i++)
            fake.grain[call][i] = o->grain[i];
    }
    if (call == fake.fail_call)
        return gq_err_set(err, GQ_E_BACKEND, "the device fell off the bus");
    for (int i = 0; i < fake.nflows; i++) {
        memset(&res[i], 0, sizeof res[i]);
        res[i].tag = fake.flows[i].tag;
        res[i].host_numa_actual = -1;
    }
    fake.script(call, o, fake.flows, fake.nflows, res);
    return GQ_OK;
}
static void f_release(gq_backend *be, gq_group *g)
{
    fake.released++;
}
static int f_latency(gq_backend *be, const gq_latency_req *r, double *ns, gq_err *err)
{
    if (fake.lat_calls < 16)
        fake.lat_iters[fake.lat_calls] = r->iters;
    if (fake.lat_intr_at > 0 && fake.lat_calls + 1 == fake.lat_intr_at)
        gq_interrupt_request();
    *ns = fake.lat[fake.lat_calls++ % fake.nlat];
    return GQ_OK;
}

static const gq_backend_ops fake_ops = {
    .version = GQ_BACKEND_OPS_VERSION,
    .name = "fake",
    .flags = GQ_BE_SIMULATED,
    .init = f_init,
    .fini = f_fini,
    .discover = f_discover,
    .prepare = f_prepare,
    .run = f_run,
    .release = f_release,
    .latency = f_latency,
};

static gq_backend be = {.ops = &fake_ops};
static gq_topo topo;

static int setup(void **state)
{
    memset(&fake, 0, sizeof fake);
    fake.fail_call = -1;
    gq_topo_init(&topo);
    topo.ngpu = 2;
    gq_interrupt_clear();
    return 0;
}

/* A window [s, e] with `gb` GB moved. */
static void win(gq_flow_result *r, double s, double e, double gb)
{
    r->status = GQ_OK;
    r->t_start = s;
    r->t_end = e;
    r->bytes_done = (uint64_t)(gb * 1e9);
    r->copies_done = 10;
}

static gq_endpoint H(int n)
{
    return (gq_endpoint){GQ_EP_HOST, n};
}
static gq_endpoint G(int n)
{
    return (gq_endpoint){GQ_EP_GPU, n};
}

static void add(gq_measurement *m, gq_endpoint s, gq_endpoint d, int exec, bool report)
{
    int i = m->nflows++;
    m->flows[i] = (gq_flow){
        .src = s, .dst = d, .method = GQ_METHOD_CE, .exec_gpu = exec, .bytes = 256 * GQ_MiB, .tag = i};
    m->report[i] = report;
}

static gq_measurement *new_m(const char *test)
{
    gq_measurement *m = calloc(1, sizeof *m);
    snprintf(m->test, sizeof m->test, "%s", test);
    return m;
}

static gq_harness_opts fixed_opts(int rounds)
{
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.rounds = rounds;
    o.reps = 10;
    o.warmup_reps = 0;
    o.verify = false;
    return o;
}

static const gq_record *find(const gq_recordset *rs, bool aggregate, bool sum, int dir, int tag)
{
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (r->aggregate != aggregate || r->sum != sum)
            continue;
        if (dir >= 0 && (int)r->direction != dir)
            continue;
        if (tag >= 0 && r->flow_tag != tag)
            continue;
        return r;
    }
    return NULL;
}

/* ---- the overlap rule ---------------------------------------------------- */

static double g_late; /* start of flow 1 */

static void two_flows(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    win(&res[0], 0.0, 1.0, 10.0);
    win(&res[1], g_late, 1.0, 10.0 * (1.0 - g_late));
}

static void test_overlap_98_is_invalid(void **state)
{
    gq_measurement *m = new_m("host_to_all_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, H(0), G(1), 1, true);
    m->aggregate = true;
    g_late = 0.02;
    fake.script = two_flows;
    gq_harness_opts o = fixed_opts(5);
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, &err), GQ_OK);
    assert_int_equal(rs.n, 3);
    const gq_record *agg = find(&rs, true, false, GQ_DIR_H2D, -1);
    assert_non_null(agg);
    assert_false(agg->valid);
    assert_true(agg->flags & GQ_FLAG_OVERLAP);
    assert_true(fabs(agg->overlap - 0.98) < 1e-9);
    assert_non_null(strstr(agg->error, "98.0%"));
    /* the flows themselves are honest rates over their own windows */
    const gq_record *f0 = find(&rs, false, false, -1, 0), *f1 = find(&rs, false, false, -1, 1);
    assert_true(f0->valid && f1->valid);
    assert_true(fabs(f0->value.median - 10.0) < 1e-6);
    assert_true(fabs(f1->value.median - 10.0) < 1e-6);
    assert_int_equal(agg->ngpus, 2);
    assert_int_equal(fake.released, 1);
    gq_records_free(&rs);
    free(m);
}

static void test_overlap_995_is_valid(void **state)
{
    gq_measurement *m = new_m("host_to_all_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, H(0), G(1), 1, true);
    m->aggregate = true;
    g_late = 0.005;
    fake.script = two_flows;
    gq_harness_opts o = fixed_opts(5);
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    const gq_record *agg = find(&rs, true, false, GQ_DIR_H2D, -1);
    assert_true(agg->valid);
    assert_int_equal(agg->flags & GQ_FLAG_OVERLAP, 0);
    assert_true(fabs(agg->overlap - 0.995) < 1e-9);
    assert_true(fabs(agg->value.median - 20.0) < 1e-6);
    assert_int_equal(agg->src.kind, GQ_EP_HOST);
    assert_int_equal(agg->src.index, 0);
    assert_int_equal(agg->dst.index, GQ_EP_MANY);
    gq_records_free(&rs);
    free(m);
}

static int g_numa_actual;
static void two_flows_numa(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    two_flows(call, o, f, n, res);
    for (int i = 0; i < n; i++)
        res[i].host_numa_actual = g_numa_actual;
}

/* An aggregate whose member's host buffer landed on another NUMA node than
 * asked is flagged misplaced, as the member is; on the node asked, not. */
static void test_aggregate_numa_misplaced(void **state)
{
    for (int node = 0; node < 2; node++) {
        gq_measurement *m = new_m("host_to_all_memcpy_ce");
        add(m, H(0), G(0), 0, true);
        add(m, H(0), G(1), 1, true);
        m->aggregate = true;
        g_late = 0.005;
        g_numa_actual = node;
        fake.script = two_flows_numa;
        gq_harness_opts o = fixed_opts(3);
        gq_recordset rs = {0};
        assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
        const gq_record *agg = find(&rs, true, false, GQ_DIR_H2D, -1);
        assert_non_null(agg);
        assert_int_equal(!!(agg->flags & GQ_FLAG_NUMA_MISPLACED), node == 1);
        assert_int_equal(agg->host_numa_actual, node);
        gq_records_free(&rs);
        free(m);
    }
}

/* The rule holds in every COUNTED round. A round that breaks it is not
 * counted and is run again, at most GQ_HARNESS_OVERLAP_RETRIES times per
 * measurement, and the records say so; a round that still breaks it after
 * that is counted and makes the aggregate invalid. */
static int g_bad_from, g_bad_to; /* calls [from, to) have a late second flow */
static void bad_rounds(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    double late = call >= g_bad_from && call < g_bad_to ? 0.03 : 0.0;
    win(&res[0], 0.0, 1.0, 10.0);
    win(&res[1], late, 1.0, 10.0);
}

static const gq_record *measure_two_d2h(int bad_from, int bad_to, gq_recordset *rs, int *calls)
{
    gq_measurement *m = new_m("all_to_host_memcpy_ce");
    add(m, G(0), H(0), 0, true);
    add(m, G(1), H(0), 1, true);
    m->aggregate = true;
    g_bad_from = bad_from;
    g_bad_to = bad_to;
    fake.script = bad_rounds;
    fake.calls = 0;
    gq_harness_opts o = fixed_opts(5);
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, rs, NULL, NULL), GQ_OK);
    *calls = fake.calls;
    free(m);
    return find(rs, true, false, GQ_DIR_D2H, -1);
}

static void test_overlap_bad_round_run_again(void **state)
{
    gq_recordset rs = {0};
    int calls0 = 0, calls1 = 0;
    /* all good: the reference count of run() calls */
    const gq_record *agg = measure_two_d2h(0, 0, &rs, &calls0);
    assert_true(agg->valid);
    assert_int_equal(agg->flags & GQ_FLAG_OVERLAP_RETRIED, 0);
    gq_records_free(&rs);
    /* one bad round: run once more, not counted; 5 rounds, all at full overlap */
    rs = (gq_recordset){0};
    agg = measure_two_d2h(3, 4, &rs, &calls1);
    assert_int_equal(calls1, calls0 + 1);
    assert_true(agg->valid);
    assert_true(agg->flags & GQ_FLAG_OVERLAP_RETRIED);
    assert_int_equal(agg->rounds, 5);
    assert_true(fabs(agg->overlap - 1.0) < 1e-9);
    for (int i = 0; i < rs.n; i++) /* every record of the measurement says so */
        assert_true(rs.v[i].flags & GQ_FLAG_OVERLAP_RETRIED);
    gq_records_free(&rs);
}

static void test_overlap_retries_are_bounded(void **state)
{
    gq_recordset rs = {0};
    int calls0 = 0, calls = 0;
    measure_two_d2h(0, 0, &rs, &calls0);
    gq_records_free(&rs);
    /* every round from the third on is bad: 2 re-runs, then the bad round counts */
    rs = (gq_recordset){0};
    const gq_record *agg = measure_two_d2h(3, 1000, &rs, &calls);
    assert_int_equal(calls, calls0 + GQ_HARNESS_OVERLAP_RETRIES);
    assert_false(agg->valid);
    assert_true(agg->flags & GQ_FLAG_OVERLAP);
    assert_true(agg->flags & GQ_FLAG_OVERLAP_RETRIED);
    assert_true(fabs(agg->overlap - 0.97) < 1e-9);
    gq_records_free(&rs);
}

/* ---- directions kept apart ----------------------------------------------- */

static void four_flows(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    /* h2d 16.5 and d2h 19.7 per GPU, seed 000's single-GPU figures */
    for (int i = 0; i < n; i++)
        win(&res[i], 0.0, 2.0, 2.0 * (f[i].src.kind == GQ_EP_HOST ? 16.5 : 19.7));
}

static void test_direction_sums(void **state)
{
    gq_measurement *m = new_m("bidirectional_set");
    add(m, H(0), G(0), 0, true);
    add(m, G(0), H(0), 0, true);
    add(m, H(0), G(1), 1, true);
    add(m, G(1), H(0), 1, true);
    m->aggregate = true;
    m->direction_sums = true;
    fake.script = four_flows;
    gq_harness_opts o = fixed_opts(3);
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(rs.n, 4 + 2 + 1);
    const gq_record *h = find(&rs, true, false, GQ_DIR_H2D, -1), *d = find(&rs, true, false, GQ_DIR_D2H, -1);
    const gq_record *s = find(&rs, false, true, -1, -1);
    assert_non_null(h);
    assert_non_null(d);
    assert_non_null(s);
    assert_true(fabs(h->value.median - 33.0) < 1e-6);
    assert_true(fabs(d->value.median - 39.4) < 1e-6);
    assert_true(fabs(s->value.median - 72.4) < 1e-6);
    assert_true(s->sum && !s->aggregate && s->valid);
    assert_int_equal(s->dirs, (1u << GQ_DIR_H2D) | (1u << GQ_DIR_D2H));
    assert_int_equal(h->dirs, 1u << GQ_DIR_H2D);
    gq_records_free(&rs);
    free(m);
}

static void p2p_pair(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    win(&res[0], 0.0, 1.0, 389.4);
    win(&res[1], 0.0, 1.0, 389.5);
}

/* A P2P pair both ways: the flows are the directions; one sum record. */
static void test_p2p_pair_sum(void **state)
{
    gq_measurement *m = new_m("device_to_device_bidirectional_memcpy_read_ce");
    add(m, G(1), G(0), 0, true);
    add(m, G(0), G(1), 1, true);
    m->direction_sums = true;
    fake.script = p2p_pair;
    gq_harness_opts o = fixed_opts(2);
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(rs.n, 3);
    const gq_record *s = find(&rs, false, true, -1, -1);
    assert_non_null(s);
    assert_true(fabs(s->value.median - 778.9) < 1e-6);
    assert_null(find(&rs, true, false, -1, -1));
    gq_records_free(&rs);
    free(m);
}

/* The interfering direction runs but is not reported (nvbandwidth's
 * *_bidirectional_* tests); its window still counts for the overlap. */
static void test_interferer_not_reported(void **state)
{
    gq_measurement *m = new_m("host_to_device_bidirectional_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, G(0), H(0), 0, false);
    fake.script = four_flows;
    gq_harness_opts o = fixed_opts(2);
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(rs.n, 1);
    assert_int_equal(rs.v[0].direction, GQ_DIR_H2D);
    assert_true(fabs(rs.v[0].value.median - 16.5) < 1e-6);
    assert_true(fabs(rs.v[0].overlap - 1.0) < 1e-12);
    gq_records_free(&rs);
    free(m);
}

/* ---- statistics and rounds ----------------------------------------------- */

static const double seq[] = {10, 12, 11, 13, 9, 11, 11, 11, 11, 11};
static double g_scale[64];

static void seq_rates(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    for (int i = 0; i < n; i++)
        win(&res[i], 0.0, 1.0, seq[call % 10] * (g_scale[call] ? g_scale[call] : 1.0));
}

static void test_statistics(void **state)
{
    gq_measurement *m = new_m("host_to_device_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    fake.script = seq_rates;
    gq_harness_opts o = fixed_opts(5);
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(rs.n, 1);
    const gq_record *r = &rs.v[0];
    assert_int_equal(r->rounds, 5);
    assert_int_equal(r->value.n, 5);
    assert_true(fabs(r->value.median - 11) < 1e-9);
    assert_true(fabs(r->value.min - 9) < 1e-9);
    assert_true(fabs(r->value.max - 13) < 1e-9);
    assert_true(fabs(r->value.spread - 4.0 / 11.0) < 1e-9);
    assert_true(fabs(r->samples[3] - 13) < 1e-9);
    assert_true(r->overlap < 0); /* one flow: n/a */
    gq_records_free(&rs);
    free(m);
}

static void flat(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    for (int i = 0; i < n; i++)
        win(&res[i], 0.0, 1.0, 25.0 + 0.01 * (call % 2));
}

static void test_early_stop(void **state)
{
    gq_measurement *m = new_m("host_to_device_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    fake.script = flat;
    gq_harness_opts o = fixed_opts(10);
    o.spread_target = 0.005;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(rs.v[0].rounds, 3);
    assert_int_equal(fake.calls, 3);
    assert_int_equal(rs.v[0].flags & GQ_FLAG_SPREAD, 0);
    gq_records_free(&rs);
    free(m);
}

static void test_spread_never_met(void **state)
{
    gq_measurement *m = new_m("host_to_device_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    fake.script = seq_rates;
    gq_harness_opts o = fixed_opts(5);
    o.spread_target = 0.01;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(rs.v[0].rounds, 5);
    assert_true(rs.v[0].flags & GQ_FLAG_SPREAD);
    assert_true(rs.v[0].valid); /* a wide spread is reported, not hidden */
    gq_records_free(&rs);
    free(m);
}

/* ---- the sanity guard ---------------------------------------------------- */

static double g_rate;
static void rate_flows(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    for (int i = 0; i < n; i++)
        win(&res[i], 0.0, 1.0, g_rate);
}

static void gen4_topo(void)
{
    for (int g = 0; g < 2; g++) {
        topo.gpu[g].pcie_gen_cur = 4;
        topo.gpu[g].pcie_width_cur = 16;
        topo.gpu[g].pcie_gbps = gq_pcie_gbps(4, 16);
    }
}

static void test_impossible_flow(void **state)
{
    gen4_topo();
    gq_measurement *m = new_m("host_to_device_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    g_rate = 37.0;
    fake.script = rate_flows;
    gq_harness_opts o = fixed_opts(3);
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    const gq_record *r = &rs.v[0];
    assert_false(r->valid);
    assert_true(r->flags & GQ_FLAG_IMPOSSIBLE);
    assert_non_null(strstr(r->error, "31.5"));
    assert_true(fabs(r->capacity_gbps - 31.5077) < 1e-3);
    gq_records_free(&rs);
    free(m);
}

/* Seed 000's mistake: two GPUs behind one Gen4 x16 uplink; each figure fits
 * its own link, their sum does not fit the uplink. */
static void test_impossible_aggregate_uplink(void **state)
{
    gen4_topo();
    topo.npci = 4;
    topo.pci[0] = (gq_pci_node){.kind = GQ_PCI_HOSTBRIDGE, .parent = -1, .gpu = -1, .numa_node = 0};
    topo.pci[1] = (gq_pci_node){.kind = GQ_PCI_BRIDGE,
                                .parent = 0,
                                .gpu = -1,
                                .numa_node = 0,
                                .bus_id = "0000:3a:00.0",
                                .link_gbps = gq_pcie_gbps(4, 16)};
    topo.pci[2] = (gq_pci_node){.kind = GQ_PCI_GPU, .parent = 1, .gpu = 0, .numa_node = 0};
    topo.pci[3] = (gq_pci_node){.kind = GQ_PCI_GPU, .parent = 1, .gpu = 1, .numa_node = 0};
    gq_measurement *m = new_m("host_to_device_set");
    add(m, H(0), G(0), 0, true);
    add(m, H(0), G(1), 1, true);
    m->aggregate = true;
    g_rate = 18.5;
    fake.script = rate_flows;
    gq_harness_opts o = fixed_opts(3);
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    const gq_record *agg = find(&rs, true, false, GQ_DIR_H2D, -1);
    assert_true(fabs(agg->value.median - 37.0) < 1e-6);
    assert_false(agg->valid);
    assert_true(agg->flags & GQ_FLAG_IMPOSSIBLE);
    assert_non_null(strstr(agg->error, "0000:3a:00.0"));
    assert_true(find(&rs, false, false, -1, 0)->valid);
    assert_true(find(&rs, false, false, -1, 1)->valid);
    gq_records_free(&rs);
    free(m);
}

/* ---- integrity and errors ------------------------------------------------ */

static void bad_pattern(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    for (int i = 0; i < n; i++) {
        win(&res[i], 0.0, 1.0, 20.0);
        if (o->verify) {
            res[i].verified = true;
            res[i].verify_ok = i != 0;
            res[i].bad_offset = 4096;
        }
    }
}

static void test_verify_failure(void **state)
{
    gq_measurement *m = new_m("device_to_host_memcpy_ce");
    add(m, G(0), H(0), 0, true);
    add(m, G(1), H(0), 1, true);
    m->aggregate = true;
    fake.script = bad_pattern;
    gq_harness_opts o = fixed_opts(3);
    o.verify = true;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(fake.calls, 4); /* 3 timed rounds, then the check */
    assert_false(fake.opts[0].verify);
    assert_true(fake.opts[3].verify);
    const gq_record *f0 = find(&rs, false, false, -1, 0), *f1 = find(&rs, false, false, -1, 1);
    assert_false(f0->valid);
    assert_true(f0->flags & GQ_FLAG_VERIFY_FAILED);
    assert_non_null(strstr(f0->error, "4096"));
    assert_true(f1->valid);
    const gq_record *agg = find(&rs, true, false, -1, -1);
    assert_false(agg->valid);
    assert_true(agg->flags & GQ_FLAG_VERIFY_FAILED);
    gq_records_free(&rs);
    free(m);
}

static void verify_run_fails(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    for (int i = 0; i < n; i++)
        win(&res[i], 0.0, 1.0, 20.0);
    if (o->verify) {
        res[0].status = GQ_E_BACKEND;
        snprintf(res[0].error, sizeof res[0].error, "lost the context");
    }
}

/* A flow whose data-check run fails is not a valid figure. */
static void test_verify_run_failure(void **state)
{
    gq_measurement *m = new_m("device_to_host_memcpy_ce");
    add(m, G(0), H(0), 0, true);
    add(m, G(1), H(0), 1, true);
    m->aggregate = true;
    fake.script = verify_run_fails;
    gq_harness_opts o = fixed_opts(3);
    o.verify = true;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    const gq_record *f0 = find(&rs, false, false, -1, 0), *f1 = find(&rs, false, false, -1, 1);
    assert_false(f0->valid);
    assert_non_null(strstr(f0->error, "data check run: lost the context"));
    assert_true(f1->valid);
    const gq_record *agg = find(&rs, true, false, -1, -1);
    assert_false(agg->valid);
    gq_records_free(&rs);
    free(m);
}

static void pages_on_node_1(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    for (int i = 0; i < n; i++) {
        win(&res[i], 0.0, 1.0, 20.0);
        res[i].host_numa_actual = 1;
    }
}

/* Host memory "local to the GPU" found on another NUMA node is flagged; on
 * the GPU's own node it is not. */
static void test_numa_misplaced_local(void **state)
{
    topo.gpu[0].numa_node = 0;
    gq_measurement *m = new_m("host_to_device_memcpy_ce");
    add(m, H(-1), G(0), 0, true); /* host:local */
    fake.script = pages_on_node_1;
    gq_harness_opts o = fixed_opts(2);
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(rs.v[0].host_numa_actual, 1);
    assert_true(rs.v[0].flags & GQ_FLAG_NUMA_MISPLACED);
    gq_records_free(&rs);
    topo.gpu[0].numa_node = 1;
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_false(rs.v[0].flags & GQ_FLAG_NUMA_MISPLACED);
    gq_records_free(&rs);
    free(m);
}

static void flow1_dies(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    win(&res[0], 0.0, 1.0, 20.0);
    if (call >= 2) {
        res[1].status = GQ_E_BACKEND;
        snprintf(res[1].error, sizeof res[1].error,
                 "cudaMemcpyAsync: an illegal memory access was encountered");
    } else {
        win(&res[1], 0.0, 1.0, 20.0);
    }
}

static void test_per_flow_error(void **state)
{
    gq_measurement *m = new_m("host_to_all_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, H(0), G(1), 1, true);
    m->aggregate = true;
    fake.script = flow1_dies;
    gq_harness_opts o = fixed_opts(5);
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    const gq_record *f0 = find(&rs, false, false, -1, 0), *f1 = find(&rs, false, false, -1, 1);
    assert_true(f0->valid);
    assert_int_equal(f0->rounds, 5);
    assert_false(f1->valid);
    assert_true(f1->flags & GQ_FLAG_ERROR);
    assert_non_null(strstr(f1->error, "illegal memory access"));
    assert_int_equal(f1->rounds, 2);
    const gq_record *agg = find(&rs, true, false, -1, -1);
    assert_false(agg->valid);
    assert_true(agg->flags & GQ_FLAG_ERROR);
    gq_records_free(&rs);
    free(m);
}

static void test_prepare_failure(void **state)
{
    gq_measurement *m = new_m("host_to_all_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, H(0), G(1), 1, true);
    m->aggregate = true;
    fake.prepare_rc = GQ_E_BACKEND;
    fake.script = flat;
    gq_harness_opts o = fixed_opts(5);
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, &err), GQ_E_BACKEND);
    assert_non_null(strstr(err.msg, "out of memory"));
    assert_int_equal(rs.n, 3); /* nothing silently dropped */
    for (int i = 0; i < rs.n; i++) {
        assert_false(rs.v[i].valid);
        assert_true(rs.v[i].flags & GQ_FLAG_ERROR);
        assert_non_null(strstr(rs.v[i].error, "cudaMalloc"));
    }
    assert_int_equal(fake.calls, 0);
    gq_records_free(&rs);
    free(m);
}

static void test_whole_run_failure(void **state)
{
    gq_measurement *m = new_m("host_to_device_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    fake.script = flat;
    fake.fail_call = 2;
    gq_harness_opts o = fixed_opts(5);
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, &err), GQ_E_BACKEND);
    assert_int_equal(rs.n, 1);
    assert_false(rs.v[0].valid);
    assert_int_equal(rs.v[0].rounds, 2);
    assert_non_null(strstr(rs.v[0].error, "fell off the bus"));
    assert_int_equal(fake.released, 1);
    gq_records_free(&rs);
    free(m);
}

/* ---- interruption and the journal --------------------------------------- */

static void interrupt_in_round_2(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    flat(call, o, f, n, res);
    if (call == 1)
        gq_interrupt_request();
}

static void test_interrupt_keeps_finished_rounds(void **state)
{
    gq_measurement *m = new_m("host_to_device_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    fake.script = interrupt_in_round_2;
    gq_harness_opts o = fixed_opts(5);
    o.verify = true;
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, &err), GQ_E_INTR);
    assert_int_equal(rs.n, 1);
    assert_int_equal(rs.v[0].rounds, 2);
    assert_true(rs.v[0].flags & GQ_FLAG_INCOMPLETE);
    assert_int_equal(fake.calls, 2); /* no further round, no data check */
    /* the next measurement refuses to start */
    gq_recordset rs2 = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs2, NULL, &err), GQ_E_INTR);
    assert_int_equal(rs2.n, 0);
    gq_interrupt_clear();
    gq_records_free(&rs);
    free(m);
}

static void interrupt_in_calibration(int call, const gq_run_opts *o, const gq_flow *f, int n,
                                     gq_flow_result *res)
{
    flat(call, o, f, n, res);
    gq_interrupt_request(); /* during the warm-up: no timed round ever runs */
}

static void test_interrupt_before_any_round(void **state)
{
    gq_measurement *m = new_m("host_to_device_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    fake.script = interrupt_in_calibration;
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, &err), GQ_E_INTR);
    assert_int_equal(rs.n, 0); /* nothing measured: no record claims otherwise */
    assert_int_equal(fake.released, 1);
    gq_interrupt_clear();
    free(m);
}

static void test_journal_gets_every_record(void **state)
{
    char path[] = "/tmp/gq-test-harness-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    gq_journal j;
    assert_int_equal(gq_journal_open(&j, path, NULL, NULL), GQ_OK);
    gq_measurement *m = new_m("bidirectional_set");
    add(m, H(0), G(0), 0, true);
    add(m, G(0), H(0), 0, true);
    m->aggregate = true;
    m->direction_sums = true;
    fake.script = four_flows;
    gq_harness_opts o = fixed_opts(2);
    gq_recordset rs = {0}, back = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, &j, NULL), GQ_OK);
    assert_int_equal(j.written, rs.n);
    gq_journal_close(&j);
    bool trunc = true;
    assert_int_equal(gq_journal_read(path, &back, &trunc, NULL), GQ_OK);
    assert_false(trunc);
    assert_int_equal(back.n, rs.n);
    assert_true(back.v[4].sum);
    gq_records_free(&rs);
    gq_records_free(&back);
    unlink(path);
    free(m);
}

/* A journal that cannot be written: the records are still kept, and the
 * measurement says the journal failed. */
static void test_journal_write_fails(void **state)
{
    gq_journal j;
    memset(&j, 0, sizeof j); /* not open: every append fails */
    gq_measurement *m = new_m("host_to_device_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    fake.script = flat;
    gq_harness_opts o = fixed_opts(2);
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, &j, &err), GQ_E_IO);
    assert_string_equal(err.msg, "journal: journal is not open");
    assert_int_equal(rs.n, 1);
    assert_int_equal(j.written, 0);
    gq_records_free(&rs);
    free(m);
}

/* ---- provenance and the round length ------------------------------------ */

static void numa_one(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    win(&res[0], 5.0, 5.5, 5.0);
    res[0].host_numa_actual = 0;
}

static void test_provenance(void **state)
{
    topo.gpu[1].numa_node = 1;
    gq_measurement *m = new_m("host_to_device_memcpy_sm");
    add(m, H(1), G(1), 1, true);
    m->flows[0].method = GQ_METHOD_SM;
    fake.script = numa_one;
    gq_harness_opts o = fixed_opts(2);
    gq_recordset rs = {0};
    double before = gq_now_unix();
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    const gq_record *r = &rs.v[0];
    assert_string_equal(r->test, "host_to_device_memcpy_sm");
    assert_int_equal(r->method, GQ_METHOD_SM);
    assert_int_equal(r->src.kind, GQ_EP_HOST);
    assert_int_equal(r->dst.index, 1);
    assert_int_equal(r->direction, GQ_DIR_H2D);
    assert_int_equal(r->bytes, 256 * GQ_MiB);
    assert_int_equal(r->rounds, 2);
    assert_int_equal(r->exec_gpu, 1);
    assert_int_equal(r->host_numa_req, 1);
    assert_int_equal(r->host_numa_actual, 0);
    assert_true(r->flags & GQ_FLAG_NUMA_MISPLACED);
    assert_true(fabs(r->window_s - 0.5) < 1e-12);
    assert_true(r->timestamp >= before - 1);
    assert_true(r->simulated);
    assert_int_equal(r->ngpus, 1);
    assert_int_equal(rs.v[1].group, r->group + 1);
    gq_records_free(&rs);
    free(m);
}

/* On a real backend a flow's record is simulated when the topology is (a
 * simulated machine's topology driven through a real seam), else not. */
static void test_simulated_from_the_topology(void **state)
{
    gq_backend_ops real = fake_ops;
    real.flags = 0;
    gq_backend rb = {.ops = &real};
    for (int sim = 0; sim < 2; sim++) {
        gq_measurement *m = new_m("host_to_device_memcpy_ce");
        add(m, H(0), G(0), 0, true);
        gq_harness_opts o = fixed_opts(2);
        gq_recordset rs = {0};
        topo.simulated = sim;
        fake.script = flat;
        assert_int_equal(gq_harness_measure(&rb, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
        assert_int_equal(rs.n, 1);
        assert_int_equal(rs.v[0].simulated, sim);
        gq_records_free(&rs);
        free(m);
    }
}

static void copy_time(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    /* 25 GB/s, 256 MiB copies: each copy takes 10.7 ms */
    double t_copy = (double)f[0].bytes / 25e9;
    int reps = o->reps > 0 ? o->reps : 1;
    win(&res[0], 0.0, reps * t_copy, reps * (double)f[0].bytes / 1e9);
    res[0].copies_done = reps;
}

static void test_auto_reps(void **state)
{
    gen4_topo();
    gq_measurement *m = new_m("host_to_device_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    fake.script = copy_time;
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.verify = false;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(fake.opts[0].reps, 1); /* the warm-up copy */
    double t_copy = (double)(256 * GQ_MiB) / 25e9;
    int want = (int)ceil(GQ_HARNESS_ROUND_S / t_copy);
    assert_int_equal(fake.opts[1].reps, want);
    assert_true(fake.opts[1].duration_s == 0);
    assert_int_equal(rs.v[0].rounds, 5);
    assert_true(fabs(rs.v[0].value.median - 25.0) < 1e-6);
    gq_records_free(&rs);
    free(m);
}

/* A warm-up that gave no copy time (a transient error, or a window of no
 * length), then copies at 25 GB/s. */
static int g_warm_fault; /* 1: the copy failed; 2: its window has no length */
static void warmup_fails_once(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    copy_time(call, o, f, n, res);
    if (call == 0 && g_warm_fault == 1) {
        res[0].status = GQ_E_BACKEND;
        snprintf(res[0].error, sizeof res[0].error, "transient copy failure");
    } else if (call == 0) {
        res[0].t_end = res[0].t_start;
    }
}

/* With no copy time from the warm-up, the first round is sized from the
 * path's capacity alone: the copy at the Gen4 x16 link's 31.5 GB/s, the
 * round GQ_HARNESS_ROUND_COPIES such copies (within half the target round
 * and the target), so as many copies as fit; with no capacity known, one
 * copy. Either way the rounds then measure the flow. */
static void test_auto_reps_after_failed_warmup(void **state)
{
    for (int fault = 1; fault <= 2; fault++)
        for (int known = 1; known >= 0; known--) {
            setup(state);
            if (known)
                gen4_topo();
            gq_measurement *m = new_m("host_to_device_memcpy_ce");
            add(m, H(0), G(0), 0, true);
            fake.script = warmup_fails_once;
            g_warm_fault = fault;
            gq_harness_opts o;
            gq_harness_opts_default(&o);
            o.verify = false;
            gq_recordset rs = {0};
            assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
            assert_int_equal(fake.opts[0].reps, 1); /* the warm-up copy */
            int want = 1;
            if (known) {
                double cap = gq_sanity_flow_capacity(&topo, &m->flows[0], NULL, 0);
                assert_true(fabs(cap - gq_pcie_gbps(4, 16)) < 1e-9);
                double t_cap = (double)m->flows[0].bytes / (cap * GQ_GB);
                double T = GQ_HARNESS_ROUND_S, r = GQ_HARNESS_ROUND_COPIES * t_cap;
                T = r < 0.5 * T ? 0.5 * T : r > T ? T : r;
                want = (int)ceil(T / t_cap);
                assert_true(want > 1);
            }
            if (fake.opts[1].reps != want || fake.opts[1].duration_s != 0)
                fail_msg("warm-up fault %d, capacity %s: the first round asked %d copies (%g s), expected %d",
                         fault, known ? "known" : "unknown", fake.opts[1].reps, fake.opts[1].duration_s,
                         want);
            assert_true(rs.v[0].valid);
            assert_true(fabs(rs.v[0].value.median - 25.0) < 1e-6);
            gq_records_free(&rs);
            free(m);
        }
}

static void coarse_overlap(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    /* copy times 10 ms and 12.5 ms: unequal, so a common count cannot end
     * the windows together; by duration, windows end at the last whole
     * copy, or at the last whole piece when the harness asks for a grain */
    double ct[2] = {0.010, 0.0125};
    for (int i = 0; i < 2; i++) {
        double bytes = (double)f[i].bytes;
        double piece = o->duration_s > 0 && o->grain && o->grain[i] ? (double)o->grain[i] : bytes;
        double pt = ct[i] * piece / bytes;
        double d = o->duration_s > 0 ? o->duration_s : o->reps * ct[i];
        double k = floor(d / pt + 1e-9);
        win(&res[i], 0.0, k * pt, k * piece / 1e9);
        res[i].copies_done = (int)floor(k * piece / bytes + 1e-9);
    }
}

static void test_auto_duration_for_unequal_flows(void **state)
{
    gq_measurement *m = new_m("bidirectional_set");
    add(m, H(0), G(0), 0, true);
    add(m, G(0), H(0), 0, true);
    m->direction_sums = true;
    fake.script = coarse_overlap;
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.verify = false;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    /* calibration: one copy each, then a counted round that ends 20% apart */
    assert_int_equal(fake.opts[0].reps, 1);
    assert_int_equal(fake.opts[1].reps, (int)ceil(GQ_HARNESS_ROUND_S / 0.0125));
    assert_int_equal(fake.opts[2].reps, 0);
    /* so by duration, in pieces of ~0.2% of a round each (whole MiB): the
     * rounds stay GQ_HARNESS_ROUND_S long */
    assert_true(fabs(fake.opts[2].duration_s - GQ_HARNESS_ROUND_S) < 1e-12);
    for (int i = 0; i < 2; i++) {
        double rate = 256.0 * GQ_MiB / (i == 0 ? 0.010 : 0.0125);
        uint64_t want = (uint64_t)(rate * GQ_HARNESS_GRAIN * GQ_HARNESS_ROUND_S) / GQ_MiB * GQ_MiB;
        if (want < GQ_HARNESS_MIN_PIECE)
            want = GQ_HARNESS_MIN_PIECE;
        assert_int_equal(fake.grain[2][i], want);
        assert_true(fake.grain[2][i] < m->flows[i].bytes);
    }
    /* the counted round missed the rule: it is not kept */
    assert_int_equal(fake.calls, 2 + 5);
    const gq_record *s_ = find(&rs, false, true, -1, -1);
    assert_true(s_->valid);
    assert_true(s_->overlap >= GQ_OVERLAP_MIN);
    assert_int_equal(s_->rounds, 5);
    /* each flow's rate is its own: 25.6 and 20.5 GB/s (256 MiB per 10 / 12.5 ms) */
    assert_true(fabs(find(&rs, false, false, GQ_DIR_H2D, -1)->value.median - 256.0 * GQ_MiB / 0.010 / 1e9) <
                0.01);
    gq_records_free(&rs);
    free(m);
}

/* One reported flow and an interferer whose counted windows end apart (the
 * interferer stops at half the reported flow's window); by duration both run
 * to the deadline. g_ct is the reported flow's copy time. */
static double g_ct;
static void one_reported(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    double d = o->duration_s > 0 ? o->duration_s : o->reps * g_ct;
    win(&res[0], 0.0, d, 25.6 * d);
    win(&res[1], 0.0, o->duration_s > 0 ? d : 0.5 * d, 12.8 * d);
    res[0].copies_done = o->duration_s > 0 ? (int)floor(d / g_ct + 1e-9) : o->reps;
    res[1].copies_done = res[0].copies_done;
}

/* One reported flow whose counted round misses the overlap rule runs by
 * duration, GQ_HARNESS_MIN_COPIES copies long: 10 x 0.2 s = 2 s; with 1 s
 * copies, 10 s is capped at GQ_HARNESS_MAX_ROUND_S. */
static void test_one_reported_flow_duration(void **state)
{
    const double ct[2] = {0.2, 1.0}, want[2] = {2.0, GQ_HARNESS_MAX_ROUND_S};
    for (int k = 0; k < 2; k++) {
        memset(&fake, 0, sizeof fake);
        fake.fail_call = -1;
        gq_measurement *m = new_m("host_to_device_bidirectional_memcpy_ce");
        add(m, H(0), G(0), 0, true);
        add(m, G(0), H(0), 0, false);
        fake.script = one_reported;
        g_ct = ct[k];
        gq_harness_opts o;
        gq_harness_opts_default(&o);
        o.verify = false;
        o.rounds = 2;
        gq_recordset rs = {0};
        assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
        assert_int_equal(fake.opts[0].reps, 1);
        assert_true(fake.opts[1].reps >= 1 && fake.opts[1].duration_s == 0);
        assert_int_equal(fake.opts[2].reps, 0);
        if (fabs(fake.opts[2].duration_s - want[k]) > 1e-9)
            fail_msg("copy time %g s: rounds of %g s, want %g s", ct[k], fake.opts[2].duration_s, want[k]);
        gq_records_free(&rs);
        free(m);
    }
}

/* Equal copy times in calibration (the counted round is kept), then the D2H
 * flow runs 4 % slower from the third call on, as real host paths drift from
 * round to round: counted, its window ends 4 % after the other's; by
 * duration (in pieces) both windows end together at the deadline. */
static void drift_apart(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    for (int i = 0; i < 2; i++) {
        double c = 256.0 * GQ_MiB / 25e9 * (call >= 2 && i == 1 ? 1.04 : 1.0); /* s per copy */
        if (o->reps > 0) {
            win(&res[i], 0.0, o->reps * c, o->reps * 256.0 * GQ_MiB / 1e9);
            res[i].copies_done = o->reps;
        } else {
            double piece = o->grain && o->grain[i] ? (double)o->grain[i] : 256.0 * GQ_MiB;
            double pt = c * piece / (256.0 * GQ_MiB);
            double k = floor(o->duration_s / pt);
            win(&res[i], 0.0, k * pt, k * piece / 1e9);
            res[i].copies_done = (int)(k * piece / (256.0 * GQ_MiB));
        }
    }
}

/* A counted group whose flows drift apart after calibration: the first
 * round that misses the overlap rule is not counted, and the rest run by
 * duration in pieces sized from that round's copy times; the aggregate is
 * valid, and its records say a round was run again. */
static void test_counted_rounds_drift_switch_to_duration(void **state)
{
    gq_measurement *m = new_m("bidirectional_set");
    add(m, H(0), G(0), 0, true);
    add(m, G(0), H(0), 0, true);
    m->direction_sums = true;
    fake.script = drift_apart;
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.verify = false;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_true(fake.opts[1].reps > 0); /* the counted calibration round, kept */
    assert_true(fake.opts[2].reps > 0); /* a counted round: 96 % overlap, not kept */
    assert_int_equal(fake.opts[3].reps, 0);
    assert_true(fake.opts[3].duration_s >= GQ_HARNESS_ROUND_S - 1e-12);
    assert_true(fake.grain[3][0] > 0 && fake.grain[3][0] < m->flows[0].bytes);
    assert_true(fake.grain[3][1] > 0 && fake.grain[3][1] < m->flows[1].bytes);
    /* calibration's warm-up, its kept round, the round given up, 4 by duration */
    assert_int_equal(fake.calls, 2 + 1 + 4);
    const gq_record *s_ = find(&rs, false, true, -1, -1);
    assert_true(s_->valid);
    assert_int_equal(s_->rounds, 5);
    assert_true(s_->overlap >= GQ_OVERLAP_MIN);
    assert_true(s_->flags & GQ_FLAG_OVERLAP_RETRIED);
    assert_false(s_->flags & GQ_FLAG_OVERLAP);
    gq_records_free(&rs);
    free(m);
}

/* With a count the user gave (nvbandwidth's loop count), the mode is the
 * user's: a round that misses the rule is run again, never by duration. */
static void test_user_count_keeps_counting(void **state)
{
    gq_measurement *m = new_m("bidirectional_set");
    add(m, H(0), G(0), 0, true);
    add(m, G(0), H(0), 0, true);
    m->direction_sums = true;
    fake.script = drift_apart;
    gq_harness_opts o = fixed_opts(4);
    o.reps = 8;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    for (int k = 0; k < fake.calls; k++)
        assert_true(fake.opts[k].reps > 0);
    const gq_record *s_ = find(&rs, false, true, -1, -1);
    assert_false(s_->valid);
    assert_true(s_->flags & GQ_FLAG_OVERLAP);
    gq_records_free(&rs);
    free(m);
}

/* Rounds whose windows end 1.04 % apart fail the 99 % rule; the message
 * rounds down, so it never reads "overlap 99.0% < 99%". */
static void ends_apart_1pct(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    win(&res[0], 0.0, 1.0, 10.0);
    win(&res[1], 0.0, 1.0105, 10.0);
}

static void test_overlap_message_rounds_down(void **state)
{
    gq_measurement *m = new_m("device_to_host_memcpy_ce");
    add(m, G(0), H(0), 0, true);
    add(m, G(1), H(0), 1, true);
    m->aggregate = true;
    fake.script = ends_apart_1pct;
    gq_harness_opts o = fixed_opts(2);
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    const gq_record *agg = find(&rs, true, false, GQ_DIR_D2H, -1);
    assert_false(agg->valid);
    assert_true(agg->overlap > 0.9895 && agg->overlap < 0.99);
    assert_non_null(strstr(agg->error, "overlap 98.9% < 99%"));
    assert_null(strstr(agg->error, "99.0%"));
    /* the aggregate's endpoint reads as every GPU, never the placeholder */
    char b[24];
    assert_string_equal(gq_endpoint_str(agg->src, b, sizeof b), "gpu:*");
    gq_records_free(&rs);
    free(m);
}

static void same_copy_time(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    /* equal flows, 12 ms copies; interferers (2x the bytes) 24 ms */
    for (int i = 0; i < n; i++) {
        double ct = 0.012 * (double)f[i].bytes / (256.0 * GQ_MiB);
        double d = o->duration_s > 0 ? o->duration_s : o->reps * ct;
        int k = (int)floor(d / ct + 1e-9);
        win(&res[i], 0.0, k * ct, k * (double)f[i].bytes / 1e9);
        res[i].copies_done = k;
    }
}

static void test_auto_count_for_equal_flows(void **state)
{
    gq_measurement *m = new_m("host_to_all_bidirectional_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, H(0), G(1), 1, true);
    add(m, G(0), H(0), 0, false);
    add(m, G(1), H(0), 1, false);
    m->flows[2].bytes = m->flows[3].bytes = 512 * GQ_MiB;
    m->aggregate = true;
    fake.script = same_copy_time;
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.verify = false;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(fake.opts[0].reps, 1);
    assert_int_equal(fake.opts[1].reps, (int)ceil(GQ_HARNESS_ROUND_S / 0.012));
    assert_int_equal(fake.opts[2].reps, (int)ceil(GQ_HARNESS_ROUND_S / 0.012));
    assert_true(fake.opts[2].duration_s == 0);
    /* the counted calibration round met the rule: it is round 1 of 5 */
    assert_int_equal(fake.calls, 1 + 5);
    assert_int_equal(rs.n, 3);
    assert_int_equal(rs.v[0].rounds, 5);
    const gq_record *agg = find(&rs, true, false, GQ_DIR_H2D, -1);
    assert_true(agg->valid);
    assert_true(agg->overlap > 0.999);
    gq_records_free(&rs);
    free(m);
}

static void fast_equal(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    /* equal flows, 2 ms copies (an NVLink-class path) */
    for (int i = 0; i < n; i++) {
        int k = o->reps > 0 ? o->reps : (int)floor(o->duration_s / 0.002 + 1e-9);
        win(&res[i], 0.0, k * 0.002, k * (double)f[i].bytes / 1e9);
        res[i].copies_done = k;
    }
}

static void test_fast_paths_half_rounds(void **state)
{
    /* 10 copies take 20 ms: the round is held at half the target, 50 ms */
    gq_measurement *m = new_m("device_to_device_bidirectional_memcpy_read_ce");
    add(m, G(1), G(0), 0, true);
    add(m, G(0), G(1), 1, true);
    m->direction_sums = true;
    fake.script = fast_equal;
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.verify = false;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    int want = (int)ceil(0.5 * GQ_HARNESS_ROUND_S / 0.002);
    assert_int_equal(fake.opts[1].reps, want);
    assert_int_equal(fake.opts[2].reps, want);
    gq_records_free(&rs);
    free(m);
    /* a slow path's 10 copies exceed the target: the target holds */
    memset(&fake, 0, sizeof fake);
    fake.fail_call = -1;
    m = new_m("bidirectional_set");
    add(m, H(0), G(0), 0, true);
    add(m, G(0), H(0), 0, true);
    m->direction_sums = true;
    fake.script = coarse_overlap;
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(fake.opts[1].reps, (int)ceil(GQ_HARNESS_ROUND_S / 0.0125));
    gq_records_free(&rs);
    free(m);
}

static void short_interferer(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    win(&res[0], 0.0, 1.0, 16.5);
    win(&res[1], 0.0, 0.9, 18.0); /* stops before the measured flow does */
}

static void long_measured(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    win(&res[0], 0.0, 1.5, 15.0); /* runs half a round past the deadline */
    win(&res[1], 0.0, 0.9, 18.0);
}

/* By duration, an interferer counts as running until the deadline (start +
 * duration), not past it: a measured flow that runs on after the deadline is
 * not covered. */
static void test_interference_until_deadline(void **state)
{
    gq_measurement *m = new_m("host_to_device_bidirectional_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, G(0), H(0), 0, false);
    fake.script = long_measured;
    gq_harness_opts o = fixed_opts(2);
    o.reps = 0;
    o.duration_s = 1.0;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(rs.n, 1);
    assert_true(fabs(rs.v[0].overlap - 1.0 / 1.5) < 1e-9);
    assert_true(rs.v[0].flags & GQ_FLAG_OVERLAP);
    assert_false(rs.v[0].valid);
    gq_records_free(&rs);
    free(m);
}

static void test_interference_must_cover(void **state)
{
    gq_measurement *m = new_m("host_to_device_bidirectional_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, G(0), H(0), 0, false);
    fake.script = short_interferer;
    gq_harness_opts o = fixed_opts(3);
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(rs.n, 1);
    assert_false(rs.v[0].valid);
    assert_true(rs.v[0].flags & GQ_FLAG_OVERLAP);
    assert_true(fabs(rs.v[0].overlap - 0.9) < 1e-9);
    assert_non_null(strstr(rs.v[0].error, "interfering"));
    assert_non_null(strstr(rs.v[0].error, "during only 90.0% of the measured window (< 99%)"));
    gq_records_free(&rs);
    free(m);
}

static void local_copy(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    win(&res[0], 0.0, 1.0, 1000.0);
}

static void test_local_counts_bytes_once(void **state)
{
    gq_measurement *m = new_m("device_local_copy");
    add(m, G(0), G(0), 0, true);
    fake.script = local_copy;
    gq_harness_opts o = fixed_opts(1);
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(rs.v[0].direction, GQ_DIR_LOCAL);
    /* 1000 GB in 1 s: 1000 GB/s as copied, not doubled (nvbandwidth's meaning) */
    assert_true(fabs(rs.v[0].value.median - 1000.0) < 1e-6);
    gq_records_free(&rs);
    free(m);
}

/* A latency of 0 ns (or none) is an error, in the warm-up and in a round. */
static void test_latency_zero(void **state)
{
    gq_latency_req req = {
        .kind = GQ_LAT_POINTER_CHASE, .target = {GQ_EP_HOST, 0}, .exec_gpu = 0, .iters = 100};
    gq_harness_opts o = fixed_opts(3);
    o.warmup_reps = 1;
    for (int warm = 0; warm < 2; warm++) {
        memset(fake.lat, 0, sizeof fake.lat);
        fake.lat[0] = warm ? 5000 : 0; /* 0 in the warm-up, or in the first round */
        fake.nlat = 4;
        fake.lat_calls = 0;
        gq_recordset rs = {0};
        assert_int_equal(gq_harness_latency(&be, &topo, "host_device_latency_sm", &req, &o, &rs, NULL, NULL),
                         GQ_OK);
        assert_int_equal(rs.n, 1);
        assert_false(rs.v[0].valid);
        assert_true(rs.v[0].flags & GQ_FLAG_ERROR);
        assert_non_null(strstr(rs.v[0].error, "the backend returned no latency"));
        gq_records_free(&rs);
    }
}

static void test_latency(void **state)
{
    fake.lat[0] = 5000; /* the warm-up: cold, and not a sample */
    fake.lat[1] = 1200;
    fake.lat[2] = 1190;
    fake.lat[3] = 1210;
    fake.nlat = 4;
    gq_latency_req req = {
        .kind = GQ_LAT_POINTER_CHASE, .target = {GQ_EP_HOST, 0}, .exec_gpu = 1, .iters = 100};
    gq_harness_opts o = fixed_opts(3);
    o.warmup_reps = 1; /* the default */
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_latency(&be, &topo, "host_device_latency_sm", &req, &o, &rs, NULL, NULL),
                     GQ_OK);
    assert_int_equal(rs.n, 1);
    assert_true(rs.v[0].is_latency);
    assert_int_equal(fake.lat_calls, 1 + 3);
    assert_int_equal(fake.lat_iters[0], 10); /* a tenth of the loads */
    assert_int_equal(fake.lat_iters[1], 100);
    assert_true(fabs(rs.v[0].value.median - 1200) < 1e-9);
    assert_true(fabs(rs.v[0].value.max - 1210) < 1e-9);
    assert_int_equal(rs.v[0].exec_gpu, 1);
    assert_int_equal(rs.v[0].src.kind, GQ_EP_HOST);
    assert_int_equal(rs.v[0].dst.index, 1);

    gq_backend_ops nolat = fake_ops;
    nolat.latency = NULL;
    gq_backend b2 = {.ops = &nolat};
    gq_err err = {0};
    assert_int_equal(gq_harness_latency(&b2, &topo, "host_device_latency_sm", &req, &o, &rs, NULL, &err),
                     GQ_E_UNSUPP);
    assert_int_equal(rs.n, 2);
    assert_false(rs.v[1].valid);
    assert_true(rs.v[1].flags & GQ_FLAG_ERROR);
    gq_records_free(&rs);
}

static void test_bad_arguments(void **state)
{
    gq_measurement *m = new_m("x");
    gq_harness_opts o = fixed_opts(3);
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_not_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, &err), GQ_OK); /* no flows */
    add(m, H(0), G(0), 0, true);
    o.rounds = GQ_MAX_ROUNDS + 1;
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, &err), GQ_E_USAGE);
    assert_int_equal(rs.n, 0);
    free(m);
}

/* One flow, auto count: the warm-up copy takes 1 ms, the rounds' copies
 * g_round_copy each (the copy slowed down after the warm-up). */
static double g_round_copy;
static double g_round_win; /* > 0: every round's window, whatever the count */
static void slower_rounds(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    double ct = call == 0 ? 0.001 : g_round_copy;
    int k = o->reps > 0 ? o->reps : 1;
    double w = call > 0 && g_round_win > 0 ? g_round_win : k * ct;
    win(&res[0], 0.0, w, k * (double)f[0].bytes / 1e9);
    res[0].copies_done = k;
}

/* The count is corrected from the first real round: 50 copies of 1 ms were
 * asked (half the target round, 10 copies of 1 ms being shorter); 50 copies of
 * 4 ms took 200 ms, over twice the 50 ms round of 10 such copies, so the next
 * rounds ask for ceil(50 * 50 ms / 200 ms) = 13. */
static void test_auto_single_refit(void **state)
{
    gq_measurement *m = new_m("host_to_device_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    fake.script = slower_rounds;
    g_round_copy = 0.004;
    g_round_win = 0;
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.verify = false;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(fake.opts[0].reps, 1);
    assert_int_equal(fake.opts[1].reps, 50);
    assert_int_equal(fake.opts[2].reps, 13);
    gq_records_free(&rs);
    free(m);
}

/* A window of exactly twice the round is kept as it is: 50 copies in 100 ms
 * against a 50 ms round do not change the count. */
static void test_auto_single_refit_bound(void **state)
{
    gq_measurement *m = new_m("host_to_device_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    fake.script = slower_rounds;
    g_round_copy = 0.002;
    g_round_win = 0.1;
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.verify = false;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(fake.opts[1].reps, 50);
    assert_int_equal(fake.opts[2].reps, 50);
    /* and a window just over twice it is corrected: ceil(50 * 50 / 100.1) = 25 */
    memset(&fake, 0, sizeof fake);
    fake.fail_call = -1;
    fake.script = slower_rounds;
    g_round_win = 0.1001;
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(fake.opts[2].reps, 25);
    gq_records_free(&rs);
    free(m);
}

/* Two equal reported flows and an interferer that, counting copies, stops
 * half-way through their window: the counted calibration round does not
 * cover them (the interferer is not assumed to run on, as it would by
 * duration), so it is not kept and the rounds run by duration. */
static void early_interferer(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    for (int i = 0; i < n; i++) {
        double d = o->duration_s > 0 ? o->duration_s : (o->reps > 0 ? o->reps : 1) * 0.012;
        int k = (int)floor(d / 0.012 + 1e-9);
        double end = i == 2 && o->reps > 0 ? 0.5 * k * 0.012 : k * 0.012;
        win(&res[i], 0.0, end, k * (double)f[i].bytes / 1e9);
        res[i].copies_done = k;
    }
}

static void test_counted_round_interferer_not_extended(void **state)
{
    gq_measurement *m = new_m("host_to_all_bidirectional_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, H(0), G(1), 1, true);
    add(m, G(0), H(0), 0, false);
    m->aggregate = true;
    fake.script = early_interferer;
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.verify = false;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(fake.opts[1].reps, (int)ceil(GQ_HARNESS_ROUND_S / 0.012));
    assert_int_equal(fake.opts[2].reps, 0);
    assert_true(fake.opts[2].duration_s > 0);
    assert_int_equal(fake.calls, 2 + 5);
    gq_records_free(&rs);
    free(m);
}

/* Two equal flows whose counted windows end 0.4% apart: an overlap of 99.6%
 * meets the rule for keeping the counted round (99.5%), though rounds by
 * duration in 4 MiB pieces (0.19 ms of a 100 ms round) would promise 99.8%. */
static void nearly_together(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    for (int i = 0; i < n; i++) {
        double d = o->duration_s > 0 ? o->duration_s : (o->reps > 0 ? o->reps : 1) * 0.012;
        int k = (int)floor(d / 0.012 + 1e-9);
        double end = i == 1 && o->reps > 1 ? 0.996 * k * 0.012 : k * 0.012;
        win(&res[i], 0.0, end, k * (double)f[i].bytes / 1e9);
        res[i].copies_done = k;
    }
}

static void test_counted_round_kept_at_995(void **state)
{
    gq_measurement *m = new_m("host_to_all_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, H(0), G(1), 1, true);
    m->aggregate = true;
    fake.script = nearly_together;
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.verify = false;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(fake.opts[2].reps, (int)ceil(GQ_HARNESS_ROUND_S / 0.012));
    assert_int_equal(fake.calls, 1 + 5);
    const gq_record *agg = find(&rs, true, false, GQ_DIR_H2D, -1);
    assert_true(agg->valid);
    assert_true(fabs(agg->overlap - 0.996) < 1e-9);
    gq_records_free(&rs);
    free(m);
}

/* ---- written for the survivors of bench/mutation (seed 165809224) ---------- */

/* Windows that do not meet share nothing. */
static void test_overlap_disjoint(void **state)
{
    const double st[] = {0.0, 2.0}, en[] = {1.0, 3.0};
    assert_true(gq_harness_overlap(st, en, 2) == 0.0);
}

/* An interferer that starts late covers the measured window from its start
 * only; one round is enough to judge it. */
static void late_interferer(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    win(&res[0], 0.0, 1.0, 16.5);
    win(&res[1], 0.1, 1.0, 18.0);
}

static void test_late_interferer_one_round(void **state)
{
    gq_measurement *m = new_m("host_to_device_bidirectional_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, G(0), H(0), 0, false);
    fake.script = late_interferer;
    gq_harness_opts o = fixed_opts(1);
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(rs.n, 1);
    assert_false(rs.v[0].valid);
    assert_true(fabs(rs.v[0].overlap - 0.9) < 1e-9);
    assert_non_null(strstr(rs.v[0].error, "during only 90.0% of the measured window (< 99%)"));
    /* and a flow record names its one direction */
    assert_int_equal(rs.v[0].dirs, 1u << GQ_DIR_H2D);
    gq_records_free(&rs);
    free(m);
}

/* An interferer that fails makes the measured flow's record invalid. */
static void interferer_fails(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    win(&res[0], 0.0, 1.0, 16.5);
    res[1].status = GQ_E_BACKEND;
    snprintf(res[1].error, sizeof res[1].error, "the copy engine hung");
}

static void test_interferer_failure(void **state)
{
    gq_measurement *m = new_m("host_to_device_bidirectional_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, G(0), H(0), 0, false);
    fake.script = interferer_fails;
    gq_harness_opts o = fixed_opts(2);
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(rs.n, 1);
    assert_false(rs.v[0].valid);
    assert_true(rs.v[0].flags & GQ_FLAG_ERROR);
    assert_non_null(strstr(rs.v[0].error, "the interfering flow failed: the copy engine hung"));
    gq_records_free(&rs);
    free(m);
}

/* A failed data check names the buffer it was read from: the host's for a
 * copy to the host. */
static void test_verify_failure_names_buffer(void **state)
{
    gq_measurement *m = new_m("device_to_host_memcpy_ce");
    add(m, G(0), H(0), 0, true);
    fake.script = bad_pattern;
    gq_harness_opts o = fixed_opts(2);
    o.verify = true;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_non_null(strstr(rs.v[0].error, "first bad byte at offset 4096 of the host buffer"));
    gq_records_free(&rs);
    free(m);
}

/* A flow that failed in a round keeps that failure: the data check run does
 * not look at it again. */
static void dies_then_check_fails(int call, const gq_run_opts *o, const gq_flow *f, int n,
                                  gq_flow_result *res)
{
    win(&res[0], 0.0, 1.0, 20.0);
    win(&res[1], 0.0, 1.0, 20.0);
    if (call >= 1) {
        res[0].status = GQ_E_BACKEND;
        snprintf(res[0].error, sizeof res[0].error, o->verify ? "second failure" : "first failure");
    }
}

static void test_dead_flow_not_checked(void **state)
{
    gq_measurement *m = new_m("host_to_device_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, H(0), G(1), 1, true);
    fake.script = dies_then_check_fails;
    gq_harness_opts o = fixed_opts(3);
    o.verify = true;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    const gq_record *f0 = find(&rs, false, false, -1, 0);
    assert_false(f0->valid);
    assert_non_null(strstr(f0->error, "first failure"));
    assert_null(strstr(f0->error, "data check run"));
    assert_true(find(&rs, false, false, -1, 1)->valid);
    gq_records_free(&rs);
    free(m);
}

/* A round that ends with no bytes moved (status OK) kills the flow in that
 * round: its rate is not taken. */
static void zero_bytes_round_2(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    win(&res[0], 0.0, 1.0, call == 1 ? 0.0 : 20.0);
}

static void test_zero_bytes_round(void **state)
{
    gq_measurement *m = new_m("host_to_device_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    fake.script = zero_bytes_round_2;
    gq_harness_opts o = fixed_opts(3);
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_false(rs.v[0].valid);
    assert_int_equal(rs.v[0].value.n, 1);
    assert_non_null(strstr(rs.v[0].error, "no copy completed inside the window of round 2"));
    gq_records_free(&rs);
    free(m);
}

/* The early stop waits for the aggregates: flow 1 dies in round 2, flow 0
 * stays flat, but the H2D aggregate dropped by half. */
static void second_dies(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    win(&res[0], 0.0, 1.0, 20.0);
    win(&res[1], 0.0, 1.0, 20.0);
    if (call >= 1)
        res[1].status = GQ_E_BACKEND;
}

static void test_early_stop_waits_for_aggregate(void **state)
{
    gq_measurement *m = new_m("host_to_all_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, H(0), G(1), 1, true);
    m->aggregate = true;
    fake.script = second_dies;
    gq_harness_opts o = fixed_opts(5);
    o.spread_target = 0.05;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(fake.calls, 5);
    gq_records_free(&rs);
    free(m);
}

/* An aggregate whose rounds spread more than the target is flagged so. */
static void alternating(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    win(&res[0], 0.0, 1.0, call % 2 ? 15.0 : 10.0);
    win(&res[1], 0.0, 1.0, 20.0);
}

static void test_aggregate_spread_flag(void **state)
{
    gq_measurement *m = new_m("host_to_all_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, H(0), G(1), 1, true);
    m->aggregate = true;
    fake.script = alternating;
    gq_harness_opts o = fixed_opts(5);
    o.spread_target = 0.01;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    const gq_record *agg = find(&rs, true, false, GQ_DIR_H2D, -1);
    assert_non_null(agg);
    assert_true(agg->flags & GQ_FLAG_SPREAD);
    assert_false(find(&rs, false, false, -1, 1)->flags & GQ_FLAG_SPREAD);
    gq_records_free(&rs);
    free(m);
}

/* A latency record has no overlap (-1) and, on a real backend and topology,
 * is not simulated. */
static void test_latency_record_fields(void **state)
{
    fake.lat[0] = 1200;
    fake.lat[1] = 1190;
    fake.lat[2] = 1210;
    fake.nlat = 3;
    gq_latency_req req = {
        .kind = GQ_LAT_POINTER_CHASE, .target = {GQ_EP_HOST, 0}, .exec_gpu = 1, .iters = 100};
    gq_harness_opts o = fixed_opts(3);
    gq_recordset rs = {0};
    gq_backend_ops real = fake_ops;
    real.flags = 0;
    gq_backend rb = {.ops = &real};
    topo.simulated = false;
    assert_int_equal(gq_harness_latency(&rb, &topo, "host_device_latency_sm", &req, &o, &rs, NULL, NULL),
                     GQ_OK);
    assert_true(rs.v[0].valid);
    assert_true(rs.v[0].overlap == -1);
    assert_false(rs.v[0].simulated);
    /* one round is a valid count */
    fake.lat[3] = 1200;
    fake.nlat = 4;
    o.rounds = 1;
    assert_int_equal(gq_harness_latency(&rb, &topo, "host_device_latency_sm", &req, &o, &rs, NULL, NULL),
                     GQ_OK);
    assert_int_equal(rs.n, 2);
    assert_true(rs.v[1].valid);
    assert_int_equal(rs.v[1].value.n, 1);
    gq_records_free(&rs);
}

/* Group calibration by copy time: two 4 MiB flows (one piece each) of 10 and
 * 12 ms; the warm-up reports two copies each, so a copy time is its window
 * over its copies. Counting 9 copies ends the windows 17% apart; by
 * duration a round must be long enough that a 12 ms piece is 0.5% of it:
 * 2.4 s. */
static void small_unequal(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    double ct[2] = {0.010, 0.012};
    for (int i = 0; i < 2; i++) {
        int k = call == 0 ? 2 : o->duration_s > 0 ? (int)floor(o->duration_s / ct[i] + 1e-9) : o->reps;
        win(&res[i], 0.0, k * ct[i], k * (double)f[i].bytes / 1e9);
        res[i].copies_done = k;
    }
}

static void test_group_duration_from_piece(void **state)
{
    gq_measurement *m = new_m("host_to_all_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, H(0), G(1), 1, true);
    m->flows[0].bytes = m->flows[1].bytes = 4 * GQ_MiB;
    m->aggregate = true;
    fake.script = small_unequal;
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.verify = false;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(fake.opts[1].reps, 9);
    assert_int_equal(fake.opts[2].reps, 0);
    assert_near(fake.opts[2].duration_s, 2.4, 1e-9);
    assert_true(fake.grain[2][0] == 0 && fake.grain[2][1] == 0);
    gq_records_free(&rs);
    free(m);
}

/* Counting stands when duration cannot do better: two 4 MiB flows of 100 ms
 * copies (one piece each), whose counted windows end 1% apart (99%); by
 * duration the longest round (6 s) still leaves a piece of 1/60, 98.3%. */
static void slow_small(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    for (int i = 0; i < 2; i++) {
        int k = o->duration_s > 0 ? (int)floor(o->duration_s / 0.1 + 1e-9) : (o->reps > 0 ? o->reps : 1);
        double end = i == 1 && call == 1 ? 0.99 * k * 0.1 : k * 0.1;
        win(&res[i], 0.0, end, k * (double)f[i].bytes / 1e9);
        res[i].copies_done = k;
    }
}

static void test_group_counting_stands(void **state)
{
    gq_measurement *m = new_m("host_to_all_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, H(0), G(1), 1, true);
    m->flows[0].bytes = m->flows[1].bytes = 4 * GQ_MiB;
    m->aggregate = true;
    fake.script = slow_small;
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.verify = false;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(fake.opts[1].reps, 1);
    assert_int_equal(fake.opts[2].reps, 1);
    assert_true(fake.opts[2].duration_s == 0);
    assert_int_equal(fake.calls, 1 + 5); /* the counted round is round 1 */
    gq_records_free(&rs);
    free(m);
}

/* A measured flow that gave no copy in the warm-up: nothing to size pieces
 * from, so the counted round stands even though its windows end apart. */
static void third_late_start(int call, const gq_run_opts *o, const gq_flow *f, int n, gq_flow_result *res)
{
    for (int i = 0; i < 3; i++) {
        int k = o->reps > 0 ? o->reps : 1;
        double end = i == 2 && call > 0 ? 0.9 * k * 0.012 : k * 0.012;
        win(&res[i], 0.0, end, k * (double)f[i].bytes / 1e9);
        res[i].copies_done = k;
    }
    if (call == 0) {
        res[2].status = GQ_E_BACKEND;
        snprintf(res[2].error, sizeof res[2].error, "not ready");
    }
}

static void test_group_flow_without_copy_time(void **state)
{
    gq_measurement *m = new_m("host_to_all_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, H(0), G(1), 1, true);
    add(m, H(0), G(2), 2, true);
    topo.ngpu = 3;
    m->aggregate = true;
    fake.script = third_late_start;
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.verify = false;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_true(fake.opts[2].duration_s == 0);
    /* the first timed round's windows overlap 90 %: by its copy times the
     * rest run by duration in pieces (the round is not counted); there too
     * they overlap 90 %, so two are run again (GQ_HARNESS_OVERLAP_RETRIES),
     * then the bad rounds are counted */
    assert_true(fake.opts[3].duration_s > 0 && fake.opts[3].reps == 0);
    assert_int_equal(fake.calls, 1 + 5 + 1 + GQ_HARNESS_OVERLAP_RETRIES);
    gq_records_free(&rs);
    free(m);
}

/* A staged flow's chunk (backend.h): chunk_bytes or 8 MiB, never more than
 * the copy, and at most 128 chunks a copy: a larger copy gets larger chunks,
 * rounded up to 4 KiB. The piece quantum is that chunk for STAGED, 16 bytes
 * for the other methods. */
static void test_stage_chunk(void **state)
{
    (void)state;
    static const struct {
        uint64_t bytes, chunk, want;
    } c[] = {
        {0, 0, 1},
        {1, 0, 1},
        {4 * GQ_MiB, 0, 4 * GQ_MiB},        /* one chunk: the whole copy */
        {8 * GQ_MiB, 0, 8 * GQ_MiB},        /* one chunk, exactly */
        {8 * GQ_MiB + 1, 0, 8 * GQ_MiB},    /* two chunks */
        {64 * GQ_MiB, 0, 8 * GQ_MiB},       /* 8 chunks */
        {GQ_GiB, 0, 8 * GQ_MiB},            /* 128 chunks: the most kept as they are */
        {GQ_GiB + 1, 0, 8 * GQ_MiB + 4096}, /* 129: ceil(size / 128), 4 KiB-aligned */
        {4 * GQ_GiB, 0, 32 * GQ_MiB},       /* 128 chunks of 32 MiB */
        {10000, 3000, 3000},                /* 4 chunks of a chunk_bytes that is not aligned */
        {128 * GQ_MiB, GQ_MiB, GQ_MiB},     /* 128 */
        {128 * GQ_MiB + 1, GQ_MiB, GQ_MiB + 4096},
        {200 * GQ_MiB, GQ_MiB, 1638400}, /* 200 MiB / 128 = 1600 KiB, already aligned */
        {129 * 4096, 1, 8192},           /* 1-byte chunks: 528384 / 128 = 4128, aligned up */
        {5000, GQ_MiB, 5000},            /* chunk_bytes larger than the copy */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        gq_flow f = {.method = GQ_METHOD_STAGED, .bytes = c[i].bytes, .chunk_bytes = c[i].chunk};
        uint64_t got = gq_flow_stage_chunk(&f);
        if (got != c[i].want)
            fail_msg("%llu bytes, chunk_bytes %llu: chunk %llu, want %llu", (unsigned long long)c[i].bytes,
                     (unsigned long long)c[i].chunk, (unsigned long long)got, (unsigned long long)c[i].want);
        assert_int_equal(gq_flow_piece_quantum(&f), c[i].want);
        f.method = GQ_METHOD_CE;
        assert_int_equal(gq_flow_piece_quantum(&f), 16);
        f.method = GQ_METHOD_SM;
        assert_int_equal(gq_flow_piece_quantum(&f), 16);
    }
}

/* ---- gaps: the window log, latency's interruption, spread and journal ---- */

static char g_notes[16][GQ_HARNESS_TRACE_NOTE];
static int g_nnotes;
static void keep_overlap_notes(void *arg, const char *test, const char *phase, double seconds,
                               const char *note)
{
    (void)arg;
    (void)test;
    (void)seconds;
    if (!strcmp(phase, "overlap") && g_nnotes < 16)
        snprintf(g_notes[g_nnotes++], sizeof g_notes[0], "%s", note);
}

/* A round that fails the overlap rule logs each flow's window on the trace:
 * twice run again, then counted with its sum invalid. */
static void test_trace_window_log(void **state)
{
    gq_measurement *m = new_m("host_to_all_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    add(m, H(0), G(1), 1, true);
    m->aggregate = true;
    g_late = 0.02;
    fake.script = two_flows;
    gq_harness_opts o = fixed_opts(3);
    g_nnotes = 0;
    o.trace = keep_overlap_notes;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(g_nnotes, GQ_HARNESS_OVERLAP_RETRIES + 3);
    const char *w = " [0 h2d 0.000..1000.000 ms 10 copies 10.00 GB/s] [1 h2d 20.000..1000.000 ms 10 copies "
                    "10.00 GB/s]";
    char want[GQ_HARNESS_TRACE_NOTE];
    for (int k = 0; k < g_nnotes; k++) {
        int round = k < GQ_HARNESS_OVERLAP_RETRIES ? 1 : k - GQ_HARNESS_OVERLAP_RETRIES + 1;
        snprintf(want, sizeof want, "round %d overlap 9", round);
        if (strncmp(g_notes[k], want, strlen(want)))
            fail_msg("note %d: %s", k, g_notes[k]);
        snprintf(want, sizeof want, "%%, %s:%s",
                 k < GQ_HARNESS_OVERLAP_RETRIES ? "round run again" : "round counted, its sum invalid", w);
        const char *p = strstr(g_notes[k], "%, ");
        if (!p || strcmp(p, want))
            fail_msg("note %d: %s, want ...%s", k, g_notes[k], want);
    }
    /* the overlap is floored to the hundredth of a percent */
    double ov = find(&rs, true, false, GQ_DIR_H2D, -1)->overlap;
    snprintf(want, sizeof want, "round 1 overlap %.2f%%", floor(ov * 10000.0) / 100.0);
    assert_true(strncmp(g_notes[0], want, strlen(want)) == 0);
    gq_records_free(&rs);
    free(m);
}

static const gq_latency_req lat_req = {
    .kind = GQ_LAT_POINTER_CHASE, .target = {GQ_EP_HOST, 0}, .exec_gpu = 0, .iters = 100};

/* Ctrl-C during latency rounds: the rounds done are kept (cut short), the
 * run says so; before any round (or in the warm-up) nothing is kept. */
static void test_latency_interrupted(void **state)
{
    fake.lat[0] = 1000;
    fake.lat[1] = 1100;
    fake.nlat = 2;
    gq_harness_opts o = fixed_opts(5);
    o.warmup_reps = 0;
    fake.lat_intr_at = 2;
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_harness_latency(&be, &topo, "host_device_latency_sm", &lat_req, &o, &rs, NULL, &err),
                     GQ_E_INTR);
    assert_string_equal(err.msg, "interrupted after 2 of 5 rounds of host_device_latency_sm");
    assert_int_equal(fake.lat_calls, 2);
    assert_int_equal(rs.n, 1);
    assert_true(rs.v[0].flags & GQ_FLAG_INCOMPLETE);
    assert_false(rs.v[0].flags & GQ_FLAG_ERROR);
    assert_int_equal(rs.v[0].rounds, 2);
    assert_true(fabs(rs.v[0].value.max - 1100) < 1e-9);
    gq_records_free(&rs);

    /* in the warm-up: no round, nothing kept */
    gq_interrupt_clear();
    fake.lat_calls = 0;
    fake.lat_intr_at = 1;
    o.warmup_reps = 1;
    assert_int_equal(gq_harness_latency(&be, &topo, "host_device_latency_sm", &lat_req, &o, &rs, NULL, &err),
                     GQ_E_INTR);
    assert_string_equal(err.msg, "interrupted");
    assert_int_equal(fake.lat_calls, 1);
    assert_int_equal(rs.n, 0);

    /* asked before the call: refused at once */
    fake.lat_calls = 0;
    fake.lat_intr_at = 0;
    err.msg[0] = 0;
    assert_int_equal(gq_harness_latency(&be, &topo, "host_device_latency_sm", &lat_req, &o, &rs, NULL, &err),
                     GQ_E_INTR);
    assert_string_equal(err.msg, "interrupted");
    assert_int_equal(fake.lat_calls, 0);
    assert_int_equal(rs.n, 0);
    gq_interrupt_clear();
}

/* A latency spread above the target is flagged; one within it is not. */
static void test_latency_spread_flag(void **state)
{
    gq_harness_opts o = fixed_opts(3);
    o.warmup_reps = 0;
    o.spread_target = 0.05;
    fake.lat[0] = 1000;
    fake.lat[1] = 1500;
    fake.lat[2] = 2000;
    fake.nlat = 3;
    gq_recordset rs = {0};
    assert_int_equal(gq_harness_latency(&be, &topo, "host_device_latency_sm", &lat_req, &o, &rs, NULL, NULL),
                     GQ_OK);
    assert_int_equal(rs.n, 1);
    assert_true(rs.v[0].value.spread > o.spread_target);
    assert_true(rs.v[0].flags & GQ_FLAG_SPREAD);
    fake.lat[1] = fake.lat[2] = 1000;
    fake.lat_calls = 0;
    assert_int_equal(gq_harness_latency(&be, &topo, "host_device_latency_sm", &lat_req, &o, &rs, NULL, NULL),
                     GQ_OK);
    assert_int_equal(rs.n, 2);
    assert_false(rs.v[1].flags & GQ_FLAG_SPREAD);
    /* no target: no flag, however wide */
    fake.lat[1] = 3000;
    fake.lat_calls = 0;
    o.spread_target = 0;
    assert_int_equal(gq_harness_latency(&be, &topo, "host_device_latency_sm", &lat_req, &o, &rs, NULL, NULL),
                     GQ_OK);
    assert_false(rs.v[2].flags & GQ_FLAG_SPREAD);
    gq_records_free(&rs);
}

/* A journal that cannot take the record: the record is kept, the run fails
 * with the journal's reason (a measurement and a latency). */
static void test_journal_failure(void **state)
{
    gq_journal j;
    memset(&j, 0, sizeof j); /* not open */
    gq_recordset rs = {0};
    gq_err err = {0};
    fake.lat[0] = 1000;
    fake.nlat = 1;
    gq_harness_opts o = fixed_opts(2);
    o.warmup_reps = 0;
    assert_int_equal(gq_harness_latency(&be, &topo, "host_device_latency_sm", &lat_req, &o, &rs, &j, &err),
                     GQ_E_IO);
    assert_string_equal(err.msg, "journal: journal is not open");
    assert_int_equal(rs.n, 1);
    assert_true(rs.v[0].valid);
    gq_measurement *m = new_m("host_to_device_memcpy_ce");
    add(m, H(0), G(0), 0, true);
    fake.script = flat;
    err.msg[0] = 0;
    assert_int_equal(gq_harness_measure(&be, &topo, m, &o, &rs, &j, &err), GQ_E_IO);
    assert_string_equal(err.msg, "journal: journal is not open");
    assert_int_equal(rs.n, 2);
    assert_true(rs.v[1].valid);
    gq_records_free(&rs);
    free(m);
}

/* Missing arguments and a round count out of range are refused before
 * anything runs. */
static void test_missing_arguments(void **state)
{
    gq_measurement *m = new_m("x");
    add(m, H(0), G(0), 0, true);
    gq_harness_opts o = fixed_opts(3);
    gq_recordset rs = {0};
    gq_err err = {0};
    gq_backend none = {.ops = NULL};
    assert_int_equal(gq_harness_measure(&none, &topo, m, &o, &rs, NULL, &err), GQ_E_FAIL);
    assert_string_equal(err.msg, "harness: missing argument");
    err.msg[0] = 0;
    assert_int_equal(gq_harness_latency(&none, &topo, "t", &lat_req, &o, &rs, NULL, &err), GQ_E_FAIL);
    assert_string_equal(err.msg, "harness: missing argument");
    err.msg[0] = 0;
    assert_int_equal(gq_harness_latency(&be, &topo, "t", NULL, &o, &rs, NULL, &err), GQ_E_FAIL);
    assert_string_equal(err.msg, "harness: missing argument");
    for (int r = 0; r <= GQ_MAX_ROUNDS + 1; r += GQ_MAX_ROUNDS + 1) {
        o.rounds = r;
        assert_int_equal(gq_harness_latency(&be, &topo, "t", &lat_req, &o, &rs, NULL, &err), GQ_E_USAGE);
        char want[96];
        snprintf(want, sizeof want, "rounds %d is out of range, expected 1..%d", r, GQ_MAX_ROUNDS);
        assert_string_equal(err.msg, want);
    }
    /* the bounds themselves are taken */
    fake.lat[0] = 1000;
    fake.nlat = 1;
    o.warmup_reps = 0;
    o.rounds = 1;
    assert_int_equal(gq_harness_latency(&be, &topo, "t", &lat_req, &o, &rs, NULL, &err), GQ_OK);
    o.rounds = GQ_MAX_ROUNDS;
    assert_int_equal(gq_harness_latency(&be, &topo, "t", &lat_req, &o, &rs, NULL, &err), GQ_OK);
    assert_int_equal(rs.n, 2);
    assert_int_equal(fake.lat_calls, 1 + GQ_MAX_ROUNDS);
    assert_int_equal(fake.calls, 0);
    gq_records_free(&rs);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_overlap_98_is_invalid, setup),
        cmocka_unit_test_setup(test_overlap_995_is_valid, setup),
        cmocka_unit_test_setup(test_overlap_bad_round_run_again, setup),
        cmocka_unit_test_setup(test_overlap_retries_are_bounded, setup),
        cmocka_unit_test_setup(test_direction_sums, setup),
        cmocka_unit_test_setup(test_p2p_pair_sum, setup),
        cmocka_unit_test(test_stage_chunk),
        cmocka_unit_test_setup(test_interferer_not_reported, setup),
        cmocka_unit_test_setup(test_statistics, setup),
        cmocka_unit_test_setup(test_early_stop, setup),
        cmocka_unit_test_setup(test_spread_never_met, setup),
        cmocka_unit_test_setup(test_impossible_flow, setup),
        cmocka_unit_test_setup(test_impossible_aggregate_uplink, setup),
        cmocka_unit_test_setup(test_verify_failure, setup),
        cmocka_unit_test_setup(test_verify_run_failure, setup),
        cmocka_unit_test_setup(test_numa_misplaced_local, setup),
        cmocka_unit_test_setup(test_interference_until_deadline, setup),
        cmocka_unit_test_setup(test_per_flow_error, setup),
        cmocka_unit_test_setup(test_prepare_failure, setup),
        cmocka_unit_test_setup(test_whole_run_failure, setup),
        cmocka_unit_test_setup(test_interrupt_keeps_finished_rounds, setup),
        cmocka_unit_test_setup(test_interrupt_before_any_round, setup),
        cmocka_unit_test_setup(test_journal_gets_every_record, setup),
        cmocka_unit_test_setup(test_journal_write_fails, setup),
        cmocka_unit_test_setup(test_provenance, setup),
        cmocka_unit_test_setup(test_auto_reps, setup),
        cmocka_unit_test_setup(test_auto_reps_after_failed_warmup, setup),
        cmocka_unit_test_setup(test_fast_paths_half_rounds, setup),
        cmocka_unit_test_setup(test_auto_duration_for_unequal_flows, setup),
        cmocka_unit_test_setup(test_one_reported_flow_duration, setup),
        cmocka_unit_test_setup(test_auto_count_for_equal_flows, setup),
        cmocka_unit_test_setup(test_counted_rounds_drift_switch_to_duration, setup),
        cmocka_unit_test_setup(test_user_count_keeps_counting, setup),
        cmocka_unit_test_setup(test_overlap_message_rounds_down, setup),
        cmocka_unit_test_setup(test_interference_must_cover, setup),
        cmocka_unit_test_setup(test_local_counts_bytes_once, setup),
        cmocka_unit_test_setup(test_latency, setup),
        cmocka_unit_test_setup(test_latency_zero, setup),
        cmocka_unit_test_setup(test_bad_arguments, setup),
        cmocka_unit_test_setup(test_auto_single_refit, setup),
        cmocka_unit_test_setup(test_auto_single_refit_bound, setup),
        cmocka_unit_test_setup(test_counted_round_interferer_not_extended, setup),
        cmocka_unit_test_setup(test_counted_round_kept_at_995, setup),
        cmocka_unit_test_setup(test_overlap_disjoint, setup),
        cmocka_unit_test_setup(test_late_interferer_one_round, setup),
        cmocka_unit_test_setup(test_interferer_failure, setup),
        cmocka_unit_test_setup(test_verify_failure_names_buffer, setup),
        cmocka_unit_test_setup(test_dead_flow_not_checked, setup),
        cmocka_unit_test_setup(test_zero_bytes_round, setup),
        cmocka_unit_test_setup(test_early_stop_waits_for_aggregate, setup),
        cmocka_unit_test_setup(test_aggregate_spread_flag, setup),
        cmocka_unit_test_setup(test_latency_record_fields, setup),
        cmocka_unit_test_setup(test_simulated_from_the_topology, setup),
        cmocka_unit_test_setup(test_aggregate_numa_misplaced, setup),
        cmocka_unit_test_setup(test_group_duration_from_piece, setup),
        cmocka_unit_test_setup(test_group_counting_stands, setup),
        cmocka_unit_test_setup(test_group_flow_without_copy_time, setup),
        cmocka_unit_test_setup(test_trace_window_log, setup),
        cmocka_unit_test_setup(test_latency_interrupted, setup),
        cmocka_unit_test_setup(test_latency_spread_flag, setup),
        cmocka_unit_test_setup(test_journal_failure, setup),
        cmocka_unit_test_setup(test_missing_arguments, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
