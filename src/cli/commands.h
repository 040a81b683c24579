/* The subcommands. Each lives in src/cli/cmd_<name>.c, owns one option table,
 * and is called with the full argv (argv[1] is its name). It returns the
 * process exit code (README "Exit codes"). */
#ifndef GQ_CLI_COMMANDS_H
#define GQ_CLI_COMMANDS_H

typedef struct gq_command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} gq_command;

/* Exit codes beyond gq_status_exit_code(). */
#define GQ_EXIT_OK 0
#define GQ_EXIT_FAIL 1
#define GQ_EXIT_USAGE 2
#define GQ_EXIT_NODEV 3
#define GQ_EXIT_WARN 4
#define GQ_EXIT_INCOMPLETE 5
#define GQ_EXIT_INTR 130

int gq_cmd_topo(int argc, char **argv);
int gq_cmd_run(int argc, char **argv);
int gq_cmd_sweep(int argc, char **argv);
int gq_cmd_pairs(int argc, char **argv);
int gq_cmd_domains(int argc, char **argv);
int gq_cmd_kv(int argc, char **argv);
int gq_cmd_place(int argc, char **argv);
int gq_cmd_stress(int argc, char **argv);
int gq_cmd_card(int argc, char **argv);
int gq_cmd_report(int argc, char **argv);
int gq_cmd_compare(int argc, char **argv);
int gq_cmd_fleet(int argc, char **argv);

#endif
