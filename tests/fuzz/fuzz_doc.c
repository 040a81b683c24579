/* libFuzzer target for the document readers behind `report`, `compare`,
 * `place --input`, `kv --input` and fleet's gather: the input is a saved
 * gpuqual document read with gq_doc_load (doc/document.c: the root checks and
 * every record through the record codec); what loads then goes through the
 * saved topology's decoder and one of the comparison, the placement model and
 * the fleet's node table (picked per input by fuzz_pick), as those commands do
 * with it.
 *
 * Build and run (clang; the library is instrumented too in this mode):
 *   cmake -S . -B /tmp/b-fuzz -G Ninja -DGQ_FUZZ=ON -DGQ_CUDA=OFF -DGQ_TESTS=OFF -DCMAKE_C_COMPILER=clang
 *   ninja -C /tmp/b-fuzz fuzz_doc
 *   /tmp/b-fuzz/fuzz_doc -max_len=65536 -dict=tests/fuzz/json.dict /tmp/corpus-doc tests/fuzz/corpus/fuzz_doc
 * A crash found here becomes a case in tests/unit (or tests/cli/bad-*.txt).
 */
#include <jansson.h>

#include "analysis/compare.h"
#include "analysis/fleet.h"
#include "analysis/placement.h"
#include "fuzz_util.h"
#include "render/analysis_render.h"
#include "render/render.h"
#include "topo/snapshot.h"
#include "topo/topo.h"

static gq_topo topo;
static gq_place_model model;

static void consume(const json_t *root, const gq_recordset *rs, unsigned which)
{
    gq_err e = {0};
    gq_topo_init(&topo);
    const json_t *tj = json_object_get(root, "topology");
    bool have_topo = tj && gq_topo_from_json(tj, &topo, &e) == GQ_OK;
    if (tj && !have_topo)
        fuzz_check_refusal(GQ_E_USAGE, &e);

    /* one consumer per input (fuzz_pick): compare, the placement model, or the fleet */
    gq_compare *c = which == 0 ? calloc(1, sizeof *c) : NULL;
    static gq_cmp_doc cd;
    memset(&e, 0, sizeof e);
    int drc = which == 0 ? gq_cmp_doc_from_json("fuzz.json", root, &cd, &e) : GQ_OK;
    if (drc)
        fuzz_check_refusal(drc, &e);
    if (c) {
        gq_compare_init(c, 5);
        const gq_cmp_doc *d = drc ? NULL : &cd;
        if (gq_compare_add(c, "a", rs, d, &e) == GQ_OK && gq_compare_add(c, "b", rs, d, &e) == GQ_OK &&
            gq_compare_check(c, &e) == GQ_OK)
            gq_compare_finish(c);
        gq_compare_free(c);
        free(c);
    }

    int ngpu = have_topo ? topo.ngpu : 0;
    for (int i = 0; i < rs->n && !ngpu; i++)
        if (rs->v[i].src.kind == GQ_EP_GPU && rs->v[i].src.index + 1 > ngpu)
            ngpu = rs->v[i].src.index + 1;
    if (which == 1 && ngpu > 0 && ngpu <= GQ_MAX_GPUS) {
        memset(&e, 0, sizeof e);
        int rc = gq_place_model_build(&model, ngpu, rs, root, have_topo ? &topo : NULL, &e);
        if (rc)
            fuzz_check_refusal(rc, &e);
    }

    /* as a fleet rank: the card into its node summary, through its JSON, into the fleet */
    if (which != 2)
        return;
    gq_fleet f;
    gq_fleet_init(&f, 5);
    static gq_node_summary s, back;
    if (gq_node_summary_from_card(root, rs, 0, "a", &s, &e) == GQ_OK) {
        json_t *j = gq_node_summary_to_json(&s, "fuzz");
        if (j && gq_node_summary_from_json("rank 0", j, &back, &e) == GQ_OK) {
            if (gq_fleet_add_summary(&f, "a", &back, &e) == GQ_OK &&
                gq_fleet_add_summary(&f, "b", &back, &e) == GQ_OK)
                (void)gq_fleet_finish(&f, &e);
            gq_node_summary_free(&back);
        }
        json_decref(j);
        gq_node_summary_free(&s);
    }
    gq_fleet_free(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input(data, size);
    fuzz_file ff;
    if (fuzz_file_open(&ff, data, size))
        return 0;
    json_t *root = NULL;
    gq_recordset rs = {0};
    gq_err e = {0};
    int rc = gq_doc_load(ff.path, &root, &rs, &e);
    if (rc) {
        fuzz_check_refusal(rc, &e);
        if (root)
            abort(); /* a refused document is not handed out */
    } else {
        consume(root, &rs, fuzz_pick(data, size, 3));
    }
    gq_records_free(&rs);
    json_decref(root);
    fuzz_file_close(&ff);
    return 0;
}
