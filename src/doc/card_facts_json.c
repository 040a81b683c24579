/* The facts the card's checks judge (gq_card_facts, analysis/expect.h),
 * decoded from a composed or saved card's sections and the stress section;
 * the records' facts are analysis's (gq_card_facts_records). card_judge.c
 * judges them. Each step's evidence from the card's plan. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/card.h"
#include "doc/json_get.h"
#include "doc/card_codec.h"

#define MAXG GQ_MAX_GPUS

/* pos[g] for a GPU index read from a document, or -1 when g is out of range
 * (a saved card edited by hand may name any integer). */
static int pos_of(const int *pos, int g)
{
    return g >= 0 && g < MAXG ? pos[g] : -1;
}

/* A GPU index field; -1 when absent or not a number that fits an int. */
static int jidx(const json_t *o, const char *k)
{
    double v = gq_json_get_num(o, k);
    return isfinite(v) && fabs(v) < 1e9 ? (int)v : -1;
}

void gq_card_plan_evidence(const json_t *card, gq_evidence *ev, gq_ev_reason *why)
{
    for (int s = 0; s < GQ_CS_COUNT; s++) {
        ev[s] = GQ_EV_UNKNOWN;
        why[s] = GQ_EVR_NONE;
    }
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(card, "plan"), i, p)
    {
        gq_card_step_id s;
        if (!gq_card_step_parse(json_string_value(json_object_get(p, "step")), &s))
            continue;
        const char *st = json_string_value(json_object_get(p, "status"));
        const char *note = gq_json_get_str(p, "note", "");
        const json_t *rj = json_object_get(p, "reason");
        gq_ev_reason r = GQ_EVR_NONE;
        bool have_r = json_is_string(rj) && gq_ev_reason_parse(json_string_value(rj), &r);
        if (!st)
            continue;
        if (!strcmp(st, "done")) {
            ev[s] = GQ_EV_MEASURED;
        } else if (!strcmp(st, "skipped") || !strcmp(st, "interrupted")) {
            ev[s] = GQ_EV_SKIPPED;
            /* A schema-1 card has no reason: its note says it. */
            if (!have_r)
                r = !strcmp(st, "interrupted") || strstr(note, "interrupted")  ? GQ_EVR_INTERRUPTED
                    : !strncmp(note, "--no-", 5) || strstr(note, "turned off") ? GQ_EVR_USER
                    : strstr(note, "budget")                                   ? GQ_EVR_BUDGET
                    : strstr(note, "one GPU")                                  ? GQ_EVR_ONE_GPU
                    : strstr(note, " level")                                   ? GQ_EVR_LEVEL
                                                                               : GQ_EVR_NOT_APPLICABLE;
            why[s] = r;
        } else if (!strcmp(st, "failed")) {
            ev[s] = GQ_EV_FAILED;
            why[s] = have_r ? r : GQ_EVR_ERROR;
        }
    }
    /* A card saved before a late step existed (the collectives: analysis/card_steps.h) lists a plan
     * without it: the step was not one of its card's, not a step that should have run (its card stays
     * complete). */
    bool listed[GQ_CS_COUNT] = {false};
    json_array_foreach(json_object_get(card, "plan"), i, p)
    {
        gq_card_step_id s;
        if (gq_card_step_parse(gq_json_get_str(p, "step", ""), &s))
            listed[s] = true;
    }
    for (int s = 0; s < GQ_CS_COUNT && json_array_size(json_object_get(card, "plan")); s++)
        if (gq_card_step_late((gq_card_step_id)s) && !listed[s]) {
            ev[s] = GQ_EV_SKIPPED;
            why[s] = GQ_EVR_NOT_APPLICABLE;
        }
}

/* A PCIe generation or width read back from a card: a figure a link can have
 * (0 to 64, its fraction dropped), or -1 (unknown) for anything else, never a
 * cast of a figure no int holds. */
static int link_num(const json_t *pc, const char *key)
{
    double v = gq_json_get_num(pc, key);
    return v >= 0 && v <= 64 ? (int)v : -1;
}

