/* The card as Markdown, and the one-screen terminal summary. Reads the saved
 * document only (render/card_render.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "render/card_render.h"
#include "render/numfmt.h"
#include "render/wrap.h"

#define MAXG 64

/* Table cell text: '|' escaped, line breaks flattened. */
static void cell(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
}

static const char *verdict_word(const char *v)
{
    if (!v)
        return "–";
    if (!strcmp(v, "pass"))
        return "PASS";
    if (!strcmp(v, "warn"))
        return "WARN";
    if (!strcmp(v, "fail"))
        return "FAIL";
    if (!strcmp(v, "info"))
        return "info";
    if (!strcmp(v, "skip"))
        return "not measured";
    return v;
}

static void gpu_list(FILE *f, const json_t *arr)
{
    size_t i;
    const json_t *v;
    int prev = -10, run = 0, first = 1;
    /* "0-3,5" */
    int vals[MAXG], n = 0;
    json_array_foreach(arr, i, v) if (json_is_integer(v) && n < MAXG) vals[n++] = (int)json_integer_value(v);
    for (int k = 0; k < n; k++) {
        if (vals[k] == prev + 1) {
            run++;
            prev = vals[k];
            if (k + 1 < n && vals[k + 1] == prev + 1)
                continue;
            fprintf(f, "%s%d", run > 1 ? "-" : ",", prev);
            continue;
        }
        fprintf(f, "%s%d", first ? "" : ",", vals[k]);
        first = 0;
        prev = vals[k];
        run = 0;
    }
    if (!n)
        fputs("–", f);
}

static void md_matrix(FILE *f, const json_t *m)
{
    static char labels[MAXG][16];
    static double vals[MAXG * MAXG];
    int n = gq_cj_matrix(m, MAXG, labels, vals);
    if (!n)
        return;
    char b[32];
    fprintf(f, "\n**%s** (%s%s)\n\n| from \\ to |", gq_cj_str(m, "title", "matrix"), gq_cj_str(m, "unit", ""),
            json_is_true(json_object_get(m, "staged")) ? ", host-staged" : "");
    for (int j = 0; j < n; j++)
        fprintf(f, " %s |", labels[j]);
    fputs("\n|---|", f);
    for (int j = 0; j < n; j++)
        fputs("---:|", f);
    fputc('\n', f);
    for (int i = 0; i < n; i++) {
        fprintf(f, "| %s |", labels[i]);
        for (int j = 0; j < n; j++)
            fprintf(f, " %s |", i == j ? "–" : gq_fmt_num(vals[i * n + j], GQ_NUM_FIGURE, b, sizeof b));
        fputc('\n', f);
    }
}

static void md_pairs(FILE *f, const json_t *pairs)
{
    if (!json_is_object(pairs))
        return;
    char b[32], c[32], d[32];
    fputs("\n## Concurrent GPU pairs\n\n| placement | pair | GB/s together | GB/s alone "
          "|\n|---|---|---:|---:|\n",
          f);
    static const char *const sides[] = {"within", "across"};
    for (int s = 0; s < 2; s++) {
        const json_t *o = json_object_get(pairs, sides[s]);
        if (!json_is_object(o))
            continue;
        const json_t *pl = json_object_get(o, "pairs");
        double g[MAXG], iso[MAXG];
        int ng = gq_cj_nums(json_object_get(o, "gbps"), g, MAXG);
        int ni = gq_cj_nums(json_object_get(o, "isolated_gbps"), iso, MAXG);
        size_t i;
        const json_t *p;
        json_array_foreach(pl, i, p)
        {
            fprintf(f, "| %s domains | %lld → %lld | %s | %s |\n", sides[s],
                    (long long)json_integer_value(json_array_get(p, 0)),
                    (long long)json_integer_value(json_array_get(p, 1)),
                    gq_fmt_num((int)i < ng ? g[i] : NAN, GQ_NUM_FIGURE, b, sizeof b),
                    gq_fmt_num((int)i < ni ? iso[i] : NAN, GQ_NUM_FIGURE, c, sizeof c));
        }
        fprintf(f, "| %s domains | **aggregate** | **%s**%s | |\n", sides[s],
                gq_fmt_num(gq_cj_num(o, "aggregate_gbps"), GQ_NUM_FIGURE, d, sizeof d),
                json_is_false(json_object_get(o, "valid")) ? " (invalid: windows did not overlap)" : "");
    }
    double r = gq_cj_num(pairs, "ratio");
    if (isfinite(r))
        fprintf(f, "\nAcross-domain aggregate is %.0f%% of the within-domain aggregate.\n", r * 100);
}

