#include "render/svg.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/units.h"
#include "render/numfmt.h"

/* Fixed drawing geometry (viewBox units). */
enum { W = 760, H = 380, ML = 70, MR = 20, MT = 44, MB = 70 };

static const char *const palette[] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
};

/* Colour of series i (a fixed qualitative palette, cycles after 10). "#rrggbb". */
static const char *series_color(int i)
{
    int n = (int)(sizeof palette / sizeof palette[0]);
    return palette[((i % n) + n) % n];
}

void gq_svg_escape(FILE *f, const char *s)
{
    if (!s)
        return;
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default:
            /* Control characters are not allowed in XML 1.0 text. */
            if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
                fputc(' ', f);
            else
                fputc(*s, f);
        }
    }
}

void gq_svg_nice_axis(double lo, double hi, int want, double *out_lo, double *out_hi, double *step)
{
    if (!isfinite(lo) || !isfinite(hi)) {
        lo = 0;
        hi = 1;
    }
    if (hi < lo) {
        double t = lo;
        lo = hi;
        hi = t;
    }
    if (hi - lo < 1e-12) {
        double pad = fabs(hi) > 0 ? fabs(hi) * 0.1 : 1.0;
        lo -= pad;
        hi += pad;
    }
    if (want < 2)
        want = 2;
    double raw = (hi - lo) / want;
    double mag = pow(10, floor(log10(raw)));
    double r = raw / mag, s;
    if (r < 1.5)
        s = 1;
    else if (r < 3)
        s = 2;
    else if (r < 7)
        s = 5;
    else
        s = 10;
    s *= mag;
    *step = s;
    *out_lo = floor(lo / s + 1e-9) * s;
    *out_hi = ceil(hi / s - 1e-9) * s;
    if (*out_hi <= *out_lo)
        *out_hi = *out_lo + s;
}

/* Viridis, five stops, linear in between. t in [0,1]. */
static void ramp(double t, int rgb[3])
{
    static const int stops[5][3] = {
        {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37},
    };
    if (!isfinite(t) || t < 0)
        t = 0;
    if (t > 1)
        t = 1;
    double x = t * 4;
    int i = (int)x;
    if (i >= 4)
        i = 3;
    double fr = x - i;
    for (int k = 0; k < 3; k++)
        rgb[k] = (int)lround(stops[i][k] + fr * (stops[i + 1][k] - stops[i][k]));
}

static void svg_open(FILE *f, const char *id, int w, int h, const char *title, const char *extra)
{
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"gq-fig\" data-figure=\"");
    gq_svg_escape(f, id ? id : "figure");
    if (extra)
        fprintf(f, "\" %s", extra);
    else
        fputc('"', f);
    fprintf(f,
            " viewBox=\"0 0 %d %d\" width=\"100%%\" style=\"max-width:%dpx\" role=\"img\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n",
            w, h, w);
    fputs("<title>", f);
    gq_svg_escape(f, title ? title : "");
    fputs("</title>\n", f);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", w, h);
    fprintf(f, "<text x=\"%d\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">",
            w / 2);
    gq_svg_escape(f, title ? title : "");
    fputs("</text>\n", f);
}

static void text_at(FILE *f, double x, double y, const char *anchor, const char *extra, const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s%s>", x, y, anchor,
            extra && *extra ? " " : "", extra ? extra : "");
    gq_svg_escape(f, s);
    fputs("</text>\n", f);
}

