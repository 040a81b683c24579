/* Every long option of every command is exercised by a test that checks its effect (issue 30).
 *
 * Reads the commands' own option tables (cli/commands.h, each cmd_X.c's gq_opt tables and the shared
 * ones in common.c, less each set's `omit`) and every test row that runs a command:
 *   - tests/cli/NAME.txt rows `EXIT | TEXT | ARGS...` whose first argument is the command, and whose
 *     EXIT is not 2: an exit-2 row checks a refusal, not what the option does; every other row
 *     asserts a text or a file (tests/cli/cli_runner.c refuses '-' without `file` lines);
 *   - tests/golden/cases.txt rows `NAME | EXIT | OUTPUTS | ARGS` whose first argument is the
 *     command (any exit: the whole output is held byte for byte).
 * A row's arguments are read with the command's grammar: --NAME, --NAME=VALUE, --no-NAME for a
 * flag, short letters (bundled, the last one may take the value, glued or next), and for
 * nvbandwidth's grammar -NAME, case-insensitive names and a list taking every following word.
 *
 * It fails naming the command and the option when an option is in no such row, and when an option
 * whose value has more than one written form never reaches a checking row in each form:
 *   - a percent (GQ_OPT_PERCENT, or a string its command reads as one, metavar PCT: compare's
 *     --threshold, run's --spread-target): "5%" and a plain number (a percent or a fraction);
 *   - a size (GQ_OPT_SIZE): a bare number (read in the option's unit) and one with a unit suffix;
 *   - a duration (GQ_OPT_DURATION): a bare number (seconds) and one with a unit suffix.
 *
 * Two short lists, each entry with its reason: options a command takes only to refuse them (an
 * exit-2 row is then their test), and the allow-list of options that cannot run without a GPU or
 * MPI; a named allow-list entry that a test does run after all fails too (the list stays true).
 * CONTRIBUTING.md, "Add an option". */
#include <ctype.h>
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "cli/commands.h"
#include "core/options.h"

/* Options a command takes only to refuse them with a reason (a better line than "unknown option"):
 * their one effect is that refusal, which an exit-2 row checks. */
static const struct {
    const char *cmd, *opt, *why;
} refused_only[] = {
    {"pairs", "gpus", "the pairs name the GPUs; --gpus is refused with that reason (tests/cli/pairs.txt)"},
    {NULL, NULL, NULL},
};

/* Options no test can run on the simulated machine, with why. */
static const struct {
    const char *cmd, *opt, *why;
} allowed[] = {
    /* "*": every option of the command */
    {"fleet", "*",
     "gpuqual fleet runs gpuqual-fleet, an MPI program built only where MPI is found; its runs are "
     "tests/cli/fleet_mpi.c's, under mpirun, and a table row or golden case could not run without MPI"},
    {NULL, NULL, NULL},
};

#define MAXROWS 4096
#define MAXARGS 96

typedef struct row {
    char where[96]; /* file:line */
    bool checks;    /* a row that checks the effect (golden, or a CLI exit other than 2) */
    int argc;
    char *argv[MAXARGS];
} row;

static row rows[MAXROWS];
static int nrows;

static void split_args(row *r, char *s)
{
    for (char *t = strtok(s, " \t\r\n"); t && r->argc < MAXARGS; t = strtok(NULL, " \t\r\n")) {
        if (!r->argc && (!strncmp(t, "env:", 4) || !strncmp(t, "flock:", 6) || !strncmp(t, "cp:", 3) ||
                         !strncmp(t, "sub:", 4)))
            continue; /* cli_runner's setup words before the command */
        r->argv[r->argc++] = strcmp(t, "''") ? strdup(t) : strdup("");
    }
}

/* The fields of a line separated by " | ": up to n, the last one the rest. */
static int fields(char *line, char **f, int n)
{
    int k = 0;
    f[k++] = line;
    while (k < n) {
        char *p = strstr(f[k - 1], " | ");
        if (!p)
            break;
        *p = 0;
        f[k++] = p + 3;
    }
    return k;
}

static void load_file(const char *path, const char *name, bool golden)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[4096];
    for (int ln = 1; fgets(line, sizeof line, f); ln++) {
        if (line[0] == '#' || line[0] == '\n' || !strncmp(line, "file ", 5))
            continue;
        char *fl[4];
        int n = fields(line, fl, golden ? 4 : 3);
        if (n < (golden ? 4 : 3))
            continue;
        assert_true(nrows < MAXROWS);
        row *r = &rows[nrows++];
        snprintf(r->where, sizeof r->where, "%s:%d", name, ln);
        r->checks = golden || atoi(fl[0]) != 2;
        split_args(r, fl[golden ? 3 : 2]);
    }
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/cli", GQ_TEST_DATA);
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".txt"))
            continue;
        char path[2048], name[300];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(name, sizeof name, "tests/cli/%s", e->d_name);
        load_file(path, name, false);
    }
    closedir(d);
    char path[1024];
    snprintf(path, sizeof path, "%s/golden/cases.txt", GQ_TEST_DATA);
    load_file(path, "tests/golden/cases.txt", true);
    return 0;
}

