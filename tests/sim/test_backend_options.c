/* The backend seam's option hook (backend/backend.h): each backend declares
 * its options in a table and parses them into its own struct; the seam
 * checks names, value kinds and bounds with one-line messages. Tested on a
 * fake backend with options, and on the sim backend's --sim, --sim-seed,
 * --sim-noise and --sim-fault. Also: the simulated stress state lives in
 * each backend's be->priv, so two open sim backends do not share faults or
 * clocks. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/backend.h"
#include "backend/sim/sim.h"

/* ---- a fake backend with options ---------------------------------------- */

typedef struct fake_opts {
    const char *mode;
    long long level;
    double ratio;
    bool inited_with_opts;
} fake_opts;

static fake_opts seen; /* what init received */

/* clang-format off */
static const gq_backend_opt fake_options[] = {
    {.name = "fake-mode", .kind = GQ_BE_OPT_STR, .arg = "MODE", .help = "fast or slow"},
    {.name = "fake-level", .kind = GQ_BE_OPT_INT, .arg = "N", .def = "3", .help = "a level", .lo = 1, .hi = 9},
    {.name = "fake-ratio", .kind = GQ_BE_OPT_DOUBLE, .arg = "R", .help = "a ratio", .lo = 0, .hi = 1},
    {.name = NULL},
};
/* clang-format on */

static void fake_default(void *b)
{
    fake_opts *o = b;
    o->level = 3;
    o->ratio = 0.5;
}

static int fake_parse(void *b, const gq_backend_opt *opt, const gq_backend_val *v, gq_err *err)
{
    fake_opts *o = b;
    if (!strcmp(opt->name, "fake-mode")) {
        if (strcmp(v->str, "fast") && strcmp(v->str, "slow"))
            return gq_err_set(err, GQ_E_USAGE, "--fake-mode '%s': expected fast or slow", v->str);
        o->mode = v->str;
    } else if (!strcmp(opt->name, "fake-level"))
        o->level = v->i;
    else
        o->ratio = v->d;
    return GQ_OK;
}

static int fake_init(gq_backend *be, const gq_backend_opts *o, const void *bopts, gq_err *err)
{
    (void)o;
    (void)err;
    seen = *(const fake_opts *)bopts;
    seen.inited_with_opts = true;
    be->priv = &seen;
    return GQ_OK;
}
static void fake_fini(gq_backend *be)
{
    be->priv = NULL;
}
static int fake_discover(gq_backend *be, gq_topo *t, gq_err *err)
{
    (void)be, (void)t, (void)err;
    return GQ_OK;
}
static int fake_prepare(gq_backend *be, const gq_flow *f, int n, gq_group **out, gq_err *err)
{
    (void)be, (void)f, (void)n, (void)out;
    return gq_err_set(err, GQ_E_UNSUPP, "no transfers");
}
static int fake_run(gq_backend *be, gq_group *g, const gq_run_opts *o, gq_flow_result *r, gq_err *err)
{
    (void)be, (void)g, (void)o, (void)r;
    return gq_err_set(err, GQ_E_UNSUPP, "no transfers");
}
static void fake_release(gq_backend *be, gq_group *g)
{
    (void)be, (void)g;
}

static const gq_backend_ops fake_ops = {
    .version = GQ_BACKEND_OPS_VERSION,
    .name = "fake-opts",
    .options = fake_options,
    .opts_size = sizeof(fake_opts),
    .opt_default = fake_default,
    .opt_parse = fake_parse,
    .init = fake_init,
    .fini = fake_fini,
    .discover = fake_discover,
    .prepare = fake_prepare,
    .run = fake_run,
    .release = fake_release,
};

static void options_reach_the_backend(void **state)
{
    (void)state;
    gq_err e = {0};
    assert_int_equal(gq_backend_register(&fake_ops, &e), GQ_OK);
    assert_ptr_equal(gq_backend_options("fake-opts"), fake_options);
    gq_backend_opts o = {0};
    assert_int_equal(gq_backend_opts_add(&o, "fake-mode", "fast", &e), GQ_OK);
    assert_int_equal(gq_backend_opts_addf(&o, &e, "fake-level", "%d", 7), GQ_OK);
    assert_int_equal(gq_backend_opts_add(&o, "fake-mode", "slow", &e), GQ_OK); /* replaces */
    assert_int_equal(o.nkv, 2);
    assert_string_equal(gq_backend_opts_get(&o, "fake-level"), "7");
    assert_null(gq_backend_opts_get(&o, "fake-ratio"));
    gq_backend be;
    memset(&seen, 0, sizeof seen);
    assert_int_equal(gq_backend_open(&be, "fake-opts", &o, &e), GQ_OK);
    assert_true(seen.inited_with_opts);
    assert_string_equal(seen.mode, "slow");
    assert_int_equal(seen.level, 7);
    assert_true(seen.ratio == 0.5); /* the default */
    gq_backend_close(&be);
    /* No options: the defaults. */
    memset(&seen, 0, sizeof seen);
    assert_int_equal(gq_backend_open(&be, "fake-opts", NULL, &e), GQ_OK);
    assert_int_equal(seen.level, 3);
    gq_backend_close(&be);
}