static void md_host(FILE *f, const json_t *host)
{
    if (!json_is_object(host))
        return;
    const json_t *gpus = json_object_get(host, "gpus");
    int n = (int)json_array_size(gpus);
    if (n <= 0)
        return;
    double ah[MAXG], ad[MAXG], lh[MAXG], ld[MAXG];
    const json_t *alone = json_object_get(host, "alone"), *all = json_object_get(host, "all");
    for (int i = 0; i < MAXG; i++)
        ah[i] = ad[i] = lh[i] = ld[i] = NAN;
    gq_cj_nums(json_object_get(alone, "h2d"), ah, MAXG);
    gq_cj_nums(json_object_get(alone, "d2h"), ad, MAXG);
    gq_cj_nums(json_object_get(all, "h2d"), lh, MAXG);
    gq_cj_nums(json_object_get(all, "d2h"), ld, MAXG);
    char b[4][32];
    fputs("\n## Host-memory traffic\n\n| GPU | host→GPU alone | GPU→host alone | host→GPU, all active | "
          "GPU→host, all "
          "active |\n|---|---:|---:|---:|---:|\n",
          f);
    for (int i = 0; i < n && i < MAXG; i++)
        fprintf(f, "| %lld | %s | %s | %s | %s |\n",
                (long long)json_integer_value(json_array_get(gpus, (size_t)i)),
                gq_fmt_num(ah[i], GQ_NUM_FIGURE, b[0], 32), gq_fmt_num(ad[i], GQ_NUM_FIGURE, b[1], 32),
                gq_fmt_num(lh[i], GQ_NUM_FIGURE, b[2], 32), gq_fmt_num(ld[i], GQ_NUM_FIGURE, b[3], 32));
    if (json_is_object(all))
        fprintf(f, "| **all, aggregate** | | | **%s**%s | **%s**%s |\n",
                gq_fmt_num(gq_cj_num(all, "h2d_aggregate_gbps"), GQ_NUM_FIGURE, b[0], 32),
                json_is_false(json_object_get(all, "h2d_valid")) ? " (invalid)" : "",
                gq_fmt_num(gq_cj_num(all, "d2h_aggregate_gbps"), GQ_NUM_FIGURE, b[1], 32),
                json_is_false(json_object_get(all, "d2h_valid")) ? " (invalid)" : "");
    fputs("\nGB/s. \"All active\": every GPU copying in that direction at the same time.\n", f);
    const json_t *bi = json_object_get(host, "bidir");
    if (json_is_object(bi))
        fprintf(
            f,
            "\nBoth directions at once on every GPU: %s GB/s host→GPU + %s GB/s GPU→host = %s GB/s (a sum of "
            "both directions).\n",
            gq_fmt_num(gq_cj_num(bi, "h2d_aggregate_gbps"), GQ_NUM_FIGURE, b[0], 32),
            gq_fmt_num(gq_cj_num(bi, "d2h_aggregate_gbps"), GQ_NUM_FIGURE, b[1], 32),
            gq_fmt_num(gq_cj_num(bi, "sum_gbps"), GQ_NUM_FIGURE, b[2], 32));
    const json_t *subs = json_object_get(host, "subsets");
    if (json_array_size(subs)) {
        fputs("\n| subset | direction | per GPU | aggregate | why |\n|---|---|---|---:|---|\n", f);
        size_t i;
        const json_t *s;
        json_array_foreach(subs, i, s)
        {
            fputs("| ", f);
            gpu_list(f, json_object_get(s, "gpus"));
            fprintf(f, " | %s | ", gq_cj_str(s, "direction", "?"));
            double pg[MAXG];
            int np = gq_cj_nums(json_object_get(s, "per_gpu"), pg, MAXG);
            for (int k = 0; k < np; k++)
                fprintf(f, "%s%s", k ? ", " : "", gq_fmt_num(pg[k], GQ_NUM_FIGURE, b[0], 32));
            fprintf(f, " | %s%s | ", gq_fmt_num(gq_cj_num(s, "aggregate_gbps"), GQ_NUM_FIGURE, b[1], 32),
                    json_is_false(json_object_get(s, "valid")) ? " (invalid)" : "");
            cell(f, gq_cj_str(s, "why", ""));
            fputs(" |\n", f);
        }
    }
}