int gq_svg_write_heatmap(FILE *f, const gq_svg_heatmap *h, gq_err *err)
{
    if (!h || h->n < 1 || h->n > GQ_SVG_MAX_CATS || !h->vals || !h->labels)
        return gq_err_set(err, GQ_E_USAGE, "heatmap: needs 1..%d rows with labels and values",
                          GQ_SVG_MAX_CATS);
    int n = h->n;
    double vmin = INFINITY, vmax = -INFINITY;
    for (int i = 0; i < n * n; i++)
        if (isfinite(h->vals[i])) {
            if (h->vals[i] < vmin)
                vmin = h->vals[i];
            if (h->vals[i] > vmax)
                vmax = h->vals[i];
        }
    bool any = isfinite(vmin);
    /* A matrix flat within 3% is one colour: the scale must not turn noise
     * into structure. */
    bool flat = any && vmax > 0 && (vmax - vmin) / vmax < 0.03;
    int cell = n <= 8 ? 56 : n <= 16 ? 36 : (560 / n > 4 ? 560 / n : 4);
    int left = 80, top = 60, grid = cell * n;
    int w = left + grid + 120, hgt = top + grid + 50;
    if (w < 420)
        w = 420;
    svg_open(f, h->id, w, hgt, h->title, NULL);
    char buf[64], vb[32];
    text_at(f, left + grid / 2.0, top - 24, "middle", "font-size=\"11\" fill=\"#555\"", "destination");
    fprintf(f,
            "<text x=\"18\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555\" "
            "transform=\"rotate(-90 18 %.1f)\">source</text>\n",
            top + grid / 2.0, top + grid / 2.0);
    bool show_labels = n <= 32;
    for (int i = 0; i < n; i++) {
        if (!show_labels)
            break;
        text_at(f, left + cell * i + cell / 2.0, top - 6, "middle", "font-size=\"11\"", h->labels[i]);
        text_at(f, left - 6, top + cell * i + cell / 2.0 + 4, "end", "font-size=\"11\"", h->labels[i]);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double v = h->vals[i * n + j];
            int rgb[3] = {221, 221, 221};
            if (isfinite(v)) {
                double t = vmax > vmin && !flat ? (v - vmin) / (vmax - vmin) : 1.0;
                ramp(h->low_is_good ? 1.0 - t : t, rgb);
            }
            fprintf(f,
                    "<rect class=\"gq-cell\" data-row=\"%d\" data-col=\"%d\" x=\"%d\" y=\"%d\" width=\"%d\" "
                    "height=\"%d\" fill=\"#%02x%02x%02x\" stroke=\"#ffffff\" stroke-width=\"1\"><title>",
                    i, j, left + cell * j, top + cell * i, cell, cell, rgb[0], rgb[1], rgb[2]);
            gq_svg_escape(f, h->labels[i]);
            fputs(" → ", f);
            gq_svg_escape(f, h->labels[j]);
            if (isfinite(v))
                fprintf(f, ": %s ", gq_fmt_num(v, GQ_NUM_CHART, vb, sizeof vb));
            else
                fputs(": n/a", f);
            if (isfinite(v))
                gq_svg_escape(f, h->unit);
            fputs("</title></rect>\n", f);
            if (n <= 16) {
                bool dark = rgb[0] * 299 + rgb[1] * 587 + rgb[2] * 114 < 140000;
                snprintf(buf, sizeof buf, "font-size=\"%d\" fill=\"%s\"", cell >= 50 ? 12 : 10,
                         dark ? "#ffffff" : "#000000");
                text_at(f, left + cell * j + cell / 2.0, top + cell * i + cell / 2.0 + 4, "middle", buf,
                        gq_fmt_num(v, GQ_NUM_CHART, vb, sizeof vb));
            }
        }
    /* Colour bar with the range it encodes. */
    int cbx = left + grid + 30, cbh = grid < 120 ? grid : 120;
    for (int k = 0; k < 10; k++) {
        int rgb[3];
        double t = 1.0 - k / 9.0;
        ramp(h->low_is_good ? 1.0 - t : t, rgb);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"16\" height=\"%d\" fill=\"#%02x%02x%02x\"/>\n", cbx,
                top + k * cbh / 10, cbh / 10 + 1, rgb[0], rgb[1], rgb[2]);
    }
    if (any) {
        char lab[64];
        snprintf(lab, sizeof lab, "%s %s", gq_fmt_num(vmax, GQ_NUM_CHART, vb, sizeof vb),
                 h->unit ? h->unit : "");
        text_at(f, cbx + 22, top + 10, "start", "font-size=\"11\"", lab);
        snprintf(lab, sizeof lab, "%s %s", gq_fmt_num(vmin, GQ_NUM_CHART, vb, sizeof vb),
                 h->unit ? h->unit : "");
        text_at(f, cbx + 22, top + cbh, "start", "font-size=\"11\"", lab);
    } else {
        text_at(f, cbx + 22, top + 10, "start", "font-size=\"11\"", "no data");
    }
    fputs("</svg>\n", f);
    return GQ_OK;
}

