/* gpuqual's commands, in `gpuqual --help` order. */
#include "cli/commands.h"

#include <stddef.h>

const gq_command gq_commands[] = {
    {.name = "topo", .frame = &gq_frame_topo},
    {.name = "run", .frame = &gq_frame_run},
    {.name = "sweep", .frame = &gq_frame_sweep},
    {.name = "pairs", .frame = &gq_frame_pairs},
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
