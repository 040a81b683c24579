/* Helpers for the card's sim tests: run `gpuqual card` through the library
 * (plan, execute, compose, the saved document) on a simulated machine, and
 * look things up in the result. The assertions read the card document only,
 * as a person reading card.json would; nothing reads the simulator's model. */
#ifndef GQ_TESTS_SIM_CARD_UTIL_H
#define GQ_TESTS_SIM_CARD_UTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "analysis/card.h"
#include "doc/card_compose.h"
#include "exec/card_run.h"
#include "analysis/expect.h"
#include "doc/expect_load.h"
#include "backend/backend.h"
#include "backend/sim/sim.h"
#include "core/interrupt.h"
#include "measure/cleanroom.h"
#include "../card_render_doc.h"
#include "render/render.h"

typedef struct card_run {
    json_t *doc; /* the saved document, as card.json */
    int exec_rc;
    gq_card_plan plan;
} card_run;

typedef struct card_args {
    const char *machine;
    uint64_t seed;
    double noise; /* < 0: the topology's default */
    const char *faults;
    double budget_s;     /* 0: 300 */
    double stress_s;     /* 0: no stress */
    const char *expect;  /* file under examples/expect, or NULL */
    int interrupt_after; /* > 0: request an interrupt after this many progress calls */
    int level;           /* 0: standard; else gq_card_level + 1 */
    int cut_step;        /* > 0: gq_card_step_id + 1 planned as cut by the budget (not run) */
    bool no_placement;   /* the user turns the placement off */
    bool cleanroom;      /* watch the GPUs with a clean room, as the command frame does (no sampling
                            before the run: the card's own steps sample) */
    bool allow_busy;     /* --allow-busy */
    int ngpus;           /* > 0: only GPUs 0..ngpus-1 are selected (--gpus) */
    const char *set[2];  /* --set overrides of the expectations, in order (NULL: none) */
} card_args;

static int cu_calls, cu_stop_after;
/* The progress of the last run, each call in order (the first CU_MAX_PROGRESS). */
#define CU_MAX_PROGRESS 4096
static gq_card_progress cu_prog[CU_MAX_PROGRESS];
static int cu_nprog;
static __attribute__((unused)) void cu_progress(void *arg, const gq_card_progress *p)
{
    (void)arg;
    if (cu_nprog < CU_MAX_PROGRESS)
        cu_prog[cu_nprog++] = *p;
    if (cu_stop_after > 0 && ++cu_calls == cu_stop_after)
        gq_interrupt_request();
}

static __attribute__((unused)) card_run cu_run(const card_args *a)
{
    card_run out;
    memset(&out, 0, sizeof out);
    gq_backend_register_builtin();
    gq_backend be = {0};
    gq_backend_opts bo;
    gq_sim_opts(&bo, a->machine, a->seed ? a->seed : 1, a->noise, a->faults);
    gq_err e = {0};
    if (gq_backend_open(&be, "sim", &bo, &e))
        fail_msg("open sim %s: %s", a->machine, e.msg);
    gq_topo *t = calloc(1, sizeof *t);
    gq_topo_init(t);
    if (be.ops->discover(&be, t, &e))
        fail_msg("discover: %s", e.msg);
    gq_card_opts co;
    gq_card_opts_default(&co);
    if (a->level)
        co.level = (gq_card_level)(a->level - 1);
    co.budget_s = a->budget_s > 0 ? a->budget_s : 300;
    co.stress_s = a->stress_s;
    co.no_placement = a->no_placement;
    co.allow_busy = a->allow_busy;
    co.ngpus = a->ngpus > 0 && a->ngpus < t->ngpu ? a->ngpus : t->ngpu;
    for (int i = 0; i < co.ngpus; i++)
        co.gpus[i] = i;
    if (gq_card_plan_make(t, &co, &out.plan, &e))
        fail_msg("plan: %s", e.msg);
    if (a->cut_step > 0) { /* as the planner cuts a step that does not fit */
        gq_card_step *st = &out.plan.step[a->cut_step - 1];
        st->run = false;
        st->est_s = 0;
        st->status = GQ_CSS_SKIPPED;
        st->reason = GQ_EVR_BUDGET;
        snprintf(st->note, sizeof st->note, "did not fit the budget");
    }
    gq_expect ex;
    if (a->expect) {
        char path[1024];
        snprintf(path, sizeof path, "%s/expect/%s", GQ_EXAMPLES, a->expect);
        if (gq_expect_load(path, &ex, &e))
            fail_msg("expect: %s", e.msg);
        for (int k = 0; k < 2 && a->set[k]; k++)
            if (gq_expect_set(&ex, a->set[k], &e))
                fail_msg("--set %s: %s", a->set[k], e.msg);
    }
    gq_card_result res;
    memset(&res, 0, sizeof res);
    gq_interrupt_clear();
    cu_calls = 0;
    cu_nprog = 0;
    cu_stop_after = a->interrupt_after;
    gq_cleanroom clean;
    if (a->cleanroom) {
        gq_cleanroom_init(&clean, &be);
        gq_cleanroom_install(&clean);
    }
    out.exec_rc = gq_card_execute(&be, t, &co, &out.plan, NULL, cu_progress, NULL, &res, &e);
    gq_cleanroom_install(NULL);
    gq_interrupt_clear();
    if (out.exec_rc && out.exec_rc != GQ_E_INTR)
        fail_msg("execute: %s", e.msg);
    bool complete = out.exec_rc == GQ_OK;
    json_t *placement = gq_card_placement_json(&res);
    json_t *stress = gq_card_stress_json(&res);
    gq_card_inputs in = {.topo = t,
                         .rs = &res.rs,
                         .stress = stress,
                         .placement = placement,
                         .sec = &res.sec,
                         .expect = a->expect ? &ex : NULL,
                         .plan = &out.plan,
                         .opts = &co,
                         .elapsed_s = res.elapsed_s,
                         .complete = complete,
                         .stopped_at = complete ? NULL : gq_card_step_name(res.stopped_at),
                         .bytes = co.bytes};
    json_t *sec = gq_card_compose(&in, &e);
    json_decref(placement);
    if (!sec)
        fail_msg("compose: %s", e.msg);
    if (stress)
        json_object_set_new(sec, "stress", stress);
    gq_doc d = {.kind = "card",
                .topo = t,
                .records = &res.rs,
                .sections = sec,
                .simulated = true,
                .incomplete = !complete};
    out.doc = gq_doc_to_json(&d);
    assert_non_null(out.doc);
    json_decref(sec);
    gq_card_result_free(&res);
    gq_backend_close(&be);
    free(t);
    return out;
}

