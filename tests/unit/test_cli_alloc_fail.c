/* Out of memory in the CLI: this program is linked with
 * -Wl,--wrap=malloc,calloc,realloc (CMakeLists.txt), so a chosen allocation
 * of gqcore's and gqcli's can fail. The ASCII stderr and the wrapping stdout
 * (cli/outwrap.h) each make one allocation; when it fails, the stream is left
 * as it was and the call says so. `run` refuses with "out of memory" when
 * its plans cannot be allocated. And for a few commands run in-process on a
 * small simulated machine (run, card, report of a saved card, fleet, place), every
 * k-th allocation up to the number a clean run makes fails in turn: the
 * command exits non-zero with one error line that says "out of memory", does
 * not crash, leaves no output at its final name that looks complete, and
 * (the ASan build's LeakSanitizer) frees what it took. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <execinfo.h>
#include <ftw.h>

#include <cmocka.h>

#include "../cli_inproc.h"
#include <jansson.h>

#include "backend/backend.h"
#include "analysis/fleet.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/fleet_gather.h"
#include "cli/frame.h"
#include "cli/outwrap.h"
#include "measure/catalog.h"
#include "core/ascii.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static long fail_at;             /* the allocation to fail, counted from 1; 0: none */
static long nalloc;              /* allocations since the count was reset */
static size_t fail_n, fail_size; /* else: fail the first calloc(fail_n, fail_size) */

/* where the failed allocation was made, for the failure's message */
static void *fail_where[24];
static int nfail_where;

static bool fail_now(void)
{
    if (++nalloc != fail_at)
        return false;
    nfail_where = backtrace(fail_where, 24);
    return true;
}

void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    if (fail_n && n == fail_n && size == fail_size) {
        fail_n = 0;
        return NULL;
    }
    return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __real_realloc(p, n);
}

/* jansson's json_object_set_new, wrapped: drop_key names a key whose value
 * is lost as if its json_string() had failed (NULL: none), in an object that
 * holds drop_beside (the card section: "card_version") */
int __real_json_object_set_new(json_t *object, const char *key, json_t *value);
int __wrap_json_object_set_new(json_t *object, const char *key, json_t *value);
static const char *drop_key, *drop_beside;
static int ndropped;

int __wrap_json_object_set_new(json_t *object, const char *key, json_t *value)
{
    if (drop_key && !strcmp(key, drop_key) && json_object_get(object, drop_beside)) {
        json_decref(value);
        ndropped++;
        return -1;
    }
    return __real_json_object_set_new(object, key, value);
}

static void arm(long k)
{
    fail_at = k;
    nalloc = 0;
}

static void test_plain_stderr(void **state)
{
    (void)state;
    gq_ascii_force(1);
    FILE *err = stderr;
    arm(1);
    bool plain = gq_outwrap_plain_stderr();
    long n = nalloc;
    arm(0);
    gq_ascii_force(-1);
    assert_false(plain);
    assert_int_equal(n, 1);
    assert_ptr_equal(stderr, err);
}

static void test_wrapped_stdout(void **state)
{
    (void)state;
    FILE *out = stdout;
    arm(1);
    bool wrapped = gq_outwrap_begin(80);
    long n = nalloc;
    arm(0);
    assert_false(wrapped);
    assert_int_equal(n, 1);
    assert_ptr_equal(stdout, out);
}

/* `run` of 3 tests plans them in one calloc(3, sizeof(gq_plan)); when it
 * fails, the command stops there with "out of memory" and no measurement. */
static void test_run_plans(void **state)
{
    (void)state;
    char *argv[] = {"gpuqual",  "run", "--sim",
                    "h200x2",   "-t",  "host_to_device_memcpy_ce,device_to_host_memcpy_ce,device_local_copy",
                    "-i",       "2",   "-q",
                    "--format", "csv", NULL};
    gq_backend_register_builtin();
    fail_n = 3;
    fail_size = sizeof(gq_plan);
    int rc = gq_frame_main(&gq_frame_run, (int)(sizeof argv / sizeof argv[0]) - 1, argv);
    bool failed = fail_n == 0;
    fail_n = 0;
    assert_true(failed);
    assert_int_equal(rc, 1); /* GQ_E_FAIL's exit, "gpuqual: out of memory" on stderr */
}

