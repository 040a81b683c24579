/* The collectives harness (measure/collective.c) against a fake backend:
 * nccl-tests' sizes, counts and bus-bandwidth factors for each collective,
 * the median over rounds, the overlap rule between groups run at once, the
 * data check, the sanity guard on an impossible bus bandwidth, and the
 * refusal of a backend without collectives. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/interrupt.h"
#include "core/units.h"
#include "measure/collective.h"
#include "../test_util.h"

/* The fake: each call returns the windows in fake.win[call][group]. */
static struct {
    int calls;
    double sec[8];     /* per-iteration time of each call (group 0; others: the same) */
    double shift[2];   /* group 1's window starts this much later (per call < 2, else 0) */
    bool bad_data;     /* the data check fails */
    bool verify_asked; /* a call had verify on */
    int verify_calls;
    int fail_call, fail_group; /* fail_call > 0: call fail_call - 1 fails group fail_group */
    int run_rc;                /* nonzero: the whole call fails with it (and run_msg, if any) */
    char run_msg[64];
    int probe_rc; /* what coll_probe returns; probe_off: it says "not available" */
    bool probe_off;
} fake;

static int f_init(gq_backend *be, const gq_backend_opts *o, const void *bopts, gq_err *err)
{
    (void)be, (void)o, (void)bopts, (void)err;
    return GQ_OK;
}
static void f_fini(gq_backend *be)
{
    (void)be;
}
static int f_discover(gq_backend *be, gq_topo *t, gq_err *err)
{
    (void)be, (void)t, (void)err;
    return GQ_OK;
}
static int f_coll_probe(gq_backend *be, gq_coll_info *info)
{
    (void)be;
    if (fake.probe_rc || fake.probe_off)
        return fake.probe_rc;
    info->available = true;
    snprintf(info->library, sizeof info->library, "fake");
    return GQ_OK;
}
static int f_coll_run(gq_backend *be, const gq_coll_req *req, gq_coll_result *res, gq_err *err)
{
    (void)be, (void)err;
    int c = fake.calls++;
    if (fake.run_rc)
        return fake.run_msg[0] ? gq_err_set(err, fake.run_rc, "%s", fake.run_msg) : fake.run_rc;
    double sec = fake.sec[c < 8 ? c : 7];
    if (req->verify) {
        fake.verify_asked = true;
        fake.verify_calls++;
    }
    for (int k = 0; k < req->ngroups; k++) {
        double s0 = 10.0 * c + (k == 1 && c < 2 ? fake.shift[c] : 0);
        res[k].status = GQ_OK;
        res[k].t_start = s0;
        res[k].t_end = s0 + sec * req->iters;
        res[k].iters_done = req->iters;
        res[k].verified = req->verify;
        res[k].verify_ok = !(req->verify && fake.bad_data);
        if (fake.fail_call == c + 1 && fake.fail_group == k) {
            res[k].status = GQ_E_BACKEND;
            snprintf(res[k].error, sizeof res[k].error, "rank 1 of group %d lost", k);
        }
    }
    return GQ_OK;
}

static const gq_backend_ops fake_ops = {
    .version = GQ_BACKEND_OPS_VERSION,
    .name = "fake",
    .flags = GQ_BE_SIMULATED,
    .init = f_init,
    .fini = f_fini,
    .discover = f_discover,
    .coll_probe = f_coll_probe,
    .coll_run = f_coll_run,
};
static const gq_backend_ops nocoll_ops = {
    .version = GQ_BACKEND_OPS_VERSION,
    .name = "plain",
    .init = f_init,
    .fini = f_fini,
    .discover = f_discover,
};

static gq_topo topo;

/* 4 GPUs on PCIe Gen4 x16 (31.5 GB/s each way); GPUs 2 and 3 also with 4
 * NVLinks of 25 GB/s (100 GB/s out). */
static int setup(void **state)
{
    (void)state;
    memset(&fake, 0, sizeof fake);
    gq_topo_init(&topo);
    topo.ngpu = 4;
    for (int i = 0; i < 4; i++) {
        topo.gpu[i].pcie_gen_cur = 4;
        topo.gpu[i].pcie_width_cur = 16;
        topo.gpu[i].pcie_gbps = gq_pcie_gbps(4, 16);
        topo.gpu[i].nvlinks_total = i >= 2 ? 4 : 0;
        topo.gpu[i].nvlink_gbps_per_link = i >= 2 ? 25 : 0;
    }
    gq_interrupt_clear();
    return 0;
}

