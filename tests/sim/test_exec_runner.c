/* The one plan runner (exec/plan_run.h) on the simulated h200x2: it runs every
 * item of every plan and gives the records the harness gives, calls its
 * callbacks once per item, skips latency items when asked, stops on an
 * abort and on Ctrl-C keeping what was measured, and runs an item again
 * when the result callback asks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend/backend.h"
#include "backend/sim/sim.h"
#include "core/interrupt.h"
#include "core/units.h"
#include "exec/plan_run.h"
#include "measure/journal.h"
#include "measure/catalog.h"
#include "measure/harness.h"

typedef struct fixture {
    gq_backend be;
    gq_topo topo;
    gq_harness_opts ho;
    gq_plan plans[2];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    gq_backend_register_builtin();
    gq_backend_opts bo = {0};
    gq_err e = {0};
    if (gq_sim_opts(&bo, "h200x2", 1, 0, NULL))
        return -1;
    if (gq_backend_open(&f->be, "sim", &bo, &e))
        return -1;
    gq_topo_init(&f->topo);
    if (f->be.ops->discover(&f->be, &f->topo, &e))
        return -1;
    gq_harness_opts_default(&f->ho);
    f->ho.rounds = 3;
    gq_plan_opts po = {.bytes = 64 * GQ_MiB, .host_numa = GQ_NUMA_LOCAL, .numa_nodes = 1, .ngpus = 2};
    po.gpus[0] = 0;
    po.gpus[1] = 1;
    const char *names[2] = {"host_to_device_memcpy_ce", "host_device_latency_sm"};
    for (int i = 0; i < 2; i++) {
        const gq_test *t = gq_catalog_find(names[i]);
        if (!t || gq_catalog_plan(t, &f->topo, &po, &f->plans[i], &e) || f->plans[i].n < 1)
            return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 2; i++)
        gq_plan_free(&f->plans[i]);
    gq_backend_close(&f->be);
    free(f);
    gq_interrupt_clear();
    return 0;
}

typedef struct counts {
    int before, after, again_left, abort_at;
    int last_done, total;
} counts;

static void before(void *arg, const gq_exec_step *s)
{
    counts *c = arg;
    c->before++;
    c->last_done = s->done;
    c->total = s->total;
}

static gq_exec_next after(void *arg, gq_exec_step *s, int rc, const gq_err *e)
{
    counts *c = arg;
    c->after++;
    if (c->again_left > 0) {
        c->again_left--;
        return GQ_EXEC_AGAIN;
    }
    return c->after == c->abort_at ? GQ_EXEC_ABORT : GQ_EXEC_NEXT;
}

static int nitems(const fixture *f)
{
    return f->plans[0].n + f->plans[1].n;
}

/* Every item runs once, and the records are those of the harness item by item. */
static void runs_every_item(void **state)
{
    fixture *f = *state;
    counts c = {0};
    gq_exec_opts xo = {.before = before, .after = after, .arg = &c};
    gq_exec_result res;
    gq_recordset rs = {0};
    gq_err e = {0};
    assert_int_equal(gq_exec_plans(&f->be, &f->topo, f->plans, 2, &f->ho, NULL, &xo, &rs, &res, &e), GQ_OK);
    assert_false(res.interrupted);
    assert_int_equal(res.items, nitems(f));
    assert_int_equal(c.before, nitems(f));
    assert_int_equal(c.after, nitems(f));
    assert_int_equal(c.last_done, nitems(f));
    assert_int_equal(c.total, nitems(f));
    int lat = 0;
    for (int i = 0; i < rs.n; i++) {
        lat += rs.v[i].is_latency;
        assert_true(rs.v[i].valid);
        assert_int_equal(rs.v[i].value.n, 3);
    }
    assert_int_equal(lat, f->plans[1].n);
    /* the harness alone, item by item, gives as many records */
    gq_recordset ref = {0};
    gq_measurement *m = malloc(sizeof *m);
    assert_non_null(m);
    for (int p = 0; p < 2; p++)
        for (int i = 0; i < f->plans[p].n; i++) {
            const gq_plan_item *it = &f->plans[p].items[i];
            if (it->is_latency) {
                assert_int_equal(
                    gq_harness_latency(&f->be, &f->topo, f->plans[p].test, &it->lat, &f->ho, &ref, NULL, &e),
                    GQ_OK);
            } else {
                gq_plan_measurement(&f->plans[p], i, m);
                assert_int_equal(gq_harness_measure(&f->be, &f->topo, m, &f->ho, &ref, NULL, &e), GQ_OK);
            }
        }
    free(m);
    assert_int_equal(ref.n, rs.n);
    for (int i = 0; i < rs.n; i++)
        assert_string_equal(ref.v[i].test, rs.v[i].test);
    gq_records_free(&ref);
    gq_records_free(&rs);
}

