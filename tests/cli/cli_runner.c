/* Runs one tests/cli/ case file: each case is a command line, the exit code it
 * must give, and a text that must appear in its output; optional `file` lines
 * under a case read back the files it wrote.
 *
 * Case line (fields separated by " | "):
 *   EXIT | EXPECTED TEXT | ARGS...      ARGS split on spaces; '' = empty arg
 * ARGS may begin with setup words, which are not passed to the program:
 *   env:NAME=VALUE    NAME is set to VALUE in the case's environment (GQ_LOCK_DIR=@TMP@);
 *   flock:PATH        the runner holds an exclusive flock(2) on PATH (created, holding the line
 *                     "pid N, cli_runner holds it") while the case runs: a GPU lock another
 *                     gpuqual holds (measure/gpulock.c), for --sim-lock and --wait-busy;
 *   cp:SRC>DST        copy the file SRC to DST (DST's directory made if missing), before the case;
 *                     {run_id} in DST is the first "run_id" SRC holds (a journal's header), so a
 *                     finished card's journal becomes an interrupted one's: DIR.partial-{run_id}/;
 *   sub:FILE:OLD>NEW  replace the first OLD in FILE with NEW, before the case (a journal written
 *                     by another revision: sub:@TMP@/j.jsonl:"git":">"git":"0ther-).
 * An exit-2 case's `file` lines must name what cp: and sub: change (they run after the listing).
 * Lines starting with '#' and blank lines are ignored. In ARGS and in `file`
 * lines, @SRC@ is replaced by the source directory and @TMP@ by a temporary
 * directory that all cases of the file share (in order).
 *
 * File lines, after the case they belong to (checked once the case has run):
 *   file PATH json KIND          PATH parses as one JSON object whose "kind" is KIND
 *   file PATH json-records N     PATH parses as JSON whose "records" array holds
 *                                exactly N objects
 *   file PATH json-eq KEY VALUE  the scalar at KEY (dotted: a.b[0].c) is VALUE
 *                                (strings as they are, integers in decimal,
 *                                reals with %.6g, true/false/null)
 *   file PATH json-len KEY N     the array or object at KEY has N members
 *   file PATH jsonl N            PATH has exactly N lines, each a JSON object
 *   file PATH journal-records N  PATH is a gpuqual journal: its first line is the
 *                                header, every line a JSON object, exactly N
 *                                of them records
 *                                (a blank line counts, and fails)
 *   file PATH csv N HEADER       the first line starts with HEADER and N data
 *                                lines follow
 *   file PATH markdown           PATH starts with "# " and holds a Markdown table
 *                                (a line starting with "|---", "| ---" or "|:--")
 *   file PATH html               PATH starts with <!DOCTYPE html>, ends with
 *                                </html> and holds an <svg> figure
 *   file PATH contains TEXT      PATH contains TEXT (the rest of the line)
 *
 * What every case is checked for:
 *   - the exit code is EXIT;
 *   - EXIT 2 (bad input): stderr is exactly one line, and EXPECTED TEXT is in it;
 *     and no file is left behind: the whole @TMP@ tree, and every other path in
 *     ARGS (an argument holding '/', or the value after '=' in --opt=VALUE)
 *     with the names beside it that start with its name, are listed before and
 *     after the case, and any file created, removed or changed (size, mtime,
 *     inode) fails the case, temporary 'NAME.tmp-*' names included. The only
 *     files an exit-2 case may write are those its `file` lines name, and the
 *     directories that hold them (the files are then read back like any
 *     other). Paths under /dev, /proc and /sys are not listed.
 *   - other exits: EXPECTED TEXT is in stdout or stderr; "(no output)" means
 *     both are empty. EXPECTED TEXT may be '-' only for a case with `file`
 *     lines (the files carry the check), and never for EXIT 2. Each check
 *     should be a figure or fact the program computed, not a word it echoes
 *     from ARGS.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Arguments of one case (compare's limit of 64 files needs 65). */