/* y axis with grid lines and tick labels; returns nothing, draws. */
static void y_axis(FILE *f, double lo, double hi, double step, int x0, int x1, int y0, int y1,
                   const char *unit)
{
    char vb[32];
    int dec = gq_fmt_tick_decimals(step);
    for (double v = lo; v <= hi + step * 1e-6; v += step) {
        double y = y1 - (v - lo) / (hi - lo) * (y1 - y0);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n", x0, y, x1, y);
        text_at(f, x0 - 6, y + 4, "end", "font-size=\"11\" class=\"gq-tick\"",
                gq_fmt_tick(fabs(v) < step * 1e-6 ? 0 : v, dec, vb, sizeof vb));
    }
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", x0, y0, x0, y1);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", x0, y1, x1, y1);
    fprintf(f,
            "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555\" "
            "transform=\"rotate(-90 16 %.1f)\">",
            (y0 + y1) / 2.0, (y0 + y1) / 2.0);
    gq_svg_escape(f, unit ? unit : "");
    fputs("</text>\n", f);
}

/* A base-10 log y axis from lo to hi (powers of ten): grid lines and labels
 * at 1, 2 and 5 x 10^k, each label with the decimals its value needs. */
static void y_axis_log(FILE *f, double lo, double hi, int x0, int x1, int y0, int y1, const char *unit)
{
    char vb[32], lab[96];
    double a = log10(lo), b = log10(hi);
    for (int e = (int)lround(a); e <= (int)lround(b); e++)
        for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) {
            double v = m * pow(10, e);
            if (v > hi * (1 + 1e-9))
                break;
            double y = y1 - (log10(v) - a) / (b - a) * (y1 - y0);
            fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n", x0, y, x1, y,
                    m == 1 ? "#e4e4e4" : "#f4f4f4");
            text_at(f, x0 - 6, y + 4, "end", "font-size=\"11\" class=\"gq-tick\"",
                    gq_fmt_tick(v, e < 0 ? -e : 0, vb, sizeof vb));
        }
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", x0, y0, x0, y1);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", x0, y1, x1, y1);
    snprintf(lab, sizeof lab, "%s (log scale)", unit ? unit : "");
    fprintf(f,
            "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555\" "
            "transform=\"rotate(-90 16 %.1f)\">",
            (y0 + y1) / 2.0, (y0 + y1) / 2.0);
    gq_svg_escape(f, lab);
    fputs("</text>\n", f);
}

/* The legend is laid out from the names' lengths, so that no two entries
 * overlap: entries go left to right and wrap to a new row when the next one
 * would pass the right margin. A character of the legend's 11-unit font is
 * taken as LEG_CHAR_W wide: above what digits, arrows and most letters of a
 * sans-serif font advance at that size (about 6 on average), though a name
 * made mostly of the widest letters ("W", "m", near 10) would run past its
 * box. A name longer than a whole row is cut with "…". Each entry carries
 * its box (swatch and text) as a transparent <rect class="gq-legend-box">,
 * which tests/browser reads to check that no two overlap. */
#define LEG_CHAR_W 7.5
#define LEG_ROW_H 16
#define LEG_GAP 14

typedef struct leg_item {
    int x, y;     /* top-left of the entry's box */
    int w;        /* swatch + gap + text */
    int nchars;   /* characters kept of the name */
    bool cut;     /* the name was cut */
    size_t bytes; /* bytes kept of the name */
} leg_item;

/* Characters (UTF-8 code points) of s, up to keep of them (keep < 0: all);
 * *bytes: the bytes those characters take. */
static int utf8_chars(const char *s, int keep, size_t *bytes)
{
    int n = 0;
    size_t i = 0;
    for (; s[i]; i++) {
        if (((unsigned char)s[i] & 0xC0) == 0x80)
            continue;
        if (n == keep)
            break;
        n++;
    }
    *bytes = i;
    return n;
}

static int legend_layout(const char *const *names, int n, int x0, int x1, int y, leg_item *it)
{
    if (n < 2)
        return 0;
    int maxc = (int)((x1 - x0 - 14) / LEG_CHAR_W);
    int x = x0, row = 0;
    for (int s = 0; s < n; s++) {
        const char *nm = names && names[s] ? names[s] : "";
        size_t all;
        int c = utf8_chars(nm, -1, &all);
        it[s].cut = c > maxc;
        it[s].nchars =
            it[s].cut ? utf8_chars(nm, maxc - 1, &it[s].bytes) + 1 : utf8_chars(nm, -1, &it[s].bytes);
        it[s].w = 14 + (int)ceil(it[s].nchars * LEG_CHAR_W);
        if (x > x0 && x + it[s].w > x1) {
            x = x0;
            row++;
        }
        it[s].x = x;
        it[s].y = y + row * LEG_ROW_H;
        x += it[s].w + LEG_GAP;
    }
    return row + 1;
}

