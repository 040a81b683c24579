/* card --resume DIR re-uses every finished, uncontaminated measurement of
 * the interrupted card, the latency step's and its completed stress run
 * included, and measures only what is missing; a stress run cut off part-way
 * is run again whole.
 *
 * Deterministic interrupts: a complete card's journal is written line by
 * line, each flushed before the next measurement starts, so a card killed at
 * any point leaves a prefix of it. Each case copies a prefix of a reference
 * card's journal into DIR.partial-RUNID/ (what a SIGKILL at that point
 * leaves) and resumes it. The simulated machine has noise (--sim-noise 0.02)
 * and its noise follows the number of measurements taken before, so a figure
 * measured again differs from the journal's: a figure equal to the
 * journal's, to the last bit, was re-used. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

static char top[64];
static char ref_dir[128];
static char **lines; /* the reference card's journal, line by line (each with its newline) */
static int nlines;
static char run_id[64];

#define CARD_ARGS "card", "--sim", "h200x2", "--sim-noise", "0.02", "--stress", "5s", "-q"

/* Run argv with stdout to /dev/null and stderr to errpath; the exit code. */
static int run(char *const argv[], const char *errpath)
{
    pid_t p = fork();
    if (p == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen(errpath, "w", stderr))
            _exit(126);
        execv(GQ_BIN, argv);
        _exit(127);
    }
    int ws;
    if (p < 0 || waitpid(p, &ws, 0) != p)
        return -1;
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = s ? fread(s, 1, (size_t)n, f) : 0;
    fclose(f);
    if (!s)
        return NULL;
    s[got] = 0;
    return s;
}

static json_t *line_json(int i)
{
    return json_loads(lines[i], 0, NULL);
}

/* The index after line i's item mark: the journal cut there holds items 0..K. */
static int after_item(int k)
{
    for (int i = 0; i < nlines; i++) {
        json_t *l = line_json(i);
        json_t *st = json_object_get(l, "step");
        bool hit = json_is_object(st) && json_integer_value(json_object_get(st, "item")) == k &&
                   json_is_integer(json_object_get(st, "item"));
        json_decref(l);
        if (hit)
            return i + 1;
    }
    return -1;
}

/* Items marked done among the first n lines. */
static int items_done(int n)
{
    int c = 0;
    for (int i = 0; i < n; i++) {
        json_t *l = line_json(i);
        json_t *st = json_object_get(l, "step");
        const char *name = json_string_value(json_object_get(st, "step"));
        c += name && !strcmp(name, "item");
        json_decref(l);
    }
    return c;
}

/* The line after the last latency record of the journal, and after its
 * item's mark when one follows: the card killed once its latency step had
 * finished. */
static int after_latency(void)
{
    int last = -1;
    for (int i = 0; i < nlines; i++) {
        json_t *l = line_json(i);
        const char *test = json_string_value(json_object_get(json_object_get(l, "record"), "test"));
        if (test && strstr(test, "_latency_"))
            last = i;
        json_decref(l);
    }
    if (last >= 0 && last + 1 < nlines && strstr(lines[last + 1], "\"step\":{\"step\":\"item\""))
        last++;
    return last + 1;
}

/* An interrupted card: DIR.partial-RUNID/journal.jsonl holding the first n
 * lines of the reference journal, with the header changed by edit (may be NULL). */
static void plant(const char *dir, int n, void (*edit)(json_t *header))
{
    char partial[256], path[300];
    snprintf(partial, sizeof partial, "%s.partial-%s", dir, run_id);
    assert_int_equal(mkdir(partial, 0777), 0);
    snprintf(path, sizeof path, "%s/journal.jsonl", partial);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < n; i++) {
        if (i == 0 && edit) {
            json_t *l = line_json(0);
            edit(json_object_get(l, "header"));
            char *s = json_dumps(l, JSON_COMPACT | JSON_PRESERVE_ORDER);
            fprintf(f, "%s\n", s);
            free(s);
            json_decref(l);
        } else {
            fputs(lines[i], f);
        }
    }
    fclose(f);
}

static int resume(const char *dir, char *msg, size_t cap)
{
    char errpath[300];
    snprintf(errpath, sizeof errpath, "%s.err", dir);
    char *argv[] = {"gpuqual", CARD_ARGS, "--resume", (char *)dir, NULL};
    int rc = run(argv, errpath);
    char *s = slurp(errpath);
    snprintf(msg, cap, "%s", s ? s : "");
    free(s);
    return rc;
}

