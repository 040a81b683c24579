/* What every command shares: output options, backend options, the GPU list,
 * opening the backend, and writing output files atomically.
 *
 * Every command's options struct begins with `gq_common c;` so the shared
 * option tables (offsetof into gq_common) write into it.
 */
#ifndef GQ_CLI_COMMON_H
#define GQ_CLI_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "backend/backend.h"
#include "cli/options.h"
#include "core/outfile.h"
#include "topo/topo.h"

typedef struct gq_common {
    /* output */
    const char *format;     /* table|json|csv|markdown|nvbandwidth-json|prometheus */
    const char *json_path;  /* --json FILE: also write the JSON document there */
    bool quiet;             /* no progress, summary only */
    const char *prom_path;  /* --prom FILE: Prometheus textfile (run, stress, card, fleet) */
    const char *junit_path; /* --junit FILE: JUnit XML of the checks (card, fleet) */
    const char *junit_warn; /* --junit-warn skipped|failure|passed: how a warn check shows */
    /* backend */
    const char *sim; /* --sim FILE|NAME */
    int sim_seed;
    double sim_noise;     /* 0..0.5, when sim_noise_given; else the topology's default */
    bool sim_noise_given; /* --sim-noise was on the command line */
    const char *sim_fault;
    const char *gpus;    /* --gpus "0,1,3" (NULL = all) */
    const char *journal; /* --journal FILE */
    double wait_busy_s;  /* --wait-busy: how long to wait for another gpuqual's GPU lock */
    bool sim_lock;       /* --sim-lock: take the GPU locks on a simulated machine too (tests) */
    /* measurement (gq_common_measure_opts; commands that measure include it) */
    int rounds;
    uint64_t buffer_size;
    bool verify;
    const char *method; /* ce|sm */
    /* filled by gq_cli_setup() */
    int ngpus_sel;
    int gpus_sel[GQ_MAX_GPUS];
} gq_common;

/* Shared option tables. */
extern const gq_opt gq_common_output_opts[];  /* --format --json --quiet */
extern const gq_opt gq_common_backend_opts[]; /* --sim --sim-seed --sim-noise --gpus --journal */
extern const gq_opt gq_common_prom_opt[];     /* --prom FILE (c.prom_path) */
extern const gq_opt gq_common_junit_opt[];    /* --junit FILE, --junit-warn (c.junit_path, c.junit_warn) */
/* --rounds --buffer-size --verify --method, declared once with one help text
 * each; a command changes a default with its optset's `defaults`
 * ("buffer-size=64"), never by declaring the option again. */
extern const gq_opt gq_common_measure_opts[];
/* The same options one by one, for a command that uses only some of them
 * (a command accepts only the options it uses): the entries are those of
 * gq_common_measure_opts, declared once. */
extern const gq_opt gq_common_rounds_opt[];      /* --rounds (c.rounds) */
extern const gq_opt gq_common_buffer_size_opt[]; /* --buffer-size (c.buffer_size) */
extern const gq_opt gq_common_verify_opt[];      /* --verify (c.verify) */
extern const gq_opt gq_common_method_opt[];      /* --method (c.method) */

/* Parse a GPU list "0,1,3" / "0-3" / "all" against ngpu. Rejects empty
 * items, non-numbers, negatives, out-of-range and duplicates. */
int gq_parse_gpu_list(const char *s, int ngpu, int *out, int *nout, gq_err *err);
/* The same for a GPU list given as option opt (e.g. "--h2d"), which its
 * messages name. */
int gq_parse_gpu_list_opt(const char *opt, const char *s, int ngpu, int *out, int *nout, gq_err *err);

/* Check c's backend options through the backend's option hook without
 * opening it (a command refuses a bad --sim-fault before it starts work);
 * what needs the machine is checked when gq_cli_open opens it. */
int gq_cli_check_backend_opts(const gq_common *c, gq_err *err);

/* Open the backend the options ask for (sim when --sim, else cuda), discover
 * the topology, and resolve --gpus. On GQ_E_NODEV the message says there is no
 * GPU and how to use --sim instead. */
int gq_cli_open(gq_common *c, gq_backend *be, gq_topo *topo, gq_err *err);

/* Reject a per-copy buffer of `bytes` (given as option `opt`, e.g.
 * "--buffer-size") that does not fit in the free memory of one of the
 * selected GPUs, before anything runs. GQ_OK when the backend cannot say. */
int gq_cli_check_buffer(gq_backend *be, const gq_common *c, const char *opt, uint64_t bytes, gq_err *err);

/* Check that FILE can be created (its directory exists and is writable)
 * before any work is done (gq_outfile_check). */
int gq_cli_check_writable(const char *path, gq_err *err);

/* The atomic output file (gq_outfile_open/commit/abort) is core/outfile.h. */

/* Ctrl-C handling: the first SIGINT/SIGTERM sets a flag that long loops poll
 * (measurements finish the current step, then stop); a second one exits. */
void gq_cli_install_signals(void);
bool gq_cli_interrupted(void);

/* One line on stderr: "gpuqual: <msg>". */
void gq_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* How many errors gq_cli_error has printed (main prints no second line for one failure). */
extern int gq_cli_errors;
void gq_cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A command interrupted by Ctrl-C that still shows what it measured: when
 * table is true (its text table went to stdout) the table ends with an
 * "INCOMPLETE:" line, so it never reads as the whole run; and one warning on
 * stderr names the journal that holds the finished measurements (NULL: none). */
void gq_cli_interrupted_note(bool table, const char *journal);

/* --sim-fault SPEC without its interrupt@N items (a simulated Ctrl-C is an
 * event of one run, not part of the machine a journal is resumed on), in
 * buf; NULL when nothing is left. */
const char *gq_cli_sim_fault_identity(const char *spec, char *buf, size_t n);

/* Is stdout / stderr a terminal (for progress bars)? */
bool gq_cli_tty(void);

/* Version string and git revision: core/version.h. */
#include "core/version.h"

#endif
