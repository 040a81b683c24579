/* A card directory is written as a set.
 *
 * The card's files go to a sibling DIR.partial-RUNID/; once the card is
 * complete, that directory is swapped in with renameat2(RENAME_EXCHANGE) (or
 * renamed, when DIR does not exist) and the earlier card, now under the
 * partial name, is removed. DIR therefore always holds a whole card, or the one
 * before it. Where the file system has no exchange (NFS, Lustre, some FUSE),
 * the earlier card is renamed aside to DIR.old-RUNID/, the new one renamed in,
 * and the old one removed: between those two renames DIR does not exist (a
 * reader sees no card, never half of one), and a crash in between leaves the
 * earlier card in DIR.old-RUNID/.
 *
 * An interrupted card stays in DIR.partial-RUNID/ (the message names it);
 * `report` reads it there. -o DIR holding anything but a gpuqual card is
 * refused; an earlier card is replaced only with --force.
 */
#ifndef GQ_CLI_CARDDIR_H
#define GQ_CLI_CARDDIR_H

#include <stdbool.h>
#include <stddef.h>

#include "core/status.h"

/* Where a card's (or a fleet's) artefacts go must be creatable before anything
 * runs: outdir NULL is the current directory, which must be writable; else it
 * must be a writable directory, or a name whose parent is one. One line naming
 * -o and what is wrong. */
int gq_carddir_check_outdir(const char *outdir, gq_err *err);

/* Before anything is measured: may DIR receive a card? (A missing or empty
 * directory may; an earlier card only with force; anything else never.) */
int gq_carddir_check(const char *dir, bool force, gq_err *err);

/* Create DIR.partial-RUN_ID/ and put its path in partial. */
int gq_carddir_begin(const char *dir, const char *run_id, char *partial, size_t cap, gq_err *err);

/* Swap the complete card in partial into DIR and remove the earlier one. */
int gq_carddir_commit(const char *dir, const char *partial, const char *run_id, gq_err *err);

/* card --resume DIR: the interrupted card to continue. DIR is the card's
 * directory (its newest DIR.partial-RUNID/ is taken) or a partial directory
 * itself. Fills final (the card's directory), partial and run_id. */
int gq_carddir_find_partial(const char *dir, char *final, char *partial, size_t cap, char run_id[32],
                            gq_err *err);

/* Remove a partial directory that holds nothing measured. */
void gq_carddir_discard(const char *partial);

/* fleet -o DIR, before any rank runs (rank 0): may DIR receive a fleet? A
 * missing or empty directory may. One that holds only an earlier fleet's
 * output may only with force: fleet.json (a gpuqual fleet document),
 * fleet.md, the temporary files of gpuqual's writer, and the nodes' folders
 * <host>-rank<N>/ (and their .partial-RUNID/ and .old-RUNID/ forms), each
 * empty or holding only a card's files. Anything else never: one line naming
 * DIR and the first entry that is not a fleet's. *earlier gets the earlier
 * fleet's node folders (NULL-terminated; gq_carddir_names_free), NULL when
 * there are none. */
int gq_carddir_check_fleet(const char *dir, bool force, char ***earlier, gq_err *err);
void gq_carddir_names_free(char **names);

/* After rank 0 wrote the new fleet.json (fleet --force): remove the earlier
 * fleet's node folders that no node of this fleet took over: partial and
 * aside folders, and plain ones of a rank this fleet does not have or that
 * ran on another host (hosts[r]: rank r's host, NULL unknown: kept). A
 * node's plain folder of this fleet's own name is never removed: its new
 * card replaced it, or, when that card did not complete, the earlier card
 * stays beside the new partial folder, as card does. Returns how many could
 * not be removed, the first one's path in left. */
int gq_carddir_fleet_prune(const char *dir, char *const *earlier, const char *const *hosts, int size,
                           char *left, size_t cap);

#endif
