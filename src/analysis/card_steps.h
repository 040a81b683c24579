/* The card's steps, one line each (issue 31): everything the plan, the
 * runner, the judge and the codec need to know of a step is on its line, and
 * each layer builds its own table from these lists (X-macros), naming a
 * step's functions from its name:
 *
 *   analysis  gq_card_est_NAME()          its estimate (analysis/card.h: gq_card_est_ctx)
 *   exec      gq_card_run_NAME()          its run (exec/card_run_internal.h)
 *   and, for a step whose typed result is a section of its own (GQ_CARD_SECTIONS):
 *   analysis  gq_judge_row_NAME()         its row (analysis/card_judge_internal.h)
 *   doc       gq_card_NAME_to_json()      the section written (doc/card_codec.h)
 *             gq_card_NAME_from_json()    and read back
 *
 * GQ_CARD_STEP(ID, NAME, TITLE, LEVELS, DROP, PAIR, LATE, ROW, CHECKS):
 *   ID      the enum's name, GQ_CS_ID (analysis/card_types.h); the order of the
 *           lines is the run order and the order of the plan in card.json
 *   NAME    the step's name in card.json and its functions' (a token)
 *   TITLE   its title in the plan and on the progress bar
 *   LEVELS  the levels that run it (GQ_CARD_LV_*)
 *   DROP    where it sits in the order steps are dropped when the budget is
 *           short: the lowest first; 0 never (the smallest card)
 *   PAIR    true: one GPU has nothing for it to measure (its note says so)
 *   LATE    true: added after cards were saved, so that a saved card whose plan
 *           does not list it predates it (not applicable, the card complete);
 *           false: a plan without it cannot say whether it ran (unknown)
 *   ROW     the title of the card row that rests on it ("" none)
 *   CHECKS  the ids of the checks that rest on it, one space between
 *
 * GQ_CARD_SECTION(ID, NAME, TYPE, FIELD): a step whose typed result TYPE is
 * card.json's section "NAME", kept in gq_card_sections.FIELD (analysis/card.h:
 * the run's result and the judge's views share it) and judged by its own row,
 * after the placement row, in this order. TYPE is a plain struct (no pointer
 * it owns): its header is included below (the collectives' is analysis/card.h).
 *
 * A card row no step's line names: "Measurement integrity" rests on the
 * identity step, "Application validation" on none (analysis/card_types.c). */
#ifndef GQ_ANALYSIS_CARD_STEPS_H
#define GQ_ANALYSIS_CARD_STEPS_H

/* The headers of the sections' types, one a line (#include "analysis/card_NAME.h"). */

#define GQ_CARD_LV_QUICK 1u
#define GQ_CARD_LV_STANDARD 2u
#define GQ_CARD_LV_FULL 4u
#define GQ_CARD_LV_ALL (GQ_CARD_LV_QUICK | GQ_CARD_LV_STANDARD | GQ_CARD_LV_FULL)
#define GQ_CARD_LV_NOT_QUICK (GQ_CARD_LV_STANDARD | GQ_CARD_LV_FULL)

/* clang-format off */
#define GQ_CARD_STEPS(X)                                                                                \
    X(IDENTITY, identity, "Identity and links",                                                         \
      GQ_CARD_LV_ALL, 0, false, false, "Identity and links", "")                                        \
    X(MATRIX, matrix, "Pairwise GPU matrix",                                                            \
      GQ_CARD_LV_ALL, 70, true, false, "Pairwise GPU traffic", "p2p_gbps_min nvlink_gbps_min")          \
    X(HOST, host, "Host paths, each GPU alone",                                                         \
      GQ_CARD_LV_ALL, 0, false, false, "Host-memory traffic",                                           \
      "h2d_gbps_min d2h_gbps_min agree_h2d agree_d2h")                                                  \
    X(CONTENTION, contention, "Concurrent host and GPU traffic",                                        \
      GQ_CARD_LV_NOT_QUICK, 60, true, false, "Concurrent GPU traffic", "undetermined")                  \
    X(BIDIR, bidir, "Both host directions at once",                                                     \
      GQ_CARD_LV_NOT_QUICK, 10, false, false, "", "")                                                   \
    X(SWEEP, sweep, "Buffer-size sweeps",                                                               \
      GQ_CARD_LV_NOT_QUICK, 40, false, false, "Transfer granularity", "")                               \
    X(LATENCY, latency, "Latency",                                                                      \
      GQ_CARD_LV_NOT_QUICK, 30, false, false, "Latency", "host_latency_ns_max p2p_latency_ns_max")      \
    X(PLACEMENT, placement, "Placement, verified",                                                      \
      GQ_CARD_LV_NOT_QUICK, 50, true, false, "Placement", "")                                           \
    X(COLLECTIVES, collectives, "Collectives, TP-2 groups",                                             \
      GQ_CARD_LV_NOT_QUICK, 20, true, true, "Collectives",                                              \
      "allreduce_busbw_gbps_min collectives_at_once")                                                   \
    X(STRESS, stress, "Stress with telemetry",                                                          \
      GQ_CARD_LV_ALL, 0, false, false, "Whole-node health",                                             \
      "temp_c_max sm_clock_mhz_min agree_sm_clock thermal power_cap stress")

#define GQ_CARD_SECTIONS(X)                                                                             \
    X(COLLECTIVES, collectives, gq_card_coll_view, coll)
/* clang-format on */

#endif
