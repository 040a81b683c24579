/* Round trips on every simulated machine: what discovery finds, written
 * (gq_topo_to_json, the document root) and read back (gq_topo_from_json,
 * gq_doc_load), is what was written; the GPUs' identity fields included. */
#include "simtest.h"

#include <unistd.h>

#include "render/render.h"

static const char *machines[] = {"h200x2", "rtx4090x8", "rtxpro6000x8", "a100x6", "big64"};

static void test_topology_round_trip(void **state)
{
    (void)state;
    for (size_t m = 0; m < sizeof machines / sizeof machines[0]; m++) {
        gq_backend *be = st_open(machines[m], 1, 0);
        gq_topo *t = calloc(1, sizeof *t), *back = calloc(1, sizeof *back);
        assert_non_null(t);
        assert_non_null(back);
        gq_topo_init(t);
        gq_err e = {0};
        assert_int_equal(be->ops->discover(be, t, &e), GQ_OK);
        assert_int_equal(t->gpu[0].ecc_mode, GQ_MODE_UNSUPPORTED);
        assert_string_equal(t->gpu[0].serial, "not supported");
        json_t *a = gq_topo_to_json(t);
        assert_int_equal(gq_topo_from_json(a, back, &e), GQ_OK);
        json_t *b = gq_topo_to_json(back);
        if (!json_equal(a, b)) {
            char *x = json_dumps(a, JSON_SORT_KEYS), *y = json_dumps(b, JSON_SORT_KEYS);
            size_t i = 0;
            while (x[i] && x[i] == y[i])
                i++;
            fail_msg("%s: the topology differs after a round trip near '%.60s'", machines[m], x + i);
        }
        assert_int_equal(back->ngpu, t->ngpu);
        assert_int_equal(back->gpu[t->ngpu - 1].persistence_mode, GQ_MODE_UNSUPPORTED);
        assert_string_equal(back->gpu[t->ngpu - 1].vbios, "not supported");

        /* the whole document through the one loader */
        gq_doc d = {.kind = "topo", .topo = t};
        json_t *doc = gq_doc_to_json(&d);
        char path[] = "/tmp/gq-codec-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(gq_doc_write_file(doc, path, &e), GQ_OK);
        json_t *root = NULL;
        gq_recordset rs = {0};
        assert_int_equal(gq_doc_load(path, &root, &rs, &e), GQ_OK);
        assert_true(json_equal(json_object_get(root, "topology"), a));
        assert_true(json_equal(json_object_get(root, "gpus"), json_object_get(doc, "gpus")));
        assert_string_equal(json_string_value(json_object_get(root, "run_id")),
                            json_string_value(json_object_get(doc, "run_id")));
        unlink(path);
        json_decref(root);
        json_decref(doc);
        json_decref(a);
        json_decref(b);
        free(t);
        free(back);
        st_close(be);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topology_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
