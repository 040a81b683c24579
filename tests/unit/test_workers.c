/* core/workers: CPU lists, the barrier shared with the starting thread (the
 * synchronized start of the CUDA backend relies on it), pinning, and bad
 * arguments. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/workers.h"

static void cpulist(void **state)
{
    (void)state;
    unsigned long long m[1024 / 64];
    assert_int_equal(gq_cpulist_parse("0-3,8", m, 1024), 5);
    assert_true(m[0] == 0x10full);
    assert_int_equal(gq_cpulist_parse(" 0-1 , 5 ", m, 1024), 3);
    assert_true(m[0] == 0x23ull);
    assert_int_equal(gq_cpulist_parse("64,127", m, 1024), 2);
    assert_true(m[0] == 0 && m[1] == (1ull | 1ull << 63));
    assert_int_equal(gq_cpulist_parse("1,1,0-1", m, 1024), 2);
    assert_int_equal(gq_cpulist_parse("", m, 1024), 0);
    assert_int_equal(gq_cpulist_parse("a", m, 1024), -1);
    assert_int_equal(gq_cpulist_parse("3-1", m, 1024), -1);
    assert_int_equal(gq_cpulist_parse("1-", m, 1024), -1);
    assert_int_equal(gq_cpulist_parse("1;2", m, 1024), -1);
}

#define N 6
#define ROUNDS 50

typedef struct shared {
    atomic_int arrived;  /* workers past their first barrier call, this round */
    atomic_int released; /* the round the starting thread has released */
    int seen[N][ROUNDS]; /* what each worker saw of `released` after the 2nd barrier */
    int before[N][ROUNDS];
} shared;

static void worker(void *arg, int idx, gq_workers *w)
{
    shared *s = arg;
    for (int r = 0; r < ROUNDS; r++) {
        s->before[idx][r] = atomic_load(&s->released);
        atomic_fetch_add(&s->arrived, 1);
        gq_workers_barrier(w); /* all have queued */
        gq_workers_barrier(w); /* the start has been released */
        s->seen[idx][r] = atomic_load(&s->released);
        gq_workers_barrier(w); /* round done */
    }
}

static void barrier_protocol(void **state)
{
    (void)state;
    static shared s;
    memset(&s, 0, sizeof s);
    gq_workers *w = NULL;
    gq_err err = {0};
    assert_int_equal(gq_workers_start(&w, N, worker, &s, NULL, &err), GQ_OK);
    for (int r = 0; r < ROUNDS; r++) {
        gq_workers_barrier(w);
        /* Every worker reached the first barrier of this round. */
        assert_int_equal(atomic_load(&s.arrived), N * (r + 1));
        atomic_store(&s.released, r + 1);
        gq_workers_barrier(w);
        gq_workers_barrier(w);
    }
    gq_workers_join(w);
    for (int i = 0; i < N; i++)
        for (int r = 0; r < ROUNDS; r++) {
            assert_int_equal(s.before[i][r], r);   /* not released before all arrived */
            assert_int_equal(s.seen[i][r], r + 1); /* the release is seen after the barrier */
        }
}

static atomic_int pinned_ok, pinned_n;

static void pinned(void *arg, int idx, gq_workers *w)
{
    (void)arg;
    (void)w;
    cpu_set_t set;
    CPU_ZERO(&set);
    pthread_getaffinity_np(pthread_self(), sizeof set, &set);
    atomic_fetch_add(&pinned_n, 1);
    if (idx == 0 && CPU_COUNT(&set) == 1 && CPU_ISSET(0, &set))
        atomic_fetch_add(&pinned_ok, 1);
    if (idx == 1 && CPU_COUNT(&set) >= 1)
        atomic_fetch_add(&pinned_ok, 1);
}

static void pinning(void **state)
{
    (void)state;
    /* Worker 0 on CPU 0 (always online); worker 1 unpinned; worker 2 gets a
     * list that cannot be parsed and runs unpinned rather than failing. */
    const char *lists[3] = {"0", "", "zz"};
    gq_workers *w = NULL;
    gq_err err = {0};
    atomic_store(&pinned_ok, 0);
    atomic_store(&pinned_n, 0);
    assert_int_equal(gq_workers_start(&w, 3, pinned, NULL, lists, &err), GQ_OK);
    gq_workers_join(w);
    assert_int_equal(atomic_load(&pinned_n), 3);
    assert_int_equal(atomic_load(&pinned_ok), 2);
}

static void bad_args(void **state)
{
    (void)state;
    gq_workers *w = (gq_workers *)1;
    gq_err err = {0};
    assert_int_equal(gq_workers_start(&w, 0, pinned, NULL, NULL, &err), GQ_E_FAIL);
    assert_null(w);
    assert_non_null(strstr(err.msg, "at least one"));
    gq_workers_join(NULL); /* harmless */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cpulist),
        cmocka_unit_test(barrier_protocol),
        cmocka_unit_test(pinning),
        cmocka_unit_test(bad_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
