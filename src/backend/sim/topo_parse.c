/* Topology files for the simulated fabric: tokenizer, table-driven
 * declaration parser and the checks that make a machine usable.
 *
 * The grammar is in docs/topology-format.md. Every rejection is one line,
 * "FILE:LINE:COL: message", with GQ_E_USAGE. The parser is single pass, keeps
 * every buffer bounded (line length, fields per line, word length, nodes,
 * links) and does no recursion, so no input can make it crash or run long;
 * tests/fuzz/fuzz_topo.c exercises that.
 */
#include "backend/sim/sim.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/units.h"

#define MAX_TOK 48
#define TOK_MAX 128
#define LINE_MAX_LEN 4096

typedef struct tok {
    char s[TOK_MAX];
    int col;
    bool quoted;
} tok;

/* ---- value types and units ------------------------------------------------ */

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

typedef enum uclass { U_NONE, U_BW, U_TIME, U_SIZE, U_GTS, U_WATT, U_MHZ, U_PCT } uclass;

typedef struct unit_def {
    const char *name;
    uclass cls;
    double scale;
} unit_def;

static const unit_def units[] = {
    {.name = "GB/s", .cls = U_BW, .scale = 1e9},
    {.name = "MB/s", .cls = U_BW, .scale = 1e6},
    {.name = "TB/s", .cls = U_BW, .scale = 1e12},
    {.name = "ns", .cls = U_TIME, .scale = 1e-9},
    {.name = "us", .cls = U_TIME, .scale = 1e-6},
    {.name = "ms", .cls = U_TIME, .scale = 1e-3},
    {.name = "s", .cls = U_TIME, .scale = 1.0},
    {.name = "KiB", .cls = U_SIZE, .scale = 1024.0},
    {.name = "MiB", .cls = U_SIZE, .scale = 1048576.0},
    {.name = "GiB", .cls = U_SIZE, .scale = 1073741824.0},
    {.name = "TiB", .cls = U_SIZE, .scale = 1099511627776.0},
    {.name = "GT/s", .cls = U_GTS, .scale = 1.0},
    {.name = "W", .cls = U_WATT, .scale = 1.0},
    {.name = "MHz", .cls = U_MHZ, .scale = 1.0},
    {.name = "GHz", .cls = U_MHZ, .scale = 1000.0},
    {.name = "%", .cls = U_PCT, .scale = 0.01},
};

/* Units people write by habit that mean something else here. */
static const struct {
    const char *name;
    const char *hint;
} unit_hints[] = {
    {.name = "GiB/s", .hint = "bandwidth is decimal here: write GB/s (10^9 bytes/s)"},
    {.name = "MiB/s", .hint = "bandwidth is decimal here: write MB/s (10^6 bytes/s)"},
    {.name = "Gb/s", .hint = "bandwidth is in bytes: write GB/s"},
    {.name = "Gbps", .hint = "bandwidth is in bytes: write GB/s"},
    {.name = "GBps", .hint = "write GB/s"},
    {.name = "GB", .hint = "sizes are binary here: write GiB"},
    {.name = "MB", .hint = "sizes are binary here: write MiB"},
    {.name = "KB", .hint = "sizes are binary here: write KiB"},
    {.name = "\xc2\xb5s", .hint = "write microseconds as 'us'"},
    {.name = "\xce\xbcs", .hint = "write microseconds as 'us'"},
    {.name = "GT", .hint = "write the lane rate as GT/s"},
};

static const char *class_units(uclass c)
{
    switch (c) {
    case U_BW: return "GB/s, MB/s or TB/s";
    case U_TIME: return "ns, us, ms or s";
    case U_SIZE: return "KiB, MiB, GiB or TiB";
    case U_GTS: return "GT/s";
    case U_WATT: return "W";
    case U_MHZ: return "MHz or GHz";
    case U_PCT: return "%";
    default: return "";
    }
}

static const char *class_name(uclass c)
{
    switch (c) {
    case U_BW: return "a bandwidth";
    case U_TIME: return "a time";
    case U_SIZE: return "a size";
    case U_GTS: return "a PCIe lane rate";
    case U_WATT: return "a power";
    case U_MHZ: return "a clock";
    case U_PCT: return "a percentage";
    default: return "a value";
    }
}

static uclass vtype_class(vtype t)
{
    switch (t) {
    case VT_BW: return U_BW;
    case VT_TIME: return U_TIME;
    case VT_SIZE: return U_SIZE;
    case VT_GTS: return U_GTS;
    case VT_WATT: return U_WATT;
    case VT_MHZ: return U_MHZ;
    case VT_PCT: return U_PCT;
    default: return U_NONE;
    }
}

static const unit_def *find_unit(const char *s)
{
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(units[i].name, s))
            return &units[i];
    return NULL;
}

/* Strict decimal: [+-]digits[.digits][e[+-]digits] or [+-].digits...; no
 * hex, inf or nan. Returns the length of the number at s (0 if none). */
static size_t number_prefix(const char *s)
{
    size_t i = 0, digits = 0;
    if (s[i] == '+' || s[i] == '-')
        i++;
    while (s[i] >= '0' && s[i] <= '9')
        i++, digits++;
    if (s[i] == '.') {
        i++;
        while (s[i] >= '0' && s[i] <= '9')
            i++, digits++;
    }
    if (!digits)
        return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1, ed = 0;
        if (s[j] == '+' || s[j] == '-')
            j++;
        while (s[j] >= '0' && s[j] <= '9')
            j++, ed++;
        if (ed)
            i = j;
    }
    return i;
}

static bool lex_number(const char *s, double *out)
{
    size_t n = number_prefix(s);
    if (!n || s[n])
        return false;
    errno = 0;
    double v = strtod(s, NULL);
    if (errno == ERANGE || !isfinite(v))
        return false;
    *out = v;
    return true;
}

static bool lex_int(const char *s, long *out)
{
    size_t i = 0;
    if (s[0] == '+' || s[0] == '-')
        i++;
    if (!s[i] || strlen(s + i) > 9)
        return false;
    for (size_t j = i; s[j]; j++)
        if (s[j] < '0' || s[j] > '9')
            return false;
    *out = strtol(s, NULL, 10);
    return true;
}

static bool valid_name(const char *s)
{
    if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
        return false;
    size_t n = 0;
    for (const char *p = s; *p; p++, n++) {
        char c = *p;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.'))
            return false;
    }
    return n < GQ_SIM_NAME_MAX;
}

/* ---- declarations --------------------------------------------------------- */

enum slot {
    S_SOCKETS,
    S_CORES,
    S_GPUNUMA,
    S_DRIVER,
    S_CHUNKCOST,
    S_COPY,
    S_CHASE,
    S_STAGED,
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

typedef struct attr_spec {
    const char *name;
    vtype t;
    double lo, hi; /* VT_INT, VT_PCT (percent), VT_NUM */
    int slot;
} attr_spec;

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
    D_GPU,
    D_PCIE,
    D_NVLINK,
    D_FABRIC,
    ND
} decl_id;

typedef struct decl_spec {
    const char *kw;
    decl_id id;
    int npos;
    vtype pos[2];
    const char *usage; /* shown when positional arguments are missing */
    const attr_spec *attrs;
} decl_spec;

#define END_ATTRS                                                                                            \
    {                                                                                                        \
        .name = NULL                                                                                         \
    }

