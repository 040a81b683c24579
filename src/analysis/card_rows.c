/* The card's table, one function per row (seed 001 §9): each row's
 * measurement, result and verdict from the checks and the card's sections,
 * called by gq_card_judge in the card's order. Pure. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/card.h"
#include "analysis/card_judge_internal.h"
#include "analysis/tp_groups.h"
#include "analysis/domains.h"
#include "core/units.h"

/* Identity and links: the GPUs, their memory, power and PCIe links. */
/* A GPU the identity section does not list: every figure unknown. */
static const gq_card_gpu_view no_gpu = {
    .memory_mib = NAN, .power_limit_w = NAN, .gen = NAN, .width = NAN, .gen_max = NAN, .width_max = NAN};

/* The row's result: the GPUs' links below their maximum or at idle, then the uplinks. */
static void identity_result(const gq_card_identity_view *id, const gq_card_gpu_view *g0, int *idle_out,
                            char *res, size_t nres)
{
    char a[32], b[32];
    int n = id->ngpus_count, down = 0, idle = 0;
    for (int i = 0; i < id->ngpus; i++) {
        const gq_card_gpu_view *p = &id->gpu[i];
        idle += !p->under_load;
        down += p->width < p->width_max || (p->under_load && p->gen < p->gen_max);
    }
    int w = down   ? snprintf(res, nres, "%d GPU%s below the link's maximum", down, down == 1 ? "" : "s")
            : idle ? snprintf(res, nres, "Gen%s x%s at idle", gq_judge_f1(g0->gen, a, sizeof a),
                              gq_judge_f1(g0->width, b, sizeof b))
                   : snprintf(res, nres, "every %s at its maximum under load (Gen%s x%s)",
                              gq_judge_uplinks_down(id) ? "GPU's own link" : "link",
                              gq_judge_f1(g0->gen_max, a, sizeof a), gq_judge_f1(g0->width_max, b, sizeof b));
    /* At idle a link slows down to save power: only the stress run's reading under load judges it. */
    if (idle == n && w > 0 && (size_t)w < nres)
        w += snprintf(res + w, nres - (size_t)w, ", not measured under load");
    else if (idle && w > 0 && (size_t)w < nres)
        w += snprintf(res + w, nres - (size_t)w, ", %d of %d GPUs not measured under load", idle, n);
    /* The links above the GPUs (switch and root port uplinks), read by discovery: each one below its
     * maximum width is named. */
    int updown = 0;
    for (int i = 0; i < id->nuplinks; i++) {
        const gq_card_uplink_view *x = &id->uplink[i];
        double cw = x->width, mw = x->width_max;
        if (!(isfinite(cw) && isfinite(mw) && cw < mw) || w <= 0 || (size_t)w >= nres)
            continue;
        char set[128] = "";
        gq_domains_set_str(x->gpus, x->ngpus, set, sizeof set);
        w += snprintf(res + w, nres - (size_t)w, "; the uplink of %s %s (GPU%s %s) at x%s, can do x%s",
                      x->root_port ? "root port" : "PCIe switch", x->node, x->ngpus == 1 ? "" : "s", set,
                      gq_judge_f1(cw, a, sizeof a), gq_judge_f1(mw, b, sizeof b));
        updown++;
    }
    int nup = id->nuplinks_count;
    if (nup && !updown && w > 0 && (size_t)w < nres)
        snprintf(res + w, nres - (size_t)w, "; %d uplink%s above the GPUs at %s maximum width (read at idle)",
                 nup, nup == 1 ? "" : "s", nup == 1 ? "its" : "their");
    *idle_out = idle;
}

