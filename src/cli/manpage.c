/* Man pages and shell completion from the tables (manpage.h). */
#include "cli/manpage.h"

#include <string.h>

#include "backend/backend.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "measure/catalog.h"

/* roff text: backslashes escaped, a line starting with '.' or '\'' guarded,
 * and hyphens of option names kept as hyphens. */
static void roff(FILE *f, const char *s, size_t n)
{
    bool bol = true;
    for (size_t i = 0; i < n && s[i]; i++) {
        char c = s[i];
        if (bol && (c == '.' || c == '\''))
            fputs("\\&", f);
        if (c == '\\')
            fputs("\\e", f);
        else if (c == '-')
            fputs("\\-", f);
        else
            fputc(c, f);
        bol = c == '\n';
    }
}

static void roffs(FILE *f, const char *s)
{
    roff(f, s, strlen(s));
}

static const gq_command *find(const char *name)
{
    for (const gq_command *c = gq_commands; c->name; c++)
        if (!strcmp(c->name, name))
            return c;
    return NULL;
}

static void header(FILE *f, const char *name, const char *summary)
{
    fprintf(f, ".TH %s 1 \"\" \"gpuqual %s\" \"gpuqual manual\"\n.SH NAME\n", name, gq_version);
    roffs(f, name);
    fputs(" \\- ", f);
    roffs(f, summary);
    fputc('\n', f);
}

static void exit_status(FILE *f, const gq_exit_doc *exits)
{
    fputs(".SH EXIT STATUS\n", f);
    for (const gq_exit_doc *e = exits; e && e->meaning; e++) {
        fprintf(f, ".TP\n%d\n", e->code);
        roffs(f, e->meaning);
        fputc('\n', f);
    }
}

/* The environment and the files: which commands each concerns (a comma list
 * of names, or every command with one of the needs bits; neither: all). */
typedef struct {
    const char *name;
    const char *cmds;
    unsigned needs;
    const char *text;
} env_doc;

static const env_doc envs[] = {
    {"GQ_SIM", "nvbandwidth", 0,
     "a built\\-in machine name or a topology file: run on a simulated machine, for callers that cannot "
     "pass \\fB\\-\\-sim\\fR"},
    {"CUDA_VISIBLE_DEVICES", "nvbandwidth", 0,
     "selects and orders the GPUs (indices or GPU UUIDs), as for nvbandwidth"},
    {"GQ_TRACE", "run,card", 0,
     "1: on stderr, where the time goes (per\\-phase wall times) and what each measurement chose"},
    {"GQ_LOCK_DIR", NULL, GQ_FRAME_MEASURES,
     "the directory of the per\\-GPU lock files (default /run/lock, else $XDG_RUNTIME_DIR, else /tmp)"},
    {"XDG_RUNTIME_DIR", NULL, GQ_FRAME_MEASURES, "the lock files' directory where /run/lock is not writable"},
    {"GQ_CUBLAS_LIB", "stress,card,fleet", 0,
     "the cuBLAS library the GEMM load is taken from (default: libcublas.so of the CUDA major version "
     "gpuqual was built for)"},
    {"LC_ALL, LC_CTYPE, LANG", NULL, 0,
     "a locale whose character set is not UTF\\-8 (C, POSIX) makes the text printed for a person on stdout "
     "and stderr plain ASCII (\\-> for an arrow, degC, us); files and machine formats stay UTF\\-8"},
    {NULL, NULL, 0, NULL},
};

static const env_doc files[] = {
    {"/run/lock/gpuqual\\-\\fIUUID\\fR.lock", NULL, GQ_FRAME_MEASURES,
     "one lock a GPU while it is measured, so that two gpuqual never measure one GPU at once ("
     "\\fB\\-\\-wait\\-busy\\fR waits for it; GQ_LOCK_DIR moves it)"},
    {"/usr/share/gpuqual/expect/", "card,fleet,report", 0,
     "expectations files for the built\\-in machines and common GPUs (\\fB\\-\\-expect\\fR \\fIFILE\\fR)"},
    {"\\fIDIR\\fR/card.json, card.md, card.html, journal.jsonl", "card", 0,
     "what \\fBgpuqual card \\-o\\fR \\fIDIR\\fR writes (also nvbandwidth.json and stress.csv)"},
    {"\\fIDIR\\fR/fleet.json, fleet.md, \\fIhost\\fR\\-rank\\fIN\\fR/", "fleet", 0,
     "what \\fBgpuqual fleet \\-o\\fR \\fIDIR\\fR writes: the fleet and each node's card"},
    {NULL, NULL, 0, NULL},
};

