/* Simulated stress load and telemetry (model and faults in sim_stress.h). */
#include "backend/sim/sim_stress.h"
#include "backend/sim/sim.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/units.h"

#define T_AMB 30.0    /* C */
#define T_LOADED 71.1 /* C at the power limit, steady (seed 001: max 71 C) */
#define T_FAULT 110.0 /* C the thermal fault heads for */
#define T_THROTTLE_ON 88.0
#define T_THROTTLE_OFF 84.0
#define TAU 26.0          /* s */
#define SETUP_S 0.3       /* s from start to the first GEMM */
#define STEP_S 0.25       /* s, integration step of the thermal model */
#define GEMM_N_16 16384.0 /* matrix orders as the CUDA backend uses them */
#define GEMM_N_32 8192.0

/* What the model knows of a GPU model. Rates are achieved dense GEMM
 * TFLOP/s at boost clock (bf16/fp16 on tensor cores, fp32, fp64). */
typedef struct gpu_model {
    const char *match; /* substring of the GPU name */
    double boost_mhz, mem_mhz, limit_w;
    double tf[4];
} gpu_model;

static const gpu_model models[] = {
    {.match = "H200", .boost_mhz = 1980, .mem_mhz = 3201, .limit_w = 700, .tf = {790, 790, 51, 60}},
    {.match = "H100", .boost_mhz = 1980, .mem_mhz = 2619, .limit_w = 700, .tf = {760, 760, 51, 60}},
    {.match = "A100", .boost_mhz = 1410, .mem_mhz = 1512, .limit_w = 250, .tf = {250, 250, 19, 19}},
    {.match = "RTX PRO 6000",
     .boost_mhz = 2617,
     .mem_mhz = 14001,
     .limit_w = 600,
     .tf = {450, 450, 110, 1.8}},
    {.match = "4090", .boost_mhz = 2520, .mem_mhz = 10501, .limit_w = 450, .tf = {160, 160, 75, 1.2}},
    {.match = "", .boost_mhz = 1800, .mem_mhz = 2000, .limit_w = 300, .tf = {100, 100, 20, 5}},
};

typedef struct sim_gpu {
    /* fixed */
    const gpu_model *m;
    double limit_w, clock_off, temp_off;
    int gen_max, width_max; /* what the link can do */
    int gen_cur, width_cur; /* what it trained at (the topology's negotiated link) */
    unsigned faults;
    /* load */
    bool running;
    gq_precision prec;
    double t_start; /* virtual time of stress_start */
    double flops_done;
    uint64_t faulty;
    double poll_t, poll_flops;
    double poll_tflops;
    /* state at time t */
    double t, temp;
    bool throttled, lost;
    double ecc_c, ecc_u, replay;
    uint64_t nsamples;
} sim_gpu;

struct gq_sim_stress {
    bool have_topo;
    uint64_t seed;
    double noise; /* relative amplitude; 0 = none */
    gq_sim_faults faults;
    double vt; /* virtual clock, seconds */
    int ngpu;
    sim_gpu gpu[GQ_MAX_GPUS];
};
typedef struct gq_sim_stress sim_state;

gq_sim_stress *gq_sim_stress_new(uint64_t seed, double noise, const gq_sim_faults *faults)
{
    sim_state *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->seed = seed;
    s->noise = noise >= 0 ? noise : GQ_SIM_NOISE_DEFAULT;
    if (faults)
        s->faults = *faults;
    return s;
}

void gq_sim_stress_free(gq_sim_stress *s)
{
    free(s);
}

/* ---- faults ------------------------------------------------------------- */

static const struct {
    const char *name;
    unsigned bit;
} fault_kinds[] = {
    {"thermal", GQ_SIM_FAULT_THERMAL}, {"ecc", GQ_SIM_FAULT_ECC},   {"faulty-result", GQ_SIM_FAULT_FAULTY},
    {"link-x8", GQ_SIM_FAULT_LINK_X8}, {"lost", GQ_SIM_FAULT_LOST}, {"busy", GQ_SIM_FAULT_BUSY},
};
#define VALID_FAULTS                                                                                         \
    "gpuN:thermal, gpuN:ecc, gpuN:faulty-result, gpuN:link-x8, gpuN:lost, gpuN:busy, "                       \
    "SWITCH:link-x8 (a switch or bridge of the topology, e.g. sw0:link-x8), no-nccl (NCCL not installed), "  \
    "interrupt@N (a Ctrl-C during the N-th measurement call, N from 1)"