/* Open refused with GQ_E_USAGE and a one-line message containing `want`. */
static void refused(const char *key, const char *value, const char *want)
{
    gq_err e = {0};
    gq_backend_opts o = {0};
    assert_int_equal(gq_backend_opts_add(&o, key, value, &e), GQ_OK);
    gq_backend be;
    memset(&seen, 0, sizeof seen);
    assert_int_equal(gq_backend_open(&be, "fake-opts", &o, &e), GQ_E_USAGE);
    assert_false(seen.inited_with_opts);
    assert_null(be.ops);
    if (!strstr(e.msg, want))
        fail_msg("--%s %s: '%s' does not say '%s'", key, value, e.msg, want);
    assert_null(strchr(e.msg, '\n'));
    memset(&e, 0, sizeof e);
    assert_int_equal(gq_backend_check_opts("fake-opts", &o, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, want));
}

static void bad_options_refused(void **state)
{
    (void)state;
    gq_err e = {0};
    assert_int_equal(gq_backend_register(&fake_ops, &e), GQ_OK);
    refused("fake-levle", "3",
            "--fake-levle: the fake-opts backend has no such option (did you mean --fake-level?)");
    refused("sim-seed", "3", "--sim-seed: the fake-opts backend has no such option");
    refused("fake-level", "10", "--fake-level");
    refused("fake-level", "x", "--fake-level");
    refused("fake-ratio", "-0.1", "--fake-ratio -0.1 is out of range, expected 0..1");
    refused("fake-ratio", "nan", "--fake-ratio");
    refused("fake-mode", "", "--fake-mode needs a non-empty value");
    refused("fake-mode", "medium", "--fake-mode 'medium': expected fast or slow");
    /* Options without the hook that parses them cannot be registered. */
    gq_backend_ops bad = fake_ops;
    bad.name = "fake-no-parse";
    bad.opt_parse = NULL;
    assert_int_equal(gq_backend_register(&bad, &e), GQ_E_FAIL);
    assert_non_null(strstr(e.msg, "opt_parse"));
    /* Full. */
    gq_backend_opts o = {0};
    char keys[GQ_BACKEND_MAX_KV + 1][8];
    for (int i = 0; i <= GQ_BACKEND_MAX_KV; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i);
        int rc = gq_backend_opts_add(&o, keys[i], "v", &e);
        assert_int_equal(rc, i < GQ_BACKEND_MAX_KV ? GQ_OK : GQ_E_USAGE);
    }
}

/* ---- the sim backend's options ------------------------------------------ */

static int sim_open(gq_backend *be, const char *const *kv, gq_err *e)
{
    gq_backend_opts o = {0};
    for (int i = 0; kv[i]; i += 2)
        assert_int_equal(gq_backend_opts_add(&o, kv[i], kv[i + 1], e), GQ_OK);
    memset(e, 0, sizeof *e);
    return gq_backend_open(be, "sim", &o, e);
}

static void sim_options_checked(void **state)
{
    (void)state;
    gq_backend_register_builtin();
    const gq_backend_opt *t = gq_backend_options("sim");
    assert_non_null(t);
    int n = 0;
    for (; t[n].name; n++)
        assert_non_null(t[n].help);
    assert_int_equal(n, 4);
    assert_string_equal(t[0].name, "sim");
    assert_true(t[0].opens);
    gq_backend be;
    gq_err e;
    /* A GPU the machine does not have, named as such (not "unknown fault spec"). */
    assert_int_equal(
        sim_open(&be, (const char *[]){"sim", "rtx4090x8", "sim-fault", "gpu99:thermal", NULL}, &e),
        GQ_E_USAGE);
    assert_string_equal(e.msg,
                        "--sim-fault 'gpu99:thermal': GPU 99 does not exist (this machine has GPUs 0-7)");
    /* Without the machine, only the grammar is checked. */
    gq_backend_opts o = {0};
    gq_backend_opts_add(&o, "sim-fault", "gpu99:thermal", NULL);
    assert_int_equal(gq_backend_check_opts("sim", &o, &e), GQ_OK);
    gq_backend_opts_add(&o, "sim-fault", "gpu9:melt", NULL);
    assert_int_equal(gq_backend_check_opts("sim", &o, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "--sim-fault: unknown fault spec 'gpu9:melt'"));
    /* A negative noise is refused, not taken as "the topology's". */
    assert_int_equal(sim_open(&be, (const char *[]){"sim", "h200x2", "sim-noise", "-1", NULL}, &e),
                     GQ_E_USAGE);
    assert_string_equal(e.msg, "--sim-noise -1 is out of range, expected 0..0.5");
    assert_int_equal(sim_open(&be, (const char *[]){"sim", "h200x2", "sim-seed", "-3", NULL}, &e),
                     GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "--sim-seed"));
    assert_int_equal(sim_open(&be, (const char *[]){"sim", "h200x2", "sim-faults", "gpu0:ecc", NULL}, &e),
                     GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "did you mean --sim-fault?"));
    /* And a good set opens. */
    assert_int_equal(sim_open(&be,
                              (const char *[]){"sim", "h200x2", "sim-seed", "7", "sim-noise", "0",
                                               "sim-fault", "gpu1:ecc", NULL},
                              &e),
                     GQ_OK);
    gq_backend_close(&be);
}

