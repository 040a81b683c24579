#include "analysis/compare.h"
#include <stdio.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"

void gq_compare_init(gq_compare *c, double threshold_pct)
{
    memset(c, 0, sizeof *c);
    c->threshold_pct = threshold_pct > 0 ? threshold_pct : 5.0;
    c->threshold_c = GQ_CMP_TEMP_THRESHOLD_C;
}

bool gq_compare_same_stress(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return fabs(a - b) <= 0.01 * fmax(a, b);
}

void gq_compare_free(gq_compare *c)
{
    if (!c)
        return;
    free(c->fig);
    c->fig = NULL;
    c->nfig = c->capfig = 0;
}

const char *gq_compare_key(const gq_record *r, char *buf, size_t n)
{
    char s[24], d[24], sz[32], g[200] = "";
    if (r->aggregate || r->sum) {
        size_t used = 0;
        used += (size_t)snprintf(g, sizeof g, " %s[", r->sum ? "sum" : "aggregate");
        for (int k = 0; k < r->ngpus && used < sizeof g - 8; k++)
            used += (size_t)snprintf(g + used, sizeof g - used, "%s%d", k ? "," : "", r->gpus[k]);
        if (r->sum)
            snprintf(g + used, sizeof g - used, "]");
        else
            snprintf(g + used, sizeof g - used, "] %s", gq_direction_name(r->direction));
        snprintf(buf, n, "%s %s%s %s", r->test, gq_method_name(r->method), g,
                 gq_fmt_size(r->bytes, sz, sizeof sz));
        return buf;
    }
    if (r->is_latency)
        snprintf(buf, n, "%s %s %s->%s", r->test, gq_method_name(r->method),
                 gq_endpoint_str(r->src, s, sizeof s), gq_endpoint_str(r->dst, d, sizeof d));
    else
        snprintf(buf, n, "%s %s %s->%s %s", r->test, gq_method_name(r->method),
                 gq_endpoint_str(r->src, s, sizeof s), gq_endpoint_str(r->dst, d, sizeof d),
                 gq_fmt_size(r->bytes, sz, sizeof sz));
    return buf;
}

static gq_cmp_fig *find_or_add(gq_compare *c, const char *key, const char *unit, bool higher, int run)
{
    /* A key already set in this run (the same figure measured twice) gets a
     * suffix, so that both are kept. */
    char k2[200];
    snprintf(k2, sizeof k2, "%s", key);
    for (int rep = 2; rep < 100; rep++) {
        gq_cmp_fig *hit = NULL;
        for (int i = 0; i < c->nfig; i++)
            if (!strcmp(c->fig[i].key, k2)) {
                hit = &c->fig[i];
                break;
            }
        if (!hit)
            break;
        if (isnan(hit->v[run]))
            return hit;
        snprintf(k2, sizeof k2, "%s #%d", key, rep);
    }
    if (c->nfig == c->capfig) {
        int cap = c->capfig ? c->capfig * 2 : 256;
        gq_cmp_fig *v = realloc(c->fig, (size_t)cap * sizeof *v);
        if (!v)
            return NULL;
        c->fig = v;
        c->capfig = cap;
    }
    gq_cmp_fig *f = &c->fig[c->nfig++];
    memset(f, 0, sizeof *f);
    snprintf(f->key, sizeof f->key, "%s", k2);
    snprintf(f->unit, sizeof f->unit, "%s", unit);
    f->higher_is_better = higher;
    for (int i = 0; i < GQ_CMP_MAX_RUNS; i++)
        f->v[i] = f->delta_pct[i] = NAN;
    return f;
}

