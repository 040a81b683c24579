#include "analysis/domains.h"
#include "analysis/expect.h"
#include "analysis/expect_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/units.h"

static const struct {
    const char *name;
    const char *unit;
    bool is_min;
    bool integer;
    const char *what; /* for sentences */
} keys[GQ_EXK_COUNT] = {
    [GQ_EXK_COUNT_MIN] =
        {.name = "count_min", .unit = "GPUs", .is_min = true, .integer = true, .what = "GPUs of this model"},
    [GQ_EXK_MEMORY_MIB_MIN] = {.name = "memory_mib_min", .unit = "MiB", .is_min = true, .what = "memory"},
    [GQ_EXK_POWER_LIMIT_W_MIN] = {.name = "power_limit_w_min",
                                  .unit = "W",
                                  .is_min = true,
                                  .what = "power limit"},
    [GQ_EXK_PCIE_GEN_MIN] =
        {.name = "pcie_gen_min", .unit = "gen", .is_min = true, .integer = true, .what = "PCIe generation"},
    [GQ_EXK_PCIE_WIDTH_MIN] =
        {.name = "pcie_width_min", .unit = "lanes", .is_min = true, .integer = true, .what = "PCIe width"},
    [GQ_EXK_H2D_GBPS_MIN] = {.name = "h2d_gbps_min",
                             .unit = "GB/s",
                             .is_min = true,
                             .what = "host-to-GPU bandwidth alone"},
    [GQ_EXK_D2H_GBPS_MIN] = {.name = "d2h_gbps_min",
                             .unit = "GB/s",
                             .is_min = true,
                             .what = "GPU-to-host bandwidth alone"},
    [GQ_EXK_P2P_GBPS_MIN] = {.name = "p2p_gbps_min",
                             .unit = "GB/s",
                             .is_min = true,
                             .what = "GPU-to-GPU bandwidth of every pair"},
    [GQ_EXK_NVLINK_GBPS_MIN] = {.name = "nvlink_gbps_min",
                                .unit = "GB/s",
                                .is_min = true,
                                .what = "GPU-to-GPU bandwidth of every NVLink pair"},
    [GQ_EXK_HOST_LATENCY_NS_MAX] = {.name = "host_latency_ns_max", .unit = "ns", .what = "host-GPU latency"},
    [GQ_EXK_P2P_LATENCY_NS_MAX] = {.name = "p2p_latency_ns_max", .unit = "ns", .what = "GPU-GPU latency"},
    [GQ_EXK_TEMP_C_MAX] = {.name = "temp_c_max", .unit = "°C", .what = "temperature under load"},
    [GQ_EXK_SM_CLOCK_MHZ_MIN] = {.name = "sm_clock_mhz_min",
                                 .unit = "MHz",
                                 .is_min = true,
                                 .what = "average SM clock under load"},
    [GQ_EXK_SPREAD_PCT_MAX] = {.name = "spread_pct_max", .unit = "%", .what = "spread between GPUs"},
    [GQ_EXK_ALLREDUCE_BUSBW_GBPS_MIN] = {.name = "allreduce_busbw_gbps_min",
                                         .unit = "GB/s",
                                         .is_min = true,
                                         .what = "all-reduce bus bandwidth of the TP-2 groups at once"},
};

/* Defaults only (no models): the relative checks' percentages. */
static void expect_init(gq_expect *ex);

void gq_expect_init(gq_expect *ex)
{
    expect_init(ex);
}

static void expect_init(gq_expect *ex)
{
    memset(ex, 0, sizeof *ex);
    ex->agree_pct = 5.0;
    ex->agree_fail_pct = 20.0;
}

static bool icontains(const char *hay, const char *needle)
{
    size_t ln = strlen(needle);
    if (!ln) /* only --set's catch-all model has no match (files need one): every GPU */
        return true;
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < ln && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == ln)
            return true;
    }
    return false;
}

int gq_expect_match(const gq_expect *ex, const char *gpu_name)
{
    if (!ex || !gpu_name)
        return -1;
    for (int m = 0; m < ex->nmodels; m++)
        if (icontains(gpu_name, ex->models[m].match))
            return m;
    return -1;
}

/* Builder for one check; keeps push errors in one place. */
typedef struct judge {
    gq_checklist *out;
    int rc;
    const gq_card_facts *f;
    /* gq_expect_open_host: the GPUs an undetermined host check rests on */
    bool *open_h2d, *open_d2h;
    int nopen;
} judge;

