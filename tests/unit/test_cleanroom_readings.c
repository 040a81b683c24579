/* The clean room's reading of utilization before a step (measure/cleanroom.c)
 * on a scripted backend: the lowest of the readings counts, so the tail of
 * gpuqual's own previous step (or of a process that just ended), which fades
 * within the window, never flags a GPU, while a load that stays above the
 * limit in every reading does, with its lowest reading in the detail. Memory
 * counts only where the process list is hidden, by its smallest reading. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "measure/cleanroom.h"

/* Readings per GPU, one per call of observe, in order (the last repeats). */
static double util[2][GQ_CLEAN_SAMPLES], mem[2][GQ_CLEAN_SAMPLES];
static int calls[2];
static bool hidden;
static double waited;

static int observe(gq_backend *be, int gpu, gq_gpu_load *out, gq_err *err)
{
    (void)be;
    (void)err;
    memset(out, 0, sizeof *out);
    int k = calls[gpu] < GQ_CLEAN_SAMPLES ? calls[gpu] : GQ_CLEAN_SAMPLES - 1;
    calls[gpu]++;
    out->procs_known = !hidden;
    out->util_pct = util[gpu][k];
    out->mem_used_mib = mem[gpu][k];
    return GQ_OK;
}

static void wait_s(gq_backend *be, double s)
{
    (void)be;
    waited += s;
}

static const gq_backend_ops ops = {
    .name = "scripted", .flags = GQ_BE_VIRTUAL_TIME, .wait = wait_s, .observe = observe};
static gq_backend be = {.ops = &ops};

static void script(int gpu, const double *u, const double *m)
{
    for (int k = 0; k < GQ_CLEAN_SAMPLES; k++) {
        util[gpu][k] = u[k];
        mem[gpu][k] = m[k];
    }
}

static const gq_contam_item *item_of(const gq_cleanroom *c, int gpu, const char *kind)
{
    for (int i = 0; i < c->step.n; i++)
        if (c->step.item[i].gpu == gpu && !strcmp(c->step.item[i].kind, kind))
            return &c->step.item[i];
    return NULL;
}

static void step(gq_cleanroom *c)
{
    static const int gpus[] = {0, 1};
    calls[0] = calls[1] = 0;
    waited = 0;
    gq_cleanroom_step(c, gpus, 2, GQ_CLEAN_STEP_S);
    assert_int_equal(calls[0], GQ_CLEAN_SAMPLES);
    assert_int_equal(calls[1], GQ_CLEAN_SAMPLES);
    assert_true(waited > 0.999 * GQ_CLEAN_STEP_S && waited < 1.001 * GQ_CLEAN_STEP_S);
}

/* GPU 0: its previous step's tail fades (high, then idle): clean. GPU 1: a
 * tenant above the limit in every reading: flagged, at its lowest reading. */
static void lowest_reading_counts(void **state)
{
    (void)state;
    gq_cleanroom c;
    gq_cleanroom_init(&c, &be);
    assert_true(c.on);
    hidden = false;
    const double lo = GQ_CLEAN_UTIL_PCT;
    double fade[GQ_CLEAN_SAMPLES], busy[GQ_CLEAN_SAMPLES], zero[GQ_CLEAN_SAMPLES] = {0};
    for (int k = 0; k < GQ_CLEAN_SAMPLES; k++) {
        fade[k] = k == 0 ? 100 : k == 1 ? 3 * lo : lo / 2;
        busy[k] = k == 2 ? lo + 7 : 90;
    }
    script(0, fade, zero);
    script(1, busy, zero);
    step(&c);
    assert_null(item_of(&c, 0, "utilization"));
    const gq_contam_item *it = item_of(&c, 1, "utilization");
    assert_non_null(it);
    char want[32];
    snprintf(want, sizeof want, "%.0f%% utilization", lo + 7);
    if (!strstr(it->detail, want))
        fail_msg("detail '%s' does not give the lowest reading (%s)", it->detail, want);
    assert_int_equal(c.step.n, 1);
    /* the order of the readings does not matter: the fading tail read last */
    for (int k = 0; k < GQ_CLEAN_SAMPLES; k++)
        fade[k] = k == GQ_CLEAN_SAMPLES - 1 ? 100 : lo / 2;
    script(0, fade, zero);
    step(&c);
    assert_null(item_of(&c, 0, "utilization"));
    assert_non_null(item_of(&c, 1, "utilization"));
    /* exactly at the limit is not above it; one reading under it clears the GPU */
    for (int k = 0; k < GQ_CLEAN_SAMPLES; k++)
        busy[k] = k == 3 ? lo : 95;
    script(1, busy, zero);
    step(&c);
    assert_int_equal(c.step.n, 0);
}

