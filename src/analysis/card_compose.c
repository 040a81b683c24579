/* The card's figures from a run (analysis/card_compose.h): identity links,
 * matrices, domains, host paths, concurrent pairs, sweeps and latency, as
 * typed structs. Pure: reads records and the topology; never measures. */
#include "analysis/card_compose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/probes.h"

#define MAXG GQ_MAX_GPUS

static bool usable(const gq_record *r)
{
    return gq_domains_usable(r, NULL);
}

static bool is_sweep(const char *test)
{
    return !strncmp(test, GQ_TID_SWEEP_PREFIX, strlen(GQ_TID_SWEEP_PREFIX));
}

static bool main_candidate(const gq_record *r)
{
    return !r->is_latency && !is_sweep(r->test);
}

static uint64_t main_bytes(const gq_recordset *rs)
{
    /* The most common buffer size among bandwidth records that are not sweeps
     * (a sweep point of the same size must not add to the count). */
    uint64_t best = 0;
    int bestc = 0;
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (!main_candidate(r))
            continue;
        int c = 0;
        for (int k = 0; k < rs->n; k++)
            c += rs->v[k].bytes == r->bytes && main_candidate(&rs->v[k]);
        if (c > bestc) {
            bestc = c;
            best = r->bytes;
        }
    }
    return best;
}

/* The links above the GPUs: every switch or root port on a selected GPU's
 * path to the root whose uplink discovery read, once, with the GPUs behind
 * it. Read by discovery (sysfs), never under load. */
static void uplinks(const gq_topo *t, gq_card_figures *f)
{
    uint64_t behind[GQ_MAX_PCI_NODES] = {0};
    const int *sel = f->sel, n = f->n;
    for (int k = 0; k < n && k < 64; k++) {
        int node = -1;
        for (int i = 0; i < t->npci && node < 0; i++)
            if (t->pci[i].kind == GQ_PCI_GPU && t->pci[i].gpu == sel[k])
                node = i;
        for (int p = node >= 0 ? t->pci[node].parent : -1, guard = 0;
             p >= 0 && p < t->npci && guard < GQ_MAX_PCI_NODES; p = t->pci[p].parent, guard++)
            if (t->pci[p].kind == GQ_PCI_BRIDGE && t->pci[p].link_width > 0 && t->pci[p].link_width_max > 0)
                behind[p] |= (uint64_t)1 << k;
    }
    for (int i = 0; i < t->npci && i < GQ_MAX_PCI_NODES; i++) {
        if (!behind[i])
            continue;
        gq_card_uplink *u = &f->uplinks[f->nuplinks++];
        u->node = i;
        for (int k = 0; k < n && k < 64; k++)
            if (behind[i] >> k & 1)
                u->gpus[u->ngpus++] = sel[k];
    }
}

/* Each GPU's PCIe link: links slow down at idle, so what the stress run saw
 * under load is preferred. */
static void pcie_links(const gq_topo *t, const double (*loaded)[2], gq_card_figures *f)
{
    for (int k = 0; k < f->n; k++) {
        const gq_gpu_info *g = &t->gpu[f->sel[k]];
        f->pcie_gen[k] = g->pcie_gen_cur;
        f->pcie_width[k] = g->pcie_width_cur;
        double lg = loaded ? loaded[f->sel[k]][0] : NAN, lw = loaded ? loaded[f->sel[k]][1] : NAN;
        if (isfinite(lg) && lg > 0 && isfinite(lw) && lw > 0) {
            f->pcie_gen[k] = (int)lg;
            f->pcie_width[k] = (int)lw;
            f->pcie_loaded[k] = true;
        }
    }
}

static bool any_cell(const gq_pairmatrix *pm)
{
    for (int i = 0; i < pm->n; i++)
        for (int j = 0; j < pm->n; j++)
            if (i != j && isfinite(pm->gbps[i][j]))
                return true;
    return false;
}

/* Pairwise matrices and the domains the read matrix shows; GQ_E_NOMEM when
 * out of memory (never a card with a matrix or its domains left out). */
