/* The stress run's outputs: the "stress" section of a saved document and the
 * time series as CSV, from the typed results of analysis/stress. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "doc/json_get.h"
#include "doc/analysis_json.h"
#include "measure/journal.h"

static json_t *jint(long long v)
{
    return v >= 0 ? json_integer(v) : json_null();
}

static json_t *ju64(uint64_t v)
{
    return v == GQ_STRESS_U64_UNKNOWN ? json_null() : json_integer((json_int_t)v);
}

/* The names of the reason bits set (gq_clock_reasons_str's names; unnamed bits
 * are left out); [] for none and for unknown. */
static json_t *reasons_array(uint64_t bits)
{
    json_t *a = json_array();
    char buf[512];
    if (bits == GQ_STRESS_U64_UNKNOWN || !bits)
        return a;
    gq_clock_reasons_str(bits, buf, sizeof buf);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (strncmp(tok, "0x", 2))
            json_array_append_new(a, json_string(tok));
    return a;
}

static json_t *gpu_summary_json(const gq_stress_gpu *g, const gq_stress_gpu_summary *S)
{
    json_t *o = json_object();
    json_object_set_new(o, "gpu", json_integer(S->gpu));
    json_object_set_new(o, "name", json_string(S->name));
    json_object_set_new(o, "uuid", json_string(g->uuid));
    json_object_set_new(o, "verdict", json_string(gq_stress_level_name(S->verdict)));
    json_object_set_new(o, "samples", json_integer(S->nsamples));
    json_object_set_new(o, "loaded_samples", json_integer(S->nloaded));
    json_object_set_new(o, "temp_avg_c", gq_json_num(S->temp_avg_c));
    json_object_set_new(o, "temp_max_c", gq_json_num(S->temp_max_c));
    json_object_set_new(o, "mem_temp_max_c", gq_json_num(S->mem_temp_max_c));
    json_object_set_new(o, "power_avg_w", gq_json_num(S->power_avg_w));
    json_object_set_new(o, "power_max_w", gq_json_num(S->power_max_w));
    json_object_set_new(o, "power_limit_w", gq_json_num(S->power_limit_w));
    json_object_set_new(o, "sm_clock_avg_mhz", gq_json_num(S->sm_clock_avg_mhz));
    json_object_set_new(o, "mem_clock_avg_mhz", gq_json_num(S->mem_clock_avg_mhz));
    json_object_set_new(o, "util_avg_pct", gq_json_num(S->util_avg_pct));
    json_object_set_new(o, "power_capped_pct", gq_json_num(S->power_capped_pct));
    json_object_set_new(o, "thermal_slowdown", json_boolean(S->thermal_slowdown));
    json_object_set_new(o, "hw_slowdown", json_boolean(S->hw_slowdown));
    json_object_set_new(o, "hw_power_brake", json_boolean(S->power_brake));
    json_object_set_new(o, "thermal_pct", gq_json_num(S->thermal_pct));
    json_object_set_new(o, "clock_reasons_seen", reasons_array(S->reasons_seen));
    json_t *pcie = json_object();
    json_object_set_new(pcie, "gen_min_loaded", jint(S->pcie_gen_min));
    json_object_set_new(pcie, "width_min_loaded", jint(S->pcie_width_min));
    json_object_set_new(pcie, "gen_max", jint(S->pcie_gen_max));
    json_object_set_new(pcie, "width_max", jint(S->pcie_width_max));
    json_object_set_new(pcie, "trained_down", json_boolean(S->link_down));
    json_object_set_new(o, "pcie", pcie);
    json_t *e = json_object();
    json_object_set_new(e, "ecc_corrected", jint(S->ecc_corrected));
    json_object_set_new(e, "ecc_uncorrected", jint(S->ecc_uncorrected));
    json_object_set_new(e, "pcie_replay", jint(S->pcie_replay));
    json_object_set_new(e, "remapped_rows", jint(S->remapped_rows));
    json_object_set_new(e, "remapped_rows_new", jint(S->remapped_delta));
    json_object_set_new(o, "errors", e);
    json_object_set_new(o, "gemms", json_integer((json_int_t)S->gemms));
    json_object_set_new(o, "faulty_elements", json_integer((json_int_t)S->faulty));
    json_object_set_new(o, "tflops_avg", gq_json_num(S->tflops_avg));
    json_object_set_new(o, "lost", json_boolean(S->lost));
    json_object_set_new(o, "error", g->status != GQ_OK ? json_string(g->error) : json_null());
    if (isfinite(S->xfer_gbps[0]) || isfinite(S->xfer_gbps[1]) || g->xfer_status != GQ_OK) {
        json_t *t = json_object();
        json_object_set_new(t, "h2d_gbps", gq_json_num(S->xfer_gbps[0]));
        json_object_set_new(t, "d2h_gbps", gq_json_num(S->xfer_gbps[1]));
        json_object_set_new(t, "error", g->xfer_status != GQ_OK ? json_string(g->xfer_error) : json_null());
        json_object_set_new(o, "transfers", t);
    }
    return o;
}

