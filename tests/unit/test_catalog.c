/* The test catalog: nvbandwidth's names and meanings, the new tests, name
 * selection, and what each plan runs together. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/backend.h"
#include "measure/catalog.h"
#include "core/units.h"

/* Every test nvbandwidth v0.8 ran on the reference machine. */
static const char *const nvbw[] = {
    "host_to_device_memcpy_ce",
    "device_to_host_memcpy_ce",
    "host_to_device_bidirectional_memcpy_ce",
    "device_to_host_bidirectional_memcpy_ce",
    "device_to_device_memcpy_read_ce",
    "device_to_device_memcpy_write_ce",
    "device_to_device_bidirectional_memcpy_read_ce",
    "device_to_device_bidirectional_memcpy_write_ce",
    "all_to_host_memcpy_ce",
    "all_to_host_bidirectional_memcpy_ce",
    "host_to_all_memcpy_ce",
    "host_to_all_bidirectional_memcpy_ce",
    "all_to_one_write_ce",
    "all_to_one_read_ce",
    "one_to_all_write_ce",
    "one_to_all_read_ce",
    "host_to_device_memcpy_sm",
    "device_to_host_memcpy_sm",
    "host_to_device_bidirectional_memcpy_sm",
    "device_to_host_bidirectional_memcpy_sm",
    "device_to_device_memcpy_read_sm",
    "device_to_device_memcpy_write_sm",
    "device_to_device_bidirectional_memcpy_read_sm",
    "device_to_device_bidirectional_memcpy_write_sm",
    "all_to_host_memcpy_sm",
    "all_to_host_bidirectional_memcpy_sm",
    "host_to_all_memcpy_sm",
    "host_to_all_bidirectional_memcpy_sm",
    "all_to_one_write_sm",
    "all_to_one_read_sm",
    "one_to_all_write_sm",
    "one_to_all_read_sm",
    "host_device_latency_sm",
    "device_to_device_latency_sm",
    "device_local_copy",
    NULL,
};

static const char *const ours[] = {
    "device_to_device_staged",
    "device_to_device_driver_staged",
    "p2p_matrix_unidirectional_enabled",
    "p2p_matrix_unidirectional_disabled",
    "p2p_matrix_bidirectional_enabled",
    "p2p_matrix_bidirectional_disabled",
    "p2p_latency_enabled",
    "p2p_latency_disabled",
    "host_to_device_set",
    "device_to_host_set",
    "bidirectional_set",
    NULL,
};

static gq_topo topo;
static gq_plan_opts po;

static int setup2(void **state)
{
    gq_topo_init(&topo);
    topo.ngpu = 2;
    topo.numa_nodes = 1;
    topo.p2p_cuda[0][1] = topo.p2p_cuda[1][0] = 1;
    memset(&po, 0, sizeof po);
    po.bytes = 512 * GQ_MiB;
    po.host_numa = GQ_NUMA_LOCAL;
    po.numa_nodes = 1;
    po.ngpus = 2;
    po.gpus[0] = 0;
    po.gpus[1] = 1;
    return 0;
}

static void plan(const char *name, gq_plan *p)
{
    const gq_test *t = gq_catalog_find(name);
    assert_non_null(t);
    gq_err err = {0};
    assert_int_equal(gq_catalog_plan(t, &topo, &po, p, &err), GQ_OK);
}

