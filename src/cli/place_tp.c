/* place --tp N: the table and the document section (cli/place_tp.h). */
#include "cli/place_tp.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/progress.h"
#include "exec/tp_place.h"

static void print_tp(FILE *f, const gq_tp_result *r, const char *machine, uint64_t bytes)
{
    const gq_tp_state *s = &r->st;
    char g[160];
    fprintf(f, "place --tp %d on %s: all-reduce of %llu B, bus bandwidth (busbw, GB/s) per nccl-tests\n",
            s->tp, machine, (unsigned long long)bytes);
    fprintf(f, "candidates: %d groups measured alone (budget %d): %s\n\n", r->measured, s->budget,
            s->ncand > s->n / s->tp && s->cand[s->n / s->tp].origin == GQ_TP_ALL
                ? "the naive contiguous groups and every group of this size"
                : "the naive contiguous groups, the partition by pairwise copy, the domains (NVLink, PCIe "
                  "parent), then swaps of one GPU between groups");
    fprintf(f, "  %-16s %-14s %10s %12s\n", "group", "from", "busbw", "copy (min)");
    for (int k = 0; k < s->ncand; k++) {
        const gq_tp_cand *c = &s->cand[k];
        if (c->busbw == -3)
            continue;
        gq_tp_set_str(c->set, g, sizeof g);
        char b[32], cp[32];
        snprintf(b, sizeof b, c->busbw >= 0 ? "%.2f" : "invalid", c->busbw);
        snprintf(cp, sizeof cp, c->copy >= 0 ? "%.2f" : "-", c->copy);
        fprintf(f, "  %-16s %-14s %10s %12s\n", g, gq_tp_origin_name(c->origin), b, cp);
    }
    fprintf(f, "\n  %-12s %-40s %12s %12s\n", "", "groups", "alone (min)", "at once (min)");
    for (int w = 0; w < 2; w++) {
        const gq_tp_part *p = w ? &r->naive : &r->chosen;
        char line[256] = "";
        size_t l = 0;
        for (int i = 0; i < p->ngroups; i++) {
            gq_tp_set_str(s->cand[p->idx[i]].set, g, sizeof g);
            l += (size_t)snprintf(line + l, sizeof line - l, "%s{%s}", i ? " " : "", g);
            if (l >= sizeof line)
                break;
        }
        double once = w ? r->naive_min_once : r->chosen_min_once;
        char ob[32];
        snprintf(ob, sizeof ob, once >= 0 ? "%.2f" : "invalid", once);
        fprintf(f, "  %-12s %-40s %12.2f %12s\n", w ? "naive" : "chosen", line, p->min_busbw, ob);
    }
    if (r->chosen_min_once > 0 && r->naive_min_once > 0)
        fprintf(f,
                "\n  gain over the naive groups: %+.1f %% measured at once (%+.1f %% predicted from alone)\n",
                100 * (r->chosen_min_once / r->naive_min_once - 1),
                r->naive.min_busbw > 0 ? 100 * (r->chosen.min_busbw / r->naive.min_busbw - 1) : 0.0);
    if (r->kept_naive) {
        char line[256] = "";
        size_t l = 0;
        for (int i = 0; i < r->tried.ngroups && l < sizeof line; i++) {
            gq_tp_set_str(s->cand[r->tried.idx[i]].set, g, sizeof g);
            l += (size_t)snprintf(line + l, sizeof line - l, "%s{%s}", i ? " " : "", g);
        }
        fprintf(
            f,
            "\n  kept the naive groups: the best alone, %s,\n"
            "  led by %+.1f %% (slowest group %.2f GB/s) but measured %.2f GB/s with all groups at once:\n"
            "  they share budgets (a switch uplink, host memory) that each group alone had to itself\n",
            line, r->naive.min_busbw > 0 ? 100 * (r->tried.min_busbw / r->naive.min_busbw - 1) : 0.0,
            r->tried.min_busbw, r->tried_min_once);
    }
    int bb = gq_tp_best_by_busbw(s), bc = gq_tp_best_by_copy(s);
    if (bb >= 0 && bc >= 0 && bc != bb && s->cand[bc].busbw < 0) {
        /* the copies' best group has no all-reduce figure to compare */
        char gb[160];
        gq_tp_set_str(s->cand[bb].set, gb, sizeof gb);
        gq_tp_set_str(s->cand[bc].set, g, sizeof g);
        fprintf(f, "\n  best group by all-reduce: {%s} (%.2f GB/s)\n", gb, s->cand[bb].busbw);
        fprintf(f, "  best group by pairwise copy: {%s} (copies %.2f GB/s)\n", g, s->cand[bc].copy);
        fprintf(f, "  its all-reduce %s\n",
                s->cand[bc].busbw == -3   ? "was not measured: over the budget of groups measured alone"
                : s->cand[bc].busbw == -2 ? "was invalid"
                                          : "was not measured");
    } else if (bb >= 0 && bc >= 0 && s->cand[bc].busbw < 0.95 * s->cand[bb].busbw &&
               s->cand[bc].copy > 1.05 * s->cand[bb].copy) {
        char gb[160];
        gq_tp_set_str(s->cand[bb].set, gb, sizeof gb);
        gq_tp_set_str(s->cand[bc].set, g, sizeof g);
        fprintf(f, "\n  best group by all-reduce: {%s} (%.2f GB/s)\n", gb, s->cand[bb].busbw);
        fprintf(f, "  best group by pairwise copy: {%s} (copies %.2f GB/s, all-reduce only %.2f)\n", g,
                s->cand[bc].copy, s->cand[bc].busbw);
        fprintf(
            f,
            "  why they differ: the ring runs all its flows at once, both ways round the group; the\n"
            "  pairwise copies ran one at a time, so a path they had to themselves is shared in the ring\n");
    } else if (bb >= 0) {
        gq_tp_set_str(s->cand[bb].set, g, sizeof g);
        fprintf(f, "\n  best group by all-reduce: {%s} (%.2f GB/s); pairwise copies rank the groups alike\n",
                g, s->cand[bb].busbw);
    }
}