static void md_sweeps(FILE *f, const json_t *sweeps)
{
    if (!json_array_size(sweeps))
        return;
    char b[32], c[32], d[32];
    fputs("\n## Transfer granularity (buffer-size sweep)\n", f);
    size_t i;
    const json_t *s;
    json_array_foreach(sweeps, i, s)
    {
        fprintf(f, "\n**%s**", gq_cj_str(s, "label", "sweep"));
        const json_t *fit = json_object_get(s, "fit");
        if (json_is_object(fit))
            fprintf(f, ": fixed cost %s µs per copy, asymptotic %s GB/s, half of it reached at %s",
                    gq_fmt_num(gq_cj_num(fit, "fixed_us"), GQ_NUM_FIGURE, b, sizeof b),
                    gq_fmt_num(gq_cj_num(fit, "asymptotic_gbps"), GQ_NUM_FIGURE, c, sizeof c),
                    gq_cj_num(fit, "half_bytes") >= 1 /* a negative fit intercept has no such size */
                        ? gq_fmt_size((uint64_t)gq_cj_num(fit, "half_bytes"), d, sizeof d)
                        : "–");
        fputs("\n\n| buffer | GB/s |\n|---:|---:|\n", f);
        double by[128], gb[128];
        int n = gq_cj_nums(json_object_get(s, "bytes"), by, 128);
        int m = gq_cj_nums(json_object_get(s, "gbps"), gb, 128);
        for (int k = 0; k < n && k < m; k++)
            fprintf(f, "| %s | %s |\n", isfinite(by[k]) ? gq_fmt_size((uint64_t)by[k], b, sizeof b) : "?",
                    gq_fmt_num(gb[k], GQ_NUM_FIGURE, c, sizeof c));
    }
}

static void md_latency(FILE *f, const json_t *lat)
{
    if (!json_is_object(lat))
        return;
    const json_t *h = json_object_get(lat, "host");
    char b[32];
    fputs("\n## Latency\n", f);
    if (json_is_object(h)) {
        const json_t *g = json_object_get(h, "gpus");
        double ns[MAXG];
        int n = gq_cj_nums(json_object_get(h, "ns"), ns, MAXG);
        fputs("\n| GPU | host↔GPU latency (ns) |\n|---|---:|\n", f);
        for (int i = 0; i < n; i++)
            fprintf(f, "| %lld | %s |\n", (long long)json_integer_value(json_array_get(g, (size_t)i)),
                    gq_fmt_num(ns[i], GQ_NUM_FIGURE, b, sizeof b));
    }
    const json_t *p = json_object_get(lat, "p2p");
    if (json_is_object(p)) {
        json_t *m = json_deep_copy(p);
        json_object_set_new(m, "title", json_string("GPU↔GPU latency"));
        json_object_set_new(m, "unit", json_string("ns"));
        md_matrix(f, m);
        json_decref(m);
    }
}

