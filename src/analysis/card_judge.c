/* Judging the card: the checks on its facts (card_facts.c reads them,
 * analysis/expect.c judges them), the card's verdict, and the card's table,
 * one function per row (the row's evidence, result and verdict), each followed
 * by the function that writes that row's findings in plain sentences.
 * gq_card_judge calls them in the card's order. Pure: reads the composed card
 * (card_compose.c) and the stress section; never measures. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/card.h"
#include "analysis/domains.h"
#include "analysis/json_get.h"
#include "core/units.h"

#define MAXG GQ_MAX_GPUS

static double sum_json(const json_t *a)
{
    double s = 0;
    size_t i;
    const json_t *v;
    json_array_foreach(a, i, v) if (json_is_number(v)) s += json_number_value(v);
    return s;
}

static int jints(const json_t *a, int *out, int max)
{
    int n = 0;
    size_t i;
    const json_t *v;
    json_array_foreach(a, i, v) if (n < max && json_is_integer(v)) out[n++] = (int)json_integer_value(v);
    return n;
}

static const char *f1(double v, char *b, size_t n)
{
    if (!isfinite(v))
        snprintf(b, n, "n/a");
    else if (fabs(v) >= 100 || (fabs(v) < 1e6 && v == floor(v)))
        snprintf(b, n, "%.0f", v);
    else if (fabs(v) >= 10)
        snprintf(b, n, "%.1f", v);
    else
        snprintf(b, n, "%.2f", v);
    return b;
}

/* A size that need not be a power of two: "74 KiB", "1.5 MiB". */
static const char *approx_size(double bytes, char *b, size_t n)
{
    if (!isfinite(bytes) || bytes < 1)
        snprintf(b, n, "n/a");
    else if (bytes >= GQ_GiB)
        snprintf(b, n, "%.1f GiB", bytes / GQ_GiB);
    else if (bytes >= GQ_MiB)
        snprintf(b, n, "%.1f MiB", bytes / GQ_MiB);
    else if (bytes >= GQ_KiB)
        snprintf(b, n, "%.0f KiB", bytes / GQ_KiB);
    else
        snprintf(b, n, "%.0f B", bytes);
    return b;
}

/* "52.6–53.8" or "53.0" */
static const char *range(double lo, double hi, char *b, size_t n)
{
    char x[32], y[32];
    f1(lo, x, sizeof x);
    f1(hi, y, sizeof y);
    if (!strcmp(x, y))
        snprintf(b, n, "%s", x);
    else
        snprintf(b, n, "%s–%s", x, y);
    return b;
}

/* pos[g] for a GPU index read from a document, or -1 when g is out of range
 * (a saved card edited by hand may name any integer). */
static int pos_of(const int *pos, int g)
{
    return g >= 0 && g < MAXG ? pos[g] : -1;
}

/* ---- the checks and the card's verdict -------------------------------------- */

/* ---- the rows and their findings -------------------------------------------- */

/* Worst verdict among the checks whose id is in ids (NULL-terminated). Rows
 * with no judged check are "info" (reported, nothing to judge) or "skip". */
static const char *row_verdict(const gq_checklist *cl, const char *const *ids, bool measured)
{
    gq_verdict w = GQ_V_SKIP;
    bool any = false;
    for (int i = 0; i < cl->n; i++)
        for (int k = 0; ids[k]; k++)
            if (!strcmp(cl->v[i].id, ids[k])) {
                gq_verdict v = cl->v[i].verdict;
                if (v >= GQ_V_PASS) {
                    any = true;
                    if (v > w || w < GQ_V_PASS)
                        w = v;
                }
            }
    if (any)
        return gq_verdict_name(w);
    return measured ? "info" : "skip";
}

static void row(gq_card *rows, const char *check, const char *evidence, const char *result,
                const char *verdict, const char *decision)
{
    if (rows->nrows >= GQ_CARD_MAX_ROWS)
        return;
    gq_card_row *r = &rows->rows[rows->nrows++];
    memset(r, 0, sizeof *r);
    snprintf(r->check, sizeof r->check, "%s", check);
    snprintf(r->measurement, sizeof r->measurement, "%s", evidence);
    snprintf(r->result, sizeof r->result, "%s", result);
    snprintf(r->decision, sizeof r->decision, "%s", decision);
    if (!gq_verdict_parse(verdict, &r->verdict))
        r->verdict = GQ_V_SKIP;
}

/* A finding; running out of memory drops it and gq_card_judge reports it. */
__attribute__((format(printf, 2, 3))) static void finding(gq_card *fs, const char *fmt, ...)
{
    char buf[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (gq_card_add_finding(fs, buf))
        fs->oom = true;
}

/* The performance domains of the card's domains section: dom_of by GPU index
 * (-1 unknown) and their count. */
typedef struct card_doms {
    int dom_of[MAXG];
    int ndom;
} card_doms;

static void doms_of(const json_t *dm, card_doms *d)
{
    for (int k = 0; k < MAXG; k++)
        d->dom_of[k] = -1;
    d->ndom = 0;
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(dm, "domains"), i, x)
    {
        int gl[MAXG];
        int n = jints(x, gl, MAXG);
        for (int k = 0; k < n; k++)
            if (gl[k] >= 0 && gl[k] < MAXG)
                d->dom_of[gl[k]] = (int)i;
        d->ndom++;
    }
}

/* The first matrix's ranges of GB/s: min and max of its finite cells within
 * a domain (both GPUs in the same one), across, and overall; NAN without a
 * matrix. */
typedef struct p2p_ranges {
    double wlo, whi, alo, ahi, lo, hi;
} p2p_ranges;

static void p2p_ranges_of(const json_t *m0, const card_doms *d, p2p_ranges *r)
{
    r->wlo = r->whi = r->alo = r->ahi = r->lo = r->hi = NAN;
    if (!m0)
        return;
    r->wlo = r->alo = r->lo = INFINITY;
    r->whi = r->ahi = r->hi = -INFINITY;
    int gl[MAXG];
    int n = jints(json_object_get(m0, "gpus"), gl, MAXG);
    const json_t *vals = json_object_get(m0, "values");
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            const json_t *x = json_array_get(json_array_get(vals, (size_t)a), (size_t)b);
            if (!json_is_number(x))
                continue;
            double v = json_number_value(x);
            r->lo = fmin(r->lo, v);
            r->hi = fmax(r->hi, v);
            int da = pos_of(d->dom_of, gl[a]);
            if (da >= 0 && da == pos_of(d->dom_of, gl[b])) {
                r->wlo = fmin(r->wlo, v);
                r->whi = fmax(r->whi, v);
            } else {
                r->alo = fmin(r->alo, v);
                r->ahi = fmax(r->ahi, v);
            }
        }
}

