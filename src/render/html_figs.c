/* The card's HTML figures (render/html_internal.h): P2P heatmaps, concurrent
 * pairs, host bandwidth, sweep curves and stress time series, as inline SVG,
 * from the typed card document. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "render/card_render.h"
#include "render/html_internal.h"
#include "render/svg.h"
#include "render/numfmt.h"

#define MAXG 64

static void esc(FILE *f, const char *s)
{
    gq_svg_escape(f, s);
}

/* ---- figures ------------------------------------------------------------- */

static void fig_begin(figs *F, const char *id)
{
    size_t l = strlen(F->ids);
    snprintf(F->ids + l, sizeof F->ids - l, "%s%s", l ? " " : "", id);
    F->n++;
    fprintf(F->f, "<figure id=\"fig-%s\">\n", id);
}

static void fig_end(figs *F, const char *caption)
{
    fputs("<figcaption>", F->f);
    esc(F->f, caption);
    fputs("</figcaption>\n</figure>\n", F->f);
}

static void fig_matrix(figs *F, const gq_cf_matrix *m, const char *id_override, const char *title_override)
{
    static char labels[MAXG][16];
    int n = m->n;
    if (!n)
        return;
    gq_card_matrix_labels(m, labels);
    const double *vals = m->vals;
    bool any = false;
    for (int i = 0; i < n * n; i++)
        any |= isfinite(vals[i]);
    if (!any)
        return;
    const char *labp[MAXG];
    for (int i = 0; i < n; i++)
        labp[i] = labels[i];
    const char *id = id_override ? id_override : gq_cf_or(m->id, "matrix");
    const char *unit = gq_cf_or(m->unit, "GB/s");
    const char *title = title_override ? title_override : gq_cf_or(m->title, "GPU pairs");
    gq_svg_heatmap h = {.id = id,
                        .title = title,
                        .unit = unit,
                        .n = n,
                        .labels = labp,
                        .vals = vals,
                        .low_is_good = !strcmp(unit, "ns")};
    fig_begin(F, id);
    gq_svg_write_heatmap(F->f, &h, &F->err);
    char cap[400];
    if (!strcmp(unit, "ns"))
        snprintf(cap, sizeof cap,
                 "%s, %s. Row: GPU running the pointer chase, column: GPU whose memory it reads.", title,
                 unit);
    else
        snprintf(cap, sizeof cap,
                 "%s, %s. Row: source GPU, column: destination. One pair at a time: summing the cells does "
                 "not give "
                 "what the server carries at once.%s",
                 title, unit, m->staged ? " Host-staged (no P2P)." : "");
    fig_end(F, cap);
}

static void fig_pairs(figs *F, const gq_cf_pairs *pairs)
{
    if (!pairs->present)
        return;
    char names[2 * MAXG][32];
    const char *cats[2 * MAXG];
    double vals[2 * 2 * MAXG];
    int ncat = 0;
    double agg[2] = {NAN, NAN};
    for (int s = 0; s < 2; s++) {
        const gq_cf_pairs_side *o = &pairs->side[s];
        if (!o->present)
            continue;
        const double *g = o->gbps.v;
        int ng = o->gbps.n;
        agg[s] = o->aggregate_gbps;
        for (int i = 0; i < o->npairs; i++) {
            if (ncat >= 2 * MAXG)
                break;
            snprintf(names[ncat], sizeof names[ncat], "%lld→%lld", o->pair[i][0], o->pair[i][1]);
            cats[ncat] = names[ncat];
            vals[ncat] = s == 0 && i < ng ? g[i] : NAN;            /* series 0 */
            vals[2 * MAXG + ncat] = s == 1 && i < ng ? g[i] : NAN; /* series 1, fixed stride below */
            ncat++;
        }
    }
    if (!ncat)
        return;
    /* Pack series 1 right after series 0 (vals[s*ncat+c]). */
    double packed[2 * 2 * MAXG];
    for (int c = 0; c < ncat; c++) {
        packed[c] = vals[c];
        packed[ncat + c] = vals[2 * MAXG + c];
    }
    const char *series[2] = {"within domains", "across domains"};
    gq_svg_bars b = {.id = "pairs",
                     .title = "Concurrent GPU pairs: within against across domains",
                     .unit = "GB/s",
                     .ncat = ncat,
                     .nser = 2,
                     .cats = cats,
                     .series = series,
                     .vals = packed,
                     .compact = true};
    fig_begin(F, "pairs");
    gq_svg_write_bars(F->f, &b, &F->err);
    char cap[400], x[32], y[32], ratio[64] = "", pct[32];
    if (isfinite(agg[0]) && isfinite(agg[1]) && agg[0] > 0)
        snprintf(ratio, sizeof ratio, " (across is %s%% of within)",
                 gq_fmt_num(agg[1] / agg[0] * 100, GQ_NUM_FIGURE, pct, sizeof pct));
    snprintf(cap, sizeof cap,
             "Every pair of one placement ran at the same time. Aggregate within domains %s GB/s, across %s "
             "GB/s%s.",
             gq_fmt_num(agg[0], GQ_NUM_FIGURE, x, sizeof x), gq_fmt_num(agg[1], GQ_NUM_FIGURE, y, sizeof y),
             ratio);
    fig_end(F, cap);
}

/* The first n of l into out (n entries; NAN past l's end). */
static void first_n(const gq_cf_nums *l, double *out, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = i < l->n ? l->v[i] : NAN;
}

