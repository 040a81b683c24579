/* gpuqual's commands, in `gpuqual --help` order. */
#include "cli/commands.h"

#include <stddef.h>

const gq_command gq_commands[] = {
    {.name = "topo", .frame = &gq_frame_topo},
    {.name = "run", .frame = &gq_frame_run},
    {.name = "sweep", .frame = &gq_frame_sweep},
    {.name = "pairs", .frame = &gq_frame_pairs},
    {.name = "collectives", .frame = &gq_frame_collectives},
    {.name = "domains", .frame = &gq_frame_domains},
    {.name = "kv", .frame = &gq_frame_kv},
    {.name = "place", .frame = &gq_frame_place},
    {.name = "stress", .frame = &gq_frame_stress},
    {.name = "card", .frame = &gq_frame_card},
    {.name = "report", .frame = &gq_frame_report},
    {.name = "compare", .frame = &gq_frame_compare},
    {.name = "fleet", .frame = &gq_frame_fleet},
    {.name = "nvbandwidth", .frame = &gq_frame_nvbandwidth},
    {0},
};

const gq_exit_doc gq_exits_all[] = {
    {0, "ok, or a pass verdict"},
    {1, "a failure (an invalid figure, a regression), or a fail verdict"},
    GQ_EXITDOC_USAGE,
    GQ_EXITDOC_NODEV,
    {4, "a warn verdict"},
    {5, "incomplete: interrupted or cut by the budget, the partial results kept"},
    GQ_EXITDOC_BUSY,
    {7, "a library the command needs is not installed (NCCL for collectives)"},
    GQ_EXITDOC_INTR,
    GQ_EXITDOC_END,
};
