/* The sim's collectives called directly (src/backend/sim/sim_coll.c), for
 * the shapes the harness's tests do not run: all-to-all, broadcast down a
 * chain, a group of one GPU, and a machine without NCCL. The iteration time
 * of each comes from the backend's window, noise off, and is held to the
 * model's shape (docs/method.md, "Collectives"). Written for issue 30. */
#include "simtest.h"

#include "backend/sim/sim.h"
#include "measure/collective.h"

#define LAUNCH 6e-6 /* s: sim_coll.c's launch per iteration */

/* Seconds per timed iteration of op over groups (one or more, "0,1 2,3"),
 * each group's in t[k]; every group must succeed. */
static int iter_times(gq_backend *be, gq_coll_op op, uint64_t bytes, const char *groups, double *t)
{
    gq_coll_req q = {.op = op, .bytes = bytes, .warmup = 1, .iters = 10, .verify = true};
    gq_err e = {0};
    if (gq_coll_parse_groups(groups, "groups", q.groups, &q.ngroups, &e))
        fail_msg("%s", e.msg);
    gq_coll_result res[GQ_COLL_MAX_GROUPS];
    if (be->ops->coll_run(be, &q, res, &e))
        fail_msg("%s on %s: %s", gq_coll_op_name(op), groups, e.msg);
    for (int k = 0; k < q.ngroups; k++) {
        if (res[k].status != GQ_OK)
            fail_msg("%s group %d of %s: %s", gq_coll_op_name(op), k, groups, res[k].error);
        assert_int_equal(res[k].iters_done, 10);
        assert_true(res[k].verified && res[k].verify_ok);
        t[k] = (res[k].t_end - res[k].t_start) / 10;
        assert_true(t[k] > LAUNCH);
    }
    return q.ngroups;
}

static double iter_time(gq_backend *be, gq_coll_op op, uint64_t bytes, const char *group)
{
    double t[GQ_COLL_MAX_GROUPS];
    iter_times(be, op, bytes, group, t);
    return t[0];
}

static bool near(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fabs(b);
}

/* All-to-all of two ranks moves what all-gather of two does (half the
 * buffer each way, one step); all-reduce of two takes two steps of the same
 * flows. Of four ranks, each sends three quarters of its buffer (a quarter
 * to each peer) instead of a half: 1.5 times the copy. */
static void all_to_all(void **state)
{
    (void)state;
    gq_backend *be = st_open("h200x2", 1, 0);
    const uint64_t B = 256 * GQ_MiB;
    double a2a = iter_time(be, GQ_COLL_ALL_TO_ALL, B, "0,1");
    double ag = iter_time(be, GQ_COLL_ALL_GATHER, B, "0,1");
    double ar = iter_time(be, GQ_COLL_ALL_REDUCE, B, "0,1");
    if (!near(a2a, ag, 1e-6) || !near(ar - LAUNCH, 2 * (a2a - LAUNCH), 1e-6))
        fail_msg("all-to-all %g s, all-gather %g s, all-reduce %g s", a2a, ag, ar);
    /* twice the bytes, twice the copy */
    double a2a2 = iter_time(be, GQ_COLL_ALL_TO_ALL, 2 * B, "0,1");
    assert_true(near(a2a2 - LAUNCH, 2 * (a2a - LAUNCH), 0.01));
    st_close(be);

    be = st_open("rtxpro6000x8", 1, 0);
    double a4 = iter_time(be, GQ_COLL_ALL_TO_ALL, B, "0,1,2,3");
    double a2 = iter_time(be, GQ_COLL_ALL_TO_ALL, B, "0,1");
    if (!near(a4 - LAUNCH, 1.5 * (a2 - LAUNCH), 0.01))
        fail_msg("all-to-all of 4: %g s, of 2: %g s", a4, a2);
    st_close(be);
}

