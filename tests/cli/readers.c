/* Readers that cannot be fooled (issue 29): a journal is one run, and what
 * reads a saved file refuses what is not one. Each class is its own ctest
 * (cli/readers_<class>, CMakeLists.txt), run as `cli_readers GPUQUAL CLASS`:
 * the journals are made by the gpuqual under test, then spoiled the way a
 * user's file gets spoiled (lines of another run appended, a line repeated,
 * another revision's header, a line cut off by a crash, a card directory
 * holding another card's journal), and every reader is held to one line
 * naming the file, the line and the reason, exit 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include <cmocka.h>

static const char *bin;
static char dir[64];
static char *out, *err; /* the last command's stdout and stderr */

static char *slurp(const char *p)
{
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char *b = calloc(1, 1 << 20);
    assert_non_null(b);
    size_t n = fread(b, 1, (1 << 20) - 1, f);
    b[n] = 0;
    fclose(f);
    return b;
}

/* Runs "sh -c CMD" in dir ($G is gpuqual); returns its exit code. */
static int sh(const char *fmt, ...)
{
    char cmd[4096], full[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "cd '%s' && G='%s' && ( %s ) >out.txt 2>err.txt", dir, bin, cmd);
    int st = system(full);
    assert_true(st != -1 && WIFEXITED(st));
    free(out);
    free(err);
    char p[128];
    snprintf(p, sizeof p, "%s/out.txt", dir);
    out = slurp(p);
    snprintf(p, sizeof p, "%s/err.txt", dir);
    err = slurp(p);
    return WEXITSTATUS(st);
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* A refusal: exit 2, one line on stderr holding each of the texts. */
static void refused(int rc, const char *a, const char *b)
{
    if (rc != 2 || lines(err) != 1 || !strstr(err, a) || (b && !strstr(err, b)))
        fprintf(stderr, "exit %d, stderr:\n%s(want '%s' and '%s')\n", rc, err, a, b ? b : "");
    assert_int_equal(rc, 2);
    assert_int_equal(lines(err), 1);
    assert_non_null(strstr(err, a));
    if (b)
        assert_non_null(strstr(err, b));
}

#define RUN "$G run --sim h200x2 -i 2 -q"

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gq-readers-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    /* two whole runs of the same machine and options: j (with its document r.json) and k */
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s' run --sim h200x2 -i 2 -q --json r.json --journal j.jsonl >/dev/null 2>&1 && "
             "'%s' run --sim h200x2 -i 2 -q --journal k.jsonl >/dev/null 2>&1",
             dir, bin, bin);
    return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    free(out);
    free(err);
    out = err = NULL;
    return system(cmd) == 0 ? 0 : -1;
}

/* Lines of another run appended to a journal: resume, report and compare
 * refuse it, naming the first foreign line (once, on another machine, such a
 * line put an RTX 4090's figure in an H200's table). */
static void test_mixed(void **state)
{
    (void)state;
    assert_int_equal(sh("cp j.jsonl m.jsonl && sed -n 2,3p k.jsonl >>m.jsonl"), 0);
    char where[64];
    assert_int_equal(sh("wc -l <j.jsonl"), 0);
    snprintf(where, sizeof where, "m.jsonl' line %d:", atoi(out) + 1);
    refused(sh(RUN " --resume m.jsonl"), where, "a line of run");
    refused(sh("$G report m.jsonl"), where, "a journal holds one run");
    refused(sh("$G compare m.jsonl r.json"), where, "a journal holds one run");
    /* a whole other journal appended: its header is the line named */
    assert_int_equal(sh("cat j.jsonl k.jsonl >mm.jsonl"), 0);
    /* ... and the run it names is that header's run_id */
    assert_int_equal(sh("head -1 k.jsonl"), 0);
    json_t *kh = json_loads(out, 0, NULL);
    const char *kid = json_string_value(json_object_get(json_object_get(kh, "header"), "run_id"));
    assert_non_null(kid);
    char named[96];
    snprintf(named, sizeof named, "a second header (run %.40s%s", kid, strlen(kid) <= 40 ? ")" : "");
    json_decref(kh);
    refused(sh("$G report mm.jsonl"), where, named);
    refused(sh(RUN " --resume mm.jsonl"), where, named);
    /* a header without a run_id is "unnamed" */
    assert_int_equal(sh("cp j.jsonl mu.jsonl && head -1 k.jsonl | sed 's/\"run_id\"/\"no_id\"/' >>mu.jsonl"),
                     0);
    refused(sh("$G report mu.jsonl"), "a second header (run unnamed)", NULL);
}