#define MAX_ARGS 96

static char *replace_all(const char *s, const char *pat, const char *rep)
{
    size_t lp = strlen(pat), lr = strlen(rep);
    size_t cap = strlen(s) * (lr > lp ? lr : 1) + 1 + 4096;
    char *out = malloc(cap), *o = out;
    while (*s) {
        if (!strncmp(s, pat, lp)) {
            memcpy(o, rep, lr);
            o += lr;
            s += lp;
        } else
            *o++ = *s++;
    }
    *o = 0;
    return out;
}

static char *slurp(const char *path, size_t *len); /* the whole file, NUL-terminated, or NULL */

static bool spill(const char *path, const char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(b, 1, n, f) == n;
    return (f && fclose(f) == 0) && ok;
}

/* cp:SRC>DST and sub:FILE:OLD>NEW (see the top of this file); false when it cannot. */
static bool setup_file(const char *word)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", word + 4);
    char *gt = strchr(buf, '>');
    if (!gt)
        return false;
    *gt = 0;
    size_t n;
    if (!strncmp(word, "cp:", 3)) {
        snprintf(buf, sizeof buf, "%s", word + 3);
        gt = strchr(buf, '>');
        *gt = 0;
        char *b = slurp(buf, &n), dst[4096], dir[4096], id[128] = "";
        const char *rid = b ? strstr(b, "\"run_id\":\"") : NULL;
        if (rid)
            snprintf(id, sizeof id, "%.*s", (int)strcspn(rid + 10, "\""), rid + 10);
        const char *at = strstr(gt + 1, "{run_id}");
        if (at)
            snprintf(dst, sizeof dst, "%.*s%s%s", (int)(at - (gt + 1)), gt + 1, id, at + 8);
        else
            snprintf(dst, sizeof dst, "%s", gt + 1);
        snprintf(dir, sizeof dir, "%s", dst);
        char *slash = strrchr(dir, '/');
        if (slash) {
            *slash = 0;
            mkdir(dir, 0755);
        }
        bool ok = b && spill(dst, b, n);
        free(b);
        return ok;
    }
    char *colon = strchr(buf, ':');
    if (!colon)
        return false;
    *colon = 0;
    const char *old = colon + 1, *new = gt + 1;
    char *b = slurp(buf, &n), *at = b ? strstr(b, old) : NULL;
    bool ok = false;
    if (at) {
        size_t lo = strlen(old), ln = strlen(new), pre = (size_t)(at - b);
        char *o = malloc(n - lo + ln + 1);
        if (o) {
            memcpy(o, b, pre);
            memcpy(o + pre, new, ln);
            memcpy(o + pre + ln, at + lo, n - pre - lo);
            ok = spill(buf, o, n - lo + ln);
            free(o);
        }
    }
    free(b);
    return ok;
}

/* Runs the case; its stdout goes to out and its stderr to err (each cut at its
 * capacity, the rest read and dropped). Returns the exit code, 128+signal. */