/* A node name of the topology format: a letter, then letters, digits, _ - . */
static bool node_name(const char *s, size_t n)
{
    if (!n || n >= sizeof((gq_sim_faults *)0)->node[0] || !isalpha((unsigned char)s[0]))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.')
            return false;
    return true;
}

/* "interrupt@N": N a whole number from 1, digits only. */
static int parse_interrupt(const char *item, gq_sim_faults *out, gq_err *err)
{
    const char *n = item + strlen("interrupt@");
    long v = 0;
    bool ok = item[strlen("interrupt")] == '@' && *n != 0;
    for (const char *q = n; ok && *q; q++) {
        ok = isdigit((unsigned char)*q) && v <= (GQ_SIM_INTERRUPT_MAX - (*q - '0')) / 10;
        v = ok ? v * 10 + (*q - '0') : v;
    }
    if (!ok || v < 1)
        return gq_err_set(
            err, GQ_E_USAGE,
            "--sim-fault '%s': expected interrupt@N, N a whole number from 1 to %ld (the measurement call "
            "the Ctrl-C arrives in), e.g. interrupt@3",
            item, (long)GQ_SIM_INTERRUPT_MAX);
    if (out->interrupt_at)
        return gq_err_set(err, GQ_E_USAGE,
                          "--sim-fault '%s': a second interrupt@ item (interrupt@%ld was given); give one",
                          item, out->interrupt_at);
    out->interrupt_at = v;
    return GQ_OK;
}

int gq_sim_faults_parse(const char *spec, int ngpu, gq_sim_faults *out, gq_err *err)
{
    memset(out, 0, sizeof *out);
    if (!spec || !*spec)
        return GQ_OK;
    const char *p = spec;
    for (;;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        char item[64];
        if (l == 0 || l >= sizeof item)
            return gq_err_set(err, GQ_E_USAGE, "--sim-fault '%s': %s item; valid: %s", spec,
                              l ? "too long an" : "empty", VALID_FAULTS);
        memcpy(item, p, l);
        item[l] = 0;
        if (!strcmp(item, "no-nccl")) { /* the machine has no NCCL: collectives refused */
            out->no_nccl = true;
            if (!c)
                break;
            p = c + 1;
            continue;
        }
        if (!strncmp(item, "interrupt", strlen("interrupt"))) {
            int rc = parse_interrupt(item, out, err);
            if (rc)
                return rc;
            if (!c)
                break;
            p = c + 1;
            continue;
        }
        char *colon = strchr(item, ':');
        char *end = NULL;
        long g = -1;
        if (colon && !strncmp(item, "gpu", 3) && item + 3 < colon) {
            g = strtol(item + 3, &end, 10);
            if (end != colon || g < 0)
                g = -1;
        }
        if (g < 0 && colon && node_name(item, (size_t)(colon - item)) && strncasecmp(item, "gpu", 3)) {
            /* a switch or bridge: only its uplink can train down */
            *colon = 0;
            if (strcmp(colon + 1, "link-x8"))
                return gq_err_set(err, GQ_E_USAGE,
                                  "--sim-fault '%s:%s': a switch or bridge takes only link-x8 (%s:link-x8); "
                                  "valid: %s",
                                  item, colon + 1, item, VALID_FAULTS);
            bool dup = false;
            for (int k = 0; k < out->nnode; k++)
                dup |= !strcmp(out->node[k], item);
            if (!dup && out->nnode == GQ_SIM_MAX_NODE_FAULTS)
                return gq_err_set(err, GQ_E_USAGE,
                                  "--sim-fault: at most %d switches or bridges can be trained down",
                                  GQ_SIM_MAX_NODE_FAULTS);
            if (!dup)
                snprintf(out->node[out->nnode++], sizeof out->node[0], "%s", item);
            if (!c)
                break;
            p = c + 1;
            continue;
        }
        if (g < 0)
            return gq_err_set(err, GQ_E_USAGE, "--sim-fault: unknown fault spec '%s'; valid: %s", item,
                              VALID_FAULTS);
        unsigned bit = 0;
        const char *cands[sizeof fault_kinds / sizeof fault_kinds[0] + 1];
        for (size_t i = 0; i < sizeof fault_kinds / sizeof fault_kinds[0]; i++) {
            cands[i] = fault_kinds[i].name;
            if (!strcmp(colon + 1, fault_kinds[i].name))
                bit = fault_kinds[i].bit;
        }
        cands[sizeof fault_kinds / sizeof fault_kinds[0]] = NULL;
        if (!bit) {
            const char *best = gq_closest(colon + 1, cands);
            return gq_err_set(err, GQ_E_USAGE, "--sim-fault: unknown fault spec '%s'%s%s%s; valid: %s", item,
                              best ? " (did you mean '" : "", best ? best : "", best ? "'?)" : "",
                              VALID_FAULTS);
        }
        if (ngpu > 0 && g >= ngpu)
            return gq_err_set(err, GQ_E_USAGE,
                              "--sim-fault '%s': GPU %ld does not exist (this machine has GPUs 0-%d)", item,
                              g, ngpu - 1);
        if (g < GQ_MAX_GPUS) /* beyond it ngpu is 0: the sim backend checks it against the machine */
            out->gpu[g] |= bit;
        if (!c)
            break;
        p = c + 1;
    }
    return GQ_OK;
}