static int matrices(const gq_topo *t, const gq_recordset *rs, gq_card_figures *f)
{
    static const char *const rtests[] = {GQ_TID_D2D_READ_CE, GQ_TID_D2D_STAGED, GQ_TID_D2D_READ_SM, NULL};
    static const char *const wtests[] = {GQ_TID_D2D_WRITE_CE, NULL};
    static const char *const dtests[] = {GQ_TID_D2D_DRIVER_STAGED, NULL};
    gq_pairmatrix_init(f->read, f->sel, f->n);
    gq_pairmatrix_init(f->write, f->sel, f->n);
    gq_pairmatrix_init(f->driver, f->sel, f->n);
    if (gq_pairmatrix_from_records(f->read, rs, rtests) < 0 ||
        gq_pairmatrix_from_records(f->write, rs, wtests) < 0 ||
        gq_pairmatrix_from_records(f->driver, rs, dtests) < 0)
        return GQ_E_NOMEM;
    f->any_read = any_cell(f->read);
    f->any_write = any_cell(f->write);
    f->any_driver = any_cell(f->driver);
    gq_domains_opts dopt;
    gq_domains_opts_default(&dopt);
    dopt.topo = t; /* to say why a GPU was set aside (its link) */
    gq_err e = {0};
    int rc = f->n >= 1 ? gq_domains_cluster(f->read, &dopt, f->dom, &e) : GQ_E_USAGE;
    f->have_dom = rc == GQ_OK;
    return rc == GQ_E_NOMEM ? rc : GQ_OK;
}

/* Why the run measured this host subset: the reason of the contention probe
 * (analysis/probes.h) with the same GPUs and direction, planned again from
 * the topology and the domains as the run planned it; NULL when no probe
 * has that set. */
static const char *subset_why(const gq_probe_plan *pp, const gq_bn_obs *ob)
{
    for (int i = 0; pp && i < pp->n; i++) {
        const gq_probe *pr = &pp->v[i];
        if (pr->kind == GQ_PROBE_MATRIX || pr->direction != ob->direction || pr->ngpus != ob->ngpus)
            continue;
        bool same = true;
        for (int k = 0; k < pr->ngpus && same; k++)
            same = pr->gpus[k] == ob->gpus[k];
        if (same && pr->why[0])
            return pr->why;
    }
    return NULL;
}

static bool is_host_set(const char *test)
{
    return !strcmp(test, GQ_TID_H2D_SET) || !strcmp(test, GQ_TID_D2H_SET);
}

/* Host subsets: the contention probes' sets (not the placement step's
 * verification sets), each set and direction once. */
static bool subset_listed(const gq_bottlenecks *bn, int upto, const gq_bn_obs *ob)
{
    if (!is_host_set(ob->test))
        return false;
    for (int i = 0; i < upto; i++) {
        const gq_bn_obs *o = &bn->obs[i];
        if (o->p2p || o->direction != ob->direction || o->ngpus != ob->ngpus || !is_host_set(o->test))
            continue;
        if (!memcmp(o->gpus, ob->gpus, sizeof(int) * (size_t)ob->ngpus))
            return false;
    }
    return true;
}

/* The host subsets and the reason each was measured: the contention probes
 * planned again as the run planned them, from the measured domains or, where
 * the matrix gave none, the domains the tree suggests (exec/card_run.c). */
static int host_subsets(const gq_topo *t, gq_card_figures *f)
{
    const gq_bottlenecks *bn = &f->bn;
    f->subset = calloc((size_t)bn->nobs + 1, sizeof *f->subset);
    f->subset_why = calloc((size_t)bn->nobs + 1, sizeof *f->subset_why);
    if (!f->subset || !f->subset_why)
        return GQ_E_NOMEM;
    const gq_domains *dom = f->have_dom ? f->dom : NULL;
    gq_probe_plan plan = {0}, *pp = NULL;
    gq_domains *assumed = dom ? NULL : calloc(1, sizeof *assumed);
    if (assumed)
        gq_probes_assume_domains(t, f->sel, f->n, assumed);
    gq_err e = {0};
    if ((dom || assumed) &&
        gq_probes_plan_contention(&plan, t, f->sel, f->n, dom ? dom : assumed, &e) == GQ_OK)
        pp = &plan;
    free(assumed);
    for (int i = 0; i < bn->nobs; i++) {
        const gq_bn_obs *ob = &bn->obs[i];
        if (ob->p2p || ob->ngpus < 2 || ob->ngpus >= f->n || !subset_listed(bn, i, ob))
            continue;
        const char *why = subset_why(pp, ob);
        snprintf(f->subset_why[f->nsubsets], sizeof f->subset_why[0], "%s", why ? why : "");
        f->subset[f->nsubsets++] = i;
    }
    gq_probe_plan_free(&plan);
    return GQ_OK;
}

