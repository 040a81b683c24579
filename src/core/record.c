#include "core/record.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gq_records_push(gq_recordset *rs, const gq_record *r)
{
    if (rs->n == rs->cap) {
        int cap = rs->cap ? rs->cap * 2 : 32;
        gq_record *v = realloc(rs->v, (size_t)cap * sizeof *v);
        if (!v)
            return GQ_E_NOMEM;
        rs->v = v;
        rs->cap = cap;
    }
    rs->v[rs->n++] = *r;
    return GQ_OK;
}

void gq_records_free(gq_recordset *rs)
{
    if (!rs)
        return;
    free(rs->v);
    rs->v = NULL;
    rs->n = rs->cap = 0;
}

const char *gq_direction_name(gq_direction d)
{
    switch (d) {
    case GQ_DIR_H2D: return "h2d";
    case GQ_DIR_D2H: return "d2h";
    case GQ_DIR_P2P: return "p2p";
    case GQ_DIR_LOCAL: return "local";
    }
    return "?";
}

const char *gq_flags_str(unsigned flags, char *buf, size_t n)
{
    static const struct {
        unsigned f;
        const char *name;
    } names[] = {
        {GQ_FLAG_IMPOSSIBLE, "impossible"},
        {GQ_FLAG_OVERLAP, "overlap"},
        {GQ_FLAG_VERIFY_FAILED, "verify_failed"},
        {GQ_FLAG_ERROR, "error"},
        {GQ_FLAG_SPREAD, "spread"},
        {GQ_FLAG_NUMA_MISPLACED, "numa_misplaced"},
        {GQ_FLAG_INCOMPLETE, "incomplete"},
        {GQ_FLAG_OVERLAP_RETRIED, "overlap_retried"},
        {GQ_FLAG_CONTAMINATED, "contaminated"},
    };
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (flags & names[i].f) {
            int w = snprintf(buf + used, n - used, "%s%s", used ? "," : "", names[i].name);
            if (w < 0 || (size_t)w >= n - used)
                break;
            used += (size_t)w;
        }
    return buf;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

gq_stat gq_stat_compute(const double *v, int n)
{
    gq_stat s = {0};
    if (n <= 0)
        return s;
    double tmp[GQ_MAX_ROUNDS * 4];
    if (n > (int)(sizeof tmp / sizeof tmp[0]))
        n = (int)(sizeof tmp / sizeof tmp[0]);
    memcpy(tmp, v, (size_t)n * sizeof *v);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    s.n = n;
    s.min = tmp[0];
    s.max = tmp[n - 1];
    s.median = (n % 2) ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
    s.spread = s.median > 0 ? (s.max - s.min) / s.median : 0.0;
    return s;
}

bool gq_contamination_kind_ok(const char *s)
{
    static const char *kinds[] = {"process", "utilization", "memory", "lock", "sim"};
    for (size_t i = 0; s && i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(s, kinds[i]))
            return true;
    return false;
}

int gq_record_contaminate(gq_record *r, const char *kind, int gpu, int pid, const char *name,
                          const char *detail)
{
    if (!gq_contamination_kind_ok(kind))
        return GQ_E_USAGE;
    char nm[64] = "";
    if (name && *name) {
        snprintf(nm, sizeof nm, "%s", name);
        for (char *c = nm; *c; c++)
            if (*c == ' ' || *c == ':' || *c == ';')
                *c = '_';
    }
    char det[240] = "";
    snprintf(det, sizeof det, "%s", detail ? detail : "");
    for (char *c = det; *c; c++)
        if (*c == ';')
            *c = ',';
    char pidbuf[24] = "";
    if (pid >= 0)
        snprintf(pidbuf, sizeof pidbuf, " pid %d", pid);
    size_t used = strlen(r->contaminated);
    snprintf(r->contaminated + used, sizeof r->contaminated - used, "%s%s gpu %d%s%s%s: %s", used ? "; " : "",
             kind, gpu, pidbuf, nm[0] ? " " : "", nm, det);
    r->valid = false;
    r->flags |= GQ_FLAG_CONTAMINATED;
    return GQ_OK;
}

void gq_record_contaminate_raw(gq_record *r, const char *text)
{
    size_t used = strlen(r->contaminated);
    snprintf(r->contaminated + used, sizeof r->contaminated - used, "%s%s", used ? "; " : "", text);
    r->valid = false;
    r->flags |= GQ_FLAG_CONTAMINATED;
}

bool gq_contam_add(gq_contam *c, const gq_contam_item *it)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->item[i].kind, it->kind) && c->item[i].gpu == it->gpu && c->item[i].pid == it->pid)
            return true;
    if (c->n >= GQ_CONTAM_MAX)
        return false;
    c->item[c->n++] = *it;
    return true;
}

void gq_contam_summary(const gq_contam *c, char *buf, size_t n)
{
    size_t used = 0;
    if (n == 0)
        return;
    buf[0] = '\0';
    for (int i = 0; i < c->n && used + 1 < n; i++) {
        const gq_contam_item *it = &c->item[i];
        int w = snprintf(buf + used, n - used, "%sGPU %d: %s", i ? "; " : "", it->gpu, it->detail);
        if (w < 0)
            break;
        used += (size_t)w < n - used ? (size_t)w : n - used - 1;
    }
}

/* P(Bin(n, 1/2) <= k) */
static double binom_half_cdf(int n, int k)
{
    double p = 0, c = 1; /* C(n, i) */
    for (int i = 0; i <= k; i++) {
        p += c;
        c = c * (n - i) / (i + 1);
    }
    return p / pow(2.0, n);
}

gq_interval gq_record_interval(const gq_record *r)
{
    double med = r->value.median;
    gq_interval iv = {.lo = med, .hi = med, .conf = 0, .n = r->value.n};
    int n = r->value.n;
    if (!isfinite(med))
        return iv;
    double v[GQ_MAX_ROUNDS];
    bool have = n >= 2 && n <= GQ_MAX_ROUNDS;
    for (int i = 0; have && i < n; i++) {
        v[i] = r->samples[i];
        have = isfinite(v[i]);
    }
    if (have) {
        qsort(v, (size_t)n, sizeof *v, cmp_double);
        /* samples that are not the ones the statistics came from (a record
         * written by hand, or read back without them) are not used */
        double m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        double tol = 1e-9 * (fabs(med) > 1 ? fabs(med) : 1);
        have = fabs(m - med) <= tol && v[0] <= med && v[n - 1] >= med;
    }
    if (!have) {
        /* the range of the statistics, else the spread around the median */
        double lo = r->value.min, hi = r->value.max, sp = r->value.spread;
        if (isfinite(lo) && isfinite(hi) && lo <= med && hi >= med && hi > lo) {
            iv.lo = lo;
            iv.hi = hi;
        } else if (sp > 0 && isfinite(sp)) {
            iv.lo = med * (1 - sp / 2);
            iv.hi = med * (1 + sp / 2);
        }
        return iv;
    }
    /* the innermost pair of order statistics x(k), x(n-k+1) that still holds
     * the median with at least GQ_INTERVAL_CONF (distribution-free) */
    int k = 1;
    while (k + 1 <= n / 2 && 1 - 2 * binom_half_cdf(n, k) >= GQ_INTERVAL_CONF)
        k++;
    iv.lo = v[k - 1] < med ? v[k - 1] : med;
    iv.hi = v[n - k] > med ? v[n - k] : med;
    iv.conf = 1 - 2 * binom_half_cdf(n, k - 1);
    return iv;
}