static void test_every_nvbandwidth_name(void **state)
{
    for (int i = 0; nvbw[i]; i++) {
        const gq_test *t = gq_catalog_find(nvbw[i]);
        assert_non_null(t);
        assert_true(t->nvbandwidth);
    }
    for (int i = 0; ours[i]; i++) {
        const gq_test *t = gq_catalog_find(ours[i]);
        assert_non_null(t);
        assert_false(t->nvbandwidth);
    }
    int n;
    const gq_test *c = gq_catalog(&n);
    assert_int_equal(n, 35 + 11);
    for (int i = 0; i < n; i++) {
        assert_non_null(c[i].description);
        assert_true(strlen(c[i].description) > 10);
        assert_non_null(c[i].title);
        assert_non_null(c[i].plan);
        for (int k = i + 1; k < n; k++)
            assert_string_not_equal(c[i].name, c[k].name);
    }
    /* nvbandwidth's descriptions, verbatim */
    assert_string_equal(gq_catalog_find("host_to_device_memcpy_ce")->title,
                        "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)");
    assert_string_equal(gq_catalog_find("device_to_device_memcpy_write_sm")->title,
                        "memcpy SM GPU(row) <- GPU(column) bandwidth (GB/s)");
    assert_string_equal(gq_catalog_find("device_to_device_latency_sm")->title,
                        "Device to Device Latency SM GPU(row) <-> GPU(column) (ns)");
}

/* The test ids other code names (measure/catalog.h) are the catalog's tests,
 * and the concurrent pairs, discovery's own, are not. */
static void test_ids_are_catalog_tests(void **state)
{
    (void)state;
    const char *const in[] = {GQ_TID_H2D_SET,     GQ_TID_D2H_SET,      GQ_TID_D2D_STAGED,  GQ_TID_D2D_READ_CE,
                              GQ_TID_D2D_READ_SM, GQ_TID_D2D_WRITE_CE, GQ_TID_D2D_WRITE_SM};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        const gq_test *t = gq_catalog_find(in[i]);
        assert_non_null(t);
        assert_string_equal(t->name, in[i]);
    }
    const char *const out[] = {GQ_TID_PAIRS_READ_CE, GQ_TID_PAIRS_READ_SM, GQ_TID_PAIRS_WRITE_CE,
                               GQ_TID_PAIRS_WRITE_SM};
    for (size_t i = 0; i < sizeof out / sizeof out[0]; i++)
        assert_null(gq_catalog_find(out[i]));
}

static void test_select(void **state)
{
    const gq_test *sel[64];
    int n;
    gq_err err = {0};
    assert_int_equal(gq_catalog_select("device_local_copy,host_to_device_memcpy_ce,device_local_copy", NULL,
                                       sel, 64, &n, &err),
                     GQ_OK);
    assert_int_equal(n, 2);
    assert_string_equal(sel[0]->name, "host_to_device_memcpy_ce"); /* catalog order */
    assert_int_equal(gq_catalog_select(NULL, "host_to_device", sel, 64, &n, &err), GQ_OK);
    assert_int_equal(n, 5); /* _ce, _sm, both bidirectional, _set */
    for (int i = 0; i < n; i++)
        assert_true(!strncmp(sel[i]->name, "host_to_device", 14));
    assert_int_equal(gq_catalog_select(NULL, NULL, sel, 64, &n, &err), GQ_OK);
    assert_int_equal(n, 46);
    assert_int_equal(gq_catalog_select("host_to_device_memcpy_cee", NULL, sel, 64, &n, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "did you mean 'host_to_device_memcpy_ce'"));
    assert_int_equal(gq_catalog_select("frobnicate", NULL, sel, 64, &n, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "--list"));
    assert_int_equal(gq_catalog_select("a,,b", NULL, sel, 64, &n, &err), GQ_E_USAGE);
    assert_int_equal(gq_catalog_select(NULL, "zzz", sel, 64, &n, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "zzz"));
    /* a name of 96 characters or more is too long (95 is only unknown) */
    char longname[120];
    memset(longname, 'x', sizeof longname);
    longname[96] = 0;
    assert_int_equal(gq_catalog_select(longname, NULL, sel, 64, &n, &err), GQ_E_USAGE);
    char want[160] = "-t: test name '";
    memset(want + strlen(want), 'x', 92); /* one word: as much of it as the buffer holds */
    strcpy(want + 15 + 92, "...' is too long");
    assert_string_equal(err.msg, want);
    longname[95] = 0;
    assert_int_equal(gq_catalog_select(longname, NULL, sel, 64, &n, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "unknown test"));
}

static const gq_flow *flow(const gq_plan *p, int item, int k)
{
    return &p->flows[p->items[item].flow_off + k];
}

