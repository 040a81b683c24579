#include "analysis/sweepfit.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"

/* Sizes are fitted in MiB so that s^2 stays well inside double precision
 * together with weights of 1/t^2. */
#define SCALE ((double)GQ_MiB)
#define HUBER_K 1.345
#define TUKEY_C 4.685
/* Relative noise floor of the residual scale: exact synthetic data would give
 * a zero MAD and make every tiny rounding error an "outlier". */
#define SCALE_FLOOR 1e-3
#define ITERS 60

typedef struct pt {
    double s; /* MiB */
    double t; /* us */
    double w; /* robustness weight in [0,1] */
    double r; /* relative residual */
} pt;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int distinct_sizes(const pt *p, int n, bool weighted)
{
    double seen[256];
    int ns = 0, extra = 0;
    for (int i = 0; i < n; i++) {
        if (weighted && p[i].w <= 0)
            continue;
        bool dup = false;
        for (int k = 0; k < ns; k++)
            if (seen[k] == p[i].s)
                dup = true;
        if (dup)
            continue;
        if (ns < (int)(sizeof seen / sizeof seen[0]))
            seen[ns++] = p[i].s;
        else
            extra++;
    }
    return ns + extra;
}

/* Weighted least squares of t = a + b s with weights w/t^2 (relative
 * residuals). a is clamped to >= 0 by refitting through the origin. */
static int wls(const pt *p, int n, double *a, double *b)
{
    double sw = 0, ss = 0, sss = 0, st = 0, sst = 0;
    for (int i = 0; i < n; i++) {
        if (p[i].w <= 0)
            continue;
        double W = p[i].w / (p[i].t * p[i].t);
        sw += W;
        ss += W * p[i].s;
        sss += W * p[i].s * p[i].s;
        st += W * p[i].t;
        sst += W * p[i].s * p[i].t;
    }
    double den = sw * sss - ss * ss;
    if (sw <= 0 || sss <= 0 || !(fabs(den) > 1e-300 * sw * sss))
        return -1;
    double bb = (sw * sst - ss * st) / den;
    double aa = (st - bb * ss) / sw;
    if (aa < 0) {
        aa = 0;
        bb = sst / sss;
    }
    *a = aa;
    *b = bb;
    return 0;
}

static double residual_scale(pt *p, int n, double a, double b)
{
    double absr[256];
    int m = 0;
    for (int i = 0; i < n; i++) {
        p[i].r = (p[i].t - a - b * p[i].s) / p[i].t;
        if (m < (int)(sizeof absr / sizeof absr[0]))
            absr[m++] = fabs(p[i].r);
    }
    qsort(absr, (size_t)m, sizeof absr[0], cmp_double);
    double med = (m % 2) ? absr[m / 2] : 0.5 * (absr[m / 2 - 1] + absr[m / 2]);
    double sc = 1.4826 * med;
    return sc < SCALE_FLOOR ? SCALE_FLOOR : sc;
}

int gq_sweepfit_compute(const uint64_t *bytes, const double *gbps, int n, gq_sweepfit *out, gq_err *err)
{
    memset(out, 0, sizeof *out);
    if (n > 256)
        return gq_err_set(err, GQ_E_USAGE, "a sweep fit takes at most 256 points (got %d)", n);
    pt p[256];
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!bytes[i] || !(gbps[i] > 0) || !isfinite(gbps[i]))
            continue;
        p[m].s = (double)bytes[i] / SCALE;
        p[m].t = (double)bytes[i] / (gbps[i] * 1e3); /* bytes / (GB/s * 1e9) s, in us */
        p[m].w = 1.0;
        p[m].r = 0;
        m++;
    }
    out->npoints = m;
    out->nsizes = distinct_sizes(p, m, false);
    if (out->nsizes < 2)
        return gq_err_set(err, GQ_E_USAGE,
                          "a sweep fit needs at least 2 distinct buffer sizes with a measured rate (got %d)",
                          out->nsizes);

    double a, b;
    if (wls(p, m, &a, &b))
        return gq_err_set(err, GQ_E_FAIL, "the sweep points do not determine a fit");

    /* Robust weighting needs enough points to tell an outlier from the model:
     * with 3 or fewer every point is kept. Huber first (a convex start that an
     * outlier cannot capture), then Tukey's biweight, which rejects outliers
     * completely. */
    if (m > 3) {
        for (int it = 0; it < ITERS; it++) {
            bool tukey = it >= 10;
            double sc = residual_scale(p, m, a, b);
            pt save[256];
            memcpy(save, p, (size_t)m * sizeof p[0]);
            for (int i = 0; i < m; i++) {
                double u = p[i].r / sc;
                if (tukey) {
                    u /= TUKEY_C;
                    p[i].w = fabs(u) < 1 ? (1 - u * u) * (1 - u * u) : 0;
                } else {
                    p[i].w = fabs(u) <= HUBER_K ? 1.0 : HUBER_K / fabs(u);
                }
            }
            double na, nb;
            if (distinct_sizes(p, m, true) < 2 || wls(p, m, &na, &nb)) {
                memcpy(p, save, (size_t)m * sizeof p[0]);
                break;
            }
            double da = fabs(na - a), db = fabs(nb - b);
            a = na;
            b = nb;
            if (tukey && da <= 1e-9 * (fabs(a) + 1e-12) && db <= 1e-9 * fabs(b))
                break;
        }
    }
    if (!(b > 0))
        return gq_err_set(
            err, GQ_E_FAIL,
            "copy times do not grow with buffer size; no bandwidth can be fitted from this sweep");

    double ss = 0;
    int kept = 0;
    for (int i = 0; i < m; i++) {
        double r = (p[i].t - a - b * p[i].s) / p[i].t;
        if (p[i].w > 0) {
            ss += r * r;
            kept++;
        } else {
            out->noutliers++;
        }
    }
    out->a_us = a;
    /* b is us per MiB: B = MiB / (b us) in bytes/us = 1e6 B/s; /1e9 -> GB/s */
    out->bw_gbps = SCALE / b * 1e6 / 1e9;
    out->half_bytes = a * 1e-6 * out->bw_gbps * 1e9;
    out->rms_rel = kept ? sqrt(ss / kept) : 0;
    return GQ_OK;
}

double gq_sweepfit_predict_gbps(const gq_sweepfit *f, uint64_t bytes)
{
    if (!f || !(f->bw_gbps > 0) || !bytes)
        return 0;
    double t_us = f->a_us + (double)bytes / (f->bw_gbps * 1e3);
    return (double)bytes / (t_us * 1e3);
}