/* Host-staged pairs measured both ways: gpuqual's pipelined staging (the
 * first matrix's cell) and the driver's own staged copy (the "driver_staged"
 * matrix), over the same pairs; n = 0 when none. a/b: the pair where the
 * driver falls furthest below the pipeline. */
typedef struct staged_pair {
    int n, a, b;
    double plo, phi, dlo, dhi, worst_p, worst_d;
} staged_pair;

static void staged_pairs_of(const json_t *card, const json_t *m0, staged_pair *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->plo = sp->dlo = INFINITY;
    sp->phi = sp->dhi = -INFINITY;
    const json_t *md = NULL, *m;
    size_t i;
    json_array_foreach(json_object_get(card, "matrices"), i,
                       m) if (!strcmp(gq_json_str(m, "id", ""), "driver_staged")) md = m;
    if (!md || !m0)
        return;
    int gl[MAXG], gp[MAXG];
    int n = jints(json_object_get(md, "gpus"), gl, MAXG), np = jints(json_object_get(m0, "gpus"), gp, MAXG);
    for (int x = 0; x < n; x++)
        for (int y = 0; y < n; y++) {
            const json_t *dv =
                json_array_get(json_array_get(json_object_get(md, "values"), (size_t)x), (size_t)y);
            int px = -1, py = -1;
            for (int k = 0; k < np; k++) {
                px = gp[k] == gl[x] ? k : px;
                py = gp[k] == gl[y] ? k : py;
            }
            const json_t *pv =
                px >= 0 && py >= 0
                    ? json_array_get(json_array_get(json_object_get(m0, "values"), (size_t)px), (size_t)py)
                    : NULL;
            if (!json_is_number(dv) || !json_is_number(pv))
                continue;
            double d = json_number_value(dv), p = json_number_value(pv);
            if (!(p > 0))
                continue;
            sp->plo = fmin(sp->plo, p);
            sp->phi = fmax(sp->phi, p);
            sp->dlo = fmin(sp->dlo, d);
            sp->dhi = fmax(sp->dhi, d);
            if (!sp->n++ || d / p < sp->worst_d / sp->worst_p) {
                sp->a = gl[x];
                sp->b = gl[y];
                sp->worst_p = p;
                sp->worst_d = d;
            }
        }
}

/* How many of the uplinks above the GPUs (identity.uplinks) trained below their maximum width. */
static int uplinks_down(const json_t *id)
{
    int down = 0;
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(id, "uplinks"), i, x) down +=
        gq_json_num(x, "width") < gq_json_num(x, "width_max");
    return down;
}

/* Identity and links: the GPUs, their memory, power and PCIe links. */
static void row_identity(gq_card *rows, const gq_checklist *cl, const json_t *id)
{
    char ev[512], res[512], a[32], b[32], c[32], d[32];
    size_t i;
    const json_t *x;
    int n = (int)json_array_size(json_object_get(id, "gpus"));
    const json_t *g0 = json_array_get(json_object_get(id, "gpus"), 0);
    const json_t *pc = json_object_get(g0, "pcie");
    bool same = true;
    json_array_foreach(json_object_get(id, "gpus"), i, x) same &=
        !strcmp(gq_json_str(x, "name", ""), gq_json_str(g0, "name", ""));
    snprintf(ev, sizeof ev, "%d × %s%s, %s MiB, %s W limit; PCIe Gen%s x%s %s; driver %s, CUDA %s", n,
             gq_json_str(g0, "name", "?"), same ? "" : " (mixed models)",
             f1(gq_json_num(g0, "memory_mib"), a, sizeof a),
             f1(gq_json_num(g0, "power_limit_w"), b, sizeof b), f1(gq_json_num(pc, "gen"), c, sizeof c),
             f1(gq_json_num(pc, "width"), d, sizeof d),
             json_is_true(json_object_get(pc, "under_load")) ? "under load" : "at idle",
             gq_json_str(id, "driver", "?"), gq_json_str(id, "cuda_driver_str", "?"));
    int down = 0, idle = 0;
    json_array_foreach(json_object_get(id, "gpus"), i, x)
    {
        const json_t *p = json_object_get(x, "pcie");
        bool load = json_is_true(json_object_get(p, "under_load"));
        idle += !load;
        down += gq_json_num(p, "width") < gq_json_num(p, "width_max") ||
                (load && gq_json_num(p, "gen") < gq_json_num(p, "gen_max"));
    }
    int w = down ? snprintf(res, sizeof res, "%d GPU%s below the link's maximum", down, down == 1 ? "" : "s")
            : idle ? snprintf(res, sizeof res, "Gen%s x%s at idle", f1(gq_json_num(pc, "gen"), a, sizeof a),
                              f1(gq_json_num(pc, "width"), b, sizeof b))
                   : snprintf(res, sizeof res, "every %s at its maximum under load (Gen%s x%s)",
                              uplinks_down(id) ? "GPU's own link" : "link",
                              f1(gq_json_num(pc, "gen_max"), a, sizeof a),
                              f1(gq_json_num(pc, "width_max"), b, sizeof b));
    /* At idle a link slows down to save power: only the stress run's reading under load judges it. */
    if (idle == n && w > 0 && (size_t)w < sizeof res)
        w += snprintf(res + w, sizeof res - (size_t)w, ", not measured under load");
    else if (idle && w > 0 && (size_t)w < sizeof res)
        w += snprintf(res + w, sizeof res - (size_t)w, ", %d of %d GPUs not measured under load", idle, n);
    /* The links above the GPUs (switch and root port uplinks), read by discovery: each one below its
     * maximum width is named. */
    int nup = 0, updown = 0;
    json_array_foreach(json_object_get(id, "uplinks"), i, x)
    {
        nup++;
        double cw = gq_json_num(x, "width"), mw = gq_json_num(x, "width_max");
        if (!(isfinite(cw) && isfinite(mw) && cw < mw) || w <= 0 || (size_t)w >= sizeof res)
            continue;
        char set[128] = "";
        int gl[GQ_MAX_GPUS], ng = 0;
        size_t k;
        const json_t *gj;
        json_array_foreach(json_object_get(x, "gpus"), k, gj) if (ng < GQ_MAX_GPUS && json_is_integer(gj))
            gl[ng++] = (int)json_integer_value(gj);
        gq_domains_set_str(gl, ng, set, sizeof set);
        w += snprintf(res + w, sizeof res - (size_t)w, "; the uplink of %s %s (GPU%s %s) at x%s, can do x%s",
                      !strcmp(gq_json_str(x, "kind", ""), "root_port") ? "root port" : "PCIe switch",
                      gq_json_str(x, "node", "?"), ng == 1 ? "" : "s", set, f1(cw, a, sizeof a),
                      f1(mw, b, sizeof b));
        updown++;
    }
    if (nup && !updown && w > 0 && (size_t)w < sizeof res)
        snprintf(res + w, sizeof res - (size_t)w,
                 "; %d uplink%s above the GPUs at %s maximum width (read at idle)", nup, nup == 1 ? "" : "s",
                 nup == 1 ? "its" : "their");
    static const char *const ids[] = {
        "count_min",  "memory_mib_min", "power_limit_w_min", "pcie_gen_min", "pcie_width_min",
        "link_width", "link_gen",       "uplink_width",      "uplink_gen",   "expect_uncovered",
        NULL};
    const char *v = row_verdict(cl, ids, n > 0);
    if (idle && !strcmp(v, "pass"))
        v = "info"; /* the links are part of the row: never a pass without a reading under load */
    row(rows, "Identity and links", ev, res, v, "Confirm the delivered configuration");
}

