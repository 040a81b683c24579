/* The acceptance card's options, shared by `gpuqual card` and `gpuqual fleet`
 * (every fleet rank runs the card). Both commands' option structs begin with
 * GQ_CARD_CLI_FIELDS, so gq_card_cli_opts (offsetof into gq_card_cli) writes into
 * either; each command adds its own table for -o and anything else. */
#ifndef GQ_CLI_CARD_OPTS_H
#define GQ_CLI_CARD_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/card.h"
#include "analysis/expect.h"
#include "cli/common.h"
#include "exec/card_run.h"

#define GQ_CARD_CLI_FIELDS                                                                                   \
    gq_common c;                                                                                             \
    double budget_s;                                                                                         \
    const char *expect;                                                                                      \
    const char *outdir;                                                                                      \
    double stress_s;                                                                                         \
    bool no_stress, no_placement, allow_busy;                                                                \
    const char *level;                                                                                       \
    int prefill, decode, offload;                                                                            \
    gq_optlist set;                 /* --set [MODEL:]CHECK.LEVEL=VALUE, in order */                          \
    bool have_ex;                   /* --expect or --set given: the expectations apply */                    \
    bool prefill_seen, decode_seen; /* --prefill / --decode given (0 given: no such role) */

typedef struct gq_card_cli {
    GQ_CARD_CLI_FIELDS
} gq_card_cli;

/* --level --budget --expect --set --stress --no-stress --no-placement --allow-busy --prefill --decode
 * --offload (not -o: its help differs per command). The card's --buffer-size and --verify are the shared
 * measurement options (gq_common_measure_opts, less GQ_CARD_OMIT, with gq_card_defaults and gq_card_bounds).
 */
extern const gq_opt gq_card_cli_opts[];
/* The shared measurement options the card does not take. */
#define GQ_CARD_OMIT "rounds,method"
/* The card's defaults of the shared options: 256 MiB per copy. */
extern const char *const gq_card_defaults[];
/* The card's bounds of the shared options: --buffer-size at least a page,
 * at most 10 TB. */
extern const char *const gq_card_bounds[];

/* What `card` and every `fleet` rank do the same way. */

/* The --set option (card, fleet and report share it). */
#define GQ_CARD_SET_HELP                                                                                     \
    "override one expectation threshold, after --expect (or with none): [MODEL:]CHECK.LEVEL=VALUE, e.g. "    \
    "h2d_gbps.fail=50 or H200:temp_c.warn=80 (repeatable, at most 16); the card lists every override"

/* The expectations: --expect FILE (or none: gq_expect_init) into *ex, then
 * every --set in order (gq_expect_set). *have: either was given. GQ_E_USAGE
 * or GQ_E_IO with the one line that names what is wrong. */
int gq_card_cli_expect(const char *path, const gq_optlist *set, gq_expect *ex, bool *have, gq_err *err);

/* The card's options for the machine found (cm's GPUs) into *co, the role
 * counts checked against them, and the plan. */
int gq_card_cli_plan(const gq_card_cli *o, const gq_common *cm, const gq_topo *topo, gq_card_opts *co,
                     gq_card_plan *plan, gq_err *err);

/* A finished (or interrupted: !complete) run, composed into the card
 * document (*doc, new reference) with `options` (the options in force). */
typedef struct gq_card_cli_run {
    const gq_topo *topo;
    const gq_card_result *res;
    const gq_expect *expect; /* NULL: none */
    const gq_card_plan *plan;
    const gq_card_opts *co;
    bool complete, simulated;
} gq_card_cli_run;
int gq_card_cli_document(const gq_card_cli_run *run, struct json_t *options, struct json_t **doc,
                         gq_err *err);

/* card.json, card.md, card.html, nvbandwidth.json and (with a stress run)
 * stress.csv of the document into dir. */
int gq_card_cli_write(const char *dir, const struct json_t *doc, const gq_card_cli_run *run, gq_err *err);

#endif
