#include "analysis/compare.h"
#include "analysis/json_get.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"

void gq_compare_init(gq_compare *c, double threshold_pct)
{
    memset(c, 0, sizeof *c);
    c->threshold_pct = threshold_pct > 0 ? threshold_pct : 5.0;
}

void gq_compare_free(gq_compare *c)
{
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

int gq_compare_add(gq_compare *c, const char *label, const gq_recordset *rs, const json_t *root, gq_err *err)
{
    if (c->nruns >= GQ_CMP_MAX_RUNS)
        return gq_err_set(err, GQ_E_USAGE, "compare: at most %d files", GQ_CMP_MAX_RUNS);
    int run = c->nruns++;
    snprintf(c->label[run], sizeof c->label[run], "%s", label);
    const json_t *card = json_object_get(root, "card");
    const json_t *host = json_object_get(root, "host");
    snprintf(c->host[run], sizeof c->host[run], "%s",
             gq_json_str(card, "hostname", gq_json_str(host, "hostname", "?")));
    snprintf(c->when[run], sizeof c->when[run], "%s", gq_json_str(root, "timestamp", "?"));
    snprintf(c->kind[run], sizeof c->kind[run], "%s", gq_json_str(root, "kind", "?"));
    snprintf(c->verdict[run], sizeof c->verdict[run], "%s", gq_json_str(card, "verdict", ""));
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
    size_t i;
    const json_t *g;
    json_array_foreach(json_object_get(json_object_get(root, "stress"), "gpus"), i, g)
    {
        const json_t *id = json_object_get(g, "gpu");
        if (!json_is_integer(id))
            continue;
        static const struct {
            const char *field, *name, *unit;
            bool higher;
        } sf[] = {{"temp_max_c", "stress max temperature", "°C", false},
                  {"sm_clock_avg_mhz", "stress average SM clock", "MHz", true},
                  {"power_avg_w", "stress average power", "W", true}};
        for (size_t k = 0; k < sizeof sf / sizeof sf[0]; k++) {
            const json_t *v = json_object_get(g, sf[k].field);
            if (!json_is_number(v))
                continue;
            snprintf(key, sizeof key, "%s gpu:%lld", sf[k].name, (long long)json_integer_value(id));
            gq_cmp_fig *f = find_or_add(c, key, sf[k].unit, sf[k].higher, run);
            if (!f)
                return gq_err_set(err, GQ_E_NOMEM, "out of memory comparing runs");
            f->v[run] = json_number_value(v);
        }
    }
    return GQ_OK;
}

void gq_compare_finish(gq_compare *c)
{
    c->nregressions = c->ncompared = 0;
    for (int i = 0; i < c->nfig; i++) {
        gq_cmp_fig *f = &c->fig[i];
        f->present = 0;
        bool reg = false;
        for (int r = 0; r < c->nruns; r++) {
            f->present += !isnan(f->v[r]);
            f->delta_pct[r] = NAN;
            f->regression[r] = false;
            if (r == 0 || isnan(f->v[r]) || isnan(f->v[0]) || f->v[0] == 0)
                continue;
            f->delta_pct[r] = (f->v[r] - f->v[0]) / fabs(f->v[0]) * 100.0;
            double worse = f->higher_is_better ? -f->delta_pct[r] : f->delta_pct[r];
            f->regression[r] = worse > c->threshold_pct;
            reg |= f->regression[r];
        }
        c->nregressions += reg;
        c->ncompared += f->present == c->nruns;
    }
}

static const char *num(double v, char *b, size_t n)
{
    if (isnan(v))
        snprintf(b, n, "–");
    else if (fabs(v) >= 100)
        snprintf(b, n, "%.0f", v);
    else
        snprintf(b, n, "%.2f", v);
    return b;
}

void gq_compare_print(FILE *f, const gq_compare *c, bool md, bool all)
{
    char b[32], d[32];
    fprintf(f,
            "%sComparing %d runs against the first (threshold %.1f%%): %d figure%s in every run, %d "
            "regression%s.\n",
            md ? "## " : "", c->nruns, c->threshold_pct, c->ncompared, c->ncompared == 1 ? "" : "s",
            c->nregressions, c->nregressions == 1 ? "" : "s");
    for (int r = 0; r < c->nruns; r++)
        fprintf(f, "%s[%d] %s  host %s  %s  %s%s%s\n", md ? "- " : "  ", r, c->label[r], c->host[r],
                c->when[r], c->kind[r], c->verdict[r][0] ? "  verdict " : "", c->verdict[r]);
    fputc('\n', f);
    if (md) {
        fputs("| figure | unit |", f);
        for (int r = 0; r < c->nruns; r++)
            fprintf(f, " [%d] |", r);
        fputs(" |\n|---|---|", f);
        for (int r = 0; r < c->nruns; r++)
            fputs("---:|", f);
        fputs("---|\n", f);
    }
    /* Regressions first, then the rest of the figures present everywhere. */
    for (int pass = 0; pass < 3; pass++) {
        for (int i = 0; i < c->nfig; i++) {
            const gq_cmp_fig *x = &c->fig[i];
            bool reg = false;
            for (int r = 0; r < c->nruns; r++)
                reg |= x->regression[r];
            bool everywhere = x->present == c->nruns;
            if ((pass == 0 && !reg) || (pass == 1 && (reg || !everywhere)) ||
                (pass == 2 && (reg || everywhere)))
                continue;
            if (pass == 1 && !all)
                continue;
            if (pass == 2 && !all)
                continue;
            if (md)
                fprintf(f, "| %s | %s |", x->key, x->unit);
            else
                fprintf(f, "%-3s %-64s %-5s", reg ? "!!" : "", x->key, x->unit);
            for (int r = 0; r < c->nruns; r++) {
                char cellb[64];
                if (r > 0 && !isnan(x->delta_pct[r]))
                    snprintf(cellb, sizeof cellb, "%s (%+.1f%%%s)", num(x->v[r], b, sizeof b),
                             x->delta_pct[r], x->regression[r] ? " REGRESSION" : "");
                else
                    snprintf(cellb, sizeof cellb, "%s", num(x->v[r], d, sizeof d));
                fprintf(f, md ? " %s |" : " %-28s", cellb);
            }
            fputs(md ? " |\n" : "\n", f);
        }
    }
    if (!all && c->nfig > c->nregressions)
        fprintf(f, "%s(%d figures without a regression not shown; --all lists them)\n", md ? "\n" : "",
                c->nfig - c->nregressions);
}

json_t *gq_compare_to_json(const gq_compare *c)
{
    json_t *o = json_object(), *inputs = json_array(), *figs = json_array(), *only = json_array();
    json_object_set_new(o, "threshold_pct", json_real(c->threshold_pct));
    for (int r = 0; r < c->nruns; r++)
        json_array_append_new(inputs, json_pack("{s:s, s:s, s:s, s:s, s:s}", "file", c->label[r], "kind",
                                                c->kind[r], "hostname", c->host[r], "timestamp", c->when[r],
                                                "verdict", c->verdict[r]));
    for (int i = 0; i < c->nfig; i++) {
        const gq_cmp_fig *x = &c->fig[i];
        if (x->present != c->nruns) {
            json_t *files = json_array();
            for (int r = 0; r < c->nruns; r++)
                if (!isnan(x->v[r]))
                    json_array_append_new(files, json_integer(r));
            json_array_append_new(only, json_pack("{s:s, s:o}", "key", x->key, "files", files));
            continue;
        }
        json_t *v = json_array(), *d = json_array(), *g = json_array();
        for (int r = 0; r < c->nruns; r++) {
            json_array_append_new(v, json_real(x->v[r]));
            json_array_append_new(d, isnan(x->delta_pct[r]) ? json_null() : json_real(x->delta_pct[r]));
            json_array_append_new(g, json_boolean(x->regression[r]));
        }
        json_array_append_new(figs, json_pack("{s:s, s:s, s:b, s:o, s:o, s:o}", "key", x->key, "unit",
                                              x->unit, "higher_is_better", x->higher_is_better, "values", v,
                                              "delta_pct", d, "regression", g));
    }
    json_object_set_new(o, "inputs", inputs);
    json_object_set_new(o, "figures", figs);
    json_object_set_new(o, "regressions", json_integer(c->nregressions));
    json_object_set_new(o, "only_in", only);
    return o;
}