static void skips_latency(void **state)
{
    fixture *f = *state;
    counts c = {0};
    gq_exec_opts xo = {.skip_latency = true, .before = before, .after = after, .arg = &c};
    gq_exec_result res;
    gq_recordset rs = {0};
    assert_int_equal(gq_exec_plans(&f->be, &f->topo, f->plans, 2, &f->ho, NULL, &xo, &rs, &res, NULL), GQ_OK);
    assert_int_equal(res.items, f->plans[0].n);
    assert_int_equal(c.before, f->plans[0].n);
    for (int i = 0; i < rs.n; i++)
        assert_false(rs.v[i].is_latency);
    gq_records_free(&rs);
}

/* An abort stops at once and returns a status; what ran is kept. */
static void abort_stops(void **state)
{
    fixture *f = *state;
    counts c = {.abort_at = 1};
    gq_exec_opts xo = {.after = after, .arg = &c};
    gq_exec_result res;
    gq_recordset rs = {0};
    gq_err e = {0};
    assert_int_not_equal(gq_exec_plans(&f->be, &f->topo, f->plans, 2, &f->ho, NULL, &xo, &rs, &res, &e),
                         GQ_OK);
    assert_int_equal(res.items, 1);
    assert_true(rs.n > 0);
    gq_records_free(&rs);
}

/* GQ_EXEC_AGAIN runs the same item once more. */
static void again_repeats(void **state)
{
    fixture *f = *state;
    counts c = {.again_left = 1};
    gq_exec_opts xo = {.before = before, .after = after, .arg = &c};
    gq_exec_result res;
    gq_recordset rs = {0};
    assert_int_equal(gq_exec_plans(&f->be, &f->topo, f->plans, 1, &f->ho, NULL, &xo, &rs, &res, NULL), GQ_OK);
    assert_int_equal(res.items, f->plans[0].n + 1);
    assert_int_equal(c.before, f->plans[0].n);
    assert_int_equal(c.after, f->plans[0].n + 1);
    gq_records_free(&rs);
}

/* Ctrl-C before the run: nothing runs, the result says interrupted, the
 * status is GQ_OK (what finished is kept); gq_exec_one says GQ_E_INTR. */
static void interrupt_stops(void **state)
{
    fixture *f = *state;
    gq_interrupt_request();
    counts c = {0};
    gq_exec_opts xo = {.before = before, .after = after, .arg = &c};
    gq_exec_result res;
    gq_recordset rs = {0};
    assert_int_equal(gq_exec_plans(&f->be, &f->topo, f->plans, 2, &f->ho, NULL, &xo, &rs, &res, NULL), GQ_OK);
    assert_true(res.interrupted);
    assert_int_equal(res.items, 0);
    assert_int_equal(c.before, 0);
    gq_measurement *m = malloc(sizeof *m);
    assert_non_null(m);
    gq_plan_measurement(&f->plans[0], 0, m);
    gq_err e = {0};
    assert_int_equal(gq_exec_one(&f->be, &f->topo, m, &f->ho, NULL, &rs, &e), GQ_E_INTR);
    free(m);
    assert_int_equal(rs.n, 0);
    gq_interrupt_clear();
    gq_records_free(&rs);
}

static gq_exec_next abort_on_error(void *arg, gq_exec_step *s, int rc, const gq_err *e)
{
    (void)s, (void)e;
    counts *c = arg;
    c->after++;
    return rc ? GQ_EXEC_ABORT : GQ_EXEC_NEXT;
}

/* An item that fails and is aborted on: the run returns the item's status and
 * the item's own message, as the harness gave it for that item alone; a
 * caller that passed no error gets the status all the same. */
