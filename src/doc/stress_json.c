/* The stress run's outputs: the "stress" section of a saved document and the
 * time series as CSV, from the typed results of analysis/stress. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
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

void gq_stress_journal_done(gq_journal *j, const json_t *section)
{
    json_t *st = json_object();
    if (!st)
        return;
    json_object_set_new(st, "step", json_string("stress"));
    json_object_set_new(st, "status", json_string("done"));
    json_object_set(st, "stress", (json_t *)section);
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

void gq_stress_write_csv_section(FILE *f, const json_t *section)
{
    csv_header(f);
    const json_t *gpus = json_object_get(json_object_get(section, "series"), "gpus");
    for (size_t k = 0; k < json_array_size(gpus); k++) {
        const json_t *g = json_array_get(gpus, k);
        size_t n = json_array_size(json_object_get(g, col_names[C_T]));
        for (size_t i = 0; i < n; i++) {
            fprintf(f, "%lld", (long long)json_integer_value(json_object_get(g, "gpu")));
            for (int c = 0; c < C_N; c++)
                csv_cell(f, json_array_get(json_object_get(g, col_names[c]), i));
            fputc('\n', f);
        }
    }
}