static gq_coll_req req_of(gq_coll_op op, uint64_t bytes, int n0, int n1)
{
    gq_coll_req q = {.op = op, .bytes = bytes, .warmup = 2, .iters = 10, .verify = true};
    q.ngroups = n1 ? 2 : 1;
    q.groups[0].ngpus = n0;
    for (int r = 0; r < n0; r++)
        q.groups[0].gpus[r] = r;
    q.groups[1].ngpus = n1;
    for (int r = 0; r < n1; r++)
        q.groups[1].gpus[r] = n0 + r;
    return q;
}

/* nccl-tests' GetBw: algbw = size / time, busbw = algbw x factor. */
static void test_busbw_factors(void **state)
{
    (void)state;
    assert_near(gq_coll_busbw_factor(GQ_COLL_ALL_REDUCE, 8), 2.0 * 7 / 8, 1e-12);
    assert_near(gq_coll_busbw_factor(GQ_COLL_ALL_REDUCE, 2), 1.0, 1e-12);
    assert_near(gq_coll_busbw_factor(GQ_COLL_ALL_GATHER, 4), 0.75, 1e-12);
    assert_near(gq_coll_busbw_factor(GQ_COLL_REDUCE_SCATTER, 8), 7.0 / 8, 1e-12);
    assert_near(gq_coll_busbw_factor(GQ_COLL_ALL_TO_ALL, 4), 0.75, 1e-12);
    assert_near(gq_coll_busbw_factor(GQ_COLL_BROADCAST, 8), 1.0, 1e-12);
    assert_near(gq_coll_busbw_factor(GQ_COLL_ALL_REDUCE, 1), 0.0, 1e-12);
    /* 1 GB in 50 ms: 20 GB/s algbw; all-reduce over 4: 30 GB/s busbw */
    assert_near(gq_coll_algbw(1000000000ull, 0.05), 20.0, 1e-9);
    assert_near(gq_coll_busbw(GQ_COLL_ALL_REDUCE, 4, 1000000000ull, 0.05), 30.0, 1e-9);
    assert_near(gq_coll_busbw(GQ_COLL_ALL_GATHER, 4, 1000000000ull, 0.05), 15.0, 1e-9);
    assert_near(gq_coll_busbw(GQ_COLL_BROADCAST, 4, 1000000000ull, 0.05), 20.0, 1e-9);
}

/* Sizes and counts as nccl-tests runs them. */
/* nccl-tests' shifted buffers (backend.h, gq_coll_slices): iteration i uses
 * slice i % (span / bytes); a run touches min(span / bytes, max(warmup,
 * iters)) slices, one when there is no span or it is not above the size. */
static void test_shift_slices(void **state)
{
    (void)state;
    gq_coll_req q = {.op = GQ_COLL_ALL_REDUCE, .bytes = 8 * GQ_MiB, .warmup = 5, .iters = 20};
    assert_int_equal(gq_coll_slices(&q), 1); /* no span: one pair, reused */
    q.span = 1 * GQ_GiB;                     /* 128 steps: every iteration its own slice */
    assert_int_equal(gq_coll_slices(&q), 20);
    q.warmup = 30; /* the warmup counts from 0 too, through more slices */
    assert_int_equal(gq_coll_slices(&q), 30);
    q.warmup = 5;
    q.bytes = 512 * GQ_MiB; /* 2 steps: iterations alternate */
    assert_int_equal(gq_coll_slices(&q), 2);
    q.bytes = 1 * GQ_GiB; /* the span itself */
    assert_int_equal(gq_coll_slices(&q), 1);
    q.bytes = 3 * GQ_GiB; /* above the span (nccl-tests never asks): one */
    assert_int_equal(gq_coll_slices(&q), 1);
    q.bytes = 24 * GQ_MiB; /* 1 GiB / 24 MiB = 42 steps, rounded down */
    q.iters = 100;
    assert_int_equal(gq_coll_slices(&q), 42);
}

