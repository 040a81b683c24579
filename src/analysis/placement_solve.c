/* Placement solve (gq_place_solve): check the roles, choose the mapping
 * (placement_search.c) and the naive one, fill both with predictions and
 * the explanation of each choice, and note the findings. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/placement_internal.h"

static const char *limit_str(const gq_place_limit *l, char *buf, size_t n)
{
    char a[128], b[128];
    gq_gpuset_str(l->a, a, sizeof a);
    if (l->kind == GQ_LIMIT_P2P || l->kind == GQ_LIMIT_STAGED) {
        gq_gpuset_str(l->b, b, sizeof b);
        gq_place_textf(buf, n, "%s {%s}->{%s} <= %.1f GB/s",
                       l->kind == GQ_LIMIT_P2P ? "P2P" : "host-staged handoffs", a, b, l->capacity_gbps);
    } else if (l->kind == GQ_LIMIT_DUPLEX) {
        gq_place_textf(buf, n, "host both directions of {%s} <= %.1f GB/s in total", a, l->capacity_gbps);
    } else {
        gq_place_textf(buf, n, "host %s of {%s} <= %.1f GB/s", l->kind == GQ_LIMIT_H2D ? "h2d" : "d2h", a,
                       l->capacity_gbps);
    }
    return buf;
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

static void explain_binding(const gq_place_model *m, const gq_pflow_pred *p, const char *what, int npat,
                            char *buf, size_t n)
{
    char ls[200];
    const char *pl = npat == 1 ? "" : "s";
    if (p->binding == -2)
        gq_place_textf(buf, n, "no measured figure for this path");
    else if (p->binding == -1)
        gq_place_textf(buf, n, "with %d %s%s at once %.1f GB/s: no shared limit binds", npat, what, pl,
                       p->gbps);
    else if (p->binding == -3)
        gq_place_textf(buf, n, "with %d %s%s at once %.1f GB/s: its GPU's own link is shared by %d flows",
                       npat, what, pl, p->gbps, p->sharing);
    else
        gq_place_textf(buf, n, "with %d %s%s at once %.1f GB/s: held by %s (limit #%d), shared by %d flows",
                       npat, what, pl, p->gbps, limit_str(&m->limits[p->binding], ls, sizeof ls), p->binding,
                       p->sharing);
}

static void explain_pair(const gq_place_model *m, const gq_pflow *f, const gq_pflow_pred *p, int npat,
                         char *buf, size_t n)
{
    char path[160], alone[160], pred[260], a[64], b[64];
    int ds = gq_place_domain_of(m, f->src), dd = gq_place_domain_of(m, f->dst);
    if (f->kind == GQ_PF_P2P) {
        if (ds >= 0 && ds == dd)
            gq_place_textf(path, sizeof path, "P2P within domain {%s}",
                           gq_gpuset_str(m->domains[ds], a, sizeof a));
        else
            gq_place_textf(path, sizeof path, "P2P across domains {%s} -> {%s}",
                           ds >= 0 ? gq_gpuset_str(m->domains[ds], a, sizeof a) : "?",
                           dd >= 0 ? gq_gpuset_str(m->domains[dd], b, sizeof b) : "?");
        gq_place_textf(alone, sizeof alone, "alone %.1f GB/s (pairwise matrix)", p->alone);
    } else {
        gq_place_textf(path, sizeof path, "host-staged GPU %d -> host -> GPU %d (%s)", f->src, f->dst,
                       m->no_p2p[f->src][f->dst] ? "no P2P between them" : "no P2P figure for this pair");
        if (m->staged[f->src][f->dst] > 0)
            gq_place_textf(alone, sizeof alone, "alone %.1f GB/s (staged matrix)", p->alone);
        else
            gq_place_textf(alone, sizeof alone,
                           "alone %.1f GB/s (the slower of GPU %d d2h %.1f and GPU %d h2d %.1f)", p->alone,
                           f->src, m->d2h[f->src], f->dst, m->h2d[f->dst]);
    }
    explain_binding(m, p, "handoff", npat, pred, sizeof pred);
    gq_place_textf(buf, n, "%s; %s; %s", path, alone, pred);
}

static void fill_pairs(const gq_place_model *m, const int (*pairs)[2], int np, gq_place_map *map)
{
    gq_pflow f[GQ_PLACE_MAX_PAIRS] = {{0}};
    gq_pflow_pred p[GQ_PLACE_MAX_PAIRS];
    gq_place_pairs_to_flows(m, pairs, np, f);
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
    gq_place_score_workers(m, w, k, ph, pd);
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
        gq_place_textf(x->why, sizeof x->why, "h2d alone %.1f, %s; d2h alone %.1f, %s; %s", ph[i].alone, bh,
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
        int d = gq_place_domain_of(m, rep->gpus[0]);
        if (!any_real_domain(m))
            gq_place_textf(dom, sizeof dom, "(no P2P domains)");
        else if (d >= 0 && (g[r] & m->domains[d]) == g[r])
            gq_place_textf(dom, sizeof dom, "inside domain {%s}", gq_gpuset_str(m->domains[d], a, sizeof a));
        else
            gq_place_textf(dom, sizeof dom, "spans several domains");
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
        gq_place_textf(rep->why, sizeof rep->why,
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

void gq_place_note(gq_place_result *res, const char *fmt, ...)
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
            if (f.kind != GQ_PF_STAGED || !gq_place_limit_use(&probe, &f))
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
        gq_place_note(res, "the staged handoffs use %d host budget%s: %s", used, used == 1 ? "" : "s", text);
}

/* Host-staged handoffs are predicted at gpuqual's pipelined staging. Say what
 * the driver's own staged copy gave where it was measured (the pair where it
 * falls furthest below the pipelined figure): a stack that moves the
 * handoffs with cudaMemcpy or cudaMemcpyPeer gets that figure. */
