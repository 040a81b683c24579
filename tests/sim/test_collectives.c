/* The sim's collectives (src/backend/sim/sim_coll.c) through the
 * collectives harness (measure/collective.c): the ring over the fabric with
 * and without P2P and over NVLink, groups run at once sharing the fabric,
 * and the simulator held to published nccl-tests figures within 15 %
 * (docs/method.md, "Collectives"), each source named by its public title.
 * Figures come from the harness's records only. */
#include "simtest.h"

#include "backend/sim/sim.h"
#include "measure/collective.h"

#define TOPO(name) GQ_TEST_DATA "/data/topologies/" name ".topo"

typedef struct run {
    gq_backend *be;
    gq_topo topo;
} run;

static void open_run(run *r, const char *machine)
{
    r->be = st_open(machine, 1, ST_GOLDEN_NOISE);
    gq_topo_init(&r->topo);
    gq_err e = {0};
    if (r->be->ops->discover(r->be, &r->topo, &e))
        fail_msg("discover %s: %s", machine, e.msg);
}

static void close_run(run *r)
{
    st_close(r->be);
}

/* busbw (GB/s) of each group run at once: groups "0,1 2,3". */
static void busbw(run *r, gq_coll_op op, uint64_t bytes, const char *groups, double *out, int *ng)
{
    gq_coll_req q = {.op = op, .warmup = 2, .iters = 10, .verify = true};
    gq_err e = {0};
    q.ngroups = 0;
    if (gq_coll_parse_groups(groups, "groups", q.groups, &q.ngroups, &e))
        fail_msg("%s", e.msg);
    int ns[GQ_COLL_MAX_GROUPS];
    for (int k = 0; k < q.ngroups; k++)
        ns[k] = q.groups[k].ngpus;
    q.bytes = gq_coll_size(op, bytes, ns, q.ngroups);
    gq_coll_opts o = {.rounds = 3, .warmup = 2, .iters = 10, .verify = true};
    gq_recordset rs = {0};
    int rc = gq_coll_measure(r->be, &r->topo, &q, &o, &rs, &e);
    assert_int_equal(rc, GQ_OK);
    assert_int_equal(rs.n, q.ngroups);
    for (int k = 0; k < rs.n; k++) {
        if (!rs.v[k].valid)
            fail_msg("%s group %d of '%s': %s", gq_coll_op_name(op), k, groups, rs.v[k].error);
        assert_true(rs.v[k].simulated);
        out[k] = rs.v[k].value.median;
    }
    *ng = rs.n;
    gq_records_free(&rs);
}

static double one(run *r, gq_coll_op op, uint64_t bytes, const char *group)
{
    double v[GQ_COLL_MAX_GROUPS];
    int n;
    busbw(r, op, bytes, group, v, &n);
    return v[0];
}

/* Without P2P (rtx4090x8: CNS) every ring flow is staged through host
 * memory, so the four GPUs behind one switch share its uplink both ways:
 * the more ranks, the less each gets; and two groups at once on one switch
 * get less than one alone. */
static void test_ring_without_p2p(void **state)
{
    (void)state;
    run r;
    open_run(&r, "rtx4090x8");
    double b2 = one(&r, GQ_COLL_ALL_REDUCE, 256 * GQ_MiB, "0,1");
    double b4 = one(&r, GQ_COLL_ALL_REDUCE, 256 * GQ_MiB, "0,1,2,3");
    double b8 = one(&r, GQ_COLL_ALL_REDUCE, 256 * GQ_MiB, "0-7");
    assert_true(b2 > 1.5 * b4);
    assert_true(b4 > 0 && b8 > 0);
    /* the uplink's 36.5 GB/s of both directions, shared by 2 x 4 legs a way */
    assert_true(b4 < 36.5 / 8 * 1.05);
    double v[2];
    int n;
    busbw(&r, GQ_COLL_ALL_REDUCE, 256 * GQ_MiB, "0,1 2,3", v, &n);
    assert_int_equal(n, 2);
    assert_true(v[0] < 0.8 * b2 && v[1] < 0.8 * b2);
    /* groups on the two sockets do not share a switch: each as fast as alone */
    busbw(&r, GQ_COLL_ALL_REDUCE, 256 * GQ_MiB, "0,1 4,5", v, &n);
    assert_true(v[0] > 0.95 * b2 && v[1] > 0.95 * b2);
    /* all-gather moves half the bytes per rank of all-reduce in half the
     * steps: the same bus bandwidth */
    double ag = one(&r, GQ_COLL_ALL_GATHER, 256 * GQ_MiB, "0,1,2,3");
    assert_true(fabs(ag - b4) < 0.05 * b4);
    close_run(&r);
}

