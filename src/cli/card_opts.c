#include "cli/card_opts.h"

#include "core/units.h"
#include "topo/topo.h"

#define OFF(f) offsetof(gq_card_cli, f)
/* clang-format off */
const gq_opt gq_card_cli_opts[] = {
    {.name = "budget",
     .type = GQ_OPT_DURATION,
     .off = OFF(budget_s),
     .def = "5m",
     .arg = "TIME",
     .help = "time the whole card may take (e.g. 3m, 300s); steps that do not fit are skipped",
     .lo = 0.001,
     .hi = 7 * 86400},
    {.name = "expect",
     .shortname = 'e',
     .type = GQ_OPT_STR,
     .off = OFF(expect),
     .arg = "FILE",
     .help = "expectations file with per-GPU-model thresholds (examples/expect/*.expect)"},
    {.name = "stress",
     .type = GQ_OPT_DURATION,
     .off = OFF(stress_s),
     .def = "60s",
     .arg = "TIME",
     .help = "length of the stress run with telemetry",
     .lo = 0.1,
     .hi = 7 * 86400},
    {.name = "no-stress", .type = GQ_OPT_FLAG, .off = OFF(no_stress), .help = "skip the stress run"},
    {.name = "prefill",
     .type = GQ_OPT_INT,
     .off = OFF(prefill),
     .def = "0",
     .arg = "N",
     .help = "prefill workers for the placement (0 with --decode 0: half the GPUs each)",
     .lo = 0,
     .hi = GQ_MAX_GPUS},
    {.name = "decode",
     .type = GQ_OPT_INT,
     .off = OFF(decode),
     .def = "0",
     .arg = "M",
     .help = "decode workers for the placement",
     .lo = 0,
     .hi = GQ_MAX_GPUS},
    {.name = "offload",
     .type = GQ_OPT_INT,
     .off = OFF(offload),
     .def = "-1",
     .arg = "K",
     .help = "KV offload workers for the placement (-1: half the GPUs)",
     .lo = -1,
     .hi = GQ_MAX_GPUS},
    GQ_OPT_END,
};
/* clang-format on */

const char *const gq_card_defaults[] = {"buffer-size=256", NULL};

int gq_card_check_opts(const gq_card_cli *o, gq_err *err)
{
    if (o->c.buffer_size < 4096 || o->c.buffer_size > 1e13) {
        char a[32];
        return gq_err_set(err, GQ_E_USAGE, "--buffer-size %s is out of range, expected 4096..1e+13",
                          gq_fmt_size(o->c.buffer_size, a, sizeof a));
    }
    return GQ_OK;
}