static void md_stress(FILE *f, const json_t *st)
{
    if (!json_is_object(st))
        return;
    char b[8][32];
    fprintf(f, "\n## Whole-node health (stress, %s s, %s)\n\n",
            gq_fmt_num(gq_cj_num(st, "elapsed_s"), GQ_NUM_FIGURE, b[0], 32), gq_cj_str(st, "precision", "?"));
    fputs("| GPU | avg °C | max °C | avg W | limit W | avg SM MHz | power-capped | thermal slowdown | PCIe "
          "under load | "
          "errors | verdict |\n|---|---:|---:|---:|---:|---:|---:|---|---|---|---|\n",
          f);
    size_t i;
    const json_t *g;
    json_array_foreach(json_object_get(st, "gpus"), i, g)
    {
        const json_t *pc = json_object_get(g, "pcie"), *er = json_object_get(g, "errors");
        double gen = gq_cj_num(pc, "gen_min_loaded"), wid = gq_cj_num(pc, "width_min_loaded");
        char link[48] = "–";
        if (isfinite(gen) && isfinite(wid) && gen > 0)
            snprintf(link, sizeof link, "Gen%.0f x%.0f%s", gen, wid,
                     json_is_true(json_object_get(pc, "trained_down")) ? " (trained down)" : "");
        double ecu = gq_cj_num(er, "ecc_uncorrected"), ecc = gq_cj_num(er, "ecc_corrected");
        double faulty = gq_cj_num(g, "faulty_elements");
        char errs[96];
        snprintf(errs, sizeof errs, "ECC %s/%s, faulty %s",
                 isfinite(ecc) && ecc >= 0 ? gq_fmt_num(ecc, GQ_NUM_FIGURE, b[6], 32) : "?",
                 isfinite(ecu) && ecu >= 0 ? gq_fmt_num(ecu, GQ_NUM_FIGURE, b[7], 32) : "?",
                 isfinite(faulty) ? (faulty == 0 ? "0" : gq_fmt_num(faulty, GQ_NUM_FIGURE, b[5], 32)) : "?");
        double cap = gq_cj_num(g, "power_capped_pct");
        fprintf(f, "| %lld | %s | %s | %s | %s | %s | %s%s | %s | %s | %s | %s |\n",
                (long long)json_integer_value(json_object_get(g, "gpu")),
                gq_fmt_num(gq_cj_num(g, "temp_avg_c"), GQ_NUM_FIGURE, b[0], 32),
                gq_fmt_num(gq_cj_num(g, "temp_max_c"), GQ_NUM_FIGURE, b[1], 32),
                gq_fmt_num(gq_cj_num(g, "power_avg_w"), GQ_NUM_FIGURE, b[2], 32),
                gq_fmt_num(gq_cj_num(g, "power_limit_w"), GQ_NUM_FIGURE, b[3], 32),
                gq_fmt_num(gq_cj_num(g, "sm_clock_avg_mhz"), GQ_NUM_FIGURE, b[4], 32),
                isfinite(cap) ? gq_fmt_num(cap, GQ_NUM_FIGURE, b[5], 32) : "–", isfinite(cap) ? "%" : "",
                json_is_true(json_object_get(g, "thermal_slowdown")) ? "**yes**" : "no", link, errs,
                verdict_word(gq_cj_str(g, "verdict", NULL)));
    }
    const json_t *node = json_object_get(st, "node");
    if (json_is_object(node)) {
        double sp = gq_cj_num(node, "clock_spread");
        fprintf(f, "\nAll GPUs together drew %s W on average (GPU telemetry, not wall power)",
                gq_fmt_num(gq_cj_num(node, "power_total_avg_w"), GQ_NUM_FIGURE, b[0], 32));
        if (isfinite(sp))
            fprintf(f, "; average SM clocks differ by %.1f%% from lowest to highest", sp * 100);
        fputs(".\n", f);
    }
    const json_t *fs = json_object_get(st, "findings");
    if (json_array_size(fs)) {
        fputs("\n", f);
        json_array_foreach(fs, i, g)
        {
            fprintf(f, "- %s: ", verdict_word(gq_cj_str(g, "level", NULL)));
            cell(f, gq_cj_str(g, "text", ""));
            fputc('\n', f);
        }
    }
}

static void md_domains(FILE *f, const json_t *root, const json_t *card)
{
    const json_t *d = json_object_get(card, "domains");
    const json_t *bn = json_object_get(root, "bottlenecks");
    if (!json_is_object(d) && !json_array_size(bn))
        return;
    char b[3][32];
    fputs("\n## Performance domains and shared bottlenecks\n\n", f);
    if (json_is_object(d)) {
        size_t i;
        const json_t *x;
        fputs("Domains:", f);
        json_array_foreach(json_object_get(d, "domains"), i, x)
        {
            fputs(i ? ", {" : " {", f);
            gpu_list(f, x);
            fputs("}", f);
        }
        if (json_is_true(json_object_get(d, "split")))
            fprintf(f, ". Pairs within a domain: at least %s GB/s; across: at most %s GB/s.\n",
                    gq_fmt_num(gq_cj_num(d, "within_min_gbps"), GQ_NUM_FIGURE, b[0], 32),
                    gq_fmt_num(gq_cj_num(d, "across_max_gbps"), GQ_NUM_FIGURE, b[1], 32));
        else if (json_is_true(json_object_get(d, "no_p2p")))
            fputs(". No GPU pair has P2P: every GPU-to-GPU byte goes through host memory.\n", f);
        else
            fputs(". The pairwise matrix is flat: no boundary larger than the measurement spread.\n", f);
    }
    if (json_array_size(bn)) {
        fputs("\n| GPUs | direction | shared capacity | alone, summed | explained by "
              "|\n|---|---|---:|---:|---|\n",
              f);
        size_t i;
        const json_t *x;
        json_array_foreach(bn, i, x)
        {
            fputs("| ", f);
            gpu_list(f, json_object_get(x, "gpus"));
            fprintf(f, " | %s | %s GB/s | %s GB/s | ", gq_cj_str(x, "direction", "?"),
                    gq_fmt_num(gq_cj_num(x, "capacity_gbps"), GQ_NUM_FIGURE, b[0], 32),
                    gq_fmt_num(gq_cj_num(x, "sum_alone_gbps"), GQ_NUM_FIGURE, b[1], 32));
            cell(f, gq_cj_str(x, "explanation", gq_cj_str(x, "explained_by", "")));
            fputs(" |\n", f);
        }
    }
}

