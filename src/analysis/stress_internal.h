/* Shared by the stress analysis' files (stress.c: per-GPU rules and the
 * summary; stress_peers.c: each GPU against its identical peers). Nothing
 * outside src/analysis includes this. */
#ifndef GQ_ANALYSIS_STRESS_INTERNAL_H
#define GQ_ANALYSIS_STRESS_INTERNAL_H

#include "analysis/stress.h"

/* Append a finding (dropped and counted when the list is full). */
void gq_stress_add_finding(gq_stress_summary *s, gq_stress_level lvl, int gpu, const char *rule,
                           const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Peer rules (docs/method-stress.md "Peers"): every group of GPUs with the
 * same name compared with its median; a GPU without an identical peer noted;
 * a GPU heading for its slowdown temperature named with the time left. Raises
 * the per-GPU verdicts of the GPUs it names. */
void gq_stress_peer_findings(const gq_stress_result *r, gq_stress_summary *s);

#endif