/* The last check added: decided on [lo, hi] (undetermined when und). */
static void last_interval(judge *J, double lo, double hi, bool und)
{
    if (J->rc || J->out->n <= 0)
        return;
    gq_check *c = &J->out->v[J->out->n - 1];
    c->figure_lo = lo;
    c->figure_hi = hi;
    c->undetermined = und;
}

/* Mark GPU position i's host figure (field 0 h2d, 1 d2h) as one an
 * undetermined check rests on. */
static void mark_open(judge *J, int i, int field)
{
    bool *v = field == 0 ? J->open_h2d : field == 1 ? J->open_d2h : NULL;
    if (v && i >= 0 && i < GQ_MAX_GPUS && !v[i]) {
        v[i] = true;
        J->nopen++;
    }
}

__attribute__((format(printf, 9, 10))) static void add(judge *J, const char *id, const char *subject,
                                                       const char *source, gq_verdict v, double figure,
                                                       double threshold, const char *unit, const char *fmt,
                                                       ...)
{
    if (J->rc)
        return;
    gq_check c;
    memset(&c, 0, sizeof c);
    c.figure_lo = c.figure_hi = NAN;
    snprintf(c.id, sizeof c.id, "%s", id);
    snprintf(c.subject, sizeof c.subject, "%s", subject);
    snprintf(c.source, sizeof c.source, "%s", source);
    c.verdict = v;
    c.figure = figure;
    c.threshold = threshold;
    snprintf(c.unit, sizeof c.unit, "%s", unit ? unit : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c.text, sizeof c.text, fmt, ap);
    va_end(ap);
    J->rc = gq_checklist_push(J->out, &c);
}

/* Verdict of a figure against a threshold; *decider gets the threshold that
 * decided it (fail's for fail and pass, warn's for warn). */
static gq_verdict apply(const gq_threshold *t, bool is_min, double v, double *decider)
{
    *decider = t->fail;
    if (is_min ? v < t->fail : v > t->fail)
        return GQ_V_FAIL;
    if (t->has_warn && (is_min ? v < t->warn : v > t->warn)) {
        *decider = t->warn;
        return GQ_V_WARN;
    }
    if (!isfinite(t->fail) && t->has_warn)
        *decider = t->warn;
    return GQ_V_PASS;
}

static const char *fmtv(double v, char *b, size_t n)
{
    if (!isfinite(v))
        snprintf(b, n, "n/a");
    else if (fabs(v) >= 100 || v == floor(v))
        snprintf(b, n, "%.0f", v);
    else
        snprintf(b, n, "%.1f", v);
    return b;
}

/* One per-GPU threshold check; lo, hi: the figure's interval (NAN: none;
 * field: 0 h2d, 1 d2h, -1 other, for gq_expect_open_host). */
