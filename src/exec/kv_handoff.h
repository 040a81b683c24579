/* The KV-cache handoff behind `gpuqual kv`, measured: the rates of its paths
 * (P2P, each host leg alone, both legs at once) and the handoff itself
 * (direct, staged serially, staged pipelined for each chunk size). The
 * estimates and the model's shape are analysis/kv.h's.
 */
#ifndef GQ_EXEC_KV_HANDOFF_H
#define GQ_EXEC_KV_HANDOFF_H

#include <stdbool.h>

#include "analysis/kv.h"
#include "backend/backend.h"
#include "core/record.h"
#include "core/status.h"
#include "measure/harness.h"
#include "measure/journal.h"
#include "topo/topo.h"

/* Measure the rates between k->from and k->to into k->r (rounds of about
 * 0.1 s at 256 MiB), then, unless estimate_only, the handoff of k->payload:
 * direct (unless k->r.p2p_impossible), serial, and pipelined for each of
 * k->chunk[0..k->nchunks), one copy per round; k->best_chunk gets the
 * fastest. Records go to *rs (and journal j). Returns GQ_OK, GQ_E_INTR when
 * interrupted (what was measured is kept), or the harness' error. */
int gq_kv_measure(gq_backend *be, const gq_topo *topo, const gq_harness_opts *ho, bool estimate_only,
                  gq_recordset *rs, gq_journal *j, gq_kv_result *k, gq_err *err);

#endif
