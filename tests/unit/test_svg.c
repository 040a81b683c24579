/* SVG figures: well-formed, self-contained, and with the expected number of
 * cells, bars, lines and points for crafted inputs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render/svg.h"
#include "xmlcheck.h"

typedef int (*writer)(FILE *f, const void *spec, gq_err *err);

static char *capture_heatmap(const gq_svg_heatmap *h, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gq_err e = {0};
    *rc = gq_svg_write_heatmap(f, h, &e);
    fclose(f);
    return buf;
}

static char *capture_bars(const gq_svg_bars *b, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gq_err e = {0};
    *rc = gq_svg_write_bars(f, b, &e);
    fclose(f);
    return buf;
}

static char *capture_lines(const gq_svg_lines *l, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gq_err e = {0};
    *rc = gq_svg_write_lines(f, l, &e);
    fclose(f);
    return buf;
}

static void assert_wellformed(const char *s)
{
    char why[256] = "";
    int bad = xml_check(s, why, sizeof why);
    if (bad)
        fail_msg("not well formed: %s", why);
    /* Self-contained: no external references of any kind. */
    assert_null(strstr(s, "href"));
    assert_null(strstr(s, "<script"));
    assert_null(strstr(s, "url("));
    assert_int_equal(count_of(s, "<svg "), 1);
    assert_int_equal(count_of(s, "</svg>"), 1);
}

/* Seed 001 figure 1 shape: 8x8 with a NAN diagonal. */
static void test_heatmap_8x8(void **state)
{
    (void)state;
    const char *labels[8] = {"GPU 0", "GPU 1", "GPU 2", "GPU 3", "GPU 4", "GPU 5", "GPU 6", "GPU 7"};
    double v[64];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            v[i * 8 + j] = i == j ? NAN : ((i < 4) == (j < 4) ? 53.0 : 38.0);
    gq_svg_heatmap h = {
        .id = "p2p", .title = "P2P read <GB/s> & more", .unit = "GB/s", .n = 8, .labels = labels, .vals = v};
    int rc;
    char *s = capture_heatmap(&h, &rc);
    assert_int_equal(rc, GQ_OK);
    assert_wellformed(s);
    assert_int_equal(count_of(s, "class=\"gq-cell\""), 64);
    /* title escaped */
    assert_non_null(strstr(s, "P2P read &lt;GB/s&gt; &amp; more"));
    assert_non_null(strstr(s, "data-figure=\"p2p\""));
    /* 8 diagonal cells say n/a; two distinct colours for 53 and 38 */
    assert_int_equal(count_of(s, ": n/a"), 8);
    assert_non_null(strstr(s, "GPU 0 → GPU 1: 53.0 GB/s"));
    assert_non_null(strstr(s, "GPU 0 → GPU 4: 38.0 GB/s"));
    free(s);
}

/* The cells' colours are viridis' five stops at 0, 1/4, 1/2, 3/4 and 1 of
 * the range (linear between them); low_is_good turns the ramp round. */
static void test_heatmap_viridis_stops(void **state)
{
    (void)state;
    const char *labels[3] = {"GPU 0", "GPU 1", "GPU 2"};
    double v[9] = {NAN, 0, 25, 50, NAN, 75, 100, 100, NAN};
    static const char *const stops[5] = {"#440154", "#3b528b", "#21918c", "#5ec962", "#fde725"};
    for (int good = 0; good < 2; good++) {
        gq_svg_heatmap h = {.id = "v", .title = "v", .unit = "GB/s", .n = 3, .labels = labels, .vals = v};
        h.low_is_good = good;
        int rc;
        char *s = capture_heatmap(&h, &rc);
        assert_int_equal(rc, GQ_OK);
        for (int k = 0; k < 5; k++) {
            char want[96];
            /* the cell of value 25 k (row-major, after the diagonal's n/a) */
            int at = k == 0 ? 1 : k == 1 ? 2 : k == 2 ? 3 : k == 3 ? 5 : 6;
            snprintf(want, sizeof want, "data-row=\"%d\" data-col=\"%d\"", at / 3, at % 3);
            const char *cell = strstr(s, want);
            assert_non_null(cell);
            const char *fill = strstr(cell, "fill=\"");
            assert_non_null(fill);
            if (strncmp(fill + 6, stops[good ? 4 - k : k], 7))
                fail_msg("value %d (low_is_good %d): %.7s, want %s", 25 * k, good, fill + 6,
                         stops[good ? 4 - k : k]);
        }
        free(s);
    }
}

