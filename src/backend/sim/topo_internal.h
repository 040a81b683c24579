/* The topology-file parser's shared state (topo_lex.c, topo_parse.c,
 * topo_load.c): tokens, value types, attribute slots, declaration kinds and
 * the parse context. Nothing outside src/backend/sim includes this.
 */
#ifndef GQ_BACKEND_SIM_TOPO_INTERNAL_H
#define GQ_BACKEND_SIM_TOPO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/sim/sim.h"

#define MAX_TOK 48
#define TOK_MAX 128
#define LINE_MAX_LEN 4096

typedef struct tok {
    char s[TOK_MAX];
    int col;
    bool quoted;
} tok;

typedef enum vtype {
    VT_INT,   /* whole number, range lo..hi */
    VT_NUM,   /* plain positive number */
    VT_PAIR,  /* two plain positive numbers */
    VT_BW,    /* bandwidth: GB/s MB/s TB/s -> B/s, > 0 */
    VT_TIME,  /* ns us ms s -> s, >= 0 */
    VT_SIZE,  /* KiB MiB GiB TiB -> bytes, > 0 */
    VT_GTS,   /* PCIe lane rate in GT/s: 2.5 5 8 16 32 64 */
    VT_WIDTH, /* x1 .. x32 */
    VT_WATT,  /* W, > 0 */
    VT_MHZ,   /* MHz or GHz -> MHz, > 0 */
    VT_PCT,   /* % -> fraction; range lo..hi in percent */
    VT_STR,   /* quoted string (or one word) */
    VT_WORD,  /* one bare word */
    VT_NAME,  /* node name */
    VT_CC,    /* compute capability "8.9" */
} vtype;

enum slot {
    S_SOCKETS,
    S_CORES,
    S_GPUNUMA,
    S_DRIVER,
    S_CHUNKCOST,
    S_COPY,
    S_CHASE,
    S_STAGED,
    S_SKEW,
    S_SKEWROUNDS,
    S_DRIFT,
    S_NUMA,
    S_SIZE,
    S_AVAIL,
    S_LAT,
    S_BUS,
    S_P2PFLOW,
    S_P2PFWD,
    S_P2PREV,
    S_P2PCOST,
    S_INDEX,
    S_MODEL,
    S_MEM,
    S_CC,
    S_SMS,
    S_POWER,
    S_CLOCK,
    S_LOCALCOPY,
    S_MEMLAT,
    S_MAXRATE,
    S_MAXWIDTH,
    S_P2PSTATUS,
    S_CAP,
    S_FWD,
    S_REV,
    S_UP,
    S_DOWN,
    S_READ,
    S_WRITE,
    S_DUPLEX,
    S_WEIGHTS,
    S_FLOWCAP,
    S_SM,
    S_COST,
    S_RATE,
    S_WIDTH,
    S_LINKS,
    S_NVRATE,
    S_POS0,
    S_POS1,
    NSLOT
};

typedef enum decl_id {
    D_MACHINE,
    D_TITLE,
    D_CPU,
    D_VM,
    D_NOISE,
    D_P2P,
    D_STAGING,
    D_LATENCY,
    D_MEMORY,
    D_SOCKET,
    D_SWITCH,
    D_BRIDGE,
    D_NVSWITCH,
    D_GPU,
    D_PCIE,
    D_NVLINK,
    D_FABRIC,
    ND
} decl_id;

typedef struct val {
    bool set;
    int col;
    double num, num2;
    char str[TOK_MAX];
} val;

typedef struct pctx {
    const char *fname;
    int line;
    gq_err *err;
    gq_sim_machine *m;
    tok t[MAX_TOK];
    int nt;
    val v[NSLOT];
    int seen[ND]; /* line of the first declaration of each machine-wide kind */
    bool gpu_index_given, gpu_index_missing;
    int first_gpu_line;
} pctx;

/* One rejection "FILE:LINE:COL: message" with GQ_E_USAGE, at the current line
 * or at a given one (topo_lex.c). */
int gq_tp_err(pctx *p, int col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int gq_tp_err_at(pctx *p, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Split one line into p->t (topo_lex.c). */
int gq_tp_tokenize(pctx *p, const char *s, size_t n);
/* Parse one value of a type starting at token *ti; advances *ti (topo_lex.c). */
int gq_tp_value(pctx *p, vtype type, double lo, double hi, const char *attr, int *ti, val *v);
/* Whether s is a declaration keyword (topo_parse.c). */
bool gq_tp_is_keyword(const char *s);
/* "socket", "gpu", ... (topo_parse.c). */
const char *gq_tp_kind_name(gq_sim_node_kind k);
/* Parse the declaration on p->t into the machine (topo_parse.c). */
int gq_tp_declaration(pctx *p);

#endif
