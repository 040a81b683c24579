/* Placement search: choosing prefill/decode pairs, offload workers and
 * replica groups by predicted figure, exhaustively when the candidates are
 * few, by heuristics beyond. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/placement_internal.h"

/* Exhaustive search up to this many candidate mappings; beyond it, a heuristic. */
#define EXHAUSTIVE_MAX 200000L
/* Predictions the local search may spend beyond its starting point. */
#define LOCAL_SEARCH_BUDGET 4000

static long binom(int n, int k)
{
    if (k < 0 || k > n)
        return 0;
    double r = 1;
    for (int i = 1; i <= k; i++)
        r = r * (n - k + i) / i;
    return r > 1e15 ? (long)1e15 : (long)(r + 0.5);
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

/* Best-first with ties: a candidate is "as good" as the best when its figure
 * is within the tolerance; among those, the next criterion decides. */
static long pick_best(const gq_place_score *s, long n, double tol, const long *tiebreak)
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

static gq_place_score score_pairs(const gq_place_model *m, const int (*pairs)[2], int np, gq_pflow_pred *pred)
{
    gq_pflow f[GQ_PLACE_MAX_PAIRS] = {{0}};
    gq_pflow_pred tmp[GQ_PLACE_MAX_PAIRS];
    if (!pred)
        pred = tmp;
    gq_place_pairs_to_flows(m, pairs, np, f);
    gq_place_score s = {.agg = gq_place_predict(m, f, np, pred), .min = INFINITY};
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
    gq_place_score *scores;
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
        gq_place_score *s = realloc(st->scores, (size_t)cap * sizeof *s);
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
        int d = gq_place_domain_of(st->m, pairs[i][0]);
        cross += d < 0 || d != gq_place_domain_of(st->m, pairs[i][1]);
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

/* pd_heuristic's start: N prefill GPUs into P and M decode GPUs into D, cell by cell inside each
 * domain, then the leftovers in index order, each side sorted; returns the GPUs used. */
static gq_gpuset pd_initial_roles(const gq_place_model *m, const int *u, int nu, int N, int M, int *P, int *D)
{
    int np = 0, nd = 0;
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
    return used;
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
    int P[GQ_MAX_GPUS], D[GQ_MAX_GPUS];
    gq_gpuset used = pd_initial_roles(m, u, nu, N, M, P, D);
    for (int k = 0; k < K; k++) {
        pairs[k][0] = P[k * N / K];
        pairs[k][1] = D[k * M / K];
    }
    gq_pflow_pred pred[GQ_PLACE_MAX_PAIRS];
    gq_place_score cur = score_pairs(m, (const int(*)[2])pairs, K, pred);
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
                gq_place_score sc = score_pairs(m, (const int(*)[2])trial, K, tp);
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

int gq_place_search_workers(const gq_place_model *m, const int *u, int nu, int K, int *w, long *ncand,
                            bool *exh)
{
    if (K <= 0 || K > nu) /* K > nu: nothing to choose; the caller reports it */
        return 0;
    long n = binom(nu, K);
    if (n <= EXHAUSTIVE_MAX) {
        gq_place_score *sc = malloc((size_t)n * sizeof *sc);
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
            sc[i] = gq_place_score_workers(m, ws, K, NULL, NULL);
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
        gq_place_score bs = {-1, -1};
        long bk = 0;
        for (int i = 0; i < nu; i++) {
            if (IN(s, u[i]))
                continue;
            w[k] = u[i];
            gq_place_score sc = gq_place_score_workers(m, w, k + 1, NULL, NULL);
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
            int da = gq_place_domain_of(c->m, __builtin_ctzll(c->item[order[j - 1]]));
            int db = gq_place_domain_of(c->m, __builtin_ctzll(c->item[order[j]]));
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

int gq_place_search_pairs(const gq_place_model *m, const int *u, int nu, int N, int M, int (*pairs)[2],
                          long *candidates, bool *exhaustive)
{
    if (log_count_pd(nu, N, M) > log((double)EXHAUSTIVE_MAX)) {
        pd_heuristic(m, u, nu, N, M, pairs, candidates);
        *exhaustive = false;
        return GQ_OK;
    }
    pd_state st = {.m = m};
    enumerate_pd(u, nu, N, M, pd_score_visit, &st);
    if (st.oom || !st.n) {
        free(st.scores);
        free(st.crossing);
        return -1;
    }
    /* Among equals: fewer handoffs crossing a domain boundary (a measured
     * shared budget, even where it does not bind), then the first in index
     * order. */
    for (long i = 0; i < st.n; i++)
        st.crossing[i] = st.crossing[i] * st.n + i;
    long pick = pick_best(st.scores, st.n, m->tolerance, st.crossing);
    *candidates = st.n;
    free(st.scores);
    free(st.crossing);
    pd_state f = {.m = m, .target = pick};
    enumerate_pd(u, nu, N, M, pd_fetch_visit, &f);
    memcpy(pairs, f.pairs, sizeof pairs[0] * (size_t)f.np);
    *exhaustive = true;
    return GQ_OK;
}

int gq_place_search_replicas(const gq_place_model *m, const gq_gpuset *items, int nitems, int R, int *assign,
                             long *candidates, bool *exhaustive)
{
    rep_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    c->m = m;
    c->R = R;
    c->nitems = nitems;
    memcpy(c->item, items, sizeof items[0] * (size_t)nitems);
    c->q = c->nitems / c->R;
    /* Partitions of the items: choose R*q of them, then split into R
     * unordered groups of q. */
    double lparts = lgamma(c->nitems + 1.0) - lgamma(c->nitems - c->R * c->q + 1.0) -
                    c->R * lgamma(c->q + 1.0) - lgamma(c->R + 1.0);
    *exhaustive = lparts <= log((double)EXHAUSTIVE_MAX / 10);
    if (*exhaustive) {
        c->budget = EXHAUSTIVE_MAX;
        rep_search(c);
    } else {
        rep_structured(c);
    }
    *candidates = c->seen;
    int found = c->have;
    if (found)
        memcpy(assign, c->best_assign, sizeof assign[0] * (size_t)nitems);
    free(c);
    return found;
}