static void test_sizes_and_counts(void **state)
{
    (void)state;
    int n3[] = {3}, n2[] = {2, 4};
    assert_int_equal(gq_coll_size(GQ_COLL_ALL_REDUCE, 1000003, n3, 1), 1000000);
    /* all-gather over 3 ranks of 1 MiB: base = (262144 / 3) & ~3 = 87380 elements */
    assert_int_equal(gq_coll_size(GQ_COLL_ALL_GATHER, 1048576, n3, 1), 87380ull * 3 * 4);
    assert_int_equal(gq_coll_count(GQ_COLL_ALL_GATHER, 87380ull * 3 * 4, 3), 87380);
    assert_int_equal(gq_coll_count(GQ_COLL_ALL_REDUCE, 1048576, 8), 262144);
    assert_int_equal(gq_coll_count(GQ_COLL_ALL_TO_ALL, 1048576, 8), 32768);
    /* several groups: a multiple of 16 x lcm(2, 4) */
    assert_int_equal(gq_coll_size(GQ_COLL_REDUCE_SCATTER, 1000, n2, 2), 960);
    assert_int_equal(gq_coll_size(GQ_COLL_ALL_GATHER, 8, n3, 1), 0);
    assert_string_equal(gq_coll_redop(GQ_COLL_ALL_REDUCE), "sum");
    assert_string_equal(gq_coll_redop(GQ_COLL_ALL_GATHER), "none");
    assert_int_equal(gq_coll_root(GQ_COLL_BROADCAST), 0);
    assert_int_equal(gq_coll_root(GQ_COLL_ALL_REDUCE), -1);
    gq_coll_op op;
    gq_err err = {0};
    assert_int_equal(gq_coll_op_parse("alltoall", &op, &err), GQ_OK);
    assert_int_equal(op, GQ_COLL_ALL_TO_ALL);
    assert_int_equal(gq_coll_op_parse("allreduce", &op, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "expected all_reduce"));
    assert_int_equal(gq_coll_op_of_test(gq_coll_test_name(GQ_COLL_BROADCAST)), GQ_COLL_BROADCAST);
}

static void test_parse_groups(void **state)
{
    (void)state;
    gq_coll_group g[GQ_COLL_MAX_GROUPS];
    int n = 0;
    gq_err err = {0};
    assert_int_equal(gq_coll_parse_groups("0,1 2-3;4", "--group", g, &n, &err), GQ_OK);
    assert_int_equal(n, 3);
    assert_int_equal(g[1].ngpus, 2);
    assert_int_equal(g[1].gpus[1], 3);
    assert_int_equal(gq_coll_check_groups(g, n, 8, &err), GQ_OK);
    assert_int_equal(gq_coll_check_groups(g, n, 4, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "GPU 4 does not exist"));
    n = 0;
    assert_int_equal(gq_coll_parse_groups("0,1 1,2", "--group", g, &n, &err), GQ_OK);
    assert_int_equal(gq_coll_check_groups(g, n, 8, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "must not overlap"));
    n = 0;
    assert_int_equal(gq_coll_parse_groups("0,,1", "--group", g, &n, &err), GQ_E_USAGE);
    n = 0;
    assert_int_equal(gq_coll_parse_groups("a", "--group", g, &n, &err), GQ_E_USAGE);
    n = 0;
    assert_int_equal(gq_coll_parse_groups("3-1", "--group", g, &n, &err), GQ_E_USAGE);
    n = 0;
    assert_int_equal(gq_coll_parse_groups("  ", "--group", g, &n, &err), GQ_E_USAGE);
}

/* The figure is the busbw of the median per-iteration time; the data is
 * checked once, after the timed part of the last round. */
static void test_median_and_verify(void **state)
{
    (void)state;
    gq_backend be = {.ops = &fake_ops};
    double secs[] = {0.010, 0.030, 0.020, 0.011, 0.019};
    memcpy(fake.sec, secs, sizeof secs);
    gq_coll_req q = req_of(GQ_COLL_ALL_REDUCE, 100000000, 4, 0);
    gq_coll_opts o = {.rounds = 5, .warmup = 2, .iters = 10, .verify = true};
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_coll_measure(&be, &topo, &q, &o, &rs, &err), GQ_OK);
    assert_int_equal(rs.n, 1);
    const gq_record *r = &rs.v[0];
    assert_true(r->valid);
    assert_string_equal(r->test, "coll_all_reduce");
    assert_int_equal(r->rounds, 5);
    assert_near(r->window_s, 0.019, 1e-12);
    /* 0.1 GB in 19 ms = 5.263 GB/s algbw; x 1.5 */
    assert_near(r->value.median, 0.1 / 0.019 * 1.5, 1e-9);
    assert_near(gq_coll_record_algbw(r), 0.1 / 0.019, 1e-9);
    assert_near(r->value.max, 0.1 / 0.010 * 1.5, 1e-9);
    assert_int_equal(fake.verify_calls, 1);
    /* the limit: PCIe Gen4 x16 */
    assert_near(r->capacity_gbps, gq_pcie_gbps(4, 16), 1e-9);
    gq_records_free(&rs);
}

