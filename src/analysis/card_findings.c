/* The card's findings in plain sentences, one function per row or subject,
 * called by gq_card_judge after the rows. Pure. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/card.h"
#include "analysis/card_judge_internal.h"
#include "analysis/domains.h"
#include "core/units.h"

/* The pairwise finding: no P2P, the domains, or one domain. */
void gq_judge_find_pairwise(gq_card *fs, const gq_card_matrix_view *m0, const gq_card_domains_view *dm,
                            int ndom, const p2p_ranges *r)
{
    char s1[64], s2[64];
    if (m0->present && isfinite(r->lo)) {
        bool staged = m0->staged;
        if (dm->no_p2p || staged)
            gq_judge_finding(
                fs,
                "No GPU pair has P2P: every GPU-to-GPU byte goes through host memory (%s GB/s one pair at a "
                "time, host-staged), so the host paths are the budget for any multi-GPU exchange.",
                gq_judge_range(r->lo, r->hi, s1, sizeof s1));
        else if (dm->split) {
            char list[256] = "";
            size_t used = 0;
            for (int i = 0; i < dm->ndomains; i++) {
                const gq_card_domain_view *x = &dm->domain[i];
                char sb[64];
                int w = snprintf(list + used, sizeof list - used, "%s{%s}", i ? ", " : "",
                                 gq_domains_set_str(x->gpu, x->n, sb, sizeof sb));
                if (w > 0 && (size_t)w < sizeof list - used)
                    used += (size_t)w;
            }
            gq_judge_finding(
                fs,
                "GPUs form %d performance domains, %s: pairs within a domain reach %s GB/s one way, pairs "
                "across %s GB/s (one pair at a time).",
                ndom, list, gq_judge_range(r->wlo, r->whi, s1, sizeof s1),
                gq_judge_range(r->alo, r->ahi, s2, sizeof s2));
        } else
            gq_judge_finding(
                fs,
                "Every GPU pair reaches %s GB/s one way: one performance domain, no boundary larger than the "
                "measurement spread.",
                gq_judge_range(r->lo, r->hi, s1, sizeof s1));
    }
}

/* The concurrent finding: what crossing domains keeps. */
void gq_judge_find_concurrent(gq_card *fs, const gq_card_pairs_view *pairs)
{
    char a[32], b[32];
    const gq_card_pairs_side_view *w = &pairs->within, *ac = &pairs->across;
    double ra = pairs->ratio;
    if (w->present && ac->present && isfinite(ra))
        gq_judge_finding(
            fs,
            "%d pairs at once within domains moved %s GB/s in total, %d pairs across domains %s GB/s: "
            "crossing domains keeps %.0f%% of the bandwidth. Keep heavy GPU-to-GPU exchanges within "
            "domains.",
            w->npairs, gq_judge_f1(w->aggregate_gbps, a, sizeof a), ac->npairs,
            gq_judge_f1(ac->aggregate_gbps, b, sizeof b), ra * 100);
}

/* The bottleneck findings: the shared budgets (P2P and host) inferred from concurrent copies. */
void gq_judge_find_bottlenecks(gq_card *fs, const gq_card_bottlenecks_view *bottlenecks)
{
    char a[32], b[32];
    for (int i = 0; i < bottlenecks->n; i++) {
        const gq_card_bottleneck_view *x = &bottlenecks->v[i];
        const char *dir = x->have_direction ? x->direction : "?";
        char sb[64];
        const char *expl = x->explanation;
        if (!strcmp(dir, "p2p"))
            gq_judge_finding(
                fs,
                "Concurrent GPU pairs among GPUs %s share about %s GB/s when they copy at once (one pair "
                "at a "
                "time they would move %s GB/s). %s%s",
                gq_domains_set_str(x->gpu, x->ngpus, sb, sizeof sb),
                gq_judge_f1(x->capacity_gbps, a, sizeof a), gq_judge_f1(x->sum_alone_gbps, b, sizeof b), expl,
                *expl && expl[strlen(expl) - 1] != '.' ? "." : "");
        else
            gq_judge_finding(
                fs,
                "GPUs %s share one %s budget of about %s GB/s when they copy at once (alone they would "
                "move %s GB/s together). %s%s",
                gq_domains_set_str(x->gpu, x->ngpus, sb, sizeof sb),
                !strcmp(dir, "h2d")   ? "host-to-GPU"
                : !strcmp(dir, "d2h") ? "GPU-to-host"
                                      : dir,
                gq_judge_f1(x->capacity_gbps, a, sizeof a), gq_judge_f1(x->sum_alone_gbps, b, sizeof b), expl,
                *expl && expl[strlen(expl) - 1] != '.' ? "." : "");
    }
}