static const attr_spec a_none[] = {END_ATTRS};
static const attr_spec a_cpu[] = {
    {.name = "sockets", .t = VT_INT, .lo = 1, .hi = 64, .slot = S_SOCKETS},
    {.name = "cores", .t = VT_INT, .lo = 1, .hi = 65536, .slot = S_CORES},
    END_ATTRS,
};
static const attr_spec a_vm[] = {
    {.name = "gpu-numa", .t = VT_INT, .lo = -1, .hi = GQ_MAX_NUMA - 1, .slot = S_GPUNUMA},
    END_ATTRS,
};
static const attr_spec a_staging[] = {
    {.name = "driver", .t = VT_PCT, .lo = 1, .hi = 1000, .slot = S_DRIVER},
    {.name = "chunk-cost", .t = VT_TIME, .slot = S_CHUNKCOST},
    END_ATTRS,
};
static const attr_spec a_latency[] = {
    {.name = "copy", .t = VT_TIME, .slot = S_COPY},
    {.name = "chase", .t = VT_TIME, .slot = S_CHASE},
    {.name = "staged", .t = VT_TIME, .slot = S_STAGED},
    END_ATTRS,
};
static const attr_spec a_memory[] = {
    {.name = "numa", .t = VT_INT, .lo = 0, .hi = GQ_MAX_NUMA - 1, .slot = S_NUMA},
    {.name = "size", .t = VT_SIZE, .slot = S_SIZE},
    {.name = "avail", .t = VT_SIZE, .slot = S_AVAIL},
    {.name = "lat", .t = VT_TIME, .slot = S_LAT},
    END_ATTRS,
};
static const attr_spec a_socket[] = {
    {.name = "numa", .t = VT_INT, .lo = 0, .hi = GQ_MAX_NUMA - 1, .slot = S_NUMA},
    {.name = "bus", .t = VT_WORD, .slot = S_BUS},
    {.name = "p2p-flowcap", .t = VT_BW, .slot = S_P2PFLOW},
    {.name = "p2p-cost", .t = VT_TIME, .slot = S_P2PCOST},
    END_ATTRS,
};
static const attr_spec a_bridge[] = {
    {.name = "bus", .t = VT_WORD, .slot = S_BUS},
    {.name = "p2p-flowcap", .t = VT_BW, .slot = S_P2PFLOW},
    {.name = "p2p-cost", .t = VT_TIME, .slot = S_P2PCOST},
    END_ATTRS,
};
static const attr_spec a_gpu[] = {
    {.name = "index", .t = VT_INT, .lo = 0, .hi = GQ_MAX_GPUS - 1, .slot = S_INDEX},
    {.name = "model", .t = VT_STR, .slot = S_MODEL},
    {.name = "mem", .t = VT_SIZE, .slot = S_MEM},
    {.name = "bus", .t = VT_WORD, .slot = S_BUS},
    {.name = "cc", .t = VT_CC, .slot = S_CC},
    {.name = "sms", .t = VT_INT, .lo = 1, .hi = 100000, .slot = S_SMS},
    {.name = "power", .t = VT_WATT, .slot = S_POWER},
    {.name = "clock", .t = VT_MHZ, .slot = S_CLOCK},
    {.name = "local-copy", .t = VT_BW, .slot = S_LOCALCOPY},
    {.name = "memlat", .t = VT_TIME, .slot = S_MEMLAT},
    {.name = "max-rate", .t = VT_GTS, .slot = S_MAXRATE},
    {.name = "max-width", .t = VT_WIDTH, .slot = S_MAXWIDTH},
    END_ATTRS,
};
#define LINK_COMMON                                                                                          \
    {.name = "cap", .t = VT_BW, .slot = S_CAP}, {.name = "fwd", .t = VT_BW, .slot = S_FWD},                  \
        {.name = "rev", .t = VT_BW, .slot = S_REV}, {.name = "duplex", .t = VT_BW, .slot = S_DUPLEX},        \
        {.name = "weights", .t = VT_PAIR, .lo = 0, .hi = 1e6, .slot = S_WEIGHTS},                            \
        {.name = "flowcap", .t = VT_BW, .slot = S_FLOWCAP},                                                  \
        {.name = "p2p-flowcap", .t = VT_BW, .slot = S_P2PFLOW},                                              \
        {.name = "p2p-fwd", .t = VT_BW, .slot = S_P2PFWD},                                                   \
        {.name = "p2p-rev", .t = VT_BW, .slot = S_P2PREV},                                                   \
        {.name = "sm", .t = VT_PCT, .lo = 1, .hi = 100, .slot = S_SM},                                       \
        {.name = "lat", .t = VT_TIME, .slot = S_LAT},                                                        \
    {                                                                                                        \
        .name = "cost", .t = VT_TIME, .slot = S_COST                                                         \
    }
static const attr_spec a_pcie[] = {
    LINK_COMMON,
    {.name = "up", .t = VT_BW, .slot = S_UP},
    {.name = "down", .t = VT_BW, .slot = S_DOWN},
    {.name = "rate", .t = VT_GTS, .slot = S_RATE},
    {.name = "width", .t = VT_WIDTH, .slot = S_WIDTH},
    END_ATTRS,
};
static const attr_spec a_nvlink[] = {
    LINK_COMMON,
    {.name = "links", .t = VT_INT, .lo = 1, .hi = 64, .slot = S_LINKS},
    {.name = "rate", .t = VT_BW, .slot = S_NVRATE},
    END_ATTRS,
};
static const attr_spec a_fabric[] = {
    LINK_COMMON,
    {.name = "read", .t = VT_BW, .slot = S_READ},
    {.name = "write", .t = VT_BW, .slot = S_WRITE},
    END_ATTRS,
};

static const decl_spec decls[] = {
    {.kw = "machine", .id = D_MACHINE, .npos = 1, .pos = {VT_NAME}, .usage = "machine NAME", .attrs = a_none},
    {.kw = "title", .id = D_TITLE, .npos = 1, .pos = {VT_STR}, .usage = "title \"TEXT\"", .attrs = a_none},
    {.kw = "cpu",
     .id = D_CPU,
     .npos = 1,
     .pos = {VT_STR},
     .usage = "cpu \"MODEL\" sockets N cores N",
     .attrs = a_cpu},
    {.kw = "vm",
     .id = D_VM,
     .npos = 1,
     .pos = {VT_WORD},
     .usage = "vm HYPERVISOR [gpu-numa N]",
     .attrs = a_vm},
    {.kw = "noise", .id = D_NOISE, .npos = 1, .pos = {VT_PCT}, .usage = "noise PERCENT %", .attrs = a_none},
    {.kw = "p2p",
     .id = D_P2P,
     .npos = 1,
     .pos = {VT_WORD},
     .usage = "p2p OK|CNS|GNS|TNS|NS|DS",
     .attrs = a_none},
    {.kw = "staging",
     .id = D_STAGING,
     .npos = 0,
     .usage = "staging driver PERCENT % chunk-cost TIME",
     .attrs = a_staging},
    {.kw = "latency",
     .id = D_LATENCY,
     .npos = 0,
     .usage = "latency copy TIME chase TIME staged TIME",
     .attrs = a_latency},
    {.kw = "memory",
     .id = D_MEMORY,
     .npos = 1,
     .pos = {VT_NAME},
     .usage = "memory NAME numa N size SIZE",
     .attrs = a_memory},
    {.kw = "socket",
     .id = D_SOCKET,
     .npos = 1,
     .pos = {VT_NAME},
     .usage = "socket NAME [numa N]",
     .attrs = a_socket},
    {.kw = "switch", .id = D_SWITCH, .npos = 1, .pos = {VT_NAME}, .usage = "switch NAME", .attrs = a_bridge},
    {.kw = "bridge", .id = D_BRIDGE, .npos = 1, .pos = {VT_NAME}, .usage = "bridge NAME", .attrs = a_bridge},
    {.kw = "gpu",
     .id = D_GPU,
     .npos = 1,
     .pos = {VT_NAME},
     .usage = "gpu NAME model \"MODEL\" mem SIZE",
     .attrs = a_gpu},
    {.kw = "pcie",
     .id = D_PCIE,
     .npos = 2,
     .pos = {VT_NAME, VT_NAME},
     .usage = "pcie CHILD PARENT up BW down BW",
     .attrs = a_pcie},
    {.kw = "nvlink",
     .id = D_NVLINK,
     .npos = 2,
     .pos = {VT_NAME, VT_NAME},
     .usage = "nvlink GPU GPU links N rate BW",
     .attrs = a_nvlink},
    {.kw = "fabric",
     .id = D_FABRIC,
     .npos = 2,
     .pos = {VT_NAME, VT_NAME},
     .usage = "fabric A B cap BW",
     .attrs = a_fabric},
};
#define NDECLS ((int)(sizeof decls / sizeof decls[0]))

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

