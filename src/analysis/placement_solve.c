#include "analysis/placement.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIT(i) ((gq_gpuset)1 << (i))
#define IN(set, i) (((set) >> (i)) & 1u)
/* Exhaustive search up to this many candidate mappings; beyond it, a heuristic. */
#define EXHAUSTIVE_MAX 200000L
/* Predictions the local search may spend beyond its starting point. */
#define LOCAL_SEARCH_BUDGET 4000

/* ---- small helpers ------------------------------------------------------ */

int gq_gpuset_count(gq_gpuset s)
{
    return __builtin_popcountll(s);
}

const char *gq_gpuset_str(gq_gpuset s, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < GQ_MAX_GPUS && used < n; i++) {
        if (!IN(s, i))
            continue;
        /* Runs of three or more read better as ranges: 0-3. */
        int j = i;
        while (j + 1 < GQ_MAX_GPUS && IN(s, j + 1))
            j++;
        int w;
        if (j - i >= 2)
            w = snprintf(buf + used, n - used, "%s%d-%d", used ? "," : "", i, j);
        else if (j == i + 1)
            w = snprintf(buf + used, n - used, "%s%d,%d", used ? "," : "", i, j);
        else
            w = snprintf(buf + used, n - used, "%s%d", used ? "," : "", i);
        if (w < 0 || (size_t)w >= n - used)
            break;
        used += (size_t)w;
        i = j;
    }
    return buf;
}

/* Explanations and evidence are cut at their buffer's size; a shortened
 * sentence is acceptable where a fixed-size record is the contract. */
static void textf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void textf(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}

static int domain_of(const gq_place_model *m, int g);

static double median_of(const gq_record *r)
{
    return r->value.median;
}

static bool usable_record(const gq_record *r)
{
    return r->valid && !r->is_latency &&
           !(r->flags & (GQ_FLAG_IMPOSSIBLE | GQ_FLAG_OVERLAP | GQ_FLAG_ERROR)) && r->value.n > 0 &&
           r->value.median > 0;
}

static bool is_flow_record(const gq_record *r)
{
    return !r->aggregate && !r->sum && !r->is_latency;
}

static int gpu_of(gq_endpoint e, int ngpu)
{
    return (e.kind == GQ_EP_GPU && e.index >= 0 && e.index < ngpu) ? e.index : -1;
}

static long binom(int n, int k)
{
    if (k < 0 || k > n)
        return 0;
    double r = 1;
    for (int i = 1; i <= k; i++)
        r = r * (n - k + i) / i;
    return r > 1e15 ? (long)1e15 : (long)(r + 0.5);
}

bool gq_place_limit_is_gpu(gq_limit_kind k)
{
    return k == GQ_LIMIT_P2P || k == GQ_LIMIT_STAGED;
}

static const char *limit_str(const gq_place_limit *l, char *buf, size_t n)
{
    char a[128], b[128];
    gq_gpuset_str(l->a, a, sizeof a);
    if (l->kind == GQ_LIMIT_P2P || l->kind == GQ_LIMIT_STAGED) {
        gq_gpuset_str(l->b, b, sizeof b);
        textf(buf, n, "%s {%s}->{%s} <= %.1f GB/s", l->kind == GQ_LIMIT_P2P ? "P2P" : "host-staged handoffs",
              a, b, l->capacity_gbps);
    } else if (l->kind == GQ_LIMIT_DUPLEX) {
        textf(buf, n, "host both directions of {%s} <= %.1f GB/s in total", a, l->capacity_gbps);
    } else {
        textf(buf, n, "host %s of {%s} <= %.1f GB/s", l->kind == GQ_LIMIT_H2D ? "h2d" : "d2h", a,
              l->capacity_gbps);
    }
    return buf;
}

/* ---- the model ---------------------------------------------------------- */

int gq_place_model_add_limit(gq_place_model *m, gq_limit_kind kind, gq_gpuset a, gq_gpuset b, double cap,
                             const char *evidence, gq_err *err)
{
    if (!(cap > 0) || !a || ((kind == GQ_LIMIT_P2P || kind == GQ_LIMIT_STAGED) && !b))
        return gq_err_set(err, GQ_E_USAGE, "placement: a limit needs GPUs and a capacity > 0");
    /* The same constraint seen twice keeps the tighter capacity. */
    for (int i = 0; i < m->nlimits; i++) {
        gq_place_limit *l = &m->limits[i];
        if (l->kind == kind && l->a == a && l->b == b) {
            if (cap < l->capacity_gbps) {
                l->capacity_gbps = cap;
                snprintf(l->evidence, sizeof l->evidence, "%s", evidence ? evidence : "");
            }
            return GQ_OK;
        }
    }
    if (m->nlimits >= GQ_PLACE_MAX_LIMITS)
        return GQ_OK; /* enough evidence; more only refines */
    gq_place_limit *l = &m->limits[m->nlimits++];
    l->kind = kind;
    l->a = a;
    l->b = b;
    l->capacity_gbps = cap;
    snprintf(l->evidence, sizeof l->evidence, "%s", evidence ? evidence : "");
    return GQ_OK;
}

/* Alone figures: groups with a single flow record, not from a bidirectional
 * test (nvbandwidth's *_bidirectional_* run an unreported opposite flow). */
static void collect_alone(gq_place_model *m, const gq_recordset *rs, const int *group_flows)
{
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (!usable_record(r) || !is_flow_record(r) || strstr(r->test, "bidirectional"))
            continue;
        if (group_flows[i] != 1)
            continue;
        int s = gpu_of(r->src, m->ngpu), d = gpu_of(r->dst, m->ngpu);
        double v = median_of(r);
        switch (r->direction) {
        case GQ_DIR_P2P:
            if (s < 0 || d < 0 || s == d)
                break;
            if (r->method == GQ_METHOD_CE || r->method == GQ_METHOD_SM)
                m->p2p[s][d] = fmax(m->p2p[s][d], v);
            else
                m->staged[s][d] = fmax(m->staged[s][d], v);
            break;
        case GQ_DIR_H2D:
            if (d >= 0)
                m->h2d[d] = fmax(m->h2d[d], v);
            break;
        case GQ_DIR_D2H:
            if (s >= 0)
                m->d2h[s] = fmax(m->d2h[s], v);
            break;
        case GQ_DIR_LOCAL: break;
        }
    }
}

static double alone_of(const gq_place_model *m, const gq_record *r)
{
    int s = gpu_of(r->src, m->ngpu), d = gpu_of(r->dst, m->ngpu);
    switch (r->direction) {
    case GQ_DIR_P2P:
        if (s < 0 || d < 0)
            return 0;
        return (r->method == GQ_METHOD_CE || r->method == GQ_METHOD_SM) ? m->p2p[s][d] : m->staged[s][d];
    case GQ_DIR_H2D: return d >= 0 ? m->h2d[d] : 0;
    case GQ_DIR_D2H: return s >= 0 ? m->d2h[s] : 0;
    case GQ_DIR_LOCAL: break;
    }
    return 0;
}

/* A concurrent group whose flows fell below their alone rates shares a
 * budget: at most what those flows moved together. One-direction host groups
 * are localised to the flows that slowed down (seed 001: with 0,1,4,5
 * active only 0 and 1 slowed, so {0,1} share, 4 and 5 do not); groups with
 * both host directions constrain every flow of the group together, since
 * the slowdown of one direction is caused by the other. */
static void limits_from_group(gq_place_model *m, const gq_recordset *rs, const int *idx, int n, int group)
{
    int nh2d = 0, nd2h = 0, np2p = 0, nstaged = 0, nother = 0;
    for (int k = 0; k < n; k++) {
        const gq_record *r = &rs->v[idx[k]];
        if (r->direction == GQ_DIR_H2D)
            nh2d++;
        else if (r->direction == GQ_DIR_D2H)
            nd2h++;
        else if (r->direction == GQ_DIR_P2P && (r->method == GQ_METHOD_CE || r->method == GQ_METHOD_SM))
            np2p++;
        else if (r->direction == GQ_DIR_P2P)
            nstaged++;
        else
            nother++;
    }
    /* One kind of traffic per group: mixed groups say nothing clean. */
    if (nother || (np2p > 0) + (nstaged > 0) + (nh2d + nd2h > 0) > 1)
        return;
    double tol = m->tolerance;
    gq_gpuset la = 0, lb = 0, all = 0;
    double lsum = 0, allsum = 0, alonesum = 0;
    int nlimited = 0;
    char detail[120] = "";
    size_t dl = 0;
    for (int k = 0; k < n; k++) {
        const gq_record *r = &rs->v[idx[k]];
        double alone = alone_of(m, r), v = median_of(r);
        int s = gpu_of(r->src, m->ngpu), d = gpu_of(r->dst, m->ngpu);
        if (!(alone > 0))
            return; /* cannot tell a slowdown without the alone figure */
        allsum += v;
        alonesum += alone;
        gq_gpuset srcset = s >= 0 ? BIT(s) : 0, dstset = d >= 0 ? BIT(d) : 0;
        all |= srcset | dstset;
        if (v < alone * (1 - tol)) {
            nlimited++;
            lsum += v;
            if (r->direction == GQ_DIR_P2P) {
                la |= srcset;
                lb |= dstset;
            } else {
                la |= srcset | dstset;
            }
            if (dl < sizeof detail - 20) {
                int w = snprintf(detail + dl, sizeof detail - dl, "%s%d:%.1f/%.1f", dl ? " " : "",
                                 s >= 0 ? s : d, v, alone);
                if (w > 0)
                    dl += (size_t)w;
            }
        }
    }
    if (!nlimited)
        return;
    char ev[200];
    if (np2p || nstaged) {
        /* Host-staged handoffs slowed together: their two legs met some
         * budget the host probes did not show alone (e.g. a group whose
         * one-direction probe failed the overlap rule). */
        textf(ev, sizeof ev, "measured together in group %d (%s): %.1f GB/s where alone they do %.1f (%s)",
              group, rs->v[idx[0]].test, lsum, alonesum, detail);
        gq_place_model_add_limit(m, np2p ? GQ_LIMIT_P2P : GQ_LIMIT_STAGED, la, lb, lsum, ev, NULL);
    } else if (nh2d && nd2h) {
        textf(ev, sizeof ev, "both directions together in group %d (%s): %.1f GB/s in total, alone %.1f (%s)",
              group, rs->v[idx[0]].test, allsum, alonesum, detail);
        gq_place_model_add_limit(m, GQ_LIMIT_DUPLEX, all, 0, allsum, ev, NULL);
    } else {
        textf(ev, sizeof ev, "measured together in group %d (%s): %.1f GB/s, alone %.1f (%s)", group,
              rs->v[idx[0]].test, lsum, alonesum, detail);
        gq_place_model_add_limit(m, nh2d ? GQ_LIMIT_H2D : GQ_LIMIT_D2H, la, 0, lsum, ev, NULL);
    }
}

