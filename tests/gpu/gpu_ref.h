/* Reference figures for the GPU tests (tests/gpu): what nvbandwidth (and
 * p2pBandwidthLatencyTest) measured, for the lower bound every figure with a
 * reference must meet: a bandwidth at least GPU_REF_FRACTION of its
 * reference, a latency at most its reference / GPU_REF_FRACTION.
 *
 * Which reference, in this order:
 *  1. GQ_REF_JSON=FILE: nvbandwidth's JSON (`nvbandwidth -j`) measured in the
 *     same call on this machine (tests/gpu/run.sh --nvbandwidth-json FILE).
 *     A file that cannot be read, or lists another number of GPUs, is an
 *     error: the caller fails, it does not skip.
 *  2. The saved reference for this machine in bench/reference (GQ_REF_DIR,
 *     else GQ_SOURCE_DIR/bench/reference): GPUs named "NVIDIA H200", either
 *     one on PCIe Gen5 x16 (h200x1-nvbandwidth-v0.8.tsv) or two joined by 18
 *     NVLinks (h200x2-nvbandwidth-v0.8.json and h200x2-p2pBandwidthLatencyTest.txt).
 *  3. None: the bound checks are skipped, and gpu_ref_open says why.
 * Cells are nvbandwidth's: matrix row and column as in its JSON (the GPU
 * that executes the copy in the row; bidirectional GPU-GPU tests stack three
 * matrices: rows 0..n-1 the first direction, n..2n-1 the second, 2n..3n-1
 * the total).
 */
#ifndef GQ_TESTS_GPU_REF_H
#define GQ_TESTS_GPU_REF_H

#include <stdbool.h>
#include <stddef.h>

#include "core/record.h"
#include "topo/topo.h"

#define GPU_REF_FRACTION 0.9

typedef struct gpu_ref gpu_ref;

/* The reference for this machine (topo from the backend's discovery), or
 * NULL: then *failed says whether that is an error (a GQ_REF_JSON that
 * cannot be used) or only that there is none (skip), and why[] says which. */
gpu_ref *gpu_ref_open(const gq_topo *topo, bool *failed, char *why, size_t n);
void gpu_ref_close(gpu_ref *r);

/* Where the figures come from, one line (e.g. "nvbandwidth v0.8 saved for 2 x H200 (...json)"). */
const char *gpu_ref_source(const gpu_ref *r);
/* True when the nvbandwidth figures were measured in this call (GQ_REF_JSON). */
bool gpu_ref_same_call(const gpu_ref *r);

/* nvbandwidth's figure for (test, row, col), > 0; false when there is none
 * (test not run or failed, cell N/A or out of the matrix). */
bool gpu_ref_nvbw(const gpu_ref *r, const char *test, int row, int col, double *v);
/* Rows and columns of a test's matrix; false when the test is not there. */
bool gpu_ref_nvbw_shape(const gpu_ref *r, const char *test, int *rows, int *cols);

/* p2pBandwidthLatencyTest's figure: matrix named as the tool heads it
 * ("Unidirectional P2P=Disabled Bandwidth Matrix", "P2P=Enabled Latency (P2P
 * Writes) Matrix", ...), row and column = the GPUs. Bandwidth in GB/s,
 * latency converted to ns. Only with the saved 2 x H200 reference. */
bool gpu_ref_p2p(const gpu_ref *r, const char *matrix, int row, int col, double *v);

/* One cell of one of nvbandwidth's tests: gpuqual's figure beside the
 * reference's. */
typedef struct gpu_ref_cell {
    const char *test;
    int row, col; /* in the reference's matrix */
    double v;     /* gpuqual's figure (median); NAN when it has none for the cell */
    double ref;
    bool latency;
} gpu_ref_cell;

/* For every cell with a reference figure of every nvbandwidth test that has
 * records in rs: gpuqual's figure for that cell, as `gpuqual run
 * --nvbandwidth-json` lays the records out (src/render/nvbw_json.c; an
 * invalid record gives no figure), then fn. Host tests whose records span
 * several host rows where the reference has one take the column's only
 * figure. Returns the number of cells, or -1 when the records cannot be laid out. */
int gpu_ref_each_cell(const gpu_ref *r, const gq_topo *topo, const gq_recordset *rs,
                      void (*fn)(const gpu_ref_cell *c, void *arg), void *arg);

/* The bound for a reference figure: ref * 0.9 for bandwidth (a floor),
 * ref / 0.9 for latency (a ceiling); and whether v meets it. */
double gpu_ref_bound(double ref, bool latency);

/* Tests whose reference figure moves by itself from run to run on the
 * reference machines: nvbandwidth's own runs of them differed by more than
 * the 10 % the bound allows. For such a test the bound is widened by that
 * documented variation (bound = ref * 0.9 * (1 - variation)); 0 for every
 * other test. The figures behind each entry are in gpu_ref.c. */
double gpu_ref_variation(const char *test);
/* gpu_ref_bound / gpu_ref_meets for a named nvbandwidth test (its variation applied). */
double gpu_ref_bound_for(const char *test, double ref, bool latency);
bool gpu_ref_meets_for(const char *test, double v, double ref, bool latency);
bool gpu_ref_meets(double v, double ref, bool latency);

#endif
