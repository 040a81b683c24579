/* Synthetic fleets for bench/fleet-scale.sh and tests/unit/test_cli_fleet_gather.c:
 * many rank payloads (cli/fleet_gather.h) made from a few real node summaries
 * of simulated cards, each node's figures with a little noise of its own, and
 * a known list of faulty nodes.
 *
 * Rank r of the fleet is built from base summary (r % nmodels) of the kind
 * gq_syn_kind_of(r): ranks 7, 23 and 41 of every 50 are faulty (a trained-down
 * link, a hot GPU, ECC errors), the others healthy. The bases are summaries of
 * cards of the simulated machines with those faults injected (--sim-fault). */
#ifndef GQ_BENCH_FLEET_SYNTH_H
#define GQ_BENCH_FLEET_SYNTH_H

#include <jansson.h>
#include <stddef.h>

typedef enum gq_syn_kind {
    GQ_SYN_HEALTHY = 0,
    GQ_SYN_LINK,
    GQ_SYN_HOT,
    GQ_SYN_ECC,
    GQ_SYN_NKIND
} gq_syn_kind;

/* "healthy", "link", "hot", "ecc" */
const char *gq_syn_kind_name(gq_syn_kind k);
gq_syn_kind gq_syn_kind_of(int rank);
/* The node label rank 0 gives rank r's node ("node00042-rank42"). */
void gq_syn_label(int rank, char *buf, size_t n);

/* Rank r's payload {"rank","host","summary"} from base (a fleet-node
 * document, borrowed): node.rank and node.artefacts set, every figure
 * scaled by 1 +- 1% (temperatures moved by +- 1 °C), reproducibly from r.
 * New reference, NULL when out of memory. */
json_t *gq_syn_payload(const json_t *base, int rank);

#endif
