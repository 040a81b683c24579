/* The topology parser's refusals that tests/sim/bad does not reach, each
 * with its position and words: the wrong kinds at a link's ends, the
 * attributes a node must have, the direction aliases given twice, a missing
 * capacity or unit of every kind, the tokenizer's quoting mistakes and the
 * node, GPU and link limits. Written for issue 30 (lines no test ran).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "backend/sim/sim.h"
#include "simtest.h"

/* five valid lines; each case adds its own from line 6 */
static const char base[] = "machine t\n"
                           "memory mem0 numa 0 size 16 GiB\n"
                           "socket cpu0\n"
                           "fabric mem0 cpu0 cap 50 GB/s\n"
                           "gpu gpu0 model \"G\" mem 8 GiB\n";

typedef struct err_case {
    const char *more; /* lines after base */
    int line, col;
    const char *text;
} err_case;

static const err_case cases[] = {
    /* the kinds at a link's ends, named in the message */
    {"switch sw0\npcie cpu0 sw0 cap 1 GB/s\n", 7, 6,
     "a PCIe child must be a gpu, switch or bridge; 'cpu0' is a socket"},
    {"bridge br0\nnvlink gpu0 br0 links 1\n", 7, 13,
     "NVLink joins a GPU to a GPU or an nvswitch; 'br0' is a bridge"},
    {"gpu gpu1 model \"G\" mem 8 GiB\npcie gpu0 gpu1 cap 1 GB/s\n", 7, 11,
     "a PCIe parent must be a socket, switch or bridge; 'gpu1' is a gpu"},
    {"pcie gpu0 cpu0 cap 1 GB/s\nswitch sw0\npcie sw0 cpu0 cap 1 GB/s\npcie gpu0 sw0 cap 1 GB/s\n", 9, 6,
     "'gpu0' already has a PCIe parent ('cpu0', line 6)"},
    {"fabric gpu0 cpu0 cap 1 GB/s\n", 6, 8, "GPUs attach through 'pcie' or 'nvlink', not 'fabric' ('gpu0')"},
    {"fabric cpu0 gpu0 cap 1 GB/s\n", 6, 13, "GPUs attach through 'pcie' or 'nvlink', not 'fabric' ('gpu0')"},
    {"memory mem1 numa 1 size 1 GiB\nfabric mem0 mem1 cap 1 GB/s\n", 7, 13,
     "a link between two memory nodes carries nothing; link memory to a socket"},
    {"pcie gpuX cpu0 cap 1 GB/s\n", 6, 6, "child 'gpuX' is not declared; did you mean 'gpu0'?"},
    /* what a node must have */
    {"memory mem1 numa 1\n", 6, 1, "memory 'mem1' needs 'size SIZE' (e.g. size 256 GiB)"},
    {"memory mem1 numa 1 size 1 GiB avail 2 GiB\n", 6, 37, "memory 'mem1': 'avail' is larger than 'size'"},
    {"gpu gpu1 mem 8 GiB\n", 6, 1, "gpu 'gpu1' needs 'model \"NAME\"'"},
    /* directions and capacities */
    {"pcie gpu0 cpu0 up 1 GB/s fwd 1 GB/s\n", 6, 19, "'up' and 'fwd' name the same direction; give one"},
    {"pcie gpu0 cpu0 down 1 GB/s rev 1 GB/s\n", 6, 21, "'down' and 'rev' name the same direction; give one"},
    {"switch sw0\nfabric cpu0 sw0 read 1 GB/s write 1 GB/s\n", 7, 22,
     "'read' and 'write' apply to a link to a memory node; use 'fwd' and 'rev'"},
    {"pcie gpu0 cpu0 cap 1 GB/s up 1 GB/s down 1 GB/s\n", 6, 20,
     "give either 'cap' (both directions) or a capacity per direction, not both"},
    {"gpu gpu1 model \"G\" mem 8 GiB\nnvlink gpu0 gpu1 cap 1 GB/s\n", 7, 1,
     "nvlink needs 'links N' (the number of NVLinks in the bundle)"},
    {"pcie gpu0 cpu0\n", 6, 1, "the link gpu0-cpu0 needs a capacity: 'cap BW', or one per direction"},
    /* declarations and attributes */
    {"\"socket\" cpu1\n", 6, 1, "a line starts with a keyword, not a quoted string"},
    {"socket cpu1 gpu gpu1\n", 6, 13, "'gpu' starts a new declaration; put it on its own line"},
    {"nvswitch nv0 foo 1\n", 6, 14, "unexpected 'foo': 'nvswitch' takes no attributes (nvswitch NAME)"},
    {"socket cpu1 zzzzzzzz 1\n", 6, 13, "unknown attribute 'zzzzzzzz' for socket"},
    {"socket cpu1 numa 0 numa 0\n", 6, 20, "'numa' is given twice"},
    {"noise 60 %\n", 6, 7, "noise is a relative amplitude between 0 % and 50 %"},
    {"noise -1 %\n", 6, 7, "noise cannot be negative"},
    {"title gpu\n", 6, 7, "'title' needs a value before 'gpu'"},
    {"vm \"kvm\"\n", 6, 4, "'vm' takes a bare word, not a quoted string"},
    /* the tokenizer */
    {"title \"abc\"x\n", 6, 12, "expected a space after the closing '\"'"},
    {"title ab\"c\n", 6, 9, "unexpected '\"' inside a word"},
    /* a missing unit names the class and its units; a wrong one, its class */
    {"latency copy 3\n", 6, 14, "missing unit after '3' for copy: a time needs ns, us, ms or s"},
    {"memory mem1 numa 1 size 1\n", 6, 25,
     "missing unit after '1' for size: a size needs KiB, MiB, GiB or TiB"},
    {"pcie gpu0 cpu0 rate 16 width x16\n", 6, 21,
     "missing unit after '16' for rate: a PCIe lane rate needs GT/s"},
    {"gpu gpu1 model \"G\" mem 8 GiB power 300\n", 6, 36,
     "missing unit after '300' for power: a power needs W"},
    {"gpu gpu1 model \"G\" mem 8 GiB clock 1500\n", 6, 36,
     "missing unit after '1500' for clock: a clock needs MHz or GHz"},
    {"noise 1\n", 6, 7, "missing unit after '1' for noise: a percentage needs %"},
    {"latency copy 3 W\n", 6, 16, "wrong unit 'W' for copy ('W' is a power); use ns, us, ms or s"},
    {"latency copy 3 GHz\n", 6, 16, "wrong unit 'GHz' for copy ('GHz' is a clock); use ns, us, ms or s"},
    {"latency copy 3 %\n", 6, 16, "wrong unit '%' for copy ('%' is a percentage); use ns, us, ms or s"},
    {"latency copy 3 GT/s\n", 6, 16, "wrong unit 'GT/s' for copy ('GT/s' is a PCIe lane rate); use ns"},
    {"latency copy 3 GiB\n", 6, 16, "wrong unit 'GiB' for copy ('GiB' is a size); use ns"},
    {"memory mem1 numa 1 size 1 us\n", 6, 27, "wrong unit 'us' for size ('us' is a time); use KiB"},
    /* values out of range */
    {"switch sw0\nfabric cpu0 sw0 cap 1 GB/s weights a 1\n", 7, 36, "'weights' needs a number, not 'a'"},
    {"latency copy -1 us\n", 6, 14, "'copy' is a time and cannot be negative, not -1 us"},
    {"latency copy 11 s\n", 6, 14, "'copy' of 11 s is too long (at most 10 s)"},
    {"memory mem1 numa 1 size 0 GiB\n", 6, 25, "'size' is a size and must be positive, not 0 GiB"},
    {"gpu gpu1 model \"G\" mem 8 GiB power 0 W\n", 6, 36, "'power' must be positive and plausible, not 0 W"},
};

