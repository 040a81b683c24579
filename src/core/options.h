/* Table-driven command-line options (after fio's struct fio_option).
 *
 * Each command declares static const gq_opt tables; parsing, defaults,
 * bounds, --help and "did you mean" all come from them. Values are stored with
 * offsetof() into the command's own options struct. Several tables can be
 * combined (the shared output/backend/measurement tables plus the command's
 * own) into a gq_optset, which also carries the command's default overrides,
 * its --format values and its grammar.
 *
 * Pure string handling: this file uses only core, so fuzzers and generators
 * (man pages, shell completion) can link it without the CLI.
 */
#ifndef GQ_CORE_OPTIONS_H
#define GQ_CORE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/status.h"
#include "core/units.h"

typedef enum gq_opt_type {
    GQ_OPT_FLAG,     /* bool; --name sets true, --no-name sets false */
    GQ_OPT_INT,      /* int, bounds lo..hi */
    GQ_OPT_DOUBLE,   /* double, bounds lo..hi */
    GQ_OPT_STR,      /* const char * (points into argv or def) */
    GQ_OPT_SIZE,     /* uint64_t bytes; a bare number is in `unit` (e.g. MiB); suffixes
                        K/M/G/KiB/MiB/GiB/KB/MB/GB/B */
    GQ_OPT_DURATION, /* double seconds; suffixes ms, s, m, h; bare number = seconds */
    GQ_OPT_ENUM,     /* const char * that must be one of choices (comma-separated) */
    GQ_OPT_PERCENT,  /* double percent: "5%" or "5" both store 5; bounds lo..hi in percent */
    GQ_OPT_LIST,     /* gq_optlist; every use adds, and "a,b" adds two items */
    GQ_OPT_KV,       /* gq_optlist of "KEY=VALUE" items (repeatable, e.g. --set CHECK.KEY=VALUE) */
} gq_opt_type;

/* What a LIST or KV option accumulates into. Items point into argv or into
 * `store` (the pieces of a comma list). */
#define GQ_OPTLIST_MAX 64
typedef struct gq_optlist {
    int n;
    const char *item[GQ_OPTLIST_MAX];
    char store[2048];
    size_t used;
} gq_optlist;

typedef struct gq_opt {
    const char *name; /* long name without dashes, "buffer-size" */
    char shortname;   /* 'b', or 0; must agree with gq_short_flags[] */
    gq_opt_type type;
    size_t off;          /* offsetof in the options struct */
    const char *def;     /* default as text (parsed like user input), or NULL */
    const char *arg;     /* metavar in help: "MiB", "FILE" */
    const char *help;    /* one sentence; help wraps it */
    double lo, hi;       /* bounds for INT/DOUBLE/SIZE/DURATION/PERCENT when lo < hi */
    uint64_t unit;       /* SIZE: unit of a bare number (default 1 byte) */
    const char *choices; /* ENUM: "table,json,csv" */
    size_t seen_off;     /* offsetof a bool set when given on the command line; 0 = none */
} gq_opt;

#define GQ_OPT_END                                                                                           \
    {                                                                                                        \
        0                                                                                                    \
    }

/* The grammar of a command line. gq_grammar_gpuqual is gpuqual's own; a
 * compatibility mode that mimics another tool (nvbandwidth) uses another. */
typedef struct gq_opt_grammar {
    bool bundling;         /* -qt x, -qtx: short flags bundled, the last may take a value */
    bool negation;         /* --no-NAME turns a flag off */
    bool repeat_is_error;  /* a single-value option given twice is an error */
    bool multi_values;     /* a LIST option takes every following word up to the next option (-t a b c) */
    bool single_dash_long; /* -name is a long name too (when no short flag matches the whole word) */
    bool case_fold;        /* long names match ignoring case (--bufferSize = --buffersize) */
    bool whole_values;     /* a LIST value is one item, commas included (nvbandwidth's -t a,b is one id) */
} gq_opt_grammar;
extern const gq_opt_grammar gq_grammar_gpuqual;

/* A command's options: its tables and what it changes in them. */
typedef struct gq_optset {
    const char *name; /* the command, for messages ("topo: --format csv is not available here") */
    const gq_opt *const *tabs;
    int ntab;
    const char *const *defaults;   /* "name=value" overrides of shared defaults, NULL-terminated, or NULL */
    const char *const *bounds;     /* "name=LO..HI" overrides of shared bounds, NULL-terminated, or NULL */
    const char *formats;           /* the --format values this command accepts ("table,json"), or NULL */
    const gq_opt_grammar *grammar; /* NULL: gq_grammar_gpuqual */
    /* Options of the shared tables this command does not take ("rounds,method"), or NULL. It applies
     * to every table but the last, which is the command's own. */
    const char *omit;
} gq_optset;

/* Parse argv[first..argc) against the set, writing into `dst`. Defaults are
 * applied first. Positional arguments are collected into pos[] (up to maxpos,
 * count in *npos). "--help"/"-h" sets *help. "--" ends the options. Errors:
 * GQ_E_USAGE with one line naming the option and, where one is close, "did
 * you mean --X?". */
int gq_optset_parse(const gq_optset *set, void *dst, int argc, char **argv, int first, const char **pos,
                    int maxpos, int *npos, bool *help, gq_err *err);

/* The same with the tables only (gpuqual's grammar, no overrides). */
int gq_opts_parse(const gq_opt *const *tabs, int ntab, void *dst, int argc, char **argv, int first,
                  const char **pos, int maxpos, int *npos, bool *help, gq_err *err);

/* Help: the options of the set, one per entry, with their bounds, enum values
 * and defaults, wrapped to `width` columns (never cut mid-word). */
void gq_optset_help(FILE *f, const gq_optset *set, int width);
/* The same for plain tables at gq_opts_help_width. */
void gq_opts_help(FILE *f, const gq_opt *const *tabs, int ntab);
/* The width help wraps to: 100 unless the front end sets it (the terminal's). */
extern int gq_opts_help_width;

/* Walk every option of a set, less its `omit` (man pages, completion, checks):
 * for (const gq_opt *o = NULL; (o = gq_optset_next(set, &it, o));) ... with
 * `int it = 0` before. */
const gq_opt *gq_optset_next(const gq_optset *set, int *it, const gq_opt *prev);
/* The default in force for `o` in the set (an override, else o->def). */
const char *gq_optset_default(const gq_optset *set, const gq_opt *o);
/* "flag", "int", "double", "size", "duration", "percent", "string", "enum", "list", "key=value". */
const char *gq_opt_kind_name(gq_opt_type t);

/* The one table of short flags, across all commands: each letter has one long
 * name. A short flag on an option must be the one listed here for its name. */
typedef struct gq_short_flag {
    char c;
    const char *name;
} gq_short_flag;
extern const gq_short_flag gq_short_flags[];
/* The letter for a long name, or 0. */
char gq_short_for(const char *name);

/* Split a KV item "KEY=VALUE" (key up to `keysz`-1 bytes). */
int gq_kv_split(const char *item, char *key, size_t keysz, const char **value, gq_err *err);

#endif
