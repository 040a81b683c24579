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

/* gq_carddir_begin refuses a partial name that does not fit the buffer,
 * and names the folder it could not create. */
static void test_begin_refusals(void **state)
{
    (void)state;
    char partial[512], small[16], want[1200];
    gq_err e = {0};
    assert_int_equal(gq_carddir_begin(path("long-card-name"), "r1", small, sizeof small, &e), GQ_E_USAGE);
    snprintf(want, sizeof want, "-o '%s': the path is too long", path("long-card-name"));
    assert_string_equal(e.msg, want);
    assert_false(exists("long-card-name.partial-r1"));
    char card[512];
    snprintf(card, sizeof card, "%s", path("no-parent/card"));
    assert_int_equal(gq_carddir_begin(card, "r1", partial, sizeof partial, &e), GQ_E_IO);
    snprintf(want, sizeof want, "-o '%s': cannot create '%s.partial-r1': No such file or directory", card,
             card);
    assert_string_equal(e.msg, want);
}

/* --resume naming the partial folder itself (with a trailing slash): the
 * card's final name, the folder and the run id come from its name; a
 * directory under / without a partial folder beside it is refused. */
static void test_find_partial(void **state)
{
    (void)state;
    dir("k.partial-r7");
    char final[512], partial[512], run_id[32], arg[512], want[1200];
    gq_err e = {0};
    snprintf(arg, sizeof arg, "%s/", path("k.partial-r7"));
    assert_int_equal(gq_carddir_find_partial(arg, final, partial, sizeof final, run_id, &e), GQ_OK);
    assert_string_equal(final, path("k"));
    assert_string_equal(partial, path("k.partial-r7"));
    assert_string_equal(run_id, "r7");
    /* the partial folders of /NAME are looked for in /, not in the current directory (which has one) */
    const char *none = "/gq-no-such-card-3f9c1";
    dir("gq-no-such-card-3f9c1.partial-r9");
    char cwd[512];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(top), 0);
    int rc = gq_carddir_find_partial(none, final, partial, sizeof final, run_id, &e);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rc, GQ_E_USAGE);
    snprintf(want, sizeof want, "--resume '%s': no interrupted card there (no '%s.partial-RUNID/')", none,
             none);
    assert_string_equal(e.msg, want);
}

/* -o '' and -o with a path of 1024 characters or more are refused. */
static void test_check_outdir_refusals(void **state)
{
    (void)state;
    gq_err e = {0};
    assert_int_equal(gq_carddir_check_outdir("", &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "-o: empty directory name");
    char longp[1101];
    memset(longp, 'a', 1100);
    longp[1100] = 0;
    assert_int_equal(gq_carddir_check_outdir(longp, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "-o: the path is 1100 characters, expected under 1024");
}

/* Discarding something that is not a card folder (a file) leaves it. */
static void test_discard_not_a_dir(void **state)
{
    (void)state;
    put("plain", "not a card\n");
    gq_carddir_discard(path("plain"));
    assert_true(exists("plain"));
}

/* Swapping a new card for an earlier one whose folder holds a folder: the
 * earlier card cannot be removed, so the one warning names where it is left;
 * a partial folder that is gone is a failed swap, named. */
static void test_commit_over_earlier(void **state)
{
    (void)state;
    dir("w");
    dir("w/sub");
    put("w/card.json", CARD);
    char partial[512], card[512], want[1200], got[1200] = "";
    gq_err e = {0};
    snprintf(card, sizeof card, "%s", path("w"));
    assert_int_equal(gq_carddir_begin(card, "r3", partial, sizeof partial, &e), GQ_OK);
    put("w.partial-r3/card.json", "{\"new\":true}");
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    FILE *tf = tmpfile();
    assert_non_null(tf);
    dup2(fileno(tf), STDERR_FILENO);
    int rc = gq_carddir_commit(card, partial, "r3", &e);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(tf);
    size_t n = fread(got, 1, sizeof got - 1, tf);
    got[n] = 0;
    fclose(tf);
    assert_int_equal(rc, GQ_OK);
    snprintf(want, sizeof want, "gpuqual: warning: the earlier card is left in '%s'\n", partial);
    assert_string_equal(got, want);
    assert_true(exists("w.partial-r3/sub"));
    assert_false(exists("w/sub"));

    dir("s");
    snprintf(card, sizeof card, "%s", path("s"));
    snprintf(partial, sizeof partial, "%s", path("s.partial-r4")); /* never made */
    assert_int_equal(gq_carddir_commit(card, partial, "r4", &e), GQ_E_FAIL);
    snprintf(want, sizeof want, "cannot swap the card in '%s' into '%s': No such file or directory", partial,
             card);
    assert_string_equal(e.msg, want);
    assert_true(exists("s"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_and_empty),
        cmocka_unit_test(test_earlier_fleet_needs_force),
        cmocka_unit_test(test_many_nodes),
        cmocka_unit_test(test_anything_else_refused),
        cmocka_unit_test(test_prune),
        cmocka_unit_test(test_commit_into_new_dir),
        cmocka_unit_test(test_begin_refusals),
        cmocka_unit_test(test_find_partial),
        cmocka_unit_test(test_check_outdir_refusals),
        cmocka_unit_test(test_discard_not_a_dir),
        cmocka_unit_test(test_commit_over_earlier),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