static int perr(pctx *p, int col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(pctx *p, int col, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gq_err_set(p->err, GQ_E_USAGE, "%s:%d:%d: %s", p->fname, p->line, col, msg);
}

static int perr_at(pctx *p, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int perr_at(pctx *p, int line, int col, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gq_err_set(p->err, GQ_E_USAGE, "%s:%d:%d: %s", p->fname, line, col, msg);
}

/* ---- tokenizer ------------------------------------------------------------ */

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

static int tokenize(pctx *p, const char *s, size_t n)
{
    p->nt = 0;
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (is_space(c)) {
            i++;
            continue;
        }
        if (c == '#')
            break;
        if (p->nt == MAX_TOK)
            return perr(p, (int)i + 1, "too many fields on one line (at most %d)", MAX_TOK);
        tok *t = &p->t[p->nt];
        t->col = (int)i + 1;
        t->quoted = false;
        size_t len = 0;
        if (c == '"') {
            t->quoted = true;
            i++;
            for (;;) {
                if (i >= n)
                    return perr(p, t->col, "unterminated string: add the closing '\"'");
                c = (unsigned char)s[i];
                if (c == '"') {
                    i++;
                    break;
                }
                if (c == '\\' && i + 1 < n && (s[i + 1] == '"' || s[i + 1] == '\\')) {
                    c = (unsigned char)s[i + 1];
                    i += 2;
                } else {
                    i++;
                }
                if (len >= TOK_MAX - 1)
                    return perr(p, t->col, "string longer than %d characters", TOK_MAX - 1);
                t->s[len++] = (char)c;
            }
            if (i < n && !is_space((unsigned char)s[i]) && s[i] != '#')
                return perr(p, (int)i + 1, "expected a space after the closing '\"'");
        } else {
            while (i < n && !is_space((unsigned char)s[i]) && s[i] != '#') {
                if (s[i] == '"')
                    return perr(p, (int)i + 1, "unexpected '\"' inside a word");
                if (len >= TOK_MAX - 1)
                    return perr(p, t->col, "word longer than %d characters", TOK_MAX - 1);
                t->s[len++] = s[i++];
            }
        }
        t->s[len] = 0;
        p->nt++;
    }
    return GQ_OK;
}

/* ---- values ---------------------------------------------------------------- */

static int unit_error(pctx *p, const tok *num, const tok *next, uclass want, const char *attr)
{
    if (next && !next->quoted) {
        const unit_def *u = find_unit(next->s);
        if (u)
            return perr(p, next->col, "wrong unit '%s' for %s ('%s' is %s); use %s", next->s, attr, next->s,
                        class_name(u->cls), class_units(want));
        for (size_t i = 0; i < sizeof unit_hints / sizeof unit_hints[0]; i++)
            if (!strcmp(unit_hints[i].name, next->s))
                return perr(p, next->col, "unit '%s' for %s: %s", next->s, attr, unit_hints[i].hint);
    }
    return perr(p, num->col, "missing unit after '%s' for %s: %s needs %s", num->s, attr, class_name(want),
                class_units(want));
}

/* A token that is a number glued to a unit ("25GB/s"). */
static int glued_error(pctx *p, const tok *t, const char *attr)
{
    size_t n = number_prefix(t->s);
    if (n && (find_unit(t->s + n) || (t->s[n] == 'x' && n == 0)))
        return perr(p, t->col, "write a space between the number and its unit: '%.*s %s'", (int)n, t->s,
                    t->s + n);
    return perr(p, t->col, "'%s' is not a number (for %s)", t->s, attr);
}

static bool is_keyword(const char *s)
{
    for (int i = 0; i < NDECLS; i++)
        if (!strcmp(decls[i].kw, s))
            return true;
    return false;
}

/* Parse one value of type a->t starting at token *ti; advances *ti. */
static int parse_value(pctx *p, vtype type, double lo, double hi, const char *attr, int *ti, val *v)
{
    if (*ti >= p->nt)
        return perr(p, p->t[p->nt - 1].col, "'%s' needs a value", attr);
    const tok *t = &p->t[*ti];
    v->set = true;
    v->col = t->col;
    switch (type) {
    case VT_STR:
        snprintf(v->str, sizeof v->str, "%s", t->s);
        if (!t->quoted && is_keyword(t->s))
            return perr(p, t->col, "'%s' needs a value before '%s'", attr, t->s);
        (*ti)++;
        return GQ_OK;
    case VT_WORD:
        if (t->quoted)
            return perr(p, t->col, "'%s' takes a bare word, not a quoted string", attr);
        snprintf(v->str, sizeof v->str, "%s", t->s);
        (*ti)++;
        return GQ_OK;
    case VT_NAME:
        if (t->quoted || !valid_name(t->s))
            return perr(
                p, t->col,
                "'%s' is not a valid node name: use letters, digits, '_', '-' and '.', starting with a "
                "letter, at most %d characters",
                t->s, GQ_SIM_NAME_MAX - 1);
        snprintf(v->str, sizeof v->str, "%s", t->s);
        (*ti)++;
        return GQ_OK;
    case VT_CC: {
        unsigned maj, min;
        char extra;
        if (t->quoted || sscanf(t->s, "%2u.%2u%c", &maj, &min, &extra) != 2 ||
            number_prefix(t->s) != strlen(t->s))
            return perr(p, t->col, "compute capability '%s' should look like 8.9", t->s);
        v->num = maj;
        v->num2 = min;
        (*ti)++;
        return GQ_OK;
    }
    case VT_INT: {
        long x;
        if (t->quoted || !lex_int(t->s, &x))
            return perr(p, t->col, "'%s' needs a whole number, not '%s'", attr, t->s);
        if (x < lo || x > hi)
            return perr(p, t->col, "'%s' is %ld; it must be between %.0f and %.0f", attr, x, lo, hi);
        v->num = (double)x;
        (*ti)++;
        return GQ_OK;
    }
    case VT_WIDTH: {
        long x;
        const char *s = t->s[0] == 'x' ? t->s + 1 : t->s;
        if (t->quoted || !lex_int(s, &x) || s[0] == '+' || s[0] == '-' ||
            !(x == 1 || x == 2 || x == 4 || x == 8 || x == 12 || x == 16 || x == 32))
            return perr(p, t->col, "'%s' is not a PCIe width; use x1, x2, x4, x8, x12, x16 or x32", t->s);
        v->num = (double)x;
        (*ti)++;
        return GQ_OK;
    }
    case VT_NUM:
    case VT_PAIR: {
        for (int k = 0; k < (type == VT_PAIR ? 2 : 1); k++) {
            if (*ti >= p->nt)
                return perr(p, p->t[p->nt - 1].col, "'%s' needs two numbers", attr);
            t = &p->t[*ti];
            double x;
            if (t->quoted || !lex_number(t->s, &x))
                return perr(p, t->col, "'%s' needs a number, not '%s'", attr, t->s);
            if (x <= lo || x > hi)
                return perr(p, t->col, "'%s' must be positive and at most %g, not %s", attr, hi, t->s);
            if (k == 0)
                v->num = x;
            else
                v->num2 = x;
            (*ti)++;
        }
        return GQ_OK;
    }
    default: break;
    }
    /* A number with a unit. */
    uclass want = vtype_class(type);
    double x;
    if (t->quoted || !lex_number(t->s, &x))
        return glued_error(p, t, attr);
    const tok *ut = *ti + 1 < p->nt ? &p->t[*ti + 1] : NULL;
    const unit_def *u = (ut && !ut->quoted) ? find_unit(ut->s) : NULL;
    if (!u || u->cls != want)
        return unit_error(p, t, ut, want, attr);
    double si = x * u->scale;
    switch (type) {
    case VT_BW:
        if (x <= 0)
            return perr(p, t->col, "'%s' is a capacity and must be positive, not %s %s", attr, t->s, ut->s);
        if (si > 1e15)
            return perr(p, t->col, "'%s' of %s %s is beyond any real link (at most 1000 TB/s)", attr, t->s,
                        ut->s);
        break;
    case VT_TIME:
        if (x < 0)
            return perr(p, t->col, "'%s' is a time and cannot be negative, not %s %s", attr, t->s, ut->s);
        if (si > 10.0)
            return perr(p, t->col, "'%s' of %s %s is too long (at most 10 s)", attr, t->s, ut->s);
        break;
    case VT_SIZE:
        if (x <= 0)
            return perr(p, t->col, "'%s' is a size and must be positive, not %s %s", attr, t->s, ut->s);
        if (si > 1125899906842624.0)
            return perr(p, t->col, "'%s' of %s %s is too large (at most 1024 TiB)", attr, t->s, ut->s);
        break;
    case VT_GTS:
        if (!(x == 2.5 || x == 5 || x == 8 || x == 16 || x == 32 || x == 64))
            return perr(p, t->col, "'%s' of %s GT/s is no PCIe generation; use 2.5, 5, 8, 16, 32 or 64 GT/s",
                        attr, t->s);
        break;
    case VT_WATT:
    case VT_MHZ:
        if (x <= 0 || si > 1e7)
            return perr(p, t->col, "'%s' must be positive and plausible, not %s %s", attr, t->s, ut->s);
        break;
    case VT_PCT:
        if (x < lo || x > hi)
            return perr(p, t->col, "'%s' is %s %%; it must be between %g %% and %g %%", attr, t->s, lo, hi);
        break;
    default: break;
    }
    v->num = si;
    *ti += 2;
    return GQ_OK;
}

/* ---- building the machine -------------------------------------------------- */

static int gen_from_gts(double gts)
{
    static const double g[] = {2.5, 5, 8, 16, 32, 64};
    for (int i = 0; i < 6; i++)
        if (gts == g[i])
            return i + 1;
    return 0;
}

static int find_node(const gq_sim_machine *m, const char *name)
{
    for (int i = 0; i < m->nnode; i++)
        if (!strcmp(m->nodes[i].name, name))
            return i;
    return -1;
}

static const char *kind_name(gq_sim_node_kind k)
{
    switch (k) {
    case GQ_SIM_MEMORY: return "memory";
    case GQ_SIM_SOCKET: return "socket";
    case GQ_SIM_SWITCH: return "switch";
    case GQ_SIM_BRIDGE: return "bridge";
    case GQ_SIM_GPU: return "gpu";
    }
    return "node";
}

static int unknown_node(pctx *p, int col, const char *name, const char *role)
{
    /* did-you-mean over the declared names */
    const char *best = NULL;
    int bestd = 1 << 30;
    for (int i = 0; i < p->m->nnode; i++) {
        int d = gq_levenshtein(name, p->m->nodes[i].name);
        if (d < bestd) {
            bestd = d;
            best = p->m->nodes[i].name;
        }
    }
    size_t len = strlen(name);
    if (best && bestd <= (len < 6 ? 1 : 2))
        return perr(p, col, "%s '%s' is not declared; did you mean '%s'? (declare nodes before linking them)",
                    role, name, best);
    return perr(p, col, "%s '%s' is not declared: a link to nowhere (declare nodes before linking them)",
                role, name);
}

static int add_node(pctx *p, gq_sim_node_kind kind, const tok *kwt)
{
    gq_sim_machine *m = p->m;
    const val *nv = &p->v[S_POS0];
    int prev = find_node(m, nv->str);
    if (prev >= 0)
        return perr(p, nv->col, "duplicate node '%s' (first declared at line %d)", nv->str,
                    m->nodes[prev].line);
    if (m->nnode == GQ_SIM_MAX_NODES)
        return perr(p, kwt->col, "too many nodes (at most %d)", GQ_SIM_MAX_NODES);
    gq_sim_node *n = &m->nodes[m->nnode];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    snprintf(n->name, sizeof n->name, "%.*s", GQ_SIM_NAME_MAX - 1, nv->str);
    n->line = p->line;
    n->col = kwt->col;
    n->numa = p->v[S_NUMA].set ? (int)p->v[S_NUMA].num : -1;
    n->gpu = -1;
    n->parent_link = -1;
    if (p->v[S_BUS].set)
        snprintf(n->bus, sizeof n->bus, "%.31s", p->v[S_BUS].str);
    n->p2p_flowcap = p->v[S_P2PFLOW].set ? p->v[S_P2PFLOW].num : 0;
    n->p2p_cost = p->v[S_P2PCOST].set ? p->v[S_P2PCOST].num : 0;
    if (kind == GQ_SIM_MEMORY) {
        if (!p->v[S_SIZE].set)
            return perr(p, kwt->col, "memory '%s' needs 'size SIZE' (e.g. size 256 GiB)", n->name);
        n->size = (uint64_t)p->v[S_SIZE].num;
        n->avail = p->v[S_AVAIL].set ? (uint64_t)p->v[S_AVAIL].num : n->size / 10 * 9;
        if (n->avail > n->size)
            return perr(p, p->v[S_AVAIL].col, "memory '%s': 'avail' is larger than 'size'", n->name);
        n->lat = p->v[S_LAT].set ? p->v[S_LAT].num : 100e-9;
        if (n->numa < 0)
            n->numa = 0;
    }
    if (kind == GQ_SIM_GPU) {
        if (m->ngpu == GQ_MAX_GPUS)
            return perr(p, kwt->col, "too many GPUs (at most %d)", GQ_MAX_GPUS);
        if (!p->v[S_MODEL].set)
            return perr(p, kwt->col, "gpu '%s' needs 'model \"NAME\"'", n->name);
        if (!p->v[S_MEM].set)
            return perr(p, kwt->col, "gpu '%s' needs 'mem SIZE' (e.g. mem 24 GiB)", n->name);
        int idx = m->ngpu;
        if (p->v[S_INDEX].set) {
            idx = (int)p->v[S_INDEX].num;
            p->gpu_index_given = true;
        } else {
            p->gpu_index_missing = true;
        }
        if (p->gpu_index_given && p->gpu_index_missing)
            return perr(p, kwt->col, "give 'index N' to every gpu or to none");
        if (p->gpu_index_given && idx >= GQ_MAX_GPUS)
            return perr(p, p->v[S_INDEX].col, "GPU index %d is out of range", idx);
        for (int g = 0; g < m->ngpu; g++)
            if (p->gpu_index_given && m->nodes[m->gpus[g].node].gpu == idx)
                return perr(p, p->v[S_INDEX].col, "GPU index %d is used twice (first by '%s')", idx,
                            m->nodes[m->gpus[g].node].name);
        gq_sim_gpu *g = &m->gpus[m->ngpu];
        memset(g, 0, sizeof *g);
        g->node = m->nnode;
        n->gpu = idx;
        snprintf(g->model, sizeof g->model, "%.95s", p->v[S_MODEL].str);
        g->mem = (uint64_t)p->v[S_MEM].num;
        if (p->v[S_BUS].set)
            snprintf(g->bus, sizeof g->bus, "%.31s", p->v[S_BUS].str);
        g->cc_major = p->v[S_CC].set ? (int)p->v[S_CC].num : -1;
        g->cc_minor = p->v[S_CC].set ? (int)p->v[S_CC].num2 : -1;
        g->sms = p->v[S_SMS].set ? (int)p->v[S_SMS].num : -1;
        g->power_w = p->v[S_POWER].set ? p->v[S_POWER].num : 0;
        g->clock_mhz = p->v[S_CLOCK].set ? p->v[S_CLOCK].num : 0;
        g->local_copy = p->v[S_LOCALCOPY].set ? p->v[S_LOCALCOPY].num : 500e9;
        g->memlat = p->v[S_MEMLAT].set ? p->v[S_MEMLAT].num : 300e-9;
        g->max_gts = p->v[S_MAXRATE].set ? p->v[S_MAXRATE].num : 0;
        g->max_width = p->v[S_MAXWIDTH].set ? (int)p->v[S_MAXWIDTH].num : 0;
        m->ngpu++;
    }
    m->nnode++;
    return GQ_OK;
}

static bool node_is(const gq_sim_node *n, unsigned mask)
{
    return (mask >> n->kind) & 1u;
}
#define K(k) (1u << (k))

/* The link's ends suit its kind (a PCIe child under a parent without a loop,
 * NVLink between GPUs, no fabric to a GPU) and are not linked already. */
static int check_link_ends(pctx *p, gq_sim_link_kind kind, const tok *kwt, int a, int b)
{
    gq_sim_machine *m = p->m;
    const val *va = &p->v[S_POS0], *vb = &p->v[S_POS1];
    gq_sim_node *na = &m->nodes[a], *nb = &m->nodes[b];
    switch (kind) {
    case GQ_SIM_LINK_PCIE:
        if (!node_is(na, K(GQ_SIM_GPU) | K(GQ_SIM_SWITCH) | K(GQ_SIM_BRIDGE)))
            return perr(p, va->col, "a PCIe child must be a gpu, switch or bridge; '%s' is a %s", na->name,
                        kind_name(na->kind));
        if (!node_is(nb, K(GQ_SIM_SOCKET) | K(GQ_SIM_SWITCH) | K(GQ_SIM_BRIDGE)))
            return perr(p, vb->col, "a PCIe parent must be a socket, switch or bridge; '%s' is a %s",
                        nb->name, kind_name(nb->kind));
        if (na->parent_link >= 0)
            return perr(p, va->col, "'%s' already has a PCIe parent ('%s', line %d)", na->name,
                        m->nodes[m->links[na->parent_link].b].name, m->links[na->parent_link].line);
        for (int up = b, guard = 0; up >= 0 && guard <= m->nnode; guard++) {
            if (up == a)
                return perr(p, vb->col, "linking '%s' under '%s' makes a loop in the PCIe tree", na->name,
                            nb->name);
            int pl = m->nodes[up].parent_link;
            up = pl >= 0 ? m->links[pl].b : -1;
        }
        break;
    case GQ_SIM_LINK_NVLINK:
        if (na->kind != GQ_SIM_GPU)
            return perr(p, va->col, "NVLink joins GPUs; '%s' is a %s", na->name, kind_name(na->kind));
        if (nb->kind != GQ_SIM_GPU)
            return perr(p, vb->col, "NVLink joins GPUs; '%s' is a %s", nb->name, kind_name(nb->kind));
        break;
    case GQ_SIM_LINK_FABRIC:
        if (na->kind == GQ_SIM_GPU)
            return perr(p, va->col, "GPUs attach through 'pcie' or 'nvlink', not 'fabric' ('%s')", na->name);
        if (nb->kind == GQ_SIM_GPU)
            return perr(p, vb->col, "GPUs attach through 'pcie' or 'nvlink', not 'fabric' ('%s')", nb->name);
        if (na->kind == GQ_SIM_MEMORY && nb->kind == GQ_SIM_MEMORY)
            return perr(p, vb->col,
                        "a link between two memory nodes carries nothing; link memory to a socket");
        break;
    }
    for (int l = 0; l < m->nlink; l++) {
        const gq_sim_link *o = &m->links[l];
        if ((o->a == a && o->b == b) || (o->a == b && o->b == a))
            return perr(p, kwt->col, "a second link between '%s' and '%s' (first at line %d); merge them",
                        na->name, nb->name, o->line);
    }
    return GQ_OK;
}

/* The slots holding the capacities a -> b (*fwd) and b -> a (*rev): up/down
 * and read/write are aliases of fwd/rev. */
static int link_dir_slots(pctx *p, gq_sim_link_kind kind, const gq_sim_node *na, const gq_sim_node *nb,
                          int *fwd, int *rev)
{
    val *v = p->v;
    /* Direction aliases: up/down on PCIe (up = child -> parent = a -> b),
     * read/write on a fabric link to memory (read = out of memory). */
    int fwd_slot = S_FWD, rev_slot = S_REV;
    if (kind == GQ_SIM_LINK_PCIE) {
        if (v[S_UP].set && v[S_FWD].set)
            return perr(p, v[S_UP].col, "'up' and 'fwd' name the same direction; give one");
        if (v[S_DOWN].set && v[S_REV].set)
            return perr(p, v[S_DOWN].col, "'down' and 'rev' name the same direction; give one");
        /* name the directions as the line does */
        if (v[S_UP].set || (v[S_DOWN].set && !v[S_FWD].set))
            fwd_slot = S_UP;
        if (v[S_DOWN].set || (v[S_UP].set && !v[S_REV].set))
            rev_slot = S_DOWN;
    }
    if (kind == GQ_SIM_LINK_FABRIC && (v[S_READ].set || v[S_WRITE].set)) {
        int memend = na->kind == GQ_SIM_MEMORY ? 0 : (nb->kind == GQ_SIM_MEMORY ? 1 : -1);
        int col = v[S_READ].set ? v[S_READ].col : v[S_WRITE].col;
        if (memend < 0)
            return perr(p, col, "'read' and 'write' apply to a link to a memory node; use 'fwd' and 'rev'");
        if (v[S_FWD].set || v[S_REV].set)
            return perr(p, col, "give 'read'/'write' or 'fwd'/'rev', not both");
        /* read leaves memory: a -> b when memory is a */
        if (memend == 0) {
            fwd_slot = S_READ;
            rev_slot = S_WRITE;
        } else {
            fwd_slot = S_WRITE;
            rev_slot = S_READ;
        }
    }
    *fwd = fwd_slot;
    *rev = rev_slot;
    return GQ_OK;
}

/* The link's capacity per direction: given, per direction, or from its PCIe
 * rate and width or its NVLink count and rate; the PCIe and NVLink fields. */
static int link_capacity(pctx *p, gq_sim_link_kind kind, const tok *kwt, gq_sim_link *L, int fwd_slot,
                         int rev_slot)
{
    gq_sim_machine *m = p->m;
    const gq_sim_node *na = &m->nodes[L->a], *nb = &m->nodes[L->b];
    val *v = p->v;
    bool any_dir = v[fwd_slot].set || v[rev_slot].set;
    if (v[S_CAP].set && any_dir)
        return perr(p, v[S_CAP].col,
                    "give either 'cap' (both directions) or a capacity per direction, not both");
    if (kind == GQ_SIM_LINK_PCIE) {
        L->gts = v[S_RATE].set ? v[S_RATE].num : 0;
        L->width = v[S_WIDTH].set ? (int)v[S_WIDTH].num : 0;
        if (v[S_RATE].set != v[S_WIDTH].set)
            return perr(p, (v[S_RATE].set ? v[S_RATE] : v[S_WIDTH]).col,
                        "give both 'rate GT/s' and 'width xN'");
    }
    if (kind == GQ_SIM_LINK_NVLINK) {
        L->nvl = v[S_LINKS].set ? (int)v[S_LINKS].num : 0;
        L->nvl_rate = v[S_NVRATE].set ? v[S_NVRATE].num : 0;
        if (!L->nvl)
            return perr(p, kwt->col, "nvlink needs 'links N' (the number of NVLinks in the bundle)");
    }
    if (v[S_CAP].set) {
        L->cap[0] = L->cap[1] = v[S_CAP].num;
    } else if (any_dir) {
        if (!v[fwd_slot].set || !v[rev_slot].set) {
            static const char *const names[NSLOT] = {
                [S_FWD] = "fwd",   [S_REV] = "rev",   [S_UP] = "up",
                [S_DOWN] = "down", [S_READ] = "read", [S_WRITE] = "write"};
            int have = v[fwd_slot].set ? fwd_slot : rev_slot, miss = v[fwd_slot].set ? rev_slot : fwd_slot;
            return perr(p, v[have].col, "'%s' is given but '%s' is missing: give both directions, or 'cap'",
                        names[have], names[miss]);
        }
        L->cap[0] = v[fwd_slot].num;
        L->cap[1] = v[rev_slot].num;
    } else if (kind == GQ_SIM_LINK_PCIE && L->gts > 0) {
        L->cap[0] = L->cap[1] = gq_pcie_gbps(gen_from_gts(L->gts), L->width) * 1e9;
    } else if (kind == GQ_SIM_LINK_NVLINK && L->nvl_rate > 0) {
        L->cap[0] = L->cap[1] = L->nvl * L->nvl_rate;
    } else {
        return perr(p, kwt->col, "the link %s-%s needs a capacity: 'cap BW', or one per direction", na->name,
                    nb->name);
    }
    return GQ_OK;
}

/* Duplex limit and weights, flow caps, SM share, latency and cost. */
static int link_extras(pctx *p, gq_sim_link *L)
{
    val *v = p->v;
    L->duplex = v[S_DUPLEX].set ? v[S_DUPLEX].num : 0;
    if (v[S_WEIGHTS].set) {
        if (!v[S_DUPLEX].set)
            return perr(p, v[S_WEIGHTS].col, "'weights' share a duplex limit; give 'duplex BW' too");
        L->w[0] = v[S_WEIGHTS].num;
        L->w[1] = v[S_WEIGHTS].num2;
    }
    L->flowcap = v[S_FLOWCAP].set ? v[S_FLOWCAP].num : 0;
    L->p2p_flowcap = v[S_P2PFLOW].set ? v[S_P2PFLOW].num : 0;
    if (v[S_P2PFWD].set != v[S_P2PREV].set)
        return perr(p, (v[S_P2PFWD].set ? v[S_P2PFWD] : v[S_P2PREV]).col,
                    "give both 'p2p-fwd' and 'p2p-rev' (a peer-to-peer stream cap per direction)");
    if (v[S_P2PFWD].set && v[S_P2PFLOW].set)
        return perr(p, v[S_P2PFWD].col, "give either 'p2p-flowcap' or 'p2p-fwd'/'p2p-rev', not both");
    L->p2p_dircap[0] = v[S_P2PFWD].set ? v[S_P2PFWD].num : 0;
    L->p2p_dircap[1] = v[S_P2PREV].set ? v[S_P2PREV].num : 0;
    L->sm_frac = v[S_SM].set ? v[S_SM].num : 0;
    L->lat = v[S_LAT].set ? v[S_LAT].num : 0;
    L->cost = v[S_COST].set ? v[S_COST].num : 0;
    return GQ_OK;
}

static int add_link(pctx *p, gq_sim_link_kind kind, const tok *kwt)
{
    gq_sim_machine *m = p->m;
    const val *va = &p->v[S_POS0], *vb = &p->v[S_POS1];
    int a = find_node(m, va->str), b = find_node(m, vb->str);
    const char *ra = kind == GQ_SIM_LINK_PCIE ? "child" : "node",
               *rb = kind == GQ_SIM_LINK_PCIE ? "parent" : "node";
    if (a < 0)
        return unknown_node(p, va->col, va->str, ra);
    if (b < 0)
        return unknown_node(p, vb->col, vb->str, rb);
    if (a == b)
        return perr(p, vb->col, "a link from '%s' to itself", va->str);
    if (m->nlink == GQ_SIM_MAX_LINKS)
        return perr(p, kwt->col, "too many links (at most %d)", GQ_SIM_MAX_LINKS);
    int rc;
    if ((rc = check_link_ends(p, kind, kwt, a, b)))
        return rc;
    gq_sim_node *na = &m->nodes[a], *nb = &m->nodes[b];

    gq_sim_link *L = &m->links[m->nlink];
    memset(L, 0, sizeof *L);
    L->kind = kind;
    L->a = a;
    L->b = b;
    L->line = p->line;
    L->col = kwt->col;
    L->w[0] = L->w[1] = 1.0;
    int fwd_slot = S_FWD, rev_slot = S_REV;
    if ((rc = link_dir_slots(p, kind, na, nb, &fwd_slot, &rev_slot)) ||
        (rc = link_capacity(p, kind, kwt, L, fwd_slot, rev_slot)) || (rc = link_extras(p, L)))
        return rc;
    if (kind == GQ_SIM_LINK_PCIE)
        na->parent_link = m->nlink;
    na->nlinks++;
    nb->nlinks++;
    m->nlink++;
    return GQ_OK;
}

static int parse_p2p_status(const char *s, gq_p2p_status *out)
{
    static const struct {
        const char *n;
        gq_p2p_status s;
    } t[] = {{"OK", GQ_P2P_OK},   {"CNS", GQ_P2P_CNS}, {"GNS", GQ_P2P_GNS},
             {"TNS", GQ_P2P_TNS}, {"NS", GQ_P2P_NS},   {"DS", GQ_P2P_DISABLED}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(t[i].n, s)) {
            *out = t[i].s;
            return 0;
        }
    return -1;
}

static int declaration(pctx *p)
{
    const tok *kwt = &p->t[0];
    if (kwt->quoted)
        return perr(p, kwt->col, "a line starts with a keyword, not a quoted string");
    const decl_spec *d = NULL;
    for (int i = 0; i < NDECLS; i++)
        if (!strcmp(decls[i].kw, kwt->s))
            d = &decls[i];
    if (!d) {
        const char *names[NDECLS + 1];
        for (int i = 0; i < NDECLS; i++)
            names[i] = decls[i].kw;
        names[NDECLS] = NULL;
        const char *near = gq_closest(kwt->s, names);
        if (near)
            return perr(p, kwt->col, "unknown keyword '%s'; did you mean '%s'?", kwt->s, near);
        return perr(p, kwt->col, "unknown keyword '%s' (see docs/topology-format.md)", kwt->s);
    }
    if (d->id != D_MACHINE && !p->m->name[0])
        return perr(p, kwt->col, "a topology starts with 'machine NAME', before '%s'", d->kw);
    if (d->id <= D_LATENCY) {
        if (p->seen[d->id])
            return perr(p, kwt->col, "'%s' is declared twice (first at line %d)", d->kw, p->seen[d->id]);
        p->seen[d->id] = p->line;
    }
    memset(p->v, 0, sizeof p->v);
    int ti = 1;
    for (int k = 0; k < d->npos; k++) {
        if (ti >= p->nt)
            return perr(p, p->t[p->nt - 1].col, "'%s' needs its arguments: %s", d->kw, d->usage);
        int rc = parse_value(p, d->pos[k], -1e300, 1e300, d->kw, &ti, &p->v[S_POS0 + k]);
        if (rc)
            return rc;
    }
    /* attributes: NAME VALUE [UNIT] ... */
    while (ti < p->nt) {
        const tok *at = &p->t[ti];
        const attr_spec *a = NULL;
        for (const attr_spec *s = d->attrs; s->name; s++)
            if (!at->quoted && !strcmp(s->name, at->s))
                a = s;
        if (!a) {
            if (is_keyword(at->s))
                return perr(p, at->col, "'%s' starts a new declaration; put it on its own line", at->s);
            const char *names[48];
            int n = 0;
            for (const attr_spec *s = d->attrs; s->name && n < 47; s++)
                names[n++] = s->name;
            names[n] = NULL;
            if (n == 0)
                return perr(p, at->col, "unexpected '%s': '%s' takes no attributes (%s)", at->s, d->kw,
                            d->usage);
            const char *near = gq_closest(at->s, names);
            if (near)
                return perr(p, at->col, "unknown attribute '%s' for %s; did you mean '%s'?", at->s, d->kw,
                            near);
            return perr(p, at->col, "unknown attribute '%s' for %s", at->s, d->kw);
        }
        if (p->v[a->slot].set)
            return perr(p, at->col, "'%s' is given twice", a->name);
        ti++;
        int rc = parse_value(p, a->t, a->lo, a->hi, a->name, &ti, &p->v[a->slot]);
        if (rc)
            return rc;
    }

    gq_sim_machine *m = p->m;
    val *v = p->v;
    switch (d->id) {
    case D_MACHINE:
        if (m->name[0])
            return perr(p, kwt->col, "'machine' is declared twice");
        snprintf(m->name, sizeof m->name, "%.63s", v[S_POS0].str);
        return GQ_OK;
    case D_TITLE: snprintf(m->title, sizeof m->title, "%s", v[S_POS0].str); return GQ_OK;
    case D_CPU:
        snprintf(m->cpu_model, sizeof m->cpu_model, "%s", v[S_POS0].str);
        m->sockets = v[S_SOCKETS].set ? (int)v[S_SOCKETS].num : -1;
        m->cores = v[S_CORES].set ? (int)v[S_CORES].num : -1;
        return GQ_OK;
    case D_VM:
        m->vm = true;
        snprintf(m->hypervisor, sizeof m->hypervisor, "%.31s", v[S_POS0].str);
        m->vm_gpu_numa = v[S_GPUNUMA].set ? (int)v[S_GPUNUMA].num : -1;
        return GQ_OK;
    case D_NOISE:
        if (v[S_POS0].num > 0.5)
            return perr(p, v[S_POS0].col, "noise is a relative amplitude between 0 %% and 50 %%");
        if (v[S_POS0].num < 0)
            return perr(p, v[S_POS0].col, "noise cannot be negative");
        m->noise = v[S_POS0].num;
        return GQ_OK;
    case D_P2P:
        if (parse_p2p_status(v[S_POS0].str, &m->p2p))
            return perr(p, v[S_POS0].col, "unknown P2P status '%s'; use OK, CNS, GNS, TNS, NS or DS",
                        v[S_POS0].str);
        return GQ_OK;
    case D_STAGING:
        if (v[S_DRIVER].set)
            m->driver_factor = v[S_DRIVER].num;
        if (v[S_CHUNKCOST].set)
            m->chunk_cost = v[S_CHUNKCOST].num;
        return GQ_OK;
    case D_LATENCY:
        if (v[S_COPY].set)
            m->lat_copy = v[S_COPY].num;
        if (v[S_CHASE].set)
            m->lat_chase = v[S_CHASE].num;
        if (v[S_STAGED].set)
            m->lat_staged = v[S_STAGED].num;
        return GQ_OK;
    case D_MEMORY: return add_node(p, GQ_SIM_MEMORY, kwt);
    case D_SOCKET: return add_node(p, GQ_SIM_SOCKET, kwt);
    case D_SWITCH: return add_node(p, GQ_SIM_SWITCH, kwt);
    case D_BRIDGE: return add_node(p, GQ_SIM_BRIDGE, kwt);
    case D_GPU: return add_node(p, GQ_SIM_GPU, kwt);
    case D_PCIE: return add_link(p, GQ_SIM_LINK_PCIE, kwt);
    case D_NVLINK: return add_link(p, GQ_SIM_LINK_NVLINK, kwt);
    case D_FABRIC: return add_link(p, GQ_SIM_LINK_FABRIC, kwt);
    case ND: break;
    }
    return GQ_OK;
}

/* ---- whole-machine checks ---------------------------------------------------- */

static int build_adjacency(gq_sim_machine *m)
{
    m->adj_off = calloc((size_t)m->nnode + 1, sizeof *m->adj_off);
    m->adj = calloc((size_t)m->nlink * 2 + 1, sizeof *m->adj);
    if (!m->adj_off || !m->adj)
        return GQ_E_NOMEM;
    for (int l = 0; l < m->nlink; l++) {
        m->adj_off[m->links[l].a + 1]++;
        m->adj_off[m->links[l].b + 1]++;
    }
    for (int n = 0; n < m->nnode; n++)
        m->adj_off[n + 1] += m->adj_off[n];
    int *fill = calloc((size_t)m->nnode + 1, sizeof *fill);
    if (!fill)
        return GQ_E_NOMEM;
    for (int l = 0; l < m->nlink; l++) {
        int a = m->links[l].a, b = m->links[l].b;
        m->adj[m->adj_off[a] + fill[a]++] = l;
        m->adj[m->adj_off[b] + fill[b]++] = l;
    }
    free(fill);
    return GQ_OK;
}

static int check_machine(pctx *p)
{
    gq_sim_machine *m = p->m;
    if (!m->name[0])
        return perr_at(
            p, 1, 1,
            "empty topology: it needs 'machine NAME', nodes and links (see docs/topology-format.md)");
    int mline = p->seen[D_MACHINE] > 0 ? p->seen[D_MACHINE] : 1;
    if (m->ngpu == 0)
        return perr_at(p, mline, 1, "machine '%s' declares no 'gpu'", m->name);
    int nmem = 0;
    for (int n = 0; n < m->nnode; n++)
        nmem += m->nodes[n].kind == GQ_SIM_MEMORY;
    if (nmem == 0)
        return perr_at(p, mline, 1, "machine '%s' declares no host 'memory'", m->name);
    /* GPU indices 0..ngpu-1, each once; gpus[] sorted by index. */
    gq_sim_gpu sorted[GQ_MAX_GPUS];
    for (int g = 0; g < m->ngpu; g++) {
        const gq_sim_node *n = &m->nodes[m->gpus[g].node];
        if (n->gpu >= m->ngpu)
            return perr_at(p, n->line, n->col, "GPU index %d of '%s' leaves a gap: %d GPUs need indices 0-%d",
                           n->gpu, n->name, m->ngpu, m->ngpu - 1);
        sorted[n->gpu] = m->gpus[g];
    }
    memcpy(m->gpus, sorted, sizeof sorted[0] * (size_t)m->ngpu);
    for (int n = 0; n < m->nnode; n++) {
        const gq_sim_node *nd = &m->nodes[n];
        if (nd->nlinks == 0)
            return perr_at(p, nd->line, nd->col, "%s '%s' is linked to nothing", kind_name(nd->kind),
                           nd->name);
        if (nd->kind == GQ_SIM_GPU && nd->parent_link < 0)
            return perr_at(p, nd->line, nd->col, "gpu '%s' has no PCIe link: add 'pcie %s PARENT ...'",
                           nd->name, nd->name);
    }
    /* NUMA nodes 0..k-1 */
    bool numa[GQ_MAX_NUMA] = {false};
    for (int n = 0; n < m->nnode; n++)
        if (m->nodes[n].kind == GQ_SIM_MEMORY)
            numa[m->nodes[n].numa] = true;
    for (int k = 0, gap = 0; k < GQ_MAX_NUMA; k++) {
        if (!numa[k])
            gap = 1;
        else if (gap) {
            for (int n = 0; n < m->nnode; n++)
                if (m->nodes[n].kind == GQ_SIM_MEMORY && m->nodes[n].numa == k)
                    return perr_at(p, m->nodes[n].line, m->nodes[n].col,
                                   "NUMA nodes must be numbered from 0 without gaps; '%s' is node %d",
                                   m->nodes[n].name, k);
        }
    }
    int rc = build_adjacency(m);
    if (rc)
        return gq_err_set(p->err, rc, "out of memory");
    for (int g = 0; g < m->ngpu; g++) {
        const gq_sim_node *n = &m->nodes[m->gpus[g].node];
        if (gq_sim_nearest_memory(m, m->gpus[g].node, -1) < 0)
            return perr_at(p, n->line, n->col, "gpu '%s' has no path to host memory", n->name);
    }
    for (int n = 0; n < m->nnode; n++) {
        gq_sim_node *nd = &m->nodes[n];
        if (nd->kind == GQ_SIM_SOCKET && nd->numa < 0) {
            int mem = gq_sim_nearest_memory(m, n, -1);
            nd->numa = mem >= 0 ? m->nodes[mem].numa : 0;
        }
    }
    return GQ_OK;
}

/* ---- entry points ------------------------------------------------------------- */

void gq_sim_machine_free(gq_sim_machine *m)
{
    if (!m)
        return;
    free(m->nodes);
    free(m->links);
    free(m->adj_off);
    free(m->adj);
    free(m);
}

int gq_sim_parse(const char *text, size_t len, const char *fname, gq_sim_machine **out, gq_err *err)
{
    *out = NULL;
    pctx *p = calloc(1, sizeof *p);
    gq_sim_machine *m = calloc(1, sizeof *m);
    int rc = GQ_OK;
    if (!p || !m) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        goto out;
    }
    p->fname = fname ? fname : "topology";
    p->err = err;
    p->m = m;
    snprintf(m->file, sizeof m->file, "%s", p->fname);
    m->noise = 0.003;
    m->p2p = GQ_P2P_OK;
    m->driver_factor = 1.0;
    m->lat_copy = 2e-6;
    m->lat_chase = 100e-9;
    m->lat_staged = 10e-6;
    m->sockets = m->cores = -1;
    m->vm_gpu_numa = -1;
    if (len > GQ_SIM_MAX_FILE) {
        p->line = 1;
        rc = perr(p, 1, "topology is %zu bytes; the limit is %d bytes (1 MiB)", len, GQ_SIM_MAX_FILE);
        goto out;
    }
    /* Binary: any control byte other than tab, CR, LF, anywhere. */
    {
        int line = 1, col = 1;
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)text[i];
            if (c == '\n') {
                line++;
                col = 1;
                continue;
            }
            if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) {
                p->line = line;
                rc = perr(p, col, "binary data (byte 0x%02x): a topology file is text", c);
                goto out;
            }
            col++;
        }
    }
    m->nodes = calloc(16, sizeof *m->nodes);
    m->links = calloc(16, sizeof *m->links);
    size_t node_cap = 16, link_cap = 16;
    if (!m->nodes || !m->links) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        goto out;
    }
    size_t pos = 0;
    p->line = 0;
    while (pos < len) {
        const char *s = text + pos;
        const char *nl = memchr(s, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - s) : len - pos;
        pos += n + (nl ? 1 : 0);
        p->line++;
        if (n > LINE_MAX_LEN) {
            rc = perr(p, LINE_MAX_LEN + 1, "line longer than %d characters", LINE_MAX_LEN);
            goto out;
        }
        if ((rc = tokenize(p, s, n)))
            goto out;
        if (p->nt == 0)
            continue;
        /* grow the node and link arrays ahead of the declaration */
        if ((size_t)m->nnode + 1 > node_cap && node_cap < GQ_SIM_MAX_NODES) {
            size_t nc = node_cap * 2 > GQ_SIM_MAX_NODES ? GQ_SIM_MAX_NODES : node_cap * 2;
            gq_sim_node *nn = realloc(m->nodes, nc * sizeof *nn);
            if (!nn) {
                rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
                goto out;
            }
            m->nodes = nn;
            node_cap = nc;
        }
        if ((size_t)m->nlink + 1 > link_cap && link_cap < GQ_SIM_MAX_LINKS) {
            size_t nc = link_cap * 2 > GQ_SIM_MAX_LINKS ? GQ_SIM_MAX_LINKS : link_cap * 2;
            gq_sim_link *nl2 = realloc(m->links, nc * sizeof *nl2);
            if (!nl2) {
                rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
                goto out;
            }
            m->links = nl2;
            link_cap = nc;
        }
        if ((rc = declaration(p)))
            goto out;
    }
    if (p->line == 0)
        p->line = 1;
    if (!m->name[0]) {
        rc = perr_at(p, 1, 1, "empty topology: no 'machine NAME' declaration (see docs/topology-format.md)");
        goto out;
    }
    if ((rc = check_machine(p)))
        goto out;
    *out = m;
    m = NULL;
