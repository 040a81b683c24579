/* The fleet as one self-contained HTML page: the node × check heatmap and the
 * outliers (render/analysis_render.h). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/analysis_render.h"
#include "render/numfmt.h"
#include "render/svg.h"

static const char fleet_css[] =
    "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1400px;color:#222;padding:0 1em}"
    "h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em}.meta{color:#555;font-size:.92em}"
    "table{border-collapse:collapse;font-size:.85em}td,th{border:1px solid #ccc;padding:2px 6px}"
    "th{background:#f3f3f3;position:sticky;top:0}th.c{writing-mode:vertical-rl;transform:rotate(180deg)}"
    "td.h{text-align:center;min-width:1.6em;color:#fff;font-weight:600}"
    ".v-pass{background:#2e7d32}.v-warn{background:#ef8f00}.v-fail{background:#c62828}"
    ".v-incomplete{background:#6a1b9a}.v-error{background:#212121}.v-info{background:#607d8b}"
    ".v-none{background:#fff}.v-skip{background:repeating-linear-gradient(45deg,#bdbdbd 0 4px,#e0e0e0 4px "
    "8px);color:#333!important}tr.flag td.n{background:#fff3cd;font-weight:600}"
    ".legend span{display:inline-block;padding:2px 8px;margin-right:6px;color:#fff}td.r{text-align:right}";

static void esc(FILE *f, const char *s)
{
    gq_svg_escape(f, s ? s : "");
}

/* Worse first: the order a cell shows. */
static int rank_of(const char *v)
{
    static const char *const order[] = {"pass", "info", "skip", "warn", "incomplete", "fail"};
    for (int i = 0; i < 6; i++)
        if (v && !strcmp(v, order[i]))
            return i;
    return 2; /* unknown verdicts read as not measured, never as a pass */
}

/* The distinct check ids across the nodes, in first-seen order (borrowed
 * from nodes); false when out of memory. */
typedef struct cols {
    int n;
    const char **id;
} cols;

static bool columns(const gq_card_nodes *nodes, cols *out)
{
    int cap = 0;
    out->n = 0;
    out->id = NULL;
    for (int i = 0; i < nodes->n; i++)
        for (int k = 0; k < nodes->node[i].nchecks; k++) {
            const char *id = nodes->node[i].checks[k].id;
            bool seen = !id;
            for (int c = 0; !seen && c < out->n; c++)
                seen = !strcmp(out->id[c], id);
            if (seen)
                continue;
            if (out->n == cap) {
                cap = cap ? 2 * cap : 64;
                const char **p = realloc(out->id, (size_t)cap * sizeof *p);
                if (!p) {
                    free(out->id);
                    return false;
                }
                out->id = p;
            }
            out->id[out->n++] = id;
        }
    return true;
}

/* One cell's verdict: the worst of check id over the node's subjects; a
 * subject not measured (evidence other than "measured") reads as "skip".
 * NULL: the node's card has no such check. *nsub, *nnot: subjects, of them
 * not measured; *why: the evidence_reason (or evidence) of one. */
static const char *cell_verdict(const gq_card_node *node, const char *id, int *nsub, int *nnot,
                                const char **why)
{
    const char *worst = NULL;
    *nsub = *nnot = 0;
    *why = NULL;
    for (int k = 0; k < node->nchecks; k++) {
        const gq_card_node_check *c = &node->checks[k];
        if (!c->id || strcmp(c->id, id))
            continue;
        const char *v = c->verdict, *ev = c->evidence;
        (*nsub)++;
        if (!ev || strcmp(ev, "measured")) {
            v = "skip";
            (*nnot)++;
            *why = c->reason;
            if (!*why)
                *why = ev ? ev : "unknown";
        }
        if (!worst || rank_of(v) > rank_of(worst))
            worst = v ? v : "skip";
    }
    static const char *const cls[] = {"pass", "info", "skip", "warn", "incomplete", "fail"};
    return worst ? cls[rank_of(worst)] : NULL;
}

static const char *fill_of(const char *v)
{
    static const char *const names[] = {"pass", "info", "skip", "warn", "incomplete", "fail", "error"};
    static const char *const fills[] = {"#2e7d32", "#607d8b", "url(#notm)", "#ef8f00",
                                        "#6a1b9a", "#c62828", "#212121"};
    for (int i = 0; i < 7; i++)
        if (!strcmp(v, names[i]))
            return fills[i];
    return "#ffffff";
}