static bool concerns(const env_doc *e, const gq_command *c)
{
    if (!c)
        return true;
    if (e->cmds) {
        size_t n = strlen(c->name);
        for (const char *p = e->cmds; (p = strstr(p, c->name)); p += n)
            if ((p == e->cmds || p[-1] == ',') && (p[n] == ',' || !p[n]))
                return true;
        return false;
    }
    return !e->needs || (c->frame->needs & e->needs);
}

/* A section of env_doc rows (their text is roff already); nothing when none concerns c. */
static void env_section(FILE *f, const char *title, const env_doc *rows, const gq_command *c)
{
    bool any = false;
    for (const env_doc *e = rows; e->name; e++) {
        if (!concerns(e, c))
            continue;
        if (!any)
            fprintf(f, ".SH %s\n", title);
        any = true;
        fprintf(f, ".TP\n\\fB%s\\fR\n%s", e->name, e->text);
        if (!c && e->cmds)
            fprintf(f, " (%s)", e->cmds);
        fputs(".\n", f);
    }
}

static void examples(FILE *f, const char *text)
{
    if (!text)
        return;
    fputs(".SH EXAMPLES\n.nf\n", f);
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        while (n && *p == ' ')
            p++, n--;
        roff(f, p, n);
        fputc('\n', f);
        p += n + (nl ? 1 : 0);
    }
    fputs(".fi\n", f);
}

static void option(FILE *f, const gq_optset *set, const gq_opt *o)
{
    fputs(".TP\n", f);
    if (o->shortname)
        fprintf(f, "\\fB\\-%c\\fR, ", o->shortname);
    fputs("\\fB\\-\\-", f);
    roffs(f, o->name);
    fputs("\\fR", f);
    if (o->type != GQ_OPT_FLAG && o->arg) {
        fputs(" \\fI", f);
        roffs(f, o->arg);
        fputs("\\fR", f);
    }
    fputc('\n', f);
    roffs(f, o->help ? o->help : "");
    const char *choices = o->choices;
    if (!strcmp(o->name, "format") && set->formats)
        choices = set->formats;
    if (choices) {
        fputs(" (one of: ", f);
        roffs(f, choices);
        fputc(')', f);
    }
    const char *def = gq_optset_default(set, o);
    if (def && o->type != GQ_OPT_FLAG && !(o->help && strstr(o->help, "default"))) {
        fputs("; default ", f);
        roffs(f, def);
    }
    fputs(".\n", f);
}

static int command_page(FILE *f, const gq_command *c)
{
    char name[64];
    snprintf(name, sizeof name, "gpuqual-%s", c->name);
    const gq_frame_cmd *cmd = c->frame;
    header(f, name, cmd->summary);
    /* The usage text: its "usage:" lines are the synopsis, the rest the description. */
    const char *u = cmd->usage, *body = strstr(u, "\n\n");
    size_t nsyn = body ? (size_t)(body - u) : strlen(u);
    fputs(".SH SYNOPSIS\n.nf\n", f);
    roff(f, strncmp(u, "usage: ", 7) ? u : u + 7, strncmp(u, "usage: ", 7) ? nsyn : nsyn - 7);
    fputs("\n.fi\n.SH DESCRIPTION\n", f);
    if (body)
        roffs(f, body + 2);
    fputs("\n.SH OPTIONS\n", f);
    int it = 0;
    for (const gq_opt *o = NULL; (o = gq_optset_next(&cmd->opts, &it, o));)
        option(f, &cmd->opts, o);
    fputs(".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nthe help text.\n", f);
    exit_status(f, cmd->exits);
    env_section(f, "ENVIRONMENT", envs, c);
    env_section(f, "FILES", files, c);
    examples(f, cmd->examples);
    fputs(".SH SEE ALSO\n\\fBgpuqual\\fR(1)\n", f);
    return 0;
}