/* What the rows did with one option. */
typedef struct use {
    const gq_opt *o;
    bool checked;        /* in a row that checks */
    char refused_at[96]; /* an exit-2 row that names it, for the message */
    bool form_bare;      /* a plain number ("5", "64") in a checking row */
    bool form_suffix;    /* "5%", "64M", "2s" in a checking row */
} use;

static const gq_opt_grammar *grammar(const gq_optset *set)
{
    return set->grammar ? set->grammar : &gq_grammar_gpuqual;
}

static use *find_use(use *u, int n, const gq_optset *set, const char *name, size_t len)
{
    bool fold = grammar(set)->case_fold;
    for (int i = 0; i < n; i++)
        if (strlen(u[i].o->name) == len &&
            (fold ? strncasecmp(u[i].o->name, name, len) : strncmp(u[i].o->name, name, len)) == 0)
            return &u[i];
    return NULL;
}

static use *find_short_use(use *u, int n, char c)
{
    for (int i = 0; i < n; i++)
        if (u[i].o->shortname == c)
            return &u[i];
    return NULL;
}

/* A value's written form: a plain number, or a number with a suffix ('%', a unit). */
static void note_value(use *u, const row *r, const char *v)
{
    if (!r->checks || !v)
        return;
    char *end;
    strtod(v, &end);
    if (end == v)
        return;
    if (!*end)
        u->form_bare = true;
    else if (isalpha((unsigned char)*end) || *end == '%')
        u->form_suffix = true;
}

static void mark(use *u, const row *r, const char *v)
{
    if (r->checks)
        u->checked = true;
    else if (!u->refused_at[0])
        snprintf(u->refused_at, sizeof u->refused_at, "%s", r->where);
    note_value(u, r, v);
}

/* Read one row's arguments with the command's grammar and mark each option it gives. */
static void scan_row(const gq_optset *set, use *u, int n, const row *r)
{
    const gq_opt_grammar *g = grammar(set);
    for (int i = 1; i < r->argc; i++) {
        const char *a = r->argv[i];
        if (!strcmp(a, "--"))
            return;
        if (a[0] != '-' || !a[1])
            continue;
        bool dashdash = a[1] == '-';
        const char *name = a + (dashdash ? 2 : 1);
        size_t len = strcspn(name, "=");
        use *x = NULL;
        if (dashdash || (g->single_dash_long && a[2]))
            x = find_use(u, n, set, name, len);
        if (!x && dashdash && g->negation && len > 3 && !strncmp(name, "no-", 3)) {
            x = find_use(u, n, set, name + 3, len - 3);
            if (x && x->o->type != GQ_OPT_FLAG)
                x = NULL;
        }
        if (x) {
            const char *v = NULL;
            if (x->o->type != GQ_OPT_FLAG)
                v = name[len] == '=' ? name + len + 1 : (i + 1 < r->argc ? r->argv[++i] : NULL);
            mark(x, r, v);
            while (g->multi_values && x->o->type == GQ_OPT_LIST && i + 1 < r->argc &&
                   r->argv[i + 1][0] != '-')
                mark(x, r, r->argv[++i]);
            continue;
        }
        if (dashdash)
            continue;
        for (const char *p = a + 1; *p; p++) { /* short letters, bundled */
            use *s = find_short_use(u, n, *p);
            if (!s)
                break;
            if (s->o->type == GQ_OPT_FLAG) {
                mark(s, r, NULL);
                continue;
            }
            mark(s, r, p[1] ? p + 1 : (i + 1 < r->argc ? r->argv[++i] : NULL));
            break;
        }
    }
}

/* The allow-list's entry for the option: 1 by name, 2 by the command's "*", 0 none. */
static int allow_listed(const char *cmd, const char *opt)
{
    for (size_t i = 0; allowed[i].cmd; i++)
        if (!strcmp(allowed[i].cmd, cmd) && (!strcmp(allowed[i].opt, opt) || !strcmp(allowed[i].opt, "*")))
            return strcmp(allowed[i].opt, "*") ? 1 : 2;
    return 0;
}

/* A percent, a size, a duration, or a string its command reads as a percent (metavar PCT:
 * compare's --threshold "5%" or "2.5", run's --spread-target "0.5%" or the fraction "0.005"). */
static bool two_forms(const gq_opt *o)
{
    return o->type == GQ_OPT_PERCENT || o->type == GQ_OPT_SIZE || o->type == GQ_OPT_DURATION ||
           (o->type == GQ_OPT_STR && o->arg && !strcmp(o->arg, "PCT"));
}

/* The written forms of each declaration's values, over every command that takes it: the forms are
 * read by the declaration's own parser (its type and unit), whichever command holds it. */
static struct form {
    const gq_opt *o;
    const char *cmd; /* the first command that takes it, for the message */
    bool bare, suffix;
} forms[512];
static int nforms;