/* Telemetry of `gpu` after `secs` of load in virtual time. */
static gq_sample loaded_sample(gq_backend *be, int gpu, double secs)
{
    gq_err e = {0};
    gq_sample s;
    assert_int_equal(be->ops->stress_start(be, gpu, GQ_PREC_FP16, &e), GQ_OK);
    be->ops->wait(be, secs);
    assert_int_equal(be->ops->sample(be, gpu, &s, &e), GQ_OK);
    assert_int_equal(be->ops->stress_stop(be, gpu, &e), GQ_OK);
    return s;
}

static void stress_state_per_backend(void **state)
{
    (void)state;
    gq_backend_register_builtin();
    gq_backend a, b;
    gq_err e;
    assert_int_equal(sim_open(&a, (const char *[]){"sim", "h200x2", "sim-fault", "gpu0:ecc", NULL}, &e),
                     GQ_OK);
    assert_int_equal(sim_open(&b, (const char *[]){"sim", "h200x2", NULL}, &e), GQ_OK);
    assert_ptr_not_equal(a.priv, b.priv);
    gq_sample sa = loaded_sample(&a, 0, 30), sb = loaded_sample(&b, 0, 30);
    assert_true(sa.ecc_uncorrected >= 1); /* a's fault */
    assert_int_equal(sb.ecc_uncorrected, 0);
    /* Closing one leaves the other's state as it was. */
    gq_backend_close(&a);
    gq_sample sb2;
    assert_int_equal(b.ops->sample(&b, 0, &sb2, &e), GQ_OK);
    assert_int_equal(sb2.ecc_uncorrected, 0);
    assert_true(sb2.t >= 30);
    gq_backend_close(&b);
}

/* Until the command frame builds its --sim* entries from the sim backend's
 * table, the CLI's help must say what the table says: same names,
 * placeholders and help lines. */
static void cli_help_matches_the_table(void **state)
{
    (void)state;
    gq_backend_register_builtin();
    FILE *f = popen(GQ_BIN " topo --help 2>&1", "r");
    assert_non_null(f);
    static char help[65536];
    size_t n = fread(help, 1, sizeof help - 1, f);
    help[n] = 0;
    pclose(f);
    /* Help wraps long lines: join each continuation line (a newline, then
     * indentation, then anything but an option's dash) to its option's line. */
    size_t w = 0;
    for (size_t r = 0; r < n; r++) {
        if (help[r] == '\n') {
            size_t k = r + 1;
            while (k < n && help[k] == ' ')
                k++;
            if (k > r + 1 && k < n && help[k] != '-') {
                help[w++] = ' ';
                r = k - 1;
                continue;
            }
        }
        help[w++] = help[r];
    }
    help[w] = 0;
    for (const gq_backend_opt *t = gq_backend_options("sim"); t->name; t++) {
        char want[96];
        snprintf(want, sizeof want, "--%s %s ", t->name, t->arg);
        const char *line = strstr(help, want);
        if (!line)
            fail_msg("topo --help has no '%s'", want);
        const char *eol = strchr(line, '\n');
        const char *h = strstr(line, t->help);
        if (!h || (eol && h > eol))
            fail_msg("--%s: topo --help does not say '%s'", t->name, t->help);
        if (t->def) {
            char d[64];
            snprintf(d, sizeof d, "(default %s)", t->def);
            const char *x = strstr(line, d);
            if (!x || (eol && x > eol))
                fail_msg("--%s: topo --help does not say '%s'", t->name, d);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(options_reach_the_backend),  cmocka_unit_test(bad_options_refused),
        cmocka_unit_test(sim_options_checked),        cmocka_unit_test(stress_state_per_backend),
        cmocka_unit_test(cli_help_matches_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