static void abort_returns_the_items_error(void **state)
{
    fixture *f = *state;
    /* the first item's flow made impossible: 0 bytes */
    f->plans[0].flows[f->plans[0].items[0].flow_off].bytes = 0;
    gq_measurement *m = malloc(sizeof *m);
    assert_non_null(m);
    gq_plan_measurement(&f->plans[0], 0, m);
    gq_recordset ref = {0};
    gq_err want = {0};
    int want_rc = gq_harness_measure(&f->be, &f->topo, m, &f->ho, &ref, NULL, &want);
    free(m);
    gq_records_free(&ref);
    assert_int_not_equal(want_rc, GQ_OK);
    assert_true(want.msg[0] != 0);
    counts c = {0};
    gq_exec_opts xo = {.after = abort_on_error, .arg = &c};
    gq_exec_result res;
    gq_recordset rs = {0};
    gq_err e;
    memset(&e, 0, sizeof e);
    snprintf(e.msg, sizeof e.msg, "stale");
    assert_int_equal(gq_exec_plans(&f->be, &f->topo, f->plans, 2, &f->ho, NULL, &xo, &rs, &res, &e), want_rc);
    assert_int_equal(c.after, 1);
    assert_int_equal(res.items, 1);
    assert_int_equal(e.code, want.code);
    assert_string_equal(e.msg, want.msg);
    gq_records_free(&rs);
    c.after = 0;
    assert_int_equal(gq_exec_plans(&f->be, &f->topo, f->plans, 2, &f->ho, NULL, &xo, &rs, &res, NULL),
                     want_rc);
    assert_int_equal(c.after, 1);
    gq_records_free(&rs);
}

/* After a list of items, and after one item alone, the journal is in no item
 * any more: a record a command journals outside an item (place --tp's
 * all-reduce) carries no item number, and a resume does not take it for
 * item 0's (item 0 finished, so its records are re-used). */
static void journal_outside_items(void **state)
{
    fixture *f = *state;
    char path[] = "/tmp/gq-exec-journal-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    gq_journal_id id = {.command = "test", .topo = &f->topo};
    gq_journal j;
    gq_err e = {0};
    if (gq_journal_open(&j, path, &id, &e))
        fail_msg("journal: %s", e.msg);
    gq_measurement *m = malloc(sizeof *m);
    assert_non_null(m);
    gq_plan_measurement(&f->plans[0], 0, m);
    gq_recordset rs = {0};
    assert_int_equal(gq_exec_one(&f->be, &f->topo, m, &f->ho, &j, &rs, &e), GQ_OK);
    assert_int_equal(j.item, -1);
    int items = rs.n;
    assert_true(items >= 1);
    gq_record extra = rs.v[0];
    snprintf(extra.test, sizeof extra.test, "outside_any_item");
    assert_int_equal(gq_journal_append(&j, &extra, &e), GQ_OK);
    gq_exec_result res;
    assert_int_equal(gq_exec_plans(&f->be, &f->topo, f->plans, 1, &f->ho, &j, NULL, &rs, &res, &e), GQ_OK);
    assert_int_equal(j.item, -1);
    gq_journal_close(&j);
    free(m);
    gq_records_free(&rs);

    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char line[65536];
    int seen = 0;
    while (fgets(line, sizeof line, fp))
        if (strstr(line, "\"outside_any_item\"")) {
            seen++;
            assert_null(strstr(line, "\"item\""));
        }
    fclose(fp);
    assert_int_equal(seen, 1);
    gq_recordset done = {0};
    int *item = NULL;
    assert_int_equal(gq_journal_resume(&j, path, &id, &done, &item, &e), GQ_OK);
    for (int i = 0; i < done.n; i++)
        assert_string_not_equal(done.v[i].test, "outside_any_item");
    assert_int_equal(done.n, items + f->plans[0].n * items);
    gq_journal_close(&j);
    gq_records_free(&done);
    free(item);
    unlink(path);
}

/* A journal whose writes fail on cue: a stream in place of the journal's
 * file (a cookie stream has no descriptor, so its fsync fails too). */
typedef struct jfail {
    bool all;       /* every write fails */
    bool item_done; /* the item marks fail */
    int writes;
} jfail;

static ssize_t jfail_write(void *cookie, const char *buf, size_t n)
{
    jfail *c = cookie;
    c->writes++;
    if (c->all || (c->item_done && memmem(buf, n, "\"step\":\"item\"", 13))) {
        errno = ENOSPC;
        return -1;
    }
    return (ssize_t)n;
}

