/* Table-driven command-line options (after fio's struct fio_option).
 *
 * Each command declares one static const gq_opt table; parsing, defaults,
 * bounds, --help and "did you mean" all come from it. Values are stored with
 * offsetof() into the command's own options struct. Several tables can be
 * combined (the shared output/backend tables plus the command's own).
 */
#ifndef GQ_CLI_OPTIONS_H
#define GQ_CLI_OPTIONS_H

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
} gq_opt_type;

typedef struct gq_opt {
    const char *name; /* long name without dashes, "buffer-size" */
    char shortname;   /* 'b', or 0 */
    gq_opt_type type;
    size_t off;          /* offsetof in the options struct */
    const char *def;     /* default as text (parsed like user input), or NULL */
    const char *arg;     /* metavar in help: "MiB", "FILE" */
    const char *help;    /* one line */
    double lo, hi;       /* bounds for INT/DOUBLE/SIZE/DURATION when lo < hi */
    uint64_t unit;       /* SIZE: unit of a bare number (default 1 byte) */
    const char *choices; /* ENUM: "table,json,csv" */
    size_t seen_off;     /* offsetof a bool set when given on the command line; 0 = none */
} gq_opt;

#define GQ_OPT_END                                                                                           \
    {                                                                                                        \
        0                                                                                                    \
    }

/* Parse argv[first..argc) against the NULL-name-terminated tables (ntab of
 * them, all writing into the same struct `dst`). Defaults are applied first.
 * Positional arguments are collected into pos[] (up to maxpos, count in *npos).
 * "--help"/"-h" sets *help. Errors: GQ_E_USAGE with one line naming the option
 * and, where one is close, "did you mean --X?". */
int gq_opts_parse(const gq_opt *const *tabs, int ntab, void *dst, int argc, char **argv, int first,
                  const char **pos, int maxpos, int *npos, bool *help, gq_err *err);

/* Apply defaults only. */
int gq_opts_defaults(const gq_opt *const *tabs, int ntab, void *dst, gq_err *err);

/* Print the options of the tables, one per line, with defaults and bounds. */
void gq_opts_help(FILE *f, const gq_opt *const *tabs, int ntab);

/* The options in force as a JSON object {name: value} for saved documents
 * (every option of the tables, defaults included). New reference. */
struct json_t;
struct json_t *gq_opts_to_json(const gq_opt *const *tabs, int ntab, const void *src);

#endif