/* Columns of the time series, shared by JSON and CSV. */
enum col {
    C_T,
    C_LOADED,
    C_TEMP,
    C_MEMTEMP,
    C_POWER,
    C_PLIMIT,
    C_SM,
    C_MEM,
    C_UTIL,
    C_REASONS,
    C_CAPPED,
    C_THERMAL,
    C_GEN,
    C_WIDTH,
    C_REPLAY,
    C_ECCC,
    C_ECCU,
    C_REMAP,
    C_LOST,
    C_GEMMS,
    C_FAULTY,
    C_TFLOPS,
    C_N
};
static const char *const col_names[C_N] = {
    [C_T] = "t_s",
    [C_LOADED] = "loaded",
    [C_TEMP] = "temp_c",
    [C_MEMTEMP] = "mem_temp_c",
    [C_POWER] = "power_w",
    [C_PLIMIT] = "power_limit_w",
    [C_SM] = "sm_clock_mhz",
    [C_MEM] = "mem_clock_mhz",
    [C_UTIL] = "util_pct",
    [C_REASONS] = "clock_reasons",
    [C_CAPPED] = "power_capped",
    [C_THERMAL] = "thermal_slowdown",
    [C_GEN] = "pcie_gen",
    [C_WIDTH] = "pcie_width",
    [C_REPLAY] = "pcie_replay",
    [C_ECCC] = "ecc_corrected",
    [C_ECCU] = "ecc_uncorrected",
    [C_REMAP] = "remapped_rows",
    [C_LOST] = "lost",
    [C_GEMMS] = "gemms",
    [C_FAULTY] = "faulty",
    [C_TFLOPS] = "tflops",
};

static json_t *cell_json(const gq_stress_point *p, int c)
{
    const gq_sample *s = &p->s;
    bool rk = p->has_sample && s->clock_reasons != GQ_STRESS_U64_UNKNOWN;
    switch (c) {
    case C_T: return gq_json_num(p->t);
    case C_LOADED: return json_boolean(p->loaded);
    case C_TEMP: return gq_json_num(s->temp_c);
    case C_MEMTEMP: return gq_json_num(s->mem_temp_c);
    case C_POWER: return gq_json_num(s->power_w);
    case C_PLIMIT: return gq_json_num(s->power_limit_w);
    case C_SM: return gq_json_num(s->sm_clock_mhz);
    case C_MEM: return gq_json_num(s->mem_clock_mhz);
    case C_UTIL: return gq_json_num(s->util_pct);
    case C_REASONS: return rk ? json_integer((json_int_t)s->clock_reasons) : json_null();
    case C_CAPPED: return rk ? json_boolean(s->clock_reasons & GQ_CLK_SW_POWER_CAP) : json_null();
    case C_THERMAL: return rk ? json_boolean(s->clock_reasons & GQ_CLK_THERMAL_MASK) : json_null();
    case C_GEN: return jint(s->pcie_gen);
    case C_WIDTH: return jint(s->pcie_width);
    case C_REPLAY: return ju64(s->pcie_replay);
    case C_ECCC: return ju64(s->ecc_corrected);
    case C_ECCU: return ju64(s->ecc_uncorrected);
    case C_REMAP: return jint(s->remapped_rows);
    case C_LOST: return json_boolean(s->lost);
    case C_GEMMS: return json_integer((json_int_t)p->gemms);
    case C_FAULTY: return json_integer((json_int_t)p->faulty);
    case C_TFLOPS: return gq_json_num(p->tflops);
    }
    return json_null();
}