/* Pairwise GPU traffic: the first matrix, one pair at a time, within and across domains. */
static void row_pairwise(gq_card *rows, const gq_checklist *cl, const json_t *m0, const json_t *dm, int ndom,
                         const p2p_ranges *r, const staged_pair *sp)
{
    char ev[512], res[512], s1[64], s2[64];
    if (m0) {
        int n = (int)json_array_size(json_object_get(m0, "gpus"));
        bool staged = json_is_true(json_object_get(m0, "staged"));
        snprintf(ev, sizeof ev, "%s matrix %d×%d, one pair at a time%s",
                 staged ? "host-staged GPU-to-GPU" : "P2P read", n, n, staged ? " (no P2P)" : "");
        if (json_is_true(json_object_get(dm, "split")))
            snprintf(res, sizeof res, "%d domains; within %s GB/s, across %s GB/s", ndom,
                     range(r->wlo, r->whi, s1, sizeof s1), range(r->alo, r->ahi, s2, sizeof s2));
        else
            snprintf(res, sizeof res, "%s GB/s%s", range(r->lo, r->hi, s1, sizeof s1),
                     json_is_true(json_object_get(dm, "no_p2p")) ? "; no pair has P2P" : "; one domain");
        if (sp->n) {
            size_t w = strlen(res);
            snprintf(res + w, sizeof res - w,
                     "; host-staged: %s GB/s by gpuqual's pipelined staging, %s GB/s by the driver's copy "
                     "(cudaMemcpyPeer) on %d pair%s",
                     range(sp->plo, sp->phi, s1, sizeof s1), range(sp->dlo, sp->dhi, s2, sizeof s2), sp->n,
                     sp->n == 1 ? "" : "s");
        }
        static const char *const ids[] = {"p2p_gbps_min", "nvlink_gbps_min", NULL};
        row(rows, "Pairwise GPU traffic", ev, res, row_verdict(cl, ids, isfinite(r->lo)),
            "Discover fast communication groups");
    } else {
        static const char *const ids[] = {NULL};
        row(rows, "Pairwise GPU traffic", "P2P read matrix", "not measured", row_verdict(cl, ids, false),
            "Discover fast communication groups");
    }
}

/* The pairwise finding: no P2P, the domains, or one domain. */
static void find_pairwise(gq_card *fs, const json_t *m0, const json_t *dm, int ndom, const p2p_ranges *r)
{
    char s1[64], s2[64];
    size_t i;
    const json_t *x;
    if (m0 && isfinite(r->lo)) {
        bool staged = json_is_true(json_object_get(m0, "staged"));
        if (json_is_true(json_object_get(dm, "no_p2p")) || staged)
            finding(
                fs,
                "No GPU pair has P2P: every GPU-to-GPU byte goes through host memory (%s GB/s one pair at a "
                "time, host-staged), so the host paths are the budget for any multi-GPU exchange.",
                range(r->lo, r->hi, s1, sizeof s1));
        else if (json_is_true(json_object_get(dm, "split"))) {
            char list[256] = "";
            size_t used = 0;
            json_array_foreach(json_object_get(dm, "domains"), i, x)
            {
                int gl[MAXG];
                int n = jints(x, gl, MAXG);
                char sb[64];
                int w = snprintf(list + used, sizeof list - used, "%s{%s}", i ? ", " : "",
                                 gq_domains_set_str(gl, n, sb, sizeof sb));
                if (w > 0 && (size_t)w < sizeof list - used)
                    used += (size_t)w;
            }
            finding(
                fs,
                "GPUs form %d performance domains, %s: pairs within a domain reach %s GB/s one way, pairs "
                "across %s GB/s (one pair at a time).",
                ndom, list, range(r->wlo, r->whi, s1, sizeof s1), range(r->alo, r->ahi, s2, sizeof s2));
        } else
            finding(
                fs,
                "Every GPU pair reaches %s GB/s one way: one performance domain, no boundary larger than the "
                "measurement spread.",
                range(r->lo, r->hi, s1, sizeof s1));
    }
}

/* Concurrent GPU traffic: pairs at once within domains and across. */
static void row_concurrent(gq_card *rows, const gq_checklist *cl, const json_t *pairs, const json_t *dm,
                           int ndom)
{
    char ev[512], res[512], a[32], b[32];
    const json_t *w = json_object_get(pairs, "within"), *ac = json_object_get(pairs, "across");
    if (json_is_object(pairs))
        snprintf(ev, sizeof ev, "%d pairs at once within domains, %d across",
                 (int)json_array_size(json_object_get(w, "pairs")),
                 (int)json_array_size(json_object_get(ac, "pairs")));
    else
        snprintf(ev, sizeof ev, "the intended simultaneous pairs, within and across domains");
    double ra = gq_json_num(pairs, "ratio");
    char pct[24] = "";
    if (isfinite(ra))
        snprintf(pct, sizeof pct, " (%.0f%%)", ra * 100);
    if (json_is_object(w) && json_is_object(ac))
        snprintf(res, sizeof res, "within %s GB/s in total, across %s GB/s%s",
                 f1(gq_json_num(w, "aggregate_gbps"), a, sizeof a),
                 f1(gq_json_num(ac, "aggregate_gbps"), b, sizeof b), pct);
    else if (json_is_object(w))
        snprintf(res, sizeof res, "within %s GB/s in total",
                 f1(gq_json_num(w, "aggregate_gbps"), a, sizeof a));
    else if (json_is_object(ac))
        snprintf(res, sizeof res, "%d pairs at once %s GB/s in total, %s GB/s one at a time",
                 (int)json_array_size(json_object_get(ac, "pairs")),
                 f1(gq_json_num(ac, "aggregate_gbps"), a, sizeof a),
                 f1(isfinite(gq_json_num(ac, "aggregate_gbps"))
                        ? sum_json(json_object_get(ac, "isolated_gbps"))
                        : NAN,
                    b, sizeof b));
    else if (json_is_true(json_object_get(dm, "no_p2p")))
        snprintf(res, sizeof res,
                 "no P2P: concurrent GPU pairs go through host memory (see the host paths and "
                 "the placement)");
    else if (json_is_integer(json_object_get(dm, "pairs")) &&
             json_integer_value(json_object_get(dm, "pairs")) == 0)
        snprintf(res, sizeof res, "not measured (no usable GPU pair figure)");
    else
        snprintf(res, sizeof res, "%s", ndom <= 1 ? "one domain: nothing to compare" : "not measured");
    static const char *const ids[] = {NULL};
    row(rows, "Concurrent GPU traffic", ev, res, row_verdict(cl, ids, json_is_object(pairs)),
        "Place workers without overloading shared paths");
}

