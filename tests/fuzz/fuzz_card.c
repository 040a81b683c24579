/* libFuzzer target for the card codec (doc/card_codec.c): the input is a
 * saved card document (its "card" section is read) or a bare card section,
 * read with gq_card_from_json, schema-1 cards included (they are upgraded:
 * evidence from their plan, judged again). What it accepts is written back
 * with gq_card_to_json and must read again: a card gpuqual writes is one it
 * reads. A whole document whose card reads is then decoded as its renderers
 * read it (gq_card_doc_from_json, doc/card_figs.h). Every refusal is one
 * line; nothing crashes or leaks.
 *
 *   cmake -S . -B /tmp/b-fuzz -G Ninja -DGQ_FUZZ=ON -DGQ_CUDA=OFF -DGQ_TESTS=OFF -DCMAKE_C_COMPILER=clang
 *   ninja -C /tmp/b-fuzz fuzz_card
 *   /tmp/b-fuzz/fuzz_card -max_len=65536 -dict=tests/fuzz/json.dict /tmp/corpus-card
 * tests/fuzz/corpus/fuzz_card
 */
#include <jansson.h>

#include "analysis/card.h"
#include "fuzz_util.h"
#include "doc/card_codec.h"
#include "doc/card_figs.h"

static gq_card card, again;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input(data, size);
    json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    if (!root)
        return 0;
    json_t *sec = json_object_get(root, "card");
    if (!json_is_object(sec))
        sec = root;
    gq_err e = {0};
    int rc = gq_card_from_json(sec, "fuzz.json", &card, &e);
    if (rc) {
        fuzz_check_refusal(rc, &e);
    } else {
        json_t *out = json_deep_copy(sec);
        if (out) {
            gq_card_to_json(&card, out);
            gq_err e2 = {0};
            if (gq_card_from_json(out, "again.json", &again, &e2) != GQ_OK)
                abort(); /* what gpuqual wrote, it must read */
            gq_card_free(&again);
            json_decref(out);
        }
    }
    gq_card_free(&card);
    if (!rc && sec != root) {
        gq_card_doc *d = NULL;
        gq_err e3 = {0};
        int r3 = gq_card_doc_from_json(root, &d, &e3);
        if (r3)
            fuzz_check_refusal(r3, &e3);
        gq_card_doc_free(d);
    }
    json_decref(root);
    return 0;
}