static gq_gpuset set_from_json(const json_t *a, int ngpu, bool *ok)
{
    gq_gpuset s = 0;
    size_t i;
    const json_t *v;
    *ok = json_is_array(a) && json_array_size(a) > 0;
    if (!*ok)
        return 0;
    json_array_foreach(a, i, v)
    {
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= ngpu) {
            *ok = false;
            return 0;
        }
        s |= BIT(json_integer_value(v));
    }
    return s;
}

/* `gpuqual domains` sections: domains (list of lists of GPU indices) and
 * bottlenecks ({gpus, direction, capacity_gbps, evidence}). Entries this code
 * cannot read are skipped: the records carry the same evidence. */
static void from_domains_doc(gq_place_model *m, const json_t *doc)
{
    const json_t *doms = json_object_get(doc, "domains");
    size_t i;
    const json_t *v;
    if (json_is_array(doms) && json_array_size(doms) > 0) {
        int nd = 0;
        gq_gpuset seen = 0, sets[GQ_MAX_GPUS];
        bool good = true;
        json_array_foreach(doms, i, v)
        {
            bool ok;
            const json_t *g = json_is_object(v) ? json_object_get(v, "gpus") : v;
            gq_gpuset s = set_from_json(g, m->ngpu, &ok);
            if (!ok || (s & seen) || nd >= GQ_MAX_GPUS) {
                good = false;
                break;
            }
            seen |= s;
            sets[nd++] = s;
        }
        if (good) {
            memcpy(m->domains, sets, sizeof sets[0] * (size_t)nd);
            m->ndomains = nd;
        }
    }
    const json_t *bns = json_object_get(doc, "bottlenecks");
    if (!json_is_array(bns))
        return;
    json_array_foreach(bns, i, v)
    {
        bool ok;
        gq_gpuset s = set_from_json(json_object_get(v, "gpus"), m->ngpu, &ok);
        const char *dir = json_string_value(json_object_get(v, "direction"));
        const json_t *cj = json_object_get(v, "capacity_gbps");
        if (!ok || !dir || !json_is_number(cj))
            continue;
        double cap = json_number_value(cj);
        /* The domains analysis' own sentence, else its evidence as text. */
        const json_t *evj = json_object_get(v, "explanation");
        if (!json_is_string(evj))
            evj = json_object_get(v, "evidence");
        char ev[200];
        char *dump =
            evj ? (json_is_string(evj) ? strdup(json_string_value(evj)) : json_dumps(evj, JSON_COMPACT))
                : NULL;
        textf(ev, sizeof ev, "gpuqual domains bottleneck: %s", dump ? dump : "(no evidence given)");
        free(dump);
        if (!strcmp(dir, "h2d"))
            gq_place_model_add_limit(m, GQ_LIMIT_H2D, s, 0, cap, ev, NULL);
        else if (!strcmp(dir, "d2h"))
            gq_place_model_add_limit(m, GQ_LIMIT_D2H, s, 0, cap, ev, NULL);
        else if (!strcmp(dir, "both") || !strcmp(dir, "bidirectional") || !strcmp(dir, "duplex") ||
                 !strcmp(dir, "sum"))
            gq_place_model_add_limit(m, GQ_LIMIT_DUPLEX, s, 0, cap, ev, NULL);
        else if (!strncmp(dir, "p2p", 3) || !strcmp(dir, "cross")) {
            /* A P2P bottleneck over GPUs that span several domains is the
             * path between them: it constrains flows from one domain to
             * another, in each direction. Within one domain: every flow. */
            int nspan = 0;
            for (int d = 0; d < m->ndomains; d++)
                nspan += (m->domains[d] & s) != 0;
            if (nspan <= 1) {
                gq_place_model_add_limit(m, GQ_LIMIT_P2P, s, s, cap, ev, NULL);
                continue;
            }
            for (int x = 0; x < m->ndomains; x++)
                for (int y = 0; y < m->ndomains; y++)
                    if (x != y && (m->domains[x] & s) && (m->domains[y] & s))
                        gq_place_model_add_limit(m, GQ_LIMIT_P2P, m->domains[x] & s, m->domains[y] & s, cap,
                                                 ev, NULL);
        }
    }
}

/* Domains from the matrix when no `domains` section says: GPUs joined by
 * paths above the largest relative gap in the pairwise figures, when that gap
 * is larger than the tolerance; one domain when the matrix is flat. */
static void derive_domains(gq_place_model *m)
{
    int n = m->ngpu;
    double vals[GQ_MAX_GPUS * GQ_MAX_GPUS];
    int nv = 0;
    bool any_p2p = false;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            any_p2p |= i != j && m->p2p[i][j] > 0;
    double rate[GQ_MAX_GPUS][GQ_MAX_GPUS];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double a = any_p2p ? m->p2p[i][j] : m->staged[i][j];
            double b = any_p2p ? m->p2p[j][i] : m->staged[j][i];
            rate[i][j] = (a > 0 && b > 0) ? fmin(a, b) : fmax(a, b);
            if (i < j && rate[i][j] > 0)
                vals[nv++] = rate[i][j];
        }
    double thr = -1;
    if (nv >= 2) {
        /* insertion sort: nv <= 2016 */
        for (int i = 1; i < nv; i++)
            for (int j = i; j > 0 && vals[j - 1] > vals[j]; j--) {
                double t = vals[j];
                vals[j] = vals[j - 1];
                vals[j - 1] = t;
            }
        double best = 0;
        for (int i = 1; i < nv; i++) {
            double gap = (vals[i] - vals[i - 1]) / vals[i];
            if (gap > best) {
                best = gap;
                thr = (vals[i] + vals[i - 1]) / 2;
            }
        }
        if (best < fmax(2 * m->tolerance, 0.10))
            thr = -1;
    }
    int comp[GQ_MAX_GPUS];
    for (int i = 0; i < n; i++)
        comp[i] = i;
    if (thr > 0)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (rate[i][j] > thr) {
                    int a = comp[i], b = comp[j];
                    for (int k = 0; k < n; k++)
                        if (comp[k] == b)
                            comp[k] = a;
                }
    m->ndomains = 0;
    gq_gpuset done = 0;
    for (int i = 0; i < n; i++) {
        if (IN(done, i))
            continue;
        gq_gpuset s = 0;
        for (int k = 0; k < n; k++)
            if (thr <= 0 || comp[k] == comp[i])
                s |= BIT(k);
        m->domains[m->ndomains++] = s;
        done |= s;
    }
}

typedef struct grp_ix {
    int group, ix;
} grp_ix;

static int cmp_grp(const void *a, const void *b)
{
    const grp_ix *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return (x->ix > y->ix) - (x->ix < y->ix);
}

int gq_place_model_build(gq_place_model *m, int ngpu, const gq_recordset *rs, const json_t *doc,
                         const gq_topo *topo, gq_err *err)
{
    int rc = GQ_OK;
    int *group_flows = NULL, *idx = NULL;
    grp_ix *order = NULL;
    memset(m, 0, sizeof *m);
    if (ngpu <= 0 || ngpu > GQ_MAX_GPUS)
        return gq_err_set(err, GQ_E_USAGE, "placement needs 1..%d GPUs, not %d", GQ_MAX_GPUS, ngpu);
    m->ngpu = ngpu;
    m->tolerance = GQ_PLACE_TOLERANCE;
    snprintf(m->source, sizeof m->source, "%d records", rs ? rs->n : 0);
    if (topo)
        for (int i = 0; i < ngpu && i < topo->ngpu; i++)
            for (int j = 0; j < ngpu && j < topo->ngpu; j++)
                m->no_p2p[i][j] = i != j && topo->p2p_cuda[i][j] == 0;
    int n = rs ? rs->n : 0;
    group_flows = calloc((size_t)n + 1, sizeof *group_flows);
    idx = calloc((size_t)n + 1, sizeof *idx);
    order = calloc((size_t)n + 1, sizeof *order);
    if (!group_flows || !idx || !order) {
        rc = gq_err_set(err, GQ_E_NOMEM, "placement: out of memory");
        goto out;
    }
    /* Records by group (a saved card holds thousands: no quadratic scans). */
    for (int i = 0; i < n; i++)
        order[i] = (grp_ix){.group = rs->v[i].group, .ix = i};
    qsort(order, (size_t)n, sizeof *order, cmp_grp);
    for (int a = 0, b; a < n; a = b) {
        int flows = 0;
        for (b = a; b < n && order[b].group == order[a].group; b++)
            flows += is_flow_record(&rs->v[order[b].ix]); /* usable or not: a failed partner still ran */
        for (int k = a; k < b; k++)
            group_flows[order[k].ix] = is_flow_record(&rs->v[order[k].ix]) ? flows : 0;
    }
    collect_alone(m, rs, group_flows);
    if (doc)
        from_domains_doc(m, doc);
    if (!m->ndomains)
        derive_domains(m);
    /* Concurrent groups, once each, in the order they ran. */
    for (int a = 0, b; a < n; a = b) {
        int cnt = 0;
        bool all_usable = true;
        for (b = a; b < n && order[b].group == order[a].group; b++) {
            const gq_record *r = &rs->v[order[b].ix];
            if (is_flow_record(r)) {
                all_usable &= usable_record(r);
                idx[cnt++] = order[b].ix;
            } else if (r->aggregate && !r->valid) {
                all_usable = false; /* the group failed the overlap rule */
            }
        }
        if (cnt >= 2 && all_usable)
            limits_from_group(m, rs, idx, cnt, order[a].group);
    }
    bool any = false;
    for (int i = 0; i < ngpu; i++) {
        any |= m->h2d[i] > 0 || m->d2h[i] > 0;
        for (int j = 0; j < ngpu; j++)
            any |= m->p2p[i][j] > 0 || m->staged[i][j] > 0;
    }
    if (!any)
        rc = gq_err_set(err, GQ_E_USAGE,
                        "the records hold no GPU-to-GPU or host-to-GPU rates to place with; save a run of "
                        "'gpuqual domains' or 'gpuqual card' and pass it with --input");
out:
    free(group_flows);
    free(idx);
    free(order);
    return rc;
}

/* ---- prediction: max-min fair sharing (progressive filling) ------------- */

/* How many units of a limit one flow uses (a staged flow through a duplex
 * budget that holds both of its ends uses it twice). */
