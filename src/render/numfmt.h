/* The one display-number formatter of the renderers (terminal, Markdown,
 * HTML, SVG). JSON numbers follow core/json.h instead; CSV and Prometheus
 * write full precision ("%.6g") for machines.
 *
 * Rules common to every style:
 *  - a NaN or an infinity prints as "–" (not measured);
 *  - never exponent notation: 0.00003 prints "0.0000300", not "3e-05";
 *  - a value from 100 up prints as a whole number ("394", "1234").
 * Below 100, by style:
 *  - GQ_NUM_FIGURE (a card's figures, any unit: GB/s, µs, W, °C, MHz, %):
 *    about three significant digits ("52.7", "9.86", "0.123"); a whole value
 *    prints whole ("5", "12") and 0 prints "0";
 *  - GQ_NUM_CHART (chart labels, axes and tooltips): three significant digits
 *    kept even for a whole value ("5.00", "12.0"), so the labels of one axis
 *    line up; 0 prints "0";
 *  - GQ_NUM_RUNS (a figure lined up across runs or nodes by compare and fleet):
 *    two decimals ("52.71", "9.86", "0.12", "0.00"), so small differences
 *    between runs show.
 * The terminal's fixed-width matrices and lines (render/table.c, the
 * commands' own tables) keep nvbandwidth's layout instead: GB/s with two
 * decimals in fixed columns ("%10.2f"), so they line up with nvbandwidth's
 * output; every other number a person reads comes from gq_fmt_num. */
#ifndef GQ_RENDER_NUMFMT_H
#define GQ_RENDER_NUMFMT_H

#include <stddef.h>

typedef enum gq_num_style {
    GQ_NUM_FIGURE,
    GQ_NUM_CHART,
    GQ_NUM_RUNS,
} gq_num_style;

/* v formatted by style into buf (n bytes; 32 are always enough); returns buf. */
const char *gq_fmt_num(double v, gq_num_style style, char *buf, size_t n);

/* Axis ticks: one precision rule. Every tick of a linear axis shows the
 * decimals its step needs (step 0.25: "0.00", "0.25", "0.50"; step 50: "0",
 * "50", "100"), so the labels of one axis line up; a log axis's ticks (1, 2,
 * 5 x 10^k) each show the decimals their own value needs.
 * gq_fmt_tick_decimals: those decimals for step (0..9). */
int gq_fmt_tick_decimals(double step);
const char *gq_fmt_tick(double v, int decimals, char *buf, size_t n);

/* A duration in the unit a person reads: "1.24 µs", "12.5 ms", "3.2 s",
 * "4 min 10 s", "1 h 5 min"; "–" for NaN or negative. buf: 32 bytes. */
const char *gq_fmt_duration(double s, char *buf, size_t n);

#endif
