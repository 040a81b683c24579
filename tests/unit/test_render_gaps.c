/* Renderer lines no other test ran (issue 30): the topo table's half-known
 * PCIe links, NVLinks of unknown rate and NVSwitch lines, a trained-down
 * bridge without a figure, a PCIe tree deeper than 64 and none at all, the
 * CSV's doubled quotes; the results table of a test outside the catalog,
 * its ERR and INVALID cells and warning flags. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/units.h"
#include "render/prometheus.h"
#include "render/render.h"
#include "render/topo_render.h"
#include "render/wrap.h"

static gq_topo *new_topo(int ngpu)
{
    gq_topo *t = calloc(1, sizeof *t);
    assert_non_null(t);
    gq_topo_init(t);
    t->ngpu = ngpu;
    for (int g = 0; g < ngpu; g++)
        t->gpu[g].index = g;
    return t;
}

static char *render_topo(const gq_topo *t, bool csv)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    if (csv)
        gq_render_topo_csv(f, t);
    else
        gq_render_topo_table(f, t);
    fclose(f);
    return buf;
}

#define HAS(out, s)                                                                                          \
    do {                                                                                                     \
        if (!strstr((out), (s)))                                                                             \
            fail_msg("no '%s' in:\n%s", (s), (out));                                                         \
    } while (0)

/* PCIe links half known, NVLinks without a rate, NVSwitch links (all and
 * some), a link below its maximum, no PCIe tree. */
static void topo_table_partial(void **state)
{
    (void)state;
    gq_topo *t = new_topo(3);
    t->gpu[0].pcie_gen_cur = 3;
    t->gpu[0].pcie_width_cur = -1;
    t->gpu[0].pcie_gen_max = 4;
    t->gpu[0].pcie_width_max = 16;
    t->gpu[0].nvlinks_total = 4;
    t->gpu[0].nvlink_gbps_per_link = 0;
    t->gpu[0].nvswitch_links = 4;
    t->gpu[1].pcie_gen_cur = -1;
    t->gpu[1].pcie_width_cur = 8;
    t->gpu[1].pcie_gen_max = -1;
    t->gpu[1].pcie_width_max = -1;
    t->gpu[1].nvlinks_total = 6;
    t->gpu[1].nvlink_gbps_per_link = 25;
    t->gpu[1].nvswitch_links = 2;
    t->gpu[2].pcie_gen_cur = 4;
    t->gpu[2].pcie_width_cur = 16;
    t->gpu[2].pcie_gen_max = 4;
    t->gpu[2].pcie_width_max = 16;
    t->gpu[2].nvlinks_total = 0;
    t->npci = 0;
    char *out = render_topo(t, false);
    HAS(out, " Gen3 x? ");
    HAS(out, " Gen? x8 ");
    HAS(out, "NVSwitch: GPUs 0,1 reach each other through NVSwitches");
    HAS(out,
        "GPU 0     UUID unknown; NVLinks 4 active (rate per link unknown), all to an NVSwitch (shared by all "
        "its peers)\n");
    HAS(out,
        "GPU 1     UUID unknown; NVLinks 6 active x 25 GB/s = 150 GB/s per direction, some to an NVSwitch");
    HAS(out, "GPU 2     UUID unknown; NVLinks none\n");
    HAS(out, "\nPCIe tree (hwloc):\n  unknown (no PCIe tree was discovered)\n");
    HAS(out, "Note: a PCIe link runs below its maximum; idle GPUs train down");
    free(out);

    /* one GPU behind an NVSwitch: singular; every link at its maximum: no note */
    t->gpu[1].nvswitch_links = 0;
    t->gpu[0].pcie_width_cur = 16;
    t->gpu[0].pcie_gen_cur = 4;
    out = render_topo(t, false);
    HAS(out, "NVSwitch: GPU 0 reach each other");
    assert_null(strstr(out, "runs below its maximum"));
    free(out);
    /* a width below its maximum alone is trained down too */
    t->gpu[2].pcie_width_cur = 8;
    out = render_topo(t, false);
    HAS(out, "runs below its maximum");
    free(out);
    free(t);
}

/* A bridge trained down with no link figure still shows its training; a
 * chain of 70 bridges is drawn to depth 65 and no deeper. */
static void topo_tree_depth(void **state)
{
    (void)state;
    gq_topo *t = new_topo(1);
    t->npci = 70;
    for (int n = 0; n < 70; n++) {
        gq_pci_node *p = &t->pci[n];
        p->parent = n - 1;
        p->gpu = -1;
        p->numa_node = -1;
        p->kind = n == 0 ? GQ_PCI_HOSTBRIDGE : GQ_PCI_BRIDGE;
        snprintf(p->label, sizeof p->label, "B%d", n);
    }
    t->pci[1].link_gen = 3;
    t->pci[1].link_width = 8;
    t->pci[1].link_gen_max = 4;
    t->pci[1].link_width_max = 16;
    t->pci[1].link_gbps = 0;
    char *out = render_topo(t, false);
    HAS(out, "`-- B1  link (Gen3 x8, can do Gen4 x16: trained down)\n");
    HAS(out, "`-- B65\n");
    assert_null(strstr(out, "B66"));
    free(out);
    free(t);
}

