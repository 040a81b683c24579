/* The placement path model (placement.h): GPU-set helpers, building the
 * model from records (alone rates, P2P and host-staged matrices, the shared
 * limits that concurrent groups revealed, performance domains derived from
 * the matrix), and learning limits from a verification's measurements. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/placement_internal.h"

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

bool gq_place_limit_is_gpu(gq_limit_kind k)
{
    return k == GQ_LIMIT_P2P || k == GQ_LIMIT_STAGED;
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
            else if (r->method == GQ_METHOD_DRIVER_STAGED)
                m->driver_staged[s][d] = fmax(m->driver_staged[s][d], v);
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
        return (r->method == GQ_METHOD_CE || r->method == GQ_METHOD_SM) ? m->p2p[s][d]
               : r->method == GQ_METHOD_DRIVER_STAGED                   ? m->driver_staged[s][d]
                                                                        : m->staged[s][d];
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
        gq_place_textf(ev, sizeof ev,
                       "measured together in group %d (%s): %.1f GB/s where alone they do %.1f (%s)", group,
                       rs->v[idx[0]].test, lsum, alonesum, detail);
        gq_place_model_add_limit(m, np2p ? GQ_LIMIT_P2P : GQ_LIMIT_STAGED, la, lb, lsum, ev, NULL);
    } else if (nh2d && nd2h) {
        gq_place_textf(ev, sizeof ev,
                       "both directions together in group %d (%s): %.1f GB/s in total, alone %.1f (%s)",
                       group, rs->v[idx[0]].test, allsum, alonesum, detail);
        gq_place_model_add_limit(m, GQ_LIMIT_DUPLEX, all, 0, allsum, ev, NULL);
    } else {
        gq_place_textf(ev, sizeof ev, "measured together in group %d (%s): %.1f GB/s, alone %.1f (%s)", group,
                       rs->v[idx[0]].test, lsum, alonesum, detail);
        gq_place_model_add_limit(m, nh2d ? GQ_LIMIT_H2D : GQ_LIMIT_D2H, la, 0, lsum, ev, NULL);
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

int gq_place_model_build_typed(gq_place_model *m, int ngpu, const gq_recordset *rs, const gq_domains *dom,
                               const gq_bottlenecks *bn, const gq_topo *topo, gq_err *err)
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
    gq_place_model_from_saved(m, dom, bn);
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

int gq_place_domain_of(const gq_place_model *m, int g)
{
    for (int d = 0; d < m->ndomains; d++)
        if (IN(m->domains[d], g))
            return d;
    return -1;
}

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
