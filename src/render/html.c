/* The card as ONE self-contained HTML file: inline CSS and SVG, no script, no
 * network, no external file, from the typed card document (render/card_render.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "render/card_render.h"
#include "render/html_internal.h"
#include "render/svg.h"
#include "render/numfmt.h"

static const char css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0 auto;max-width:1100px;"
    "padding:16px 24px;color:#1b1b1b;line-height:1.45}"
    "h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ddd;"
    "padding-bottom:.2em}"
    "table{border-collapse:collapse;margin:.6em 0;font-size:.92em}"
    "th,td{border:1px solid #d6d6d6;padding:4px 8px;vertical-align:top}th{background:#f3f3f3;text-align:left}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}"
    ".badge{display:inline-block;padding:2px 10px;border-radius:4px;font-weight:bold;color:#fff}"
    ".v-pass{background:#2e7d32}.v-warn{background:#ef8f00}.v-fail{background:#c62828}"
    ".v-info{background:#607d8b}.v-skip{background:#9e9e9e}.v-incomplete{background:#6a1b9a}"
    ".big{font-size:1.3em;padding:4px 16px}"
    ".note{background:#fff3cd;border:1px solid #e0c060;padding:8px 12px;border-radius:4px}"
    ".sim{background:#e8f0fe;border:1px solid #9ab7e8;padding:8px 12px;border-radius:4px}"
    "figure{margin:1.2em 0;padding:0}figcaption{font-size:.9em;color:#444;margin-top:.3em}"
    ".meta{color:#555;font-size:.92em}"
    ".alert{background:#fdecea;border:2px solid #c62828;padding:8px 12px;border-radius:4px}"
    ".alert h2{margin-top:.2em;border:none}tr.bad td{background:#fdecea}td.cause{max-width:420px}"
    "tr.slow td{background:#fff3cd}td.slow{font-weight:bold;color:#8a4b00}"
    ".scroll{overflow-x:auto;max-width:100%}.scroll table{margin:0}"
    "@media print{body{max-width:none}figure{break-inside:avoid}}"
    /* Small screens (a phone, 420 px): the tables with a verdict become one block per row, the row's
     * name and its verdict on the first line and each other cell under them with its column's name
     * (data-l), so the verdict never leaves the screen; the wide tables scroll inside their box. */
    "@media (max-width:700px){body{padding:8px 10px;overflow-wrap:anywhere}h1{font-size:1.3em}"
    "table.stack,table.stack tbody,table.stack tr,table.stack td{display:block}"
    "table.stack tr:first-child{display:none}"
    "table.stack tr{display:flex;flex-wrap:wrap;align-items:baseline;border:1px solid #d6d6d6;"
    "margin:.5em 0;padding:2px 0}"
    "table.stack td{border:none;flex:1 1 100%;padding:2px 8px;max-width:none;box-sizing:border-box}"
    "table.stack td.lead{flex:1 1 0;order:-2;font-weight:bold}table.stack td.v{flex:0 0 auto;order:-1}"
    "table.stack td[data-l]::before{content:attr(data-l) \": \";color:#666;font-size:.9em}}";

static void esc(FILE *f, const char *s)
{
    gq_svg_escape(f, s);
}

static const char *vclass(const char *v)
{
    static const char *const known[] = {"pass", "warn", "fail", "info", "skip", "incomplete"};
    for (int i = 0; i < 6; i++)
        if (v && !strcmp(v, known[i]))
            return known[i];
    return "skip";
}

static const char *vword(const char *v)
{
    if (!v)
        return "–";
    if (!strcmp(v, "skip"))
        return "not measured";
    return v;
}

static void badge(FILE *f, const char *v, bool big)
{
    fprintf(f, "<span class=\"badge v-%s%s\">", vclass(v), big ? " big" : "");
    esc(f, vword(v));
    fputs("</span>", f);
}

/* ---- tables --------------------------------------------------------------- */

static void td_num(FILE *f, double v)
{
    char b[32];
    fprintf(f, "<td class=\"num\">%s</td>", gq_fmt_num(v, GQ_NUM_FIGURE, b, sizeof b));
}

static void td_text(FILE *f, const char *s)
{
    fputs("<td>", f);
    esc(f, s);
    fputs("</td>", f);
}

/* A cell of a stacked table (class "stack"): on a small screen it shows its
 * column's name, label, before its text. */