/* CSV: a quote inside a field is doubled. */
static void topo_csv_quotes(void **state)
{
    (void)state;
    gq_topo *t = new_topo(1);
    snprintf(t->gpu[0].name, sizeof t->gpu[0].name, "GPU \"X\"");
    char *out = render_topo(t, true);
    HAS(out, "\n0,\"GPU \"\"X\"\"\",");
    free(out);
    free(t);
}

static gq_record mk(const char *test, gq_endpoint s, gq_endpoint d, gq_direction dir_, double gbps, int exec)
{
    gq_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.test, sizeof r.test, "%s", test);
    r.method = GQ_METHOD_CE;
    r.src = s;
    r.dst = d;
    r.direction = dir_;
    r.dirs = 1u << dir_;
    r.bytes = 512 * GQ_MiB;
    r.rounds = 3;
    double v[] = {gbps * 0.999, gbps, gbps * 1.001};
    memcpy(r.samples, v, sizeof v);
    r.value = gq_stat_compute(v, 3);
    r.valid = true;
    r.exec_gpu = exec;
    r.overlap = -1;
    r.host_numa_req = -1;
    r.host_numa_actual = -1;
    r.window_s = 0.1;
    r.simulated = true;
    if (s.kind == GQ_EP_GPU && s.index >= 0)
        r.gpus[r.ngpus++] = s.index;
    if (d.kind == GQ_EP_GPU && d.index >= 0 && !(s.kind == GQ_EP_GPU && s.index == d.index))
        r.gpus[r.ngpus++] = d.index;
    return r;
}

#define H(n) ((gq_endpoint){GQ_EP_HOST, (n)})
#define G(n) ((gq_endpoint){GQ_EP_GPU, (n)})

static char *render_table(const gq_topo *t, const gq_recordset *rs)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    assert_int_equal(gq_render_table(f, t, rs), GQ_OK);
    fclose(f);
    return buf;
}

/* A test outside the catalog: titled from its records, GPU or CPU rows,
 * columns as far as its highest GPU (beyond the topology's), latency or
 * bandwidth; an ERR cell; a GPU beyond the 64 columns left out. */
static void table_uncatalogued(void **state)
{
    (void)state;
    gq_topo *t = new_topo(2);
    gq_recordset rs = {0};
    gq_record r = mk("custom_p2p", G(0), G(3), GQ_DIR_P2P, 12.5, 0);
    gq_records_push(&rs, &r);
    r = mk("custom_p2p", G(4), G(1), GQ_DIR_P2P, 13.5, 4);
    r.value.n = 0;
    r.valid = false;
    gq_records_push(&rs, &r);
    r = mk("custom_far", G(1), G(70), GQ_DIR_P2P, 99.5, 1);
    gq_records_push(&rs, &r);
    r = mk("custom_h2d", H(0), G(1), GQ_DIR_H2D, 20.25, 1);
    r.is_latency = true;
    gq_records_push(&rs, &r);
    r = mk("custom_h2d", H(0), G(5), GQ_DIR_H2D, 30.5, 5);
    r.is_latency = true;
    gq_records_push(&rs, &r);
    char *out = render_table(t, &rs);
    HAS(out, "custom_p2p GPU(row) -> GPU(column) bandwidth (GB/s)\n");
    /* columns to the highest destination, GPU 5 */
    HAS(out, "custom_h2d CPU(row) -> GPU(column) latency (ns)\n"
             "           0         1         2         3         4         5\n");
    /* columns as far as the highest GPU, a source (4) beyond the
     * topology's two and the destination 3: 0-4 */
    HAS(out, "custom_p2p GPU(row) -> GPU(column) bandwidth (GB/s)\n"
             "           0         1         2         3         4\n"
             " 0       N/A       N/A       N/A     12.50       N/A\n"
             " 4       N/A       ERR       N/A       N/A       N/A\n");
    /* at most 64 columns: GPU 70's cell is left out */
    HAS(out, "        63\n");
    assert_null(strstr(out, "        64"));
    assert_null(strstr(out, "99.50"));
    free(out);
    gq_records_free(&rs);
    free(t);
}

/* An aggregate cell invalid for overlap reads INVALID; a valid group line
 * names its warning flags; a set's flow without a figure reads ERR, an
 * invalid one INVALID, each with its flags and error. */