static void test_host_tests(void **state)
{
    gq_plan p;
    plan("host_to_device_memcpy_ce", &p);
    assert_int_equal(p.n, 2); /* each GPU alone */
    assert_int_equal(p.items[1].nflows, 1);
    assert_int_equal(flow(&p, 1, 0)->src.kind, GQ_EP_HOST);
    assert_int_equal(flow(&p, 1, 0)->dst.index, 1);
    assert_int_equal(flow(&p, 1, 0)->method, GQ_METHOD_CE);
    gq_plan_free(&p);

    plan("device_to_host_bidirectional_memcpy_sm", &p);
    assert_int_equal(p.n, 2);
    assert_int_equal(p.items[0].nflows, 2);
    assert_true(p.report[p.items[0].flow_off]);      /* measured: GPU -> host */
    assert_false(p.report[p.items[0].flow_off + 1]); /* the other half of the kernel: host -> GPU */
    assert_int_equal(flow(&p, 0, 0)->dst.kind, GQ_EP_HOST);
    assert_int_equal(flow(&p, 0, 1)->src.kind, GQ_EP_HOST);
    assert_int_equal(flow(&p, 0, 0)->method, GQ_METHOD_SM);
    /* nvbandwidth's split-warp kernel: a pair naming each other, half the
     * buffer each way, both real (checked) copies */
    assert_int_equal(flow(&p, 0, 0)->split_with, 2);
    assert_int_equal(flow(&p, 0, 1)->split_with, 1);
    assert_int_equal(flow(&p, 0, 0)->bytes, flow(&p, 0, 1)->bytes);
    assert_int_equal(flow(&p, 0, 0)->bytes, po.bytes / 2); /* half the buffer each way */
    assert_false(flow(&p, 0, 1)->interferer);
    gq_err e = {0};
    assert_int_equal(gq_flows_check_splits(&p.flows[p.items[0].flow_off], 2, &e), GQ_OK);
    gq_plan_free(&p);

    /* the CE form keeps a separate reverse copy as interference */
    plan("device_to_host_bidirectional_memcpy_ce", &p);
    assert_int_equal(flow(&p, 0, 1)->split_with, 0);
    assert_true(flow(&p, 0, 1)->interferer);
    gq_plan_free(&p);

    plan("all_to_host_bidirectional_memcpy_sm", &p);
    assert_int_equal(p.n, 1);
    assert_int_equal(p.items[0].nflows, 4); /* a pair per GPU */
    assert_int_equal(gq_flows_check_splits(p.flows, 4, &e), GQ_OK);
    for (int k = 0; k < 4; k++) {
        assert_int_not_equal(p.flows[k].split_with, 0);
        assert_int_equal(p.report[k], p.flows[k].dst.kind == GQ_EP_HOST);
        assert_int_equal(p.flows[p.flows[k].split_with - 1].exec_gpu, p.flows[k].exec_gpu);
    }
    gq_plan_free(&p);

    plan("all_to_host_bidirectional_memcpy_ce", &p);
    assert_int_equal(p.n, 1); /* all GPUs together, once */
    assert_int_equal(p.items[0].nflows, 4);
    assert_true(p.items[0].aggregate);
    int reported = 0;
    for (int k = 0; k < 4; k++)
        if (p.report[k]) {
            reported++;
            assert_int_equal(p.flows[k].dst.kind, GQ_EP_HOST);
        }
    assert_int_equal(reported, 2);
    gq_plan_free(&p);

    plan("bidirectional_set", &p);
    assert_int_equal(p.n, 1);
    assert_int_equal(p.items[0].nflows, 4);
    assert_true(p.items[0].aggregate && p.items[0].direction_sums);
    for (int k = 0; k < 4; k++) {
        assert_true(p.report[k]);
        /* the host -> GPU flows may share their read-only source */
        assert_int_equal(p.flows[k].share_src, p.flows[k].src.kind == GQ_EP_HOST);
    }
    gq_plan_free(&p);
    plan("host_to_device_set", &p);
    for (int k = 0; k < p.items[0].nflows; k++)
        assert_false(p.flows[k].share_src);
    gq_plan_free(&p);
}