static void note_forms(const char *cmd, const use *u)
{
    int k = 0;
    while (k < nforms && forms[k].o != u->o)
        k++;
    if (k == nforms) {
        assert_true(nforms < 512);
        forms[nforms++] = (struct form){.o = u->o, .cmd = cmd};
    }
    forms[k].bare |= u->form_bare;
    forms[k].suffix |= u->form_suffix;
}

static int check_forms(void)
{
    int bad = 0;
    for (int k = 0; k < nforms; k++) {
        const struct form *f = &forms[k];
        if (f->bare && f->suffix)
            continue;
        bool pct = f->o->type == GQ_OPT_PERCENT || f->o->type == GQ_OPT_STR;
        const char *want = pct       ? (f->bare ? "with '%' (5%)" : "as a plain number (5, 0.05)")
                           : f->bare ? "with a unit suffix"
                                     : "as a bare number";
        printf("%s --%s: no checking test writes its value %s\n", f->cmd, f->o->name, want);
        bad++;
    }
    return bad;
}

/* One command: the number of problems, each printed on one line. */
static int check_command(const gq_command *c)
{
    use u[256];
    int n = 0, it = 0, bad = 0;
    const gq_optset *set = &c->frame->opts;
    for (const gq_opt *o = NULL; (o = gq_optset_next(set, &it, o)) && n < 256;)
        u[n++] = (use){.o = o};
    for (int i = 0; i < nrows; i++)
        if (rows[i].argc && !strcmp(rows[i].argv[0], c->name))
            scan_row(set, u, n, &rows[i]);
    for (int i = 0; i < n; i++) {
        const gq_opt *o = u[i].o;
        int listed = allow_listed(c->name, o->name);
        if (listed) {
            if (u[i].checked && listed == 1) {
                printf("%s --%s: on the allow-list but a test runs it; take it off\n", c->name, o->name);
                bad++;
            }
            continue;
        }
        bool refusal = false;
        for (size_t k = 0; refused_only[k].cmd; k++)
            refusal |= !strcmp(refused_only[k].cmd, c->name) && !strcmp(refused_only[k].opt, o->name);
        if (refusal && u[i].refused_at[0] && !u[i].checked)
            continue;
        if (!u[i].checked) {
            printf("%s --%s: no test checks its effect (no golden case, no tests/cli row with an exit "
                   "other than 2%s%s); add one (CONTRIBUTING.md, \"Add an option\")\n",
                   c->name, o->name, u[i].refused_at[0] ? "; only refused at " : "", u[i].refused_at);
            bad++;
            continue;
        }
        if (two_forms(o))
            note_forms(c->name, &u[i]);
    }
    return bad;
}

static void test_every_option_is_checked(void **state)
{
    (void)state;
    assert_true(nrows > 500);
    int bad = 0, ncmd = 0;
    for (const gq_command *c = gq_commands; c->name; c++, ncmd++)
        bad += check_command(c);
    assert_true(ncmd >= 14);
    bad += check_forms();
    for (size_t i = 0; allowed[i].cmd; i++) {
        bool known = false;
        for (const gq_command *c = gq_commands; c->name; c++) {
            int it = 0;
            for (const gq_opt *o = NULL; (o = gq_optset_next(&c->frame->opts, &it, o));)
                known |= !strcmp(c->name, allowed[i].cmd) &&
                         (!strcmp(o->name, allowed[i].opt) || !strcmp(allowed[i].opt, "*"));
        }
        if (!known) {
            printf("allow-list: %s --%s is no option of that command\n", allowed[i].cmd, allowed[i].opt);
            bad++;
        }
    }
    if (bad)
        fail_msg("%d option(s) of the commands above are not checked by any test", bad);
}

/* The scanner itself: a planted row names what it should, and nothing else. */
static void test_scanner(void **state)
{
    (void)state;
    const gq_command *run = NULL;
    for (const gq_command *c = gq_commands; c->name; c++)
        if (!strcmp(c->name, "run"))
            run = c;
    assert_non_null(run);
    use u[256];
    int n = 0, it = 0;
    for (const gq_opt *o = NULL; (o = gq_optset_next(&run->frame->opts, &it, o)) && n < 256;)
        u[n++] = (use){.o = o};
    row r = {.where = "planted", .checks = true};
    char line[] = "run -qb64 --rounds=3 --no-verify --sim h200x2 pos -- --json";
    split_args(&r, line);
    scan_row(&run->frame->opts, u, n, &r);
    for (int i = 0; i < n; i++) {
        const char *nm = u[i].o->name;
        bool want = !strcmp(nm, "quiet") || !strcmp(nm, "buffer-size") || !strcmp(nm, "rounds") ||
                    !strcmp(nm, "verify") || !strcmp(nm, "sim");
        if (u[i].checked != want)
            fail_msg("--%s: scanned %s", nm, u[i].checked ? "as given" : "as absent");
        if (!strcmp(nm, "buffer-size"))
            assert_true(u[i].form_bare && !u[i].form_suffix);
    }
    for (int i = 0; i < r.argc; i++)
        free(r.argv[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scanner),
        cmocka_unit_test(test_every_option_is_checked),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
