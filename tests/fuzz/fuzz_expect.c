/* libFuzzer target for expectations files (analysis/expect.c): the input is
 * the text of an --expect file. A refusal is one line; what parses is matched
 * against a few GPU names.
 *
 * Build and run: as tests/fuzz/fuzz_doc.c, with the target fuzz_expect.
 */
#include "analysis/expect.h"
#include "doc/expect_load.h"
#include "fuzz_util.h"

static gq_expect ex;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input(data, size);
    char *text = fuzz_cstr(data, size);
    if (!text)
        return 0;
    gq_err e = {0};
    int rc = gq_expect_parse(text, "fuzz.expect", &ex, &e);
    if (rc) {
        fuzz_check_refusal(rc, &e);
    } else {
        if (ex.nmodels < 0 || ex.nmodels > GQ_EXPECT_MAX_MODELS)
            abort();
        static const char *const names[] = {"NVIDIA H200", "NVIDIA GeForce RTX 4090", "", "A100-SXM4-80GB"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            int m = gq_expect_match(&ex, names[i]);
            if (m < -1 || m >= ex.nmodels)
                abort();
        }
    }
    free(text);
    return 0;
}
