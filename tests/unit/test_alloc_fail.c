/* Out of memory, one allocation at a time: this program is linked with
 * -Wl,--wrap=malloc,calloc,realloc (CMakeLists.txt), so every allocation
 * gqcore makes passes through the wrappers below, which can fail the k-th.
 * For each k up to the number a clean run makes, the analysis must report
 * out of memory (GQ_E_NOMEM, its error line) and neither crash, nor read
 * what it did not get, nor leak (the ASan build's LeakSanitizer). fdopen()
 * allocates inside libc, out of the wrappers' reach; it is wrapped too
 * (-Wl,--wrap=fdopen), so that the journal's fdopen can fail, and must not
 * leak its descriptor. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/domains.h"
#include "analysis/fleet.h"
#include "analysis/placement.h"
#include "analysis/probes.h"
#include "backend/sim/sim.h"
#include "core/yaml.h"
#include "measure/catalog.h"
#include "measure/journal.h"
#include "bottlenecks_util.h"
#include "render/analysis_render.h"
#include "../card_render_doc.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
FILE *__real_fdopen(int fd, const char *mode);
FILE *__wrap_fdopen(int fd, const char *mode);

static long fail_at; /* the allocation to fail, counted from 1; 0: none */
static long nalloc;  /* allocations since the count was reset */

static bool fail_now(void)
{
    return ++nalloc == fail_at;
}

void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __real_realloc(p, n);
}

static bool fail_fdopen;   /* the next fdopen fails */
static int fdopen_fd = -1; /* the descriptor it was given */

FILE *__wrap_fdopen(int fd, const char *mode)
{
    if (!fail_fdopen)
        return __real_fdopen(fd, mode);
    fail_fdopen = false;
    fdopen_fd = fd;
    errno = ENOMEM;
    return NULL;
}

static void arm(long k)
{
    fail_at = k;
    nalloc = 0;
}

/* 8 GPUs, seed 001's shape: 53 GB/s within {0-3} and {4-7}, 38 across,
 * with intervals; two domains. */
static void two_domains(gq_pairmatrix *m)
{
    gq_pairmatrix_init(m, NULL, 8);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            if (i != j) {
                double v = (i < 4) == (j < 4) ? 53.0 + 0.1 * ((i + j) % 3) : 38.0 + 0.2 * ((i * j) % 4);
                m->gbps[i][j] = v;
                m->lo[i][j] = v - 0.3;
                m->hi[i][j] = v + 0.3;
            }
}

static void domains_every_allocation(void **state)
{
    (void)state;
    gq_pairmatrix *m = malloc(sizeof *m);
    assert_non_null(m);
    two_domains(m);
    gq_domains d;
    gq_err e = {0};
    arm(0);
    assert_int_equal(gq_domains_cluster(m, NULL, &d, &e), GQ_OK);
    long total = nalloc;
    assert_int_equal(d.ndomains, 2);
    assert_true(total >= 3);
    for (long k = 1; k <= total; k++) {
        arm(k);
        memset(&e, 0, sizeof e);
        int rc = gq_domains_cluster(m, NULL, &d, &e);
        arm(0);
        if (rc != GQ_E_NOMEM)
            fail_msg("allocation %ld of %ld failed: rc %d, want GQ_E_NOMEM", k, total, rc);
        assert_string_equal(e.msg, "out of memory");
    }
    /* and afterwards, the same answer */
    assert_int_equal(gq_domains_cluster(m, NULL, &d, &e), GQ_OK);
    assert_int_equal(d.ndomains, 2);
    free(m);
}

/* 4 GPUs, P2P 50 GB/s within {0,1} and {2,3}, 20 across; host 25 each. */
static gq_place_model *small_model(void)
{
    gq_place_model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->ngpu = 4;
    m->tolerance = 0.05;
    for (int i = 0; i < 4; i++) {
        m->h2d[i] = 25;
        m->d2h[i] = 26;
        for (int j = 0; j < 4; j++)
            if (i != j) {
                m->p2p[i][j] = i / 2 == j / 2 ? 50 : 20;
                m->staged[i][j] = 12;
            }
    }
    return m;
}

static void placement_every_allocation(void **state)
{
    (void)state;
    gq_place_model *m = small_model();
    const gq_place_roles roles[] = {{.prefill = 2, .decode = 2}, {.offload = 2}, {.replicas = 2}};
    for (size_t r = 0; r < sizeof roles / sizeof roles[0]; r++) {
        gq_place_result *res = calloc(1, sizeof *res);
        assert_non_null(res);
        gq_err e = {0};
        arm(0);
        if (gq_place_solve(m, &roles[r], res, &e))
            fail_msg("roles %zu: %s", r, e.msg);
        long total = nalloc;
        for (long k = 1; k <= total; k++) {
            arm(k);
            memset(&e, 0, sizeof e);
            int rc = gq_place_solve(m, &roles[r], res, &e);
            arm(0);
            if (rc != GQ_E_NOMEM)
                fail_msg("roles %zu: allocation %ld of %ld failed: rc %d, want GQ_E_NOMEM", r, k, total, rc);
            assert_string_equal(e.msg, "placement: out of memory");
        }
        free(res);
    }
    free(m);
}