static void test_read_and_write(void **state)
{
    gq_plan p;
    plan("device_to_device_memcpy_read_ce", &p);
    assert_int_equal(p.n, 2);
    /* row 0 reads from column 1: data 1 -> 0, run by GPU 0 */
    const gq_flow *f = flow(&p, 0, 0);
    assert_int_equal(f->src.index, 1);
    assert_int_equal(f->dst.index, 0);
    assert_int_equal(f->exec_gpu, 0);
    gq_plan_free(&p);

    plan("device_to_device_memcpy_write_sm", &p);
    f = flow(&p, 0, 0);
    assert_int_equal(f->src.index, 0);
    assert_int_equal(f->dst.index, 1);
    assert_int_equal(f->exec_gpu, 0);
    assert_int_equal(f->method, GQ_METHOD_SM);
    gq_plan_free(&p);

    plan("device_to_device_bidirectional_memcpy_read_ce", &p);
    assert_int_equal(p.n, 1); /* one pair, both directions at once */
    assert_int_equal(p.items[0].nflows, 2);
    assert_true(p.items[0].direction_sums);
    assert_int_equal(flow(&p, 0, 0)->exec_gpu, flow(&p, 0, 0)->dst.index);
    assert_int_equal(flow(&p, 0, 1)->exec_gpu, flow(&p, 0, 1)->dst.index);
    gq_plan_free(&p);
}

static void test_all_to_one_and_one_to_all(void **state)
{
    topo.ngpu = 4;
    po.ngpus = 4;
    for (int i = 0; i < 4; i++) {
        po.gpus[i] = i;
        for (int k = 0; k < 4; k++)
            topo.p2p_cuda[i][k] = i != k;
    }
    gq_plan p;
    plan("all_to_one_write_ce", &p);
    assert_int_equal(p.n, 4); /* one group per target */
    assert_int_equal(p.items[2].nflows, 3);
    assert_true(p.items[2].aggregate);
    for (int k = 0; k < 3; k++) {
        const gq_flow *f = flow(&p, 2, k);
        assert_int_equal(f->dst.index, 2);
        assert_int_equal(f->exec_gpu, f->src.index);
    }
    /* the renderer finds the target of an aggregate */
    gq_record agg = {.aggregate = true, .src = {GQ_EP_GPU, GQ_EP_MANY}, .dst = {GQ_EP_GPU, 2}};
    assert_int_equal(gq_test_target(gq_catalog_find("all_to_one_write_ce"), &agg), 2);
    gq_plan_free(&p);

    plan("one_to_all_read_sm", &p);
    for (int k = 0; k < 3; k++) {
        const gq_flow *f = flow(&p, 1, k);
        assert_int_equal(f->dst.index, 1); /* GPU 1 reads from every other */
        assert_int_equal(f->exec_gpu, 1);
    }
    gq_record agg2 = {.aggregate = true, .src = {GQ_EP_GPU, GQ_EP_MANY}, .dst = {GQ_EP_GPU, 1}};
    assert_int_equal(gq_test_target(gq_catalog_find("one_to_all_read_sm"), &agg2), 1);
    uint64_t gmax, hmax;
    int who;
    gq_plan_memory(&p, 4, &gmax, &who, &hmax);
    assert_int_equal(gmax, 3 * po.bytes); /* the target holds one buffer per other GPU */
    assert_int_equal(who, 0);             /* the first target that needs the most */
    assert_int_equal(hmax, 0);
    gq_plan_free(&p);
}