json_t *gq_stress_to_json(const gq_stress_result *r, const gq_stress_summary *s)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "duration_s", gq_json_num(r->duration_s));
    json_object_set_new(o, "interval_s", gq_json_num(r->interval_s));
    json_object_set_new(o, "elapsed_s", gq_json_num(r->elapsed_s));
    json_object_set_new(o, "precision", json_string(gq_precision_name(r->precision)));
    json_object_set_new(o, "with_transfers", json_boolean(r->with_transfers));
    json_object_set_new(o, "interrupted", json_boolean(r->interrupted));
    json_object_set_new(o, "transfers_error", r->xfer_error[0] ? json_string(r->xfer_error) : json_null());
    json_object_set_new(o, "verdict", json_string(gq_stress_level_name(s->verdict)));
    json_t *rules = json_object();
    json_object_set_new(rules, "clock_spread_warn", gq_json_num(s->rules.clock_spread_warn));
    json_object_set_new(rules, "loaded_util_pct", gq_json_num(s->rules.loaded_util_pct));
    json_object_set_new(o, "rules", rules);

    json_t *gpus = json_array();
    for (int k = 0; k < r->ngpu; k++)
        json_array_append_new(gpus, gpu_summary_json(&r->gpu[k], &s->gpu[k]));
    json_object_set_new(o, "gpus", gpus);

    json_t *node = json_object();
    json_object_set_new(node, "gpus", json_integer(r->ngpu));
    json_object_set_new(node, "power_total_avg_w", gq_json_num(s->power_total_avg_w));
    json_object_set_new(node, "clock_spread", gq_json_num(s->clock_spread));
    json_object_set_new(node, "clock_spread_model",
                        s->clock_spread_model[0] ? json_string(s->clock_spread_model) : json_null());
    json_object_set_new(o, "node", node);

    json_t *fs = json_array();
    for (int i = 0; i < s->nfindings; i++) {
        const gq_stress_finding *f = &s->findings[i];
        json_t *j = json_object();
        json_object_set_new(j, "level", json_string(gq_stress_level_name(f->level)));
        json_object_set_new(j, "gpu", f->gpu >= 0 ? json_integer(f->gpu) : json_null());
        json_object_set_new(j, "rule", json_string(f->rule));
        json_object_set_new(j, "text", json_string(f->text));
        json_array_append_new(fs, j);
    }
    json_object_set_new(o, "findings", fs);
    json_object_set_new(o, "findings_dropped", json_integer(s->nfindings_dropped));

    json_t *series = json_object();
    json_t *cols = json_array();
    for (int c = 0; c < C_N; c++)
        json_array_append_new(cols, json_string(col_names[c]));
    json_object_set_new(series, "columns", cols);
    json_t *sg = json_array();
    for (int k = 0; k < r->ngpu; k++) {
        const gq_stress_gpu *g = &r->gpu[k];
        json_t *one = json_object();
        json_object_set_new(one, "gpu", json_integer(g->gpu));
        for (int c = 0; c < C_N; c++) {
            json_t *a = json_array();
            for (int i = 0; i < g->npoints; i++)
                json_array_append_new(a, cell_json(&g->pts[i], c));
            json_object_set_new(one, col_names[c], a);
        }
        json_array_append_new(sg, one);
    }
    json_object_set_new(series, "gpus", sg);
    json_object_set_new(o, "series", series);
    return o;
}