/* A record repeated: the same measurement would count twice. */
static void test_duplicate(void **state)
{
    (void)state;
    assert_int_equal(sh("head -40 j.jsonl >d.jsonl && sed -n 2p j.jsonl >>d.jsonl"), 0);
    refused(sh(RUN " --resume d.jsonl"), "d.jsonl' line 41:", "the same measurement as line 2");
    refused(sh("$G report d.jsonl"), "d.jsonl' line 41:", "the same measurement as line 2");
    refused(sh("$G compare r.json d.jsonl"), "d.jsonl' line 41:", "the same measurement as line 2");
}

/* A header of another revision: resume only when asked; compare compares
 * across revisions (that is its job). */
static void test_revision(void **state)
{
    (void)state;
    assert_int_equal(sh("head -40 j.jsonl | sed '1s/\"git\":\"[^\"]*\"/\"git\":\"0123456789ab\"/' >v.jsonl"),
                     0);
    refused(sh(RUN " --resume v.jsonl"), "v.jsonl' line 1:", "--resume-other-revision");
    assert_non_null(strstr(err, "git 0123456789ab"));
    assert_int_equal(sh("$G compare v.jsonl r.json"), 0);
    int rc = sh(RUN " --resume v.jsonl --resume-other-revision --json v.json");
    if (rc)
        fprintf(stderr, "%s", err);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(err, "re-used from v.jsonl"));
    /* --help names the flag */
    assert_int_equal(sh("$G run --help"), 0);
    assert_non_null(strstr(out, "--resume-other-revision"));
    assert_int_equal(sh("$G card --help"), 0);
    assert_non_null(strstr(out, "--resume-other-revision"));
}

/* The measurements (plan items) marked done in the first n lines of journal p. */
static int finished_items(const char *p, int n)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, p);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1 << 16];
    int nrec = 0, done[4096] = {0};
    for (int l = 0; l < n && fgets(line, sizeof line, f); l++) {
        json_t *root = json_loads(line, 0, NULL);
        assert_non_null(root);
        json_t *st = json_object_get(root, "step");
        if (json_object_get(root, "record"))
            nrec++;
        else if (st && !strcmp(json_string_value(json_object_get(st, "status")), "done") &&
                 json_is_integer(json_object_get(st, "item")))
            done[json_integer_value(json_object_get(st, "item")) % 4096] = 1;
        json_decref(root);
    }
    fclose(f);
    int k = 0;
    for (int i = 0; i < 4096; i++)
        k += done[i];
    return nrec ? k : 0;
}

/* A line cut off by a crash is dropped, and the one warning says so and how
 * many measurements were re-used. */
static void test_torn(void **state)
{
    (void)state;
    assert_int_equal(sh("head -50 j.jsonl >t.jsonl && sed -n 51p j.jsonl | head -c 100 >>t.jsonl"), 0);
    int reused = finished_items("t.jsonl", 50);
    assert_true(reused > 0);
    char want[128];
    snprintf(want, sizeof want, "was unfinished (cut off mid-write) and was dropped; %d measurements re-used",
             reused);
    assert_int_equal(sh("$G report t.jsonl"), 5); /* an interrupted run */
    assert_int_equal(lines(err), 1);
    assert_non_null(strstr(err, "t.jsonl: the journal's last line was unfinished"));
    int rc = sh(RUN " --resume t.jsonl --json t.json");
    if (rc || !strstr(err, want))
        fprintf(stderr, "exit %d, stderr:\n%s(want '%s')\n", rc, err, want);
    assert_int_equal(rc, 0);
    assert_int_equal(lines(err), 1);
    assert_non_null(strstr(err, want));
    /* the resumed journal reads whole, as the run's document */
    assert_int_equal(sh("$G report t.jsonl"), 0);
    assert_int_equal(sh("$G report t.json"), 0);
}

/* A partial card directory whose journal is another card's. */
static void test_carddir(void **state)
{
    (void)state;
    assert_int_equal(sh("$G card --sim h200x2 --level quick -q -o c1"), 0);
    assert_int_equal(sh("cp -r c1 c2.partial-20261206T000000Z-0badcafe"), 0);
    refused(sh("$G card --sim h200x2 --level quick -q --resume c2"),
            "c2.partial-20261206T000000Z-0badcafe/journal.jsonl' line 1:",
            "the card directory names run 20261206T000000Z-0badcafe");
}

/* report of a whole run's journal exits, and prints, as report of its document. */
static void test_complete(void **state)
{
    (void)state;
    int a = sh("$G report r.json");
    char *doc = strdup(out);
    int b = sh("$G report j.jsonl");
    assert_int_equal(b, a);
    assert_string_equal(out, doc);
    free(doc);
    /* cut before its end mark: an interrupted run (exit 5) */
    assert_int_equal(sh("head -60 j.jsonl >i.jsonl"), 0);
    assert_int_equal(sh("$G report i.jsonl"), 5);
}

