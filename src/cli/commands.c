/* gpuqual's commands, in `gpuqual --help` order. */
#include "cli/commands.h"

#include <stddef.h>

const gq_command gq_commands[] = {
    {.name = "topo", .frame = &gq_frame_topo},
    {.name = "run", .frame = &gq_frame_run},
    {.name = "sweep", .frame = &gq_frame_sweep},
    {.name = "pairs", .frame = &gq_frame_pairs},
    {.name = "domains", .frame = &gq_frame_domains},
    {.name = "kv",
     .fn = gq_cmd_kv,
     .summary = "KV-cache handoff: bytes per token, estimates, and the measured handoff"},
    {.name = "place",
     .fn = gq_cmd_place,
     .summary = "place prefill/decode/offload/replica roles on measured paths, then verify"},
    {.name = "stress",
     .fn = gq_cmd_stress,
     .summary = "load every GPU with GEMMs, record telemetry, judge the node"},
    {.name = "card", .fn = gq_cmd_card, .summary = "the acceptance card: qualify the whole node in one run"},
    {.name = "report", .frame = &gq_frame_report},
    {.name = "compare", .frame = &gq_frame_compare},
    {.name = "fleet", .fn = gq_cmd_fleet, .summary = "qualify many nodes under MPI and name the outliers"},
    {0},
};
