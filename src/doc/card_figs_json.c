/* A card document decoded for its renderers (doc/card_figs.h): the typed
 * card, and every field the Markdown card, the summary and the HTML page
 * print, read by key here and nowhere else. A field absent or of another type
 * reads as the renderers read it from the JSON: NAN, NULL, false, 0 entries. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "doc/card_codec.h"
#include "doc/card_figs.h"
#include "doc/json_get.h"

/* The decoder's state: the document being filled, and whether memory ran out
 * (every later read is skipped, and the decode fails). */
typedef struct cfd {
    gq_card_doc *d;
    bool oom;
} cfd;

/* n zeroed bytes owned by the document; NULL (and oom) when out of memory. */
static void *cf_alloc(cfd *x, size_t n)
{
    gq_card_doc *d = x->d;
    if (x->oom)
        return NULL;
    if (d->nblocks == d->capblocks) {
        int cap = d->capblocks ? 2 * d->capblocks : 32;
        void **p = realloc(d->blocks, (size_t)cap * sizeof *p);
        if (!p) {
            x->oom = true;
            return NULL;
        }
        d->blocks = p;
        d->capblocks = cap;
    }
    void *b = calloc(1, n ? n : 1);
    if (!b) {
        x->oom = true;
        return NULL;
    }
    d->blocks[d->nblocks++] = b;
    return b;
}

/* An array of n elements of size each (n <= 0: NULL, no allocation). */
static void *cf_array(cfd *x, int n, size_t size)
{
    return n > 0 ? cf_alloc(x, (size_t)n * size) : NULL;
}

/* o[k] when a string, copied whole (up to its first NUL, as it prints); else NULL. */
static const char *cf_str(cfd *x, const json_t *o, const char *k)
{
    const char *s = gq_json_get_str(o, k, NULL);
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *c = cf_alloc(x, n + 1);
    if (c)
        memcpy(c, s, n + 1);
    return c;
}

static const char *cf_strv(cfd *x, const json_t *v)
{
    if (!json_is_string(v))
        return NULL;
    const char *s = json_string_value(v);
    size_t n = strlen(s);
    char *c = cf_alloc(x, n + 1);
    if (c)
        memcpy(c, s, n + 1);
    return c;
}

static bool cf_true(const json_t *o, const char *k)
{
    return json_is_true(json_object_get(o, k));
}

static bool cf_false(const json_t *o, const char *k)
{
    return json_is_false(json_object_get(o, k));
}

/* The numbers of the list a (NAN where not a number), at most max. */
static gq_cf_nums cf_nums(cfd *x, const json_t *a, int max)
{
    gq_cf_nums r = {0, NULL};
    int n = (int)json_array_size(a);
    if (n > max)
        n = max;
    r.v = cf_array(x, n, sizeof *r.v);
    if (!r.v)
        return r;
    for (int i = 0; i < n; i++) {
        const json_t *v = json_array_get(a, (size_t)i);
        r.v[i] = json_is_number(v) ? json_number_value(v) : NAN;
    }
    r.n = n;
    return r;
}

/* The entries of the list a as GPU indices, every one. */
static gq_cf_ints cf_ints(cfd *x, const json_t *a)
{
    gq_cf_ints r = {0, NULL, NULL};
    int n = (int)json_array_size(a);
    r.v = cf_array(x, n, sizeof *r.v);
    r.is_int = cf_array(x, n, sizeof *r.is_int);
    if (!r.v || !r.is_int)
        return r;
    for (int i = 0; i < n; i++) {
        const json_t *v = json_array_get(a, (size_t)i);
        r.v[i] = (long long)json_integer_value(v);
        r.is_int[i] = json_is_integer(v);
    }
    r.n = n;
    return r;
}