void gq_judge_row_identity(gq_card *rows, const gq_checklist *cl, const gq_card_identity_view *id)
{
    char ev[512], res[512], a[32], b[32], c[32], d[32];
    int n = id->ngpus_count;
    const gq_card_gpu_view *g0 = id->ngpus ? &id->gpu[0] : &no_gpu;
    bool same = true;
    for (int i = 0; i < id->ngpus; i++)
        same &= !strcmp(id->gpu[i].have_name ? id->gpu[i].name : "", g0->have_name ? g0->name : "");
    snprintf(ev, sizeof ev, "%d × %s%s, %s MiB, %s W limit; PCIe Gen%s x%s %s; driver %s, CUDA %s", n,
             g0->have_name ? g0->name : "?", same ? "" : " (mixed models)",
             gq_judge_f1(g0->memory_mib, a, sizeof a), gq_judge_f1(g0->power_limit_w, b, sizeof b),
             gq_judge_f1(g0->gen, c, sizeof c), gq_judge_f1(g0->width, d, sizeof d),
             g0->under_load ? "under load" : "at idle", id->driver, id->cuda_driver_str);
    int idle = 0;
    identity_result(id, g0, &idle, res, sizeof res);
    static const char *const ids[] = {
        "count_min",  "memory_mib_min", "power_limit_w_min", "pcie_gen_min", "pcie_width_min",
        "link_width", "link_gen",       "uplink_width",      "uplink_gen",   "expect_uncovered",
        NULL};
    const char *v = gq_judge_row_verdict(cl, ids, n > 0);
    if (idle && !strcmp(v, "pass"))
        v = "info"; /* the links are part of the row: never a pass without a reading under load */
    gq_judge_row(rows, "Identity and links", ev, res, v, "Confirm the delivered configuration");
}

/* Pairwise GPU traffic: the first matrix, one pair at a time, within and across domains. */
void gq_judge_row_pairwise(gq_card *rows, const gq_checklist *cl, const gq_card_matrix_view *m0,
                           const gq_card_domains_view *dm, int ndom, const p2p_ranges *r,
                           const staged_pair *sp)
{
    char ev[512], res[512], s1[64], s2[64];
    if (m0->present) {
        int n = m0->ngpus_count;
        bool staged = m0->staged;
        snprintf(ev, sizeof ev, "%s matrix %d×%d, one pair at a time%s",
                 staged ? "host-staged GPU-to-GPU" : "P2P read", n, n, staged ? " (no P2P)" : "");
        if (dm->split)
            snprintf(res, sizeof res, "%d domains; within %s GB/s, across %s GB/s", ndom,
                     gq_judge_range(r->wlo, r->whi, s1, sizeof s1),
                     gq_judge_range(r->alo, r->ahi, s2, sizeof s2));
        else
            snprintf(res, sizeof res, "%s GB/s%s", gq_judge_range(r->lo, r->hi, s1, sizeof s1),
                     dm->no_p2p ? "; no pair has P2P" : "; one domain");
        if (sp->n) {
            size_t w = strlen(res);
            snprintf(res + w, sizeof res - w,
                     "; host-staged: %s GB/s by gpuqual's pipelined staging, %s GB/s by the driver's copy "
                     "(cudaMemcpyPeer) on %d pair%s",
                     gq_judge_range(sp->plo, sp->phi, s1, sizeof s1),
                     gq_judge_range(sp->dlo, sp->dhi, s2, sizeof s2), sp->n, sp->n == 1 ? "" : "s");
        }
        static const char *const ids[] = {"p2p_gbps_min", "nvlink_gbps_min", NULL};
        gq_judge_row(rows, "Pairwise GPU traffic", ev, res, gq_judge_row_verdict(cl, ids, isfinite(r->lo)),
                     "Discover fast communication groups");
    } else {
        static const char *const ids[] = {NULL};
        gq_judge_row(rows, "Pairwise GPU traffic", "P2P read matrix", "not measured",
                     gq_judge_row_verdict(cl, ids, false), "Discover fast communication groups");
    }
}