/* Where the process list is hidden, memory in use counts, by its smallest
 * reading (a transient allocation is not a tenant); where it can be read,
 * memory never counts. */
static void memory_where_processes_hidden(void **state)
{
    (void)state;
    gq_cleanroom c;
    gq_cleanroom_init(&c, &be);
    double zero[GQ_CLEAN_SAMPLES] = {0}, trans[GQ_CLEAN_SAMPLES], held[GQ_CLEAN_SAMPLES];
    for (int k = 0; k < GQ_CLEAN_SAMPLES; k++) {
        trans[k] = k == 1 ? 512 : 4 * GQ_CLEAN_MEM_MIB;
        held[k] = k == 4 ? GQ_CLEAN_MEM_MIB + 100 : 4 * GQ_CLEAN_MEM_MIB;
    }
    script(0, zero, trans);
    script(1, zero, held);
    hidden = true;
    step(&c);
    assert_null(item_of(&c, 0, "memory"));
    const gq_contam_item *it = item_of(&c, 1, "memory");
    assert_non_null(it);
    char want[32];
    snprintf(want, sizeof want, "%.0f MiB", GQ_CLEAN_MEM_MIB + 100);
    assert_non_null(strstr(it->detail, want));
    assert_true(c.procs_hidden[1]);
    hidden = false;
    step(&c);
    assert_int_equal(c.step.n, 0);
    assert_false(c.procs_hidden[1]);
}

/* gq_contam_add (core/record.h): an item is new unless one of the same kind,
 * GPU and process is kept (then the first one stays, detail and all); at most
 * GQ_CONTAM_MAX are kept, and a new one past them is refused while one already
 * kept is still "there". The set is allocated to its exact size, so that a
 * look past the last item kept is an overflow the ASan build reports. */
static void contam_set_keeps_distinct_items(void **state)
{
    (void)state;
    gq_contam *c = malloc(sizeof *c);
    assert_non_null(c);
    memset(c, 0, sizeof *c);
    static const struct {
        const char *kind;
        int gpu, pid;
    } k[] = {{"process", 0, 4242},
             {"process", 1, 4242},
             {"process", 0, 77},
             {"utilization", 0, 0},
             {"memory", 0, 0}};
    gq_contam_item it;
    for (int i = 0; i < 5; i++) {
        memset(&it, 0, sizeof it);
        snprintf(it.kind, sizeof it.kind, "%s", k[i].kind);
        it.gpu = k[i].gpu;
        it.pid = k[i].pid;
        snprintf(it.detail, sizeof it.detail, "item %d", i);
        /* the first GQ_CONTAM_MAX are kept, the one after is refused */
        assert_int_equal(gq_contam_add(c, &it), i < GQ_CONTAM_MAX);
        assert_int_equal(c->n, i < GQ_CONTAM_MAX ? i + 1 : GQ_CONTAM_MAX);
        /* the same one again: "there", not added twice */
        if (i < GQ_CONTAM_MAX) {
            snprintf(it.detail, sizeof it.detail, "again %d", i);
            assert_true(gq_contam_add(c, &it));
            assert_int_equal(c->n, i + 1);
        }
    }
    assert_int_equal(GQ_CONTAM_MAX, 4);
    for (int i = 0; i < GQ_CONTAM_MAX; i++) {
        char want[16];
        snprintf(want, sizeof want, "item %d", i);
        assert_string_equal(c->item[i].detail, want);
    }
    /* full: an item kept is still there, a new one is not */
    memset(&it, 0, sizeof it);
    snprintf(it.kind, sizeof it.kind, "utilization");
    assert_true(gq_contam_add(c, &it));
    it.gpu = 1;
    assert_false(gq_contam_add(c, &it));
    assert_int_equal(c->n, GQ_CONTAM_MAX);
    char sum[512];
    gq_contam_summary(c, sum, sizeof sum);
    assert_string_equal(sum, "GPU 0: item 0; GPU 1: item 1; GPU 0: item 2; GPU 0: item 3");
    /* an item whose every field is empty is an item like another (nothing of
     * the set is read past what it keeps) */
    memset(c, 0, sizeof *c);
    memset(&it, 0, sizeof it);
    assert_true(gq_contam_add(c, &it));
    assert_int_equal(c->n, 1);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lowest_reading_counts),
        cmocka_unit_test(memory_where_processes_hidden),
        cmocka_unit_test(contam_set_keeps_distinct_items),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