/* Two sockets of four GPUs: each alone, each socket together (held to 40 of
 * 100), every GPU at once; P2P pairs alone and two at once (held); one
 * invalid record (ignored, with its reason). */
static void bottleneck_records(void)
{
    gq_records_free(&RS);
    G = 0;
    const int s0[] = {0, 1, 2, 3}, s1[] = {4, 5, 6, 7}, all[] = {0, 1, 2, 3, 4, 5, 6, 7};
    for (int g = 0; g < 8; g++) {
        host_uniform(&g, 1, GQ_DIR_H2D, 25.0);
        host_uniform(&g, 1, GQ_DIR_D2H, 26.0);
    }
    host_uniform(s0, 4, GQ_DIR_H2D, 10.0);
    host_uniform(s1, 4, GQ_DIR_H2D, 10.0);
    host_uniform(all, 8, GQ_DIR_H2D, 9.0);
    host_uniform(s0, 4, GQ_DIR_D2H, 24.0);
    const int ps[] = {0, 2}, pd[] = {1, 3};
    const double alone[] = {50.0, 50.0}, two[] = {20.0, 20.0};
    for (int i = 0; i < 2; i++)
        p2p_group(&ps[i], &pd[i], &alone[i], 1);
    p2p_group(ps, pd, two, 2);
    host_uniform(&s1[0], 1, GQ_DIR_D2H, 26.0);
    RS.v[RS.n - 1].valid = false;
}

static void bottlenecks_every_allocation(void **state)
{
    (void)state;
    bottleneck_records();
    gq_bottlenecks b;
    gq_err e = {0};
    arm(0);
    assert_int_equal(gq_bottlenecks_infer(&RS, NULL, NULL, NULL, &b, &e), GQ_OK);
    long total = nalloc;
    assert_true(b.n >= 3);
    int n = b.n;
    gq_bottlenecks_free(&b);
    for (long k = 1; k <= total; k++) {
        arm(k);
        memset(&e, 0, sizeof e);
        int rc = gq_bottlenecks_infer(&RS, NULL, NULL, NULL, &b, &e);
        arm(0);
        gq_bottlenecks_free(&b);
        if (rc != GQ_E_NOMEM)
            fail_msg("allocation %ld of %ld failed: rc %d, want GQ_E_NOMEM", k, total, rc);
        assert_string_equal(e.msg, "out of memory while inferring bottlenecks");
    }
    assert_int_equal(gq_bottlenecks_infer(&RS, NULL, NULL, NULL, &b, &e), GQ_OK);
    assert_int_equal(b.n, n);
    gq_bottlenecks_free(&b);
    gq_records_free(&RS);
}