static void td_l(FILE *f, const char *label, const char *s)
{
    fputs("<td data-l=\"", f);
    esc(f, label);
    fputs("\">", f);
    esc(f, s);
    fputs("</td>", f);
}

static void td_nl(FILE *f, const char *label, double v)
{
    char b[32];
    fputs("<td class=\"num\" data-l=\"", f);
    esc(f, label);
    fprintf(f, "\">%s</td>", gq_fmt_num(v, GQ_NUM_FIGURE, b, sizeof b));
}

/* The row's name: first on its line on a small screen, its verdict beside it. */
static void td_lead(FILE *f, const char *s)
{
    fputs("<td class=\"lead\">", f);
    esc(f, s);
    fputs("</td>", f);
}

/* A cell listing a GPU set's indices, "0,1,2", every one of them. */
static void td_gpus(FILE *f, const gq_cf_ints *l)
{
    fputs("<td>", f);
    for (int i = 0; i < l->n; i++)
        fprintf(f, "%s%lld", i ? "," : "", l->v[i]);
    fputs("</td>", f);
}

/* The identity fields a check can find wrong, and how the card names them.
 * The identity step's other checks (impossible records, overlap, errors) are
 * about the measurements, not the machine's identity. */
static const struct {
    const char *id, *field;
} id_fields[] = {
    {"link_width", "PCIe link width"},
    {"link_gen", "PCIe link generation"},
    {"pcie_width_min", "PCIe link width"},
    {"pcie_gen_min", "PCIe link generation"},
    {"memory_mib_min", "memory"},
    {"power_limit_w_min", "power limit"},
    {"count_min", "GPU count"},
    {"expect_uncovered", "model"},
    {"expect_model_unmatched", "model"},
    {"vbios", "VBIOS"},
    {"ecc", "ECC mode"},
    {"mig", "MIG mode"},
    {"persistence", "persistence mode"},
    {"driver", "driver"},
};

/* The field a failing identity check is about, or NULL when c is not one. */
static const char *identity_field(const gq_check *c)
{
    if (c->step != GQ_CS_IDENTITY || (c->verdict != GQ_V_FAIL && c->verdict != GQ_V_WARN))
        return NULL;
    for (size_t i = 0; i < sizeof id_fields / sizeof id_fields[0]; i++)
        if (!strncmp(c->id, id_fields[i].id, strlen(id_fields[i].id)))
            return id_fields[i].field;
    return NULL;
}

static bool identity_problem(const gq_check *c)
{
    return identity_field(c) != NULL;
}

/* "gpu:1" as "GPU 1"; other subjects as they are. */
static void subject_text(const char *subj, char *buf, size_t n)
{
    if (!strncmp(subj, "gpu:", 4))
        snprintf(buf, n, "GPU %s", subj + 4);
    else if (!strncmp(subj, "model:", 6))
        snprintf(buf, n, "every %s", subj + 6);
    else
        snprintf(buf, n, "%s", subj);
}

static void html_identity_row(FILE *f, const gq_cf_id_gpu *g, const gq_checklist *cl)
{
    char b[64], c[32];
    char subj[32];
    snprintf(subj, sizeof subj, "gpu:%lld", g->index);
    bool bad = false;
    for (int k = 0; k < cl->n && !bad; k++)
        bad = identity_problem(&cl->v[k]) && !strcmp(cl->v[k].subject, subj);
    fputs(bad ? "<tr class=\"bad\">" : "<tr>", f);
    td_num(f, g->index_num);
    td_text(f, gq_cf_or(g->name, "?"));
    td_num(f, g->memory_mib);
    td_num(f, g->power_limit_w);
    snprintf(b, sizeof b, "Gen%s x%s %s", gq_fmt_num(g->gen, GQ_NUM_FIGURE, c, 16),
             gq_fmt_num(g->width, GQ_NUM_FIGURE, c + 16, 16), g->under_load ? "(under load)" : "(idle)");
    td_text(f, b);
    snprintf(b, sizeof b, "Gen%s x%s", gq_fmt_num(g->gen_max, GQ_NUM_FIGURE, c, 16),
             gq_fmt_num(g->width_max, GQ_NUM_FIGURE, c + 16, 16));
    td_text(f, b);
    td_num(f, g->nvlinks);
    double numa = g->numa_node;
    td_text(f, isfinite(numa) && numa >= 0 ? gq_fmt_num(numa, GQ_NUM_FIGURE, c, sizeof c) : "n/a");
    td_text(f, gq_cf_or(g->uuid, ""));
    fputs("</tr>\n", f);
}

