/* The card's typed vocabulary (docs/json-card.md): the steps, the evidence a
 * check or row rests on and why it is missing, the levels, and the card's
 * overall verdict with its exit code. Pure names and strict parsers: a
 * document read back maps each string to its enum exactly (no other case, no
 * default), so a verdict is never a pass by default. */
#ifndef GQ_ANALYSIS_CARD_TYPES_H
#define GQ_ANALYSIS_CARD_TYPES_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/card_steps.h"

/* The steps, in run order (analysis/card_steps.h: one line each). */
/* clang-format off */
typedef enum gq_card_step_id {
#define GQ_CS_ENUM_(ID, ...) GQ_CS_##ID,
    GQ_CARD_STEPS(GQ_CS_ENUM_) /* GQ_CS_IDENTITY = 0, GQ_CS_MATRIX, ... */
#undef GQ_CS_ENUM_
    GQ_CS_COUNT
} gq_card_step_id;
/* clang-format on */

/* What a check or row rests on. */
typedef enum gq_evidence {
    GQ_EV_UNKNOWN = 0, /* cannot be known (a document without the step's status) */
    GQ_EV_MEASURED,
    GQ_EV_SKIPPED,
    GQ_EV_FAILED,
} gq_evidence;

/* Why evidence is not measured. */
typedef enum gq_ev_reason {
    GQ_EVR_NONE = 0,
    GQ_EVR_BUDGET,         /* did not fit the budget */
    GQ_EVR_ONE_GPU,        /* one GPU: no pair */
    GQ_EVR_NOT_APPLICABLE, /* nothing to measure on this machine */
    GQ_EVR_USER,           /* turned off by the user (--no-stress, --no-placement) */
    GQ_EVR_INTERRUPTED,
    GQ_EVR_ERROR,
    GQ_EVR_LEVEL,      /* not a step of the card's level (--level quick has no latency) */
    GQ_EVR_NO_LIBRARY, /* a library the step needs is not installed (NCCL): shown as info, never INCOMPLETE */
} gq_ev_reason;

typedef enum gq_card_level {
    GQ_LEVEL_QUICK = 0,
    GQ_LEVEL_STANDARD,
    GQ_LEVEL_FULL,
} gq_card_level;

/* The card's overall verdict. */
typedef enum gq_card_verdict {
    GQ_CV_PASS = 0,
    GQ_CV_WARN,
    GQ_CV_FAIL,
    GQ_CV_INCOMPLETE,
} gq_card_verdict;

/* "identity", "matrix", ... and "Identity and links", ... (their lines' NAME and TITLE) */
const char *gq_card_step_name(gq_card_step_id s);
const char *gq_card_step_title(gq_card_step_id s);

/* "measured", "skipped", "failed", "unknown". */
const char *gq_evidence_name(gq_evidence e);
/* NULL for GQ_EVR_NONE; "budget", "one_gpu", "not_applicable", "user", "interrupted", "error", "level",
 * "no_library". */
const char *gq_ev_reason_name(gq_ev_reason r);
/* Words for a person: "did not fit the budget", "turned off", ... ("" for none). */
const char *gq_ev_reason_words(gq_ev_reason r);
/* "quick", "standard", "full". */
const char *gq_card_level_name(gq_card_level l);
/* "pass", "warn", "fail", "incomplete". */
const char *gq_card_verdict_name(gq_card_verdict v);
/* 0 pass, 4 warn, 1 fail, 5 incomplete. */
int gq_card_verdict_exit_code(gq_card_verdict v);

/* Strict parsers: true and *out when s is exactly one of the names above
 * (reason: also false for NULL; "none" is not a name). */
bool gq_evidence_parse(const char *s, gq_evidence *out);
bool gq_ev_reason_parse(const char *s, gq_ev_reason *out);
bool gq_card_level_parse(const char *s, gq_card_level *out);
bool gq_card_verdict_parse(const char *s, gq_card_verdict *out);
bool gq_card_step_parse(const char *s, gq_card_step_id *out);

/* Which steps a level runs (their lines' LEVELS), and its default budget and stress length. */
bool gq_card_level_has(gq_card_level l, gq_card_step_id s);
double gq_card_level_budget_s(gq_card_level l);
double gq_card_level_stress_s(gq_card_level l);

/* The step a check (by id: "h2d_gbps_min", "thermal", ...) rests on: the
 * step whose line's CHECKS names it, else identity. */
gq_card_step_id gq_card_check_step(const char *check_id);

/* Where step s sits in the order steps are dropped for the budget (its
 * line's DROP): 0 never, else the lowest first. */
int gq_card_step_drop(gq_card_step_id s);
/* True when one GPU leaves step s nothing to measure (its line's PAIR). */
bool gq_card_step_needs_pair(gq_card_step_id s);
/* True when step s came after cards were saved (its line's LATE): a saved
 * plan that does not list it predates it. */
bool gq_card_step_late(gq_card_step_id s);

/* The step a row of the card (by its title: "Host-memory traffic", ...)
 * rests on: the step whose line's ROW names it ("Measurement integrity":
 * identity); -1 for a row no step measures ("Application validation"). */
int gq_card_row_step(const char *title);

/* The card's verdict from the worst check verdict (a gq_verdict: 2 pass,
 * 3 warn, 4 fail, below 2 none judged), whether the run finished, and each
 * step's evidence: INCOMPLETE when the run did not finish or a step of the
 * level was cut by the budget, interrupted, failed or is unknown; a step the
 * user turned off is not run and named in *text ("PASS without stress and
 * placement"); turned_off[] (GQ_CS_COUNT) says which. */
gq_card_verdict gq_card_overall(int worst, bool complete, gq_card_level level, const gq_evidence *ev,
                                const gq_ev_reason *why, bool *turned_off, char *text, size_t n);

#endif
