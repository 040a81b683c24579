/* The facts the card's checks judge (gq_card_facts, analysis/expect.h) that
 * the records give: the integrity counts (impossible, overlap-invalid,
 * failed verification, errors) with an example of each, and the GPUs other
 * work kept busy. Pure: never measures. The facts the card's sections give
 * are decoded from them by doc/card_facts_json.c. */
#include <stdio.h>
#include <string.h>

#include "analysis/card.h"

static void example(char *dst, size_t n, const gq_record *r)
{
    if (dst[0])
        return;
    char a[24], b[24];
    snprintf(dst, n, "%s %s→%s: %s", r->test, gq_endpoint_str(r->src, a, sizeof a),
             gq_endpoint_str(r->dst, b, sizeof b), r->error[0] ? r->error : "no detail");
}

/* A contaminated record's summary ("KIND gpu G[ pid P][ NAME]: DETAIL"
 * joined by "; ", core/record.h): count it for every GPU it names, and keep
 * the first detail seen per GPU (a process's over a load reading). */
static void busy_of(gq_card_facts *f, const gq_record *r)
{
    bool seen[GQ_MAX_GPUS] = {false};
    const char *p = r->contaminated;
    while (p && *p) {
        char kind[16];
        int g = -1;
        if (sscanf(p, "%15s gpu %d", kind, &g) == 2 && g >= 0 && g < GQ_MAX_GPUS) {
            const char *colon = strstr(p, ": "), *end = strstr(p, "; ");
            if (!end)
                end = p + strlen(p);
            bool proc = !strcmp(kind, "process");
            if (!seen[g])
                f->busy_records[g]++;
            seen[g] = true;
            if (colon && colon < end &&
                (!f->busy_what[g][0] || (proc && !strstr(f->busy_what[g], "process"))))
                snprintf(f->busy_what[g], sizeof f->busy_what[g], "%.*s", (int)(end - colon - 2), colon + 2);
        }
        p = strstr(p, "; ");
        if (p)
            p += 2;
    }
}

void gq_card_facts_records(const gq_recordset *rs, gq_card_facts *f)
{
    if (!rs)
        return;
    for (int k = 0; k < rs->n; k++) {
        const gq_record *r = &rs->v[k];
        f->n_records++;
        if (r->flags & GQ_FLAG_IMPOSSIBLE) {
            f->n_impossible++;
            example(f->impossible_example, sizeof f->impossible_example, r);
        }
        if (r->flags & GQ_FLAG_VERIFY_FAILED) {
            f->n_verify_failed++;
            example(f->verify_example, sizeof f->verify_example, r);
        }
        if (r->flags & GQ_FLAG_ERROR) {
            f->n_errors++;
            example(f->error_example, sizeof f->error_example, r);
        }
        if (r->flags & GQ_FLAG_CONTAMINATED) {
            f->n_contaminated++;
            busy_of(f, r);
        }
        if (r->aggregate && (r->flags & GQ_FLAG_OVERLAP)) {
            f->n_overlap_invalid++;
            example(f->overlap_example, sizeof f->overlap_example, r);
        }
    }
}
