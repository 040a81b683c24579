/* The topology parser's defaults and a few exact values: what a machine gets
 * when a line is left out. Written for the survivors of bench/mutation. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend/sim/sim.h"
#include "core/units.h"

static const char tiny[] = "machine tiny\n"
                           "memory mem0 numa 0 size 16 GiB\n"
                           "socket cpu0\n"
                           "fabric mem0 cpu0 cap 50 GB/s\n"
                           "gpu gpu0 model \"Test GPU\" mem 8 GiB\n"
                           "pcie gpu0 cpu0 rate 16 GT/s width x16\n";

static void defaults(void **state)
{
    (void)state;
    gq_sim_machine *m = NULL;
    gq_err e = {0};
    assert_int_equal(gq_sim_parse(tiny, sizeof tiny - 1, NULL, &m, &e), GQ_OK);
    assert_string_equal(m->file, "topology");
    assert_true(m->noise == GQ_SIM_NOISE_DEFAULT);
    assert_true(m->skew_s == 0 && m->skew_share == 0);
    assert_int_equal(m->p2p, GQ_P2P_OK);
    assert_true(m->driver_factor == 1.0);
    assert_true(fabs(m->lat_copy - 2e-6) < 1e-18);
    assert_true(fabs(m->lat_chase - 100e-9) < 1e-18);
    assert_true(fabs(m->lat_staged - 10e-6) < 1e-18);
    assert_int_equal(m->sockets, -1);
    assert_int_equal(m->cores, -1);
    assert_int_equal(m->vm_gpu_numa, -1);
    /* only GPU nodes name a GPU */
    for (int k = 0; k < m->nnode; k++)
        assert_int_equal(m->nodes[k].gpu, m->nodes[k].kind == GQ_SIM_GPU ? 0 : -1);
    gq_sim_machine_free(m);

    /* the same lines given: the values given */
    static const char more[] = "machine more\n"
                               "noise 0.2 % skew 3 ms rounds 25 %\n"
                               "staging driver 138 % chunk-cost 2.2 us\n"
                               "latency copy 3.0 us chase 98 ns staged 12.8 us\n"
                               "cpu \"X\" sockets 2 cores 32\n"
                               "memory mem0 numa 0 size 16 GiB\n"
                               "socket cpu0\n"
                               "fabric mem0 cpu0 cap 50 GB/s\n"
                               "gpu gpu0 model \"Test GPU\" mem 8 GiB\n"
                               "pcie gpu0 cpu0 rate 16 GT/s width x16\n";
    assert_int_equal(gq_sim_parse(more, sizeof more - 1, "more.topo", &m, &e), GQ_OK);
    assert_string_equal(m->file, "more.topo");
    assert_true(fabs(m->noise - 0.002) < 1e-15);
    assert_true(fabs(m->skew_s - 3e-3) < 1e-15 && fabs(m->skew_share - 0.25) < 1e-15);
    assert_true(fabs(m->driver_factor - 1.38) < 1e-12);
    assert_true(fabs(m->lat_copy - 3e-6) < 1e-18);
    assert_true(fabs(m->lat_chase - 98e-9) < 1e-18);
    assert_true(fabs(m->lat_staged - 12.8e-6) < 1e-18);
    assert_int_equal(m->sockets, 2);
    assert_int_equal(m->cores, 32);
    gq_sim_machine_free(m);
}

/* Numbers with an exponent; an exponent without digits is not a number. */
static void exponents(void **state)
{
    (void)state;
    static const char text[] = "machine e\n"
                               "memory mem0 numa 0 size 1.6e1 GiB\n"
                               "socket cpu0\n"
                               "fabric mem0 cpu0 cap 5e+1 GB/s\n"
                               "gpu gpu0 model \"G\" mem 8 GiB\n"
                               "pcie gpu0 cpu0 rate 16 GT/s width x16\n";
    gq_sim_machine *m = NULL;
    gq_err e = {0};
    assert_int_equal(gq_sim_parse(text, sizeof text - 1, "e", &m, &e), GQ_OK);
    assert_true(m->nodes[0].size == 16 * GQ_GiB);
    assert_true(fabs(m->links[0].cap[0] - 50e9) < 1);
    gq_sim_machine_free(m);
    static const char bad[] = "machine e\n"
                              "memory mem0 numa 0 size 16e GiB\n";
    assert_int_equal(gq_sim_parse(bad, sizeof bad - 1, "e", &m, &e), GQ_E_USAGE);
    assert_null(m);
    assert_non_null(strstr(e.msg, "e:2:"));
}

