/* Probe planning: the seeds' machines get the probes their documents used
 * (per-socket sets, pairs inside domains, within against across), nothing is
 * planned twice, and the plan stays O(N^2) up to 64 GPUs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/probes.h"

static gq_topo T;
static int ALL[64];

static int add_pci(gq_pci_kind k, int parent, int gpu, const char *bus)
{
    int i = T.npci++;
    T.pci[i].kind = k;
    T.pci[i].parent = parent;
    T.pci[i].gpu = gpu;
    snprintf(T.pci[i].bus_id, sizeof T.pci[i].bus_id, "%s", bus);
    return i;
}

/* nsock sockets, each with nsw switches of per GPUs; p2p everywhere or nowhere. */
static void tree_machine(int nsock, int nsw, int per, bool p2p)
{
    gq_topo_init(&T);
    int g = 0;
    T.numa_nodes = nsock;
    for (int s = 0; s < nsock; s++) {
        char bus[32];
        snprintf(bus, sizeof bus, "%04x:00:00.0", s);
        int hb = add_pci(GQ_PCI_HOSTBRIDGE, -1, -1, bus);
        for (int w = 0; w < nsw; w++) {
            snprintf(bus, sizeof bus, "%04x:%02x:01.0", s, w);
            int rp = add_pci(GQ_PCI_BRIDGE, hb, -1, bus);
            snprintf(bus, sizeof bus, "%04x:%02x:00.0", s, 0x40 + w);
            int up = add_pci(GQ_PCI_BRIDGE, rp, -1, bus);
            for (int k = 0; k < per; k++, g++) {
                snprintf(bus, sizeof bus, "%04x:%02x:%02x.0", s, 0x80 + w, k);
                int dn = add_pci(GQ_PCI_BRIDGE, up, -1, bus);
                snprintf(bus, sizeof bus, "%04x:%02x:00.0", s, 0xc0 + g % 64);
                add_pci(GQ_PCI_GPU, dn, g, bus);
                T.gpu[g].index = g;
                T.gpu[g].numa_node = s;
            }
        }
    }
    T.ngpu = g;
    for (int a = 0; a < g; a++)
        for (int b = 0; b < g; b++)
            T.p2p_cuda[a][b] = a == b ? 1 : (p2p ? 1 : 0);
}

static bool has_host(const gq_probe_plan *p, gq_probe_kind k, gq_direction d, const char *set)
{
    char buf[256];
    for (int i = 0; i < p->n; i++)
        if (p->v[i].kind == k && p->v[i].direction == d &&
            !strcmp(gq_probe_str(&p->v[i], buf, sizeof buf), set))
            return true;
    return false;
}

static int count_sets(const gq_probe_plan *p, const char *set, gq_direction d)
{
    char buf[256];
    int c = 0;
    for (int i = 0; i < p->n; i++)
        if (p->v[i].direction == d && p->v[i].npairs == 0 &&
            !strcmp(gq_probe_str(&p->v[i], buf, sizeof buf), set))
            c++;
    return c;
}

static int setup(void **state)
{
    (void)state;
    for (int i = 0; i < 64; i++)
        ALL[i] = i;
    return 0;
}