static void html_identity(FILE *f, const gq_cf_identity *id, const gq_checklist *cl)
{
    if (!id->present)
        return;
    fputs("<h2 id=\"identity\">Identity and links</h2>\n<div "
          "class=\"scroll\"><table><tr><th>GPU</th><th>model</th><th>memory "
          "MiB</th>"
          "<th>power limit W</th><th>PCIe now</th><th>PCIe "
          "max</th><th>NVLinks</th><th>NUMA</th><th>UUID</th></tr>\n",
          f);
    char b[64];
    for (int i = 0; i < id->ngpus; i++)
        html_identity_row(f, &id->gpus[i], cl);
    fputs("</table></div>\n", f);
    for (int i = 0; i < id->ngpus; i++) {
        const gq_cf_id_gpu *g = &id->gpus[i];
        snprintf(b, sizeof b, "GPU %lld: VBIOS ", g->index);
        fputs("<p class=\"meta\">", f);
        esc(f, b);
        esc(f, gq_cf_or(g->vbios, "unknown"));
        fputs(", serial ", f);
        esc(f, gq_cf_or(g->serial, "unknown"));
        fputs(", ECC ", f);
        esc(f, gq_cf_or(g->ecc_mode, "unknown"));
        fputs(", MIG ", f);
        esc(f, gq_cf_or(g->mig_mode, "unknown"));
        fputs(", persistence ", f);
        esc(f, gq_cf_or(g->persistence_mode, "unknown"));
        fputs("</p>\n", f);
    }
    fputs("<p class=\"meta\">Driver ", f);
    esc(f, gq_cf_or(id->driver, "?"));
    fputs(", CUDA driver ", f);
    esc(f, gq_cf_or(id->cuda_driver_str, "?"));
    fputs(", runtime ", f);
    esc(f, gq_cf_or(id->cuda_runtime_str, "?"));
    fputs("; CPU ", f);
    esc(f, gq_cf_or(id->cpu, "?"));
    fprintf(f, "; %s NUMA node(s) visible%s; gpuqual ",
            gq_fmt_num(id->numa_nodes, GQ_NUM_FIGURE, b, sizeof b), id->vm ? " (virtual machine)" : "");
    esc(f, gq_cf_or(id->gpuqual, "?"));
    fputs(".</p>\n", f);
}

static void html_checks(FILE *f, const gq_checklist *cl)
{
    if (!cl->n)
        return;
    static const gq_verdict order[] = {GQ_V_FAIL, GQ_V_WARN, GQ_V_PASS, GQ_V_INFO, GQ_V_SKIP};
    fputs("<h2 "
          "id=\"checks\">Checks</h2>\n<table "
          "class=\"stack\"><tr><th>verdict</th><th>check</th><th>subject</th><th>figure</th>"
          "<th>threshold</th><th>detail</th></tr>\n",
          f);
    char b[64], x[32];
    for (int o = 0; o < 5; o++)
        for (int i = 0; i < cl->n; i++) {
            const gq_check *c = &cl->v[i];
            if (c->verdict != order[o])
                continue;
            fputs("<tr><td class=\"v\">", f);
            badge(f, gq_verdict_name(order[o]), false);
            fputs("</td>", f);
            td_lead(f, c->id);
            td_l(f, "subject", c->subject);
            snprintf(b, sizeof b, "%s %s", gq_fmt_num(c->figure, GQ_NUM_FIGURE, x, sizeof x),
                     isfinite(c->figure) ? c->unit : "");
            td_l(f, "figure", b);
            snprintf(b, sizeof b, "%s %s", gq_fmt_num(c->threshold, GQ_NUM_FIGURE, x, sizeof x),
                     isfinite(c->threshold) ? c->unit : "");
            td_l(f, "threshold", b);
            td_l(f, "detail", c->text);
            fputs("</tr>\n", f);
        }
    fputs("</table>\n", f);
}

/* A cell with a subset's per-GPU figures, "24.1, 23.9", each GPU's (at most
 * GQ_CF_MAX_NUMS, as decoded); "–" for a direction not measured. */