static void gpu_check(judge *J, const gq_expect_model *m, gq_expect_key k, const gq_gpu_facts *g,
                      double figure, bool idle_reading, double lo, double hi, int field)
{
    const gq_threshold *t = &m->th[k];
    if (!t->set)
        return;
    char subj[128], a[32], b[32];
    snprintf(subj, sizeof subj, "gpu:%d", g->index);
    if (!isfinite(figure) || figure < 0) {
        add(J, keys[k].name, subj, "expect", GQ_V_SKIP, NAN, t->fail, keys[k].unit,
            "GPU %d: %s not measured in this run; %s not checked.", g->index, keys[k].what, keys[k].name);
        return;
    }
    double thr;
    gq_verdict v = apply(t, keys[k].is_min, figure, &thr);
    if (isfinite(lo) && isfinite(hi) && lo <= figure && hi >= figure) {
        double tl, th;
        gq_verdict vl = apply(t, keys[k].is_min, lo, &tl), vh = apply(t, keys[k].is_min, hi, &th);
        if (vl != vh) {
            /* the interval straddles a threshold: neither verdict is known */
            double at = vl == GQ_V_FAIL || vh == GQ_V_FAIL ? t->fail : t->warn;
            char c[32], d[32];
            add(J, keys[k].name, subj, "expect", GQ_V_WARN, figure, at, keys[k].unit,
                "GPU %d (%s): %s %s %s (%s-%s from its rounds) straddles the %s %s %s: undetermined.",
                g->index, g->name, keys[k].what, fmtv(figure, a, sizeof a), keys[k].unit,
                fmtv(lo, b, sizeof b), fmtv(hi, c, sizeof c),
                at == t->fail ? "threshold" : "warning threshold", fmtv(at, d, sizeof d), keys[k].unit);
            last_interval(J, lo, hi, true);
            mark_open(J, (int)(g - J->f->gpu), field);
            return;
        }
    }
    const char *rel = keys[k].is_min ? (v == GQ_V_PASS ? ">=" : "below") : (v == GQ_V_PASS ? "<=" : "above");
    if (idle_reading && v == GQ_V_FAIL) {
        /* PCIe links slow down at idle to save power: an idle reading alone
         * cannot fail the card. */
        add(J, keys[k].name, subj, "expect", GQ_V_WARN, figure, thr, keys[k].unit,
            "GPU %d: %s %s %s is below the expected %s, but it was read at idle, not under load.", g->index,
            keys[k].what, fmtv(figure, a, sizeof a), keys[k].unit, fmtv(thr, b, sizeof b));
        return;
    }
    if (idle_reading && v == GQ_V_PASS) {
        /* An idle reading at the expected link is no proof the link holds it under load. */
        add(J, keys[k].name, subj, "expect", GQ_V_INFO, figure, thr, keys[k].unit,
            "GPU %d: %s %s %s at idle, not measured under load (the stress run reads it); expected %s %s.",
            g->index, keys[k].what, fmtv(figure, a, sizeof a), keys[k].unit,
            keys[k].is_min ? ">=" : "<=", fmtv(thr, b, sizeof b));
        return;
    }
    add(J, keys[k].name, subj, "expect", v, figure, thr, keys[k].unit,
        "GPU %d (%s): %s %s %s, %s the %s %s %s.", g->index, g->name, keys[k].what, fmtv(figure, a, sizeof a),
        keys[k].unit, rel,
        v == GQ_V_WARN   ? "warning threshold"
        : keys[k].is_min ? "expected minimum"
                         : "expected maximum",
        fmtv(thr, b, sizeof b), keys[k].unit);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Spread (max-min)/median in % of the finite values; NAN when fewer than 2. */
static double spread_pct(const double *v, int n, int *imin, int *imax)
{
    double tmp[GQ_MAX_GPUS];
    int k = 0;
    *imin = *imax = -1;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) {
            tmp[k++] = v[i];
            if (*imin < 0 || v[i] < v[*imin])
                *imin = i;
            if (*imax < 0 || v[i] > v[*imax])
                *imax = i;
        }
    if (k < 2)
        return NAN;
    qsort(tmp, (size_t)k, sizeof *tmp, cmp_d);
    double med = k % 2 ? tmp[k / 2] : (tmp[k / 2 - 1] + tmp[k / 2]) / 2;
    if (med <= 0)
        return NAN;
    return (tmp[k - 1] - tmp[0]) / med * 100.0;
}

/* Relative agreement of one metric among GPUs of one model. */
static void agree_check(judge *J, const gq_card_facts *f, const int *members, int nm, const char *model,
                        const char *metric, const char *what, const char *unit, int field, double warn_pct,
                        double fail_pct, const char *source)
{
    double v[GQ_MAX_GPUS];
    for (int i = 0; i < nm; i++) {
        const gq_gpu_facts *g = &f->gpu[members[i]];
        v[i] = field == 0 ? g->h2d_gbps : field == 1 ? g->d2h_gbps : g->sm_clock_avg_mhz;
    }
    int lo, hi;
    double sp = spread_pct(v, nm, &lo, &hi);
    if (!isfinite(sp))
        return;
    char id[40], subj[128], a[32], b[32], c[32];
    snprintf(id, sizeof id, "agree_%s", metric);
    snprintf(subj, sizeof subj, "model:%s", model);
    gq_verdict vd = sp > fail_pct ? GQ_V_FAIL : sp > warn_pct ? GQ_V_WARN : GQ_V_PASS;
    /* On the GPUs' intervals (host figures): the spread could be as small as
     * the highest lower end over the lowest upper end, and as large as the
     * highest upper end over the lowest lower end. */
    double med = sp > 0 ? (v[hi] - v[lo]) / sp * 100 : v[lo]; /* the median spread_pct divides by */
    double top_lo = -INFINITY, top_hi = -INFINITY, bot_lo = INFINITY, bot_hi = INFINITY;
    bool iv = field < 2;
    for (int i = 0; i < nm && iv; i++) {
        const gq_gpu_facts *g = &f->gpu[members[i]];
        double l = field == 0 ? g->h2d_lo : g->d2h_lo, h = field == 0 ? g->h2d_hi : g->d2h_hi;
        if (!isfinite(v[i]))
            continue;
        iv = isfinite(l) && isfinite(h);
        top_lo = fmax(top_lo, l);
        top_hi = fmax(top_hi, h);
        bot_lo = fmin(bot_lo, l);
        bot_hi = fmin(bot_hi, h);
    }
    if (iv && med > 0) {
        double sp_lo = fmax(0, top_lo - bot_hi) / med * 100, sp_hi = (top_hi - bot_lo) / med * 100;
        gq_verdict vl = sp_lo > fail_pct ? GQ_V_FAIL : sp_lo > warn_pct ? GQ_V_WARN : GQ_V_PASS;
        gq_verdict vh = sp_hi > fail_pct ? GQ_V_FAIL : sp_hi > warn_pct ? GQ_V_WARN : GQ_V_PASS;
        if (vl != vh) {
            double at = vh == GQ_V_FAIL ? fail_pct : warn_pct;
            add(J, id, subj, source, GQ_V_WARN, sp, at, "%",
                "%d × %s: %s ranges from %s %s (GPU %d) to %s %s (GPU %d), a spread of %.1f%%, %.1f-%.1f%% "
                "on "
                "the intervals from the rounds, which straddle %.0f%%: undetermined.",
                nm, model, what, fmtv(v[lo], a, sizeof a), unit, members[lo], fmtv(v[hi], b, sizeof b), unit,
                members[hi], sp, sp_lo, sp_hi, at);
            last_interval(J, sp_lo, sp_hi, true);
            for (int i = 0; i < nm; i++)
                mark_open(J, members[i], field);
            return;
        }
    }
    add(J, id, subj, source, vd, sp, vd == GQ_V_FAIL ? fail_pct : warn_pct, "%",
        "%d × %s: %s ranges from %s %s (GPU %d) to %s %s (GPU %d), a spread of %.1f%% (%s %.0f%%).", nm,
        model, what, fmtv(v[lo], a, sizeof a), unit, members[lo], fmtv(v[hi], b, sizeof b), unit, members[hi],
        sp, vd == GQ_V_PASS ? "within" : "above", vd == GQ_V_FAIL ? fail_pct : warn_pct);
    (void)c;
}