/* identity.gpus: each GPU's facts, by position; pos[index] = position. */
static void identity_facts(const json_t *id, gq_card_facts *f, int *pos)
{
    for (int k = 0; k < MAXG; k++)
        pos[k] = -1;
    size_t i;
    const json_t *g;
    json_array_foreach(json_object_get(id, "gpus"), i, g)
    {
        if (f->ngpu >= MAXG)
            break;
        int k = f->ngpu++;
        gq_gpu_facts *gf = &f->gpu[k];
        int idx = jidx(g, "index");
        gf->index = idx;
        if (idx >= 0 && idx < MAXG)
            pos[idx] = k;
        snprintf(gf->name, sizeof gf->name, "%s", gq_json_get_str(g, "name", ""));
        gf->mem_mib = gq_json_get_num(g, "memory_mib");
        gf->power_limit_w = gq_json_get_num(g, "power_limit_w");
        const json_t *pc = json_object_get(g, "pcie");
        gf->pcie_gen_cur = link_num(pc, "gen");
        gf->pcie_width_cur = link_num(pc, "width");
        gf->pcie_gen_max = link_num(pc, "gen_max");
        gf->pcie_width_max = link_num(pc, "width_max");
        gf->link_under_load = json_is_true(json_object_get(pc, "under_load"));
    }
}

static void uplink_facts(const json_t *id, gq_card_facts *f)
{
    size_t i;
    /* The uplinks above the GPUs, as discovery read them. */
    const json_t *up;
    json_array_foreach(json_object_get(id, "uplinks"), i, up)
    {
        if (f->nuplinks >= GQ_CARD_MAX_UPLINKS)
            break;
        gq_uplink_facts *u = &f->uplink[f->nuplinks++];
        snprintf(u->node, sizeof u->node, "%s", gq_json_get_str(up, "node", "?"));
        snprintf(u->kind, sizeof u->kind, "%s", gq_json_get_str(up, "kind", "pcie_switch"));
        u->ngpus = gq_json_get_ints(json_object_get(up, "gpus"), u->gpus, MAXG);
        double v;
        u->gen_cur = isfinite(v = gq_json_get_num(up, "gen")) && fabs(v) < 1e6 ? (int)v : -1;
        u->width_cur = isfinite(v = gq_json_get_num(up, "width")) && fabs(v) < 1e6 ? (int)v : -1;
        u->gen_max = isfinite(v = gq_json_get_num(up, "gen_max")) && fabs(v) < 1e6 ? (int)v : -1;
        u->width_max = isfinite(v = gq_json_get_num(up, "width_max")) && fabs(v) < 1e6 ? (int)v : -1;
        u->under_load = json_is_true(json_object_get(up, "under_load"));
    }
}

static void nvlink_facts(const json_t *id, gq_card_facts *f, const int *pos)
{
    /* Facts are indexed by position (0..ngpu-1); the judge names gpu[k].index. */
    const json_t *nvl = json_object_get(id, "nvlinks");
    {
        int gl[MAXG];
        int n = gq_json_get_ints(json_object_get(nvl, "gpus"), gl, MAXG);
        const json_t *vals = json_object_get(nvl, "values");
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                const json_t *x = json_array_get(json_array_get(vals, (size_t)a), (size_t)b);
                if (json_is_integer(x) && pos_of(pos, gl[a]) >= 0 && pos_of(pos, gl[b]) >= 0)
                    f->nvlinks[pos[gl[a]]][pos[gl[b]]] = (int)json_integer_value(x);
            }
    }
}

static void undetermined_facts(const json_t *card, gq_card_facts *f)
{
    size_t i;
    const json_t *und;
    json_array_foreach(json_object_get(card, "undetermined"), i, und)
    {
        const char *t = json_string_value(json_object_get(und, "text"));
        if (t && f->n_undetermined < GQ_FACTS_MAX_UNDETERMINED)
            snprintf(f->undetermined[f->n_undetermined++], sizeof f->undetermined[0], "%s", t);
    }
}