/* A square matrix (see gq_cf_matrix). */
static void cf_matrix(cfd *x, const json_t *m, gq_cf_matrix *out)
{
    out->present = json_is_object(m);
    out->id = cf_str(x, m, "id");
    out->title = cf_str(x, m, "title");
    out->unit = cf_str(x, m, "unit");
    out->staged = cf_true(m, "staged");
    const json_t *g = json_object_get(m, "gpus"), *v = json_object_get(m, "values");
    if (!json_is_array(g) || !json_is_array(v))
        return;
    int n = (int)json_array_size(g);
    if (n < 1 || n > GQ_MAX_GPUS || (int)json_array_size(v) != n)
        return;
    for (int i = 0; i < n; i++) {
        const json_t *row = json_array_get(v, (size_t)i);
        if (!json_is_array(row) || (int)json_array_size(row) != n)
            return;
    }
    double *vals = cf_array(x, n * n, sizeof *vals);
    if (!vals)
        return;
    for (int i = 0; i < n; i++) {
        const json_t *gi = json_array_get(g, (size_t)i);
        out->label[i] = json_is_integer(gi) ? (long long)json_integer_value(gi) : (long long)i;
        const json_t *row = json_array_get(v, (size_t)i);
        for (int j = 0; j < n; j++) {
            const json_t *e = json_array_get(row, (size_t)j);
            vals[i * n + j] = json_is_number(e) ? json_number_value(e) : NAN;
        }
    }
    out->vals = vals;
    out->n = n;
}

static void cf_identity(cfd *x, const json_t *id, gq_cf_identity *out)
{
    out->present = json_is_object(id);
    if (!out->present)
        return;
    const json_t *gpus = json_object_get(id, "gpus");
    int n = (int)json_array_size(gpus);
    out->gpus = cf_array(x, n, sizeof *out->gpus);
    if (out->gpus) {
        for (int i = 0; i < n; i++) {
            const json_t *g = json_array_get(gpus, (size_t)i), *pc = json_object_get(g, "pcie");
            gq_cf_id_gpu *o = &out->gpus[i];
            o->index = (long long)json_integer_value(json_object_get(g, "index"));
            o->index_num = gq_json_get_num(g, "index");
            o->name = cf_str(x, g, "name");
            o->uuid = cf_str(x, g, "uuid");
            o->vbios = cf_str(x, g, "vbios");
            o->serial = cf_str(x, g, "serial");
            o->ecc_mode = cf_str(x, g, "ecc_mode");
            o->mig_mode = cf_str(x, g, "mig_mode");
            o->persistence_mode = cf_str(x, g, "persistence_mode");
            o->memory_mib = gq_json_get_num(g, "memory_mib");
            o->power_limit_w = gq_json_get_num(g, "power_limit_w");
            o->nvlinks = gq_json_get_num(g, "nvlinks");
            o->numa_node = gq_json_get_num(g, "numa_node");
            o->gen = gq_json_get_num(pc, "gen");
            o->width = gq_json_get_num(pc, "width");
            o->gen_max = gq_json_get_num(pc, "gen_max");
            o->width_max = gq_json_get_num(pc, "width_max");
            o->under_load = cf_true(pc, "under_load");
        }
        out->ngpus = n;
    }
    out->driver = cf_str(x, id, "driver");
    out->cuda_driver_str = cf_str(x, id, "cuda_driver_str");
    out->cuda_runtime_str = cf_str(x, id, "cuda_runtime_str");
    out->cpu = cf_str(x, id, "cpu");
    out->gpuqual = cf_str(x, id, "gpuqual");
    out->numa_nodes = gq_json_get_num(id, "numa_nodes");
    out->vm = cf_true(id, "vm");
}

static void cf_plan(cfd *x, const json_t *card, gq_card_doc *d)
{
    const json_t *plan = json_object_get(card, "plan");
    int n = (int)json_array_size(plan);
    d->plan = cf_array(x, n, sizeof *d->plan);
    if (!d->plan)
        return;
    for (int i = 0; i < n; i++) {
        const json_t *r = json_array_get(plan, (size_t)i);
        gq_cf_plan_step *o = &d->plan[i];
        o->title = json_is_string(json_object_get(r, "title")) ? cf_str(x, r, "title") : cf_str(x, r, "step");
        o->status = cf_str(x, r, "status");
        o->note = cf_str(x, r, "note");
        o->est_s = gq_json_get_num(r, "est_s");
        o->elapsed_s = gq_json_get_num(r, "elapsed_s");
    }
    d->nplan = n;
}

static void cf_matrices(cfd *x, const json_t *mats, gq_card_doc *d)
{
    int n = (int)json_array_size(mats);
    d->matrices = cf_array(x, n, sizeof *d->matrices);
    if (!d->matrices)
        return;
    for (int i = 0; i < n; i++)
        cf_matrix(x, json_array_get(mats, (size_t)i), &d->matrices[i]);
    d->nmatrices = n;
}