static void expect_refusal(const char *text, size_t n, int line, int col, const char *want)
{
    gq_sim_machine *m = (gq_sim_machine *)1;
    gq_err e = {0};
    int rc = gq_sim_parse(text, n, "x", &m, &e);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "x:%d:%d: ", line, col);
    if (rc != GQ_E_USAGE || strncmp(e.msg, prefix, strlen(prefix)) || !strstr(e.msg, want))
        fail_msg("want %d '%s...%s', got %d '%s'", GQ_E_USAGE, prefix, want, rc, e.msg);
    assert_null(m);
}

static void table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        int n = snprintf(text, sizeof text, "%s%s", base, cases[i].more);
        assert_true(n > 0 && (size_t)n < sizeof text);
        expect_refusal(text, (size_t)n, cases[i].line, cases[i].col, cases[i].text);
    }
    /* the base itself is a valid machine but for its GPU's link */
    static const char ok[] = "pcie gpu0 cpu0 cap 16 GB/s\n";
    char text[512];
    int n = snprintf(text, sizeof text, "%s%s", base, ok);
    gq_sim_machine *m = NULL;
    gq_err e = {0};
    assert_int_equal(gq_sim_parse(text, (size_t)n, "x", &m, &e), GQ_OK);
    assert_int_equal(m->ngpu, 1);
    gq_sim_machine_free(m);
}

