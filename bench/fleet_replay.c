/* bench/fleet_replay: `gpuqual fleet`'s rank 0 replayed from files, for
 * bench/fleet-scale.sh (built EXCLUDE_FROM_ALL: cmake --build B --target
 * fleet_replay).
 *
 *   fleet_replay summarise CARD.json RANK NODEDIR
 *       the fleet-node summary a rank sends for that card (stdout)
 *   fleet_replay synth N OUTDIR H LINK HOT ECC [H LINK HOT ECC ...]
 *       N rank payloads OUTDIR/rank-NNNNNN.json from those base summaries
 *       (one set of four per machine; bench/fleet_synth.h), and
 *       OUTDIR/faulty.txt, the labels of the faulty nodes
 *   fleet_replay gather DIR N [FAULTY.txt] [fleet.json]
 *       rank 0: reads the N payloads into one buffer laid out as MPI_Gatherv
 *       lays them, decodes and analyses them with the code `gpuqual fleet`
 *       runs (cli/fleet_gather.h), prints the time that took and whether
 *       exactly the nodes in FAULTY.txt were flagged; writes the fleet
 *       document when asked. Exit 0 when they were (or no list was given).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/fleet_gather.h"
#include "fleet_synth.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int summarise(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: fleet_replay summarise CARD.json RANK NODEDIR\n");
        return 2;
    }
    json_error_t je;
    gq_err err = {0};
    json_t *doc = json_load_file(argv[2], JSON_REJECT_DUPLICATES, &je);
    if (!doc) {
        fprintf(stderr, "fleet_replay: %s: %s\n", argv[2], je.text);
        return 2;
    }
    json_t *s = gq_fleet_summarise(doc, atoi(argv[3]), argv[4], &err);
    json_decref(doc);
    if (!s) {
        fprintf(stderr, "fleet_replay: %s: %s\n", argv[2], err.msg);
        return 1;
    }
    json_dumpf(s, stdout, JSON_COMPACT);
    fputc('\n', stdout);
    json_decref(s);
    return 0;
}

static int synth(int argc, char **argv)
{
    int n = argc > 2 ? atoi(argv[2]) : 0, nbase = argc - 4;
    if (n < 1 || nbase < 4 || nbase % 4) {
        fprintf(stderr, "usage: fleet_replay synth N OUTDIR HEALTHY LINK HOT ECC [...]\n");
        return 2;
    }
    json_t **base = calloc((size_t)nbase, sizeof *base);
    int rc = 0;
    for (int i = 0; i < nbase && !rc; i++) {
        json_error_t je;
        if (!(base[i] = json_load_file(argv[4 + i], JSON_REJECT_DUPLICATES, &je))) {
            fprintf(stderr, "fleet_replay: %s: %s\n", argv[4 + i], je.text);
            rc = 2;
        }
    }
    char path[1200], label[64];
    snprintf(path, sizeof path, "%s/faulty.txt", argv[3]);
    FILE *faulty = rc ? NULL : fopen(path, "w");
    if (!rc && !faulty) {
        perror(path);
        rc = 1;
    }
    int nfaulty = 0;
    for (int r = 0; r < n && !rc; r++) {
        gq_syn_kind k = gq_syn_kind_of(r);
        json_t *p = gq_syn_payload(base[(r % (nbase / 4)) * 4 + (int)k], r);
        snprintf(path, sizeof path, "%s/rank-%06d.json", argv[3], r);
        if (!p || json_dump_file(p, path, JSON_COMPACT)) {
            fprintf(stderr, "fleet_replay: cannot write %s\n", path);
            rc = 1;
        }
        json_decref(p);
        if (k != GQ_SYN_HEALTHY) {
            gq_syn_label(r, label, sizeof label);
            fprintf(faulty, "%s %s\n", label, gq_syn_kind_name(k));
            nfaulty++;
        }
    }
    if (faulty && fclose(faulty))
        rc = 1;
    if (!rc)
        printf("prepared %d node summaries in %s, %d of them faulty (faulty.txt)\n", n, argv[3], nfaulty);
    for (int i = 0; i < nbase; i++)
        json_decref(base[i]);
    free(base);
    return rc;
}

/* The N payload files into one buffer, as MPI_Gatherv leaves them on rank 0. */
static char *read_payloads(const char *dir, int n, int *lens, int *displs, gq_err *err)
{
    char **bytes = calloc((size_t)n, sizeof *bytes), *buf = NULL;
    long long total = 0;
    bool ok = bytes != NULL;
    for (int r = 0; ok && r < n; r++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/rank-%06d.json", dir, r);
        FILE *f = fopen(path, "rb");
        long sz = -1;
        if (f && !fseek(f, 0, SEEK_END) && (sz = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) &&
            (bytes[r] = malloc((size_t)sz + 1)) && fread(bytes[r], 1, (size_t)sz, f) == (size_t)sz)
            lens[r] = (int)sz;
        else {
            gq_err_set(err, GQ_E_IO, "cannot read %s", path);
            ok = false;
        }
        if (f)
            fclose(f);
    }
    if (ok && !gq_fleet_displs(lens, n, displs, &total, err) && (buf = malloc((size_t)total + 1)))
        for (int r = 0; r < n; r++)
            memcpy(buf + displs[r], bytes[r], (size_t)lens[r]);
    for (int r = 0; bytes && r < n; r++)
        free(bytes[r]);
    free(bytes);
    return buf;
}