/* An empty text points at its start; a control character is binary. */
static void empty_and_binary(void **state)
{
    (void)state;
    gq_sim_machine *m = NULL;
    gq_err e = {0};
    assert_int_equal(gq_sim_parse("", 0, "x", &m, &e), GQ_E_USAGE);
    assert_true(!strncmp(e.msg, "x:1:1: empty topology", 21));
    assert_int_equal(gq_sim_parse("# only a comment\n", 17, "x", &m, &e), GQ_E_USAGE);
    assert_true(!strncmp(e.msg, "x:1:1: empty topology", 21));
    static const char us[] = "machine a\x1f\n";
    assert_int_equal(gq_sim_parse(us, sizeof us - 1, "x", &m, &e), GQ_E_USAGE);
    assert_true(!strncmp(e.msg, "x:1:10: ", 8));
    static const char del[] = "machine a\x7f\n";
    assert_int_equal(gq_sim_parse(del, sizeof del - 1, "x", &m, &e), GQ_E_USAGE);
    assert_true(!strncmp(e.msg, "x:1:10: ", 8));
    /* tab and CR are text: the complaint is about the content, not binary data */
    static const char tab[] = "machine\ta\r\n";
    assert_int_equal(gq_sim_parse(tab, sizeof tab - 1, "x", &m, &e), GQ_E_USAGE);
    assert_null(strstr(e.msg, "binary"));
    assert_non_null(strstr(e.msg, "declares no 'gpu'"));
}

/* A refused name leaves no machine behind. */
static void load_refusals(void **state)
{
    (void)state;
    gq_sim_machine *m = (gq_sim_machine *)1;
    gq_err e = {0};
    assert_int_equal(gq_sim_load("", &m, &e), GQ_E_USAGE);
    assert_null(m);
    assert_non_null(strstr(e.msg, "--sim needs a topology file or a built-in machine name"));
    m = (gq_sim_machine *)1;
    assert_int_not_equal(gq_sim_load("no-such-machine", &m, &e), GQ_OK);
    assert_null(m);
    assert_int_equal(gq_sim_load(NULL, &m, &e), GQ_OK); /* the default machine */
    assert_string_equal(m->name, "rtx4090x8");
    gq_sim_machine_free(m);
}

/* A file of exactly GQ_SIM_MAX_FILE bytes (padded with comments, its last
 * line without a newline) is read to its last byte; one byte more is refused. */
static void file_at_size_limit(void **state)
{
    (void)state;
    const char *head = "machine edge\nmemory mem0 numa 0 size 16 GiB\nsocket cpu0\n"
                       "gpu gpu0 model \"Test GPU\" mem 8 GiB\npcie gpu0 cpu0 rate 16 GT/s width x16\n";
    const char *tail = "fabric mem0 cpu0 cap 50 GB/s"; /* without its last byte: no unit "GB/" */
    char path[] = "/tmp/gq-topo-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    for (int extra = 0; extra < 2; extra++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        size_t want = GQ_SIM_MAX_FILE + (size_t)extra, used = strlen(head) + strlen(tail);
        fputs(head, f);
        while (used < want) { /* comment lines of up to 80 bytes */
            size_t k = want - used < 80 ? want - used : 80;
            fputc('#', f);
            for (size_t i = 1; i + 1 < k; i++)
                fputc('x', f);
            if (k > 1)
                fputc('\n', f);
            used += k;
        }
        fputs(tail, f);
        fclose(f);
        gq_sim_machine *m = NULL;
        gq_err e = {0};
        int rc = gq_sim_load_file(path, &m, &e);
        if (!extra) {
            if (rc)
                fail_msg("a file of exactly %d bytes: %s", GQ_SIM_MAX_FILE, e.msg);
            assert_string_equal(m->name, "edge");
            gq_sim_machine_free(m);
        } else {
            assert_int_equal(rc, GQ_E_USAGE);
            assert_non_null(strstr(e.msg, "larger than 1 MiB"));
        }
    }
    unlink(path);
}

/* Percentages outside their range are refused, at their bounds accepted. */
static void percent_ranges(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        bool ok;
    } cases[] = {
        {"staging driver 1 %", true},     {"staging driver 1000 %", true}, {"staging driver 0.5 %", false},
        {"staging driver 1001 %", false}, {"staging driver 138 %", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        int n =
            snprintf(text, sizeof text, "machine p\n%s\n%s", cases[i].line, tiny + strlen("machine tiny\n"));
        gq_sim_machine *m = NULL;
        gq_err e = {0};
        int rc = gq_sim_parse(text, (size_t)n, "p", &m, &e);
        if ((rc == GQ_OK) != cases[i].ok)
            fail_msg("'%s': rc %d (%s)", cases[i].line, rc, e.msg);
        if (!cases[i].ok)
            assert_non_null(strstr(e.msg, "it must be between 1 % and 1000 %"));
        gq_sim_machine_free(m);
    }
}