/* The backend options' check (stress, fleet) asks the sim backend only with
 * --sim: without it nothing is allocated, so a failing allocation cannot
 * stop the command; with it, the sim's own check runs (a bad fault is named). */
static void test_backend_opts_check_needs_sim(void **state)
{
    (void)state;
    gq_backend_register_builtin();
    gq_common c;
    memset(&c, 0, sizeof c);
    gq_err e = {0};
    arm(1);
    int rc = gq_cli_check_backend_opts(&c, &e);
    long n = nalloc;
    arm(0);
    assert_int_equal(rc, GQ_OK);
    assert_int_equal(n, 0);
    c.sim = "h200x2";
    c.sim_fault = "gpu0:meltdown";
    rc = gq_cli_check_backend_opts(&c, &e);
    assert_int_equal(rc, GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "unknown fault"));
}

/* gq_fleet_summarise's own summary: out of memory there says so (the fleet
 * names the node's failure with it). */
static void test_fleet_summary(void **state)
{
    (void)state;
    gq_err e = {0};
    json_t *doc = json_object();
    fail_n = 1;
    fail_size = sizeof(gq_node_summary);
    json_t *j = gq_fleet_summarise(doc, 0, "node", &e);
    bool failed = fail_n == 0;
    fail_n = 0;
    json_decref(doc);
    assert_true(failed);
    assert_null(j);
    assert_int_equal(e.code, GQ_E_NOMEM);
    assert_string_equal(e.msg, "out of memory summarising the card");
}

/* ---- every allocation of a command, in turn ------------------------------ */

static char tmpdir[] = "/tmp/gq-cli-oom-XXXXXX";
static char outdir[64], saved[64];

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void rm_tree(const char *path)
{
    nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* OUT afresh: empty */
static void fresh_out(void)
{
    rm_tree(outdir);
    assert_int_equal(mkdir(outdir, 0700), 0);
}

/* A JSON document at path that parses and holds key (dotted, one level). */
static bool complete_doc(const char *path, const char *key, const char *sub)
{
    json_error_t je;
    json_t *d = json_load_file(path, 0, &je);
    const json_t *v = json_object_get(d, key);
    bool ok = v && (!sub || json_object_get(v, sub));
    json_decref(d);
    return ok;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

struct oom_case;
static bool output_exists(const struct oom_case *c);

typedef struct oom_case {
    const char *name;
    const gq_frame_cmd *cmd;
    const char *args;      /* after the command's name, split on spaces; OUT and SAVED replaced */
    const char *out;       /* the output whose complete form is checked, under OUT */
    const char *key, *sub; /* a JSON output: it holds key (and key.sub); else HTML ending in </html> */
    const char *also;      /* a JSON output: it holds this key as well (NULL: none) */
} oom_case;

static int split(const oom_case *c, char *buf, size_t n, char **argv, int max)
{
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s", c->args);
    buf[0] = 0;
    for (char *t = strtok(tmp, " "); t; t = strtok(NULL, " ")) {
        const char *rep = !strncmp(t, "OUT", 3) ? outdir : !strncmp(t, "SAVED", 5) ? saved : NULL;
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, "%s%s ", rep ? rep : t, rep ? t + (t[0] == 'O' ? 3 : 5) : "");
    }
    int argc = 0;
    argv[argc++] = "gpuqual";
    argv[argc++] = (char *)c->cmd->name;
    for (char *t = strtok(buf, " "); t && argc < max - 1; t = strtok(NULL, " "))
        argv[argc++] = t;
    argv[argc] = NULL;
    return argc;
}

/* Whether the case's output is at its final name and complete. */
static bool output_complete(const oom_case *c)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", outdir, c->out);
    if (c->key)
        return complete_doc(path, c->key, c->sub) && (!c->also || complete_doc(path, c->also, NULL));
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char tail[16] = "";
    if (fseek(f, -8, SEEK_END) == 0)
        tail[fread(tail, 1, 8, f)] = 0;
    fclose(f);
    return strstr(tail, "</html>") != NULL;
}

static bool output_exists(const oom_case *c)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", outdir, c->out);
    return exists(path);
}

/* a and b, but for white space (the wrapped stdout's fallback is the same
 * text unwrapped) */
static bool same_text(const char *a, const char *b)
{
    for (;;) {
        while (*a == ' ' || *a == '\n')
            a++;
        while (*b == ' ' || *b == '\n')
            b++;
        if (*a != *b)
            return false;
        if (!*a)
            return true;
        a++;
        b++;
    }
}

