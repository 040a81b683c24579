/* The topology parser rejects every class of bad input with one line,
 * "FILE:LINE:COL: message", and GQ_E_USAGE: missing, unreadable, empty,
 * binary and huge files; syntax errors; unknown keywords and attributes;
 * missing and wrong units; unknown and duplicate nodes; links to nowhere;
 * zero and negative capacities; a GPU with no path to host memory; and the
 * other structural mistakes. The cases are small files in tests/sim/bad/.
 * Also: what a valid file turns into, and regressions found by fuzzing.
 */
#include <dirent.h>
#include <unistd.h>

#include "backend/sim/sim.h"
#include "simtest.h"

typedef struct bad_case {
    const char *file;
    int line, col;
    const char *text;
} bad_case;

static const bad_case cases[] = {
    {"empty", 1, 1, "the topology file is empty"},
    {"comments-only", 1, 1, "empty topology"},
    {"binary", 2, 23, "binary data (byte 0x00)"},
    {"unterminated", 2, 7, "unterminated string"},
    {"unknown-keyword", 2, 1, "unknown keyword 'swich'; did you mean 'switch'?"},
    {"unknown-attribute", 2, 30, "unknown attribute 'memry' for gpu; did you mean 'mem'?"},
    {"missing-unit", 4, 22, "missing unit after '50' for cap: a bandwidth needs GB/s, MB/s or TB/s"},
    {"wrong-unit", 4, 25, "wrong unit 'GiB' for cap"},
    {"hint-unit", 4, 25, "unit 'GiB/s' for cap: bandwidth is decimal here: write GB/s (10^9 bytes/s)"},
    {"glued-unit", 4, 22, "write a space between the number and its unit: '50 GB/s'"},
    {"not-a-number", 4, 22, "'fast' is not a number"},
    {"unknown-node", 6, 11, "parent 'cpu1' is not declared; did you mean 'cpu0'?"},
    {"link-to-nowhere", 3, 13, "node 'nowhere' is not declared: a link to nowhere"},
    {"duplicate-node", 4, 8, "duplicate node 'cpu0' (first declared at line 2)"},
    {"zero-capacity", 4, 22, "is a capacity and must be positive, not 0 GB/s"},
    {"negative-capacity", 4, 23, "is a capacity and must be positive, not -5 GB/s"},
    {"beyond-capacity", 4, 37, "'write' of 1000.5 TB/s is beyond any real link (at most 1000 TB/s)"},
    {"no-host-path", 6, 1, "gpu 'gpu0' has no path to host memory"},
    {"self-link", 3, 13, "a link from 'cpu0' to itself"},
    {"duplicate-link", 5, 1, "a second link between 'cpu1' and 'cpu0' (first at line 4); merge them"},
    {"no-machine", 2, 1, "a topology starts with 'machine NAME'"},
    {"no-gpu", 1, 1, "declares no 'gpu'"},
    {"pcie-loop", 5, 8, "makes a loop in the PCIe tree"},
    {"duplicate-declaration", 3, 1, "'cpu' is declared twice (first at line 2)"},
    {"gpu-without-pcie", 5, 1, "gpu 'gpu0' has no PCIe link"},
    {"unlinked-node", 5, 1, "switch 'lonely' is linked to nothing"},
    {"bad-pcie-rate", 4, 19, "no PCIe generation"},
    {"missing-direction", 4, 18, "'up' is given but 'down' is missing"},
    {"numa-gap", 3, 1, "NUMA nodes must be numbered from 0 without gaps"},
    {"bad-name", 2, 8, "'0cpu' is not a valid node name"},
    {"wrong-parent-kind", 4, 11, "a PCIe parent must be a socket, switch or bridge; 'mem0' is a memory"},
    {"missing-value", 2, 13, "'size' needs a value"},
    {"missing-required", 2, 1, "gpu 'gpu0' needs 'mem SIZE'"},
    {"p2p-one-direction", 4, 38, "give both 'p2p-fwd' and 'p2p-rev'"},
    {"p2p-flowcap-and-direction", 4, 57, "give either 'p2p-flowcap' or 'p2p-fwd'/'p2p-rev', not both"},
    {"memory-read-and-fwd", 4, 23, "give 'read'/'write' or 'fwd'/'rev', not both"},
};

static void expect_error(int rc, const gq_err *e, const char *path, int line, int col, const char *text)
{
    char prefix[600];
    snprintf(prefix, sizeof prefix, "%s:%d:%d: ", path, line, col);
    if (rc != GQ_E_USAGE || strncmp(e->msg, prefix, strlen(prefix)) || !strstr(e->msg, text) ||
        strchr(e->msg, '\n'))
        fail_msg("%s: want %d '%s...%s', got %d '%s'", path, GQ_E_USAGE, prefix, text, rc, e->msg);
}

#define NCASES (sizeof cases / sizeof cases[0])

/* Every file in tests/sim/bad is rejected as its case says, and every case
 * has its file. */
