/* The reference machine (../shared/reference/README.md) on the built-in
 * h200x2: nvbandwidth's and p2pBandwidthLatencyTest's figures, each within
 * 5%, by the flows those tools run (nvbandwidth's *_bidirectional_* tests
 * measure one direction while the other runs; device_to_device read is
 * executed by the destination, write by the source).
 */
#include "simtest.h"

#define TOL 0.05

static double one(gq_backend *be, gq_flow f)
{
    st_out o;
    st_run(be, &f, 1, 1.0, 0, &o);
    return o.gbps[0];
}

static void check(uint64_t seed)
{
    gq_backend *be = st_open("h200x2", seed, ST_GOLDEN_NOISE);
    st_out o;
    static const double h2d[2] = {55.14, 55.23}, d2h[2] = {55.31, 55.31};
    static const double h2d_bi[2] = {38.47, 37.09}, d2h_bi[2] = {51.62, 51.26};
    static const double h2d_sm[2] = {51.08, 50.93}, d2h_sm[2] = {51.26, 51.04};
    for (int g = 0; g < 2; g++) {
        st_near(one(be, st_h2d(g)), h2d[g], TOL, "host_to_device_memcpy_ce %d", g);
        st_near(one(be, st_d2h(g)), d2h[g], TOL, "device_to_host_memcpy_ce %d", g);
        gq_flow f[2] = {st_h2d(g), st_d2h(g)};
        st_run(be, f, 2, 1.0, 0, &o);
        st_near(o.gbps[0], h2d_bi[g], TOL, "host_to_device_bidirectional_memcpy_ce %d", g);
        st_near(o.gbps[1], d2h_bi[g], TOL, "device_to_host_bidirectional_memcpy_ce %d", g);
        f[0].method = GQ_METHOD_SM;
        st_near(one(be, f[0]), h2d_sm[g], TOL, "host_to_device_memcpy_sm %d", g);
        f[1].method = GQ_METHOD_SM;
        st_near(one(be, f[1]), d2h_sm[g], TOL, "device_to_host_memcpy_sm %d", g);
        /* nvbandwidth's device_local_copy counts each byte copied once */
        gq_flow l = st_p2p(g, g, GQ_METHOD_CE);
        st_near(one(be, l), g ? 2093.57 : 2091.54, TOL, "device_local_copy %d", g);
    }
    gq_flow all[2] = {st_h2d(0), st_h2d(1)};
    st_run(be, all, 2, 1.0, 0, &o);
    st_near(o.gbps[0], 51.86, TOL, "host_to_all_memcpy_ce 0");
    st_near(o.gbps[1], 51.59, TOL, "host_to_all_memcpy_ce 1");
    all[0] = st_d2h(0), all[1] = st_d2h(1);
    st_run(be, all, 2, 1.0, 0, &o);
    st_near(o.gbps[0], 48.82, TOL, "all_to_host_memcpy_ce 0");
    st_near(o.gbps[1], 49.85, TOL, "all_to_host_memcpy_ce 1");

    for (int a = 0; a < 2; a++) {
        int b = 1 - a;
        gq_flow r = st_p2p(a, b, GQ_METHOD_CE), w = r;
        w.exec_gpu = a;
        st_near(one(be, r), a ? 393.93 : 394.09, TOL, "device_to_device_memcpy_read_ce %d->%d", a, b);
        st_near(one(be, w), a ? 396.42 : 396.43, TOL, "device_to_device_memcpy_write_ce %d->%d", a, b);
        r.method = w.method = GQ_METHOD_SM;
        st_near(one(be, r), a ? 376.14 : 376.22, TOL, "device_to_device_memcpy_read_sm %d->%d", a, b);
        st_near(one(be, w), 370.07, TOL, "device_to_device_memcpy_write_sm %d->%d", a, b);
        gq_flow f[2] = {st_p2p(a, b, GQ_METHOD_CE), st_p2p(b, a, GQ_METHOD_CE)};
        st_run(be, f, 2, 1.0, 0, &o);
        st_near(o.sum, 778.9, TOL, "device_to_device_bidirectional_memcpy_read_ce total");
        /* P2P disabled: the driver stages (p2pBandwidthLatencyTest 38.21 / 37.84) */
        st_near(one(be, st_p2p(a, b, GQ_METHOD_DRIVER_STAGED)), a ? 37.84 : 38.21, TOL,
                "driver staged %d->%d", a, b);
        /* gpuqual's pipelined staging through pinned host memory: 53.5 */
        gq_flow s = st_p2p(a, b, GQ_METHOD_STAGED);
        st_near(one(be, s), 53.5, TOL, "pipelined staging %d->%d", a, b);
    }

    gq_err e = {0};
    double ns;
    for (int g = 0; g < 2; g++) {
        gq_latency_req q = {
            .kind = GQ_LAT_POINTER_CHASE, .target = {GQ_EP_HOST, 0}, .exec_gpu = g, .iters = 1000};
        assert_int_equal(be->ops->latency(be, &q, &ns, &e), GQ_OK);
        st_near(ns, g ? 1209.89 : 1198.10, TOL, "host_device_latency_sm %d", g);
        q.target = (gq_endpoint){GQ_EP_GPU, 1 - g};
        assert_int_equal(be->ops->latency(be, &q, &ns, &e), GQ_OK);
        st_near(ns, 828.8, TOL, "device_to_device_latency_sm %d", g);
        q.kind = GQ_LAT_COPY;
        q.p2p = true;
        assert_int_equal(be->ops->latency(be, &q, &ns, &e), GQ_OK);
        st_near(ns / 1000, g ? 2.24 : 2.27, TOL, "copy latency %d->%d, P2P enabled", g, 1 - g);
        q.p2p = false;
        assert_int_equal(be->ops->latency(be, &q, &ns, &e), GQ_OK);
        st_near(ns / 1000, g ? 14.88 : 16.08, TOL, "copy latency %d->%d, P2P disabled", g, 1 - g);
    }
    st_close(be);
}

