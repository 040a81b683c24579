/* A run killed at random points (SIGKILL, or Ctrl-C twice; 20 trials) and
 * resumed:
 *  - the next start leaves no `.gq-*` temporary file in the output directory
 *    (one of a dead process is planted there too, as a kill mid-write on a
 *    file system without O_TMPFILE would leave it);
 *  - `run --resume JOURNAL` ends with exit 0 and the same records, in the same
 *    order, as an uninterrupted run, each figure within its spread.
 * The simulated machine is h200x2 without noise (a figure measured again
 * is then the same figure, so a record taken from the wrong item shows),
 * every test of the catalog, 1 MiB, 3 rounds (about 1.3 s a run); the record
 * key includes the rounds, so a record cut short by the kill and re-used
 * shows too. bench/kill-resume.sh runs more trials, with noise. */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#define TRIALS 20

static char top[64];

static pid_t spawn(char *const argv[])
{
    pid_t p = fork();
    if (p == 0) {
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        dup2(fd, 2);
        execv(GQ_BIN, argv);
        _exit(127);
    }
    return p;
}

static int run_wait(char *const argv[])
{
    int ws;
    pid_t p = spawn(argv);
    if (p < 0 || waitpid(p, &ws, 0) != p)
        return -1;
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static int count_gq(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += !strncmp(e->d_name, ".gq-", 4);
    if (d)
        closedir(d);
    return n;
}

static bool has_header(const char *path)
{
    FILE *f = fopen(path, "r");
    char buf[64] = "";
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strstr(buf, "\"header\"") != NULL;
}

static const json_t *value_of(const json_t *r)
{
    const json_t *v = json_object_get(r, "gbps");
    return json_is_object(v) ? v : json_object_get(r, "latency_ns");
}

static void key_of(const json_t *r, char *buf, size_t cap)
{
    json_t *k =
        json_pack("{s:O?,s:O?,s:O?,s:O?,s:O?,s:O?,s:O?,s:O?,s:O?}", "test", json_object_get(r, "test"),
                  "method", json_object_get(r, "method"), "src", json_object_get(r, "src"), "dst",
                  json_object_get(r, "dst"), "bytes", json_object_get(r, "bytes"), "aggregate",
                  json_object_get(r, "aggregate"), "sum", json_object_get(r, "sum"), "flow_tag",
                  json_object_get(r, "flow_tag"), "rounds", json_object_get(r, "rounds"));
    char *s = k ? json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(k);
    snprintf(buf, cap, "%s", s ? s : "?");
    free(s);
}

/* Same keys in the same order; every median within the larger spread. */
static void same_records(const char *ref_path, const char *got_path, int trial)
{
    json_t *a = json_load_file(ref_path, 0, NULL), *b = json_load_file(got_path, 0, NULL);
    if (!a || !b)
        fail_msg("trial %d: cannot read %s or %s", trial, ref_path, got_path);
    json_t *ra = json_object_get(a, "records"), *rb = json_object_get(b, "records");
    if (json_array_size(ra) != json_array_size(rb) || json_array_size(ra) == 0)
        fail_msg("trial %d: %zu records, want %zu", trial, json_array_size(rb), json_array_size(ra));
    if (json_is_true(json_object_get(b, "incomplete")))
        fail_msg("trial %d: %s is marked incomplete", trial, got_path);
    for (size_t i = 0; i < json_array_size(ra); i++) {
        char ka[512], kb[512];
        const json_t *x = json_array_get(ra, i), *y = json_array_get(rb, i);
        key_of(x, ka, sizeof ka);
        key_of(y, kb, sizeof kb);
        if (strcmp(ka, kb))
            fail_msg("trial %d: record %zu is %s, want %s", trial, i, kb, ka);
        double ma = json_number_value(json_object_get(value_of(x), "median"));
        double mb = json_number_value(json_object_get(value_of(y), "median"));
        double sa = json_number_value(json_object_get(value_of(x), "spread"));
        double sb = json_number_value(json_object_get(value_of(y), "spread"));
        /* without noise a figure measured again is the same figure; the
         * spreads (the simulator's rounds still differ), and 0.1% for the
         * contention model's state, bound it */
        double tol = ((sa > sb ? sa : sb) + 1e-3) * fabs(ma);
        if (!isfinite(ma) || !isfinite(mb) || fabs(ma - mb) > tol)
            fail_msg("trial %d: record %zu (%s): %.6g, want %.6g within %.3g", trial, i, ka, mb, ma, tol);
    }
    json_decref(a);
    json_decref(b);
}

static void test_kill_and_resume(void **state)
{
    (void)state;
    snprintf(top, sizeof top, "/tmp/gq-kill-XXXXXX");
    assert_non_null(mkdtemp(top));
    char ref[128], refj[128];
    snprintf(ref, sizeof ref, "%s/ref.json", top);
    snprintf(refj, sizeof refj, "%s/ref.jsonl", top);
    char *refargv[] = {"gpuqual", "run", "--sim", "h200x2", "--sim-noise", "0",         "-b", "1",
                       "-i",      "3",   "-q",    "--json", ref,           "--journal", refj, NULL};
    assert_int_equal(run_wait(refargv), 0);
    unsigned seed = (unsigned)time(NULL);
    print_message("seed %u\n", seed);
    int resumed = 0;
    for (int t = 0; t < TRIALS; t++) {
        char dir[128], j[160], out[160], dead[200];
        snprintf(dir, sizeof dir, "%s/t%02d", top, t);
        assert_int_equal(mkdir(dir, 0700), 0);
        snprintf(j, sizeof j, "%s/j.jsonl", dir);
        snprintf(out, sizeof out, "%s/out.json", dir);
        char *argv[] = {"gpuqual", "run", "--sim", "h200x2", "--sim-noise", "0",         "-b", "1",
                        "-i",      "3",   "-q",    "--json", out,           "--journal", j,    NULL};
        pid_t p = spawn(argv);
        assert_true(p > 0);
        usleep((useconds_t)(rand_r(&seed) % 1400000));
        if (t % 2) { /* Ctrl-C twice: the second exits at once */
            kill(p, SIGINT);
            kill(p, SIGINT);
        } else {
            kill(p, SIGKILL);
        }
        waitpid(p, NULL, 0);
        /* what a kill mid-write leaves where O_TMPFILE is missing */
        pid_t child = fork();
        if (child == 0)
            _exit(0);
        waitpid(child, NULL, 0);
        snprintf(dead, sizeof dead, "%s/.gq-%ld-zzzzzz", dir, (long)child);
        fclose(fopen(dead, "w"));
        int rc;
        if (has_header(j)) {
            char *rargv[] = {"gpuqual", "run", "--sim", "h200x2", "--sim-noise", "0",        "-b", "1",
                             "-i",      "3",   "-q",    "--json", out,           "--resume", j,    NULL};
            rc = run_wait(rargv);
            resumed++;
        } else { /* killed before its journal began: start again */
            unlink(j);
            rc = run_wait(argv);
        }
        if (rc != 0)
            fail_msg("trial %d: the rerun exited %d", t, rc);
        if (count_gq(dir) != 0)
            fail_msg("trial %d: %d .gq-* file(s) left in %s", t, count_gq(dir), dir);
        same_records(ref, out, t);
    }
    print_message("%d of %d trials resumed a journal\n", resumed, TRIALS);
    assert_true(resumed >= TRIALS / 2);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    assert_int_equal(system(cmd), 0);
}

/* The card: killed at random points, `card --resume DIR` completes it from
 * DIR.partial-RUNID/ into DIR (no partial directory left) with the records
 * of an uninterrupted card. */
static void test_card_kill_and_resume(void **state)
{
    (void)state;
    snprintf(top, sizeof top, "/tmp/gq-kill-XXXXXX");
    assert_non_null(mkdtemp(top));
    char ref[128], refj[160];
    snprintf(ref, sizeof ref, "%s/ref", top);
    snprintf(refj, sizeof refj, "%s/card.json", ref);
    char *refargv[] = {"gpuqual",     "card", "--sim", "h200x2", "--sim-noise", "0",
                       "--no-stress", "-q",   "-o",    ref,      NULL};
    assert_int_equal(run_wait(refargv), 0);
    unsigned seed = (unsigned)time(NULL);
    int resumed = 0;
    for (int t = 0; t < 10; t++) {
        char dir[128], out[160];
        snprintf(dir, sizeof dir, "%s/c%02d", top, t);
        snprintf(out, sizeof out, "%s/card.json", dir);
        char *argv[] = {"gpuqual",     "card", "--sim", "h200x2", "--sim-noise", "0",
                        "--no-stress", "-q",   "-o",    dir,      NULL};
        pid_t p = spawn(argv);
        assert_true(p > 0);
        usleep((useconds_t)(rand_r(&seed) % 60000));
        kill(p, SIGKILL);
        waitpid(p, NULL, 0);
        if (access(out, F_OK) == 0)
            continue; /* finished before the kill */
        char *rargv[] = {"gpuqual",     "card", "--sim",    "h200x2", "--sim-noise", "0",
                         "--no-stress", "-q",   "--resume", dir,      NULL};
        char probe[300];
        snprintf(probe, sizeof probe, "grep -qs '\"header\"' '%s'.partial-*/journal.jsonl", dir);
        if (system(probe) == 0) {
            int rc = run_wait(rargv);
            if (rc != 0)
                fail_msg("card trial %d: card --resume exited %d", t, rc);
            resumed++;
        } else { /* killed before the partial directory had its journal */
            char cmd[300];
            snprintf(cmd, sizeof cmd, "rm -rf '%s'.partial-*", dir);
            assert_int_equal(system(cmd), 0);
            assert_int_equal(run_wait(argv), 0);
        }
        char pattern[200];
        snprintf(pattern, sizeof pattern, "ls -d '%s'.partial-* >/dev/null 2>&1", dir);
        if (system(pattern) == 0)
            fail_msg("card trial %d: a partial directory is left beside %s", t, dir);
        same_records(refj, out, t);
    }
    print_message("%d of 10 card trials resumed\n", resumed);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_kill_and_resume),
                                       cmocka_unit_test(test_card_kill_and_resume)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
