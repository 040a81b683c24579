/* gpuqual pairs: GPU pairs copying at the same time (seed 001 section 4).
 * Each listed pair is reported with the aggregate of the pairing and its
 * overlap; --vs runs a second pairing in the same invocation and sets the two
 * side by side. Pairs without P2P are staged through host memory. */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/domains.h"
#include "analysis/probes.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "exec/plan_run.h"
#include "measure/harness.h"
#include "measure/journal.h"
#include "core/units.h"
#include "render/render.h"

typedef struct pairs_opts {
    gq_common c;
    const char *vs;
    bool read, write;
    const char *method;
    uint64_t bytes;
    int rounds;
    bool isolated;
} pairs_opts;

#define OFF(f) offsetof(pairs_opts, f)
/* clang-format off */
static const gq_opt pairs_own_opts[] = {
    {.name = "vs", .type = GQ_OPT_STR, .off = OFF(vs), .arg = "PAIRS",
     .help = "a second pairing to run and set beside the first, e.g. 0:4,1:5,2:6,3:7"},
    {.name = "read", .type = GQ_OPT_FLAG, .off = OFF(read),
     .help = "the destination GPU pulls the data (default; nvbandwidth's read)"},
    {.name = "write", .type = GQ_OPT_FLAG, .off = OFF(write), .help = "the source GPU pushes the data"},
    {.name = "method", .shortname = 'm', .type = GQ_OPT_ENUM, .off = OFF(method), .def = "ce", .arg = "ce|sm",
     .help = "copy engine or SM copy kernel", .choices = "ce,sm"},
    {.name = "buffer-size", .shortname = 'b', .type = GQ_OPT_SIZE, .off = OFF(bytes), .def = "512", .arg = "MiB",
     .help = "buffer per copy (a bare number is MiB)", .unit = GQ_MiB, .lo = 1, .hi = 1e15},
    {.name = "rounds", .shortname = 'i', .type = GQ_OPT_INT, .off = OFF(rounds), .def = "5", .arg = "N",
     .help = "rounds per measurement (median, min, max, spread)", .lo = 1, .hi = GQ_MAX_ROUNDS},
    {.name = "isolated", .type = GQ_OPT_FLAG, .off = OFF(isolated),
     .help = "also measure each pair alone, to compare with its rate under contention"},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF

static const gq_opt *const tabs[] = {gq_common_output_opts, gq_common_backend_opts, pairs_own_opts};
#define NTABS ((int)(sizeof tabs / sizeof tabs[0]))

static void help(void)
{
    printf("usage: gpuqual pairs PAIRS [--vs PAIRS] [--read|--write] [--method ce|sm] [options]\n\n"
           "Run the listed GPU pairs at the same time, e.g. 'gpuqual pairs 0:1,2:3,4:5,6:7', and report\n"
           "each pair (SRC:DST, data from SRC to DST) plus the aggregate of all of them with its overlap\n"
           "(valid only when every copy window overlaps the others by 99%%). --vs runs a second pairing\n"
           "in the same invocation and shows both side by side. A GPU may\n"
           "be in one pair of a pairing; pairs without P2P are staged through host memory.\n\n"
           "options:\n");
    gq_opts_help(stdout, tabs, NTABS);
}

#define MAXP GQ_PROBE_MAX_PAIRS

typedef struct pairing {
    const char *label; /* "pairs" or "--vs" */
    const char *spec;
    int n;
    int src[MAXP], dst[MAXP];
    bool staged[MAXP];
    int rec[MAXP];   /* per-flow record of the concurrent run, -1 none */
    int alone[MAXP]; /* record of the pair alone (--isolated), -1 none */
    int agg;         /* aggregate record, -1 none (one pair) */
    bool measured;
} pairing;

static void rate_str(const gq_recordset *rs, int i, char *buf, size_t n)
{
    if (i < 0)
        snprintf(buf, n, "-");
    else if (!rs->v[i].valid)
        snprintf(buf, n, "invalid");
    else
        snprintf(buf, n, "%.2f", rs->v[i].value.median);
}

static void print_table(FILE *f, const pairs_opts *o, const gq_topo *topo, const gq_recordset *rs,
                        pairing *pg, int npg)
{
    char b1[64], b2[64], sz[32];
    fprintf(f, "pairs: %s, %s, %s per copy, %d rounds; the pairs of a pairing copy at the same time%s\n",
            o->write ? "write (source pushes)" : "read (destination pulls)", o->method,
            gq_fmt_size(o->bytes, sz, sizeof sz), o->rounds, topo->simulated ? " (simulated)" : "");
    fprintf(f, "GB/s = 10^9 B/s\n\n");
    for (int p = 0; p < npg; p++) {
        char head[64];
        snprintf(head, sizeof head, "%s%.50s", p ? "--vs " : "", pg[p].spec);
        fprintf(f, "  %-38s", head);
    }
    fprintf(f, "\n");
    for (int p = 0; p < npg; p++)
        fprintf(f, "  %-10s %9s %7s %9s   ", "pair", "GB/s", "spread", o->isolated ? "alone" : "");
    fprintf(f, "\n");
    int rows = 0;
    for (int p = 0; p < npg; p++)
        rows = pg[p].n > rows ? pg[p].n : rows;
    for (int r = 0; r < rows; r++) {
        for (int p = 0; p < npg; p++) {
            if (r >= pg[p].n) {
                fprintf(f, "  %-38s", "");
                continue;
            }
            char name[24], sp[16] = "-";
            snprintf(name, sizeof name, "%d->%d%s", pg[p].src[r], pg[p].dst[r], pg[p].staged[r] ? "*" : "");
            rate_str(rs, pg[p].rec[r], b1, sizeof b1);
            if (pg[p].rec[r] >= 0 && rs->v[pg[p].rec[r]].value.n > 0)
                snprintf(sp, sizeof sp, "%.1f%%", 100 * rs->v[pg[p].rec[r]].value.spread);
            if (o->isolated)
                rate_str(rs, pg[p].alone[r], b2, sizeof b2);
            else
                b2[0] = 0;
            fprintf(f, "  %-10s %9s %7s %9s   ", name, b1, sp, b2);
        }
        fprintf(f, "\n");
    }
    for (int p = 0; p < npg; p++) {
        char line[64];
        int a = pg[p].agg;
        if (a < 0 && pg[p].n == 1 && pg[p].rec[0] >= 0)
            a = pg[p].rec[0];
        if (a < 0)
            snprintf(line, sizeof line, "aggregate   -");
        else if (rs->v[a].valid)
            snprintf(line, sizeof line, "aggregate %8.2f (overlap %.1f%%)", rs->v[a].value.median,
                     rs->v[a].overlap >= 0 ? 100 * rs->v[a].overlap : 100.0);
        else
            snprintf(line, sizeof line, "aggregate  invalid (overlap %.1f%%)", 100 * rs->v[a].overlap);
        fprintf(f, "  %-38s", line);
    }
    fprintf(f, "\n");
    if (npg == 2 && pg[0].agg >= 0 && pg[1].agg >= 0 && rs->v[pg[0].agg].valid && rs->v[pg[1].agg].valid &&
        rs->v[pg[0].agg].value.median > 0)
        fprintf(f, "\n  --vs aggregate is %.0f%% of the first pairing's\n",
                100 * rs->v[pg[1].agg].value.median / rs->v[pg[0].agg].value.median);
    bool any_staged = false;
    for (int p = 0; p < npg; p++)
        for (int r = 0; r < pg[p].n; r++)
            any_staged |= pg[p].staged[r];
    if (any_staged)
        fprintf(f, "  * no P2P between these GPUs: staged through host memory\n");
    for (int i = 0; i < rs->n; i++)
        if (!rs->v[i].valid) {
            char e1[32], e2[32];
            fprintf(f, "  invalid: %s %s -> %s%s: %s\n", rs->v[i].test,
                    gq_endpoint_str(rs->v[i].src, e1, sizeof e1),
                    gq_endpoint_str(rs->v[i].dst, e2, sizeof e2), rs->v[i].aggregate ? " (aggregate)" : "",
                    rs->v[i].error);
        }
}

static json_t *pairing_json(const pairing *p, const gq_recordset *rs)
{
    json_t *j = json_object(), *a = json_array();
    for (int k = 0; k < p->n; k++) {
        json_t *e = json_pack("{s:i,s:i,s:b}", "src", p->src[k], "dst", p->dst[k], "staged", p->staged[k]);
        const gq_record *r = p->rec[k] >= 0 ? &rs->v[p->rec[k]] : NULL;
        json_object_set_new(e, "gbps", r && r->valid ? json_real(r->value.median) : json_null());
        json_object_set_new(e, "spread", r && r->value.n ? json_real(r->value.spread) : json_null());
        json_object_set_new(e, "valid", json_boolean(r && r->valid));
        json_object_set_new(e, "record", p->rec[k] >= 0 ? json_integer(p->rec[k]) : json_null());
        if (p->alone[k] >= 0) {
            const gq_record *al = &rs->v[p->alone[k]];
            json_object_set_new(e, "alone_gbps", al->valid ? json_real(al->value.median) : json_null());
        }
        json_array_append_new(a, e);
    }
    json_object_set_new(j, "label", json_string(p->label));
    json_object_set_new(j, "spec", json_string(p->spec));
    json_object_set_new(j, "pairs", a);
    const gq_record *ag =
        p->agg >= 0 ? &rs->v[p->agg] : (p->n == 1 && p->rec[0] >= 0 ? &rs->v[p->rec[0]] : NULL);
    json_object_set_new(j, "aggregate_gbps", ag && ag->valid ? json_real(ag->value.median) : json_null());
    json_object_set_new(j, "overlap", ag && ag->overlap >= 0 ? json_real(ag->overlap) : json_null());
    json_object_set_new(j, "valid", json_boolean(ag && ag->valid));
    json_object_set_new(j, "measured", json_boolean(p->measured));
    return j;
}

/* Run one probe and return the index of its first new record. */
static int measure(gq_backend *be, const gq_topo *topo, const gq_probe *pr, const pairs_opts *o,
                   const gq_harness_opts *ho, gq_measurement *m, gq_recordset *rs, gq_journal *j, int *first,
                   gq_err *err)
{
    gq_method meth = !strcmp(o->method, "sm") ? GQ_METHOD_SM : GQ_METHOD_CE;
    gq_probe_measurement(pr, o->bytes, meth, !o->write, m);
    *first = rs->n;
    return gq_exec_one(be, topo, m, ho, j, rs, err);
}

static void pick_records(const gq_recordset *rs, int first, pairing *p, bool alone, int k)
{
    for (int i = first; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (r->sum)
            continue;
        if (r->aggregate) {
            if (!alone)
                p->agg = i;
            continue;
        }
        if (alone)
            p->alone[k] = i;
        else if (r->flow_tag >= 0 && r->flow_tag < p->n)
            p->rec[r->flow_tag] = i;
    }
}

int gq_cmd_pairs(int argc, char **argv)
{
    pairs_opts o;
    gq_err err = {0};
    gq_backend be = {0};
    gq_journal jr = {0};
    bool opened = false, want_help = false, have_journal = false;
    const char *pos[4];
    int npos = 0, rc = GQ_OK, exit_code = GQ_EXIT_OK;
    json_t *doc = NULL, *options = NULL, *sections = NULL;
    gq_recordset rs = {0};
    gq_topo *topo = calloc(1, sizeof *topo);
    gq_measurement *m = calloc(1, sizeof *m);
    pairing pg[2];
    int npg = 0;
    bool interrupted = false, unmeasured = false;

    memset(&o, 0, sizeof o);
    memset(pg, 0, sizeof pg);
    if (!topo || !m) {
        rc = gq_err_set(&err, GQ_E_NOMEM, "out of memory");
        goto fail;
    }
    if ((rc = gq_opts_parse(tabs, NTABS, &o, argc, argv, 2, pos, 4, &npos, &want_help, &err)))
        goto fail;
    if (want_help) {
        help();
        goto out;
    }
    if (npos == 0) {
        rc = gq_err_set(&err, GQ_E_USAGE,
                        "pairs: give the pairs to run at the same time, e.g. gpuqual pairs 0:1,2:3");
        goto fail;
    }
    if (npos > 1) {
        rc = gq_err_set(&err, GQ_E_USAGE,
                        "pairs: give one list of pairs separated by commas (got '%s' and '%s'), "
                        "e.g. 0:1,2:3",
                        pos[0], pos[1]);
        goto fail;
    }
    if (o.read && o.write) {
        rc = gq_err_set(&err, GQ_E_USAGE, "pairs: --read and --write exclude each other; give one of them");
        goto fail;
    }
    if (strcmp(o.c.format, "table") && strcmp(o.c.format, "json") && strcmp(o.c.format, "csv")) {
        rc = gq_err_set(&err, GQ_E_USAGE, "pairs: --format %s does not apply; use table, json or csv",
                        o.c.format);
        goto fail;
    }
    pg[0].label = "pairs";
    pg[0].spec = pos[0];
    if ((rc = gq_probes_parse_pairs(pos[0], "pairs", true, 0, pg[0].src, pg[0].dst, MAXP, &pg[0].n, &err)))
        goto fail;
    npg = 1;
    if (o.vs) {
        pg[1].label = "--vs";
        pg[1].spec = o.vs;
        if ((rc = gq_probes_parse_pairs(o.vs, "--vs", true, 0, pg[1].src, pg[1].dst, MAXP, &pg[1].n, &err)))
            goto fail;
        npg = 2;
    }
    if (o.c.gpus) {
        rc = gq_err_set(&err, GQ_E_USAGE,
                        "--gpus does not apply to pairs: the pairs themselves name the GPUs");
        goto fail;
    }
    if ((rc = gq_cli_check_writable(o.c.json_path, &err)))
        goto fail;
    if ((rc = gq_cli_open(&o.c, &be, topo, &err)))
        goto fail;
    opened = true;
    if ((rc = gq_cli_check_buffer(&be, &o.c, "--buffer-size", o.bytes, &err)))
        goto fail;
    for (int p = 0; p < npg; p++) {
        int n;
        if ((rc = gq_probes_parse_pairs(pg[p].spec, pg[p].label, true, topo->ngpu, pg[p].src, pg[p].dst, MAXP,
                                        &n, &err)))
            goto fail;
        for (int k = 0; k < pg[p].n; k++) {
            int a = pg[p].src[k], b = pg[p].dst[k];
            pg[p].staged[k] = topo->p2p_cuda[a][b] == 0;
            pg[p].rec[k] = pg[p].alone[k] = -1;
        }
        pg[p].agg = -1;
    }
    if (o.c.journal) {
        if ((rc = gq_journal_open(&jr, o.c.journal, &err)))
            goto fail;
        have_journal = true;
    }
    if (!o.c.quiet)
        for (int i = 0; i < topo->nwarnings; i++)
            gq_cli_warn("%s", topo->warnings[i]);

    gq_harness_opts ho;
    gq_harness_opts_default(&ho);
    ho.rounds = o.rounds;
    for (int p = 0; p < npg && !interrupted; p++) {
        gq_probe pr;
        memset(&pr, 0, sizeof pr);
        pr.kind = GQ_PROBE_P2P_WITHIN;
        pr.direction = GQ_DIR_P2P;
        pr.npairs = pg[p].n;
        memcpy(pr.src, pg[p].src, sizeof pr.src);
        memcpy(pr.dst, pg[p].dst, sizeof pr.dst);
        memcpy(pr.staged, pg[p].staged, sizeof pr.staged);
        int first;
        if (!o.c.quiet && gq_cli_tty())
            fprintf(stderr, "\rmeasuring %s %s ...", pg[p].label, pg[p].spec);
        int mrc = measure(&be, topo, &pr, &o, &ho, m, &rs, have_journal ? &jr : NULL, &first, &err);
        pick_records(&rs, first, &pg[p], false, 0);
        pg[p].measured = mrc == GQ_OK;
        if (mrc == GQ_E_INTR || gq_cli_interrupted()) {
            interrupted = true;
            break;
        }
        if (mrc == GQ_E_FAIL) { /* nothing was recorded for it: say so and fail at the end */
            gq_cli_warn("%s %s: %s", pg[p].label, pg[p].spec, err.msg);
            unmeasured = true;
        } else if (mrc && mrc != GQ_E_BACKEND) {
            rc = mrc;
            goto fail;
        }
        for (int k = 0; o.isolated && k < pg[p].n; k++) {
            gq_probe one;
            memset(&one, 0, sizeof one);
            one.kind = GQ_PROBE_MATRIX;
            one.direction = GQ_DIR_P2P;
            one.npairs = 1;
            one.src[0] = pg[p].src[k];
            one.dst[0] = pg[p].dst[k];
            one.staged[0] = pg[p].staged[k];
            mrc = measure(&be, topo, &one, &o, &ho, m, &rs, have_journal ? &jr : NULL, &first, &err);
            pick_records(&rs, first, &pg[p], true, k);
            if (mrc == GQ_E_INTR || gq_cli_interrupted()) {
                interrupted = true;
                break;
            }
            if (mrc == GQ_E_FAIL) {
                gq_cli_warn("%s %s, pair %d alone: %s", pg[p].label, pg[p].spec, k, err.msg);
                unmeasured = true;
            } else if (mrc && mrc != GQ_E_BACKEND) {
                rc = mrc;
                goto fail;
            }
        }
    }
    if (!o.c.quiet && gq_cli_tty())
        fprintf(stderr, "\r%60s\r", "");

    bool need_doc = o.c.json_path || !strcmp(o.c.format, "json");
    if (need_doc) {
        options = gq_opts_to_json(tabs, NTABS, &o);
        sections = json_object();
        json_t *arr = json_array();
        if (!options || !sections || !arr) {
            json_decref(arr);
            rc = gq_err_set(&err, GQ_E_NOMEM, "out of memory");
            goto fail;
        }
        for (int p = 0; p < npg; p++)
            json_array_append_new(arr, pairing_json(&pg[p], &rs));
        json_object_set_new(sections, "pairings", arr);
        if (npg == 2 && pg[0].agg >= 0 && pg[1].agg >= 0 && rs.v[pg[0].agg].valid && rs.v[pg[1].agg].valid)
            json_object_set_new(sections, "vs_ratio",
                                json_real(rs.v[pg[1].agg].value.median / rs.v[pg[0].agg].value.median));
        gq_doc d = {.kind = "pairs",
                    .options = options,
                    .topo = topo,
                    .records = &rs,
                    .sections = sections,
                    .simulated = gq_backend_simulated(&be),
                    .incomplete = interrupted};
        if (!(doc = gq_doc_to_json(&d))) {
            rc = gq_err_set(&err, GQ_E_NOMEM, "out of memory");
            goto fail;
        }
    }
    if (o.c.json_path && (rc = gq_json_write_file(doc, o.c.json_path, &err)))
        goto fail;
    if (!strcmp(o.c.format, "json")) {
        json_dumpf(doc, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
    } else if (!strcmp(o.c.format, "csv")) {
        gq_render_csv(stdout, &rs);
    } else {
        print_table(stdout, &o, topo, &rs, pg, npg);
    }
    fflush(stdout);
    if (interrupted) {
        if (have_journal)
            gq_cli_warn("interrupted; finished measurements are in %s", jr.path);
        exit_code = GQ_EXIT_INCOMPLETE;
    } else {
        for (int i = 0; i < rs.n; i++)
            if (gq_record_failed(&rs.v[i]))
                exit_code = GQ_EXIT_FAIL;
        if (unmeasured)
            exit_code = GQ_EXIT_FAIL;
    }
    goto out;

fail:
    if (!o.c.quiet && gq_cli_tty())
        fprintf(stderr, "\r%60s\r", "");
    gq_cli_error("%s", err.msg);
    exit_code = gq_status_exit_code(rc);
out:
    if (have_journal)
        gq_journal_close(&jr);
    json_decref(doc);
    json_decref(options);
    json_decref(sections);
    gq_records_free(&rs);
    if (opened)
        gq_backend_close(&be);
    free(topo);
    free(m);
    return exit_code;
}