/* The flagged set against the known list: exact, or which differ. */
static int check_flagged(const gq_fleet *f, const char *list)
{
    FILE *in = fopen(list, "r");
    if (!in) {
        perror(list);
        return 1;
    }
    char line[256];
    int nexp = 0, missed = 0, extra = 0;
    char *want = calloc((size_t)f->nnodes, 1);
    while (want && fgets(line, sizeof line, in)) {
        char label[128];
        if (sscanf(line, "%127s", label) != 1)
            continue;
        nexp++;
        int i = 0;
        while (i < f->nnodes && strcmp(f->node[i].label, label))
            i++;
        if (i == f->nnodes || !f->node[i].flagged) {
            printf("  missed: %s\n", label);
            missed++;
        }
        if (i < f->nnodes)
            want[i] = 1;
    }
    fclose(in);
    for (int i = 0; want && i < f->nnodes; i++)
        if (f->node[i].flagged && !want[i]) {
            printf("  named but healthy: %s\n", f->node[i].label);
            extra++;
        }
    free(want);
    printf("faulty nodes named: %d of %d known, %d healthy node%s named: %s\n", nexp - missed, nexp, extra,
           extra == 1 ? "" : "s",
           !missed && !extra ? "EXACTLY the faulty nodes" : "NOT exactly the faulty nodes");
    return missed || extra;
}

static int gather(int argc, char **argv)
{
    int n = argc > 3 ? atoi(argv[3]) : 0, rc = 0;
    if (n < 1 || argc > 6) {
        fprintf(stderr, "usage: fleet_replay gather DIR N [FAULTY.txt] [fleet.json]\n");
        return 2;
    }
    gq_err err = {0};
    int *lens = calloc((size_t)n, sizeof *lens), *displs = calloc((size_t)n, sizeof *displs);
    gq_fleet_gather *g = calloc(1, sizeof *g);
    double t0 = now_s();
    char *buf = lens && displs && g ? read_payloads(argv[2], n, lens, displs, &err) : NULL;
    double t1 = now_s();
    if (!buf || gq_fleet_gather_init(g, n, 5.0, &err) || gq_fleet_gather_buffer(g, buf, lens, displs, &err) ||
        gq_fleet_gather_finish(g, &err)) {
        fprintf(stderr, "fleet_replay: %s\n", err.msg[0] ? err.msg : "out of memory");
        return 1;
    }
    double t2 = now_s();
    long long total = displs[n - 1] + (long long)lens[n - 1];
    printf("gathered %d node summaries (%lld bytes, %.1f KB a node): read %.3f s, decode and analyse %.3f s, "
           "total %.3f s\n",
           n, total, total / 1024.0 / n, t1 - t0, t2 - t1, t2 - t0);
    printf("fleet verdict %s: %d flagged node%s, %d outlier figure%s over %d figures compared\n",
           g->f.verdict, g->f.nflagged, g->f.nflagged == 1 ? "" : "s", g->f.nout, g->f.nout == 1 ? "" : "s",
           g->f.ncompared);
    if (argc > 4)
        rc = check_flagged(&g->f, argv[4]);
    if (argc > 5) {
        json_t *doc = gq_fleet_gather_document(g, NULL);
        if (!doc || json_dump_file(doc, argv[5], JSON_INDENT(2))) {
            fprintf(stderr, "fleet_replay: cannot write %s\n", argv[5]);
            rc = 1;
        }
        json_decref(doc);
    }
    gq_fleet_gather_free(g);
    free(g);
    free(buf);
    free(lens);
    free(displs);
    return rc;
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "";
    if (!strcmp(m, "summarise"))
        return summarise(argc, argv);
    if (!strcmp(m, "synth"))
        return synth(argc, argv);
    if (!strcmp(m, "gather"))
        return gather(argc, argv);
    fprintf(stderr, "usage: fleet_replay summarise|synth|gather ... (see bench/fleet_replay.c)\n");
    return 2;
}
