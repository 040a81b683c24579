/* fleet -o DIR (cli/carddir.h): what rank 0 lets a fleet write into before
 * any rank runs, and what --force removes of an earlier fleet once the new
 * fleet.json is written; and a card's move from its partial folder into
 * place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/carddir.h"

static char top[64];

static void put(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", top, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void dir(const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", top, rel);
    assert_int_equal(mkdir(p, 0777), 0);
}

static bool exists(const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", top, rel);
    struct stat st;
    return lstat(p, &st) == 0;
}

static const char *path(const char *rel)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s", top, rel);
    return p;
}

#define CARD "{\"tool\":\"gpuqual\",\"kind\":\"card\",\"card\":{}}"
#define FLEET "{\"tool\":\"gpuqual\",\"kind\":\"fleet\",\"fleet\":{}}"

/* An earlier fleet: fleet.json, fleet.md, two nodes' folders, one node's
 * partial folder (interrupted, empty) and a temporary file of the writer. */
static void earlier_fleet(const char *d)
{
    char p[256];
    dir(d);
    snprintf(p, sizeof p, "%s/fleet.json", d);
    put(p, FLEET);
    snprintf(p, sizeof p, "%s/fleet.md", d);
    put(p, "# gpuqual fleet: 2 nodes — PASS\n");
    snprintf(p, sizeof p, "%s/node-a-rank0", d);
    dir(p);
    snprintf(p, sizeof p, "%s/node-a-rank0/card.json", d);
    put(p, CARD);
    snprintf(p, sizeof p, "%s/node-b-rank1", d);
    dir(p);
    snprintf(p, sizeof p, "%s/node-b-rank1/card.json", d);
    put(p, CARD);
    snprintf(p, sizeof p, "%s/node-b-rank1.partial-20261201T000000Z-0badc0de", d);
    dir(p);
    snprintf(p, sizeof p, "%s/.gq-99999999-abcdef", d);
    put(p, "");
}

static int count(char **v)
{
    int n = 0;
    while (v && v[n])
        n++;
    return n;
}

