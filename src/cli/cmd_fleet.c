/* gpuqual fleet: the acceptance card on many nodes at once, under MPI (Open
 * MPI; Slurm launches it with srun). Each rank runs the card on its own node
 * and writes its artefacts to DIR/<host>-rank<N>/; rank 0 gathers the cards'
 * JSON (MPI_Gather of the lengths, MPI_Gatherv of the bytes), lines up the
 * same figures across the nodes and names the outliers (analysis/fleet.h),
 * and writes DIR/fleet.json and DIR/fleet.md. gpuqual adds no transport of its
 * own. Without mpirun it is a fleet of one node.
 *
 * Exit on rank 0: 0 every node passes and none is an outlier, 4 a node warned
 * or is an outlier, 1 a node failed or its card did not run, 5 a card is
 * incomplete, 2 bad input. Other ranks exit 0 unless their own card could not
 * run. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef GQ_HAVE_MPI
#include <mpi.h>
#endif

#include "analysis/card.h"
#include "exec/card_run.h"
#include "analysis/expect.h"
#include "analysis/fleet.h"
#include "analysis/stress.h"
#include "cli/card_opts.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/frame.h"
#include "cli/textfiles.h"
#include "cli/fleet_gather.h"
#include "cli/options.h"
#include "cli/carddir.h"
#include "cli/outputs.h"
#include "core/runid.h"
#include "measure/journal.h"
#include "core/units.h"
#include "doc/saved_doc.h"
#include "render/card_render.h"
#include "render/render.h"
#include "render/analysis_render.h"

typedef struct fleet_cli {
    GQ_CARD_CLI_FIELDS
    const char *threshold;
    bool seed_per_rank;
    /* what prepare() found, for run() */
    double threshold_pct;
    const char *json_copy; /* --json FILE: written by rank 0 */
    gq_expect *ex;
    bool force;
    char **earlier; /* rank 0, --force: the earlier fleet's node folders in -o DIR */
} fleet_cli;
/* gq_card_cli_opts writes through offsetof(gq_card_cli, ...): same leading fields, same layout */
_Static_assert(offsetof(fleet_cli, offload) == offsetof(gq_card_cli, offload),
               "fleet_cli must begin like gq_card_cli");

