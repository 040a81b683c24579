/* The operators' files from typed results and card documents: the
 * Prometheus textfile of stress and cards (render/prometheus.h), the node
 * summary of a card document (doc/card_summary.h) and JUnit XML
 * (render/junit.h). */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "doc/card_summary.h"
#include "render/junit.h"
#include "render/prometheus.h"

static char *buf;
static size_t len;

static FILE *open_out(void)
{
    free(buf);
    buf = NULL;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    return f;
}

/* A card document: card_version 1 (no evidence fields) unless schema2. */
static json_t *card_doc(bool schema2, const char *verdict, bool complete)
{
    json_t *doc = json_pack("{s:s, s:{s:s}}", "kind", "card", "host", "hostname", "node<7>");
    json_t *checks = json_array();
    json_array_append_new(checks, json_pack("{s:s, s:s, s:s, s:f, s:s, s:s}", "id", "h2d_gbps_min", "subject",
                                            "gpu:0", "verdict", "fail", "figure", 41.5, "unit", "GB/s",
                                            "text", "GPU 0: 41.5 GB/s < 50 & \"low\""));
    json_array_append_new(checks, json_pack("{s:s, s:s, s:s, s:n, s:s, s:s}", "id", "temp_c_max", "subject",
                                            "gpu:0", "verdict", "skip", "figure", "unit", "°C", "text",
                                            "temperature under load not measured in this run"));
    json_t *c3 = json_pack("{s:s, s:s, s:s, s:f, s:s, s:s}", "id", "p2p_latency_ns_max", "subject",
                           "gpu:0>gpu:1", "verdict", "pass", "figure", 829.0, "unit", "ns", "text", "829 ns");
    if (schema2) {
        /* evidence says this one was not measured, whatever its verdict */
        json_object_set_new(c3, "evidence", json_string("skipped"));
        json_object_set_new(c3, "evidence_reason", json_string("budget"));
    }
    json_array_append_new(checks, c3);
    json_object_set_new(doc, "card",
                        json_pack("{s:s, s:i, s:b, s:o}", "verdict", verdict, "exit_code",
                                  !strcmp(verdict, "fail") ? 1 : 0, "complete", complete, "checks", checks));
    return doc;
}

static void test_summary_evidence(void **state)
{
    json_t *doc = card_doc(false, "fail", true);
    json_t *s = gq_card_node_summary(doc);
    assert_non_null(s);
    assert_string_equal(json_string_value(json_object_get(s, "hostname")), "node<7>");
    json_t *checks = json_object_get(s, "checks");
    assert_int_equal(json_array_size(checks), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(checks, 0), "evidence")),
                        "measured");
    assert_string_equal(json_string_value(json_object_get(json_array_get(checks, 1), "evidence")), "skipped");
    assert_string_equal(json_string_value(json_object_get(json_array_get(checks, 2), "evidence")),
                        "measured");
    json_decref(s);
    json_decref(doc);
    /* card_version 1: complete false beside a pass is incomplete */
    doc = card_doc(false, "pass", false);
    s = gq_card_node_summary(doc);
    assert_string_equal(json_string_value(json_object_get(s, "verdict")), "incomplete");
    json_decref(s);
    json_decref(doc);
    /* no card section: no summary */
    doc = json_pack("{s:s}", "kind", "run");
    assert_null(gq_card_node_summary(doc));
    json_decref(doc);
}

static void test_junit(void **state)
{
    json_t *doc = card_doc(true, "fail", true);
    json_t *nodes = json_array();
    json_array_append_new(nodes, gq_card_node_summary(doc));
    json_array_append_new(nodes, json_pack("{s:s, s:s, s:i, s:[], s:s}", "hostname", "n2", "verdict", "fail",
                                           "exit_code", 1, "checks", "error", "the card did not run"));
    FILE *f = open_out();
    gq_junit_cards(f, nodes, GQ_JUNIT_WARN_SKIPPED);
    fclose(f);
    assert_non_null(strstr(
        buf, "<testsuites name=\"gpuqual\" tests=\"4\" failures=\"2\" errors=\"0\">")); /* no skipped= */
    assert_non_null(
        strstr(buf, "<testsuite name=\"gpuqual card node&lt;7&gt;\" tests=\"3\" failures=\"1\" errors=\"0\" "
                    "skipped=\"2\">"));
    assert_non_null(
        strstr(buf, "<failure type=\"fail\" message=\"GPU 0: 41.5 GB/s &lt; 50 &amp; &quot;low&quot;\"/>"));
    /* the pass whose evidence is "skipped" is skipped with its reason, never passed */
    assert_non_null(strstr(buf, "name=\"p2p_latency_ns_max gpu:0&gt;gpu:1\">\n      <skipped "
                                "message=\"not measured (skipped: budget): 829 ns\"/>"));
    assert_non_null(strstr(buf, "<skipped message=\"not measured (skipped): temperature under load"));
    assert_non_null(strstr(buf, "name=\"card\">\n      <failure type=\"error\" message=\"the card did not "
                                "run\"/>"));
    assert_non_null(strstr(buf, "</testsuites>\n"));
    json_decref(nodes);
    json_decref(doc);
}