static int limit_use(const gq_place_limit *l, const gq_pflow *f)
{
    switch (l->kind) {
    case GQ_LIMIT_H2D:
        return (f->kind == GQ_PF_H2D || f->kind == GQ_PF_STAGED) && f->dst >= 0 && IN(l->a, f->dst);
    case GQ_LIMIT_D2H:
        return (f->kind == GQ_PF_D2H || f->kind == GQ_PF_STAGED) && f->src >= 0 && IN(l->a, f->src);
    case GQ_LIMIT_DUPLEX: {
        int u = 0;
        if ((f->kind == GQ_PF_H2D || f->kind == GQ_PF_STAGED) && f->dst >= 0 && IN(l->a, f->dst))
            u++;
        if ((f->kind == GQ_PF_D2H || f->kind == GQ_PF_STAGED) && f->src >= 0 && IN(l->a, f->src))
            u++;
        return u;
    }
    case GQ_LIMIT_P2P:
        return f->kind == GQ_PF_P2P && f->src >= 0 && f->dst >= 0 && IN(l->a, f->src) && IN(l->b, f->dst);
    case GQ_LIMIT_STAGED:
        return f->kind == GQ_PF_STAGED && f->src >= 0 && f->dst >= 0 && IN(l->a, f->src) && IN(l->b, f->dst);
    }
    return 0;
}

static double flow_alone(const gq_place_model *m, const gq_pflow *f)
{
    switch (f->kind) {
    case GQ_PF_P2P: return m->p2p[f->src][f->dst];
    case GQ_PF_STAGED:
        if (m->staged[f->src][f->dst] > 0)
            return m->staged[f->src][f->dst];
        if (m->d2h[f->src] > 0 && m->h2d[f->dst] > 0)
            return fmin(m->d2h[f->src], m->h2d[f->dst]);
        return 0;
    case GQ_PF_H2D: return m->h2d[f->dst];
    case GQ_PF_D2H: return m->d2h[f->src];
    }
    return 0;
}

gq_pflow_kind gq_place_handoff_kind(const gq_place_model *m, int src, int dst)
{
    if (m->p2p[src][dst] > 0 && !m->no_p2p[src][dst])
        return GQ_PF_P2P;
    return GQ_PF_STAGED;
}

/* Each GPU's own links are shared by the flows of the pattern that use the
 * same GPU in the same role: implicit limits after the explicit ones. */
enum { OWN_H2D = 0, OWN_D2H, OWN_POUT, OWN_PIN, OWN_KINDS };

static int own_use(int kind, int g, const gq_pflow *f)
{
    switch (kind) {
    case OWN_H2D: return (f->kind == GQ_PF_H2D || f->kind == GQ_PF_STAGED) && f->dst == g;
    case OWN_D2H: return (f->kind == GQ_PF_D2H || f->kind == GQ_PF_STAGED) && f->src == g;
    case OWN_POUT: return f->kind == GQ_PF_P2P && f->src == g;
    case OWN_PIN: return f->kind == GQ_PF_P2P && f->dst == g;
    }
    return 0;
}

static double own_cap(const gq_place_model *m, int kind, int g)
{
    double c = 0;
    switch (kind) {
    case OWN_H2D: return m->h2d[g];
    case OWN_D2H: return m->d2h[g];
    case OWN_POUT:
        for (int j = 0; j < m->ngpu; j++)
            c = fmax(c, m->p2p[g][j]);
        return c;
    case OWN_PIN:
        for (int i = 0; i < m->ngpu; i++)
            c = fmax(c, m->p2p[i][g]);
        return c;
    }
    return 0;
}

#define MAX_RES (GQ_PLACE_MAX_LIMITS + OWN_KINDS * GQ_MAX_GPUS)

double gq_place_predict(const gq_place_model *m, const gq_pflow *flows, int n, gq_pflow_pred *out)
{
    /* Resources the pattern touches: index (>= 0 explicit limit, or
     * -(1 + kind * GQ_MAX_GPUS + g) for a GPU's own link), capacity, and each
     * flow's use of it. Few flows (<= 2 x GPUs), so dense is fine. */
    static const int max_flows = 2 * GQ_MAX_GPUS;
    int nres = 0;
    int rid[MAX_RES];
    double rcap[MAX_RES];
    unsigned char use[MAX_RES][2 * GQ_MAX_GPUS];
    double rate[2 * GQ_MAX_GPUS];
    bool frozen[2 * GQ_MAX_GPUS];
    if (n > max_flows)
        n = max_flows;
    for (int i = 0; i < n; i++) {
        out[i].alone = flow_alone(m, &flows[i]);
        out[i].binding = out[i].alone > 0 ? -1 : -2;
        out[i].sharing = 1;
        rate[i] = 0;
        frozen[i] = !(out[i].alone > 0);
    }
    for (int k = 0; k < m->nlimits && nres < MAX_RES; k++) {
        int any = 0;
        for (int i = 0; i < n; i++)
            any |= (use[nres][i] = (unsigned char)limit_use(&m->limits[k], &flows[i])) != 0;
        if (any) {
            rid[nres] = k;
            rcap[nres] = m->limits[k].capacity_gbps;
            nres++;
        }
    }
    for (int kind = 0; kind < OWN_KINDS; kind++)
        for (int g = 0; g < m->ngpu && nres < MAX_RES; g++) {
            int cnt = 0;
            for (int i = 0; i < n; i++)
                cnt += (use[nres][i] = (unsigned char)own_use(kind, g, &flows[i]));
            double c = own_cap(m, kind, g);
            /* A GPU's own link matters only when two flows share it. */
            if (cnt >= 2 && c > 0) {
                rid[nres] = -(1 + kind * GQ_MAX_GPUS + g);
                rcap[nres] = c;
                nres++;
            }
        }
    for (int iter = 0; iter < n + nres + 1; iter++) {
        double delta = INFINITY;
        bool active = false;
        for (int i = 0; i < n; i++)
            if (!frozen[i]) {
                active = true;
                delta = fmin(delta, out[i].alone - rate[i]);
            }
        if (!active)
            break;
        for (int r = 0; r < nres; r++) {
            double used = 0, coef = 0;
            for (int i = 0; i < n; i++) {
                used += use[r][i] * rate[i];
                if (!frozen[i])
                    coef += use[r][i];
            }
            if (coef > 0)
                delta = fmax(0, fmin(delta, (rcap[r] - used) / coef));
        }
        for (int i = 0; i < n; i++)
            if (!frozen[i])
                rate[i] += delta;
        const double eps = 1e-9;
        for (int i = 0; i < n; i++)
            if (!frozen[i] && rate[i] >= out[i].alone - eps) {
                frozen[i] = true;
                out[i].binding = -1;
            }
        /* Freeze the flows of every saturated resource; a flow held by several
         * at once is explained by the narrowest (fewest GPUs). */
        bool sat[MAX_RES];
        for (int r = 0; r < nres; r++) {
            double used = 0;
            for (int i = 0; i < n; i++)
                used += use[r][i] * rate[i];
            sat[r] = used >= rcap[r] - 1e-6;
        }
        for (int i = 0; i < n; i++) {
            if (frozen[i])
                continue;
            int best = -1, bestw = 1 << 30;
            for (int r = 0; r < nres; r++) {
                if (!sat[r] || !use[r][i])
                    continue;
                int w = rid[r] >= 0 ? gq_gpuset_count(m->limits[rid[r]].a | m->limits[rid[r]].b) : 1;
                if (w < bestw) {
                    bestw = w;
                    best = r;
                }
            }
            if (best < 0)
                continue;
            int sharing = 0;
            for (int k = 0; k < n; k++)
                sharing += use[best][k] != 0;
            frozen[i] = true;
            out[i].binding = rid[best] >= 0 ? rid[best] : -3;
            out[i].sharing = sharing;
        }
    }
    double agg = 0;
    for (int i = 0; i < n; i++) {
        out[i].gbps = rate[i];
        agg += rate[i];
    }
    return agg;
}

/* ---- roles -------------------------------------------------------------- */

static int usable_list(const gq_place_model *m, gq_gpuset usable, int *u)
{
    int n = 0;
    for (int g = 0; g < m->ngpu; g++)
        if (!usable || IN(usable, g))
            u[n++] = g;
    return n;
}

int gq_place_roles_check(const gq_place_roles *r, int ngpu, gq_err *err)
{
    int nu = 0;
    for (int g = 0; g < ngpu; g++)
        nu += !r->usable || IN(r->usable, g);
    if (r->prefill < 0 || r->decode < 0 || r->offload < 0 || r->replicas < 0)
        return gq_err_set(err, GQ_E_USAGE,
                          "role counts must be 0 or more (--prefill %d --decode %d --offload %d "
                          "--replicas %d)",
                          r->prefill, r->decode, r->offload, r->replicas);
    if (!r->prefill && !r->decode && !r->offload && !r->replicas)
        return gq_err_set(err, GQ_E_USAGE,
                          "no roles to place: give --prefill N --decode M, --offload K or --replicas R");
    if ((r->prefill > 0) != (r->decode > 0))
        return gq_err_set(err, GQ_E_USAGE,
                          "--prefill and --decode go together: a KV handoff needs both ends "
                          "(got --prefill %d --decode %d)",
                          r->prefill, r->decode);
    if (r->replicas && r->prefill && (r->prefill % r->replicas || r->decode % r->replicas))
        return gq_err_set(err, GQ_E_USAGE,
                          "--replicas %d must divide both --prefill %d and --decode %d "
                          "(each replica holds whole cells)",
                          r->replicas, r->prefill, r->decode);
    if (ngpu <= 0)
        return GQ_OK; /* counts only: the machine is not known yet */
    if (r->prefill + r->decode > nu)
        return gq_err_set(err, GQ_E_USAGE, "--prefill %d --decode %d needs %d GPUs; there are %d to use",
                          r->prefill, r->decode, r->prefill + r->decode, nu);
    if (r->offload > nu)
        return gq_err_set(err, GQ_E_USAGE, "--offload %d needs %d GPUs; there are %d to use", r->offload,
                          r->offload, nu);
    if (r->replicas && !r->prefill && r->replicas > nu)
        return gq_err_set(err, GQ_E_USAGE, "--replicas %d needs at least %d GPUs; there are %d to use",
                          r->replicas, r->replicas, nu);
    return GQ_OK;
}

/* ---- searching ---------------------------------------------------------- */

static bool next_combination(int *c, int k, int n)
{
    for (int i = k - 1; i >= 0; i--)
        if (c[i] < n - k + i) {
            c[i]++;
            for (int j = i + 1; j < k; j++)
                c[j] = c[j - 1] + 1;
            return true;
        }
    return false;
}

static bool next_permutation(int *a, int n)
{
    int i = n - 2;
    while (i >= 0 && a[i] >= a[i + 1])
        i--;
    if (i < 0)
        return false;
    int j = n - 1;
    while (a[j] <= a[i])
        j--;
    int t = a[i];
    a[i] = a[j];
    a[j] = t;
    for (int l = i + 1, r = n - 1; l < r; l++, r--) {
        t = a[l];
        a[l] = a[r];
        a[r] = t;
    }
    return true;
}