/* Min (or max) over pairs of one model of a pair matrix; pair filter by kind:
 * 0 every measured pair, 1 NVLink pairs. */
static void pair_check(judge *J, const gq_card_facts *f, const bool *in_model, const gq_expect_model *m,
                       gq_expect_key k, const double (*mat)[GQ_MAX_GPUS], int kind)
{
    const gq_threshold *t = &m->th[k];
    if (!t->set)
        return;
    bool is_min = keys[k].is_min;
    int bi = -1, bj = -1, npairs = 0, nbad = 0;
    double worst = NAN;
    for (int i = 0; i < f->ngpu; i++)
        for (int j = 0; j < f->ngpu; j++) {
            if (i == j || !in_model[i] || !in_model[j] || !isfinite(mat[i][j]))
                continue;
            if (kind == 1 && f->nvlinks[i][j] <= 0)
                continue;
            npairs++;
            double d;
            if (apply(t, is_min, mat[i][j], &d) != GQ_V_PASS)
                nbad++;
            if (!isfinite(worst) || (is_min ? mat[i][j] < worst : mat[i][j] > worst)) {
                worst = mat[i][j];
                bi = i;
                bj = j;
            }
        }
    char subj[128], a[32], b[32];
    snprintf(subj, sizeof subj, "model:%s", m->match);
    if (!npairs) {
        add(J, keys[k].name, subj, "expect", GQ_V_SKIP, NAN, t->fail, keys[k].unit,
            "%s: no %s measured; %s not checked.", m->match, kind == 1 ? "NVLink pair" : "GPU pair",
            keys[k].name);
        return;
    }
    double thr;
    gq_verdict v = apply(t, is_min, worst, &thr);
    add(J, keys[k].name, subj, "expect", v, worst, thr, keys[k].unit,
        "%s: %s, worst pair GPU %d → GPU %d at %s %s (%s %s %s); %d of %d pairs outside.", m->match,
        keys[k].what, bi, bj, fmtv(worst, a, sizeof a), keys[k].unit, is_min ? "minimum" : "maximum",
        fmtv(thr, b, sizeof b), keys[k].unit, nbad, npairs);
}

/* Which model entry applies to which GPU (model_of, -1 for none); the
 * models that match no GPU, count_min, and the GPUs no model covers. */