static json_t *card_of(const char *dir)
{
    char path[300];
    snprintf(path, sizeof path, "%s/card.json", dir);
    json_error_t je;
    json_t *c = json_load_file(path, 0, &je);
    if (!c)
        fail_msg("%s: %s", path, je.text);
    return c;
}

static const json_t *stress_of(const json_t *card)
{
    return json_object_get(card, "stress");
}

static int setup(void **state)
{
    (void)state;
    snprintf(top, sizeof top, "/tmp/gq-card-resume-XXXXXX");
    if (!mkdtemp(top))
        return -1;
    snprintf(ref_dir, sizeof ref_dir, "%s/ref", top);
    char errpath[200];
    snprintf(errpath, sizeof errpath, "%s/ref.err", top);
    char *argv[] = {"gpuqual", CARD_ARGS, "-o", ref_dir, NULL};
    if (run(argv, errpath) != 0)
        return -1;
    char path[200];
    snprintf(path, sizeof path, "%s/journal.jsonl", ref_dir);
    char *all = slurp(path);
    if (!all)
        return -1;
    for (char *p = all; *p;) {
        char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
        lines = realloc(lines, (size_t)(nlines + 1) * sizeof *lines);
        lines[nlines] = strndup(p, len);
        nlines++;
        p += len;
    }
    free(all);
    json_t *h = line_json(0);
    snprintf(run_id, sizeof run_id, "%s",
             json_string_value(json_object_get(json_object_get(h, "header"), "run_id")));
    json_decref(h);
    return run_id[0] ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < nlines; i++)
        free(lines[i]);
    free(lines);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    return system(cmd) == 0 ? 0 : -1;
}

/* Killed once the latency step had finished (during the placement): every
 * latency figure is the journal's, and only the placement and the stress run
 * are measured. */
static void test_latency_reused(void **state)
{
    (void)state;
    int cut = after_latency();
    assert_true(cut > 1 && cut < nlines);
    char dir[200], msg[2048], want[300];
    snprintf(dir, sizeof dir, "%s/lat", top);
    plant(dir, cut, NULL);
    assert_int_equal(resume(dir, msg, sizeof msg), 0);
    /* every latency record of the journal is in the card, to the last bit */
    json_t *card = card_of(dir);
    int nlat = 0;
    for (int i = 0; i < cut; i++) {
        json_t *l = line_json(i);
        json_t *r = json_object_get(l, "record");
        const char *test = json_string_value(json_object_get(r, "test"));
        if (test && strstr(test, "_latency_")) {
            bool found = false;
            size_t x;
            json_t *c;
            json_array_foreach(json_object_get(card, "records"), x, c) found |= json_equal(c, r);
            if (!found)
                fail_msg("the journal's latency record %s (median %.9g ns) is not in the resumed card: "
                         "measured again",
                         test,
                         json_number_value(json_object_get(json_object_get(r, "latency_ns"), "median")));
            nlat++;
        }
        json_decref(l);
    }
    assert_true(nlat >= 4); /* two GPUs to host memory, the pair both ways */
    assert_false(json_is_true(json_object_get(card, "incomplete")));
    json_decref(card);
    /* and the resume says what it re-used and that the stress run was measured */
    snprintf(want, sizeof want, "--resume: %d measurements re-used from %s.partial-%s/", items_done(cut), dir,
             run_id);
    if (!strstr(msg, want))
        fail_msg("the resume said '%s', expected '%s'", msg, want);
    if (!strstr(msg, "; the stress run measured whole"))
        fail_msg("the resume said '%s': the stress run was not in the journal", msg);
}

/* Killed after its stress run completed (while writing its files): nothing
 * is measured again, and the stress section and stress.csv are the
 * journal's. */
static void test_stress_reused(void **state)
{
    (void)state;
    char dir[200], msg[2048], want[300];
    snprintf(dir, sizeof dir, "%s/all", top);
    plant(dir, nlines, NULL);
    assert_int_equal(resume(dir, msg, sizeof msg), 0);
    snprintf(want, sizeof want,
             "--resume: %d measurements re-used from %s.partial-%s/, 0 measured now; the "
             "completed stress run re-used",
             items_done(nlines), dir, run_id);
    if (!strstr(msg, want))
        fail_msg("the resume said '%s', expected '%s'", msg, want);
    json_t *ref = card_of(ref_dir), *card = card_of(dir);
    assert_non_null(stress_of(card));
    assert_true(json_equal(stress_of(ref), stress_of(card)));
    json_t *refj = json_object_get(ref, "records"), *got = json_object_get(card, "records");
    assert_true(json_equal(refj, got));
    char a[300], b[300];
    snprintf(a, sizeof a, "%s/stress.csv", ref_dir);
    snprintf(b, sizeof b, "%s/stress.csv", dir);
    char *sa = slurp(a), *sb = slurp(b);
    assert_non_null(sa);
    assert_non_null(sb);
    assert_true(strchr(sa, '\n') != strrchr(sa, '\n')); /* a header and samples */
    assert_string_equal(sa, sb);
    free(sa);
    free(sb);
    json_decref(ref);
    json_decref(card);
}