static void every_allocation(const oom_case *c, long max_runs)
{
    char buf[1024], err[8192];
    char *argv[32];
    size_t nout = 1 << 16;
    char *clean = malloc(nout), *out = malloc(nout);
    assert_non_null(clean);
    assert_non_null(out);
    split(c, buf, sizeof buf, argv, 32);
    fresh_out();
    arm(0);
    int clean_code = gq_test_run_cmd(c->cmd, argv, err, sizeof err, clean, nout), code;
    long total = nalloc;
    if (strstr(err, "gpuqual: ") || !output_complete(c))
        fail_msg("%s: the clean run failed (exit %d): %s", c->name, clean_code, err);
    long stride = total / max_runs + 1;
    int failures = 0, reported = 0, absorbed = 0;
    for (long k = 1; k <= total; k += stride) {
        fresh_out();
        split(c, buf, sizeof buf, argv, 32);
        arm(k);
        code = gq_test_run_cmd(c->cmd, argv, err, sizeof err, out, nout);
        bool hit = nalloc >= k;
        arm(0);
        if (!hit)
            continue;
        int errors = 0;
        const char *oom = NULL;
        for (const char *l = err; *l;) {
            const char *e = strchr(l, '\n');
            size_t len = e ? (size_t)(e - l) : strlen(l);
            if (!strncmp(l, "gpuqual: ", 9) && strncmp(l, "gpuqual: warning: ", 18)) {
                errors++;
                const char *m = strstr(l, "out of memory"), *m2 = strstr(l, "Cannot allocate memory");
                if ((m && m < l + len) || (m2 && m2 < l + len))
                    oom = l;
            }
            l += len + (e != NULL);
        }
        bool complete = output_complete(c);
        const char *why = NULL;
        if (!errors && code != clean_code) /* absorbed: the same exit, output and files as the clean run */
            why = "another exit than the clean run's, without an error line";
        else if (!errors && !complete)
            why = "the clean run's exit without the whole output";
        else if (!errors && !same_text(out, clean))
            why = "the clean run's exit with other output on stdout";
        else if (errors && !oom)
            why = "no error line says 'out of memory'";
        else if (errors > 1)
            why = "more than one error line";
        else if (errors && code == 0)
            why = "exit 0 after an error line";
        else if (errors && output_exists(c) && !complete)
            why = "an incomplete output was left at its final name";
        reported += errors > 0;
        absorbed += errors == 0;
        if (why) {
            print_message("%s: allocation %ld of %ld failed: %s (exit %d); stderr:\n%s%s", c->name, k, total,
                          why, code, err, "the allocation, from (addr2line -f -e test_cli_alloc_fail):\n");
            fflush(stdout);
            backtrace_symbols_fd(fail_where + 2, nfail_where - 2, STDOUT_FILENO);
            if (++failures >= 50)
                break;
        }
    }
    print_message("%s: %ld allocations; every %ld-th failed in turn: %d reported out of memory, %d absorbed "
                  "(the same output)\n",
                  c->name, total, stride, reported, absorbed);
    assert_true(reported > 0);
    free(clean);
    free(out);
    if (failures)
        fail_msg("%s: %d allocation failure(s) not reported as out of memory", c->name, failures);
}

static const oom_case cases[] = {
    {"run", &gq_frame_run,
     "--sim h200x2 -t device_local_copy,host_to_device_memcpy_ce -i 2 -b 1 -q --json OUT/r.json", "r.json",
     "records", NULL, NULL},
    {"card", &gq_frame_card, "--sim h200x2 --level quick --no-stress -q -o OUT/card", "card/card.json",
     "card", "verdict", NULL},
    {"report", &gq_frame_report, "SAVED/card.json -q -o OUT/r.html", "r.html", NULL, NULL, NULL},
    {"report-fleet", &gq_frame_report, GQ_TEST_DATA "/data/fleet/fleet-8.json -q -o OUT/f.html", "f.html",
     NULL, NULL, NULL},
    /* the placement document holds its discovery's sections: neither may go missing when the
     * allocation that writes it fails */
    {"place", &gq_frame_place, "--sim h200x2 --prefill 1 --decode 1 -q --json OUT/p.json", "p.json",
     "domains", NULL, "bottlenecks"},
};

