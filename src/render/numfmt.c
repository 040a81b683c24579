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
