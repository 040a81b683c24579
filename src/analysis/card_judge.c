/* Judging the card: the checks on its facts (doc/card_facts_json.c decodes them,
 * analysis/expect.c judges them), the card's verdict, and the card's table,
 * one function per row (the row's evidence, result and verdict), each followed
 * by the function that writes that row's findings in plain sentences.
 * gq_card_judge calls them in the card's order. Pure: reads the composed or
 * saved card's sections, the stress section and the document's bottlenecks
 * as typed views (gq_card_views, decoded by doc/card_facts_json.c and
 * doc/card_views_json.c); never measures. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/card.h"
#include "analysis/card_judge_internal.h"
#include "analysis/domains.h"
#include "core/units.h"

int gq_card_judge(const gq_card_views *views, const gq_card_facts *f, const gq_expect *ex, gq_card *out,
                  gq_err *err)
{
    gq_card_init(out);
    int rc = gq_expect_judge(ex, f, &out->checks, err);
    if (rc)
        return rc;
    memcpy(out->step_ev, f->step_ev, sizeof out->step_ev);
    memcpy(out->step_why, f->step_why, sizeof out->step_why);
    out->level = views->have_level ? views->level : GQ_LEVEL_STANDARD; /* schema 1: today's standard card */
    out->complete = views->complete;
    out->allow_busy = views->allow_busy;
    for (int g = 0; g < GQ_MAX_GPUS; g++)
        if ((out->busy_records[g] = f->busy_records[g])) {
            out->nbusy++;
            snprintf(out->busy_what[g], sizeof out->busy_what[g], "%s", f->busy_what[g]);
        }
    if ((out->have_expect = ex && ex->nmodels)) {
        snprintf(out->expect_file, sizeof out->expect_file, "%s",
                 ex->path[0]          ? ex->path
                 : ex->noverrides > 0 ? "--set"
                                      : "(inline)");
        snprintf(out->expect_description, sizeof out->expect_description, "%s", ex->description);
    }
    if (ex) {
        out->noverrides = ex->noverrides < GQ_EXPECT_MAX_OVERRIDES ? ex->noverrides : GQ_EXPECT_MAX_OVERRIDES;
        memcpy(out->overrides, ex->overrides, sizeof out->overrides[0] * (size_t)out->noverrides);
    }
    const gq_checklist *cl = &out->checks;
    gq_verdict overall = gq_card_summarize(out);

    /* ---- rows: seed 001 §9 ---- */
    const gq_card_domains_view *dm = &views->domains;
    const gq_card_matrix_view *m0 = &views->matrix;
    card_doms d;
    gq_judge_doms_of(dm, &d);
    p2p_ranges pr;
    gq_judge_p2p_ranges_of(m0, &d, &pr);
    gq_judge_row_identity(out, cl, &views->identity);
    staged_pair sp;
    gq_judge_staged_pairs_of(&views->driver_staged, m0, &sp);
    gq_judge_row_pairwise(out, cl, m0, dm, d.ndom, &pr, &sp);
    gq_judge_row_concurrent(out, cl, &views->pairs, dm, d.ndom);
    gq_judge_row_host(out, cl, &views->host, &views->bottlenecks, f);
    gq_judge_row_sweeps(out, cl, &views->sweeps);
    gq_judge_row_latency(out, cl, &views->latency);
    gq_judge_row_health(out, cl, &views->stress);
    gq_judge_row_placement(out, cl, &views->placement);
    /* the rows of the steps with a section of their own, in their lines' order (card_steps.h) */
#define SECTION_ROW_(ID, NAME, TYPE, FIELD) gq_judge_row_##NAME(out, cl, &views->sec.FIELD);
    GQ_CARD_SECTIONS(SECTION_ROW_)
#undef SECTION_ROW_
    gq_judge_row_integrity(out, cl, f);
    gq_judge_row_application(out);
    gq_card_rest_rows(out);

    /* ---- findings in plain sentences ---- */
    gq_judge_find_busy(out);
    gq_judge_find_verdicts(out, cl, overall);
    gq_judge_find_pairwise(out, m0, dm, d.ndom, &pr);
    if (sp.n) {
        char s1[64], s2[64];
        gq_judge_finding(
            out,
            "Host-staged pairs (no P2P): gpuqual's pipelined staging moves %s GB/s one pair at a time, the "
            "driver's own staged copy %s GB/s on the same %d pair%s (GPU %d → %d: %.1f against %.1f GB/s). "
            "A serving stack that copies between these GPUs with cudaMemcpy or cudaMemcpyPeer gets the "
            "driver's figure; one that stages through pinned host memory in chunks of its own, pipelined "
            "(as NCCL's shared-memory transport does without P2P), can approach the pipelined one.",
            gq_judge_range(sp.plo, sp.phi, s1, sizeof s1), gq_judge_range(sp.dlo, sp.dhi, s2, sizeof s2),
            sp.n, sp.n == 1 ? "" : "s", sp.a, sp.b, sp.worst_d, sp.worst_p);
    }
    gq_judge_find_set_aside(out, dm);
    gq_judge_find_concurrent(out, &views->pairs);
    /* Shared budgets are stated from the contention step's copies only (other
     * steps' groups, such as the placement's, are not a survey of the paths). */
    if (f->step_ev[GQ_CS_CONTENTION] == GQ_EV_MEASURED)
        gq_judge_find_bottlenecks(out, &views->bottlenecks);
    gq_judge_find_host(out, &views->host);
    gq_judge_find_placement(out, &views->placement, &views->bottlenecks, f);
    gq_judge_find_sweeps(out, &views->sweeps);
    gq_judge_find_health(out, &views->stress);
    gq_judge_find_identity(out, &views->identity);
    if (out->oom)
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory writing the card's findings");
    return rc;
}
