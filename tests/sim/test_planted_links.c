/* A symbolic link planted at any name gpuqual could write is never followed:
 * each output option of each command, given a link to a file (or, for a
 * card, to a directory), is refused with exit 2 and the link's target is
 * unchanged. (The temporary names are random and created with O_EXCL |
 * O_NOFOLLOW: tests/unit/test_outfile.c plants links there.) */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static char top[64], victim[128], vdir[128], link_[128], doc[128], cdir[128];

static int run(char *const argv[])
{
    pid_t p = fork();
    if (p == 0) {
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        dup2(fd, 2);
        execv(GQ_BIN, argv);
        _exit(127);
    }
    int ws;
    if (p < 0 || waitpid(p, &ws, 0) != p)
        return -1;
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static void victim_intact(const char *what)
{
    char buf[64] = "";
    FILE *f = fopen(victim, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    if (strcmp(buf, "precious"))
        fail_msg("%s: the link's target now holds '%s'", what, buf);
    struct stat st;
    if (lstat(link_, &st) != 0 || !S_ISLNK(st.st_mode))
        fail_msg("%s: the link was replaced", what);
    DIR *d = opendir(vdir);
    int n_entries = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n_entries += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    if (n_entries)
        fail_msg("%s: %d file(s) written into the directory a link points to", what, n_entries);
}

static void plant(const char *target)
{
    unlink(link_);
    assert_int_equal(symlink(target, link_), 0);
}

static void test_links_never_followed(void **state)
{
    (void)state;
    snprintf(top, sizeof top, "/tmp/gq-links-XXXXXX");
    assert_non_null(mkdtemp(top));
    snprintf(victim, sizeof victim, "%s/victim", top);
    snprintf(vdir, sizeof vdir, "%s/vdir", top);
    snprintf(link_, sizeof link_, "%s/out", top);
    snprintf(doc, sizeof doc, "%s/doc.json", top);
    snprintf(cdir, sizeof cdir, "%s/card", top);
    FILE *f = fopen(victim, "w");
    fputs("precious", f);
    fclose(f);
    assert_int_equal(mkdir(vdir, 0700), 0);
    char *mk[] = {"gpuqual", "run", "--sim",  "h200x2", "-t", "host_to_device_memcpy_ce", "-b", "1", "-i",
                  "1",       "-q",  "--json", doc,      NULL};
    assert_int_equal(run(mk), 0);
    char *cases[][16] = {
        {"gpuqual", "run", "--sim", "h200x2", "-t", "host_to_device_memcpy_ce", "-b", "1", "-i", "1", "-q",
         "--json", link_, NULL},
        {"gpuqual", "run", "--sim", "h200x2", "-t", "host_to_device_memcpy_ce", "-b", "1", "-i", "1", "-q",
         "--journal", link_, NULL},
        {"gpuqual", "pairs", "0:1", "--sim", "h200x2", "-b", "1", "-i", "1", "-q", "--journal", link_, NULL},
        {"gpuqual", "stress", "--sim", "h200x2", "-d", "1s", "-q", "--csv", link_, NULL},
        {"gpuqual", "topo", "--sim", "h200x2", "--save-snapshot", link_, NULL},
        {"gpuqual", "topo", "--sim", "h200x2", "--json", link_, NULL},
        {"gpuqual", "kv", "--config", GQ_TEST_DATA "/data/hf/llama3-70b.json", "--tokens", "8000",
         "--p2p-gbps", "53", "--json", link_, NULL},
        {"gpuqual", "report", doc, "-o", link_, NULL},
        {"gpuqual", "compare", doc, doc, "--json", link_, NULL},
        {"gpuqual", "card", "--sim", "h200x2", "--no-stress", "-q", "-o", cdir, "--json", link_, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plant(victim);
        int rc = run(cases[i]);
        if (rc != 2)
            fail_msg("case %zu (%s %s): exit %d, want 2", i, cases[i][1], cases[i][2], rc);
        victim_intact(cases[i][1]);
    }
    /* a card never goes through a link to a directory, empty or not */
    plant(vdir);
    char *card[] = {"gpuqual", "card", "--sim", "h200x2", "--no-stress", "-q", "-o", link_, NULL};
    assert_int_equal(run(card), 2);
    victim_intact("card -o LINK");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_links_never_followed)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