/* Every run of white space in s as one space. */
static void squeeze(char *s)
{
    char *o = s;
    for (const char *p = s; *p; p++)
        if (!(*p == ' ' || *p == '\n') || (o > s && o[-1] != ' '))
            *o++ = *p == '\n' ? ' ' : *p;
    *o = 0;
}

/* The limit a refusal names ("over the 256 MiB limit"), or "". */
static const char *limit_named(char *buf, size_t cap)
{
    const char *p = strstr(err, "over the ");
    const char *e = p ? strstr(p, " limit") : NULL;
    if (!p || !e)
        return "";
    snprintf(buf, cap, "%.*s", (int)(e - p - 9), p + 9);
    return buf;
}

/* A 2 GiB sparse file is refused from its size, before it is read: every
 * reader of a saved document, under a memory limit far below the file's size
 * (400 MB of address space; not under ASan, which reserves terabytes of it),
 * the message naming the size and the limit, and the same limit stated in the
 * command's --help. */
#ifdef GQ_TEST_ASAN
#define MEMLIMIT ""
#else
#define MEMLIMIT "ulimit -v 400000 && "
#endif
static void test_size(void **state)
{
    (void)state;
    assert_int_equal(sh("truncate -s 2G big.json && truncate -s 2G big.expect && truncate -s 2G big.topo"),
                     0);
    static const struct {
        const char *cmd, *help;
    } readers[] = {
        {"$G report big.json", "$G report --help"},
        {"$G compare r.json big.json", "$G compare --help"},
        {"$G place --input big.json --prefill 1 --decode 1", "$G place --help"},
        {"$G kv --input big.json --config big.json", "$G kv --help"},
        {"$G kv --config big.json --tokens 8000 --p2p-gbps 53", "$G kv --help"},
        {RUN " --resume big.json", "$G run --help"},
        {"$G card --sim h200x2 --resume big", NULL}, /* no partial directory: refused before */
        {"$G report r.json --expect big.expect", "$G report --help"},
        {"$G card --sim h200x2 --expect big.expect -o c9", "$G card --help"},
        {"$G topo --sim ./big.topo", "$G topo --help"},
        {"$G topo --from-snapshot big.json", "$G topo --help"},
    };
    for (size_t i = 0; i < sizeof readers / sizeof readers[0]; i++) {
        if (!readers[i].help)
            continue;
        int rc = sh("%s%s", MEMLIMIT, readers[i].cmd);
        if (rc != 2 ||
            (!strstr(err, "(2147483648 bytes), over the ") && !strstr(err, "(2147483648 bytes, over")))
            fprintf(stderr, "%s: exit %d, stderr:\n%s", readers[i].cmd, rc, err);
        assert_int_equal(rc, 2);
        assert_int_equal(lines(err), 1);
        char lim[64];
        if (strstr(err, "(2147483648 bytes), over the ")) {
            limit_named(lim, sizeof lim);
            assert_true(lim[0]);
        } else { /* the topology file's own: "over the limit of 1048576 bytes (1 MiB)" */
            assert_non_null(
                strstr(err, "larger than 1 MiB (2147483648 bytes, over the limit of 1048576 bytes)"));
            snprintf(lim, sizeof lim, "at most 1 MiB");
        }
        char *e = strdup(err);
        assert_int_equal(sh("%s", readers[i].help), 0);
        squeeze(out); /* help wraps its lines */
        if (!strstr(out, lim))
            fprintf(stderr, "%s: '%s' (from: %s) not in its --help\n", readers[i].cmd, lim, e);
        assert_non_null(strstr(out, lim));
        free(e);
    }
}

/* A FIFO where a topology file is needed: refused at once, never waited on. */
static void test_fifo(void **state)
{
    (void)state;
    assert_int_equal(sh("rm -f tp && mkfifo tp"), 0);
    refused(sh("timeout 20 $G topo --sim ./tp"), "./tp:1:1: is a FIFO, not a regular file", NULL);
    refused(sh("timeout 20 $G run --sim ./tp -q"), "./tp:1:1: is a FIFO, not a regular file", NULL);
    /* a document FIFO without a writer is waited on, as cat does, until SIGTERM */
    assert_int_equal(sh("rm -f dp && mkfifo dp"), 0);
    int rc = sh("$G report dp & p=$!; sleep 1; kill -TERM $p; wait $p");
    assert_int_equal(rc, 130);
    assert_int_equal(lines(err), 1);
    assert_non_null(strstr(err, "reading 'dp' was interrupted"));
    /* a stream is read once, up to the file's limit: 20 MB of one JSON string
     * into kv --config (16 MiB) stops there, under the memory limit */
    assert_int_equal(sh("rm -f kf && mkfifo kf"), 0);
    refused(sh("( (printf '{\"a\":\"'; head -c 20000000 /dev/zero | tr '\\0' a) >kf 2>/dev/null & ) && "
               "%s$G kv --config kf --tokens 8000 --p2p-gbps 53",
               MEMLIMIT),
            "model config 'kf' holds more than 16 MiB", NULL);
}