/* The card's options come from gq_card_cli_opts (card_opts.c); -o names the fleet's directory. */
#define OFF(f) offsetof(fleet_cli, f)
/* clang-format off */
static const gq_opt fleet_own_opts[] = {
    {.name = "output",
     .shortname = 'o',
     .type = GQ_OPT_STR,
     .off = OFF(outdir),
     .arg = "DIR",
     .help = "directory for fleet.json, fleet.md and one <host>-rank<N>/ per node (default "
             "./gpuqual-fleet-<time>)"},
    {.name = "force",
     .type = GQ_OPT_FLAG,
     .off = OFF(force),
     .help = "replace the earlier fleet in -o DIR: each node's folder once its new card is complete, "
             "fleet.json and fleet.md, and the earlier nodes' folders this fleet does not have"},
    {.name = "threshold",
     .type = GQ_OPT_STR,
     .off = OFF(threshold),
     .def = "5%",
     .arg = "PCT",
     .help = "a node worse than the fleet median by more than this on a figure is an outlier (e.g. 5% or 2.5)"},
    {.name = "sim-seed-per-rank",
     .type = GQ_OPT_FLAG,
     .off = OFF(seed_per_rank),
     .help = "with --sim: rank N simulates with seed --sim-seed + N, so that simulated nodes differ slightly"},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF

static const gq_opt *const tabs[] = {gq_common_output_opts,  gq_common_backend_opts, gq_card_cli_opts,
                                     gq_common_measure_opts, fleet_own_opts,         gq_common_prom_opt,
                                     gq_common_junit_opt};
#define NTABS ((int)(sizeof tabs / sizeof tabs[0]))

/* "5%" or "5" -> 5. */
static int parse_threshold(const char *s, double *out, gq_err *err)
{
    char tb[64];
    snprintf(tb, sizeof tb, "%s", s);
    size_t tl = strlen(tb);
    if (tl && tb[tl - 1] == '%')
        tb[tl - 1] = 0;
    gq_err e2;
    if (gq_parse_double(tb, out, &e2) || !(*out > 0) || *out >= 1000)
        return gq_err_set(err, GQ_E_USAGE,
                          "--threshold '%s': expected a percentage above 0 and below 1000, e.g. 5%% or 2.5",
                          s);
    return GQ_OK;
}

/* The --sim-fault items for one rank: "rankN:gpuM:KIND" applies to rank N
 * only, "gpuM:KIND" to every rank. rank < 0 keeps every item (to check the
 * whole spec). *maxrank: the largest rank named (-1: none). */
static int faults_for_rank(const char *spec, int rank, char *out, size_t n, int *maxrank, gq_err *err)
{
    size_t used = 0;
    out[0] = 0;
    *maxrank = -1;
    if (!spec)
        return GQ_OK;
    const char *p = spec;
    for (;;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        char item[96];
        if (l == 0 || l >= sizeof item)
            return gq_err_set(err, GQ_E_USAGE,
                              "--sim-fault '%s': %s item; e.g. rank1:gpu3:thermal or gpu0:ecc", spec,
                              l ? "too long an" : "empty");
        memcpy(item, p, l);
        item[l] = 0;
        const char *rest = item;
        int r = -1;
        if (!strncmp(item, "rank", 4)) {
            char *end = NULL;
            long v = strtol(item + 4, &end, 10);
            if (end == item + 4 || *end != ':' || v < 0 || v > INT_MAX - 1 || item[4] == '-' ||
                item[4] == '+')
                return gq_err_set(
                    err, GQ_E_USAGE,
                    "--sim-fault: bad rank in '%s'; expected rankN:gpuM:KIND, e.g. rank1:gpu3:thermal", item);
            r = (int)v;
            rest = end + 1;
            if (!*rest)
                return gq_err_set(err, GQ_E_USAGE,
                                  "--sim-fault: '%s' names no fault; expected rankN:gpuM:KIND, e.g. "
                                  "rank1:gpu3:thermal",
                                  item);
            if (r > *maxrank)
                *maxrank = r;
        }
        if (rank < 0 || r < 0 || r == rank) {
            int w = snprintf(out + used, n - used, "%s%s", used ? "," : "", rest);
            if (w < 0 || (size_t)w >= n - used)
                return gq_err_set(err, GQ_E_USAGE, "--sim-fault '%s': too long", spec);
            used += (size_t)w;
        }
        if (!c)
            break;
        p = c + 1;
    }
    return GQ_OK;
}

#ifdef GQ_HAVE_MPI
/* Create dir when missing; an existing one must be a writable directory.
 * EEXIST is fine: ranks sharing a file system create DIR together. */
static int ensure_dir(const char *dir, gq_err *err)
{
    struct stat st;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return gq_err_set(err, GQ_E_IO, "-o '%s': cannot create the directory: %s", dir, strerror(errno));
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return gq_err_set(err, GQ_E_IO, "-o '%s': exists and is not a directory", dir);
    if (access(dir, W_OK | X_OK) != 0)
        return gq_err_set(err, GQ_E_IO, "-o '%s': directory is not writable", dir);
    return GQ_OK;
}

#endif

#ifdef GQ_HAVE_MPI
static void mpi_start(void)
{
    int on = 0;
    MPI_Initialized(&on);
    if (!on)
        MPI_Init(NULL, NULL);
}

static void mpi_stop(void)
{
    int on = 0, off = 0;
    MPI_Initialized(&on);
    MPI_Finalized(&off);
    if (on && !off)
        MPI_Finalize();
}
#endif

/* Where the artefacts go must be creatable before anything runs; each node's
 * folder is made under it, so its name stays short enough for theirs. An
 * existing DIR must hold nothing, or an earlier fleet and --force
 * (cli/carddir.h). Rank 0 alone looks, before any rank runs, and tells the
 * others: a slower rank never sees the node folders the faster ones of this
 * fleet have begun. */
static int check_outdir(fleet_cli *o, gq_err *err)
{
    int rc = GQ_OK, rank = 0;
#ifdef GQ_HAVE_MPI
    mpi_start();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
    if (rank == 0) {
        if (o->outdir && strlen(o->outdir) > 800)
            rc = gq_err_set(err, GQ_E_USAGE, "-o: the path is %zu characters, expected under 800",
                            strlen(o->outdir));
        else if (!(rc = gq_carddir_check_outdir(o->outdir, err)) && o->outdir)
            rc = gq_carddir_check_fleet(o->outdir, o->force, &o->earlier, err);
    }
#ifdef GQ_HAVE_MPI
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(err->msg, (int)sizeof err->msg, MPI_CHAR, 0, MPI_COMM_WORLD);
    err->code = rc;
#endif
    return rc;
}

#ifdef GQ_HAVE_MPI
/* This rank's card, as `gpuqual card` runs it, into nodedir (created under
 * fleetdir once the plan is accepted). On success *doc_out is the card
 * document (new reference). Returns GQ_OK or a negative status with *err. */
static int run_card(fleet_cli *o, gq_common *cm, const gq_expect *ex, const char *fleetdir,
                    const char *nodedir, json_t **doc_out, char *where, size_t cap, gq_err *err)
{
    gq_backend be = {0};
    gq_journal jr = {0};
    bool opened = false, have_journal = false;
    int rc = GQ_OK;
    json_t *options = NULL;
    gq_topo *topo = calloc(1, sizeof *topo);
    gq_card_plan *plan = calloc(1, sizeof *plan);
    gq_card_opts *co = calloc(1, sizeof *co);
    gq_card_result res;
    memset(&res, 0, sizeof res);
    gq_cleanroom clean;
    gq_gpulock lock;
    memset(&clean, 0, sizeof clean);
    memset(&lock, 0, sizeof lock);
    bool cleaning = false;
    *doc_out = NULL;

    if (!topo || !plan || !co) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = gq_cli_open(cm, &be, topo, err)))
        goto out;
    opened = true;
    if ((rc = gq_card_cli_plan((const gq_card_cli *)o, cm, topo, co, plan, err)))
        goto out;
    /* as `gpuqual card`: this node's GPUs locked, and every figure watched by the
     * clean room, so a busy GPU makes the node's card INCOMPLETE (or allowed) */
    cleaning = true;
    if ((rc = gq_frame_clean_room(&clean, &lock, &be, topo, cm, "fleet", err)))
        goto out;
    /* the node's folder is written as a set: DIR/<node>.partial-RUNID,
     * swapped in once the card is complete (cli/carddir.h) */
    char run_id[32], partial[1300];
    gq_run_id_make(run_id);
    if ((rc = ensure_dir(fleetdir, err)) ||
        (rc = gq_carddir_begin(nodedir, run_id, partial, sizeof partial, err)))
        goto out;
    char path[1400];
    snprintf(path, sizeof path, "%s/journal.jsonl", partial);
    json_t *jo = gq_cli_journal_options(cm);
    gq_journal_id id;
    gq_cli_journal_id(&id, "fleet", cm, topo, jo);
    id.run_id = run_id;
    id.layout = GQ_CARD_JOURNAL_LAYOUT;
    rc = gq_journal_open(&jr, path, &id, err);
    json_decref(jo);
    if (rc)
        goto out;
    have_journal = true;
    co->expect = ex;
    rc = gq_card_execute(&be, topo, co, plan, &jr, NULL, NULL, &res, err);
    if (rc && rc != GQ_E_INTR)
        goto out;
    gq_card_cli_run run = {.topo = topo,
                           .res = &res,
                           .expect = ex,
                           .plan = plan,
                           .co = co,
                           .complete = rc == GQ_OK,
                           .simulated = gq_backend_simulated(&be)};
    options = gq_optset_to_json(&gq_frame_fleet.opts, o);
    int written = gq_card_cli_document(&run, options, doc_out, err);
    if (!written)
        written = gq_card_cli_write(partial, *doc_out, &run, err);
    /* the node's artefacts: its folder, or the partial one of a card that did not complete */
    snprintf(where, cap, "%s", run.complete ? nodedir : partial);
    if (!written && run.complete) {
        gq_journal_close(&jr);
        have_journal = false;
        written = gq_carddir_commit(nodedir, partial, run_id, err);
    }
    rc = written; /* an interrupted card is written and says so itself */
    if (written) {
        json_decref(*doc_out);
        *doc_out = NULL;
    }