static void judge_models(judge *J, const gq_expect *ex, const gq_card_facts *f, int n, int *model_of)
{
    char subj[128], a[32];
    for (int i = 0; i < n; i++)
        model_of[i] = gq_expect_match(ex, f->gpu[i].name);
    for (int m = 0; m < ex->nmodels; m++) {
        int cnt = 0;
        for (int i = 0; i < n; i++)
            cnt += model_of[i] == m;
        snprintf(subj, sizeof subj, "model:%s", ex->models[m].match);
        if (!cnt)
            add(J, "expect_model_unmatched", subj, "expect", GQ_V_INFO, NAN, NAN, "",
                "The expectations for '%s' match no GPU on this node; they were not applied.",
                ex->models[m].match);
        const gq_threshold *t = &ex->models[m].th[GQ_EXK_COUNT_MIN];
        if (t->set && cnt) {
            double thr;
            gq_verdict v = apply(t, true, cnt, &thr);
            add(J, "count_min", subj, "expect", v, cnt, thr, "GPUs",
                "%d GPUs match '%s' (expected at least %s).", cnt, ex->models[m].match,
                fmtv(thr, a, sizeof a));
        }
    }
    if (ex->nmodels)
        for (int i = 0; i < n; i++)
            if (model_of[i] < 0) {
                snprintf(subj, sizeof subj, "gpu:%d", i);
                add(J, "expect_uncovered", subj, "expect", GQ_V_WARN, NAN, NAN, "",
                    "GPU %d (%s) matches no model of the expectations file; only relative checks apply to "
                    "it.",
                    i, f->gpu[i].name);
            }
}

/* Absolute per-GPU thresholds of each GPU's model. */
static void judge_gpus(judge *J, const gq_expect *ex, const gq_card_facts *f, int n, const int *model_of)
{
    for (int i = 0; i < n; i++) {
        if (model_of[i] < 0)
            continue;
        const gq_expect_model *m = &ex->models[model_of[i]];
        const gq_gpu_facts *g = &f->gpu[i];
        gpu_check(J, m, GQ_EXK_MEMORY_MIB_MIN, g, g->mem_mib, false, NAN, NAN, -1);
        gpu_check(J, m, GQ_EXK_POWER_LIMIT_W_MIN, g, g->power_limit_w, false, NAN, NAN, -1);
        gpu_check(J, m, GQ_EXK_PCIE_GEN_MIN, g, g->pcie_gen_cur, !g->link_under_load, NAN, NAN, -1);
        gpu_check(J, m, GQ_EXK_PCIE_WIDTH_MIN, g, g->pcie_width_cur, !g->link_under_load, NAN, NAN, -1);
        gpu_check(J, m, GQ_EXK_H2D_GBPS_MIN, g, g->h2d_gbps, false, g->h2d_lo, g->h2d_hi, 0);
        gpu_check(J, m, GQ_EXK_D2H_GBPS_MIN, g, g->d2h_gbps, false, g->d2h_lo, g->d2h_hi, 1);
        gpu_check(J, m, GQ_EXK_HOST_LATENCY_NS_MAX, g, g->host_latency_ns, false, NAN, NAN, -1);
        gpu_check(J, m, GQ_EXK_TEMP_C_MAX, g, g->temp_max_c, false, NAN, NAN, -1);
        gpu_check(J, m, GQ_EXK_SM_CLOCK_MHZ_MIN, g, g->sm_clock_avg_mhz, false, NAN, NAN, -1);
    }
}

/* Pair thresholds, per model. */
static void judge_pairs(judge *J, const gq_expect *ex, const gq_card_facts *f, int n, const int *model_of)
{
    for (int m = 0; m < ex->nmodels; m++) {
        bool in[GQ_MAX_GPUS] = {0};
        for (int i = 0; i < n; i++)
            in[i] = model_of[i] == m;
        pair_check(J, f, in, &ex->models[m], GQ_EXK_P2P_GBPS_MIN, (const double(*)[GQ_MAX_GPUS])f->p2p_gbps,
                   0);
        pair_check(J, f, in, &ex->models[m], GQ_EXK_NVLINK_GBPS_MIN,
                   (const double(*)[GQ_MAX_GPUS])f->p2p_gbps, 1);
        pair_check(J, f, in, &ex->models[m], GQ_EXK_P2P_LATENCY_NS_MAX,
                   (const double(*)[GQ_MAX_GPUS])f->p2p_lat_ns, 0);
    }
}

/* Relative: GPUs of one model (by full name) agree. The expectations'
 * spread_pct_max, when set for that model, replaces agree_pct. */