/* A GPU index given twice names the first GPU that has it. */
static void gpu_index_twice(void **state)
{
    (void)state;
    static const char text[] = "machine t\n"
                               "memory mem0 numa 0 size 16 GiB\n"
                               "socket cpu0\n"
                               "fabric mem0 cpu0 cap 50 GB/s\n"
                               "gpu gpu0 index 0 model \"G\" mem 8 GiB\n"
                               "gpu gpu1 index 1 model \"G\" mem 8 GiB\n"
                               "gpu gpu2 index 1 model \"G\" mem 8 GiB\n";
    expect_refusal(text, sizeof text - 1, 7, 16, "GPU index 1 is used twice (first by 'gpu1')");
}

/* A quoted string of 127 characters is taken; of 128, refused. */
static void long_string(void **state)
{
    (void)state;
    for (int len = 127; len <= 128; len++) {
        char text[512];
        int n = snprintf(text, sizeof text, "%stitle \"%0*d\"\n", base, len, 0);
        gq_sim_machine *m = (gq_sim_machine *)1;
        gq_err e = {0};
        int rc = gq_sim_parse(text, (size_t)n, "x", &m, &e);
        if (len == 127) {
            /* parsed past the title: refused later, for the GPU linked to nothing */
            assert_int_equal(rc, GQ_E_USAGE);
            assert_null(strstr(e.msg, "longer"));
            if (strcmp(e.msg, "x:5:1: gpu 'gpu0' is linked to nothing"))
                fail_msg("%s", e.msg);
        } else {
            expect_refusal(text, (size_t)n, 6, 7, "string longer than 127 characters");
        }
    }
}

typedef struct buf {
    char *s;
    size_t n, cap;
} buf;

static void put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        assert_true(k >= 0);
        if (b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        b->cap = b->cap * 2 + (size_t)k + 64;
        b->s = realloc(b->s, b->cap);
        assert_non_null(b->s);
    }
}

/* The limits: 1024 nodes, 64 GPUs and 4096 links are taken; one more is
 * refused at its line with the limit in words. */
static void limits(void **state)
{
    (void)state;
    buf b = {0};
    /* nodes: base has 3; 1021 switches make 1024, the next is one too many */
    put(&b, "%s", base);
    for (int i = 0; i < 1022; i++)
        put(&b, "switch s%d\n", i);
    expect_refusal(b.s, b.n, 5 + 1022, 1, "too many nodes (at most 1024)");

    /* GPUs: base has 1; 63 more make 64 */
    b.n = 0;
    put(&b, "%s", base);
    for (int i = 1; i < 65; i++)
        put(&b, "gpu g%d model \"G\" mem 8 GiB\n", i);
    expect_refusal(b.s, b.n, 5 + 64, 1, "too many GPUs (at most 64)");

    /* links: base has 1; fabric between 91 switches: 4095 pairs, then one more */
    b.n = 0;
    put(&b, "%s", base);
    for (int i = 0; i < 92; i++)
        put(&b, "switch s%d\n", i);
    int line = 5 + 92, nlink = 1;
    for (int i = 0; i < 92 && nlink <= 4096; i++)
        for (int j = i + 1; j < 92 && nlink <= 4096; j++, nlink++, line++)
            put(&b, "fabric s%d s%d cap 1 GB/s\n", i, j);
    expect_refusal(b.s, b.n, line, 1, "too many links (at most 4096)");
    free(b.s);
}

/* A socket named as the topology file is refused by its kind. */
static void socket_file(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/gq-topo-sock-%d", (int)getpid());
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    unlink(path);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    gq_sim_machine *m = (gq_sim_machine *)1;
    gq_err e = {0};
    int rc = gq_sim_load_file(path, &m, &e);
    char want[160];
    snprintf(want, sizeof want,
             "%s:1:1: is a socket, not a regular file; give a topology file (examples/topologies/)", path);
    close(fd);
    unlink(path);
    assert_int_equal(rc, GQ_E_USAGE);
    assert_string_equal(e.msg, want);
    assert_null(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table),  cmocka_unit_test(gpu_index_twice), cmocka_unit_test(long_string),
        cmocka_unit_test(limits), cmocka_unit_test(socket_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