int gq_cli_man(FILE *f, const char *cmd)
{
    if (cmd) {
        const gq_command *c = find(cmd);
        return c ? command_page(f, c) : 2;
    }
    header(f, "gpuqual", "qualify the data paths of a multi-GPU server");
    fputs(".SH SYNOPSIS\n\\fBgpuqual\\fR \\fIcommand\\fR [\\fIoptions\\fR]\n.br\n\\fBgpuqual\\fR "
          "\\fB\\-\\-version\\fR\n"
          ".SH DESCRIPTION\ngpuqual measures host\\-to\\-GPU and GPU\\-to\\-GPU bandwidth and latency, each "
          "path alone "
          "and many at once, finds the GPUs that share a bottleneck, checks that the node holds its clocks "
          "under "
          "load, and turns it into an acceptance card and a placement. With no GPU, \\fB\\-\\-sim\\fR "
          "\\fINAME\\fR "
          "runs any command on a simulated machine. GB/s are 10^9 bytes per second.\n.SH COMMANDS\n",
          f);
    for (const gq_command *c = gq_commands; c->name; c++) {
        fprintf(f, ".TP\n\\fBgpuqual %s\\fR\n", c->name);
        roffs(f, c->frame->summary);
        fprintf(f, "; \\fBgpuqual\\-%s\\fR(1).\n", c->name);
    }
    exit_status(f, gq_exits_all);
    fputs("Each command's page lists the statuses it can end with.\n", f);
    env_section(f, "ENVIRONMENT", envs, NULL);
    env_section(f, "FILES", files, NULL);
    fputs(".SH EXAMPLES\n.nf\ngpuqual topo\ngpuqual card \\-o card\ngpuqual card \\-\\-sim rtx4090x8 "
          "\\-\\-level quick \\-o /tmp/card\ngpuqual report card/card.json \\-o card.html\n.fi\n",
          f);
    fputs(".SH SEE ALSO\n", f);
    for (const gq_command *c = gq_commands; c->name; c++)
        fprintf(f, "\\fBgpuqual\\-%s\\fR(1)%s\n", c->name, c[1].name ? "," : "");
    return 0;
}

/* ---- completion ------------------------------------------------------------ */

static bool takes_file(const gq_opt *o)
{
    return o->type == GQ_OPT_STR && o->arg && (strstr(o->arg, "FILE") || strstr(o->arg, "DIR"));
}

static const char *choices_of(const gq_optset *set, const gq_opt *o)
{
    if (!strcmp(o->name, "format") && set->formats)
        return set->formats;
    return o->type == GQ_OPT_ENUM ? o->choices : NULL;
}

/* The words completion offers after option o besides its choices: the test
 * names after --test/--testcase (the catalog), a backend's values (--sim: the
 * built-in machines), as words separated by spaces in buf; NULL when none.
 * *files: a file name is accepted too. */
static const char *values_of(const gq_opt *o, char *buf, size_t cap, bool *files)
{
    size_t u = 0;
    buf[0] = 0;
    *files = false;
    if (!strcmp(o->name, "test") || !strcmp(o->name, "testcase")) {
        int n = 0;
        const gq_test *t = gq_catalog(&n);
        for (int i = 0; i < n && u < cap; i++)
            u += (size_t)snprintf(buf + u, cap - u, "%s%s", u ? " " : "", t[i].name);
        return u && u < cap ? buf : NULL;
    }
    for (const char *const *b = gq_backend_names(); b && *b; b++) {
        const gq_backend_opt *bo = gq_backend_options(*b);
        for (; bo && bo->name; bo++) {
            if (strcmp(bo->name, o->name) || !bo->values)
                continue;
            for (const char *const *v = bo->values(); v && *v && u < cap; v++)
                u += (size_t)snprintf(buf + u, cap - u, "%s%s", u ? " " : "", *v);
            *files = true;
            return u && u < cap ? buf : NULL;
        }
    }
    return NULL;
}

/* A comma list as words separated by spaces. */
static void words(FILE *f, const char *list)
{
    for (const char *p = list; *p; p++)
        fputc(*p == ',' ? ' ' : *p, f);
}

