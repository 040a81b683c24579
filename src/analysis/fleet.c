#include "analysis/fleet.h"
#include "analysis/json_get.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/card.h"
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

int gq_fleet_add_card(gq_fleet *f, int rank, const char *host, const json_t *root, const gq_recordset *rs,
                      gq_err *err)
{
    const json_t *card = json_object_get(root, "card");
    gq_compare *c = malloc(sizeof *c);
    if (!c)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory comparing the fleet");
    int rc = GQ_OK;
    gq_compare_init(c, f->threshold_pct);
    gq_fleet_node *n = new_node(f, rank, host ? host : gq_json_str(card, "hostname", NULL), err);
    if (!n) {
        rc = GQ_E_NOMEM;
        goto out;
    }
    snprintf(n->card_host, sizeof n->card_host, "%s", gq_json_str(card, "hostname", ""));
    n->simulated = json_is_true(json_object_get(root, "simulated"));
    if (json_is_false(json_object_get(card, "complete"))) {
        snprintf(n->verdict, sizeof n->verdict, "incomplete");
        n->exit_code = 5;
    } else {
        /* Fail closed: a card without a readable verdict is an error, never a pass. */
        int code = gq_card_exit_code(card);
        snprintf(n->verdict, sizeof n->verdict, "%s",
                 code == 1   ? "fail"
                 : code == 4 ? "warn"
                 : code == 0 ? "pass"
                             : "error");
        n->exit_code = code < 0 ? 1 : code;
    }
    /* The node alone in a comparison: its figures, keyed as compare keys them. */
    if ((rc = gq_compare_add(c, n->label, rs, root, err)))
        goto out;
    snprintf(n->model, sizeof n->model, "%s", c->model[0]);
    n->stress_s = c->stress_s[0];
    if ((n->group = group_of(f, n->model, n->stress_s)) < 0) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory comparing the fleet");
        goto out;
    }
    f->groups[n->group].nnodes++;
    int node = f->nnodes - 1, hint = 0;
    for (int i = 0; i < c->nfig; i++) {
        const gq_cmp_fig *x = &c->fig[i];
        if (isnan(x->v[0]))
            continue;
        int k = find_fig(f, x->key, hint);
        if (k < 0) {
            if (grow((void **)&f->fig, &f->capfig, f->nfig, sizeof *f->fig)) {
                rc = gq_err_set(err, GQ_E_NOMEM, "out of memory comparing the fleet");
                goto out;
            }
            k = f->nfig++;
            gq_fleet_fig *g = &f->fig[k];
            memset(g, 0, sizeof *g);
            snprintf(g->key, sizeof g->key, "%s", x->key);
            snprintf(g->unit, sizeof g->unit, "%s", x->unit);
            g->higher_is_better = x->higher_is_better;
            g->absolute = x->absolute;
            g->median = NAN;
        }
        hint = k + 1;
        if (grow((void **)&f->val, &f->capval, f->nval, sizeof *f->val)) {
            rc = gq_err_set(err, GQ_E_NOMEM, "out of memory comparing the fleet");
            goto out;
        }
        f->val[f->nval++] = (gq_fleet_value){.fig = k, .group = n->group, .node = node, .v = x->v[0]};
    }
out:
    gq_compare_free(c);
    free(c);
    return rc;
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