static void judge_agreement(judge *J, const gq_expect *ex, const gq_card_facts *f, int n, const int *model_of)
{
    bool done[GQ_MAX_GPUS] = {0};
    for (int i = 0; i < n; i++) {
        if (done[i])
            continue;
        int members[GQ_MAX_GPUS], nm = 0;
        for (int j = i; j < n; j++)
            if (!done[j] && !strcmp(f->gpu[j].name, f->gpu[i].name)) {
                members[nm++] = j;
                done[j] = true;
            }
        if (nm < 2)
            continue;
        double wp = ex->agree_pct, fp = ex->agree_fail_pct;
        const char *src = "relative";
        if (model_of[i] >= 0 && ex->models[model_of[i]].th[GQ_EXK_SPREAD_PCT_MAX].set) {
            const gq_threshold *t = &ex->models[model_of[i]].th[GQ_EXK_SPREAD_PCT_MAX];
            fp = t->fail;
            wp = t->has_warn ? t->warn : t->fail;
            src = "expect";
        }
        const char *name = f->gpu[i].name[0] ? f->gpu[i].name : "GPU";
        agree_check(J, f, members, nm, name, "h2d", "host-to-GPU bandwidth alone", "GB/s", 0, wp, fp, src);
        agree_check(J, f, members, nm, name, "d2h", "GPU-to-host bandwidth alone", "GB/s", 1, wp, fp, src);
        agree_check(J, f, members, nm, name, "sm_clock", "average SM clock under load", "MHz", 2, wp, fp,
                    src);
    }
}

/* Relative: links at their maximum generation and width. Only a reading
 * under load (the stress run's) can pass or fail: at idle a link slows down
 * to save power, so an idle reading is "not measured under load" (info), or a
 * warn for a width below the maximum. */
static void judge_links(judge *J, const gq_card_facts *f, int n)
{
    char subj[128];
    static const char idle_note[] =
        "; not measured under load (idle links slow down to save power; the stress "
        "run reads them under load)";
    for (int i = 0; i < n; i++) {
        const gq_gpu_facts *g = &f->gpu[i];
        bool load = g->link_under_load;
        snprintf(subj, sizeof subj, "gpu:%d", i);
        const char *when = load ? "under load" : "at idle";
        if (g->pcie_width_cur > 0 && g->pcie_width_max > 0) {
            bool full = g->pcie_width_cur >= g->pcie_width_max;
            gq_verdict v = full && load ? GQ_V_PASS : load ? GQ_V_FAIL : full ? GQ_V_INFO : GQ_V_WARN;
            add(J, "link_width", subj, "relative", v, g->pcie_width_cur, g->pcie_width_max, "lanes",
                "GPU %d: PCIe x%d %s, the link can do x%d%s.", i, g->pcie_width_cur, when, g->pcie_width_max,
                load ? "" : idle_note);
        }
        if (g->pcie_gen_cur > 0 && g->pcie_gen_max > 0) {
            bool full = g->pcie_gen_cur >= g->pcie_gen_max;
            gq_verdict v = !load ? GQ_V_INFO : full ? GQ_V_PASS : GQ_V_FAIL;
            add(J, "link_gen", subj, "relative", v, g->pcie_gen_cur, g->pcie_gen_max, "gen",
                "GPU %d: PCIe Gen%d %s, the link can do Gen%d%s.", i, g->pcie_gen_cur, when, g->pcie_gen_max,
                load ? "" : idle_note);
        }
    }
}

/* The uplinks above the GPUs (switches, root ports), read by discovery. A
 * bridge's link is not narrowed to save power (only a GPU's driver slows its
 * own link at idle), so a width below the maximum is a link that trained
 * down: fail, whenever it was read. Its generation, like a GPU's, may drop
 * at idle: below the maximum at idle is info, and only a reading under load
 * passes or fails it. A link at its maximum read at idle is info, never pass
 * (docs/card.md). */
static void judge_uplinks(judge *J, const gq_card_facts *f)
{
    static const char idle_note[] = "; read by discovery at idle, not under load";
    for (int i = 0; i < f->nuplinks; i++) {
        const gq_uplink_facts *u = &f->uplink[i];
        char subj[64], set[160];
        snprintf(subj, sizeof subj, "pcie:%s", u->node);
        gq_domains_set_str(u->gpus, u->ngpus, set, sizeof set);
        const char *what = !strcmp(u->kind, "root_port") ? "root port" : "PCIe switch";
        bool load = u->under_load;
        const char *when = load ? "under load" : "at idle";
        if (u->width_cur > 0 && u->width_max > 0) {
            bool full = u->width_cur >= u->width_max;
            gq_verdict v = !full ? GQ_V_FAIL : load ? GQ_V_PASS : GQ_V_INFO;
            add(J, "uplink_width", subj, "relative", v, u->width_cur, u->width_max, "lanes",
                "The uplink of %s %s (GPU%s %s): PCIe x%d %s, the link can do x%d%s.", what, u->node,
                u->ngpus == 1 ? "" : "s", set, u->width_cur, when, u->width_max,
                full && !load ? idle_note
                : !full       ? "; a bridge's link is not narrowed to save power: it trained down"
                              : "");
        }
        if (u->gen_cur > 0 && u->gen_max > 0) {
            bool full = u->gen_cur >= u->gen_max;
            gq_verdict v = !load ? GQ_V_INFO : full ? GQ_V_PASS : GQ_V_FAIL;
            add(J, "uplink_gen", subj, "relative", v, u->gen_cur, u->gen_max, "gen",
                "The uplink of %s %s (GPU%s %s): PCIe Gen%d %s, the link can do Gen%d%s.", what, u->node,
                u->ngpus == 1 ? "" : "s", set, u->gen_cur, when, u->gen_max, load ? "" : idle_note);
        }
    }
}