static void test_heatmap_large_and_bad(void **state)
{
    (void)state;
    enum { N = 64 };
    static double v[N * N];
    static char names[N][16];
    const char *labels[N];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "%d", i);
        labels[i] = names[i];
        for (int j = 0; j < N; j++)
            v[i * N + j] = i == j ? NAN : i + j;
    }
    gq_svg_heatmap h = {.id = "big", .title = "big", .unit = "GB/s", .n = N, .labels = labels, .vals = v};
    int rc;
    char *s = capture_heatmap(&h, &rc);
    assert_int_equal(rc, GQ_OK);
    assert_wellformed(s);
    assert_int_equal(count_of(s, "class=\"gq-cell\""), N * N);
    free(s);
    /* all-NAN: still a figure, says no data */
    double nanv[4] = {NAN, NAN, NAN, NAN};
    gq_svg_heatmap h2 = {.id = "e", .title = "e", .unit = "GB/s", .n = 2, .labels = labels, .vals = nanv};
    s = capture_heatmap(&h2, &rc);
    assert_int_equal(rc, GQ_OK);
    assert_wellformed(s);
    assert_non_null(strstr(s, "no data"));
    free(s);
    gq_svg_heatmap bad = {.n = 0, .labels = labels, .vals = v};
    s = capture_heatmap(&bad, &rc);
    assert_int_equal(rc, GQ_E_USAGE);
    assert_int_equal(strlen(s), 0);
    free(s);
}

/* Seed 001 figure 2: four pairs within, four across, compact bars. */
static void test_bars_pairs(void **state)
{
    (void)state;
    const char *cats[8] = {"0→1", "2→3", "4→5", "6→7", "0→4", "1→5", "2→6", "3→7"};
    const char *series[2] = {"within domains", "across domains"};
    double v[16];
    double within[4] = {52.75, 53.71, 52.75, 53.03}, across[4] = {21.12, 20.60, 24.28, 24.95};
    for (int c = 0; c < 8; c++) {
        v[c] = c < 4 ? within[c] : NAN;
        v[8 + c] = c < 4 ? NAN : across[c - 4];
    }
    double ref = 63.0;
    const char *rl = "PCIe Gen5 x16";
    gq_svg_bars b = {.id = "pairs",
                     .title = "Concurrent pairs",
                     .unit = "GB/s",
                     .ncat = 8,
                     .nser = 2,
                     .cats = cats,
                     .series = series,
                     .vals = v,
                     .compact = true,
                     .nref = 1,
                     .ref_vals = &ref,
                     .ref_labels = &rl};
    int rc;
    char *s = capture_bars(&b, &rc);
    assert_int_equal(rc, GQ_OK);
    assert_wellformed(s);
    assert_int_equal(count_of(s, "class=\"gq-bar\""), 8);
    assert_int_equal(count_of(s, "data-series=\"0\""), 4);
    assert_int_equal(count_of(s, "data-series=\"1\""), 4);
    assert_int_equal(count_of(s, "class=\"gq-ref\""), 1);
    assert_non_null(strstr(s, "0→4, across domains: 21.1 GB/s"));
    free(s);
}

/* Seed 001 figure 3: 8 GPUs x 2 series (alone, all active). Bar heights are
 * proportional to the values. */
static void test_bars_heights(void **state)
{
    (void)state;
    const char *cats[2] = {"GPU 0", "GPU 1"};
    const char *series[2] = {"alone", "all active"};
    double v[4] = {60, 60, 30, NAN};
    gq_svg_bars b = {.id = "host",
                     .title = "Host",
                     .unit = "GB/s",
                     .ncat = 2,
                     .nser = 2,
                     .cats = cats,
                     .series = series,
                     .vals = v};
    int rc;
    char *s = capture_bars(&b, &rc);
    assert_int_equal(rc, GQ_OK);
    assert_wellformed(s);
    assert_int_equal(count_of(s, "class=\"gq-bar\""), 3);
    /* find heights of the bars of series 0 cat 0 and series 1 cat 0 */
    double h60 = -1, h30 = -1;
    for (const char *p = strstr(s, "class=\"gq-bar\""); p; p = strstr(p + 1, "class=\"gq-bar\"")) {
        int ser, cat;
        double x, y, w, h;
        if (sscanf(p,
                   "class=\"gq-bar\" data-series=\"%d\" data-cat=\"%d\" x=\"%lf\" y=\"%lf\" width=\"%lf\" "
                   "height=\"%lf\"",
                   &ser, &cat, &x, &y, &w, &h) == 6) {
            if (ser == 0 && cat == 0)
                h60 = h;
            if (ser == 1 && cat == 0)
                h30 = h;
        }
    }
    assert_true(h60 > 0 && h30 > 0);
    assert_true(fabs(h60 / h30 - 2.0) < 0.02);
    free(s);
}

