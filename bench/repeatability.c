/* The repeatability benchmark (issue 28, item 5): `gpuqual card` on every
 * simulated machine, healthy and with each injectable fault, at the quick and
 * standard levels, on many seeds, at the topology's own noise and at twice
 * it. bench/repeatability builds and runs it; bench/repeat.h says how a card
 * is judged.
 *
 * Usage: gq_repeatability --bin GPUQUAL --src REPO [--seeds N] [--quick]
 *          [--jobs J] [--levels quick,standard] [--noise calibrated,2x]
 *          [--machines a,b] [--faults healthy,thermal,...] [-o FILE.md] [--json FILE]
 *          [--revision TEXT]
 * Markdown on stdout (or -o FILE), one JSON object per group with --json.
 * Exit 0 when every card ran (whatever it said), 1 when gpuqual could not be
 * run, 2 for bad input. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "repeat.h"

typedef struct opts {
    const char *bin, *src, *out, *json, *levels, *noise, *machines, *faults, *revision;
    int seeds, jobs;
} opts;

static int usage(const char *why)
{
    fprintf(stderr, "gq_repeatability: %s\n", why);
    fprintf(stderr, "usage: gq_repeatability --bin GPUQUAL --src REPO [--seeds N] [--quick] [--jobs J] "
                    "[--levels quick,standard] [--noise calibrated,2x] [--machines a,b] [--faults "
                    "healthy,thermal,...] [-o FILE.md] [--json FILE] [--revision TEXT]\n");
    return 2;
}

/* Whether name is in the comma-separated list (NULL: every name). */
static bool in_list(const char *list, const char *name)
{
    if (!list)
        return true;
    size_t l = strlen(name);
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, ",");
        if (k == l && !strncmp(p, name, l))
            return true;
        p += k;
        if (*p)
            p++;
    }
    return false;
}

