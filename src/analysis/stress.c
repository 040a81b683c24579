#include "analysis/stress.h"
#include "analysis/stress_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/units.h"

/* Copy a message into a fixed field, cut at its size. */
static void copy_msg(char *dst, size_t n, const char *src)
{
    size_t l = strnlen(src ? src : "", n - 1);
    memcpy(dst, src ? src : "", l);
    dst[l] = 0;
}

/* ---- options ------------------------------------------------------------ */

void gq_stress_opts_default(gq_stress_opts *o)
{
    memset(o, 0, sizeof *o);
    o->duration_s = 300;
    o->interval_s = 1;
    o->precision = GQ_PREC_BF16;
}

void gq_stress_rules_default(gq_stress_rules *r)
{
    r->clock_spread_warn = 0.05;
    r->loaded_util_pct = 90;
}

#define GQ_STRESS_MAX_S (7 * 86400.0)

int gq_stress_opts_check(const gq_stress_opts *o, gq_err *err)
{
    if (!(o->duration_s > 0) || !isfinite(o->duration_s))
        return gq_err_set(err, GQ_E_USAGE, "--duration must be greater than zero, e.g. 5m");
    if (!(o->interval_s >= 0.1))
        return gq_err_set(err, GQ_E_USAGE, "--interval %gs is below the 0.1 s minimum sampling interval",
                          o->interval_s);
    if (o->interval_s > o->duration_s)
        return gq_err_set(err, GQ_E_USAGE,
                          "--interval %gs is longer than --duration %gs; sample at most once per duration",
                          o->interval_s, o->duration_s);
    /* every sample is kept in memory for the summary and the CSV */
    if (o->duration_s > GQ_STRESS_MAX_S)
        return gq_err_set(err, GQ_E_USAGE, "--duration %gs is longer than the %gh maximum (7 days)",
                          o->duration_s, GQ_STRESS_MAX_S / 3600);
    if (o->duration_s / o->interval_s > GQ_STRESS_MAX_S)
        return gq_err_set(
            err, GQ_E_USAGE,
            "--duration %gs at --interval %gs is more than %.0f samples; use a longer --interval",
            o->duration_s, o->interval_s, GQ_STRESS_MAX_S);
    if (o->ngpus < 1 || o->ngpus > GQ_MAX_GPUS)
        return gq_err_set(err, GQ_E_USAGE, "stress needs at least one GPU");
    return GQ_OK;
}

int gq_stress_parse_precision(const char *s, gq_precision *p, gq_err *err)
{
    static const struct {
        const char *name;
        gq_precision p;
    } tab[] = {
        {"bf16", GQ_PREC_BF16},
        {"fp16", GQ_PREC_FP16},
        {"fp32", GQ_PREC_FP32},
        {"fp64", GQ_PREC_FP64},
    };
    for (size_t i = 0; s && i < sizeof tab / sizeof tab[0]; i++)
        if (!strcasecmp(s, tab[i].name)) {
            *p = tab[i].p;
            return GQ_OK;
        }
    return gq_err_set(err, GQ_E_USAGE, "--precision '%s' is not known, expected bf16, fp16, fp32 or fp64",
                      s ? s : "");
}

/* ---- result ------------------------------------------------------------- */

void gq_stress_sample_unknown(gq_sample *s)
{
    memset(s, 0, sizeof *s);
    s->t = NAN;
    s->temp_c = s->mem_temp_c = s->temp_slowdown_c = NAN;
    s->power_w = s->power_limit_w = NAN;
    s->sm_clock_mhz = s->mem_clock_mhz = NAN;
    s->util_pct = NAN;
    s->clock_reasons = GQ_STRESS_U64_UNKNOWN;
    s->pcie_gen = s->pcie_width = -1;
    s->pcie_replay = GQ_STRESS_U64_UNKNOWN;
    s->ecc_corrected = s->ecc_uncorrected = GQ_STRESS_U64_UNKNOWN;
    s->remapped_rows = -1;
    s->lost = false;
}

