/* `gpuqual fleet`'s outputs: the "fleet" JSON section and the terminal or
 * Markdown summary, from the typed result of analysis/fleet. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "render/analysis_render.h"
#include "render/numfmt.h"

json_t *gq_fleet_to_json(const gq_fleet *f)
{
    json_t *o = json_object(), *nodes = json_array(), *outs = json_array(), *flagged = json_array();
    if (!o || !nodes || !outs || !flagged) {
        json_decref(o);
        json_decref(nodes);
        json_decref(outs);
        json_decref(flagged);
        return NULL;
    }
    json_object_set_new(o, "threshold_pct", gq_json_num(f->threshold_pct));
    json_object_set_new(o, "threshold_c", gq_json_num(f->threshold_c));
    json_t *groups = json_array();
    for (int g = 0; g < f->ngroups; g++)
        json_array_append_new(
            groups, json_pack("{s:i, s:o, s:o, s:i}", "group", g, "gpu_model",
                              f->groups[g].model[0] ? json_string(f->groups[g].model) : json_null(),
                              "stress_s", gq_json_num(f->groups[g].stress_s), "nodes", f->groups[g].nnodes));
    json_object_set_new(o, "groups", groups);
    json_object_set_new(o, "verdict", json_string(f->verdict));
    json_object_set_new(o, "exit_code", json_integer(f->exit_code));
    for (int i = 0; i < f->nnodes; i++) {
        const gq_fleet_node *n = &f->node[i];
        json_t *j = json_pack("{s:i, s:s, s:s, s:s, s:s, s:i, s:b, s:i, s:b}", "rank", n->rank, "node",
                              n->label, "host", n->host, "card_hostname", n->card_host, "verdict", n->verdict,
                              "exit_code", n->exit_code, "simulated", n->simulated, "outliers", n->noutliers,
                              "flagged", n->flagged);
        if (j && n->error[0])
            json_object_set_new(j, "error", json_string(n->error));
        if (j) {
            json_object_set_new(j, "gpu_model", n->model[0] ? json_string(n->model) : json_null());
            json_object_set_new(j, "stress_s", gq_json_num(n->stress_s));
            json_object_set_new(j, "group", n->group >= 0 ? json_integer(n->group) : json_null());
        }
        if (j && n->flagged) {
            json_t *why = json_array();
            if (strcmp(n->verdict, "pass"))
                json_array_append_new(why, json_sprintf("verdict %s", n->verdict));
            if (n->noutliers)
                json_array_append_new(
                    why, json_sprintf("%d outlier figure%s", n->noutliers, n->noutliers == 1 ? "" : "s"));
            json_object_set_new(j, "reasons", why);
            json_array_append_new(flagged, json_string(n->label));
        }
        json_array_append_new(nodes, j);
    }
    for (int i = 0; i < f->nout; i++) {
        const gq_fleet_outlier *x = &f->out[i];
        const gq_fleet_fig *g = &f->fig[x->fig];
        const gq_fleet_node *n = &f->node[x->node];
        json_array_append_new(outs, json_pack("{s:s, s:i, s:i, s:s, s:s, s:b, s:o, s:o, s:o, s:o}", "node",
                                              n->label, "rank", n->rank, "group", x->group, "figure", g->key,
                                              "unit", g->unit, "higher_is_better", g->higher_is_better,
                                              "value", gq_json_num(x->value), "fleet_median",
                                              gq_json_num(x->median), "delta_pct", gq_json_num(x->delta_pct),
                                              "delta_abs", gq_json_num(x->delta_abs)));
    }
    json_object_set_new(o, "nodes", nodes);
    json_object_set_new(o, "figures", json_integer(f->nfig));
    json_object_set_new(o, "figures_compared", json_integer(f->ncompared));
    json_object_set_new(o, "outliers", outs);
    json_object_set_new(o, "flagged", flagged);
    return o;
}

static void upper(const char *s, char *b, size_t n)
{
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++)
        b[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
    b[i] = 0;
}

void gq_fleet_print(FILE *out, const gq_fleet *f, bool md, int max_outliers)
{
    int cnt[5] = {0}; /* pass warn fail incomplete error */
    static const char *const names[] = {"pass", "warn", "fail", "incomplete", "error"};
    int with_out = 0;
    for (int i = 0; i < f->nnodes; i++) {
        for (int k = 0; k < 5; k++)
            cnt[k] += !strcmp(f->node[i].verdict, names[k]);
        with_out += f->node[i].noutliers > 0;
    }
    char V[16];
    upper(f->verdict, V, sizeof V);
    fprintf(out, "%sgpuqual fleet: %d node%s — %s\n", md ? "# " : "", f->nnodes, f->nnodes == 1 ? "" : "s",
            V);
    if (md)
        fputc('\n', out);
    fprintf(
        out,
        "cards: %d pass, %d warn, %d fail, %d incomplete, %d did not run; %d outlier figure%s on %d node%s "
        "(worse than their group's median by more than %.1f%%, temperatures by more than %.1f °C, over %d "
        "figure%s on two or more nodes of a group)\n",
        cnt[0], cnt[1], cnt[2], cnt[3], cnt[4], f->nout, f->nout == 1 ? "" : "s", with_out,
        with_out == 1 ? "" : "s", f->threshold_pct, f->threshold_c, f->ncompared,
        f->ncompared == 1 ? "" : "s");
    fprintf(out, "groups (GPU model, stress duration; outliers are found within each):");
    for (int g = 0; g < f->ngroups; g++) {
        char st[32] = "no stress";
        if (!isnan(f->groups[g].stress_s))
            snprintf(st, sizeof st, "stress %g s", f->groups[g].stress_s);
        fprintf(out, "%s [%d] %s, %s: %d node%s", g ? ";" : "", g,
                f->groups[g].model[0] ? f->groups[g].model : "GPU model unknown", st, f->groups[g].nnodes,
                f->groups[g].nnodes == 1 ? "" : "s");
    }
    fputs(f->ngroups ? "\n" : " none\n", out);
    fputc('\n', out);
    if (md)
        fputs("## Nodes\n\n| rank | node | card | verdict | outliers | note |\n|---:|---|---|---|---:|---|\n",
              out);
    else
        fprintf(out, "%-5s %-32s %-11s %-8s %s\n", "rank", "node", "verdict", "outliers", "note");
    for (int i = 0; i < f->nnodes; i++) {
        const gq_fleet_node *n = &f->node[i];
        char note[600] = "";
        if (n->error[0])
            snprintf(note, sizeof note, "%s", n->error);
        else if (n->flagged)
            snprintf(note, sizeof note, "flagged");
        if (md)
            fprintf(out, "| %d | %s | %s | %s | %d | %s |\n", n->rank, n->label, n->card_host, n->verdict,
                    n->noutliers, note);
        else
            fprintf(out, "%-5d %-32s %-11s %-8d %s\n", n->rank, n->label, n->verdict, n->noutliers, note);
    }
    if (f->nout) {
        fputs(md ? "\n## Outliers\n\n| node | figure | value | group median | delta "
                   "|\n|---|---|---:|---:|---:|\n"
                 : "\noutliers:\n",
              out);
        int shown = 0;
        for (int i = 0; i < f->nout; i++) {
            if (!md && max_outliers > 0 && shown >= max_outliers)
                break;
            const gq_fleet_outlier *x = &f->out[i];
            const gq_fleet_fig *g = &f->fig[x->fig];
            char a[32], b[32], d[32];
            if (g->absolute)
                snprintf(d, sizeof d, "%+.1f %s", x->delta_abs, g->unit);
            else
                snprintf(d, sizeof d, "%+.1f%%", x->delta_pct);
            if (md)
                fprintf(out, "| %s | %s | %s %s | %s %s | %s |\n", f->node[x->node].label, g->key,
                        gq_fmt_num(x->value, GQ_NUM_RUNS, a, sizeof a), g->unit,
                        gq_fmt_num(x->median, GQ_NUM_RUNS, b, sizeof b), g->unit, d);
            else
                fprintf(out, "  %-24s %-56s %s %s (group %d median %s, %s)\n", f->node[x->node].label, g->key,
                        gq_fmt_num(x->value, GQ_NUM_RUNS, a, sizeof a), g->unit, x->group,
                        gq_fmt_num(x->median, GQ_NUM_RUNS, b, sizeof b), d);
            shown++;
        }
        if (shown < f->nout)
            fprintf(out, "  (%d more in fleet.json and fleet.md)\n", f->nout - shown);
    }
    if (md && f->nnodes < 2)
        fputs("\nA fleet of one node has no median to compare against: only its card's verdict counts.\n",
              out);
}