static void cf_pairs(cfd *x, const json_t *pairs, gq_cf_pairs *out)
{
    out->present = json_is_object(pairs);
    if (!out->present)
        return;
    static const char *const sides[] = {"within", "across"};
    for (int s = 0; s < 2; s++) {
        const json_t *o = json_object_get(pairs, sides[s]);
        gq_cf_pairs_side *v = &out->side[s];
        v->present = json_is_object(o);
        if (!v->present)
            continue;
        const json_t *pl = json_object_get(o, "pairs");
        int n = (int)json_array_size(pl);
        v->pair = cf_array(x, n, sizeof *v->pair);
        if (v->pair) {
            for (int i = 0; i < n; i++) {
                const json_t *p = json_array_get(pl, (size_t)i);
                v->pair[i][0] = (long long)json_integer_value(json_array_get(p, 0));
                v->pair[i][1] = (long long)json_integer_value(json_array_get(p, 1));
            }
            v->npairs = n;
        }
        v->gbps = cf_nums(x, json_object_get(o, "gbps"), GQ_CF_MAX_NUMS);
        v->isolated_gbps = cf_nums(x, json_object_get(o, "isolated_gbps"), GQ_CF_MAX_NUMS);
        v->aggregate_gbps = gq_json_get_num(o, "aggregate_gbps");
        v->invalid = cf_false(o, "valid");
    }
    out->ratio = gq_json_get_num(pairs, "ratio");
}

static void cf_subsets(cfd *x, const json_t *subs, gq_cf_host *out)
{
    int n = (int)json_array_size(subs);
    out->subsets = cf_array(x, n, sizeof *out->subsets);
    if (!out->subsets)
        return;
    for (int i = 0; i < n; i++) {
        const json_t *s = json_array_get(subs, (size_t)i);
        gq_cf_subset *o = &out->subsets[i];
        o->gpus = cf_ints(x, json_object_get(s, "gpus"));
        o->direction = cf_str(x, s, "direction");
        o->why = cf_str(x, s, "why");
        o->per_gpu = cf_nums(x, json_object_get(s, "per_gpu"), GQ_CF_MAX_NUMS);
        o->aggregate_gbps = gq_json_get_num(s, "aggregate_gbps");
        o->sum_alone_gbps = gq_json_get_num(s, "sum_alone_gbps");
        o->invalid = cf_false(s, "valid");
        o->contended = cf_true(s, "contended");
    }
    out->nsubsets = n;
}

static void cf_host(cfd *x, const json_t *host, gq_cf_host *out)
{
    out->present = json_is_object(host);
    if (!out->present)
        return;
    out->gpus = cf_ints(x, json_object_get(host, "gpus"));
    const json_t *alone = json_object_get(host, "alone"), *all = json_object_get(host, "all");
    out->alone_h2d = cf_nums(x, json_object_get(alone, "h2d"), GQ_CF_MAX_NUMS);
    out->alone_d2h = cf_nums(x, json_object_get(alone, "d2h"), GQ_CF_MAX_NUMS);
    out->all_h2d = cf_nums(x, json_object_get(all, "h2d"), GQ_CF_MAX_NUMS);
    out->all_d2h = cf_nums(x, json_object_get(all, "d2h"), GQ_CF_MAX_NUMS);
    out->have_all = json_is_object(all);
    out->all_h2d_aggregate_gbps = gq_json_get_num(all, "h2d_aggregate_gbps");
    out->all_d2h_aggregate_gbps = gq_json_get_num(all, "d2h_aggregate_gbps");
    out->all_h2d_invalid = cf_false(all, "h2d_valid");
    out->all_d2h_invalid = cf_false(all, "d2h_valid");
    const json_t *bi = json_object_get(host, "bidir");
    out->have_bidir = json_is_object(bi);
    out->bidir_h2d_aggregate_gbps = gq_json_get_num(bi, "h2d_aggregate_gbps");
    out->bidir_d2h_aggregate_gbps = gq_json_get_num(bi, "d2h_aggregate_gbps");
    out->bidir_sum_gbps = gq_json_get_num(bi, "sum_gbps");
    cf_subsets(x, json_object_get(host, "subsets"), out);
}