/* Seed 000: 2 sockets x 1 switch x 4 GPUs, no P2P. */
static void seed000(void **state)
{
    (void)state;
    tree_machine(2, 1, 4, false);
    gq_probe_plan p = {0};
    assert_int_equal(gq_probes_plan_matrix(&p, &T, ALL, 8, NULL), 0);
    assert_int_equal(p.count[GQ_PROBE_MATRIX], 56);
    for (int i = 0; i < p.n; i++)
        assert_true(p.v[i].staged[0]);
    gq_domains dom;
    gq_probes_assume_domains(&T, ALL, 8, &dom);
    assert_int_equal(dom.ndomains, 8); /* no P2P: singletons */
    assert_int_equal(gq_probes_plan_contention(&p, &T, ALL, 8, &dom, NULL), 0);
    for (int d = 0; d < 2; d++) {
        gq_direction dir = d ? GQ_DIR_D2H : GQ_DIR_H2D;
        assert_true(has_host(&p, GQ_PROBE_HOST_GROUP, dir, "0-3"));
        assert_true(has_host(&p, GQ_PROBE_HOST_GROUP, dir, "4-7"));
        assert_true(has_host(&p, GQ_PROBE_HOST_ALL, dir, "0-7"));
        assert_true(has_host(&p, GQ_PROBE_HOST_ALONE, dir, "5"));
        assert_true(has_host(&p, GQ_PROBE_HOST_PAIR, dir, "0,1"));
        assert_false(
            has_host(&p, GQ_PROBE_HOST_PAIR, dir, "3,4")); /* across sockets: the all-run covers it */
        /* the switch, root port, host bridge and NUMA node are one set: once */
        assert_int_equal(count_sets(&p, "0-3", dir), 1);
    }
    assert_int_equal(p.count[GQ_PROBE_HOST_ALONE], 16);
    assert_int_equal(p.count[GQ_PROBE_HOST_GROUP], 4);
    assert_int_equal(p.count[GQ_PROBE_HOST_PAIR], 24);
    assert_int_equal(p.count[GQ_PROBE_P2P_WITHIN] + p.count[GQ_PROBE_P2P_ACROSS], 0);
    /* the group is named by the most specific tree node */
    int ngroups = 0; /* the probes themselves, not only p.count[], hold the 4 groups */
    for (int i = 0; i < p.n; i++)
        if (p.v[i].kind == GQ_PROBE_HOST_GROUP) {
            assert_non_null(strstr(p.v[i].why, "PCIe switch"));
            ngroups++;
        }
    assert_int_equal(ngroups, 4);
    gq_probe_plan_free(&p);
}

static void make_domains(gq_domains *d, const char *spec)
{
    /* spec: "0,1,2,3|4,5,6,7" */
    memset(d, 0, sizeof *d);
    for (int g = 0; g < GQ_MAX_GPUS; g++)
        d->domain_of[g] = -1;
    d->ndomains = 1;
    for (const char *s = spec; *s;) {
        if (*s == '|') {
            d->ndomains++;
            s++;
            continue;
        }
        if (*s == ',') {
            s++;
            continue;
        }
        int g = 0;
        while (*s >= '0' && *s <= '9')
            g = g * 10 + (*s++ - '0');
        int k = d->ndomains - 1;
        d->member[k][d->size[k]++] = g;
        d->domain_of[g] = k;
    }
}

/* Seed 001: a VM with a flat tree and one NUMA node; domains 0-3 and 4-7. */
static void seed001(void **state)
{
    (void)state;
    gq_topo_init(&T);
    T.ngpu = 8;
    T.numa_nodes = 1;
    int hb = add_pci(GQ_PCI_HOSTBRIDGE, -1, -1, "0000:00:00.0");
    for (int g = 0; g < 8; g++) {
        add_pci(GQ_PCI_GPU, hb, g, "");
        T.gpu[g].numa_node = -1;
        for (int h = 0; h < 8; h++)
            T.p2p_cuda[g][h] = 1;
    }
    gq_domains dom;
    make_domains(&dom, "0,1,2,3|4,5,6,7");
    gq_probe_plan p = {0};
    assert_int_equal(gq_probes_plan_contention(&p, &T, ALL, 8, &dom, NULL), 0);
    assert_true(has_host(&p, GQ_PROBE_HOST_PAIR, GQ_DIR_H2D, "0,1"));
    assert_true(has_host(&p, GQ_PROBE_HOST_PAIR, GQ_DIR_H2D, "2,3"));
    assert_true(has_host(&p, GQ_PROBE_HOST_PAIR, GQ_DIR_D2H, "0,2"));
    assert_true(has_host(&p, GQ_PROBE_HOST_GROUP, GQ_DIR_H2D, "0-3"));
    assert_true(has_host(&p, GQ_PROBE_HOST_ALL, GQ_DIR_D2H, "0-7"));
    assert_int_equal(p.count[GQ_PROBE_HOST_PAIR], 24);
    assert_int_equal(p.count[GQ_PROBE_HOST_GROUP], 4);
    assert_int_equal(p.count[GQ_PROBE_P2P_WITHIN], 1);
    assert_int_equal(p.count[GQ_PROBE_P2P_ACROSS], 1);
    char buf[128];
    int nwithin = 0, nacross = 0;
    for (int i = 0; i < p.n; i++) {
        if (p.v[i].kind == GQ_PROBE_P2P_WITHIN) {
            assert_string_equal(gq_probe_str(&p.v[i], buf, sizeof buf), "0:1,2:3,4:5,6:7");
            nwithin++;
        }
        if (p.v[i].kind == GQ_PROBE_P2P_ACROSS) {
            assert_string_equal(gq_probe_str(&p.v[i], buf, sizeof buf), "0:4,1:5,2:6,3:7");
            nacross++;
        }
    }
    assert_int_equal(nwithin, 1);
    assert_int_equal(nacross, 1);
    gq_probe_plan_free(&p);
}