json_t *gq_stress_sample_to_json(int gpu, const gq_stress_point *p)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "gpu", json_integer(gpu));
    for (int c = 0; c < C_N; c++)
        json_object_set_new(o, col_names[c], cell_json(p, c));
    return o;
}

/* ---- the stress run in a card's journal ---- */

int gq_stress_journal_sample(gq_journal *j, int gpu, const gq_stress_point *p, gq_err *err)
{
    json_t *s = gq_stress_sample_to_json(gpu, p);
    int rc = s ? gq_journal_event(j, "sample", s, err) : gq_err_set(err, GQ_E_NOMEM, "out of memory");
    json_decref(s);
    return rc;
}

void gq_stress_journal_done(gq_journal *j, const gq_stress_result *r, const gq_stress_summary *s)
{
    json_t *section = gq_stress_to_json(r, s);
    json_t *st = section ? json_object() : NULL;
    if (!st) {
        json_decref(section);
        return;
    }
    json_object_set_new(st, "step", json_string("stress"));
    json_object_set_new(st, "status", json_string("done"));
    json_object_set_new(st, "stress", section);
    gq_err e = {0};
    /* a failure only means that a resume measures the stress again */
    (void)gq_journal_event(j, "step", st, &e);
    json_decref(st);
}

/* The interrupted card's stress run, when it completed: the same duration,
 * not interrupted, and every GPU of this card sampled to its end. */
const json_t *gq_stress_journal_reusable(const gq_journal *j, const gq_topo *t, const int *gpus_sel, int n,
                                         double stress_s)
{
    const json_t *step = json_object_get(j->done_steps, "stress");
    const json_t *sec = json_object_get(step, "stress");
    const json_t *gpus = json_object_get(sec, "gpus");
    const json_t *series = json_object_get(json_object_get(sec, "series"), "gpus");
    if (!json_is_object(sec) || !json_is_false(json_object_get(sec, "interrupted")) ||
        !json_is_string(json_object_get(sec, "verdict")) || json_array_size(gpus) != (size_t)n ||
        json_array_size(series) != (size_t)n)
        return NULL;
    double dur = json_number_value(json_object_get(sec, "duration_s"));
    if (fabs(dur - stress_s) > 1e-6 || !(json_number_value(json_object_get(sec, "elapsed_s")) >= dur - 1e-6))
        return NULL;
    size_t np0 = json_array_size(json_object_get(json_array_get(series, 0), "t_s"));
    for (int k = 0; k < n; k++) {
        const gq_gpu_info *gi = &t->gpu[gpus_sel[k]];
        json_int_t dev = gi->index >= 0 ? gi->index : gpus_sel[k];
        const json_t *g = json_array_get(series, (size_t)k), *ts = json_object_get(g, "t_s");
        size_t np = json_array_size(ts);
        if (json_integer_value(json_object_get(json_array_get(gpus, (size_t)k), "gpu")) != dev ||
            json_integer_value(json_object_get(g, "gpu")) != dev || np < 2 || np != np0 ||
            !(json_number_value(json_array_get(ts, np - 1)) >= dur - 1e-6))
            return NULL;
    }
    return sec;
}

static void csv_header(FILE *f)
{
    fputs("gpu", f);
    for (int c = 0; c < C_N; c++)
        fprintf(f, ",%s", col_names[c]);
    fputc('\n', f);
}

/* One cell: a number as the CSV writes it, a boolean as 1 or 0, unknown empty. */
static void csv_cell(FILE *f, const json_t *v)
{
    fputc(',', f);
    if (json_is_real(v))
        fprintf(f, "%.6g", json_real_value(v));
    else if (json_is_integer(v))
        fprintf(f, "%lld", (long long)json_integer_value(v));
    else if (json_is_boolean(v))
        fputs(json_is_true(v) ? "1" : "0", f);
}

