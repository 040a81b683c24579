/* `gpuqual compare`'s outputs: the terminal/Markdown table and the "compare"
 * JSON section, from the typed result of analysis/compare. */
#include <math.h>
#include <stdio.h>

#include "core/json.h"
#include "render/analysis_render.h"
#include "render/numfmt.h"

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
                    snprintf(cellb, sizeof cellb, "%s (%+.1f%%%s)",
                             gq_fmt_num(x->v[r], GQ_NUM_RUNS, b, sizeof b), x->delta_pct[r],
                             x->regression[r] ? " REGRESSION" : "");
                else
                    snprintf(cellb, sizeof cellb, "%s", gq_fmt_num(x->v[r], GQ_NUM_RUNS, d, sizeof d));
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
    json_object_set_new(o, "threshold_pct", gq_json_num(c->threshold_pct));
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
            json_array_append_new(v, gq_json_num(x->v[r]));
            json_array_append_new(d, gq_json_num(x->delta_pct[r]));
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