int gq_stress_point_push(gq_stress_gpu *g, const gq_stress_point *p)
{
    if (g->npoints == g->cap) {
        int cap = g->cap ? g->cap * 2 : 64;
        gq_stress_point *v = realloc(g->pts, (size_t)cap * sizeof *v);
        if (!v)
            return GQ_E_NOMEM;
        g->pts = v;
        g->cap = cap;
    }
    g->pts[g->npoints++] = *p;
    return GQ_OK;
}

void gq_stress_result_free(gq_stress_result *r)
{
    if (!r)
        return;
    for (int i = 0; i < GQ_MAX_GPUS; i++)
        free(r->gpu[i].pts);
    memset(r, 0, sizeof *r);
}

/* ---- summary and verdict ------------------------------------------------ */

const char *gq_stress_level_name(gq_stress_level l)
{
    switch (l) {
    case GQ_STRESS_PASS: return "pass";
    case GQ_STRESS_INFO: return "info";
    case GQ_STRESS_WARN: return "warn";
    case GQ_STRESS_FAIL: return "fail";
    }
    return "?";
}

static const struct {
    uint64_t bit;
    const char *name;
} reason_names[] = {
    {GQ_CLK_GPU_IDLE, "gpu_idle"},
    {GQ_CLK_APP_CLOCKS, "applications_clocks"},
    {GQ_CLK_SW_POWER_CAP, "sw_power_cap"},
    {GQ_CLK_HW_SLOWDOWN, "hw_slowdown"},
    {GQ_CLK_SYNC_BOOST, "sync_boost"},
    {GQ_CLK_SW_THERMAL, "sw_thermal"},
    {GQ_CLK_HW_THERMAL, "hw_thermal"},
    {GQ_CLK_HW_POWER_BRAKE, "hw_power_brake"},
    {GQ_CLK_DISPLAY_CLOCKS, "display_clocks"},
};

uint64_t gq_clock_reason_bit(const char *name)
{
    for (size_t i = 0; name && i < sizeof reason_names / sizeof reason_names[0]; i++)
        if (!strcmp(name, reason_names[i].name))
            return reason_names[i].bit;
    return 0;
}

const char *gq_clock_reasons_str(uint64_t bits, char *buf, size_t n)
{
    if (bits == GQ_STRESS_U64_UNKNOWN) {
        snprintf(buf, n, "unknown");
        return buf;
    }
    if (!bits) {
        snprintf(buf, n, "none");
        return buf;
    }
    size_t used = 0;
    buf[0] = 0;
    uint64_t rest = bits;
    for (size_t i = 0; i < sizeof reason_names / sizeof reason_names[0]; i++)
        if (bits & reason_names[i].bit) {
            rest &= ~reason_names[i].bit;
            int w =
                snprintf(buf + used, used < n ? n - used : 0, "%s%s", used ? "," : "", reason_names[i].name);
            if (w > 0)
                used += (size_t)w;
        }
    if (rest)
        snprintf(buf + used, used < n ? n - used : 0, "%s0x%llx", used ? "," : "", (unsigned long long)rest);
    return buf;
}

void gq_stress_add_finding(gq_stress_summary *s, gq_stress_level lvl, int gpu, const char *rule,
                           const char *fmt, ...)
{
    if (s->nfindings >= GQ_STRESS_MAX_FINDINGS) {
        s->nfindings_dropped++;
        if (lvl > s->verdict && lvl != GQ_STRESS_INFO)
            s->verdict = lvl;
        return;
    }
    gq_stress_finding *f = &s->findings[s->nfindings++];
    f->level = lvl;
    f->gpu = gpu;
    copy_msg(f->rule, sizeof f->rule, rule);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->text, sizeof f->text, fmt, ap);
    va_end(ap);
}

static int64_t counter_delta(uint64_t first, uint64_t last)
{
    if (first == GQ_STRESS_U64_UNKNOWN || last == GQ_STRESS_U64_UNKNOWN || last < first)
        return -1;
    return (int64_t)(last - first);
}