out:
    gq_sim_machine_free(m);
    free(p);
    return rc;
}

int gq_sim_load_file(const char *path, gq_sim_machine **out, gq_err *err)
{
    *out = NULL;
    char *buf = NULL;
    int rc = GQ_OK;
    FILE *f = fopen(path, "rb");
    if (!f)
        return gq_err_set(err, GQ_E_USAGE, "%s:1:1: cannot open the topology file: %s", path,
                          strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        rc = gq_err_set(err, GQ_E_USAGE, "%s:1:1: is a directory, not a topology file", path);
        goto out;
    }
    buf = malloc(GQ_SIM_MAX_FILE + 1);
    if (!buf) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        goto out;
    }
    size_t n = fread(buf, 1, GQ_SIM_MAX_FILE + 1, f);
    if (ferror(f)) {
        rc = gq_err_set(err, GQ_E_USAGE, "%s:1:1: cannot read the topology file: %s", path, strerror(errno));
        goto out;
    }
    if (n > GQ_SIM_MAX_FILE) {
        rc = gq_err_set(err, GQ_E_USAGE,
                        "%s:1:1: the topology file is larger than 1 MiB; is it the right file?", path);
        goto out;
    }
    if (n == 0) {
        rc = gq_err_set(err, GQ_E_USAGE,
                        "%s:1:1: the topology file is empty; it needs 'machine NAME', nodes and links", path);
        goto out;
    }
    rc = gq_sim_parse(buf, n, path, out, err);
