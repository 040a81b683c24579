#include "analysis/fleet.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/compare.h"

void gq_fleet_init(gq_fleet *f, double threshold_pct)
{
    memset(f, 0, sizeof *f);
    f->threshold_pct = threshold_pct > 0 ? threshold_pct : 5.0;
    f->threshold_c = GQ_CMP_TEMP_THRESHOLD_C;
    snprintf(f->verdict, sizeof f->verdict, "pass");
}

void gq_fleet_free(gq_fleet *f)
{
    if (!f)
        return;
    free(f->node);
    free(f->fig);
    free(f->val);
    free(f->out);
    free(f->groups);
    memset(f, 0, sizeof *f);
}

/* Grow *p (of *cap elements of size sz) to hold n + 1. */
static int grow(void **p, int *cap, int n, size_t sz)
{
    if (n < *cap)
        return 0;
    int c = *cap ? *cap * 2 : 16;
    void *v = realloc(*p, (size_t)c * sz);
    if (!v)
        return -1;
    *p = v;
    *cap = c;
    return 0;
}

static gq_fleet_node *new_node(gq_fleet *f, int rank, const char *host, gq_err *err)
{
    if (grow((void **)&f->node, &f->capnodes, f->nnodes, sizeof *f->node)) {
        gq_err_set(err, GQ_E_NOMEM, "out of memory adding a fleet node");
        return NULL;
    }
    gq_fleet_node *n = &f->node[f->nnodes++];
    memset(n, 0, sizeof *n);
    n->rank = rank;
    n->group = -1;
    n->stress_s = NAN;
    snprintf(n->host, sizeof n->host, "%s", host && *host ? host : "?");
    snprintf(n->label, sizeof n->label, "%s-rank%d", n->host, rank);
    return n;
}

/* The group of a GPU model and a stress duration, added when new; -1 out of memory. */
static int group_of(gq_fleet *f, const char *model, double stress_s)
{
    for (int g = 0; g < f->ngroups; g++)
        if (!strcmp(f->groups[g].model, model) && gq_compare_same_stress(f->groups[g].stress_s, stress_s))
            return g;
    if (grow((void **)&f->groups, &f->capgroups, f->ngroups, sizeof *f->groups))
        return -1;
    gq_fleet_group *g = &f->groups[f->ngroups];
    memset(g, 0, sizeof *g);
    snprintf(g->model, sizeof g->model, "%s", model);
    g->stress_s = stress_s;
    return f->ngroups++;
}

/* Index of key, or -1. Nodes list their figures in the same order as a rule,
 * so the figure after the last one found is tried first. */
static int find_fig(const gq_fleet *f, const char *key, int hint)
{
    if (hint >= 0 && hint < f->nfig && !strcmp(f->fig[hint].key, key))
        return hint;
    for (int i = 0; i < f->nfig; i++)
        if (!strcmp(f->fig[i].key, key))
            return i;
    return -1;
}

const char *gq_node_verdict_name(gq_node_verdict v)
{
    switch (v) {
    case GQ_NODE_PASS: return "pass";
    case GQ_NODE_WARN: return "warn";
    case GQ_NODE_FAIL: return "fail";
    case GQ_NODE_INCOMPLETE: return "incomplete";
    }
    return "fail";
}

int gq_node_verdict_from_name(const char *s)
{
    for (int v = GQ_NODE_PASS; s && v <= GQ_NODE_INCOMPLETE; v++)
        if (!strcmp(s, gq_node_verdict_name((gq_node_verdict)v)))
            return v;
    return -1;
}

void gq_node_summary_init(gq_node_summary *s)
{
    memset(s, 0, sizeof *s);
    s->verdict = GQ_NODE_FAIL;
    s->exit_code = 1;
    s->stress_s = 0;
}

void gq_node_summary_free(gq_node_summary *s)
{
    if (!s)
        return;
    free(s->fig);
    s->fig = NULL;
    s->nfig = s->capfig = 0;
}