/* With P2P (tpduplex4, the switch pair) the ring moves SM copies through the
 * switch, not host memory; over NVLink (a100x6's bridged pair 1-2) ten times
 * faster than over PCIe (a100x6's 0-1, P2P across the root complex). */
static void test_ring_with_p2p_and_nvlink(void **state)
{
    (void)state;
    run r;
    open_run(&r, TOPO("tpduplex4"));
    double sw = one(&r, GQ_COLL_ALL_REDUCE, 256 * GQ_MiB, "2,3");
    double across = one(&r, GQ_COLL_ALL_REDUCE, 256 * GQ_MiB, "0,2");
    assert_true(sw > 15 && sw < 21);
    assert_true(across < 0.7 * sw);
    close_run(&r);
    open_run(&r, "a100x6");
    double nv = one(&r, GQ_COLL_ALL_REDUCE, 256 * GQ_MiB, "1,2");
    double pcie = one(&r, GQ_COLL_ALL_REDUCE, 256 * GQ_MiB, "0,1");
    assert_true(nv > 10 * pcie);
    /* NVLink: below the bridge's 12 x 25 GB/s each way, and the sanity
     * guard's limit (the record is valid, so it held) */
    assert_true(nv < 300);
    close_run(&r);
}

/* Over NVLink the ring is held to NCCL's effective NVLink bandwidth (links x
 * the per-link rate of NCCL's topology model for the compute capability,
 * NVIDIA/nccl src/graph/topo.h), not the copy rate: a100x6's bridged pair
 * (12 links, sm_80: 240 GB/s) copies at 264 GB/s but all-reduces at no more
 * than 240; nvswitch8's H100s (18 links each, sm_90: 370.8) copy at 390. */
static void test_nccl_nvlink_rate(void **state)
{
    (void)state;
    assert_true(fabs(gq_sim_nccl_nvlink_rate(8, 0) - 20.0e9) < 1);
    assert_true(fabs(gq_sim_nccl_nvlink_rate(8, 6) - 12.0e9) < 1);
    assert_true(fabs(gq_sim_nccl_nvlink_rate(8, 9) - 20.0e9) < 1);
    assert_true(fabs(gq_sim_nccl_nvlink_rate(9, 0) - 20.6e9) < 1);
    assert_true(fabs(gq_sim_nccl_nvlink_rate(10, 0) - 40.1e9) < 1);
    assert_true(fabs(gq_sim_nccl_nvlink_rate(7, 0) - 20.0e9) < 1);
    assert_true(fabs(gq_sim_nccl_nvlink_rate(6, 0) - 18.0e9) < 1);
    run r;
    open_run(&r, "a100x6");
    double nv = one(&r, GQ_COLL_ALL_REDUCE, 1 * GQ_GiB, "1,2");
    print_message("  a100x6 1,2: %.1f GB/s busbw, NCCL's 12 x 20.0 = 240\n", nv);
    assert_true(nv <= 240.0 * 1.01 && nv > 230); /* the noise is 1 %% */
    close_run(&r);
    open_run(&r, TOPO("nvswitch8"));
    double sw = one(&r, GQ_COLL_ALL_REDUCE, 1 * GQ_GiB, "0-7");
    print_message("  nvswitch8 0-7: %.1f GB/s busbw, NCCL's 18 x 20.6 = 370.8\n", sw);
    assert_true(sw <= 370.8 * 1.01 && sw > 360);
    close_run(&r);
}

/* The simulator against published nccl-tests figures (all_reduce_perf,
 * out-of-place busbw at the largest size shown), within 15 %. */
typedef struct published {
    const char *machine, *group;
    uint64_t bytes;
    double busbw;       /* GB/s, as published */
    const char *source; /* the public title */
} published;

