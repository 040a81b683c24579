/* libFuzzer target for the value parsers every option goes through: sizes,
 * durations, whole numbers and decimals (core/units.c), GPU lists
 * (cli/common.c), GPU pairs (analysis/probes.c) and simulated faults
 * (backend/sim). The first byte picks the parser (and the machine's GPU
 * count), the rest is the value. A refusal is one line; an accepted value is
 * within the bounds the parser promises.
 *
 * Build and run: as tests/fuzz/fuzz_doc.c, with the target fuzz_values.
 */
#include <math.h>

#include "analysis/probes.h"
#include "backend/sim/sim_stress.h"
#include "cli/common.h"
#include "core/units.h"
#include "fuzz_util.h"

static void one(int which, int ngpu, const char *s)
{
    gq_err e = {0};
    int rc;
    switch (which) {
    case 0: {
        uint64_t b;
        if (!(rc = gq_parse_size(s, GQ_MiB, &b, &e)) && b == 0)
            abort();
        break;
    }
    case 1: {
        double d;
        if (!(rc = gq_parse_duration(s, &d, &e)) && !(d >= GQ_DURATION_MIN_S && d <= GQ_DURATION_MAX_S))
            abort();
        break;
    }
    case 2: {
        long l;
        if (!(rc = gq_parse_int(s, -5, 1000, &l, &e)) && (l < -5 || l > 1000))
            abort();
        break;
    }
    case 3: {
        double d;
        if (!(rc = gq_parse_double(s, &d, &e)) && !isfinite(d))
            abort();
        break;
    }
    case 4: {
        int out[GQ_MAX_GPUS], n = 0;
        if (!(rc = gq_parse_gpu_list(s, ngpu, out, &n, &e))) {
            if (n < 0 || n > ngpu)
                abort();
            for (int i = 0; i < n; i++)
                if (out[i] < 0 || out[i] >= ngpu)
                    abort();
        }
        break;
    }
    case 5: {
        int src[32], dst[32], n = 0;
        if (!(rc = gq_probes_parse_pairs(s, "--pair", ngpu & 1, ngpu, src, dst, 32, &n, &e))) {
            if (n < 0 || n > 32)
                abort();
            for (int i = 0; i < n; i++)
                if (src[i] == dst[i] || src[i] < 0 || dst[i] < 0 || src[i] >= ngpu || dst[i] >= ngpu)
                    abort();
        }
        break;
    }
    default: {
        gq_sim_faults f;
        memset(&f, 0, sizeof f);
        rc = gq_sim_faults_parse(s, ngpu, &f, &e);
        if (!rc)
            for (int i = ngpu; i < GQ_MAX_GPUS; i++)
                if (f.gpu[i])
                    abort(); /* a fault on a GPU the machine does not have */
        break;
    }
    }
    if (rc)
        fuzz_check_refusal(rc, &e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input(data, size);
    if (size < 1 || size > 4096)
        return 0;
    char *s = fuzz_cstr(data + 1, size - 1);
    if (!s)
        return 0;
    int which = data[0] % 7, ngpu = 1 + (data[0] / 7) % GQ_MAX_GPUS;
    one(which, ngpu, s);
    free(s);
    return 0;
}
