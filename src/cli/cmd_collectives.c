/* gpuqual collectives: NCCL's all-reduce, all-gather, reduce-scatter,
 * all-to-all and broadcast over groups of GPUs, swept over sizes and
 * printed as nccl-tests' all_reduce_perf prints them (measure/collective.h
 * holds the definitions and the rules).
 *
 * A command of its own rather than tests in the catalog: the catalog's
 * tests are copies between endpoints timed by the copy harness (flows,
 * windows per flow); a collective is one operation of a whole group, with
 * its own library (NCCL, loaded at run time, maybe absent: exit 7), sizes,
 * counts and bus-bandwidth factors, and its own table. It still records
 * its figures as records, so journals and documents carry them. */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/progress.h"
#include "core/units.h"
#include "measure/collective.h"
#include "measure/journal.h"
#include "render/render.h"

#define MAXSIZES 64

typedef struct coll_opts {
    gq_common c; /* rounds, verify, --gpus */
    const char *op;
    const char *group;
    uint64_t minbytes, maxbytes;
    int stepfactor;
    int iters, warmup;
    /* parsed by prepare */
    int nops;
    gq_coll_op ops[GQ_COLL_NOPS];
    int ngroups;
    gq_coll_group groups[GQ_COLL_MAX_GROUPS];
    int nsizes;
    uint64_t sizes[MAXSIZES];
} coll_opts;