/* ---- model -------------------------------------------------------------- */

static double hash_pm1(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t z = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull ^ c;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
}

/* Learn the machine from discovery, as a caller would see it. */
static int load_topo(gq_backend *be, sim_state *s, gq_err *err)
{
    if (s->have_topo)
        return GQ_OK;
    gq_topo *t = malloc(sizeof *t);
    if (!t)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    gq_topo_init(t);
    int rc = be->ops->discover(be, t, err);
    if (rc == GQ_OK) {
        s->ngpu = t->ngpu < GQ_MAX_GPUS ? t->ngpu : GQ_MAX_GPUS;
        double scale = s->noise / 0.01; /* linear in the one noise scale, as every part of it */
        for (int i = 0; i < s->ngpu; i++) {
            sim_gpu *g = &s->gpu[i];
            const gq_gpu_info *gi = &t->gpu[i];
            g->m = &models[sizeof models / sizeof models[0] - 1];
            for (size_t k = 0; k + 1 < sizeof models / sizeof models[0]; k++)
                if (strstr(gi->name, models[k].match)) {
                    g->m = &models[k];
                    break;
                }
            g->limit_w = gi->power_limit_w > 0 ? gi->power_limit_w : g->m->limit_w;
            g->gen_max = gi->pcie_gen_max > 0   ? gi->pcie_gen_max
                         : gi->pcie_gen_cur > 0 ? gi->pcie_gen_cur
                                                : 4;
            g->width_max = gi->pcie_width_max > 0   ? gi->pcie_width_max
                           : gi->pcie_width_cur > 0 ? gi->pcie_width_cur
                                                    : 16;
            g->gen_cur = gi->pcie_gen_cur > 0 ? gi->pcie_gen_cur : g->gen_max;
            g->width_cur = gi->pcie_width_cur > 0 ? gi->pcie_width_cur : g->width_max;
            g->clock_off = 0.0092 * scale * hash_pm1(s->seed, (uint64_t)i, 1);
            g->temp_off = 0.4 * scale * hash_pm1(s->seed, (uint64_t)i, 2);
            g->faults = s->faults.gpu[i];
            g->temp = T_AMB + 2 + g->temp_off + (g->faults & GQ_SIM_FAULT_THERMAL ? 10 : 0);
            g->t = s->vt;
        }
        s->have_topo = true;
    }
    free(t);
    return rc;
}

static bool loaded(const sim_gpu *g, double t)
{
    return g->running && !g->lost && t - g->t_start >= SETUP_S;
}

/* Demanded power over the limit under load, by precision. */
static double demand_ratio(gq_precision p)
{
    return p == GQ_PREC_FP64 ? 1.0 : p == GQ_PREC_FP32 ? 1.1 : 1.2;
}

typedef struct op_point {
    double power, clock, util;
    uint64_t reasons;
    bool capped;
} op_point;

/* Power, clock and reasons of a GPU at its current state. */
static op_point operating(const sim_gpu *g, double t)
{
    op_point o = {0};
    double boost = g->m->boost_mhz * (1 + g->clock_off);
    if (!loaded(g, t)) {
        o.power = 0.1 * g->limit_w;
        o.clock = 0.17 * boost;
        o.reasons = GQ_CLK_GPU_IDLE;
        return o;
    }
    double demand = demand_ratio(g->prec) * g->limit_w;
    o.util = 100;
    o.power = demand;
    o.clock = boost;
    if (demand > g->limit_w) {
        o.power = g->limit_w * 0.992;
        o.clock = boost * pow(g->limit_w / demand, 0.88);
        o.capped = true;
        o.reasons |= GQ_CLK_SW_POWER_CAP;
    }
    if (g->throttled) {
        o.power *= 0.75;
        o.clock *= 0.75;
        o.reasons |= (GQ_CLK_SW_THERMAL | GQ_CLK_HW_THERMAL | GQ_CLK_HW_SLOWDOWN);
    }
    return o;
}