/* The concurrent finding: what crossing domains keeps. */
static void find_concurrent(gq_card *fs, const json_t *pairs)
{
    char a[32], b[32];
    const json_t *w = json_object_get(pairs, "within"), *ac = json_object_get(pairs, "across");
    double ra = gq_json_num(pairs, "ratio");
    if (json_is_object(w) && json_is_object(ac) && isfinite(ra))
        finding(fs,
                "%d pairs at once within domains moved %s GB/s in total, %d pairs across domains %s GB/s: "
                "crossing domains keeps %.0f%% of the bandwidth. Keep heavy GPU-to-GPU exchanges within "
                "domains.",
                (int)json_array_size(json_object_get(w, "pairs")),
                f1(gq_json_num(w, "aggregate_gbps"), a, sizeof a),
                (int)json_array_size(json_object_get(ac, "pairs")),
                f1(gq_json_num(ac, "aggregate_gbps"), b, sizeof b), ra * 100);
}

/* GPU sets among the host subsets (a set measured in both directions counts once). */
static int distinct_sets(const json_t *subs)
{
    int n = 0;
    for (size_t i = 0; i < json_array_size(subs); i++) {
        const json_t *g = json_object_get(json_array_get(subs, i), "gpus");
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = json_equal(g, json_object_get(json_array_get(subs, j), "gpus"));
        n += !seen;
    }
    return n;
}

/* Host-memory traffic: each GPU alone, subsets and all at once, and the shared host budgets. */
static void row_host(gq_card *rows, const gq_checklist *cl, const json_t *host, const json_t *bottlenecks,
                     const gq_card_facts *f)
{
    char ev[512], res[512], a[32], b[32], s1[64], s2[64];
    size_t i;
    const json_t *x;
    double h2lo = INFINITY, h2hi = -INFINITY, d2lo = INFINITY, d2hi = -INFINITY;
    int n = (int)json_array_size(json_object_get(json_object_get(host, "alone"), "h2d"));
    for (int k = 0; k < n && k < MAXG; k++) {
        const json_t *e1 = json_array_get(json_object_get(json_object_get(host, "alone"), "h2d"), (size_t)k);
        const json_t *e2 = json_array_get(json_object_get(json_object_get(host, "alone"), "d2h"), (size_t)k);
        if (json_is_number(e1)) {
            h2lo = fmin(h2lo, json_number_value(e1));
            h2hi = fmax(h2hi, json_number_value(e1));
        }
        if (json_is_number(e2)) {
            d2lo = fmin(d2lo, json_number_value(e2));
            d2hi = fmax(d2hi, json_number_value(e2));
        }
    }
    int nsub = distinct_sets(json_object_get(host, "subsets"));
    snprintf(ev, sizeof ev, "both directions: each GPU alone, %d subset%s, all at once", nsub,
             nsub == 1 ? "" : "s");
    const json_t *all = json_object_get(host, "all");
    int nbn = 0;
    json_array_foreach(bottlenecks, i, x) nbn += strcmp(gq_json_str(x, "direction", ""), "p2p") != 0;
    char budgets[160];
    /* How many shared host budgets there are is a fact only when the concurrent copies ran. */
    if (f->step_ev[GQ_CS_CONTENTION] == GQ_EV_MEASURED)
        snprintf(budgets, sizeof budgets, "%d shared host budget%s", nbn, nbn == 1 ? "" : "s");
    else
        snprintf(budgets, sizeof budgets, "shared host budgets not measured (contention step: %s)",
                 f->step_ev[GQ_CS_CONTENTION] == GQ_EV_UNKNOWN
                     ? "unknown"
                     : gq_ev_reason_words(f->step_why[GQ_CS_CONTENTION]));
    snprintf(res, sizeof res, "alone %s / %s GB/s (to GPU / to host)%s%s%s%s%s; %s",
             range(h2lo, h2hi, s1, sizeof s1), range(d2lo, d2hi, s2, sizeof s2),
             json_is_object(all) ? "; all at once " : "",
             json_is_object(all) ? f1(gq_json_num(all, "h2d_aggregate_gbps"), a, sizeof a) : "",
             json_is_object(all) ? " / " : "",
             json_is_object(all) ? f1(gq_json_num(all, "d2h_aggregate_gbps"), b, sizeof b) : "",
             json_is_object(all) ? " GB/s" : "", budgets);
    static const char *const ids[] = {"h2d_gbps_min", "d2h_gbps_min", "agree_h2d", "agree_d2h", NULL};
    row(rows, "Host-memory traffic", ev, res, row_verdict(cl, ids, isfinite(h2lo)),
        "Select and qualify offload workers");
}

/* The bottleneck findings: the shared budgets (P2P and host) inferred from concurrent copies. */
static void find_bottlenecks(gq_card *fs, const json_t *bottlenecks)
{
    char a[32], b[32];
    size_t i;
    const json_t *x;
    json_array_foreach(bottlenecks, i, x)
    {
        const char *dir = gq_json_str(x, "direction", "?");
        int gl[MAXG];
        int n = jints(json_object_get(x, "gpus"), gl, MAXG);
        char sb[64];
        const char *expl = gq_json_str(x, "explanation", "");
        if (!strcmp(dir, "p2p"))
            finding(fs,
                    "Concurrent GPU pairs among GPUs %s share about %s GB/s when they copy at once (one pair "
                    "at a "
                    "time they would move %s GB/s). %s%s",
                    gq_domains_set_str(gl, n, sb, sizeof sb),
                    f1(gq_json_num(x, "capacity_gbps"), a, sizeof a),
                    f1(gq_json_num(x, "sum_alone_gbps"), b, sizeof b), expl,
                    *expl && expl[strlen(expl) - 1] != '.' ? "." : "");
        else
            finding(fs,
                    "GPUs %s share one %s budget of about %s GB/s when they copy at once (alone they would "
                    "move %s GB/s together). %s%s",
                    gq_domains_set_str(gl, n, sb, sizeof sb),
                    !strcmp(dir, "h2d")   ? "host-to-GPU"
                    : !strcmp(dir, "d2h") ? "GPU-to-host"
                                          : dir,
                    f1(gq_json_num(x, "capacity_gbps"), a, sizeof a),
                    f1(gq_json_num(x, "sum_alone_gbps"), b, sizeof b), expl,
                    *expl && expl[strlen(expl) - 1] != '.' ? "." : "");
    }
}