#define OFF(f) offsetof(coll_opts, f)
/* clang-format off */
static const gq_opt coll_own_opts[] = {
    {.name = "op", .type = GQ_OPT_STR, .off = OFF(op), .def = "all_reduce,all_gather", .arg = "OPS",
     .help = "collectives to run, comma-separated: all_reduce, all_gather, reduce_scatter, all_to_all, "
             "broadcast"},
    {.name = "group", .type = GQ_OPT_STR, .off = OFF(group), .arg = "GPUS",
     .help = "the ranks of a group in order, e.g. 0,1,2,3; groups separated by spaces or ';' run at once "
             "(\"0,1 2,3\"); default: every selected GPU in one group"},
    {.name = "minbytes", .type = GQ_OPT_SIZE, .off = OFF(minbytes), .def = "1MiB", .arg = "SIZE",
     .lo = 4, .hi = 16.0 * 1024 * 1024 * 1024,
     .help = "smallest size (nccl-tests' -b; 1MiB, 64KiB, or bytes)"},
    {.name = "maxbytes", .type = GQ_OPT_SIZE, .off = OFF(maxbytes), .def = "1GiB", .arg = "SIZE",
     .lo = 4, .hi = 16.0 * 1024 * 1024 * 1024, .help = "largest size (nccl-tests' -e)"},
    {.name = "stepfactor", .type = GQ_OPT_INT, .off = OFF(stepfactor), .def = "4", .arg = "N", .lo = 2,
     .hi = 1024, .help = "each size is the previous times N (nccl-tests' -f)"},
    {.name = "iters", .type = GQ_OPT_INT, .off = OFF(iters), .def = "20", .arg = "N", .lo = 1, .hi = 100000,
     .help = "timed iterations per round (nccl-tests' -n)"},
    {.name = "warmup-iters", .type = GQ_OPT_INT, .off = OFF(warmup), .def = "5", .arg = "N", .lo = 0,
     .hi = 100000, .help = "untimed iterations before each round's barrier (nccl-tests' -w)"},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF

static const gq_opt *const tabs[] = {gq_common_output_opts, gq_common_backend_opts, coll_own_opts,
                                     gq_common_rounds_opt, gq_common_verify_opt};
#define NTABS ((int)(sizeof tabs / sizeof tabs[0]))

static int parse_ops(coll_opts *o, gq_err *err)
{
    const char *p = o->op;
    o->nops = 0;
    while (*p) {
        size_t len = strcspn(p, ",");
        char name[32];
        if (len == 0 || len >= sizeof name)
            return gq_err_set(err, GQ_E_USAGE,
                              "--op: '%s' is not a list of collectives, expected e.g. all_reduce,all_gather",
                              o->op);
        memcpy(name, p, len);
        name[len] = 0;
        gq_coll_op op;
        int rc = gq_coll_op_parse(name, &op, err);
        if (rc)
            return rc;
        for (int i = 0; i < o->nops; i++)
            if (o->ops[i] == op)
                return gq_err_set(err, GQ_E_USAGE, "--op names %s twice", gq_coll_op_name(op));
        o->ops[o->nops++] = op;
        p += len;
        if (*p == ',' && !*++p)
            return gq_err_set(err, GQ_E_USAGE, "--op: '%s' ends with a comma", o->op);
    }
    if (o->nops == 0)
        return gq_err_set(err, GQ_E_USAGE, "--op: empty, expected e.g. all_reduce,all_gather");
    return GQ_OK;
}

static int coll_prepare(gq_ctx *ctx)
{
    coll_opts *o = ctx->opts;
    gq_err *err = &ctx->err;
    int rc;
    if (ctx->npos > 0)
        return gq_err_set(err, GQ_E_USAGE,
                          "collectives takes no positional argument ('%s'); groups go in --group, e.g. "
                          "--group 0,1,2,3",
                          ctx->pos[0]);
    if ((rc = parse_ops(o, err)))
        return rc;
    if (o->minbytes > o->maxbytes)
        return gq_err_set(err, GQ_E_USAGE, "--minbytes %llu is above --maxbytes %llu; give min <= max",
                          (unsigned long long)o->minbytes, (unsigned long long)o->maxbytes);
    o->nsizes = 0;
    for (uint64_t s = o->minbytes; s <= o->maxbytes; s *= (uint64_t)o->stepfactor) {
        if (o->nsizes >= MAXSIZES)
            return gq_err_set(err, GQ_E_USAGE,
                              "--minbytes..--maxbytes by --stepfactor gives more than %d sizes", MAXSIZES);
        o->sizes[o->nsizes++] = s;
    }
    o->ngroups = 0;
    if (o->group && (rc = gq_coll_parse_groups(o->group, "--group", o->groups, &o->ngroups, err)))
        return rc;
    if (o->group && o->c.gpus)
        return gq_err_set(err, GQ_E_USAGE, "--gpus and --group exclude each other: the groups name the GPUs");
    return GQ_OK;
}

/* What needs the machine: the groups exist; collectives are available. */
static int coll_check(gq_ctx *ctx)
{
    coll_opts *o = ctx->opts;
    if (o->ngroups == 0) {
        o->ngroups = 1;
        o->groups[0].ngpus = o->c.ngpus_sel;
        memcpy(o->groups[0].gpus, o->c.gpus_sel, sizeof(int) * (size_t)o->c.ngpus_sel);
    }
    int rc = gq_coll_check_groups(o->groups, o->ngroups, ctx->topo->ngpu, &ctx->err);
    if (rc)
        return rc;
    gq_coll_info info;
    gq_coll_probe(&ctx->be, &info);
    if (!info.available)
        return gq_err_set(&ctx->err, GQ_E_NOLIB, "%s", info.why);
    return GQ_OK;
}

static void group_str(const gq_coll_group *g, char *buf, size_t n)
{
    size_t l = 0;
    buf[0] = 0;
    for (int r = 0; r < g->ngpus && l + 1 < n; r++)
        l += (size_t)snprintf(buf + l, n - l, "%s%d", r ? "," : "", g->gpus[r]);
}

/* nccl-tests' getFloatStr: the widest of %.2f, %.1f, %.0f that fits. */
static void float_str(double v, int width, char *s, size_t n)
{
    if (snprintf(s, n, "%*.2f", width, v) <= width)
        return;
    if (snprintf(s, n, "%*.1f", width, v) <= width)
        return;
    if (snprintf(s, n, "%*.0f", width, v) <= width)
        return;
    snprintf(s, n, width >= 7 ? "%*.1e" : "%*.0e", width, v);
}

/* One table per op and group, lined up with nccl-tests' (out-of-place
 * columns only: gpuqual runs out of place). */
static void print_tables(FILE *f, const coll_opts *o, const gq_recordset *rs, const gq_coll_info *info,
                         bool simulated)
{
    fprintf(f, "# gpuqual collectives: %s%s\n", info->library, simulated ? " (simulated)" : "");
    fprintf(f, "# %d rounds of (%d warmup, barrier, %d timed iterations); time = median over rounds of the\n",
            o->c.rounds, o->warmup, o->iters);
    fprintf(
        f,
        "# time per iteration; algbw = size / time, busbw = algbw x nccl-tests' factor; GB/s = 10^9 B/s\n");
    char gs[160];
    for (int p = 0; p < o->nops; p++)
        for (int k = 0; k < o->ngroups; k++) {
            const gq_coll_group *g = &o->groups[k];
            group_str(g, gs, sizeof gs);
            fprintf(f, "#\n# %s, group %s (%d ranks)%s\n", gq_coll_op_name(o->ops[p]), gs, g->ngpus,
                    o->ngroups > 1 ? ", all groups at once" : "");
            fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s\n", "size", "count", "type", "redop",
                    "root", "time", "algbw", "busbw", "#wrong");
            fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s\n", "(B)", "(elements)", "", "", "",
                    "(us)", "(GB/s)", "(GB/s)", "");
            double sum = 0;
            int nsum = 0;
            for (int i = 0; i < rs->n; i++) {
                const gq_record *r = &rs->v[i];
                if (gq_coll_op_of_test(r->test) != (int)o->ops[p] || r->flow_tag != k)
                    continue;
                char ts[16], ab[16], bb[16], wr[16];
                float_str(gq_coll_record_time_us(r), 7, ts, sizeof ts);
                float_str(gq_coll_record_algbw(r), 6, ab, sizeof ab);
                float_str(r->value.median, 6, bb, sizeof bb);
                snprintf(wr, sizeof wr, "%s",
                         r->flags & GQ_FLAG_VERIFY_FAILED ? "wrong" : (o->c.verify ? "0" : "N/A"));
                if (r->value.n == 0)
                    snprintf(ts, sizeof ts, "%7s", "-"), snprintf(ab, sizeof ab, "%6s", "-"),
                        snprintf(bb, sizeof bb, "%6s", "-");
                fprintf(f, "%12llu  %12llu  %8s  %6s  %6i  %7s  %6s  %6s  %6s%s\n",
                        (unsigned long long)r->bytes,
                        (unsigned long long)gq_coll_count(o->ops[p], r->bytes, g->ngpus), "float",
                        gq_coll_redop(o->ops[p]), gq_coll_root(o->ops[p]), ts, ab, bb, wr,
                        r->valid ? "" : "  invalid");
                if (r->valid) {
                    sum += r->value.median;
                    nsum++;
                }
            }
            if (nsum)
                fprintf(f, "# Avg bus bandwidth    : %g\n", sum / nsum);
        }
    bool any = false;
    for (int i = 0; i < rs->n; i++)
        if (!rs->v[i].valid) {
            if (!any)
                fprintf(f, "#\n");
            any = true;
            char g2[160];
            gq_coll_group g = {.ngpus = rs->v[i].ngpus};
            memcpy(g.gpus, rs->v[i].gpus, sizeof(int) * (size_t)g.ngpus);
            group_str(&g, g2, sizeof g2);
            fprintf(f, "# invalid: %s %llu B, group %s: %s\n",
                    gq_coll_op_name(gq_coll_op_of_test(rs->v[i].test)), (unsigned long long)rs->v[i].bytes,
                    g2, rs->v[i].error);
        }
}