/* Written for the survivors of bench/mutation (seed 165809224): the defaults
 * of a GPU's clock, of P2P stream caps and of a link's direction shares, a
 * cpu line without cores, and GPU indices at their limits. */
static void more_defaults(void **state)
{
    (void)state;
    gq_sim_machine *m = NULL;
    gq_err e = {0};
    assert_int_equal(gq_sim_parse(tiny, sizeof tiny - 1, NULL, &m, &e), GQ_OK);
    assert_true(m->gpus[0].clock_mhz == 0);
    for (int k = 0; k < m->nnode; k++)
        assert_true(m->nodes[k].p2p_flowcap == 0);
    for (int l = 0; l < m->nlink; l++) {
        assert_true(m->links[l].w[0] == 1.0 && m->links[l].w[1] == 1.0);
        assert_true(m->links[l].p2p_flowcap == 0);
    }
    gq_sim_machine_free(m);
    static const char nocores[] = "machine nocores\n"
                                  "cpu \"X\" sockets 2\n"
                                  "memory mem0 numa 0 size 16 GiB\n"
                                  "socket cpu0\n"
                                  "fabric mem0 cpu0 cap 50 GB/s\n"
                                  "gpu gpu0 model \"Test GPU\" mem 8 GiB\n"
                                  "pcie gpu0 cpu0 rate 16 GT/s width x16\n";
    m = NULL;
    assert_int_equal(gq_sim_parse(nocores, sizeof nocores - 1, NULL, &m, &e), GQ_OK);
    assert_int_equal(m->sockets, 2);
    assert_int_equal(m->cores, -1);
    gq_sim_machine_free(m);
}

static void gpu_index_limits(void **state)
{
    (void)state;
    static const char gap[] = "machine gap\n"
                              "memory mem0 numa 0 size 16 GiB\n"
                              "socket cpu0\n"
                              "fabric mem0 cpu0 cap 50 GB/s\n"
                              "gpu gpu0 index 1 model \"Test GPU\" mem 8 GiB\n"
                              "pcie gpu0 cpu0 rate 16 GT/s width x16\n";
    gq_sim_machine *m = NULL;
    gq_err e = {0};
    assert_int_not_equal(gq_sim_parse(gap, sizeof gap - 1, NULL, &m, &e), GQ_OK);
    assert_non_null(strstr(e.msg, "GPU index 1 of 'gpu0' leaves a gap"));
    gq_sim_machine_free(m);
    static const char big[] = "machine big\n"
                              "memory mem0 numa 0 size 16 GiB\n"
                              "socket cpu0\n"
                              "fabric mem0 cpu0 cap 50 GB/s\n"
                              "gpu gpu0 index 64 model \"Test GPU\" mem 8 GiB\n"
                              "pcie gpu0 cpu0 rate 16 GT/s width x16\n";
    m = NULL;
    memset(&e, 0, sizeof e);
    assert_int_not_equal(gq_sim_parse(big, sizeof big - 1, NULL, &m, &e), GQ_OK);
    assert_non_null(strstr(e.msg, "'index' is 64; it must be between 0 and 63"));
    gq_sim_machine_free(m);
}

/* Every PCIe width is accepted, x1 and x2 too. */
static void pcie_narrow_widths(void **state)
{
    (void)state;
    static const char *w[] = {"x1", "x2"};
    for (int i = 0; i < 2; i++) {
        char text[512];
        int n = snprintf(text, sizeof text,
                         "machine narrow\n"
                         "memory mem0 numa 0 size 16 GiB\n"
                         "socket cpu0\n"
                         "fabric mem0 cpu0 cap 50 GB/s\n"
                         "gpu gpu0 model \"Test GPU\" mem 8 GiB\n"
                         "pcie gpu0 cpu0 rate 16 GT/s width %s\n",
                         w[i]);
        gq_sim_machine *m = NULL;
        gq_err e = {0};
        if (gq_sim_parse(text, (size_t)n, NULL, &m, &e) != GQ_OK)
            fail_msg("width %s refused: %s", w[i], e.msg);
        gq_sim_machine_free(m);
    }
}

/* A width that is not one of x1, x2, x4, x8, x12, x16, x32 is refused with
 * the list of the right ones (issue 30: topo_lex.c's width check). */