static void test_verify_failed(void **state)
{
    (void)state;
    gq_backend be = {.ops = &fake_ops};
    for (int i = 0; i < 8; i++)
        fake.sec[i] = 0.02;
    fake.bad_data = true;
    gq_coll_req q = req_of(GQ_COLL_ALL_GATHER, 100000000, 2, 0);
    gq_coll_opts o = {.rounds = 3, .warmup = 1, .iters = 5, .verify = true};
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_coll_measure(&be, &topo, &q, &o, &rs, &err), GQ_OK);
    assert_false(rs.v[0].valid);
    assert_true(rs.v[0].flags & GQ_FLAG_VERIFY_FAILED);
    assert_true(gq_record_failed(&rs.v[0]));
    gq_records_free(&rs);
}

/* A bus bandwidth above the group's physical limit is impossible: 1 GB
 * all-reduced over 4 PCIe GPUs in 10 ms is 150 GB/s busbw > 31.5. */
static void test_sanity_guard(void **state)
{
    (void)state;
    gq_backend be = {.ops = &fake_ops};
    for (int i = 0; i < 8; i++)
        fake.sec[i] = 0.010;
    gq_coll_req q = req_of(GQ_COLL_ALL_REDUCE, 1000000000, 4, 0);
    gq_coll_opts o = {.rounds = 3, .warmup = 1, .iters = 5, .verify = false};
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_coll_measure(&be, &topo, &q, &o, &rs, &err), GQ_OK);
    assert_false(rs.v[0].valid);
    assert_true(rs.v[0].flags & GQ_FLAG_IMPOSSIBLE);
    assert_non_null(strstr(rs.v[0].error, "PCIe link"));
    gq_records_free(&rs);
    /* the same time over GPUs 2 and 3 (100 GB/s of NVLink each): 1 GB in
     * 10 ms x 2(2-1)/2 = 100 GB/s is within 1 % of the limit, so valid */
    gq_coll_req q2 = req_of(GQ_COLL_ALL_REDUCE, 1000000000, 2, 0);
    q2.groups[0].gpus[0] = 2;
    q2.groups[0].gpus[1] = 3;
    assert_int_equal(gq_coll_measure(&be, &topo, &q2, &o, &rs, &err), GQ_OK);
    assert_true(rs.v[0].valid);
    assert_near(rs.v[0].capacity_gbps, 100.0, 1e-9);
    gq_records_free(&rs);
    /* a limit unknown for one GPU: nothing is claimed */
    topo.gpu[1].pcie_gbps = 0;
    topo.gpu[1].pcie_gen_cur = -1;
    gq_coll_group g = {.ngpus = 2, .gpus = {0, 1}};
    assert_near(gq_coll_group_limit(&topo, &g, NULL, 0), 0.0, 0);
}

/* Groups at once: a round whose windows overlap < 99 % is not counted; when
 * no round is, the records are invalid with flag overlap. */
