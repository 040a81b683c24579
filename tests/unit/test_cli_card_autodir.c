/* `gpuqual card` without -o, in-process: the card goes to
 * gpuqual-card-HOST-YYYYMMDD-HHMMSS in the current directory (HOST the
 * machine's hostname, sim-h200x2 on the simulator; the local time), named in the summary's
 * artefacts line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../cli_inproc.h"

#include "backend/backend.h"
#include "cli/commands.h"
#include "cli/frame.h"

static void test_card_dir_named_by_host_and_time(void **state)
{
    (void)state;
    char top[] = "/tmp/gq-autodir-XXXXXX", cwd[1024];
    assert_non_null(mkdtemp(top));
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(top), 0);
    gq_backend_register_builtin();
    /* a zone 5:30 east of UTC (a POSIX TZ, no tzdata needed): local time is not UTC's */
    setenv("TZ", "GQT-05:30", 1);
    tzset();
    static char err[8192], out[16384];
    char *argv[] = {"gpuqual", "card",        "--sim",          "h200x2", "--level",
                    "quick",   "--no-stress", "--no-placement", "-q",     NULL};
    time_t t0 = time(NULL);
    int code = gq_test_run_cmd(&gq_frame_card, argv, err, sizeof err, out, sizeof out);
    time_t t1 = time(NULL);
    /* the one entry of the directory */
    DIR *d = opendir(".");
    assert_non_null(d);
    struct dirent *e;
    char name[256] = "";
    int n = 0;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(name, sizeof name, "%s", e->d_name);
            n++;
        }
    closedir(d);
    char card[300];
    snprintf(card, sizeof card, "%s/card.json", name);
    struct stat st;
    bool have_card = stat(card, &st) == 0;
    char cmd[128];
    assert_int_equal(chdir(cwd), 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    assert_int_equal(system(cmd), 0);

    assert_int_equal(code, 0);
    assert_int_equal(n, 1);
    assert_true(have_card);
    /* gpuqual-card-sim-h200x2-YYYYMMDD-HHMMSS, the local time of the run */
    char want0[64], want1[64];
    struct tm tm0, tm1;
    localtime_r(&t0, &tm0);
    localtime_r(&t1, &tm1);
    strftime(want0, sizeof want0, "gpuqual-card-sim-h200x2-%Y%m%d-%H%M%S", &tm0);
    strftime(want1, sizeof want1, "gpuqual-card-sim-h200x2-%Y%m%d-%H%M%S", &tm1);
    if (strcmp(name, want0) && strcmp(name, want1))
        fail_msg("card directory '%s', expected '%s' (or '%s')", name, want0, want1);
    char line[320];
    snprintf(line, sizeof line, "artefacts: %s/", name);
    if (!strstr(out, line))
        fail_msg("the summary does not name '%s/': %s", name, out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_card_dir_named_by_host_and_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