/* The collectives step's TP groups: each group's all-reduce busbw alone and all at once. */
static void md_collectives(FILE *f, const json_t *c)
{
    const json_t *groups = json_object_get(c, "groups");
    if (!json_array_size(groups))
        return;
    char b[2][32];
    fputs("\n## Collectives\n\n| group | all-reduce busbw alone (GB/s) | all at once (GB/s) "
          "|\n|---|---:|---:|\n",
          f);
    size_t i, k;
    const json_t *g, *x;
    json_array_foreach(groups, i, g)
    {
        fputs("| ", f);
        json_array_foreach(json_object_get(g, "gpus"), k, x)
            fprintf(f, "%s%d", k ? "," : "", (int)json_integer_value(x));
        double a = gq_cj_num(g, "alone_busbw_gbps"), o = gq_cj_num(g, "at_once_busbw_gbps");
        fprintf(f, " | %s | %s |\n", isfinite(a) ? gq_fmt_num(a, GQ_NUM_FIGURE, b[0], 32) : "invalid",
                isfinite(o) ? gq_fmt_num(o, GQ_NUM_FIGURE, b[1], 32) : "invalid");
    }
}

static void md_placement(FILE *f, const json_t *pl)
{
    if (!json_is_object(pl))
        return;
    char b[4][32];
    fputs("\n## Recommended placement\n", f);
    const json_t *pairs = json_object_get(pl, "pairs");
    if (json_array_size(pairs)) {
        fputs("\n| prefill | decode | predicted GB/s | measured GB/s |\n|---:|---:|---:|---:|\n", f);
        size_t i;
        const json_t *p;
        json_array_foreach(pairs, i, p)
        {
            double m = gq_cj_num(p, "measured_gbps");
            fprintf(f, "| %s | %s | %s | %s |\n",
                    gq_fmt_num(gq_cj_num(p, "prefill"), GQ_NUM_FIGURE, b[0], 32),
                    gq_fmt_num(gq_cj_num(p, "decode"), GQ_NUM_FIGURE, b[1], 32),
                    gq_fmt_num(gq_cj_num(p, "predicted_gbps"), GQ_NUM_FIGURE, b[2], 32),
                    m >= 0 ? gq_fmt_num(m, GQ_NUM_FIGURE, b[3], 32) : "not verified");
        }
    }
    const json_t *off = json_object_get(pl, "offload");
    const json_t *workers = json_is_array(off) ? off : json_object_get(off, "workers");
    if (json_array_size(workers)) {
        fputs("\nKV offload workers: ", f);
        size_t i;
        const json_t *w;
        json_array_foreach(workers, i, w)
        {
            const json_t *g = json_is_object(w) ? json_object_get(w, "gpu") : w;
            fprintf(f, "%sGPU %lld", i ? ", " : "", (long long)json_integer_value(g));
        }
        fputs(".\n", f);
    }
    const json_t *gain = json_object_get(pl, "gain");
    double gp = json_is_number(gain) ? json_number_value(gain) : gq_cj_num(gain, "pairs");
    if (isfinite(gp) && gp > 0)
        fprintf(f, "\nMeasured gain over the naive mapping (GPUs in index order): %.2f×.\n", gp);
    const json_t *notes = json_object_get(pl, "notes");
    size_t i;
    const json_t *n;
    json_array_foreach(notes, i, n)
    {
        fputs("- ", f);
        cell(f, json_string_value(n));
        fputc('\n', f);
    }
}