static void test_overlap_rule(void **state)
{
    (void)state;
    gq_backend be = {.ops = &fake_ops};
    for (int i = 0; i < 8; i++)
        fake.sec[i] = 0.02;
    fake.shift[0] = 0.1; /* 0.2 s windows, group 1 half a window late in round 1 */
    gq_coll_req q = req_of(GQ_COLL_ALL_REDUCE, 100000000, 2, 2);
    gq_coll_opts o = {.rounds = 3, .warmup = 1, .iters = 10, .verify = false};
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_coll_measure(&be, &topo, &q, &o, &rs, &err), GQ_OK);
    assert_int_equal(rs.n, 2);
    assert_true(rs.v[0].valid);
    assert_int_equal(rs.v[0].rounds, 2);
    assert_true(rs.v[0].flags & GQ_FLAG_OVERLAP_RETRIED);
    assert_near(rs.v[1].overlap, 0.5, 1e-9);
    gq_records_free(&rs);
    memset(&fake, 0, sizeof fake);
    for (int i = 0; i < 8; i++)
        fake.sec[i] = 0.02;
    fake.shift[0] = fake.shift[1] = 0.1;
    o.rounds = 2;
    assert_int_equal(gq_coll_measure(&be, &topo, &q, &o, &rs, &err), GQ_OK);
    assert_false(rs.v[0].valid);
    assert_true(rs.v[1].flags & GQ_FLAG_OVERLAP);
    assert_false(gq_record_failed(&rs.v[1]));
    gq_records_free(&rs);
}

/* A backend without collectives: the probe says so in one line, and the
 * harness refuses with GQ_E_UNSUPP (the command maps the probe to exit 7). */
static void test_no_collectives(void **state)
{
    (void)state;
    gq_backend be = {.ops = &nocoll_ops};
    gq_coll_info info;
    gq_coll_probe(&be, &info);
    assert_false(info.available);
    assert_string_equal(info.why, "the plain backend has no collectives");
    gq_coll_req q = req_of(GQ_COLL_ALL_REDUCE, 1000000, 2, 0);
    gq_coll_opts o = {.rounds = 1, .iters = 1};
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_coll_measure(&be, &topo, &q, &o, &rs, &err), GQ_E_UNSUPP);
    assert_int_equal(rs.n, 0);
    assert_int_equal(gq_status_exit_code(GQ_E_NOLIB), 7);
}

/* A group that fails in a round ends the rounds for all; each record then
 * says what it has: the failed group its error, the other the rounds it
 * counted, flagged incomplete when it counted fewer than asked - also when
 * only the last round failed. */
static void test_group_fails_midway(void **state)
{
    (void)state;
    gq_backend be = {.ops = &fake_ops};
    for (int fail_round = 1; fail_round <= 3; fail_round++) {
        memset(&fake, 0, sizeof fake);
        for (int i = 0; i < 8; i++)
            fake.sec[i] = 0.02;
        fake.fail_call = fail_round;
        fake.fail_group = 1;
        gq_coll_req q = req_of(GQ_COLL_ALL_REDUCE, 100000000, 2, 2);
        gq_coll_opts o = {.rounds = 3, .warmup = 1, .iters = 10, .verify = false};
        gq_recordset rs = {0};
        gq_err err = {0};
        assert_int_equal(gq_coll_measure(&be, &topo, &q, &o, &rs, &err), GQ_OK);
        assert_int_equal(fake.calls, fail_round);
        assert_int_equal(rs.n, 2);
        /* the failed group: invalid, its backend's words */
        assert_false(rs.v[1].valid);
        assert_true(rs.v[1].flags & GQ_FLAG_ERROR);
        assert_string_equal(rs.v[1].error, "rank 1 of group 1 lost");
        /* the other: the rounds before the failure, if any, and incomplete */
        const gq_record *r = &rs.v[0];
        if (fail_round == 1) {
            assert_false(r->valid);
            assert_int_equal(r->rounds, 0);
        } else {
            if (!r->valid)
                fail_msg("failure in round %d: group 0 invalid: %s", fail_round, r->error);
            assert_int_equal(r->rounds, fail_round - 1);
            if (!(r->flags & GQ_FLAG_INCOMPLETE))
                fail_msg("failure in round %d: group 0 counted %d of 3 rounds, not flagged incomplete",
                         fail_round, r->rounds);
            assert_false(r->flags & GQ_FLAG_OVERLAP_RETRIED);
        }
        gq_records_free(&rs);
    }
    /* every round counted: complete */
    memset(&fake, 0, sizeof fake);
    for (int i = 0; i < 8; i++)
        fake.sec[i] = 0.02;
    gq_coll_req q = req_of(GQ_COLL_ALL_REDUCE, 100000000, 2, 2);
    gq_coll_opts o = {.rounds = 3, .warmup = 1, .iters = 10, .verify = false};
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_coll_measure(&be, &topo, &q, &o, &rs, &err), GQ_OK);
    for (int k = 0; k < 2; k++) {
        assert_true(rs.v[k].valid);
        assert_int_equal(rs.v[k].rounds, 3);
        assert_false(rs.v[k].flags & GQ_FLAG_INCOMPLETE);
    }
    gq_records_free(&rs);
}