/* A warn check under each --junit-warn, and the measured times of a node
 * summary that has them. */
static void test_junit_warn(void **state)
{
    json_t *nodes =
        json_pack("[{s:s, s:s, s:i, s:f, s:[{s:s, s:s, s:s, s:s, s:s, s:f}]}]", "hostname", "n", "verdict",
                  "warn", "exit_code", 4, "elapsed_s", 12.5, "checks", "id", "stress", "subject", "gpu:3",
                  "verdict", "warn", "evidence", "measured", "text", "hot", "time_s", 2.25);
    static const struct {
        gq_junit_warn mode;
        const char *want, *suite;
    } c[] = {
        {GQ_JUNIT_WARN_SKIPPED, "<skipped type=\"warn\" message=\"warn: hot\"/>",
         "failures=\"0\" errors=\"0\" skipped=\"1\""},
        {GQ_JUNIT_WARN_FAILURE, "<failure type=\"warn\" message=\"warn: hot\"/>",
         "failures=\"1\" errors=\"0\" skipped=\"0\""},
        {GQ_JUNIT_WARN_PASSED, "time=\"2.250000\">\n      <system-out>warn: hot</system-out>",
         "failures=\"0\" errors=\"0\" skipped=\"0\""},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        FILE *f = open_out();
        gq_junit_cards(f, nodes, c[i].mode);
        fclose(f);
        assert_non_null(strstr(buf, c[i].want));
        assert_non_null(strstr(buf, c[i].suite));
        assert_non_null(strstr(buf, "<testsuites name=\"gpuqual\" tests=\"1\""));
        assert_non_null(strstr(buf, "time=\"12.500000\">\n  <testsuite "));
        assert_non_null(strstr(buf, "name=\"stress gpu:3\" time=\"2.250000\">"));
    }
    gq_junit_warn w = GQ_JUNIT_WARN_PASSED;
    assert_int_equal(gq_junit_warn_parse("failure", &w), 0);
    assert_int_equal(w, GQ_JUNIT_WARN_FAILURE);
    assert_int_equal(gq_junit_warn_parse("yellow", &w), -1);
    json_decref(nodes);
}

static void test_prom_cards(void **state)
{
    json_t *doc = card_doc(true, "fail", true);
    json_t *nodes = json_array();
    json_array_append_new(nodes, gq_card_node_summary(doc));
    FILE *f = open_out();
    gq_prom_cards(f, nodes);
    fclose(f);
    assert_non_null(strstr(buf, "# HELP gpuqual_card_verdict "));
    assert_non_null(strstr(buf, "# TYPE gpuqual_card_verdict gauge\n"));
    assert_non_null(strstr(buf, "gpuqual_card_verdict{Hostname=\"node<7>\",verdict=\"pass\"} 0\n"));
    assert_non_null(strstr(buf, "gpuqual_card_verdict{Hostname=\"node<7>\",verdict=\"fail\"} 1\n"));
    assert_non_null(strstr(buf, "gpuqual_card_verdict{Hostname=\"node<7>\",verdict=\"incomplete\"} 0\n"));
    assert_non_null(strstr(buf, "gpuqual_card_exit_code{Hostname=\"node<7>\"} 1\n"));
    assert_non_null(
        strstr(buf, "gpuqual_card_check_verdict{Hostname=\"node<7>\",check=\"h2d_gbps_min\",subject=\"gpu:"
                    "0\",evidence=\"measured\",verdict=\"fail\"} 1\n"));
    /* GB/s in bytes per second, ns in seconds; a null figure is left out */
    assert_non_null(strstr(buf,
                           "gpuqual_card_check_bytes_per_second{Hostname=\"node<7>\",check=\"h2d_gbps_min\","
                           "subject=\"gpu:0\",evidence=\"measured\"} 4.15e+10\n"));
    assert_non_null(strstr(buf,
                           "gpuqual_card_check_seconds{Hostname=\"node<7>\",check=\"p2p_latency_ns_max\","
                           "subject=\"gpu:0>gpu:1\",evidence=\"skipped\"} 8.29e-07\n"));
    assert_null(strstr(buf, "gpuqual_card_check_celsius"));
    json_decref(nodes);
    json_decref(doc);
}

