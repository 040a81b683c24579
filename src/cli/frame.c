/* The command frame (frame.h). */
#include "cli/frame.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/outputs.h"
#include "cli/outwrap.h"
#include "render/render.h"

int gq_frame_help_width(void)
{
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col < 60 ? 60 : ws.ws_col;
    return 100;
}

/* Human-readable output on stdout wraps to gq_frame_help_width() (outwrap.h),
 * unless a file's bytes go to stdout: an argument "-" (--json -, -o -,
 * --csv -) or "--opt=-" names stdout as a file, whose content (JSON, CSV)
 * must stay whole. */
static void wrap_stdout(gq_ctx *ctx, int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        size_t l = strlen(argv[i]);
        if (!strcmp(argv[i], "-") || (l > 2 && !strncmp(argv[i], "--", 2) && !strcmp(argv[i] + l - 2, "=-")))
            return;
    }
    FILE *before = stdout;
    if (!(ctx->cmd->needs & GQ_FRAME_NOWRAP) && gq_outwrap_format(ctx->format) &&
        gq_outwrap_begin(gq_frame_help_width()) && ctx->out == before)
        ctx->out = stdout;
}

void gq_frame_exit_help(FILE *f, const gq_frame_cmd *cmd, int width)
{
    if (!cmd->exits)
        return;
    fputs("exit status:\n", f);
    for (const gq_exit_doc *e = cmd->exits; e->meaning; e++) {
        /* "  130  meaning", the meaning wrapped under itself */
        fprintf(f, "  %-4d ", e->code);
        int col = 7;
        const char *p = e->meaning;
        while (*p) {
            const char *sp = strchr(p, ' ');
            int len = sp ? (int)(sp - p) : (int)strlen(p);
            if (col > 7 && col + 1 + len > width) {
                fputs("\n       ", f);
                col = 7;
            } else if (col > 7) {
                fputc(' ', f);
                col++;
            }
            fprintf(f, "%.*s", len, p);
            col += len;
            p += len;
            while (*p == ' ')
                p++;
        }
        fputc('\n', f);
    }
}

static void help(const gq_frame_cmd *cmd)
{
    fputs(cmd->usage, stdout);
    fputs("options:\n", stdout);
    gq_optset_help(stdout, &cmd->opts, gq_opts_help_width);
    if (cmd->examples)
        printf("\nexamples:\n%s", cmd->examples);
    if (cmd->exits) {
        fputc('\n', stdout);
        gq_frame_exit_help(stdout, cmd, gq_opts_help_width);
    }
}

int gq_frame_clean_room(gq_cleanroom *clean, gq_gpulock *lock, gq_backend *be, const gq_topo *topo,
                        const gq_common *c, const char *cmd, gq_err *err)
{
    gq_cleanroom_init(clean, be);
    gq_cleanroom_install(clean);
    int all[GQ_MAX_GPUS], n = c->ngpus_sel;
    const int *gpus = c->gpus_sel;
    if (n <= 0) {
        for (n = 0; n < topo->ngpu && n < GQ_MAX_GPUS; n++)
            all[n] = n;
        gpus = all;
    }
    int rc = GQ_OK;
    if (!gq_backend_simulated(be) || c->sim_lock) {
        char what[64];
        snprintf(what, sizeof what, "gpuqual %s", cmd);
        rc = gq_gpulock_acquire(lock, topo, gpus, n, c->wait_busy_s, what, err);
    }
    /* The command's plan is one step: utilization and memory sampled once before it. */
    if (rc == GQ_OK)
        gq_cleanroom_step(clean, gpus, n, GQ_CLEAN_STEP_S);
    return rc;
}

static int frame_clean_room(gq_ctx *ctx)
{
    return gq_frame_clean_room(&ctx->clean, &ctx->lock, &ctx->be, ctx->topo, ctx->c, ctx->cmd->name,
                               &ctx->err);
}

/* Everything before run(): options, checks, backend, journal, output. */
static int frame_open(gq_ctx *ctx, gq_outfile *of, bool *help_only, int argc, char **argv)
{
    const gq_frame_cmd *cmd = ctx->cmd;
    gq_err *err = &ctx->err;
    int rc = gq_optset_parse(&cmd->opts, ctx->opts, argc, argv, 2, ctx->pos, cmd->maxpos, &ctx->npos,
                             help_only, err);
    if (rc || *help_only)
        return rc;
    /* An output that would overwrite an input or another output. */
    if ((rc = gq_cli_check_same_files(argc, argv, err)))
        return rc;
    if (cmd->needs & (GQ_FRAME_COMMON | GQ_FRAME_BACKEND)) {
        ctx->c = ctx->opts;
        ctx->format = ctx->c->format;
        ctx->json_path = ctx->c->json_path;
        ctx->quiet = ctx->c->quiet;
    }
    if (cmd->prepare && (rc = cmd->prepare(ctx)))
        return rc;
    /* Refuse unwritable outputs before any work is done. */
    if ((rc = gq_outfile_check(ctx->json_path, err)) || (rc = gq_outfile_check(ctx->out_path, err)))
        return rc;
    if (ctx->c && (rc = gq_outfile_check(ctx->c->prom_path, err)))
        return gq_err_prefix(err, "--prom");
    if (ctx->c && (rc = gq_outfile_check(ctx->c->junit_path, err)))
        return gq_err_prefix(err, "--junit");
    if ((cmd->needs & GQ_FRAME_BACKEND) && !ctx->no_backend) {
        if ((rc = gq_cli_open(ctx->c, &ctx->be, ctx->topo, err)))
            return rc;
        ctx->opened = true;
        if (cmd->check && (rc = cmd->check(ctx)))
            return rc;
        if ((cmd->needs & GQ_FRAME_MEASURES) && (rc = frame_clean_room(ctx)))
            return rc;
    }
    if ((cmd->needs & GQ_FRAME_JOURNAL) && ctx->c->journal && !ctx->no_backend) {
        json_t *jo = gq_cli_journal_options(ctx->c);
        gq_journal_id id;
        gq_cli_journal_id(&id, cmd->name, ctx->c, ctx->topo, jo);
        rc = gq_journal_open(&ctx->jr, ctx->c->journal, &id, err);
        json_decref(jo);
        if (rc)
            return rc;
        ctx->journal = &ctx->jr;
    }
    if (ctx->out_path) {
        if ((rc = gq_outfile_open(of, ctx->out_path, err)))
            return rc;
        ctx->out = of->f;
    }
    return GQ_OK;
}

