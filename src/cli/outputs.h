/* Outputs that are the same file as an input or as another output.
 *
 * Before anything is read or measured, the frame looks at the command line:
 * the values of --json, -o/--output, --journal, --csv and --save-snapshot are
 * outputs; every positional argument and every other option's value that
 * names an existing file is an input. An output that is the same file as an
 * input (same device and inode) or as another output (same device and inode,
 * or the same resolved path when it does not exist yet) is refused with exit
 * 2 before it could be overwritten. Character devices and FIFOs (/dev/null,
 * /dev/stdout) and "-" are exempt: writing them twice harms nothing. --resume
 * names a journal that is appended to on purpose and is not compared.
 */
#ifndef GQ_CLI_OUTPUTS_H
#define GQ_CLI_OUTPUTS_H

#include "cli/common.h"
#include "core/status.h"
#include "measure/journal.h"

struct json_t;

/* argv as main() got it; argv[0] the program, argv[1] the command. */
int gq_cli_check_same_files(int argc, char **argv, gq_err *err);

/* The journal header's options that shape a figure, from the common
 * options: buffer_size, rounds, method, gpus (new reference). A command adds
 * its own (run: tests; card: level). */
struct json_t *gq_cli_journal_options(const gq_common *c);

/* The journal's identity for command cmd: this gpuqual, the machine (topo),
 * --sim and opts (borrowed). */
void gq_cli_journal_id(gq_journal_id *id, const char *cmd, const gq_common *c, const gq_topo *topo,
                       struct json_t *opts);

/* Load what report and compare read: a saved document (gq_doc_load), a
 * journal (a document of kind "run" marked incomplete, rebuilt from its
 * header and records), or a card directory (its card.json; an interrupted
 * one, DIR.partial-RUNID/, by its journal). */
int gq_cli_doc_load(const char *path, struct json_t **root, gq_recordset *rs, gq_err *err);
/* A saved document only (gq_doc_load), for --input. */
int gq_cli_doc_input(const char *path, struct json_t **root, gq_recordset *rs, gq_err *err);
/* In both, "-" is stdin; a pipe, a FIFO or stdin is read once (up to 1 GiB)
 * and messages name it as given ("<stdin>" for "-"). */

#endif