static void host_facts(const json_t *card, gq_card_facts *f, const int *pos)
{
    const json_t *host = json_object_get(card, "host");
    {
        int gl[MAXG];
        int n = gq_json_get_ints(json_object_get(host, "gpus"), gl, MAXG);
        const json_t *alone = json_object_get(host, "alone");
        for (int k = 0; k < n; k++) {
            if (pos_of(pos, gl[k]) < 0)
                continue;
            const json_t *x = json_array_get(json_object_get(alone, "h2d"), (size_t)k);
            f->gpu[pos[gl[k]]].h2d_gbps = json_is_number(x) ? json_number_value(x) : NAN;
            x = json_array_get(json_object_get(alone, "d2h"), (size_t)k);
            f->gpu[pos[gl[k]]].d2h_gbps = json_is_number(x) ? json_number_value(x) : NAN;
            const json_t *aiv = json_object_get(host, "alone_interval");
            for (int d = 0; d < 2; d++) {
                const json_t *iv = json_array_get(json_object_get(aiv, d ? "d2h" : "h2d"), (size_t)k);
                const json_t *lo = json_array_get(iv, 0), *hi = json_array_get(iv, 1);
                if (!json_is_number(lo) || !json_is_number(hi))
                    continue;
                gq_gpu_facts *g = &f->gpu[pos[gl[k]]];
                *(d ? &g->d2h_lo : &g->h2d_lo) = json_number_value(lo);
                *(d ? &g->d2h_hi : &g->h2d_hi) = json_number_value(hi);
            }
        }
    }
}

static void matrix_facts(const json_t *card, gq_card_facts *f, const int *pos)
{
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(card, "matrices"), i, m)
    {
        if (strcmp(gq_json_get_str(m, "id", ""), "p2p_read"))
            continue;
        int gl[MAXG];
        int n = gq_json_get_ints(json_object_get(m, "gpus"), gl, MAXG);
        bool staged = json_is_true(json_object_get(m, "staged"));
        const json_t *vals = json_object_get(m, "values");
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                const json_t *x = json_array_get(json_array_get(vals, (size_t)a), (size_t)b);
                if (!json_is_number(x) || pos_of(pos, gl[a]) < 0 || pos_of(pos, gl[b]) < 0)
                    continue;
                f->p2p_gbps[pos[gl[a]]][pos[gl[b]]] = json_number_value(x);
                f->p2p_direct[pos[gl[a]]][pos[gl[b]]] = !staged;
            }
    }
}

static void latency_facts(const json_t *card, gq_card_facts *f, const int *pos)
{
    const json_t *lat = json_object_get(card, "latency");
    {
        const json_t *h = json_object_get(lat, "host");
        int gl[MAXG];
        int n = gq_json_get_ints(json_object_get(h, "gpus"), gl, MAXG);
        for (int k = 0; k < n; k++) {
            const json_t *x = json_array_get(json_object_get(h, "ns"), (size_t)k);
            if (json_is_number(x) && pos_of(pos, gl[k]) >= 0)
                f->gpu[pos[gl[k]]].host_latency_ns = json_number_value(x);
        }
        const json_t *p = json_object_get(lat, "p2p");
        n = gq_json_get_ints(json_object_get(p, "gpus"), gl, MAXG);
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                const json_t *x =
                    json_array_get(json_array_get(json_object_get(p, "values"), (size_t)a), (size_t)b);
                if (json_is_number(x) && pos_of(pos, gl[a]) >= 0 && pos_of(pos, gl[b]) >= 0)
                    f->p2p_lat_ns[pos[gl[a]]][pos[gl[b]]] = json_number_value(x);
            }
    }
}

static void stress_facts(const json_t *stress, gq_card_facts *f, const int *pos)
{
    size_t i;
    const json_t *g;
    json_array_foreach(json_object_get(stress, "gpus"), i, g)
    {
        int idx = jidx(g, "gpu");
        if (pos_of(pos, idx) < 0)
            continue;
        gq_gpu_facts *gf = &f->gpu[pos[idx]];
        f->stress_ran = true;
        gf->stressed = true;
        gf->temp_max_c = gq_json_get_num(g, "temp_max_c");
        gf->sm_clock_avg_mhz = gq_json_get_num(g, "sm_clock_avg_mhz");
        gf->power_capped_pct = gq_json_get_num(g, "power_capped_pct");
        gf->thermal_slowdown = json_is_true(json_object_get(g, "thermal_slowdown")) ||
                               json_is_true(json_object_get(g, "hw_slowdown")) ||
                               json_is_true(json_object_get(g, "hw_power_brake"));
        const char *v = gq_json_get_str(g, "verdict", "pass");
        gf->stress_verdict = !strcmp(v, "fail") ? GQ_V_FAIL : !strcmp(v, "warn") ? GQ_V_WARN : GQ_V_PASS;
        size_t k;
        const json_t *fd;
        json_array_foreach(json_object_get(stress, "findings"), k, fd)
        {
            const char *lv = gq_json_get_str(fd, "level", "");
            if (gq_json_get_num(fd, "gpu") == idx && (!strcmp(lv, "fail") || !strcmp(lv, "warn")) &&
                !gf->stress_reason[0])
                snprintf(gf->stress_reason, sizeof gf->stress_reason, "%s", gq_json_get_str(fd, "text", ""));
        }
    }
}