/* Integrity of the run. */
static void judge_integrity(judge *J, const gq_card_facts *f)
{
    if (f->n_records > 0) {
        if (f->n_impossible)
            add(J, "impossible", "node", "integrity", GQ_V_FAIL, f->n_impossible, 0, "figures",
                "%d figure%s above the theoretical capacity of its path, e.g. %s.", f->n_impossible,
                f->n_impossible == 1 ? " is" : "s are", f->impossible_example);
        else
            add(J, "impossible", "node", "integrity", GQ_V_PASS, 0, 0, "figures",
                "No figure is above the theoretical capacity of its path (%d records).", f->n_records);
        if (f->n_verify_failed)
            add(J, "verify", "node", "integrity", GQ_V_FAIL, f->n_verify_failed, 0, "copies",
                "Data check failed on %d measurement%s, e.g. %s.", f->n_verify_failed,
                f->n_verify_failed == 1 ? "" : "s", f->verify_example);
        if (f->n_errors)
            add(J, "errors", "node", "integrity", GQ_V_FAIL, f->n_errors, 0, "measurements",
                "%d measurement%s failed with an error, e.g. %s.", f->n_errors, f->n_errors == 1 ? "" : "s",
                f->error_example);
        if (f->n_overlap_invalid)
            add(J, "overlap", "node", "integrity", GQ_V_WARN, f->n_overlap_invalid, 99.0, "%",
                "gpuqual's measurement failed, not the hardware: %d concurrent aggregate%s could not be "
                "reported, the workers' windows overlapped too little even by duration and after re-runs, "
                "e.g. %s.",
                f->n_overlap_invalid, f->n_overlap_invalid == 1 ? "" : "s", f->overlap_example);
    }
}

/* Decisions the intervals left open: each a WARN naming what could not be
 * decided and the intervals, never a coin toss between PASS and FAIL. */
static void judge_undetermined(judge *J, const gq_card_facts *f)
{
    for (int i = 0; i < f->n_undetermined; i++) {
        add(J, "undetermined", "node", "analysis", GQ_V_WARN, NAN, NAN, "",
            "Undetermined after measuring again: %s.", f->undetermined[i]);
        last_interval(J, NAN, NAN, true);
    }
}

/* Stress: throttling and the stress analysis' own verdicts. */
static void judge_stress(judge *J, const gq_card_facts *f, int n)
{
    char subj[128], a[32], b[32];
    for (int i = 0; i < n; i++) {
        const gq_gpu_facts *g = &f->gpu[i];
        if (!g->stressed)
            continue;
        snprintf(subj, sizeof subj, "gpu:%d", i);
        add(J, "thermal", subj, "stress", g->thermal_slowdown ? GQ_V_FAIL : GQ_V_PASS, g->temp_max_c, NAN,
            "°C",
            g->thermal_slowdown ? "GPU %d slowed down for heat under load (max %s °C)."
                                : "GPU %d: no thermal slowdown under load (max %s °C).",
            i, fmtv(g->temp_max_c, a, sizeof a));
        if (isfinite(g->power_capped_pct) && g->power_capped_pct > 0)
            add(J, "power_cap", subj, "stress", GQ_V_INFO, g->power_capped_pct, NAN, "%",
                "GPU %d was power-capped in %s%% of samples: expected near the %s W limit, not a fault.", i,
                fmtv(g->power_capped_pct, a, sizeof a), fmtv(g->power_limit_w, b, sizeof b));
        if (g->stress_verdict == GQ_V_WARN || g->stress_verdict == GQ_V_FAIL)
            add(J, "stress", subj, "stress", (gq_verdict)g->stress_verdict, NAN, NAN, "",
                "GPU %d under stress: %s.", i,
                g->stress_reason[0] ? g->stress_reason : gq_verdict_name((gq_verdict)g->stress_verdict));
    }
}

/* The collectives threshold of each model whose GPUs the card's TP groups
 * hold: the slowest chosen group's all-reduce busbw with every group at once. */