/* Killed part-way through its stress run: the samples in the journal are not
 * evidence of the whole duration, so the stress run is measured again whole. */
static void test_stress_cut_runs_again(void **state)
{
    (void)state;
    int first = -1, last = -1;
    for (int i = 0; i < nlines; i++)
        if (strstr(lines[i], "\"sample\":")) {
            if (first < 0)
                first = i;
            last = i;
        }
    assert_true(first > 0 && last > first + 2);
    int cut = (first + last) / 2;
    char dir[200], msg[2048];
    snprintf(dir, sizeof dir, "%s/mid", top);
    plant(dir, cut, NULL);
    assert_int_equal(resume(dir, msg, sizeof msg), 0);
    if (!strstr(msg, ", 0 measured now; the stress run measured whole"))
        fail_msg("the resume said '%s'", msg);
    json_t *ref = card_of(ref_dir), *card = card_of(dir);
    const json_t *s = stress_of(card);
    assert_false(json_is_true(json_object_get(s, "interrupted")));
    assert_true(json_number_value(json_object_get(s, "elapsed_s")) >=
                json_number_value(json_object_get(s, "duration_s")));
    const json_t *g0 = json_array_get(json_object_get(json_object_get(s, "series"), "gpus"), 0);
    const json_t *r0 = json_array_get(json_object_get(json_object_get(stress_of(ref), "series"), "gpus"), 0);
    assert_int_equal(json_array_size(json_object_get(g0, "t_s")),
                     json_array_size(json_object_get(r0, "t_s")));
    json_decref(ref);
    json_decref(card);
    /* the journal now marks the stress run complete */
    char path[300];
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    char *j = slurp(path);
    assert_non_null(j);
    assert_non_null(strstr(j, "{\"step\":\"stress\",\"status\":\"done\""));
    free(j);
}

/* A done one-flow place_pairs item whose journal holds only its flow record,
 * marked invalid, with no aggregate (an edited journal): the flow's own figure
 * stands for the pattern, and so does its validity: the card's placement
 * says the pairs' figure is not valid. */
static void test_place_one_flow_invalid(void **state)
{
    (void)state;
    int flow = -1, agg = -1, mark = -1;
    long item = -1;
    for (int i = 1; i < nlines && mark < 0; i++) {
        json_t *l = line_json(i);
        const json_t *r = json_object_get(l, "record"), *st = json_object_get(l, "step");
        const char *test = json_string_value(json_object_get(r, "test"));
        if (test && !strcmp(test, "place_pairs") && item < 0) {
            item = (long)json_integer_value(json_object_get(l, "item"));
            flow = i;
        } else if (test && !strcmp(test, "place_pairs") && json_is_true(json_object_get(r, "aggregate")))
            agg = i;
        else if (item >= 0 && st && json_integer_value(json_object_get(st, "item")) == item)
            mark = i;
        json_decref(l);
    }
    assert_true(flow > 0 && agg == flow + 1 && mark == agg + 1);
    char dir[200], msg[2048], partial[300], path[400];
    snprintf(dir, sizeof dir, "%s/oneflow", top);
    snprintf(partial, sizeof partial, "%s.partial-%s", dir, run_id);
    assert_int_equal(mkdir(partial, 0777), 0);
    snprintf(path, sizeof path, "%s/journal.jsonl", partial);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i <= mark; i++) {
        if (i == agg)
            continue;
        if (i == flow) {
            json_t *l = line_json(i);
            json_object_set_new(json_object_get(l, "record"), "valid", json_false());
            char *t = json_dumps(l, JSON_COMPACT | JSON_PRESERVE_ORDER);
            fprintf(f, "%s\n", t);
            free(t);
            json_decref(l);
        } else
            fputs(lines[i], f);
    }
    fclose(f);
    assert_int_equal(resume(dir, msg, sizeof msg), 0);
    json_t *ref = card_of(ref_dir), *card = card_of(dir);
    const char *key[] = {"card", "placement", "pairs_aggregate", "valid"};
    const json_t *a = ref, *b = card;
    for (int k = 0; k < 4; k++) {
        a = json_object_get(a, key[k]);
        b = json_object_get(b, key[k]);
    }
    assert_true(json_is_true(a));
    assert_true(json_is_false(b));
    json_decref(ref);
    json_decref(card);
}

