/* The one progress display (cli/progress.h): its counting, when it is
 * shown, and, under a pseudo-terminal, that commands' bars reach the total
 * they promised. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include <jansson.h>
#include <math.h>

#include "cli/progress.h"

/* Three measurements of 5 rounds, the second stopped after 2: each counts
 * whole, and the last round of the last one is the total. */
static void test_on_round_counts_measurements(void **state)
{
    (void)state;
    gq_progress p;
    gq_progress_init(&p, false, 3 * 5);
    for (int r = 1; r <= 5; r++)
        gq_progress_on_round(&p, "a", r, 5);
    assert_int_equal(p.done, 5);
    gq_progress_on_round(&p, "b", 1, 5);
    assert_int_equal(p.done, 6);
    gq_progress_on_round(&p, "b", 2, 5);
    assert_int_equal(p.done, 7);
    gq_progress_on_round(&p, "c", 1, 5);
    assert_int_equal(p.done, 11);
    for (int r = 2; r <= 5; r++)
        gq_progress_on_round(&p, "c", r, 5);
    assert_int_equal(p.done, p.total);
    /* the same test name twice in a row is two measurements */
    gq_progress_init(&p, false, 2);
    gq_progress_on_round(&p, "x", 1, 1);
    gq_progress_on_round(&p, "x", 1, 1);
    assert_int_equal(p.done, 2);
}

static void test_wanted(void **state)
{
    (void)state;
    assert_true(gq_progress_wanted(false, "table"));
    assert_true(gq_progress_wanted(false, "json"));
    assert_true(gq_progress_wanted(false, NULL));
    assert_false(gq_progress_wanted(true, "table"));
    assert_false(gq_progress_wanted(false, "nvbandwidth"));
    assert_false(gq_progress_wanted(false, "nvbandwidth-json"));
}

static void test_format_time_left_and_width(void **state)
{
    (void)state;
    char b[256];
    gq_progress_format(b, sizeof b, 100, 25, 100, 30.0, "step");
    assert_non_null(strstr(b, " 25%"));
    assert_non_null(strstr(b, "~1:30 left")); /* 30 s for a quarter: 90 s left */
    gq_progress_format(b, sizeof b, 30, 50, 100, 1.0, "a long step name that does not fit");
    assert_true(strlen(b) < 30);
}

/* The card's and stress's bars count tenths of a second, rounded, for the
 * total and for every update alike: a last update of the whole estimate is
 * the total, whatever the estimate's hundredths (a total rounded up with
 * updates cut down used to end the bar one unit short, at 99%, or not
 * redraw it at all). */
static void test_tenths(void **state)
{
    (void)state;
    assert_int_equal(gq_progress_tenths(0), 0);
    assert_int_equal(gq_progress_tenths(-1), 0);
    assert_int_equal(gq_progress_tenths(0.04), 0);
    assert_int_equal(gq_progress_tenths(0.06), 1);
    assert_int_equal(gq_progress_tenths(0.24), 2);
    assert_int_equal(gq_progress_tenths(0.26), 3);
    assert_int_equal(gq_progress_tenths(36.562653184), 366); /* h200x2's quick card plan */
    assert_int_equal(gq_progress_tenths(96.807265664), 968);
    for (int k = 1; k <= 2000; k++) {
        double est = k * 0.0137;
        gq_progress p;
        gq_progress_init(&p, false, gq_progress_tenths(est));
        long last = -1;
        for (int i = 0; i <= 50; i++) { /* updates up to the whole estimate never pass the total */
            long u = gq_progress_tenths(est * i / 50);
            assert_true(u >= last && u <= p.total);
            last = u;
        }
        gq_progress_update(&p, gq_progress_tenths(est));
        if (p.done != p.total && est >= 0.05)
            fail_msg("estimate %.4f s: the last update is %ld of %ld", est, p.done, p.total);
    }
}

/* Runs GQ_BIN with args, stderr on a pseudo-terminal (stdout to /dev/null);
 * returns everything written to the terminal (malloc'd) and the exit code. */