static void md_identity(FILE *f, const json_t *id)
{
    if (!json_is_object(id))
        return;
    char b[3][32];
    fputs("\n## Identity and links\n\n| GPU | model | memory | power limit | PCIe now / max | NVLinks | NUMA "
          "| UUID "
          "|\n|---|---|---:|---:|---|---:|---:|---|\n",
          f);
    size_t i;
    const json_t *g;
    json_array_foreach(json_object_get(id, "gpus"), i, g)
    {
        const json_t *pc = json_object_get(g, "pcie");
        double gen = gq_cj_num(pc, "gen"), w = gq_cj_num(pc, "width");
        double gm = gq_cj_num(pc, "gen_max"), wm = gq_cj_num(pc, "width_max");
        char link[96];
        char gm_s[16], wm_s[16];
        gq_fmt_num(gm, GQ_NUM_FIGURE, gm_s, sizeof gm_s);
        gq_fmt_num(wm, GQ_NUM_FIGURE, wm_s, sizeof wm_s);
        snprintf(link, sizeof link, "Gen%s x%s / Gen%s x%s%s", gq_fmt_num(gen, GQ_NUM_FIGURE, b[0], 32),
                 gq_fmt_num(w, GQ_NUM_FIGURE, b[1], 32), gm_s, wm_s,
                 json_is_true(json_object_get(pc, "under_load")) ? " (under load)" : " (idle)");
        double mem = gq_cj_num(g, "memory_mib"), pw = gq_cj_num(g, "power_limit_w");
        double nv = gq_cj_num(g, "nvlinks"), numa = gq_cj_num(g, "numa_node");
        fprintf(f, "| %lld | ", (long long)json_integer_value(json_object_get(g, "index")));
        cell(f, gq_cj_str(g, "name", "?"));
        char mem_s[32];
        gq_fmt_num(mem, GQ_NUM_FIGURE, mem_s, sizeof mem_s);
        fprintf(f, " | %s MiB | %s W | %s | %s | %s | ", mem_s, gq_fmt_num(pw, GQ_NUM_FIGURE, b[1], 32), link,
                isfinite(nv) && nv >= 0 ? gq_fmt_num(nv, GQ_NUM_FIGURE, b[2], 32) : "?",
                isfinite(numa) && numa >= 0 ? gq_fmt_num(numa, GQ_NUM_FIGURE, b[0], 32) : "n/a");
        cell(f, gq_cj_str(g, "uuid", ""));
        fputs(" |\n", f);
    }
    fputc('\n', f);
    json_array_foreach(json_object_get(id, "gpus"), i, g)
    {
        fprintf(f, "- GPU %lld: VBIOS ", (long long)json_integer_value(json_object_get(g, "index")));
        cell(f, gq_cj_str(g, "vbios", "unknown"));
        fputs(", serial ", f);
        cell(f, gq_cj_str(g, "serial", "unknown"));
        fprintf(f, ", ECC %s, MIG %s, persistence %s\n", gq_cj_str(g, "ecc_mode", "unknown"),
                gq_cj_str(g, "mig_mode", "unknown"), gq_cj_str(g, "persistence_mode", "unknown"));
    }
    fprintf(f, "\nDriver %s, CUDA driver %s, runtime %s; CPU %s; %s NUMA node(s) visible%s; gpuqual %s.\n",
            gq_cj_str(id, "driver", "?"), gq_cj_str(id, "cuda_driver_str", "?"),
            gq_cj_str(id, "cuda_runtime_str", "?"), gq_cj_str(id, "cpu", "?"),
            gq_fmt_num(gq_cj_num(id, "numa_nodes"), GQ_NUM_FIGURE, b[0], 32),
            json_is_true(json_object_get(id, "vm")) ? " (virtual machine)" : "",
            gq_cj_str(id, "gpuqual", "?"));
}

static void md_checks(FILE *f, const gq_checklist *cl)
{
    if (!cl->n)
        return;
    static const gq_verdict order[] = {GQ_V_FAIL, GQ_V_WARN, GQ_V_PASS, GQ_V_INFO, GQ_V_SKIP};
    char b[2][32];
    fputs("\n## Checks\n\n| verdict | check | subject | figure | threshold | detail "
          "|\n|---|---|---|---:|---:|---|\n",
          f);
    for (int o = 0; o < 5; o++)
        for (int i = 0; i < cl->n; i++) {
            const gq_check *c = &cl->v[i];
            if (c->verdict != order[o])
                continue;
            const char *unit = c->unit;
            double fig = c->figure, thr = c->threshold;
            fprintf(f, "| %s | %s | %s | %s%s%s | %s%s%s | ", verdict_word(gq_verdict_name(order[o])), c->id,
                    c->subject, gq_fmt_num(fig, GQ_NUM_FIGURE, b[0], 32), isfinite(fig) && *unit ? " " : "",
                    isfinite(fig) ? unit : "", gq_fmt_num(thr, GQ_NUM_FIGURE, b[1], 32),
                    isfinite(thr) && *unit ? " " : "", isfinite(thr) ? unit : "");
            cell(f, c->text);
            fputs(" |\n", f);
        }
}