/* The host paths: all at once (the largest host group of each direction
 * covering every GPU), the subsets, and both directions at once. */
static int host(const gq_topo *t, const gq_recordset *rs, gq_card_figures *f)
{
    for (int d = 0; d < 2; d++) {
        f->host_all[d] = -1;
        for (int i = 0; i < f->bn.nobs; i++) {
            const gq_bn_obs *ob = &f->bn.obs[i];
            if (!ob->p2p && ob->direction == (d ? GQ_DIR_D2H : GQ_DIR_H2D) && ob->ngpus == f->n && f->n >= 2)
                f->host_all[d] = i;
        }
    }
    int rc = host_subsets(t, f);
    /* Both directions at once (bidirectional_set): direction aggregates and their sum. */
    f->bidir_agg[0] = f->bidir_agg[1] = f->bidir_sum = NAN;
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (strcmp(r->test, GQ_TID_BIDIR_SET) || !usable(r))
            continue;
        if (r->sum)
            f->bidir_sum = r->value.median;
        else if (r->aggregate && (r->direction == GQ_DIR_H2D || r->direction == GQ_DIR_D2H))
            f->bidir_agg[r->direction == GQ_DIR_D2H] = r->value.median;
    }
    f->have_bidir = isfinite(f->bidir_sum) || isfinite(f->bidir_agg[0]);
    return rc;
}

/* Concurrent pairs: the largest group within a domain and across, when a
 * domain holds 2+ GPUs (within and across mean something). */
static void pairs(gq_card_figures *f)
{
    f->pairs_within = f->pairs_across = -1;
    f->multi = false;
    for (int k = 0; f->have_dom && k < f->dom->ndomains; k++)
        f->multi |= f->dom->size[k] >= 2;
    for (int i = 0; i < f->bn.nobs; i++) {
        const gq_bn_obs *ob = &f->bn.obs[i];
        if (!ob->p2p)
            continue;
        if (ob->p2p_kind == GQ_P2P_WITHIN &&
            (f->pairs_within < 0 || ob->npairs > f->bn.obs[f->pairs_within].npairs))
            f->pairs_within = i;
        if (ob->p2p_kind == GQ_P2P_ACROSS &&
            (f->pairs_across < 0 || ob->npairs > f->bn.obs[f->pairs_across].npairs))
            f->pairs_across = i;
    }
}

double gq_card_pair_isolated(const gq_pairmatrix *m, int src, int dst)
{
    double v = NAN;
    for (int i = 0; i < m->n; i++)
        for (int j = 0; j < m->n; j++)
            if (m->gpu[i] == src && m->gpu[j] == dst)
                v = m->gbps[i][j];
    return v;
}

static int cmp_rec_bytes(const void *x, const void *y)
{
    const gq_record *a = *(const gq_record *const *)x, *b = *(const gq_record *const *)y;
    return (a->bytes > b->bytes) - (a->bytes < b->bytes);
}

/* One sweep: the points of r's test and path (marked done), by size, and their fit. */
static void sweep_one(const gq_recordset *rs, int i, bool *done, const gq_record **pts, gq_card_sweep *s)
{
    const gq_record *r = &rs->v[i];
    int np = 0;
    for (int k = i; k < rs->n; k++) {
        const gq_record *q = &rs->v[k];
        if (done[k] || strcmp(q->test, r->test) || q->aggregate || q->sum || q->src.kind != r->src.kind ||
            q->src.index != r->src.index || q->dst.kind != r->dst.kind || q->dst.index != r->dst.index)
            continue;
        done[k] = true;
        pts[np++] = q;
    }
    qsort(pts, (size_t)np, sizeof *pts, cmp_rec_bytes);
    double g[GQ_CARD_SWEEP_MAX_POINTS];
    for (int k = 0; k < np && k < GQ_CARD_SWEEP_MAX_POINTS; k++) {
        s->bytes[s->np] = pts[k]->bytes;
        s->gbps[s->np] = usable(pts[k]) ? pts[k]->value.median : NAN;
        g[s->np] = isfinite(s->gbps[s->np]) ? s->gbps[s->np] : 0;
        s->np++;
    }
    gq_err e;
    s->have_fit = gq_sweepfit_compute(s->bytes, g, s->np, &s->fit, &e) == GQ_OK && isfinite(s->fit.a_us) &&
                  isfinite(s->fit.bw_gbps) && isfinite(s->fit.half_bytes) && isfinite(s->fit.rms_rel);
    char label[128];
    gq_endpoint_str(r->src, s->src, sizeof s->src);
    gq_endpoint_str(r->dst, s->dst, sizeof s->dst);
    if (r->direction == GQ_DIR_P2P)
        snprintf(label, sizeof label, "GPU %d → GPU %d", r->src.index, r->dst.index);
    else if (r->direction == GQ_DIR_H2D)
        snprintf(label, sizeof label, "host → GPU %d", r->dst.index);
    else
        snprintf(label, sizeof label, "GPU %d → host", r->src.index);
    snprintf(s->label, sizeof s->label, "%s", label);
    s->test = r->test + strlen(GQ_TID_SWEEP_PREFIX);
}

