/* Rank 0 of `gpuqual fleet` without MPI (cli/fleet_gather.h): 50 synthetic
 * node summaries (bench/fleet_synth.h: real summaries of simulated h200x2
 * cards, healthy and with a trained-down link, a hot GPU and ECC errors
 * injected, every node's figures with noise of its own) laid end to end as
 * MPI_Gatherv leaves them, decoded and analysed: exactly the faulty nodes
 * are flagged, each for its own reason. And the int displacements: a total
 * over 2 GiB is refused, never wrapped. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../bench/fleet_synth.h"
#include "cli/fleet_gather.h"

#define NNODES 50

static json_t *base[GQ_SYN_NKIND];

static int setup(void **state)
{
    (void)state;
    static const char *const files[] = {"healthy", "link-x8", "thermal", "ecc"};
    for (int k = 0; k < GQ_SYN_NKIND; k++) {
        char path[512];
        json_error_t je;
        snprintf(path, sizeof path, "%s/data/fleet/h200x2-%s.json", GQ_TEST_DATA, files[k]);
        if (!(base[k] = json_load_file(path, JSON_REJECT_DUPLICATES, &je))) {
            fprintf(stderr, "%s: %s\n", path, je.text);
            return -1;
        }
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int k = 0; k < GQ_SYN_NKIND; k++)
        json_decref(base[k]);
    return 0;
}

/* The payloads as one buffer, with the lengths and displacements
 * MPI_Gatherv takes (gq_fleet_displs). bad_rank >= 0: that rank's bytes are
 * cut short (a payload rank 0 cannot read). */
static char *gathered(int n, int *lens, int *displs, int bad_rank)
{
    char **bytes = calloc((size_t)n, sizeof *bytes);
    assert_non_null(bytes);
    for (int r = 0; r < n; r++) {
        json_t *p = gq_syn_payload(base[gq_syn_kind_of(r)], r);
        assert_non_null(p);
        bytes[r] = json_dumps(p, JSON_COMPACT);
        assert_non_null(bytes[r]);
        lens[r] = (int)strlen(bytes[r]) / (r == bad_rank ? 2 : 1);
        json_decref(p);
    }
    long long total = 0;
    gq_err err = {0};
    assert_int_equal(gq_fleet_displs(lens, n, displs, &total, &err), GQ_OK);
    char *buf = malloc((size_t)total + 1);
    assert_non_null(buf);
    for (int r = 0; r < n; r++) {
        memcpy(buf + displs[r], bytes[r], (size_t)lens[r]);
        free(bytes[r]);
    }
    free(bytes);
    return buf;
}

static int outliers_of(const gq_fleet *f, int node, const char *key_part)
{
    int k = 0;
    for (int i = 0; i < f->nout; i++)
        k += f->out[i].node == node && strstr(f->fig[f->out[i].fig].key, key_part);
    return k;
}