static int oom_setup(void **state)
{
    (void)state;
    gq_backend_register_builtin();
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gq-cli-oom-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    snprintf(outdir, sizeof outdir, "%s/out", tmpdir);
    snprintf(saved, sizeof saved, "%s/saved", tmpdir);
    char *argv[] = {"gpuqual",     "card", "--sim", "h200x2", "--level", "quick",
                    "--no-stress", "-q",   "-o",    saved,    NULL};
    char err[4096];
    return gq_test_run_cmd(&gq_frame_card, argv, err, sizeof err, NULL, 0) == 0 ? 0 : -1;
}

/* The card's verdict lost to a failed allocation in the codec (its
 * json_string): never a card committed, nor success, without one. The card
 * stops with out of memory (exit 1), says so in one line, and DIR holds no
 * card.json. */
static void test_card_without_verdict(void **state)
{
    (void)state;
    char err[8192], card[96], path[128];
    snprintf(card, sizeof card, "%s/nv", outdir);
    fresh_out();
    char *argv[] = {"gpuqual",     "card", "--sim", "h200x2", "--level", "quick",
                    "--no-stress", "-q",   "-o",    card,     NULL};
    drop_key = "verdict";
    drop_beside = "card_version";
    ndropped = 0;
    int code = gq_test_run_cmd(&gq_frame_card, argv, err, sizeof err, NULL, 0);
    drop_key = NULL;
    if (ndropped < 1 || code != 1 ||
        !strstr(err, "gpuqual: out of memory composing the card: its verdict is missing"))
        fail_msg("card without a verdict (%d dropped): exit %d, %s", ndropped, code, err);
    snprintf(path, sizeof path, "%s/card.json", card);
    assert_false(exists(path));
}

static int oom_teardown(void **state)
{
    (void)state;
    rm_tree(tmpdir);
    return 0;
}

static void test_oom_run(void **state)
{
    (void)state;
    every_allocation(&cases[0], 400);
}

static void test_oom_card(void **state)
{
    (void)state;
    every_allocation(&cases[1], 400);
}

static void test_oom_report(void **state)
{
    (void)state;
    every_allocation(&cases[2], 400);
}

static void test_oom_report_fleet(void **state)
{
    (void)state;
    every_allocation(&cases[3], 400);
}

static void test_oom_place(void **state)
{
    (void)state;
    every_allocation(&cases[4], 2000); /* about 800: every one */
}

/* A rank's step of `fleet` (gq_fleet_summarise, its card as the node
 * summary), every allocation in turn: NULL, and out of memory said. */
static void test_oom_fleet_summarise(void **state)
{
    (void)state;
    char path[160];
    snprintf(path, sizeof path, "%s/card.json", saved);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    assert_non_null(doc);
    gq_err e = {0};
    arm(0);
    json_t *j = gq_fleet_summarise(doc, 0, saved, &e);
    long total = nalloc;
    assert_non_null(j);
    json_decref(j);
    assert_true(total >= 1);
    for (long k = 1; k <= total; k++) {
        memset(&e, 0, sizeof e);
        arm(k);
        j = gq_fleet_summarise(doc, 0, saved, &e);
        arm(0);
        if (j || e.code != GQ_E_NOMEM || !strstr(e.msg, "out of memory"))
            fail_msg("allocation %ld of %ld failed: %s, code %d, '%s'", k, total, j ? "a summary" : "NULL",
                     e.code, e.msg);
    }
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_stderr),
        cmocka_unit_test(test_wrapped_stdout),
        cmocka_unit_test(test_run_plans),
        cmocka_unit_test(test_fleet_summary),
        cmocka_unit_test(test_backend_opts_check_needs_sim),
        cmocka_unit_test_setup_teardown(test_oom_run, oom_setup, oom_teardown),
        cmocka_unit_test_setup_teardown(test_oom_card, oom_setup, oom_teardown),
        cmocka_unit_test_setup_teardown(test_oom_report, oom_setup, oom_teardown),
        cmocka_unit_test_setup_teardown(test_oom_report_fleet, oom_setup, oom_teardown),
        cmocka_unit_test_setup_teardown(test_oom_place, oom_setup, oom_teardown),
        cmocka_unit_test_setup_teardown(test_oom_fleet_summarise, oom_setup, oom_teardown),
        cmocka_unit_test_setup_teardown(test_card_without_verdict, oom_setup, oom_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
