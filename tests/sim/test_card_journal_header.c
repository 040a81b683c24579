/* The card's journal header names the options that shape its plan (what
 * --resume compares), under options.card, and none of those that only say
 * where or how it writes: --resume, --resume-other-revision, --force,
 * --output, --json, --journal, --format and --quiet are left out, given or
 * not; the plan's own options are kept with their values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

/* Run argv with stdout and stderr to /dev/null; the exit code. */
static int run(char *const argv[])
{
    pid_t p = fork();
    if (p == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
            _exit(126);
        execv(GQ_BIN, argv);
        _exit(127);
    }
    int ws;
    if (p < 0 || waitpid(p, &ws, 0) != p)
        return -1;
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* options.card of the header (the first line) of the journal at path. */
static json_t *header_card_options(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, f);
    fclose(f);
    assert_true(n > 0);
    json_error_t je;
    json_t *h = json_loads(line, 0, &je);
    free(line);
    if (!h)
        fail_msg("%s: the first line is not JSON: %s", path, je.text);
    json_t *card = json_object_get(json_object_get(json_object_get(h, "header"), "options"), "card");
    assert_true(json_is_object(card));
    json_incref(card);
    json_decref(h);
    return card;
}

static void expect_plan_options_only(const char *path, const char *level)
{
    json_t *card = header_card_options(path);
    static const char *const gone[] = {
        "resume", "resume-other-revision", "force", "output", "json", "journal", "format", "quiet"};
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++)
        if (json_object_get(card, gone[i]))
            fail_msg("%s: options.card holds \"%s\", which does not shape the plan", path, gone[i]);
    assert_string_equal(json_string_value(json_object_get(card, "level")), level);
    assert_string_equal(json_string_value(json_object_get(card, "sim")), "h200x2");
    assert_true(json_is_true(json_object_get(card, "no-stress")));
    json_decref(card);
}

static void test_header_holds_the_plan_options_only(void **state)
{
    (void)state;
    char dir[] = "/tmp/gq-cardhdr-XXXXXX", out[96], journal[96], json[96], rm[96];
    assert_non_null(mkdtemp(dir));
    /* the default journal, in the card's directory; nothing of the outputs given */
    snprintf(out, sizeof out, "%s/card", dir);
    char *a1[] = {GQ_BIN, "card", "--sim", "h200x2", "--level", "quick", "--no-stress", "-o", out, NULL};
    assert_int_equal(run(a1), 0);
    char path[128];
    snprintf(path, sizeof path, "%s/journal.jsonl", out);
    expect_plan_options_only(path, "quick");
    /* every output option given: --journal elsewhere, --json, --format, --quiet, --force over the
     * first card */
    snprintf(journal, sizeof journal, "%s/j.jsonl", dir);
    snprintf(json, sizeof json, "%s/c.json", dir);
    char *a2[] = {GQ_BIN,           "card", "--sim",   "h200x2",    "--level", "standard", "--no-stress",
                  "--no-placement", "-o",   out,       "--journal", journal,   "--json",   json,
                  "--format",       "json", "--quiet", "--force",   NULL};
    assert_int_equal(run(a2), 0);
    expect_plan_options_only(journal, "standard");
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    assert_int_equal(system(rm), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_holds_the_plan_options_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
