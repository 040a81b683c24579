/* libFuzzer target for the fleet node summary (doc/fleet_node.c): the
 * input is a "fleet-node" document as a fleet rank sends it, read with
 * gq_node_summary_from_json as fleet's gather does. What it accepts is
 * written back (gq_node_summary_to_json) and must read again, and goes into
 * a fleet of two nodes (analysis/fleet.c) as the gather would put it. Every
 * refusal is one line; nothing crashes or leaks.
 *
 *   cmake -S . -B /tmp/b-fuzz -G Ninja -DGQ_FUZZ=ON -DGQ_CUDA=OFF -DGQ_TESTS=OFF -DCMAKE_C_COMPILER=clang
 *   ninja -C /tmp/b-fuzz fuzz_node
 *   /tmp/b-fuzz/fuzz_node -max_len=65536 -dict=tests/fuzz/json.dict /tmp/corpus-node
 * tests/fuzz/corpus/fuzz_node
 */
#include <jansson.h>

#include "analysis/fleet.h"
#include "fuzz_util.h"
#include "render/analysis_render.h"
#include "render/render.h"

static gq_node_summary s, back;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input(data, size);
    json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    if (!root)
        return 0;
    gq_err e = {0};
    int rc = gq_node_summary_from_json("rank 3", root, &s, &e);
    if (rc) {
        fuzz_check_refusal(rc, &e);
        json_decref(root);
        return 0;
    }
    json_t *j = gq_node_summary_to_json(&s, "fuzz");
    if (j) {
        gq_err e2 = {0};
        if (gq_node_summary_from_json("again", j, &back, &e2) != GQ_OK)
            abort(); /* what a rank writes, the gather must read */
        gq_fleet f;
        gq_fleet_init(&f, 5);
        gq_err e3 = {0};
        if (gq_fleet_add_summary(&f, "a", &s, &e3) == GQ_OK &&
            gq_fleet_add_summary(&f, "b", &back, &e3) == GQ_OK)
            (void)gq_fleet_finish(&f, &e3);
        gq_fleet_free(&f);
        gq_node_summary_free(&back);
        json_decref(j);
    }
    gq_node_summary_free(&s);
    json_decref(root);
    return 0;
}