static json_t *tp_json(const gq_tp_result *r)
{
    const gq_tp_state *s = &r->st;
    json_t *o = json_object(), *cands = json_array(), *parts = json_object();
    char g[160];
    for (int k = 0; k < s->ncand; k++) {
        const gq_tp_cand *c = &s->cand[k];
        if (c->busbw == -3)
            continue;
        gq_tp_set_str(c->set, g, sizeof g);
        json_array_append_new(cands,
                              json_pack("{s:s,s:s,s:o,s:o}", "group", g, "from", gq_tp_origin_name(c->origin),
                                        "busbw", c->busbw >= 0 ? json_real(c->busbw) : json_null(), "copy",
                                        c->copy >= 0 ? json_real(c->copy) : json_null()));
    }
    for (int w = 0; w < 2; w++) {
        const gq_tp_part *p = w ? &r->naive : &r->chosen;
        const double *once = w ? r->naive_once : r->chosen_once;
        json_t *gs = json_array();
        for (int i = 0; i < p->ngroups; i++) {
            gq_tp_set_str(s->cand[p->idx[i]].set, g, sizeof g);
            json_array_append_new(gs,
                                  json_pack("{s:s,s:f,s:o}", "group", g, "alone", s->cand[p->idx[i]].busbw,
                                            "at_once", once[i] >= 0 ? json_real(once[i]) : json_null()));
        }
        json_object_set_new(parts, w ? "naive" : "chosen", gs);
    }
    json_object_set_new(o, "tp", json_integer(s->tp));
    json_object_set_new(o, "kept_naive", json_boolean(r->kept_naive));
    json_object_set_new(o, "budget", json_integer(s->budget));
    json_object_set_new(o, "measured", json_integer(r->measured));
    json_object_set_new(o, "candidates", cands);
    json_object_set_new(o, "partitions", parts);
    json_object_set_new(o, "gain",
                        r->chosen_min_once > 0 && r->naive_min_once > 0
                            ? json_real(r->chosen_min_once / r->naive_min_once - 1)
                            : json_null());
    json_object_set_new(o, "predicted_gain",
                        r->naive.min_busbw > 0 ? json_real(r->chosen.min_busbw / r->naive.min_busbw - 1)
                                               : json_null());
    return o;
}

int gq_place_tp(gq_ctx *ctx, int tp, int budget, uint64_t bytes, gq_recordset *rs, json_t *sections)
{
    gq_tp_result *r = calloc(1, sizeof *r);
    if (!r)
        return gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    gq_harness_opts ho;
    gq_harness_opts_default(&ho);
    ho.rounds = ctx->c->rounds;
    gq_progress bar;
    int n = ctx->c->ngpus_sel;
    gq_progress_init(&bar, gq_progress_wanted(ctx->quiet, ctx->format),
                     (long)(n * (n - 1) + budget + 4) * ho.rounds);
    ho.progress = gq_progress_on_round;
    ho.progress_arg = &bar;
    gq_tp_opts o = {.tp = tp,
                    .budget = budget,
                    .bytes = bytes,
                    .rounds = ctx->c->rounds,
                    .warmup = 5,
                    .iters = 20,
                    .ho = &ho,
                    .progress = gq_progress_on_round,
                    .progress_arg = &bar};
    int rc = gq_tp_place(&ctx->be, ctx->topo, ctx->c->gpus_sel, n, &o, ctx->journal, rs, r, &ctx->err);
    gq_progress_clear(&bar);
    if (!rc) {
        json_object_set_new(sections, "tp", tp_json(r));
        if (strcmp(ctx->format, "json")) {
            char machine[96];
            snprintf(machine, sizeof machine, "%s%s", ctx->topo->source,
                     ctx->topo->simulated ? " (simulated)" : "");
            print_tp(stdout, r, machine, bytes);
        }
    }
    free(r);
    return rc;
}
