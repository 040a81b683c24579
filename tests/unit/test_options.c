/* The table-driven option parser (src/cli/options.c) and the progress bar's
 * text (src/cli/progress.c), compiled in here since the CLI sources are not
 * part of the library. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/cli/options.c"
#include "../../src/cli/progress.c"

typedef struct opts {
    uint64_t size;
    int rounds;
    double duration;
    double frac;
    bool verify;
    bool quiet;
    const char *format;
    const char *name;
    bool rounds_seen;
} opts;

#define O(f) offsetof(opts, f)

/* clang-format off */
static const gq_opt tab[] = {
    {.name = "buffer-size",
     .shortname = 'b',
     .type = GQ_OPT_SIZE,
     .off = O(size),
     .def = "512",
     .unit = GQ_MiB},
    {.name = "rounds",
     .shortname = 'i',
     .type = GQ_OPT_INT,
     .off = O(rounds),
     .def = "5",
     .lo = 1,
     .hi = 64,
     .seen_off = O(rounds_seen)},
    {.name = "duration", .type = GQ_OPT_DURATION, .off = O(duration)},
    {.name = "noise", .type = GQ_OPT_DOUBLE, .off = O(frac), .def = "0", .lo = 0, .hi = 0.5},
    {.name = "verify", .type = GQ_OPT_FLAG, .off = O(verify), .def = "1"},
    {.name = "quiet", .shortname = 'q', .type = GQ_OPT_FLAG, .off = O(quiet)},
    {.name = "format", .type = GQ_OPT_ENUM, .off = O(format), .def = "table", .choices = "table,json,csv"},
    {.name = "name", .type = GQ_OPT_STR, .off = O(name)},
    GQ_OPT_END,
};
/* clang-format on */
static const gq_opt *const tabs[] = {tab};

static const char *pos[8];
static int npos;
static bool help;

/* Parse a NULL-terminated list of words after "gpuqual run". */
static int parse(opts *o, gq_err *err, ...)
{
    char *argv[32] = {"gpuqual", "run"};
    int argc = 2;
    va_list ap;
    va_start(ap, err);
    for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 31;)
        argv[argc++] = a;
    va_end(ap);
    memset(o, 0, sizeof *o);
    memset(err, 0, sizeof *err);
    return gq_opts_parse(tabs, 1, o, argc, argv, 2, pos, 8, &npos, &help, err);
}

static void test_defaults(void **state)
{
    opts o;
    gq_err e;
    assert_int_equal(parse(&o, &e, NULL), GQ_OK);
    assert_int_equal(o.size, 512 * GQ_MiB);
    assert_int_equal(o.rounds, 5);
    assert_true(o.verify);
    assert_false(o.quiet);
    assert_string_equal(o.format, "table");
    assert_null(o.name);
    assert_false(o.rounds_seen);
}

static void test_sizes(void **state)
{
    opts o;
    gq_err e;
    assert_int_equal(parse(&o, &e, "-b", "64", NULL), GQ_OK);
    assert_int_equal(o.size, 64 * GQ_MiB); /* a bare number is MiB */
    assert_int_equal(parse(&o, &e, "--buffer-size=4K", NULL), GQ_OK);
    assert_int_equal(o.size, 4096);
    assert_int_equal(parse(&o, &e, "-b1GiB", NULL), GQ_OK);
    assert_int_equal(o.size, GQ_GiB);
    assert_int_equal(parse(&o, &e, "-b", "1000000B", NULL), GQ_OK);
    assert_int_equal(o.size, 1000000);
    assert_int_equal(parse(&o, &e, "-b", "0", NULL), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "--buffer-size"));
    assert_non_null(strstr(e.msg, "greater than zero"));
    assert_int_equal(parse(&o, &e, "-b", "lots", NULL), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "not a size"));
    assert_int_equal(parse(&o, &e, "-b", "12XB", NULL), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "unknown size unit"));
}