/* Concurrent GPU traffic: pairs at once within domains and across. */
void gq_judge_row_concurrent(gq_card *rows, const gq_checklist *cl, const gq_card_pairs_view *pairs,
                             const gq_card_domains_view *dm, int ndom)
{
    char ev[512], res[512], a[32], b[32];
    const gq_card_pairs_side_view *w = &pairs->within, *ac = &pairs->across;
    if (pairs->present)
        snprintf(ev, sizeof ev, "%d pairs at once within domains, %d across", w->npairs, ac->npairs);
    else
        snprintf(ev, sizeof ev, "the intended simultaneous pairs, within and across domains");
    double ra = pairs->ratio;
    char pct[24] = "";
    if (isfinite(ra))
        snprintf(pct, sizeof pct, " (%.0f%%)", ra * 100);
    if (w->present && ac->present)
        snprintf(res, sizeof res, "within %s GB/s in total, across %s GB/s%s",
                 gq_judge_f1(w->aggregate_gbps, a, sizeof a), gq_judge_f1(ac->aggregate_gbps, b, sizeof b),
                 pct);
    else if (w->present)
        snprintf(res, sizeof res, "within %s GB/s in total", gq_judge_f1(w->aggregate_gbps, a, sizeof a));
    else if (ac->present)
        snprintf(
            res, sizeof res, "%d pairs at once %s GB/s in total, %s GB/s one at a time", ac->npairs,
            gq_judge_f1(ac->aggregate_gbps, a, sizeof a),
            gq_judge_f1(isfinite(ac->aggregate_gbps) ? gq_judge_sum(ac->isolated_gbps, ac->nisolated) : NAN,
                        b, sizeof b));
    else if (dm->no_p2p)
        snprintf(res, sizeof res,
                 "no P2P: concurrent GPU pairs go through host memory (see the host paths and "
                 "the placement)");
    else if (dm->no_pairs)
        snprintf(res, sizeof res, "not measured (no usable GPU pair figure)");
    else
        snprintf(res, sizeof res, "%s", ndom <= 1 ? "one domain: nothing to compare" : "not measured");
    static const char *const ids[] = {NULL};
    gq_judge_row(rows, "Concurrent GPU traffic", ev, res, gq_judge_row_verdict(cl, ids, pairs->present),
                 "Place workers without overloading shared paths");
}

/* Host-memory traffic: each GPU alone, subsets and all at once, and the shared host budgets. */
void gq_judge_row_host(gq_card *rows, const gq_checklist *cl, const gq_card_host_view *host,
                       const gq_card_bottlenecks_view *bottlenecks, const gq_card_facts *f)
{
    char ev[512], res[512], a[32], b[32], s1[64], s2[64];
    double h2lo = INFINITY, h2hi = -INFINITY, d2lo = INFINITY, d2hi = -INFINITY;
    for (int k = 0; k < host->nalone; k++) {
        double e1 = host->alone_h2d[k], e2 = host->alone_d2h[k];
        if (!isnan(e1)) {
            h2lo = fmin(h2lo, e1);
            h2hi = fmax(h2hi, e1);
        }
        if (!isnan(e2)) {
            d2lo = fmin(d2lo, e2);
            d2hi = fmax(d2hi, e2);
        }
    }
    int nsub = host->nsets;
    snprintf(ev, sizeof ev, "both directions: each GPU alone, %d subset%s, all at once", nsub,
             nsub == 1 ? "" : "s");
    bool all = host->have_all;
    int nbn = 0;
    for (int i = 0; i < bottlenecks->n; i++) {
        const gq_card_bottleneck_view *x = &bottlenecks->v[i];
        nbn += strcmp(x->have_direction ? x->direction : "", "p2p") != 0;
    }
    char budgets[160];
    /* How many shared host budgets there are is a fact only when the concurrent copies ran. */
    if (f->step_ev[GQ_CS_CONTENTION] == GQ_EV_MEASURED)
        snprintf(budgets, sizeof budgets, "%d shared host budget%s", nbn, nbn == 1 ? "" : "s");
    else
        snprintf(budgets, sizeof budgets, "shared host budgets not measured (contention step: %s)",
                 f->step_ev[GQ_CS_CONTENTION] == GQ_EV_UNKNOWN
                     ? "unknown"
                     : gq_ev_reason_words(f->step_why[GQ_CS_CONTENTION]));
    snprintf(res, sizeof res, "alone %s / %s GB/s (to GPU / to host)%s%s%s%s%s; %s",
             gq_judge_range(h2lo, h2hi, s1, sizeof s1), gq_judge_range(d2lo, d2hi, s2, sizeof s2),
             all ? "; all at once " : "", all ? gq_judge_f1(host->all_h2d_aggregate_gbps, a, sizeof a) : "",
             all ? " / " : "", all ? gq_judge_f1(host->all_d2h_aggregate_gbps, b, sizeof b) : "",
             all ? " GB/s" : "", budgets);
    static const char *const ids[] = {"h2d_gbps_min", "d2h_gbps_min", "agree_h2d", "agree_d2h", NULL};
    gq_judge_row(rows, "Host-memory traffic", ev, res, gq_judge_row_verdict(cl, ids, isfinite(h2lo)),
                 "Select and qualify offload workers");
}

