/* `gpuqual compare`'s outputs: the terminal/Markdown table and the "compare"
 * JSON section, from the typed result of analysis/compare. */
#include <math.h>
#include <stdio.h>

#include "core/json.h"
#include "render/analysis_render.h"
#include "render/numfmt.h"

static const char *across_name(gq_cmp_across a)
{
    return a == GQ_CMP_ACROSS_MODEL ? "gpu_model" : a == GQ_CMP_ACROSS_STRESS ? "stress_duration" : NULL;
}

/* What a line compares across, in words ("" when every run is comparable). */
static void across_text(const gq_compare *c, const gq_cmp_fig *x, char *buf, size_t n)
{
    bool model = false, stress = false;
    for (int r = 1; r < c->nruns; r++) {
        model |= x->across[r] == GQ_CMP_ACROSS_MODEL;
        stress |= x->across[r] == GQ_CMP_ACROSS_STRESS;
    }
    snprintf(buf, n, "%s%s%s", model ? "across GPU models" : "", model && stress ? ", " : "",
             stress ? "across stress durations" : "");
}

static void cell(const gq_cmp_fig *x, int r, char *buf, size_t n)
{
    char b[32];
    if (r < 0 || r >= GQ_CMP_MAX_RUNS) {
        buf[0] = 0;
        return;
    }
    const char *v = gq_fmt_num(x->v[r], GQ_NUM_RUNS, b, sizeof b);
    double abs = x->delta_abs[r], pct = x->delta_pct[r];
    const char *tag = x->regression[r] ? " REGRESSION" : x->differs[r] ? " differs" : "";
    if (x->absolute && !isnan(abs))
        snprintf(buf, n, "%s (%+.1f %s%s)", v, abs, x->unit, tag);
    else if (!isnan(pct))
        snprintf(buf, n, "%s (%+.1f%%%s)", v, pct, tag);
    else
        snprintf(buf, n, "%s", v);
}

void gq_compare_print(FILE *f, const gq_compare *c, bool md, bool all)
{
    fprintf(
        f,
        "%sComparing %d runs against the first (threshold %.1f%%, temperatures %.1f °C):\n%s%d figure%s in "
        "every run, %d regression%s%s",
        md ? "## " : "", c->nruns, c->threshold_pct, c->threshold_c, md ? "\n" : "", c->ncompared,
        c->ncompared == 1 ? "" : "s", c->nregressions, c->nregressions == 1 ? "" : "s",
        c->across_models ? "" : ".\n");
    if (c->across_models)
        fprintf(f, ", %d difference%s across GPU models or stress durations (not regressions).\n",
                c->ndiffers, c->ndiffers == 1 ? "" : "s");
    for (int r = 0; r < c->nruns; r++) {
        char st[32] = "";
        if (!isnan(c->stress_s[r]))
            snprintf(st, sizeof st, "  stress %g s", c->stress_s[r]);
        fprintf(f, "%s[%d] %s  host %s  %s  %s  %s%s%s%s\n", md ? "- " : "  ", r, c->label[r], c->host[r],
                c->when[r], c->kind[r], c->model[r][0] ? c->model[r] : "GPU model unknown", st,
                c->verdict[r][0] ? "  verdict " : "", c->verdict[r]);
    }
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
    /* Regressions (and differences across models) first, then the rest of the figures present everywhere. */
    int shown_flagged = 0;
    for (int pass = 0; pass < 3; pass++) {
        for (int i = 0; i < c->nfig; i++) {
            const gq_cmp_fig *x = &c->fig[i];
            bool reg = false, dif = false;
            for (int r = 0; r < c->nruns; r++) {
                reg |= x->regression[r];
                dif |= x->differs[r];
            }
            bool flagged = reg || dif, everywhere = x->present == c->nruns;
            if ((pass == 0 && !flagged) || (pass == 1 && (flagged || !everywhere)) ||
                (pass == 2 && (flagged || everywhere)))
                continue;
            if (pass > 0 && !all)
                continue;
            shown_flagged += pass == 0;
            char ac[64];
            across_text(c, x, ac, sizeof ac);
            if (md)
                fprintf(f, "| %s | %s |", x->key, x->unit);
            else
                fprintf(f, "%-3s %-64s %-5s", reg ? "!!" : dif ? "~~" : "", x->key, x->unit);
            for (int r = 0; r < c->nruns; r++) {
                char cellb[80];
                cell(x, r, cellb, sizeof cellb);
                fprintf(f, md ? " %s |" : " %-28s", cellb);
            }
            if (md)
                fprintf(f, " %s |\n", ac);
            else
                fprintf(f, "%s%s\n", ac[0] ? "  " : "", ac);
        }
    }
    if (!all && c->nfig > shown_flagged)
        fprintf(f, "%s(%d figures without a regression not shown; --all lists them)\n", md ? "\n" : "",
                c->nfig - shown_flagged);
}

json_t *gq_compare_to_json(const gq_compare *c)
{
    json_t *o = json_object(), *inputs = json_array(), *figs = json_array(), *only = json_array();
    json_object_set_new(o, "threshold_pct", gq_json_num(c->threshold_pct));
    json_object_set_new(o, "threshold_c", gq_json_num(c->threshold_c));
    json_object_set_new(o, "across_models", json_boolean(c->across_models));
    for (int r = 0; r < c->nruns; r++)
        json_array_append_new(inputs, json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:o}", "file", c->label[r],
                                                "kind", c->kind[r], "hostname", c->host[r], "timestamp",
                                                c->when[r], "verdict", c->verdict[r], "gpu_model",
                                                c->model[r][0] ? json_string(c->model[r]) : json_null(),
                                                "stress_s", gq_json_num(c->stress_s[r])));
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
        json_t *v = json_array(), *d = json_array(), *g = json_array(), *a = json_array(), *df = json_array();
        for (int r = 0; r < c->nruns; r++) {
            const char *an = across_name(x->across[r]);
            json_array_append_new(v, gq_json_num(x->v[r]));
            json_array_append_new(d, gq_json_num(x->absolute ? x->delta_abs[r] : x->delta_pct[r]));
            json_array_append_new(g, json_boolean(x->regression[r]));
            json_array_append_new(a, an ? json_string(an) : json_null());
            json_array_append_new(df, json_boolean(x->differs[r]));
        }
        json_array_append_new(figs, json_pack("{s:s, s:s, s:b, s:o, s:o, s:o, s:o, s:o}", "key", x->key,
                                              "unit", x->unit, "higher_is_better", x->higher_is_better,
                                              "values", v, x->absolute ? "delta_c" : "delta_pct", d,
                                              "regression", g, "across", a, "differs", df));
    }
    json_object_set_new(o, "inputs", inputs);
    json_object_set_new(o, "figures", figs);
    json_object_set_new(o, "regressions", json_integer(c->nregressions));
    json_object_set_new(o, "differences_across", json_integer(c->ndiffers));
    json_object_set_new(o, "only_in", only);
    return o;
}