/* Rows the legend of these names takes between x0 and x1. */
static int legend_rows(const char *const *names, int n, int x0, int x1)
{
    leg_item it[GQ_SVG_MAX_SERIES];
    return legend_layout(names, n < GQ_SVG_MAX_SERIES ? n : GQ_SVG_MAX_SERIES, x0, x1, 0, it);
}

static void legend(FILE *f, const char *const *names, int n, int x0, int x1, int y)
{
    leg_item it[GQ_SVG_MAX_SERIES];
    if (n > GQ_SVG_MAX_SERIES)
        n = GQ_SVG_MAX_SERIES;
    legend_layout(names, n, x0, x1, y - 11, it);
    for (int s = 0; s < n; s++) {
        const char *nm = names && names[s] ? names[s] : "";
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s%s", (int)(it[s].bytes < 400 ? it[s].bytes : 400), nm,
                 it[s].cut ? "…" : "");
        fprintf(f,
                "<g class=\"gq-legend\" data-legend=\"%d\"><rect class=\"gq-legend-box\" x=\"%d\" "
                "y=\"%d\" width=\"%d\" height=\"14\" fill=\"none\" stroke=\"none\"/>\n",
                s, it[s].x, it[s].y, it[s].w);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>\n", it[s].x, it[s].y + 2,
                series_color(s));
        text_at(f, it[s].x + 14, it[s].y + 11, "start", "font-size=\"11\"", buf);
        fputs("</g>\n", f);
    }
}

/* A bar's value label: 10-unit digits taken as 6.2 wide (a sans-serif digit
 * advances about 5.6 at that size), so its box is known before it is drawn.
 * class gq-barlabel with data-w, the box width, for the tests. */
#define BAR_LABEL_CHAR_W 6.2
#define BAR_LABEL_W(s) (strlen(s) * BAR_LABEL_CHAR_W)

static void bar_label(FILE *f, double x, double y, const char *s)
{
    fprintf(f,
            "<text class=\"gq-barlabel\" data-w=\"%.1f\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
            "font-size=\"10\">",
            BAR_LABEL_W(s), x, y);
    gq_svg_escape(f, s);
    fputs("</text>\n", f);
}

/* Largest finite value of the bars and the reference lines (0 when none is positive). */
static double bars_max(const gq_svg_bars *b)
{
    double vmax = 0;
    for (int i = 0; i < b->nser * b->ncat; i++)
        if (isfinite(b->vals[i]) && b->vals[i] > vmax)
            vmax = b->vals[i];
    for (int k = 0; k < b->nref; k++)
        if (isfinite(b->ref_vals[k]) && b->ref_vals[k] > vmax)
            vmax = b->ref_vals[k];
    return vmax;
}

/* The plot area of a bar chart and its value axis. */
typedef struct bar_frame {
    int x0, x1, y0, y1;
    double lo, hi;
    double cw; /* a category's width */
} bar_frame;