/* The host finding: an asymmetry with all GPUs copying at once that each GPU alone does not show. */
void gq_judge_find_host(gq_card *fs, const gq_card_host_view *host)
{
    char s1[64], s2[64];
    for (int dd = 0; dd < 2 && host->have_all; dd++) {
        const int *gl = host->gpu;
        int n = host->ngpus;
        const double *fig = dd ? host->all_d2h : host->all_h2d;
        double v[MAXG];
        double vlo = INFINITY, vhi = -INFINITY;
        for (int k = 0; k < n; k++) {
            v[k] = fig[k];
            if (isfinite(v[k])) {
                vlo = fmin(vlo, v[k]);
                vhi = fmax(vhi, v[k]);
            }
        }
        if (!(isfinite(vlo) && vhi > 0 && vlo < 0.85 * vhi))
            continue;
        int slow[MAXG], fast[MAXG], ns = 0, nf = 0;
        double mid = (vlo + vhi) / 2, sl = INFINITY, sh = -INFINITY, fl = INFINITY, fh = -INFINITY;
        for (int k = 0; k < n; k++) {
            if (!isfinite(v[k]))
                continue;
            if (v[k] < mid) {
                slow[ns++] = gl[k];
                sl = fmin(sl, v[k]);
                sh = fmax(sh, v[k]);
            } else {
                fast[nf++] = gl[k];
                fl = fmin(fl, v[k]);
                fh = fmax(fh, v[k]);
            }
        }
        char sa[64], sb2[64];
        gq_judge_finding(
            fs,
            "With all %d GPUs copying %s at once, GPUs %s get %s GB/s each against %s GB/s for GPUs "
            "%s: an "
            "asymmetry that each GPU alone does not show.",
            n, dd ? "to host memory" : "from host memory", gq_domains_set_str(slow, ns, sa, sizeof sa),
            gq_judge_range(sl, sh, s1, sizeof s1), gq_judge_range(fl, fh, s2, sizeof s2),
            gq_domains_set_str(fast, nf, sb2, sizeof sb2));
    }
}

/* The sweep finding: the first fitted sweep's fixed cost and half-bandwidth size. */
void gq_judge_find_sweeps(gq_card *fs, const gq_card_sweeps_view *sweeps)
{
    char a[32], b[32];
    for (int i = 0; i < sweeps->n; i++) {
        const gq_card_sweep_view *x = &sweeps->v[i];
        if (!x->have_fit)
            continue;
        char hb[32];
        gq_judge_finding(
            fs,
            "%s: each copy costs about %s µs before data moves; copies smaller than %s get less than half of "
            "its %s GB/s.",
            x->label, gq_judge_f1(x->fixed_us, a, sizeof a),
            gq_judge_approx_size(x->half_bytes, hb, sizeof hb), gq_judge_f1(x->asymptotic_gbps, b, sizeof b));
        break;
    }
}

/* The health finding: what the load did to the hottest GPU. */
void gq_judge_find_health(gq_card *fs, const gq_card_stress_view *stress)
{
    char a[32], b[32], c[32], d[32], s1[64];
    if (stress->present) {
        double tmax = -INFINITY, cap = -INFINITY;
        int nth = 0, ng = 0;
        for (int k = 0; k < stress->ngpus; k++) {
            ng++;
            tmax = fmax(tmax, stress->temp_max_c[k]);
            double cp = stress->power_capped_pct[k];
            if (isfinite(cp))
                cap = fmax(cap, cp);
            nth += stress->thermal_slowdown[k];
        }
        char who[32];
        if (ng == 1)
            snprintf(who, sizeof who, "the GPU");
        else if (ng == 2)
            snprintf(who, sizeof who, "both GPUs");
        else
            snprintf(who, sizeof who, "all %d GPUs", ng);
        gq_judge_finding(
            fs,
            "Under %s s of load on %s (%s W together, GPU telemetry), the hottest reached %s °C%s%s%s; "
            "power capping in up to %s%% of samples is expected near the limit and is not a thermal "
            "slowdown.",
            gq_judge_f1(stress->elapsed_s, a, sizeof a), who,
            gq_judge_f1(stress->power_total_avg_w, b, sizeof b), gq_judge_f1(tmax, c, sizeof c),
            nth ? ", with THERMAL SLOWDOWN on " : ", with no thermal slowdown",
            nth ? gq_judge_f1(nth, d, sizeof d) : "",
            nth == 1 ? " GPU"
            : nth    ? " GPUs"
                     : "",
            gq_judge_f1(cap, s1, sizeof s1));
    }
}