/* Every unit a card check may carry goes to its base-unit family, scaled:
 * GB/s in bytes per second, ns/us/s in seconds, °C and C in celsius, W in
 * watts, MHz in hertz, % and ratio as a ratio; a unit without a family is
 * left out. */
static void test_prom_units(void **state)
{
    (void)state;
    static const struct {
        const char *unit;
        double figure;
        const char *family, *value;
    } u[] = {
        {"GB/s", 41.5, "bytes_per_second", "4.15e+10"},
        {"ns", 829, "seconds", "8.29e-07"},
        {"us", 3, "seconds", "3e-06"},
        {"s", 2.5, "seconds", "2.5"},
        {"°C", 71, "celsius", "71"},
        {"C", 72, "celsius", "72"},
        {"W", 300, "watts", "300"},
        {"MHz", 1500, "hertz", "1500000000"},
        {"%", 50, "ratio", "0.5"},
        {"ratio", 0.9, "ratio", "0.9"},
        {"furlongs", 7, NULL, NULL},
    };
    const size_t n = sizeof u / sizeof u[0];
    json_t *checks = json_array();
    for (size_t i = 0; i < n; i++) {
        char id[16];
        snprintf(id, sizeof id, "c%zu", i);
        json_array_append_new(checks, json_pack("{s:s, s:s, s:s, s:s, s:f, s:s}", "id", id, "subject",
                                                "gpu:0", "evidence", "measured", "verdict", "pass", "figure",
                                                u[i].figure, "unit", u[i].unit));
    }
    json_t *nodes = json_pack("[{s:s, s:s, s:i, s:o}]", "hostname", "n", "verdict", "pass", "exit_code", 0,
                              "checks", checks);
    assert_non_null(nodes);
    FILE *f = open_out();
    gq_prom_cards(f, nodes);
    fclose(f);
    for (size_t i = 0; i < n; i++) {
        char line[256];
        snprintf(line, sizeof line,
                 "{Hostname=\"n\",check=\"c%zu\",subject=\"gpu:0\",evidence=\"measured\"} ", i);
        const char *at = strstr(buf, line);
        if (!u[i].family) {
            assert_null(at);
            continue;
        }
        snprintf(line, sizeof line,
                 "gpuqual_card_check_%s{Hostname=\"n\",check=\"c%zu\",subject=\"gpu:0\",evidence="
                 "\"measured\"} %s\n",
                 u[i].family, i, u[i].value);
        if (!strstr(buf, line))
            fail_msg("unit %s: no line '%s' in\n%s", u[i].unit, line, buf);
    }
    /* one HELP/TYPE header per family, however many checks fall in it */
    static const char *const fams[] = {"bytes_per_second", "seconds", "celsius", "watts", "hertz", "ratio"};
    for (size_t k = 0; k < sizeof fams / sizeof fams[0]; k++) {
        char type[96];
        snprintf(type, sizeof type, "# TYPE gpuqual_card_check_%s gauge\n", fams[k]);
        int n = 0;
        for (const char *p = strstr(buf, type); p; p = strstr(p + 1, type))
            n++;
        if (n != 1)
            fail_msg("%d '# TYPE gpuqual_card_check_%s' lines, want 1", n, fams[k]);
    }
    json_decref(nodes);
}