/* Broadcast: the whole buffer down the chain 0 -> 1 -> 2 ..., one step,
 * the pipeline filling one slot (512 KiB) per hop past the second rank. Of
 * two ranks over NVLink: one copy of B one way, as long as all-to-all's B
 * each way (both at NCCL's NVLink rate). */
static void broadcast(void **state)
{
    (void)state;
    gq_backend *be = st_open("h200x2", 1, 0);
    const uint64_t B = 256 * GQ_MiB;
    double b2 = iter_time(be, GQ_COLL_BROADCAST, B, "0,1");
    double a2a = iter_time(be, GQ_COLL_ALL_TO_ALL, 2 * B, "0,1");
    if (!near(b2, a2a, 1e-6))
        fail_msg("broadcast %g s, all-to-all of twice the bytes %g s", b2, a2a);
    st_close(be);

    be = st_open("rtxpro6000x8", 1, 0);
    double c2 = iter_time(be, GQ_COLL_BROADCAST, B, "0,1");
    double c3 = iter_time(be, GQ_COLL_BROADCAST, B, "0,1,2");
    double c4 = iter_time(be, GQ_COLL_BROADCAST, B, "0,1,2,3");
    /* the same step (every hop its own link pair): 1 + 1/512 and 1 + 2/512 of it */
    double slots = (double)B / (512 * 1024);
    if (!(c3 > c2) || !near((c4 - LAUNCH) / (c3 - LAUNCH), (slots + 2) / (slots + 1), 1e-6))
        fail_msg("broadcast of 2: %g s, 3: %g s, 4: %g s", c2, c3, c4);
    /* a buffer smaller than a slot: each extra hop adds the whole step */
    double s2 = iter_time(be, GQ_COLL_BROADCAST, 64 * 1024, "0,1");
    double s3 = iter_time(be, GQ_COLL_BROADCAST, 64 * 1024, "0,1,2");
    if (!near(s3 - LAUNCH, 2 * (s2 - LAUNCH), 0.01))
        fail_msg("broadcast of 64 KiB to 2: %g s, to 3: %g s", s2, s3);
    st_close(be);
}

/* A group of one GPU copies its buffer on the GPU, once per iteration, at
 * the GPU's local copy rate (h200: 2092 GB/s), whatever the op. */
static void one_rank(void **state)
{
    (void)state;
    gq_backend *be = st_open("h200x2", 1, 0);
    const uint64_t B = 1024 * GQ_MiB;
    double t = iter_time(be, GQ_COLL_ALL_REDUCE, B, "0");
    if (!near(t - LAUNCH, (double)B / 2092e9, 0.01))
        fail_msg("one rank: %g s per iteration", t);
    double tb = iter_time(be, GQ_COLL_BROADCAST, B, "1");
    assert_true(near(tb, t, 1e-6));
    st_close(be);
}

/* no-nccl: a run is refused, NCCL not found. */
static void without_nccl(void **state)
{
    (void)state;
    static gq_backend be;
    gq_backend_register_builtin();
    gq_backend_opts o;
    gq_sim_opts(&o, "h200x2", 1, 0, "no-nccl");
    gq_err e = {0};
    assert_int_equal(gq_backend_open(&be, "sim", &o, &e), GQ_OK);
    gq_coll_req q = {.op = GQ_COLL_ALL_REDUCE, .bytes = GQ_MiB, .ngroups = 1, .iters = 1};
    q.groups[0].ngpus = 2;
    q.groups[0].gpus[0] = 0;
    q.groups[0].gpus[1] = 1;
    gq_coll_result res[1];
    assert_int_equal(be.ops->coll_run(&be, &q, res, &e), GQ_E_UNSUPP);
    assert_string_equal(e.msg, "NCCL not found (simulated machine without NCCL)");
    gq_backend_close(&be);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_to_all),
        cmocka_unit_test(broadcast),
        cmocka_unit_test(one_rank),
        cmocka_unit_test(without_nccl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
