/* The card as Markdown, and the one-screen terminal summary, from the typed
 * card document (render/card_render.h). */
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

/* A GPU set's integer indices, "0-3,5" (at most MAXG of them); "–" when none. */
static void gpu_list(FILE *f, const gq_cf_ints *l)
{
    int prev = -10, run = 0, first = 1;
    int vals[MAXG], n = 0;
    for (int i = 0; i < l->n; i++)
        if (l->is_int[i] && n < MAXG)
            vals[n++] = (int)l->v[i];
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

/* n as the list l has it at i; def past its end. */
static double num_at(const gq_cf_nums *l, int i, double def)
{
    return i < l->n ? l->v[i] : def;
}

static long long int_at(const gq_cf_ints *l, int i)
{
    return i < l->n ? l->v[i] : 0;
}

/* A matrix as a table: title and unit are the matrix's (title: its own, else "matrix"; unit: its
 * own, else ""). */
static void md_matrix(FILE *f, const gq_cf_matrix *m, const char *title, const char *unit)
{
    static char labels[MAXG][16];
    int n = m->n;
    if (!n)
        return;
    gq_card_matrix_labels(m, labels);
    const double *vals = m->vals;
    char b[32];
    fprintf(f, "\n**%s** (%s%s)\n\n| from \\ to |", title, unit, m->staged ? ", host-staged" : "");
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

static void md_pairs(FILE *f, const gq_cf_pairs *pairs)
{
    if (!pairs->present)
        return;
    char b[32], c[32], d[32];
    fputs("\n## Concurrent GPU pairs\n\n| placement | pair | GB/s together | GB/s alone "
          "|\n|---|---|---:|---:|\n",
          f);
    static const char *const sides[] = {"within", "across"};
    for (int s = 0; s < 2; s++) {
        const gq_cf_pairs_side *o = &pairs->side[s];
        if (!o->present)
            continue;
        for (int i = 0; i < o->npairs; i++)
            fprintf(f, "| %s domains | %lld → %lld | %s | %s |\n", sides[s], o->pair[i][0], o->pair[i][1],
                    gq_fmt_num(num_at(&o->gbps, i, NAN), GQ_NUM_FIGURE, b, sizeof b),
                    gq_fmt_num(num_at(&o->isolated_gbps, i, NAN), GQ_NUM_FIGURE, c, sizeof c));
        fprintf(f, "| %s domains | **aggregate** | **%s**%s | |\n", sides[s],
                gq_fmt_num(o->aggregate_gbps, GQ_NUM_FIGURE, d, sizeof d),
                o->invalid ? " (invalid: windows did not overlap)" : "");
    }
    double r = pairs->ratio;
    if (isfinite(r))
        fprintf(f, "\nAcross-domain aggregate is %.0f%% of the within-domain aggregate.\n", r * 100);
}

static void md_host_subsets(FILE *f, const gq_cf_host *host)
{
    if (!host->nsubsets)
        return;
    char b[2][32];
    fputs("\n| subset | direction | per GPU | aggregate | why |\n|---|---|---|---:|---|\n", f);
    for (int i = 0; i < host->nsubsets; i++) {
        const gq_cf_subset *s = &host->subsets[i];
        fputs("| ", f);
        gpu_list(f, &s->gpus);
        fprintf(f, " | %s | ", gq_cf_or(s->direction, "?"));
        for (int k = 0; k < s->per_gpu.n; k++)
            fprintf(f, "%s%s", k ? ", " : "", gq_fmt_num(s->per_gpu.v[k], GQ_NUM_FIGURE, b[0], 32));
        fprintf(f, " | %s%s | ", gq_fmt_num(s->aggregate_gbps, GQ_NUM_FIGURE, b[1], 32),
                s->invalid ? " (invalid)" : "");
        cell(f, gq_cf_or(s->why, ""));
        fputs(" |\n", f);
    }
}

static void md_host(FILE *f, const gq_cf_host *host)
{
    if (!host->present)
        return;
    int n = host->gpus.n;
    if (n <= 0)
        return;
    char b[4][32];
    fputs("\n## Host-memory traffic\n\n| GPU | host→GPU alone | GPU→host alone | host→GPU, all active | "
          "GPU→host, all "
          "active |\n|---|---:|---:|---:|---:|\n",
          f);
    for (int i = 0; i < n && i < MAXG; i++)
        fprintf(f, "| %lld | %s | %s | %s | %s |\n", host->gpus.v[i],
                gq_fmt_num(num_at(&host->alone_h2d, i, NAN), GQ_NUM_FIGURE, b[0], 32),
                gq_fmt_num(num_at(&host->alone_d2h, i, NAN), GQ_NUM_FIGURE, b[1], 32),
                gq_fmt_num(num_at(&host->all_h2d, i, NAN), GQ_NUM_FIGURE, b[2], 32),
                gq_fmt_num(num_at(&host->all_d2h, i, NAN), GQ_NUM_FIGURE, b[3], 32));
    if (host->have_all)
        fprintf(f, "| **all, aggregate** | | | **%s**%s | **%s**%s |\n",
                gq_fmt_num(host->all_h2d_aggregate_gbps, GQ_NUM_FIGURE, b[0], 32),
                host->all_h2d_invalid ? " (invalid)" : "",
                gq_fmt_num(host->all_d2h_aggregate_gbps, GQ_NUM_FIGURE, b[1], 32),
                host->all_d2h_invalid ? " (invalid)" : "");
    fputs("\nGB/s. \"All active\": every GPU copying in that direction at the same time.\n", f);
    if (host->have_bidir)
        fprintf(
            f,
            "\nBoth directions at once on every GPU: %s GB/s host→GPU + %s GB/s GPU→host = %s GB/s (a sum of "
            "both directions).\n",
            gq_fmt_num(host->bidir_h2d_aggregate_gbps, GQ_NUM_FIGURE, b[0], 32),
            gq_fmt_num(host->bidir_d2h_aggregate_gbps, GQ_NUM_FIGURE, b[1], 32),
            gq_fmt_num(host->bidir_sum_gbps, GQ_NUM_FIGURE, b[2], 32));
    md_host_subsets(f, host);
}

/* A buffer size for a table cell: the size when v is a whole-byte count a
 * uint64_t holds, else alt (a saved card can hold any number there, and a
 * cast of one out of range is undefined). */
static const char *size_cell(double v, const char *alt, char *buf, size_t n)
{
    return v >= 0 && v < 18446744073709551616.0 ? gq_fmt_size((uint64_t)v, buf, n) : alt;
}

static void md_sweeps(FILE *f, const gq_card_doc *d)
{
    if (!d->nsweeps)
        return;
    char b[32], c[32], e[32];
    fputs("\n## Transfer granularity (buffer-size sweep)\n", f);
    for (int i = 0; i < d->nsweeps; i++) {
        const gq_cf_sweep *s = &d->sweeps[i];
        fprintf(f, "\n**%s**", gq_cf_or(s->label, "sweep"));
        if (s->have_fit)
            fprintf(f, ": fixed cost %s µs per copy, asymptotic %s GB/s, half of it reached at %s",
                    gq_fmt_num(s->fixed_us, GQ_NUM_FIGURE, b, sizeof b),
                    gq_fmt_num(s->asymptotic_gbps, GQ_NUM_FIGURE, c, sizeof c),
                    /* a negative fit intercept has no such size */
                    s->half_bytes >= 1 ? size_cell(s->half_bytes, "–", e, sizeof e) : "–");
        fputs("\n\n| buffer | GB/s |\n|---:|---:|\n", f);
        for (int k = 0; k < s->bytes.n && k < s->gbps.n; k++)
            fprintf(f, "| %s | %s |\n", size_cell(s->bytes.v[k], "?", b, sizeof b),
                    gq_fmt_num(s->gbps.v[k], GQ_NUM_FIGURE, c, sizeof c));
    }
}

static void md_latency(FILE *f, const gq_cf_latency *lat)
{
    if (!lat->present)
        return;
    char b[32];
    fputs("\n## Latency\n", f);
    if (lat->have_host) {
        fputs("\n| GPU | host↔GPU latency (ns) |\n|---|---:|\n", f);
        for (int i = 0; i < lat->host_ns.n; i++)
            fprintf(f, "| %lld | %s |\n", int_at(&lat->host_gpus, i),
                    gq_fmt_num(lat->host_ns.v[i], GQ_NUM_FIGURE, b, sizeof b));
    }
    if (lat->p2p.present)
        md_matrix(f, &lat->p2p, "GPU↔GPU latency", "ns");
}

static void md_stress_gpu(FILE *f, const gq_cf_stress_gpu *g)
{
    char b[8][32];
    double gen = g->gen_min_loaded, wid = g->width_min_loaded;
    char link[48] = "–";
    if (isfinite(gen) && isfinite(wid) && gen > 0)
        snprintf(link, sizeof link, "Gen%.0f x%.0f%s", gen, wid, g->trained_down ? " (trained down)" : "");
    double ecu = g->ecc_uncorrected, ecc = g->ecc_corrected;
    double faulty = g->faulty_elements;
    char errs[96];
    snprintf(errs, sizeof errs, "ECC %s/%s, faulty %s",
             isfinite(ecc) && ecc >= 0 ? gq_fmt_num(ecc, GQ_NUM_FIGURE, b[6], 32) : "?",
             isfinite(ecu) && ecu >= 0 ? gq_fmt_num(ecu, GQ_NUM_FIGURE, b[7], 32) : "?",
             isfinite(faulty) ? (faulty == 0 ? "0" : gq_fmt_num(faulty, GQ_NUM_FIGURE, b[5], 32)) : "?");
    double cap = g->power_capped_pct;
    fprintf(f, "| %lld | %s | %s | %s | %s | %s | %s%s | %s | %s | %s | %s |\n", g->gpu,
            gq_fmt_num(g->temp_avg_c, GQ_NUM_FIGURE, b[0], 32),
            gq_fmt_num(g->temp_max_c, GQ_NUM_FIGURE, b[1], 32),
            gq_fmt_num(g->power_avg_w, GQ_NUM_FIGURE, b[2], 32),
            gq_fmt_num(g->power_limit_w, GQ_NUM_FIGURE, b[3], 32),
            gq_fmt_num(g->sm_clock_avg_mhz, GQ_NUM_FIGURE, b[4], 32),
            isfinite(cap) ? gq_fmt_num(cap, GQ_NUM_FIGURE, b[5], 32) : "–", isfinite(cap) ? "%" : "",
            g->thermal_slowdown ? "**yes**" : "no", link, errs, verdict_word(g->verdict));
}

static void md_stress(FILE *f, const gq_cf_stress *st)
{
    if (!st->present)
        return;
    char b[32];
    fprintf(f, "\n## Whole-node health (stress, %s s, %s)\n\n",
            gq_fmt_num(st->elapsed_s, GQ_NUM_FIGURE, b, 32), gq_cf_or(st->precision, "?"));
    fputs("| GPU | avg °C | max °C | avg W | limit W | avg SM MHz | power-capped | thermal slowdown | PCIe "
          "under load | "
          "errors | verdict |\n|---|---:|---:|---:|---:|---:|---:|---|---|---|---|\n",
          f);
    for (int i = 0; i < st->ngpus; i++)
        md_stress_gpu(f, &st->gpus[i]);
    if (st->have_node) {
        double sp = st->clock_spread;
        fprintf(f, "\nAll GPUs together drew %s W on average (GPU telemetry, not wall power)",
                gq_fmt_num(st->power_total_avg_w, GQ_NUM_FIGURE, b, 32));
        if (isfinite(sp))
            fprintf(f, "; average SM clocks differ by %.1f%% from lowest to highest", sp * 100);
        fputs(".\n", f);
    }
    if (st->nfindings) {
        fputs("\n", f);
        for (int i = 0; i < st->nfindings; i++) {
            fprintf(f, "- %s: ", verdict_word(st->findings[i].level));
            cell(f, gq_cf_or(st->findings[i].text, ""));
            fputc('\n', f);
        }
    }
}

static void md_domains(FILE *f, const gq_card_doc *doc)
{
    const gq_cf_domains *d = &doc->domains;
    if (!d->present && !doc->nbottlenecks)
        return;
    char b[3][32];
    fputs("\n## Performance domains and shared bottlenecks\n\n", f);
    if (d->present) {
        fputs("Domains:", f);
        for (int i = 0; i < d->ndomains; i++) {
            fputs(i ? ", {" : " {", f);
            gpu_list(f, &d->domains[i]);
            fputs("}", f);
        }
        if (d->split)
            fprintf(f, ". Pairs within a domain: at least %s GB/s; across: at most %s GB/s.\n",
                    gq_fmt_num(d->within_min_gbps, GQ_NUM_FIGURE, b[0], 32),
                    gq_fmt_num(d->across_max_gbps, GQ_NUM_FIGURE, b[1], 32));
        else if (d->no_p2p)
            fputs(". No GPU pair has P2P: every GPU-to-GPU byte goes through host memory.\n", f);
        else
            fputs(". The pairwise matrix is flat: no boundary larger than the measurement spread.\n", f);
    }
    if (doc->nbottlenecks) {
        fputs("\n| GPUs | direction | shared capacity | alone, summed | explained by "
              "|\n|---|---|---:|---:|---|\n",
              f);
        for (int i = 0; i < doc->nbottlenecks; i++) {
            const gq_cf_bottleneck *x = &doc->bottlenecks[i];
            fputs("| ", f);
            gpu_list(f, &x->gpus);
            fprintf(f, " | %s | %s GB/s | %s GB/s | ", gq_cf_or(x->direction, "?"),
                    gq_fmt_num(x->capacity_gbps, GQ_NUM_FIGURE, b[0], 32),
                    gq_fmt_num(x->sum_alone_gbps, GQ_NUM_FIGURE, b[1], 32));
            cell(f, gq_cf_or(x->explanation, ""));
            fputs(" |\n", f);
        }
    }
}

/* The collectives step's TP groups: each group's all-reduce busbw alone and all at once. */
static void md_collectives(FILE *f, const gq_card_doc *d)
{
    if (!d->ngroups)
        return;
    char b[2][32];
    fputs("\n## Collectives\n\n| group | all-reduce busbw alone (GB/s) | all at once (GB/s) "
          "|\n|---|---:|---:|\n",
          f);
    for (int i = 0; i < d->ngroups; i++) {
        const gq_cf_coll_group *g = &d->groups[i];
        fputs("| ", f);
        for (int k = 0; k < g->gpus.n; k++)
            fprintf(f, "%s%d", k ? "," : "", (int)g->gpus.v[k]);
        double a = g->alone_busbw_gbps, o = g->at_once_busbw_gbps;
        fprintf(f, " | %s | %s |\n", isfinite(a) ? gq_fmt_num(a, GQ_NUM_FIGURE, b[0], 32) : "invalid",
                isfinite(o) ? gq_fmt_num(o, GQ_NUM_FIGURE, b[1], 32) : "invalid");
    }
}

static void md_placement(FILE *f, const gq_cf_placement *pl)
{
    if (!pl->present)
        return;
    char b[4][32];
    fputs("\n## Recommended placement\n", f);
    if (pl->npairs) {
        fputs("\n| prefill | decode | predicted GB/s | measured GB/s |\n|---:|---:|---:|---:|\n", f);
        for (int i = 0; i < pl->npairs; i++) {
            const gq_cf_pl_pair *p = &pl->pairs[i];
            double m = p->measured_gbps;
            fprintf(f, "| %s | %s | %s | %s |\n", gq_fmt_num(p->prefill, GQ_NUM_FIGURE, b[0], 32),
                    gq_fmt_num(p->decode, GQ_NUM_FIGURE, b[1], 32),
                    gq_fmt_num(p->predicted_gbps, GQ_NUM_FIGURE, b[2], 32),
                    m >= 0 ? gq_fmt_num(m, GQ_NUM_FIGURE, b[3], 32) : "not verified");
        }
    }
    if (pl->workers.n) {
        fputs("\nKV offload workers: ", f);
        for (int i = 0; i < pl->workers.n; i++)
            fprintf(f, "%sGPU %lld", i ? ", " : "", pl->workers.v[i]);
        fputs(".\n", f);
    }
    double gp = pl->gain;
    if (isfinite(gp) && gp > 0)
        fprintf(f, "\nMeasured gain over the naive mapping (GPUs in index order): %.2f×.\n", gp);
    for (int i = 0; i < pl->nnotes; i++) {
        fputs("- ", f);
        cell(f, pl->notes[i]);
        fputc('\n', f);
    }
}

static void md_identity_gpu(FILE *f, const gq_cf_id_gpu *g)
{
    char b[3][32];
    double gen = g->gen, w = g->width;
    double gm = g->gen_max, wm = g->width_max;
    char link[96];
    char gm_s[16], wm_s[16];
    gq_fmt_num(gm, GQ_NUM_FIGURE, gm_s, sizeof gm_s);
    gq_fmt_num(wm, GQ_NUM_FIGURE, wm_s, sizeof wm_s);
    snprintf(link, sizeof link, "Gen%s x%s / Gen%s x%s%s", gq_fmt_num(gen, GQ_NUM_FIGURE, b[0], 32),
             gq_fmt_num(w, GQ_NUM_FIGURE, b[1], 32), gm_s, wm_s, g->under_load ? " (under load)" : " (idle)");
    double mem = g->memory_mib, pw = g->power_limit_w;
    double nv = g->nvlinks, numa = g->numa_node;
    fprintf(f, "| %lld | ", g->index);
    cell(f, gq_cf_or(g->name, "?"));
    char mem_s[32];
    gq_fmt_num(mem, GQ_NUM_FIGURE, mem_s, sizeof mem_s);
    fprintf(f, " | %s MiB | %s W | %s | %s | %s | ", mem_s, gq_fmt_num(pw, GQ_NUM_FIGURE, b[1], 32), link,
            isfinite(nv) && nv >= 0 ? gq_fmt_num(nv, GQ_NUM_FIGURE, b[2], 32) : "?",
            isfinite(numa) && numa >= 0 ? gq_fmt_num(numa, GQ_NUM_FIGURE, b[0], 32) : "n/a");
    cell(f, gq_cf_or(g->uuid, ""));
    fputs(" |\n", f);
}

static void md_identity(FILE *f, const gq_cf_identity *id)
{
    if (!id->present)
        return;
    char b[32];
    fputs("\n## Identity and links\n\n| GPU | model | memory | power limit | PCIe now / max | NVLinks | NUMA "
          "| UUID "
          "|\n|---|---|---:|---:|---|---:|---:|---|\n",
          f);
    for (int i = 0; i < id->ngpus; i++)
        md_identity_gpu(f, &id->gpus[i]);
    fputc('\n', f);
    for (int i = 0; i < id->ngpus; i++) {
        const gq_cf_id_gpu *g = &id->gpus[i];
        fprintf(f, "- GPU %lld: VBIOS ", g->index);
        cell(f, gq_cf_or(g->vbios, "unknown"));
        fputs(", serial ", f);
        cell(f, gq_cf_or(g->serial, "unknown"));
        fprintf(f, ", ECC %s, MIG %s, persistence %s\n", gq_cf_or(g->ecc_mode, "unknown"),
                gq_cf_or(g->mig_mode, "unknown"), gq_cf_or(g->persistence_mode, "unknown"));
    }
    fprintf(f, "\nDriver %s, CUDA driver %s, runtime %s; CPU %s; %s NUMA node(s) visible%s; gpuqual %s.\n",
            gq_cf_or(id->driver, "?"), gq_cf_or(id->cuda_driver_str, "?"),
            gq_cf_or(id->cuda_runtime_str, "?"), gq_cf_or(id->cpu, "?"),
            gq_fmt_num(id->numa_nodes, GQ_NUM_FIGURE, b, 32), id->vm ? " (virtual machine)" : "",
            gq_cf_or(id->gpuqual, "?"));
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

static void md_plan(FILE *f, const gq_card_doc *d)
{
    if (!d->nplan)
        return;
    char b[3][32];
    fprintf(f,
            "\n## Plan\n\nBudget %s, planned %s, took %s.\n\n| step | estimate | took | status "
            "| note "
            "|\n|---|---:|---:|---|---|\n",
            gq_fmt_duration(d->budget_s, b[0], 32), gq_fmt_duration(d->planned_s, b[1], 32),
            gq_fmt_duration(d->elapsed_s, b[2], 32));
    for (int i = 0; i < d->nplan; i++) {
        const gq_cf_plan_step *r = &d->plan[i];
        fprintf(f, "| %s | %s | %s | %s | ", gq_cf_or(r->title, "?"), gq_fmt_duration(r->est_s, b[0], 32),
                gq_fmt_duration(r->elapsed_s, b[1], 32), gq_cf_or(r->status, "?"));
        cell(f, gq_cf_or(r->note, ""));
        fputs(" |\n", f);
    }
}

int gq_card_render_markdown(FILE *f, const gq_card_doc *d, gq_err *err)
{
    const gq_card *c = &d->card;
    fprintf(f, "# Acceptance card: %s\n\n", gq_cf_or(d->hostname, "?"));
    fprintf(f, "**Verdict: %s** (%d pass, %d warn, %d fail)", c->verdict_text, c->counts[GQ_V_PASS],
            c->counts[GQ_V_WARN], c->counts[GQ_V_FAIL]);
    fprintf(f, " · measured %s · gpuqual %s", gq_cf_or(d->timestamp, "?"), gq_cf_or(d->version, "?"));
    if (d->simulated)
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
    if (d->incomplete || !c->complete)
        fprintf(f,
                "\n> **Incomplete.** The run stopped at step `%s`; this card shows only what was measured "
                "before.\n",
                gq_cf_or(d->stopped_at, "?"));
    fprintf(f, "\nLevel: %s.\n", gq_card_level_name(c->level));
    md_card(f, c);
    md_checks(f, &c->checks);
    md_identity(f, &d->identity);
    if (d->nmatrices) {
        fputs("\n## Pairwise GPU traffic\n", f);
        for (int i = 0; i < d->nmatrices; i++)
            md_matrix(f, &d->matrices[i], gq_cf_or(d->matrices[i].title, "matrix"),
                      gq_cf_or(d->matrices[i].unit, ""));
    }
    md_pairs(f, &d->pairs);
    md_host(f, &d->host);
    md_sweeps(f, d);
    md_latency(f, &d->latency);
    md_stress(f, &d->stress);
    md_domains(f, d);
    md_placement(f, &d->placement);
    md_collectives(f, d);
    md_plan(f, d);
    fputs("\nUnits: GB/s = 10^9 bytes/s; buffer sizes in KiB/MiB/GiB. A pairwise matrix measures one pair at "
          "a time: "
          "summing its cells does not give what the server carries at once.\n",
          f);
    return ferror(f) ? gq_err_set(err, GQ_E_IO, "write error") : GQ_OK;
}

int gq_card_render_summary(FILE *f, const gq_card_doc *d, int width, gq_err *err)
{
    (void)err;
    const gq_card *c = &d->card;
    if (width <= 0)
        width = 100;
    fprintf(f, "gpuqual card: %s — %s (%d pass, %d warn, %d fail)%s%s\n", gq_cf_or(d->hostname, "?"),
            c->verdict_text, c->counts[GQ_V_PASS], c->counts[GQ_V_WARN], c->counts[GQ_V_FAIL],
            d->simulated ? " [simulated]" : "",
            !c->complete && c->verdict != GQ_CV_INCOMPLETE ? " [INCOMPLETE]" : "");
    /* The quality used, when the planner lowered it to fit the budget (the identity step's note). */
    const char *qn = gq_cf_or(d->nplan ? d->plan[0].note : NULL, "");
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
    return GQ_OK;
}
