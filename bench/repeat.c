/* The repeatability benchmark's parts (bench/repeat.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "repeat.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

static int verdict_rank(const char *v)
{
    return !strcmp(v, "pass") ? 0 : !strcmp(v, "warn") ? 1 : !strcmp(v, "fail") ? 2 : -1;
}

/* ---- what a job deserves --------------------------------------------------- */

const char *gq_rep_deserved(const gq_rep_job *j)
{
    if (!j->f)
        return j->m->deserved;
    if (verdict_rank(j->f->verdict) < 0)
        return j->f->verdict; /* incomplete stands as it is */
    return verdict_rank(j->f->verdict) >= verdict_rank(j->m->deserved) ? j->f->verdict : j->m->deserved;
}

int gq_rep_named_gpu(const gq_rep_job *j)
{
    return j->f && !strcmp(j->f->named, "gpu:{gpu}") ? GQ_REP_FAULT_GPU : -1;
}

bool gq_rep_agrees(const gq_rep_job *j, const gq_rep_card *c)
{
    if (strcmp(c->verdict, gq_rep_deserved(j)))
        return false;
    if (!j->f)
        return true;
    int g = gq_rep_named_gpu(j);
    return g >= 0 && (c->named >> g & 1);
}

uint64_t gq_rep_wrong(const gq_rep_job *j, const gq_rep_card *c)
{
    int g = gq_rep_named_gpu(j);
    uint64_t ok = j->m->allowed | (g >= 0 ? (uint64_t)1 << g : 0);
    return c->named & ~ok;
}

/* ---- the files written before the first run ------------------------------- */

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Every "GPU N" in s into *mask. */
static void gpus_named(const char *s, uint64_t *mask)
{
    for (const char *p = strstr(s, "GPU "); p; p = strstr(p + 4, "GPU ")) {
        if (!isdigit((unsigned char)p[4]))
            continue;
        long g = strtol(p + 4, NULL, 10);
        if (g >= 0 && g < 64)
            *mask |= (uint64_t)1 << g;
    }
}

/* The known-differences file's "found" for this machine's card verdict, when
 * it is one verdict (a "found" that lists alternatives, "pass, or warn on 3
 * of 10 seeds", leaves the header's verdict as the deserved one). */
static void known_difference(gq_rep_machine *m, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        char *col[5] = {0}, *save = NULL, *p = line;
        int n = 0;
        for (char *t = strtok_r(p, "\t\n", &save); t && n < 5; t = strtok_r(NULL, "\t\n", &save))
            col[n++] = t;
        if (n < 4 || strcmp(col[0], m->name) || strcmp(col[1], "card verdict"))
            continue;
        if (verdict_rank(col[3]) >= 0) {
            snprintf(m->deserved, sizeof m->deserved, "%s", col[3]);
            snprintf(m->from, sizeof m->from, "%s", base_name(path));
        }
    }
    fclose(f);
}