typedef struct mean {
    double sum;
    int n;
} mean;

static void mean_add(mean *m, double v)
{
    if (isfinite(v)) {
        m->sum += v;
        m->n++;
    }
}

static double mean_get(const mean *m)
{
    return m->n ? m->sum / m->n : NAN;
}

/* The summary's fields that come from the run itself, before any sample. */
static void summary_init(const gq_stress_gpu *g, gq_stress_gpu_summary *S)
{
    memset(S, 0, sizeof *S);
    S->gpu = g->gpu;
    copy_msg(S->name, sizeof S->name, g->name);
    S->power_limit_w = g->power_limit_w > 0 ? g->power_limit_w : NAN;
    S->temp_max_c = S->mem_temp_max_c = S->power_max_w = NAN;
    S->pcie_gen_min = S->pcie_width_min = -1;
    S->ecc_corrected = S->ecc_uncorrected = S->pcie_replay = -1;
    S->remapped_rows = S->remapped_delta = -1;
    S->gemms = g->gemms;
    S->faulty = g->faulty;
    S->lost = g->lost;
    S->errored = g->status != GQ_OK && !g->lost;
    S->xfer_gbps[0] = g->xfer_s[0] > 0 ? g->xfer_bytes[0] / g->xfer_s[0] / GQ_GB : NAN;
    S->xfer_gbps[1] = g->xfer_s[1] > 0 ? g->xfer_bytes[1] / g->xfer_s[1] / GQ_GB : NAN;
}

/* The summary's figures from the telemetry samples: maxima, averages over
 * the loaded samples, throttle reasons, the link and the counters' deltas.
 * Returns the number of loaded samples that were power-capped. */