static const published pubs[] = {
    {"rtxpro6000x8", "0-7", 2 * GQ_GiB, 37.6,
     "voipmonitor/rtx6kpro, hardware/pcie-bandwidth.md, \"NCCL AllReduce Bus Bandwidth\": "
     "Festr (dual Turin), 8 GPUs, MIN_NCHANNELS=8, sweep 8M-2G"},
    {TOPO("nvswitch8"), "0-7", 1 * GQ_GiB, 370.0,
     "NVIDIA/nccl-tests issue \"H100 all reduce performance is poor\": the effective NVLink bandwidth "
     "with NCCL_ALGO=RING on 8 H100"},
    {TOPO("rtx4090p2p4"), "0-3", 1 * GQ_GiB, 25.95,
     "tinygrad/open-gpu-kernel-modules issue \"RTX 4090D 48GB support? (RuntimeError: CUDA error: "
     "mapping of buffer object failed)\": all_reduce_perf -g 4, 1 GiB"},
};

static void test_published_figures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof pubs / sizeof pubs[0]; i++) {
        run r;
        open_run(&r, pubs[i].machine);
        double b = one(&r, GQ_COLL_ALL_REDUCE, pubs[i].bytes, pubs[i].group);
        double dev = (b - pubs[i].busbw) / pubs[i].busbw;
        print_message("  %-14s %5.1f GB/s simulated, %6.2f published (%+.1f %%): %s\n",
                      strrchr(pubs[i].machine, '/') ? strrchr(pubs[i].machine, '/') + 1 : pubs[i].machine, b,
                      pubs[i].busbw, 100 * dev, pubs[i].source);
        if (fabs(dev) > 0.15)
            fail_msg("%s: simulated %.2f GB/s is %+.1f %% from the published %.2f (%s)", pubs[i].machine, b,
                     100 * dev, pubs[i].busbw, pubs[i].source);
        close_run(&r);
    }
}

/* A known difference, named rather than hidden: on A100 PCIe with NVLink
 * bridges (12 links) NCCL's all-reduce over a bridged pair is published at
 * 208 GB/s (NVIDIA/nccl-tests issue "A100 - All reduce performance", two GPUs
 * joined by NV12). The sim holds a ring flow over NVLink to NCCL's own
 * effective NVLink bandwidth (sim_coll.c: 12 links x 20.0 GB/s on sm_80, the
 * line rate of 25 GB/s a link less NCCL's protocol overhead, from NVIDIA/nccl
 * src/graph/topo.h), so the pair runs at about 240 GB/s: still 15 % above the
 * published figure, which is below NCCL's own model of that hardware. What
 * makes up the rest is not documented: that run used -t 2 -g 1 (a thread per
 * GPU) and -o avg, on PCIe A100s (lower power and clocks than SXM, and NCCL's
 * ring kernels run on the SMs); none of it is quantified in a public source,
 * so it is not modelled (no constant fitted to this one figure). The test
 * fails if the difference closes or grows. */
static void test_known_difference_a100_nvlink(void **state)
{
    (void)state;
    run r;
    open_run(&r, "a100x6");
    double b = one(&r, GQ_COLL_ALL_REDUCE, 1 * GQ_GiB, "1,2");
    double dev = (b - 208.0) / 208.0;
    print_message("  a100x6 1,2    %5.1f GB/s simulated, 208.00 published (%+.1f %%): known difference\n", b,
                  100 * dev);
    assert_true(dev > 0.10 && dev < 0.20);
    close_run(&r);
}

/* The unseen machine tpduplex4 (its expected answer is in its header): the
 * best pair by pairwise copy is {0,1}, by all-reduce {2,3}. */
static void test_unseen_tp_pair(void **state)
{
    (void)state;
    run r;
    open_run(&r, TOPO("tpduplex4"));
    double ar01 = one(&r, GQ_COLL_ALL_REDUCE, 256 * GQ_MiB, "0,1");
    double ar23 = one(&r, GQ_COLL_ALL_REDUCE, 256 * GQ_MiB, "2,3");
    assert_true(ar23 > 1.15 * ar01);
    /* the copies one way at a time: {0,1} ahead */
    gq_flow f = st_p2p(0, 1, GQ_METHOD_CE);
    st_out o;
    st_run(r.be, &f, 1, 0, 5, &o);
    double c01 = o.gbps[0];
    f = st_p2p(2, 3, GQ_METHOD_CE);
    st_run(r.be, &f, 1, 0, 5, &o);
    double c23 = o.gbps[0];
    assert_true(c01 > 1.1 * c23);
    close_run(&r);
}

/* The sim's collective refuses a request outside its contract with one line
 * naming what is wrong (backend.h: 1..GQ_COLL_MAX_GROUPS groups, iters >= 1,
 * warmup >= 0, bytes > 0, each group 1..ngpu ranks of distinct GPUs); the
 * same request within it runs. */