int gq_node_summary_add_fig(gq_node_summary *s, const char *key, double v)
{
    if (grow((void **)&s->fig, &s->capfig, s->nfig, sizeof *s->fig))
        return GQ_E_NOMEM;
    gq_node_figure *g = &s->fig[s->nfig++];
    snprintf(g->key, sizeof g->key, "%s", key);
    g->v = v;
    return GQ_OK;
}

void gq_node_fig_unit(const char *key, char *unit, size_t n, bool *higher_is_better)
{
    const char *u = "GB/s";
    bool hi = true;
    const char *sp = strchr(key, ' ');
    size_t first = sp ? (size_t)(sp - key) : strlen(key);
    if (!strncmp(key, "stress max temperature", 22)) {
        u = "°C";
        hi = false;
    } else if (!strncmp(key, "stress average SM clock", 23)) {
        u = "MHz";
    } else if (!strncmp(key, "stress average power", 20)) {
        u = "W";
    } else {
        for (size_t i = 0; i + 7 <= first; i++)
            if (!strncmp(key + i, "latency", 7)) {
                u = "ns";
                hi = false;
                break;
            }
    }
    snprintf(unit, n, "%s", u);
    *higher_is_better = hi;
}

int gq_fleet_add_summary(gq_fleet *f, const char *host, const gq_node_summary *s, gq_err *err)
{
    gq_fleet_node *n = new_node(f, s->rank, host && *host ? host : s->hostname, err);
    if (!n)
        return GQ_E_NOMEM;
    snprintf(n->card_host, sizeof n->card_host, "%s", s->hostname);
    n->simulated = s->simulated;
    /* Typed: an incomplete card is incomplete whatever its verdict says. */
    gq_node_verdict v = s->complete ? s->verdict : GQ_NODE_INCOMPLETE;
    snprintf(n->verdict, sizeof n->verdict, "%s", gq_node_verdict_name(v));
    n->exit_code = v == GQ_NODE_PASS ? 0 : v == GQ_NODE_WARN ? 4 : v == GQ_NODE_INCOMPLETE ? 5 : 1;
    /* grouped by GPU model and stress duration: H200s are not measured against A100s */
    snprintf(n->model, sizeof n->model, "%s", s->gpu_model);
    n->stress_s = s->stress_s > 0 ? s->stress_s : NAN;
    if ((n->group = group_of(f, n->model, n->stress_s)) < 0)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory comparing the fleet");
    f->groups[n->group].nnodes++;
    int node = f->nnodes - 1, hint = 0;
    for (int i = 0; i < s->nfig; i++) {
        const gq_node_figure *x = &s->fig[i];
        if (isnan(x->v))
            continue;
        int k = find_fig(f, x->key, hint);
        if (k < 0) {
            if (grow((void **)&f->fig, &f->capfig, f->nfig, sizeof *f->fig))
                return gq_err_set(err, GQ_E_NOMEM, "out of memory comparing the fleet");
            k = f->nfig++;
            gq_fleet_fig *g = &f->fig[k];
            memset(g, 0, sizeof *g);
            snprintf(g->key, sizeof g->key, "%s", x->key);
            gq_node_fig_unit(x->key, g->unit, sizeof g->unit, &g->higher_is_better);
            g->absolute = !strcmp(g->unit, "°C"); /* temperatures: degrees, not percent */
            g->median = NAN;
        }
        hint = k + 1;
        if (grow((void **)&f->val, &f->capval, f->nval, sizeof *f->val))
            return gq_err_set(err, GQ_E_NOMEM, "out of memory comparing the fleet");
        f->val[f->nval++] = (gq_fleet_value){.fig = k, .group = n->group, .node = node, .v = x->v};
    }
    return GQ_OK;
}

int gq_fleet_add_error(gq_fleet *f, int rank, const char *host, const char *why, gq_err *err)
{
    gq_fleet_node *n = new_node(f, rank, host, err);
    if (!n)
        return GQ_E_NOMEM;
    snprintf(n->verdict, sizeof n->verdict, "error");
    snprintf(n->error, sizeof n->error, "%s", why && *why ? why : "the card did not run");
    n->exit_code = 1;
    return GQ_OK;
}