static void pcie_bad_widths(void **state)
{
    (void)state;
    static const char *w[] = {"x3", "x64", "+8"};
    for (int i = 0; i < 3; i++) {
        char text[512];
        int n = snprintf(text, sizeof text,
                         "machine bad\n"
                         "memory mem0 numa 0 size 16 GiB\n"
                         "socket cpu0\n"
                         "fabric mem0 cpu0 cap 50 GB/s\n"
                         "gpu gpu0 model \"Test GPU\" mem 8 GiB\n"
                         "pcie gpu0 cpu0 rate 16 GT/s width %s\n",
                         w[i]);
        gq_sim_machine *m = NULL;
        gq_err e = {0};
        if (gq_sim_parse(text, (size_t)n, NULL, &m, &e) == GQ_OK)
            fail_msg("width %s accepted", w[i]);
        assert_non_null(strstr(e.msg, "is not a PCIe width; use x1, x2, x4, x8, x12, x16 or x32"));
        gq_sim_machine_free(m);
    }
}

/* A built-in machine is named by its built-in file; a quoted number is not a
 * number; 'index' given to one GPU and not another is refused. */
static void names_quotes_indices(void **state)
{
    (void)state;
    gq_sim_machine *m = NULL;
    gq_err e = {0};
    assert_int_equal(gq_sim_load("h200x2", &m, &e), GQ_OK);
    assert_string_equal(m->file, "builtin:h200x2.topo");
    gq_sim_machine_free(m);
    static const char quoted[] = "machine q\n"
                                 "memory mem0 numa \"0\" size 16 GiB\n"
                                 "socket cpu0\n"
                                 "fabric mem0 cpu0 cap 50 GB/s\n"
                                 "gpu gpu0 model \"Test GPU\" mem 8 GiB\n"
                                 "pcie gpu0 cpu0 rate 16 GT/s width x16\n";
    m = NULL;
    assert_int_not_equal(gq_sim_parse(quoted, sizeof quoted - 1, NULL, &m, &e), GQ_OK);
    gq_sim_machine_free(m);
    static const char mixed[] = "machine mixed\n"
                                "memory mem0 numa 0 size 16 GiB\n"
                                "socket cpu0\n"
                                "fabric mem0 cpu0 cap 50 GB/s\n"
                                "gpu gpu0 index 0 model \"Test GPU\" mem 8 GiB\n"
                                "gpu gpu1 model \"Test GPU\" mem 8 GiB\n"
                                "pcie gpu0 cpu0 rate 16 GT/s width x16\n"
                                "pcie gpu1 cpu0 rate 16 GT/s width x16\n";
    m = NULL;
    memset(&e, 0, sizeof e);
    assert_int_not_equal(gq_sim_parse(mixed, sizeof mixed - 1, NULL, &m, &e), GQ_OK);
    assert_non_null(strstr(e.msg, "give 'index N' to every gpu or to none"));
    gq_sim_machine_free(m);
}

/* A capacity of exactly 1000 TB/s is the largest accepted; just over it is refused. */
static void capacity_limit(void **state)
{
    (void)state;
    static const char *cap[] = {"1000 TB/s", "1000.001 TB/s"};
    for (int i = 0; i < 2; i++) {
        char text[512];
        int n = snprintf(text, sizeof text,
                         "machine lim\n"
                         "memory mem0 numa 0 size 16 GiB\n"
                         "socket cpu0\n"
                         "fabric mem0 cpu0 cap %s\n"
                         "gpu gpu0 model \"Test GPU\" mem 8 GiB\n"
                         "pcie gpu0 cpu0 rate 16 GT/s width x16\n",
                         cap[i]);
        gq_sim_machine *m = NULL;
        gq_err e = {0};
        int rc = gq_sim_parse(text, (size_t)n, NULL, &m, &e);
        if (i == 0 && rc != GQ_OK)
            fail_msg("%s refused: %s", cap[i], e.msg);
        if (i == 1) {
            /* the attribute, then the value as written, then its unit */
            assert_int_equal(rc, GQ_E_USAGE);
            if (!strstr(e.msg, "'cap' of 1000.001 TB/s is beyond any real link (at most 1000 TB/s)"))
                fail_msg("%s", e.msg);
        }
        gq_sim_machine_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),         cmocka_unit_test(exponents),
        cmocka_unit_test(empty_and_binary), cmocka_unit_test(load_refusals),
        cmocka_unit_test(percent_ranges),   cmocka_unit_test(more_defaults),
        cmocka_unit_test(gpu_index_limits), cmocka_unit_test(pcie_narrow_widths),
        cmocka_unit_test(pcie_bad_widths),  cmocka_unit_test(names_quotes_indices),
        cmocka_unit_test(capacity_limit),   cmocka_unit_test(file_at_size_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