/* Seed 004: NVLink pairs {0,3},{1,2},{4,5} from the tree's NVLink counts. */
static void a100_nvlink(void **state)
{
    (void)state;
    tree_machine(2, 1, 3, true);
    const int pr[3][2] = {{0, 3}, {1, 2}, {4, 5}};
    for (int k = 0; k < 3; k++) {
        T.nvlinks[pr[k][0]][pr[k][1]] = T.nvlinks[pr[k][1]][pr[k][0]] = 4;
    }
    gq_domains dom;
    gq_probes_assume_domains(&T, ALL, 6, &dom);
    assert_int_equal(dom.ndomains, 3);
    assert_int_equal(dom.domain_of[3], dom.domain_of[0]);
    assert_int_equal(dom.domain_of[2], dom.domain_of[1]);
    gq_probe_plan p = {0};
    assert_int_equal(gq_probes_plan_contention(&p, &T, ALL, 6, &dom, NULL), 0);
    assert_int_equal(p.count[GQ_PROBE_P2P_WITHIN], 1);
    assert_int_equal(p.count[GQ_PROBE_P2P_ACROSS], 3);
    char buf[128];
    int nwithin = 0;
    for (int i = 0; i < p.n; i++)
        if (p.v[i].kind == GQ_PROBE_P2P_WITHIN) {
            assert_string_equal(gq_probe_str(&p.v[i], buf, sizeof buf), "0:3,1:2,4:5");
            nwithin++;
        }
    assert_int_equal(nwithin, 1);
    /* each 2-GPU domain is a host group once (not again as a pair) */
    assert_int_equal(count_sets(&p, "0,3", GQ_DIR_H2D), 1);
    gq_probe_plan_free(&p);
}

static void one_gpu(void **state)
{
    (void)state;
    tree_machine(1, 1, 1, true);
    gq_probe_plan p = {0};
    assert_int_equal(gq_probes_plan_matrix(&p, &T, ALL, 1, NULL), 0);
    gq_domains dom;
    gq_probes_assume_domains(&T, ALL, 1, &dom);
    assert_int_equal(gq_probes_plan_contention(&p, &T, ALL, 1, &dom, NULL), 0);
    assert_int_equal(p.n, 2); /* h2d and d2h alone */
    assert_int_equal(p.count[GQ_PROBE_HOST_ALONE], 2);
    gq_probe_plan_free(&p);
}

/* O(N^2): for 8, 16 and 64 GPUs, with the tree's domains and with the worst
 * case (one domain of every GPU), the plan stays under the stated bound,
 * which itself is under 3 N^2. */
