/* Do two revisions measure the same? Reads N saved gpuqual documents of each
 * revision (runs alternated on one machine), lines up every valid figure by
 * its key (test, endpoints, method, aggregate or sum, GPUs), and holds the
 * median of the AFTER runs to the median of the BEFORE runs within the
 * larger of 1 % and twice the observed spread: the largest of the figure's
 * within-run spreads (over rounds) and its run-to-run range in either
 * revision ((max - min) / median of the run medians).
 *
 * Usage: revcmp BEFORE1.json [BEFORE2.json ...] -- AFTER1.json [AFTER2.json ...]
 * Prints one line per figure and a closing "N agree, M differ, K unmatched"
 * line; exit 0 when none differs, 1 when one does, 2 on bad input. Built by
 * CMake as an EXCLUDE_FROM_ALL target (bench/gpu-compare-revisions.sh). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/render.h"

#define MAXRUNS 16
#define MAXFIG 4096

typedef struct fig {
    char key[200];
    bool latency;
    int n[2];
    double med[2][MAXRUNS];
    double spread_max; /* largest within-run spread seen */
} fig;

static fig figs[MAXFIG];
static int nfig;

static void key_of(const gq_record *r, char *buf, size_t n)
{
    char s[32], d[32];
    int o = snprintf(buf, n, "%s %s %s->%s%s%s", r->test, gq_method_name(r->method),
                     gq_rec_endpoint(r->src, s, sizeof s), gq_rec_endpoint(r->dst, d, sizeof d),
                     r->aggregate ? " aggregate" : "", r->sum ? " sum" : "");
    if (r->aggregate || r->sum)
        for (int i = 0; i < r->ngpus && o > 0 && (size_t)o < n; i++)
            o += snprintf(buf + o, n - (size_t)o, "%s%d", i ? "," : " gpus ", r->gpus[i]);
}

static fig *find(const char *key)
{
    for (int i = 0; i < nfig; i++)
        if (!strcmp(figs[i].key, key))
            return &figs[i];
    if (nfig == MAXFIG)
        return NULL;
    fig *f = &figs[nfig++];
    memset(f, 0, sizeof *f);
    snprintf(f->key, sizeof f->key, "%s", key);
    return f;
}

static int load(const char *path, int side)
{
    gq_err err = {0};
    json_t *root = NULL;
    gq_recordset rs = {0};
    if (gq_doc_load(path, &root, &rs, &err)) {
        fprintf(stderr, "revcmp: %s\n", err.msg);
        return -1;
    }
    for (int i = 0; i < rs.n; i++) {
        const gq_record *r = &rs.v[i];
        if (!r->valid || r->value.n == 0)
            continue;
        char key[200];
        key_of(r, key, sizeof key);
        fig *f = find(key);
        if (!f) {
            fprintf(stderr, "revcmp: more than %d figures\n", MAXFIG);
            return -1;
        }
        f->latency = r->is_latency;
        if (f->n[side] < MAXRUNS)
            f->med[side][f->n[side]++] = r->value.median;
        if (r->value.spread > f->spread_max)
            f->spread_max = r->value.spread;
    }
    gq_records_free(&rs);
    json_decref(root);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    int side = 0, nfiles[2] = {0, 0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            side = 1;
            continue;
        }
        if (load(argv[i], side))
            return 2;
        nfiles[side]++;
    }
    if (!nfiles[0] || !nfiles[1]) {
        fprintf(stderr, "usage: revcmp BEFORE.json... -- AFTER.json...\n");
        return 2;
    }
    int agree = 0, differ = 0, unmatched = 0;
    printf("%-72s %10s %10s %7s %6s  %s\n", "figure", "before", "after", "delta", "tol", "");
    for (int i = 0; i < nfig; i++) {
        fig *f = &figs[i];
        if (!f->n[0] || !f->n[1]) {
            unmatched++;
            printf("%-72.72s %10s %10s %7s %6s  only %s\n", f->key, "", "", "", "",
                   f->n[0] ? "before" : "after");
            continue;
        }
        double range = 0;
        double m[2];
        for (int s = 0; s < 2; s++) {
            double lo = INFINITY, hi = -INFINITY;
            for (int k = 0; k < f->n[s]; k++) {
                lo = fmin(lo, f->med[s][k]);
                hi = fmax(hi, f->med[s][k]);
            }
            m[s] = median(f->med[s], f->n[s]);
            if (m[s] > 0 && (hi - lo) / m[s] > range)
                range = (hi - lo) / m[s];
        }
        double spread = fmax(range, f->spread_max);
        double tol = fmax(0.01, 2 * spread);
        double delta = m[0] > 0 ? (m[1] - m[0]) / m[0] : 0;
        bool ok = fabs(delta) <= tol;
        ok ? agree++ : differ++;
        printf("%-72.72s %10.2f %10.2f %+6.2f%% %5.1f%%  %s\n", f->key, m[0], m[1], 100 * delta, 100 * tol,
               ok ? "agree" : "DIFFER");
    }
    printf("revcmp: %d agree, %d differ, %d unmatched (%d before, %d after documents)\n", agree, differ,
           unmatched, nfiles[0], nfiles[1]);
    return differ ? 1 : 0;
}