static json_t *coll_doc(gq_ctx *ctx, const gq_recordset *rs, const gq_coll_info *info, bool interrupted)
{
    coll_opts *o = ctx->opts;
    json_t *doc = NULL, *options = gq_opts_to_json(tabs, NTABS, o), *sections = json_object();
    json_t *sec = json_object(), *groups = json_array(), *rows = json_array();
    if (options && sections && sec && groups && rows) {
        for (int k = 0; k < o->ngroups; k++) {
            json_t *g = json_array();
            for (int r = 0; r < o->groups[k].ngpus; r++)
                json_array_append_new(g, json_integer(o->groups[k].gpus[r]));
            json_array_append_new(groups, g);
        }
        for (int i = 0; i < rs->n; i++) {
            const gq_record *r = &rs->v[i];
            int op = gq_coll_op_of_test(r->test);
            if (op < 0)
                continue;
            json_t *row =
                json_pack("{s:s,s:i,s:I,s:I,s:s,s:s,s:i,s:b,s:i}", "op", gq_coll_op_name(op), "group",
                          r->flow_tag, "size", (json_int_t)r->bytes, "count",
                          (json_int_t)gq_coll_count(op, r->bytes, r->ngpus), "type", "float", "redop",
                          gq_coll_redop(op), "root", gq_coll_root(op), "valid", r->valid, "record", i);
            bool have = r->value.n > 0;
            json_object_set_new(row, "time_us", have ? json_real(gq_coll_record_time_us(r)) : json_null());
            json_object_set_new(row, "algbw", have ? json_real(gq_coll_record_algbw(r)) : json_null());
            json_object_set_new(row, "busbw", have ? json_real(r->value.median) : json_null());
            json_array_append_new(rows, row);
        }
        json_object_set_new(sec, "library", json_string(info->library));
        json_object_set_new(sec, "groups", groups);
        json_object_set_new(sec, "rows", rows);
        groups = rows = NULL;
        json_object_set_new(sections, "collectives", sec);
        sec = NULL;
        gq_doc d = {.kind = "collectives",
                    .version = gq_version,
                    .git = gq_git_rev,
                    .options = options,
                    .topo = ctx->topo,
                    .records = rs,
                    .sections = sections,
                    .simulated = gq_backend_simulated(&ctx->be),
                    .incomplete = interrupted};
        doc = gq_doc_to_json(&d);
    }
    json_decref(groups);
    json_decref(rows);
    json_decref(sec);
    json_decref(options);
    json_decref(sections);
    return doc;
}