/* The host finding: an asymmetry with all GPUs copying at once that each GPU alone does not show. */
static void find_host(gq_card *fs, const json_t *host)
{
    char s1[64], s2[64];
    const json_t *all = json_object_get(host, "all");
    static const char *const dn[2] = {"h2d", "d2h"};
    for (int dd = 0; dd < 2 && json_is_object(all); dd++) {
        int gl[MAXG];
        int n = jints(json_object_get(host, "gpus"), gl, MAXG);
        double v[MAXG];
        double vlo = INFINITY, vhi = -INFINITY;
        for (int k = 0; k < n; k++) {
            const json_t *e = json_array_get(json_object_get(all, dn[dd]), (size_t)k);
            v[k] = json_is_number(e) ? json_number_value(e) : NAN;
            if (isfinite(v[k])) {
                vlo = fmin(vlo, v[k]);
                vhi = fmax(vhi, v[k]);
            }
        }
        if (!(isfinite(vlo) && vhi > 0 && vlo < 0.85 * vhi))
            continue;
        int slow[MAXG], fast[MAXG], ns = 0, nf = 0;
        double mid = (vlo + vhi) / 2, sl = INFINITY, sh = -INFINITY, fl = INFINITY, fh = -INFINITY;
        for (int k = 0; k < n; k++) {
            if (!isfinite(v[k]))
                continue;
            if (v[k] < mid) {
                slow[ns++] = gl[k];
                sl = fmin(sl, v[k]);
                sh = fmax(sh, v[k]);
            } else {
                fast[nf++] = gl[k];
                fl = fmin(fl, v[k]);
                fh = fmax(fh, v[k]);
            }
        }
        char sa[64], sb2[64];
        finding(fs,
                "With all %d GPUs copying %s at once, GPUs %s get %s GB/s each against %s GB/s for GPUs "
                "%s: an "
                "asymmetry that each GPU alone does not show.",
                n, dd ? "to host memory" : "from host memory", gq_domains_set_str(slow, ns, sa, sizeof sa),
                range(sl, sh, s1, sizeof s1), range(fl, fh, s2, sizeof s2),
                gq_domains_set_str(fast, nf, sb2, sizeof sb2));
    }
}

/* Transfer granularity: the buffer-size sweeps and their fits. */
static void row_sweeps(gq_card *rows, const gq_checklist *cl, const json_t *sweeps)
{
    char ev[512], res[512], a[32], b[32];
    size_t i;
    const json_t *x;
    snprintf(ev, sizeof ev, "buffer-size sweep on %d path%s", (int)json_array_size(sweeps),
             json_array_size(sweeps) == 1 ? "" : "s");
    res[0] = 0;
    size_t used = 0;
    json_array_foreach(sweeps, i, x)
    {
        const json_t *fit = json_object_get(x, "fit");
        if (!json_is_object(fit))
            continue;
        char hb[32];
        double h = gq_json_num(fit, "half_bytes");
        int w = snprintf(res + used, sizeof res - used, "%s%s: %s µs fixed cost, half of %s GB/s at %s",
                         used ? "; " : "", gq_json_str(x, "label", "?"),
                         f1(gq_json_num(fit, "fixed_us"), a, sizeof a),
                         f1(gq_json_num(fit, "asymptotic_gbps"), b, sizeof b), approx_size(h, hb, sizeof hb));
        if (w > 0 && (size_t)w < sizeof res - used)
            used += (size_t)w;
    }
    if (!used)
        snprintf(res, sizeof res, "%s", json_array_size(sweeps) ? "no fit" : "not measured");
    static const char *const ids[] = {NULL};
    row(rows, "Transfer granularity", ev, res, row_verdict(cl, ids, json_array_size(sweeps) > 0),
        "Budget transfer overhead realistically");
}

/* The sweep finding: the first fitted sweep's fixed cost and half-bandwidth size. */
static void find_sweeps(gq_card *fs, const json_t *sweeps)
{
    char a[32], b[32];
    size_t i;
    const json_t *x;
    json_array_foreach(sweeps, i, x)
    {
        const json_t *fit = json_object_get(x, "fit");
        if (!json_is_object(fit))
            continue;
        double h = gq_json_num(fit, "half_bytes");
        char hb[32];
        finding(
            fs,
            "%s: each copy costs about %s µs before data moves; copies smaller than %s get less than half of "
            "its %s GB/s.",
            gq_json_str(x, "label", "?"), f1(gq_json_num(fit, "fixed_us"), a, sizeof a),
            approx_size(h, hb, sizeof hb), f1(gq_json_num(fit, "asymptotic_gbps"), b, sizeof b));
        break;
    }
}

/* Latency: pointer chase host-GPU and GPU-GPU. */
static void row_latency(gq_card *rows, const gq_checklist *cl, const json_t *lat)
{
    char ev[512], res[512], s1[64], s2[64];
    size_t i;
    const json_t *x;
    double hl = INFINITY, hh = -INFINITY, pl = INFINITY, ph = -INFINITY;
    json_array_foreach(json_object_get(json_object_get(lat, "host"), "ns"), i, x) if (json_is_number(x))
    {
        hl = fmin(hl, json_number_value(x));
        hh = fmax(hh, json_number_value(x));
    }
    const json_t *row_;
    json_array_foreach(json_object_get(json_object_get(lat, "p2p"), "values"), i, row_)
    {
        size_t k;
        json_array_foreach(row_, k, x) if (json_is_number(x))
        {
            pl = fmin(pl, json_number_value(x));
            ph = fmax(ph, json_number_value(x));
        }
    }
    snprintf(ev, sizeof ev, "pointer chase host↔GPU%s", isfinite(pl) ? " and GPU↔GPU" : "");
    if (isfinite(hl))
        snprintf(res, sizeof res, "host %s ns%s%s%s", range(hl, hh, s1, sizeof s1),
                 isfinite(pl) ? ", GPU↔GPU " : "", isfinite(pl) ? range(pl, ph, s2, sizeof s2) : "",
                 isfinite(pl) ? " ns" : "");
    else
        snprintf(res, sizeof res, "not measured");
    static const char *const ids[] = {"host_latency_ns_max", "p2p_latency_ns_max", NULL};
    row(rows, "Latency", ev, res, row_verdict(cl, ids, isfinite(hl)), "Know what small messages cost");
}

