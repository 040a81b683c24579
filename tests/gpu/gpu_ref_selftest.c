/* CPU test (a ctest, no GPU) of what the GPU tests' bounds rest on
 * (gpu_ref.c): reading the saved references in bench/reference, picking one
 * by machine or refusing to, and laying gpuqual's records out as
 * nvbandwidth's cells. The last part runs nvbandwidth's tests of the catalog
 * on the simulated 2 x H200 (built-in h200x2) through the harness, as
 * test_gpu_catalog does on the GPUs, and checks that every cell of the saved
 * nvbandwidth JSON finds gpuqual's figure, within a factor the simulation's
 * calibration allows.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/sim/sim.h"
#include "measure/catalog.h"
#include "measure/harness.h"
#include "core/record.h"
#include "core/units.h"
#include "gpu_ref.h"

static int checks, failures;

static void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool ok, const char *fmt, ...)
{
    checks++;
    if (ok)
        return;
    failures++;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

static void near(double got, double want, const char *what)
{
    check(fabs(got - want) <= 1e-9 * want, "%s: %.6f, expected %.6f", what, got, want);
}

static gq_topo *machine(int ngpu, const char *name, int links, int gen, int width)
{
    static gq_topo t;
    gq_topo_init(&t);
    t.ngpu = ngpu;
    for (int i = 0; i < ngpu; i++) {
        snprintf(t.gpu[i].name, sizeof t.gpu[i].name, "%s", name);
        t.gpu[i].pcie_gen_max = gen;
        t.gpu[i].pcie_width_max = width;
        for (int j = 0; j < ngpu; j++)
            t.nvlinks[i][j] = i == j ? -1 : links;
    }
    return &t;
}

static void loading(void)
{
    char why[1024];
    bool failed;
    double v = 0;
    unsetenv("GQ_REF_JSON");

    /* 2 x H200, NV18: the saved JSON and p2pBandwidthLatencyTest */
    gpu_ref *r = gpu_ref_open(machine(2, "NVIDIA H200", 18, 5, 16), &failed, why, sizeof why);
    check(r && !failed, "2 x H200 NV18: no reference (%s)", why);
    if (r) {
        check(!gpu_ref_same_call(r), "the saved reference counted as measured in this call");
        check(gpu_ref_nvbw(r, "host_to_device_memcpy_ce", 0, 0, &v), "h2d ce 0,0 missing");
        near(v, 55.3336, "h2d ce 0,0");
        check(gpu_ref_nvbw(r, "device_to_device_memcpy_read_ce", 1, 0, &v), "read ce 1,0 missing");
        near(v, 393.835, "read ce 1,0");
        check(!gpu_ref_nvbw(r, "device_to_device_memcpy_read_ce", 0, 0, &v), "N/A read as a figure");
        check(gpu_ref_nvbw(r, "device_to_device_bidirectional_memcpy_read_ce", 4, 1, &v),
              "bidir total missing");
        near(v, 778.956, "bidir read ce total 0,1");
        check(gpu_ref_nvbw(r, "device_to_device_latency_sm", 1, 0, &v), "d2d latency 1,0 missing");
        near(v, 829.159, "d2d latency 1,0");
        int rows = 0, cols = 0;
        check(gpu_ref_nvbw_shape(r, "device_to_device_bidirectional_memcpy_write_sm", &rows, &cols) &&
                  rows == 6 && cols == 2,
              "bidir write sm shape %dx%d, expected 6x2", rows, cols);
        check(!gpu_ref_nvbw(r, "no_such_test", 0, 0, &v), "a test that is not there");
        check(gpu_ref_p2p(r, "Unidirectional P2P=Disabled Bandwidth Matrix", 0, 1, &v), "p2p uni disabled");
        near(v, 38.21, "p2p uni disabled 0,1");
        check(gpu_ref_p2p(r, "Bidirectional P2P=Disabled Bandwidth Matrix", 1, 0, &v), "p2p bi disabled");
        near(v, 52.29, "p2p bi disabled 1,0");
        check(gpu_ref_p2p(r, "P2P=Disabled Latency Matrix", 0, 1, &v), "p2p latency disabled");
        near(v, 16080, "p2p latency disabled 0,1 (ns)");
        check(gpu_ref_p2p(r, "P2P=Enabled Latency (P2P Writes) Matrix", 1, 0, &v), "p2p latency enabled");
        near(v, 2240, "p2p latency enabled 1,0 (ns)");
        check(gpu_ref_p2p(r, "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix", 0, 1, &v),
              "p2p uni");
        near(v, 362.49, "p2p uni enabled 0,1");
        gpu_ref_close(r);
    }

    /* 1 x H200 on Gen5 x16: the TSV */
    r = gpu_ref_open(machine(1, "NVIDIA H200", 0, 5, 16), &failed, why, sizeof why);
    check(r && !failed, "1 x H200: no reference (%s)", why);
    if (r) {
        check(gpu_ref_nvbw(r, "host_to_device_memcpy_ce", 0, 0, &v), "1-GPU h2d ce missing");
        near(v, 54.34, "1-GPU h2d ce");
        check(gpu_ref_nvbw(r, "host_device_latency_sm", 0, 0, &v), "1-GPU latency missing");
        near(v, 1200, "1-GPU host latency");
        check(gpu_ref_nvbw(r, "device_local_copy", 0, 0, &v), "1-GPU local copy missing");
        near(v, 2079, "1-GPU local copy");
        check(!gpu_ref_nvbw(r, "host_to_device_memcpy_ce", 0, 1, &v), "1-GPU: a second column");
        check(!gpu_ref_p2p(r, "Unidirectional P2P=Disabled Bandwidth Matrix", 0, 1, &v),
              "1-GPU: p2p figures");
        gpu_ref_close(r);
    }
    /* unknown link generation (-1): still the TSV */
    r = gpu_ref_open(machine(1, "NVIDIA H200", 0, -1, -1), &failed, why, sizeof why);
    check(r != NULL, "1 x H200, PCIe unknown: no reference (%s)", why);
    gpu_ref_close(r);

    /* machines without a saved reference: skipped, with the reason */
    struct {
        int n;
        const char *name;
        int links, gen;
        const char *says;
    } none[] = {
        {1, "NVIDIA H200", 0, 4, "Gen4"},          {2, "NVIDIA H200", 0, 5, "no NVLinks"},
        {2, "NVIDIA H200", 4, 5, "fewer or more"}, {2, "NVIDIA H200 NVL", 18, 5, "NVIDIA H200 NVL"},
        {4, "NVIDIA H200", 18, 5, "4 GPU(s)"},     {8, "NVIDIA A100-SXM4-80GB", 12, 4, "A100"},
    };
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        why[0] = '\0';
        r = gpu_ref_open(machine(none[i].n, none[i].name, none[i].links, none[i].gen, 16), &failed, why,
                         sizeof why);
        check(!r && !failed && strstr(why, none[i].says), "%d x %s: reference %s, failed %d, why '%s'",
              none[i].n, none[i].name, r ? "found" : "none", failed, why);
        gpu_ref_close(r);
    }

    /* GQ_REF_JSON: nvbandwidth measured in the same call wins; unusable is an error */
    char path[1024];
    snprintf(path, sizeof path, "%s/h200x2-nvbandwidth-v0.8.json", getenv("GQ_REF_DIR"));
    setenv("GQ_REF_JSON", path, 1);
    r = gpu_ref_open(machine(2, "NVIDIA A100-SXM4-80GB", 12, 4, 16), &failed, why, sizeof why);
    check(r && gpu_ref_same_call(r), "GQ_REF_JSON not taken (%s)", why);
    check(!gpu_ref_p2p(r, "Unidirectional P2P=Disabled Bandwidth Matrix", 0, 1, &v),
          "another machine took the saved p2pBandwidthLatencyTest figures");
    gpu_ref_close(r);
    /* on 2 x H200 NV18 the saved p2pBandwidthLatencyTest figures still apply */
    r = gpu_ref_open(machine(2, "NVIDIA H200", 18, 5, 16), &failed, why, sizeof why);
    check(r && gpu_ref_same_call(r) &&
              gpu_ref_p2p(r, "Unidirectional P2P=Disabled Bandwidth Matrix", 0, 1, &v) && v == 38.21,
          "GQ_REF_JSON on 2 x H200: same call %d, p2p %.2f (%s)", r && gpu_ref_same_call(r), v, why);
    gpu_ref_close(r);
    r = gpu_ref_open(machine(1, "NVIDIA H200", 0, 5, 16), &failed, why, sizeof why);
    check(!r && failed && strstr(why, "lists 2 GPUs"), "GQ_REF_JSON of 2 GPUs on 1: '%s'", why);
    gpu_ref_close(r);
    setenv("GQ_REF_JSON", "/nonexistent/nvbandwidth.json", 1);
    r = gpu_ref_open(machine(2, "NVIDIA H200", 18, 5, 16), &failed, why, sizeof why);
    check(!r && failed && strstr(why, "cannot open"), "GQ_REF_JSON missing: '%s'", why);
    gpu_ref_close(r);
    snprintf(path, sizeof path, "%s/README.md", getenv("GQ_REF_DIR"));
    setenv("GQ_REF_JSON", path, 1);
    r = gpu_ref_open(machine(2, "NVIDIA H200", 18, 5, 16), &failed, why, sizeof why);
    check(!r && failed, "GQ_REF_JSON not JSON: accepted");
    gpu_ref_close(r);
    unsetenv("GQ_REF_JSON");

    /* the bounds: 90 % of a bandwidth, reference / 0.9 for a latency */
    check(gpu_ref_meets(49.5, 55.0, false) && !gpu_ref_meets(49.4, 55.0, false),
          "bandwidth bound at 49.5 of 55");
    check(gpu_ref_meets(1000, 900, true) && !gpu_ref_meets(1000.1, 900, true),
          "latency bound at 1000 of 900");
    /* a test with a documented variation gets a wider bound, the others do not */
    check(gpu_ref_variation("host_to_device_bidirectional_memcpy_ce") > 0.1 &&
              gpu_ref_variation("host_to_device_memcpy_ce") == 0 && gpu_ref_variation(NULL) == 0,
          "only the documented bidirectional host tests have a variation");
    check(gpu_ref_meets_for("host_to_device_bidirectional_memcpy_ce", 36.42, 47.01, false) &&
              !gpu_ref_meets_for("host_to_device_bidirectional_memcpy_ce", 34.0, 47.01, false) &&
              !gpu_ref_meets_for("device_to_host_bidirectional_memcpy_ce", 36.42, 47.01, false),
          "47.01 x 0.9 x (1 - 0.183) = 34.57 is the bound of the variable test only");
}