out:
    if (have_journal)
        gq_journal_close(&jr);
    if (cleaning) {
        gq_cleanroom_install(NULL);
        gq_gpulock_release(&lock);
    }
    gq_card_result_free(&res);
    json_decref(options);
    if (opened)
        gq_backend_close(&be);
    free(topo);
    free(plan);
    free(co);
    return rc;
}

#endif /* GQ_HAVE_MPI */

/* Check what can be checked before MPI starts (the same on every rank: the
 * same argv). */
static int fleet_prepare(gq_ctx *ctx)
{
    fleet_cli *o = ctx->opts;
    gq_err *err = &ctx->err;
    int rc, maxrank;
    char faults[1024];
    if (ctx->npos > 0)
        return gq_err_set(err, GQ_E_USAGE,
                          "fleet: unexpected argument '%s'; the output directory is given with -o DIR",
                          ctx->pos[0]);
    if ((rc = parse_threshold(o->threshold, &o->threshold_pct, err)))
        return rc;
    if (o->c.journal)
        return gq_err_set(
            err, GQ_E_USAGE,
            "fleet: --journal does not apply; each node's journal is DIR/<host>-rank<N>/journal.jsonl");
    if ((o->prefill > 0) != (o->decode > 0))
        return gq_err_set(err, GQ_E_USAGE,
                          "--prefill and --decode go together (e.g. --prefill 4 --decode 4)");
    if (o->seed_per_rank && !o->c.sim)
        return gq_err_set(err, GQ_E_USAGE,
                          "--sim-seed-per-rank needs --sim: only simulated nodes have a seed");
    if (o->c.sim_fault) {
        if (!o->c.sim)
            return gq_err_set(err, GQ_E_USAGE,
                              "--sim-fault needs --sim: faults can only be injected into a simulation");
        if ((rc = faults_for_rank(o->c.sim_fault, -1, faults, sizeof faults, &maxrank, err)))
            return rc;
        /* The sim backend's option hook checks the spec, rank prefixes resolved. */
        gq_common cm = o->c;
        cm.sim_fault = faults[0] ? faults : NULL;
        if ((rc = gq_cli_check_backend_opts(&cm, err)))
            return rc;
    }
    if (!(o->ex = calloc(1, sizeof *o->ex)))
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    if ((rc = gq_card_cli_expect(o->expect, &o->set, o->ex, &o->have_ex, err)))
        return rc;
    if ((rc = gq_outfile_check(ctx->json_path, err)))
        return rc;
    /* Rank 0 writes the --json copy itself, with fleet.json. */
    o->json_copy = ctx->json_path;
    ctx->json_path = NULL;
    return check_outdir(o, err);
}