out:
    free(buf);
    fclose(f);
    return rc;
}

const char *const *gq_sim_builtin_names(void)
{
    static const char *names[16];
    if (!names[0])
        for (int i = 0; i < gq_sim_nbuiltins && i < 15; i++)
            names[i] = gq_sim_builtins[i].name;
    return names;
}

int gq_sim_load(const char *spec, gq_sim_machine **out, gq_err *err)
{
    *out = NULL;
    if (!spec)
        spec = "rtx4090x8";
    if (!spec[0])
        return gq_err_set(err, GQ_E_USAGE, "--sim needs a topology file or a built-in machine name");
    struct stat st;
    size_t len = strlen(spec);
    if (stat(spec, &st) == 0 || strchr(spec, '/') || (len > 5 && !strcmp(spec + len - 5, ".topo")))
        return gq_sim_load_file(spec, out, err);
    for (int i = 0; i < gq_sim_nbuiltins; i++)
        if (!strcmp(gq_sim_builtins[i].name, spec)) {
            char fname[96];
            snprintf(fname, sizeof fname, "builtin:%s.topo", spec);
            return gq_sim_parse(gq_sim_builtins[i].text, gq_sim_builtins[i].len, fname, out, err);
        }
    char list[256] = "";
    for (int i = 0; i < gq_sim_nbuiltins; i++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", gq_sim_builtins[i].name);
    }
    const char *near = gq_closest(spec, gq_sim_builtin_names());
    if (near)
        return gq_err_set(err, GQ_E_USAGE,
                          "no topology file or built-in machine '%s'; did you mean '%s'? (built-in: %s)",
                          spec, near, list);
    return gq_err_set(err, GQ_E_USAGE,
                      "no topology file or built-in machine '%s' (built-in: %s, or a file path)", spec, list);
}