void gq_card_stress_from_json(const json_t *stress, gq_card_stress_view *v)
{
    memset(v, 0, sizeof *v);
    v->present = json_is_object(stress);
    v->elapsed_s = gq_json_get_num(stress, "elapsed_s");
    v->power_total_avg_w = gq_json_get_num(json_object_get(stress, "node"), "power_total_avg_w");
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(stress, "gpus"), i, x)
    {
        if (v->ngpus >= GQ_MAX_GPUS)
            break;
        int k = v->ngpus++;
        v->temp_max_c[k] = gq_json_get_num(x, "temp_max_c");
        v->sm_clock_avg_mhz[k] = gq_json_get_num(x, "sm_clock_avg_mhz");
        v->power_capped_pct[k] = gq_json_get_num(x, "power_capped_pct");
        v->thermal_slowdown[k] = json_is_true(json_object_get(x, "thermal_slowdown"));
    }
}

static void latency_view(const json_t *lat, gq_card_latency_view *v)
{
    size_t i;
    const json_t *x, *row;
    json_array_foreach(json_object_get(json_object_get(lat, "host"), "ns"), i, x)
    {
        if (json_is_number(x) && v->nhost < GQ_MAX_GPUS)
            v->host_ns[v->nhost++] = json_number_value(x);
    }
    json_array_foreach(json_object_get(json_object_get(lat, "p2p"), "values"), i, row)
    {
        size_t k;
        json_array_foreach(row, k, x)
        {
            if (json_is_number(x) && v->np2p < GQ_MAX_GPUS * GQ_MAX_GPUS)
                v->p2p_ns[v->np2p++] = json_number_value(x);
        }
    }
}

static void sweeps_view(const json_t *sweeps, gq_card_sweeps_view *v)
{
    v->count = (int)json_array_size(sweeps);
    size_t i;
    const json_t *x;
    json_array_foreach(sweeps, i, x)
    {
        if (v->n >= GQ_CARD_VIEW_MAX_SWEEPS)
            break;
        gq_card_sweep_view *s = &v->v[v->n++];
        snprintf(s->label, sizeof s->label, "%s", gq_json_get_str(x, "label", "?"));
        const json_t *fit = json_object_get(x, "fit");
        s->have_fit = json_is_object(fit);
        s->fixed_us = gq_json_get_num(fit, "fixed_us");
        s->asymptotic_gbps = gq_json_get_num(fit, "asymptotic_gbps");
        s->half_bytes = gq_json_get_num(fit, "half_bytes");
    }
}