/* Transfer granularity: the buffer-size sweeps and their fits. */
void gq_judge_row_sweeps(gq_card *rows, const gq_checklist *cl, const gq_card_sweeps_view *sweeps)
{
    char ev[512], res[512], a[32], b[32];
    snprintf(ev, sizeof ev, "buffer-size sweep on %d path%s", sweeps->count, sweeps->count == 1 ? "" : "s");
    res[0] = 0;
    size_t used = 0;
    for (int i = 0; i < sweeps->n; i++) {
        const gq_card_sweep_view *x = &sweeps->v[i];
        if (!x->have_fit)
            continue;
        char hb[32];
        int w = snprintf(res + used, sizeof res - used, "%s%s: %s µs fixed cost, half of %s GB/s at %s",
                         used ? "; " : "", x->label, gq_judge_f1(x->fixed_us, a, sizeof a),
                         gq_judge_f1(x->asymptotic_gbps, b, sizeof b),
                         gq_judge_approx_size(x->half_bytes, hb, sizeof hb));
        if (w > 0 && (size_t)w < sizeof res - used)
            used += (size_t)w;
    }
    if (!used)
        snprintf(res, sizeof res, "%s", sweeps->count ? "no fit" : "not measured");
    static const char *const ids[] = {NULL};
    gq_judge_row(rows, "Transfer granularity", ev, res, gq_judge_row_verdict(cl, ids, sweeps->count > 0),
                 "Budget transfer overhead realistically");
}

/* Latency: pointer chase host-GPU and GPU-GPU. */
void gq_judge_row_latency(gq_card *rows, const gq_checklist *cl, const gq_card_latency_view *lat)
{
    char ev[512], res[512], s1[64], s2[64];
    double hl = INFINITY, hh = -INFINITY, pl = INFINITY, ph = -INFINITY;
    for (int i = 0; i < lat->nhost; i++) {
        hl = fmin(hl, lat->host_ns[i]);
        hh = fmax(hh, lat->host_ns[i]);
    }
    for (int i = 0; i < lat->np2p; i++) {
        pl = fmin(pl, lat->p2p_ns[i]);
        ph = fmax(ph, lat->p2p_ns[i]);
    }
    snprintf(ev, sizeof ev, "pointer chase host↔GPU%s", isfinite(pl) ? " and GPU↔GPU" : "");
    if (isfinite(hl))
        snprintf(res, sizeof res, "host %s ns%s%s%s", gq_judge_range(hl, hh, s1, sizeof s1),
                 isfinite(pl) ? ", GPU↔GPU " : "", isfinite(pl) ? gq_judge_range(pl, ph, s2, sizeof s2) : "",
                 isfinite(pl) ? " ns" : "");
    else
        snprintf(res, sizeof res, "not measured");
    static const char *const ids[] = {"host_latency_ns_max", "p2p_latency_ns_max", NULL};
    gq_judge_row(rows, "Latency", ev, res, gq_judge_row_verdict(cl, ids, isfinite(hl)),
                 "Know what small messages cost");
}