static void scales_n2(void **state)
{
    (void)state;
    const int shapes[][3] = {{2, 1, 4}, {2, 2, 4}, {2, 4, 8}};
    for (int s = 0; s < 3; s++) {
        tree_machine(shapes[s][0], shapes[s][1], shapes[s][2], true);
        int n = T.ngpu;
        for (int worst = 0; worst < 2; worst++) {
            gq_domains dom;
            if (worst) {
                gq_pairmatrix m;
                gq_pairmatrix_init(&m, ALL, n);
                for (int i = 0; i < n; i++)
                    for (int j = 0; j < n; j++)
                        if (i != j)
                            m.gbps[i][j] = 1;
                gq_domains_cluster(&m, NULL, &dom, NULL);
                assert_int_equal(dom.ndomains, 1);
            } else {
                gq_probes_assume_domains(&T, ALL, n, &dom);
            }
            gq_probe_plan p = {0};
            assert_int_equal(gq_probes_plan_matrix(&p, &T, ALL, n, NULL), 0);
            assert_int_equal(gq_probes_plan_contention(&p, &T, ALL, n, &dom, NULL), 0);
            assert_true(p.n <= gq_probes_bound(n));
            /* 2.125 N^2 + 14 N + 3: under 3 N^2 + 16 N, and under 3 N^2 from 17 GPUs on */
            assert_true(gq_probes_bound(n) <= 3L * n * n + 16L * n);
            assert_true(n < 17 || gq_probes_bound(n) <= 3L * n * n);
            /* never all subsets: for 16 GPUs that would be 65536 per direction */
            assert_true(p.count[GQ_PROBE_HOST_GROUP] <= 2 * 4 * n);
            assert_true(gq_probes_estimate_s(&p, 5, 0.1) > 0);
            gq_probe_plan_free(&p);
        }
    }
}

/* Pair lists: what `pairs` and `sweep --pair` accept and refuse. */
static void parse_pairs(void **state)
{
    (void)state;
    int s[32], d[32], n;
    gq_err e = {0};
    assert_int_equal(gq_probes_parse_pairs("0:1,2:3,4:5,6:7", "pairs", true, 8, s, d, 32, &n, &e), 0);
    assert_int_equal(n, 4);
    assert_int_equal(s[3], 6);
    assert_int_equal(d[3], 7);
    /* not disjoint is fine for sweeps, one pair at a time */
    assert_int_equal(gq_probes_parse_pairs("0:1,0:4", "--pair", false, 8, s, d, 32, &n, &e), 0);
    assert_int_equal(n, 2);
    const struct {
        const char *in;
        int ngpu;
        const char *msg;
    } bad[] = {
        {"", 8, "empty list"},
        {"0:0", 8, "names GPU 0 twice"},
        {"0:1,1:2", 8, "GPU 1 is in two pairs (0:1 and 1:2)"},
        {"0:8", 8, "GPU 8 does not exist (this machine has GPUs 0-7)"},
        {"0:64", 0, "GPU 64 does not exist"},
        {"0:1", 1, "GPU 1 does not exist (this machine has GPUs 0-0)"},
        {"0-1", 8, "'0-1' is not a pair"},
        {"0:1:2", 8, "is not a pair"},
        {"a:1", 8, "is not a pair of GPU indices"},
        {"-1:2", 8, "is not a pair of GPU indices"},
        {"0:1,,2:3", 8, "empty item"},
        {"0:1,", 8, "empty item"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&e, 0, sizeof e);
        if (gq_probes_parse_pairs(bad[i].in, "pairs", true, bad[i].ngpu, s, d, 32, &n, &e) != GQ_E_USAGE)
            fail_msg("'%s' was accepted", bad[i].in);
        if (!strstr(e.msg, bad[i].msg))
            fail_msg("'%s': message '%s' lacks '%s'", bad[i].in, e.msg, bad[i].msg);
        assert_null(strchr(e.msg, '\n'));
    }
    /* an item longer than 47 characters, named cut short */
    memset(&e, 0, sizeof e);
    assert_int_equal(gq_probes_parse_pairs("0:1,000000000000000000000000000000000000000000000002:3",
                                           "--pairs", true, 8, s, d, 32, &n, &e),
                     GQ_E_USAGE);
    assert_string_equal(e.msg,
                        "--pairs '0:1,000000000000000000000000000000000000000000000002:3': item "
                        "'00000000000000000000000000000000000000000000...' is too long, expected SRC:DST "
                        "such as 0:1");
    /* more pairs than allowed */
    assert_int_equal(gq_probes_parse_pairs("0:1,2:3,4:5", "pairs", true, 8, s, d, 2, &n, &e), GQ_E_USAGE);
}

/* The measurement a probe becomes: every flow reported, aggregate for groups,
 * reads executed by the destination, staged pairs staged. */
