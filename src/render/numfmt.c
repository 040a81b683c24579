#include "render/numfmt.h"

#include <math.h>
#include <stdio.h>

/* Below 1: three significant digits as "%.3g" writes them (trailing zeros
 * dropped), in fixed notation also where "%.3g" would switch to an exponent. */
static void small(double v, char *buf, size_t n)
{
    double a = fabs(v);
    if (a >= 1e-4) {
        snprintf(buf, n, "%.3g", v);
        return;
    }
    int dec = 2 - (int)floor(log10(a));
    if (dec > 12) /* below 1e-10: "0.000000000000" */
        dec = 12;
    snprintf(buf, n, "%.*f", dec, v);
}

const char *gq_fmt_num(double v, gq_num_style style, char *buf, size_t n)
{
    double a = fabs(v);
    if (!isfinite(v))
        snprintf(buf, n, "–");
    else if (a >= 100)
        snprintf(buf, n, "%.0f", v);
    else if (style == GQ_NUM_RUNS)
        snprintf(buf, n, "%.2f", v);
    else if (a == 0)
        snprintf(buf, n, "%.0f", v);
    else if (style == GQ_NUM_FIGURE && v == floor(v))
        snprintf(buf, n, "%.0f", v);
    else if (a >= 10)
        snprintf(buf, n, "%.1f", v);
    else if (a >= 1)
        snprintf(buf, n, "%.2f", v);
    else
        small(v, buf, n);
    return buf;
}

int gq_fmt_tick_decimals(double step)
{
    double a = fabs(step);
    if (!isfinite(a) || a == 0)
        return 0;
    for (int d = 0; d < 9; d++) {
        double s = a * pow(10, d);
        if (fabs(s - round(s)) < 1e-6 * (s > 1 ? s : 1))
            return d;
    }
    return 9;
}

const char *gq_fmt_tick(double v, int decimals, char *buf, size_t n)
{
    if (!isfinite(v))
        snprintf(buf, n, "–");
    else
        snprintf(buf, n, "%.*f", decimals < 0 ? 0 : decimals > 9 ? 9 : decimals, v == 0 ? 0.0 : v);
    return buf;
}

const char *gq_fmt_duration(double s, char *buf, size_t n)
{
    char v[32];
    if (!isfinite(s) || s < 0)
        snprintf(buf, n, "–");
    else if (s == 0)
        snprintf(buf, n, "0 s");
    else if (s < 1e-6)
        snprintf(buf, n, "%s ns", gq_fmt_num(s * 1e9, GQ_NUM_FIGURE, v, sizeof v));
    else if (s < 1e-3)
        snprintf(buf, n, "%s µs", gq_fmt_num(s * 1e6, GQ_NUM_FIGURE, v, sizeof v));
    else if (s < 1)
        snprintf(buf, n, "%s ms", gq_fmt_num(s * 1e3, GQ_NUM_FIGURE, v, sizeof v));
    else if (s < 60)
        snprintf(buf, n, "%s s", gq_fmt_num(s, GQ_NUM_FIGURE, v, sizeof v));
    else if (s < 3600) {
        long t = lround(s);
        if (t % 60)
            snprintf(buf, n, "%ld min %ld s", t / 60, t % 60);
        else
            snprintf(buf, n, "%ld min", t / 60);
    } else {
        long t = lround(s / 60);
        snprintf(buf, n, "%ld h %ld min", t / 60, t % 60);
    }
    return buf;
}
