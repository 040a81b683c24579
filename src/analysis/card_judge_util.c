/* The helpers the card's judge shares (card_judge_internal.h): numbers and
 * ranges in words, a row and a finding added to the card, and the card
 * section's domains, P2P ranges and host-staged pairs. Pure. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/card.h"
#include "analysis/card_judge_internal.h"
#include "analysis/domains.h"
#include "core/units.h"

double gq_judge_sum(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

const char *gq_judge_f1(double v, char *b, size_t n)
{
    if (!isfinite(v))
        snprintf(b, n, "n/a");
    else if (fabs(v) >= 100 || (fabs(v) < 1e6 && v == floor(v))) {
        /* a figure longer than the buffer: its exponent form, not its first digits */
        if ((size_t)snprintf(b, n, "%.0f", v) >= n)
            snprintf(b, n, "%.6g", v);
    } else if (fabs(v) >= 10)
        snprintf(b, n, "%.1f", v);
    else
        snprintf(b, n, "%.2f", v);
    return b;
}

/* A size that need not be a power of two: "74 KiB", "1.5 MiB". */
const char *gq_judge_approx_size(double bytes, char *b, size_t n)
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
const char *gq_judge_range(double lo, double hi, char *b, size_t n)
{
    char x[32], y[32];
    gq_judge_f1(lo, x, sizeof x);
    gq_judge_f1(hi, y, sizeof y);
    if (!strcmp(x, y))
        snprintf(b, n, "%s", x);
    else
        snprintf(b, n, "%s–%s", x, y);
    return b;
}

/* pos[g] for a GPU index read from a document, or -1 when g is out of range
 * (a saved card edited by hand may name any integer). */
int gq_judge_pos_of(const int *pos, int g)
{
    return g >= 0 && g < MAXG ? pos[g] : -1;
}

/* Worst verdict among the checks whose id is in ids (NULL-terminated). Rows
 * with no judged check are "info" (reported, nothing to judge) or "skip". */
const char *gq_judge_row_verdict(const gq_checklist *cl, const char *const *ids, bool measured)
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

void gq_judge_row(gq_card *rows, const char *check, const char *evidence, const char *result,
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
__attribute__((format(printf, 2, 3))) void gq_judge_finding(gq_card *fs, const char *fmt, ...)
{
    char buf[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (gq_card_add_finding(fs, buf))
        fs->oom = true;
}

void gq_judge_doms_of(const gq_card_domains_view *dm, card_doms *d)
{
    for (int k = 0; k < MAXG; k++)
        d->dom_of[k] = -1;
    for (int i = 0; i < dm->ndomains; i++) {
        const gq_card_domain_view *x = &dm->domain[i];
        for (int k = 0; k < x->n; k++)
            if (x->gpu[k] >= 0 && x->gpu[k] < MAXG)
                d->dom_of[x->gpu[k]] = i;
    }
    d->ndom = dm->ndomains_count;
}

void gq_judge_p2p_ranges_of(const gq_card_matrix_view *m0, const card_doms *d, p2p_ranges *r)
{
    r->wlo = r->whi = r->alo = r->ahi = r->lo = r->hi = NAN;
    if (!m0->present)
        return;
    r->wlo = r->alo = r->lo = INFINITY;
    r->whi = r->ahi = r->hi = -INFINITY;
    const int *gl = m0->gpu;
    int n = m0->n;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            double v = m0->gbps[a][b];
            if (isnan(v))
                continue;
            r->lo = fmin(r->lo, v);
            r->hi = fmax(r->hi, v);
            int da = gq_judge_pos_of(d->dom_of, gl[a]);
            if (da >= 0 && da == gq_judge_pos_of(d->dom_of, gl[b])) {
                r->wlo = fmin(r->wlo, v);
                r->whi = fmax(r->whi, v);
            } else {
                r->alo = fmin(r->alo, v);
                r->ahi = fmax(r->ahi, v);
            }
        }
}

void gq_judge_staged_pairs_of(const gq_card_matrix_view *md, const gq_card_matrix_view *m0, staged_pair *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->plo = sp->dlo = INFINITY;
    sp->phi = sp->dhi = -INFINITY;
    if (!md->present || !m0->present)
        return;
    const int *gl = md->gpu, *gp = m0->gpu;
    int n = md->n, np = m0->n;
    for (int x = 0; x < n; x++)
        for (int y = 0; y < n; y++) {
            double d = md->gbps[x][y];
            int px = -1, py = -1;
            for (int k = 0; k < np; k++) {
                px = gp[k] == gl[x] ? k : px;
                py = gp[k] == gl[y] ? k : py;
            }
            double p = px >= 0 && py >= 0 ? m0->gbps[px][py] : NAN;
            if (isnan(d) || isnan(p))
                continue;
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
int gq_judge_uplinks_down(const gq_card_identity_view *id)
{
    int down = 0;
    for (int i = 0; i < id->nuplinks; i++)
        down += id->uplink[i].width < id->uplink[i].width_max;
    return down;
}
