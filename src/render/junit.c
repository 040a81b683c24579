/* JUnit XML of cards (junit.h). */
#include "render/junit.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/status.h"

/* s, or def where the summary has none. */
static const char * or (const char *s, const char *def)
{
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

static bool not_measured(const gq_card_node_check *c)
{
    return strcmp(or (c->evidence, "unknown"), "measured") || !strcmp(or (c->verdict, "skip"), "skip");
}

static bool is_warn(const gq_card_node_check *c)
{
    return !strcmp(or (c->verdict, "skip"), "warn");
}

/* What the testcase of check c is: 's'kipped, 'f'ailure or 'p'assed. */
static char outcome(const gq_card_node_check *c, gq_junit_warn warn)
{
    if (not_measured(c))
        return 's';
    if (!strcmp(or (c->verdict, "skip"), "fail"))
        return 'f';
    if (is_warn(c))
        return warn == GQ_JUNIT_WARN_FAILURE ? 'f' : warn == GQ_JUNIT_WARN_SKIPPED ? 's' : 'p';
    return 'p';
}

/* time="..." from a number of seconds; nothing when there is none (NAN). */
static void time_attr(FILE *f, double v)
{
    if (v >= 0)
        fprintf(f, " time=\"%.6f\"", v);
}

/* Why a check was not measured: its evidence and reason, and its text. */
static void skip_reason(FILE *f, const gq_card_node_check *c)
{
    fputs("not measured (", f);
    xml(f, or (c->evidence, "unknown"));
    if (c->reason) {
        fputs(": ", f);
        xml(f, c->reason);
    }
    fputs(")", f);
    const char *text = or (c->text, "");
    if (*text) {
        fputs(": ", f);
        xml(f, text);
    }
}

static void testcase(FILE *f, const gq_card_node *node, const gq_card_node_check *c, gq_junit_warn warn)
{
    const char *verdict = or (c->verdict, "skip");
    const char *subject = or (c->subject, "");
    fputs("    <testcase classname=\"gpuqual.card.", f);
    xml(f, or (node->hostname, "node"));
    fputs("\" name=\"", f);
    xml(f, or (c->id, "check"));
    if (*subject) {
        fputc(' ', f);
        xml(f, subject);
    }
    fputc('"', f);
    time_attr(f, c->time_s);
    fputs(">\n", f);
    char o = outcome(c, warn);
    if (o == 's' && not_measured(c)) {
        fputs("      <skipped message=\"", f);
        skip_reason(f, c);
        fputs("\"/>\n", f);
    } else if (o == 's') { /* a warn shown as skipped */
        fputs("      <skipped type=\"warn\" message=\"warn: ", f);
        xml(f, or (c->text, "warning"));
        fputs("\"/>\n", f);
    } else if (o == 'f') {
        fprintf(f, "      <failure type=\"%s\" message=\"", is_warn(c) ? "warn" : "fail");
        if (is_warn(c))
            fputs("warn: ", f);
        xml(f, or (c->text, "failed"));
        fputs("\"/>\n", f);
    }
    if (* or (c->text, "")) {
        fputs("      <system-out>", f);
        xml(f, verdict);
        fputs(": ", f);
        xml(f, c->text);
        fputs("</system-out>\n", f);
    }
    fputs("    </testcase>\n", f);
}

/* A node whose card did not run: one failed testcase saying why. */
static void node_error(FILE *f, const gq_card_node *node)
{
    fputs("    <testcase classname=\"gpuqual.card.", f);
    xml(f, or (node->hostname, "node"));
    fputs("\" name=\"card\">\n      <failure type=\"error\" message=\"", f);
    xml(f, node->error);
    fputs("\"/>\n    </testcase>\n", f);
}

static void testsuite(FILE *f, const gq_card_node *node, gq_junit_warn warn)
{
    bool err = node->error != NULL;
    int nt = err, nf = err, ns = 0;
    for (int k = 0; k < node->nchecks; k++) {
        nt++;
        char o = outcome(&node->checks[k], warn);
        ns += o == 's';
        nf += o == 'f';
    }
    fputs("  <testsuite name=\"gpuqual card ", f);
    xml(f, or (node->hostname, "node"));
    if (node->has_rank)
        fprintf(f, " rank %d", (int)node->rank);
    fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\"", nt, nf, ns);
    time_attr(f, node->elapsed_s);
    fputs(">\n", f);
    fputs("    <properties>\n      <property name=\"verdict\" value=\"", f);
    xml(f, or (node->verdict, "incomplete"));
    fprintf(f, "\"/>\n      <property name=\"exit_code\" value=\"%d\"/>\n    </properties>\n",
            (int)node->exit_code);
    if (err)
        node_error(f, node);
    for (int k = 0; k < node->nchecks; k++)
        testcase(f, node, &node->checks[k], warn);
    fputs("  </testsuite>\n", f);
}

void gq_junit_nodes(FILE *f, const gq_card_nodes *nodes, gq_junit_warn warn)
{
    int tests = 0, failures = 0;
    for (int i = 0; i < nodes->n; i++) {
        const gq_card_node *node = &nodes->node[i];
        bool err = node->error != NULL;
        tests += err + node->nchecks;
        failures += err;
        for (int k = 0; k < node->nchecks; k++)
            failures += outcome(&node->checks[k], warn) == 'f';
    }
    /* <testsuites> has no skipped attribute in the Ant/Jenkins schema (junit-10.xsd). */
    double total = 0;
    bool timed = nodes->n > 0;
    for (int i = 0; i < nodes->n; i++) {
        double e = nodes->node[i].elapsed_s;
        timed = timed && !isnan(e);
        total += isnan(e) ? 0 : e;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"gpuqual\" tests=\"%d\" failures=\"%d\" errors=\"0\"", tests, failures);
    if (timed)
        fprintf(f, " time=\"%.6f\"", total);
    fputs(">\n", f);
    for (int i = 0; i < nodes->n; i++)
        testsuite(f, &nodes->node[i], warn);
    fputs("</testsuites>\n", f);
}

void gq_junit_cards(FILE *f, const json_t *nodes, gq_junit_warn warn)
{
    gq_card_nodes l;
    gq_card_nodes_init(&l);
    if (gq_card_nodes_from_json(nodes, &l) == GQ_OK)
        gq_junit_nodes(f, &l, warn);
    gq_card_nodes_free(&l);
}