/* Category c's bars, their value labels and the category's label. */
static void bars_category(FILE *f, const gq_svg_bars *b, const bar_frame *fr, int c, bool rotate)
{
    int x0 = fr->x0, y0 = fr->y0, y1 = fr->y1;
    double lo = fr->lo, hi = fr->hi, cw = fr->cw;
    char vb[32];
    int nfin = 0;
    bool same = true; /* every bar of the category shows the same label */
    char first[32] = "";
    double top = y1;
    for (int s = 0; s < b->nser; s++) {
        double v = b->vals[s * b->ncat + c];
        if (!isfinite(v))
            continue;
        gq_fmt_num(v, GQ_NUM_CHART, vb, sizeof vb);
        same &= !nfin || !strcmp(first, vb);
        if (!nfin)
            snprintf(first, sizeof first, "%s", vb);
        double yv = y1 - (v < 0 ? 0 : v) / (hi - lo) * (y1 - y0);
        if (yv < top)
            top = yv;
        nfin++;
    }
    int slots = b->compact ? (nfin ? nfin : 1) : b->nser;
    double bw = cw * 0.8 / slots;
    /* A value label goes over its bar only when it is narrower than the bar (so two never
     * meet); else, when the category's bars all show one value, once over the group. */
    bool own = bw >= BAR_LABEL_W(first) + 2,
         group = !own && same && nfin > 1 && cw * 0.8 >= BAR_LABEL_W(first) + 2;
    if (group)
        bar_label(f, x0 + c * cw + cw / 2, top - 3, first);
    int slot = 0;
    for (int s = 0; s < b->nser; s++) {
        double v = b->vals[s * b->ncat + c];
        if (!isfinite(v)) {
            if (!b->compact)
                slot++;
            continue;
        }
        double x = x0 + c * cw + cw * 0.1 + slot * bw;
        double yv = y1 - (v < 0 ? 0 : v) / (hi - lo) * (y1 - y0);
        fprintf(f,
                "<rect class=\"gq-bar\" data-series=\"%d\" data-cat=\"%d\" x=\"%.1f\" y=\"%.1f\" "
                "width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
                s, c, x, yv, bw > 1 ? bw - 1 : bw, y1 - yv, series_color(s));
        gq_svg_escape(f, b->cats[c]);
        if (b->series && b->nser > 1) {
            fputs(", ", f);
            gq_svg_escape(f, b->series[s]);
        }
        fprintf(f, ": %s ", gq_fmt_num(v, GQ_NUM_CHART, vb, sizeof vb));
        gq_svg_escape(f, b->unit);
        fputs("</title></rect>\n", f);
        gq_fmt_num(v, GQ_NUM_CHART, vb, sizeof vb);
        if (own && bw >= BAR_LABEL_W(vb) + 2)
            bar_label(f, x + bw / 2, yv - 3, vb);
        slot++;
    }
    double cx = x0 + c * cw + cw / 2;
    if (rotate) {
        fprintf(f,
                "<text x=\"%.1f\" y=\"%d\" text-anchor=\"end\" font-size=\"11\" "
                "transform=\"rotate(-40 %.1f %d)\">",
                cx, y1 + 14, cx, y1 + 14);
        gq_svg_escape(f, b->cats[c]);
        fputs("</text>\n", f);
    } else {
        text_at(f, cx, y1 + 16, "middle", "font-size=\"11\"", b->cats[c]);
    }
}

/* The dashed reference lines across the bars, each with its label. */
static void bars_ref_lines(FILE *f, const gq_svg_bars *b, const bar_frame *fr)
{
    int x0 = fr->x0, x1 = fr->x1, y0 = fr->y0, y1 = fr->y1;
    double lo = fr->lo, hi = fr->hi;
    for (int k = 0; k < b->nref; k++) {
        double v = b->ref_vals[k];
        if (!isfinite(v))
            continue;
        double y = y1 - v / (hi - lo) * (y1 - y0);
        fprintf(f,
                "<line class=\"gq-ref\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#d62728\" "
                "stroke-dasharray=\"6 4\"/>\n",
                x0, y, x1, y);
        text_at(f, x1 - 4, y - 4, "end", "font-size=\"10\" fill=\"#d62728\"",
                b->ref_labels && b->ref_labels[k] ? b->ref_labels[k] : "");
    }
}

int gq_svg_write_bars(FILE *f, const gq_svg_bars *b, gq_err *err)
{
    if (!b || b->ncat < 1 || b->ncat > GQ_SVG_MAX_CATS || b->nser < 1 || b->nser > GQ_SVG_MAX_SERIES ||
        !b->vals || !b->cats || (b->nref > 0 && !b->ref_vals))
        return gq_err_set(err, GQ_E_USAGE, "bars: needs 1..%d categories and 1..%d series with values",
                          GQ_SVG_MAX_CATS, GQ_SVG_MAX_SERIES);
    double vmax = bars_max(b);
    double lo, hi, step;
    gq_svg_nice_axis(0, vmax > 0 ? vmax : 1, 5, &lo, &hi, &step);
    lo = 0;
    int lrows = legend_rows(b->series, b->nser, ML, W - MR);
    int mb = MB + lrows * LEG_ROW_H;
    int hgt = H + lrows * LEG_ROW_H;
    int x0 = ML, x1 = W - MR, y0 = MT, y1 = hgt - mb;
    svg_open(f, b->id, W, hgt, b->title, NULL);
    y_axis(f, lo, hi, step, x0, x1, y0, y1, b->unit);
    bar_frame fr = {x0, x1, y0, y1, lo, hi, (double)(x1 - x0) / b->ncat};
    bool rotate = b->ncat > 8;
    for (int c = 0; c < b->ncat; c++)
        bars_category(f, b, &fr, c, rotate);
    bars_ref_lines(f, b, &fr);
    if (b->nser > 1)
        legend(f, b->series, b->nser, x0, W - MR, hgt - lrows * LEG_ROW_H + 4);
    fputs("</svg>\n", f);
    return GQ_OK;
}

