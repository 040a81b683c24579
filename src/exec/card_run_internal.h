/* Internal to the card's step runner (exec/card_run.c and the steps' run
 * functions, exec/card_steps*.c): the runner's state and the helpers a
 * step's run shares, and each step's run, gq_card_run_NAME, one per line of
 * analysis/card_steps.h. Not for use outside src/exec/card_*.c. */
#ifndef GQ_EXEC_CARD_RUN_INTERNAL_H
#define GQ_EXEC_CARD_RUN_INTERNAL_H

#include "analysis/card.h"
#include "backend/backend.h"
#include "core/status.h"
#include "exec/discovery.h"
#include "measure/harness.h"
#include "measure/journal.h"
#include "topo/topo.h"

typedef struct gq_card_runner {
    gq_backend *be;
    const gq_topo *t;
    const gq_card_opts *o;
    gq_card_plan *plan;
    gq_journal *j;
    gq_card_progress_fn progress;
    void *parg;
    gq_card_result *res; /* a step's typed figures go to res->sec (analysis/card_steps.h), never JSON */
    gq_harness_opts ho;
    gq_measurement *m;  /* scratch (large) */
    gq_discovery *disc; /* the discovery pipeline's stages, one card step each */
    double t0;
    double done_s; /* estimated seconds of finished work */
    gq_card_step_id cur;
    double step_t0, step_done0;
    int nrun, idx;
    /* Set by a step's run that returns GQ_OK without measuring, for why: the step is then skipped
     * with this reason (the latency where the backend cannot chase pointers: not applicable; the
     * collectives without NCCL: no library) and its note (plan->step[s].note) says more. */
    gq_ev_reason skip;
} gq_card_runner;

/* Each step's run (gq_card_run_NAME): what step s of the plan measures, through the discovery
 * pipeline's stages (R->disc) and gq_card_runner_measure. GQ_OK when done (or skipped: R->skip),
 * GQ_E_INTR when interrupted, GQ_E_NOMEM; another code fails the step (its note, or err's message)
 * and the card goes on. */
#define GQ_CARD_RUN_DECL_(ID, NAME, ...) int gq_card_run_##NAME(gq_card_runner *R, gq_err *err);
GQ_CARD_STEPS(GQ_CARD_RUN_DECL_)
#undef GQ_CARD_RUN_DECL_

/* The progress callback: frac_of_step of the current step done (< 0: as measured so far). */
void gq_card_runner_report(gq_card_runner *R, double frac_of_step);
/* One measurement, R->m with R->ho, into R->res->rs (and the journal); counts its estimate as done.
 * GQ_E_INTR, GQ_E_NOMEM, else GQ_OK (a backend error is an invalid record). */
int gq_card_runner_measure(gq_card_runner *R, gq_err *err);
/* R->m emptied for a measurement of test. */
void gq_card_runner_m_reset(gq_measurement *m, const char *test);
/* A copy between GPU gpu and its local host memory in direction d. */
void gq_card_runner_host_flow(gq_flow *f, int gpu, gq_direction d, uint64_t bytes, int tag);
/* A copy from GPU src to GPU dst: read (the destination pulls) or host-staged. */
void gq_card_runner_p2p_flow(gq_flow *f, int src, int dst, bool staged, uint64_t bytes, int tag);

#endif