static void table_cells_and_flags(void **state)
{
    (void)state;
    gq_topo *t = new_topo(2);
    gq_recordset rs = {0};
    /* host_to_device_set: a set layout */
    for (int g = 0; g < 2; g++) {
        gq_record r = mk("host_to_device_set", H(0), G(g), GQ_DIR_H2D, 40 + g, g);
        r.group = 0;
        r.flow_tag = g;
        r.overlap = 0.999;
        r.host_numa_req = 0;
        if (g == 0) {
            r.value.n = 0;
            r.valid = false;
            r.flags = GQ_FLAG_INCOMPLETE;
            snprintf(r.error, sizeof r.error, "the copy failed");
        } else {
            r.valid = false;
            r.flags = GQ_FLAG_SPREAD;
            snprintf(r.error, sizeof r.error, "too noisy");
        }
        gq_records_push(&rs, &r);
    }
    gq_record a = mk("host_to_device_set", H(0), G(GQ_EP_MANY), GQ_DIR_H2D, 81, -1);
    a.aggregate = true;
    a.ngpus = 2;
    a.gpus[0] = 0;
    a.gpus[1] = 1;
    a.group = 0;
    a.flow_tag = -1;
    a.overlap = 0.999;
    a.flags = GQ_FLAG_SPREAD;
    gq_records_push(&rs, &a);
    char *out = render_table(t, &rs);
    HAS(out, "  gpu:0   h2d: ERR [incomplete] the copy failed\n");
    HAS(out, "  gpu:1   h2d: INVALID [spread] too noisy\n");
    HAS(out, "(overlap 99.90%, spread 0.20%) [spread]\n");
    free(out);
    gq_records_free(&rs);

    /* all_to_one: the aggregate is the cell; invalid for overlap, INVALID */
    a = mk("all_to_one_write_ce", G(GQ_EP_MANY), G(1), GQ_DIR_P2P, 300, -1);
    a.aggregate = true;
    a.valid = false;
    a.flags = GQ_FLAG_OVERLAP;
    a.overlap = 0.9;
    gq_records_push(&rs, &a);
    a.dst = G(0);
    a.valid = true;
    a.flags = 0;
    gq_records_push(&rs, &a);
    out = render_table(t, &rs);
    HAS(out, " 0    300.00   INVALID\n");
    free(out);
    gq_records_free(&rs);
    free(t);
}

/* Prometheus: a bus id of the short form gets DCGM's domain; one that does
 * not parse is written as it is; a new line in a label is escaped. */
static void prometheus_labels(void **state)
{
    (void)state;
    gq_topo *t = new_topo(3);
    snprintf(t->gpu[0].pci_bus_id, sizeof t->gpu[0].pci_bus_id, "3b:00.1");
    snprintf(t->gpu[1].pci_bus_id, sizeof t->gpu[1].pci_bus_id, "3b:00.9");
    snprintf(t->gpu[2].pci_bus_id, sizeof t->gpu[2].pci_bus_id, "0000:3b:00.0");
    snprintf(t->gpu[2].name, sizeof t->gpu[2].name, "two\nlines");
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    gq_prom_gpus(f, t, "topo");
    fclose(f);
    HAS(buf, "pci_bus_id=\"00000000:3B:00.1\"");
    HAS(buf, "pci_bus_id=\"3b:00.9\""); /* function 9: not a bus id */
    HAS(buf, "model_name=\"two\\nlines\",pci_bus_id=\"00000000:3B:00.0\"");
    free(buf);
    free(t);
}

/* A host-to-host record of one GPU (the GPU that ran it) is labelled with
 * that GPU; CSV doubles the quotes of a field. */
static void record_gpu_and_csv(void **state)
{
    (void)state;
    gq_topo *t = new_topo(2);
    gq_recordset rs = {0};
    gq_record r = mk("host_copy", H(0), H(1), GQ_DIR_H2D, 10, 1);
    r.ngpus = 1;
    r.gpus[0] = 1;
    snprintf(r.error, sizeof r.error, "say \"no\"");
    gq_records_push(&rs, &r);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    gq_prom_records(f, &rs, t, "gpuqual");
    fclose(f);
    HAS(buf, "gpuqual_valid{gpu=\"1\"");
    free(buf);
    f = open_memstream(&buf, &n);
    gq_render_csv(f, &rs);
    fclose(f);
    HAS(buf, ",\"say \"\"no\"\"\"\n");
    free(buf);
    gq_records_free(&rs);
    free(t);
}

static char *wrapped(const char *s, int width, int hang)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    gq_wrap_line(f, s, strlen(s), width, hang);
    fclose(f);
    return buf;
}

/* A hang wider than half the line is half the line; a line with no place
 * to break is written whole. */
static void wrap_edges(void **state)
{
    (void)state;
    char *out = wrapped("aaaa bbbb cccc dddd", 10, 9);
    assert_string_equal(out, "aaaa bbbb\n     cccc\n     dddd\n");
    free(out);
    out = wrapped("aaaa bbbb cccc", 10, -1);
    assert_string_equal(out, "aaaa bbbb\n     cccc\n");
    free(out);
    out = wrapped("abcdefghijklmnop", 10, 2);
    assert_string_equal(out, "abcdefghijklmnop\n");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(topo_table_partial),    cmocka_unit_test(topo_tree_depth),
        cmocka_unit_test(topo_csv_quotes),       cmocka_unit_test(table_uncatalogued),
        cmocka_unit_test(table_cells_and_flags), cmocka_unit_test(prometheus_labels),
        cmocka_unit_test(record_gpu_and_csv),    cmocka_unit_test(wrap_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