static void test_new_tests(void **state)
{
    gq_plan p;
    plan("device_to_device_staged", &p);
    assert_int_equal(p.n, 2);
    assert_int_equal(flow(&p, 0, 0)->method, GQ_METHOD_STAGED);
    gq_plan_free(&p);
    plan("p2p_matrix_unidirectional_disabled", &p);
    assert_int_equal(flow(&p, 0, 0)->method, GQ_METHOD_DRIVER_STAGED);
    gq_plan_free(&p);
    /* the driver's own staged copy, every ordered pair, run by the source */
    plan("device_to_device_driver_staged", &p);
    assert_int_equal(p.n, 2);
    assert_int_equal(flow(&p, 0, 0)->method, GQ_METHOD_DRIVER_STAGED);
    assert_int_equal(flow(&p, 0, 0)->exec_gpu, flow(&p, 0, 0)->src.index);
    gq_plan_free(&p);
    plan("p2p_matrix_bidirectional_enabled", &p);
    assert_int_equal(p.n, 1);
    assert_true(p.items[0].direction_sums);
    assert_int_equal(flow(&p, 0, 0)->method, GQ_METHOD_CE);
    gq_plan_free(&p);
    plan("p2p_latency_disabled", &p);
    assert_int_equal(p.n, 2);
    assert_true(p.items[0].is_latency);
    assert_int_equal(p.items[0].lat.kind, GQ_LAT_COPY);
    assert_false(p.items[0].lat.p2p);
    gq_plan_free(&p);
    plan("device_to_device_latency_sm", &p);
    assert_int_equal(p.items[0].lat.kind, GQ_LAT_POINTER_CHASE);
    assert_int_equal(p.items[0].lat.target.kind, GQ_EP_GPU);
    assert_int_not_equal(p.items[0].lat.target.index, p.items[0].lat.exec_gpu);
    gq_plan_free(&p);
    plan("device_local_copy", &p);
    assert_int_equal(flow(&p, 1, 0)->src.index, flow(&p, 1, 0)->dst.index);
    gq_plan_free(&p);
}

static void test_one_gpu_skips_pairs(void **state)
{
    topo.ngpu = 1;
    po.ngpus = 1;
    gq_plan p;
    plan("device_to_device_memcpy_read_ce", &p);
    assert_int_equal(p.n, 0);
    assert_non_null(strstr(p.note, "at least 2 GPUs"));
    gq_plan_free(&p);
    plan("host_to_device_memcpy_ce", &p);
    assert_int_equal(p.n, 1);
    gq_plan_free(&p);
}

static void test_no_p2p(void **state)
{
    topo.p2p_cuda[0][1] = topo.p2p_cuda[1][0] = 0;
    gq_plan p;
    plan("device_to_device_memcpy_write_ce", &p);
    assert_int_equal(p.n, 0);
    assert_non_null(strstr(p.note, "peer access"));
    gq_plan_free(&p);
    plan("p2p_matrix_unidirectional_enabled", &p); /* the CUDA sample falls back to a staged copy */
    assert_int_equal(p.n, 2);
    assert_int_equal(flow(&p, 0, 0)->method, GQ_METHOD_DRIVER_STAGED);
    gq_plan_free(&p);
    plan("device_to_device_staged", &p);
    assert_int_equal(p.n, 2);
    gq_plan_free(&p);
}

static void test_host_numa_all(void **state)
{
    topo.numa_nodes = 2;
    po.numa_nodes = 2;
    po.host_numa = GQ_HOST_NUMA_ALL;
    gq_plan p;
    plan("host_to_device_memcpy_ce", &p);
    assert_int_equal(p.n, 4); /* the GPU x NUMA-node matrix */
    assert_int_equal(flow(&p, 0, 0)->src.index, 0);
    assert_int_equal(flow(&p, 3, 0)->src.index, 1);
    gq_plan_free(&p);
    po.host_numa = 1;
    plan("host_to_all_memcpy_ce", &p);
    assert_int_equal(p.n, 1);
    assert_int_equal(flow(&p, 0, 1)->src.index, 1);
    gq_plan_free(&p);
}