typedef struct score {
    double agg, min;
} score;

/* Best-first with ties: a candidate is "as good" as the best when its figure
 * is within the tolerance; among those, the next criterion decides. */
static long pick_best(const score *s, long n, double tol, const long *tiebreak)
{
    double best = -1, bestmin = -1;
    for (long i = 0; i < n; i++)
        best = fmax(best, s[i].agg);
    for (long i = 0; i < n; i++)
        if (s[i].agg >= best * (1 - tol))
            bestmin = fmax(bestmin, s[i].min);
    long pick = -1;
    for (long i = 0; i < n; i++) {
        if (s[i].agg < best * (1 - tol) || s[i].min < bestmin * (1 - tol))
            continue;
        if (pick < 0 || (tiebreak && tiebreak[i] < tiebreak[pick]))
            pick = i;
    }
    return pick;
}

static int pairs_to_flows(const gq_place_model *m, const int (*pairs)[2], int np, gq_pflow *f)
{
    for (int i = 0; i < np; i++) {
        f[i].src = pairs[i][0];
        f[i].dst = pairs[i][1];
        f[i].kind = gq_place_handoff_kind(m, pairs[i][0], pairs[i][1]);
    }
    return np;
}

static score score_pairs(const gq_place_model *m, const int (*pairs)[2], int np, gq_pflow_pred *pred)
{
    gq_pflow f[GQ_PLACE_MAX_PAIRS] = {{0}};
    gq_pflow_pred tmp[GQ_PLACE_MAX_PAIRS];
    if (!pred)
        pred = tmp;
    pairs_to_flows(m, pairs, np, f);
    score s = {.agg = gq_place_predict(m, f, np, pred), .min = INFINITY};
    for (int i = 0; i < np; i++)
        s.min = fmin(s.min, pred[i].gbps);
    if (!np)
        s.min = 0;
    return s;
}

/* Every (prefill set, decode set, assignment) in lexicographic order. The
 * visitor returns true to stop. */
typedef bool (*pd_visit)(void *arg, const int (*pairs)[2], int np);

static bool assign_rec(const int *small, int ns, const int *large, int nl, bool small_is_prefill, int *cnt,
                       int *a, int j, int hi, pd_visit visit, void *arg)
{
    if (j == nl) {
        int pairs[GQ_PLACE_MAX_PAIRS][2];
        /* Pairs sorted by prefill, then decode, whichever side repeats. */
        int np = 0;
        for (int s = 0; s < ns; s++)
            for (int l = 0; l < nl; l++)
                if (a[l] == s) {
                    pairs[np][0] = small_is_prefill ? small[s] : large[l];
                    pairs[np][1] = small_is_prefill ? large[l] : small[s];
                    np++;
                }
        if (!small_is_prefill)
            for (int x = 1; x < np; x++) /* sort by prefill */
                for (int y = x; y > 0 && pairs[y - 1][0] > pairs[y][0]; y--) {
                    int t0 = pairs[y][0], t1 = pairs[y][1];
                    pairs[y][0] = pairs[y - 1][0];
                    pairs[y][1] = pairs[y - 1][1];
                    pairs[y - 1][0] = t0;
                    pairs[y - 1][1] = t1;
                }
        return visit(arg, (const int(*)[2])pairs, np);
    }
    int lo = nl / ns;
    for (int s = 0; s < ns; s++) {
        if (cnt[s] >= hi)
            continue;
        cnt[s]++;
        a[j] = s;
        /* Every small-side GPU must still be able to reach its minimum. */
        int need = 0;
        for (int t = 0; t < ns; t++)
            need += cnt[t] < lo ? lo - cnt[t] : 0;
        bool stop = false;
        if (need <= nl - j - 1)
            stop = assign_rec(small, ns, large, nl, small_is_prefill, cnt, a, j + 1, hi, visit, arg);
        cnt[s]--;
        if (stop)
            return true;
    }
    return false;
}

static void enumerate_pd(const int *u, int nu, int N, int M, pd_visit visit, void *arg)
{
    int pc[GQ_MAX_GPUS], dc[GQ_MAX_GPUS];
    for (int i = 0; i < N; i++)
        pc[i] = i;
    do {
        int P[GQ_MAX_GPUS], rest[GQ_MAX_GPUS], nr = 0;
        gq_gpuset ps = 0;
        for (int i = 0; i < N; i++) {
            P[i] = u[pc[i]];
            ps |= BIT(P[i]);
        }
        for (int i = 0; i < nu; i++)
            if (!IN(ps, u[i]))
                rest[nr++] = u[i];
        for (int i = 0; i < M; i++)
            dc[i] = i;
        do {
            int D[GQ_MAX_GPUS];
            for (int i = 0; i < M; i++)
                D[i] = rest[dc[i]];
            if (N == M) {
                int perm[GQ_MAX_GPUS];
                for (int i = 0; i < N; i++)
                    perm[i] = i;
                do {
                    int pairs[GQ_PLACE_MAX_PAIRS][2];
                    for (int i = 0; i < N; i++) {
                        pairs[i][0] = P[i];
                        pairs[i][1] = D[perm[i]];
                    }
                    if (visit(arg, (const int(*)[2])pairs, N))
                        return;
                } while (next_permutation(perm, N));
            } else {
                int cnt[GQ_MAX_GPUS] = {0}, a[GQ_MAX_GPUS];
                bool pre_small = N < M;
                int ns = pre_small ? N : M, nl = pre_small ? M : N;
                if (assign_rec(pre_small ? P : D, ns, pre_small ? D : P, nl, pre_small, cnt, a, 0,
                               (nl + ns - 1) / ns, visit, arg))
                    return;
            }
        } while (next_combination(dc, M, nr));
    } while (next_combination(pc, N, nu));
}

static double log_count_pd(int nu, int N, int M)
{
    double c = log((double)binom(nu, N)) + log((double)binom(nu - N, M));
    int s = N < M ? N : M, l = N < M ? M : N;
    if (N == M)
        c += lgamma(N + 1.0);
    else
        c += l * log((double)s);
    return c;
}

typedef struct pd_state {
    const gq_place_model *m;
    score *scores;
    long *crossing; /* handoffs that leave their domain: fewer wins a tie */
    long n, cap;
    long target;
    int np;
    int pairs[GQ_PLACE_MAX_PAIRS][2];
    bool oom;
} pd_state;

static bool pd_score_visit(void *arg, const int (*pairs)[2], int np)
{
    pd_state *st = arg;
    if (st->n == st->cap) {
        long cap = st->cap ? st->cap * 2 : 1024;
        score *s = realloc(st->scores, (size_t)cap * sizeof *s);
        if (s)
            st->scores = s;
        long *c = realloc(st->crossing, (size_t)cap * sizeof *c);
        if (c)
            st->crossing = c;
        if (!s || !c) {
            st->oom = true;
            return true;
        }
        st->cap = cap;
    }
    long cross = 0;
    for (int i = 0; i < np; i++) {
        int d = domain_of(st->m, pairs[i][0]);
        cross += d < 0 || d != domain_of(st->m, pairs[i][1]);
    }
    st->crossing[st->n] = cross;
    st->scores[st->n++] = score_pairs(st->m, pairs, np, NULL);
    return false;
}

static bool pd_fetch_visit(void *arg, const int (*pairs)[2], int np)
{
    pd_state *st = arg;
    if (st->n++ != st->target)
        return false;
    memcpy(st->pairs, pairs, sizeof pairs[0] * (size_t)np);
    st->np = np;
    return true;
}

/* Beyond exhaustive reach: cells inside each domain first (each aligned
 * block of four GPUs of a domain is a cell: the lower two prefill, the upper
 * two decode, as seed 001's {0,1}->{2,3}; neighbours usually share a switch),
 * leftovers in index order; then pairwise swaps (of roles, partners, or with
 * unused GPUs) that touch a handoff predicted below its alone rate, accepted
 * when the predicted aggregate grows by more than 0.5%, within a budget of
 * predictions scaled to the size of one prediction. */
static int pd_heuristic(const gq_place_model *m, const int *u, int nu, int N, int M, int (*pairs)[2],
                        long *tried)
{
    int K = N > M ? N : M;
    int P[GQ_MAX_GPUS], D[GQ_MAX_GPUS], np = 0, nd = 0;
    gq_gpuset used = 0;
    for (int d = 0; d < m->ndomains && (np < N || nd < M); d++) {
        int g[GQ_MAX_GPUS], ng = 0;
        for (int i = 0; i < nu; i++)
            if (IN(m->domains[d], u[i]))
                g[ng++] = u[i];
        for (int b = 0; b + 1 < ng && (np < N || nd < M); b += 4) {
            int half = (ng - b >= 4 ? 4 : ng - b) / 2;
            for (int i = b; i < b + half && np < N; i++) {
                P[np++] = g[i];
                used |= BIT(g[i]);
            }
            for (int i = b + half; i < b + 2 * half && nd < M; i++) {
                D[nd++] = g[i];
                used |= BIT(g[i]);
            }
        }
    }
    for (int i = 0; i < nu && np < N; i++)
        if (!IN(used, u[i])) {
            P[np++] = u[i];
            used |= BIT(u[i]);
        }
    for (int i = 0; i < nu && nd < M; i++)
        if (!IN(used, u[i])) {
            D[nd++] = u[i];
            used |= BIT(u[i]);
        }
    /* Sort each side so that pairing in order keeps cells together. */
    for (int side = 0; side < 2; side++) {
        int *v = side ? D : P, n = side ? nd : np;
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
                int t = v[j];
                v[j] = v[j - 1];
                v[j - 1] = t;
            }
    }
    for (int k = 0; k < K; k++) {
        pairs[k][0] = P[k * N / K];
        pairs[k][1] = D[k * M / K];
    }
    gq_pflow_pred pred[GQ_PLACE_MAX_PAIRS];
    score cur = score_pairs(m, (const int(*)[2])pairs, K, pred);
    *tried = 1;
    long cost = (long)K * (m->nlimits + 4 * m->ngpu) + 1;
    int budget = (int)fmin(LOCAL_SEARCH_BUDGET, fmax(200, 4e6 / (double)cost));
    bool improved = true;
    while (improved && budget > 0) {
        improved = false;
        for (int x = 0; x < 2 * K && budget > 0 && !improved; x++) {
            if (pred[x / 2].gbps >= pred[x / 2].alone * (1 - m->tolerance))
                continue; /* this handoff already runs at its own rate */
            for (int y = 0; y < nu + 2 * K && budget > 0 && !improved; y++) {
                int trial[GQ_PLACE_MAX_PAIRS][2];
                memcpy(trial, pairs, sizeof trial[0] * (size_t)K);
                int gx = trial[x / 2][x % 2];
                int gy;
                if (y < 2 * K) {
                    gy = trial[y / 2][y % 2];
                    if ((y % 2) == (x % 2) && gx != gy) {
                        /* same role: exchange partners instead */
                        int t = trial[x / 2][1 - x % 2];
                        trial[x / 2][1 - x % 2] = trial[y / 2][1 - y % 2];
                        trial[y / 2][1 - y % 2] = t;
                        gy = -1;
                    }
                } else {
                    gy = u[y - 2 * K];
                    if (IN(used, gy))
                        continue;
                }
                if (gy == gx)
                    continue;
                if (gy >= 0)
                    for (int k = 0; k < K; k++)
                        for (int t = 0; t < 2; t++)
                            trial[k][t] = trial[k][t] == gx ? gy : trial[k][t] == gy ? gx : trial[k][t];
                budget--;
                (*tried)++;
                gq_pflow_pred tp[GQ_PLACE_MAX_PAIRS];
                score sc = score_pairs(m, (const int(*)[2])trial, K, tp);
                if (sc.agg > cur.agg * 1.005) {
                    cur = sc;
                    memcpy(pairs, trial, sizeof trial[0] * (size_t)K);
                    memcpy(pred, tp, sizeof tp[0] * (size_t)K);
                    used = 0;
                    for (int k = 0; k < K; k++)
                        used |= BIT(pairs[k][0]) | BIT(pairs[k][1]);
                    improved = true;
                }
            }
        }
    }
    /* Report in prefill order. */
    for (int i = 1; i < K; i++)
        for (int j = i; j > 0 && (pairs[j - 1][0] > pairs[j][0] ||
                                  (pairs[j - 1][0] == pairs[j][0] && pairs[j - 1][1] > pairs[j][1]));
             j--) {
            int t0 = pairs[j][0], t1 = pairs[j][1];
            pairs[j][0] = pairs[j - 1][0];
            pairs[j][1] = pairs[j - 1][1];
            pairs[j - 1][0] = t0;
            pairs[j - 1][1] = t1;
        }
    return K;
}