static void test_bad_files(void **state)
{
    (void)state;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/sim/bad", GQ_TEST_DATA);
    bool seen[NCASES] = {0};
    size_t nfiles = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    gq_backend_register_builtin();
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        if (de->d_name[0] == '.')
            continue;
        nfiles++;
        size_t i = 0;
        for (char name[256]; i < NCASES; i++) {
            snprintf(name, sizeof name, "%s.topo", cases[i].file);
            if (!strcmp(de->d_name, name))
                break;
        }
        if (i == NCASES)
            fail_msg("%s/%s is not among the cases", dir, de->d_name);
        assert_false(seen[i]);
        seen[i] = true;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        gq_sim_machine *m = (gq_sim_machine *)1;
        gq_err e = {0};
        int rc = gq_sim_load_file(path, &m, &e);
        expect_error(rc, &e, path, cases[i].line, cases[i].col, cases[i].text);
        assert_null(m);
        /* the same through the backend, as `--sim FILE` opens it */
        gq_backend be;
        gq_backend_opts o;
        gq_sim_opts(&o, path, 0, -1, NULL);
        memset(&e, 0, sizeof e);
        rc = gq_backend_open(&be, "sim", &o, &e);
        expect_error(rc, &e, path, cases[i].line, cases[i].col, cases[i].text);
    }
    closedir(d);
    for (size_t i = 0; i < NCASES; i++)
        if (!seen[i])
            fail_msg("no file %s/%s.topo for its case", dir, cases[i].file);
    assert_int_equal(nfiles, NCASES);
}

static void write_file(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
}

/* call (which loads into &m) is refused as expect_error says, and leaves m NULL */
#define REFUSED(call, path, line, col, text)                                                                 \
    do {                                                                                                     \
        m = (gq_sim_machine *)1;                                                                             \
        expect_error(call, &e, path, line, col, text);                                                       \
        assert_null(m);                                                                                      \
    } while (0)

static void test_file_level_errors(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/gq-topo-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    char path[600];
    gq_sim_machine *m;
    gq_err e = {0};

    snprintf(path, sizeof path, "%s/missing.topo", tmpl);
    REFUSED(gq_sim_load_file(path, &m, &e), path, 1, 1, "cannot open the topology file");
    REFUSED(gq_sim_load(path, &m, &e), path, 1, 1, "No such file");

    REFUSED(gq_sim_load_file(tmpl, &m, &e), tmpl, 1, 1, "is a directory");

    /* huge: 1 MiB of comment and one byte more */
    size_t n = GQ_SIM_MAX_FILE + 1;
    char *big = malloc(n);
    assert_non_null(big);
    memset(big, ' ', n);
    big[0] = '#';
    snprintf(path, sizeof path, "%s/huge.topo", tmpl);
    write_file(path, big, n);
    REFUSED(gq_sim_load_file(path, &m, &e), path, 1, 1, "larger than 1 MiB");
    assert_int_equal(unlink(path), 0);
    REFUSED(gq_sim_parse(big, n, "mem", &m, &e), "mem", 1, 1, "the limit is");

    /* a line of 5000 characters */
    memset(big, 'x', 5000);
    memcpy(big, "machine m\n", 10);
    REFUSED(gq_sim_parse(big, 5000, "long", &m, &e), "long", 2, 4097, "line longer than 4096");
    /* too many fields */
    snprintf(big, 4096, "machine m\ntitle%s", "");
    size_t l = strlen(big);
    for (int i = 0; i < 60; i++)
        l += (size_t)snprintf(big + l, 4096 - l, " a");
    REFUSED(gq_sim_parse(big, l, "fields", &m, &e), "fields", 2, 101, "too many fields");
    /* a word of 127 characters is the most a token holds; one of 128 is
     * refused at its first column, and no byte goes past the token */
    l = (size_t)snprintf(big, 4096, "machine m\ntitle ");
    memset(big + l, 'y', 128);
    l += 128;
    big[l++] = '\n';
    REFUSED(gq_sim_parse(big, l, "word", &m, &e), "word", 2, 7, "word longer than 127 characters");
    l = (size_t)snprintf(big, 4096, "machine ");
    memset(big + l, 'y', 127);
    l += 127;
    big[l++] = '\n';
    m = NULL;
    memset(&e, 0, sizeof e);
    if (gq_sim_parse(big, l, "word127", &m, &e) != GQ_OK)
        assert_null(strstr(e.msg, "longer than"));
    else
        gq_sim_machine_free(m);
    free(big);
    assert_int_equal(rmdir(tmpl), 0);
}