static int cmp_val(const void *a, const void *b)
{
    const gq_fleet_value *x = a, *y = b;
    if (x->fig != y->fig)
        return x->fig < y->fig ? -1 : 1;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_out(const void *a, const void *b)
{
    const gq_fleet_outlier *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return x->fig < y->fig ? -1 : x->fig > y->fig;
}

/* The outliers among values a..b (one figure, one group) against their median. */
static int group_outliers(gq_fleet *f, int a, int b, double median)
{
    const gq_fleet_fig *g = &f->fig[f->val[a].fig];
    for (int i = a; i < b; i++) {
        double v = f->val[i].v, d = NAN, worse;
        if (g->absolute) {
            worse = g->higher_is_better ? median - v : v - median;
            if (!(worse > f->threshold_c))
                continue;
        } else {
            if (median == 0)
                continue;
            d = (v - median) / fabs(median) * 100.0;
            worse = g->higher_is_better ? -d : d;
            if (!(worse > f->threshold_pct))
                continue;
        }
        if (grow((void **)&f->out, &f->capout, f->nout, sizeof *f->out))
            return -1;
        f->out[f->nout++] = (gq_fleet_outlier){.node = f->val[i].node,
                                               .fig = f->val[i].fig,
                                               .group = f->val[i].group,
                                               .value = v,
                                               .median = median,
                                               .delta_pct = d,
                                               .delta_abs = v - median};
        f->node[f->val[i].node].noutliers++;
    }
    return 0;
}

int gq_fleet_finish(gq_fleet *f, gq_err *err)
{
    f->nout = f->ncompared = f->nflagged = 0;
    for (int i = 0; i < f->nnodes; i++)
        f->node[i].noutliers = 0;
    if (f->nval > 0)
        qsort(f->val, (size_t)f->nval, sizeof *f->val, cmp_val);
    double *tmp = malloc((size_t)(f->nnodes > 0 ? f->nnodes : 1) * sizeof *tmp);
    if (!tmp)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory comparing the fleet");
    for (int a = 0; a < f->nval;) {
        int e = a; /* one figure: a..e; one group of it: a..b */
        while (e < f->nval && f->val[e].fig == f->val[a].fig)
            e++;
        gq_fleet_fig *g = &f->fig[f->val[a].fig];
        g->present = e - a;
        g->median = NAN;
        bool compared = false;
        for (int b; a < e; a = b) {
            for (b = a; b < e && f->val[b].group == f->val[a].group;)
                b++;
            int n = b - a;
            if (n < 2)
                continue;
            compared = true;
            for (int i = a; i < b; i++)
                tmp[i - a] = f->val[i].v;
            qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
            double median = n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
            if (isnan(g->median))
                g->median = median;
            if (group_outliers(f, a, b, median)) {
                free(tmp);
                return gq_err_set(err, GQ_E_NOMEM, "out of memory comparing the fleet");
            }
        }
        f->ncompared += compared;
    }
    free(tmp);
    if (f->nout > 0) /* f->out is NULL when there is no outlier; qsort(NULL, 0) is undefined */
        qsort(f->out, (size_t)f->nout, sizeof *f->out, cmp_out);
    bool fail = false, incomplete = false, warn = false;
    for (int i = 0; i < f->nnodes; i++) {
        gq_fleet_node *n = &f->node[i];
        n->flagged = n->noutliers > 0 || strcmp(n->verdict, "pass") != 0;
        f->nflagged += n->flagged;
        fail |= !strcmp(n->verdict, "fail") || !strcmp(n->verdict, "error");
        incomplete |= !strcmp(n->verdict, "incomplete");
        warn |= n->flagged;
    }
    const char *v = fail ? "fail" : incomplete ? "incomplete" : warn ? "warn" : "pass";
    snprintf(f->verdict, sizeof f->verdict, "%s", v);
    f->exit_code = fail ? 1 : incomplete ? 5 : warn ? 4 : 0;
    return GQ_OK;
}
