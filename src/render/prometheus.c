/* Prometheus text exposition format (version 0.0.4): one gauge sample per
 * record and statistic, labelled by test, endpoints, method and kind. */
#include <stdio.h>
#include <string.h>

#include "render/render.h"
#include "render/render_util.h"

static void label_value(FILE *f, const char *s)
{
    for (const char *p = s; *p; p++) {
        if (*p == '\\' || *p == '"')
            fputc('\\', f);
        if (*p == '\n') {
            fputs("\\n", f);
            continue;
        }
        fputc(*p, f);
    }
}

static void labels(FILE *f, const gq_record *r, const char *stat)
{
    char a[32], b[32], gl[400] = "";
    size_t used = 0;
    for (int k = 0; k < r->ngpus && used + 8 < sizeof gl; k++)
        used += (size_t)snprintf(gl + used, sizeof gl - used, "%s%d", k ? "," : "", r->gpus[k]);
    fputs("{test=\"", f);
    label_value(f, r->test);
    fprintf(f, "\",kind=\"%s\",method=\"%s\",src=\"%s\",dst=\"%s\",direction=\"%s\",gpus=\"%s\"",
            r->sum         ? "sum"
            : r->aggregate ? "aggregate"
                           : "flow",
            gq_method_name(r->method), gq_rec_endpoint(r->src, a, sizeof a),
            gq_rec_endpoint(r->dst, b, sizeof b), gq_direction_name(r->direction), gl);
    fprintf(f, ",bytes=\"%llu\",group=\"%d\"", (unsigned long long)r->bytes, r->group);
    if (stat)
        fprintf(f, ",stat=\"%s\"", stat);
    fputc('}', f);
}

static void family(FILE *f, const gq_recordset *rs, const char *name, const char *help, int which)
{
    bool header = false;
    for (int i = 0; rs && i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        bool lat = r->is_latency;
        if ((which == 0 && lat) || (which == 1 && !lat))
            continue;
        if (which <= 1 && r->value.n == 0)
            continue;
        if (which == 3 && r->overlap < 0)
            continue;
        if (!header) {
            fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
            header = true;
        }
        if (which <= 1) {
            static const char *stats[] = {"median", "min", "max"};
            const double v[] = {r->value.median, r->value.min, r->value.max};
            for (int s = 0; s < 3; s++) {
                fputs(name, f);
                labels(f, r, stats[s]);
                fprintf(f, " %.6g\n", v[s]);
            }
        } else {
            double v = which == 2 ? r->value.spread : which == 3 ? r->overlap : (r->valid ? 1.0 : 0.0);
            fputs(name, f);
            labels(f, r, NULL);
            fprintf(f, " %.6g\n", v);
        }
    }
}

void gq_render_prometheus(FILE *f, const gq_recordset *rs)
{
    family(f, rs, "gpuqual_bandwidth_gbps", "Measured bandwidth in GB/s (10^9 bytes/s) over the rounds", 0);
    family(f, rs, "gpuqual_latency_ns", "Measured latency in nanoseconds over the rounds", 1);
    family(f, rs, "gpuqual_spread_ratio", "Spread between rounds, (max - min) / median", 2);
    family(f, rs, "gpuqual_overlap_ratio",
           "Window shared by concurrent flows over each flow's own window (min over rounds)", 3);
    family(f, rs, "gpuqual_valid",
           "1 when the figure is valid, 0 when flagged (impossible, overlap, error, verify_failed)", 4);
}