static int summarize_samples(const gq_stress_gpu *g, const gq_stress_rules *rules, gq_stress_gpu_summary *S)
{
    mean temp = {0}, power = {0}, sm = {0}, mem = {0}, util = {0}, tfl = {0};
    int n_reasons_loaded = 0, n_capped = 0, n_reasons_all = 0, n_thermal = 0;
    int gen_seen_max = -1, width_seen_max = -1;
    const gq_sample *first = g->has_baseline ? &g->baseline : NULL, *last = NULL;
    if (first) {
        gen_seen_max = first->pcie_gen;
        width_seen_max = first->pcie_width;
    }
    for (int i = 0; i < g->npoints; i++) {
        const gq_stress_point *p = &g->pts[i];
        if (!p->has_sample)
            continue;
        const gq_sample *x = &p->s;
        if (!first)
            first = x;
        last = x;
        if (x->pcie_gen > gen_seen_max)
            gen_seen_max = x->pcie_gen;
        if (x->pcie_width > width_seen_max)
            width_seen_max = x->pcie_width;
        if (!p->loaded)
            continue;
        S->nsamples++;
        if (isfinite(x->temp_c) && !(x->temp_c <= S->temp_max_c))
            S->temp_max_c = x->temp_c;
        if (isfinite(x->mem_temp_c) && !(x->mem_temp_c <= S->mem_temp_max_c))
            S->mem_temp_max_c = x->mem_temp_c;
        if (isfinite(x->power_w) && !(x->power_w <= S->power_max_w))
            S->power_max_w = x->power_w;
        if (x->clock_reasons != GQ_STRESS_U64_UNKNOWN) {
            n_reasons_all++;
            S->reasons_seen |= x->clock_reasons;
            if (x->clock_reasons & GQ_CLK_THERMAL_MASK)
                n_thermal++;
        }
        if (isfinite(x->util_pct) && x->util_pct < rules->loaded_util_pct)
            continue;
        S->nloaded++;
        mean_add(&temp, x->temp_c);
        mean_add(&power, x->power_w);
        mean_add(&sm, x->sm_clock_mhz);
        mean_add(&mem, x->mem_clock_mhz);
        mean_add(&util, x->util_pct);
        mean_add(&tfl, p->tflops > 0 ? p->tflops : NAN);
        if (x->clock_reasons != GQ_STRESS_U64_UNKNOWN) {
            n_reasons_loaded++;
            if (x->clock_reasons & GQ_CLK_SW_POWER_CAP)
                n_capped++;
        }
        if (x->pcie_gen > 0 && (S->pcie_gen_min < 0 || x->pcie_gen < S->pcie_gen_min))
            S->pcie_gen_min = x->pcie_gen;
        if (x->pcie_width > 0 && (S->pcie_width_min < 0 || x->pcie_width < S->pcie_width_min))
            S->pcie_width_min = x->pcie_width;
    }
    S->temp_avg_c = mean_get(&temp);
    S->power_avg_w = mean_get(&power);
    S->sm_clock_avg_mhz = mean_get(&sm);
    S->mem_clock_avg_mhz = mean_get(&mem);
    S->util_avg_pct = mean_get(&util);
    S->tflops_avg = mean_get(&tfl);
    S->power_capped_pct = n_reasons_loaded ? 100.0 * n_capped / n_reasons_loaded : NAN;
    S->thermal_pct = n_reasons_all ? 100.0 * n_thermal / n_reasons_all : NAN;
    S->thermal_slowdown = (S->reasons_seen & (GQ_CLK_SW_THERMAL | GQ_CLK_HW_THERMAL)) != 0;
    S->hw_slowdown = (S->reasons_seen & GQ_CLK_HW_SLOWDOWN) != 0;
    S->power_brake = (S->reasons_seen & GQ_CLK_HW_POWER_BRAKE) != 0;
    if (!isfinite(S->power_limit_w) && last && isfinite(last->power_limit_w))
        S->power_limit_w = last->power_limit_w;
    /* The link's maximum: the topology's, or the best it was seen at, so a
     * link that was x16 idle and x8 under load is caught even when the
     * maximum could not be read. */
    S->pcie_gen_max = g->pcie_gen_max > gen_seen_max ? g->pcie_gen_max : gen_seen_max;
    S->pcie_width_max = g->pcie_width_max > width_seen_max ? g->pcie_width_max : width_seen_max;
    S->link_down = (S->pcie_gen_min > 0 && S->pcie_gen_max > 0 && S->pcie_gen_min < S->pcie_gen_max) ||
                   (S->pcie_width_min > 0 && S->pcie_width_max > 0 && S->pcie_width_min < S->pcie_width_max);
    if (first && last) {
        S->ecc_corrected = counter_delta(first->ecc_corrected, last->ecc_corrected);
        S->ecc_uncorrected = counter_delta(first->ecc_uncorrected, last->ecc_uncorrected);
        S->pcie_replay = counter_delta(first->pcie_replay, last->pcie_replay);
        S->remapped_rows = last->remapped_rows;
        if (first->remapped_rows >= 0 && last->remapped_rows >= 0)
            S->remapped_delta = last->remapped_rows - first->remapped_rows;
    }
    return n_capped;
}

/* The GPU's findings, most severe first (docs/method-stress.md lists the
 * rules). */
