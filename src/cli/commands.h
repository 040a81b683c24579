/* The subcommands. Each is a gq_frame_cmd (cli/frame.h) in
 * src/cli/cmd_<name>.c: the frame parses its options, opens the backend, the
 * journal and the outputs, runs it and maps its status to the process exit
 * code (README "Exit codes"). */
#ifndef GQ_CLI_COMMANDS_H
#define GQ_CLI_COMMANDS_H

#include "cli/frame.h"

typedef struct gq_command {
    const char *name;
    const gq_frame_cmd *frame;
} gq_command;

/* Every command, in `gpuqual --help` order; ends with {0}. */
extern const gq_command gq_commands[];

/* Every exit status of any command, in general words (gpuqual --help,
 * gpuqual(1)); each command's own are its frame's exits. */
extern const gq_exit_doc gq_exits_all[];

/* Exit codes beyond gq_status_exit_code(). */
#define GQ_EXIT_OK 0
#define GQ_EXIT_FAIL 1
#define GQ_EXIT_USAGE 2
#define GQ_EXIT_NODEV 3
#define GQ_EXIT_WARN 4
#define GQ_EXIT_INCOMPLETE 5
#define GQ_EXIT_INTR 130

extern const gq_frame_cmd gq_frame_topo;
extern const gq_frame_cmd gq_frame_report;
extern const gq_frame_cmd gq_frame_compare;
extern const gq_frame_cmd gq_frame_run;
extern const gq_frame_cmd gq_frame_sweep;
extern const gq_frame_cmd gq_frame_pairs;
extern const gq_frame_cmd gq_frame_collectives;
extern const gq_frame_cmd gq_frame_domains;
extern const gq_frame_cmd gq_frame_stress;
extern const gq_frame_cmd gq_frame_card;
extern const gq_frame_cmd gq_frame_fleet;
extern const gq_frame_cmd gq_frame_place;
extern const gq_frame_cmd gq_frame_kv;
extern const gq_frame_cmd gq_frame_nvbandwidth;

#endif