static void cf_sweeps(cfd *x, const json_t *sweeps, gq_card_doc *d)
{
    int n = (int)json_array_size(sweeps);
    d->sweeps = cf_array(x, n, sizeof *d->sweeps);
    if (!d->sweeps)
        return;
    for (int i = 0; i < n; i++) {
        const json_t *s = json_array_get(sweeps, (size_t)i), *fit = json_object_get(s, "fit");
        gq_cf_sweep *o = &d->sweeps[i];
        o->label = cf_str(x, s, "label");
        o->have_fit = json_is_object(fit);
        o->fixed_us = gq_json_get_num(fit, "fixed_us");
        o->asymptotic_gbps = gq_json_get_num(fit, "asymptotic_gbps");
        o->half_bytes = gq_json_get_num(fit, "half_bytes");
        o->bytes = cf_nums(x, json_object_get(s, "bytes"), GQ_CF_MAX_SWEEP);
        o->gbps = cf_nums(x, json_object_get(s, "gbps"), GQ_CF_MAX_SWEEP);
    }
    d->nsweeps = n;
}

static void cf_latency(cfd *x, const json_t *lat, gq_cf_latency *out)
{
    out->present = json_is_object(lat);
    if (!out->present)
        return;
    const json_t *h = json_object_get(lat, "host");
    out->have_host = json_is_object(h);
    if (out->have_host) {
        out->host_gpus = cf_ints(x, json_object_get(h, "gpus"));
        out->host_ns = cf_nums(x, json_object_get(h, "ns"), GQ_CF_MAX_NUMS);
    }
    cf_matrix(x, json_object_get(lat, "p2p"), &out->p2p);
}

static void cf_domains(cfd *x, const json_t *dm, gq_cf_domains *out)
{
    out->present = json_is_object(dm);
    if (!out->present)
        return;
    const json_t *l = json_object_get(dm, "domains");
    int n = (int)json_array_size(l);
    out->domains = cf_array(x, n, sizeof *out->domains);
    if (out->domains) {
        for (int i = 0; i < n; i++)
            out->domains[i] = cf_ints(x, json_array_get(l, (size_t)i));
        out->ndomains = n;
    }
    out->split = cf_true(dm, "split");
    out->no_p2p = cf_true(dm, "no_p2p");
    out->within_min_gbps = gq_json_get_num(dm, "within_min_gbps");
    out->across_max_gbps = gq_json_get_num(dm, "across_max_gbps");
}

static void cf_bottlenecks(cfd *x, const json_t *bn, gq_card_doc *d)
{
    int n = (int)json_array_size(bn);
    d->bottlenecks = cf_array(x, n, sizeof *d->bottlenecks);
    if (!d->bottlenecks)
        return;
    for (int i = 0; i < n; i++) {
        const json_t *b = json_array_get(bn, (size_t)i);
        gq_cf_bottleneck *o = &d->bottlenecks[i];
        o->gpus = cf_ints(x, json_object_get(b, "gpus"));
        o->direction = cf_str(x, b, "direction");
        o->explanation = json_is_string(json_object_get(b, "explanation")) ? cf_str(x, b, "explanation")
                                                                           : cf_str(x, b, "explained_by");
        o->capacity_gbps = gq_json_get_num(b, "capacity_gbps");
        o->sum_alone_gbps = gq_json_get_num(b, "sum_alone_gbps");
    }
    d->nbottlenecks = n;
}

static void cf_placement(cfd *x, const json_t *pl, gq_cf_placement *out)
{
    out->present = json_is_object(pl);
    if (!out->present)
        return;
    const json_t *pairs = json_object_get(pl, "pairs");
    int n = (int)json_array_size(pairs);
    out->pairs = cf_array(x, n, sizeof *out->pairs);
    if (out->pairs) {
        for (int i = 0; i < n; i++) {
            const json_t *p = json_array_get(pairs, (size_t)i);
            out->pairs[i] =
                (gq_cf_pl_pair){gq_json_get_num(p, "prefill"), gq_json_get_num(p, "decode"),
                                gq_json_get_num(p, "predicted_gbps"), gq_json_get_num(p, "measured_gbps")};
        }
        out->npairs = n;
    }
    const json_t *off = json_object_get(pl, "offload");
    const json_t *workers = json_is_array(off) ? off : json_object_get(off, "workers");
    int nw = (int)json_array_size(workers);
    out->workers.v = cf_array(x, nw, sizeof *out->workers.v);
    out->workers.is_int = cf_array(x, nw, sizeof *out->workers.is_int);
    if (out->workers.v && out->workers.is_int) {
        for (int i = 0; i < nw; i++) {
            const json_t *w = json_array_get(workers, (size_t)i);
            const json_t *g = json_is_object(w) ? json_object_get(w, "gpu") : w;
            out->workers.v[i] = (long long)json_integer_value(g);
            out->workers.is_int[i] = json_is_integer(g);
        }
        out->workers.n = nw;
    }
    const json_t *gain = json_object_get(pl, "gain");
    out->gain = json_is_number(gain) ? json_number_value(gain) : gq_json_get_num(gain, "pairs");
    const json_t *notes = json_object_get(pl, "notes");
    int nn = (int)json_array_size(notes);
    out->notes = cf_array(x, nn, sizeof *out->notes);
    if (out->notes) {
        for (int i = 0; i < nn; i++)
            out->notes[i] = cf_strv(x, json_array_get(notes, (size_t)i));
        out->nnotes = nn;
    }
}