/* The card's table and findings, from the typed card. */
static void md_card(FILE *f, const gq_card *c)
{
    fputs("\n## Card\n\n| Check | Evidence | Result | Verdict | Decision it supports "
          "|\n|---|---|---|---|---|\n",
          f);
    for (int i = 0; i < c->nrows; i++) {
        const gq_card_row *r = &c->rows[i];
        fputs("| ", f);
        cell(f, r->check);
        fputs(" | ", f);
        cell(f, r->measurement);
        fputs(" | ", f);
        cell(f, r->result);
        fprintf(f, " | %s | ", verdict_word(gq_verdict_name(r->verdict)));
        cell(f, r->decision);
        fputs(" |\n", f);
    }
    if (c->nfindings) {
        fputs("\n## Findings\n\n", f);
        for (int i = 0; i < c->nfindings; i++) {
            fputs("- ", f);
            cell(f, c->findings[i]);
            fputc('\n', f);
        }
    }
}

int gq_card_render_markdown(FILE *f, const json_t *root, gq_err *err)
{
    const json_t *card = gq_cj_card(root, err);
    if (!card)
        return GQ_E_USAGE;
    gq_card *c = malloc(sizeof *c);
    if (!c)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    int rc = gq_card_from_json(card, "the card", c, err);
    if (rc) {
        free(c);
        return rc;
    }
    char b[3][32];
    fprintf(f, "# Acceptance card: %s\n\n", gq_cj_str(card, "hostname", "?"));
    fprintf(f, "**Verdict: %s** (%d pass, %d warn, %d fail)", c->verdict_text, c->counts[GQ_V_PASS],
            c->counts[GQ_V_WARN], c->counts[GQ_V_FAIL]);
    fprintf(f, " · measured %s · gpuqual %s", gq_cj_str(root, "timestamp", "?"),
            gq_cj_str(root, "version", "?"));
    if (json_is_true(json_object_get(root, "simulated")))
        fputs(" · **simulated machine** (figures are model output, not measurements)", f);
    fputs("\n", f);
    if (c->have_expect)
        fprintf(f, "\nExpectations: `%s`%s%s.\n", c->expect_file, *c->expect_description ? " — " : "",
                c->expect_description);
    else
        fputs("\nNo expectations file: only relative checks (GPUs of one model agree, links at their "
              "maximum, nothing "
              "impossible, nothing throttled).\n",
              f);
    char ov[2400];
    gq_card_overrides_text(c, ov, sizeof ov);
    if (ov[0])
        fprintf(f, "\nOverrides (`--set`): %s.\n", ov);
    if (json_is_true(json_object_get(root, "incomplete")) || !c->complete)
        fprintf(f,
                "\n> **Incomplete.** The run stopped at step `%s`; this card shows only what was measured "
                "before.\n",
                gq_cj_str(card, "stopped_at", "?"));
    fprintf(f, "\nLevel: %s.\n", gq_card_level_name(c->level));
    md_card(f, c);
    md_checks(f, &c->checks);
    gq_card_free(c);
    free(c);
    size_t i;
    const json_t *r;
    md_identity(f, json_object_get(card, "identity"));
    const json_t *mats = json_object_get(card, "matrices");
    if (json_array_size(mats)) {
        fputs("\n## Pairwise GPU traffic\n", f);
        json_array_foreach(mats, i, r) md_matrix(f, r);
    }
    md_pairs(f, json_object_get(card, "pairs"));
    md_host(f, json_object_get(card, "host"));
    md_sweeps(f, json_object_get(card, "sweeps"));
    md_latency(f, json_object_get(card, "latency"));
    md_stress(f, json_object_get(root, "stress"));
    md_domains(f, root, card);
    md_placement(f, json_object_get(card, "placement"));
    md_collectives(f, json_object_get(card, "collectives"));
    const json_t *plan = json_object_get(card, "plan");
    if (json_array_size(plan)) {
        fprintf(f,
                "\n## Plan\n\nBudget %s, planned %s, took %s.\n\n| step | estimate | took | status "
                "| note "
                "|\n|---|---:|---:|---|---|\n",
                gq_fmt_duration(gq_cj_num(card, "budget_s"), b[0], 32),
                gq_fmt_duration(gq_cj_num(card, "planned_s"), b[1], 32),
                gq_fmt_duration(gq_cj_num(card, "elapsed_s"), b[2], 32));
        json_array_foreach(plan, i, r)
        {
            fprintf(f, "| %s | %s | %s | %s | ", gq_cj_str(r, "title", gq_cj_str(r, "step", "?")),
                    gq_fmt_duration(gq_cj_num(r, "est_s"), b[0], 32),
                    gq_fmt_duration(gq_cj_num(r, "elapsed_s"), b[1], 32), gq_cj_str(r, "status", "?"));
            cell(f, gq_cj_str(r, "note", ""));
            fputs(" |\n", f);
        }
    }
    fputs("\nUnits: GB/s = 10^9 bytes/s; buffer sizes in KiB/MiB/GiB. A pairwise matrix measures one pair at "
          "a time: "
          "summing its cells does not give what the server carries at once.\n",
          f);
    return ferror(f) ? gq_err_set(err, GQ_E_IO, "write error") : GQ_OK;
}