/* all_reduce below one element per rank: the ring moves 4 bytes a step
 * (NCCL's smallest chunk), as with exactly 4 bytes a rank, so 4 bytes over
 * 8 ranks take as long as 32 bytes (issue 30: sim_coll.c's ring_shape). */
static void test_tiny_all_reduce_chunk(void **state)
{
    (void)state;
    double t[2];
    const uint64_t sizes[2] = {4, 32};
    for (int i = 0; i < 2; i++) {
        gq_backend *be = st_open("rtx4090x8", 1, 0);
        gq_coll_req q = {.op = GQ_COLL_ALL_REDUCE, .bytes = sizes[i], .ngroups = 1, .warmup = 1, .iters = 4};
        q.groups[0].ngpus = 8;
        for (int g = 0; g < 8; g++)
            q.groups[0].gpus[g] = g;
        gq_coll_result res[GQ_COLL_MAX_GROUPS];
        gq_err e = {0};
        memset(res, 0, sizeof res);
        assert_int_equal(be->ops->coll_run(be, &q, res, &e), GQ_OK);
        assert_int_equal(res[0].status, GQ_OK);
        t[i] = res[0].t_end - res[0].t_start;
        st_close(be);
    }
    assert_true(t[0] > 0);
    if (t[0] != t[1])
        fail_msg("4 bytes: %.9g s, 32 bytes: %.9g s; want the same 4-byte chunk", t[0], t[1]);
}

static void test_request_refusals(void **state)
{
    (void)state;
    run r;
    open_run(&r, "h200x2");
    gq_coll_req ok = {.op = GQ_COLL_ALL_REDUCE, .bytes = 8 * GQ_MiB, .ngroups = 1, .warmup = 1, .iters = 2};
    ok.groups[0].ngpus = 2;
    ok.groups[0].gpus[0] = 0;
    ok.groups[0].gpus[1] = 1;
    gq_coll_result res[GQ_COLL_MAX_GROUPS + 1];
    gq_err e = {0};
    memset(res, 0, sizeof res);
    assert_int_equal(r.be->ops->coll_run(r.be, &ok, res, &e), GQ_OK);
    assert_int_equal(res[0].status, GQ_OK);
    assert_int_equal(res[0].iters_done, 2);
    char limits[128];
    snprintf(limits, sizeof limits, "sim: a collective needs 1..%d groups, iters >= 1 and bytes > 0",
             GQ_COLL_MAX_GROUPS);
    for (int c = 0; c < 11; c++) {
        gq_coll_req q = ok;
        const char *want = limits;
        switch (c) {
        case 0: q.ngroups = 0; break;
        case 1: q.ngroups = -1; break;
        case 2: q.ngroups = GQ_COLL_MAX_GROUPS + 1; break;
        case 3: q.iters = 0; break;
        case 4: q.warmup = -1; break;
        case 5: q.bytes = 0; break;
        case 6:
            q.op = GQ_COLL_NOPS;
            want = "sim: unknown collective";
            break;
        case 7:
            q.groups[0].ngpus = 0;
            want = "sim: group 0 has 0 ranks";
            break;
        case 8:
            q.groups[0].ngpus = 3;
            want = "sim: group 0 has 3 ranks";
            break;
        case 9:
            q.groups[0].gpus[1] = 2;
            want = "sim: GPU 2 does not exist (this machine has GPUs 0-1)";
            break;
        default:
            q.groups[0].gpus[1] = 0;
            want = "sim: GPU 0 is in two ranks or groups";
            break;
        }
        memset(&e, 0, sizeof e);
        int rc = r.be->ops->coll_run(r.be, &q, res, &e);
        if (rc != GQ_E_USAGE || strncmp(e.msg, want, strlen(want)))
            fail_msg("case %d: status %d, '%s'; want a refusal '%s'", c, rc, e.msg, want);
    }
    close_run(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_without_p2p),
        cmocka_unit_test(test_ring_with_p2p_and_nvlink),
        cmocka_unit_test(test_nccl_nvlink_rate),
        cmocka_unit_test(test_published_figures),
        cmocka_unit_test(test_known_difference_a100_nvlink),
        cmocka_unit_test(test_unseen_tp_pair),
        cmocka_unit_test(test_tiny_all_reduce_chunk),
        cmocka_unit_test(test_request_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