/* Spread key: how many GPUs of the set share a group the machine shows (host
 * budgets, domains), then aligned blocks of GPU indices (2, 4, 8, ...), where
 * neighbours usually share a switch. Lower is more spread. */
static long spread_key(const gq_place_model *m, gq_gpuset s)
{
    long k = 0;
    for (int i = 0; i < m->nlimits; i++)
        if (!gq_place_limit_is_gpu(m->limits[i].kind)) {
            long c = gq_gpuset_count(s & m->limits[i].a);
            k += c * (c - 1) / 2;
        }
    for (int d = 0; d < m->ndomains; d++) {
        long c = gq_gpuset_count(s & m->domains[d]);
        k += c * (c - 1) / 2;
    }
    k *= 1000;
    for (int b = 2; b < 2 * m->ngpu && b <= GQ_MAX_GPUS; b *= 2)
        for (int start = 0; start < m->ngpu; start += b) {
            gq_gpuset blk = (b >= 64 ? ~(gq_gpuset)0 : ((BIT(b) - 1))) << start;
            long c = gq_gpuset_count(s & blk);
            k += c * (c - 1) / 2;
        }
    return k;
}

static score score_workers(const gq_place_model *m, const int *w, int k, gq_pflow_pred *ph, gq_pflow_pred *pd)
{
    gq_pflow fh[GQ_MAX_GPUS] = {{0}}, fd[GQ_MAX_GPUS] = {{0}};
    gq_pflow_pred th[GQ_MAX_GPUS], td[GQ_MAX_GPUS];
    if (!ph)
        ph = th;
    if (!pd)
        pd = td;
    for (int i = 0; i < k; i++) {
        fh[i] = (gq_pflow){.kind = GQ_PF_H2D, .src = -1, .dst = w[i]};
        fd[i] = (gq_pflow){.kind = GQ_PF_D2H, .src = w[i], .dst = -1};
    }
    score s = {.agg = gq_place_predict(m, fh, k, ph) + gq_place_predict(m, fd, k, pd), .min = INFINITY};
    for (int i = 0; i < k; i++)
        s.min = fmin(s.min, fmin(ph[i].gbps, pd[i].gbps));
    return s;
}

static int choose_workers(const gq_place_model *m, const int *u, int nu, int K, int *w, long *ncand,
                          bool *exh)
{
    if (K <= 0 || K > nu) /* K > nu: nothing to choose; the caller reports it */
        return 0;
    long n = binom(nu, K);
    if (n <= EXHAUSTIVE_MAX) {
        score *sc = malloc((size_t)n * sizeof *sc);
        long *tb = malloc((size_t)n * sizeof *tb);
        int c[GQ_MAX_GPUS];
        if (!sc || !tb) {
            free(sc);
            free(tb);
            return -1;
        }
        for (int i = 0; i < K; i++)
            c[i] = i;
        long i = 0;
        do {
            int ws[GQ_MAX_GPUS];
            gq_gpuset s = 0;
            for (int j = 0; j < K; j++) {
                ws[j] = u[c[j]];
                s |= BIT(ws[j]);
            }
            sc[i] = score_workers(m, ws, K, NULL, NULL);
            tb[i] = spread_key(m, s) * n + i; /* then index order */
            i++;
        } while (next_combination(c, K, nu));
        long pick = pick_best(sc, i, m->tolerance, tb);
        for (int j = 0; j < K; j++)
            c[j] = j;
        for (long t = 0; t < pick; t++)
            next_combination(c, K, nu);
        for (int j = 0; j < K; j++)
            w[j] = u[c[j]];
        free(sc);
        free(tb);
        *ncand = i;
        *exh = true;
        return K;
    }
    /* Greedy: add the GPU that keeps the predicted total highest (ties: the
     * more spread set, then the lower index). */
    gq_gpuset s = 0;
    int k = 0;
    for (; k < K; k++) {
        int best = -1;
        score bs = {-1, -1};
        long bk = 0;
        for (int i = 0; i < nu; i++) {
            if (IN(s, u[i]))
                continue;
            w[k] = u[i];
            score sc = score_workers(m, w, k + 1, NULL, NULL);
            long key = spread_key(m, s | BIT(u[i]));
            if (best < 0 || sc.agg > bs.agg * (1 + m->tolerance) ||
                (sc.agg >= bs.agg * (1 - m->tolerance) && key < bk)) {
                best = u[i];
                bs = sc;
                bk = key;
            }
            (*ncand)++;
        }
        if (best < 0) /* fewer usable GPUs than workers (callers check this): never shift by -1 */
            break;
        w[k] = best;
        s |= BIT(best);
    }
    *exh = false;
    return k;
}

/* Replicas: groups of whole cells (with pairs) or of GPUs. */
typedef struct rep_ctx {
    const gq_place_model *m;
    int R, q; /* groups, items per group */
    int nitems;
    gq_gpuset item[GQ_MAX_GPUS]; /* GPUs of each item (a pair, or one GPU) */
    int assign[GQ_MAX_GPUS];     /* item -> group, -1 unused */
    int best_assign[GQ_MAX_GPUS];
    double best_key[4];
    bool have;
    long seen;
    long budget;
} rep_ctx;

static void rep_eval(rep_ctx *c)
{
    const gq_place_model *m = c->m;
    gq_gpuset g[GQ_MAX_GPUS] = {0};
    for (int i = 0; i < c->nitems; i++)
        if (c->assign[i] >= 0)
            g[c->assign[i]] |= c->item[i];
    /* A GPU may not serve two replicas (a prefill GPU feeding several decodes
     * keeps all its cells in one replica). */
    for (int r = 0; r < c->R; r++)
        for (int t = r + 1; t < c->R; t++)
            if (g[r] & g[t])
                return;
    c->seen++;
    int confined = 0;
    for (int r = 0; r < c->R; r++)
        for (int d = 0; d < m->ndomains; d++)
            if ((g[r] & m->domains[d]) == g[r]) {
                confined++;
                break;
            }
    gq_pflow f[GQ_MAX_GPUS] = {{0}};
    gq_pflow_pred p[GQ_MAX_GPUS];
    int owner[GQ_MAX_GPUS], nf = 0;
    for (int r = 0; r < c->R; r++)
        for (int x = 0; x < m->ngpu; x++)
            if (IN(g[r], x)) {
                f[nf] = (gq_pflow){.kind = GQ_PF_H2D, .src = -1, .dst = x};
                owner[nf++] = r;
            }
    gq_place_predict(m, f, nf, p);
    double per[GQ_MAX_GPUS] = {0}, minrep = INFINITY;
    for (int i = 0; i < nf; i++)
        per[owner[i]] += p[i].gbps;
    for (int r = 0; r < c->R; r++)
        minrep = fmin(minrep, per[r]);
    int shared = 0;
    for (int l = 0; l < m->nlimits; l++) {
        if (gq_place_limit_is_gpu(m->limits[l].kind))
            continue;
        int users = 0;
        for (int r = 0; r < c->R; r++)
            users += (g[r] & m->limits[l].a) != 0;
        shared += users > 1 ? users - 1 : 0;
    }
    /* Keys, compared in order: more replicas inside one domain; the slowest
     * replica's host rate (ties within the tolerance); fewer budgets shared
     * between replicas; then the first in enumeration order. */
    double key[4] = {confined, minrep, -shared, 0};
    bool better = !c->have;
    if (!better) {
        if (key[0] != c->best_key[0])
            better = key[0] > c->best_key[0];
        else if (fabs(key[1] - c->best_key[1]) > m->tolerance * fmax(key[1], c->best_key[1]))
            better = key[1] > c->best_key[1];
        else
            better = key[2] > c->best_key[2];
    }
    if (better) {
        c->have = true;
        memcpy(c->best_key, key, sizeof key);
        memcpy(c->best_assign, c->assign, sizeof c->assign);
    }
}

/* Canonical partitions of the chosen items: each group opens with the
 * lowest free item, so no partition is visited twice. */
static void rep_rec(rep_ctx *c, const bool *chosen, int group, int filled, int from)
{
    if (c->budget <= 0)
        return;
    if (group == c->R) {
        c->budget--;
        rep_eval(c);
        return;
    }
    if (filled == c->q) {
        rep_rec(c, chosen, group + 1, 0, 0);
        return;
    }
    for (int i = from; i < c->nitems; i++) {
        if (!chosen[i] || c->assign[i] >= 0)
            continue;
        c->assign[i] = group;
        rep_rec(c, chosen, group, filled + 1, i + 1);
        c->assign[i] = -1;
        if (filled == 0)
            break;
    }
}

