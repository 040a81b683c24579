/* libFuzzer target for the YAML reader (src/core/yaml.c) and the
 * expectations checks behind it (src/analysis/expect.c): the input is a YAML
 * document. Every rejection is one line; nothing crashes or leaks.
 *   cmake -S . -B /tmp/b-fuzz -G Ninja -DGQ_FUZZ=ON -DGQ_CUDA=OFF -DGQ_TESTS=OFF -DCMAKE_C_COMPILER=clang
 *   ninja -C /tmp/b-fuzz fuzz_yaml && /tmp/b-fuzz/fuzz_yaml -max_len=8192 -max_total_time=60
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/expect.h"
#include "doc/expect_load.h"
#include "core/yaml.h"

static gq_expect ex;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *t = malloc(size + 1);
    if (!t)
        return 0;
    memcpy(t, data, size);
    t[size] = 0;
    json_t *v = NULL;
    gq_err e = {0};
    if (gq_yaml_to_json(t, size, "fuzz.yaml", &v, &e) == GQ_OK)
        json_decref(v);
    else if (!e.msg[0] || strchr(e.msg, '\n'))
        abort();
    gq_err e2 = {0};
    if (gq_expect_parse(t, "fuzz.yaml", &ex, &e2) != GQ_OK && (!e2.msg[0] || strchr(e2.msg, '\n')))
        abort();
    free(t);
    return 0;
}
