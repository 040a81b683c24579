/* The command frame: what every command does the same way, written once.
 *
 * A command is a gq_frame_cmd: its name, summary, help text, option set
 * (tables, default overrides, --format values) and two functions. The frame
 * parses the options, prints --help, calls prepare() to check the options,
 * checks that the outputs can be written, opens the backend and the journal,
 * opens -o FILE atomically, calls run(), writes --json FILE and the JSON
 * document on stdout, commits the output, and maps the status to the exit
 * code. CONTRIBUTING.md ("Add a command") shows how to write one.
 */
#ifndef GQ_CLI_FRAME_H
#define GQ_CLI_FRAME_H

#include <stdbool.h>
#include <stdio.h>

#include "backend/backend.h"
#include "cli/common.h"
#include "core/outfile.h"
#include "measure/cleanroom.h"
#include "measure/gpulock.h"
#include "measure/journal.h"
#include "topo/topo.h"

struct json_t;

#define GQ_FRAME_MAXPOS 256

/* What the frame does for a command (gq_frame_cmd.needs). */
enum {
    GQ_FRAME_COMMON = 1u << 0,   /* the options struct begins with gq_common (format, json, quiet, gpus...) */
    GQ_FRAME_BACKEND = 1u << 1,  /* open the backend and discover (gq_cli_open) unless prepare() sets
                                    ctx->no_backend; implies GQ_FRAME_COMMON */
    GQ_FRAME_JOURNAL = 1u << 2,  /* open --journal FILE as ctx->journal (not with ctx->no_backend: nothing is
                                    measured) */
    GQ_FRAME_MEASURES = 1u << 3, /* it measures the GPUs: take each selected GPU's lock (measure/gpulock.h;
                                    --wait-busy) and watch the clean room (measure/cleanroom.h), whose note
                                    the frame prints after run() */
    GQ_FRAME_NOWRAP = 1u << 4,   /* output that keeps another tool's layout, such as nvbandwidth's: stdout is
                                    never wrapped to 100 columns (cli/outwrap.h), and the frame prints no
                                    clean-room note on stderr */
};

typedef struct gq_ctx {
    const struct gq_frame_cmd *cmd;
    void *opts;   /* the command's options struct, cmd->opts_size bytes, parsed */
    gq_common *c; /* opts as gq_common with GQ_FRAME_COMMON, else NULL */
    const char *pos[GQ_FRAME_MAXPOS];
    int npos;
    /* outputs: filled from gq_common, or by prepare() */
    const char *format;    /* --format, or NULL */
    const char *json_path; /* --json FILE: the frame writes ctx->doc there after run() */
    const char *out_path;  /* -o FILE: opened atomically as ctx->out; committed only on success */
    bool quiet;
    bool no_backend; /* prepare() sets it to skip the backend (topo --from-snapshot) */
    /* opened by the frame */
    gq_backend be;
    bool opened;
    gq_topo *topo;       /* the whole machine after discovery (allocated for every command) */
    gq_journal *journal; /* --journal, or NULL (points at jr) */
    gq_journal jr;
    gq_cleanroom clean; /* with GQ_FRAME_MEASURES: installed for gq_harness_opts_default() */
    gq_gpulock lock;
    FILE *out; /* -o FILE, else stdout */
    /* results of run() */
    struct json_t *doc; /* the document: written to --json FILE (the frame frees it) */
    bool doc_stdout;    /* also print doc on stdout (--format json) */
    int exit_code;      /* a verdict's exit code (0, 1, 4, 5) when run() returns GQ_OK */
    bool busy_judged;   /* run() turned the clean room's findings into its verdict (the card); else a
                           successful run with contaminated measurements exits 6 */
    gq_err err;
} gq_ctx;

/* One exit status of a command, as its --help and man page list it. */
typedef struct gq_exit_doc {
    int code;
    const char *meaning; /* NULL ends a table */
} gq_exit_doc;