/* Whole-node health: the stress section's temperatures, clocks, power capping and slowdowns. */
static void row_health(gq_card *rows, const gq_checklist *cl, const json_t *stress)
{
    char ev[512], res[512], a[32], b[32], c[32], s1[64];
    size_t i;
    const json_t *x;
    double tmax = -INFINITY, clo = INFINITY, chi = -INFINITY, cap = -INFINITY;
    int nth = 0, ng = 0;
    json_array_foreach(json_object_get(stress, "gpus"), i, x)
    {
        ng++;
        tmax = fmax(tmax, gq_json_num(x, "temp_max_c"));
        double ck = gq_json_num(x, "sm_clock_avg_mhz");
        if (isfinite(ck)) {
            clo = fmin(clo, ck);
            chi = fmax(chi, ck);
        }
        double cp = gq_json_num(x, "power_capped_pct");
        if (isfinite(cp))
            cap = fmax(cap, cp);
        nth += json_is_true(json_object_get(x, "thermal_slowdown"));
    }
    if (ng) {
        snprintf(ev, sizeof ev,
                 "%s s GEMM load on %d GPU%s; temperature, power, clocks, throttle reasons, errors",
                 f1(gq_json_num(stress, "elapsed_s"), a, sizeof a), ng, ng == 1 ? "" : "s");
        snprintf(res, sizeof res,
                 "max %s °C, average SM clock %s MHz, power-capped up to %s%% of samples, %s",
                 f1(tmax, b, sizeof b), range(clo, chi, s1, sizeof s1), f1(cap, c, sizeof c),
                 nth ? "THERMAL SLOWDOWN" : "no thermal slowdown");
    } else {
        snprintf(ev, sizeof ev, "sustained load with telemetry");
        snprintf(res, sizeof res, "not run");
    }
    static const char *const ids[] = {"temp_c_max", "sm_clock_mhz_min", "agree_sm_clock",
                                      "thermal",    "stress",           NULL};
    row(rows, "Whole-node health", ev, res, row_verdict(cl, ids, ng > 0), "Accept the operating envelope");
}

/* The health finding: what the load did to the hottest GPU. */
static void find_health(gq_card *fs, const json_t *stress)
{
    char a[32], b[32], c[32], d[32], s1[64];
    size_t i;
    const json_t *x;
    if (json_is_object(stress)) {
        double tmax = -INFINITY, cap = -INFINITY;
        int nth = 0, ng = 0;
        json_array_foreach(json_object_get(stress, "gpus"), i, x)
        {
            ng++;
            tmax = fmax(tmax, gq_json_num(x, "temp_max_c"));
            double cp = gq_json_num(x, "power_capped_pct");
            if (isfinite(cp))
                cap = fmax(cap, cp);
            nth += json_is_true(json_object_get(x, "thermal_slowdown"));
        }
        const json_t *node = json_object_get(stress, "node");
        char who[32];
        if (ng == 1)
            snprintf(who, sizeof who, "the GPU");
        else if (ng == 2)
            snprintf(who, sizeof who, "both GPUs");
        else
            snprintf(who, sizeof who, "all %d GPUs", ng);
        finding(fs,
                "Under %s s of load on %s (%s W together, GPU telemetry), the hottest reached %s °C%s%s%s; "
                "power capping in up to %s%% of samples is expected near the limit and is not a thermal "
                "slowdown.",
                f1(gq_json_num(stress, "elapsed_s"), a, sizeof a), who,
                f1(gq_json_num(node, "power_total_avg_w"), b, sizeof b), f1(tmax, c, sizeof c),
                nth ? ", with THERMAL SLOWDOWN on " : ", with no thermal slowdown",
                nth ? f1(nth, d, sizeof d) : "",
                nth == 1 ? " GPU"
                : nth    ? " GPUs"
                         : "",
                f1(cap, s1, sizeof s1));
    }
}

/* Placement: the roles solved on the measured paths and the gain over the naive mapping. */
static void row_placement(gq_card *rows, const gq_checklist *cl, const json_t *pl)
{
    char ev[512], res[512], a[32], b[32], c[32];
    size_t i;
    const json_t *x;
    const json_t *roles = json_object_get(pl, "roles");
    snprintf(
        ev, sizeof ev,
        "%s prefill, %s decode, %s offload workers%s; the implied pattern measured against the naive one",
        f1(gq_json_num(roles, "prefill"), a, sizeof a), f1(gq_json_num(roles, "decode"), b, sizeof b),
        f1(gq_json_num(roles, "offload"), c, sizeof c),
        json_is_true(json_object_get(pl, "default_split")) ? " (default split)" : "");
    res[0] = 0;
    size_t used = 0;
    const json_t *pp = json_object_get(pl, "pairs");
    if (json_array_size(pp)) {
        used += (size_t)snprintf(res, sizeof res, "pairs");
        json_array_foreach(pp, i, x) if (used < sizeof res - 24) used +=
            (size_t)snprintf(res + used, sizeof res - used, " %d→%d", (int)gq_json_num(x, "prefill"),
                             (int)gq_json_num(x, "decode"));
    }
    const json_t *off = json_object_get(pl, "offload");
    if (json_array_size(off) && used < sizeof res - 40) {
        used += (size_t)snprintf(res + used, sizeof res - used, "%soffload on", used ? "; " : "");
        json_array_foreach(off, i, x) if (used < sizeof res - 16) used += (size_t)snprintf(
            res + used, sizeof res - used, "%s %d", i ? "," : "", (int)gq_json_num(x, "gpu"));
    }
    double gain = gq_json_num(pl, "gain");
    if (isfinite(gain) && used < sizeof res - 40)
        used += (size_t)snprintf(res + used, sizeof res - used, "; %.2f× the naive mapping", gain);
    if (!used)
        snprintf(res, sizeof res, "not computed");
    static const char *const ids[] = {NULL};
    row(rows, "Placement", ev, res, row_verdict(cl, ids, json_is_object(pl)),
        "Keep heavy exchanges on fast paths; verify in the serving stack");
}

/* The placement findings: the offload workers and the prefill-to-decode handoffs. */
/* The offload sentence: "do not collide" only when the measured budgets show
 * it; else the shared budget that two offload workers draw on, or that the
 * budgets were not measured. */