/* Everything after run(): the document and the output, written once. */
static int frame_outputs(gq_ctx *ctx, gq_outfile *of)
{
    int rc = GQ_OK;
    if (ctx->doc && ctx->json_path && (rc = gq_doc_write_file(ctx->doc, ctx->json_path, &ctx->err)))
        return rc;
    if (ctx->doc && ctx->doc_stdout) {
        json_dumpf(ctx->doc, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
    }
    if (ctx->out != stdout) {
        ctx->out = stdout;
        return gq_outfile_commit(of, &ctx->err);
    }
    return GQ_OK;
}

/* A renderer that failed on its stream says "write error"; the user needs the
 * file (or stdout) and the reason. */
static void name_write_error(gq_ctx *ctx)
{
    int e = errno;
    if (!ctx->out || !ferror(ctx->out))
        return;
    const char *path = ctx->out == stdout ? NULL : ctx->out_path;
    if (!path &&
        gq_outwrap_errno()) /* the wrapped stdout's own reason (out of memory, or the real write's) */
        e = gq_outwrap_errno();
    if (!e)
        e = EIO;
    if (path)
        gq_err_set(&ctx->err, GQ_E_IO, "writing '%s' failed: %s", path, strerror(e));
    else
        gq_err_set(&ctx->err, GQ_E_IO, "writing the output to stdout failed: %s", strerror(e));
}

int gq_frame_main(const gq_frame_cmd *cmd, int argc, char **argv)
{
    gq_ctx ctx = {.cmd = cmd, .out = stdout};
    gq_outfile of = {0};
    bool help_only = false;
    int rc = GQ_E_NOMEM;
    ctx.opts = calloc(1, cmd->opts_size ? cmd->opts_size : 1);
    ctx.topo = calloc(1, sizeof *ctx.topo);
    if (!ctx.opts || !ctx.topo)
        gq_err_set(&ctx.err, GQ_E_NOMEM, "out of memory");
    else if (!(rc = frame_open(&ctx, &of, &help_only, argc, argv)) && help_only) {
        wrap_stdout(&ctx, argc, argv);
        help(cmd);
    } else if (!rc) {
        wrap_stdout(&ctx, argc, argv);
        if (!(rc = cmd->run(&ctx))) {
            int e = errno; /* a failed write to stdout during run() left its reason here */
            rc = frame_outputs(&ctx, &of);
            if (!rc && ferror(stdout) && !gq_cli_errors) {
                errno = e;
                rc = GQ_E_IO;
                ctx.out = stdout;
                name_write_error(&ctx);
            }
        } else if (rc == GQ_E_IO)
            name_write_error(&ctx);
    } else if (rc == GQ_E_IO)
        name_write_error(&ctx);
    if (ctx.out != stdout)
        gq_outfile_abort(&of);
    gq_outwrap_end();
    char note[400];
    gq_cleanroom_note(&ctx.clean, note, sizeof note);
    /* a command that keeps another tool's layout (nvbandwidth's) says nothing of its own on stderr: its
     * contaminated figures show as that tool shows invalid ones */
    if (note[0] && !help_only && !(cmd->needs & GQ_FRAME_NOWRAP))
        gq_cli_warn("%s", note);
    gq_cleanroom_install(NULL);
    gq_gpulock_release(&ctx.lock);
    int code = ctx.exit_code;
    /* Figures taken while something else used the GPU are not clean. */
    if (!rc && code == 0 && ctx.clean.contaminated > 0 && !ctx.busy_judged)
        code = gq_status_exit_code(GQ_E_BUSY);
    if (rc) {
        code = gq_status_exit_code(rc);
        if (cmd->fail && ctx.opts) { /* not before the options exist: out of memory for them */
            ctx.exit_code = code;
            cmd->fail(&ctx, rc);
            code = ctx.exit_code;
        } else if (ctx.err.msg[0])
            gq_cli_error("%s", ctx.err.msg);
        else
            gq_cli_error("%s failed", cmd->name);
    }
    if (cmd->done && ctx.opts)
        cmd->done(&ctx);
    if (ctx.journal)
        gq_journal_close(ctx.journal);
    if (ctx.opened)
        gq_backend_close(&ctx.be);
    json_decref(ctx.doc);
    free(ctx.topo);
    free(ctx.opts);
    return code;
}