static void td_per_gpu(FILE *f, const gq_cf_subset *s)
{
    char x[32];
    if (!s) {
        td_text(f, "–");
        return;
    }
    fputs("<td>", f);
    for (int k = 0; k < s->per_gpu.n; k++) {
        fputs(k ? ", " : "", f);
        esc(f, gq_fmt_num(s->per_gpu.v[k], GQ_NUM_FIGURE, x, sizeof x));
    }
    fputs("</td>", f);
}

static bool same_ints(const gq_cf_ints *a, const gq_cf_ints *b)
{
    if (a->n != b->n)
        return false;
    for (int i = 0; i < a->n; i++)
        if (a->v[i] != b->v[i])
            return false;
    return true;
}

/* One row per GPU set, both directions side by side: a set is listed once
 * even when the document has it twice (a card of an older gpuqual also
 * listed the placement step's sets). */
static void html_host_subsets(FILE *f, const gq_cf_host *host)
{
    if (!host->nsubsets)
        return;
    fputs("<h3>Host-path subsets</h3>\n<p class=\"meta\">Highlighted: a subset whose GPUs together moved "
          "less than they move alone (contended: they share a host path).</p>\n"
          "<div class=\"scroll\"><table><tr><th>GPUs</th><th>why this subset</th>"
          "<th>host→GPU per GPU, GB/s</th><th>host→GPU aggregate GB/s</th>"
          "<th>GPU→host per GPU, GB/s</th><th>GPU→host aggregate GB/s</th></tr>\n",
          f);
    const gq_cf_subset *subs = host->subsets;
    for (int i = 0; i < host->nsubsets; i++) {
        const gq_cf_ints *gs = &subs[i].gpus;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = same_ints(gs, &subs[j].gpus);
        if (seen)
            continue;
        const gq_cf_subset *dir[2] = {NULL, NULL}; /* h2d, d2h: the first of each */
        const char *why = NULL;
        for (int j = 0; j < host->nsubsets; j++) {
            const gq_cf_subset *o = &subs[j];
            if (!same_ints(gs, &o->gpus))
                continue;
            int d = !strcmp(gq_cf_or(o->direction, ""), "d2h");
            if (!dir[d])
                dir[d] = o;
            if (!why && o->why)
                why = o->why;
        }
        bool slow[2];
        for (int d = 0; d < 2; d++)
            slow[d] = dir[d] && dir[d]->contended;
        fputs(slow[0] || slow[1] ? "<tr class=\"slow\">" : "<tr>", f);
        td_gpus(f, gs);
        td_text(f, why ? why : "not recorded");
        for (int d = 0; d < 2; d++) {
            td_per_gpu(f, dir[d]);
            double agg = dir[d] ? dir[d]->aggregate_gbps : NAN, alone = dir[d] ? dir[d]->sum_alone_gbps : NAN;
            char x[32];
            if (slow[d] && isfinite(agg) && alone > 0)
                fprintf(f, "<td class=\"num slow\">%s (%.0f%% of alone)</td>",
                        gq_fmt_num(agg, GQ_NUM_FIGURE, x, sizeof x), 100 * agg / alone);
            else
                td_num(f, agg);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);
}

/* Why GPU gpu failed or warned: the text of its failing checks, then of its
 * warning ones (sentences, one space between), into buf; "" when it has none. */
static void gpu_cause(const gq_checklist *cl, long long gpu, char *buf, size_t n)
{
    char subj[32];
    snprintf(subj, sizeof subj, "gpu:%lld", gpu);
    size_t used = 0;
    buf[0] = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < cl->n; i++) {
            const gq_check *c = &cl->v[i];
            if (c->verdict != (pass ? GQ_V_WARN : GQ_V_FAIL) || strcmp(c->subject, subj))
                continue;
            int w = snprintf(buf + used, n - used, "%s%s", used ? " " : "", c->text);
            if (w < 0 || (size_t)w >= n - used) {
                buf[n - 1] = 0;
                return;
            }
            used += (size_t)w;
        }
}