static __attribute__((unused)) const json_t *cu_card(const card_run *r)
{
    return json_object_get(r->doc, "card");
}

/* Sorted GPU list of a JSON array into out; returns the count. */
static __attribute__((unused)) int cu_ints(const json_t *a, int *out, int max)
{
    int n = 0;
    size_t i;
    const json_t *v;
    json_array_foreach(a, i, v) if (n < max && json_is_integer(v)) out[n++] = (int)json_integer_value(v);
    for (int x = 1; x < n; x++)
        for (int k = x; k > 0 && out[k - 1] > out[k]; k--) {
            int t = out[k];
            out[k] = out[k - 1];
            out[k - 1] = t;
        }
    return n;
}

/* "0,1,2,3" of a JSON GPU list. */
static __attribute__((unused)) const char *cu_set(const json_t *a, char *buf, size_t n)
{
    int v[64];
    int k = cu_ints(a, v, 64);
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < k && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%d", i ? "," : "", v[i]);
    return buf;
}

/* Does some finding contain every one of the NULL-terminated words? */
static __attribute__((unused)) bool cu_finding(const card_run *r, ...)
{
    size_t i;
    const json_t *f;
    json_array_foreach(json_object_get(cu_card(r), "findings"), i, f)
    {
        const char *s = json_string_value(f);
        va_list ap;
        va_start(ap, r);
        bool all = true;
        for (const char *w = va_arg(ap, const char *); w; w = va_arg(ap, const char *))
            all &= strstr(s, w) != NULL;
        va_end(ap);
        if (all)
            return true;
    }
    return false;
}

static __attribute__((unused)) void cu_dump_findings(const card_run *r)
{
    size_t i;
    const json_t *f;
    json_array_foreach(json_object_get(cu_card(r), "findings"), i, f)
        print_message("finding: %s\n", json_string_value(f));
}

/* The check with id (and subject when non-NULL). */
static __attribute__((unused)) const json_t *cu_check(const card_run *r, const char *id, const char *subject)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(cu_card(r), "checks"), i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "id")), id))
            continue;
        if (subject && strcmp(json_string_value(json_object_get(c, "subject")), subject))
            continue;
        return c;
    }
    return NULL;
}

/* The number at key k of o, or at index i of an array; missing, or not a
 * number, fails the test (json_number_value() would give 0, which passes
 * every "below" check). */
static __attribute__((unused)) double cu_num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    if (!json_is_number(v))
        fail_msg("no number at \"%s\"", k);
    return json_number_value(v);
}

static __attribute__((unused)) double cu_num_at(const json_t *a, size_t i)
{
    const json_t *v = json_array_get(a, i);
    if (!json_is_number(v))
        fail_msg("no number at [%zu]", i);
    return json_number_value(v);
}

/* The integer at key k of o; missing, or not an integer, fails the test. */
static __attribute__((unused)) int cu_int(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    if (!json_is_integer(v))
        fail_msg("no integer at \"%s\"", k);
    return (int)json_integer_value(v);
}

static __attribute__((unused)) const char *cu_str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* Render through a renderer into a malloc'd string. */
static __attribute__((unused)) char *cu_render(const card_run *r, int (*fn)(FILE *, const json_t *, gq_err *))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gq_err e = {0};
    int rc = fn(f, r->doc, &e);
    fclose(f);
    if (rc)
        fail_msg("render: %s", e.msg);
    return buf;
}

/* The bottleneck of a direction with exactly these GPUs, or NULL. */
static __attribute__((unused)) const json_t *cu_bottleneck(const card_run *r, const char *dir,
                                                           const char *set)
{
    size_t i;
    const json_t *b;
    char buf[256];
    json_array_foreach(json_object_get(r->doc, "bottlenecks"), i, b)
    {
        if (!strcmp(cu_str(b, "direction"), dir) &&
            !strcmp(cu_set(json_object_get(b, "gpus"), buf, sizeof buf), set))
            return b;
    }
    return NULL;
}

#endif