void gq_stress_write_csv(FILE *f, const gq_stress_result *r)
{
    csv_header(f);
    for (int k = 0; k < r->ngpu; k++) {
        const gq_stress_gpu *g = &r->gpu[k];
        for (int i = 0; i < g->npoints; i++) {
            fprintf(f, "%d", g->gpu);
            for (int c = 0; c < C_N; c++) {
                json_t *v = cell_json(&g->pts[i], c);
                csv_cell(f, v);
                json_decref(v);
            }
            fputc('\n', f);
        }
    }
}

/* ---- the "stress" section read back (gq_stress_from_json) ---- */

/* A number, null (or anything else) read as NAN: gq_json_num's inverse. */
static double num_of(const json_t *v)
{
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* jint's inverse: an integer, else -1. */
static long long int_at(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

/* ju64's inverse: an integer, else unknown. */
static uint64_t u64_of(const json_t *v)
{
    return json_is_integer(v) ? (uint64_t)json_integer_value(v) : GQ_STRESS_U64_UNKNOWN;
}

static bool bool_at(const json_t *o, const char *k)
{
    return json_is_true(json_object_get(o, k));
}

static void str_at(const json_t *o, const char *k, char *buf, size_t n)
{
    snprintf(buf, n, "%s", gq_json_get_str(o, k, ""));
}

static bool level_of(const json_t *v, gq_stress_level *out)
{
    for (int l = GQ_STRESS_PASS; l <= GQ_STRESS_FAIL; l++)
        if (json_is_string(v) && !strcmp(json_string_value(v), gq_stress_level_name((gq_stress_level)l))) {
            *out = (gq_stress_level)l;
            return true;
        }
    return false;
}

/* One GPU's summary and what the section keeps of its run (gpu_summary_json's inverse). */
static bool gpu_summary_from_json(const json_t *o, gq_stress_gpu *g, gq_stress_gpu_summary *S)
{
    if (!json_is_object(o) || !level_of(json_object_get(o, "verdict"), &S->verdict))
        return false;
    S->gpu = (int)int_at(o, "gpu");
    str_at(o, "name", S->name, sizeof S->name);
    snprintf(g->name, sizeof g->name, "%s", S->name);
    str_at(o, "uuid", g->uuid, sizeof g->uuid);
    S->nsamples = (int)int_at(o, "samples");
    S->nloaded = (int)int_at(o, "loaded_samples");
    S->temp_avg_c = gq_json_get_num(o, "temp_avg_c");
    S->temp_max_c = gq_json_get_num(o, "temp_max_c");
    S->mem_temp_max_c = gq_json_get_num(o, "mem_temp_max_c");
    S->power_avg_w = gq_json_get_num(o, "power_avg_w");
    S->power_max_w = gq_json_get_num(o, "power_max_w");
    S->power_limit_w = g->power_limit_w = gq_json_get_num(o, "power_limit_w");
    S->sm_clock_avg_mhz = gq_json_get_num(o, "sm_clock_avg_mhz");
    S->mem_clock_avg_mhz = gq_json_get_num(o, "mem_clock_avg_mhz");
    S->util_avg_pct = gq_json_get_num(o, "util_avg_pct");
    S->power_capped_pct = gq_json_get_num(o, "power_capped_pct");
    S->thermal_slowdown = bool_at(o, "thermal_slowdown");
    S->hw_slowdown = bool_at(o, "hw_slowdown");
    S->power_brake = bool_at(o, "hw_power_brake");
    S->thermal_pct = gq_json_get_num(o, "thermal_pct");
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(o, "clock_reasons_seen"), i, v) S->reasons_seen |=
        gq_clock_reason_bit(json_string_value(v));
    const json_t *pcie = json_object_get(o, "pcie");
    S->pcie_gen_min = (int)int_at(pcie, "gen_min_loaded");
    S->pcie_width_min = (int)int_at(pcie, "width_min_loaded");
    S->pcie_gen_max = g->pcie_gen_max = (int)int_at(pcie, "gen_max");
    S->pcie_width_max = g->pcie_width_max = (int)int_at(pcie, "width_max");
    S->link_down = bool_at(pcie, "trained_down");
    const json_t *e = json_object_get(o, "errors");
    S->ecc_corrected = int_at(e, "ecc_corrected");
    S->ecc_uncorrected = int_at(e, "ecc_uncorrected");
    S->pcie_replay = int_at(e, "pcie_replay");
    S->remapped_rows = (int)int_at(e, "remapped_rows");
    S->remapped_delta = (int)int_at(e, "remapped_rows_new");
    S->gemms = g->gemms = (uint64_t)json_integer_value(json_object_get(o, "gemms"));
    S->faulty = g->faulty = (uint64_t)json_integer_value(json_object_get(o, "faulty_elements"));
    S->tflops_avg = gq_json_get_num(o, "tflops_avg");
    S->lost = g->lost = bool_at(o, "lost");
    g->lost_t = -1;
    g->started = true;
    const json_t *err = json_object_get(o, "error");
    g->status = json_is_string(err) ? GQ_E_FAIL : GQ_OK;
    str_at(o, "error", g->error, sizeof g->error);
    S->errored = g->status != GQ_OK && !g->lost;
    const json_t *t = json_object_get(o, "transfers");
    S->xfer_gbps[0] = gq_json_get_num(t, "h2d_gbps");
    S->xfer_gbps[1] = gq_json_get_num(t, "d2h_gbps");
    g->xfer_status = json_is_string(json_object_get(t, "error")) ? GQ_E_FAIL : GQ_OK;
    str_at(t, "error", g->xfer_error, sizeof g->xfer_error);
    return true;
}

/* One row of a GPU's series (cell_json's inverse; the power-capped and
 * thermal columns follow from the reasons). */
static void point_from_json(const json_t *one, size_t i, gq_stress_point *p)
{
    const json_t *c[C_N];
    for (int k = 0; k < C_N; k++)
        c[k] = json_array_get(json_object_get(one, col_names[k]), i);
    memset(p, 0, sizeof *p);
    gq_stress_sample_unknown(&p->s);
    gq_sample *s = &p->s;
    p->has_sample = true;
    p->t = num_of(c[C_T]);
    p->loaded = json_is_true(c[C_LOADED]);
    s->temp_c = num_of(c[C_TEMP]);
    s->mem_temp_c = num_of(c[C_MEMTEMP]);
    s->power_w = num_of(c[C_POWER]);
    s->power_limit_w = num_of(c[C_PLIMIT]);
    s->sm_clock_mhz = num_of(c[C_SM]);
    s->mem_clock_mhz = num_of(c[C_MEM]);
    s->util_pct = num_of(c[C_UTIL]);
    s->clock_reasons = u64_of(c[C_REASONS]);
    s->pcie_gen = json_is_integer(c[C_GEN]) ? (int)json_integer_value(c[C_GEN]) : -1;
    s->pcie_width = json_is_integer(c[C_WIDTH]) ? (int)json_integer_value(c[C_WIDTH]) : -1;
    s->pcie_replay = u64_of(c[C_REPLAY]);
    s->ecc_corrected = u64_of(c[C_ECCC]);
    s->ecc_uncorrected = u64_of(c[C_ECCU]);
    s->remapped_rows = json_is_integer(c[C_REMAP]) ? (int)json_integer_value(c[C_REMAP]) : -1;
    s->lost = json_is_true(c[C_LOST]);
    p->gemms = (uint64_t)json_integer_value(c[C_GEMMS]);
    p->faulty = (uint64_t)json_integer_value(c[C_FAULTY]);
    p->tflops = num_of(c[C_TFLOPS]);
}

static int series_from_json(const json_t *one, gq_stress_gpu *g)
{
    g->gpu = (int)json_integer_value(json_object_get(one, "gpu"));
    size_t n = json_array_size(json_object_get(one, col_names[C_T]));
    for (size_t i = 0; i < n; i++) {
        gq_stress_point p;
        point_from_json(one, i, &p);
        if (gq_stress_point_push(g, &p))
            return GQ_E_NOMEM;
    }
    return GQ_OK;
}

static int section_bad(gq_err *err, const char *what)
{
    return gq_err_set(err, GQ_E_USAGE, "the stress section's %s is missing or not what gpuqual writes", what);
}

int gq_stress_from_json(const json_t *sec, gq_stress_result *r, gq_stress_summary *s, gq_err *err)
{
    memset(r, 0, sizeof *r);
    memset(s, 0, sizeof *s);
    const json_t *gpus = json_object_get(sec, "gpus");
    const json_t *series = json_object_get(json_object_get(sec, "series"), "gpus");
    size_t n = json_array_size(gpus);
    if (!json_is_object(sec) || !json_is_array(gpus) || n > GQ_MAX_GPUS || json_array_size(series) != n)
        return section_bad(err, "list of GPUs");
    const char *prec = json_string_value(json_object_get(sec, "precision"));
    bool known = false;
    for (int p = GQ_PREC_BF16; p <= GQ_PREC_FP64 && prec && !known; p++)
        if ((known = !strcmp(prec, gq_precision_name((gq_precision)p))))
            r->precision = (gq_precision)p;
    if (!known)
        return section_bad(err, "precision");
    if (!level_of(json_object_get(sec, "verdict"), &s->verdict))
        return section_bad(err, "verdict");
    r->duration_s = gq_json_get_num(sec, "duration_s");
    r->interval_s = gq_json_get_num(sec, "interval_s");
    r->elapsed_s = gq_json_get_num(sec, "elapsed_s");
    r->with_transfers = bool_at(sec, "with_transfers");
    r->interrupted = bool_at(sec, "interrupted");
    str_at(sec, "transfers_error", r->xfer_error, sizeof r->xfer_error);
    const json_t *rules = json_object_get(sec, "rules");
    s->rules.clock_spread_warn = gq_json_get_num(rules, "clock_spread_warn");
    s->rules.loaded_util_pct = gq_json_get_num(rules, "loaded_util_pct");
    r->ngpu = s->ngpu = (int)n;
    for (size_t k = 0; k < n; k++) {
        if (!gpu_summary_from_json(json_array_get(gpus, k), &r->gpu[k], &s->gpu[k]))
            return section_bad(err, "GPU summary");
        if (series_from_json(json_array_get(series, k), &r->gpu[k]))
            return gq_err_set(err, GQ_E_NOMEM, "out of memory reading the stress section");
    }
    const json_t *node = json_object_get(sec, "node");
    s->power_total_avg_w = gq_json_get_num(node, "power_total_avg_w");
    s->clock_spread = gq_json_get_num(node, "clock_spread");
    str_at(node, "clock_spread_model", s->clock_spread_model, sizeof s->clock_spread_model);
    size_t i;
    const json_t *f;
    json_array_foreach(json_object_get(sec, "findings"), i, f)
    {
        if (s->nfindings >= GQ_STRESS_MAX_FINDINGS)
            return section_bad(err, "list of findings");
        gq_stress_finding *F = &s->findings[s->nfindings++];
        if (!level_of(json_object_get(f, "level"), &F->level))
            return section_bad(err, "finding's level");
        F->gpu = (int)int_at(f, "gpu");
        str_at(f, "rule", F->rule, sizeof F->rule);
        str_at(f, "text", F->text, sizeof F->text);
    }
    s->nfindings_dropped = (int)json_integer_value(json_object_get(sec, "findings_dropped"));
    return GQ_OK;
}