static void note_driver_staged(const gq_place_model *m, gq_place_result *out)
{
    int ws = -1, wd = -1;
    for (int s = 0; s < m->ngpu; s++)
        for (int d = 0; d < m->ngpu; d++)
            if (m->driver_staged[s][d] > 0 && m->staged[s][d] > 0 &&
                (ws < 0 ||
                 m->driver_staged[s][d] / m->staged[s][d] < m->driver_staged[ws][wd] / m->staged[ws][wd])) {
                ws = s;
                wd = d;
            }
    if (ws < 0) {
        gq_place_note(out,
                      "staged handoffs are predicted at gpuqual's pipelined staging; the driver's own staged "
                      "copy (what cudaMemcpy/cudaMemcpyPeer get without P2P) was not measured");
        return;
    }
    gq_place_note(
        out,
        "staged handoffs are predicted at gpuqual's pipelined staging (GPU %d -> %d: %.1f GB/s alone); "
        "a stack that moves them with cudaMemcpy or cudaMemcpyPeer gets the driver's own staged copy, "
        "%.1f GB/s measured there (%.0f %%)",
        ws, wd, m->staged[ws][wd], m->driver_staged[ws][wd],
        100.0 * m->driver_staged[ws][wd] / m->staged[ws][wd]);
}

/* Prefill/decode pairs: the chosen and the naive (index order) mapping,
 * with notes on staged handoffs, domains and host budgets. */
static int solve_pairs(const gq_place_model *m, const gq_place_roles *r, const int *u, int nu,
                       gq_place_result *out, gq_err *err)
{
    int N = r->prefill, M = r->decode, K = N > M ? N : M;
    int pairs[GQ_PLACE_MAX_PAIRS][2];
    long tried = 0;
    bool exh = true;
    if (gq_place_search_pairs(m, u, nu, N, M, pairs, &tried, &exh) < 0)
        return gq_err_set(err, GQ_E_NOMEM, "placement: out of memory");
    out->candidates += (int)tried;
    out->exhaustive &= exh;
    fill_pairs(m, (const int(*)[2])pairs, K, &out->chosen);
    int naive[GQ_PLACE_MAX_PAIRS][2];
    for (int k = 0; k < K; k++) {
        naive[k][0] = u[k * N / K];
        naive[k][1] = u[N + k * M / K];
    }
    fill_pairs(m, (const int(*)[2])naive, K, &out->naive);
    int within = 0, nwithin = 0, nstaged = 0;
    out->staged_unmeasured = 0;
    for (int i = 0; i < K; i++) {
        const gq_place_pair *pp = &out->chosen.pairs[i];
        nstaged += pp->path == GQ_PF_STAGED;
        out->staged_unmeasured += pp->path == GQ_PF_STAGED && !m->no_p2p[pp->prefill][pp->decode];
        int d = gq_place_domain_of(m, out->chosen.pairs[i].prefill);
        within += d >= 0 && d == gq_place_domain_of(m, out->chosen.pairs[i].decode);
        d = gq_place_domain_of(m, out->naive.pairs[i].prefill);
        nwithin += d >= 0 && d == gq_place_domain_of(m, out->naive.pairs[i].decode);
    }
    out->all_staged = nstaged == K;
    /* handoffs staged because their pair has no P2P, apart from those staged for want of a figure */
    int no_p2p = nstaged - out->staged_unmeasured;
    if (out->staged_unmeasured)
        gq_place_note(out,
                      "%d of %d handoffs are planned host-staged because their GPU pair has no usable P2P "
                      "figure (not measured, or flagged): the topology does not say they lack P2P",
                      out->staged_unmeasured, K);
    if (no_p2p == K)
        gq_place_note(
            out, "every handoff is host-staged (GPU -> host memory -> GPU): there is no P2P path between "
                 "the chosen GPUs, so the host budgets carry every byte twice");
    else if (no_p2p)
        gq_place_note(out, "%d of %d handoffs are host-staged (no P2P between those GPUs)", no_p2p, K);
    if (nstaged)
        note_driver_staged(m, out);
    if (any_real_domain(m) && m->ndomains > 1)
        gq_place_note(out, "%d of %d handoffs stay inside a performance domain (the naive mapping: %d of %d)",
                      within, K, nwithin, K);
    note_budgets(m, out);
    if (same_pairs(&out->chosen, &out->naive))
        gq_place_note(out, "the naive mapping (GPUs in index order) is already as fast as any: it is kept");
    out->gain_pairs =
        out->naive.pairs_predicted > 0 ? out->chosen.pairs_predicted / out->naive.pairs_predicted : 0;
    return GQ_OK;
}

