/* Prometheus text files (prometheus.h): node_exporter's textfile
 * conventions and dcgm-exporter's label names. */
#include "render/prometheus.h"
#include "core/version.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "measure/record_json.h"

/* ---- labels ---------------------------------------------------------------- */

typedef struct labels {
    char s[1024];
    size_t n;
} labels;

/* Append name="value" with the exposition format's escapes (\\, \", \n). */
static void lab(labels *l, const char *name, const char *value)
{
    if (!value || !*value || l->n + 8 >= sizeof l->s)
        return;
    l->n += (size_t)snprintf(l->s + l->n, sizeof l->s - l->n, "%s%s=\"", l->n ? "," : "", name);
    for (const char *p = value; *p && l->n + 4 < sizeof l->s; p++) {
        if (*p == '\\' || *p == '"') {
            l->s[l->n++] = '\\';
            l->s[l->n++] = *p;
        } else if (*p == '\n') {
            l->s[l->n++] = '\\';
            l->s[l->n++] = 'n';
        } else
            l->s[l->n++] = *p;
    }
    if (l->n + 2 < sizeof l->s)
        l->s[l->n++] = '"';
    l->s[l->n] = 0;
}

static void labi(labels *l, const char *name, long v)
{
    char b[32];
    snprintf(b, sizeof b, "%ld", v);
    lab(l, name, b);
}

/* dcgm-exporter's labels for GPU `index` (CUDA ordinal) of topo: gpu, UUID,
 * Hostname. Its fourth, modelName, is on gpuqual_gpu_info as model_name:
 * promtool refuses camelCase label names, and the model follows from the
 * UUID. */
