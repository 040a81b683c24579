/* The clean room's paths no other test ran (issue 30): a process not
 * visible from here, a GPU whose readings fail, a clean room that is off, a
 * backend without virtual time (a real pause), the note where the
 * process lists are hidden, and a record's error set without words. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "measure/cleanroom.h"
#include "measure/harness_internal.h"

static int calls[2];
static bool fail_gpu1;

/* GPU 0: busy at 90 %, one graphics process not visible here holding 300
 * MiB; GPU 1: the same, or its reading fails. */
static int observe(gq_backend *be, int gpu, gq_gpu_load *out, gq_err *err)
{
    (void)be;
    calls[gpu]++;
    if (gpu == 1 && fail_gpu1)
        return gq_err_set(err, GQ_E_FAIL, "no reading");
    memset(out, 0, sizeof *out);
    out->procs_known = gpu == 0;
    out->util_pct = 90;
    out->mem_used_mib = 4000;
    out->nprocs = 1;
    out->procs[0] = (gq_gpu_proc){.pid = 4242, .graphics = true, .visible = false, .mem_mib = 300};
    return GQ_OK;
}

static const gq_backend_ops ops = {.name = "scripted", .observe = observe}; /* real time */
static gq_backend be = {.ops = &ops};

static void invisible_process_and_failed_reading(void **state)
{
    (void)state;
    gq_cleanroom *c = calloc(1, sizeof *c);
    gq_cleanroom_init(c, &be);
    assert_true(c->on);
    static const int gpus[] = {0, 1};
    fail_gpu1 = true;
    calls[0] = calls[1] = 0;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    gq_cleanroom_step(c, gpus, 2, 0.04); /* a real pause between readings: 0.04 s in all */
    clock_gettime(CLOCK_MONOTONIC, &b);
    double took = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    if (took < 0.039)
        fail_msg("the pauses took %.4f s, expected 0.04 s", took);
    assert_int_equal(calls[0], GQ_CLEAN_SAMPLES);
    assert_int_equal(calls[1], GQ_CLEAN_SAMPLES);
    /* GPU 0 busy; GPU 1 read nothing, so nothing is said of it */
    assert_int_equal(c->step.n, 1);
    assert_int_equal(c->step.item[0].gpu, 0);
    assert_string_equal(c->step.item[0].kind, "utilization");
    assert_false(c->procs_hidden[1]);
    gq_contam out = {0};
    assert_true(gq_cleanroom_check(c, gpus, 1, &out));
    assert_int_equal(out.n, 2);
    assert_string_equal(out.item[0].kind, "process");
    assert_int_equal(out.item[0].pid, 4242);
    assert_string_equal(
        out.item[0].detail,
        "graphics process 4242, not visible from here (another container or the host), 300 MiB");
    free(c);
}

/* Off (a backend that cannot observe, or turned off): a step reads nothing
 * and clears what the last one found; check finds nothing. */
static void off_reads_nothing(void **state)
{
    (void)state;
    gq_cleanroom *c = calloc(1, sizeof *c);
    gq_cleanroom_init(c, &be);
    c->on = false;
    c->step.n = 3;
    calls[0] = 0;
    static const int gpus[] = {0};
    gq_cleanroom_step(c, gpus, 1, 0);
    assert_int_equal(c->step.n, 0);
    assert_int_equal(calls[0], 0);
    gq_contam out = {0};
    assert_false(gq_cleanroom_check(c, gpus, 1, &out));
    assert_false(gq_cleanroom_check(NULL, gpus, 1, &out));
    assert_int_equal(calls[0], 0);
    free(c);
}

/* The note where nothing was flagged but a process list was hidden. */
static void note_hidden_lists(void **state)
{
    (void)state;
    gq_cleanroom *c = calloc(1, sizeof *c);
    gq_cleanroom_init(c, &be);
    char note[256];
    gq_cleanroom_note(c, note, sizeof note);
    assert_string_equal(note, "");
    c->procs_hidden[5] = true;
    gq_cleanroom_note(c, note, sizeof note);
    assert_string_equal(note, "the GPUs' process lists cannot be read here (a container?): other work was "
                              "watched through utilization and memory only");
    free(c);
}

/* A record's error set without words: flagged and not valid, its words kept. */
static void error_without_words(void **state)
{
    (void)state;
    gq_record *r = calloc(1, sizeof *r);
    r->valid = true;
    gq_hrec_set_error(r, GQ_FLAG_ERROR, NULL);
    assert_false(r->valid);
    assert_true(r->flags & GQ_FLAG_ERROR);
    assert_string_equal(r->error, "");
    gq_hrec_set_error(r, GQ_FLAG_VERIFY_FAILED, "");
    assert_true(r->flags & GQ_FLAG_VERIFY_FAILED);
    assert_string_equal(r->error, "");
    gq_hrec_set_error(r, GQ_FLAG_ERROR, "bad");
    gq_hrec_set_error(r, GQ_FLAG_ERROR, NULL);
    assert_string_equal(r->error, "bad");
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(invisible_process_and_failed_reading),
        cmocka_unit_test(off_reads_nothing),
        cmocka_unit_test(note_hidden_lists),
        cmocka_unit_test(error_without_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