int gq_rep_machine_load(gq_rep_machine *m, const char *path, const char *known_diff, char *err, size_t errn)
{
    memset(m, 0, sizeof *m);
    m->noise = -1;
    snprintf(m->path, sizeof m->path, "%s", path);
    const char *b = base_name(path);
    size_t l = strlen(b);
    if (l > 5 && !strcmp(b + l - 5, ".topo"))
        l -= 5;
    snprintf(m->name, sizeof m->name, "%.*s", (int)l, b);
    FILE *f = fopen(path, "r");
    if (!f)
        return fail(err, errn, "%s: %s", path, strerror(errno));
    char line[1024];
    bool header = true, block = false;
    while (fgets(line, sizeof line, f)) {
        if (line[0] != '#')
            header = false;
        if (header) {
            if (strstr(line, "EXPECTED ANSWER") || strstr(line, "DESERVED VERDICT"))
                block = true;
            if (block)
                gpus_named(line, &m->allowed);
            const char *v = strstr(line, "card verdict:");
            if (v) {
                v += strlen("card verdict:");
                while (*v == ' ')
                    v++;
                size_t k = 0;
                while (isalpha((unsigned char)v[k]) && k + 1 < sizeof m->deserved)
                    k++;
                snprintf(m->deserved, sizeof m->deserved, "%.*s", (int)k, v);
                snprintf(m->from, sizeof m->from, "header");
            }
            continue;
        }
        double pct;
        if (!strncmp(line, "noise ", 6) && sscanf(line + 6, "%lf %%", &pct) == 1)
            m->noise = pct / 100;
        if (!strncmp(line, "gpu ", 4) || !strncmp(line, "gpu\t", 4))
            m->ngpu++;
    }
    fclose(f);
    if (known_diff)
        known_difference(m, known_diff);
    if (verdict_rank(m->deserved) < 0)
        return fail(err, errn, "%s: no \"card verdict: pass|warn|fail\" in its header", path);
    if (m->noise < 0)
        return fail(err, errn, "%s: no \"noise N %%\" line: its default noise cannot be read", path);
    if (m->ngpu < 2)
        return fail(err, errn, "%s: %d GPUs; the faults go on GPU %d", path, m->ngpu, GQ_REP_FAULT_GPU);
    return 0;
}

int gq_rep_faults_load(const char *path, gq_rep_fault *out, int max, char *err, size_t errn)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return fail(err, errn, "%s: %s", path, strerror(errno));
    char line[4096];
    int n = 0, ln = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char *col[6] = {0}, *save = NULL;
        int k = 0;
        for (char *t = strtok_r(line, "\t\n", &save); t && k < 6; t = strtok_r(NULL, "\t\n", &save))
            col[k++] = t;
        if (k < 5 || n >= max) {
            fclose(f);
            return fail(err, errn, "%s:%d: %s", path, ln,
                        k < 5 ? "expected fault, spec, stress, verdict, named, why (tab-separated)"
                              : "too many faults");
        }
        gq_rep_fault *q = &out[n];
        memset(q, 0, sizeof *q);
        char *end = NULL;
        q->stress_s = strtod(col[2], &end);
        if (end == col[2] || *end || q->stress_s < 0 ||
            (verdict_rank(col[3]) < 0 && strcmp(col[3], "incomplete"))) {
            fclose(f);
            return fail(err, errn,
                        "%s:%d: stress must be seconds >= 0 and verdict pass, warn, fail or incomplete", path,
                        ln);
        }
        snprintf(q->kind, sizeof q->kind, "%s", col[0]);
        snprintf(q->spec, sizeof q->spec, "%s", col[1]);
        snprintf(q->verdict, sizeof q->verdict, "%s", col[3]);
        snprintf(q->named, sizeof q->named, "%s", col[4]);
        n++;
    }
    fclose(f);
    return n;
}

/* ---- running gpuqual -------------------------------------------------------- */

static pid_t spawn(const char *bin, char *const argv[], const char *errfile)
{
    pid_t p = fork();
    if (p != 0)
        return p;
    int null = open("/dev/null", O_RDWR);
    int e = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (null < 0 || e < 0)
        _exit(127);
    dup2(null, 0);
    dup2(null, 1);
    dup2(e, 2);
    execv(bin, argv);
    _exit(127);
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[2048];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (unlink(p) && errno == EISDIR)
                remove_tree(p);
        }
    closedir(d);
    rmdir(dir);
}

static void first_line(const char *path, char *out, size_t n)
{
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (fgets(out, (int)n, f))
        out[strcspn(out, "\n")] = 0;
    fclose(f);
}

