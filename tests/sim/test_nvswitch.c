/* NVSwitches and per-GPU P2P in the simulated fabric (docs/topology-format.md):
 * through an NVSwitch each GPU's NVLink bundle is shared by all the peers it
 * copies with at once, which a full mesh of point-to-point bundles does not
 * enforce; discovery shows the pairs as NVLink and the GPUs' links as going to
 * an NVSwitch; a GPU declared `p2p NS` has no P2P with anyone. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <stdlib.h>
#include <unistd.h>

#include <jansson.h>

#include "simtest.h"
#include "topo/snapshot.h"
#include "../test_util.h"

#define NVS8 GQ_TEST_DATA "/data/topologies/nvswitch8.topo"
#define BAD8 GQ_TEST_DATA "/data/topologies/sw2bad.topo"

/* The same 3 GPUs as a full mesh of 390 GB/s bundles, and through a switch. */
static const char mesh[] = "machine mesh3\n"
                           "memory mem0 size 64 GiB\nsocket cpu0\nfabric mem0 cpu0 cap 100 GB/s\n"
                           "gpu g0 model \"X\" mem 1 GiB\ngpu g1 model \"X\" mem 1 GiB\n"
                           "gpu g2 model \"X\" mem 1 GiB\n"
                           "pcie g0 cpu0 cap 50 GB/s\npcie g1 cpu0 cap 50 GB/s\npcie g2 cpu0 cap 50 GB/s\n"
                           "nvlink g0 g1 links 18 cap 390 GB/s\nnvlink g0 g2 links 18 cap 390 GB/s\n"
                           "nvlink g1 g2 links 18 cap 390 GB/s\n";
static const char switched[] =
    "machine sw3\n"
    "memory mem0 size 64 GiB\nsocket cpu0\nfabric mem0 cpu0 cap 100 GB/s\n"
    "nvswitch nvs0\n"
    "gpu g0 model \"X\" mem 1 GiB\ngpu g1 model \"X\" mem 1 GiB\n"
    "gpu g2 model \"X\" mem 1 GiB\n"
    "pcie g0 cpu0 cap 50 GB/s\npcie g1 cpu0 cap 50 GB/s\npcie g2 cpu0 cap 50 GB/s\n"
    "nvlink g0 nvs0 links 18 cap 390 GB/s\nnvlink g1 nvs0 links 18 cap 390 GB/s\n"
    "nvlink g2 nvs0 links 18 cap 390 GB/s\n";

static double fan_out(const char *text, const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/nvs-%s-%d.topo", P_tmpdir, name, (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    gq_backend *be = st_open(path, 1, 0);
    gq_flow fl[2] = {st_p2p(0, 1, GQ_METHOD_CE), st_p2p(0, 2, GQ_METHOD_CE)};
    st_out o;
    st_run(be, fl, 2, 0.5, 0, &o);
    st_close(be);
    remove(path);
    return o.gbps[0] + o.gbps[1];
}

/* GPU 0 copying to two peers at once: 2 x 390 over a mesh, 390 through a switch. */
static void shared_bundle(void **state)
{
    (void)state;
    assert_near(fan_out(mesh, "mesh"), 780, 780 * 0.01);
    assert_near(fan_out(switched, "sw"), 390, 390 * 0.01);
}

/* nvswitch8: every pair alone at the bundle's rate; disjoint pairs do not share. */
static void nvswitch8_pairs(void **state)
{
    (void)state;
    gq_backend *be = st_open(NVS8, 1, 0);
    gq_flow one[1] = {st_p2p(0, 5, GQ_METHOD_CE)};
    st_out o;
    st_run(be, one, 1, 0.5, 0, &o);
    assert_near(o.gbps[0], 390, 4);
    gq_flow two[2] = {st_p2p(0, 1, GQ_METHOD_CE), st_p2p(2, 3, GQ_METHOD_CE)};
    st_run(be, two, 2, 0.5, 0, &o);
    assert_near(o.gbps[0] + o.gbps[1], 780, 8);
    gq_flow in[2] = {st_p2p(1, 0, GQ_METHOD_CE), st_p2p(2, 0, GQ_METHOD_CE)};
    st_run(be, in, 2, 0.5, 0, &o); /* two peers into GPU 0 share its bundle too */
    assert_near(o.gbps[0] + o.gbps[1], 390, 4);

    gq_topo *t = calloc(1, sizeof *t);
    gq_err e = {0};
    gq_topo_init(t);
    assert_int_equal(be->ops->discover(be, t, &e), GQ_OK);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(t->gpu[i].nvswitch_links, 18);
        for (int j = 0; j < 8; j++)
            if (i != j) {
                assert_int_equal(t->nvlinks[i][j], 18);
                assert_int_equal(t->level[i][j], GQ_LEVEL_NV);
                assert_int_equal(t->p2p_cuda[i][j], 1);
            }
    }
    /* a snapshot keeps it; one written before it existed reads as unknown */
    json_t *j = gq_topo_to_json(t);
    assert_non_null(j);
    gq_topo *back = calloc(1, sizeof *back);
    gq_topo_init(back);
    assert_int_equal(gq_topo_from_json(j, back, &e), GQ_OK);
    assert_int_equal(back->gpu[3].nvswitch_links, 18);
    json_t *g3 = json_array_get(json_object_get(j, "gpus"), 3);
    assert_non_null(g3);
    json_object_del(g3, "nvswitch_links");
    gq_topo_init(back);
    assert_int_equal(gq_topo_from_json(j, back, &e), GQ_OK);
    assert_int_equal(back->gpu[3].nvswitch_links, -1);
    json_decref(j);
    free(back);
    free(t);
    st_close(be);
}

