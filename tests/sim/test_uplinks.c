/* The links above the GPUs (issue 28, item 4): a switch uplink or root port
 * trained below its maximum is read by discovery, shown by `gpuqual topo`,
 * kept in snapshots, and judged on the card like a GPU's own link: the
 * "Identity and links" row fails and names it, whether the topology
 * describes it (sw2up8: max-width x16 on a pcie line trained at x8) or
 * --sim-fault injects it (sw1x4 with sw0:link-x8). The assertions read what
 * discovery reports and the card document, never the simulator's model. */
#include "card_util.h"

#include <unistd.h>

#include "backend/sim/sim_stress.h"
#include "topo/snapshot.h"

#define TOPO(name) GQ_TEST_DATA "/data/topologies/" name ".topo"

static void discover(const char *machine, const char *faults, gq_topo *t)
{
    gq_backend_register_builtin();
    gq_backend be = {0};
    gq_backend_opts bo;
    gq_sim_opts(&bo, machine, 1, 0, faults);
    gq_err e = {0};
    if (gq_backend_open(&be, "sim", &bo, &e))
        fail_msg("open %s: %s", machine, e.msg);
    gq_topo_init(t);
    if (be.ops->discover(&be, t, &e))
        fail_msg("discover: %s", e.msg);
    gq_backend_close(&be);
}

static const gq_pci_node *node(const gq_topo *t, const char *bus)
{
    for (int i = 0; i < t->npci; i++)
        if (!strcmp(t->pci[i].bus_id, bus))
            return &t->pci[i];
    fail_msg("no PCIe node %s", bus);
    return NULL;
}

/* Discovery reads each switch's uplink: sw2up8's second switch at x8 of x16. */
static void discovery_reads_uplinks(void **state)
{
    (void)state;
    gq_topo *t = calloc(1, sizeof *t), *back = calloc(1, sizeof *back);
    assert_non_null(t);
    assert_non_null(back);
    discover(TOPO("sw2up8"), NULL, t);
    const gq_pci_node *s0 = node(t, "0000:10:00.0"), *s1 = node(t, "0000:40:00.0");
    assert_int_equal(s0->link_gen, 5);
    assert_int_equal(s0->link_width, 16);
    assert_int_equal(s0->link_width_max, 16);
    assert_int_equal(s1->link_gen, 5);
    assert_int_equal(s1->link_gen_max, 5);
    assert_int_equal(s1->link_width, 8);
    assert_int_equal(s1->link_width_max, 16);
    /* a snapshot keeps them */
    json_t *j = gq_topo_to_json(t);
    gq_err e = {0};
    assert_int_equal(gq_topo_from_json(j, back, &e), GQ_OK);
    assert_int_equal(node(back, "0000:40:00.0")->link_width, 8);
    assert_int_equal(node(back, "0000:40:00.0")->link_width_max, 16);
    /* and one written before they existed still reads, as unknown */
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(j, "pci"), i, x)
    {
        json_object_del(x, "link_gen");
        json_object_del(x, "link_width");
        json_object_del(x, "link_gen_max");
        json_object_del(x, "link_width_max");
    }
    assert_int_equal(gq_topo_from_json(j, back, &e), GQ_OK);
    assert_int_equal(node(back, "0000:40:00.0")->link_width, 0);
    json_decref(j);
    /* the injected fault reads the same way */
    discover(TOPO("sw1x4"), "sw0:link-x8", t);
    assert_int_equal(node(t, "0000:40:00.0")->link_width, 8);
    assert_int_equal(node(t, "0000:40:00.0")->link_width_max, 16);
    discover(TOPO("sw1x4"), NULL, t);
    assert_int_equal(node(t, "0000:40:00.0")->link_width, 16);
    free(t);
    free(back);
}

static const json_t *row(const card_run *r, const char *title)
{
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(cu_card(r), "rows"), i,
                       x) if (!strcmp(cu_str(x, "check"), title)) return x;
    fail_msg("no row %s", title);
    return NULL;
}

/* The card fails the links row and names the uplink, while every GPU's own
 * link is at its maximum under load. */