static void probe_measurement(void **state)
{
    (void)state;
    static gq_measurement m;
    gq_probe pr;
    memset(&pr, 0, sizeof pr);
    pr.kind = GQ_PROBE_P2P_ACROSS;
    pr.direction = GQ_DIR_P2P;
    pr.npairs = 2;
    pr.src[0] = 0, pr.dst[0] = 4, pr.src[1] = 1, pr.dst[1] = 5;
    pr.staged[1] = true;
    gq_probe_measurement(&pr, 1 << 20, GQ_METHOD_CE, true, &m);
    assert_int_equal(m.nflows, 2);
    assert_true(m.aggregate && m.report[0] && m.report[1]);
    assert_int_equal(m.flows[0].exec_gpu, 4);
    assert_int_equal(m.flows[0].method, GQ_METHOD_CE);
    assert_int_equal(m.flows[1].method, GQ_METHOD_STAGED);
    assert_string_equal(m.test, "concurrent_pairs_read_ce");
    memset(&pr, 0, sizeof pr);
    pr.kind = GQ_PROBE_HOST_ALONE;
    pr.direction = GQ_DIR_D2H;
    pr.ngpus = 1;
    pr.gpus[0] = 3;
    gq_probe_measurement(&pr, 1 << 20, GQ_METHOD_CE, true, &m);
    assert_int_equal(m.nflows, 1);
    assert_false(m.aggregate);
    assert_int_equal(m.flows[0].src.kind, GQ_EP_GPU);
    assert_int_equal(m.flows[0].dst.kind, GQ_EP_HOST);
    assert_string_equal(m.test, "device_to_host_set");
}

/* Without a topology (a document with none) and without domains: the host
 * probes only, each GPU alone and all at once per direction, no groups, no
 * pairs; the same GPUs with a tree add its groups. */
static void no_topology(void **state)
{
    (void)state;
    static const int g3[3] = {1, 2, 5};
    gq_probe_plan p = {0};
    assert_int_equal(gq_probes_plan_contention(&p, NULL, g3, 3, NULL, NULL), GQ_OK);
    assert_int_equal(p.n, 8);
    assert_int_equal(p.count[GQ_PROBE_HOST_ALONE], 6);
    assert_int_equal(p.count[GQ_PROBE_HOST_ALL], 2);
    assert_int_equal(p.count[GQ_PROBE_HOST_GROUP], 0);
    assert_int_equal(p.count[GQ_PROBE_HOST_PAIR], 0);
    assert_true(has_host(&p, GQ_PROBE_HOST_ALL, GQ_DIR_H2D, "1,2,5"));
    assert_true(has_host(&p, GQ_PROBE_HOST_ALL, GQ_DIR_D2H, "1,2,5"));
    assert_true(has_host(&p, GQ_PROBE_HOST_ALONE, GQ_DIR_D2H, "5"));
    gq_probe_plan_free(&p);
    /* one GPU: alone in each direction, nothing at once */
    assert_int_equal(gq_probes_plan_contention(&p, NULL, g3, 1, NULL, NULL), GQ_OK);
    assert_int_equal(p.n, 2);
    assert_int_equal(p.count[GQ_PROBE_HOST_ALONE], 2);
    gq_probe_plan_free(&p);
    /* with the tree (2 sockets of 4), a socket of the eight is a group */
    tree_machine(2, 1, 4, false);
    assert_int_equal(gq_probes_plan_contention(&p, &T, ALL, 8, NULL, NULL), GQ_OK);
    assert_true(p.count[GQ_PROBE_HOST_GROUP] > 0);
    assert_true(has_host(&p, GQ_PROBE_HOST_GROUP, GQ_DIR_H2D, "0-3"));
    gq_probe_plan_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(seed000, setup),     cmocka_unit_test_setup(seed001, setup),
        cmocka_unit_test_setup(a100_nvlink, setup), cmocka_unit_test_setup(one_gpu, setup),
        cmocka_unit_test_setup(scales_n2, setup),   cmocka_unit_test(parse_pairs),
        cmocka_unit_test_setup(no_topology, setup), cmocka_unit_test(probe_measurement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