static void html_stress(FILE *f, const gq_cf_stress *st, const gq_checklist *cl)
{
    if (!st->present)
        return;
    char b[64], cause[1024];
    fputs("<table class=\"stack\"><tr><th>GPU</th><th>avg °C</th><th>max °C</th><th>avg W</th><th>limit "
          "W</th><th>avg SM "
          "MHz</th>"
          "<th>power-capped %</th><th>thermal slowdown</th><th>faulty elements</th><th>verdict</th>"
          "<th>cause</th></tr>\n",
          f);
    for (int i = 0; i < st->ngpus; i++) {
        const gq_cf_stress_gpu *g = &st->gpus[i];
        long long gpu = g->gpu;
        const char *v = gq_cf_or(g->verdict, "skip");
        gpu_cause(cl, gpu, cause, sizeof cause);
        if (!cause[0] && strcmp(v, "pass")) /* no check names it: the stress result's own error */
            snprintf(cause, sizeof cause, "%s", gq_cf_or(g->error, ""));
        fprintf(f, "<tr data-gpu=\"%lld\" data-verdict=\"%s\"%s>", gpu, vclass(v),
                cause[0] || !strcmp(v, "fail") || !strcmp(v, "warn") ? " class=\"bad\"" : "");
        snprintf(b, sizeof b, "GPU %lld", gpu);
        td_lead(f, b);
        td_nl(f, "avg °C", g->temp_avg_c);
        td_nl(f, "max °C", g->temp_max_c);
        td_nl(f, "avg W", g->power_avg_w);
        td_nl(f, "limit W", g->power_limit_w);
        td_nl(f, "avg SM MHz", g->sm_clock_avg_mhz);
        td_nl(f, "power-capped %", g->power_capped_pct);
        td_l(f, "thermal slowdown", g->thermal_slowdown ? "yes" : "no");
        td_nl(f, "faulty elements", g->faulty_elements);
        fputs("<td class=\"v\">", f);
        badge(f, v, false);
        fputs("</td><td class=\"cause\" data-l=\"cause\">", f);
        esc(f, cause[0] ? cause : "–");
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    fprintf(f,
            "<p class=\"meta\">All GPUs together drew %s W on average (GPU telemetry, not wall power).</p>\n",
            gq_fmt_num(st->power_total_avg_w, GQ_NUM_FIGURE, b, sizeof b));
}

static void html_plan(FILE *f, const gq_card_doc *d)
{
    if (!d->nplan)
        return;
    char b[3][32];
    fprintf(f, "<h2 id=\"plan\">Plan</h2>\n<p class=\"meta\">Budget %s, planned %s, took %s.</p>\n",
            gq_fmt_duration(d->budget_s, b[0], 32), gq_fmt_duration(d->planned_s, b[1], 32),
            gq_fmt_duration(d->elapsed_s, b[2], 32));
    fputs("<div class=\"scroll\"><table><tr><th>step</th><th>estimate</th><th>took</th><th>status</th>"
          "<th>note</th></tr>\n",
          f);
    for (int i = 0; i < d->nplan; i++) {
        const gq_cf_plan_step *r = &d->plan[i];
        fputs("<tr>", f);
        td_text(f, gq_cf_or(r->title, "?"));
        fprintf(f, "<td class=\"num\">%s</td>", gq_fmt_duration(r->est_s, b[0], 32));
        fprintf(f, "<td class=\"num\">%s</td>", gq_fmt_duration(r->elapsed_s, b[1], 32));
        td_text(f, gq_cf_or(r->status, "?"));
        td_text(f, gq_cf_or(r->note, ""));
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);
}

/* The page's head, title, verdict, run facts and expectations line. */
static void html_head(FILE *f, const gq_card_doc *d, const char *ids)
{
    const gq_card *c = &d->card;
    const char *host = gq_cf_or(d->hostname, "?");
    const char *verdict = gq_card_verdict_name(c->verdict);
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
          /* Nothing may load from anywhere: the file must stand alone. */
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
          "'unsafe-inline'\"/>\n"
          "<title>Acceptance card: ",
          f);
    esc(f, host);
    fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body data-figures=\"", css);
    esc(f, ids);
    fprintf(f, "\" data-verdict=\"%s\">\n<h1>Acceptance card: ", vclass(verdict));
    esc(f, host);
    fputs("</h1>\n<p>", f);
    fprintf(f, "<span class=\"badge v-%s big\">", vclass(verdict));
    esc(f, c->verdict_text);
    fputs("</span>", f);
    char b[3][32];
    fprintf(f, " &#160;%d pass, %d warn, %d fail · level %s</p>\n", c->counts[GQ_V_PASS],
            c->counts[GQ_V_WARN], c->counts[GQ_V_FAIL], gq_card_level_name(c->level));
    fputs("<p class=\"meta\">Measured ", f);
    esc(f, gq_cf_or(d->timestamp, "?"));
    fputs(" · gpuqual ", f);
    esc(f, gq_cf_or(d->version, "?"));
    fputs(" (git ", f);
    esc(f, gq_cf_or(d->git, "?"));
    fprintf(f, ") · took %s of a %s budget</p>\n", gq_fmt_duration(d->elapsed_s, b[0], 32),
            gq_fmt_duration(d->budget_s, b[1], 32));
    if (d->simulated)
        fputs("<p class=\"sim\">Simulated machine: these figures are model output, not measurements.</p>\n",
              f);
    if (d->incomplete || !c->complete) {
        fputs("<p class=\"note\"><b>Incomplete.</b> The run stopped at step <code>", f);
        esc(f, gq_cf_or(d->stopped_at, "?"));
        fputs("</code>; this card shows only what was measured before.</p>\n", f);
    }
    fputs("<p class=\"meta\">", f);
    if (c->have_expect) {
        fputs("Expectations: <code>", f);
        esc(f, c->expect_file);
        fputs("</code> ", f);
        esc(f, c->expect_description);
    } else {
        fputs("No expectations file: only relative checks (GPUs of one model agree, links at their maximum, "
              "nothing "
              "impossible, nothing throttled).",
              f);
    }
    char ov[2400];
    gq_card_overrides_text(c, ov, sizeof ov);
    if (ov[0]) {
        fputs(" Overrides (<code>--set</code>): ", f);
        esc(f, ov);
        fputc('.', f);
    }
    fputs("</p>\n", f);
}