static void card_names_uplink(const char *machine, const char *faults, const char *bus, const char *gpus)
{
    card_run r = cu_run(&(card_args){
        .machine = machine, .noise = 0, .faults = faults, .stress_s = 5, .level = GQ_LEVEL_QUICK + 1});
    char subj[64];
    snprintf(subj, sizeof subj, "pcie:%s", bus);
    const json_t *c = cu_check(&r, "uplink_width", subj);
    if (!c)
        fail_msg("%s: no uplink_width check for %s", machine, subj);
    assert_string_equal(cu_str(c, "verdict"), "fail");
    assert_non_null(strstr(cu_str(c, "text"), "x8"));
    const json_t *id = row(&r, "Identity and links");
    assert_string_equal(cu_str(id, "verdict"), "fail");
    char want[160];
    snprintf(want, sizeof want, "the uplink of PCIe switch %s (GPUs %s) at x8, can do x16", bus, gpus);
    if (!strstr(cu_str(id, "result"), want))
        fail_msg("%s: links row says '%s', not '%s'", machine, cu_str(id, "result"), want);
    /* the GPUs' own links are fine: it is not put down to them */
    size_t i;
    const json_t *k;
    json_array_foreach(json_object_get(cu_card(&r), "checks"), i,
                       k) if (!strcmp(cu_str(k, "id"), "link_width"))
        assert_string_equal(cu_str(k, "verdict"), "pass");
    assert_string_equal(cu_str(cu_card(&r), "verdict"), "fail");
    json_decref(r.doc);
}

static void card_uplink_from_topology(void **state)
{
    (void)state;
    card_names_uplink(TOPO("sw2up8"), NULL, "0000:40:00.0", "4-7");
}

static void card_uplink_from_fault(void **state)
{
    (void)state;
    card_names_uplink(TOPO("sw1x4"), "sw0:link-x8", "0000:40:00.0", "0-3");
}

/* A root port (a bridge with one child right below a socket) trained down,
 * described by the topology or injected on the command line: named as a
 * root port. */
static void card_root_port(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/gq-rootport-%d.topo", P_tmpdir, (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("machine rp\ncpu \"X\" sockets 1 cores 8\nmemory mem0 numa 0 size 64 GiB\n"
          "socket cpu0 numa 0 bus 0000:00\nfabric mem0 cpu0 read 100 GB/s write 100 GB/s\n"
          "bridge rp0 bus 0000:01:00.0\nbridge rp1 bus 0000:02:00.0\n"
          "pcie rp0 cpu0 rate 16 GT/s width x8 max-width x16 up 13 GB/s down 13 GB/s\n"
          "pcie rp1 cpu0 rate 16 GT/s width x16 up 26 GB/s down 26 GB/s\n"
          "gpu g0 model \"X\" mem 16 GiB bus 0000:03:00.0\ngpu g1 model \"X\" mem 16 GiB bus 0000:04:00.0\n"
          "pcie g0 rp0 rate 16 GT/s width x16 up 26 GB/s down 26 GB/s\n"
          "pcie g1 rp1 rate 16 GT/s width x16 up 26 GB/s down 26 GB/s\n",
          f);
    fclose(f);
    for (int k = 0; k < 2; k++) {
        card_run r = cu_run(&(card_args){.machine = path,
                                         .noise = 0,
                                         .faults = k ? "rp1:link-x8" : NULL,
                                         .stress_s = 5,
                                         .level = GQ_LEVEL_QUICK + 1});
        const char *bus = k ? "0000:02:00.0" : "0000:01:00.0";
        char subj[64], want[128];
        snprintf(subj, sizeof subj, "pcie:%s", bus);
        const json_t *c = cu_check(&r, "uplink_width", subj);
        assert_non_null(c);
        assert_string_equal(cu_str(c, "verdict"), "fail");
        snprintf(want, sizeof want, "the uplink of root port %s (GPU %d) at x8, can do x16", bus, k);
        if (!strstr(cu_str(row(&r, "Identity and links"), "result"), want))
            fail_msg("links row says '%s', not '%s'", cu_str(row(&r, "Identity and links"), "result"), want);
        json_decref(r.doc);
    }
    remove(path);
}

/* A switch whose bus id is one character ("bus x" in the topology) is named
 * by that bus id in the card's uplinks, as any other, not by its label. */
static void card_uplink_short_bus(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/gq-shortbus-%d.topo", P_tmpdir, (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("machine sb\ncpu \"X\" sockets 1 cores 8\nmemory mem0 numa 0 size 64 GiB\n"
          "socket cpu0 numa 0 bus 0000:00\nfabric mem0 cpu0 read 100 GB/s write 100 GB/s\n"
          "switch sw0 bus x\npcie sw0 cpu0 rate 16 GT/s width x16 up 26 GB/s down 26 GB/s\n"
          "gpu g0 model \"X\" mem 16 GiB bus 0000:03:00.0\ngpu g1 model \"X\" mem 16 GiB bus 0000:04:00.0\n"
          "pcie g0 sw0 rate 16 GT/s width x16 up 26 GB/s down 26 GB/s\n"
          "pcie g1 sw0 rate 16 GT/s width x16 up 26 GB/s down 26 GB/s\n",
          f);
    fclose(f);
    card_run r =
        cu_run(&(card_args){.machine = path, .noise = 0, .stress_s = 5, .level = GQ_LEVEL_QUICK + 1});
    const json_t *up = json_object_get(json_object_get(cu_card(&r), "identity"), "uplinks");
    assert_int_equal(json_array_size(up), 1);
    assert_string_equal(cu_str(json_array_get(up, 0), "node"), "x");
    json_decref(r.doc);
    remove(path);
}

