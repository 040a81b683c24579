/* libFuzzer target for the option parser (src/core/options.c): the input is
 * a command line, one word per line, parsed with gpuqual's grammar and with a
 * compatibility grammar. Every rejection is one non-empty line; nothing
 * crashes, reads out of bounds or writes outside the options struct.
 *
 * Build and run (clang; the library is instrumented too in this mode):
 *   cmake -S . -B /tmp/b-fuzz -G Ninja -DGQ_FUZZ=ON -DGQ_CUDA=OFF -DGQ_TESTS=OFF -DCMAKE_C_COMPILER=clang
 *   ninja -C /tmp/b-fuzz fuzz_options
 *   /tmp/b-fuzz/fuzz_options -max_total_time=60
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/options.h"

typedef struct fopts {
    gq_optlist list, kv;
    int n;
    uint64_t size;
    double d, pct, dur;
    bool flag, flag2;
    const char *str, *en;
} fopts;

#define O(f) offsetof(fopts, f)
static const gq_opt tab[] = {
    {.name = "test", .shortname = 't', .type = GQ_OPT_LIST, .off = O(list)},
    {.name = "set", .type = GQ_OPT_KV, .off = O(kv)},
    {.name = "rounds", .shortname = 'i', .type = GQ_OPT_INT, .off = O(n), .def = "5", .lo = 1, .hi = 64},
    {.name = "buffer-size", .shortname = 'b', .type = GQ_OPT_SIZE, .off = O(size), .unit = GQ_MiB},
    {.name = "noise", .type = GQ_OPT_DOUBLE, .off = O(d), .lo = 0, .hi = 1},
    {.name = "threshold", .type = GQ_OPT_PERCENT, .off = O(pct)},
    {.name = "duration", .shortname = 'd', .type = GQ_OPT_DURATION, .off = O(dur)},
    {.name = "quiet", .shortname = 'q', .type = GQ_OPT_FLAG, .off = O(flag)},
    {.name = "all", .shortname = 'a', .type = GQ_OPT_FLAG, .off = O(flag2), .def = "1"},
    {.name = "output", .shortname = 'o', .type = GQ_OPT_STR, .off = O(str)},
    {.name = "format", .type = GQ_OPT_ENUM, .off = O(en), .def = "table", .choices = "table,json,csv"},
    GQ_OPT_END,
};
static const gq_opt *const tabs[] = {tab};
static const gq_opt_grammar compat = {.multi_values = true, .case_fold = true, .single_dash_long = true};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    char *argv[34] = {"gpuqual", "fuzz"};
    int argc = 2;
    for (char *p = buf; argc < 33;) {
        argv[argc++] = p;
        char *nl = strchr(p, '\n');
        if (!nl)
            break;
        *nl = 0;
        p = nl + 1;
    }
    for (int g = 0; g < 2; g++) {
        gq_optset set = {
            .name = "fuzz", .tabs = tabs, .ntab = 1, .formats = "table,json", .grammar = g ? &compat : NULL};
        fopts o;
        memset(&o, 0, sizeof o);
        const char *pos[4];
        int npos;
        bool help;
        gq_err e = {0};
        int rc = gq_optset_parse(&set, &o, argc, argv, 2, pos, 4, &npos, &help, &e);
        if (rc && (!e.msg[0] || strchr(e.msg, '\n')))
            abort();
        if (!rc && (npos > 4 || o.list.n > GQ_OPTLIST_MAX || o.kv.n > GQ_OPTLIST_MAX))
            abort();
    }
    free(buf);
    return 0;
}