int gq_compare_add(gq_compare *c, const char *label, const gq_recordset *rs, const gq_cmp_doc *doc,
                   gq_err *err)
{
    if (c->nruns >= GQ_CMP_MAX_RUNS)
        return gq_err_set(err, GQ_E_USAGE, "compare: at most %d files", GQ_CMP_MAX_RUNS);
    int run = c->nruns++;
    snprintf(c->label[run], sizeof c->label[run], "%s", label);
    snprintf(c->host[run], sizeof c->host[run], "%s", doc && doc->host[0] ? doc->host : "?");
    snprintf(c->when[run], sizeof c->when[run], "%s", doc && doc->when[0] ? doc->when : "?");
    snprintf(c->kind[run], sizeof c->kind[run], "%s", doc && doc->kind[0] ? doc->kind : "?");
    snprintf(c->verdict[run], sizeof c->verdict[run], "%s", doc ? doc->verdict : "");
    snprintf(c->model[run], sizeof c->model[run], "%s", doc ? doc->model : "");
    c->stress_s[run] = doc && doc->stress_s > 0 ? doc->stress_s : NAN;
    char key[200];
    for (int i = 0; rs && i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (!r->valid ||
            (r->flags & (GQ_FLAG_IMPOSSIBLE | GQ_FLAG_OVERLAP | GQ_FLAG_VERIFY_FAILED | GQ_FLAG_ERROR)))
            continue;
        gq_compare_key(r, key, sizeof key);
        gq_cmp_fig *f = find_or_add(c, key, r->is_latency ? "ns" : "GB/s", !r->is_latency, run);
        if (!f)
            return gq_err_set(err, GQ_E_NOMEM, "out of memory comparing runs");
        f->v[run] = r->value.median;
    }
    for (int i = 0; doc && i < doc->nstress; i++) {
        const gq_cmp_stress_gpu *g = &doc->stress[i];
        const struct {
            double v;
            const char *name, *unit;
            bool higher;
        } sf[] = {{g->temp_max_c, "stress max temperature", "°C", false},
                  {g->sm_clock_avg_mhz, "stress average SM clock", "MHz", true},
                  {g->power_avg_w, "stress average power", "W", true}};
        for (size_t k = 0; k < sizeof sf / sizeof sf[0]; k++) {
            if (!isfinite(sf[k].v))
                continue;
            snprintf(key, sizeof key, "%s gpu:%d", sf[k].name, g->gpu);
            gq_cmp_fig *f = find_or_add(c, key, sf[k].unit, sf[k].higher, run);
            if (!f)
                return gq_err_set(err, GQ_E_NOMEM, "out of memory comparing runs");
            f->v[run] = sf[k].v;
            f->stress = true;
            f->absolute = !strcmp(sf[k].unit, "°C"); /* temperatures: degrees, not percent */
        }
    }
    return GQ_OK;
}

/* How run r differs from the baseline for figure f. */
static gq_cmp_across across_of(const gq_compare *c, const gq_cmp_fig *f, int r)
{
    if (strcmp(c->model[r], c->model[0]))
        return GQ_CMP_ACROSS_MODEL;
    if (f->stress && !gq_compare_same_stress(c->stress_s[r], c->stress_s[0]))
        return GQ_CMP_ACROSS_STRESS;
    return GQ_CMP_SAME;
}

int gq_compare_check(const gq_compare *c, gq_err *err)
{
    if (c->across_models)
        return GQ_OK;
    for (int r = 1; r < c->nruns; r++) {
        if (strcmp(c->model[r], c->model[0]))
            return gq_err_set(err, GQ_E_USAGE,
                              "compare: %s has %s and %s has %s; a difference between GPU models is not a "
                              "regression (--across-models compares them anyway, marking every line)",
                              c->label[0], c->model[0][0] ? c->model[0] : "no GPU listed", c->label[r],
                              c->model[r][0] ? c->model[r] : "no GPU listed");
        if (!isnan(c->stress_s[r]) && !isnan(c->stress_s[0]) &&
            !gq_compare_same_stress(c->stress_s[r], c->stress_s[0]))
            return gq_err_set(
                err, GQ_E_USAGE,
                "compare: the stress of %s ran %g s and that of %s %g s; figures of stresses of "
                "different lengths are not comparable (--across-models compares them anyway, "
                "marking every line)",
                c->label[0], c->stress_s[0], c->label[r], c->stress_s[r]);
    }
    return GQ_OK;
}

void gq_compare_finish(gq_compare *c)
{
    c->nregressions = c->ncompared = c->ndiffers = 0;
    for (int i = 0; i < c->nfig; i++) {
        gq_cmp_fig *f = &c->fig[i];
        f->present = 0;
        bool reg = false, dif = false;
        for (int r = 0; r < c->nruns; r++) {
            f->present += !isnan(f->v[r]);
            f->delta_pct[r] = f->delta_abs[r] = NAN;
            f->regression[r] = f->differs[r] = false;
            f->across[r] = r ? across_of(c, f, r) : GQ_CMP_SAME;
            if (r == 0 || isnan(f->v[r]) || isnan(f->v[0]) || (!f->absolute && f->v[0] == 0))
                continue;
            f->delta_abs[r] = f->v[r] - f->v[0];
            double worse;
            if (f->absolute) { /* °C: an absolute rise against an absolute threshold */
                worse = f->higher_is_better ? -f->delta_abs[r] : f->delta_abs[r];
                worse = worse > c->threshold_c ? 1 : 0;
            } else {
                f->delta_pct[r] = f->delta_abs[r] / fabs(f->v[0]) * 100.0;
                worse = f->higher_is_better ? -f->delta_pct[r] : f->delta_pct[r];
                worse = worse > c->threshold_pct ? 1 : 0;
            }
            if (f->across[r])
                f->differs[r] = worse > 0;
            else
                f->regression[r] = worse > 0;
            reg |= f->regression[r];
            dif |= f->differs[r];
        }
        c->nregressions += reg;
        c->ndiffers += dif;
        c->ncompared += f->present == c->nruns;
    }
}