static void test_prom_stress(void **state)
{
    gq_stress_summary *s = calloc(1, sizeof *s);
    gq_topo *t = calloc(1, sizeof *t);
    assert_non_null(s);
    assert_non_null(t);
    gq_topo_init(t);
    t->ngpu = 1;
    snprintf(t->hostname, sizeof t->hostname, "n1");
    snprintf(t->gpu[0].uuid, sizeof t->gpu[0].uuid, "GPU-aa");
    t->gpu[0].index = 3;
    s->ngpu = 1;
    s->gpu[0].gpu = 3;
    s->gpu[0].temp_avg_c = 61.5;
    s->gpu[0].sm_clock_avg_mhz = 1450;
    s->gpu[0].power_capped_pct = 25;
    s->gpu[0].tflops_avg = 600;
    s->gpu[0].faulty = 12;
    s->gpu[0].gemms = 400;
    s->gpu[0].ecc_corrected = -1; /* could not be read */
    s->gpu[0].ecc_uncorrected = 2;
    s->gpu[0].pcie_replay = 0;
    s->gpu[0].verdict = GQ_STRESS_FAIL;
    s->verdict = GQ_STRESS_FAIL;
    FILE *f = open_out();
    gq_prom_stress(f, s, t);
    fclose(f);
    assert_non_null(strstr(buf, "gpuqual_stress_verdict{Hostname=\"n1\",verdict=\"fail\"} 1\n"));
    assert_non_null(strstr(
        buf, "gpuqual_stress_gpu_verdict{gpu=\"3\",UUID=\"GPU-aa\",Hostname=\"n1\",verdict=\"pass\"} 0\n"));
    assert_non_null(strstr(
        buf, "gpuqual_stress_temperature_avg_celsius{gpu=\"3\",UUID=\"GPU-aa\",Hostname=\"n1\"} 61.5\n"));
    assert_non_null(strstr(
        buf, "gpuqual_stress_sm_clock_avg_hertz{gpu=\"3\",UUID=\"GPU-aa\",Hostname=\"n1\"} 1450000000\n"));
    assert_non_null(
        strstr(buf, "gpuqual_stress_power_capped_ratio{gpu=\"3\",UUID=\"GPU-aa\",Hostname=\"n1\"} 0.25\n"));
    assert_non_null(strstr(
        buf, "gpuqual_stress_gemm_flops_per_second{gpu=\"3\",UUID=\"GPU-aa\",Hostname=\"n1\"} 6e+14\n"));
    assert_non_null(strstr(buf, "# TYPE gpuqual_stress_faulty_elements_total counter\n"));
    assert_non_null(
        strstr(buf, "gpuqual_stress_faulty_elements_total{gpu=\"3\",UUID=\"GPU-aa\",Hostname=\"n1\"} 12\n"));
    assert_non_null(strstr(
        buf, "gpuqual_stress_ecc_uncorrected_errors_total{gpu=\"3\",UUID=\"GPU-aa\",Hostname=\"n1\"} 2\n"));
    assert_null(strstr(buf, "gpuqual_stress_ecc_corrected_errors_total{"));
    /* every counter ends in _total, every family has HELP and TYPE */
    for (const char *p = strstr(buf, " counter\n"); p; p = strstr(p + 1, " counter\n"))
        assert_memory_equal(p - 6, "_total", 6);
    int help = 0, type = 0;
    for (const char *p = buf; (p = strstr(p, "# HELP ")); p++)
        help++;
    for (const char *p = buf; (p = strstr(p, "# TYPE ")); p++)
        type++;
    assert_int_equal(help, type);
    assert_true(help >= 15);
    free(s);
    free(t);
}

static void test_prom_header(void **state)
{
    FILE *f = open_out();
    gq_prom_header(f, "run", "h\"1", "sim:h200x2", 1764470000.5);
    fclose(f);
    assert_non_null(strstr(buf, "gpuqual_info{version=\""));
    assert_non_null(strstr(buf, "command=\"run\",Hostname=\"h\\\"1\",source=\"sim:h200x2\"} 1\n"));
    assert_non_null(strstr(buf, "# TYPE gpuqual_last_run_timestamp_seconds gauge\n"));
    assert_non_null(
        strstr(buf, "gpuqual_last_run_timestamp_seconds{command=\"run\",Hostname=\"h\\\"1\"} 1764470000\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_evidence), cmocka_unit_test(test_junit),
        cmocka_unit_test(test_junit_warn),       cmocka_unit_test(test_prom_cards),
        cmocka_unit_test(test_prom_stress),      cmocka_unit_test(test_prom_units),
        cmocka_unit_test(test_prom_header),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(buf);
    return rc;
}