static void test_exactly_the_faulty_nodes(void **state)
{
    (void)state;
    int lens[NNODES], displs[NNODES];
    char *buf = gathered(NNODES, lens, displs, -1);
    gq_fleet_gather g;
    gq_err err = {0};
    assert_int_equal(gq_fleet_gather_init(&g, NNODES, 5.0, &err), GQ_OK);
    assert_int_equal(gq_fleet_gather_buffer(&g, buf, lens, displs, &err), GQ_OK);
    assert_int_equal(gq_fleet_gather_finish(&g, &err), GQ_OK);
    assert_int_equal(g.f.nnodes, NNODES);
    assert_int_equal(g.f.ngroups, 1);
    int nfaulty = 0;
    for (int r = 0; r < NNODES; r++) {
        gq_syn_kind k = gq_syn_kind_of(r);
        char label[64];
        gq_syn_label(r, label, sizeof label);
        assert_string_equal(g.f.node[r].label, label);
        /* flagged exactly when faulty */
        if (g.f.node[r].flagged != (k != GQ_SYN_HEALTHY))
            fail_msg("%s (%s): flagged %d", label, gq_syn_kind_name(k), g.f.node[r].flagged);
        nfaulty += k != GQ_SYN_HEALTHY;
        if (k == GQ_SYN_HEALTHY) {
            assert_string_equal(g.f.node[r].verdict, "pass");
            assert_int_equal(g.f.node[r].noutliers, 0);
        } else {
            /* each faulty card fails (its stress, link or thermal check) */
            assert_string_equal(g.f.node[r].verdict, "fail");
        }
        /* the trained-down link: GPU 1's host bandwidth is an outlier, GPU 0's is not */
        assert_int_equal(outliers_of(&g.f, r, "host_to_device_set ce host:local->gpu:1 256 MiB") > 0,
                         k == GQ_SYN_LINK);
        assert_int_equal(outliers_of(&g.f, r, "host_to_device_set ce host:local->gpu:0"), 0);
        /* the hot GPU: its stress temperature */
        assert_int_equal(outliers_of(&g.f, r, "stress max temperature gpu:1"), k == GQ_SYN_HOT);
        /* ECC errors leave the figures alone: named by its failing check only */
        if (k == GQ_SYN_ECC)
            assert_int_equal(g.f.node[r].noutliers, 0);
    }
    assert_int_equal(nfaulty, 3);
    assert_int_equal(g.f.nflagged, nfaulty);
    assert_string_equal(g.f.verdict, "fail");
    assert_int_equal(g.f.exit_code, 1);
    /* the fleet document carries each node's summary fields next to the fleet's */
    json_t *doc = gq_fleet_gather_document(&g, NULL);
    assert_non_null(doc);
    const json_t *n7 = json_array_get(json_object_get(json_object_get(doc, "fleet"), "nodes"), 7);
    assert_true(json_is_true(json_object_get(n7, "flagged")));
    assert_true(json_array_size(json_object_get(n7, "checks")) > 0);
    assert_string_equal(json_string_value(json_object_get(doc, "kind")), "fleet");
    json_decref(doc);
    gq_fleet_gather_free(&g);
    free(buf);
}

/* A payload cut short is that node's error, never a pass; a node claiming
 * another rank is refused too. */
static void test_bad_payloads_are_errors(void **state)
{
    (void)state;
    int lens[10], displs[10];
    char *buf = gathered(10, lens, displs, 4);
    gq_fleet_gather g;
    gq_err err = {0};
    assert_int_equal(gq_fleet_gather_init(&g, 11, 5.0, &err), GQ_OK);
    g.size = 10;
    assert_int_equal(gq_fleet_gather_buffer(&g, buf, lens, displs, &err), GQ_OK);
    json_t *p = gq_syn_payload(base[GQ_SYN_HEALTHY], 3); /* sent by rank 10 */
    assert_int_equal(gq_fleet_gather_payload(&g, p, &err), GQ_OK);
    json_decref(p);
    assert_int_equal(gq_fleet_gather_finish(&g, &err), GQ_OK);
    assert_string_equal(g.f.node[4].verdict, "error");
    assert_non_null(strstr(g.f.node[4].error, "received no card"));
    assert_string_equal(g.f.node[10].verdict, "error");
    assert_non_null(strstr(g.f.node[10].error, "node.rank: is 3, expected 10"));
    assert_true(g.f.node[4].flagged && g.f.node[10].flagged);
    assert_int_equal(g.f.nflagged, 3); /* with rank 7, the trained-down link */
    gq_fleet_gather_free(&g);
    free(buf);
}

static void test_displacements(void **state)
{
    (void)state;
    gq_err err = {0};
    long long total = 0;
    int lens[3] = {10, 0, 7}, displs[3];
    assert_int_equal(gq_fleet_displs(lens, 3, displs, &total, &err), GQ_OK);
    assert_int_equal(displs[0], 0);
    assert_int_equal(displs[1], 10);
    assert_int_equal(displs[2], 10);
    assert_int_equal(total, 17);
    /* three ranks of 1 GiB: the last displacement would wrap an int */
    int big[3] = {1 << 30, 1 << 30, 1 << 30}, d3[3];
    assert_int_equal(gq_fleet_displs(big, 3, d3, &total, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "3 nodes' summaries need 3221225472 bytes"));
    assert_null(strchr(err.msg, '\n'));
    /* exactly INT_MAX fits */
    int edge[2] = {INT_MAX - 5, 5}, d2[2];
    assert_int_equal(gq_fleet_displs(edge, 2, d2, &total, &err), GQ_OK);
    assert_int_equal(d2[1], INT_MAX - 5);
    int neg[2] = {4, -1};
    assert_int_equal(gq_fleet_displs(neg, 2, d2, &total, &err), GQ_E_USAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exactly_the_faulty_nodes),
        cmocka_unit_test(test_bad_payloads_are_errors),
        cmocka_unit_test(test_displacements),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