/* Advance one GPU's thermal and counter state to time `to`. */
static void advance(sim_gpu *g, double to)
{
    while (g->t < to - 1e-12) {
        double dt = to - g->t < STEP_S ? to - g->t : STEP_S;
        op_point o = operating(g, g->t);
        double r = ((g->faults & GQ_SIM_FAULT_THERMAL) ? T_FAULT - T_AMB : T_LOADED - T_AMB) / g->limit_w;
        double tss = T_AMB + g->temp_off + r * o.power;
        g->temp = tss + (g->temp - tss) * exp(-dt / TAU);
        if (!g->throttled && g->temp >= T_THROTTLE_ON)
            g->throttled = true;
        else if (g->throttled && g->temp <= T_THROTTLE_OFF)
            g->throttled = false;
        if (loaded(g, g->t)) {
            double tf = g->m->tf[g->prec] * o.clock / (g->m->boost_mhz * (1 + g->clock_off));
            g->flops_done += tf * 1e12 * dt;
            double tl0 = g->t - g->t_start, tl1 = tl0 + dt;
            if (g->faults & GQ_SIM_FAULT_LINK_X8)
                g->replay += 2 * dt;
            if (g->faults & GQ_SIM_FAULT_ECC) {
                g->ecc_c += 0.3 * dt;
                /* +1 at 5 s under load, then every 20 s */
                double n0 = tl0 < 5 ? 0 : floor((tl0 - 5) / 20) + 1,
                       n1 = tl1 < 5 ? 0 : floor((tl1 - 5) / 20) + 1;
                g->ecc_u += n1 - n0;
            }
            if (g->faults & GQ_SIM_FAULT_FAULTY) {
                double n0 = tl0 < 3 ? 0 : floor((tl0 - 3) / 2) + 1,
                       n1 = tl1 < 3 ? 0 : floor((tl1 - 3) / 2) + 1;
                g->faulty += (uint64_t)(7 * (n1 - n0));
            }
            if ((g->faults & GQ_SIM_FAULT_LOST) && tl1 >= 10)
                g->lost = true;
        }
        g->t += dt;
    }
}

static double gemm_flops(gq_precision p)
{
    double n = p == GQ_PREC_FP32 || p == GQ_PREC_FP64 ? GEMM_N_32 : GEMM_N_16;
    return 2 * n * n * n;
}

static uint64_t gemms_of(const sim_gpu *g)
{
    double f = gemm_flops(g->prec);
    return g->flops_done > 0 ? 2 + (uint64_t)(g->flops_done / f) : 0;
}

static int get_gpu(sim_state *s, gq_backend *be, int gpu, sim_gpu **gp, gq_err *err)
{
    int rc = load_topo(be, s, err);
    if (rc)
        return rc;
    if (gpu < 0 || gpu >= s->ngpu)
        return gq_err_set(err, GQ_E_USAGE, "GPU %d does not exist (this machine has GPUs 0-%d)", gpu,
                          s->ngpu - 1);
    *gp = &s->gpu[gpu];
    advance(*gp, s->vt);
    return GQ_OK;
}

/* ---- hooks -------------------------------------------------------------- */

int gq_sim_stress_start(gq_sim_stress *s, gq_backend *be, int gpu, gq_precision p, gq_err *err)
{
    sim_gpu *g;
    int rc = get_gpu(s, be, gpu, &g, err);
    if (rc)
        return rc;
    if (p < GQ_PREC_BF16 || p > GQ_PREC_FP64)
        return gq_err_set(err, GQ_E_USAGE, "unknown precision %d", (int)p);
    if (g->running)
        return gq_err_set(err, GQ_E_USAGE, "GPU %d: a stress load is already running", gpu);
    if (g->lost)
        return gq_err_set(err, GQ_E_BACKEND, "GPU %d has fallen off the bus (simulated)", gpu);
    g->running = true;
    g->prec = p;
    g->t_start = s->vt;
    g->flops_done = 0;
    g->faulty = 0;
    g->poll_t = s->vt + SETUP_S;
    g->poll_flops = 0;
    g->poll_tflops = NAN;
    return GQ_OK;
}