static void find_offload(gq_card *fs, const int *gl, int n, const char *list, double mh, double md,
                         const json_t *bottlenecks, const gq_card_facts *f)
{
    char a[32], b[32], c[32], sb[64], sc[64];
    if (f->step_ev[GQ_CS_CONTENTION] != GQ_EV_MEASURED) {
        finding(fs,
                "For KV offload, use GPUs %s (measured together: %s GB/s to GPU, %s GB/s to host in total); "
                "whether their host paths collide was not measured (contention step: %s).",
                list, f1(mh, a, sizeof a), f1(md, b, sizeof b),
                f->step_ev[GQ_CS_CONTENTION] == GQ_EV_UNKNOWN
                    ? "unknown"
                    : gq_ev_reason_words(f->step_why[GQ_CS_CONTENTION]));
        return;
    }
    size_t i;
    const json_t *x;
    json_array_foreach(bottlenecks, i, x)
    {
        const char *dir = gq_json_str(x, "direction", "?");
        if (!strcmp(dir, "p2p"))
            continue;
        int bl[MAXG], shared[MAXG], ns = 0;
        int nb = jints(json_object_get(x, "gpus"), bl, MAXG);
        for (int k = 0; k < n; k++)
            for (int j = 0; j < nb; j++)
                if (gl[k] == bl[j] && ns < MAXG)
                    shared[ns++] = gl[k];
        if (ns < 2)
            continue;
        finding(fs,
                "For KV offload, use GPUs %s (measured together: %s GB/s to GPU, %s GB/s to host in total); "
                "GPUs %s of them share the %s budget of GPUs %s, about %s GB/s, when they copy at once.",
                list, f1(mh, a, sizeof a), f1(md, b, sizeof b), gq_domains_set_str(shared, ns, sb, sizeof sb),
                !strcmp(dir, "h2d")   ? "host-to-GPU"
                : !strcmp(dir, "d2h") ? "GPU-to-host"
                                      : dir,
                gq_domains_set_str(bl, nb, sc, sizeof sc), f1(gq_json_num(x, "capacity_gbps"), c, sizeof c));
        return;
    }
    finding(
        fs,
        "For KV offload, use GPUs %s: their host paths do not collide (measured together: %s GB/s to GPU, "
        "%s GB/s to host in total).",
        list, f1(mh, a, sizeof a), f1(md, b, sizeof b));
}

static void find_placement(gq_card *fs, const json_t *pl, const json_t *bottlenecks, const gq_card_facts *f)
{
    char a[32], b[32];
    size_t i;
    const json_t *x;
    if (json_is_object(pl)) {
        const json_t *off = json_object_get(pl, "offload");
        if (json_array_size(off)) {
            int gl[MAXG], n = 0;
            json_array_foreach(off, i, x) if (n < MAXG) gl[n++] = (int)gq_json_num(x, "gpu");
            const json_t *oa = json_object_get(pl, "offload_aggregate");
            double mh = gq_json_num(json_object_get(oa, "h2d"), "measured_gbps"),
                   md = gq_json_num(json_object_get(oa, "d2h"), "measured_gbps");
            char list[96] = "";
            size_t used = 0;
            for (int k = 0; k < n; k++) {
                /* 64 workers do not fit: stop at the last whole entry rather than run past list. */
                int w = snprintf(list + used, sizeof list - used, "%s%d", k ? "," : "", gl[k]);
                if (w < 0 || (size_t)w >= sizeof list - used)
                    break;
                used += (size_t)w;
            }
            if (n > 1)
                find_offload(fs, gl, n, list, mh, md, bottlenecks, f);
            else
                finding(fs, "For KV offload, use GPU %s (%s GB/s to GPU, %s GB/s to host).", list,
                        f1(mh, a, sizeof a), f1(md, b, sizeof b));
        }
        const json_t *pp = json_object_get(pl, "pairs");
        if (json_array_size(pp)) {
            char list[256] = "";
            size_t used = 0;
            json_array_foreach(pp, i, x) if (used < sizeof list - 16) used +=
                (size_t)snprintf(list + used, sizeof list - used, "%s%d→%d", i ? ", " : "",
                                 (int)gq_json_num(x, "prefill"), (int)gq_json_num(x, "decode"));
            double gain = gq_json_num(pl, "gain");
            const json_t *pa = json_object_get(pl, "pairs_aggregate");
            if (json_integer_value(json_object_get(pl, "staged_unmeasured")) > 0)
                finding(fs,
                        "Prefill→decode handoffs %s are planned through host memory because no usable P2P "
                        "figure was measured for %d of them: measure the pairs before relying on it.",
                        list, (int)json_integer_value(json_object_get(pl, "staged_unmeasured")));
            else if (json_is_true(json_object_get(pl, "all_staged")))
                finding(fs,
                        "Prefill→decode handoffs %s: every handoff is host-staged (no P2P), so the pairs are "
                        "chosen "
                        "to use both sockets' host budgets.",
                        list);
            else
                finding(fs,
                        "Prefill→decode handoffs %s keep every KV transfer on a fast path: %s GB/s measured "
                        "together%s%s%s.",
                        list, f1(gq_json_num(pa, "measured_gbps"), a, sizeof a), isfinite(gain) ? ", " : "",
                        isfinite(gain) ? f1(gain, b, sizeof b) : "",
                        isfinite(gain) ? "× the naive mapping (GPUs in index order)" : "");
        }
    }
}

/* Measurement integrity: impossible figures, overlap, data checks and errors. */
static void row_integrity(gq_card *rows, const gq_checklist *cl, const gq_card_facts *f)
{
    char ev[512], res[512];
    snprintf(ev, sizeof ev,
             "%d records: every figure against its path's capacity, overlap of concurrent windows, "
             "data pattern checks",
             f->n_records);
    int n = snprintf(res, sizeof res, "%d impossible, %d overlap-invalid, %d failed checks, %d errors",
                     f->n_impossible, f->n_overlap_invalid, f->n_verify_failed, f->n_errors);
    /* Figures taken while a GPU was busy are left out: the row cannot say
     * "trust the figures" (the card's verdict says whether it was allowed). */
    if (f->n_contaminated && n > 0 && (size_t)n < sizeof res)
        snprintf(res + n, sizeof res - (size_t)n, ", %d contaminated (a GPU was busy)", f->n_contaminated);
    static const char *const ids[] = {"impossible", "verify", "errors", "overlap", NULL};
    const char *v = row_verdict(cl, ids, f->n_records > 0);
    if (f->n_contaminated && strcmp(v, "fail"))
        v = "warn";
    row(rows, "Measurement integrity", ev, res, v, "Trust the figures above");
}

/* Application validation: not measured by gpuqual. */
static void row_application(gq_card *rows)
{
    row(rows, "Application validation", "TTFT, ITL, throughput, tails and errors under the target workload",
        "not measured by gpuqual: run the serving stack on the placement above", "skip",
        "Confirm the infrastructure choices improve service");
}

/* The verdict findings: up to six checks with the card's verdict, when it is warn or fail. */
static void find_verdicts(gq_card *fs, const gq_checklist *cl, gq_verdict overall)
{
    if (overall == GQ_V_FAIL || overall == GQ_V_WARN) {
        int shown = 0;
        for (int k = 0; k < cl->n && shown < 6; k++)
            if (cl->v[k].verdict == overall) {
                finding(fs, "%s: %s", overall == GQ_V_FAIL ? "FAIL" : "WARN", cl->v[k].text);
                shown++;
            }
    }
}