static void gpu_labels(labels *l, const gq_topo *topo, int index)
{
    labi(l, "gpu", index);
    for (int k = 0; topo && k < topo->ngpu; k++)
        if (topo->gpu[k].index == index)
            lab(l, "UUID", topo->gpu[k].uuid);
    if (topo)
        lab(l, "Hostname", topo->hostname);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void sample(FILE *f, const char *name, const labels *l, double v)
{
    if (!isfinite(v))
        return;
    fprintf(f, "%s{%s} %.10g\n", name, l ? l->s : "", v);
}

/* ---- every file ------------------------------------------------------------ */

void gq_prom_header(FILE *f, const char *command, const char *hostname, const char *source, double now)
{
    labels l = {.n = 0};
    lab(&l, "version", gq_version);
    lab(&l, "revision", gq_git_rev);
    lab(&l, "command", command);
    lab(&l, "Hostname", hostname);
    lab(&l, "source", source);
    family(f, "gpuqual_info", "gauge",
           "gpuqual's version and revision, the command and where its figures come from (source sim:NAME is "
           "a simulated machine)");
    sample(f, "gpuqual_info", &l, 1);
    labels t = {.n = 0};
    lab(&t, "command", command);
    lab(&t, "Hostname", hostname);
    family(f, "gpuqual_last_run_timestamp_seconds", "gauge", "When the command finished, in unix seconds");
    sample(f, "gpuqual_last_run_timestamp_seconds", &t, now);
}

/* A PCI bus id the way DCGM and dcgm-exporter write it (NVML's busId):
 * an 8-hex-digit domain and upper-case hex, 00000000:3B:00.0. An id that
 * does not parse is written as it is. */
static const char *dcgm_bus_id(const char *in, char *out, size_t n)
{
    unsigned dom = 0, bus = 0, dev = 0, fn = 0;
    int used = 0;
    if (sscanf(in, "%x:%x:%x.%x%n", &dom, &bus, &dev, &fn, &used) == 4 && !in[used] && bus <= 0xff &&
        dev <= 0x1f && fn <= 7)
        snprintf(out, n, "%08X:%02X:%02X.%X", dom, bus, dev, fn);
    else if (sscanf(in, "%x:%x.%x%n", &bus, &dev, &fn, &used) == 3 && !in[used] && bus <= 0xff &&
             dev <= 0x1f && fn <= 7)
        snprintf(out, n, "%08X:%02X:%02X.%X", 0u, bus, dev, fn);
    else
        snprintf(out, n, "%s", in);
    return out;
}

void gq_prom_gpus(FILE *f, const gq_topo *topo, const char *command)
{
    if (!topo || topo->ngpu <= 0)
        return;
    family(f, "gpuqual_gpu_info", "gauge",
           "Each GPU's identity as the command saw it (join on UUID or pci_bus_id with dcgm-exporter)");
    for (int k = 0; k < topo->ngpu; k++) {
        const gq_gpu_info *g = &topo->gpu[k];
        labels l = {.n = 0};
        gpu_labels(&l, topo, g->index);
        lab(&l, "model_name", g->name);
        char bus[32];
        lab(&l, "pci_bus_id", dcgm_bus_id(g->pci_bus_id, bus, sizeof bus));
        lab(&l, "driver_version", topo->driver_version);
        lab(&l, "vbios", g->vbios[0] ? g->vbios : "unknown");
        lab(&l, "serial", g->serial[0] ? g->serial : "unknown");
        lab(&l, "ecc_mode", gq_mode_name(g->ecc_mode));
        lab(&l, "mig_mode", gq_mode_name(g->mig_mode));
        lab(&l, "persistence_mode", gq_mode_name(g->persistence_mode));
        lab(&l, "command", command);
        sample(f, "gpuqual_gpu_info", &l, 1);
    }
}

/* ---- run: records -------------------------------------------------------- */

/* The GPU a record's figure belongs to: the source GPU of a copy that reads
 * a GPU, else its destination GPU; -1 for an aggregate over several GPUs. */
static int record_gpu(const gq_record *r)
{
    if ((r->aggregate || r->sum) && r->ngpus != 1)
        return -1;
    if (r->src.kind == GQ_EP_GPU)
        return r->src.index;
    if (r->dst.kind == GQ_EP_GPU)
        return r->dst.index;
    return r->ngpus == 1 ? r->gpus[0] : -1;
}

static void record_labels(labels *l, const gq_record *r, const gq_topo *topo)
{
    char a[32], b[32], gl[400] = "";
    size_t used = 0;
    int g = record_gpu(r);
    if (g >= 0)
        gpu_labels(l, topo, g);
    else if (topo)
        lab(l, "Hostname", topo->hostname);
    for (int k = 0; k < r->ngpus && used + 8 < sizeof gl; k++)
        used += (size_t)snprintf(gl + used, sizeof gl - used, "%s%d", k ? "," : "", r->gpus[k]);
    lab(l, "test", r->test);
    lab(l, "src", gq_rec_endpoint(r->src, a, sizeof a));
    lab(l, "dst", gq_rec_endpoint(r->dst, b, sizeof b));
    lab(l, "method", gq_method_name(r->method));
    lab(l, "kind", r->sum ? "sum" : r->aggregate ? "aggregate" : "flow");
    lab(l, "direction", gq_direction_name(r->direction));
    lab(l, "gpus", gl);
    labi(l, "bytes", (long)r->bytes);
    labi(l, "group", r->group);
}

enum { F_BW, F_LAT, F_SPREAD, F_OVERLAP, F_VALID };

/* A record's labels, from the cache gq_prom_records made (each record's
 * labels are built once for all five families), or built now without one. */
static void labels_of(labels *l, const labels *cache, int i, const gq_record *r, const gq_topo *topo)
{
    if (cache) {
        *l = cache[i];
        return;
    }
    l->n = 0;
    l->s[0] = 0;
    record_labels(l, r, topo);
}

static void record_family(FILE *f, const gq_recordset *rs, const gq_topo *topo, const labels *cache,
                          int which, const char *prefix)
{
    static const struct {
        const char *name, *help;
    } fam[] = {
        {"bandwidth_bytes_per_second", "Measured bandwidth over the rounds (stat: median, min, max)"},
        {"latency_seconds", "Measured latency over the rounds (stat: median, min, max)"},
        {"spread_ratio", "Spread between rounds, (max - min) / median"},
        {"overlap_ratio", "Window shared by concurrent flows over each flow's own window (min over rounds)"},
        {"valid", "1 when the figure is valid, 0 when flagged (impossible, overlap, error, verify_failed)"},
    };
    bool header = false;
    char name[96];
    snprintf(name, sizeof name, "%s_%s", prefix, fam[which].name);
    for (int i = 0; rs && i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if ((which == F_BW && (r->is_latency || r->value.n == 0)) ||
            (which == F_LAT && (!r->is_latency || r->value.n == 0)) ||
            (which == F_SPREAD && r->value.n == 0) || (which == F_OVERLAP && r->overlap < 0))
            continue;
        if (!header) {
            family(f, name, "gauge", fam[which].help);
            header = true;
        }
        if (which == F_BW || which == F_LAT) {
            static const char *stats[] = {"median", "min", "max"};
            const double v[] = {r->value.median, r->value.min, r->value.max};
            const double scale = which == F_BW ? 1e9 : 1e-9; /* GB/s -> B/s, ns -> s */
            labels base;
            labels_of(&base, cache, i, r, topo);
            for (int s = 0; s < 3; s++) {
                labels l = base;
                lab(&l, "stat", stats[s]);
                sample(f, name, &l, v[s] * scale);
            }
            continue;
        }
        labels l;
        labels_of(&l, cache, i, r, topo);
        double v = which == F_SPREAD    ? r->value.spread
                   : which == F_OVERLAP ? r->overlap
                                        : (r->valid ? 1.0 : 0.0);
        sample(f, name, &l, v);
    }
}

void gq_prom_records(FILE *f, const gq_recordset *rs, const gq_topo *topo, const char *prefix)
{
    labels *cache = rs && rs->n > 0 ? calloc((size_t)rs->n, sizeof *cache) : NULL;
    for (int i = 0; cache && i < rs->n; i++)
        record_labels(&cache[i], &rs->v[i], topo);
    for (int w = F_BW; w <= F_VALID; w++)
        record_family(f, rs, topo, cache, w, prefix ? prefix : "gpuqual");
    free(cache);
}

/* ---- stress ---------------------------------------------------------------- */

static const char *const stress_verdicts[] = {"pass", "warn", "fail"};

static void verdict_series(FILE *f, const char *name, const labels *base, const char *verdict,
                           const char *const *values, int nvalues)
{
    for (int v = 0; v < nvalues; v++) {
        labels l = *base;
        lab(&l, "verdict", values[v]);
        sample(f, name, &l, !strcmp(values[v], verdict) ? 1 : 0);
    }
}

static void stress_gauges(FILE *f, const gq_stress_summary *s, const gq_topo *topo)
{
    static const struct {
        const char *name, *help;
        size_t off;
        double scale;
    } m[] = {
        {"gpuqual_stress_temperature_avg_celsius", "Average GPU temperature under load",
         offsetof(gq_stress_gpu_summary, temp_avg_c), 1},
        {"gpuqual_stress_temperature_max_celsius", "Maximum GPU temperature under load",
         offsetof(gq_stress_gpu_summary, temp_max_c), 1},
        {"gpuqual_stress_power_avg_watts", "Average power under load",
         offsetof(gq_stress_gpu_summary, power_avg_w), 1},
        {"gpuqual_stress_power_limit_watts", "Enforced power limit",
         offsetof(gq_stress_gpu_summary, power_limit_w), 1},
        {"gpuqual_stress_sm_clock_avg_hertz", "Average SM clock under load",
         offsetof(gq_stress_gpu_summary, sm_clock_avg_mhz), 1e6},
        {"gpuqual_stress_power_capped_ratio", "Share of loaded samples with the software power cap (0-1)",
         offsetof(gq_stress_gpu_summary, power_capped_pct), 0.01},
        {"gpuqual_stress_thermal_ratio", "Share of loaded samples with a thermal slowdown reason (0-1)",
         offsetof(gq_stress_gpu_summary, thermal_pct), 0.01},
        {"gpuqual_stress_gemm_flops_per_second", "Achieved GEMM floating-point operations per second",
         offsetof(gq_stress_gpu_summary, tflops_avg), 1e12},
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        family(f, m[i].name, "gauge", m[i].help);
        for (int k = 0; k < s->ngpu; k++) {
            double v = *(const double *)((const char *)&s->gpu[k] + m[i].off);
            labels l = {.n = 0};
            gpu_labels(&l, topo, s->gpu[k].gpu);
            if (v >= 0 || m[i].scale == 1) /* unknown ratios are negative or NaN */
                sample(f, m[i].name, &l, v * m[i].scale);
        }
    }
}

static void stress_counters(FILE *f, const gq_stress_summary *s, const gq_topo *topo)
{
    static const struct {
        const char *name, *help;
        int which;
    } m[] = {
        {"gpuqual_stress_gemms_total", "GEMMs run during the stress run", 0},
        {"gpuqual_stress_faulty_elements_total", "Faulty GEMM result elements found during the stress run",
         1},
        {"gpuqual_stress_ecc_corrected_errors_total", "Corrected ECC errors counted during the stress run",
         2},
        {"gpuqual_stress_ecc_uncorrected_errors_total",
         "Uncorrected ECC errors counted during the stress run", 3},
        {"gpuqual_stress_pcie_replays_total", "PCIe replays counted during the stress run", 4},
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        family(f, m[i].name, "counter", m[i].help);
        for (int k = 0; k < s->ngpu; k++) {
            const gq_stress_gpu_summary *g = &s->gpu[k];
            double v = m[i].which == 0   ? (double)g->gemms
                       : m[i].which == 1 ? (double)g->faulty
                       : m[i].which == 2 ? (double)g->ecc_corrected
                       : m[i].which == 3 ? (double)g->ecc_uncorrected
                                         : (double)g->pcie_replay;
            labels l = {.n = 0};
            gpu_labels(&l, topo, g->gpu);
            if (v >= 0) /* -1: the counter could not be read */
                sample(f, m[i].name, &l, v);
        }
    }
}

void gq_prom_run_incomplete(FILE *f, const gq_topo *topo, bool incomplete)
{
    labels host = {.n = 0};
    if (topo)
        lab(&host, "Hostname", topo->hostname);
    family(f, "gpuqual_run_incomplete", "gauge",
           "1 when the run was interrupted (Ctrl-C): its figures are only part of the tests asked for "
           "(exit 130), else 0");
    sample(f, "gpuqual_run_incomplete", &host, incomplete ? 1 : 0);
}

void gq_prom_stress(FILE *f, const gq_stress_summary *s, const gq_topo *topo)
{
    labels host = {.n = 0};
    if (topo)
        lab(&host, "Hostname", topo->hostname);
    family(f, "gpuqual_stress_verdict", "gauge",
           "The stress run's verdict: 1 for the verdict it reached, else 0");
    verdict_series(f, "gpuqual_stress_verdict", &host, gq_stress_level_name(s->verdict), stress_verdicts, 3);
    family(f, "gpuqual_stress_incomplete", "gauge",
           "1 when the stress run was interrupted (Ctrl-C) before its duration: the verdict is judged on "
           "what ran (exit 5), else 0");
    sample(f, "gpuqual_stress_incomplete", &host, s->interrupted ? 1 : 0);
    family(f, "gpuqual_stress_gpu_verdict", "gauge",
           "Each GPU's stress verdict: 1 for the verdict it reached, else 0");
    for (int k = 0; k < s->ngpu; k++) {
        labels l = {.n = 0};
        gpu_labels(&l, topo, s->gpu[k].gpu);
        const char *v = gq_stress_level_name(s->gpu[k].verdict);
        verdict_series(f, "gpuqual_stress_gpu_verdict", &l, !strcmp(v, "info") ? "pass" : v, stress_verdicts,
                       3);
    }
    stress_gauges(f, s, topo);
    stress_counters(f, s, topo);
}

/* ---- card and fleet ------------------------------------------------------ */

static const char *const card_verdicts[] = {"pass", "warn", "fail", "incomplete"};
static const char *const check_verdicts[] = {"pass", "warn", "fail", "info", "skip"};

/* s, or def where the summary has none. */
static const char * or (const char *s, const char *def)
{
    return s ? s : def;
}

/* A check's figure in base units: the family and the scale, or NULL for a
 * unit with no base-unit family (the figure is then left out). */
static const char *figure_family(const char *unit, double *scale)
{
    static const struct {
        const char *unit, *family;
        double scale;
    } u[] = {
        {"GB/s", "gpuqual_card_check_bytes_per_second", 1e9},
        {"ns", "gpuqual_card_check_seconds", 1e-9},
        {"us", "gpuqual_card_check_seconds", 1e-6},
        {"s", "gpuqual_card_check_seconds", 1},
        {"°C", "gpuqual_card_check_celsius", 1},
        {"C", "gpuqual_card_check_celsius", 1},
        {"W", "gpuqual_card_check_watts", 1},
        {"MHz", "gpuqual_card_check_hertz", 1e6},
        {"%", "gpuqual_card_check_ratio", 0.01},
        {"ratio", "gpuqual_card_check_ratio", 1},
    };
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        if (!strcmp(unit, u[i].unit)) {
            *scale = u[i].scale;
            return u[i].family;
        }
    return NULL;
}

/* The node: its Hostname, and its rank in a fleet. */
static void node_labels(labels *l, const gq_card_node *node)
{
    lab(l, "Hostname", or (node->hostname, ""));
    if (node->has_rank)
        labi(l, "rank", (long)node->rank);
}

static void check_labels(labels *l, const gq_card_node *node, const gq_card_node_check *c)
{
    node_labels(l, node);
    lab(l, "check", or (c->id, ""));
    lab(l, "subject", or (c->subject, ""));
    lab(l, "evidence", or (c->evidence, ""));
}

static void card_figures(FILE *f, const gq_card_nodes *nodes)
{
    static const char *fams[] = {"gpuqual_card_check_bytes_per_second",
                                 "gpuqual_card_check_seconds",
                                 "gpuqual_card_check_celsius",
                                 "gpuqual_card_check_watts",
                                 "gpuqual_card_check_hertz",
                                 "gpuqual_card_check_ratio"};
    for (size_t fi = 0; fi < sizeof fams / sizeof fams[0]; fi++) {
        bool header = false;
        for (int i = 0; i < nodes->n; i++)
            for (int k = 0; k < nodes->node[i].nchecks; k++) {
                const gq_card_node_check *c = &nodes->node[i].checks[k];
                double scale = 1;
                const char *fam = figure_family(or (c->unit, ""), &scale);
                if (!fam || strcmp(fam, fams[fi]) || isnan(c->figure))
                    continue;
                if (!header) {
                    family(f, fam, "gauge", "The figure a card check judged, in base units");
                    header = true;
                }
                labels l = {.n = 0};
                check_labels(&l, &nodes->node[i], c);
                sample(f, fam, &l, c->figure * scale);
            }
    }
}

void gq_prom_nodes(FILE *f, const gq_card_nodes *nodes)
{
    family(f, "gpuqual_card_verdict", "gauge", "The card's verdict: 1 for the verdict it reached, else 0");
    for (int i = 0; i < nodes->n; i++) {
        labels l = {.n = 0};
        node_labels(&l, &nodes->node[i]);
        verdict_series(f, "gpuqual_card_verdict", &l, or (nodes->node[i].verdict, "incomplete"),
                       card_verdicts, 4);
    }
    family(f, "gpuqual_card_exit_code", "gauge",
           "The card's exit code (0 pass, 4 warn, 1 fail, 5 incomplete)");
    for (int i = 0; i < nodes->n; i++) {
        labels l = {.n = 0};
        node_labels(&l, &nodes->node[i]);
        sample(f, "gpuqual_card_exit_code", &l, (double)nodes->node[i].exit_code);
    }
    family(f, "gpuqual_card_check_verdict", "gauge",
           "Each check's verdict: 1 for the verdict it reached, else 0 (skip: not measured)");
    for (int i = 0; i < nodes->n; i++)
        for (int k = 0; k < nodes->node[i].nchecks; k++) {
            const gq_card_node_check *c = &nodes->node[i].checks[k];
            labels l = {.n = 0};
            check_labels(&l, &nodes->node[i], c);
            verdict_series(f, "gpuqual_card_check_verdict", &l, or (c->verdict, "skip"), check_verdicts, 5);
        }
    card_figures(f, nodes);
}

void gq_prom_cards(FILE *f, const json_t *nodes)
{
    gq_card_nodes l;
    gq_card_nodes_init(&l);
    if (gq_card_nodes_from_json(nodes, &l) == GQ_OK)
        gq_prom_nodes(f, &l);
    gq_card_nodes_free(&l);
}