/* Too many partitions to compare: the structured ones. Contiguous blocks of
 * items (index order: neighbours share switches and domains), items dealt
 * round-robin (each replica spread over the machine), and blocks after
 * sorting the items by domain; then single exchanges between replicas while
 * the keys improve, within a budget. */
static void rep_structured(rep_ctx *c)
{
    int order[GQ_MAX_GPUS], n = c->nitems, used = c->R * c->q;
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = 1; i < n; i++) /* by domain of the item's lowest GPU, stable */
        for (int j = i; j > 0; j--) {
            int da = domain_of(c->m, __builtin_ctzll(c->item[order[j - 1]]));
            int db = domain_of(c->m, __builtin_ctzll(c->item[order[j]]));
            if (da <= db)
                break;
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (int shape = 0; shape < 3; shape++) {
        for (int i = 0; i < n; i++)
            c->assign[i] = -1;
        for (int k = 0; k < used; k++) {
            int item = shape == 2 ? order[k] : k;
            c->assign[item] = shape == 1 ? k % c->R : k / c->q;
        }
        rep_eval(c);
    }
    if (!c->have)
        return;
    int budget = 2000;
    bool improved = true;
    while (improved && budget > 0) {
        improved = false;
        for (int x = 0; x < n && !improved && budget > 0; x++)
            for (int y = x + 1; y < n && !improved && budget > 0; y++) {
                memcpy(c->assign, c->best_assign, sizeof c->assign);
                if (c->assign[x] == c->assign[y])
                    continue;
                int t = c->assign[x];
                c->assign[x] = c->assign[y];
                c->assign[y] = t;
                double before[4];
                memcpy(before, c->best_key, sizeof before);
                budget--;
                rep_eval(c);
                improved = memcmp(before, c->best_key, sizeof before) != 0;
            }
    }
}

/* Which items take part (all of them unless there are more than R x q),
 * then how they are grouped. */
static void rep_search(rep_ctx *c)
{
    int k = c->R * c->q, comb[GQ_MAX_GPUS];
    for (int i = 0; i < k; i++)
        comb[i] = i;
    do {
        bool chosen[GQ_MAX_GPUS] = {0};
        for (int i = 0; i < k; i++)
            chosen[comb[i]] = true;
        for (int i = 0; i < c->nitems; i++)
            c->assign[i] = -1;
        rep_rec(c, chosen, 0, 0, 0);
    } while (c->budget > 0 && next_combination(comb, k, c->nitems));
}

/* ---- explanations ------------------------------------------------------- */

/* Every GPU of the model: a budget over all of them (the host as a whole) is
 * true but tells nothing about where to put a role. */
static gq_gpuset whole_machine(const gq_place_model *m)
{
    return m->ngpu >= 64 ? ~(gq_gpuset)0 : (BIT(m->ngpu) - 1);
}

static bool any_real_domain(const gq_place_model *m)
{
    for (int d = 0; d < m->ndomains; d++)
        if (gq_gpuset_count(m->domains[d]) > 1)
            return true;
    return false;
}

/* Host budgets (distinct GPU sets of host limits), narrowest first, leaving
 * out the whole machine. Returns how many. */
