/* JUnit XML of cards (junit.h). */
#include "render/junit.h"

#include <stdbool.h>
#include <string.h>

static const char *jstr(const json_t *o, const char *key, const char *def)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : def;
}

/* XML attribute or text content, escaped. */
static void xml(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        case '\n': fputs("&#10;", f); break;
        default:
            if (*p < 0x20 && *p != '\t')
                fputc(' ', f); /* not allowed in XML 1.0 */
            else
                fputc(*p, f);
        }
    }
}

int gq_junit_warn_parse(const char *s, gq_junit_warn *out)
{
    static const char *names[] = {"skipped", "failure", "passed"};
    for (int i = 0; s && i < 3; i++)
        if (!strcmp(s, names[i])) {
            *out = (gq_junit_warn)i;
            return 0;
        }
    return -1;
}

static bool not_measured(const json_t *c)
{
    return strcmp(jstr(c, "evidence", "unknown"), "measured") || !strcmp(jstr(c, "verdict", "skip"), "skip");
}

static bool is_warn(const json_t *c)
{
    return !strcmp(jstr(c, "verdict", "skip"), "warn");
}

/* What the testcase of check c is: 's'kipped, 'f'ailure or 'p'assed. */
static char outcome(const json_t *c, gq_junit_warn warn)
{
    if (not_measured(c))
        return 's';
    if (!strcmp(jstr(c, "verdict", "skip"), "fail"))
        return 'f';
    if (is_warn(c))
        return warn == GQ_JUNIT_WARN_FAILURE ? 'f' : warn == GQ_JUNIT_WARN_SKIPPED ? 's' : 'p';
    return 'p';
}

/* time="..." from a number of seconds; nothing when there is none. */
static void time_attr(FILE *f, const json_t *v)
{
    if (json_is_number(v) && json_number_value(v) >= 0)
        fprintf(f, " time=\"%.6f\"", json_number_value(v));
}

/* Why a check was not measured: its evidence and reason, and its text. */
static void skip_reason(FILE *f, const json_t *c)
{
    const char *reason = jstr(c, "evidence_reason", NULL);
    fputs("not measured (", f);
    xml(f, jstr(c, "evidence", "unknown"));
    if (reason) {
        fputs(": ", f);
        xml(f, reason);
    }
    fputs(")", f);
    const char *text = jstr(c, "text", "");
    if (*text) {
        fputs(": ", f);
        xml(f, text);
    }
}

static void testcase(FILE *f, const json_t *node, const json_t *c, gq_junit_warn warn)
{
    const char *verdict = jstr(c, "verdict", "skip");
    const char *subject = jstr(c, "subject", "");
    fputs("    <testcase classname=\"gpuqual.card.", f);
    xml(f, jstr(node, "hostname", "node"));
    fputs("\" name=\"", f);
    xml(f, jstr(c, "id", "check"));
    if (*subject) {
        fputc(' ', f);
        xml(f, subject);
    }
    fputc('"', f);
    time_attr(f, json_object_get(c, "time_s"));
    fputs(">\n", f);
    char o = outcome(c, warn);
    if (o == 's' && not_measured(c)) {
        fputs("      <skipped message=\"", f);
        skip_reason(f, c);
        fputs("\"/>\n", f);
    } else if (o == 's') { /* a warn shown as skipped */
        fputs("      <skipped type=\"warn\" message=\"warn: ", f);
        xml(f, jstr(c, "text", "warning"));
        fputs("\"/>\n", f);
    } else if (o == 'f') {
        fprintf(f, "      <failure type=\"%s\" message=\"", is_warn(c) ? "warn" : "fail");
        if (is_warn(c))
            fputs("warn: ", f);
        xml(f, jstr(c, "text", "failed"));
        fputs("\"/>\n", f);
    }
    if (*jstr(c, "text", "")) {
        fputs("      <system-out>", f);
        xml(f, verdict);
        fputs(": ", f);
        xml(f, jstr(c, "text", ""));
        fputs("</system-out>\n", f);
    }
    fputs("    </testcase>\n", f);
}

/* A node whose card did not run: one failed testcase saying why. */
static void node_error(FILE *f, const json_t *node)
{
    fputs("    <testcase classname=\"gpuqual.card.", f);
    xml(f, jstr(node, "hostname", "node"));
    fputs("\" name=\"card\">\n      <failure type=\"error\" message=\"", f);
    xml(f, jstr(node, "error", "the card did not run"));
    fputs("\"/>\n    </testcase>\n", f);
}

void gq_junit_cards(FILE *f, const json_t *nodes, gq_junit_warn warn)
{
    int tests = 0, failures = 0;
    size_t i, k;
    json_t *node, *c;
    json_array_foreach(nodes, i, node)
    {
        bool err = json_is_string(json_object_get(node, "error"));
        tests += err;
        failures += err;
    }
    json_array_foreach(nodes, i, node) json_array_foreach(json_object_get(node, "checks"), k, c)
    {
        tests++;
        failures += outcome(c, warn) == 'f';
    }
    /* <testsuites> has no skipped attribute in the Ant/Jenkins schema (junit-10.xsd). */
    double total = 0;
    bool timed = json_array_size(nodes) > 0;
    json_array_foreach(nodes, i, node)
    {
        json_t *e = json_object_get(node, "elapsed_s");
        timed = timed && json_is_number(e);
        total += json_number_value(e);
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"gpuqual\" tests=\"%d\" failures=\"%d\" errors=\"0\"", tests, failures);
    if (timed)
        fprintf(f, " time=\"%.6f\"", total);
    fputs(">\n", f);
    json_array_foreach(nodes, i, node)
    {
        bool err = json_is_string(json_object_get(node, "error"));
        int nt = err, nf = err, ns = 0;
        json_array_foreach(json_object_get(node, "checks"), k, c)
        {
            nt++;
            char o = outcome(c, warn);
            ns += o == 's';
            nf += o == 'f';
        }
        fputs("  <testsuite name=\"gpuqual card ", f);
        xml(f, jstr(node, "hostname", "node"));
        if (json_is_integer(json_object_get(node, "rank")))
            fprintf(f, " rank %d", (int)json_integer_value(json_object_get(node, "rank")));
        fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\"", nt, nf, ns);
        time_attr(f, json_object_get(node, "elapsed_s"));
        fputs(">\n", f);
        fputs("    <properties>\n      <property name=\"verdict\" value=\"", f);
        xml(f, jstr(node, "verdict", "incomplete"));
        fprintf(f, "\"/>\n      <property name=\"exit_code\" value=\"%d\"/>\n    </properties>\n",
                (int)json_integer_value(json_object_get(node, "exit_code")));
        if (err)
            node_error(f, node);
        json_array_foreach(json_object_get(node, "checks"), k, c) testcase(f, node, c, warn);
        fputs("  </testsuite>\n", f);
    }
    fputs("</testsuites>\n", f);
}