/* A healthy uplink, read at idle by discovery, is shown but never passes: info. */
static void healthy_uplink_is_info(void **state)
{
    (void)state;
    card_run r = cu_run(
        &(card_args){.machine = TOPO("sw1x4"), .noise = 0, .stress_s = 5, .level = GQ_LEVEL_QUICK + 1});
    const json_t *c = cu_check(&r, "uplink_width", "pcie:0000:40:00.0");
    assert_non_null(c);
    assert_string_equal(cu_str(c, "verdict"), "info");
    assert_non_null(strstr(cu_str(row(&r, "Identity and links"), "result"), "1 uplink above the GPUs"));
    json_decref(r.doc);
}

/* --sim-fault names a switch or bridge of the machine, with link-x8 only; the
 * topology's max-rate/max-width on a pcie line are checked. One line each. */
static void bad_specs(void **state)
{
    (void)state;
    gq_sim_faults f;
    gq_err e = {0};
    assert_int_equal(gq_sim_faults_parse("sw0:link-x8,gpu1:ecc", 0, &f, &e), GQ_OK);
    assert_int_equal(f.nnode, 1);
    assert_string_equal(f.node[0], "sw0");
    assert_int_equal(gq_sim_faults_parse("sw0:thermal", 0, &f, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "a switch or bridge takes only link-x8"));
    gq_backend be = {0};
    gq_backend_opts bo;
    static const struct {
        const char *machine, *fault, *want;
    } open_bad[] = {
        {TOPO("sw1x4"), "sw9:link-x8", "no switch or bridge named 'sw9' (it has sw0)"},
        {TOPO("sw1x4"), "cpu0:link-x8", "no switch or bridge named 'cpu0'"},
        {TOPO("sw2up8"), "sw1:link-x8", "the uplink of 'sw1' is x8 or narrower already"},
    };
    for (size_t i = 0; i < sizeof open_bad / sizeof open_bad[0]; i++) {
        gq_sim_opts(&bo, open_bad[i].machine, 1, 0, open_bad[i].fault);
        memset(&e, 0, sizeof e);
        assert_int_equal(gq_backend_open(&be, "sim", &bo, &e), GQ_E_USAGE);
        if (!strstr(e.msg, open_bad[i].want))
            fail_msg("'%s': %s", open_bad[i].fault, e.msg);
        assert_null(strchr(e.msg, '\n'));
    }
    static const struct {
        const char *text, *want;
    } topo_bad[] = {
        {"machine x\nsocket c\nswitch s\npcie s c rate 16 GT/s width x16 max-width x8 cap 1 GB/s\n",
         "x.topo:4:43: 'max-width' is below the trained 'width': the maximum is what the link can do"},
        {"machine x\nsocket c\nswitch s\npcie s c max-rate 32 GT/s cap 1 GB/s\n",
         "x.topo:4:19: 'max-rate' needs the trained link too: 'rate GT/s' and 'width xN'"},
        {"machine x\nmemory m size 1 GiB\nsocket c\nfabric m c cap 1 GB/s\ngpu g model \"X\" mem 1 GiB\n"
         "pcie g c rate 16 GT/s width x8 max-width x16\n",
         "x.topo:6:42: 'max-width' of a GPU's own link goes on its gpu line (gpu g ... max-width)"},
    };
    for (size_t i = 0; i < sizeof topo_bad / sizeof topo_bad[0]; i++) {
        gq_sim_machine *m = NULL;
        memset(&e, 0, sizeof e);
        assert_int_equal(gq_sim_parse(topo_bad[i].text, strlen(topo_bad[i].text), "x.topo", &m, &e),
                         GQ_E_USAGE);
        assert_string_equal(e.msg, topo_bad[i].want);
        assert_null(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(discovery_reads_uplinks),
        cmocka_unit_test(card_uplink_short_bus),
        cmocka_unit_test(card_uplink_from_topology),
        cmocka_unit_test(card_uplink_from_fault),
        cmocka_unit_test(healthy_uplink_is_info),
        cmocka_unit_test(bad_specs),
        cmocka_unit_test(card_root_port),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