static int measure_all(gq_ctx *ctx, gq_recordset *rs)
{
    coll_opts *o = ctx->opts;
    gq_progress bar;
    gq_progress_init(&bar, gq_progress_wanted(o->c.quiet, o->c.format),
                     (long)o->nops * o->nsizes * o->c.rounds);
    gq_coll_opts co = {.rounds = o->c.rounds,
                       .warmup = o->warmup,
                       .iters = o->iters,
                       .verify = o->c.verify,
                       .progress = gq_progress_on_round,
                       .progress_arg = &bar};
    int ns[GQ_COLL_MAX_GROUPS], rc = GQ_OK, id = 0;
    for (int k = 0; k < o->ngroups; k++)
        ns[k] = o->groups[k].ngpus;
    for (int p = 0; p < o->nops && !rc; p++)
        for (int s = 0; s < o->nsizes && !rc; s++) {
            gq_coll_req req = {.op = o->ops[p],
                               .ngroups = o->ngroups,
                               .warmup = o->warmup,
                               .iters = o->iters,
                               .verify = o->c.verify,
                               .span = o->maxbytes}; /* nccl-tests' -e: buffers shift within it */
            memcpy(req.groups, o->groups, sizeof(gq_coll_group) * (size_t)o->ngroups);
            req.bytes = gq_coll_size(req.op, o->sizes[s], ns, o->ngroups);
            if (req.bytes == 0)
                continue; /* nccl-tests skips a size that leaves no element per rank */
            co.id = id++;
            int first = rs->n;
            rc = gq_coll_measure(&ctx->be, ctx->topo, &req, &co, rs, &ctx->err);
            for (int i = first; !rc && ctx->journal && i < rs->n; i++)
                rc = gq_journal_append(ctx->journal, &rs->v[i], &ctx->err);
        }
    gq_progress_clear(&bar);
    return rc;
}