/* Thresholds no check's physics allows are refused where they enter: --set
 * and an expectations file, naming the value and what would be right. */
static void test_threshold(void **state)
{
    (void)state;
    refused(sh("$G card --sim h200x2 --level quick -q -o c3 --set h2d_gbps.fail=-5"),
            "--set 'h2d_gbps.fail=-5': -5 cannot be a threshold of h2d_gbps_min", "give a value above 0");
    refused(sh("$G report r.json --set p2p_latency_ns.warn=0"), "--set 'p2p_latency_ns.warn=0': 0 cannot be",
            "give a value above 0");
    refused(sh("$G report r.json --set H200:sm_clock_mhz.fail=-1200"), "-1200 cannot be a threshold", NULL);
    refused(sh("$G report r.json --set spread_pct.warn=-1"), "-1 cannot be a threshold of spread_pct_max",
            "0 % or more");
    assert_int_equal(sh("$G report r.json --set spread_pct.warn=0 >/dev/null"),
                     4); /* 0 %: any spread warns */
    /* an expectations file: a fail level of 0 GB/s */
    assert_int_equal(
        sh("sed 's/\"h2d_gbps_min\": { \"warn\": 53, \"fail\": 48 }/\"h2d_gbps_min\": { \"warn\": 53, "
           "\"fail\": 0 }/' '%s' >z.expect && grep -q '\"fail\": 0 }' z.expect",
           GQ_SRC "/examples/expect/h200.expect"),
        0);
    refused(sh("$G report r.json --expect z.expect"),
            "'h2d_gbps_min' fail 0 GB/s cannot be a threshold of host-to-GPU bandwidth alone",
            "give a value above 0");
}

/* A path to write with a control character in it is refused before anything
 * is measured or written, naming the character. */
static void test_newline(void **state)
{
    (void)state;
    static const char *const cmds[] = {
        RUN " --json \"$(printf 'n1\\nx.json')\"",
        RUN " --journal \"$(printf 'n2\\nx.jsonl')\"",
        "$G stress --sim h200x2 --duration 1 --csv \"$(printf 'n3\\tx.csv')\"",
        "$G card --sim h200x2 --level quick -q -o \"$(printf 'n4\\ncard')\"",
        "$G report r.json -o \"$(printf 'n5\\nx.html')\"",
        "$G topo --sim h200x2 --save-snapshot \"$(printf 'n6\\nx.json')\"",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        int rc = sh("%s", cmds[i]);
        refused(rc, "it holds a control character", "give a path without control characters");
        assert_int_equal(sh("ls | grep -c '^n[0-9]' || true"), 0);
        assert_int_equal(atoi(out), 0); /* nothing written, no directory made */
    }
}

/* A value quoted in a refusal is shortened at an item boundary, never cut
 * mid-word (once: "...`host_to_device_bidirecti`; resume with the same
 * options..."). */
static void test_messages(void **state)
{
    (void)state;
    refused(sh("$G run --sim h200x2 -i 2 -q -t host_to_device_memcpy_ce --resume j.jsonl"),
            "line 1: its options.tests is [", "this run's is [\"host_to_device_memcpy_ce\"]");
    /* the journal's list of 40-odd tests, quoted up to a whole item and "..." */
    const char *v = strstr(err, "options.tests is [") + strlen("options.tests is [");
    const char *dots = strstr(v, "...");
    assert_non_null(dots);
    assert_true(dots - v > 10);
    assert_true(dots[-1] == ','); /* after an item's comma */
    assert_true(dots[-2] == '"'); /* the item before it whole, closing quote included */
    assert_int_equal(strncmp(dots, "..., this run's is", 18), 0);
    int quotes = 0;
    for (const char *p = v; p < dots; p++)
        quotes += *p == '"';
    assert_int_equal(quotes % 2, 0); /* no item opened and left cut */
    /* a --set spec too long for its buffer: quoted to a whole word */
    refused(sh("$G report r.json --set "
               "h2d_gbps.fail=5,"
               "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
               "aaaaaaaaaaaaaaaaaaaaaaa"),
            "--set: 'h2d_gbps.fail=5,...' is too long", NULL);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cli_readers GPUQUAL [CLASS]\n");
        return 2;
    }
    bin = argv[1];
    if (argc > 2)
        cmocka_set_test_filter(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mixed),   cmocka_unit_test(test_duplicate), cmocka_unit_test(test_revision),
        cmocka_unit_test(test_torn),    cmocka_unit_test(test_carddir),   cmocka_unit_test(test_complete),
        cmocka_unit_test(test_size),    cmocka_unit_test(test_fifo),      cmocka_unit_test(test_threshold),
        cmocka_unit_test(test_newline), cmocka_unit_test(test_messages),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
