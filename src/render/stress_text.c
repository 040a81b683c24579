/* `gpuqual stress`'s table (render/command_text.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/units.h"
#include "render/command_text.h"

static const char *num(double v, const char *fmt, char *buf, size_t n)
{
    if (!isfinite(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, fmt, v);
    return buf;
}

static const char *level_word(gq_stress_level l)
{
    switch (l) {
    case GQ_STRESS_PASS: return "PASS";
    case GQ_STRESS_INFO: return "info";
    case GQ_STRESS_WARN: return "WARN";
    case GQ_STRESS_FAIL: return "FAIL";
    }
    return "?";
}

static void link_str(const gq_stress_gpu_summary *g, char *buf, size_t n)
{
    if (g->pcie_gen_min > 0 && g->pcie_width_min > 0)
        snprintf(buf, n, "Gen%d x%d%s", g->pcie_gen_min, g->pcie_width_min, g->link_down ? " (down)" : "");
    else
        snprintf(buf, n, "-");
}

static void errors_str(const gq_stress_gpu_summary *g, char *buf, size_t n)
{
    char a[24], b[24], c[24]; /* each at most 20 digits */
    snprintf(a, sizeof a, g->ecc_corrected >= 0 ? "%lld" : "?", (long long)g->ecc_corrected);
    snprintf(b, sizeof b, g->ecc_uncorrected >= 0 ? "%lld" : "?", (long long)g->ecc_uncorrected);
    snprintf(c, sizeof c, g->pcie_replay >= 0 ? "%lld" : "?", (long long)g->pcie_replay);
    snprintf(buf, n, "%s/%s/%s", a, b, c);
}

/* The vendor prefix says nothing on a table of NVIDIA GPUs; the rest of the
 * name is kept whole ("RTX PRO 6000 Blackwell Server Edition"). */
static const char *short_name(const char *name)
{
    return strncmp(name, "NVIDIA ", 7) ? name : name + 7;
}

/* The findings, power capping on every GPU near its limit told once. */
static void print_findings(FILE *f, const gq_stress_summary *s, bool markdown)
{
    fprintf(f, "\n");
    /* Power capping is expected on every GPU near its limit: one line
     * for all of them rather than one per GPU. */
    char gpus[256] = "";
    int ncap = 0;
    double lo = NAN, hi = NAN;
    for (int i = 0; i < s->nfindings; i++) {
        const gq_stress_finding *x = &s->findings[i];
        if (strcmp(x->rule, "power-cap") != 0)
            fprintf(f, markdown ? "- %s: %s\n" : "  %-4s  %s\n", level_word(x->level), x->text);
    }
    for (int k = 0; k < s->ngpu; k++) {
        const gq_stress_gpu_summary *g = &s->gpu[k];
        if (!(g->power_capped_pct > 0))
            continue;
        size_t l = strlen(gpus);
        snprintf(gpus + l, sizeof gpus - l, "%s%d", ncap ? "," : "", g->gpu);
        ncap++;
        if (!(g->power_capped_pct >= lo))
            lo = g->power_capped_pct;
        if (!(g->power_capped_pct <= hi))
            hi = g->power_capped_pct;
    }
    if (ncap) {
        char range[32];
        if (lo == hi || fabs(hi - lo) < 0.5)
            snprintf(range, sizeof range, "%.0f%%", hi);
        else
            snprintf(range, sizeof range, "%.0f-%.0f%%", lo, hi);
        fprintf(f,
                markdown ? "- %s: GPU%s %s power-capped in %s of loaded samples: expected near the "
                           "limit, not a fault\n"
                         : "  %-4s  GPU%s %s power-capped in %s of loaded samples: expected near the "
                           "limit, not a fault\n",
                level_word(GQ_STRESS_INFO), ncap > 1 ? "s" : "", gpus, range);
    }
    if (s->nfindings_dropped)
        fprintf(f, markdown ? "- ... and %d more findings\n" : "  ...   and %d more findings\n",
                s->nfindings_dropped);
}