static void test_measurement_and_memory(void **state)
{
    gq_plan p;
    plan("host_to_device_bidirectional_memcpy_ce", &p);
    gq_measurement *m = calloc(1, sizeof *m);
    gq_plan_measurement(&p, 1, m);
    assert_string_equal(m->test, "host_to_device_bidirectional_memcpy_ce");
    assert_int_equal(m->nflows, 2);
    assert_true(m->report[0]);
    assert_false(m->report[1]);
    assert_int_equal(m->flows[0].tag, 0);
    assert_int_equal(m->flows[1].tag, 1);
    uint64_t gmax, hmax;
    int who;
    /* the interfering copy is twice the size, as nvbandwidth makes it */
    assert_int_equal(m->flows[0].bytes, po.bytes);
    assert_int_equal(m->flows[1].bytes, 2 * po.bytes);
    gq_plan_memory(&p, 2, &gmax, &who, &hmax);
    assert_int_equal(gmax, 3 * po.bytes);
    assert_int_equal(hmax, 3 * po.bytes);
    free(m);
    gq_plan_free(&p);
}

static void test_bad_plan_input(void **state)
{
    gq_plan p;
    gq_err err = {0};
    po.gpus[1] = 7;
    assert_int_equal(gq_catalog_plan(gq_catalog_find("host_to_device_memcpy_ce"), &topo, &po, &p, &err),
                     GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "GPU 7"));
    po.gpus[1] = 1;
    po.bytes = 0;
    assert_int_equal(gq_catalog_plan(gq_catalog_find("host_to_device_memcpy_ce"), &topo, &po, &p, &err),
                     GQ_E_USAGE);
    /* a missing argument */
    assert_int_equal(gq_catalog_plan(NULL, &topo, &po, &p, &err), GQ_E_FAIL);
    assert_string_equal(err.msg, "catalog: missing argument");
    assert_int_equal(gq_catalog_plan(gq_catalog_find("host_to_device_memcpy_ce"), NULL, &po, &p, &err),
                     GQ_E_FAIL);
    assert_int_equal(gq_catalog_plan(gq_catalog_find("host_to_device_memcpy_ce"), &topo, NULL, &p, &err),
                     GQ_E_FAIL);
}

/* The test ids (measure/catalog_ids.h) that name catalog tests are the
 * catalog's own names; the concurrent pairs' id is not a catalog test. */
static void test_ids_are_catalog_names(void **state)
{
    (void)state;
    static const char *const in_catalog[] = {
        GQ_TID_HOST_TO_DEVICE_CE, GQ_TID_DEVICE_TO_HOST_CE, GQ_TID_D2D_STAGED,
        GQ_TID_D2D_DRIVER_STAGED, GQ_TID_H2D_SET,           GQ_TID_D2H_SET,
        GQ_TID_BIDIR_SET,         GQ_TID_HOST_LATENCY_SM,   GQ_TID_D2D_LATENCY_SM};
    for (size_t i = 0; i < sizeof in_catalog / sizeof in_catalog[0]; i++)
        if (!gq_catalog_find(in_catalog[i]))
            fail_msg("%s is not a catalog test", in_catalog[i]);
    static const char *const probes[] = {GQ_TID_PAIRS_READ_CE};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
        if (gq_catalog_find(probes[i]))
            fail_msg("%s is a catalog test: list it with the catalog's", probes[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_every_nvbandwidth_name, setup2),
        cmocka_unit_test_setup(test_select, setup2),
        cmocka_unit_test_setup(test_host_tests, setup2),
        cmocka_unit_test_setup(test_read_and_write, setup2),
        cmocka_unit_test_setup(test_all_to_one_and_one_to_all, setup2),
        cmocka_unit_test_setup(test_new_tests, setup2),
        cmocka_unit_test_setup(test_one_gpu_skips_pairs, setup2),
        cmocka_unit_test_setup(test_no_p2p, setup2),
        cmocka_unit_test_setup(test_host_numa_all, setup2),
        cmocka_unit_test_setup(test_measurement_and_memory, setup2),
        cmocka_unit_test_setup(test_bad_plan_input, setup2),
        cmocka_unit_test(test_ids_are_catalog_names),
        cmocka_unit_test(test_ids_are_catalog_tests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
