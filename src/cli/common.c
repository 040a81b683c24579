#define _POSIX_C_SOURCE 200809L
#include "cli/common.h"
#include "core/version.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/interrupt.h"
#include "core/record.h"

#define OFF(f) offsetof(gq_common, f)

/* clang-format off */
const gq_opt gq_common_output_opts[] = {
    {.name = "format", .type = GQ_OPT_ENUM, .off = OFF(format), .def = "table", .arg = "FMT",
     .help = "output on stdout", .choices = "table,json,csv,markdown,nvbandwidth-json,prometheus"},
    {.name = "json", .type = GQ_OPT_STR, .off = OFF(json_path), .arg = "FILE",
     .help = "also write the full JSON document to FILE"},
    {.name = "quiet", .shortname = 'q', .type = GQ_OPT_FLAG, .off = OFF(quiet),
     .help = "no progress bar; print only the summary"},
    GQ_OPT_END,
};
/* clang-format on */

/* clang-format off */
const gq_opt gq_common_prom_opt[] = {
    {.name = "prom", .type = GQ_OPT_STR, .off = OFF(prom_path), .arg = "FILE",
     .help = "also write the results as a Prometheus textfile (node_exporter's textfile collector; "
             "docs/prometheus.md)"},
    GQ_OPT_END,
};
const gq_opt gq_common_junit_opt[] = {
    {.name = "junit", .type = GQ_OPT_STR, .off = OFF(junit_path), .arg = "FILE",
     .help = "also write the checks as JUnit XML for CI: failed checks fail, checks not measured are skipped"},
    {.name = "junit-warn", .type = GQ_OPT_ENUM, .off = OFF(junit_warn), .def = "skipped", .arg = "AS",
     .help = "how a check judged warn shows in the JUnit XML: skipped (visible, the build stays green), "
             "failure, or passed", .choices = "skipped,failure,passed"},
    GQ_OPT_END,
};
/* clang-format on */

/* clang-format off */
const gq_opt gq_common_backend_opts[] = {
    {.name = "gpus", .shortname = 'g', .type = GQ_OPT_STR, .off = OFF(gpus), .arg = "LIST",
     .help = "GPUs to use: 0,1,3 or 0-3 or all (default all)"},
    {.name = "sim", .type = GQ_OPT_STR, .off = OFF(sim), .arg = "TOPO",
     .help = "run on a simulated machine: a topology file (a regular file of at most 1 MiB) or a built-in "
             "name (rtx4090x8, rtxpro6000x8, a100x6, h200x2)"},
    {.name = "sim-seed", .type = GQ_OPT_INT, .off = OFF(sim_seed), .def = "1", .arg = "N",
     .help = "seed of the simulator's deterministic noise", .lo = 0, .hi = 2147483647},
    {.name = "sim-noise", .type = GQ_OPT_DOUBLE, .off = OFF(sim_noise), .arg = "FRAC",
     .help = "scale of the simulated noise (figures, latency, telemetry), 0 = none (default: the topology's; "
             "0.01, the calibrated noise, in every built-in)",
     .lo = 0, .hi = 0.5,
     .seen_off = OFF(sim_noise_given)},
    {.name = "sim-fault", .type = GQ_OPT_STR, .off = OFF(sim_fault), .arg = "SPEC",
     .help = "inject faults into the simulation: gpu3:thermal,gpu1:ecc,gpu2:faulty-result,gpu0:link-x8,sw0:link-x8; "
             "interrupt@N: a Ctrl-C arrives during the N-th measurement call (a copy run, latency query, "
             "collective or stress tick)"},
    {.name = "journal", .type = GQ_OPT_STR, .off = OFF(journal), .arg = "FILE",
     .help = "write each finished measurement to FILE as it completes (JSON lines; a new or empty file; stress writes its telemetry samples)"},
    {.name = "wait-busy", .type = GQ_OPT_DURATION, .off = OFF(wait_busy_s), .arg = "TIME",
     .help = "when another gpuqual holds a GPU, wait up to TIME for it (default: do not wait), then exit 6",
     .lo = 0, .hi = 7 * 86400},
    {.name = "sim-lock", .type = GQ_OPT_FLAG, .off = OFF(sim_lock),
     .help = "take the per-GPU locks on a simulated machine too (for tests; real GPUs always take them)"},
    GQ_OPT_END,
};
/* clang-format on */

/* The measurement options, each declared once with one help text. A command
 * takes them all (gq_common_measure_opts) or only those it uses (one table
 * each below); the entries are the same. */
/* clang-format off */
#define OPT_ROUNDS                                                                                           \
    {.name = "rounds", .shortname = 'i', .type = GQ_OPT_INT, .off = OFF(rounds), .def = "5", .arg = "N",     \
     .help = "rounds per measurement: median, min, max and spread over them", .lo = 1, .hi = GQ_MAX_ROUNDS}
#define OPT_BUFFER_SIZE                                                                                      \
    {.name = "buffer-size", .shortname = 'b', .type = GQ_OPT_SIZE, .off = OFF(buffer_size), .def = "512",    \
     .arg = "SIZE", .help = "bytes per copy; a bare number is MiB (4K, 64MiB, 1G also work)", .unit = GQ_MiB, \
     .lo = 1, .hi = 1099511627776.0 /* 1 TiB */}
