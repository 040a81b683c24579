/* The stress analysis' peer rules (analysis/stress_internal.h).
 *
 * A thermal or power fault shows first as a difference between GPUs that
 * should behave alike: in a short run a failing fan leaves the GPU well below
 * its slowdown temperature but far above its peers. For each group of GPUs
 * with the same name, each GPU's figures are compared with the group's
 * median (with two GPUs, with the other one, at a wider margin):
 *
 *   figure                          WARN when (3+ GPUs)       (2 GPUs)
 *   maximum temperature             > median + 10 °C          > other + 15 °C
 *   heating rate, first 30 s        > median + max(0.25 °C/s, 50 %)   + max(0.4 °C/s, 100 %)
 *   average SM clock                < median - 5 %            < other - 8 %
 *   average power                   off the median by > 10 %  > 15 %
 *   average TFLOP/s                 < median - 8 %            < other - 12 %
 *
 * A GPU that already fails (lost, thermal slowdown, errors) is neither judged
 * nor counted in its group's median: it is reported once, as a failure. A GPU
 * with no identical peer gets an info finding: only expectations apply.
 *
 * Heading for slowdown: a GPU under load heats as a first-order system,
 * T(t) = T_inf - (T_inf - T_0) e^(-t/tau). From the mean temperatures of
 * three equal thirds of the loaded samples (T1, T2, T3), the asymptote is
 * T_inf = (T1 T3 - T2^2) / (T1 + T3 - 2 T2) and tau = h / ln((T2-T1)/(T3-T2)).
 * When the heating is not slowing down (T3-T2 >= T2-T1) the last third's
 * slope is extrapolated instead. A GPU whose T_inf lies above its slowdown
 * temperature (NVML's threshold) and that has not reached it yet is WARN,
 * with the time it would take to get there. It needs at least 30 s of
 * loaded samples, and an asymptote 3 °C above the threshold.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/stress_internal.h"

#define PEER_TEMP_C 10.0
#define PEER_TEMP_C_TWO 15.0
#define PEER_RATE_ABS 0.25
#define PEER_RATE_ABS_TWO 0.4
#define PEER_RATE_REL 0.5
#define PEER_RATE_REL_TWO 1.0
#define PEER_CLOCK 0.05
#define PEER_CLOCK_TWO 0.08
#define PEER_POWER 0.10
#define PEER_POWER_TWO 0.15
#define PEER_TFLOPS 0.08
#define PEER_TFLOPS_TWO 0.12
#define HEAT_WINDOW_S 30.0
#define SLOW_MARGIN_C 3.0

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* °C per second over the first HEAT_WINDOW_S seconds of load; NAN when
 * fewer than two loaded samples fall in it. */
static double heating_rate(const gq_stress_gpu *g)
{
    double t0 = NAN, T0 = NAN, t1 = NAN, T1 = NAN;
    for (int i = 0; i < g->npoints; i++) {
        const gq_stress_point *p = &g->pts[i];
        if (!p->loaded || !p->has_sample || !isfinite(p->s.temp_c) || p->t < 0)
            continue;
        if (!isfinite(t0)) {
            t0 = p->t;
            T0 = p->s.temp_c;
            continue;
        }
        if (p->t - t0 > HEAT_WINDOW_S)
            break;
        t1 = p->t;
        T1 = p->s.temp_c;
    }
    return isfinite(t1) && t1 > t0 ? (T1 - T0) / (t1 - t0) : NAN;
}

typedef struct figure {
    const char *name, *unit, *fmt;
    double v[GQ_MAX_GPUS];
} figure;

