/* CSV: one row per record, header first, RFC 4180 quoting. */
#include <stdio.h>
#include <string.h>

#include "render/render.h"
#include "render/render_util.h"

static void field(FILE *f, const char *s, bool last)
{
    if (strpbrk(s, ",\"\n\r")) {
        fputc('"', f);
        for (const char *p = s; *p; p++) {
            if (*p == '"')
                fputc('"', f);
            fputc(*p, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
    fputc(last ? '\n' : ',', f);
}

static void num(FILE *f, double v, bool ok)
{
    if (ok)
        fprintf(f, "%.6g,", v);
    else
        fputc(',', f);
}

void gq_render_csv(FILE *f, const gq_recordset *rs)
{
    fputs("test,kind,method,src,dst,direction,exec_gpu,bytes,rounds,unit,median,min,max,spread,valid,flags,"
          "overlap,gpus,capacity_gbps,host_numa_requested,host_numa_actual,window_s,group,timestamp,"
          "simulated,error\n",
          f);
    for (int i = 0; rs && i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        char a[32], b[32], fl[128], gl[400], ts[40];
        field(f, r->test, false);
        fputs(r->sum ? "sum," : r->aggregate ? "aggregate," : "flow,", f);
        fprintf(f, "%s,", gq_method_name(r->method));
        field(f, gq_rec_endpoint(r->src, a, sizeof a), false);
        field(f, gq_rec_endpoint(r->dst, b, sizeof b), false);
        fprintf(f, "%s,", gq_direction_name(r->direction));
        if (r->exec_gpu >= 0)
            fprintf(f, "%d,", r->exec_gpu);
        else
            fputc(',', f);
        fprintf(f, "%llu,%d,%s,", (unsigned long long)r->bytes, r->rounds, r->is_latency ? "ns" : "GB/s");
        bool hv = r->value.n > 0;
        num(f, r->value.median, hv);
        num(f, r->value.min, hv);
        num(f, r->value.max, hv);
        num(f, r->value.spread, hv);
        fprintf(f, "%s,", r->valid ? "true" : "false");
        field(f, gq_flags_str(r->flags, fl, sizeof fl), false);
        num(f, r->overlap, r->overlap >= 0);
        size_t used = 0;
        gl[0] = 0;
        for (int k = 0; k < r->ngpus && used + 8 < sizeof gl; k++)
            used += (size_t)snprintf(gl + used, sizeof gl - used, "%s%d", k ? " " : "", r->gpus[k]);
        field(f, gl, false);
        num(f, r->capacity_gbps, r->capacity_gbps > 0);
        bool host = r->src.kind == GQ_EP_HOST || r->dst.kind == GQ_EP_HOST;
        if (!host)
            fputc(',', f);
        else if (r->host_numa_req < 0)
            fputs("local,", f);
        else
            fprintf(f, "%d,", r->host_numa_req);
        if (r->host_numa_actual == -2)
            fputs("mixed,", f);
        else if (r->host_numa_actual >= 0)
            fprintf(f, "%d,", r->host_numa_actual);
        else
            fputc(',', f);
        fprintf(f, "%.6g,%d,%s,%s,", r->window_s, r->group, gq_iso_time(r->timestamp, ts, sizeof ts),
                r->simulated ? "true" : "false");
        field(f, r->error, true);
    }
}