/* A legend entry is as wide as its characters, not its bytes: "→→→" (three
 * characters, nine bytes) takes the box of "abc". */
static void test_legend_counts_characters(void **state)
{
    (void)state;
    double x[2] = {0, 1}, y[2] = {1, 2};
    const double *xs[2] = {x, x}, *ys[2] = {y, y};
    int np[2] = {2, 2};
    const char *names[2] = {"abc", "→→→"};
    gq_svg_lines l = {.id = "leg",
                      .title = "t",
                      .x_label = "s",
                      .unit = "GB/s",
                      .nser = 2,
                      .series = names,
                      .npts = np,
                      .xs = xs,
                      .ys = ys};
    int rc;
    char *s = capture_lines(&l, &rc);
    assert_int_equal(rc, GQ_OK);
    int w[2] = {-1, -1};
    for (int k = 0; k < 2; k++) {
        char key[32];
        snprintf(key, sizeof key, "data-legend=\"%d\"", k);
        const char *at = strstr(s, key);
        assert_non_null(at);
        const char *wp = strstr(at, "width=\"");
        assert_non_null(wp);
        w[k] = atoi(wp + 7);
    }
    assert_true(w[0] > 14);
    if (w[0] != w[1])
        fail_msg("legend boxes %d and %d wide for three characters each", w[0], w[1]);
    assert_non_null(strstr(s, ">→→→<"));
    free(s);
}

static void test_lines_sweep(void **state)
{
    (void)state;
    double xs0[5] = {1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20};
    double ys0[5] = {36.71, 49.53, 53.78, 54.51, NAN};
    double ys1[5] = {35.85, 40.16, 40.90, 38.72, 38.0};
    const double *xs[2] = {xs0, xs0}, *ys[2] = {ys0, ys1};
    int np[2] = {5, 5};
    const char *names[2] = {"0→1 within", "0→4 across"};
    gq_svg_lines l = {.id = "sweep",
                      .title = "Sweep",
                      .x_label = "buffer",
                      .unit = "GB/s",
                      .nser = 2,
                      .series = names,
                      .npts = np,
                      .xs = xs,
                      .ys = ys,
                      .log_x = true,
                      .x_is_bytes = true,
                      .markers = true,
                      .y_from_zero = true};
    int rc;
    char *s = capture_lines(&l, &rc);
    assert_int_equal(rc, GQ_OK);
    assert_wellformed(s);
    assert_int_equal(count_of(s, "class=\"gq-line\""), 2);
    assert_int_equal(count_of(s, "class=\"gq-pt\""), 9);
    assert_non_null(strstr(s, "1 MiB"));
    assert_non_null(strstr(s, "256 MiB"));
    free(s);
    /* linear time series, one empty series: no line drawn for it */
    double t[3] = {0, 1, 2}, temp[3] = {40, 55, 66};
    const double *xs2[2] = {t, t}, *ys2[2] = {temp, temp};
    int np2[2] = {3, 0};
    gq_svg_lines l2 = {.id = "temp",
                       .title = "Temperature",
                       .x_label = "s",
                       .unit = "°C",
                       .nser = 2,
                       .series = names,
                       .npts = np2,
                       .xs = xs2,
                       .ys = ys2};
    s = capture_lines(&l2, &rc);
    assert_int_equal(rc, GQ_OK);
    assert_wellformed(s);
    assert_int_equal(count_of(s, "class=\"gq-line\""), 1);
    assert_int_equal(count_of(s, "class=\"gq-pt\""), 0);
    free(s);
}

/* A log-x chart without one drawable point (NaN, infinite, or x <= 0 on a
 * log axis: a saved sweep of nulls) is still a whole figure: the empty
 * frame's x axis from 2^0 to 2^1 with its two ticks and labels, "no data",
 * and nothing else drawn. */