static int host_budgets(const gq_place_model *m, gq_gpuset *out)
{
    int n = 0;
    for (int l = 0; l < m->nlimits; l++) {
        const gq_place_limit *lim = &m->limits[l];
        if (gq_place_limit_is_gpu(lim->kind) || lim->a == whole_machine(m))
            continue;
        bool dup = false;
        for (int k = 0; k < n; k++)
            dup |= out[k] == lim->a;
        if (!dup)
            out[n++] = lim->a;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && gq_gpuset_count(out[j - 1]) > gq_gpuset_count(out[j]); j--) {
            gq_gpuset t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

static int domain_of(const gq_place_model *m, int g)
{
    for (int d = 0; d < m->ndomains; d++)
        if (IN(m->domains[d], g))
            return d;
    return -1;
}

static void explain_binding(const gq_place_model *m, const gq_pflow_pred *p, const char *what, int npat,
                            char *buf, size_t n)
{
    char ls[200];
    const char *pl = npat == 1 ? "" : "s";
    if (p->binding == -2)
        textf(buf, n, "no measured figure for this path");
    else if (p->binding == -1)
        textf(buf, n, "with %d %s%s at once %.1f GB/s: no shared limit binds", npat, what, pl, p->gbps);
    else if (p->binding == -3)
        textf(buf, n, "with %d %s%s at once %.1f GB/s: its GPU's own link is shared by %d flows", npat, what,
              pl, p->gbps, p->sharing);
    else
        textf(buf, n, "with %d %s%s at once %.1f GB/s: held by %s (limit #%d), shared by %d flows", npat,
              what, pl, p->gbps, limit_str(&m->limits[p->binding], ls, sizeof ls), p->binding, p->sharing);
}

static void explain_pair(const gq_place_model *m, const gq_pflow *f, const gq_pflow_pred *p, int npat,
                         char *buf, size_t n)
{
    char path[160], alone[160], pred[260], a[64], b[64];
    int ds = domain_of(m, f->src), dd = domain_of(m, f->dst);
    if (f->kind == GQ_PF_P2P) {
        if (ds >= 0 && ds == dd)
            textf(path, sizeof path, "P2P within domain {%s}", gq_gpuset_str(m->domains[ds], a, sizeof a));
        else
            textf(path, sizeof path, "P2P across domains {%s} -> {%s}",
                  ds >= 0 ? gq_gpuset_str(m->domains[ds], a, sizeof a) : "?",
                  dd >= 0 ? gq_gpuset_str(m->domains[dd], b, sizeof b) : "?");
        textf(alone, sizeof alone, "alone %.1f GB/s (pairwise matrix)", p->alone);
    } else {
        textf(path, sizeof path, "host-staged GPU %d -> host -> GPU %d (%s)", f->src, f->dst,
              m->no_p2p[f->src][f->dst] ? "no P2P between them" : "no P2P figure for this pair");
        if (m->staged[f->src][f->dst] > 0)
            textf(alone, sizeof alone, "alone %.1f GB/s (staged matrix)", p->alone);
        else
            textf(alone, sizeof alone, "alone %.1f GB/s (the slower of GPU %d d2h %.1f and GPU %d h2d %.1f)",
                  p->alone, f->src, m->d2h[f->src], f->dst, m->h2d[f->dst]);
    }
    explain_binding(m, p, "handoff", npat, pred, sizeof pred);
    textf(buf, n, "%s; %s; %s", path, alone, pred);
}

static void fill_pairs(const gq_place_model *m, const int (*pairs)[2], int np, gq_place_map *map)
{
    gq_pflow f[GQ_PLACE_MAX_PAIRS] = {{0}};
    gq_pflow_pred p[GQ_PLACE_MAX_PAIRS];
    pairs_to_flows(m, pairs, np, f);
    map->npairs = np;
    map->pairs_predicted = gq_place_predict(m, f, np, p);
    map->pairs_measured = -1;
    map->pairs_overlap = -1;
    for (int i = 0; i < np; i++) {
        gq_place_pair *q = &map->pairs[i];
        q->prefill = f[i].src;
        q->decode = f[i].dst;
        q->path = f[i].kind;
        q->predicted_gbps = p[i].gbps;
        q->alone_gbps = p[i].alone;
        q->measured_gbps = -1;
        explain_pair(m, &f[i], &p[i], np, q->why, sizeof q->why);
    }
}

static void fill_workers(const gq_place_model *m, const int *w, int k, gq_place_map *map)
{
    gq_pflow_pred ph[GQ_MAX_GPUS], pd[GQ_MAX_GPUS];
    score_workers(m, w, k, ph, pd);
    map->nworkers = k;
    map->offload_predicted_h2d = map->offload_predicted_d2h = 0;
    map->offload_measured_h2d = map->offload_measured_d2h = -1;
    gq_gpuset s = 0;
    for (int i = 0; i < k; i++)
        s |= BIT(w[i]);
    for (int i = 0; i < k; i++) {
        gq_place_worker *x = &map->workers[i];
        x->gpu = w[i];
        x->predicted_h2d = ph[i].gbps;
        x->predicted_d2h = pd[i].gbps;
        x->measured_h2d = x->measured_d2h = -1;
        map->offload_predicted_h2d += ph[i].gbps;
        map->offload_predicted_d2h += pd[i].gbps;
        char bh[200], bd[200], share[160] = "";
        size_t sl = 0;
        explain_binding(m, &ph[i], "worker", k, bh, sizeof bh);
        explain_binding(m, &pd[i], "worker", k, bd, sizeof bd);
        gq_gpuset budgets[GQ_PLACE_MAX_LIMITS];
        int nb = host_budgets(m, budgets);
        for (int l = 0; l < nb; l++) {
            if (!IN(budgets[l], w[i]) || gq_gpuset_count(budgets[l] & s) < 2)
                continue;
            char a[64], o[64];
            int wr = snprintf(share + sl, sizeof share - sl, "%sshares budget {%s} with %s", sl ? "; " : "",
                              gq_gpuset_str(budgets[l], a, sizeof a),
                              gq_gpuset_str((budgets[l] & s) & ~BIT(w[i]), o, sizeof o));
            if (wr < 0 || (size_t)wr >= sizeof share - sl)
                break;
            sl += (size_t)wr;
        }
        textf(x->why, sizeof x->why, "h2d alone %.1f, %s; d2h alone %.1f, %s; %s", ph[i].alone, bh,
              pd[i].alone, bd, sl ? share : "shares no measured host budget with another worker");
    }
}

static void fill_replicas(const gq_place_model *m, const gq_gpuset *items, const int *assign, int nitems,
                          int R, bool items_are_pairs, gq_place_map *map)
{
    map->nreplicas = R;
    gq_gpuset g[GQ_MAX_GPUS] = {0};
    for (int r = 0; r < R; r++) {
        gq_place_replica *rep = &map->replicas[r];
        memset(rep, 0, sizeof *rep);
        for (int i = 0; i < nitems; i++)
            if (assign[i] == r) {
                g[r] |= items[i];
                if (items_are_pairs)
                    rep->pairs[rep->npairs++] = i;
            }
        for (int x = 0; x < m->ngpu; x++)
            if (IN(g[r], x))
                rep->gpus[rep->ngpus++] = x;
        rep->measured_gbps = -1;
    }
    gq_pflow f[GQ_MAX_GPUS] = {{0}};
    gq_pflow_pred p[GQ_MAX_GPUS];
    int owner[GQ_MAX_GPUS], nf = 0;
    for (int r = 0; r < R; r++)
        for (int i = 0; i < map->replicas[r].ngpus; i++) {
            f[nf] = (gq_pflow){.kind = GQ_PF_H2D, .src = -1, .dst = map->replicas[r].gpus[i]};
            owner[nf++] = r;
        }
    gq_place_predict(m, f, nf, p);
    map->replicas_predicted_min = INFINITY;
    map->replicas_measured_min = -1;
    for (int i = 0; i < nf; i++)
        map->replicas[owner[i]].predicted_gbps += p[i].gbps;
    for (int r = 0; r < R; r++) {
        gq_place_replica *rep = &map->replicas[r];
        map->replicas_predicted_min = fmin(map->replicas_predicted_min, rep->predicted_gbps);
        char a[64], dom[96] = "", shared[200] = "";
        int d = domain_of(m, rep->gpus[0]);
        if (!any_real_domain(m))
            textf(dom, sizeof dom, "(no P2P domains)");
        else if (d >= 0 && (g[r] & m->domains[d]) == g[r])
            textf(dom, sizeof dom, "inside domain {%s}", gq_gpuset_str(m->domains[d], a, sizeof a));
        else
            textf(dom, sizeof dom, "spans several domains");
        size_t sl = 0;
        gq_gpuset budgets[GQ_PLACE_MAX_LIMITS];
        int nb = host_budgets(m, budgets);
        for (int l = 0; l < nb; l++) {
            if (!(budgets[l] & g[r]))
                continue;
            gq_gpuset others = 0;
            for (int t = 0; t < R; t++)
                if (t != r)
                    others |= g[t];
            if (!(budgets[l] & others))
                continue;
            char o[64];
            int w = snprintf(shared + sl, sizeof shared - sl, "%sbudget {%s} shared with GPUs %s",
                             sl ? "; " : "", gq_gpuset_str(budgets[l], a, sizeof a),
                             gq_gpuset_str(budgets[l] & others, o, sizeof o));
            if (w < 0 || (size_t)w >= sizeof shared - sl)
                break;
            sl += (size_t)w;
        }
        textf(rep->why, sizeof rep->why,
              "GPUs {%s} %s; host->GPU %.1f GB/s with every replica loading at once; %s",
              gq_gpuset_str(g[r], a, sizeof a), dom, rep->predicted_gbps,
              sl ? shared : "no measured host budget shared with another replica");
    }
}

static bool same_pairs(const gq_place_map *a, const gq_place_map *b)
{
    if (a->npairs != b->npairs)
        return false;
    for (int i = 0; i < a->npairs; i++)
        if (a->pairs[i].prefill != b->pairs[i].prefill || a->pairs[i].decode != b->pairs[i].decode)
            return false;
    return true;
}

static void note(gq_place_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(gq_place_result *res, const char *fmt, ...)
{
    if (res->nnotes >= (int)(sizeof res->notes / sizeof res->notes[0]))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->notes[res->nnotes++], sizeof res->notes[0], fmt, ap);
    va_end(ap);
}

/* Which host budgets the chosen handoffs load, and with what: the widest
 * budgets short of the whole machine (the sockets or switches, rather than
 * every pair inside them). */
static void note_budgets(const gq_place_model *m, gq_place_result *res)
{
    const gq_place_map *c = &res->chosen;
    gq_gpuset budgets[GQ_PLACE_MAX_LIMITS];
    int nb = host_budgets(m, budgets);
    char text[320];
    size_t tl = 0;
    int used = 0;
    for (int l = 0; l < nb; l++) {
        bool inner = false;
        for (int o = 0; o < nb; o++)
            inner |= o != l && (budgets[l] & budgets[o]) == budgets[l];
        if (inner)
            continue;
        char a[64], users[160] = "";
        size_t ul = 0;
        for (int i = 0; i < c->npairs; i++) {
            const gq_place_pair *q = &c->pairs[i];
            gq_pflow f = {.kind = q->path, .src = q->prefill, .dst = q->decode};
            gq_place_limit probe = {.kind = GQ_LIMIT_DUPLEX, .a = budgets[l]};
            if (f.kind != GQ_PF_STAGED || !limit_use(&probe, &f))
                continue;
            int w = snprintf(users + ul, sizeof users - ul, "%s%d->%d", ul ? " " : "", q->prefill, q->decode);
            if (w > 0 && (size_t)w < sizeof users - ul)
                ul += (size_t)w;
        }
        if (!ul)
            continue;
        used++;
        int w = snprintf(text + tl, sizeof text - tl, "%s{%s}: %s", tl ? "; " : "",
                         gq_gpuset_str(budgets[l], a, sizeof a), users);
        if (w > 0 && (size_t)w < sizeof text - tl)
            tl += (size_t)w;
    }
    if (used)
        note(res, "the staged handoffs use %d host budget%s: %s", used, used == 1 ? "" : "s", text);
}

int gq_place_solve(const gq_place_model *m, const gq_place_roles *r, gq_place_result *out, gq_err *err)
{
    int rc = gq_place_roles_check(r, m->ngpu, err);
    if (rc)
        return rc;
    memset(out, 0, sizeof *out);
    out->roles = *r;
    int u[GQ_MAX_GPUS];
    int nu = usable_list(m, r->usable, u);
    out->exhaustive = true;
    char a[96];

    if (r->prefill) {
        int N = r->prefill, M = r->decode, K = N > M ? N : M;
        int pairs[GQ_PLACE_MAX_PAIRS][2];
        if (log_count_pd(nu, N, M) <= log((double)EXHAUSTIVE_MAX)) {
            pd_state st = {.m = m};
            enumerate_pd(u, nu, N, M, pd_score_visit, &st);
            if (st.oom || !st.n) {
                free(st.scores);
                free(st.crossing);
                return gq_err_set(err, GQ_E_NOMEM, "placement: out of memory");
            }
            /* Among equals: fewer handoffs crossing a domain boundary (a
             * measured shared budget, even where it does not bind), then
             * the first in index order. */
            for (long i = 0; i < st.n; i++)
                st.crossing[i] = st.crossing[i] * st.n + i;
            long pick = pick_best(st.scores, st.n, m->tolerance, st.crossing);
            out->candidates += (int)st.n;
            free(st.scores);
            free(st.crossing);
            pd_state f = {.m = m, .target = pick};
            enumerate_pd(u, nu, N, M, pd_fetch_visit, &f);
            memcpy(pairs, f.pairs, sizeof pairs[0] * (size_t)f.np);
        } else {
            long tried = 0;
            pd_heuristic(m, u, nu, N, M, pairs, &tried);
            out->candidates += (int)tried;
            out->exhaustive = false;
        }
        fill_pairs(m, (const int(*)[2])pairs, K, &out->chosen);
        int naive[GQ_PLACE_MAX_PAIRS][2];
        for (int k = 0; k < K; k++) {
            naive[k][0] = u[k * N / K];
            naive[k][1] = u[N + k * M / K];
        }
        fill_pairs(m, (const int(*)[2])naive, K, &out->naive);
        out->all_staged = true;
        int within = 0, nwithin = 0, nstaged = 0;
        for (int i = 0; i < K; i++) {
            nstaged += out->chosen.pairs[i].path == GQ_PF_STAGED;
            int d = domain_of(m, out->chosen.pairs[i].prefill);
            within += d >= 0 && d == domain_of(m, out->chosen.pairs[i].decode);
            d = domain_of(m, out->naive.pairs[i].prefill);
            nwithin += d >= 0 && d == domain_of(m, out->naive.pairs[i].decode);
        }
        out->all_staged = nstaged == K;
        if (out->all_staged)
            note(out,
                 "every handoff is host-staged (GPU -> host memory -> GPU): there is no P2P path between the "
                 "chosen GPUs, so the host budgets carry every byte twice");
        else if (nstaged)
            note(out, "%d of %d handoffs are host-staged (no P2P between those GPUs)", nstaged, K);
        if (any_real_domain(m) && m->ndomains > 1)
            note(out, "%d of %d handoffs stay inside a performance domain (the naive mapping: %d of %d)",
                 within, K, nwithin, K);
        note_budgets(m, out);
        if (same_pairs(&out->chosen, &out->naive))
            note(out, "the naive mapping (GPUs in index order) is already as fast as any: it is kept");
        out->gain_pairs =
            out->naive.pairs_predicted > 0 ? out->chosen.pairs_predicted / out->naive.pairs_predicted : 0;
    }

    if (r->offload) {
        int w[GQ_MAX_GPUS];
        long nc = 0;
        bool exh = true;
        int got = choose_workers(m, u, nu, r->offload, w, &nc, &exh);
        if (got < 0)
            return gq_err_set(err, GQ_E_NOMEM, "placement: out of memory");
        if (got < r->offload)
            return gq_err_set(err, GQ_E_USAGE,
                              "placement: %d offload workers need %d usable GPUs; %d are usable", r->offload,
                              r->offload, nu);
        out->candidates += (int)nc;
        out->exhaustive &= exh;
        fill_workers(m, w, r->offload, &out->chosen);
        fill_workers(m, u, r->offload, &out->naive);
        double c = out->chosen.offload_predicted_h2d + out->chosen.offload_predicted_d2h;
        double n = out->naive.offload_predicted_h2d + out->naive.offload_predicted_d2h;
        out->gain_offload = n > 0 ? c / n : 0;
        gq_gpuset ws = 0;
        for (int i = 0; i < r->offload; i++)
            ws |= BIT(w[i]);
        note(out,
             "offload workers {%s}: %.1f GB/s host->GPU and %.1f GB/s GPU->host predicted with all of them "
             "at once",
             gq_gpuset_str(ws, a, sizeof a), out->chosen.offload_predicted_h2d,
             out->chosen.offload_predicted_d2h);
    }

    if (r->replicas) {
        rep_ctx *c = calloc(1, sizeof *c);
        if (!c)
            return gq_err_set(err, GQ_E_NOMEM, "placement: out of memory");
        c->m = m;
        c->R = r->replicas;
        bool by_pairs = out->chosen.npairs > 0;
        if (by_pairs) {
            c->nitems = out->chosen.npairs;
            for (int i = 0; i < c->nitems; i++)
                c->item[i] = BIT(out->chosen.pairs[i].prefill) | BIT(out->chosen.pairs[i].decode);
        } else {
            c->nitems = nu;
            for (int i = 0; i < nu; i++)
                c->item[i] = BIT(u[i]);
        }
        c->q = c->nitems / c->R;
        /* Partitions of the items: choose R*q of them, then split into R
         * unordered groups of q. */
        double lparts = lgamma(c->nitems + 1.0) - lgamma(c->nitems - c->R * c->q + 1.0) -
                        c->R * lgamma(c->q + 1.0) - lgamma(c->R + 1.0);
        if (lparts <= log((double)EXHAUSTIVE_MAX / 10)) {
            c->budget = EXHAUSTIVE_MAX;
            rep_search(c);
        } else {
            rep_structured(c);
            out->exhaustive = false;
        }
        out->candidates += (int)c->seen;
        if (!c->have) {
            free(c);
            return gq_err_set(err, GQ_E_USAGE,
                              "--replicas %d: the chosen cells share GPUs, so they cannot be split into %d "
                              "replicas; use a replica count that divides both --prefill and --decode evenly",
                              r->replicas, r->replicas);
        }
        fill_replicas(m, c->item, c->best_assign, c->nitems, c->R, by_pairs, &out->chosen);
        /* Naive: consecutive items, in index order (of the naive pairs). */
        int nassign[GQ_MAX_GPUS];
        gq_gpuset nitem[GQ_MAX_GPUS];
        for (int i = 0; i < c->nitems; i++) {
            nassign[i] = i / c->q < c->R ? i / c->q : -1;
            nitem[i] =
                by_pairs ? BIT(out->naive.pairs[i].prefill) | BIT(out->naive.pairs[i].decode) : c->item[i];
        }
        fill_replicas(m, nitem, nassign, c->nitems, c->R, by_pairs, &out->naive);
        out->gain_replicas = out->naive.replicas_predicted_min > 0
                                 ? out->chosen.replicas_predicted_min / out->naive.replicas_predicted_min
                                 : 0;
        free(c);
    }
    if (!out->exhaustive)
        note(
            out,
            "too many candidate mappings to compare all: a heuristic (cells per domain, then pairwise swaps) "
            "chose this one");
    return GQ_OK;
}

/* ---- verification ------------------------------------------------------- */

static void init_measurement(gq_measurement *out, const char *test)
{
    memset(out, 0, sizeof *out);
    snprintf(out->test, sizeof out->test, "%s", test);
    out->aggregate = true;
}

static void add_flow(gq_measurement *m, gq_flow f)
{
    if (m->nflows >= GQ_MAX_FLOWS)
        return;
    f.tag = m->nflows;
    m->report[m->nflows] = true;
    m->flows[m->nflows++] = f;
}

int gq_place_pairs_measurement(const gq_place_map *map, uint64_t bytes, gq_measurement *out)
{
    init_measurement(out, "place_pairs");
    for (int i = 0; i < map->npairs; i++) {
        const gq_place_pair *q = &map->pairs[i];
        gq_flow f = {.src = {GQ_EP_GPU, q->prefill}, .dst = {GQ_EP_GPU, q->decode}, .bytes = bytes};
        if (q->path == GQ_PF_P2P) {
            /* The decode GPU pulls, as in the pairwise read matrix. */
            f.method = GQ_METHOD_CE;
            f.exec_gpu = q->decode;
        } else {
            f.method = GQ_METHOD_STAGED;
            f.exec_gpu = q->prefill;
        }
        add_flow(out, f);
    }
    return out->nflows;
}

int gq_place_offload_measurement(const gq_place_map *map, gq_direction dir, uint64_t bytes,
                                 gq_measurement *out)
{
    init_measurement(out, dir == GQ_DIR_H2D ? "place_offload_h2d" : "place_offload_d2h");
    for (int i = 0; i < map->nworkers; i++) {
        int g = map->workers[i].gpu;
        gq_endpoint host = {GQ_EP_HOST, GQ_NUMA_LOCAL}, gpu = {GQ_EP_GPU, g};
        add_flow(out, (gq_flow){.src = dir == GQ_DIR_H2D ? host : gpu,
                                .dst = dir == GQ_DIR_H2D ? gpu : host,
                                .method = GQ_METHOD_CE,
                                .exec_gpu = g,
                                .bytes = bytes});
    }
    return out->nflows;
}

int gq_place_replicas_measurement(const gq_place_map *map, uint64_t bytes, gq_measurement *out)
{
    init_measurement(out, "place_replicas_h2d");
    for (int r = 0; r < map->nreplicas; r++)
        for (int i = 0; i < map->replicas[r].ngpus; i++) {
            int g = map->replicas[r].gpus[i];
            add_flow(out, (gq_flow){.src = {GQ_EP_HOST, GQ_NUMA_LOCAL},
                                    .dst = {GQ_EP_GPU, g},
                                    .method = GQ_METHOD_CE,
                                    .exec_gpu = g,
                                    .bytes = bytes});
        }
    return out->nflows;
}

/* Run one measurement; per-flow medians into rate[] (by tag; -1 when the flow
 * has no usable figure), the aggregate, its overlap and validity. */
/* Add what the records [first, rs->n) show about shared limits. Returns the
 * number of limits added or tightened. */
int gq_place_learn(gq_place_model *m, const gq_recordset *rs, int first)
{
    int before = m->nlimits, tightened = 0;
    double caps[GQ_PLACE_MAX_LIMITS];
    for (int l = 0; l < m->nlimits; l++)
        caps[l] = m->limits[l].capacity_gbps;
    int idx[GQ_MAX_FLOWS];
    for (int i = first; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (!is_flow_record(r))
            continue;
        bool lead = true;
        for (int k = first; k < i && lead; k++)
            lead = !(is_flow_record(&rs->v[k]) && rs->v[k].group == r->group);
        if (!lead)
            continue;
        int n = 0;
        bool ok = true;
        for (int k = i; k < rs->n && n < GQ_MAX_FLOWS; k++)
            if (rs->v[k].group == r->group) {
                if (is_flow_record(&rs->v[k])) {
                    ok &= usable_record(&rs->v[k]);
                    idx[n++] = k;
                } else if (rs->v[k].aggregate && !rs->v[k].valid) {
                    ok = false;
                }
            }
        if (ok && n >= 2)
            limits_from_group(m, rs, idx, n, r->group);
    }
    for (int l = 0; l < before; l++)
        tightened += m->limits[l].capacity_gbps < caps[l];
    return m->nlimits - before + tightened;
}

/* Flows that ran slower than predicted, in words; 0 when none did. */
int gq_place_slow_flows(const gq_place_map *c, double tol, char *buf, size_t n)
{
    int slow = 0;
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < c->npairs; i++) {
        const gq_place_pair *q = &c->pairs[i];
        if (q->measured_gbps < 0 || q->measured_gbps >= q->predicted_gbps * (1 - tol))
            continue;
        slow++;
        int w = snprintf(buf + used, n - used, "%s%d->%d %.1f (predicted %.1f)", used ? ", " : "", q->prefill,
                         q->decode, q->measured_gbps, q->predicted_gbps);
        if (w > 0 && (size_t)w < n - used)
            used += (size_t)w;
    }
    for (int i = 0; i < c->nworkers; i++) {
        const gq_place_worker *w = &c->workers[i];
        bool sh = w->measured_h2d >= 0 && w->measured_h2d < w->predicted_h2d * (1 - tol);
        bool sd = w->measured_d2h >= 0 && w->measured_d2h < w->predicted_d2h * (1 - tol);
        if (!sh && !sd)
            continue;
        slow++;
        int k = snprintf(buf + used, n - used, "%sworker %d %s %.1f (predicted %.1f)", used ? ", " : "",
                         w->gpu, sh ? "h2d" : "d2h", sh ? w->measured_h2d : w->measured_d2h,
                         sh ? w->predicted_h2d : w->predicted_d2h);
        if (k > 0 && (size_t)k < n - used)
            used += (size_t)k;
    }
    for (int r = 0; r < c->nreplicas; r++) {
        const gq_place_replica *rep = &c->replicas[r];
        if (rep->measured_gbps < 0 || rep->measured_gbps >= rep->predicted_gbps * (1 - tol))
            continue;
        slow++;
        int k = snprintf(buf + used, n - used, "%sreplica %d %.1f (predicted %.1f)", used ? ", " : "", r,
                         rep->measured_gbps, rep->predicted_gbps);
        if (k > 0 && (size_t)k < n - used)
            used += (size_t)k;
    }
    return slow;
}

void gq_place_summarize_attempt(const gq_place_map *c, gq_place_attempt *a)
{
    memset(a, 0, sizeof *a);
    a->npairs = c->npairs;
    for (int i = 0; i < c->npairs; i++) {
        a->prefill[i] = c->pairs[i].prefill;
        a->decode[i] = c->pairs[i].decode;
        a->pair_predicted[i] = c->pairs[i].predicted_gbps;
        a->pair_measured[i] = c->pairs[i].measured_gbps;
    }
    a->pairs_predicted = c->pairs_predicted;
    a->pairs_measured = c->pairs_measured;
    a->pairs_valid = c->pairs_valid;
    a->nworkers = c->nworkers;
    for (int i = 0; i < c->nworkers; i++)
        a->workers[i] = c->workers[i].gpu;
    a->offload_predicted = c->offload_predicted_h2d + c->offload_predicted_d2h;
    a->offload_measured = c->offload_measured_h2d >= 0 && c->offload_measured_d2h >= 0
                              ? c->offload_measured_h2d + c->offload_measured_d2h
                              : -1;
    a->nreplicas = c->nreplicas;
    a->replicas_predicted_min = c->replicas_predicted_min;
    a->replicas_measured_min = c->replicas_measured_min;
}

bool gq_place_same_map(const gq_place_map *a, const gq_place_map *b)
{
    if (!same_pairs(a, b) || a->nworkers != b->nworkers || a->nreplicas != b->nreplicas)
        return false;
    for (int i = 0; i < a->nworkers; i++)
        if (a->workers[i].gpu != b->workers[i].gpu)
            return false;
    for (int r = 0; r < a->nreplicas; r++) {
        if (a->replicas[r].ngpus != b->replicas[r].ngpus)
            return false;
        for (int i = 0; i < a->replicas[r].ngpus; i++)
            if (a->replicas[r].gpus[i] != b->replicas[r].gpus[i])
                return false;
    }
    return true;
}

/* Which attempt to keep: the best measured pairs aggregate (valid), then
 * offload, then replicas; a later attempt wins only by more than the
 * tolerance, so noise does not flip the answer. */
bool gq_place_attempt_better(const gq_place_attempt *a, const gq_place_attempt *b, double tol)
{
    if (a->npairs) {
        double x = a->pairs_valid ? a->pairs_measured : -1, y = b->pairs_valid ? b->pairs_measured : -1;
        if (x > y * (1 + tol) || x < y * (1 - tol))
            return x > y;
    }
    if (a->nworkers) {
        if (a->offload_measured > b->offload_measured * (1 + tol) ||
            a->offload_measured < b->offload_measured * (1 - tol))
            return a->offload_measured > b->offload_measured;
    }
    if (a->nreplicas)
        return a->replicas_measured_min > b->replicas_measured_min * (1 + tol);
    return false;
}

void gq_place_note(gq_place_result *res, const char *fmt, ...)
{
    if (res->nnotes >= (int)(sizeof res->notes / sizeof res->notes[0]))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->notes[res->nnotes++], sizeof res->notes[0], fmt, ap);
    va_end(ap);
}