static void fig_host(figs *F, const gq_cf_host *host)
{
    if (!host->present)
        return;
    int n = host->gpus.n;
    if (n < 1 || n > MAXG)
        return;
    static char names[MAXG][16];
    const char *cats[MAXG];
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "GPU %lld", host->gpus.v[i]);
        cats[i] = names[i];
    }
    double vals[4 * MAXG];
    for (int i = 0; i < 4 * MAXG; i++)
        vals[i] = NAN;
    first_n(&host->alone_h2d, vals + 0 * n, n);
    first_n(&host->all_h2d, vals + 1 * n, n);
    first_n(&host->alone_d2h, vals + 2 * n, n);
    first_n(&host->all_d2h, vals + 3 * n, n);
    bool any = false;
    for (int i = 0; i < 4 * n; i++)
        any |= isfinite(vals[i]);
    if (!any)
        return;
    const char *series[4] = {"host→GPU alone", "host→GPU, all active", "GPU→host alone",
                             "GPU→host, all active"};
    gq_svg_bars b = {.id = "host",
                     .title = "Per-GPU host bandwidth: alone against all active",
                     .unit = "GB/s",
                     .ncat = n,
                     .nser = 4,
                     .cats = cats,
                     .series = series,
                     .vals = vals};
    fig_begin(F, "host");
    gq_svg_write_bars(F->f, &b, &F->err);
    char cap[300], x[32], y[32];
    snprintf(
        cap, sizeof cap,
        "Each GPU alone, then every GPU copying in the same direction at once (aggregate host→GPU %s GB/s, "
        "GPU→host %s GB/s).",
        gq_fmt_num(host->all_h2d_aggregate_gbps, GQ_NUM_FIGURE, x, sizeof x),
        gq_fmt_num(host->all_d2h_aggregate_gbps, GQ_NUM_FIGURE, y, sizeof y));
    fig_end(F, cap);
}

static void fig_sweeps(figs *F, const gq_card_doc *d)
{
    int ns = d->nsweeps;
    if (ns < 1)
        return;
    if (ns > 16)
        ns = 16;
    const double *xp[16], *yp[16];
    int np[16];
    const char *names[16];
    bool any = false;
    for (int s = 0; s < ns; s++) {
        const gq_cf_sweep *o = &d->sweeps[s];
        int a = o->bytes.n, b = o->gbps.n;
        np[s] = a < b ? a : b;
        xp[s] = o->bytes.v;
        yp[s] = o->gbps.v;
        names[s] = gq_cf_or(o->label, "sweep");
        any |= np[s] > 0;
    }
    if (!any)
        return;
    gq_svg_lines l = {.id = "sweep",
                      .log_y_decades = true,
                      .title = "Buffer-size sweep",
                      .x_label = "bytes per copy",
                      .unit = "GB/s",
                      .nser = ns,
                      .series = names,
                      .npts = np,
                      .xs = xp,
                      .ys = yp,
                      .log_x = true,
                      .x_is_bytes = true,
                      .markers = true,
                      .y_from_zero = true};
    fig_begin(F, "sweep");
    gq_svg_write_lines(F->f, &l, &F->err);
    fig_end(F,
            "Rate per copy size on the fastest and the slowest path. Fixed costs per transfer dominate small "
            "copies.");
}

/* One GPU's series of metric k (0 temperature, 1 power, 2 SM clock). */
static const gq_cf_nums *series_of(const gq_cf_series *s, size_t k)
{
    return k == 0 ? &s->temp_c : k == 1 ? &s->power_w : &s->sm_clock_mhz;
}

static void fig_stress(figs *F, const gq_cf_stress *st)
{
    int ng = st->nseries;
    if (ng < 1)
        return;
    static const struct {
        const char *col, *id, *title, *unit;
    } m[] = {
        {"temp_c", "stress_temp", "Temperature under load", "°C"},
        {"power_w", "stress_power", "Power under load", "W"},
        {"sm_clock_mhz", "stress_clock", "SM clock under load", "MHz"},
    };
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) {
        const double *xp[MAXG], *yp[MAXG];
        int np[MAXG];
        char names[MAXG][16];
        const char *namep[MAXG];
        bool any = false;
        for (int g = 0; g < ng; g++) {
            const gq_cf_series *o = &st->series[g];
            const gq_cf_nums *y = series_of(o, k);
            int a = o->t_s.n, b = y->n;
            np[g] = a < b ? a : b;
            xp[g] = o->t_s.v;
            yp[g] = y->v;
            for (int i = 0; i < np[g]; i++)
                any |= isfinite(yp[g][i]) && isfinite(xp[g][i]);
            snprintf(names[g], sizeof names[g], "GPU %lld", o->gpu);
            namep[g] = names[g];
        }
        if (!any)
            continue;
        gq_svg_lines l = {.id = m[k].id,
                          .title = m[k].title,
                          .x_label = "seconds since the load started",
                          .unit = m[k].unit,
                          .nser = ng,
                          .series = namep,
                          .npts = np,
                          .xs = xp,
                          .ys = yp,
                          .y_from_zero = strcmp(m[k].col, "temp_c") != 0};
        fig_begin(F, m[k].id);
        gq_svg_write_lines(F->f, &l, &F->err);
        fig_end(F, "Telemetry sampled during the stress run, one line per GPU.");
    }
}

void gq_html_figures(figs *F, const gq_card_doc *d)
{
    for (int i = 0; i < d->nmatrices; i++)
        fig_matrix(F, &d->matrices[i], NULL, NULL);
    fig_pairs(F, &d->pairs);
    fig_host(F, &d->host);
    fig_sweeps(F, d);
    if (d->latency.p2p.present)
        fig_matrix(F, &d->latency.p2p, "p2p_latency", "GPU↔GPU latency");
    fig_stress(F, &d->stress);
}