static void x_tick_label(double x, bool bytes, char *buf, size_t n)
{
    char vb[32];
    if (bytes && x >= 1 && x < 1.8e19)
        gq_fmt_size((uint64_t)llround(x), buf, n);
    else
        snprintf(buf, n, "%s", gq_fmt_num(x, GQ_NUM_CHART, vb, sizeof vb));
}

/* The plot area of a line chart and its axes' ranges (x as log2 of it with log_x). */
typedef struct line_frame {
    int x0, x1, y0, y1;
    double xa, xb, ylo, yhi;
    bool log_x, logy;
} line_frame;

static double line_xpos(const line_frame *fr, double x)
{
    return fr->x0 + ((fr->log_x ? log2(x) : (x)) - fr->xa) / (fr->xb - fr->xa) * (fr->x1 - fr->x0);
}

static double line_ypos(const line_frame *fr, double y)
{
    return fr->logy
               ? fr->y1 - (log10(y) - log10(fr->ylo)) / (log10(fr->yhi) - log10(fr->ylo)) * (fr->y1 - fr->y0)
               : fr->y1 - ((y)-fr->ylo) / (fr->yhi - fr->ylo) * (fr->y1 - fr->y0);
}

/* The x axis: grid lines, tick labels (powers of two with log_x) and the axis label. */
static void lines_x_axis(FILE *f, const gq_svg_lines *l, const line_frame *fr, double xstep)
{
    int x0 = fr->x0, x1 = fr->x1, y0 = fr->y0, y1 = fr->y1;
    double xa = fr->xa, xb = fr->xb;
    char buf[48];
    if (l->log_x) {
        int span = (int)(xb - xa);
        int every = span > 12 ? 2 : 1;
        for (int e = (int)xa; e <= (int)xb; e += every) {
            double x = x0 + (e - xa) / (xb - xa) * (x1 - x0);
            fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#f0f0f0\"/>\n", x, y0, x,
                    y1);
            x_tick_label(ldexp(1.0, e), l->x_is_bytes, buf, sizeof buf);
            fprintf(f,
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"end\" font-size=\"10\" "
                    "transform=\"rotate(-40 %.1f %d)\">",
                    x, y1 + 14, x, y1 + 14);
            gq_svg_escape(f, buf);
            fputs("</text>\n", f);
        }
    } else {
        int xdec = gq_fmt_tick_decimals(xstep);
        for (double v = xa; v <= xb + xstep * 1e-6; v += xstep) {
            double x = x0 + (v - xa) / (xb - xa) * (x1 - x0);
            fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#f0f0f0\"/>\n", x, y0, x,
                    y1);
            gq_fmt_tick(fabs(v) < xstep * 1e-6 ? 0 : v, xdec, buf, sizeof buf);
            text_at(f, x, y1 + 16, "middle", "font-size=\"10\"", buf);
        }
    }
    text_at(f, (x0 + x1) / 2.0, y1 + (l->log_x ? 52 : 34), "middle", "font-size=\"11\" fill=\"#555\"",
            l->x_label ? l->x_label : "");
}