/* The placement findings: the offload workers and the prefill-to-decode handoffs. */
/* The offload sentence: "do not collide" only when the measured budgets show
 * it; else the shared budget that two offload workers draw on, or that the
 * budgets were not measured. */
static void find_offload(gq_card *fs, const int *gl, int n, const char *list, double mh, double md,
                         const gq_card_bottlenecks_view *bottlenecks, const gq_card_facts *f)
{
    char a[32], b[32], c[32], sb[64], sc[64];
    if (f->step_ev[GQ_CS_CONTENTION] != GQ_EV_MEASURED) {
        gq_judge_finding(
            fs,
            "For KV offload, use GPUs %s (measured together: %s GB/s to GPU, %s GB/s to host in total); "
            "whether their host paths collide was not measured (contention step: %s).",
            list, gq_judge_f1(mh, a, sizeof a), gq_judge_f1(md, b, sizeof b),
            f->step_ev[GQ_CS_CONTENTION] == GQ_EV_UNKNOWN
                ? "unknown"
                : gq_ev_reason_words(f->step_why[GQ_CS_CONTENTION]));
        return;
    }
    for (int i = 0; i < bottlenecks->n; i++) {
        const gq_card_bottleneck_view *x = &bottlenecks->v[i];
        const char *dir = x->have_direction ? x->direction : "?";
        if (!strcmp(dir, "p2p"))
            continue;
        const int *bl = x->gpu;
        int shared[MAXG], ns = 0;
        int nb = x->ngpus;
        for (int k = 0; k < n; k++)
            for (int j = 0; j < nb; j++)
                if (gl[k] == bl[j] && ns < MAXG)
                    shared[ns++] = gl[k];
        if (ns < 2)
            continue;
        gq_judge_finding(
            fs,
            "For KV offload, use GPUs %s (measured together: %s GB/s to GPU, %s GB/s to host in total); "
            "GPUs %s of them share the %s budget of GPUs %s, about %s GB/s, when they copy at once.",
            list, gq_judge_f1(mh, a, sizeof a), gq_judge_f1(md, b, sizeof b),
            gq_domains_set_str(shared, ns, sb, sizeof sb),
            !strcmp(dir, "h2d")   ? "host-to-GPU"
            : !strcmp(dir, "d2h") ? "GPU-to-host"
                                  : dir,
            gq_domains_set_str(bl, nb, sc, sizeof sc), gq_judge_f1(x->capacity_gbps, c, sizeof c));
        return;
    }
    gq_judge_finding(
        fs,
        "For KV offload, use GPUs %s: their host paths do not collide (measured together: %s GB/s to GPU, "
        "%s GB/s to host in total).",
        list, gq_judge_f1(mh, a, sizeof a), gq_judge_f1(md, b, sizeof b));
}

