/* Out of memory, one allocation at a time: this program is linked with
 * -Wl,--wrap=malloc,calloc,realloc (CMakeLists.txt), so every allocation
 * gqcore makes passes through the wrappers below, which can fail the k-th.
 * For each k up to the number a clean run makes, the analysis must report
 * out of memory (GQ_E_NOMEM, its error line) and neither crash, nor read
 * what it did not get, nor leak (the ASan build's LeakSanitizer). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/domains.h"
#include "analysis/placement.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static long fail_at; /* the allocation to fail, counted from 1; 0: none */
static long nalloc;  /* allocations since the count was reset */

static bool fail_now(void)
{
    return ++nalloc == fail_at;
}

void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __real_realloc(p, n);
}

static void arm(long k)
{
    fail_at = k;
    nalloc = 0;
}

/* 8 GPUs, seed 001's shape: 53 GB/s within {0-3} and {4-7}, 38 across,
 * with intervals; two domains. */
static void two_domains(gq_pairmatrix *m)
{
    gq_pairmatrix_init(m, NULL, 8);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            if (i != j) {
                double v = (i < 4) == (j < 4) ? 53.0 + 0.1 * ((i + j) % 3) : 38.0 + 0.2 * ((i * j) % 4);
                m->gbps[i][j] = v;
                m->lo[i][j] = v - 0.3;
                m->hi[i][j] = v + 0.3;
            }
}

static void domains_every_allocation(void **state)
{
    (void)state;
    gq_pairmatrix *m = malloc(sizeof *m);
    assert_non_null(m);
    two_domains(m);
    gq_domains d;
    gq_err e = {0};
    arm(0);
    assert_int_equal(gq_domains_cluster(m, NULL, &d, &e), GQ_OK);
    long total = nalloc;
    assert_int_equal(d.ndomains, 2);
    assert_true(total >= 3);
    for (long k = 1; k <= total; k++) {
        arm(k);
        memset(&e, 0, sizeof e);
        int rc = gq_domains_cluster(m, NULL, &d, &e);
        arm(0);
        if (rc != GQ_E_NOMEM)
            fail_msg("allocation %ld of %ld failed: rc %d, want GQ_E_NOMEM", k, total, rc);
        assert_string_equal(e.msg, "out of memory");
    }
    /* and afterwards, the same answer */
    assert_int_equal(gq_domains_cluster(m, NULL, &d, &e), GQ_OK);
    assert_int_equal(d.ndomains, 2);
    free(m);
}

/* 4 GPUs, P2P 50 GB/s within {0,1} and {2,3}, 20 across; host 25 each. */
static gq_place_model *small_model(void)
{
    gq_place_model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->ngpu = 4;
    m->tolerance = 0.05;
    for (int i = 0; i < 4; i++) {
        m->h2d[i] = 25;
        m->d2h[i] = 26;
        for (int j = 0; j < 4; j++)
            if (i != j) {
                m->p2p[i][j] = i / 2 == j / 2 ? 50 : 20;
                m->staged[i][j] = 12;
            }
    }
    return m;
}

static void placement_every_allocation(void **state)
{
    (void)state;
    gq_place_model *m = small_model();
    const gq_place_roles roles[] = {{.prefill = 2, .decode = 2}, {.offload = 2}, {.replicas = 2}};
    for (size_t r = 0; r < sizeof roles / sizeof roles[0]; r++) {
        gq_place_result *res = calloc(1, sizeof *res);
        assert_non_null(res);
        gq_err e = {0};
        arm(0);
        if (gq_place_solve(m, &roles[r], res, &e))
            fail_msg("roles %zu: %s", r, e.msg);
        long total = nalloc;
        for (long k = 1; k <= total; k++) {
            arm(k);
            memset(&e, 0, sizeof e);
            int rc = gq_place_solve(m, &roles[r], res, &e);
            arm(0);
            if (rc != GQ_E_NOMEM)
                fail_msg("roles %zu: allocation %ld of %ld failed: rc %d, want GQ_E_NOMEM", r, k, total, rc);
            assert_string_equal(e.msg, "placement: out of memory");
        }
        free(res);
    }
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(domains_every_allocation),
        cmocka_unit_test(placement_every_allocation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