static void bash(FILE *f)
{
    fputs("# bash completion for gpuqual (generated from its option tables)\n_gpuqual() {\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} opts=\"\"\n"
          "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n        COMPREPLY=($(compgen -W \"",
          f);
    for (const gq_command *c = gq_commands; c->name; c++)
        fprintf(f, "%s ", c->name);
    fputs("help --help --version\" -- \"$cur\"))\n        return\n    fi\n    case "
          "\"${COMP_WORDS[1]}:$prev\" in\n",
          f);
    for (const gq_command *c = gq_commands; c->name; c++) {
        int it = 0;
        for (const gq_opt *o = NULL; (o = gq_optset_next(&c->frame->opts, &it, o));) {
            const char *ch = choices_of(&c->frame->opts, o);
            char vals[8192];
            bool files = false;
            const char *v = ch ? NULL : values_of(o, vals, sizeof vals, &files);
            if (ch) {
                fprintf(f, "    %s:--%s) COMPREPLY=($(compgen -W \"", c->name, o->name);
                words(f, ch);
                fputs("\" -- \"$cur\")); return ;;\n", f);
            } else if (v) {
                fprintf(f, "    %s:--%s", c->name, o->name);
                if (o->shortname)
                    fprintf(f, "|%s:-%c", c->name, o->shortname);
                fprintf(f, ") COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")%s); return ;;\n", v,
                        files ? " $(compgen -f -- \"$cur\")" : "");
            } else if (takes_file(o))
                fprintf(f, "    %s:--%s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", c->name,
                        o->name);
        }
    }
    fputs("    esac\n    case \"${COMP_WORDS[1]}\" in\n", f);
    for (const gq_command *c = gq_commands; c->name; c++) {
        fprintf(f, "    %s) opts=\"--help", c->name);
        int it = 0;
        for (const gq_opt *o = NULL; (o = gq_optset_next(&c->frame->opts, &it, o));)
            fprintf(f, " --%s", o->name);
        fputs("\" ;;\n", f);
    }
    fputs("    help) COMPREPLY=($(compgen -W \"", f);
    for (const gq_command *c = gq_commands; c->name; c++)
        fprintf(f, "%s ", c->name);
    fputs("\" -- \"$cur\")); return ;;\n    esac\n"
          "    if [[ \"$cur\" == -* ]]; then COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")); "
          "else COMPREPLY=($(compgen -f -- \"$cur\")); fi\n}\ncomplete -F _gpuqual gpuqual\n",
          f);
}

/* zsh _arguments text: [ ] : ' and \ escaped. */
static void zq(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", f);
        else if (*s == '[' || *s == ']' || *s == ':' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else
            fputc(*s, f);
    }
}

static void zsh(FILE *f)
{
    fputs("#compdef gpuqual\n# zsh completion for gpuqual (generated from its option tables)\n_gpuqual() {\n"
          "    local -a cmds\n    cmds=(\n",
          f);
    for (const gq_command *c = gq_commands; c->name; c++) {
        fprintf(f, "        '%s:", c->name);
        zq(f, c->frame->summary);
        fputs("'\n", f);
    }
    fputs("    )\n    if (( CURRENT == 2 )); then\n        _describe 'command' cmds\n        return\n    fi\n"
          "    local cmd=$words[2]\n    shift words\n    (( CURRENT-- ))\n    case $cmd in\n",
          f);
    for (const gq_command *c = gq_commands; c->name; c++) {
        fprintf(f, "    %s)\n        _arguments", c->name);
        int it = 0;
        for (const gq_opt *o = NULL; (o = gq_optset_next(&c->frame->opts, &it, o));) {
            fprintf(f, " \\\n            '--%s[", o->name);
            zq(f, o->help ? o->help : "");
            fputc(']', f);
            const char *ch = choices_of(&c->frame->opts, o);
            char vals[8192];
            bool files = false;
            const char *v = ch ? NULL : values_of(o, vals, sizeof vals, &files);
            if (o->type != GQ_OPT_FLAG) {
                fputc(':', f);
                zq(f, o->arg ? o->arg : "value");
                fputc(':', f);
                if (ch) {
                    fputc('(', f);
                    words(f, ch);
                    fputc(')', f);
                } else if (v && files)
                    fprintf(f, "{compadd -- %s; _files}", v);
                else if (v)
                    fprintf(f, "(%s)", v);
                else if (takes_file(o))
                    fputs("_files", f);
                else
                    fputs(" ", f);
            }
            fputc('\'', f);
        }
        fputs(" \\\n            '*:file:_files'\n        ;;\n", f);
    }
    fputs("    esac\n}\n_gpuqual \"$@\"\n", f);
}

int gq_cli_completion(FILE *f, const char *shell)
{
    if (!strcmp(shell, "bash"))
        bash(f);
    else if (!strcmp(shell, "zsh"))
        zsh(f);
    else
        return 2;
    return 0;
}
