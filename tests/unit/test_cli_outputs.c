/* Outputs never overwrite an input (cli/outputs.h), also when the input is
 * named after "--": a file whose name starts with '-' is then a positional
 * input, not an option. (tests/cli/outputs.txt has the other cases; its
 * runner cannot choose the working directory that a name like -r.json needs.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gq-outputs-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static char *slurp(const char *name)
{
    char p[160];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char *b = calloc(1, 1 << 16);
    assert_non_null(b);
    size_t n = fread(b, 1, (1 << 16) - 1, f);
    b[n] = 0;
    fclose(f);
    return b;
}

static void test_input_after_dashdash(void **state)
{
    (void)state;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && cp '%s/data/bad/run-ok.json' ./-r.json", dir, GQ_TEST_DATA);
    assert_int_equal(system(cmd), 0);
    char *before = slurp("-r.json");
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' report --output=-r.json -- -r.json >out.txt 2>err.txt", dir,
             GQ_BIN);
    int st = system(cmd);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 2);
    char *err = slurp("err.txt"), *after = slurp("-r.json");
    assert_string_equal(err, "gpuqual: --output '-r.json' is the same file as the input '-r.json'; give "
                             "--output a different file\n");
    assert_string_equal(after, before); /* the input is left as it was */
    free(before);
    free(after);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_input_after_dashdash),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