int gq_card_render_summary(FILE *f, const json_t *root, int width, gq_err *err)
{
    const json_t *card = gq_cj_card(root, err);
    if (!card)
        return GQ_E_USAGE;
    gq_card *c = malloc(sizeof *c);
    if (!c)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    int rc = gq_card_from_json(card, "the card", c, err);
    if (rc) {
        free(c);
        return rc;
    }
    if (width <= 0)
        width = 100;
    fprintf(f, "gpuqual card: %s — %s (%d pass, %d warn, %d fail)%s%s\n", gq_cj_str(card, "hostname", "?"),
            c->verdict_text, c->counts[GQ_V_PASS], c->counts[GQ_V_WARN], c->counts[GQ_V_FAIL],
            json_is_true(json_object_get(root, "simulated")) ? " [simulated]" : "",
            !c->complete && c->verdict != GQ_CV_INCOMPLETE ? " [INCOMPLETE]" : "");
    /* The quality used, when the planner lowered it to fit the budget (the identity step's note). */
    const char *qn = gq_cj_str(json_array_get(json_object_get(card, "plan"), 0), "note", "");
    if (!strncmp(qn, "quality lowered", 15))
        fprintf(f, "  level %s; %s\n", gq_card_level_name(c->level), qn);
    char ov[2400];
    gq_card_overrides_text(c, ov, sizeof ov);
    if (ov[0]) {
        char line[2500];
        snprintf(line, sizeof line, "  overrides (--set): %s", ov);
        gq_wrap_line(f, line, strlen(line), width, 4);
    }
    for (int i = 0; i < c->nrows; i++) {
        const gq_card_row *r = &c->rows[i];
        const char *v = verdict_word(gq_verdict_name(r->verdict));
        char line[1024];
        snprintf(line, sizeof line, "  %-5s %-24s %s", strlen(v) > 5 ? "-" : v, r->check, r->result);
        /* wrapped at spaces under the result column, never cut */
        gq_wrap_line(f, line, strlen(line), width, 33);
    }
    if (c->verdict == GQ_CV_INCOMPLETE) { /* what is missing, by step */
        int n = 0;
        for (int s = 0; s < GQ_CS_COUNT; s++)
            if (gq_card_level_has(c->level, (gq_card_step_id)s) && c->step_ev[s] != GQ_EV_MEASURED &&
                !c->turned_off[s] && c->step_why[s] != GQ_EVR_NOT_APPLICABLE &&
                c->step_why[s] != GQ_EVR_ONE_GPU)
                fprintf(f, "%s%s (%s)",
                        n++ ? ", " : "incomplete: not measured: ", gq_card_step_name((gq_card_step_id)s),
                        c->step_ev[s] == GQ_EV_UNKNOWN ? "unknown" : gq_ev_reason_words(c->step_why[s]));
        if (n)
            fputc('\n', f);
    }
    for (int i = 0; i < c->nfindings && i < 6; i++) {
        char line[2048];
        if (i == 0)
            fputs("findings:\n", f);
        snprintf(line, sizeof line, "- %s", c->findings[i]);
        gq_wrap_line(f, line, strlen(line), width, 2);
    }
    int nbad = 0;
    for (int i = 0; i < c->checks.n; i++) {
        const gq_check *k = &c->checks.v[i];
        if (k->verdict != GQ_V_FAIL && k->verdict != GQ_V_WARN)
            continue;
        if (nbad++ >= 8)
            continue;
        char line[2048];
        if (nbad == 1)
            fputs("problems:\n", f);
        snprintf(line, sizeof line, "  %s: %s", verdict_word(gq_verdict_name(k->verdict)), k->text);
        gq_wrap_line(f, line, strlen(line), width, 4);
    }
    if (nbad > 8)
        fprintf(f, "  ... and %d more (see the card)\n", nbad - 8);
    gq_card_free(c);
    free(c);
    return GQ_OK;
}