/* ---- records laid out as nvbandwidth's cells (sim h200x2) ---- */

typedef struct tally {
    int cells, missing, outside;
} tally;

static void on_cell(const gpu_ref_cell *c, void *arg)
{
    tally *t = arg;
    t->cells++;
    if (!isfinite(c->v)) {
        t->missing++;
        printf("FAIL %s %d,%d: no gpuqual figure (reference %.2f)\n", c->test, c->row, c->col, c->ref);
        return;
    }
    /* The simulation is calibrated to the reference machine within a few
     * percent on most paths; a cell mapped to the wrong record (a total for
     * one direction, a latency for a bandwidth, another GPU's host path) is
     * off by far more. */
    double ratio = c->v / c->ref;
    if (ratio < 0.6 || ratio > 1.6) {
        t->outside++;
        printf("FAIL %s %d,%d: gpuqual (sim) %.2f against %.2f, ratio %.3f outside 0.6-1.6\n", c->test,
               c->row, c->col, c->v, c->ref, ratio);
    }
}

static void cells_on_sim(void)
{
    char why[1024];
    bool failed;
    gq_err err = {0};
    gq_backend be;
    gq_backend_register_builtin();
    gq_backend_opts bo;
    gq_sim_opts(&bo, "h200x2", 7, 0, NULL);
    if (gq_backend_open(&be, "sim", &bo, &err) != GQ_OK) {
        check(false, "open sim h200x2: %s", err.msg);
        return;
    }
    static gq_topo topo;
    gq_topo_init(&topo);
    check(be.ops->discover(&be, &topo, &err) == GQ_OK, "discover: %s", err.msg);
    /* The simulated machine is named as the real one: the saved reference is picked. */
    gpu_ref *r = gpu_ref_open(&topo, &failed, why, sizeof why);
    check(r != NULL, "sim h200x2: no reference (%s)", why);
    gq_plan_opts po = {.bytes = 64 * GQ_MiB,
                       .host_numa = GQ_NUMA_LOCAL,
                       .numa_nodes = topo.numa_nodes,
                       .ngpus = topo.ngpu,
                       .gpus = {0, 1}};
    gq_harness_opts ho;
    gq_harness_opts_default(&ho);
    ho.rounds = 2;
    gq_measurement *m = malloc(sizeof *m);
    gq_recordset rs = {0};
    int ntests = 0, nvbw = 0;
    const gq_test *cat = gq_catalog(&ntests);
    for (int t = 0; r && m && t < ntests; t++) {
        if (!cat[t].nvbandwidth)
            continue;
        nvbw++;
        gq_plan plan;
        memset(&plan, 0, sizeof plan);
        if (gq_catalog_plan(&cat[t], &topo, &po, &plan, &err) != GQ_OK) {
            check(false, "%s: plan: %s", cat[t].name, err.msg);
            continue;
        }
        for (int i = 0; i < plan.n; i++) {
            gq_err merr = {0};
            int rc;
            if (plan.items[i].is_latency) {
                rc = gq_harness_latency(&be, &topo, cat[t].name, &plan.items[i].lat, &ho, &rs, NULL, &merr);
            } else {
                gq_plan_measurement(&plan, i, m);
                rc = gq_harness_measure(&be, &topo, m, &ho, &rs, NULL, &merr);
            }
            check(rc == GQ_OK, "%s item %d: %s", cat[t].name, i, merr.msg);
        }
        gq_plan_free(&plan);
    }
    tally tl = {0};
    int n = r ? gpu_ref_each_cell(r, &topo, &rs, on_cell, &tl) : 0;
    /* every cell of the saved JSON: 35 tests on 2 GPUs */
    check(n == 86 && tl.cells == n, "%d cells laid out (%d seen), expected the saved JSON's 86", n, tl.cells);
    check(tl.missing == 0, "%d cells without gpuqual's figure", tl.missing);
    check(tl.outside == 0, "%d cells far from the reference", tl.outside);
    printf("sim h200x2: %d nvbandwidth tests, %d records, %d cells compared\n", nvbw, rs.n, n);
    gq_records_free(&rs);
    free(m);
    gpu_ref_close(r);
    gq_backend_close(&be);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!getenv("GQ_REF_DIR")) {
        printf("FAIL GQ_REF_DIR is not set (ctest sets it to bench/reference)\n");
        return 1;
    }
    loading();
    cells_on_sim();
    printf("%d checks, %d failed\n%s\n", checks, failures, failures ? "RESULT: FAIL" : "RESULT: PASS");
    return failures ? 1 : 0;
}