static void probes_every_allocation(void **state)
{
    (void)state;
    static const int gpus[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    gq_domains dom;
    gq_pairmatrix *m = malloc(sizeof *m);
    assert_non_null(m);
    two_domains(m);
    assert_int_equal(gq_domains_cluster(m, NULL, &dom, NULL), GQ_OK);
    free(m);
    gq_probe_plan p = {0};
    gq_err e = {0};
    arm(0);
    assert_int_equal(gq_probes_plan_contention(&p, NULL, gpus, 8, NULL, &e), GQ_OK);
    long total = nalloc;
    int n = p.n;
    gq_probe_plan_free(&p);
    assert_true(total >= 1 && n == 18);
    for (long k = 1; k <= total; k++) {
        arm(k);
        memset(&e, 0, sizeof e);
        int rc = gq_probes_plan_contention(&p, NULL, gpus, 8, NULL, &e);
        arm(0);
        gq_probe_plan_free(&p);
        if (rc != GQ_E_NOMEM)
            fail_msg("allocation %ld of %ld failed: rc %d, want GQ_E_NOMEM", k, total, rc);
    }
}

/* Every test of the catalog planned on 8 GPUs with peer access, failing
 * each allocation the plan makes in turn (the items, the flows, the report
 * flags, as they grow): out of memory, never a plan written past what it
 * got. */
static void catalog_every_allocation(void **state)
{
    (void)state;
    static gq_topo topo;
    gq_topo_init(&topo);
    topo.ngpu = 8;
    topo.numa_nodes = 1;
    gq_plan_opts po = {.bytes = 64 << 20, .host_numa = GQ_NUMA_LOCAL, .numa_nodes = 1, .ngpus = 8};
    for (int i = 0; i < 8; i++) {
        po.gpus[i] = i;
        for (int j = 0; j < 8; j++)
            topo.p2p_cuda[i][j] = i != j;
    }
    int ncat, grown = 0;
    const gq_test *cat = gq_catalog(&ncat);
    for (int t = 0; t < ncat; t++) {
        gq_plan p;
        gq_err e = {0};
        arm(0);
        assert_int_equal(gq_catalog_plan(&cat[t], &topo, &po, &p, &e), GQ_OK);
        long total = nalloc;
        grown += p.nflows > 16;
        gq_plan_free(&p);
        for (long k = 1; k <= total; k++) {
            arm(k);
            memset(&e, 0, sizeof e);
            int rc = gq_catalog_plan(&cat[t], &topo, &po, &p, &e);
            arm(0);
            gq_plan_free(&p);
            if (rc != GQ_E_NOMEM)
                fail_msg("%s: allocation %ld of %ld failed: rc %d '%s', want GQ_E_NOMEM", cat[t].name, k,
                         total, rc, e.msg);
        }
    }
    assert_true(grown > 0); /* some plan grew its flows past the first block */
}

/* The one-line summary of a card (`card --format summary`) decodes the card
 * document first (the typed card and the figures beside it, doc/card_figs.h):
 * out of memory there, at every allocation, it says so and writes nothing it
 * could not read. */
static void card_summary_every_allocation(void **state)
{
    (void)state;
    json_error_t je;
    json_t *doc =
        json_load_file(GQ_SOURCE_DIR "/bench/results/h200x2-session-2026-11-30/card/card.json", 0, &je);
    if (!doc)
        fail_msg("%s", je.text);
    FILE *f = fopen("/dev/null", "w");
    assert_non_null(f);
    gq_err e = {0};
    arm(0);
    assert_int_equal(gq_test_render_summary(f, doc, 100, &e), GQ_OK);
    long total = nalloc;
    assert_true(total >= 1);
    for (long k = 1; k <= total; k++) {
        arm(k);
        memset(&e, 0, sizeof e);
        int rc = gq_test_render_summary(f, doc, 100, &e);
        arm(0);
        if (rc != GQ_E_NOMEM)
            fail_msg("allocation %ld of %ld failed: rc %d (%s), want GQ_E_NOMEM", k, total, rc, e.msg);
        assert_non_null(strstr(e.msg, "out of memory"));
    }
    fclose(f);
    json_decref(doc);
}

/* Jansson's allocations, through the same count (json_set_alloc_funcs:
 * jansson is a shared library, which --wrap does not reach). */
static void *json_alloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}

static void json_release(void *p)
{
    free(p);
}

/* A rank's node summary document: when any of its five containers cannot
 * be made, it makes no document (NULL), rather than one without a part. */
static void node_summary_every_container(void **state)
{
    (void)state;
    gq_node_summary *s = calloc(1, sizeof *s);
    assert_non_null(s);
    gq_node_summary_init(s);
    snprintf(s->hostname, sizeof s->hostname, "node-a");
    snprintf(s->gpu_model, sizeof s->gpu_model, "NVIDIA H200");
    s->ngpus = 1;
    s->nident = 1;
    snprintf(s->ident[0].uuid, sizeof s->ident[0].uuid, "GPU-0");
    json_set_alloc_funcs(json_alloc, json_release);
    arm(0);
    json_t *d = gq_node_summary_to_json(s, "test");
    assert_non_null(d);
    json_decref(d);
    /* what the five containers take, made the same way */
    arm(0);
    json_t *c[5] = {json_object(), json_object(), json_array(), json_object(), json_array()};
    long containers = nalloc;
    for (int i = 0; i < 5; i++) {
        assert_non_null(c[i]);
        json_decref(c[i]);
    }
    assert_true(containers >= 5);
    for (long k = 1; k <= containers; k++) {
        arm(k);
        d = gq_node_summary_to_json(s, "test");
        arm(0);
        if (d) {
            json_decref(d);
            fail_msg("allocation %ld of the %ld of its containers failed, and a document was made", k,
                     containers);
        }
    }
    json_set_alloc_funcs(malloc, free);
    gq_node_summary_free(s);
    free(s);
}

/* YAML to JSON with each allocation failing in turn (gpuqual's and
 * jansson's; libyaml's own are not counted): out of memory, never a
 * document with a container missing or misplaced. */