static char *run_pty(const char *const *args, int *code)
{
    int master;
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        execv(GQ_BIN, (char *const *)args);
        _exit(127);
    }
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    for (;;) {
        if (n + 4096 > cap)
            out = realloc(out, cap *= 2);
        ssize_t k = read(master, out + n, cap - n - 1);
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    out[n] = 0;
    close(master);
    int st;
    waitpid(pid, &st, 0);
    *code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    return out;
}

/* The last bar drawn: the text after the last "\r\033[K" that holds "%". */
static const char *last_bar(const char *out)
{
    const char *last = NULL;
    for (const char *p = strstr(out, "\r\033[K"); p; p = strstr(p + 1, "\r\033[K"))
        if (strchr(p + 4, '%'))
            last = p + 4;
    return last;
}

static void expect_full_bar(const char *const *args)
{
    int code;
    char *out = run_pty(args, &code);
    assert_int_equal(code, 0);
    const char *bar = last_bar(out);
    if (!bar)
        fail_msg("%s %s: no bar drawn: %s", args[1], args[2], out);
    if (strncmp(bar, "[####################] 100%", 27))
        fail_msg("%s %s: the last bar is not full: %.80s", args[1], args[2], bar);
    free(out);
}

/* `domains` promises the plan's count (--plan-only's) in its first bar and
 * counts to exactly that. */
static void test_pty_domains_counts_to_its_promise(void **state)
{
    (void)state;
    const char *args[] = {GQ_BIN, "domains", "--sim", "rtx4090x8", NULL};
    int code;
    char *out = run_pty(args, &code);
    assert_int_equal(code, 0);
    const char *first = strstr(out, "probe 1/");
    assert_non_null(first);
    int promised = atoi(first + 8);
    const char *bar = last_bar(out);
    assert_non_null(bar);
    int done = -1, total = -2;
    const char *pr = strstr(bar, "probe ");
    assert_non_null(pr);
    assert_int_equal(sscanf(pr, "probe %d/%d", &done, &total), 2);
    assert_int_equal(done, total);
    assert_int_equal(total, promised);
    assert_non_null(strstr(bar, "100%"));
    free(out);
}

/* place's discovery measures through place's own hook: its first bar is
 * discovery's first probe (the matrix's pair 0:1), with nothing counted yet. */
static void test_pty_place_bar_starts_with_discovery(void **state)
{
    (void)state;
    const char *args[] = {GQ_BIN, "place", "--sim", "a100x6", "--prefill", "1", "--decode", "1", NULL};
    int code;
    char *out = run_pty(args, &code);
    assert_int_equal(code, 0);
    const char *first = strstr(out, "\r\033[K");
    assert_non_null(first);
    const char *want = "[....................]   0%  matrix 0:1";
    if (strncmp(first + 4, want, strlen(want)))
        fail_msg("place: the first bar is not discovery's first probe: %.80s", first + 4);
    free(out);
}

/* The card's bar names its step as "step k/N": N is the number of steps the
 * plan runs, never 0, and no step counts past it. */
static void test_pty_card_counts_its_steps(void **state)
{
    (void)state;
    char dir[] = "/tmp/gq-progress-XXXXXX", out[64], rm[96];
    assert_non_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/card", dir);
    const char *args[] = {GQ_BIN, "card", "--sim", "h200x2", "--level", "quick", "-o", out, NULL};
    int code;
    char *text = run_pty(args, &code);
    assert_int_equal(code, 0);
    int nstep = 0;
    for (const char *p = strstr(text, "step "); p; p = strstr(p + 1, "step ")) {
        int k = -1, n = -1;
        if (sscanf(p, "step %d/%d", &k, &n) != 2)
            continue;
        nstep++;
        if (!(n > 0 && k >= 1 && k <= n))
            fail_msg("card: the bar says 'step %d/%d'", k, n);
    }
    assert_true(nstep > 0);
    free(text);
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    assert_int_equal(system(rm), 0);
}