/* The meanings every command shares (README "Exit codes"). */
#define GQ_EXITDOC_USAGE                                                                                     \
    {                                                                                                        \
        2, "bad input: an option, a value or a file is wrong (nothing was run)"                              \
    }
#define GQ_EXITDOC_NODEV                                                                                     \
    {                                                                                                        \
        3, "no NVIDIA GPU or driver (--sim NAME runs on a simulated machine)"                                \
    }
#define GQ_EXITDOC_BUSY                                                                                      \
    {                                                                                                        \
        6, "busy: another gpuqual holds a GPU (after --wait-busy), or other work used a GPU while it was "   \
           "measured (its records are flagged contaminated)"                                                 \
    }
#define GQ_EXITDOC_INTR                                                                                      \
    {                                                                                                        \
        130, "interrupted by Ctrl-C: what finished is kept (a second Ctrl-C exits at once)"                  \
    }
#define GQ_EXITDOC_END                                                                                       \
    {                                                                                                        \
        0, NULL                                                                                              \
    }

typedef struct gq_frame_cmd {
    const char *name;
    const char *summary; /* one line for `gpuqual --help` */
    const char *usage;   /* printed before "options:" by --help */
    gq_optset opts;
    size_t opts_size; /* sizeof the options struct */
    int maxpos;       /* positional arguments accepted (at most GQ_FRAME_MAXPOS) */
    unsigned needs;   /* GQ_FRAME_* */
    /* Every exit status the command can end with, in the order --help and
     * its man page list them (a command that measures lists 6, one that opens
     * the backend 3: tests/unit/test_cli_commands.c checks it). */
    const gq_exit_doc *exits;
    /* Command lines that show its use, one a line ("  gpuqual ...\n"): --help
     * prints them under "examples:", the man page as EXAMPLES. */
    const char *examples;
    /* Check the options before any work; may set ctx->out_path, json_path,
     * no_backend. NULL: nothing to check. */
    int (*prepare)(gq_ctx *ctx);
    /* Check what needs the machine (ctx->be, ctx->topo) once the backend is
     * open, before the journal and -o FILE are opened (a payload too large
     * for a GPU leaves no journal behind). NULL: nothing to check. */
    int (*check)(gq_ctx *ctx);
    /* The work. Returns a gq status; GQ_OK with ctx->exit_code for a verdict. */
    int (*run)(gq_ctx *ctx);
    /* Report an error another way than one "gpuqual: MSG" line (topo's "no
     * GPU"), or undo what a refused run left behind (card's directory).
     * ctx->exit_code holds the status's exit code; fail() may change it.
     * NULL: the one line. */
    void (*fail)(gq_ctx *ctx, int rc);
    /* Free what prepare() or run() kept in the options struct; called
     * always, last. NULL: nothing to free. */
    void (*done)(gq_ctx *ctx);
} gq_frame_cmd;

/* Run a command: argv[1] is its name. Returns the exit code. */
int gq_frame_main(const gq_frame_cmd *cmd, int argc, char **argv);

/* One gpuqual per GPU, and the clean room for every measurement: installs
 * clean for gq_harness_opts_default(), takes each selected GPU's lock (lock;
 * waiting c->wait_busy_s; the simulator takes none unless --sim-lock asks,
 * for tests) and samples the GPUs once before the first step. What the frame
 * does for a command that measures; fleet does it for each rank's card. The
 * caller uninstalls (gq_cleanroom_install(NULL)) and releases the lock.
 * GQ_E_BUSY when another gpuqual holds a GPU. */
int gq_frame_clean_room(gq_cleanroom *clean, gq_gpulock *lock, gq_backend *be, const gq_topo *topo,
                        const gq_common *c, const char *cmd, gq_err *err);

/* The exit statuses of cmd, as --help prints them ("exit status:" and one
 * line each). */
void gq_frame_exit_help(FILE *f, const gq_frame_cmd *cmd, int width);

/* The width help wraps to: the terminal's when stdout is one (never
 * narrower than 60), else 100. */
int gq_frame_help_width(void);

#endif