/* Whole-node health: the stress section's temperatures, clocks, power capping and slowdowns. */
void gq_judge_row_health(gq_card *rows, const gq_checklist *cl, const gq_card_stress_view *stress)
{
    char ev[512], res[512], a[32], b[32], c[32], s1[64];
    double tmax = -INFINITY, clo = INFINITY, chi = -INFINITY, cap = -INFINITY;
    int nth = 0, ng = 0;
    for (int k = 0; k < stress->ngpus; k++) {
        ng++;
        tmax = fmax(tmax, stress->temp_max_c[k]);
        double ck = stress->sm_clock_avg_mhz[k];
        if (isfinite(ck)) {
            clo = fmin(clo, ck);
            chi = fmax(chi, ck);
        }
        double cp = stress->power_capped_pct[k];
        if (isfinite(cp))
            cap = fmax(cap, cp);
        nth += stress->thermal_slowdown[k];
    }
    if (ng) {
        snprintf(ev, sizeof ev,
                 "%s s GEMM load on %d GPU%s; temperature, power, clocks, throttle reasons, errors",
                 gq_judge_f1(stress->elapsed_s, a, sizeof a), ng, ng == 1 ? "" : "s");
        snprintf(res, sizeof res,
                 "max %s °C, average SM clock %s MHz, power-capped up to %s%% of samples, %s",
                 gq_judge_f1(tmax, b, sizeof b), gq_judge_range(clo, chi, s1, sizeof s1),
                 gq_judge_f1(cap, c, sizeof c), nth ? "THERMAL SLOWDOWN" : "no thermal slowdown");
    } else {
        snprintf(ev, sizeof ev, "sustained load with telemetry");
        snprintf(res, sizeof res, "not run");
    }
    static const char *const ids[] = {"temp_c_max", "sm_clock_mhz_min", "agree_sm_clock",
                                      "thermal",    "stress",           NULL};
    gq_judge_row(rows, "Whole-node health", ev, res, gq_judge_row_verdict(cl, ids, ng > 0),
                 "Accept the operating envelope");
}

/* Placement: the roles solved on the measured paths and the gain over the naive mapping. */
void gq_judge_row_placement(gq_card *rows, const gq_checklist *cl, const gq_card_placement_view *pl)
{
    char ev[512], res[512], a[32], b[32], c[32];
    snprintf(
        ev, sizeof ev,
        "%s prefill, %s decode, %s offload workers%s; the implied pattern measured against the naive one",
        gq_judge_f1(pl->prefill, a, sizeof a), gq_judge_f1(pl->decode, b, sizeof b),
        gq_judge_f1(pl->offload, c, sizeof c), pl->default_split ? " (default split)" : "");
    res[0] = 0;
    size_t used = 0;
    if (pl->npairs_count) {
        used += (size_t)snprintf(res, sizeof res, "pairs");
        for (int i = 0; i < pl->npairs; i++)
            if (used < sizeof res - 24)
                used += (size_t)snprintf(res + used, sizeof res - used, " %d→%d", pl->pair_prefill[i],
                                         pl->pair_decode[i]);
    }
    if (pl->noffload_count && used < sizeof res - 40) {
        used += (size_t)snprintf(res + used, sizeof res - used, "%soffload on", used ? "; " : "");
        for (int i = 0; i < pl->noffload; i++)
            if (used < sizeof res - 16)
                used += (size_t)snprintf(res + used, sizeof res - used, "%s %d", i ? "," : "",
                                         pl->offload_gpu[i]);
    }
    double gain = pl->gain;
    if (isfinite(gain) && used < sizeof res - 40)
        used += (size_t)snprintf(res + used, sizeof res - used, "; %.2f× the naive mapping", gain);
    if (!used)
        snprintf(res, sizeof res, "not computed");
    static const char *const ids[] = {NULL};
    gq_judge_row(rows, "Placement", ev, res, gq_judge_row_verdict(cl, ids, pl->present),
                 "Keep heavy exchanges on fast paths; verify in the serving stack");
}