/* Failing identity fields (a link trained down, a VBIOS, ECC or MIG mode
 * other than expected), highlighted at the top of the card: they explain
 * most of what follows. Nothing when every identity check passed. */
static void html_identity_alert(FILE *f, const gq_checklist *cl)
{
    int n = 0;
    for (int i = 0; i < cl->n; i++)
        n += identity_problem(&cl->v[i]);
    if (!n)
        return;
    fputs(
        "<div class=\"alert\" id=\"identity-problems\">\n<h2>Identity problems</h2>\n"
        "<table class=\"stack\"><tr><th>verdict</th><th>GPU</th><th>field</th><th>found</th><th>expected</th>"
        "<th>cause</th></tr>\n",
        f);
    char b[64], x[32];
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < cl->n; i++) {
            const gq_check *c = &cl->v[i];
            if (!identity_problem(c) || c->verdict != (pass ? GQ_V_WARN : GQ_V_FAIL))
                continue;
            fputs("<tr class=\"bad\" data-check=\"", f);
            esc(f, c->id);
            fputs("\"><td class=\"v\">", f);
            badge(f, gq_verdict_name(c->verdict), false);
            fputs("</td>", f);
            char subj[160];
            subject_text(c->subject, subj, sizeof subj);
            td_lead(f, subj);
            td_l(f, "field", identity_field(c));
            snprintf(b, sizeof b, "%s %s", gq_fmt_num(c->figure, GQ_NUM_FIGURE, x, sizeof x),
                     isfinite(c->figure) ? c->unit : "");
            td_l(f, "found", b);
            snprintf(b, sizeof b, "%s %s", gq_fmt_num(c->threshold, GQ_NUM_FIGURE, x, sizeof x),
                     isfinite(c->threshold) ? c->unit : "");
            td_l(f, "expected", b);
            td_l(f, "cause", c->text);
            fputs("</tr>\n", f);
        }
    fputs("</table>\n<p class=\"meta\">The full identity table is under <a href=\"#identity\">Identity and "
          "links</a>.</p>\n</div>\n",
          f);
}