static void test_durations(void **state)
{
    opts o;
    gq_err e;
    assert_int_equal(parse(&o, &e, "--duration", "250ms", NULL), GQ_OK);
    assert_true(fabs(o.duration - 0.25) < 1e-12);
    assert_int_equal(parse(&o, &e, "--duration", "5m", NULL), GQ_OK);
    assert_true(fabs(o.duration - 300) < 1e-12);
    assert_int_equal(parse(&o, &e, "--duration", "3", NULL), GQ_OK);
    assert_true(fabs(o.duration - 3) < 1e-12);
    assert_int_equal(parse(&o, &e, "--duration", "0", NULL), GQ_E_USAGE);
    assert_int_equal(parse(&o, &e, "--duration", "3 days", NULL), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "duration"));
}

static void test_ints_and_bounds(void **state)
{
    opts o;
    gq_err e;
    assert_int_equal(parse(&o, &e, "-i7", NULL), GQ_OK);
    assert_int_equal(o.rounds, 7);
    assert_true(o.rounds_seen);
    assert_int_equal(parse(&o, &e, "-i", "0", NULL), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "1..64"));
    assert_int_equal(parse(&o, &e, "--rounds", "five", NULL), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "whole number"));
    assert_int_equal(parse(&o, &e, "--noise", "0.9", NULL), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "out of range"));
}

/* A bounded duration's range is written in the unit that fits each end:
 * 500ms, 90s, 2m, 3h. */
static void test_duration_bounds_text(void **state)
{
    (void)state;
    static const struct {
        double lo, hi;
        const char *want;
    } c[] = {
        {0.5, 120, "expected 500ms..2m"}, {90, 10800, "expected 90s..3h"}, {1, 150, "expected 1s..150s"}};
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        gq_opt t[] = {
            {.name = "wait", .type = GQ_OPT_DURATION, .off = O(duration), .lo = c[k].lo, .hi = c[k].hi},
            GQ_OPT_END};
        const gq_opt *const ts[] = {t};
        char *argv[] = {"gpuqual", "run", "--wait", "100h"};
        opts o;
        gq_err e = {0};
        memset(&o, 0, sizeof o);
        assert_int_equal(gq_opts_parse(ts, 1, &o, 4, argv, 2, pos, 8, &npos, &help, &e), GQ_E_USAGE);
        if (!strstr(e.msg, c[k].want))
            fail_msg("'%s' lacks '%s'", e.msg, c[k].want);
    }
}

static void test_enums(void **state)
{
    opts o;
    gq_err e;
    assert_int_equal(parse(&o, &e, "--format", "csv", NULL), GQ_OK);
    assert_string_equal(o.format, "csv");
    assert_int_equal(parse(&o, &e, "--format", "xml", NULL), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "table,json,csv"));
    assert_int_equal(parse(&o, &e, "--format", "cs", NULL), GQ_E_USAGE); /* no prefix matching of values */
}

static void test_did_you_mean(void **state)
{
    opts o;
    gq_err e;
    assert_int_equal(parse(&o, &e, "--buffer-sise", "4", NULL), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "did you mean --buffer-size?"));
    assert_int_equal(parse(&o, &e, "--roudns=3", NULL), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "did you mean --rounds?"));
    assert_null(strstr(e.msg, "=3"));
    assert_int_equal(parse(&o, &e, "--frobnicate", NULL), GQ_E_USAGE);
    assert_null(strstr(e.msg, "did you mean"));
    assert_int_equal(parse(&o, &e, "-z", NULL), GQ_E_USAGE);
}

static void test_no_flags(void **state)
{
    opts o;
    gq_err e;
    assert_int_equal(parse(&o, &e, "--no-verify", "-q", NULL), GQ_OK);
    assert_false(o.verify);
    assert_true(o.quiet);
    assert_int_equal(parse(&o, &e, "--no-verify", "--verify", NULL), GQ_OK);
    assert_true(o.verify);                                            /* the last one wins */
    assert_int_equal(parse(&o, &e, "--no-rounds", NULL), GQ_E_USAGE); /* only flags have a --no- form */
    assert_int_equal(parse(&o, &e, "--verify=yes", NULL), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "takes no value"));
}