static void judge(gq_stress_summary *s, const int *members, int n, const figure *f, int kind)
{
    double tmp[GQ_MAX_GPUS];
    int m = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(f->v[members[i]]))
            tmp[m++] = f->v[members[i]];
    if (m < 2)
        return;
    bool two = m == 2;
    for (int i = 0; i < n; i++) {
        int k = members[i];
        double x = f->v[k];
        if (!isfinite(x))
            continue;
        /* with two GPUs the reference is the other one */
        double ref = NAN;
        if (two) {
            for (int j = 0; j < n; j++)
                if (j != i && isfinite(f->v[members[j]]))
                    ref = f->v[members[j]];
        } else {
            double c[GQ_MAX_GPUS];
            memcpy(c, tmp, sizeof(double) * (size_t)m);
            ref = median(c, m);
        }
        bool out = false;
        double margin = 0;
        switch (kind) {
        case 0: /* temperature: absolute */
            margin = two ? PEER_TEMP_C_TWO : PEER_TEMP_C;
            out = x > ref + margin;
            break;
        case 1: { /* heating rate */
            double abs_m = two ? PEER_RATE_ABS_TWO : PEER_RATE_ABS,
                   rel = two ? PEER_RATE_REL_TWO : PEER_RATE_REL;
            margin = fmax(abs_m, rel * fabs(ref));
            out = x > ref + margin;
            break;
        }
        case 2: /* below, relative */
        case 4:
            margin = kind == 2 ? (two ? PEER_CLOCK_TWO : PEER_CLOCK) : (two ? PEER_TFLOPS_TWO : PEER_TFLOPS);
            out = ref > 0 && x < ref * (1 - margin);
            break;
        default: /* power: either way, relative */
            margin = two ? PEER_POWER_TWO : PEER_POWER;
            out = ref > 0 && fabs(x - ref) > margin * ref;
            break;
        }
        if (!out)
            continue;
        char xv[32], rv[32], mv[48];
        snprintf(xv, sizeof xv, f->fmt, x);
        snprintf(rv, sizeof rv, f->fmt, ref);
        if (kind == 0)
            snprintf(mv, sizeof mv, "%.0f %s", margin, f->unit);
        else if (kind == 1)
            snprintf(mv, sizeof mv, "%.2f %s", margin, f->unit);
        else
            snprintf(mv, sizeof mv, "%.0f%%", 100 * margin);
        if (two)
            gq_stress_add_finding(
                s, GQ_STRESS_WARN, s->gpu[k].gpu, "peer-outlier",
                "GPU %d: %s %s %s against the other GPU's %s %s (2 identical GPUs; margin %s)", s->gpu[k].gpu,
                f->name, xv, f->unit, rv, f->unit, mv);
        else
            gq_stress_add_finding(
                s, GQ_STRESS_WARN, s->gpu[k].gpu, "peer-outlier",
                "GPU %d: %s %s %s against its peers' median %s %s (%d identical GPUs; margin %s)",
                s->gpu[k].gpu, f->name, xv, f->unit, rv, f->unit, m, mv);
        if (s->gpu[k].verdict < GQ_STRESS_WARN)
            s->gpu[k].verdict = GQ_STRESS_WARN;
    }
}

/* Mean temperature of the loaded samples in [a, b) of the loaded span. */
static bool thirds(const gq_stress_gpu *g, double T[3], double tc[3], double *tnow, double *Tnow)
{
    double t0 = NAN, t1 = NAN;
    for (int i = 0; i < g->npoints; i++) {
        const gq_stress_point *p = &g->pts[i];
        if (!p->loaded || !p->has_sample || !isfinite(p->s.temp_c) || p->t < 0)
            continue;
        if (!isfinite(t0))
            t0 = p->t;
        t1 = p->t;
        *tnow = p->t;
        *Tnow = p->s.temp_c;
    }
    /* Short runs cannot tell a GPU settling at 70 °C from one heading for 100:
     * at least HEAT_WINDOW_S of loaded samples. */
    if (!(t1 - t0 >= HEAT_WINDOW_S))
        return false;
    double h = (t1 - t0) / 3, sum[3] = {0}, ts[3] = {0};
    int n[3] = {0};
    for (int i = 0; i < g->npoints; i++) {
        const gq_stress_point *p = &g->pts[i];
        if (!p->loaded || !p->has_sample || !isfinite(p->s.temp_c) || p->t < 0)
            continue;
        int k = (int)((p->t - t0) / h);
        if (k > 2)
            k = 2;
        sum[k] += p->s.temp_c;
        ts[k] += p->t;
        n[k]++;
    }
    for (int k = 0; k < 3; k++) {
        if (n[k] < 2)
            return false;
        T[k] = sum[k] / n[k];
        tc[k] = ts[k] / n[k];
    }
    return true;
}