static void test_pty_bars_reach_their_total(void **state)
{
    (void)state;
    const char *sweep[] = {GQ_BIN, "sweep", "--sim", "h200x2", NULL};
    const char *pairs[] = {GQ_BIN, "pairs", "0:1,2:3", "--vs", "0:2,1:3", "--sim", "rtx4090x8", NULL};
    const char *kv[] = {GQ_BIN,       "kv",  "--sim",      "h200x2", "--layers", "8",    "--kv-heads", "8",
                        "--head-dim", "128", "--kv-dtype", "bf16",   "--tokens", "1000", NULL};
    const char *stress[] = {GQ_BIN, "stress", "--sim", "h200x2", "--duration", "2", NULL};
    expect_full_bar(sweep);
    expect_full_bar(pairs);
    expect_full_bar(kv);
    /* without P2P (rtx4090x8) kv measures neither the P2P rate nor the direct
     * handoff, and its promised total leaves both out */
    const char *kv_nop2p[] = {GQ_BIN,       "kv",         "--sim",    "rtx4090x8",  "--layers",
                              "8",          "--kv-heads", "8",        "--head-dim", "128",
                              "--kv-dtype", "bf16",       "--tokens", "1000",       NULL};
    expect_full_bar(kv_nop2p);
    expect_full_bar(stress);
    /* 20.6 tenths of a second: rounded up like the total */
    const char *stress_frac[] = {GQ_BIN, "stress", "--sim", "h200x2", "--duration", "2.06s", NULL};
    expect_full_bar(stress_frac);
    /* place counts its measurements exactly: no forced last update */
    const char *place[] = {GQ_BIN, "place", "--sim", "a100x6", "--prefill", "1", "--decode", "1", NULL};
    expect_full_bar(place);
    /* the card's bar runs on the plan's estimated seconds and ends full */
    char dir[] = "/tmp/gq-progress-XXXXXX", out[64], rm[96];
    assert_non_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/card", dir);
    const char *card[] = {GQ_BIN, "card", "--sim", "h200x2", "-o", out, NULL};
    expect_full_bar(card);
    /* a plan of 36.56 s (365.6 tenths: the total rounds up) ends full too */
    const char *quick[] = {GQ_BIN, "card", "--sim", "h200x2", "--level", "quick", "-o", out, "--force", NULL};
    expect_full_bar(quick);
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    assert_int_equal(system(rm), 0);
}

/* The stress bar's step is the GPUs' telemetry at the last tick: every GPU
 * that is still up, their power summed, the hottest, their TFLOP/s summed;
 * the last bar drawn says exactly what the last point of each GPU's series
 * in the JSON says (the sums taken in GPU order, as the bar takes them). */
static void expect_stress_step(const char *machine, const char *duration)
{
    char dir[] = "/tmp/gq-progress-XXXXXX", json[64], rm[96];
    assert_non_null(mkdtemp(dir));
    snprintf(json, sizeof json, "%s/s.json", dir);
    const char *args[] = {GQ_BIN, "stress", "--sim", machine, "--duration", duration, "--json", json, NULL};
    int code;
    char *out = run_pty(args, &code);
    assert_int_equal(code, 0);
    const char *bar = last_bar(out);
    if (!bar)
        fail_msg("stress --sim %s: no bar drawn: %s", machine, out);
    json_error_t je;
    json_t *doc = json_load_file(json, 0, &je);
    if (!doc)
        fail_msg("%s: %s", json, je.text);
    const json_t *series = json_object_get(json_object_get(json_object_get(doc, "stress"), "series"), "gpus");
    int ngpu = (int)json_array_size(series), live = 0;
    double power = 0, tmax = NAN, tflops = 0;
    for (int k = 0; k < ngpu; k++) {
        const json_t *g = json_array_get(series, (size_t)k);
        size_t last = json_array_size(json_object_get(g, "t_s"));
        assert_true(last > 0);
        last--;
        const json_t *w = json_array_get(json_object_get(g, "power_w"), last);
        const json_t *c = json_array_get(json_object_get(g, "temp_c"), last);
        const json_t *t = json_array_get(json_object_get(g, "tflops"), last);
        assert_true(json_is_number(w) && json_is_number(c) && json_is_number(t));
        power += json_number_value(w);
        if (!(json_number_value(c) <= tmax))
            tmax = json_number_value(c);
        tflops += json_number_value(t);
        live += !json_is_true(json_array_get(json_object_get(g, "lost"), last));
    }
    assert_true(ngpu > 0 && power > 0 && tflops > 0);
    char want[160];
    snprintf(want, sizeof want, "%d/%d GPUs  %.0f W  max %.0f C  %.0f TFLOP/s", live, ngpu, power, tmax,
             tflops);
    if (strncmp(bar, "[####################] 100%  ", 29) || strncmp(bar + 29, want, strlen(want)))
        fail_msg("stress --sim %s: the last bar is '%.100s', expected '%s'", machine, bar, want);
    json_decref(doc);
    free(out);
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    assert_int_equal(system(rm), 0);
}

