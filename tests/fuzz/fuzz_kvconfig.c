/* libFuzzer target for kv's model config (a Hugging Face config.json,
 * analysis/kv.c): the input is read as `kv --config FILE` reads it
 * (gq_kv_config_load); a shape that parses is checked and sized for 8192
 * tokens. A refusal is one line; an accepted shape has every count > 0.
 *
 * Build and run: as tests/fuzz/fuzz_doc.c, with the target fuzz_kvconfig.
 */
#include "analysis/kv.h"
#include "doc/kv_config.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input(data, size);
    fuzz_file ff;
    if (fuzz_file_open(&ff, data, size))
        return 0;
    gq_kv_shape s;
    memset(&s, 0, sizeof s);
    bool has_dtype = false;
    gq_err e = {0};
    int rc = gq_kv_config_load(ff.path, &s, &has_dtype, &e);
    if (rc) {
        fuzz_check_refusal(rc, &e);
    } else {
        /* an accepted config has layers, and KV heads of a size or (multi-head
         * latent attention) a latent rank */
        if (s.layers <= 0 || (s.mla_rank <= 0 && (s.kv_heads <= 0 || s.head_dim <= 0)))
            abort();
        if (!has_dtype)
            s.dtype = GQ_KV_BF16;
        memset(&e, 0, sizeof e);
        uint64_t bytes;
        rc = gq_kv_shape_check(&s, &e);
        if (rc == GQ_OK)
            rc = gq_kv_payload(&s, 8192, &bytes, &e);
        if (rc)
            fuzz_check_refusal(rc, &e);
    }
    fuzz_file_close(&ff);
    return 0;
}