#define OPT_VERIFY                                                                                           \
    {.name = "verify", .type = GQ_OPT_FLAG, .off = OFF(verify), .def = "1",                                  \
     .help = "check the data pattern after the timed part; a mismatch fails the test"}
#define OPT_METHOD                                                                                           \
    {.name = "method", .shortname = 'm', .type = GQ_OPT_ENUM, .off = OFF(method), .def = "ce", .arg = "ce|sm", \
     .help = "GPU-to-GPU copies by copy engine (ce) or SM copy kernel (sm)", .choices = "ce,sm"}
const gq_opt gq_common_measure_opts[] = {OPT_ROUNDS, OPT_BUFFER_SIZE, OPT_VERIFY, OPT_METHOD, GQ_OPT_END};
const gq_opt gq_common_rounds_opt[] = {OPT_ROUNDS, GQ_OPT_END};
const gq_opt gq_common_buffer_size_opt[] = {OPT_BUFFER_SIZE, GQ_OPT_END};
const gq_opt gq_common_verify_opt[] = {OPT_VERIFY, GQ_OPT_END};
const gq_opt gq_common_method_opt[] = {OPT_METHOD, GQ_OPT_END};
/* clang-format on */

int gq_parse_gpu_list_opt(const char *opt, const char *s, int ngpu, int *out, int *nout, gq_err *err)
{
    *nout = 0;
    if (!s || !strcmp(s, "all")) {
        for (int i = 0; i < ngpu; i++)
            out[(*nout)++] = i;
        return GQ_OK;
    }
    if (!*s)
        return gq_err_set(err, GQ_E_USAGE, "%s: empty list, expected e.g. 0,1,3 or 0-3", opt);
    bool seen[GQ_MAX_GPUS] = {0};
    const char *p = s;
    while (1) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        char item[32];
        if (l == 0)
            return gq_err_set(err, GQ_E_USAGE, "%s '%s': empty item, expected e.g. 0,1,3", opt, s);
        if (l >= sizeof item)
            return gq_err_set(err, GQ_E_USAGE, "%s '%s': item too long", opt, s);
        memcpy(item, p, l);
        item[l] = 0;
        long lo, hi;
        char *dash = strchr(item + 1, '-');
        gq_err e;
        if (dash) {
            *dash = 0;
            if (gq_parse_int(item, 0, 1 << 20, &lo, &e) || gq_parse_int(dash + 1, 0, 1 << 20, &hi, &e) ||
                hi < lo)
                return gq_err_set(err, GQ_E_USAGE, "%s '%s': bad range '%.*s', expected e.g. 0-3", opt, s,
                                  (int)l, p);
        } else {
            if (gq_parse_int(item, -(1L << 20), 1 << 20, &lo, &e))
                return gq_err_set(err, GQ_E_USAGE, "%s '%s': '%s' is not a GPU index", opt, s, item);
            hi = lo;
        }
        for (long g = lo; g <= hi; g++) {
            if (g < 0 || g >= ngpu)
                return gq_err_set(err, GQ_E_USAGE,
                                  "%s '%s': GPU %ld does not exist (this machine has GPUs 0-%d)", opt, s, g,
                                  ngpu - 1);
            if (seen[g])
                return gq_err_set(err, GQ_E_USAGE, "%s '%s': GPU %ld is listed twice", opt, s, g);
            seen[g] = true;
            out[(*nout)++] = (int)g;
        }
        if (!c)
            break;
        p = c + 1;
    }
    return GQ_OK;
}

int gq_parse_gpu_list(const char *s, int ngpu, int *out, int *nout, gq_err *err)
{
    return gq_parse_gpu_list_opt("--gpus", s, ngpu, out, nout, err);
}

/* The backend options of c as the seam's KEY=VALUE pairs (the sim
 * backend's --sim, --sim-seed, --sim-noise when given, --sim-fault; its
 * option hook parses and checks them). GQ_E_USAGE for --sim-fault without
 * --sim. The values point into c (and bo). */
static int backend_opts(const gq_common *c, gq_backend_opts *bo, gq_err *err)
{
    memset(bo, 0, sizeof *bo);
    if (c->sim_fault && !c->sim)
        return gq_err_set(err, GQ_E_USAGE,
                          "--sim-fault needs --sim: faults can only be injected into a simulation");
    if (!c->sim)
        return GQ_OK;
    int rc;
    if ((rc = gq_backend_opts_add(bo, "sim", c->sim, err)) ||
        (rc = gq_backend_opts_addf(bo, err, "sim-seed", "%d", c->sim_seed)))
        return rc;
    if (c->sim_noise_given) {
        /* The shortest text that reads back as the same number. */
        int prec = 1;
        char buf[40];
        do
            snprintf(buf, sizeof buf, "%.*g", prec, c->sim_noise);
        while (strtod(buf, NULL) != c->sim_noise && ++prec <= 17);
        if ((rc = gq_backend_opts_addf(bo, err, "sim-noise", "%s", buf)))
            return rc;
    }
    if (c->sim_fault && (rc = gq_backend_opts_add(bo, "sim-fault", c->sim_fault, err)))
        return rc;
    return GQ_OK;
}