/* The sweeps, each path once, the fastest and the slowest path named. */
static int sweeps(const gq_recordset *rs, gq_card_figures *f)
{
    bool *done = calloc((size_t)rs->n + 1, 1);
    const gq_record **pts = calloc((size_t)rs->n + 1, sizeof *pts);
    f->sweeps = calloc(GQ_CARD_MAX_SWEEPS, sizeof *f->sweeps);
    double asym[GQ_CARD_MAX_SWEEPS];
    int rc = done && pts && f->sweeps ? GQ_OK : GQ_E_NOMEM;
    for (int i = 0; rc == GQ_OK && i < rs->n && f->nsweeps < GQ_CARD_MAX_SWEEPS; i++) {
        const gq_record *r = &rs->v[i];
        if (done[i] || !is_sweep(r->test) || r->aggregate || r->sum || r->is_latency)
            continue;
        gq_card_sweep *s = &f->sweeps[f->nsweeps];
        sweep_one(rs, i, done, pts, s);
        double mx = 0;
        for (int k = 0; k < s->np; k++)
            mx = isfinite(s->gbps[k]) && s->gbps[k] > mx ? s->gbps[k] : mx;
        asym[f->nsweeps++] = s->have_fit ? s->fit.bw_gbps : mx;
    }
    if (f->nsweeps >= 2) {
        int hi = 0, lo = 0;
        for (int k = 1; k < f->nsweeps; k++) {
            if (asym[k] > asym[hi])
                hi = k;
            if (asym[k] < asym[lo])
                lo = k;
        }
        for (int k = 0; hi != lo && k < f->nsweeps; k++) {
            if (k != hi && k != lo)
                continue;
            char l[160];
            snprintf(l, sizeof l, "%s path: %s", k == hi ? "fastest" : "slowest", f->sweeps[k].label);
            memcpy(f->sweeps[k].label, l, sizeof l);
        }
    }
    free(done);
    free(pts);
    return rc;
}

/* Latency by position in sel: host<->GPU and GPU<->GPU pointer chases. */
static void latency(const gq_recordset *rs, gq_card_figures *f)
{
    int pos[MAXG];
    for (int k = 0; k < MAXG; k++) {
        pos[k] = -1;
        f->lat_host[k] = NAN;
        for (int l = 0; l < f->n; l++)
            f->lat_p2p[l][k] = NAN;
    }
    for (int k = 0; k < f->n; k++)
        pos[f->sel[k]] = k;
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (!r->is_latency || !r->valid || r->exec_gpu < 0 || r->exec_gpu >= MAXG)
            continue;
        if (!strcmp(r->test, GQ_TID_HOST_LATENCY_SM) && pos[r->exec_gpu] >= 0) {
            f->lat_host[pos[r->exec_gpu]] = r->value.median;
            f->lat_host_any = true;
        } else if (!strcmp(r->test, GQ_TID_D2D_LATENCY_SM)) {
            int other = r->src.kind == GQ_EP_GPU && r->src.index != r->exec_gpu ? r->src.index : r->dst.index;
            if (other >= 0 && other < MAXG && pos[r->exec_gpu] >= 0 && pos[other] >= 0) {
                f->lat_p2p[pos[r->exec_gpu]][pos[other]] = r->value.median;
                f->lat_p2p_any = true;
            }
        }
    }
}

/* A document that is not a card (a run, domains, sweep ...) has no plan: each
 * step is done when the document holds its records (or section), else
 * skipped as not applicable, with a note saying the document has none. */