static void gpu_findings(const gq_stress_gpu *g, const gq_stress_rules *rules, const gq_stress_gpu_summary *S,
                         int n_capped, gq_stress_summary *s)
{
    int id = g->gpu;
    char rs[160];
    if (!g->started)
        gq_stress_add_finding(s, GQ_STRESS_FAIL, id, "gpu-error", "GPU %d: the load could not start: %s", id,
                              g->error);
    else if (g->lost)
        gq_stress_add_finding(s, GQ_STRESS_FAIL, id, "gpu-lost",
                              "GPU %d dropped off after %.0f s under load: %s", id, g->lost_t, g->error);
    else if (g->status != GQ_OK)
        gq_stress_add_finding(s, GQ_STRESS_FAIL, id, "gpu-error",
                              "GPU %d: the load stopped with an error after %.0f s: %s", id, g->lost_t,
                              g->error);
    if (g->faulty > 0)
        gq_stress_add_finding(
            s, GQ_STRESS_FAIL, id, "faulty-result",
            "GPU %d: %llu faulty result elements in %llu GEMMs (checked against the first result)", id,
            (unsigned long long)g->faulty, (unsigned long long)g->gemms);
    if (S->ecc_uncorrected > 0)
        gq_stress_add_finding(s, GQ_STRESS_FAIL, id, "ecc-uncorrected",
                              "GPU %d: %lld uncorrected ECC error%s during the run", id,
                              (long long)S->ecc_uncorrected, S->ecc_uncorrected == 1 ? "" : "s");
    if (S->reasons_seen & GQ_CLK_THERMAL_MASK)
        gq_stress_add_finding(s, GQ_STRESS_FAIL, id, "thermal-slowdown",
                              "GPU %d: %s in %.0f%% of samples under load (max %.0f C)", id,
                              gq_clock_reasons_str(S->reasons_seen & GQ_CLK_THERMAL_MASK, rs, sizeof rs),
                              S->thermal_pct, S->temp_max_c);
    if (S->link_down)
        gq_stress_add_finding(s, GQ_STRESS_FAIL, id, "link-down",
                              "GPU %d: PCIe link at Gen%d x%d under load; it can do Gen%d x%d", id,
                              S->pcie_gen_min, S->pcie_width_min, S->pcie_gen_max, S->pcie_width_max);
    if (g->xfer_status != GQ_OK)
        gq_stress_add_finding(s, GQ_STRESS_FAIL, id, "transfer-error",
                              "GPU %d: host<->GPU transfers during the load failed: %s", id, g->xfer_error);
    if (S->ecc_corrected > 0)
        gq_stress_add_finding(s, GQ_STRESS_WARN, id, "ecc-corrected",
                              "GPU %d: %lld corrected ECC error%s during the run", id,
                              (long long)S->ecc_corrected, S->ecc_corrected == 1 ? "" : "s");
    if (S->pcie_replay > 0)
        gq_stress_add_finding(s, GQ_STRESS_WARN, id, "pcie-replay",
                              "GPU %d: PCIe replay counter rose by %lld during the run", id,
                              (long long)S->pcie_replay);
    if (S->remapped_delta > 0)
        gq_stress_add_finding(s, GQ_STRESS_WARN, id, "remapped-rows",
                              "GPU %d: %d memory rows remapped during the run", id, S->remapped_delta);
    if (g->telemetry_unsupported)
        gq_stress_add_finding(
            s, GQ_STRESS_WARN, id, "no-telemetry",
            "GPU %d: no telemetry (%s); temperature, power, clocks and counters were not judged", id,
            g->sample_error);
    else if (g->sample_errors > 0)
        gq_stress_add_finding(s, GQ_STRESS_WARN, id, "telemetry-error",
                              "GPU %d: %d telemetry samples failed: %s", id, g->sample_errors,
                              g->sample_error);
    if (g->started && S->nsamples > 0 && S->nloaded == 0)
        gq_stress_add_finding(
            s, GQ_STRESS_WARN, id, "low-load",
            "GPU %d: utilisation never reached %.0f%% under load; averages are over no sample", id,
            rules->loaded_util_pct);
    if (g->started && g->status == GQ_OK && g->gemms == 0)
        gq_stress_add_finding(s, GQ_STRESS_WARN, id, "no-progress",
                              "GPU %d: no GEMM completed during the run", id);
    if (n_capped > 0)
        gq_stress_add_finding(
            s, GQ_STRESS_INFO, id, "power-cap",
            "GPU %d: power-capped in %.0f%% of loaded samples (avg %.0f W, limit %.0f W): expected near "
            "the limit, not a fault",
            id, S->power_capped_pct, S->power_avg_w, S->power_limit_w);
}

static void summarize_gpu(const gq_stress_gpu *g, const gq_stress_rules *rules, gq_stress_gpu_summary *S,
                          gq_stress_summary *s)
{
    summary_init(g, S);
    int n_capped = summarize_samples(g, rules, S);
    gpu_findings(g, rules, S, n_capped, s);
}