int gq_rep_binary_faults(const char *bin, const char *topo, const char *scratch, char kinds[][32], int max,
                         char *err, size_t errn)
{
    char dir[1100], efile[1100];
    snprintf(dir, sizeof dir, "%s/fault-probe", scratch);
    snprintf(efile, sizeof efile, "%s/fault-probe.err", scratch);
    char *argv[] = {(char *)bin, "card", "--sim", (char *)topo, "--sim-fault", "gpu0:?", "-o", dir, NULL};
    pid_t p = spawn(bin, argv, efile);
    int st = 0;
    if (p < 0 || waitpid(p, &st, 0) < 0)
        return fail(err, errn, "%s: cannot run it", bin);
    char line[2048];
    first_line(efile, line, sizeof line);
    unlink(efile);
    remove_tree(dir);
    const char *v = strstr(line, "valid: ");
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 2 || !v)
        return fail(err, errn, "%s card --sim-fault gpu0:? did not list the valid faults (it said: %s)", bin,
                    line);
    int n = 0;
    for (const char *p2 = v + 7; *p2 && n < max;) {
        size_t l = strcspn(p2, ",");
        const char *c = memchr(p2, ':', l);
        if (c) {
            size_t k = l - (size_t)(c + 1 - p2);
            while (k && isspace((unsigned char)c[k]))
                k--;
            snprintf(kinds[n++], 32, "%.*s", (int)k, c + 1);
        }
        p2 += l;
        while (*p2 == ',' || *p2 == ' ')
            p2++;
    }
    return n;
}

static void add_str(char *buf, size_t n, const char *sep, const char *s)
{
    size_t l = strlen(buf);
    if (l + 1 < n)
        snprintf(buf + l, n - l, "%s%s", l ? sep : "", s);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A GPU list as "[0,1,3]". */
static void gpu_list(const json_t *a, char *out, size_t n)
{
    snprintf(out, n, "[");
    size_t i;
    json_t *g;
    json_array_foreach(a, i, g)
    {
        size_t l = strlen(out);
        snprintf(out + l, n - l, "%s%lld", i ? "," : "", json_integer_value(g));
    }
    size_t l = strlen(out);
    snprintf(out + l, n - l, "]");
}

/* The domains, GPUs set aside and bottlenecks as one sorted string. */
static void outcome_key(const json_t *root, const json_t *card, char *key, size_t n)
{
    char *items[160];
    int k = 0;
    char buf[256];
    const json_t *dom = json_object_get(root, "domains");
    size_t i;
    json_t *d;
    json_array_foreach(dom, i, d)
    {
        if (k >= 150)
            break;
        char g[200];
        gpu_list(d, g, sizeof g);
        snprintf(buf, sizeof buf, "D%s", g);
        items[k++] = strdup(buf);
    }
    const json_t *aside = json_object_get(json_object_get(card, "domains"), "set_aside");
    json_array_foreach(aside, i, d)
    {
        if (k >= 150)
            break;
        snprintf(buf, sizeof buf, "A%lld", json_integer_value(json_object_get(d, "gpu")));
        items[k++] = strdup(buf);
    }
    const json_t *bn = json_object_get(root, "bottlenecks");
    json_array_foreach(bn, i, d)
    {
        if (k >= 150)
            break;
        char g[200];
        gpu_list(json_object_get(d, "gpus"), g, sizeof g);
        const char *dir = json_string_value(json_object_get(d, "direction"));
        snprintf(buf, sizeof buf, "B%s%s", dir ? dir : "?", g);
        items[k++] = strdup(buf);
    }
    qsort(items, (size_t)k, sizeof items[0], cmp_str);
    key[0] = 0;
    for (int j = 0; j < k; j++) {
        if (items[j])
            add_str(key, n, " ", items[j]);
        free(items[j]);
    }
}

int gq_rep_card_read(const char *card_json, gq_rep_card *c)
{
    json_error_t je;
    json_t *root = json_load_file(card_json, 0, &je);
    if (!root)
        return -1;
    const json_t *card = json_object_get(root, "card");
    const char *v = json_string_value(json_object_get(card, "verdict"));
    const char *vt = json_string_value(json_object_get(card, "verdict_text"));
    if (!v) {
        json_decref(root);
        return -1;
    }
    snprintf(c->verdict, sizeof c->verdict, "%s", v);
    snprintf(c->verdict_text, sizeof c->verdict_text, "%s", vt ? vt : v);
    c->planned_s = json_number_value(json_object_get(card, "planned_s"));
    c->budget_s = json_number_value(json_object_get(card, "budget_s"));
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(card, "checks"), i, x)
    {
        const char *cv = json_string_value(json_object_get(x, "verdict"));
        const char *subj = json_string_value(json_object_get(x, "subject"));
        const char *id = json_string_value(json_object_get(x, "id"));
        if (!cv || (strcmp(cv, "warn") && strcmp(cv, "fail")))
            continue;
        char r[128];
        snprintf(r, sizeof r, "%s@%s", id ? id : "?", subj ? subj : "?");
        add_str(c->reasons, sizeof c->reasons, ",", r);
        if (subj && !strncmp(subj, "gpu:", 4) && isdigit((unsigned char)subj[4])) {
            long g = strtol(subj + 4, NULL, 10);
            if (g >= 0 && g < 64)
                c->named |= (uint64_t)1 << g;
        }
    }
    json_array_foreach(json_object_get(card, "busy"), i, x)
    {
        json_int_t g = json_integer_value(json_object_get(x, "gpu"));
        if (g >= 0 && g < 64)
            c->named |= (uint64_t)1 << g;
    }
    json_array_foreach(json_object_get(card, "plan"), i, x)
    {
        const char *st = json_string_value(json_object_get(x, "status"));
        const char *why = json_string_value(json_object_get(x, "reason"));
        const char *step = json_string_value(json_object_get(x, "step"));
        bool cut = st && why && !strcmp(st, "skipped") && (!strcmp(why, "budget") || !strcmp(why, "error"));
        if (cut || (st && (!strcmp(st, "failed") || !strcmp(st, "interrupted")))) {
            char r[64];
            snprintf(r, sizeof r, "%s (%s)", step ? step : "?", cut ? why : st);
            add_str(c->incomplete, sizeof c->incomplete, ", ", r);
        }
    }
    outcome_key(root, card, c->key, sizeof c->key);
    json_decref(root);
    return 0;
}

