/* `gpuqual domains`'s tables: the probe plan, the pair matrix, the domains,
 * the contention runs and the bottlenecks (render/command_text.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/options.h"
#include "core/units.h"
#include "render/command_text.h"

void gq_render_probe_plan(FILE *f, const gq_probe_plan *p, int n, const gq_domains *assumed, int rounds,
                          double round_s, bool list_all)
{
    char buf[512];
    long nn = (long)n * n;
    fprintf(f, "Planned measurements for %d GPU%s:\n", n, n == 1 ? "" : "s");
    int staged = 0;
    for (int i = 0; i < p->n; i++)
        if (p->v[i].kind == GQ_PROBE_MATRIX && p->v[i].staged[0])
            staged++;
    for (int k = 0; k < GQ_PROBE_NKINDS; k++) {
        if (!p->count[k])
            continue;
        fprintf(f, "  %-12s %6d", gq_probe_kind_name((gq_probe_kind)k), p->count[k]);
        if (k == GQ_PROBE_MATRIX)
            fprintf(f, "   every ordered pair alone (%d host-staged)", staged);
        fprintf(f, "\n");
    }
    fprintf(f, "  %-12s %6d   = %.2f N^2 (bound for any domains: %ld = %.2f N^2)\n", "total", p->n,
            nn ? (double)p->n / (double)nn : 0, gq_probes_bound(n),
            nn ? (double)gq_probes_bound(n) / (double)nn : 0);
    fprintf(f,
            "  how it grows: planned runs / N^2 = %.2f; the bound is N(N-1) + 2(4N+1+N(N-1)/2) + 1 + N^2/8 + "
            "8N = 2.125 N^2 + 14 N + 3 at most: %ld for %d GPUs, %ld for %d\n",
            nn ? (double)p->n / (double)nn : 0, gq_probes_bound(2 * n), 2 * n, gq_probes_bound(4 * n), 4 * n);
    double est = gq_probes_estimate_s(p, rounds, round_s);
    fprintf(f, "  estimated time on real GPUs: %.0f s (%.1f min) at %d rounds of ~%.2f s\n", est, est / 60,
            rounds, round_s);
    if (assumed) {
        fprintf(f, "  contention probes assume the domains the tree suggests:");
        for (int d = 0; d < assumed->ndomains; d++)
            fprintf(f, " {%s}", gq_domains_set_str(assumed->member[d], assumed->size[d], buf, sizeof buf));
        fprintf(f, "\n  (the measured matrix decides the real domains; the bound holds whatever they are)\n");
    }
    fprintf(f, "\n");
    int shown = 0;
    for (int i = 0; i < p->n; i++) {
        if (p->v[i].kind == GQ_PROBE_MATRIX)
            continue;
        if (!list_all && shown >= 200) {
            fprintf(f, "  ... %d more\n", p->n - i);
            break;
        }
        fprintf(f, "  %-11s %-4s %-28s %s\n", gq_probe_kind_name(p->v[i].kind),
                gq_direction_name(p->v[i].direction), gq_probe_str(&p->v[i], buf, sizeof buf), p->v[i].why);
        shown++;
    }
}

/* Columns from..to of the matrix, each 8 wide after a 7-wide row label. */
static void matrix_block(FILE *f, const gq_pairmatrix *m, int from, int to)
{
    fprintf(f, "  %5s", "");
    for (int j = from; j < to; j++)
        fprintf(f, " %7d", m->gpu[j]);
    fprintf(f, "\n");
    for (int i = 0; i < m->n; i++) {
        fprintf(f, "  %5d", m->gpu[i]);
        for (int j = from; j < to; j++) {
            if (i == j)
                fprintf(f, " %7s", "-");
            else if (isfinite(m->gbps[i][j]))
                fprintf(f, " %6.1f%s", m->gbps[i][j], m->staged[i][j] ? "*" : " ");
            else
                fprintf(f, " %7s", m->record[i][j] >= 0 ? "x" : "n/a");
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\n");
}

/* Wider than the output (gq_opts_help_width): in blocks of columns, each
 * with every row. */
void gq_render_pair_matrix(FILE *f, const gq_pairmatrix *m)
{
    fprintf(f, "P2P read bandwidth, one pair at a time (GB/s; row = source, column = destination;\n"
               "* = host-staged, no P2P; x = invalid or impossible, kept out)\n");
    int width = gq_opts_help_width > 0 ? gq_opts_help_width : 100;
    int per = (width - 7) / 8 > 0 ? (width - 7) / 8 : 1;
    for (int from = 0; from < m->n; from += per)
        matrix_block(f, m, from, from + per < m->n ? from + per : m->n);
}

void gq_render_domains_text(FILE *f, const gq_domains *d)
{
    char buf[512];
    fprintf(f, "Performance domains:");
    for (int k = 0; k < d->ndomains; k++)
        fprintf(f, " {%s}%s", gq_domains_set_str(d->member[k], d->size[k], buf, sizeof buf),
                d->chained[k] ? "(chained)" : "");
    fprintf(f, "\n");
    if (d->no_p2p)
        fprintf(f,
                "  no P2P between any of these GPUs: every GPU-to-GPU byte is staged through host memory,\n"
                "  so each GPU is its own domain and the host paths below are the budget that matters\n");
    else if (d->split)
        fprintf(f,
                "  boundary: the gap between %.1f and %.1f GB/s (larger than the %.1f%% spread and the "
                "minimum gap);\n"
                "  slowest pair inside a domain %.1f GB/s, fastest pair across domains %.1f GB/s\n",
                d->gap_lo_gbps, d->gap_hi_gbps, 100 * d->max_spread, d->within_min_gbps, d->across_max_gbps);
    else if (d->npairs > 0)
        fprintf(f,
                "  no gap between pair bandwidths exceeds the measurement spread and the minimum gap: %s\n",
                d->ndomains == 1 ? "one domain" : "domains are the GPUs joined by P2P");
    for (int k = 0; k < d->ngroups; k++)
        if (d->groups[k].depth > 0) {
            int g[GQ_MAX_GPUS] = {0}, n = 0;
            for (int i = 0; i < 64; i++)
                if (d->groups[k].gpus >> i & 1)
                    g[n++] = i;
            fprintf(f, "  inside {%s}: a further boundary between %.1f and %.1f GB/s\n",
                    gq_domains_set_str(g, n, buf, sizeof buf), d->groups[k].gap_lo_gbps,
                    d->groups[k].gap_hi_gbps);
        }
    for (int k = 0; k < d->nset_aside; k++)
        fprintf(f, "  GPU %d set aside before clustering: %s\n", d->set_aside[k], d->set_aside_why[k]);
    for (int k = 0; k < d->nopen; k++)
        fprintf(f, "  undetermined after measuring again: %s\n", d->open[k].text);
    if (d->nmissing > 0 && !d->no_p2p)
        fprintf(f, "  %d pair%s without a usable direct figure (no P2P, invalid or not measured)\n",
                d->nmissing, d->nmissing == 1 ? "" : "s");
    fprintf(f, "\n");
}

void gq_render_contention(FILE *f, const gq_bottlenecks *b, const gq_recordset *rs)
{
    char buf[512];
    bool any = false;
    for (int s = 0; s < 2; s++)
        for (int g = 0; g < GQ_MAX_GPUS; g++)
            any |= isfinite(b->alone[s][g]);
    if (any) {
        fprintf(f, "Host paths, each GPU alone (GB/s):\n  %5s %8s %8s\n", "GPU", "h2d", "d2h");
        for (int g = 0; g < GQ_MAX_GPUS; g++) {
            if (!isfinite(b->alone[0][g]) && !isfinite(b->alone[1][g]))
                continue;
            char a[16] = "-", c[16] = "-";
            if (isfinite(b->alone[0][g]))
                snprintf(a, sizeof a, "%.1f", b->alone[0][g]);
            if (isfinite(b->alone[1][g]))
                snprintf(c, sizeof c, "%.1f", b->alone[1][g]);
            fprintf(f, "  %5d %8s %8s\n", g, a, c);
        }
        fprintf(f, "\n");
    }
    if (b->nobs > 0) {
        fprintf(f, "Concurrent runs (aggregate GB/s against what the GPUs get alone, capped by budgets found "
                   "earlier):\n");
        for (int i = 0; i < b->nobs; i++) {
            const gq_bn_obs *o = &b->obs[i];
            char what[320];
            if (o->p2p) {
                size_t used = 0;
                what[0] = 0;
                for (int k = 0; k < o->npairs && used < sizeof what; k++)
                    used += (size_t)snprintf(what + used, sizeof what - used, "%s%d:%d", k ? "," : "",
                                             o->pair_src[k], o->pair_dst[k]);
            } else {
                gq_domains_set_str(o->gpus, o->ngpus, what, sizeof what);
            }
            fprintf(f, "  %-4s %-24s %8.1f of %8.1f  %s%s\n", gq_direction_name(o->direction), what,
                    o->aggregate_gbps, o->expected_gbps, o->contended ? "SHARED" : "independent",
                    o->p2p ? (o->p2p_kind == GQ_P2P_WITHIN   ? " (pairs within domains)"
                              : o->p2p_kind == GQ_P2P_ACROSS ? " (pairs across domains)"
                                                             : "")
                           : "");
        }
        fprintf(f, "\n");
    }
    for (int s = 0; s < 2; s++) {
        if (b->asym_obs[s] < 0 || b->nslow[s] == 0)
            continue;
        const gq_bn_obs *o = &b->obs[b->asym_obs[s]];
        char all[256];
        gq_domains_set_str(o->gpus, o->ngpus, all, sizeof all);
        gq_domains_set_str(b->slow[s], b->nslow[s], buf, sizeof buf);
        char sr[48], fr[48];
        if (b->slow_hi[s] - b->slow_lo[s] < 0.05)
            snprintf(sr, sizeof sr, "%.1f", b->slow_lo[s]);
        else
            snprintf(sr, sizeof sr, "%.1f-%.1f", b->slow_lo[s], b->slow_hi[s]);
        if (b->fast_hi[s] - b->fast_lo[s] < 0.05)
            snprintf(fr, sizeof fr, "%.1f", b->fast_lo[s]);
        else
            snprintf(fr, sizeof fr, "%.1f-%.1f", b->fast_lo[s], b->fast_hi[s]);
        fprintf(f, "Asymmetry: with GPUs %s copying %s at once, GPUs %s get %s GB/s each, the others %s\n\n",
                all, s ? "GPU to host" : "host to GPU", buf, sr, fr);
    }
    fprintf(f, "Bottlenecks:%s\n", b->n ? "" : " none found");
    for (int i = 0; i < b->n; i++) {
        const gq_bottleneck *bn = &b->v[i];
        gq_domains_set_str(bn->gpus, bn->ngpus, buf, sizeof buf);
        fprintf(f, "  %d. %s GPUs %s: %.1f GB/s shared (%.1f alone%s) [%s]\n", i + 1,
                gq_direction_name(bn->direction), buf, bn->capacity_gbps, bn->sum_alone_gbps,
                bn->p2p ? ", one pair at a time" : ", summed", gq_bn_explain_name(bn->explained));
        fprintf(f, "     %s\n", bn->explanation);
        for (int e = 0; e < bn->nevidence; e++) {
            const gq_bn_obs *o = &b->obs[bn->evidence[e]];
            char what[320];
            gq_domains_set_str(o->gpus, o->ngpus, what, sizeof what);
            fprintf(f, "     evidence: group %d %s, GPUs %s: %.1f GB/s, expected %.1f\n", o->group, o->test,
                    what, o->aggregate_gbps, o->expected_gbps);
        }
    }
    for (int i = 0; i < b->nopen; i++)
        fprintf(f, "  undetermined after measuring again: %s\n", b->open[i].text);
    if (b->nignored) {
        fprintf(f, "\nKept out of the analysis (%d record%s):\n", b->nignored, b->nignored == 1 ? "" : "s");
        for (int i = 0; i < b->nignored && i < 50; i++) {
            const gq_bn_ignored *ig = &b->ignored[i];
            const gq_record *r = &rs->v[ig->record];
            char e1[32], e2[32], set[256];
            if (r->aggregate || r->sum)
                fprintf(f, "  %s %s %s of GPUs %s, %.1f GB/s: %s\n", r->test, r->sum ? "sum" : "aggregate",
                        gq_direction_name(r->direction),
                        gq_domains_set_str(r->gpus, r->ngpus, set, sizeof set), r->value.median, ig->why);
            else
                fprintf(f, "  %s %s -> %s, %.1f GB/s: %s\n", r->test, gq_endpoint_str(r->src, e1, sizeof e1),
                        gq_endpoint_str(r->dst, e2, sizeof e2), r->value.median, ig->why);
        }
    }
}