static int setup(void **state)
{
    (void)state;
    snprintf(top, sizeof top, "/tmp/gq-carddir-XXXXXX");
    return mkdtemp(top) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_new_and_empty(void **state)
{
    (void)state;
    gq_err e = {0};
    char **earlier = (char **)1;
    assert_int_equal(gq_carddir_check_fleet(path("missing"), false, &earlier, &e), GQ_OK);
    assert_null(earlier);
    dir("empty");
    assert_int_equal(gq_carddir_check_fleet(path("empty"), false, &earlier, &e), GQ_OK);
    assert_null(earlier);
}

static void test_earlier_fleet_needs_force(void **state)
{
    (void)state;
    earlier_fleet("f1");
    gq_err e = {0};
    char **earlier = NULL;
    assert_int_equal(gq_carddir_check_fleet(path("f1"), false, &earlier, &e), GQ_E_USAGE);
    assert_null(earlier);
    assert_non_null(strstr(e.msg, "holds an earlier gpuqual fleet (fleet.json and 3 node folders); give "
                                  "--force to replace it"));
    assert_non_null(strstr(e.msg, path("f1")));
    assert_int_equal(gq_carddir_check_fleet(path("f1"), true, &earlier, &e), GQ_OK);
    assert_int_equal(count(earlier), 3);
    gq_carddir_names_free(earlier);
    /* only node folders, no fleet.json (rank 0 was killed before writing it) */
    dir("f2");
    dir("f2/h-rank0");
    put("f2/h-rank0/journal.jsonl", "{\"journal\":\"gpuqual\",\"schema_version\":2,\"header\":{\"magic\":"
                                    "\"gpuqual-journal\",\"run_id\":\"x\"}}\n");
    assert_int_equal(gq_carddir_check_fleet(path("f2"), false, &earlier, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "holds an earlier gpuqual fleet (1 node folder)"));
}

/* An earlier fleet of many nodes: the list of its node folders grows past
 * its first allocations (8, then 24, then 56 names) and keeps every name. */
static void test_many_nodes(void **state)
{
    (void)state;
    enum { N = 60 };
    dir("m1");
    char rel[64];
    for (int i = 0; i < N; i++) {
        snprintf(rel, sizeof rel, "m1/h-rank%d", i);
        dir(rel);
    }
    gq_err e = {0};
    char **earlier = NULL;
    assert_int_equal(gq_carddir_check_fleet(path("m1"), false, &earlier, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "holds an earlier gpuqual fleet (60 node folders)"));
    assert_int_equal(gq_carddir_check_fleet(path("m1"), true, &earlier, &e), GQ_OK);
    assert_int_equal(count(earlier), N);
    bool seen[N] = {false};
    for (int i = 0; i < N; i++) {
        int r = -1;
        assert_int_equal(sscanf(earlier[i], "h-rank%d", &r), 1);
        assert_true(r >= 0 && r < N && !seen[r]);
        seen[r] = true;
    }
    gq_carddir_names_free(earlier);
}

static void test_anything_else_refused(void **state)
{
    (void)state;
    gq_err e = {0};
    char **earlier = NULL;
    /* a file of someone else's beside an earlier fleet: refused, --force or not */
    earlier_fleet("g1");
    put("g1/notes.txt", "mine\n");
    for (int force = 0; force < 2; force++) {
        assert_int_equal(gq_carddir_check_fleet(path("g1"), force, &earlier, &e), GQ_E_USAGE);
        assert_non_null(strstr(e.msg, "holds 'notes.txt', which is not part of a gpuqual fleet"));
        assert_non_null(strstr(e.msg, "--force replaces only an earlier fleet"));
        assert_null(earlier);
    }
    /* something else inside a node's folder */
    earlier_fleet("g2");
    put("g2/node-a-rank0/mine.txt", "x\n");
    assert_int_equal(gq_carddir_check_fleet(path("g2"), true, &earlier, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "holds 'node-a-rank0/mine.txt', which is not part of a gpuqual fleet"));
    /* a card, not a fleet */
    dir("g3");
    put("g3/card.json", CARD);
    assert_int_equal(gq_carddir_check_fleet(path("g3"), true, &earlier, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "holds 'card.json', which is not part of a gpuqual fleet"));
    /* a fleet.json that is not gpuqual's, a folder whose name is not a node's */
    dir("g4");
    put("g4/fleet.json", "{\"kind\":\"fleet\"}");
    assert_int_equal(gq_carddir_check_fleet(path("g4"), true, &earlier, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "holds 'fleet.json'"));
    dir("g5");
    dir("g5/node-rankx");
    assert_int_equal(gq_carddir_check_fleet(path("g5"), true, &earlier, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "holds 'node-rankx'"));
    /* a temporary file alone is no fleet */
    dir("g6");
    put("g6/.gq-1-abcdef", "");
    assert_int_equal(gq_carddir_check_fleet(path("g6"), true, &earlier, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "holds only temporary files"));
    /* never through a link */
    earlier_fleet("g7");
    char target[512];
    snprintf(target, sizeof target, "%s", path("g7"));
    assert_int_equal(symlink(target, path("g8")), 0);
    assert_int_equal(gq_carddir_check_fleet(path("g8"), true, &earlier, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "is a symbolic link"));
}

/* --force: once the new fleet.json is written, the earlier fleet's folders
 * that no node of the new fleet took over are removed; a node's own folder
 * never is. */
static void test_prune(void **state)
{
    (void)state;
    earlier_fleet("p1");
    dir("p1/node-a-rank5");
    put("p1/node-a-rank5/card.json", CARD);
    gq_err e = {0};
    char **earlier = NULL;
    assert_int_equal(gq_carddir_check_fleet(path("p1"), true, &earlier, &e), GQ_OK);
    assert_int_equal(count(earlier), 4);
    /* the new fleet: two ranks, rank 1 on another host than before */
    const char *hosts[] = {"node-a", "node-c"};
    char left[256];
    assert_int_equal(gq_carddir_fleet_prune(path("p1"), earlier, hosts, 2, left, sizeof left), 0);
    assert_true(exists("p1/node-a-rank0"));                                    /* this fleet's rank 0 */
    assert_false(exists("p1/node-b-rank1"));                                   /* rank 1 ran elsewhere */
    assert_false(exists("p1/node-b-rank1.partial-20261201T000000Z-0badc0de")); /* an earlier partial */
    assert_false(exists("p1/node-a-rank5"));                                   /* no rank 5 now */
    assert_true(exists("p1/fleet.json"));
    gq_carddir_names_free(earlier);
    /* a rank whose host rank 0 does not know keeps its folder */
    earlier_fleet("p2");
    assert_int_equal(gq_carddir_check_fleet(path("p2"), true, &earlier, &e), GQ_OK);
    const char *unknown[] = {"node-a", NULL};
    assert_int_equal(gq_carddir_fleet_prune(path("p2"), earlier, unknown, 2, left, sizeof left), 0);
    assert_true(exists("p2/node-b-rank1"));
    assert_false(exists("p2/node-b-rank1.partial-20261201T000000Z-0badc0de"));
    gq_carddir_names_free(earlier);
}

/* A card is moved from its partial folder into a new DIR; when that move
 * fails (here the partial folder is gone) the error names both, from the
 * partial folder to DIR, and DIR is not created. */
static void test_commit_into_new_dir(void **state)
{
    (void)state;
    dir("c1");
    char partial[512], card[512], want[1200];
    gq_err e = {0};
    snprintf(card, sizeof card, "%s", path("c1/card"));
    assert_int_equal(gq_carddir_begin(card, "r1", partial, sizeof partial, &e), GQ_OK);
    assert_string_equal(partial, path("c1/card.partial-r1"));
    assert_int_equal(gq_carddir_commit(card, partial, "r1", &e), GQ_OK);
    assert_true(exists("c1/card"));
    assert_false(exists("c1/card.partial-r1"));
    snprintf(card, sizeof card, "%s", path("c1/card2"));
    assert_int_equal(gq_carddir_begin(card, "r2", partial, sizeof partial, &e), GQ_OK);
    assert_int_equal(rmdir(partial), 0);
    assert_int_equal(gq_carddir_commit(card, partial, "r2", &e), GQ_E_FAIL);
    snprintf(want, sizeof want, "cannot move the card from '%s' to '%s': No such file or directory", partial,
             card);
    assert_string_equal(e.msg, want);
    assert_false(exists("c1/card2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_and_empty), cmocka_unit_test(test_earlier_fleet_needs_force),
        cmocka_unit_test(test_many_nodes),    cmocka_unit_test(test_anything_else_refused),
        cmocka_unit_test(test_prune),         cmocka_unit_test(test_commit_into_new_dir),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