/* The heatmap as one SVG: a row per node, a column per check id. */
static void heatmap(FILE *f, const gq_fleet *fl, const gq_card_nodes *nodes, const cols *cols)
{
    int ncol = cols->n, ch = fl->nnodes > 200 ? 3 : fl->nnodes > 60 ? 6 : 14, cw = 18;
    int left = 170, top = 120, w = left + (ncol + 1) * cw + 10, h = top + fl->nnodes * ch + 10;
    fputs("<h2>Nodes × checks</h2>\n<p class=\"legend\"><span class=\"v-pass\">pass</span><span "
          "class=\"v-warn\">warn</span><span class=\"v-fail\">fail</span><span "
          "class=\"v-info\">info</span><span "
          "class=\"v-incomplete\">incomplete</span><span class=\"v-skip\">not measured</span><span "
          "class=\"v-error\">did not run</span> — a row per node, a column per check; a cell is the worst "
          "verdict of that check over its subjects (GPUs, links); white: the node's card has no such check; "
          "the first column is the node's verdict. Hover for details.</p>\n",
          f);
    fprintf(f,
            "<figure><svg id=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-size=\"11\"><defs><pattern id=\"notm\" width=\"6\" height=\"6\" "
            "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" "
            "fill=\"#e0e0e0\"/><rect width=\"3\" height=\"6\" fill=\"#9e9e9e\"/></pattern></defs>\n",
            w, h, w, h);
    fprintf(f, "<text x=\"%d\" y=\"%d\" transform=\"rotate(-60 %d %d)\">node verdict</text>\n", left + 6,
            top - 4, left + 6, top - 4);
    for (int c = 0; c < ncol; c++) {
        int x = left + (c + 1) * cw + cw / 2;
        fprintf(f, "<text x=\"%d\" y=\"%d\" transform=\"rotate(-60 %d %d)\">", x, top - 4, x, top - 4);
        esc(f, cols->id[c]);
        fputs("</text>\n", f);
    }
    for (int i = 0; i < fl->nnodes; i++) {
        const gq_fleet_node *n = &fl->node[i];
        const gq_card_node *node = i < nodes->n ? &nodes->node[i] : NULL;
        int y = top + i * ch;
        if (ch >= 10 || n->flagged) {
            fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\"%s>", left - 4,
                    y + (ch >= 10 ? ch - 3 : ch), n->flagged ? " font-weight=\"bold\"" : "");
            esc(f, n->label);
            fputs("</text>", f);
        }
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>", left, y, cw - 1,
                ch - (ch > 4), fill_of(n->verdict));
        esc(f, n->label);
        fprintf(f, ": %s%s", n->verdict, n->error[0] ? " — " : "");
        esc(f, n->error);
        fputs("</title></rect>", f);
        for (int c = 0; node && c < ncol; c++) {
            const char *id = cols->id[c], *why;
            int nsub, nnot;
            const char *v = cell_verdict(node, id, &nsub, &nnot, &why);
            if (!v)
                continue;
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" data-v=\"%s\"><title>",
                    left + (c + 1) * cw, y, cw - 1, ch - (ch > 4), fill_of(v), v);
            esc(f, n->label);
            fputs(" ", f);
            esc(f, id);
            fprintf(f, ": %s over %d subject%s", !strcmp(v, "skip") ? "not measured" : v, nsub,
                    nsub == 1 ? "" : "s");
            if (nnot) {
                fprintf(f, "; %d not measured (", nnot);
                esc(f, why);
                fputc(')', f);
            }
            fputs("</title></rect>", f);
        }
        fputc('\n', f);
    }
    fputs("</svg><figcaption>Nodes × checks, coloured by verdict.</figcaption></figure>\n", f);
}

/* The flagged nodes, each with why: its verdict, its failing checks, its
 * outlier count, or why its card did not run. */