static int run_case(const char *bin, char **args, int nargs, char *out, size_t outcap, char *err,
                    size_t errcap, int *nerrlines)
{
    /* the setup words (env:, flock:) before the program's arguments */
    int lockfd = -1;
    char *envs[8];
    int nenv = 0;
    for (; nargs > 0; args++, nargs--) {
        if (!strncmp(args[0], "env:", 4) && nenv < 8)
            envs[nenv++] = args[0] + 4;
        else if (!strncmp(args[0], "flock:", 6) && lockfd < 0) {
            lockfd = open(args[0] + 6, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
            char line[64];
            int l = snprintf(line, sizeof line, "pid %d, cli_runner holds it\n", (int)getpid());
            if (lockfd < 0 || flock(lockfd, LOCK_EX | LOCK_NB) != 0 || ftruncate(lockfd, 0) != 0 ||
                write(lockfd, line, (size_t)l) != l) {
                fprintf(stderr, "cli_runner: cannot hold %s\n", args[0] + 6);
                return -1;
            }
        } else if (!strncmp(args[0], "cp:", 3) || !strncmp(args[0], "sub:", 4)) {
            if (!setup_file(args[0])) {
                fprintf(stderr, "cli_runner: cannot do %s\n", args[0]);
                return -1;
            }
        } else
            break;
    }
    int pout[2], perr[2];
    if (pipe(pout) || pipe(perr))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < nenv; i++)
            putenv(envs[i]);
        dup2(pout[1], 1);
        dup2(perr[1], 2);
        close(pout[0]);
        close(perr[0]);
        char *argv[MAX_ARGS + 2];
        argv[0] = (char *)bin;
        for (int i = 0; i < nargs && i < MAX_ARGS; i++)
            argv[i + 1] = args[i];
        argv[nargs + 1] = NULL;
        alarm(120); /* a hung case dies by SIGALRM and fails, instead of hanging ctest */
        execv(bin, argv);
        _exit(127);
    }
    close(pout[1]);
    close(perr[1]);
    char *bufs[2] = {out, err};
    size_t caps[2] = {outcap, errcap}, used[2] = {0, 0};
    *nerrlines = 0;
    /* Drain both pipes together: a child that fills one while we block on the
     * other would deadlock. */
    struct pollfd fds[2] = {{.fd = pout[0], .events = POLLIN}, {.fd = perr[0], .events = POLLIN}};
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(fds, 2, -1) < 0)
            break;
        for (int k = 0; k < 2; k++) {
            if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char tmp[4096];
            ssize_t r = read(fds[k].fd, tmp, sizeof tmp);
            if (r <= 0) {
                fds[k].fd = -1;
                open_fds--;
                continue;
            }
            if (k == 1)
                for (ssize_t i = 0; i < r; i++)
                    *nerrlines += tmp[i] == '\n';
            size_t take = (size_t)r;
            if (used[k] + take >= caps[k])
                take = caps[k] - 1 - used[k];
            memcpy(bufs[k] + used[k], tmp, take);
            used[k] += take;
        }
    }
    out[used[0]] = 0;
    err[used[1]] = 0;
    close(pout[0]);
    close(perr[0]);
    int st;
    waitpid(pid, &st, 0);
    if (lockfd >= 0)
        close(lockfd);
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return 128 + WTERMSIG(st);
}

/* ---- what is on disk: a sorted list of "path\tstate" lines ------------------ */

typedef struct {
    char **v;
    int n, cap;
} list;

static void list_add(list *l, const char *path, const struct stat *st)
{
    char line[4400];
    if (!st)
        snprintf(line, sizeof line, "%s\tabsent", path);
    else if (S_ISDIR(st->st_mode))
        snprintf(line, sizeof line, "%s\tdirectory", path); /* its entries are listed themselves */
    else
        snprintf(line, sizeof line, "%s\tsize %lld mtime %lld.%09ld inode %llu", path, (long long)st->st_size,
                 (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec, (unsigned long long)st->st_ino);
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], line))
            return;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = realloc(l->v, sizeof *l->v * (size_t)l->cap);
    }
    l->v[l->n++] = strdup(line);
}

static void list_free(list *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    *l = (list){0};
}

/* The path, and (depth > 0) what a directory holds, down to depth levels;
 * with a prefix, only the directory's entries whose names start with it. */
static void snap_path(list *l, const char *path, int depth, const char *prefix)
{
    struct stat st;
    if (lstat(path, &st)) {
        list_add(l, path, NULL);
        return;
    }
    list_add(l, path, &st);
    if (!S_ISDIR(st.st_mode) || depth <= 0)
        return;
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            (prefix && strncmp(e->d_name, prefix, strlen(prefix))))
            continue;
        char sub[4200];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        snap_path(l, sub, depth - 1, NULL);
    }
    closedir(d);
}

static bool skipped_path(const char *p)
{
    return !strncmp(p, "/dev/", 5) || !strncmp(p, "/proc/", 6) || !strncmp(p, "/sys/", 5);
}