static void yaml_every_allocation(void **state)
{
    (void)state;
    const char *text = "a: [1, 2]\nb:\n  c: x\n  d: [{e: 1}, []]\n";
    json_set_alloc_funcs(json_alloc, json_release);
    arm(0);
    json_t *want = NULL;
    gq_err e = {0};
    assert_int_equal(gq_yaml_to_json(text, strlen(text), "t.yaml", &want, &e), GQ_OK);
    long total = nalloc;
    assert_true(total >= 6);
    for (long k = 1; k <= total; k++) {
        arm(k);
        json_t *got = NULL;
        memset(&e, 0, sizeof e);
        int rc = gq_yaml_to_json(text, strlen(text), "t.yaml", &got, &e);
        arm(0);
        if (rc == GQ_OK && !json_equal(got, want))
            fail_msg("allocation %ld of %ld failed, and a different document was made", k, total);
        if (rc != GQ_OK && (rc != GQ_E_NOMEM || !strstr(e.msg, "out of memory")))
            fail_msg("allocation %ld of %ld failed: rc %d '%s', want out of memory", k, total, rc, e.msg);
        json_decref(got);
    }
    json_decref(want);
    json_set_alloc_funcs(malloc, free);
}

/* A simulated machine large enough that its link array grows (realloc)
 * while it is read. */
static void sim_topology_every_allocation(void **state)
{
    (void)state;
    gq_sim_machine *m = NULL;
    gq_err e = {0};
    arm(0);
    assert_int_equal(gq_sim_load("big64", &m, &e), GQ_OK);
    long total = nalloc;
    int nlink = m->nlink;
    gq_sim_machine_free(m);
    assert_true(nlink > 16); /* past the first capacity */
    for (long k = 1; k <= total; k++) {
        arm(k);
        memset(&e, 0, sizeof e);
        m = (gq_sim_machine *)1;
        int rc = gq_sim_load("big64", &m, &e);
        arm(0);
        if (rc != GQ_E_NOMEM)
            fail_msg("allocation %ld of %ld failed: rc %d '%s', want GQ_E_NOMEM", k, total, rc, e.msg);
        assert_string_equal(e.msg, "out of memory");
        assert_null(m);
    }
    assert_int_equal(gq_sim_load("big64", &m, &e), GQ_OK);
    assert_int_equal(m->nlink, nlink);
    gq_sim_machine_free(m);
}

/* The journal's fdopen fails: out of memory, and its descriptor is closed
 * (an automatic name's empty file removed), for a journal of automatic name,
 * a named one and a resumed one. */
static void journal_fdopen_fails(void **state)
{
    (void)state;
    char dir[] = "/tmp/gq-allocfail-XXXXXX";
    assert_non_null(mkdtemp(dir));
    setenv("TMPDIR", dir, 1);
    unsetenv("XDG_STATE_HOME");
    char path[128];
    snprintf(path, sizeof path, "%s/j.jsonl", dir);
    for (int how = 0; how < 3; how++) {
        gq_journal j;
        gq_err e = {0};
        if (how == 2) { /* a journal to resume */
            assert_int_equal(gq_journal_open(&j, path, NULL, &e), GQ_OK);
            gq_journal_close(&j);
        }
        gq_recordset done = {0};
        int *item = NULL;
        fail_fdopen = true;
        fdopen_fd = -1;
        int rc = how == 0   ? gq_journal_open(&j, NULL, NULL, &e)
                 : how == 1 ? gq_journal_open(&j, path, NULL, &e)
                            : gq_journal_resume(&j, path, &(gq_journal_id){0}, &done, &item, &e);
        fail_fdopen = false;
        assert_int_equal(rc, GQ_E_NOMEM);
        assert_string_equal(e.msg, "journal: out of memory");
        assert_null(j.f);
        assert_true(fdopen_fd >= 0);
        errno = 0;
        if (fcntl(fdopen_fd, F_GETFD) != -1 || errno != EBADF)
            fail_msg("case %d: descriptor %d is still open", how, fdopen_fd);
        gq_records_free(&done);
        free(item);
        unlink(path);
        if (how == 0) { /* nothing left in the directory */
            char cmd[200];
            snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s)\"", dir);
            assert_int_equal(system(cmd), 0);
        }
    }
    unsetenv("TMPDIR");
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(domains_every_allocation),      cmocka_unit_test(placement_every_allocation),
        cmocka_unit_test(bottlenecks_every_allocation),  cmocka_unit_test(probes_every_allocation),
        cmocka_unit_test(card_summary_every_allocation), cmocka_unit_test(node_summary_every_container),
        cmocka_unit_test(sim_topology_every_allocation), cmocka_unit_test(journal_fdopen_fails),
        cmocka_unit_test(catalog_every_allocation),      cmocka_unit_test(yaml_every_allocation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
