/* `gpuqual place`'s table (render/command_text.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/domains.h"
#include "core/units.h"
#include "render/command_text.h"

static const char *fig(double v, char *buf, size_t n)
{
    if (v >= 0 && isfinite(v))
        snprintf(buf, n, "%.1f", v);
    else
        snprintf(buf, n, "-");
    return buf;
}

static void print_pairs(FILE *f, const gq_place_map *map, const char *title)
{
    char a[16], b[16], c[16];
    fprintf(f, "%s\n  %-16s %-7s %9s %10s %9s\n", title, "prefill -> decode", "path", "alone", "predicted",
            "measured");
    for (int i = 0; i < map->npairs; i++) {
        const gq_place_pair *q = &map->pairs[i];
        char pd[32];
        snprintf(pd, sizeof pd, "%d -> %d", q->prefill, q->decode);
        fprintf(f, "  %-16s %-7s %9s %10s %9s\n", pd, q->path == GQ_PF_P2P ? "p2p" : "staged",
                fig(q->alone_gbps, a, sizeof a), fig(q->predicted_gbps, b, sizeof b),
                fig(q->measured_gbps, c, sizeof c));
    }
    fprintf(f, "  %-16s %-7s %9s %10s %9s", "all at once", "", "", fig(map->pairs_predicted, b, sizeof b),
            fig(map->pairs_measured, c, sizeof c));
    if (map->pairs_measured >= 0)
        fprintf(f, "  (overlap %.1f%%%s)", 100 * map->pairs_overlap,
                map->pairs_valid ? "" : ", INVALID: below 99%");
    fprintf(f, "\n");
}

static void print_workers(FILE *f, const gq_place_map *map, const char *title)
{
    char a[16], b[16], c[16], d[16];
    fprintf(f, "%s\n  %-5s %10s %10s %10s %10s\n", title, "GPU", "h2d pred", "h2d meas", "d2h pred",
            "d2h meas");
    for (int i = 0; i < map->nworkers; i++) {
        const gq_place_worker *w = &map->workers[i];
        fprintf(f, "  %-5d %10s %10s %10s %10s\n", w->gpu, fig(w->predicted_h2d, a, sizeof a),
                fig(w->measured_h2d, b, sizeof b), fig(w->predicted_d2h, c, sizeof c),
                fig(w->measured_d2h, d, sizeof d));
    }
    fprintf(f, "  %-5s %10s %10s %10s %10s\n", "all", fig(map->offload_predicted_h2d, a, sizeof a),
            fig(map->offload_measured_h2d, b, sizeof b), fig(map->offload_predicted_d2h, c, sizeof c),
            fig(map->offload_measured_d2h, d, sizeof d));
}

static void print_replicas(FILE *f, const gq_place_map *map, const char *title)
{
    char a[16], b[16], g[128];
    fprintf(f, "%s\n  %-8s %-24s %10s %10s\n", title, "replica", "GPUs", "h2d pred", "h2d meas");
    for (int r = 0; r < map->nreplicas; r++) {
        const gq_place_replica *rep = &map->replicas[r];
        gq_domains_set_str(rep->gpus, rep->ngpus, g, sizeof g);
        fprintf(f, "  %-8d %-24s %10s %10s\n", r, g, fig(rep->predicted_gbps, a, sizeof a),
                fig(rep->measured_gbps, b, sizeof b));
    }
}

static void print_gain(FILE *f, const char *what, double gain, double pred_c, double pred_n, bool verified)
{
    if (verified && gain > 0)
        fprintf(f, "%s gain over the naive mapping: %.2fx measured (%.2fx predicted)\n", what, gain,
                pred_n > 0 ? pred_c / pred_n : 0);
    else if (pred_n > 0)
        fprintf(f, "%s gain over the naive mapping: %.2fx predicted%s\n", what, pred_c / pred_n,
                verified ? " (the measured aggregates are not valid)" : " (not verified)");
}

void gq_render_place_text(FILE *f, const gq_place_model *m, const gq_place_result *res, const char *machine)
{
    const gq_place_map *c = &res->chosen, *n = &res->naive;
    char buf[256];
    fprintf(f, "placement on %s: ", machine);
    if (res->roles.prefill)
        fprintf(f, "%d prefill, %d decode; ", res->roles.prefill, res->roles.decode);
    if (res->roles.offload)
        fprintf(f, "%d offload workers; ", res->roles.offload);
    if (res->roles.replicas)
        fprintf(f, "%d replicas; ", res->roles.replicas);
    fprintf(f, "GB/s = 10^9 B/s\ndomains:");
    for (int d = 0; d < m->ndomains; d++)
        fprintf(f, " {%s}", gq_gpuset_str(m->domains[d], buf, sizeof buf));
    fprintf(f, "   (%d mappings compared%s)\n\n", res->candidates, res->exhaustive ? ", all of them" : "");
    if (res->roles.prefill) {
        print_pairs(f, c, "chosen pairs, all handing off at once:");
        print_pairs(f, n, "naive pairs (GPUs in index order):");
        print_gain(f, "pairs", res->gain_pairs, c->pairs_predicted, n->pairs_predicted, res->verified);
        fprintf(f, "why:\n");
        for (int i = 0; i < c->npairs; i++)
            fprintf(f, "  %d -> %d: %s\n", c->pairs[i].prefill, c->pairs[i].decode, c->pairs[i].why);
        for (int i = 0; i < n->npairs; i++)
            fprintf(f, "  naive %d -> %d: %s\n", n->pairs[i].prefill, n->pairs[i].decode, n->pairs[i].why);
        fprintf(f, "\n");
    }
    if (res->roles.offload) {
        print_workers(f, c, "offload workers, all copying at once (each direction on its own):");
        print_workers(f, n, "naive offload workers:");
        print_gain(f, "offload", res->gain_offload, c->offload_predicted_h2d + c->offload_predicted_d2h,
                   n->offload_predicted_h2d + n->offload_predicted_d2h, res->verified);
        fprintf(f, "why:\n");
        for (int i = 0; i < c->nworkers; i++)
            fprintf(f, "  GPU %d: %s\n", c->workers[i].gpu, c->workers[i].why);
        fprintf(f, "\n");
    }
    if (res->roles.replicas) {
        print_replicas(f, c, "replicas, every one loading from host at once:");
        print_replicas(f, n, "naive replicas:");
        print_gain(f, "replicas (slowest replica)", res->gain_replicas, c->replicas_predicted_min,
                   n->replicas_predicted_min, res->verified);
        fprintf(f, "why:\n");
        for (int r = 0; r < c->nreplicas; r++)
            fprintf(f, "  replica %d: %s\n", r, c->replicas[r].why);
        fprintf(f, "\n");
    }
    if (res->nattempts > 1) {
        fprintf(
            f, "verification attempts (a pattern slower than predicted teaches the model, then the roles are "
               "placed again):\n");
        for (int a = 0; a < res->nattempts; a++) {
            const gq_place_attempt *t = &res->attempts[a];
            fprintf(f, "  %d%s ", a + 1, a == res->final_attempt ? "*" : " ");
            for (int i = 0; i < t->npairs; i++)
                fprintf(f, "%s%d->%d", i ? "," : "", t->prefill[i], t->decode[i]);
            if (t->npairs)
                fprintf(f, " pairs %s predicted, %s measured; ", fig(t->pairs_predicted, buf, 16),
                        fig(t->pairs_measured, buf + 16, 16));
            if (t->nworkers) {
                fprintf(f, "offload ");
                for (int i = 0; i < t->nworkers; i++)
                    fprintf(f, "%s%d", i ? "," : "", t->workers[i]);
                fprintf(f, " %s predicted, %s measured; ", fig(t->offload_predicted, buf, 16),
                        fig(t->offload_measured, buf + 16, 16));
            }
            fprintf(f, "%s\n", t->finding);
        }
        fprintf(f, "\n");
    }
    for (int i = 0; i < res->nwarnings; i++)
        fprintf(f, "warning: %s\n", res->warnings[i].text);
    if (res->nwarnings)
        fprintf(f, "\n");
    if (res->nnotes) {
        fprintf(f, "findings:\n");
        for (int i = 0; i < res->nnotes; i++)
            fprintf(f, "  - %s\n", res->notes[i]);
    }
    if (m->nlimits) {
        fprintf(f, "\nshared limits the measurements show (the predictions use them):\n");
        for (int l = 0; l < m->nlimits; l++) {
            const gq_place_limit *lim = &m->limits[l];
            char a[96], b[96];
            if (lim->kind == GQ_LIMIT_P2P || lim->kind == GQ_LIMIT_STAGED)
                fprintf(f, "  #%d %s {%s} -> {%s} <= %.1f: %s\n", l,
                        lim->kind == GQ_LIMIT_P2P ? "P2P" : "staged handoffs",
                        gq_gpuset_str(lim->a, a, sizeof a), gq_gpuset_str(lim->b, b, sizeof b),
                        lim->capacity_gbps, lim->evidence);
            else
                fprintf(f, "  #%d host %s {%s} <= %.1f: %s\n", l,
                        lim->kind == GQ_LIMIT_H2D   ? "h2d"
                        : lim->kind == GQ_LIMIT_D2H ? "d2h"
                                                    : "both ways",
                        gq_gpuset_str(lim->a, a, sizeof a), lim->capacity_gbps, lim->evidence);
        }
    }
    if (!res->verified)
        fprintf(
            f, "\nnot verified: the figures above are predictions (run without --input, or with --verify, to "
               "measure them)\n");
}