/* The @TMP@ tree, and each path in args outside it: the path (one level down
 * if a directory) and, in the directory that holds it, every name that starts
 * with the path's own name (where "x.json.tmp-123" would be left). */
static void snapshot(list *l, const char *tmpdir, char **args, int nargs)
{
    snap_path(l, tmpdir, 64, NULL);
    size_t lt = strlen(tmpdir);
    for (int i = 0; i < nargs; i++) {
        const char *p = args[i];
        if (p[0] == '-' && strchr(p, '='))
            p = strchr(p, '=') + 1;
        if (!strchr(p, '/') || skipped_path(p) || (!strncmp(p, tmpdir, lt) && (!p[lt] || p[lt] == '/')))
            continue;
        snap_path(l, p, 1, NULL);
        char parent[4200];
        snprintf(parent, sizeof parent, "%s", p);
        char *slash = strrchr(parent, '/');
        if (!slash || !slash[1])
            continue;
        char base[4200];
        snprintf(base, sizeof base, "%s", slash + 1);
        if (slash == parent)
            slash[1] = 0;
        else
            *slash = 0;
        snap_path(l, parent, 1, base);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool declared(const char *line, char **declared_paths, int ndeclared)
{
    for (int i = 0; i < ndeclared; i++) {
        size_t n = strlen(declared_paths[i]);
        size_t m = strcspn(line, "\t");
        if (!strncmp(line, declared_paths[i], n) && line[n] == '\t')
            return true;
        /* the directory made to hold a declared file (absent before, a directory after) */
        if (m < n && !strncmp(line, declared_paths[i], m) && declared_paths[i][m] == '/' &&
            (!strcmp(line + m, "\tdirectory") || !strcmp(line + m, "\tabsent")))
            return true;
    }
    return false;
}

/* Prints what changed between two snapshots (files a `file` line declares
 * excepted); returns how many entries differ. */
static int snapshot_diff(list *before, list *after, char **declared_paths, int ndeclared, const char *where)
{
    qsort(before->v, (size_t)before->n, sizeof *before->v, cmp_str);
    qsort(after->v, (size_t)after->n, sizeof *after->v, cmp_str);
    int bad = 0, i = 0, j = 0;
    while (i < before->n || j < after->n) {
        int c = i == before->n ? 1 : j == after->n ? -1 : strcmp(before->v[i], after->v[j]);
        if (c == 0) {
            i++;
            j++;
            continue;
        }
        const char *line = c < 0 ? before->v[i++] : after->v[j++];
        if (declared(line, declared_paths, ndeclared))
            continue;
        printf("FAIL %s: exit 2 but the disk changed: %s %s\n", where, c < 0 ? "was" : "now", line);
        bad++;
    }
    return bad;
}

/* ---- file lines -------------------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    if (!b) {
        fclose(f);
        return NULL;
    }
    size_t r;
    while ((r = fread(b + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 == cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                fclose(f);
                return NULL;
            }
            b = nb;
        }
    }
    fclose(f);
    b[n] = 0;
    if (len)
        *len = n;
    return b;
}

/* The member at a dotted key such as "records[0].gbps.median"; NULL if absent. */
static json_t *json_at(json_t *j, const char *key)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", key);
    for (char *tok = strtok(buf, "."); tok && j; tok = strtok(NULL, ".")) {
        char *br = strchr(tok, '[');
        if (br)
            *br = 0;
        if (*tok)
            j = json_object_get(j, tok);
        while (br && j) {
            j = json_array_get(j, strtoul(br + 1, NULL, 10));
            br = strchr(br + 1, '[');
        }
    }
    return j;
}

static void scalar_text(const json_t *j, char *out, size_t cap)
{
    if (json_is_string(j))
        snprintf(out, cap, "%s", json_string_value(j));
    else if (json_is_integer(j))
        snprintf(out, cap, "%lld", (long long)json_integer_value(j));
    else if (json_is_real(j))
        snprintf(out, cap, "%.6g", json_real_value(j));
    else if (json_is_true(j))
        snprintf(out, cap, "true");
    else if (json_is_false(j))
        snprintf(out, cap, "false");
    else if (json_is_null(j))
        snprintf(out, cap, "null");
    else
        snprintf(out, cap, "(%s)", json_is_array(j) ? "array" : "object");
}

/* Checks one `file PATH KIND [ARGS]` line; prints why it fails; returns ok. */
static bool check_file(char *spec, const char *where)
{
    char *path = strtok(spec, " ");
    char *kind = path ? strtok(NULL, " ") : NULL;
    char *rest = kind ? strtok(NULL, "") : NULL;
    if (!kind) {
        printf("FAIL %s: malformed file line\n", where);
        return false;
    }
    size_t len = 0;
    char *text = slurp(path, &len);
    if (!text) {
        printf("FAIL %s: %s was not written (%s)\n", where, path, strerror(errno));
        return false;
    }
    bool ok = true;
    char why[600] = "";
    if (!strncmp(kind, "json", 4) && strcmp(kind, "jsonl")) {
        json_error_t je;
        json_t *j = json_loads(text, 0, &je);
        if (!j) {
            snprintf(why, sizeof why, "not JSON: %s (line %d)", je.text, je.line);
            ok = false;
        } else if (!strcmp(kind, "json")) {
            const char *k = json_string_value(json_object_get(j, "kind"));
            ok = rest && k && !strcmp(k, rest);
            snprintf(why, sizeof why, "\"kind\" is %s, want %s", k ? k : "(none)",
                     rest ? rest : "(not given)");
        } else if (!strcmp(kind, "json-records")) {
            json_t *r = json_object_get(j, "records");
            size_t want = rest ? strtoul(rest, NULL, 10) : 0, n = json_array_size(r), objects = 0;
            for (size_t i = 0; i < n; i++)
                objects += json_is_object(json_array_get(r, i));
            ok = rest && json_is_array(r) && n == want && objects == n;
            snprintf(why, sizeof why, "%zu records (%zu objects), want %zu", n, objects, want);
        } else if (!strcmp(kind, "json-eq") || !strcmp(kind, "json-len")) {
            char *key = rest ? strtok(rest, " ") : NULL;
            char *val = key ? strtok(NULL, "") : NULL;
            json_t *m = key ? json_at(j, key) : NULL;
            char got[512] = "(absent)";
            if (m && !strcmp(kind, "json-eq"))
                scalar_text(m, got, sizeof got);
            else if (m)
                snprintf(got, sizeof got, "%zu",
                         json_is_array(m)    ? json_array_size(m)
                         : json_is_object(m) ? json_object_size(m)
                                             : (size_t)-1);
            ok = val && m && !strcmp(got, val);
            snprintf(why, sizeof why, "%s is %s, want %s", key ? key : "(no key)", got,
                     val ? val : "(not given)");
        } else {
            snprintf(why, sizeof why, "unknown kind '%s'", kind);
            ok = false;
        }
        json_decref(j);
    } else if (!strcmp(kind, "jsonl")) {
        size_t want = rest ? strtoul(rest, NULL, 10) : 0, n = 0, objects = 0;
        for (char *l = text; *l;) {
            char *nl = strchr(l, '\n');
            if (nl)
                *nl = 0;
            json_t *j = json_loads(l, 0, NULL);
            n++;
            objects += json_is_object(j);
            json_decref(j);
            if (!nl)
                break;
            l = nl + 1;
        }
        ok = rest && n == want && objects == n;
        snprintf(why, sizeof why, "%zu lines, %zu of them JSON objects; want %zu objects", n, objects, want);
    } else if (!strcmp(kind, "journal-records")) {
        /* a journal: a header line first, then exactly N record lines, every
         * line a JSON object */
        size_t want = rest ? strtoul(rest, NULL, 10) : 0, n = 0, records = 0, objects = 0;
        bool header = false;
        for (char *l = text; *l;) {
            char *nl = strchr(l, '\n');
            if (nl)
                *nl = 0;
            json_t *j = json_loads(l, 0, NULL);
            const char *magic = json_string_value(json_object_get(json_object_get(j, "header"), "magic"));
            if (n++ == 0)
                header = magic && !strcmp(magic, "gpuqual-journal");
            objects += json_is_object(j);
            records += json_is_object(json_object_get(j, "record"));
            json_decref(j);
            if (!nl)
                break;
            l = nl + 1;
        }
        ok = rest && header && records == want && objects == n;
        snprintf(why, sizeof why, "%s; %zu lines, %zu JSON objects, %zu records; want %zu records",
                 header ? "header" : "no journal header", n, objects, records, want);
    } else if (!strcmp(kind, "csv")) {
        char *n_s = rest ? strtok(rest, " ") : NULL;
        char *header = n_s ? strtok(NULL, "") : NULL;
        size_t want = n_s ? strtoul(n_s, NULL, 10) : 0, lines = 0;
        for (size_t i = 0; i < len; i++)
            lines += text[i] == '\n';
        if (len && text[len - 1] != '\n')
            lines++;
        ok = header && !strncmp(text, header, strlen(header)) && lines == want + 1;
        int first = (int)strcspn(text, "\n");
        snprintf(why, sizeof why, "first line '%.*s', %zu data lines; want '%s' and %zu",
                 first > 80 ? 80 : first, text, lines ? lines - 1 : 0, header ? header : "(not given)", want);
    } else if (!strcmp(kind, "markdown")) {
        ok = !strncmp(text, "# ", 2) &&
             (strstr(text, "\n|---") || strstr(text, "\n| ---") || strstr(text, "\n|:--"));
        snprintf(why, sizeof why, "not Markdown with a table: starts '%.40s'", text);
    } else if (!strcmp(kind, "html")) {
        size_t e = len;
        while (e && (text[e - 1] == '\n' || text[e - 1] == ' '))
            e--;
        ok = !strncasecmp(text, "<!DOCTYPE html>", 15) && e >= 7 && !strncmp(text + e - 7, "</html>", 7) &&
             strstr(text, "<svg");
        snprintf(why, sizeof why, "not a whole HTML page with an <svg>: starts '%.40s'", text);
    } else if (!strcmp(kind, "contains")) {
        ok = rest && strstr(text, rest);
        snprintf(why, sizeof why, "does not contain '%s'", rest ? rest : "(not given)");
    } else {
        snprintf(why, sizeof why, "unknown kind '%s'", kind);
        ok = false;
    }
    if (!ok)
        printf("FAIL %s: file %s (%s): %s\n", where, path, kind, why);
    free(text);
    return ok;
}

/* ---- the table --------------------------------------------------------------- */

typedef struct {
    int lineno;
    char *line; /* @SRC@ and @TMP@ replaced */
    char *files[32];
    int nfiles;
} tcase;

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: cli_runner GPUQUAL CASES SRCDIR\n");
        return 2;
    }
    FILE *f = fopen(argv[2], "r");
    if (!f) {
        perror(argv[2]);
        return 2;
    }
    char tmpl[] = "/tmp/gq-cli-XXXXXX";
    char *tmpdir = mkdtemp(tmpl);
    if (!tmpdir) {
        perror("mkdtemp");
        fclose(f);
        return 2;
    }
    /* Read the whole table first: `file` lines belong to the case above them. */
    static tcase cases[1024];
    int ncases = 0, failed = 0, passed = 0;
    char line[8192];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\n")] = 0;
        if (!line[0] || line[0] == '#')
            continue;
        char *l1 = replace_all(line, "@SRC@", argv[3]);
        char *l = replace_all(l1, "@TMP@", tmpdir);
        free(l1);
        if (!strncmp(l, "file ", 5)) {
            if (!ncases || cases[ncases - 1].nfiles == 32) {
                printf("FAIL %s:%d: a file line with no case above it (or too many)\n", argv[2], lineno);
                failed++;
                free(l);
            } else
                cases[ncases - 1].files[cases[ncases - 1].nfiles++] = l;
            continue;
        }
        if (ncases == 1024) {
            printf("FAIL %s:%d: too many cases\n", argv[2], lineno);
            failed++;
            free(l);
            break;
        }
        cases[ncases++] = (tcase){.lineno = lineno, .line = l};
    }
    fclose(f);

    static char out[1 << 20], err[1 << 16];
    for (int c = 0; c < ncases; c++) {
        tcase *tc = &cases[c];
        char where[600];
        snprintf(where, sizeof where, "%s:%d", argv[2], tc->lineno);
        char *l = tc->line;
        char *p1 = strstr(l, " | ");
        char *p2 = p1 ? strstr(p1 + 3, " | ") : NULL;
        if (!p1 || !p2) {
            printf("FAIL %s: malformed line\n", where);
            failed++;
            continue;
        }
        *p1 = 0;
        *p2 = 0;
        int want = atoi(l);
        const char *text = p1 + 3;
        bool no_text = !strcmp(text, "-");
        if (no_text && (want == 2 || !tc->nfiles)) {
            printf("FAIL %s: expected text '-' needs file lines to check, and is never enough for exit 2\n",
                   where);
            failed++;
            continue;
        }
        char *args[MAX_ARGS];
        int nargs = 0;
        for (char *tok = strtok(p2 + 3, " "); tok && nargs < MAX_ARGS; tok = strtok(NULL, " "))
            args[nargs++] = strcmp(tok, "''") ? tok : "";
        /* the paths `file` lines name (an exit-2 case may write only these) */
        char *declared_paths[32];
        char *specs[32];
        for (int k = 0; k < tc->nfiles; k++) {
            specs[k] = strdup(tc->files[k] + 5);
            declared_paths[k] = strdup(specs[k]);
            declared_paths[k][strcspn(declared_paths[k], " ")] = 0;
        }
        list before = {0}, after = {0};
        if (want == 2)
            snapshot(&before, tmpdir, args, nargs);
        int nerr = 0;
        int got = run_case(argv[1], args, nargs, out, sizeof out, err, sizeof err, &nerr);
        bool ok = true;
        if (got != want) {
            printf("FAIL %s: exit %d, want %d\n", where, got, want);
            ok = false;
        }
        if (want == 2) {
            if (nerr != 1) {
                printf("FAIL %s: %d lines on stderr, want exactly 1\n", where, nerr);
                ok = false;
            }
            if (!strstr(err, text)) {
                printf("FAIL %s: stderr lacks '%s'\n", where, text);
                ok = false;
            }
            snapshot(&after, tmpdir, args, nargs);
            if (snapshot_diff(&before, &after, declared_paths, tc->nfiles, where))
                ok = false;
            list_free(&before);
            list_free(&after);
        } else if (!strcmp(text, "(no output)")) {
            if (out[0] || err[0]) {
                printf("FAIL %s: output where none is wanted\n", where);
                ok = false;
            }
        } else if (!no_text && !strstr(out, text) && !strstr(err, text)) {
            printf("FAIL %s: output lacks '%s'\n", where, text);
            ok = false;
        }
        if (got == want)
            for (int k = 0; k < tc->nfiles; k++)
                if (!check_file(specs[k], where))
                    ok = false;
        for (int k = 0; k < tc->nfiles; k++) {
            free(specs[k]);
            free(declared_paths[k]);
        }
        if (ok)
            passed++;
        else {
            failed++;
            printf("  stdout:\n%.2000s\n  stderr:\n%.2000s\n", out, err);
        }
    }
    for (int c = 0; c < ncases; c++) {
        free(cases[c].line);
        for (int k = 0; k < cases[c].nfiles; k++)
            free(cases[c].files[k]);
    }
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