/* The index of the collectives step's mark in the reference journal (-1: none). */
static int coll_mark(void)
{
    for (int i = 0; i < nlines; i++)
        if (strstr(lines[i], "\"step\":{\"step\":\"collectives\",\"status\":\"done\""))
            return i;
    return -1;
}

/* Killed after the collectives step (its mark journaled), before the stress
 * run: the collectives section is the journal's to the last bit (measured
 * again, the sim's noise would give other figures), and the resume says so. */
static void test_coll_reused(void **state)
{
    (void)state;
    int mark = coll_mark();
    assert_true(mark > 0 && mark + 1 < nlines);
    char dir[200], msg[2048];
    snprintf(dir, sizeof dir, "%s/coll", top);
    plant(dir, mark + 1, NULL);
    assert_int_equal(resume(dir, msg, sizeof msg), 0);
    if (!strstr(msg, "; the stress run measured whole; the collectives step's figures re-used"))
        fail_msg("the resume said '%s'", msg);
    json_t *ref = card_of(ref_dir), *card = card_of(dir);
    const json_t *rc = json_object_get(json_object_get(ref, "card"), "collectives"),
                 *cc = json_object_get(json_object_get(card, "card"), "collectives");
    assert_true(json_is_object(rc));
    if (!json_equal(rc, cc)) {
        char *a = json_dumps(rc, JSON_COMPACT), *b = json_dumps(cc, JSON_COMPACT);
        fail_msg("the collectives were measured again: journal %s, resumed card %s", a, b);
    }
    json_decref(ref);
    json_decref(card);
}

/* A journaled collectives mark that cannot stand for this card's step (a
 * group without its figure alone, as a failed group's would be) is measured
 * again: the resume does not claim it, and the card's section is whole. */
static void test_coll_unusable_measured_again(void **state)
{
    (void)state;
    int mark = coll_mark();
    assert_true(mark > 0);
    char dir[200], msg[2048], partial[256], path[300];
    snprintf(dir, sizeof dir, "%s/collbad", top);
    plant(dir, mark, NULL);
    json_t *l = line_json(mark);
    json_t *g0 = json_array_get(
        json_object_get(json_object_get(json_object_get(l, "step"), "collectives"), "groups"), 0);
    assert_non_null(g0);
    json_object_set_new(g0, "alone_busbw_gbps", json_null());
    snprintf(partial, sizeof partial, "%s.partial-%s", dir, run_id);
    snprintf(path, sizeof path, "%s/journal.jsonl", partial);
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    char *s = json_dumps(l, JSON_COMPACT | JSON_PRESERVE_ORDER);
    fprintf(f, "%s\n", s);
    fclose(f);
    free(s);
    json_decref(l);
    assert_int_equal(resume(dir, msg, sizeof msg), 0);
    if (strstr(msg, "collectives step's figures re-used"))
        fail_msg("the resume said '%s': an unusable collectives mark was re-used", msg);
    json_t *card = card_of(dir);
    const json_t *cc = json_object_get(json_object_get(card, "card"), "collectives");
    const json_t *c0 = json_array_get(json_object_get(cc, "groups"), 0);
    assert_true(json_is_number(json_object_get(c0, "alone_busbw_gbps")));
    json_decref(card);
}

static void drop_layout(json_t *h)
{
    json_object_del(h, "layout");
}

/* A journal of a gpuqual that numbered the card's items otherwise (its
 * latency measurements were not items) is not resumed: its numbers would
 * name other measurements. */
static void test_other_layout_refused(void **state)
{
    (void)state;
    char dir[200], msg[2048];
    snprintf(dir, sizeof dir, "%s/old", top);
    plant(dir, after_item(3), drop_layout);
    assert_int_equal(resume(dir, msg, sizeof msg), 2);
    if (!strstr(msg, "whose journal numbers the measurements differently (layout absent") ||
        strchr(msg, '\n') != msg + strlen(msg) - 1)
        fail_msg("the refusal said '%s'", msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_latency_reused),        cmocka_unit_test(test_stress_reused),
        cmocka_unit_test(test_stress_cut_runs_again), cmocka_unit_test(test_place_one_flow_invalid),
        cmocka_unit_test(test_coll_reused),           cmocka_unit_test(test_coll_unusable_measured_again),
        cmocka_unit_test(test_other_layout_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