static void job_argv(const gq_rep_job *j, const char *bin, const char *dir, char *buf, size_t bufn,
                     char *argv[], int max)
{
    int a = 0;
    size_t used = 0;
#define ARG(...)                                                                                             \
    do {                                                                                                     \
        int w_ = snprintf(buf + used, bufn - used, __VA_ARGS__);                                             \
        if (a < max - 1 && w_ >= 0 && used + (size_t)w_ < bufn) {                                            \
            argv[a++] = buf + used;                                                                          \
            used += (size_t)w_ + 1;                                                                          \
        }                                                                                                    \
    } while (0)
    ARG("%s", bin);
    ARG("card");
    ARG("--sim");
    ARG("%s", j->m->path);
    ARG("--sim-seed");
    ARG("%d", j->seed);
    if (j->noise >= 0) {
        ARG("--sim-noise");
        ARG("%.6g", j->noise);
    }
    ARG("--level");
    ARG("%s", j->level);
    if (j->f) {
        char spec[128];
        const char *t = strstr(j->f->spec, "{gpu}");
        if (t)
            snprintf(spec, sizeof spec, "%.*s%d%s", (int)(t - j->f->spec), j->f->spec, GQ_REP_FAULT_GPU,
                     t + 5);
        else
            snprintf(spec, sizeof spec, "%s", j->f->spec);
        ARG("--sim-fault");
        ARG("%s", spec);
    }
    if (j->f && j->f->stress_s > 0) {
        ARG("--stress");
        ARG("%gs", j->f->stress_s);
    } else {
        ARG("--no-stress");
    }
    ARG("-q");
    ARG("-o");
    ARG("%s", dir);
#undef ARG
    argv[a] = NULL;
}

static void finish(const char *dir, const char *efile, int status, gq_rep_card *c)
{
    memset(c, 0, sizeof *c);
    c->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    char p[1200];
    snprintf(p, sizeof p, "%s/card.json", dir);
    if (gq_rep_card_read(p, c)) {
        memset(c, 0, sizeof *c);
        c->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        snprintf(c->verdict, sizeof c->verdict, "%s", c->exit_code == 2 ? "refused" : "error");
        char line[512];
        first_line(efile, line, sizeof line);
        snprintf(c->verdict_text, sizeof c->verdict_text, "%s", line[0] ? line : "no card and no message");
    }
    remove_tree(dir);
    unlink(efile);
}

