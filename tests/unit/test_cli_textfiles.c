/* --prom and --junit of a fleet (cli/textfiles.h): every node's card
 * document, and a node whose card did not run, through the atomic writer. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/textfiles.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *buf = calloc(1, 1 << 16);
    assert_non_null(buf);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void test_fleet_files(void **state)
{
    char dir[] = "/tmp/gq-cli-textfiles-XXXXXX", prom[64], junit[64];
    assert_non_null(mkdtemp(dir));
    snprintf(prom, sizeof prom, "%s/f.prom", dir);
    snprintf(junit, sizeof junit, "%s/f.xml", dir);
    json_t *doc =
        json_pack("{s:s, s:{s:s, s:s}, s:{s:s, s:i, s:b, s:[{s:s, s:s, s:s, s:f, s:s, s:s}]}}", "kind",
                  "card", "host", "hostname", "n0", "source", "sim:h200x2", "card", "verdict", "pass",
                  "exit_code", 0, "complete", 1, "checks", "id", "h2d_gbps_min", "subject", "gpu:0",
                  "verdict", "pass", "figure", 55.1, "unit", "GB/s", "text", "55.1 GB/s");
    assert_non_null(doc);
    json_t *docs[2] = {doc, NULL};
    const char *hosts[2] = {"n0", "n1"}, *errors[2] = {NULL, "GPU 1 is lost"};
    gq_err err = {0};
    assert_int_equal(gq_cli_card_files(prom, junit, "fleet", docs, hosts, errors, 2, NULL, NULL, &err),
                     GQ_OK);
    char *p = slurp(prom), *j = slurp(junit);
    assert_non_null(strstr(p, "gpuqual_info{version=\""));
    assert_non_null(strstr(p, "command=\"fleet\",source=\"sim:h200x2\"} 1\n"));
    assert_non_null(strstr(p, "gpuqual_card_verdict{Hostname=\"n0\",rank=\"0\",verdict=\"pass\"} 1\n"));
    assert_non_null(strstr(p, "gpuqual_card_verdict{Hostname=\"n1\",rank=\"1\",verdict=\"fail\"} 1\n"));
    assert_non_null(strstr(p, "gpuqual_card_exit_code{Hostname=\"n1\",rank=\"1\"} 1\n"));
    assert_non_null(
        strstr(p, "gpuqual_card_check_bytes_per_second{Hostname=\"n0\",rank=\"0\",check=\"h2d_gbps_min\""));
    assert_non_null(strstr(j, "<testsuites name=\"gpuqual\" tests=\"2\" failures=\"1\" errors=\"0\">"));
    assert_non_null(strstr(j, "<testsuite name=\"gpuqual card n1 rank 1\" tests=\"1\" failures=\"1\""));
    assert_non_null(strstr(j, "message=\"the card did not run: GPU 1 is lost\""));
    free(p);
    free(j);
    /* nothing else is left in the directory: the temporary names were renamed */
    char cmd[128];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 2", dir);
    assert_int_equal(system(cmd), 0);
    unlink(prom);
    unlink(junit);
    /* --junit without --prom, and --prom without --junit: each is written alone */
    assert_int_equal(gq_cli_card_files(NULL, junit, "fleet", docs, hosts, errors, 2, NULL, NULL, &err),
                     GQ_OK);
    assert_int_equal(access(prom, F_OK), -1);
    j = slurp(junit);
    assert_non_null(strstr(j, "<testsuites name=\"gpuqual\" tests=\"2\" failures=\"1\" errors=\"0\">"));
    free(j);
    unlink(junit);
    assert_int_equal(gq_cli_card_files(prom, NULL, "fleet", docs, hosts, errors, 2, NULL, NULL, &err), GQ_OK);
    assert_int_equal(access(junit, F_OK), -1);
    p = slurp(prom);
    assert_non_null(strstr(p, "gpuqual_card_verdict{Hostname=\"n1\",rank=\"1\",verdict=\"fail\"} 1\n"));
    free(p);
    unlink(prom);
    rmdir(dir);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_fleet_files)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