/* Series s: its path (broken at points that cannot be drawn) and, with markers, its points. */
static void lines_series(FILE *f, const gq_svg_lines *l, const line_frame *fr, int s)
{
    char buf[48], vb[32];
    const char *col = series_color(s);
    int nfin = 0;
    for (int k = 0; k < l->npts[s]; k++)
        if (isfinite(l->xs[s][k]) && isfinite(l->ys[s][k]) && !(l->log_x && l->xs[s][k] <= 0))
            nfin++;
    if (!nfin)
        return;
    fprintf(f,
            "<path class=\"gq-line\" data-series=\"%d\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" d=\"",
            s, col);
    bool pen = false;
    for (int k = 0; k < l->npts[s]; k++) {
        double x = l->xs[s][k], y = l->ys[s][k];
        if (!isfinite(x) || !isfinite(y) || (l->log_x && x <= 0)) {
            pen = false;
            continue;
        }
        fprintf(f, "%s%.1f %.1f ", pen ? "L" : "M", line_xpos(fr, x), line_ypos(fr, y));
        pen = true;
    }
    fputs("\"><title>", f);
    gq_svg_escape(f, l->series && l->series[s] ? l->series[s] : "");
    fputs("</title></path>\n", f);
    if (!l->markers)
        return;
    for (int k = 0; k < l->npts[s]; k++) {
        double x = l->xs[s][k], y = l->ys[s][k];
        if (!isfinite(x) || !isfinite(y) || (l->log_x && x <= 0))
            continue;
        fprintf(f, "<circle class=\"gq-pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>",
                line_xpos(fr, x), line_ypos(fr, y), col);
        gq_svg_escape(f, l->series && l->series[s] ? l->series[s] : "");
        x_tick_label(x, l->x_is_bytes, buf, sizeof buf);
        fputs(" at ", f);
        gq_svg_escape(f, buf);
        fprintf(f, ": %s ", gq_fmt_num(y, GQ_NUM_CHART, vb, sizeof vb));
        gq_svg_escape(f, l->unit);
        fputs("</title></circle>\n", f);
    }
}

int gq_svg_write_lines(FILE *f, const gq_svg_lines *l, gq_err *err)
{
    if (!l || l->nser < 1 || l->nser > GQ_SVG_MAX_SERIES || !l->npts || !l->xs || !l->ys)
        return gq_err_set(err, GQ_E_USAGE, "lines: needs 1..%d series with points", GQ_SVG_MAX_SERIES);
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
    for (int s = 0; s < l->nser; s++) {
        if (l->npts[s] < 0 || (l->npts[s] > 0 && (!l->xs[s] || !l->ys[s])))
            return gq_err_set(err, GQ_E_USAGE, "lines: series %d has no points array", s);
        for (int k = 0; k < l->npts[s]; k++) {
            double x = l->xs[s][k], y = l->ys[s][k];
            if (!isfinite(x) || !isfinite(y) || (l->log_x && x <= 0))
                continue;
            if (x < xmin)
                xmin = x;
            if (x > xmax)
                xmax = x;
            if (y < ymin)
                ymin = y;
            if (y > ymax)
                ymax = y;
        }
    }
    bool any = isfinite(xmin);
    if (!any) {
        xmin = 1;
        xmax = 2;
        ymin = 0;
        ymax = 1;
    }
    double ylo, yhi, ystep;
    bool logy = any && l->log_y_decades && ymin > 0 && ymax / ymin >= 10;
    if (logy) {
        ylo = pow(10, floor(log10(ymin)));
        yhi = pow(10, ceil(log10(ymax)));
        ystep = 0;
    } else {
        gq_svg_nice_axis(l->y_from_zero ? 0 : ymin, ymax, 5, &ylo, &yhi, &ystep);
        if (l->y_from_zero)
            ylo = 0;
    }
    double xa, xb, xstep = 1;
    if (l->log_x) {
        xa = floor(log2(xmin));
        xb = ceil(log2(xmax));
        if (xb <= xa)
            xb = xa + 1;
    } else {
        gq_svg_nice_axis(xmin, xmax, 6, &xa, &xb, &xstep);
    }
    int lrows = legend_rows(l->series, l->nser, ML, W - MR);
    int hgt = H + lrows * LEG_ROW_H;
    int x0 = ML, x1 = W - MR, y0 = MT, y1 = hgt - MB - lrows * LEG_ROW_H;
    svg_open(f, l->id, W, hgt, l->title, logy ? "data-yscale=\"log\"" : NULL);
    if (logy)
        y_axis_log(f, ylo, yhi, x0, x1, y0, y1, l->unit);
    else
        y_axis(f, ylo, yhi, ystep, x0, x1, y0, y1, l->unit);
    line_frame fr = {x0, x1, y0, y1, xa, xb, ylo, yhi, l->log_x, logy};
    lines_x_axis(f, l, &fr, xstep);
    for (int s = 0; s < l->nser; s++)
        lines_series(f, l, &fr, s);
    if (!any)
        text_at(f, (x0 + x1) / 2.0, (y0 + y1) / 2.0, "middle", "fill=\"#888\"", "no data");
    if (l->nser > 1)
        legend(f, l->series, l->nser, x0, W - MR, hgt - lrows * LEG_ROW_H + 4);
    fputs("</svg>\n", f);
    return GQ_OK;
}
