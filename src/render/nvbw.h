/* nvbandwidth v0.8's output, for `gpuqual nvbandwidth` (the drop-in) and
 * `--format nvbandwidth-json`: its test list (order, names, descriptions,
 * which tests need a GPU pair with peer access), its matrices built from
 * gpuqual's records, and its text and JSON layouts.
 *
 * The layouts follow nvbandwidth v0.8 (github.com/NVIDIA/nvbandwidth, tag
 * v0.8: output.cpp, json_output.cpp, inline_common.h): a matrix is a header
 * of column numbers (10 wide after a 2-wide corner), rows labelled with their
 * number (2 wide), cells 10 wide with two decimals or "N/A", an empty line,
 * then "SUM <key> <sum>" (or "&&&& PERF <key> <sum><unit>" with
 * --perfFormatter); a bidirectional GPU pair test prints three matrices
 * (Read1/Read2/Total or Write1/Write2/Total) with keys <test>_read1 ... .
 */
#ifndef GQ_RENDER_NVBW_H
#define GQ_RENDER_NVBW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "core/record.h"
#include "topo/topo.h"

/* nvbandwidth v0.8's test list, in its order (the indices `-t N` takes). */
#define GQ_NVBW_NTESTS 35
typedef struct gq_nvbw_case {
    const char *name;
    bool peer; /* waived unless some GPU pair has peer access */
} gq_nvbw_case;
extern const gq_nvbw_case gq_nvbw_cases[GQ_NVBW_NTESTS];

/* A test id as nvbandwidth takes it: a number is an index into the list
 * (out of range: "Testcase index ID out of bound!"), anything else a name
 * ("Testcase ID not found!"). Returns the index, or -1 with the message. */
int gq_nvbw_find(const char *id, char *msg, size_t n);

typedef enum gq_nvbw_status {
    GQ_NVBW_PASSED = 0,
    GQ_NVBW_WAIVED,   /* no GPU pair with peer access (nvbandwidth's filter) */
    GQ_NVBW_ERROR,    /* a figure failed (error, verify_failed, impossible) */
    GQ_NVBW_NOTFOUND, /* the id named no test: "ERROR: <msg>" */
} gq_nvbw_status;

#define GQ_NVBW_MAXROWS GQ_MAX_GPUS
typedef struct gq_nvbw_matrix {
    int rows, cols;
    char key[96]; /* SUM line's key: the test, or <test>_read1 ... */
    char desc[160];
    bool latency;
    double v[GQ_NVBW_MAXROWS][GQ_MAX_GPUS];
    bool has[GQ_NVBW_MAXROWS][GQ_MAX_GPUS];
} gq_nvbw_matrix;

typedef struct gq_nvbw_result {
    char name[64];
    gq_nvbw_status status;
    char msg[200]; /* NOTFOUND: the message; ERROR: the first failed figure's error */
    int nmat;
    gq_nvbw_matrix mat[3];
} gq_nvbw_result;

/* The matrices of `test` from its records: cells are medians (the mean of
 * the samples with use_mean), "N/A" where a cell does not apply or its
 * figure is invalid. status PASSED, or ERROR when a figure failed. */
void gq_nvbw_build(const gq_topo *topo, const gq_recordset *rs, const char *test, bool use_mean,
                   gq_nvbw_result *out);

/* What the output says about the tool and the run. */
typedef struct gq_nvbw_info {
    const char *version; /* gpuqual's version */
    const char *git;     /* gpuqual's git revision */
    bool simulated;
    bool verbose;        /* -v: MIN/MAX/AVG lines; JSON min/max/average */
    bool perf;           /* --perfFormatter */
    const char *warning; /* the small-buffer note, or NULL */
} gq_nvbw_info;

/* "nvbandwidth Version: v0.8 (gpuqual X) [(simulated)]" and the git line. */
void gq_nvbw_text_version(FILE *f, const gq_nvbw_info *in);
/* "0000:00:06.0" -> "00000000:00:06", as nvbandwidth prints a device. */
void gq_nvbw_bus(const char *bus, char *out, size_t n);
/* CUDA/driver versions, the host name and "Device i: NAME (bus)". */
void gq_nvbw_text_machine(FILE *f, const gq_topo *topo);
/* "Running X." and the matrices, "Waived: " or "ERROR: msg". With -v and
 * the test's records (rs may be NULL), first nvbandwidth's per-sample
 * lines: "\tSample N: Host -> Device 0: 55.01 GB/s". */
void gq_nvbw_text_result(FILE *f, const gq_nvbw_result *r, const gq_nvbw_info *in, const gq_recordset *rs);
void gq_nvbw_text_samples(FILE *f, const gq_recordset *rs, const char *test);
/* The closing NOTE lines. */
void gq_nvbw_text_note(FILE *f);
/* `nvbandwidth -l`. */
void gq_nvbw_text_list(FILE *f);

/* The JSON document: {"nvbandwidth": {...}} with the results in order
 * (topo may be NULL for an error before discovery; error may be NULL). */
json_t *gq_nvbw_json(const gq_topo *topo, const gq_nvbw_result *res, int n, const gq_nvbw_info *in,
                     const char *error);
/* The JSON as nvbandwidth prints it: "{" and "}" alone on their lines. */
void gq_nvbw_json_print(FILE *f, const json_t *doc);

#endif