/* The card: one row per check, from the typed card. */
static void html_card_rows(FILE *f, const gq_card *c)
{
    fputs("<h2 id=\"card\">Card</h2>\n<table class=\"stack\" "
          "id=\"card-rows\"><tr><th>Check</th><th>Evidence</th><th>Result</th><th>Verdict</th>"
          "<th>Decision it supports</th></tr>\n",
          f);
    for (int i = 0; i < c->nrows; i++) {
        const gq_card_row *r = &c->rows[i];
        fputs("<tr>", f);
        td_lead(f, r->check);
        td_l(f, "Evidence", r->measurement);
        td_l(f, "Result", r->result);
        fputs("<td class=\"v\">", f);
        badge(f, gq_verdict_name(r->verdict), false);
        fputs("</td>", f);
        td_l(f, "Decision", r->decision);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* The findings, when there are any. */
static void html_findings(FILE *f, const gq_card *c)
{
    if (!c->nfindings)
        return;
    fputs("<h2 id=\"findings\">Findings</h2>\n<ul>\n", f);
    for (int i = 0; i < c->nfindings; i++) {
        fputs("<li>", f);
        esc(f, c->findings[i]);
        fputs("</li>\n", f);
    }
    fputs("</ul>\n", f);
}

/* The collectives step's TP groups: each group's all-reduce busbw alone and all at once. */
static void html_collectives(FILE *f, const gq_card_doc *d)
{
    if (!d->ngroups)
        return;
    fputs("<h2 id=\"collectives\">Collectives</h2>\n<table><tr><th>group</th><th>all-reduce busbw alone "
          "(GB/s)</th><th>all at once (GB/s)</th></tr>\n",
          f);
    for (int i = 0; i < d->ngroups; i++) {
        const gq_cf_coll_group *g = &d->groups[i];
        fputs("<tr><td>", f);
        for (int k = 0; k < g->gpus.n; k++)
            fprintf(f, "%s%d", k ? "," : "", (int)g->gpus.v[k]);
        fputs("</td>", f);
        td_num(f, g->alone_busbw_gbps);
        td_num(f, g->at_once_busbw_gbps);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* The recommended placement: prefill/decode pairs and notes. */
static void html_placement(FILE *f, const gq_cf_placement *pl)
{
    if (pl->npairs || pl->nnotes) {
        fputs("<h2 id=\"placement\">Recommended placement</h2>\n", f);
        if (pl->npairs) {
            fputs("<table><tr><th>prefill</th><th>decode</th><th>predicted GB/s</th><th>measured "
                  "GB/s</th></tr>\n",
                  f);
            for (int i = 0; i < pl->npairs; i++) {
                const gq_cf_pl_pair *r = &pl->pairs[i];
                fputs("<tr>", f);
                td_num(f, r->prefill);
                td_num(f, r->decode);
                td_num(f, r->predicted_gbps);
                double mv = r->measured_gbps;
                td_num(f, mv >= 0 ? mv : NAN);
                fputs("</tr>\n", f);
            }
            fputs("</table>\n", f);
        }
        fputs("<ul>\n", f);
        for (int i = 0; i < pl->nnotes; i++) {
            fputs("<li>", f);
            esc(f, pl->notes[i]);
            fputs("</li>\n", f);
        }
        fputs("</ul>\n", f);
    }
}

int gq_card_render_html(FILE *f, const gq_card_doc *d, gq_err *err)
{
    figs F = {0};
    char *fbuf = NULL;
    size_t flen = 0;
    F.f = open_memstream(&fbuf, &flen);
    if (!F.f)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory rendering the card");
    gq_html_figures(&F, d);
    fclose(F.f);

    const gq_card *c = &d->card;
    html_head(f, d, F.ids);
    html_identity_alert(f, &c->checks);
    html_card_rows(f, c);
    html_findings(f, c);
    if (F.n) {
        fputs("<h2 id=\"figures\">Figures</h2>\n", f);
        fwrite(fbuf, 1, flen, f);
    }
    free(fbuf);
    html_host_subsets(f, &d->host);
    if (d->stress.present) {
        fputs("<h2 id=\"stress\">Whole-node health</h2>\n", f);
        html_stress(f, &d->stress, &c->checks);
    }
    html_placement(f, &d->placement);
    html_collectives(f, d);
    html_checks(f, &c->checks);
    html_identity(f, &d->identity, &c->checks);
    html_plan(f, d);
    fputs("<p class=\"meta\">Units: GB/s = 10<sup>9</sup> bytes/s; buffer sizes in KiB/MiB/GiB. The full "
          "evidence "
          "(every record with its rounds, windows and overlap) is in card.json.</p>\n</body>\n</html>\n",
          f);
    if (F.err.code)
        return gq_err_set(err, F.err.code, "%s", F.err.msg);
    return ferror(f) ? gq_err_set(err, GQ_E_IO, "write error") : GQ_OK;
}