static void test_pty_stress_step_is_the_last_tick(void **state)
{
    (void)state;
    expect_stress_step("h200x2", "2");
    expect_stress_step("rtx4090x8", "3");
}

/* Not a terminal, or a quiet run: no bar at all. */
/* `run`'s bar names the measurement as "TEST (K/N)", K counting 1..N of the
 * plan's N items: the first bar drawn is the first test's "(1/N)", and no bar
 * shows another N or a K above it. */
static void test_pty_run_items_count_up(void **state)
{
    (void)state;
    const char *args[] = {
        GQ_BIN, "run", "--sim", "h200x2", "-t", "host_to_device_memcpy_ce,device_to_host_memcpy_ce", NULL};
    int code;
    char *out = run_pty(args, &code);
    assert_int_equal(code, 0);
    const char *first = strstr(out, "host_to_device_memcpy_ce (");
    if (!first)
        fail_msg("run: no bar names the first test: %s", out);
    int k = 0, total = 0;
    assert_int_equal(sscanf(first, "host_to_device_memcpy_ce (%d/%d)", &k, &total), 2);
    if (k != 1 || total < 2)
        fail_msg("run: the first test is not item 1 of several: %.40s", first);
    for (const char *p = strstr(out, "_ce ("); p; p = strstr(p + 1, "_ce (")) {
        int n = 0;
        assert_int_equal(sscanf(p, "_ce (%d/%d)", &k, &n), 2);
        if (!(k >= 1 && k <= n && n == total))
            fail_msg("run: a bar counts item %d of %d: %.40s", k, n, p);
    }
    free(out);
}

static void test_no_bar_without_a_terminal(void **state)
{
    (void)state;
    FILE *f = popen(GQ_BIN " domains --sim h200x2 2>&1 >/dev/null", "r");
    assert_non_null(f);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    assert_int_equal(pclose(f), 0);
    assert_null(strchr(buf, '\r'));
    const char *quiet[] = {GQ_BIN, "sweep", "--sim", "h200x2", "--quiet", NULL};
    int code;
    char *out = run_pty(quiet, &code);
    assert_int_equal(code, 0);
    assert_null(strstr(out, "\033[K"));
    assert_null(strstr(out, "] "));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_on_round_counts_measurements),
        cmocka_unit_test(test_wanted),
        cmocka_unit_test(test_format_time_left_and_width),
        cmocka_unit_test(test_tenths),
        cmocka_unit_test(test_pty_domains_counts_to_its_promise),
        cmocka_unit_test(test_pty_card_counts_its_steps),
        cmocka_unit_test(test_pty_bars_reach_their_total),
        cmocka_unit_test(test_pty_place_bar_starts_with_discovery),
        cmocka_unit_test(test_pty_stress_step_is_the_last_tick),
        cmocka_unit_test(test_pty_run_items_count_up),
        cmocka_unit_test(test_no_bar_without_a_terminal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
