/* The journal: JSON Lines. Every finished measurement is appended as one line
 * and written to the file at once (fflush), so Ctrl-C, a crash or kill -9 of
 * gpuqual loses nothing that was finished. The fsync (for a power loss) is
 * grouped: at the end of each step, for a named step's line, and at least
 * once a second (GQ_JOURNAL_SYNC_S) while lines keep coming. Reading tolerates a truncated last line (a crash
 * mid-write): it is skipped and reported through *truncated.
 *
 * Line 1, the header (the run's identity):
 *   {"journal":"gpuqual","schema_version":N,"header":{"magic":"gpuqual-journal",
 *    "run_id":..., "version":..., "git":..., "started":ISO-8601, "command":...,
 *    "options":{...the options that shape a figure...},
 *    "machine":{"hostname","driver","simulated","sim","gpus":[{"index","uuid","name"}]},
 *    "topology":{...the whole machine, as in documents; optional}}}
 * Then one line per event, each with the header's run_id (a line of another
 * run, a second header or a repeated record makes the journal unreadable):
 *   {"journal":"gpuqual","schema_version":N,"run_id":...,"record":{...}}
 * (the record in the same JSON form as in saved documents), or "step" (card
 * steps) or "sample" (stress telemetry) instead of "record".
 *
 * gpuqual appends only to a journal whose header it recognises, and only on
 * purpose (--resume); it never truncates or appends to anything else. A
 * schema-1 journal (records without a header) can still be read.
 */
#ifndef GQ_CORE_JOURNAL_H
#define GQ_CORE_JOURNAL_H

#include <stdbool.h>
#include <stdio.h>

#include "core/record.h"
#include "topo/topo.h"

struct json_t;

typedef struct gq_journal {
    FILE *f;
    char path[1024];
    char run_id[32];
    int written;
    int item;      /* the plan item being measured (its records carry it), -1 none */
    int next_item; /* the number the next item gets (plan_run counts items through the journal) */
    /* a resumed journal's finished items, for plan_run to re-use (borrowed;
     * NULL: measure everything): record i of reuse_rs is item reuse_item[i] */
    const gq_recordset *reuse_rs;
    const int *reuse_item;
    int reused; /* items taken from reuse_rs so far (plan_run counts them) */
    /* a resumed journal's finished named steps (owned; NULL: none): the last
     * "step" line {"step":NAME,"status":"done",...} of each NAME other than
     * "item", keyed by NAME (the card's "stress" carries its whole section) */
    struct json_t *done_steps;
    bool in_place; /* a device or a pipe: written, never synced */
    bool tail_cut; /* resume: the journal's last line was unfinished and was dropped */
    /* the grouped fsync: lines flushed since the last one, when it was
     * (CLOCK_MONOTONIC seconds), how many, and a failed one's errno */
    bool dirty;
    double synced_at;
    int syncs;
    int sync_errno;
} gq_journal;

/* The record flags that keep a journaled measurement from being re-used by a
 * resume (cut short, failed, contaminated, refused for overlap): it is
 * measured again. */
#define GQ_JOURNAL_NOT_REUSABLE (GQ_FLAG_INCOMPLETE | GQ_FLAG_ERROR | GQ_FLAG_CONTAMINATED | GQ_FLAG_OVERLAP)

/* The longest a flushed line waits for its fsync while lines keep coming. */
#define GQ_JOURNAL_SYNC_S 1.0

/* What the header says. */
typedef struct gq_journal_id {
    const char *command; /* "run", "card", ... */
    const char *version; /* gpuqual's version and git revision */
    const char *git;
    const char *run_id;     /* NULL: a fresh one */
    struct json_t *options; /* the options that shape a figure (borrowed; NULL: {}) */
    const gq_topo *topo;    /* the machine (NULL: unknown) */
    const char *sim;        /* --sim NAME, or NULL */
    /* how the command numbers its items and names its steps (the card's
     * "card-2"; NULL: none): a journal written with another layout is not
     * resumed, its item numbers would name other measurements */
    const char *layout;
    /* resume a journal written by another gpuqual revision (version or git);
     * without it such a journal is refused, since another revision may
     * measure or number differently */
    bool other_revision;
} gq_journal_id;

/* Start a new journal at path (NULL or "": an automatic one, created with
 * mkstemp under $XDG_STATE_HOME/gpuqual/, else $TMPDIR, else /tmp, mode 0600;
 * j->path says where) and write its header. PATH must be new, empty, or a
 * character device or a FIFO (/dev/null); a file that holds anything is left
 * unchanged and refused (exit 2): another run's journal names --resume.
 * A write failure is GQ_E_FAIL (exit 1). */
int gq_journal_open(gq_journal *j, const char *path, const gq_journal_id *id, gq_err *err);

/* Continue the journal at path: its header must say the same machine, shape
 * options and layout as id (else GQ_E_USAGE naming the field that differs).
 * The records of every finished item (a "step" line marks it done), none of
 * them cut short by Ctrl-C, failed or contaminated, are read into *done, with
 * their item's index in (*done_item)[i] (malloc'd; the caller frees it): the
 * measurements to re-use. The last finished line of each named step goes to
 * j->done_steps (freed by gq_journal_close). A cut last line is dropped, and
 * new lines are appended under the journal's run id. */
int gq_journal_resume(gq_journal *j, const char *path, const gq_journal_id *id, gq_recordset *done,
                      int **done_item, gq_err *err);

int gq_journal_append(gq_journal *j, const gq_record *r, gq_err *err);
/* fsync what was written since the last one: the end of a step (a list of
 * items, a card step). GQ_E_FAIL when it fails (as a write does). */
int gq_journal_sync(gq_journal *j, gq_err *err);
/* One other event line: key is "step" or "sample", obj borrowed. */
int gq_journal_event(gq_journal *j, const char *key, struct json_t *obj, gq_err *err);
/* The mark that the current item (j->item) finished: {"step": "item",
 * "status": "done", "item": N}. A resumed run re-uses the records of marked
 * items only. GQ_E_NOMEM, or as gq_journal_event. */
int gq_journal_item_done(gq_journal *j, gq_err *err);
/* Close the file and free what a resume read (done_steps). */
void gq_journal_close(gq_journal *j);

/* Read every complete record of a journal into *out. *truncated (may be NULL)
 * is set when the last line was cut short and skipped. A line that is complete
 * but not a gpuqual journal line is an error naming its line number. */
int gq_journal_read(const char *path, gq_recordset *out, bool *truncated, gq_err *err);

/* What reading a journal found besides its records. */
typedef struct gq_journal_info {
    bool truncated; /* its last line was unfinished (a crash mid-write) and was left out */
    bool complete;  /* a "run" step marked done: the run ended with every item measured */
} gq_journal_info;

/* gq_journal_read, with what it found in *info. Both refuse (GQ_E_USAGE, one
 * line naming the file and the line) a journal that is not one run: a second
 * header, a line of another run id, or a record repeated to the last digit.
 * Records of items left unfinished where a resume began are left out (the
 * resumed run measured them again). */
int gq_journal_read_info(const char *path, gq_recordset *out, gq_journal_info *info, gq_err *err);

/* The header object of the journal at path (new reference), or NULL with
 * *err set: not a journal (GQ_E_USAGE), a schema-1 journal without one
 * (GQ_E_UNSUPP), unreadable (GQ_E_IO). */
struct json_t *gq_journal_header(const char *path, gq_err *err);

/* Does the file at path start like a gpuqual journal (a header or a schema-1
 * record line)? */
bool gq_journal_sniff(const char *path);

#endif