/* KV offload workers: the chosen set and the first usable GPUs. */
static int solve_offload(const gq_place_model *m, const gq_place_roles *r, const int *u, int nu,
                         gq_place_result *out, gq_err *err)
{
    int w[GQ_MAX_GPUS];
    long nc = 0;
    bool exh = true;
    int got = gq_place_search_workers(m, u, nu, r->offload, w, &nc, &exh);
    if (got < 0)
        return gq_err_set(err, GQ_E_NOMEM, "placement: out of memory");
    if (got < r->offload)
        return gq_err_set(err, GQ_E_USAGE, "placement: %d offload workers need %d usable GPUs; %d are usable",
                          r->offload, r->offload, nu);
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
    char a[96];
    gq_place_note(out,
                  "offload workers {%s}: %.1f GB/s host->GPU and %.1f GB/s GPU->host predicted with all of "
                  "them at once",
                  gq_gpuset_str(ws, a, sizeof a), out->chosen.offload_predicted_h2d,
                  out->chosen.offload_predicted_d2h);
    return GQ_OK;
}

/* Replicas: groups of the chosen cells (with pairs) or of the usable GPUs;
 * the naive replicas are consecutive items in index order. */
static int solve_replicas(const gq_place_model *m, const gq_place_roles *r, const int *u, int nu,
                          gq_place_result *out, gq_err *err)
{
    int R = r->replicas, nitems;
    gq_gpuset item[GQ_MAX_GPUS];
    bool by_pairs = out->chosen.npairs > 0;
    if (by_pairs) {
        nitems = out->chosen.npairs;
        for (int i = 0; i < nitems; i++)
            item[i] = BIT(out->chosen.pairs[i].prefill) | BIT(out->chosen.pairs[i].decode);
    } else {
        nitems = nu;
        for (int i = 0; i < nu; i++)
            item[i] = BIT(u[i]);
    }
    int assign[GQ_MAX_GPUS];
    long seen = 0;
    bool exh = true;
    int found = gq_place_search_replicas(m, item, nitems, R, assign, &seen, &exh);
    if (found < 0)
        return gq_err_set(err, GQ_E_NOMEM, "placement: out of memory");
    out->exhaustive &= exh;
    out->candidates += (int)seen;
    if (!found)
        return gq_err_set(err, GQ_E_USAGE,
                          "--replicas %d: the chosen cells share GPUs, so they cannot be split into %d "
                          "replicas; use a replica count that divides both --prefill and --decode evenly",
                          r->replicas, r->replicas);
    fill_replicas(m, item, assign, nitems, R, by_pairs, &out->chosen);
    int q = nitems / R, nassign[GQ_MAX_GPUS];
    gq_gpuset nitem[GQ_MAX_GPUS];
    for (int i = 0; i < nitems; i++) {
        nassign[i] = i / q < R ? i / q : -1;
        nitem[i] = by_pairs ? BIT(out->naive.pairs[i].prefill) | BIT(out->naive.pairs[i].decode) : item[i];
    }
    fill_replicas(m, nitem, nassign, nitems, R, by_pairs, &out->naive);
    out->gain_replicas = out->naive.replicas_predicted_min > 0
                             ? out->chosen.replicas_predicted_min / out->naive.replicas_predicted_min
                             : 0;
    return GQ_OK;
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
    if (r->prefill && (rc = solve_pairs(m, r, u, nu, out, err)) != GQ_OK)
        return rc;
    if (r->offload && (rc = solve_offload(m, r, u, nu, out, err)) != GQ_OK)
        return rc;
    if (r->replicas && (rc = solve_replicas(m, r, u, nu, out, err)) != GQ_OK)
        return rc;
    if (!out->exhaustive)
        gq_place_note(
            out,
            "too many candidate mappings to compare all: a heuristic (cells per domain, then pairwise swaps) "
            "chose this one");
    gq_place_warn_budgets(m, out);
    return GQ_OK;
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