static void judge_collectives(judge *J, const gq_expect *ex, const gq_card_facts *f, int n,
                              const int *model_of)
{
    char subj[128], a[32], b[32];
    const gq_expect_key k = GQ_EXK_ALLREDUCE_BUSBW_GBPS_MIN;
    for (int m = 0; m < ex->nmodels; m++) {
        const gq_threshold *t = &ex->models[m].th[k];
        bool in = false;
        /* the model's GPUs in the chosen groups; when nothing was measured, any GPU of the model
         * (the check is then a skip that says so) */
        for (int i = 0; i < n && !in; i++)
            in = model_of[i] == m && (!f->coll_gpus || (f->gpu[i].index >= 0 && f->gpu[i].index < 64 &&
                                                        (f->coll_gpus >> f->gpu[i].index & 1)));
        if (!t->set || !in)
            continue;
        snprintf(subj, sizeof subj, "model:%s", ex->models[m].match);
        double v = f->coll_min_once_gbps, thr;
        if (!isfinite(v)) {
            add(J, keys[k].name, subj, "expect", GQ_V_SKIP, NAN, t->fail, keys[k].unit,
                "%s: %s not measured in this run; %s not checked.", ex->models[m].match, keys[k].what,
                keys[k].name);
            continue;
        }
        gq_verdict vd = apply(t, true, v, &thr);
        add(J, keys[k].name, subj, "expect", vd, v, thr, keys[k].unit,
            "%s: the slowest TP-2 group's all-reduce moves %s GB/s of bus bandwidth with every group at "
            "once (%s %s GB/s expected).",
            ex->models[m].match, fmtv(v, a, sizeof a), vd == GQ_V_PASS ? "at least" : "below the",
            fmtv(thr, b, sizeof b));
    }
}

int gq_expect_judge(const gq_expect *ex_in, const gq_card_facts *f, gq_checklist *out, gq_err *err)
{
    gq_expect defaults;
    const gq_expect *ex = ex_in;
    if (!ex) {
        expect_init(&defaults);
        ex = &defaults;
    }
    judge J = {.out = out, .f = f};
    int first = out->n;
    int model_of[GQ_MAX_GPUS];
    int n = f->ngpu < GQ_MAX_GPUS ? f->ngpu : GQ_MAX_GPUS;
    judge_models(&J, ex, f, n, model_of);
    judge_gpus(&J, ex, f, n, model_of);
    judge_pairs(&J, ex, f, n, model_of);
    judge_agreement(&J, ex, f, n, model_of);
    judge_links(&J, f, n);
    judge_uplinks(&J, f);
    judge_integrity(&J, f);
    judge_undetermined(&J, f);
    judge_stress(&J, f, n);
    judge_collectives(&J, ex, f, n, model_of);
    if (J.rc)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory judging the card");
    for (int i = first; i < out->n; i++)
        gq_check_rest_on(&out->v[i], f->step_ev, f->step_why);
    return GQ_OK;
}

const char *gq_expect_key_name(int k)
{
    return k >= 0 && k < GQ_EXK_COUNT ? keys[k].name : "?";
}

int gq_expect_open_host(const gq_expect *ex_in, const gq_card_facts *f, bool *h2d, bool *d2h)
{
    gq_expect defaults;
    const gq_expect *ex = ex_in;
    if (!ex) {
        expect_init(&defaults);
        ex = &defaults;
    }
    gq_checklist cl = {0};
    judge J = {.out = &cl, .f = f, .open_h2d = h2d, .open_d2h = d2h};
    int model_of[GQ_MAX_GPUS];
    int n = f->ngpu < GQ_MAX_GPUS ? f->ngpu : GQ_MAX_GPUS;
    for (int i = 0; i < n; i++)
        h2d[i] = d2h[i] = false;
    judge_models(&J, ex, f, n, model_of);
    judge_gpus(&J, ex, f, n, model_of);
    judge_agreement(&J, ex, f, n, model_of);
    gq_checklist_free(&cl);
    return J.nopen;
}

bool gq_expect_key_is_min(int k)
{
    return k >= 0 && k < GQ_EXK_COUNT && keys[k].is_min;
}

bool gq_expect_key_integer(int k)
{
    return k >= 0 && k < GQ_EXK_COUNT && keys[k].integer;
}

const char *gq_expect_key_unit(int k)
{
    return k >= 0 && k < GQ_EXK_COUNT ? keys[k].unit : "";
}

const char *gq_expect_key_what(int k)
{
    return k >= 0 && k < GQ_EXK_COUNT ? keys[k].what : "?";
}