/* A group that says it finished its iterations in no time (its end stamp
 * equal to its start, a clock that did not tick) is failed, never a rate of
 * size / 0. */
static void test_zero_length_window_fails(void **state)
{
    (void)state;
    gq_backend be = {.ops = &fake_ops};
    memset(&fake, 0, sizeof fake); /* sec 0: t_end == t_start */
    gq_coll_req q = req_of(GQ_COLL_ALL_REDUCE, 100000000, 2, 0);
    gq_coll_opts o = {.rounds = 3, .warmup = 1, .iters = 10, .verify = false};
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_coll_measure(&be, &topo, &q, &o, &rs, &err), GQ_OK);
    assert_int_equal(rs.n, 1);
    assert_false(rs.v[0].valid);
    assert_true(rs.v[0].flags & GQ_FLAG_ERROR);
    assert_string_equal(rs.v[0].error, "the collective failed");
    assert_int_equal(rs.v[0].rounds, 0);
    gq_records_free(&rs);
}

/* The edges no other test reaches: an unknown operation's factor, a group
 * limit without a topology or with a GPU beyond it, refused group lists,
 * the probe's reasons, a bad request, and a backend call that fails whole. */
static void test_edges(void **state)
{
    (void)state;
    assert_true(gq_coll_busbw_factor((gq_coll_op)99, 4) == 0);
    assert_true(gq_coll_busbw_factor(GQ_COLL_BROADCAST, 4) == 1.0);
    gq_coll_group g[GQ_COLL_MAX_GROUPS + 1] = {{.ngpus = 2, .gpus = {2, 3}}};
    char why[64] = "x";
    assert_true(gq_coll_group_limit(NULL, &g[0], why, sizeof why) == 0);
    assert_string_equal(why, "");
    assert_true(gq_coll_group_limit(&topo, &g[0], why, sizeof why) == 100.0);
    assert_string_equal(why, "GPU 2's 4 NVLinks (100.0 GB/s out)");
    g[0].gpus[1] = 4; /* beyond the machine */
    assert_true(gq_coll_group_limit(&topo, &g[0], why, sizeof why) == 0);

    gq_err err = {0};
    assert_int_equal(gq_coll_check_groups(g, 0, 8, &err), GQ_E_USAGE);
    assert_string_equal(err.msg, "--group: no group given, expected e.g. --group 0,1,2,3");
    assert_int_equal(gq_coll_check_groups(g, GQ_COLL_MAX_GROUPS + 1, 8, &err), GQ_E_USAGE);
    assert_string_equal(err.msg, "--group: 33 groups, at most 32 run at once");
    g[0] = (gq_coll_group){.ngpus = 1, .gpus = {0}};
    g[1].ngpus = 0;
    assert_int_equal(gq_coll_check_groups(g, 2, 8, &err), GQ_E_USAGE);
    assert_string_equal(err.msg, "--group 2 is empty, expected GPU indices like 0,1");
    g[1] = (gq_coll_group){.ngpus = 2, .gpus = {1, 1}};
    assert_int_equal(gq_coll_check_groups(g, 2, 8, &err), GQ_E_USAGE);
    assert_string_equal(err.msg, "--group 2 names GPU 1 twice; a GPU is one rank");

    static const char *const bad[] = {"1x", "1-", "1,", "4-2", "0-64", "0-63,0", "x1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int n = 0;
        assert_int_equal(gq_coll_parse_groups(bad[i], "--group", g, &n, &err), GQ_E_USAGE);
        char want[200];
        snprintf(
            want, sizeof want,
            "--group: '%s' is not a group, expected GPU indices below 64 separated by commas, e.g. 0,1,2,3 "
            "(several groups: \"0,1 2,3\")",
            bad[i]);
        assert_string_equal(err.msg, want);
    }
    int n = 0;
    assert_int_equal(gq_coll_parse_groups("0-63", "--group", g, &n, &err), GQ_OK);
    assert_int_equal(g[0].ngpus, 64);
    char spec[400] = "", many[400];
    for (int k = 0; k < 256; k++)
        strcat(spec, "1");
    n = 0;
    assert_int_equal(gq_coll_parse_groups(spec, "--group", g, &n, &err), GQ_E_USAGE);
    assert_string_equal(err.msg, "--group: group '1111111111111111111111111111111111111111...' is too long");
    spec[0] = 0;
    for (int k = 0; k <= GQ_COLL_MAX_GROUPS; k++) {
        snprintf(many, sizeof many, "%s%d ", spec, k);
        snprintf(spec, sizeof spec, "%s", many);
    }
    n = 0;
    assert_int_equal(gq_coll_parse_groups(spec, "--group", g, &n, &err), GQ_E_USAGE);
    assert_string_equal(err.msg, "--group: more than 32 groups");
    assert_int_equal(n, GQ_COLL_MAX_GROUPS);

    gq_backend be = {.ops = &fake_ops};
    gq_coll_info info;
    fake.probe_rc = GQ_E_NOLIB;
    gq_coll_probe(&be, &info);
    assert_false(info.available);
    assert_string_equal(info.why, "the fake backend cannot run collectives");
    fake.probe_rc = 0;
    fake.probe_off = true;
    gq_coll_probe(&be, &info);
    assert_string_equal(info.why, "collectives are not available");
    fake.probe_off = false;
    gq_coll_probe(&be, &info);
    assert_true(info.available);
    assert_string_equal(info.why, "");

    gq_coll_req q = req_of(GQ_COLL_ALL_REDUCE, 1000000, 2, 0);
    gq_coll_opts o = {.rounds = 2, .iters = 10};
    gq_recordset rs = {0};
    q.iters = 0;
    assert_int_equal(gq_coll_measure(&be, &topo, &q, &o, &rs, &err), GQ_E_USAGE);
    assert_string_equal(err.msg, "collectives: bad request (groups 1, rounds 2, iters 0, 1000000 B)");
    q.iters = 10;
    gq_interrupt_request();
    assert_int_equal(gq_coll_measure(&be, &topo, &q, &o, &rs, &err), GQ_E_INTR);
    gq_interrupt_clear();
    assert_string_equal(err.msg, "interrupted");
    assert_int_equal(fake.calls, 0);
    assert_int_equal(rs.n, 0);
    /* the call fails whole: Ctrl-C, no memory or unsupported end the run ... */
    fake.run_rc = GQ_E_INTR;
    snprintf(fake.run_msg, sizeof fake.run_msg, "interrupted in NCCL");
    assert_int_equal(gq_coll_measure(&be, &topo, &q, &o, &rs, &err), GQ_E_INTR);
    assert_string_equal(err.msg, "interrupted in NCCL");
    assert_int_equal(rs.n, 0);
    /* ... another failure fails the records, with the backend's words or a default */
    fake.run_rc = GQ_E_BACKEND;
    fake.calls = 0;
    assert_int_equal(gq_coll_measure(&be, &topo, &q, &o, &rs, &err), GQ_OK);
    assert_int_equal(fake.calls, 1);
    assert_int_equal(rs.n, 1);
    assert_false(rs.v[0].valid);
    assert_true(rs.v[0].flags & GQ_FLAG_ERROR);
    assert_string_equal(rs.v[0].error, "interrupted in NCCL");
    fake.run_msg[0] = 0;
    assert_int_equal(gq_coll_measure(&be, &topo, &q, &o, &rs, &err), GQ_OK);
    assert_int_equal(rs.n, 2);
    assert_string_equal(rs.v[1].error, "the collective failed");
    gq_records_free(&rs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_busbw_factors, setup),
        cmocka_unit_test_setup(test_sizes_and_counts, setup),
        cmocka_unit_test_setup(test_shift_slices, setup),
        cmocka_unit_test_setup(test_parse_groups, setup),
        cmocka_unit_test_setup(test_median_and_verify, setup),
        cmocka_unit_test_setup(test_verify_failed, setup),
        cmocka_unit_test_setup(test_sanity_guard, setup),
        cmocka_unit_test_setup(test_overlap_rule, setup),
        cmocka_unit_test_setup(test_group_fails_midway, setup),
        cmocka_unit_test_setup(test_no_collectives, setup),
        cmocka_unit_test_setup(test_zero_length_window_fails, setup),
        cmocka_unit_test_setup(test_edges, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
