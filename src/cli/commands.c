/* gpuqual's commands, in `gpuqual --help` order. */
#include "cli/commands.h"

#include <stddef.h>

const gq_command gq_commands[] = {
    {.name = "topo", .frame = &gq_frame_topo},
    {.name = "run",
     .fn = gq_cmd_run,
     .summary = "run transfer tests by name (nvbandwidth's names and more); --list shows them"},
    {.name = "sweep",
     .fn = gq_cmd_sweep,
     .summary = "buffer-size sweep; fits fixed cost and asymptotic bandwidth"},
    {.name = "pairs",
     .fn = gq_cmd_pairs,
     .summary = "run GPU pairs concurrently (e.g. 0:1,2:3) and compare pairings with --vs"},
    {.name = "domains",
     .fn = gq_cmd_domains,
     .summary = "discover performance domains and shared bottlenecks from measurements"},
    {.name = "kv", .frame = &gq_frame_kv},
    {.name = "place", .frame = &gq_frame_place},
    {.name = "stress", .frame = &gq_frame_stress},
    {.name = "card", .frame = &gq_frame_card},
    {.name = "report", .frame = &gq_frame_report},
    {.name = "compare", .frame = &gq_frame_compare},
    {.name = "fleet", .frame = &gq_frame_fleet},
    {0},
};