static void cf_collectives(cfd *x, const json_t *c, gq_card_doc *d)
{
    const json_t *groups = json_object_get(c, "groups");
    int n = (int)json_array_size(groups);
    d->groups = cf_array(x, n, sizeof *d->groups);
    if (!d->groups)
        return;
    for (int i = 0; i < n; i++) {
        const json_t *g = json_array_get(groups, (size_t)i);
        d->groups[i].gpus = cf_ints(x, json_object_get(g, "gpus"));
        d->groups[i].alone_busbw_gbps = gq_json_get_num(g, "alone_busbw_gbps");
        d->groups[i].at_once_busbw_gbps = gq_json_get_num(g, "at_once_busbw_gbps");
    }
    d->ngroups = n;
}

static void cf_stress_gpus(cfd *x, const json_t *gpus, gq_cf_stress *out)
{
    int n = (int)json_array_size(gpus);
    out->gpus = cf_array(x, n, sizeof *out->gpus);
    if (!out->gpus)
        return;
    for (int i = 0; i < n; i++) {
        const json_t *g = json_array_get(gpus, (size_t)i);
        const json_t *pc = json_object_get(g, "pcie"), *er = json_object_get(g, "errors");
        gq_cf_stress_gpu *o = &out->gpus[i];
        o->gpu = (long long)json_integer_value(json_object_get(g, "gpu"));
        o->temp_avg_c = gq_json_get_num(g, "temp_avg_c");
        o->temp_max_c = gq_json_get_num(g, "temp_max_c");
        o->power_avg_w = gq_json_get_num(g, "power_avg_w");
        o->power_limit_w = gq_json_get_num(g, "power_limit_w");
        o->sm_clock_avg_mhz = gq_json_get_num(g, "sm_clock_avg_mhz");
        o->power_capped_pct = gq_json_get_num(g, "power_capped_pct");
        o->faulty_elements = gq_json_get_num(g, "faulty_elements");
        o->thermal_slowdown = cf_true(g, "thermal_slowdown");
        o->gen_min_loaded = gq_json_get_num(pc, "gen_min_loaded");
        o->width_min_loaded = gq_json_get_num(pc, "width_min_loaded");
        o->trained_down = cf_true(pc, "trained_down");
        o->ecc_uncorrected = gq_json_get_num(er, "ecc_uncorrected");
        o->ecc_corrected = gq_json_get_num(er, "ecc_corrected");
        o->verdict = cf_str(x, g, "verdict");
        o->error = cf_str(x, g, "error");
    }
    out->ngpus = n;
}

static void cf_series(cfd *x, const json_t *series, gq_cf_stress *out)
{
    const json_t *gs = json_object_get(series, "gpus");
    int n = (int)json_array_size(gs);
    if (n > GQ_CF_MAX_SERIES)
        n = GQ_CF_MAX_SERIES;
    out->series = cf_array(x, n, sizeof *out->series);
    if (!out->series)
        return;
    for (int i = 0; i < n; i++) {
        const json_t *o = json_array_get(gs, (size_t)i);
        gq_cf_series *s = &out->series[i];
        s->gpu = (long long)json_integer_value(json_object_get(o, "gpu"));
        s->t_s = cf_nums(x, json_object_get(o, "t_s"), GQ_CF_MAX_SAMPLES);
        s->temp_c = cf_nums(x, json_object_get(o, "temp_c"), GQ_CF_MAX_SAMPLES);
        s->power_w = cf_nums(x, json_object_get(o, "power_w"), GQ_CF_MAX_SAMPLES);
        s->sm_clock_mhz = cf_nums(x, json_object_get(o, "sm_clock_mhz"), GQ_CF_MAX_SAMPLES);
    }
    out->nseries = n;
}