static void test_valid_tiny(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/sim/good/tiny.topo", GQ_TEST_DATA);
    gq_sim_machine *m = NULL;
    gq_err e = {0};
    assert_int_equal(gq_sim_load_file(path, &m, &e), GQ_OK);
    assert_string_equal(m->name, "tiny");
    assert_int_equal(m->ngpu, 1);
    assert_int_equal(m->nnode, 3);
    assert_int_equal(m->nlink, 2);
    const gq_sim_link *L = &m->links[1];
    assert_int_equal(L->kind, GQ_SIM_LINK_PCIE);
    assert_true(fabs(L->cap[0] - 31.5076923e9) < 1e4); /* from 16 GT/s x16 */
    assert_true(m->noise == GQ_SIM_NOISE_DEFAULT);     /* the default, the calibrated noise */
    assert_int_equal(m->gpus[0].mem, 8 * GQ_GiB);
    gq_sim_machine_free(m);

    /* units, directions and aliases */
    static const char text[] =
        "machine u # comment after a declaration\n"
        "memory m0 numa 0 size 1 TiB avail 512 GiB lat 0.1 us\n"
        "socket s0\n"
        "fabric m0 s0 read 2 TB/s write 900000 MB/s\n"
        "switch w0\n"
        "pcie w0 s0 up 20 GB/s down 30 GB/s duplex 40 GB/s weights 3 1 cost 1500 ns\n"
        "gpu g0 index 0 model \"Quoted \\\"name\\\"\" mem 80 GiB clock 1.98 GHz power 700 W cc 9.0\n"
        "pcie g0 w0 cap 60 GB/s\n";
    assert_int_equal(gq_sim_parse(text, sizeof text - 1, "units", &m, &e), GQ_OK);
    assert_true(fabs(m->links[0].cap[0] - 2e12) < 1); /* read leaves memory: m0 -> s0 */
    assert_true(fabs(m->links[0].cap[1] - 9e11) < 1);
    assert_true(fabs(m->links[1].cap[0] - 20e9) < 1); /* up = child -> parent */
    assert_true(fabs(m->links[1].cap[1] - 30e9) < 1);
    assert_true(fabs(m->links[1].w[0] - 3) < 1e-12 && fabs(m->links[1].cost - 1.5e-6) < 1e-15);
    assert_string_equal(m->gpus[0].model, "Quoted \"name\"");
    assert_true(fabs(m->gpus[0].clock_mhz - 1980) < 1e-9);
    assert_int_equal(m->nodes[0].size, GQ_GiB * 1024);
    gq_sim_machine_free(m);
}

/* Inputs the fuzzer (tests/fuzz/fuzz_topo.c) found or that stress the
 * limits: each must be rejected or accepted, never crash. */
static void test_fuzz_regressions(void **state)
{
    (void)state;
    static const char *const inputs[] = {
        "machine",
        "machine m\npcie",
        "machine m\n\"",
        "machine m\ncap 1",
        "machine m\ngpu g model",
        "machine m\nfabric a",
        "machine m\nnoise",
        "machine m\nnoise 1e308 %",
        "machine m\nnoise -0 %",
        "machine m\ngpu g model \"\" mem 1e-300 GiB",
        "machine m\nmemory a size 1e20 TiB",
        "machine m\ngpu g index 99999999999 model x mem 1 GiB",
        "machine m\ngpu g cc 99999999999.1 model x mem 1 GiB",
        "machine m\nswitch s\npcie s s cap 1 GB/s",
        "machine m\r\nsocket s\r\n",
        "machine m\nweights 1 2",
        "machine m\nsocket s\nswitch w\npcie w s weights 1 2 cap 1 GB/s",
        "machine m\nsocket s\nswitch w\npcie w s cap 1 GB/s duplex 1 GB/s weights 0 1",
        "machine m\nsocket s\nswitch w\npcie w s rate 8 GT/s",
        "machine m\nsocket s\nswitch w\npcie w s width x3 rate 8 GT/s",
        "machine m\nvm kvm gpu-numa -2",
        "machine m\np2p ok",
        "machine m\nmachine n",
        "\xff\xfe machine",
        "machine m\ntitle \"\\",
    };
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        gq_sim_machine *m = (gq_sim_machine *)1;
        gq_err e = {0};
        int rc = gq_sim_parse(inputs[i], strlen(inputs[i]), "fz", &m, &e);
        assert_int_equal(rc, GQ_E_USAGE);
        assert_null(m);
        assert_int_equal(strncmp(e.msg, "fz:", 3), 0);
    }
}

/* The example in docs/topology-format.md is a valid machine. */
static void test_doc_example(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/../docs/topology-format.md", GQ_TEST_DATA);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char doc[1 << 16];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[n] = 0;
    char *ex = strstr(doc, "## Example");
    assert_non_null(ex);
    char *start = strstr(ex, "```\n");
    assert_non_null(start);
    start += 4;
    char *end = strstr(start, "```");
    assert_non_null(end);
    gq_sim_machine *m = NULL;
    gq_err e = {0};
    if (gq_sim_parse(start, (size_t)(end - start), "doc-example", &m, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(m->ngpu, 2);
    assert_true(gq_sim_nvlink_between(m, 0, 1) >= 0);
    gq_sim_machine_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_files),   cmocka_unit_test(test_file_level_errors),
        cmocka_unit_test(test_valid_tiny),  cmocka_unit_test(test_fuzz_regressions),
        cmocka_unit_test(test_doc_example),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
