/* nvbandwidth v0.8's text output, line for line (nvbw.h). */
#include <float.h>
#include <stdio.h>
#include <string.h>

#include "measure/catalog.h"
#include "render/nvbw.h"

void gq_nvbw_text_version(FILE *f, const gq_nvbw_info *in)
{
    fprintf(f, "nvbandwidth Version: v0.8 (gpuqual %s)%s\n", in->version ? in->version : "unknown",
            in->simulated ? " (simulated)" : "");
    fprintf(f, "Built from Git version: %s\n\n", in->git ? in->git : "");
}

/* "0000:00:06.0" -> "00000000:00:06", as nvbandwidth prints a device. */
void gq_nvbw_bus(const char *bus, char *out, size_t n)
{
    unsigned dom = 0, b = 0, d = 0, fn = 0;
    if (sscanf(bus, "%x:%x:%x.%x", &dom, &b, &d, &fn) >= 3)
        snprintf(out, n, "%08x:%02x:%02x", dom, b, d);
    else
        snprintf(out, n, "%s", bus);
}

void gq_nvbw_text_machine(FILE *f, const gq_topo *topo)
{
    /* nvbandwidth prints the driver's CUDA version on both lines */
    int cuda = topo->cuda_driver_version > 0 ? topo->cuda_driver_version : topo->cuda_runtime_version;
    fprintf(f, "CUDA Runtime Version: %d\n", cuda > 0 ? cuda : 0);
    fprintf(f, "CUDA Driver Version: %d\n", cuda > 0 ? cuda : 0);
    fprintf(f, "Driver Version: %s\n\n", topo->driver_version);
    fprintf(f, "%s\n", topo->hostname[0] ? topo->hostname : topo->source);
    for (int i = 0; i < topo->ngpu; i++) {
        char bus[40];
        gq_nvbw_bus(topo->gpu[i].pci_bus_id, bus, sizeof bus);
        fprintf(f, "Device %d: %s (%s)\n", i, topo->gpu[i].name, bus);
    }
    fprintf(f, "\n");
}

static void matrix(FILE *f, const gq_nvbw_matrix *m, const gq_nvbw_info *in)
{
    double sum = 0, max = DBL_MIN, min = DBL_MAX;
    int count = 0;
    fprintf(f, "%s\n  ", m->desc);
    for (int c = 0; c < m->cols; c++)
        fprintf(f, "%10d", c);
    fprintf(f, "\n");
    for (int r = 0; r < m->rows; r++) {
        fprintf(f, "%2d", r);
        for (int c = 0; c < m->cols; c++) {
            double v = m->has[r][c] ? m->v[r][c] : 0.0;
            if (m->has[r][c])
                fprintf(f, "%10.2f", v);
            else
                fprintf(f, "%10s", "N/A");
            sum += v;
            max = v > max ? v : max;
            min = v < min ? v : min;
            count += v > 0;
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\n");
    if (in->perf)
        fprintf(f, "&&&& PERF %s %.2f%s\n", m->key, sum, m->latency ? " -ns" : " +GB/s");
    else
        fprintf(f, "SUM %s %.2f\n", m->key, sum);
    if (in->verbose) {
        fprintf(f, "MIN %s %.2f\n", m->key, min);
        fprintf(f, "MAX %s %.2f\n", m->key, max);
        fprintf(f, "AVG %s %.2f\n", m->key, sum / count);
    }
    fprintf(f, "\n");
}

void gq_nvbw_text_result(FILE *f, const gq_nvbw_result *r, const gq_nvbw_info *in, const gq_recordset *rs)
{
    switch (r->status) {
    case GQ_NVBW_NOTFOUND: fprintf(f, "ERROR: %s\n", r->msg); return;
    case GQ_NVBW_WAIVED: fprintf(f, "Waived: \n"); return;
    case GQ_NVBW_PASSED:
    case GQ_NVBW_ERROR: break;
    }
    fprintf(f, "Running %s.\n", r->name);
    if (in->verbose && rs)
        gq_nvbw_text_samples(f, rs, r->name);
    for (int i = 0; i < r->nmat; i++)
        matrix(f, &r->mat[i], in);
    if (r->status == GQ_NVBW_ERROR)
        fprintf(f, "Error: %s\n", r->msg);
}

static const char *buffer_name(gq_endpoint e, char *buf, size_t n)
{
    if (e.kind == GQ_EP_HOST)
        snprintf(buf, n, "Host");
    else
        snprintf(buf, n, "Device %d", e.index);
    return buf;
}

static bool sampled(const gq_record *r, const char *test)
{
    return !strcmp(r->test, test) && !r->aggregate && !r->sum && !r->is_latency;
}

void gq_nvbw_text_samples(FILE *f, const gq_recordset *rs, const char *test)
{
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        bool first = sampled(r, test);
        for (int k = 0; k < i && first; k++)
            first = !(sampled(&rs->v[k], test) && rs->v[k].group == r->group);
        if (!first)
            continue;
        /* each sample of a measurement, then each of its copies, as nvbandwidth prints them */
        for (int n = 0; n < r->value.n && n < GQ_MAX_ROUNDS; n++)
            for (int k = i; k < rs->n; k++) {
                const gq_record *q = &rs->v[k];
                char a[32], b[32];
                if (!sampled(q, test) || q->group != r->group || n >= q->value.n)
                    continue;
                fprintf(f, "\tSample %d: %s -> %s: %.2f GB/s\n", n, buffer_name(q->src, a, sizeof a),
                        buffer_name(q->dst, b, sizeof b), q->samples[n]);
            }
    }
}

void gq_nvbw_text_note(FILE *f)
{
    fprintf(f, "NOTE: The reported results may not reflect the full capabilities of the platform.\n"
               "Performance can vary with software drivers, hardware clocks, and system topology.\n\n");
}

void gq_nvbw_text_list(FILE *f)
{
    fprintf(f, "Index, Name:\n\tDescription\n=======================\n");
    for (int i = 0; i < GQ_NVBW_NTESTS; i++) {
        const gq_test *t = gq_catalog_find(gq_nvbw_cases[i].name);
        fprintf(f, "%d, %s:\n\t%s\n\n", i, gq_nvbw_cases[i].name, t ? t->description : "");
    }
}