/* One finding per GPU the domains analysis set aside (the card's "domains"
 * section's set_aside[]: every pair with it slow for a reason of its own). */
static void find_set_aside(gq_card *fs, const json_t *dm)
{
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(dm, "set_aside"), i, s)
    {
        const json_t *g = json_object_get(s, "gpu");
        if (json_is_integer(g))
            finding(fs,
                    "GPU %d set aside: %s; it is its own domain, and the other GPUs' domains are found "
                    "without it.",
                    (int)json_integer_value(g), gq_json_str(s, "text", "every pair with it is slow"));
    }
}

/* One finding per busy GPU: what ran on it and what the card did about it. */
static void find_busy(gq_card *fs)
{
    for (int g = 0; g < GQ_MAX_GPUS; g++)
        if (fs->busy_records[g])
            finding(fs,
                    "GPU %d was busy while the card measured (%s): %d measurement%s flagged contaminated and "
                    "left "
                    "out of every figure and verdict. %s",
                    g, fs->busy_what[g][0] ? fs->busy_what[g] : "other work seen", fs->busy_records[g],
                    fs->busy_records[g] == 1 ? "" : "s",
                    fs->allow_busy ? "The card was judged without them (--allow-busy)."
                                   : "The card is INCOMPLETE: run it again with the GPU idle, or with "
                                     "--allow-busy to judge the rest.");
}

/* The identity finding: a virtual machine showing one NUMA node. */
static void find_identity(gq_card *fs, const json_t *id)
{
    if (json_is_true(json_object_get(id, "vm")) && gq_json_num(id, "numa_nodes") <= 1)
        finding(
            fs,
            "This is a virtual machine showing one NUMA node: host buffers cannot be bound to the physical "
            "memory locality, and shared budgets found here are inferred from measurement only.");
}

/* ---- the judge -------------------------------------------------------------- */

int gq_card_judge(const json_t *card, const json_t *bottlenecks, const json_t *stress, const gq_recordset *rs,
                  const gq_expect *ex, gq_card *out, gq_err *err)
{
    gq_card_init(out);
    gq_card_facts *f = malloc(sizeof *f);
    if (!f)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory judging the card");
    gq_card_facts_from_json(card, stress, rs, f);
    int rc = gq_expect_judge(ex, f, &out->checks, err);
    if (rc)
        goto out;
    memcpy(out->step_ev, f->step_ev, sizeof out->step_ev);
    memcpy(out->step_why, f->step_why, sizeof out->step_why);
    if (!gq_card_level_parse(json_string_value(json_object_get(card, "level")), &out->level))
        out->level = GQ_LEVEL_STANDARD; /* a schema-1 card: today's standard card */
    out->complete = !json_is_false(json_object_get(card, "complete"));
    out->allow_busy = json_is_true(json_object_get(card, "allow_busy"));
    for (int g = 0; g < GQ_MAX_GPUS; g++)
        if ((out->busy_records[g] = f->busy_records[g])) {
            out->nbusy++;
            snprintf(out->busy_what[g], sizeof out->busy_what[g], "%s", f->busy_what[g]);
        }
    if ((out->have_expect = ex && ex->nmodels)) {
        snprintf(out->expect_file, sizeof out->expect_file, "%s",
                 ex->path[0]          ? ex->path
                 : ex->noverrides > 0 ? "--set"
                                      : "(inline)");
        snprintf(out->expect_description, sizeof out->expect_description, "%s", ex->description);
    }
    if (ex) {
        out->noverrides = ex->noverrides < GQ_EXPECT_MAX_OVERRIDES ? ex->noverrides : GQ_EXPECT_MAX_OVERRIDES;
        memcpy(out->overrides, ex->overrides, sizeof out->overrides[0] * (size_t)out->noverrides);
    }
    const gq_checklist *cl = &out->checks;
    gq_verdict overall = gq_card_summarize(out);

    /* ---- rows: seed 001 §9 ---- */
    const json_t *id = json_object_get(card, "identity"), *dm = json_object_get(card, "domains");
    const json_t *m0 = json_array_get(json_object_get(card, "matrices"), 0);
    const json_t *pairs = json_object_get(card, "pairs"), *host = json_object_get(card, "host");
    const json_t *sweeps = json_object_get(card, "sweeps"), *lat = json_object_get(card, "latency");
    const json_t *pl = json_object_get(card, "placement");
    card_doms d;
    doms_of(dm, &d);
    p2p_ranges pr;
    p2p_ranges_of(m0, &d, &pr);
    row_identity(out, cl, id);
    staged_pair sp;
    staged_pairs_of(card, m0, &sp);
    row_pairwise(out, cl, m0, dm, d.ndom, &pr, &sp);
    row_concurrent(out, cl, pairs, dm, d.ndom);
    row_host(out, cl, host, bottlenecks, f);
    row_sweeps(out, cl, sweeps);
    row_latency(out, cl, lat);
    row_health(out, cl, stress);
    row_placement(out, cl, pl);
    row_integrity(out, cl, f);
    row_application(out);
    gq_card_rest_rows(out);

    /* ---- findings in plain sentences ---- */
    find_busy(out);
    find_verdicts(out, cl, overall);
    find_pairwise(out, m0, dm, d.ndom, &pr);
    if (sp.n) {
        char s1[64], s2[64];
        finding(
            out,
            "Host-staged pairs (no P2P): gpuqual's pipelined staging moves %s GB/s one pair at a time, the "
            "driver's own staged copy %s GB/s on the same %d pair%s (GPU %d → %d: %.1f against %.1f GB/s). "
            "A serving stack that copies between these GPUs with cudaMemcpy or cudaMemcpyPeer gets the "
            "driver's figure; one that stages through pinned host memory in chunks of its own, pipelined "
            "(as NCCL's shared-memory transport does without P2P), can approach the pipelined one.",
            range(sp.plo, sp.phi, s1, sizeof s1), range(sp.dlo, sp.dhi, s2, sizeof s2), sp.n,
            sp.n == 1 ? "" : "s", sp.a, sp.b, sp.worst_d, sp.worst_p);
    }
    find_set_aside(out, dm);
    find_concurrent(out, pairs);
    /* Shared budgets are stated from the contention step's copies only (other
     * steps' groups, such as the placement's, are not a survey of the paths). */
    if (f->step_ev[GQ_CS_CONTENTION] == GQ_EV_MEASURED)
        find_bottlenecks(out, bottlenecks);
    find_host(out, host);
    find_placement(out, pl, bottlenecks, f);
    find_sweeps(out, sweeps);
    find_health(out, stress);
    find_identity(out, id);
    if (out->oom)
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory writing the card's findings");
out:
    free(f);
    return rc;
}