int gq_sim_stress_poll(gq_sim_stress *s, gq_backend *be, int gpu, uint64_t *gemms, uint64_t *faulty,
                       double *tflops, gq_err *err)
{
    sim_gpu *g;
    int rc = get_gpu(s, be, gpu, &g, err);
    if (rc)
        return rc;
    if (!g->running)
        return gq_err_set(err, GQ_E_USAGE, "GPU %d: no stress load is running", gpu);
    *gemms = gemms_of(g);
    *faulty = g->faulty;
    if (s->vt > g->poll_t && g->flops_done > g->poll_flops) {
        g->poll_tflops = (g->flops_done - g->poll_flops) / (s->vt - g->poll_t) / 1e12;
        g->poll_t = s->vt;
        g->poll_flops = g->flops_done;
    }
    *tflops = g->poll_tflops;
    if (g->lost)
        return gq_err_set(err, GQ_E_BACKEND,
                          "GPU %d fell off the bus (simulated: cudaErrorDevicesUnavailable)", gpu);
    return GQ_OK;
}

int gq_sim_stress_stop(gq_sim_stress *s, gq_backend *be, int gpu, gq_err *err)
{
    sim_gpu *g;
    int rc = get_gpu(s, be, gpu, &g, err);
    if (rc)
        return rc;
    if (!g->running)
        return gq_err_set(err, GQ_E_USAGE, "GPU %d: no stress load is running", gpu);
    g->running = false;
    if (g->lost)
        return gq_err_set(err, GQ_E_BACKEND, "GPU %d fell off the bus (simulated)", gpu);
    return GQ_OK;
}

int gq_sim_sample(gq_sim_stress *s, gq_backend *be, int gpu, gq_sample *x, gq_err *err)
{
    sim_gpu *g;
    int rc = get_gpu(s, be, gpu, &g, err);
    if (rc)
        return rc;
    memset(x, 0, sizeof *x);
    x->t = s->vt;
    if (g->lost) {
        /* What NVML gives for a GPU that is gone: nothing but the fact. */
        x->temp_c = x->mem_temp_c = x->power_w = x->power_limit_w = x->temp_slowdown_c = NAN;
        x->sm_clock_mhz = x->mem_clock_mhz = x->util_pct = NAN;
        x->clock_reasons = x->pcie_replay = x->ecc_corrected = x->ecc_uncorrected = UINT64_MAX;
        x->pcie_gen = x->pcie_width = x->remapped_rows = -1;
        x->lost = true;
        return GQ_OK;
    }
    uint64_t k = g->nsamples++;
    double a = s->noise;
    op_point o = operating(g, s->vt);
    x->temp_c = round(g->temp + 0.3 * (a / 0.01) * hash_pm1(s->seed, (uint64_t)gpu, 100 + 3 * k));
    x->mem_temp_c = x->temp_c + 8;
    x->temp_slowdown_c = T_THROTTLE_ON;
    x->power_w = o.power * (1 + 0.3 * a * hash_pm1(s->seed, (uint64_t)gpu, 101 + 3 * k));
    if (o.capped && x->power_w > g->limit_w)
        x->power_w = g->limit_w;
    x->power_limit_w = g->limit_w;
    x->sm_clock_mhz = round(o.clock * (1 + 0.4 * a * hash_pm1(s->seed, (uint64_t)gpu, 102 + 3 * k)));
    x->mem_clock_mhz = g->m->mem_mhz;
    x->util_pct = o.util;
    x->clock_reasons = o.reasons;
    /* Under load the link runs at what it trained at (x8 with the link-x8
     * fault); at idle it drops to Gen1 to save power, as real GPUs do, so an
     * idle reading says nothing about the trained speed. */
    bool busy = g->running && o.util > 0;
    x->pcie_gen = busy ? g->gen_cur : 1;
    x->pcie_width = (g->faults & GQ_SIM_FAULT_LINK_X8) && busy && g->width_cur > 8 ? 8 : g->width_cur;
    x->pcie_replay = (uint64_t)g->replay;
    x->ecc_corrected = (uint64_t)g->ecc_c;
    x->ecc_uncorrected = (uint64_t)g->ecc_u;
    x->remapped_rows = 0;
    x->lost = false;
    return GQ_OK;
}

void gq_sim_stress_wait(gq_sim_stress *s, double seconds)
{
    if (seconds > 0)
        s->vt += seconds;
}

bool gq_sim_stress_loaded(const gq_sim_stress *s)
{
    for (int i = 0; i < s->ngpu; i++)
        if (s->gpu[i].running)
            return true;
    return false;
}