#ifdef GQ_HAVE_MPI

/* --force: the earlier fleet's node folders that no node of this one took over. */
static void prune_earlier(const fleet_cli *o, const gq_fleet_gather *g, const char *dir, int size)
{
    const char **hosts = calloc((size_t)size, sizeof *hosts);
    if (!hosts) {
        gq_cli_warn("out of memory: the earlier fleet's node folders are left in %s/", dir);
        return;
    }
    for (int r = 0; r < size; r++)
        hosts[r] = gq_saved_list_str(g->hosts, (size_t)r);
    char left[2048];
    int n = gq_carddir_fleet_prune(dir, o->earlier, hosts, size, left, sizeof left);
    if (n)
        gq_cli_warn("%d of the earlier fleet's node folders could not be removed, first '%s'", n, left);
    free(hosts);
}

/* Rank 0: the gathered payloads into the fleet (cli/fleet_gather.h, the
 * same code as the replay and `report fleet.json`); writes and prints.
 * Returns the exit code. */
static int conclude(fleet_cli *o, double threshold, const char *dir, char *buf, const int *lens,
                    const int *displs, int size)
{
    gq_err err = {0};
    int rc = GQ_OK, exit_code = GQ_EXIT_FAIL;
    json_t *doc = NULL, *options = NULL;
    gq_fleet_gather *g = calloc(1, sizeof *g);
    if (!g) {
        gq_cli_error("out of memory");
        return GQ_EXIT_FAIL;
    }
    if ((rc = gq_fleet_gather_init(g, size, threshold, &err))) {
        free(g);
        gq_cli_error("%s", err.msg);
        return gq_status_exit_code(rc);
    }
    if ((rc = gq_fleet_gather_buffer(g, buf, lens, displs, &err)))
        goto fail;
    /* Every node refused the same bad input: say it once, as `card` does. */
    if (g->nusage == size) {
        gq_cli_error("%s", g->first_usage.msg);
        exit_code = GQ_EXIT_USAGE;
        goto out;
    }
    if ((rc = gq_fleet_gather_finish(g, &err)) || (rc = ensure_dir(dir, &err)))
        goto fail;
    options = gq_optset_to_json(&gq_frame_fleet.opts, o);
    if (!(doc = gq_fleet_gather_document(g, options))) {
        rc = gq_err_set(&err, GQ_E_NOMEM, "out of memory building fleet.json");
        goto fail;
    }
    char path[1200];
    snprintf(path, sizeof path, "%s/fleet.json", dir);
    if ((rc = gq_doc_write_file(doc, path, &err)))
        goto fail;
    if (o->json_copy && (rc = gq_doc_write_file(doc, o->json_copy, &err)))
        goto fail;
    snprintf(path, sizeof path, "%s/fleet.md", dir);
    gq_outfile of;
    if ((rc = gq_outfile_open(&of, path, &err)))
        goto fail;
    gq_fleet_print(of.f, &g->f, true, 0);
    if ((rc = gq_outfile_commit(&of, &err)))
        goto fail;
    if (o->force && o->earlier)
        prune_earlier(o, g, dir, size);
    if (o->c.prom_path || o->c.junit_path) {
        /* the gathered summaries, typed; a node whose card did not run: failed, with why */
        gq_card_nodes sums;
        gq_card_nodes_init(&sums);
        for (int r = 0; !rc && r < size; r++) {
            json_t *n = gq_saved_list_item(g->nodes, (size_t)r);
            gq_card_node *x = gq_card_nodes_add(&sums);
            if (!x) {
                rc = GQ_E_NOMEM;
                break;
            }
            rc = json_is_object(n) ? gq_card_node_from_json(n, x)
                                   : gq_cli_failed_node(x, gq_saved_list_str(g->hosts, (size_t)r),
                                                        gq_saved_list_str(g->whys, (size_t)r));
            x->has_rank = true; /* simulated nodes share a hostname: the rank tells them apart */
            x->rank = r;
        }
        rc = rc ? gq_err_set(&err, GQ_E_NOMEM, "out of memory")
                : gq_cli_summary_files(o->c.prom_path, o->c.junit_path, "fleet", &sums, NULL, o->c.junit_warn,
                                       &err);
        gq_card_nodes_free(&sums);
        if (rc)
            goto fail;
    }
    if (!strcmp(o->c.format, "json")) {
        json_dumpf(doc, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
    } else {
        gq_fleet_print(stdout, &g->f, !strcmp(o->c.format, "markdown"), 12);
        if (strcmp(o->c.format, "markdown"))
            printf("artefacts: %s/ (fleet.json, fleet.md, and each node's card in <host>-rank<N>/)\n", dir);
    }
    fflush(stdout);
    exit_code = g->f.exit_code;
    goto out;
fail:
    gq_cli_error("%s", err.msg[0] ? err.msg : "fleet failed");
    exit_code = gq_status_exit_code(rc);
out:
    json_decref(doc);
    json_decref(options);
    gq_fleet_gather_free(g);
    free(g);
    return exit_code;
}

static int run_fleet(fleet_cli *o, gq_expect *ex, double threshold, int rank, int size)
{
    gq_err err = {0};
    int exit_code = GQ_EXIT_OK, maxrank = -1;
    char faults[1024] = "", host[64] = "", dir[1024], nodedir[1200];
    char *payload = NULL, *buf = NULL;
    int *lens = NULL, *displs = NULL;
    json_t *p = NULL, *doc = NULL;

    if (gethostname(host, sizeof host) != 0 || !host[0])
        snprintf(host, sizeof host, "host");
    host[sizeof host - 1] = 0;
    if (o->c.sim_fault) {
        faults_for_rank(o->c.sim_fault, rank, faults, sizeof faults, &maxrank, &err);
        if (maxrank >= size) {
            if (rank == 0)
                gq_cli_error("--sim-fault '%s': rank %d does not exist (this fleet has ranks 0-%d)",
                             o->c.sim_fault, maxrank, size - 1);
            return GQ_EXIT_USAGE;
        }
    }
    /* One directory name for the whole fleet: rank 0's clock. */
    long stamp = (long)time(NULL);
    MPI_Bcast(&stamp, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (o->outdir)
        snprintf(dir, sizeof dir, "%s", o->outdir);
    else {
        char ts[32];
        time_t t = (time_t)stamp;
        struct tm tmv;
        localtime_r(&t, &tmv);
        strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", &tmv);
        snprintf(dir, sizeof dir, "gpuqual-fleet-%s", ts);
    }
    snprintf(nodedir, sizeof nodedir, "%s/%s-rank%d", dir, host, rank);

    gq_common cm = o->c;
    cm.sim_fault = faults[0] ? faults : NULL;
    if (o->seed_per_rank)
        cm.sim_seed = (int)(((long long)o->c.sim_seed + rank) % 2147483648LL);
    char where[1400];
    snprintf(where, sizeof where, "%s", nodedir);
    int rc = run_card(o, &cm, o->have_ex ? ex : NULL, dir, nodedir, &doc, where, sizeof where, &err);
    json_t *summary = NULL;
    if (rc == GQ_OK && !(summary = gq_fleet_summarise(doc, rank, where, &err)))
        rc = err.code ? err.code : GQ_E_NOMEM;
    if (rc == GQ_OK)
        p = json_pack("{s:i, s:s, s:o}", "rank", rank, "host", host, "summary", summary);
    else
        p = json_pack("{s:i, s:s, s:s, s:i}", "rank", rank, "host", host, "error",
                      err.msg[0] ? err.msg : "card failed", "status", rc);
    payload = p ? json_dumps(p, JSON_COMPACT) : NULL;
    if (!payload)
        payload = strdup("{}");
    size_t plen = payload ? strlen(payload) : 0;
    if (plen > (size_t)INT_MAX) { /* MPI counts are int: say so rather than send a cut payload */
        free(payload);
        json_t *e = json_pack("{s:i, s:s, s:s, s:i}", "rank", rank, "host", host, "error",
                              "this node's summary is over 2 GiB, more than one MPI message holds", "status",
                              GQ_E_BACKEND);
        payload = e ? json_dumps(e, JSON_COMPACT) : NULL;
        json_decref(e);
        plen = payload ? strlen(payload) : 0;
    }
    int len = plen > (size_t)INT_MAX ? 0 : (int)plen;

    /* Every rank must learn whether rank 0 can take the lengths and then
     * the bytes, or the collectives would hang (or write through NULL). */
    int ok = 1;
    if (rank == 0) {
        lens = calloc((size_t)size, sizeof *lens);
        displs = calloc((size_t)size, sizeof *displs);
        ok = lens && displs;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (ok)
        MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    gq_err gerr = {0};
    if (rank == 0 && ok) {
        /* int displacements: a total over 2 GiB is refused, never wrapped */
        long long total = 0;
        if (gq_fleet_displs(lens, size, displs, &total, &gerr))
            ok = 0;
        else if (!(buf = malloc((size_t)total + 1))) {
            gq_err_set(&gerr, GQ_E_NOMEM,
                       "rank 0 cannot hold the %d nodes' summaries (%lld bytes): out of memory", size, total);
            ok = 0;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (ok)
        MPI_Gatherv(payload, len, MPI_CHAR, buf, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (!ok) {
            gq_cli_error("%s", gerr.msg[0] ? gerr.msg : "rank 0 cannot hold the nodes' summaries");
            exit_code = GQ_EXIT_FAIL;
        } else
            exit_code = conclude(o, threshold, dir, buf, lens, displs, size);
    } else if (rc != GQ_OK) {
        /* Rank 0 reports every node; this rank says why its own card failed
         * too, unless it is bad input, which rank 0 says once for all. */
        exit_code = gq_status_exit_code(rc);
        if (exit_code != GQ_EXIT_USAGE)
            gq_cli_error("rank %d (%s): %s", rank, host, err.msg[0] ? err.msg : "card failed");
    }
    json_decref(p);
    json_decref(doc);
    free(payload);
    free(buf);
    free(lens);
    free(displs);
    return exit_code;
}

#endif /* GQ_HAVE_MPI */

static int fleet_run(gq_ctx *ctx)
{
#ifndef GQ_HAVE_MPI
    (void)ctx;
    gq_cli_error("fleet needs Open MPI, which the gpuqual package leaves out: install the gpuqual-fleet "
                 "package (apt install gpuqual-fleet), or build from source with libopenmpi-dev");
    ctx->exit_code = GQ_EXIT_FAIL;
#else
    fleet_cli *o = ctx->opts;
    int rank = 0, size = 1;
    mpi_start(); /* prepare started it to check -o DIR */
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ctx->exit_code = run_fleet(o, o->ex, o->threshold_pct, rank, size);
    mpi_stop();
#endif
    return GQ_OK;
}

/* Bad input: the same argv everywhere, so every rank refuses; one says why. */
static void fleet_fail(gq_ctx *ctx, int rc)
{
    (void)rc;
#ifndef GQ_HAVE_MPI
    gq_cli_error("%s", ctx->err.msg);
#else
    int rank = 0;
    mpi_start();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        gq_cli_error("%s", ctx->err.msg);
    mpi_stop();
#endif
}

static void fleet_done(gq_ctx *ctx)
{
    fleet_cli *o = ctx->opts;
    free(o->ex);
    gq_carddir_names_free(o->earlier);
#ifdef GQ_HAVE_MPI
    mpi_stop();
#endif
}

#ifdef GQ_HAVE_MPI
#define FLEET_NO_MPI ""
#else
#define FLEET_NO_MPI "\nNeeds the gpuqual-fleet package (Open MPI): apt install gpuqual-fleet."
#endif

static const gq_exit_doc fleet_exits[] = {
    {0, "(rank 0) every node passes, no outlier; other ranks: their card ran"},
    {1, "(rank 0) a node failed or its card did not run; other ranks: their card could not run"},
    GQ_EXITDOC_USAGE,
    {4, "(rank 0) a warn verdict or an outlier"},
    {5, "(rank 0) a card is incomplete"},
    GQ_EXITDOC_END,
};

const gq_frame_cmd gq_frame_fleet = {
    .name = "fleet",
    .summary = "qualify many nodes under MPI and name the outliers",
    .usage =
        "usage: mpirun -np N gpuqual fleet [card options] [-o DIR] [--threshold 5%]\n"
        "       srun --ntasks-per-node=1 gpuqual fleet [card options] [-o DIR] [--threshold 5%]\n\n"
        "Every MPI rank runs the acceptance card (gpuqual card) on its own node and writes its artefacts to\n"
        "DIR/<host>-rank<N>/. Rank 0 gathers the cards, lines up the same figures across the nodes, and "
        "names\n"
        "the outliers: nodes worse than the fleet median by more than --threshold (bandwidth, clocks, power\n"
        "below it; latency, temperature above it), and nodes whose card warned, failed or is incomplete.\n"
        "Rank 0 writes DIR/fleet.json and DIR/fleet.md and prints the summary. Before any rank runs, rank 0\n"
        "checks -o DIR: it must be new or empty, or hold an earlier fleet (fleet.json, fleet.md, one card\n"
        "folder per node), which only --force replaces; anything else is refused. Each node's folder is\n"
        "written as a set (<host>-rank<N>.partial-RUNID/ until its card is complete). Without mpirun it is\n"
        "a fleet of one node. With --sim every rank simulates the machine; --sim-fault rankN:gpuM:KIND\n"
        "injects a fault on rank N only (gpuM:KIND on every rank)." FLEET_NO_MPI "\n\n",
    .opts = {.name = "fleet",
             .formats = "table,json,markdown",
             .tabs = tabs,
             .ntab = NTABS,
             .defaults = gq_card_defaults,
             .bounds = gq_card_bounds,
             .omit = GQ_CARD_OMIT},
    .opts_size = sizeof(fleet_cli),
    .exits = fleet_exits,
    .examples = "  mpirun -n 4 --map-by ppr:1:node gpuqual fleet -o fleet\n"
                "  gpuqual fleet --sim h200x2 -o /tmp/fleet\n",
    .maxpos = 2,
    .needs = GQ_FRAME_COMMON,
    .prepare = fleet_prepare,
    .run = fleet_run,
    .fail = fleet_fail,
    .done = fleet_done,
};