static void infer_plan(const gq_recordset *rs, bool stress, bool placement, int ngpu, gq_card_plan *p)
{
    bool have[GQ_CS_COUNT] = {[GQ_CS_IDENTITY] = true};
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        const char *t = r->test;
        if (is_sweep(t))
            have[GQ_CS_SWEEP] = true;
        else if (r->is_latency)
            have[GQ_CS_LATENCY] = true;
        else if (!strcmp(t, GQ_TID_BIDIR_SET))
            have[GQ_CS_BIDIR] = true;
        else if (r->src.kind == GQ_EP_GPU && r->dst.kind == GQ_EP_GPU)
            have[r->aggregate || !strcmp(t, GQ_TID_PAIRS_READ_CE) ? GQ_CS_CONTENTION : GQ_CS_MATRIX] = true;
        else if (r->aggregate)
            have[GQ_CS_CONTENTION] = true;
        else
            have[GQ_CS_HOST] = true;
    }
    have[GQ_CS_STRESS] = stress;
    have[GQ_CS_PLACEMENT] = placement;
    memset(p, 0, sizeof *p);
    p->level = GQ_LEVEL_STANDARD;
    for (int s = 0; s < GQ_CS_COUNT; s++) {
        gq_card_step *st = &p->step[s];
        st->run = have[s];
        st->status = have[s] ? GQ_CSS_DONE : GQ_CSS_SKIPPED;
        if (have[s])
            continue;
        bool pair = s == GQ_CS_MATRIX || s == GQ_CS_CONTENTION || s == GQ_CS_PLACEMENT;
        st->reason = pair && ngpu < 2 ? GQ_EVR_ONE_GPU : GQ_EVR_NOT_APPLICABLE;
        snprintf(st->note, sizeof st->note, "the document holds no such measurement");
    }
}

void gq_card_figures_free(gq_card_figures *f)
{
    if (!f)
        return;
    gq_bottlenecks_free(&f->bn);
    free(f->uplinks);
    free(f->read);
    free(f->write);
    free(f->driver);
    free(f->dom);
    free(f->subset);
    free(f->subset_why);
    free(f->sweeps);
    free(f->lat_p2p);
    memset(f, 0, sizeof *f);
}

int gq_card_figures_make(const gq_card_figures_in *in, gq_card_figures *f, gq_err *err)
{
    memset(f, 0, sizeof *f);
    const gq_topo *t = in->topo;
    const gq_recordset *rs = in->rs;
    f->read = calloc(1, sizeof *f->read);
    f->write = calloc(1, sizeof *f->write);
    f->driver = calloc(1, sizeof *f->driver);
    f->dom = calloc(1, sizeof *f->dom);
    f->uplinks = calloc(GQ_MAX_PCI_NODES, sizeof *f->uplinks);
    f->lat_p2p = calloc(MAXG, sizeof *f->lat_p2p);
    if (!f->read || !f->write || !f->driver || !f->dom || !f->uplinks || !f->lat_p2p) {
        gq_card_figures_free(f);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory composing the card");
    }
    if (!t || !rs) {
        gq_card_figures_free(f);
        return gq_err_set(err, GQ_E_USAGE, "the card needs a topology and records");
    }
    if (in->opts && in->opts->ngpus > 0) {
        f->n = in->opts->ngpus;
        memcpy(f->sel, in->opts->gpus, sizeof(int) * (size_t)f->n);
    } else {
        for (int k = 0; k < t->ngpu && k < MAXG; k++)
            f->sel[f->n++] = k;
    }
    f->bytes = in->bytes ? in->bytes : main_bytes(rs);
    if (in->plan)
        f->plan = *in->plan;
    else
        infer_plan(rs, in->have_stress, in->have_placement, f->n, &f->plan);
    pcie_links(t, in->loaded_pcie, f);
    uplinks(t, f);
    if (matrices(t, rs, f) == GQ_E_NOMEM) {
        gq_card_figures_free(f);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    }
    gq_bn_opts bo;
    gq_bn_opts_default(&bo);
    bo.bytes = f->bytes;
    gq_err e = {0};
    if (gq_bottlenecks_infer(rs, t, f->have_dom ? f->dom : NULL, &bo, &f->bn, &e) != GQ_OK) {
        gq_card_figures_free(f);
        return gq_err_set(err, GQ_E_NOMEM, "%s", e.msg);
    }
    int rc = host(t, rs, f);
    pairs(f);
    if (rc == GQ_OK)
        rc = sweeps(rs, f);
    latency(rs, f);
    if (rc != GQ_OK) {
        gq_card_figures_free(f);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory composing the card");
    }
    return GQ_OK;
}
