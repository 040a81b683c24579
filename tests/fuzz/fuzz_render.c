/* libFuzzer target for the renderers on decoded documents: the input is a
 * saved gpuqual document; what gq_doc_load accepts is rendered as `report`
 * renders it (a card composed from its records and saved topology when it has
 * no card section, then the summary and Markdown, or the HTML), or its records
 * as `run` renders them (table and Prometheus, or CSV and nvbandwidth JSON):
 * one of the four per input, picked by fuzz_pick. Output goes to /dev/null; a
 * refusal must be one line.
 *
 * Build and run: as tests/fuzz/fuzz_doc.c, with the target fuzz_render.
 */
#include <jansson.h>

#include "fuzz_util.h"
#include "doc/card_compose.h"
#include "../card_render_doc.h"
#include "render/prometheus.h"
#include "render/render.h"
#include "topo/snapshot.h"
#include "topo/topo.h"

static gq_topo topo;
static FILE *devnull;

static void render_card(json_t *root, const gq_recordset *rs, unsigned which)
{
    gq_err e = {0};
    /* gq_topo_from_json starts from gq_topo_init; topo is read only when it decoded */
    const json_t *tj = json_object_get(root, "topology");
    bool have_topo = tj && gq_topo_from_json(tj, &topo, &e) == GQ_OK;
    /* the card renderers (0, 1) on a card composed from the records when there is none;
     * the record renderers (2, 3) need no card */
    if (which < 2 && !json_is_object(json_object_get(root, "card")) && have_topo && rs->n > 0) {
        gq_card_inputs in = {.topo = &topo,
                             .rs = rs,
                             .stress = json_object_get(root, "stress"),
                             .complete = !json_is_true(json_object_get(root, "incomplete"))};
        json_t *composed = gq_card_compose(&in, &e);
        if (!composed) {
            fuzz_check_refusal(e.code ? e.code : GQ_E_FAIL, &e);
            return;
        }
        const char *k;
        json_t *v;
        json_object_foreach(composed, k, v) json_object_set(root, k, v);
        json_decref(composed);
    }
    int rc;
    /* one renderer per input (fuzz_pick): each costs as much as the decoding */
    switch (which) {
    case 0:
        if (!json_is_object(json_object_get(root, "card")))
            break;
        memset(&e, 0, sizeof e);
        if ((rc = gq_test_render_summary(devnull, root, 80, &e)))
            fuzz_check_refusal(rc, &e);
        memset(&e, 0, sizeof e);
        if ((rc = gq_test_render_markdown(devnull, root, &e)))
            fuzz_check_refusal(rc, &e);
        break;
    case 1:
        if (!json_is_object(json_object_get(root, "card")))
            break;
        memset(&e, 0, sizeof e);
        if ((rc = gq_test_render_html(devnull, root, &e)))
            fuzz_check_refusal(rc, &e);
        break;
    case 2:
        if (have_topo) {
            gq_render_table(devnull, &topo, rs);
            gq_prom_gpus(devnull, &topo, "run");
            gq_prom_records(devnull, rs, &topo, "gpuqual");
        }
        break;
    default:
        if (have_topo) {
            json_t *nv = gq_render_nvbandwidth_json(&topo, rs, "fuzz");
            json_decref(nv);
        }
        gq_render_csv(devnull, rs);
        gq_prom_records(devnull, rs, NULL, "gpuqual_card");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input(data, size);
    if (!devnull && !(devnull = fopen("/dev/null", "w")))
        return 0;
    fuzz_file ff;
    if (fuzz_file_open(&ff, data, size))
        return 0;
    json_t *root = NULL;
    gq_recordset rs = {0};
    gq_err e = {0};
    int rc = gq_doc_load(ff.path, &root, &rs, &e);
    if (rc) {
        fuzz_check_refusal(rc, &e);
    } else {
        render_card(root, &rs, fuzz_pick(data, size, 4));
    }
    gq_records_free(&rs);
    json_decref(root);
    fuzz_file_close(&ff);
    return 0;
}