static void test_reference(void **state)
{
    (void)state;
    for (size_t k = 0; k < ST_NSEEDS; k++)
        check(st_seeds[k]);
}

static void test_discovery(void **state)
{
    (void)state;
    gq_backend *be = st_open("h200x2", 1, ST_GOLDEN_NOISE);
    gq_topo *t = calloc(1, sizeof *t);
    gq_topo_init(t);
    gq_err e = {0};
    assert_int_equal(be->ops->discover(be, t, &e), GQ_OK);
    assert_int_equal(t->ngpu, 2);
    assert_true(t->is_vm);
    assert_string_equal(t->hypervisor, "firecracker");
    assert_int_equal(t->numa_nodes, 1);
    assert_string_equal(t->driver_version, "sim");
    assert_string_equal(t->gpu[0].pci_bus_id, "0000:00:06.0");
    assert_string_equal(t->gpu[1].pci_bus_id, "0000:00:07.0");
    for (int g = 0; g < 2; g++) {
        assert_string_equal(t->gpu[g].name, "NVIDIA H200");
        assert_int_equal(t->gpu[g].mem_bytes, 143771ull * GQ_MiB);
        assert_int_equal(t->gpu[g].pcie_gen_cur, 5);
        assert_int_equal(t->gpu[g].pcie_width_max, 16);
        assert_int_equal(t->gpu[g].numa_node, -1);
        assert_int_equal(t->gpu[g].nvlinks_total, 18);
        assert_true(fabs(t->gpu[g].nvlink_gbps_per_link * 18 - 450) < 1e-6);
        assert_true(fabs(t->gpu[g].power_limit_w - 700) < 1e-9);
        assert_int_equal(t->gpu[g].cc_major, 9);
        assert_int_equal(strncmp(t->gpu[g].uuid, "GPU-", 4), 0);
    }
    assert_string_not_equal(t->gpu[0].uuid, t->gpu[1].uuid);
    assert_int_equal(t->level[0][1], GQ_LEVEL_NV);
    assert_int_equal(t->pci_level[0][1], GQ_LEVEL_PHB);
    assert_int_equal(t->nvlinks[0][1], 18);
    uint64_t fr, tot, host;
    assert_int_equal(be->ops->mem_info(be, 1, &fr, &tot, &e), GQ_OK);
    assert_int_equal(tot, 143771ull * GQ_MiB);
    assert_true(fr < tot && fr >= tot / 100 * 95 - 1);
    assert_int_equal(be->ops->host_mem_avail(be, 0, &host, &e), GQ_OK);
    assert_int_equal(host, 230ull * GQ_GiB);
    free(t);
    st_close(be);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference),
        cmocka_unit_test(test_discovery),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
