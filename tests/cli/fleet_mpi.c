/* gpuqual fleet under mpirun (registered only where MPI and mpirun were
 * found): three simulated ranks, one given a thermal fault, must name that
 * node, and only it; three healthy ranks with different seeds must pass with
 * no outlier; a singleton run is a fleet of one node; a fleet's -o DIR holding
 * an earlier fleet is refused without --force and replaced with it.
 *
 * usage: fleet_mpi MPIRUN GPUQUAL */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;
/* TMPDIR for the runs: Open MPI makes its session directory there
 * (ompi.HOST.UID), and a shared /tmp one can collide with another mpirun
 * starting at the same moment ("mkdir ... File exists", orte_init fails). */
static const char *session_tmp;

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                             \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fputc('\n', stderr);                                                                             \
            failures++;                                                                                      \
        }                                                                                                    \
    } while (0)

/* Run argv; stdout and stderr to log. Returns the exit code (-1: killed). */
static int run(char *const argv[], const char *log)
{
    pid_t pid = fork();
    if (pid == 0) {
        FILE *f = freopen(log, "w", stdout);
        (void)f;
        dup2(1, 2);
        if (session_tmp)
            setenv("TMPDIR", session_tmp, 1);
        alarm(240);
        execv(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void show(const char *log)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cat '%s' >&2", log);
    if (system(cmd) != 0)
        fprintf(stderr, "(cannot show %s)\n", log);
}

static json_t *load(const char *dir)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/fleet.json", dir);
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    CHECK(j, "%s: %s", path, je.text);
    return j;
}

/* DIR/fleet.md is Markdown whose first line is heading and which holds a table. */
static void check_md(const char *dir, const char *heading)
{
    char path[1100], text[4096] = "";
    snprintf(path, sizeof path, "%s/fleet.md", dir);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = 0;
    if (f)
        fclose(f);
    CHECK(!strncmp(text, heading, strlen(heading)) && text[strlen(heading)] == '\n',
          "%s does not start '%s': '%.60s'", path, heading, text);
    CHECK(strstr(text, "\n|---"), "%s has no Markdown table", path);
}

static const json_t *node(const json_t *fleet, int rank)
{
    size_t i;
    const json_t *n;
    json_array_foreach(json_object_get(fleet, "nodes"), i,
                       n) if (json_integer_value(json_object_get(n, "rank")) == rank) return n;
    return NULL;
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static int outliers_of(const json_t *fleet, int rank)
{
    int n = 0;
    size_t i;
    const json_t *o;
    json_array_foreach(json_object_get(fleet, "outliers"), i, o) n +=
        json_integer_value(json_object_get(o, "rank")) == rank;
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fleet_mpi MPIRUN GPUQUAL\n");
        return 2;
    }
    char *mpirun = argv[1], *bin = argv[2];
    char tmp[] = "/tmp/gq-fleet-XXXXXX";
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    session_tmp = tmp;
    char dir[256], log[256], host[64] = "";
    gethostname(host, sizeof host);
    host[sizeof host - 1] = 0;

    /* 1. Three ranks, rank 1's GPU 1 overheats under the (simulated) stress. */
    snprintf(dir, sizeof dir, "%s/faulty", tmp);
    snprintf(log, sizeof log, "%s/faulty.log", tmp);
    char *a1[] = {mpirun,
                  "--allow-run-as-root",
                  "--oversubscribe",
                  "--bind-to",
                  "none",
                  "-np",
                  "3",
                  bin,
                  "fleet",
                  "--sim",
                  "h200x2",
                  "--stress",
                  "60s",
                  "--budget",
                  "2m",
                  "--sim-seed-per-rank",
                  "--sim-fault",
                  "rank1:gpu1:thermal",
                  "-q",
                  "-o",
                  dir,
                  NULL};
    int rc = run(a1, log);
    CHECK(rc == 1, "faulty fleet: exit %d, expected 1 (a node fails)", rc);
    json_t *doc = load(dir);
    const json_t *f = json_object_get(doc, "fleet");
    CHECK(!strcmp(str(doc, "kind"), "fleet"), "kind '%s'", str(doc, "kind"));
    CHECK(json_is_integer(json_object_get(doc, "schema_version")), "no schema_version");
    CHECK(json_array_size(json_object_get(f, "nodes")) == 3, "%zu nodes, expected 3",
          json_array_size(json_object_get(f, "nodes")));
    CHECK(!strcmp(str(f, "verdict"), "fail"), "fleet verdict '%s', expected fail", str(f, "verdict"));
    CHECK(json_integer_value(json_object_get(f, "figures_compared")) > 10, "only %lld figures compared",
          (long long)json_integer_value(json_object_get(f, "figures_compared")));
    for (int r = 0; r < 3; r++) {
        const json_t *n = node(f, r);
        CHECK(n, "rank %d missing", r);
        bool bad = r == 1;
        CHECK(!strcmp(str(n, "verdict"), bad ? "fail" : "pass"), "rank %d verdict '%s'", r,
              str(n, "verdict"));
        CHECK(json_is_true(json_object_get(n, "flagged")) == bad, "rank %d flagged wrongly", r);
        CHECK((outliers_of(f, r) > 0) == bad, "rank %d has %d outliers", r, outliers_of(f, r));
        /* each node's own card, whose verdict the fleet reports */
        char card[512];
        snprintf(card, sizeof card, "%s/%s-rank%d/card.json", dir, host, r);
        json_error_t je;
        json_t *c = json_load_file(card, 0, &je);
        CHECK(c, "%s: %s", card, je.text);
        CHECK(!strcmp(str(c, "kind"), "card"), "%s: kind '%s'", card, str(c, "kind"));
        CHECK(!strcmp(str(json_object_get(c, "card"), "verdict"), bad ? "fail" : "pass"), "%s: verdict '%s'",
              card, str(json_object_get(c, "card"), "verdict"));
        json_decref(c);
    }
    /* The hot GPU: its temperature above the median, by more than 5 °C (an absolute delta, no %). */
    bool hot = false;
    size_t i;
    const json_t *o;
    json_array_foreach(json_object_get(f, "outliers"), i, o)
    {
        if (!strcmp(str(o, "figure"), "stress max temperature gpu:1")) {
            hot = json_real_value(json_object_get(o, "value")) >
                      json_real_value(json_object_get(o, "fleet_median")) &&
                  json_real_value(json_object_get(o, "delta_abs")) > 5 &&
                  json_is_null(json_object_get(o, "delta_pct"));
        }
    }
    CHECK(hot, "no outlier 'stress max temperature gpu:1' above the median");
    check_md(dir, "# gpuqual fleet: 3 nodes — FAIL");
    json_decref(doc);
    if (failures)
        show(log);

    /* 2. Three healthy ranks, slightly different seeds: pass, no outlier. */
    snprintf(dir, sizeof dir, "%s/healthy", tmp);
    snprintf(log, sizeof log, "%s/healthy.log", tmp);
    char *a2[] = {mpirun,
                  "--allow-run-as-root",
                  "--oversubscribe",
                  "--bind-to",
                  "none",
                  "-np",
                  "3",
                  bin,
                  "fleet",
                  "--sim",
                  "h200x2",
                  "--no-stress",
                  "--budget",
                  "1m",
                  "--sim-seed-per-rank",
                  "-q",
                  "-o",
                  dir,
                  NULL};
    int before = failures;
    rc = run(a2, log);
    CHECK(rc == 0, "healthy fleet: exit %d, expected 0", rc);
    doc = load(dir);
    f = json_object_get(doc, "fleet");
    CHECK(!strcmp(str(f, "verdict"), "pass"), "healthy fleet verdict '%s'", str(f, "verdict"));
    CHECK(json_array_size(json_object_get(f, "outliers")) == 0, "healthy fleet has %zu outliers",
          json_array_size(json_object_get(f, "outliers")));
    CHECK(json_array_size(json_object_get(f, "nodes")) == 3, "healthy fleet: not 3 nodes");
    /* rank 0 gathered each node's summary (docs/json.md, "fleet-node"), not its card */
    for (int r = 0; r < 3; r++) {
        const json_t *nd = node(f, r);
        const json_t *figs = json_object_get(nd, "figures");
        CHECK(json_is_object(figs) && json_object_size(figs) > 10, "node %d: %zu summary figures", r,
              json_object_size(figs));
        CHECK(json_array_size(json_object_get(nd, "identity")) == 2, "node %d: no identity of 2 GPUs", r);
        CHECK(strstr(str(nd, "artefacts"), "-rank") != NULL, "node %d: artefacts '%s'", r,
              str(nd, "artefacts"));
    }
    json_decref(doc);
    if (failures > before)
        show(log);

    /* 2b. Without stress, rank 1's GPU 0 link runs at x8: its host paths move half (27.5 of
     * 55.1 GB/s), so that node fails its card and is the one flagged, with or without stress. */
    snprintf(dir, sizeof dir, "%s/x8", tmp);
    snprintf(log, sizeof log, "%s/x8.log", tmp);
    char *ax8[] = {mpirun,
                   "--allow-run-as-root",
                   "--oversubscribe",
                   "--bind-to",
                   "none",
                   "-np",
                   "3",
                   bin,
                   "fleet",
                   "--sim",
                   "h200x2",
                   "--no-stress",
                   "--budget",
                   "1m",
                   "--sim-seed-per-rank",
                   "--sim-fault",
                   "rank1:gpu0:link-x8",
                   "-q",
                   "-o",
                   dir,
                   NULL};
    before = failures;
    rc = run(ax8, log);
    CHECK(rc == 1, "x8 fleet: exit %d, expected 1 (a node fails)", rc);
    doc = load(dir);
    f = json_object_get(doc, "fleet");
    for (int r = 0; r < 3; r++) {
        const json_t *n = node(f, r);
        CHECK(n, "x8 fleet: rank %d missing", r);
        CHECK(!strcmp(str(n, "verdict"), r == 1 ? "fail" : "pass"), "x8 fleet: rank %d verdict '%s'", r,
              str(n, "verdict"));
        CHECK(json_is_true(json_object_get(n, "flagged")) == (r == 1), "x8 fleet: rank %d flagged wrongly",
              r);
    }
    json_decref(doc);
    if (failures > before)
        show(log);

    /* 3. No mpirun: a fleet of one node. */
    snprintf(dir, sizeof dir, "%s/single", tmp);
    snprintf(log, sizeof log, "%s/single.log", tmp);
    char *a3[] = {bin, "fleet", "--sim", "h200x2", "--no-stress", "--budget", "1m", "-o", dir, NULL};
    before = failures;
    rc = run(a3, log);
    CHECK(rc == 0, "singleton: exit %d, expected 0", rc);
    doc = load(dir);
    f = json_object_get(doc, "fleet");
    CHECK(json_array_size(json_object_get(f, "nodes")) == 1, "singleton: not 1 node");
    CHECK(!strcmp(str(f, "verdict"), "pass"), "singleton verdict '%s'", str(f, "verdict"));
    check_md(dir, "# gpuqual fleet: 1 node — PASS");
    json_decref(doc);
    if (failures > before)
        show(log);

    /* 3a. A --sim-fault naming a rank the fleet does not have: a fleet of one node has rank 0 only,
     * so rank 1 (the largest named, not the last) is refused before anything runs: exit 2, one
     * line, no -o DIR made. */
    snprintf(dir, sizeof dir, "%s/norank", tmp);
    snprintf(log, sizeof log, "%s/norank.log", tmp);
    char *a3a[] = {bin,      "fleet",       "--sim",
                   "h200x2", "--no-stress", "--budget",
                   "1m",     "--sim-fault", "rank1:gpu1:thermal,rank0:gpu0:ecc",
                   "-o",     dir,           NULL};
    before = failures;
    rc = run(a3a, log);
    CHECK(rc == 2, "rank 1 of a fleet of one: exit %d, expected 2", rc);
    {
        char said[2048] = "";
        FILE *lf = fopen(log, "r");
        size_t nr = lf ? fread(said, 1, sizeof said - 1, lf) : 0;
        said[nr] = 0;
        if (lf)
            fclose(lf);
        CHECK(strstr(said,
                     "--sim-fault 'rank1:gpu1:thermal,rank0:gpu0:ecc': rank 1 does not exist (this fleet "
                     "has ranks 0-0)") &&
                  strchr(said, '\n') == said + strlen(said) - 1,
              "rank 1 of a fleet of one said '%s'", said);
        struct stat nst;
        CHECK(stat(dir, &nst) != 0, "rank 1 of a fleet of one made %s", dir);
    }
    if (failures > before)
        show(log);

    /* 3b. Another process on GPU 0: the node's card is watched by the clean room, as
     * `gpuqual card` is, so it is INCOMPLETE "GPU 0 busy" (it passed before: a fleet
     * rank ran its card without the clean room). */
    snprintf(dir, sizeof dir, "%s/busy", tmp);
    snprintf(log, sizeof log, "%s/busy.log", tmp);
    char *a3b[] = {bin,           "fleet",     "--sim", "h200x2", "--no-stress", "--budget", "1m",
                   "--sim-fault", "gpu0:busy", "-q",    "-o",     dir,           NULL};
    before = failures;
    rc = run(a3b, log);
    CHECK(rc == 5, "busy singleton: exit %d, expected 5 (incomplete)", rc);
    doc = load(dir);
    f = json_object_get(doc, "fleet");
    CHECK(!strcmp(str(node(f, 0), "verdict"), "incomplete"), "busy singleton: node verdict '%s'",
          str(node(f, 0), "verdict"));
    json_decref(doc);
    {
        char card[512];
        snprintf(card, sizeof card, "%s/%s-rank0/card.json", dir, host);
        json_error_t je;
        json_t *c = json_load_file(card, 0, &je);
        CHECK(c, "%s: %s", card, je.text);
        CHECK(!strcmp(str(json_object_get(c, "card"), "verdict_text"), "INCOMPLETE: GPU 0 busy"),
              "busy singleton: card verdict '%s'", str(json_object_get(c, "card"), "verdict_text"));
        json_decref(c);
    }
    if (failures > before)
        show(log);

    /* 4. -o DIR holding the earlier fleet of (2): refused without --force (exit 2, one line,
     * nothing changed); with --force a fleet of one node replaces it: its own folder swapped
     * in, fleet.json of one node, and the earlier ranks 1 and 2 removed. */
    snprintf(dir, sizeof dir, "%s/healthy", tmp);
    snprintf(log, sizeof log, "%s/again.log", tmp);
    char *a4[] = {bin, "fleet", "--sim", "h200x2", "--no-stress", "--budget", "1m", "-q", "-o", dir, NULL};
    before = failures;
    rc = run(a4, log);
    char text[4096] = "", node1[512];
    FILE *lf = fopen(log, "r");
    size_t nr = lf ? fread(text, 1, sizeof text - 1, lf) : 0;
    text[nr] = 0;
    if (lf)
        fclose(lf);
    CHECK(rc == 2, "earlier fleet without --force: exit %d, expected 2", rc);
    CHECK(strstr(text, "holds an earlier gpuqual fleet (fleet.json and 3 node folders); give --force") &&
              strchr(text, '\n') == text + strlen(text) - 1,
          "earlier fleet without --force said '%s'", text);
    snprintf(node1, sizeof node1, "%s/%s-rank1/card.json", dir, host);
    struct stat st;
    CHECK(stat(node1, &st) == 0, "the refused fleet removed %s", node1);
    char *a5[] = {bin,  "fleet", "--sim",   "h200x2", "--no-stress", "--budget",
                  "1m", "-q",    "--force", "-o",     dir,           NULL};
    rc = run(a5, log);
    CHECK(rc == 0, "--force: exit %d, expected 0", rc);
    doc = load(dir);
    f = json_object_get(doc, "fleet");
    CHECK(json_array_size(json_object_get(f, "nodes")) == 1, "--force: fleet.json has %zu nodes, expected 1",
          json_array_size(json_object_get(f, "nodes")));
    json_decref(doc);
    for (int r = 0; r < 3; r++) {
        char nd[512];
        snprintf(nd, sizeof nd, "%s/%s-rank%d", dir, host, r);
        CHECK((stat(nd, &st) == 0) == (r == 0), "--force: %s %s", nd, r ? "is left" : "is missing");
    }
    if (failures > before)
        show(log);

    if (!failures) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", tmp);
        printf("fleet_mpi: all checks passed\n");
    } else
        fprintf(stderr, "fleet_mpi: %d check(s) failed; outputs kept in %s\n", failures, tmp);
    return failures ? 1 : 0;
}
