/* The discovery's re-measurement of a recorded group (exec/discovery.h,
 * gq_measurement_from_group): the flows of the group again, each with its
 * tag, and the aggregate and direction sums it had; and gq_discovery_begin
 * without options takes the defaults. Issue 30 (mutation testing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "exec/discovery.h"

static void push(gq_recordset *rs, int group, const char *test, int tag, bool agg, bool sum, bool lat)
{
    gq_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.test, sizeof r.test, "%s", test);
    r.group = group;
    r.flow_tag = tag;
    r.aggregate = agg;
    r.sum = sum;
    r.is_latency = lat;
    r.src = (gq_endpoint){.kind = GQ_EP_GPU, .index = tag < 0 ? 0 : tag};
    r.dst = (gq_endpoint){.kind = GQ_EP_HOST, .index = 0};
    r.method = GQ_METHOD_CE;
    r.exec_gpu = tag < 0 ? -1 : tag;
    r.bytes = 1 << 20;
    assert_int_equal(gq_records_push(rs, &r), GQ_OK);
}

static void group_back_to_measurement(void **state)
{
    (void)state;
    gq_recordset rs = {0};
    gq_measurement *m = malloc(sizeof *m);
    assert_non_null(m);
    /* group 3: a bidirectional test: two flows, the sum, no aggregate record */
    push(&rs, 3, "bidir_ce", 1, false, false, false);
    push(&rs, 4, "other", 0, false, false, false);
    push(&rs, 3, "bidir_ce_second", -1, false, false, false);
    push(&rs, 3, "bidir_ce", -1, false, true, false);
    push(&rs, 3, "latency", 0, false, false, true);
    assert_true(gq_measurement_from_group(&rs, 3, m));
    assert_int_equal(m->nflows, 2);
    assert_string_equal(m->test, "bidir_ce");
    assert_int_equal(m->flows[0].tag, 1);
    assert_int_equal(m->flows[0].exec_gpu, 1);
    assert_int_equal(m->flows[1].tag, 1); /* no tag of its own: its position */
    assert_true(m->report[0] && m->report[1]);
    assert_true(m->direction_sums);
    assert_true(m->aggregate); /* direction sums come with the aggregate */
    /* group 4: one flow alone */
    assert_true(gq_measurement_from_group(&rs, 4, m));
    assert_int_equal(m->nflows, 1);
    assert_false(m->aggregate);
    assert_false(m->direction_sums);
    /* group 5: concurrent flows with their aggregate */
    push(&rs, 5, "all_ce", 0, false, false, false);
    push(&rs, 5, "all_ce", -1, true, false, false);
    push(&rs, 5, "all_ce", 2, false, false, false);
    assert_true(gq_measurement_from_group(&rs, 5, m));
    assert_int_equal(m->nflows, 2);
    assert_true(m->aggregate);
    assert_false(m->direction_sums);
    assert_int_equal(m->flows[1].tag, 2);
    /* a group of latency records only, and no group at all: nothing to measure again */
    push(&rs, 6, "lat", 0, false, false, true);
    assert_false(gq_measurement_from_group(&rs, 6, m));
    assert_false(gq_measurement_from_group(&rs, 9, m));
    free(m);
    gq_records_free(&rs);
}

static void begin_without_options_takes_defaults(void **state)
{
    (void)state;
    gq_discovery *d = calloc(1, sizeof *d);
    assert_non_null(d);
    gq_discovery_opts def;
    gq_discovery_opts_default(&def);
    int gpus[2] = {0, 1};
    gq_err e = {0};
    assert_int_equal(gq_discovery_begin(d, NULL, NULL, gpus, 2, NULL, NULL, &e), GQ_OK);
    assert_int_equal(d->o.bytes, def.bytes);
    assert_int_equal(d->o.harness.rounds, def.harness.rounds);
    assert_true(d->o.harness.rounds > 0);
    assert_true(d->o.settle && d->o.cluster_with_topo);
    assert_int_equal(d->n, 2);
    assert_ptr_equal(d->rs, &d->records);
    gq_discovery_free(d);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(group_back_to_measurement),
        cmocka_unit_test(begin_without_options_takes_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