static int cmp_path(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* The .topo files of dir, sorted, appended to paths. */
static int topo_files(const char *dir, char (*paths)[1024], int n, int max)
{
    DIR *d = opendir(dir);
    if (!d)
        return n;
    int first = n;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        size_t l = strlen(e->d_name);
        if (l > 5 && !strcmp(e->d_name + l - 5, ".topo"))
            snprintf(paths[n++], 1024, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(paths[first], (size_t)(n - first), sizeof paths[0], cmp_path);
    return n;
}

static void on_progress(void *arg, int done, int total)
{
    int *last = arg;
    int pct = (int)(100.0 * done / total);
    if (pct != *last && isatty(2)) {
        fprintf(stderr, "\r%d / %d cards (%d %%)", done, total, pct);
        if (done == total)
            fputc('\n', stderr);
    }
    *last = pct;
}

static const char *pct(int k, int n, char *buf, size_t bn)
{
    if (!n)
        snprintf(buf, bn, "-");
    else if (k == n)
        snprintf(buf, bn, "100 %%");
    else
        snprintf(buf, bn, "%.1f %%", 100.0 * k / n);
    return buf;
}

typedef struct group {
    int m, level, noise, fault; /* fault -1: healthy */
    int first, n;               /* jobs[first .. first+n-1] */
    gq_rep_stats s;
} group;

static const char *level_names[] = {"quick", "standard"};
static const char *noise_names[] = {"calibrated", "2x"};

int main(int argc, char **argv)
{
    opts o = {.seeds = 100, .jobs = 2, .levels = "quick,standard", .noise = "calibrated,2x"};
    bool quick = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name, field)                                                                                     \
    if (!strcmp(a, name)) {                                                                                  \
        if (!v)                                                                                              \
            return usage(name " needs a value");                                                             \
        o.field = v;                                                                                         \
        i++;                                                                                                 \
        continue;                                                                                            \
    }
        OPT("--bin", bin)
        OPT("--src", src)
        OPT("-o", out)
        OPT("--json", json)
        OPT("--levels", levels)
        OPT("--noise", noise)
        OPT("--machines", machines)
        OPT("--faults", faults)
        OPT("--revision", revision)
#undef OPT
        if (!strcmp(a, "--quick")) {
            quick = true;
            continue;
        }
        if ((!strcmp(a, "--seeds") || !strcmp(a, "--jobs")) && v) {
            char *end = NULL;
            long n = strtol(v, &end, 10);
            if (*end || n < 1 || n > 100000)
                return usage(!strcmp(a, "--seeds") ? "--seeds: expected a whole number 1..100000"
                                                   : "--jobs: expected a whole number 1..64");
            if (!strcmp(a, "--jobs") && n > 64)
                return usage("--jobs: expected a whole number 1..64");
            *(!strcmp(a, "--seeds") ? &o.seeds : &o.jobs) = (int)n;
            i++;
            continue;
        }
        return usage(a);
    }
    if (!o.bin || !o.src)
        return usage("--bin and --src are needed");
    if (quick)
        o.seeds = o.seeds == 100 ? 5 : o.seeds;
    char err[1024];

    /* The machines: the built-in ones (examples/topologies) and tests/data's. */
    static char paths[GQ_REP_MAX_MACHINES][1024];
    char d1[1100], d2[1100], kd[1100], ft[1100];
    snprintf(d1, sizeof d1, "%s/examples/topologies", o.src);
    snprintf(d2, sizeof d2, "%s/tests/data/topologies", o.src);
    snprintf(kd, sizeof kd, "%s/tests/data/golden/unseen-known-differences.tsv", o.src);
    snprintf(ft, sizeof ft, "%s/tests/data/golden/fault-outcomes.tsv", o.src);
    int np = topo_files(d1, paths, 0, GQ_REP_MAX_MACHINES);
    int nbuiltin = np;
    np = topo_files(d2, paths, np, GQ_REP_MAX_MACHINES);
    static gq_rep_machine mach[GQ_REP_MAX_MACHINES];
    int nm = 0;
    for (int i = 0; i < np; i++) {
        gq_rep_machine m;
        if (gq_rep_machine_load(&m, paths[i], i >= nbuiltin ? kd : NULL, err, sizeof err)) {
            fprintf(stderr, "gq_repeatability: %s\n", err);
            return 2;
        }
        if (in_list(o.machines, m.name))
            mach[nm++] = m;
    }
    if (!nm)
        return usage("no machine selected");

    /* The faults: the deserved outcomes, and the kinds the binary injects. */
    static gq_rep_fault table[GQ_REP_MAX_FAULTS], faults[GQ_REP_MAX_FAULTS];
    int nt = gq_rep_faults_load(ft, table, GQ_REP_MAX_FAULTS, err, sizeof err);
    if (nt < 0) {
        fprintf(stderr, "gq_repeatability: %s\n", err);
        return 2;
    }
    char scratch_tmpl[256];
    struct stat sb;
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch_tmpl, sizeof scratch_tmpl, "%s/gq-repeat-XXXXXX",
             !stat("/dev/shm", &sb) && S_ISDIR(sb.st_mode) && !access("/dev/shm", W_OK) ? "/dev/shm"
             : tmp                                                                      ? tmp
                                                                                        : "/tmp");
    char *scratch = mkdtemp(scratch_tmpl);
    if (!scratch) {
        fprintf(stderr, "gq_repeatability: %s: %s\n", scratch_tmpl, strerror(errno));
        return 1;
    }
    char kinds[GQ_REP_MAX_FAULTS][32];
    int nk = gq_rep_binary_faults(o.bin, mach[0].path, scratch, kinds, GQ_REP_MAX_FAULTS, err, sizeof err);
    if (nk < 0) {
        fprintf(stderr, "gq_repeatability: %s\n", err);
        rmdir(scratch);
        return 1;
    }
    int nf = 0;
    char unwritten[512] = "";
    for (int k = 0; k < nk; k++) {
        int t = 0;
        while (t < nt && strcmp(table[t].kind, kinds[k]))
            t++;
        if (t == nt) {
            size_t l = strlen(unwritten);
            snprintf(unwritten + l, sizeof unwritten - l, "%s%s", l ? ", " : "", kinds[k]);
            continue;
        }
        if (in_list(o.faults, kinds[k]))
            faults[nf++] = table[t];
    }
    bool healthy = in_list(o.faults, "healthy");

    /* Every job: machine x level x noise x (healthy, faults) x seed. */
    int nlev = 0, lev[2], nnoise = 0, noi[2];
    for (int l = 0; l < 2; l++)
        if (in_list(o.levels, level_names[l]))
            lev[nlev++] = l;
    for (int l = 0; l < 2; l++)
        if (in_list(o.noise, noise_names[l]))
            noi[nnoise++] = l;
    int nvar = nf + (healthy ? 1 : 0);
    int ngroups = nm * nlev * nnoise * nvar;
    if (!ngroups) {
        rmdir(scratch);
        return usage("nothing selected to run");
    }
    size_t njobs = (size_t)ngroups * (size_t)o.seeds;
    gq_rep_job *jobs = calloc(njobs, sizeof *jobs);
    gq_rep_card *cards = calloc(njobs, sizeof *cards);
    group *groups = calloc((size_t)ngroups, sizeof *groups);
    if (!jobs || !cards || !groups) {
        fprintf(stderr, "gq_repeatability: out of memory\n");
        return 1;
    }
    int g = 0;
    size_t j = 0;
    for (int m = 0; m < nm; m++)
        for (int l = 0; l < nlev; l++)
            for (int z = 0; z < nnoise; z++)
                for (int v = healthy ? -1 : 0; v < nf; v++) {
                    groups[g] = (group){
                        .m = m, .level = lev[l], .noise = noi[z], .fault = v, .first = (int)j, .n = o.seeds};
                    for (int s = 1; s <= o.seeds; s++, j++)
                        jobs[j] = (gq_rep_job){.m = &mach[m],
                                               .f = v < 0 ? NULL : &faults[v],
                                               .level = level_names[lev[l]],
                                               .noise = noi[z] ? 2 * mach[m].noise : -1,
                                               .seed = s};
                    g++;
                }

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int last = -1;
    int rc = gq_rep_run(o.bin, jobs, (int)njobs, o.jobs, scratch, cards, on_progress, &last, err, sizeof err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    rmdir(scratch);
    if (rc) {
        fprintf(stderr, "gq_repeatability: %s\n", err);
        return 1;
    }
    double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
                 (double)ru.ru_stime.tv_usec / 1e6;
    for (g = 0; g < ngroups; g++)
        gq_rep_stats_of(&jobs[groups[g].first], &cards[groups[g].first], groups[g].n, &groups[g].s);

    FILE *out = o.out ? fopen(o.out, "w") : stdout;
    if (!out) {
        fprintf(stderr, "gq_repeatability: -o %s: %s\n", o.out, strerror(errno));
        return 2;
    }
    char b1[32], b2[32], b3[32];
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tmv);
    fprintf(out, "# Repeatability of the card on the simulated machines\n\n");
    fprintf(out,
            "`bench/repeatability` (bench/repeatability.c), %s, gpuqual %s. %d seeds (`--sim-seed` 1..%d) "
            "per machine, level, noise and fault: %zu cards in %.0f s wall, %.0f s CPU, %d at once on "
            "%ld CPUs.\n\n",
            date, o.revision ? o.revision : "(revision not given)", o.seeds, o.seeds, njobs, wall, cpu,
            o.jobs, sysconf(_SC_NPROCESSORS_ONLN));
    fprintf(out,
            "Noise \"calibrated\" is the topology's own (no `--sim-noise`), \"2x\" passes `--sim-noise` at "
            "twice the topology's `noise` line. Healthy cards run with `--no-stress`; a fault runs with the "
            "stress tests/data/golden/fault-outcomes.tsv gives it, on GPU %d. A card *agrees* when its "
            "verdict is the one the machine deserves (its topology's header, or the known-differences "
            "file) and, with a fault, the fault's GPU is the subject of a warning or failing check (or "
            "listed busy). Undetermined counts as disagreement. *Identical* is the share of seeds whose "
            "domains, GPUs set aside and bottlenecks (direction and GPUs) are the most common set. A "
            "*wrong finding* is a GPU named by a warning or failing check that nothing deserved names.\n\n",
            GQ_REP_FAULT_GPU);
    if (unwritten[0])
        fprintf(out, "Faults gpuqual injects with no deserved outcome written, not run: %s.\n\n", unwritten);

    fprintf(out, "## Healthy machines\n\n");
    fprintf(out, "| machine | GPUs | level | noise | deserves | agrees | verdicts | domains+bottlenecks "
                 "identical | planned s | wrong finding |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (g = 0; g < ngroups; g++) {
        const group *G = &groups[g];
        if (G->fault >= 0)
            continue;
        const gq_rep_machine *M = &mach[G->m];
        char vs[256] = "";
        for (int v = 0; v < G->s.nverdict; v++) {
            size_t l = strlen(vs);
            snprintf(vs + l, sizeof vs - l, "%s%s %d", v ? ", " : "", G->s.verdict[v], G->s.verdict_n[v]);
        }
        char ps[64];
        if (G->s.planned_max - G->s.planned_min < 0.5)
            snprintf(ps, sizeof ps, "%.0f", G->s.planned_max);
        else
            snprintf(ps, sizeof ps, "%.0f-%.0f", G->s.planned_min, G->s.planned_max);
        fprintf(out, "| %s | %d | %s | %s (%.2g %%) | %s | %s | %s | %s | %s | %s |\n", M->name, M->ngpu,
                level_names[G->level], noise_names[G->noise], 100 * (G->noise ? 2 * M->noise : M->noise),
                M->deserved, pct(G->s.agree, G->s.n, b1, sizeof b1), vs,
                pct(G->s.key_mode, G->s.n, b2, sizeof b2), ps, pct(G->s.wrong, G->s.n, b3, sizeof b3));
    }
    if (nf) {
        fprintf(out, "\n## Injected faults: detected and the right GPU named (share of seeds)\n\n");
        fprintf(out, "| machine | level | noise |");
        for (int f = 0; f < nf; f++)
            fprintf(out, " %s (%s) |", faults[f].kind, faults[f].verdict);
        fprintf(out, " planned s |\n|---|---|---|");
        for (int f = 0; f < nf; f++)
            fprintf(out, "---|");
        fprintf(out, "---|\n");
        for (g = 0; g < ngroups; g++) {
            const group *G = &groups[g];
            if (G->fault != 0)
                continue;
            fprintf(out, "| %s | %s | %s |", mach[G->m].name, level_names[G->level], noise_names[G->noise]);
            double pmin = 1e30, pmax = 0;
            for (int f = 0; f < nf; f++) {
                const gq_rep_stats *S = &groups[g + f].s;
                fprintf(out, " %s%s |", pct(S->agree, S->n, b1, sizeof b1),
                        S->wrong ? " (wrong finding)" : "");
                pmin = S->planned_min < pmin ? S->planned_min : pmin;
                pmax = S->planned_max > pmax ? S->planned_max : pmax;
            }
            fprintf(out, " %.0f-%.0f |\n", pmin, pmax);
        }
    }

    /* What issue 28 asks, row by row. */
    fprintf(out, "\n## Against what must show (issue 28)\n\n");
    fprintf(out,
            "At the calibrated noise: healthy agrees on >= 99 %% of seeds, every fault detected and "
            "named on 100 %%, domains and bottlenecks identical on >= 99 %%. At twice the noise: >= 95 %% "
            "on each, and no wrong finding.\n\n");
    fprintf(out, "| machine | level | noise | healthy agrees | faults named | identical | wrong findings | "
                 "meets |\n|---|---|---|---|---|---|---|---|\n");
    int meet = 0, rows = 0;
    for (g = 0; g < ngroups; g++) {
        const group *G = &groups[g];
        if (!(G->fault == -1 || (!healthy && G->fault == 0)))
            continue;
        int span = healthy ? nf + 1 : nf;
        int ha = 0, hn = 0, fa = 0, fn = 0, km = 0, kn = 0, wr = 0;
        for (int k = 0; k < span; k++) {
            const group *H = &groups[g + k];
            if (H->fault < 0) {
                ha += H->s.agree;
                hn += H->s.n;
                km += H->s.key_mode;
                kn += H->s.n;
            } else {
                fa += H->s.agree;
                fn += H->s.n;
            }
            wr += H->s.wrong;
        }
        double need = G->noise ? 0.95 : 0.99;
        bool ok = (!hn || ha >= need * hn) && (!fn || (G->noise ? fa >= need * fn : fa == fn)) &&
                  (!kn || km >= need * kn) && (!G->noise || !wr);
        rows++;
        meet += ok;
        fprintf(out, "| %s | %s | %s | %s | %s | %s | %d | %s |\n", mach[G->m].name, level_names[G->level],
                noise_names[G->noise], pct(ha, hn, b1, sizeof b1), pct(fa, fn, b2, sizeof b2),
                pct(km, kn, b3, sizeof b3), wr, ok ? "yes" : "**no**");
    }
    fprintf(out, "\n%d of %d rows meet it.\n", meet, rows);

    fprintf(out, "\n## Where the cards disagreed: the commonest outcome\n\n");
    fprintf(out, "| machine | level | noise | fault | disagreed | commonest outcome (cards) |\n"
                 "|---|---|---|---|---|---|\n");
    for (g = 0; g < ngroups; g++) {
        const group *G = &groups[g];
        if (G->s.agree == G->s.n)
            continue;
        fprintf(out, "| %s | %s | %s | %s | %d of %d | %s (%d) |\n", mach[G->m].name, level_names[G->level],
                noise_names[G->noise], G->fault < 0 ? "healthy" : faults[G->fault].kind, G->s.n - G->s.agree,
                G->s.n, G->s.why, G->s.why_n);
    }
    if (o.out)
        fclose(out);

    if (o.json) {
        FILE *jf = fopen(o.json, "w");
        if (!jf) {
            fprintf(stderr, "gq_repeatability: --json %s: %s\n", o.json, strerror(errno));
            return 2;
        }
        for (g = 0; g < ngroups; g++) {
            const group *G = &groups[g];
            const gq_rep_machine *M = &mach[G->m];
            json_t *verd = json_object();
            for (int v = 0; v < G->s.nverdict; v++)
                json_object_set_new(verd, G->s.verdict[v], json_integer(G->s.verdict_n[v]));
            json_t *row = json_pack(
                "{s:s, s:i, s:s, s:s, s:f, s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:o, s:f, s:f, s:s, s:i}",
                "machine", M->name, "gpus", M->ngpu, "level", level_names[G->level], "noise",
                noise_names[G->noise], "noise_frac", G->noise ? 2 * M->noise : M->noise, "fault",
                G->fault < 0 ? "healthy" : faults[G->fault].kind, "deserved",
                gq_rep_deserved(&jobs[G->first]), "deserved_from", M->from, "seeds", G->s.n, "agree",
                G->s.agree, "identical", G->s.key_mode, "wrong_finding", G->s.wrong, "verdicts", verd,
                "planned_min_s", G->s.planned_min, "planned_max_s", G->s.planned_max,
                "commonest_disagreement", G->s.why, "commonest_disagreement_n", G->s.why_n);
            if (row) {
                json_dumpf(row, jf, JSON_COMPACT);
                fputc('\n', jf);
                json_decref(row);
            }
        }
        fclose(jf);
    }
    free(jobs);
    free(cards);
    free(groups);
    return 0;
}