static void test_values_and_positionals(void **state)
{
    opts o;
    gq_err e;
    assert_int_equal(parse(&o, &e, "-b", NULL), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "needs a value"));
    assert_int_equal(parse(&o, &e, "--name", "", NULL), GQ_E_USAGE);
    assert_int_equal(parse(&o, &e, "a", "--", "-b", NULL), GQ_OK);
    assert_int_equal(npos, 2);
    assert_string_equal(pos[0], "a");
    assert_string_equal(pos[1], "-b");
    assert_int_equal(o.size, 512 * GQ_MiB);
    assert_int_equal(parse(&o, &e, "--help", NULL), GQ_OK);
    assert_true(help);
}

static void test_help_text(void **state)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    gq_opts_help(f, tabs, 1);
    fclose(f);
    assert_non_null(strstr(buf, "-b, --buffer-size"));
    assert_non_null(strstr(buf, "(default 512)"));
    assert_non_null(strstr(buf, "--no-verify turns it off"));
    assert_non_null(strstr(buf, "[table,json,csv]"));
    /* a flag and a choice have no range (mutation round 9, options.c:581) */
    for (const char *w = buf; *w;) {
        const char *e = strchr(w, '\n');
        size_t len = e ? (size_t)(e - w) : strlen(w);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)len, w);
        if (strstr(line, "[table,json,csv]") || strstr(line, "--no-verify"))
            if (strstr(line, ".."))
                fail_msg("a range on a flag or a choice: '%s'", line);
        w += len + (e != NULL);
    }
    free(buf);
}

static void test_progress_text(void **state)
{
    char buf[256];
    gq_progress_format(buf, sizeof buf, 200, 5, 10, 30.0, "host_to_device_memcpy_ce (3/8)");
    assert_string_equal(buf, "[##########..........]  50%  ~0:30 left  host_to_device_memcpy_ce (3/8)");
    gq_progress_format(buf, sizeof buf, 200, 0, 10, 0.0, "x");
    assert_string_equal(buf, "[....................]   0%  x");
    gq_progress_format(buf, sizeof buf, 20, 1, 4, 100.0, "a long step name that does not fit");
    assert_int_equal(strlen(buf), 19); /* never wraps the terminal line */
    gq_progress_format(buf, sizeof buf, 200, 12, 10, 5.0, "");
    assert_non_null(strstr(buf, "100%"));
    assert_null(strstr(buf, "left"));
}

/* The bar is drawn only on a terminal and without --quiet: stderr is pointed
 * at a pipe, then at a pseudo-terminal, whatever it is when the test runs. */
static void test_progress_needs_a_terminal(void **state)
{
    (void)state;
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    gq_progress p;

    int fd[2];
    assert_int_equal(pipe(fd), 0);
    assert_true(dup2(fd[1], STDERR_FILENO) >= 0);
    gq_progress_init(&p, true, 10);
    bool piped = p.on;
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(fd[0]);
    close(fd[1]);
    assert_false(piped);

    int pty = posix_openpt(O_RDWR | O_NOCTTY);
    int tty = -1;
    if (pty >= 0 && grantpt(pty) == 0 && unlockpt(pty) == 0)
        tty = open(ptsname(pty), O_RDWR | O_NOCTTY);
    if (tty < 0) {
        if (pty >= 0)
            close(pty);
        close(saved);
        print_message("no pseudo-terminal here (%s): the terminal case is not checked\n", strerror(errno));
        skip();
    }
    assert_true(dup2(tty, STDERR_FILENO) >= 0);
    gq_progress_init(&p, true, 10);
    bool on_tty = p.on;
    gq_progress_init(&p, false, 10); /* --quiet */
    bool quiet = p.on;
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(tty);
    close(pty);
    close(saved);
    assert_true(on_tty);
    assert_false(quiet);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_ints_and_bounds),
        cmocka_unit_test(test_enums),
        cmocka_unit_test(test_duration_bounds_text),
        cmocka_unit_test(test_did_you_mean),
        cmocka_unit_test(test_no_flags),
        cmocka_unit_test(test_values_and_positionals),
        cmocka_unit_test(test_help_text),
        cmocka_unit_test(test_progress_text),
        cmocka_unit_test(test_progress_needs_a_terminal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