static int coll_run(gq_ctx *ctx)
{
    coll_opts *o = ctx->opts;
    gq_recordset rs = {0};
    gq_coll_info info;
    gq_coll_probe(&ctx->be, &info);
    int rc = measure_all(ctx, &rs);
    bool interrupted = rc == GQ_E_INTR;
    if (interrupted)
        rc = GQ_OK;
    if (!rc && (o->c.json_path || !strcmp(o->c.format, "json")) &&
        !(ctx->doc = coll_doc(ctx, &rs, &info, interrupted)))
        rc = gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    if (!rc) {
        ctx->doc_stdout = !strcmp(o->c.format, "json");
        if (!strcmp(o->c.format, "csv"))
            gq_render_csv(stdout, &rs);
        else if (!ctx->doc_stdout)
            print_tables(stdout, o, &rs, &info, gq_backend_simulated(&ctx->be));
        if (interrupted) {
            gq_cli_interrupted_note(!ctx->doc_stdout && strcmp(o->c.format, "csv"),
                                    ctx->journal ? ctx->journal->path : NULL);
            ctx->exit_code = GQ_EXIT_INCOMPLETE;
        } else {
            for (int i = 0; i < rs.n; i++)
                if (gq_record_failed(&rs.v[i]) || (rs.v[i].flags & GQ_FLAG_OVERLAP))
                    ctx->exit_code = GQ_EXIT_FAIL; /* contaminated: the frame exits 6 */
        }
    }
    gq_records_free(&rs);
    return rc;
}

static const gq_exit_doc coll_exits[] = {
    {0, "every figure valid"},
    {1, "a figure failed or is invalid (an error, wrong data, an impossible bus bandwidth, groups that did "
        "not run at once)"},
    GQ_EXITDOC_USAGE,
    GQ_EXITDOC_NODEV,
    {5, "incomplete: interrupted; what was measured is written, marked incomplete"},
    GQ_EXITDOC_BUSY,
    {7, "no collectives here: NCCL (libnccl.so.2) not found, or a backend without them"},
    GQ_EXITDOC_END,
};

const gq_frame_cmd gq_frame_collectives = {
    .name = "collectives",
    .summary = "NCCL collectives (all-reduce, all-gather, ...) over GPU groups, as nccl-tests reports them",
    .usage =
        "usage: gpuqual collectives [--op OPS] [--group GPUS] [--minbytes SIZE] [--maxbytes SIZE]\n"
        "                            [--stepfactor N] [--iters N] [--warmup-iters N] [options]\n\n"
        "Run NCCL collectives over one group of GPUs, or several groups at once, for each size from\n"
        "--minbytes to --maxbytes, and print the table nccl-tests' all_reduce_perf prints: size, count,\n"
        "type, redop, root, time, algbw, busbw, #wrong. algbw = size / time; busbw = algbw x 2(n-1)/n\n"
        "for all-reduce, x (n-1)/n for all-gather, reduce-scatter and all-to-all, x 1 for broadcast.\n"
        "Each size runs R rounds of (warmup, barrier, timed iterations); the time is the median over\n"
        "rounds; the data is checked after the timed part; groups run at once must overlap by 99 %;\n"
        "a bus bandwidth above the group's physical limit is refused as impossible.\n"
        "A command rather than catalog tests: a collective is one operation of a whole group through\n"
        "its own library, with its own sizes and table, not a copy between two endpoints.\n"
        "NCCL is loaded at run time; without it the command says so in one line and exits 7.\n"
        "nccl-tests' -b, -e, -f, -n, -w are --minbytes, --maxbytes, --stepfactor, --iters and\n"
        "--warmup-iters here (gpuqual's short flags mean other things).\n\n",
    .opts = {.name = "collectives", .formats = "table,json,csv", .tabs = tabs, .ntab = NTABS},
    .opts_size = sizeof(coll_opts),
    .exits = coll_exits,
    .examples = "  gpuqual collectives --sim rtx4090x8 --group 0,1,2,3\n"
                "  gpuqual collectives --op all_reduce --group \"0,1 2,3\" --maxbytes 256MiB\n",
    .maxpos = 4,
    .needs = GQ_FRAME_BACKEND | GQ_FRAME_JOURNAL | GQ_FRAME_MEASURES,
    .prepare = coll_prepare,
    .check = coll_check,
    .run = coll_run,
};