static void test_lines_log_x_no_point(void **state)
{
    (void)state;
    double xs_bad[4] = {NAN, INFINITY, 0, -8}, ys_bad[4] = {NAN, 1, 2, 3};
    const double *xs[1] = {xs_bad}, *ys[1] = {ys_bad};
    int np[1] = {4};
    const char *names[1] = {"s"};
    for (int bytes = 0; bytes < 2; bytes++) {
        gq_svg_lines l = {.id = "sweep",
                          .title = "Sweep",
                          .x_label = "buffer",
                          .unit = "GB/s",
                          .nser = 1,
                          .series = names,
                          .npts = np,
                          .xs = xs,
                          .ys = ys,
                          .log_x = true,
                          .x_is_bytes = bytes,
                          .markers = true,
                          .y_from_zero = true};
        int rc;
        char *s = capture_lines(&l, &rc);
        assert_int_equal(rc, GQ_OK);
        assert_wellformed(s);
        assert_non_null(strstr(s, "no data"));
        assert_int_equal(count_of(s, "transform=\"rotate(-40"), 2);
        assert_non_null(strstr(s, bytes ? ">1 B</text>" : ">1.00</text>"));
        assert_non_null(strstr(s, bytes ? ">2 B</text>" : ">2.00</text>"));
        assert_int_equal(count_of(s, "class=\"gq-pt\""), 0);
        assert_null(strstr(s, "nan"));
        free(s);
    }
}

/* The tick labels of one y axis ("class=gq-tick"), in order, into out. */
static int ticks(const char *s, char out[][32], int max)
{
    int n = 0;
    for (const char *p = s; n < max && (p = strstr(p, "class=\"gq-tick\">")); n++) {
        p += strlen("class=\"gq-tick\">");
        const char *e = strchr(p, '<');
        snprintf(out[n], 32, "%.*s", (int)(e - p), p);
    }
    return n;
}

/* Bars with nothing positive to draw (every figure 0, negative or NaN, the
 * reference line NaN): the value axis runs 0..1, its top tick "1". */
static void test_bars_nothing_positive(void **state)
{
    (void)state;
    const char *cats[2] = {"GPU 0", "GPU 1"};
    const char *series[1] = {"alone"};
    double v[2] = {0, NAN};
    double ref = NAN;
    const char *rl = "link";
    gq_svg_bars b = {.id = "host",
                     .title = "Host",
                     .unit = "GB/s",
                     .ncat = 2,
                     .nser = 1,
                     .cats = cats,
                     .series = series,
                     .vals = v,
                     .nref = 1,
                     .ref_vals = &ref,
                     .ref_labels = &rl};
    int rc;
    char *s = capture_bars(&b, &rc);
    assert_int_equal(rc, GQ_OK);
    assert_wellformed(s);
    char t[32][32];
    int n = ticks(s, t, 32);
    assert_true(n >= 2);
    assert_true(strtod(t[0], NULL) == 0);
    if (strtod(t[n - 1], NULL) != 1)
        fail_msg("the axis tops at %s, expected 1", t[n - 1]);
    assert_int_equal(count_of(s, "class=\"gq-ref\""), 0);
    free(s);
}

/* A sweep spanning decades (2 to 55 GB/s) is drawn on a log y axis with 1-2-5 ticks; one that
 * does not (36 to 54) keeps the linear axis, whose ticks all show the decimals of its step. */
static void test_lines_log_y(void **state)
{
    (void)state;
    double xs0[4] = {4096, 65536, 1 << 20, 1 << 26};
    double ys0[4] = {1.9, 19.5, 50.2, 54.9}, ys1[4] = {36.7, 49.5, 53.8, 54.5};
    const double *xs[1] = {xs0}, *ys[1] = {ys0};
    int np[1] = {4};
    gq_svg_lines l = {.id = "sweep",
                      .title = "Sweep",
                      .unit = "GB/s",
                      .nser = 1,
                      .npts = np,
                      .xs = xs,
                      .ys = ys,
                      .log_x = true,
                      .x_is_bytes = true,
                      .y_from_zero = true,
                      .log_y_decades = true};
    int rc;
    char *s = capture_lines(&l, &rc);
    assert_int_equal(rc, GQ_OK);
    assert_wellformed(s);
    assert_non_null(strstr(s, "data-yscale=\"log\""));
    assert_non_null(strstr(s, "GB/s (log scale)"));
    char t[32][32];
    int n = ticks(s, t, 32);
    const char *want[] = {"1", "2", "5", "10", "20", "50", "100"};
    assert_int_equal(n, 7);
    for (int i = 0; i < n; i++)
        assert_string_equal(t[i], want[i]);
    free(s);
    ys[0] = ys1;
    s = capture_lines(&l, &rc);
    assert_null(strstr(s, "data-yscale"));
    n = ticks(s, t, 32);
    assert_true(n >= 3);
    for (int i = 0; i < n; i++) /* step 10: whole numbers, all alike */
        assert_null(strchr(t[i], '.'));
    free(s);
}