void gq_stress_summarize(const gq_stress_result *r, const gq_stress_rules *rules, gq_stress_summary *s)
{
    memset(s, 0, sizeof *s);
    if (rules)
        s->rules = *rules;
    else
        gq_stress_rules_default(&s->rules);
    s->ngpu = r->ngpu;
    s->interrupted = r->interrupted;
    s->clock_spread = NAN;
    for (int k = 0; k < r->ngpu; k++) {
        int before = s->nfindings;
        summarize_gpu(&r->gpu[k], &s->rules, &s->gpu[k], s);
        gq_stress_level v = GQ_STRESS_PASS;
        for (int i = before; i < s->nfindings; i++)
            if (s->findings[i].level > v && s->findings[i].level != GQ_STRESS_INFO)
                v = s->findings[i].level;
        s->gpu[k].verdict = v;
        if (isfinite(s->gpu[k].power_avg_w))
            s->power_total_avg_w += s->gpu[k].power_avg_w;
    }

    /* Clock spread across GPUs of the same model that ran the load cleanly
     * enough to have averages. */
    bool done[GQ_MAX_GPUS] = {0};
    for (int a = 0; a < r->ngpu; a++) {
        if (done[a])
            continue;
        double lo = NAN, hi = NAN;
        int ilo = -1, ihi = -1, n = 0;
        for (int b = a; b < r->ngpu; b++) {
            if (strcmp(s->gpu[a].name, s->gpu[b].name) != 0)
                continue;
            done[b] = true;
            double c = s->gpu[b].sm_clock_avg_mhz;
            /* A GPU that already fails (throttled, lost, ...) is reported
             * once, as a failure, not again as spread. */
            if (!isfinite(c) || s->gpu[b].verdict == GQ_STRESS_FAIL || s->gpu[b].nloaded == 0)
                continue;
            n++;
            if (ilo < 0 || c < lo)
                lo = c, ilo = b;
            if (ihi < 0 || c > hi)
                hi = c, ihi = b;
        }
        if (n < 2 || !(lo > 0))
            continue;
        double spread = (hi - lo) / lo;
        if (!isfinite(s->clock_spread) || spread > s->clock_spread) {
            s->clock_spread = spread;
            copy_msg(s->clock_spread_model, sizeof s->clock_spread_model, s->gpu[a].name);
        }
        if (spread > s->rules.clock_spread_warn)
            gq_stress_add_finding(
                s, GQ_STRESS_WARN, -1, "clock-spread",
                "%s: average SM clocks differ by %.1f%% (GPU %d %.0f MHz to GPU %d %.0f MHz), above %.1f%%",
                s->gpu[a].name[0] ? s->gpu[a].name : "GPUs", 100 * spread, s->gpu[ilo].gpu, lo,
                s->gpu[ihi].gpu, hi, 100 * s->rules.clock_spread_warn);
    }
    if (r->with_transfers) {
        bool any = false;
        for (int k = 0; k < r->ngpu; k++)
            any |= isfinite(s->gpu[k].xfer_gbps[0]) || isfinite(s->gpu[k].xfer_gbps[1]);
        if (r->xfer_error[0])
            gq_stress_add_finding(s, GQ_STRESS_WARN, -1, "transfers",
                                  "--with-transfers: host<->GPU transfers %s: %s",
                                  any ? "stopped early" : "could not run", r->xfer_error);
        else if (!any)
            gq_stress_add_finding(s, GQ_STRESS_WARN, -1, "transfers",
                                  "--with-transfers: no host<->GPU transfer completed");
    }
    gq_stress_peer_findings(r, s);
    if (r->interrupted)
        gq_stress_add_finding(s, GQ_STRESS_INFO, -1, "interrupted",
                              "interrupted after %.0f s of %.0f s; judged on what ran", r->elapsed_s,
                              r->duration_s);

    for (int i = 0; i < s->nfindings; i++)
        if (s->findings[i].level > s->verdict && s->findings[i].level != GQ_STRESS_INFO)
            s->verdict = s->findings[i].level;
}