void gq_render_stress_table(FILE *f, const gq_stress_result *r, const gq_stress_summary *s, bool markdown)
{
    char b[12][32];
    int namew = 4; /* the name column: as wide as the longest name */
    for (int k = 0; k < s->ngpu; k++)
        if ((int)strlen(short_name(s->gpu[k].name)) > namew)
            namew = (int)strlen(short_name(s->gpu[k].name));
    if (markdown)
        fprintf(
            f,
            "## Stress: %s, %.0f s of %.0f s%s\n\n"
            "| GPU | name | avg C | max C | avg W | limit W | avg SM MHz | power-capped | thermal slowdown | "
            "PCIe under load | ECC c/u, replay | faulty | TFLOP/s | verdict |\n"
            "|---:|---|---:|---:|---:|---:|---:|---:|---|---|---|---:|---:|---|\n",
            gq_precision_name(r->precision), r->elapsed_s, r->duration_s, r->simulated ? " (simulated)" : "");
    else
        fprintf(f,
                "stress: %s GEMMs, %.0f s of %.0f s, sampled every %g s%s%s\n\n"
                "%3s  %-*s %6s %6s %7s %7s %7s %6s %8s %-15s %-11s %7s %8s  %s\n",
                gq_precision_name(r->precision), r->elapsed_s, r->duration_s, r->interval_s,
                r->with_transfers ? ", with host<->GPU transfers" : "", r->simulated ? " (simulated)" : "",
                "GPU", namew, "name", "avg C", "max C", "avg W", "limit W", "SM MHz", "capped", "thermal",
                "PCIe load", "ECC c/u/rpl", "faulty", "TFLOP/s", "verdict");
    for (int k = 0; k < s->ngpu; k++) {
        const gq_stress_gpu_summary *g = &s->gpu[k];
        char link[48], errs[80];
        link_str(g, link, sizeof link);
        errors_str(g, errs, sizeof errs);
        const char *name = short_name(g->name);
        const char *thermal = g->thermal_slowdown || g->hw_slowdown || g->power_brake ? "YES" : "no";
        if (markdown)
            fprintf(f, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %llu | %s | %s |\n", g->gpu,
                    g->name, num(g->temp_avg_c, "%.1f", b[0], 32), num(g->temp_max_c, "%.0f", b[1], 32),
                    num(g->power_avg_w, "%.0f", b[2], 32), num(g->power_limit_w, "%.0f", b[3], 32),
                    num(g->sm_clock_avg_mhz, "%.0f", b[4], 32), num(g->power_capped_pct, "%.0f%%", b[5], 32),
                    thermal, link, errs, (unsigned long long)g->faulty, num(g->tflops_avg, "%.0f", b[6], 32),
                    level_word(g->verdict));
        else
            fprintf(f, "%3d  %-*s %6s %6s %7s %7s %7s %6s %8s %-15s %-11s %7llu %8s  %s\n", g->gpu, namew,
                    name, num(g->temp_avg_c, "%.1f", b[0], 32), num(g->temp_max_c, "%.0f", b[1], 32),
                    num(g->power_avg_w, "%.0f", b[2], 32), num(g->power_limit_w, "%.0f", b[3], 32),
                    num(g->sm_clock_avg_mhz, "%.0f", b[4], 32), num(g->power_capped_pct, "%.0f%%", b[5], 32),
                    thermal, link, errs, (unsigned long long)g->faulty, num(g->tflops_avg, "%.0f", b[6], 32),
                    level_word(g->verdict));
    }
    if (r->with_transfers) {
        fprintf(f,
                markdown ? "\nHost<->GPU traffic during the load (GB/s):" : "\nhost<->GPU during the load:");
        for (int k = 0; k < s->ngpu; k++)
            fprintf(f, " GPU %d %s/%s", s->gpu[k].gpu, num(s->gpu[k].xfer_gbps[0], "%.1f", b[0], 32),
                    num(s->gpu[k].xfer_gbps[1], "%.1f", b[1], 32));
        fprintf(f, "%s\n", markdown ? "" : " GB/s (h2d/d2h)");
    }
    fprintf(f, "\n%snode: %d GPU%s drew %.0f W together (GPU telemetry, not wall power)", markdown ? "" : "",
            s->ngpu, s->ngpu == 1 ? "" : "s", s->power_total_avg_w);
    if (isfinite(s->clock_spread))
        fprintf(f, "; average SM clocks differ by %.1f%% from lowest to highest (%s; warn above %.1f%%)",
                100 * s->clock_spread, s->clock_spread_model, 100 * s->rules.clock_spread_warn);
    fprintf(f, ".\n");
    if (s->nfindings)
        print_findings(f, s, markdown);
    fprintf(f, "\n%sverdict: %s%s%s\n", markdown ? "**" : "", level_word(s->verdict), markdown ? "**" : "",
            r->interrupted ? " (interrupted: judged on what ran)" : "");
}
