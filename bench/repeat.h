/* The repeatability benchmark's parts (issue 28, item 5), shared by
 * bench/repeatability.c (the benchmark) and tests/sim/test_repeatability.c
 * (a few machines, a handful of seeds, in ctest).
 *
 * It runs `gpuqual card` on simulated machines, one process per card (a card
 * on the simulated fabric takes 10-400 ms of CPU; the process around it about
 * 5 ms), several at once, each writing its directory under a scratch folder
 * that is removed as soon as its card.json is read. A card is reduced to its
 * outcome (gq_rep_card): the verdict, the GPUs its warning and failing checks
 * name, the set of domains and bottlenecks it found, and its planned time.
 *
 * What a machine deserves comes from files written before the benchmark first
 * ran: its topology's header ("card verdict: ..."; for tests/data machines,
 * tests/data/golden/unseen-known-differences.tsv where its "found" column is
 * one verdict) and, per fault, tests/data/golden/fault-outcomes.tsv. */
#ifndef GQ_BENCH_REPEAT_H
#define GQ_BENCH_REPEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GQ_REP_MAX_MACHINES 32
#define GQ_REP_MAX_FAULTS 16

/* A simulated machine and what it deserves. */
typedef struct gq_rep_machine {
    char name[64];     /* the topology file's name without .topo */
    char path[1024];   /* the topology file (--sim) */
    int ngpu;          /* its "gpu" lines */
    double noise;      /* its default noise, a fraction (its "noise N %" line) */
    char deserved[16]; /* pass, warn or fail */
    char from[64];     /* where the deserved verdict is written: "header" or the known-differences file */
    uint64_t allowed;  /* GPUs the deserved answer names (its header's "GPU N"): not a wrong finding */
} gq_rep_machine;

/* One injectable fault and the outcome it deserves (fault-outcomes.tsv). */
typedef struct gq_rep_fault {
    char kind[32];    /* thermal, ecc, ... */
    char spec[64];    /* --sim-fault, with {gpu} */
    double stress_s;  /* 0: --no-stress */
    char verdict[16]; /* pass, warn, fail or incomplete */
    char named[32];   /* gpu:{gpu} */
} gq_rep_fault;

/* The GPU every fault is injected on. */
#define GQ_REP_FAULT_GPU 1

/* One card to run. */
typedef struct gq_rep_job {
    const gq_rep_machine *m;
    const gq_rep_fault *f; /* NULL: healthy (--no-stress) */
    const char *level;     /* quick or standard */
    double noise;          /* < 0: the topology's default (no --sim-noise) */
    int seed;
} gq_rep_job;

/* What one card said. */
typedef struct gq_rep_card {
    int exit_code;          /* gpuqual's exit status; -1 when it did not exit */
    char verdict[16];       /* pass, warn, fail, incomplete; "refused" (exit 2, no card) or "error" */
    char verdict_text[160]; /* the card's verdict text, or the refusal's line */
    uint64_t named;         /* GPUs named by a warning or failing check (subject gpu:N) or as busy */
    char reasons[192];      /* the warning and failing checks, "id@subject" comma-separated */
    char key[768];          /* the domains, GPUs set aside and bottlenecks found (direction and GPUs) */
    double planned_s, budget_s;
    char incomplete[128]; /* the steps the card did not run, for the budget or an error */
} gq_rep_card;

/* The verdict a job deserves: the fault's, made no better than the machine's
 * healthy one (incomplete stands as it is), or the machine's when healthy. */
const char *gq_rep_deserved(const gq_rep_job *j);
/* The GPU a job's fault must name (-1 when healthy or its `named` is not gpu:{gpu}). */
int gq_rep_named_gpu(const gq_rep_job *j);
/* Whether the card gave the job what it deserves: the verdict, and for a
 * fault its GPU named. "Undetermined" and every other verdict disagree. */
bool gq_rep_agrees(const gq_rep_job *j, const gq_rep_card *c);
/* GPUs the card named that neither the machine's deserved answer nor the
 * job's fault names: a wrong finding. */
uint64_t gq_rep_wrong(const gq_rep_job *j, const gq_rep_card *c);

/* Load a machine from its topology file; known_diff: the known-differences
 * file (NULL: none). 0, or -1 with one line in err. */
int gq_rep_machine_load(gq_rep_machine *m, const char *path, const char *known_diff, char *err, size_t errn);
/* The fault table. Returns the number of faults, -1 with one line in err. */
int gq_rep_faults_load(const char *path, gq_rep_fault *out, int max, char *err, size_t errn);
/* The fault kinds the gpuqual binary injects, from its one-line refusal of an
 * unknown one ("valid: gpuN:thermal, ..."): count, or -1 with one line in err. */
int gq_rep_binary_faults(const char *bin, const char *topo, const char *scratch, char kinds[][32], int max,
                         char *err, size_t errn);

/* Run every job, `parallel` gpuqual processes at once, writing under
 * scratch (a directory that exists). out[i] is job i's card. progress (may
 * be NULL) is called after each card with the count done. 0, or -1 with one
 * line in err when a process could not be started. */
int gq_rep_run(const char *bin, const gq_rep_job *jobs, int n, int parallel, const char *scratch,
               gq_rep_card *out, void (*progress)(void *arg, int done, int total), void *arg, char *err,
               size_t errn);

/* Read one card.json into *c (gq_rep_run does this). 0, or -1 when it cannot be read. */
int gq_rep_card_read(const char *card_json, gq_rep_card *c);

/* A group of cards: the same machine, level, noise and fault over seeds. */
typedef struct gq_rep_stats {
    int n;        /* cards */
    int agree;    /* gave what the job deserves */
    int wrong;    /* named a GPU that nothing deserved names */
    int key_mode; /* cards whose domains and bottlenecks are the most common set */
    double planned_min, planned_max;
    int nverdict; /* distinct verdicts, with counts */
    char verdict[8][16];
    int verdict_n[8];
    /* the commonest reason among the cards that disagreed, and its count */
    char why[256];
    int why_n;
} gq_rep_stats;

/* Statistics of cards c[0..n-1] of jobs j[0..n-1] (one group). */
void gq_rep_stats_of(const gq_rep_job *j, const gq_rep_card *c, int n, gq_rep_stats *s);

#endif
