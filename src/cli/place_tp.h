/* place --tp N: tensor-parallel groups chosen from measured all-reduce
 * (exec/tp_place.h measures, analysis/tp_groups.h chooses); this prints the
 * table and fills the "tp" section of the place document. */
#ifndef GQ_CLI_PLACE_TP_H
#define GQ_CLI_PLACE_TP_H

#include <stdint.h>

#include "cli/frame.h"
#include "core/record.h"

struct json_t;

/* Run it on the selected GPUs (c->gpus_sel) with groups of tp, measuring at
 * most budget candidate groups alone, at `bytes` per all-reduce. Records go
 * to rs; the section to sections (key "tp"). */
int gq_place_tp(gq_ctx *ctx, int tp, int budget, uint64_t bytes, gq_recordset *rs, struct json_t *sections);

#endif