int gq_cli_check_backend_opts(const gq_common *c, gq_err *err)
{
    gq_backend_opts bo;
    int rc = backend_opts(c, &bo, err);
    if (rc || !c->sim)
        return rc;
    return gq_backend_check_opts("sim", &bo, err);
}

int gq_cli_open(gq_common *c, gq_backend *be, gq_topo *topo, gq_err *err)
{
    gq_backend_opts bo;
    int rc = backend_opts(c, &bo, err);
    if (rc)
        return rc;
    const char *name = c->sim ? "sim" : "cuda";
    if (!c->sim && !gq_backend_find("cuda"))
        return gq_err_set(err, GQ_E_NODEV,
                          "this gpuqual was built without CUDA; use --sim NAME (e.g. --sim rtx4090x8) for a "
                          "simulated machine");
    if ((rc = gq_backend_open(be, name, &bo, err))) {
        if (rc == GQ_E_NODEV && err) {
            char why[sizeof err->msg];
            snprintf(why, sizeof why, "%s", err->msg);
            gq_err_set(err, GQ_E_NODEV,
                       "no NVIDIA GPU or driver found (%.300s); use --sim NAME (e.g. --sim rtx4090x8) for a "
                       "simulated machine",
                       why);
        }
        return rc;
    }
    gq_topo_init(topo);
    if ((rc = be->ops->discover(be, topo, err))) {
        gq_backend_close(be);
        return rc;
    }
    if (topo->ngpu <= 0) {
        gq_backend_close(be);
        return gq_err_set(err, GQ_E_NODEV,
                          "no GPU found; use --sim NAME (e.g. --sim rtx4090x8) for a simulated machine");
    }
    if ((rc = gq_parse_gpu_list(c->gpus, topo->ngpu, c->gpus_sel, &c->ngpus_sel, err))) {
        gq_backend_close(be);
        return rc;
    }
    return GQ_OK;
}

int gq_cli_check_buffer(gq_backend *be, const gq_common *c, const char *opt, uint64_t bytes, gq_err *err)
{
    if (!be->ops->mem_info)
        return GQ_OK;
    for (int i = 0; i < c->ngpus_sel; i++) {
        uint64_t freeb = 0, tot = 0;
        gq_err e = {0};
        if (be->ops->mem_info(be, c->gpus_sel[i], &freeb, &tot, &e) != GQ_OK || bytes <= freeb)
            continue;
        char a[32];
        return gq_err_set(err, GQ_E_USAGE, "%s %s is too large: GPU %d has %.1f GiB free; give a smaller %s",
                          opt, gq_fmt_size(bytes, a, sizeof a), c->gpus_sel[i], (double)freeb / GQ_GiB, opt);
    }
    return GQ_OK;
}

int gq_cli_check_writable(const char *path, gq_err *err)
{
    return gq_outfile_check(path, err);
}

static volatile sig_atomic_t nsignals;

static void on_signal(int sig)
{
    (void)sig;
    if (++nsignals > 1) {
        static const char msg[] = "\ngpuqual: interrupted twice, exiting now\n";
        gq_cleanup_run(); /* the temporary files being written */
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void)w;
        _exit(130);
    }
    gq_interrupt_request();
}

void gq_cli_install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

bool gq_cli_interrupted(void)
{
    return gq_interrupt_requested();
}

/* A message quotes what the user typed; a newline or an escape sequence in an
 * argument must not break the one-line error or drive the terminal. */
static void put_line(const char *prefix, const char *fmt, va_list ap)
{
    char buf[2048];
    vsnprintf(buf, sizeof buf, fmt, ap);
    for (char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    fprintf(stderr, "%s%s\n", prefix, buf);
}

int gq_cli_errors;

void gq_cli_error(const char *fmt, ...)
{
    gq_cli_errors++;
    va_list ap;
    va_start(ap, fmt);
    put_line("gpuqual: ", fmt, ap);
    va_end(ap);
}

void gq_cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    put_line("gpuqual: warning: ", fmt, ap);
    va_end(ap);
}

void gq_cli_interrupted_note(bool table, const char *journal)
{
    if (table) {
        printf("\nINCOMPLETE: interrupted (Ctrl-C); what was measured before it is shown, the rest was not "
               "run\n");
        fflush(stdout);
    }
    if (journal)
        gq_cli_warn("interrupted; finished measurements are in %s", journal);
    else
        gq_cli_warn("interrupted; what was measured before it is written, marked incomplete");
}

const char *gq_cli_sim_fault_identity(const char *spec, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (const char *p = spec; p && *p;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        if (strncmp(p, "interrupt@", strlen("interrupt@")) && used + l + 2 < n) {
            used += (size_t)snprintf(buf + used, n - used, "%s%.*s", used ? "," : "", (int)l, p);
        }
        p = c ? c + 1 : NULL;
    }
    return buf[0] ? buf : NULL;
}

bool gq_cli_tty(void)
{
    return isatty(2) && isatty(1);
}