/* Bar value labels never meet: over a bar only when narrower than it; when every bar of a
 * category shows one value and they are too narrow, the value once over the group. */
static void test_bar_labels_apart(void **state)
{
    (void)state;
    enum { NC = 8, NS = 4 };
    double v[NS * NC];
    const char *cats[NC] = {"GPU 0", "GPU 1", "GPU 2", "GPU 3", "GPU 4", "GPU 5", "GPU 6", "GPU 7"};
    const char *ser[NS] = {"a", "b", "c", "d"};
    for (int i = 0; i < NS * NC; i++)
        v[i] = 24.5;
    gq_svg_bars b = {.id = "host",
                     .title = "Host",
                     .unit = "GB/s",
                     .ncat = NC,
                     .nser = NS,
                     .cats = cats,
                     .series = ser,
                     .vals = v};
    int rc;
    char *s = capture_bars(&b, &rc);
    assert_int_equal(rc, GQ_OK);
    assert_wellformed(s);
    /* 8 categories of 4 equal bars, each bar 17 wide: one "24.5" a category, not four */
    assert_int_equal(count_of(s, "class=\"gq-barlabel\""), NC);
    free(s);
    v[1] = 30.25; /* category 1 no longer alike: no label there */
    s = capture_bars(&b, &rc);
    assert_int_equal(count_of(s, "class=\"gq-barlabel\""), NC - 1);
    /* every label's box (centre x, data-w) is apart from the others on its line */
    double x[NC], w[NC], y[NC];
    int n = 0;
    for (const char *p = s; n < NC && (p = strstr(p, "class=\"gq-barlabel\" data-w=\"")); n++) {
        p += strlen("class=\"gq-barlabel\" data-w=\"");
        assert_int_equal(sscanf(p, "%lf\" x=\"%lf\" y=\"%lf", &w[n], &x[n], &y[n]), 3);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (fabs(y[i] - y[j]) < 12)
                assert_true(fabs(x[i] - x[j]) >= (w[i] + w[j]) / 2);
    free(s);
}

static void test_nice_axis(void **state)
{
    (void)state;
    double lo, hi, st;
    gq_svg_nice_axis(0, 53.7, 5, &lo, &hi, &st);
    assert_true(lo == 0 && st == 10 && hi == 60);
    gq_svg_nice_axis(0, 779, 5, &lo, &hi, &st);
    assert_true(st == 200 && hi == 800);
    gq_svg_nice_axis(5, 5, 5, &lo, &hi, &st);
    assert_true(hi > lo && st > 0);
}

/* The legend's boxes (class gq-legend-box): none overlaps another, each is
 * inside the drawing, and each is at least as wide as its text needs at 7
 * units a character (wider than any letter of the 11-unit legend font but
 * "W" and "m"). Returns how many boxes. */
static int legend_boxes_ok(const char *s)
{
    double bx[64][4];
    int n = 0;
    int vw = 0, vh = 0;
    const char *vb = strstr(s, "viewBox=\"0 0 ");
    assert_non_null(vb);
    assert_int_equal(sscanf(vb, "viewBox=\"0 0 %d %d\"", &vw, &vh), 2);
    for (const char *p = strstr(s, "class=\"gq-legend-box\""); p && n < 64;
         p = strstr(p + 1, "class=\"gq-legend-box\"")) {
        double *b = bx[n];
        assert_int_equal(sscanf(p, "class=\"gq-legend-box\" x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%lf\"",
                                &b[0], &b[1], &b[2], &b[3]),
                         4);
        assert_true(b[0] >= 0 && b[1] >= 0 && b[0] + b[2] <= vw && b[1] + b[3] <= vh);
        /* the text drawn in this entry: its characters fit the box */
        const char *t = strstr(p, "<text");
        t = strchr(t, '>') + 1;
        int chars = 0;
        for (const char *q = t; *q && *q != '<'; q++)
            chars += ((unsigned char)*q & 0xC0) != 0x80 && *q != '&';
        assert_true(b[2] >= 14 + 7.0 * chars);
        n++;
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            bool apart = bx[i][0] + bx[i][2] <= bx[j][0] || bx[j][0] + bx[j][2] <= bx[i][0] ||
                         bx[i][1] + bx[i][3] <= bx[j][1] || bx[j][1] + bx[j][3] <= bx[i][1];
            if (!apart)
                fail_msg("legend boxes %d and %d overlap", i, j);
        }
    return n;
}

/* The card's sweep legend: long labels (the fastest and the slowest path)
 * and many series wrap into rows without overlapping; a name longer than a
 * row is cut. */
static void test_legend_no_overlap(void **state)
{
    (void)state;
    double xs0[3] = {4096, 1 << 20, 256 << 20}, ys0[3] = {0.9, 40, 54};
    const double *xs[12], *ys[12];
    int np[12];
    const char *names[12] = {"fastest pair: GPU 0 → GPU 1 (NVLink, within domain 0)",
                             "slowest pair: GPU 3 → GPU 4 (host-staged, across domains)",
                             "host → GPU 0",
                             "GPU 7 → host, all GPUs active at the same time",
                             "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW"
                             "WWWWWWWWWWWWWWWWWWWWW",
                             "mmmmmmmmmmmmmmmmmmmmmmmm",
                             "GPU 1",
                             "GPU 2",
                             "GPU 3",
                             "GPU 4",
                             "GPU 5",
                             "GPU 6"};
    for (int k = 0; k < 12; k++) {
        xs[k] = xs0;
        ys[k] = ys0;
        np[k] = 3;
    }
    for (int nser = 2; nser <= 12; nser += 5) {
        gq_svg_lines l = {.id = "sweep",
                          .title = "Sweep",
                          .x_label = "bytes per copy",
                          .unit = "GB/s",
                          .nser = nser,
                          .series = names,
                          .npts = np,
                          .xs = xs,
                          .ys = ys,
                          .log_x = true,
                          .x_is_bytes = true,
                          .markers = true};
        int rc;
        char *s = capture_lines(&l, &rc);
        assert_int_equal(rc, GQ_OK);
        assert_wellformed(s);
        assert_int_equal(legend_boxes_ok(s), nser);
        free(s);
    }
    /* bars: four long series names */
    const char *cats[2] = {"GPU 0", "GPU 1"};
    const char *ser[4] = {"host→GPU alone", "host→GPU, all active", "GPU→host alone", "GPU→host, all active"};
    double v[8] = {55, 55, 50, 50, 55, 55, 48, 48};
    gq_svg_bars b = {.id = "host",
                     .title = "Host",
                     .unit = "GB/s",
                     .ncat = 2,
                     .nser = 4,
                     .cats = cats,
                     .series = ser,
                     .vals = v};
    int rc;
    char *s = capture_bars(&b, &rc);
    assert_int_equal(rc, GQ_OK);
    assert_int_equal(legend_boxes_ok(s), 4);
    free(s);
}

/* No exponent notation anywhere in a chart: tiny and huge values. */
static void test_no_exponent(void **state)
{
    (void)state;
    double t[3] = {0, 1e-5, 3e-5}, y[3] = {3e-5, 1e-4, 2e-6};
    const double *xs[1] = {t}, *ys[1] = {y};
    int np[1] = {3};
    const char *names[1] = {"tiny"};
    gq_svg_lines l = {.id = "tiny",
                      .title = "Tiny",
                      .x_label = "s",
                      .unit = "W",
                      .nser = 1,
                      .series = names,
                      .npts = np,
                      .xs = xs,
                      .ys = ys,
                      .markers = true};
    int rc;
    char *s = capture_lines(&l, &rc);
    assert_int_equal(rc, GQ_OK);
    for (const char *p = s; *p; p++)
        if (p > s && p[0] == 'e' && (p[1] == '-' || p[1] == '+') && p[-1] >= '0' && p[-1] <= '9')
            fail_msg("exponent notation in the chart: %.20s", p - 3);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heatmap_8x8),
        cmocka_unit_test(test_heatmap_viridis_stops),
        cmocka_unit_test(test_legend_counts_characters),
        cmocka_unit_test(test_heatmap_large_and_bad),
        cmocka_unit_test(test_bars_pairs),
        cmocka_unit_test(test_bars_heights),
        cmocka_unit_test(test_bars_nothing_positive),
        cmocka_unit_test(test_lines_sweep),
        cmocka_unit_test(test_lines_log_x_no_point),
        cmocka_unit_test(test_nice_axis),
        cmocka_unit_test(test_legend_no_overlap),
        cmocka_unit_test(test_no_exponent),
        cmocka_unit_test(test_lines_log_y),
        cmocka_unit_test(test_bar_labels_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