static void identity_view(const json_t *id, gq_card_identity_view *v)
{
    size_t i;
    const json_t *x;
    v->ngpus_count = (int)json_array_size(json_object_get(id, "gpus"));
    json_array_foreach(json_object_get(id, "gpus"), i, x)
    {
        if (v->ngpus >= GQ_MAX_GPUS)
            break;
        gq_card_gpu_view *g = &v->gpu[v->ngpus++];
        const char *name = gq_json_get_str(x, "name", NULL);
        g->have_name = name != NULL;
        snprintf(g->name, sizeof g->name, "%s", name ? name : "");
        g->memory_mib = gq_json_get_num(x, "memory_mib");
        g->power_limit_w = gq_json_get_num(x, "power_limit_w");
        const json_t *p = json_object_get(x, "pcie");
        g->gen = gq_json_get_num(p, "gen");
        g->width = gq_json_get_num(p, "width");
        g->gen_max = gq_json_get_num(p, "gen_max");
        g->width_max = gq_json_get_num(p, "width_max");
        g->under_load = json_is_true(json_object_get(p, "under_load"));
    }
    snprintf(v->driver, sizeof v->driver, "%s", gq_json_get_str(id, "driver", "?"));
    snprintf(v->cuda_driver_str, sizeof v->cuda_driver_str, "%s",
             gq_json_get_str(id, "cuda_driver_str", "?"));
    v->vm = json_is_true(json_object_get(id, "vm"));
    v->numa_nodes = gq_json_get_num(id, "numa_nodes");
    v->nuplinks_count = (int)json_array_size(json_object_get(id, "uplinks"));
    json_array_foreach(json_object_get(id, "uplinks"), i, x)
    {
        if (v->nuplinks >= GQ_CARD_VIEW_MAX_UPLINKS)
            break;
        gq_card_uplink_view *u = &v->uplink[v->nuplinks++];
        u->width = gq_json_get_num(x, "width");
        u->width_max = gq_json_get_num(x, "width_max");
        u->root_port = !strcmp(gq_json_get_str(x, "kind", ""), "root_port");
        snprintf(u->node, sizeof u->node, "%s", gq_json_get_str(x, "node", "?"));
        size_t k;
        const json_t *gj;
        json_array_foreach(json_object_get(x, "gpus"), k, gj)
        {
            if (u->ngpus < GQ_MAX_GPUS && json_is_integer(gj))
                u->gpus[u->ngpus++] = (int)json_integer_value(gj);
        }
    }
}

void gq_card_views_from_json(const json_t *card, const json_t *bottlenecks, const json_t *stress,
                             gq_card_views *v)
{
    memset(v, 0, sizeof *v);
    v->have_level = gq_card_level_parse(json_string_value(json_object_get(card, "level")), &v->level);
    v->complete = !json_is_false(json_object_get(card, "complete"));
    v->allow_busy = json_is_true(json_object_get(card, "allow_busy"));
    gq_card_stress_from_json(stress, &v->stress);
    latency_view(json_object_get(card, "latency"), &v->latency);
    sweeps_view(json_object_get(card, "sweeps"), &v->sweeps);
    identity_view(json_object_get(card, "identity"), &v->identity);
#define SECTION_VIEW_(ID, NAME, TYPE, FIELD)                                                                 \
    gq_card_##NAME##_from_json(json_object_get(card, #NAME), &v->sec.FIELD);
    GQ_CARD_SECTIONS(SECTION_VIEW_)
#undef SECTION_VIEW_
    gq_card_placement_view_from_json(json_object_get(card, "placement"), &v->placement);
    gq_card_pairs_view_from_json(json_object_get(card, "pairs"), &v->pairs);
    gq_card_host_view_from_json(json_object_get(card, "host"), &v->host);
    gq_card_bottlenecks_view_from_json(bottlenecks, &v->bottlenecks);
    gq_card_domains_view_from_json(json_object_get(card, "domains"), &v->domains);
    gq_card_matrices_view_from_json(json_object_get(card, "matrices"), &v->matrix, &v->driver_staged);
}

void gq_card_facts_from_json(const json_t *card, const json_t *stress, const gq_recordset *rs,
                             gq_card_facts *f)
{
    gq_card_facts_init(f);
    gq_card_plan_evidence(card, f->step_ev, f->step_why);
    const json_t *id = json_object_get(card, "identity");
    int pos[MAXG];
    identity_facts(id, f, pos);
    uplink_facts(id, f);
    nvlink_facts(id, f, pos);
    undetermined_facts(card, f);
    host_facts(card, f, pos);
    matrix_facts(card, f, pos);
    latency_facts(card, f, pos);
    stress_facts(stress, f, pos);
    gq_card_coll_view *cv = calloc(1, sizeof *cv);
    if (cv) {
        gq_card_collectives_from_json(json_object_get(card, "collectives"), cv);
        for (int g = 0; cv->present && g < cv->ngroups; g++)
            f->coll_gpus |= cv->set[g];
        f->coll_min_alone_gbps = cv->min_alone;
        f->coll_min_once_gbps = cv->min_once;
        free(cv);
    }
    gq_card_facts_records(rs, f);
}