static void heading_for_slowdown(const gq_stress_gpu *g, gq_stress_summary *s, int k)
{
    double slow = NAN;
    for (int i = g->npoints - 1; i >= 0 && !isfinite(slow); i--)
        if (g->pts[i].has_sample && isfinite(g->pts[i].s.temp_slowdown_c))
            slow = g->pts[i].s.temp_slowdown_c;
    double T[3], tc[3], tnow = NAN, Tnow = NAN;
    if (!isfinite(slow) || !thirds(g, T, tc, &tnow, &Tnow) || !(Tnow < slow))
        return;
    double d1 = T[1] - T[0], d2 = T[2] - T[1];
    if (!(d2 > 0.05)) /* not heating any more */
        return;
    double left = NAN, tinf = NAN;
    if (d1 > d2 && d1 > 0) {
        tinf = (T[0] * T[2] - T[1] * T[1]) / (T[0] + T[2] - 2 * T[1]);
        double h = tc[1] - tc[0];
        double tau = h / log(d1 / d2);
        /* the asymptote must clear the threshold by more than the estimate's
         * noise (integer readings averaged over a third of the run) */
        if (!(tinf > slow + SLOW_MARGIN_C) || !(tau > 0))
            return;
        left = tau * log((tinf - Tnow) / (tinf - slow));
    } else {
        double rate = d2 / (tc[2] - tc[1]); /* still heating as fast: the last slope */
        left = (slow - Tnow) / rate;
    }
    if (!(left > 0) || !isfinite(left))
        return;
    char asym[64] = "";
    if (isfinite(tinf))
        snprintf(asym, sizeof asym, ", heading for about %.0f °C", tinf);
    gq_stress_add_finding(
        s, GQ_STRESS_WARN, s->gpu[k].gpu, "heading-slowdown",
        "GPU %d: %.0f °C and still heating%s: it would reach its slowdown temperature %.0f °C in "
        "about %.0f s under this load",
        s->gpu[k].gpu, Tnow, asym, slow, left);
    if (s->gpu[k].verdict < GQ_STRESS_WARN)
        s->gpu[k].verdict = GQ_STRESS_WARN;
}

void gq_stress_peer_findings(const gq_stress_result *r, gq_stress_summary *s)
{
    static figure f[5];
    f[0] = (figure){.name = "maximum temperature", .unit = "°C", .fmt = "%.0f"};
    f[1] = (figure){.name = "heating rate over the first 30 s", .unit = "°C/s", .fmt = "%.2f"};
    f[2] = (figure){.name = "average SM clock", .unit = "MHz", .fmt = "%.0f"};
    f[3] = (figure){.name = "average power", .unit = "W", .fmt = "%.0f"};
    f[4] = (figure){.name = "average", .unit = "TFLOP/s", .fmt = "%.1f"};
    for (int k = 0; k < r->ngpu; k++) {
        const gq_stress_gpu_summary *S = &s->gpu[k];
        bool judged = r->gpu[k].started && S->verdict != GQ_STRESS_FAIL && S->nloaded > 0;
        f[0].v[k] = judged ? S->temp_max_c : NAN;
        f[1].v[k] = judged ? heating_rate(&r->gpu[k]) : NAN;
        f[2].v[k] = judged ? S->sm_clock_avg_mhz : NAN;
        f[3].v[k] = judged ? S->power_avg_w : NAN;
        f[4].v[k] = judged ? S->tflops_avg : NAN;
    }
    bool done[GQ_MAX_GPUS] = {false};
    for (int a = 0; a < r->ngpu; a++) {
        if (done[a])
            continue;
        int members[GQ_MAX_GPUS], n = 0;
        for (int b = a; b < r->ngpu; b++)
            if (!done[b] && !strcmp(s->gpu[a].name, s->gpu[b].name)) {
                done[b] = true;
                members[n++] = b;
            }
        if (n == 1 && r->gpu[a].started)
            gq_stress_add_finding(
                s, GQ_STRESS_INFO, s->gpu[a].gpu, "no-peers",
                "GPU %d (%s) has no identical peer in this run: its temperature, clocks and power "
                "are judged against expectations only",
                s->gpu[a].gpu, s->gpu[a].name[0] ? s->gpu[a].name : "unnamed");
        for (int i = 0; i < 5; i++)
            judge(s, members, n, &f[i], i);
    }
    for (int k = 0; k < r->ngpu; k++)
        if (r->gpu[k].started && s->gpu[k].verdict != GQ_STRESS_FAIL)
            heading_for_slowdown(&r->gpu[k], s, k);
}
