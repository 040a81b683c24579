/* The acceptance card's options, shared by `gpuqual card` and `gpuqual fleet`
 * (every fleet rank runs the card). Both commands' option structs begin with
 * GQ_CARD_CLI_FIELDS, so gq_card_cli_opts (offsetof into gq_card_cli) writes into
 * either; each command adds its own table for -o and anything else. */
#ifndef GQ_CLI_CARD_OPTS_H
#define GQ_CLI_CARD_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/common.h"

#define GQ_CARD_CLI_FIELDS                                                                                   \
    gq_common c;                                                                                             \
    double budget_s;                                                                                         \
    const char *expect;                                                                                      \
    const char *outdir;                                                                                      \
    double stress_s;                                                                                         \
    bool no_stress;                                                                                          \
    int prefill, decode, offload;                                                                            \
    uint64_t bytes;                                                                                          \
    bool verify;

typedef struct gq_card_cli {
    GQ_CARD_CLI_FIELDS
} gq_card_cli;

/* --budget --expect --stress --no-stress --prefill --decode --offload
 * --buffer-size --verify (not -o: its help differs per command). */
extern const gq_opt gq_card_cli_opts[];

#endif