/* Collectives: the TP-2 groups chosen from measured all-reduce, each group's
 * bus bandwidth alone and with every group at once (the slowest of each). */
void gq_judge_row_collectives(gq_card *rows, const gq_checklist *cl, const gq_card_coll_view *c)
{
    char ev[512], res[512], grp[256] = "", a[32], b[32];
    size_t used = 0;
    for (int g = 0; c->present && g < c->ngroups && used < sizeof grp - 24; g++) {
        char s[96];
        gq_tp_set_str(c->set[g], s, sizeof s);
        used += (size_t)snprintf(grp + used, sizeof grp - used, "%s{%s}", g ? " " : "", s);
    }
    if (c->present)
        snprintf(ev, sizeof ev,
                 "NCCL all-reduce of %.0f MiB, groups of %d GPUs chosen from %d group%s measured alone, then "
                 "every chosen group at once",
                 (double)c->bytes / (1 << 20), c->tp, c->measured, c->measured == 1 ? "" : "s");
    else
        snprintf(
            ev, sizeof ev,
            "NCCL all-reduce of %.0f MiB on tensor-parallel groups of 2 GPUs chosen from measured groups, "
            "alone and all at once",
            (double)GQ_CARD_COLL_BYTES / (1 << 20));
    if (c->present)
        snprintf(res, sizeof res, "groups %s: slowest %s GB/s busbw alone, %s GB/s all at once%s", grp,
                 gq_judge_f1(c->min_alone, a, sizeof a), gq_judge_f1(c->min_once, b, sizeof b),
                 c->kept_naive ? " (the naive groups kept)" : "");
    else
        snprintf(res, sizeof res, "not measured");
    static const char *const ids[] = {"allreduce_busbw_gbps_min", NULL};
    gq_judge_row(rows, "Collectives", ev, res, gq_judge_row_verdict(cl, ids, c->present),
                 "Choose tensor-parallel groups");
}

/* Measurement integrity: impossible figures, overlap, data checks and errors. */
void gq_judge_row_integrity(gq_card *rows, const gq_checklist *cl, const gq_card_facts *f)
{
    char ev[512], res[512];
    snprintf(ev, sizeof ev,
             "%d records: every figure against its path's capacity, overlap of concurrent windows, "
             "data pattern checks",
             f->n_records);
    int n = snprintf(res, sizeof res, "%d impossible, %d overlap-invalid, %d failed checks, %d errors",
                     f->n_impossible, f->n_overlap_invalid, f->n_verify_failed, f->n_errors);
    /* Figures taken while a GPU was busy are left out: the row cannot say
     * "trust the figures" (the card's verdict says whether it was allowed). */
    if (f->n_contaminated && n > 0 && (size_t)n < sizeof res)
        snprintf(res + n, sizeof res - (size_t)n, ", %d contaminated (a GPU was busy)", f->n_contaminated);
    static const char *const ids[] = {"impossible", "verify", "errors", "overlap", NULL};
    const char *v = gq_judge_row_verdict(cl, ids, f->n_records > 0);
    if (f->n_contaminated && strcmp(v, "fail"))
        v = "warn";
    gq_judge_row(rows, "Measurement integrity", ev, res, v, "Trust the figures above");
}

/* Application validation: not measured by gpuqual. */
void gq_judge_row_application(gq_card *rows)
{
    gq_judge_row(rows, "Application validation",
                 "TTFT, ITL, throughput, tails and errors under the target workload",
                 "not measured by gpuqual: run the serving stack on the placement above", "skip",
                 "Confirm the infrastructure choices improve service");
}