/* sw2bad: GPU 6 declared `p2p NS` has no P2P with any GPU; the others do. */
static void gpu_without_p2p(void **state)
{
    (void)state;
    gq_backend *be = st_open(BAD8, 1, 0);
    gq_topo *t = calloc(1, sizeof *t);
    gq_err e = {0};
    gq_topo_init(t);
    assert_int_equal(be->ops->discover(be, t, &e), GQ_OK);
    for (int j = 0; j < 8; j++)
        if (j != 6) {
            assert_int_equal(t->p2p_cuda[6][j], 0);
            assert_int_equal(t->p2p_cuda[j][6], 0);
            assert_int_equal(t->p2p_nvml[6][j], GQ_P2P_NS);
        }
    assert_int_equal(t->p2p_cuda[0][7], 1);
    assert_int_equal(t->gpu[0].nvswitch_links, 0);
    /* a copy engine copy into GPU 6 is staged by the driver: below the P2P rate */
    gq_flow f[1] = {st_p2p(4, 6, GQ_METHOD_CE)};
    st_out o;
    st_run(be, f, 1, 0.5, 0, &o);
    gq_flow g[1] = {st_p2p(4, 5, GQ_METHOD_CE)};
    st_out q;
    st_run(be, g, 1, 0.5, 0, &q);
    assert_true(o.gbps[0] < 0.7 * q.gbps[0]);
    free(t);
    st_close(be);
}

/* Mistakes with NVSwitches are one line each. */
static void nvswitch_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } c[] = {
        {"machine x\nnvswitch s\nsocket c\nfabric s c cap 1 GB/s\n",
         "x.topo:4:8: an nvswitch joins GPUs through 'nvlink GPU NVSWITCH' only ('s')"},
        {"machine x\nnvswitch s\nsocket c\nnvlink s c links 2 cap 1 GB/s\n",
         "x.topo:4:8: NVLink starts at a GPU ('nvlink GPU GPU|NVSWITCH'); 's' is a nvswitch"},
        {"machine x\nmemory m size 1 GiB\nsocket c\nfabric m c cap 1 GB/s\ngpu g model \"X\" mem 1 GiB p2p "
         "XX\n",
         "x.topo:5:31: unknown P2P status 'XX'; use OK, CNS, GNS, TNS, NS or DS"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        gq_sim_machine *m = NULL;
        gq_err e = {0};
        assert_int_equal(gq_sim_parse(c[i].text, strlen(c[i].text), "x.topo", &m, &e), GQ_E_USAGE);
        assert_string_equal(e.msg, c[i].want);
        assert_null(m);
    }
}

/* Only a GPU on the switch reaches another through it: g0 on nvs0, g1 and
 * g2 joined directly. g0 and g1 share no NVSwitch (no NVLink between them);
 * g1 and g2 have their own bundle. */
static void switch_only_for_gpus_on_it(void **state)
{
    (void)state;
    static const char text[] =
        "machine half\n"
        "memory mem0 size 64 GiB\nsocket cpu0\nfabric mem0 cpu0 cap 100 GB/s\n"
        "nvswitch nvs0\n"
        "gpu g0 model \"X\" mem 1 GiB\ngpu g1 model \"X\" mem 1 GiB\ngpu g2 model \"X\" mem 1 GiB\n"
        "pcie g0 cpu0 cap 50 GB/s\npcie g1 cpu0 cap 50 GB/s\npcie g2 cpu0 cap 50 GB/s\n"
        "nvlink g0 nvs0 links 18 cap 390 GB/s\nnvlink g1 g2 links 4 cap 90 GB/s\n";
    gq_sim_machine *m = NULL;
    gq_err e = {0};
    if (gq_sim_parse(text, strlen(text), "half.topo", &m, &e))
        fail_msg("%s", e.msg);
    int li = -7, lj = -7;
    assert_int_equal(gq_sim_nvswitch_between(m, 0, 1, &li, &lj), -1);
    assert_int_equal(gq_sim_nvswitch_between(m, 1, 0, &li, &lj), -1);
    assert_int_equal(gq_sim_nvswitch_between(m, 1, 2, &li, &lj), -1);
    assert_int_equal(gq_sim_nvlinks(m, 0, 1), 0);
    assert_int_equal(gq_sim_nvlinks(m, 0, 2), 0);
    assert_int_equal(gq_sim_nvlinks(m, 1, 2), 4);
    gq_sim_machine_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shared_bundle),
        cmocka_unit_test(nvswitch8_pairs),
        cmocka_unit_test(gpu_without_p2p),
        cmocka_unit_test(nvswitch_errors),
        cmocka_unit_test(switch_only_for_gpus_on_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