/* Open a journal on a fresh file, then write it through jfail. */
static void journal_failing(fixture *f, gq_journal *j, char *path, jfail *c)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    gq_journal_id id = {.command = "test", .topo = &f->topo};
    gq_err e = {0};
    if (gq_journal_open(j, path, &id, &e))
        fail_msg("journal: %s", e.msg);
    fclose(j->f);
    j->f = fopencookie(c, "w", (cookie_io_functions_t){.write = jfail_write});
    assert_non_null(j->f);
    j->synced_at = 1e30; /* no timed fsync in between: only the step's */
}

/* Every write fails: the first item's records cannot be kept, so the run
 * stops there with the journal's error. */
static void journal_write_fails(void **state)
{
    fixture *f = *state;
    char path[] = "/tmp/gq-exec-jfail-XXXXXX";
    jfail c = {.all = true};
    gq_journal j;
    journal_failing(f, &j, path, &c);
    gq_exec_result res;
    gq_recordset rs = {0};
    gq_err e = {0};
    assert_int_equal(gq_exec_plans(&f->be, &f->topo, f->plans, 2, &f->ho, &j, NULL, &rs, &res, &e),
                     GQ_E_FAIL);
    assert_true(res.journal_lost);
    assert_int_equal(res.items, 1);
    /* the journal was let go at the failure, not touched again: still in the failed item */
    assert_int_equal(j.item, j.next_item - 1);
    assert_non_null(strstr(res.journal_error, "No space left on device"));
    assert_non_null(strstr(res.journal_error, path));
    char want[sizeof e.msg];
    snprintf(want, sizeof want, "%s; the run stopped", res.journal_error);
    assert_string_equal(e.msg, want);
    gq_journal_close(&j);
    gq_records_free(&rs);
    unlink(path);
}

/* The records are written but the item's mark is not: the run stops after
 * that item, with the journal's error. */
static void journal_item_mark_fails(void **state)
{
    fixture *f = *state;
    char path[] = "/tmp/gq-exec-jfail-XXXXXX";
    jfail c = {.item_done = true};
    gq_journal j;
    journal_failing(f, &j, path, &c);
    gq_exec_result res;
    gq_recordset rs = {0};
    gq_err e = {0};
    assert_int_equal(gq_exec_plans(&f->be, &f->topo, f->plans, 2, &f->ho, &j, NULL, &rs, &res, &e),
                     GQ_E_FAIL);
    assert_true(res.journal_lost);
    assert_int_equal(res.items, 1);
    assert_true(rs.n >= 1 && rs.v[0].valid);
    assert_int_equal(j.item, j.next_item - 1);
    assert_non_null(strstr(res.journal_error, "No space left on device"));
    assert_string_equal(e.msg, res.journal_error);
    gq_journal_close(&j);
    gq_records_free(&rs);
    unlink(path);
}

/* Every line is written but the step's fsync fails: the whole run was
 * measured, and the failure is reported once at its end. */
static void journal_sync_fails(void **state)
{
    fixture *f = *state;
    char path[] = "/tmp/gq-exec-jfail-XXXXXX";
    jfail c = {0};
    gq_journal j;
    journal_failing(f, &j, path, &c);
    gq_exec_result res;
    gq_recordset rs = {0};
    gq_err e = {0};
    assert_int_equal(gq_exec_plans(&f->be, &f->topo, f->plans, 2, &f->ho, &j, NULL, &rs, &res, &e),
                     GQ_E_FAIL);
    assert_true(res.journal_lost);
    assert_int_equal(res.items, nitems(f));
    assert_true(c.writes > nitems(f));
    assert_non_null(strstr(res.journal_error, "cannot write journal"));
    assert_string_equal(e.msg, res.journal_error);
    gq_journal_close(&j);
    gq_records_free(&rs);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(runs_every_item, setup, teardown),
        cmocka_unit_test_setup_teardown(skips_latency, setup, teardown),
        cmocka_unit_test_setup_teardown(abort_stops, setup, teardown),
        cmocka_unit_test_setup_teardown(abort_returns_the_items_error, setup, teardown),
        cmocka_unit_test_setup_teardown(again_repeats, setup, teardown),
        cmocka_unit_test_setup_teardown(interrupt_stops, setup, teardown),
        cmocka_unit_test_setup_teardown(journal_outside_items, setup, teardown),
        cmocka_unit_test_setup_teardown(journal_write_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(journal_item_mark_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(journal_sync_fails, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
