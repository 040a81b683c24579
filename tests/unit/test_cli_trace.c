/* GQ_TRACE=1 (gpuqual run): one "trace:" line per phase on stderr, naming
 * the phase. The whole run's phases ("-" for the test) come in order: open,
 * plan, output, total; each measured test has its own (prepare .. release).
 * The seconds are wall times and are not checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

static void test_run_phases(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "GQ_TRACE=1 '%s' run --sim h200x2 -t device_local_copy -i 2 -q 2>&1 >/dev/null",
             GQ_BIN);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[512], run_phases[128] = "";
    int test_lines = 0, lines = 0;
    while (fgets(line, sizeof line, p)) {
        char test[64], phase[32];
        double s;
        if (sscanf(line, "trace: %lf s %63s %31s", &s, test, phase) != 3)
            fail_msg("not a trace line: %s", line);
        lines++;
        if (!strcmp(test, "-")) {
            strcat(run_phases, phase);
            strcat(run_phases, " ");
        } else {
            assert_string_equal(test, "device_local_copy");
            test_lines++;
        }
    }
    int st = pclose(p);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_string_equal(run_phases, "open plan output total ");
    assert_true(test_lines > 0);
    assert_int_equal(lines, test_lines + 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_phases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