int gq_rep_run(const char *bin, const gq_rep_job *jobs, int n, int parallel, const char *scratch,
               gq_rep_card *out, void (*progress)(void *arg, int done, int total), void *arg, char *err,
               size_t errn)
{
    if (parallel < 1)
        parallel = 1;
    if (parallel > 64)
        parallel = 64;
    pid_t pid[64];
    int job[64];
    for (int s = 0; s < parallel; s++)
        pid[s] = 0;
    int next = 0, done = 0, running = 0;
    while (done < n) {
        for (int s = 0; s < parallel && next < n; s++) {
            if (pid[s])
                continue;
            char dir[1100], efile[1100], buf[4096], *argv[40];
            snprintf(dir, sizeof dir, "%s/c%d", scratch, s);
            snprintf(efile, sizeof efile, "%s/c%d.err", scratch, s);
            remove_tree(dir);
            job_argv(&jobs[next], bin, dir, buf, sizeof buf, argv, 40);
            pid[s] = spawn(bin, argv, efile);
            if (pid[s] < 0)
                return fail(err, errn, "%s: cannot start it: %s", bin, strerror(errno));
            job[s] = next++;
            running++;
        }
        int st = 0;
        pid_t p = waitpid(-1, &st, 0);
        if (p < 0)
            return fail(err, errn, "waitpid: %s", strerror(errno));
        for (int s = 0; s < parallel; s++) {
            if (pid[s] != p)
                continue;
            char dir[1100], efile[1100];
            snprintf(dir, sizeof dir, "%s/c%d", scratch, s);
            snprintf(efile, sizeof efile, "%s/c%d.err", scratch, s);
            finish(dir, efile, st, &out[job[s]]);
            pid[s] = 0;
            running--;
            done++;
            if (progress)
                progress(arg, done, n);
        }
    }
    (void)running;
    return 0;
}

/* ---- statistics --------------------------------------------------------------- */

void gq_rep_stats_of(const gq_rep_job *j, const gq_rep_card *c, int n, gq_rep_stats *s)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    int why_best = 0;
    for (int i = 0; i < n; i++) {
        bool ok = gq_rep_agrees(&j[i], &c[i]);
        s->agree += ok;
        s->wrong += gq_rep_wrong(&j[i], &c[i]) != 0;
        if (!i || c[i].planned_s < s->planned_min)
            s->planned_min = c[i].planned_s;
        if (!i || c[i].planned_s > s->planned_max)
            s->planned_max = c[i].planned_s;
        int v = 0;
        while (v < s->nverdict && strcmp(s->verdict[v], c[i].verdict))
            v++;
        if (v == s->nverdict && v < 8)
            snprintf(s->verdict[s->nverdict++], sizeof s->verdict[0], "%s", c[i].verdict);
        if (v < 8)
            s->verdict_n[v]++;
        int same = 0;
        for (int k = 0; k < n; k++)
            same += !strcmp(c[i].key, c[k].key);
        if (same > s->key_mode)
            s->key_mode = same;
        if (ok)
            continue;
        /* the commonest reason among the cards that disagreed */
        int cnt = 0;
        for (int k = 0; k < n; k++)
            cnt += !gq_rep_agrees(&j[k], &c[k]) && !strcmp(c[k].verdict_text, c[i].verdict_text) &&
                   !strcmp(c[k].reasons, c[i].reasons) && !strcmp(c[k].incomplete, c[i].incomplete);
        if (cnt > why_best) {
            why_best = cnt;
            snprintf(s->why, sizeof s->why, "%s%s%s%s%s", c[i].verdict_text, c[i].reasons[0] ? ": " : "",
                     c[i].reasons, c[i].incomplete[0] ? "; not run: " : "", c[i].incomplete);
            s->why_n = cnt;
        }
    }
}