void gq_judge_find_placement(gq_card *fs, const gq_card_placement_view *pl,
                             const gq_card_bottlenecks_view *bottlenecks, const gq_card_facts *f)
{
    char a[32], b[32];
    if (!pl->present)
        return;
    if (pl->noffload_count) {
        int gl[MAXG], n = 0;
        for (int i = 0; i < pl->noffload && n < MAXG; i++)
            gl[n++] = pl->offload_gpu[i];
        double mh = pl->offload_h2d_gbps, md = pl->offload_d2h_gbps;
        char list[96] = "";
        size_t used = 0;
        for (int k = 0; k < n; k++) {
            /* 64 workers do not fit: stop at the last whole entry rather than run past list. */
            int w = snprintf(list + used, sizeof list - used, "%s%d", k ? "," : "", gl[k]);
            if (w < 0 || (size_t)w >= sizeof list - used)
                break;
            used += (size_t)w;
        }
        if (n > 1)
            find_offload(fs, gl, n, list, mh, md, bottlenecks, f);
        else
            gq_judge_finding(fs, "For KV offload, use GPU %s (%s GB/s to GPU, %s GB/s to host).", list,
                             gq_judge_f1(mh, a, sizeof a), gq_judge_f1(md, b, sizeof b));
    }
    if (pl->npairs_count) {
        char list[256] = "";
        size_t used = 0;
        for (int i = 0; i < pl->npairs; i++)
            if (used < sizeof list - 16)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%d→%d", i ? ", " : "",
                                         pl->pair_prefill[i], pl->pair_decode[i]);
        double gain = pl->gain;
        if (pl->staged_unmeasured > 0)
            gq_judge_finding(
                fs,
                "Prefill→decode handoffs %s are planned through host memory because no usable P2P "
                "figure was measured for %d of them: measure the pairs before relying on it.",
                list, (int)pl->staged_unmeasured);
        else if (pl->all_staged)
            gq_judge_finding(
                fs,
                "Prefill→decode handoffs %s: every handoff is host-staged (no P2P), so the pairs are "
                "chosen "
                "to use both sockets' host budgets.",
                list);
        else
            gq_judge_finding(
                fs,
                "Prefill→decode handoffs %s keep every KV transfer on a fast path: %s GB/s measured "
                "together%s%s%s.",
                list, gq_judge_f1(pl->pairs_gbps, a, sizeof a), isfinite(gain) ? ", " : "",
                isfinite(gain) ? gq_judge_f1(gain, b, sizeof b) : "",
                isfinite(gain) ? "× the naive mapping (GPUs in index order)" : "");
    }
}

/* The verdict findings: up to six checks with the card's verdict, when it is warn or fail. */
void gq_judge_find_verdicts(gq_card *fs, const gq_checklist *cl, gq_verdict overall)
{
    if (overall == GQ_V_FAIL || overall == GQ_V_WARN) {
        int shown = 0;
        for (int k = 0; k < cl->n && shown < 6; k++)
            if (cl->v[k].verdict == overall) {
                gq_judge_finding(fs, "%s: %s", overall == GQ_V_FAIL ? "FAIL" : "WARN", cl->v[k].text);
                shown++;
            }
    }
}

/* One finding per GPU the domains analysis set aside (the card's "domains"
 * section's set_aside[]: every pair with it slow for a reason of its own). */
void gq_judge_find_set_aside(gq_card *fs, const gq_card_domains_view *dm)
{
    for (int i = 0; i < dm->nset_aside; i++) {
        const gq_card_set_aside_view *s = &dm->set_aside[i];
        gq_judge_finding(fs,
                         "GPU %d set aside: %s; it is its own domain, and the other GPUs' domains are found "
                         "without it.",
                         s->gpu, s->have_text ? s->text : "every pair with it is slow");
    }
}

/* One finding per busy GPU: what ran on it and what the card did about it. */
void gq_judge_find_busy(gq_card *fs)
{
    for (int g = 0; g < GQ_MAX_GPUS; g++)
        if (fs->busy_records[g])
            gq_judge_finding(
                fs,
                "GPU %d was busy while the card measured (%s): %d measurement%s flagged contaminated and "
                "left "
                "out of every figure and verdict. %s",
                g, fs->busy_what[g][0] ? fs->busy_what[g] : "other work seen", fs->busy_records[g],
                fs->busy_records[g] == 1 ? "" : "s",
                fs->allow_busy ? "The card was judged without them (--allow-busy)."
                               : "The card is INCOMPLETE: run it again with the GPU idle, or with "
                                 "--allow-busy to judge the rest.");
}

/* The identity finding: a virtual machine showing one NUMA node. */
void gq_judge_find_identity(gq_card *fs, const gq_card_identity_view *id)
{
    if (id->vm && id->numa_nodes <= 1)
        gq_judge_finding(
            fs,
            "This is a virtual machine showing one NUMA node: host buffers cannot be bound to the physical "
            "memory locality, and shared budgets found here are inferred from measurement only.");
}
