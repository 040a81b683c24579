/* The backend registry's refusals: ops without a name, of another version,
 * without a required hook, one too many; a backend name not built in; and
 * backend option values that do not fit their store. Written for issue 30
 * (lines no test ran). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/backend.h"

static int f_init(gq_backend *be, const gq_backend_opts *o, const void *bopts, gq_err *err)
{
    (void)be, (void)o, (void)bopts, (void)err;
    return 0;
}
static void f_fini(gq_backend *be)
{
    (void)be;
}
static int f_discover(gq_backend *be, gq_topo *t, gq_err *err)
{
    (void)be, (void)t, (void)err;
    return 0;
}
static int f_prepare(gq_backend *be, const gq_flow *flows, int nflows, gq_group **out, gq_err *err)
{
    (void)be, (void)flows, (void)nflows, (void)out, (void)err;
    return 0;
}
static int f_run(gq_backend *be, gq_group *g, const gq_run_opts *o, gq_flow_result *res, gq_err *err)
{
    (void)be, (void)g, (void)o, (void)res, (void)err;
    return 0;
}
static void f_release(gq_backend *be, gq_group *g)
{
    (void)be, (void)g;
}

static gq_backend_ops ops_named(const char *name)
{
    gq_backend_ops o = {.name = name,
                        .version = GQ_BACKEND_OPS_VERSION,
                        .init = f_init,
                        .fini = f_fini,
                        .discover = f_discover,
                        .prepare = f_prepare};
    return o;
}

static void refused(const gq_backend_ops *o, const char *msg)
{
    gq_err e = {0};
    assert_int_equal(gq_backend_register(o, &e), GQ_E_FAIL);
    assert_string_equal(e.msg, msg);
}

static void registry_refusals(void **state)
{
    (void)state;
    static gq_backend_ops o[12];
    o[0] = ops_named(NULL);
    refused(&o[0], "backend: ops without a name");
    refused(NULL, "backend: ops without a name");
    o[0] = ops_named("old");
    o[0].version = GQ_BACKEND_OPS_VERSION - 1;
    char want[120];
    snprintf(want, sizeof want, "backend old: ops version %d, expected %d", GQ_BACKEND_OPS_VERSION - 1,
             GQ_BACKEND_OPS_VERSION);
    refused(&o[0], want);
    o[0] = ops_named("nodiscover");
    o[0].discover = NULL;
    refused(&o[0], "backend nodiscover: required hook 'discover' is missing");
    o[0] = ops_named("norun");
    o[0].release = f_release;
    refused(&o[0], "backend norun: required hook 'run' is missing");
    /* register until the registry is full (the built-in ones may be in it) */
    static char names[12][16];
    gq_err e = {0};
    int i = 0;
    for (; i < 12; i++) {
        snprintf(names[i], sizeof names[i], "b%d", i);
        o[i] = ops_named(names[i]);
        o[i].run = f_run;
        o[i].release = f_release;
        if (gq_backend_register(&o[i], &e))
            break;
    }
    assert_true(i < 12);
    assert_int_equal(e.code, GQ_E_FAIL);
    snprintf(want, sizeof want, "backend b%d: registry full", i);
    assert_string_equal(e.msg, want);
    /* one registered earlier is found; one refused is not */
    assert_non_null(gq_backend_find("b0"));
    assert_null(gq_backend_find(names[i]));
}

static void unknown_backend(void **state)
{
    (void)state;
    gq_err e = {0};
    assert_int_equal(gq_backend_check_opts("warp", NULL, &e), GQ_E_UNSUPP);
    assert_string_equal(e.msg, "backend 'warp' is not built into this gpuqual");
    gq_backend be;
    e = (gq_err){0};
    assert_int_equal(gq_backend_open(&be, "warp9", NULL, &e), GQ_E_UNSUPP);
    assert_string_equal(e.msg, "backend 'warp9' is not built into this gpuqual");
}

static void opts_too_long(void **state)
{
    (void)state;
    gq_backend_opts o;
    memset(&o, 0, sizeof o);
    gq_err e = {0};
    char big[700];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    assert_int_equal(gq_backend_opts_addf(&o, &e, "a", "%s", big), 0);
    assert_int_equal(gq_backend_opts_addf(&o, &e, "b", "%s", big), GQ_E_USAGE);
    assert_string_equal(e.msg, "--b: the backend options' values are too long");
    assert_int_equal(o.nkv, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(registry_refusals),
        cmocka_unit_test(unknown_backend),
        cmocka_unit_test(opts_too_long),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
