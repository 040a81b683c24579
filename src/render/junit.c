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

static bool check_skipped(const json_t *c)
{
    return strcmp(jstr(c, "evidence", "unknown"), "measured") || !strcmp(jstr(c, "verdict", "skip"), "skip");
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

static void testcase(FILE *f, const json_t *node, const json_t *c)
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
    fputs("\" time=\"0\">\n", f);
    if (check_skipped(c)) {
        fputs("      <skipped message=\"", f);
        skip_reason(f, c);
        fputs("\"/>\n", f);
    } else if (!strcmp(verdict, "fail")) {
        fputs("      <failure type=\"fail\" message=\"", f);
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
    fputs("\" name=\"card\" time=\"0\">\n      <failure type=\"error\" message=\"", f);
    xml(f, jstr(node, "error", "the card did not run"));
    fputs("\"/>\n    </testcase>\n", f);
}

void gq_junit_cards(FILE *f, const json_t *nodes)
{
    int tests = 0, failures = 0, skipped = 0;
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
        if (check_skipped(c))
            skipped++;
        else if (!strcmp(jstr(c, "verdict", "skip"), "fail"))
            failures++;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"gpuqual\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\">\n",
            tests, failures, skipped);
    json_array_foreach(nodes, i, node)
    {
        bool err = json_is_string(json_object_get(node, "error"));
        int nt = err, nf = err, ns = 0;
        json_array_foreach(json_object_get(node, "checks"), k, c)
        {
            nt++;
            if (check_skipped(c))
                ns++;
            else if (!strcmp(jstr(c, "verdict", "skip"), "fail"))
                nf++;
        }
        fputs("  <testsuite name=\"gpuqual card ", f);
        xml(f, jstr(node, "hostname", "node"));
        if (json_is_integer(json_object_get(node, "rank")))
            fprintf(f, " rank %d", (int)json_integer_value(json_object_get(node, "rank")));
        fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\">\n", nt, nf, ns);
        fputs("    <properties>\n      <property name=\"verdict\" value=\"", f);
        xml(f, jstr(node, "verdict", "incomplete"));
        fprintf(f, "\"/>\n      <property name=\"exit_code\" value=\"%d\"/>\n    </properties>\n",
                (int)json_integer_value(json_object_get(node, "exit_code")));
        if (err)
            node_error(f, node);
        json_array_foreach(json_object_get(node, "checks"), k, c) testcase(f, node, c);
        fputs("  </testsuite>\n", f);
    }
    fputs("</testsuites>\n", f);
}
