/* Inline SVG figures for the HTML card (render/html.c). Each function writes
 * one complete, self-contained <svg> element to a FILE (no external fonts,
 * styles, scripts or links), so the HTML stays one file that opens offline.
 *
 * Conventions shared by every figure:
 *  - values are doubles; NAN means "no figure" (drawn as an empty, grey or
 *    absent mark, never as zero);
 *  - every mark (cell, bar, point) carries a <title> tooltip with its exact
 *    value and unit, and a class ("gq-cell", "gq-bar", "gq-line", "gq-pt") so
 *    tests and the browser check can count them;
 *  - the root element has class "gq-fig" and data-figure="<id>";
 *  - all text is XML-escaped; sizes are fixed in the viewBox and the figure
 *    scales with the page (width 100%).
 * Functions return GQ_OK, or GQ_E_USAGE when the spec is inconsistent (counts
 * out of range, NULL arrays); they write nothing in that case.
 */
#ifndef GQ_RENDER_SVG_H
#define GQ_RENDER_SVG_H

#include <stdbool.h>
#include <stdio.h>

#include "core/status.h"

#define GQ_SVG_MAX_SERIES 64
#define GQ_SVG_MAX_CATS 512

/* Write s with &, <, >, " and ' escaped (for text and attribute values). */
void gq_svg_escape(FILE *f, const char *s);

/* A square matrix as a heatmap (seed 001 figure 1): n x n cells, row = source,
 * column = destination, labelled with labels[i] (e.g. "GPU 0"). vals[i*n+j];
 * NAN cells (the diagonal, or not measured) are grey with "–". Colour runs from
 * the smallest to the largest finite value; each cell shows its value when
 * n <= 16. Draws exactly n*n elements of class gq-cell. */
typedef struct gq_svg_heatmap {
    const char *id; /* data-figure */
    const char *title;
    const char *unit;          /* "GB/s", "ns" */
    int n;                     /* 1..GQ_SVG_MAX_CATS */
    const char *const *labels; /* n labels */
    const double *vals;        /* n*n */
    bool low_is_good;          /* latency: reverse the colour scale */
} gq_svg_heatmap;
int gq_svg_write_heatmap(FILE *f, const gq_svg_heatmap *h, gq_err *err);

/* Vertical grouped bars (seed 001 figures 2 and 3): ncat categories along x,
 * nser series per category, vals[s*ncat+c]. A NAN value draws no bar. With
 * compact, each category's bars are centred over it whatever the number of
 * finite values (for categories that belong to one series only, like the
 * within/across pairs of figure 2). Draws one gq-bar per finite value.
 * ref_lines (optional): nref horizontal dashed lines (e.g. a path capacity),
 * labelled ref_labels[k]. */
typedef struct gq_svg_bars {
    const char *id;
    const char *title;
    const char *unit;
    int ncat, nser;
    const char *const *cats;   /* ncat */
    const char *const *series; /* nser; legend shown when nser > 1 */
    const double *vals;        /* nser*ncat */
    bool compact;
    int nref;
    const double *ref_vals;
    const char *const *ref_labels;
} gq_svg_bars;
int gq_svg_write_bars(FILE *f, const gq_svg_bars *b, gq_err *err);

/* Lines (sweep curves, stress time series): nser series, each npts[s] points
 * xs[s][k], ys[s][k]; NAN y values break the line. log_x uses a base-2
 * logarithmic x axis (x must be > 0) with tick labels formatted as sizes
 * (x_is_bytes) or plain numbers. Draws one gq-line per series with >= 1
 * finite point, and one gq-pt per finite point when markers is set. */
typedef struct gq_svg_lines {
    const char *id;
    const char *title;
    const char *x_label;
    const char *unit; /* y unit */
    int nser;
    const char *const *series;
    const int *npts;
    const double *const *xs;
    const double *const *ys;
    bool log_x;
    bool x_is_bytes;
    bool markers;
    bool y_from_zero; /* y axis starts at 0 (bandwidth) or at the data (temperature) */
    /* a base-10 log y axis (powers of ten at its ends, ticks at 1, 2, 5 x 10^k,
     * "(log scale)" after the unit, data-yscale="log" on the root) when every
     * finite y is > 0 and they span a decade or more; else the linear axis */
    bool log_y_decades;
} gq_svg_lines;
int gq_svg_write_lines(FILE *f, const gq_svg_lines *l, gq_err *err);

/* A "nice" axis: covers [lo, hi] with about `want` steps of 1, 2 or 5 x 10^k.
 * Outputs the rounded bounds and step. */
void gq_svg_nice_axis(double lo, double hi, int want, double *out_lo, double *out_hi, double *step);

#endif