static void cf_stress(cfd *x, const json_t *st, gq_cf_stress *out)
{
    out->present = json_is_object(st);
    out->elapsed_s = out->power_total_avg_w = out->clock_spread = NAN;
    if (!out->present)
        return;
    out->elapsed_s = gq_json_get_num(st, "elapsed_s");
    out->precision = cf_str(x, st, "precision");
    cf_stress_gpus(x, json_object_get(st, "gpus"), out);
    const json_t *node = json_object_get(st, "node");
    out->have_node = json_is_object(node);
    out->power_total_avg_w = gq_json_get_num(node, "power_total_avg_w");
    out->clock_spread = gq_json_get_num(node, "clock_spread");
    const json_t *fs = json_object_get(st, "findings");
    int n = (int)json_array_size(fs);
    out->findings = cf_array(x, n, sizeof *out->findings);
    if (out->findings) {
        for (int i = 0; i < n; i++) {
            const json_t *g = json_array_get(fs, (size_t)i);
            out->findings[i].level = cf_str(x, g, "level");
            out->findings[i].text = cf_str(x, g, "text");
        }
        out->nfindings = n;
    }
    cf_series(x, json_object_get(st, "series"), out);
}

/* Every figure and run fact of root and its card section into d. */
static void cf_figures(cfd *x, const json_t *root, const json_t *card, gq_card_doc *d)
{
    d->timestamp = cf_str(x, root, "timestamp");
    d->version = cf_str(x, root, "version");
    d->git = cf_str(x, root, "git");
    d->simulated = cf_true(root, "simulated");
    d->incomplete = cf_true(root, "incomplete");
    d->hostname = cf_str(x, card, "hostname");
    d->stopped_at = cf_str(x, card, "stopped_at");
    d->budget_s = gq_json_get_num(card, "budget_s");
    d->planned_s = gq_json_get_num(card, "planned_s");
    d->elapsed_s = gq_json_get_num(card, "elapsed_s");
    cf_plan(x, card, d);
    cf_identity(x, json_object_get(card, "identity"), &d->identity);
    cf_matrices(x, json_object_get(card, "matrices"), d);
    d->pairs.ratio = d->pairs.side[0].aggregate_gbps = d->pairs.side[1].aggregate_gbps = NAN;
    cf_pairs(x, json_object_get(card, "pairs"), &d->pairs);
    cf_host(x, json_object_get(card, "host"), &d->host);
    cf_sweeps(x, json_object_get(card, "sweeps"), d);
    cf_latency(x, json_object_get(card, "latency"), &d->latency);
    cf_domains(x, json_object_get(card, "domains"), &d->domains);
    d->placement.gain = NAN;
    cf_placement(x, json_object_get(card, "placement"), &d->placement);
    cf_collectives(x, json_object_get(card, "collectives"), d);
    cf_bottlenecks(x, json_object_get(root, "bottlenecks"), d);
    cf_stress(x, json_object_get(root, "stress"), &d->stress);
}

int gq_card_doc_from_json(const json_t *root, gq_card_doc **out, gq_err *err)
{
    *out = NULL;
    if (!json_is_object(root))
        return gq_err_set(err, GQ_E_USAGE, "not a gpuqual document (expected a JSON object)");
    const json_t *card = json_object_get(root, "card");
    if (!json_is_object(card))
        return gq_err_set(err, GQ_E_USAGE, "the document has no \"card\" section (kind '%s')",
                          gq_json_get_str(root, "kind", "?"));
    gq_card_doc *d = calloc(1, sizeof *d);
    if (!d)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory reading the card");
    int rc = gq_card_from_json(card, "the card", &d->card, err);
    if (rc) {
        free(d);
        return rc;
    }
    d->have_card = true;
    cfd x = {d, false};
    cf_figures(&x, root, card, d);
    if (x.oom) {
        gq_card_doc_free(d);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory reading the card's figures");
    }
    *out = d;
    return GQ_OK;
}

void gq_card_doc_free(gq_card_doc *d)
{
    if (!d)
        return;
    if (d->have_card)
        gq_card_free(&d->card);
    for (int i = 0; i < d->nblocks; i++)
        free(d->blocks[i]);
    free(d->blocks);
    free(d);
}