static void flagged_table(FILE *f, const gq_fleet *fl, const gq_card_nodes *nodes, const cols *cols)
{
    fprintf(f, "<h2>Flagged nodes</h2>\n<p>%d of %d node%s.</p>\n", fl->nflagged, fl->nnodes,
            fl->nnodes == 1 ? "" : "s");
    if (!fl->nflagged)
        return;
    fputs("<table id=\"flagged\">\n<tr><th>rank</th><th>node</th><th>verdict</th><th>outlier figures</th>"
          "<th>why</th></tr>\n",
          f);
    for (int i = 0; i < fl->nnodes; i++) {
        const gq_fleet_node *n = &fl->node[i];
        if (!n->flagged)
            continue;
        fprintf(f, "<tr class=\"flag\"><td class=\"r\">%d</td><td class=\"n\">", n->rank);
        esc(f, n->label);
        fprintf(f, "</td><td class=\"h v-%s\">%s</td><td class=\"r\">%d</td><td>", n->verdict, n->verdict,
                n->noutliers);
        if (n->error[0]) {
            fputs("did not run: ", f);
            esc(f, n->error);
        }
        const gq_card_node *node = i < nodes->n ? &nodes->node[i] : NULL;
        int shown = 0;
        for (int c = 0; node && c < cols->n; c++) {
            const char *id = cols->id[c], *why;
            int nsub, nnot;
            const char *v = cell_verdict(node, id, &nsub, &nnot, &why);
            if (v && (!strcmp(v, "fail") || !strcmp(v, "warn") || !strcmp(v, "incomplete"))) {
                fputs(shown++ ? ", " : "checks: ", f);
                esc(f, id);
                fprintf(f, " %s", v);
            }
        }
        if (n->noutliers)
            fprintf(f, "%s%d figure%s off the group median (below)", shown ? "; " : "", n->noutliers,
                    n->noutliers == 1 ? "" : "s");
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

static void outliers(FILE *f, const gq_fleet *fl)
{
    int with = 0;
    for (int i = 0; i < fl->nnodes; i++)
        with += fl->node[i].noutliers > 0;
    fprintf(f,
            "<h2>Outliers</h2>\n<p>%d figure%s on %d node%s worse than their group's median by more than "
            "%.1f%% (temperatures by more than %.1f °C).</p>\n",
            fl->nout, fl->nout == 1 ? "" : "s", with, with == 1 ? "" : "s", fl->threshold_pct,
            fl->threshold_c);
    if (!fl->nout)
        return;
    fputs("<table id=\"outliers\">\n<tr><th>node</th><th>figure</th><th>value</th><th>group "
          "median</th><th>delta</th></tr>\n",
          f);
    for (int i = 0; i < fl->nout; i++) {
        const gq_fleet_outlier *x = &fl->out[i];
        const gq_fleet_fig *g = &fl->fig[x->fig];
        char a[32], b[32];
        fputs("<tr><td>", f);
        esc(f, fl->node[x->node].label);
        fputs("</td><td>", f);
        esc(f, g->key);
        fprintf(f, "</td><td class=\"r\">%s %s</td><td class=\"r\">%s %s</td><td class=\"r\">",
                gq_fmt_num(x->value, GQ_NUM_RUNS, a, sizeof a), g->unit,
                gq_fmt_num(x->median, GQ_NUM_RUNS, b, sizeof b), g->unit);
        if (g->absolute)
            fprintf(f, "%+.1f %s", x->delta_abs, g->unit);
        else
            fprintf(f, "%+.1f%%", x->delta_pct);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

int gq_fleet_render_html(FILE *out, const gq_fleet *f, const gq_card_nodes *nodes, gq_err *err)
{
    cols cols;
    if (!columns(nodes, &cols))
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    fprintf(out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>gpuqual "
            "fleet: %d node%s — %s</title>\n<style>%s</style>\n</head>\n<body>\n",
            f->nnodes, f->nnodes == 1 ? "" : "s", f->verdict, fleet_css);
    fprintf(out,
            "<h1>gpuqual fleet: %d node%s — <span class=\"h v-%s\" style=\"padding:2px 10px;color:#fff\">%s"
            "</span></h1>\n",
            f->nnodes, f->nnodes == 1 ? "" : "s", f->verdict, f->verdict);
    int cnt[5] = {0}; /* pass warn fail incomplete error */
    static const char *const names[] = {"pass", "warn", "fail", "incomplete", "error"};
    for (int i = 0; i < f->nnodes; i++)
        for (int k = 0; k < 5; k++)
            cnt[k] += !strcmp(f->node[i].verdict, names[k]);
    fprintf(out,
            "<p class=\"meta\">Cards: %d pass, %d warn, %d fail, %d incomplete, %d did not run; %d node%s "
            "flagged. Outliers are found within each group of nodes of one GPU model and stress duration (%d "
            "group%s).</p>\n",
            cnt[0], cnt[1], cnt[2], cnt[3], cnt[4], f->nflagged, f->nflagged == 1 ? "" : "s", f->ngroups,
            f->ngroups == 1 ? "" : "s");
    heatmap(out, f, nodes, &cols);
    flagged_table(out, f, nodes, &cols);
    outliers(out, f);
    fputs("</body>\n</html>\n", out);
    free(cols.id);
    return ferror(out) ? gq_err_set(err, GQ_E_IO, "cannot write the HTML") : GQ_OK;
}
