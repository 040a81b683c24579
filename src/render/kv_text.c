/* `gpuqual kv`'s table (render/command_text.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/units.h"
#include "render/command_text.h"

/* 2621440000 -> "2,621,440,000" */
static const char *grouped(uint64_t v, char *buf, size_t n)
{
    char tmp[32];
    int l = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v), o = 0;
    for (int i = 0; i < l && (size_t)o + 2 < n; i++) {
        if (i && (l - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = 0;
    return buf;
}

static void fmt_est(char *buf, size_t n, double gbps, uint64_t payload)
{
    if (gbps > 0)
        snprintf(buf, n, "%8.1f %9.1f", gbps, gq_kv_time_ms(payload, gbps));
    else
        snprintf(buf, n, "%8s %9s", "n/a", "n/a");
}

static void fmt_meas(char *buf, size_t n, const gq_kv_meas *m)
{
    if (!m->run)
        snprintf(buf, n, "%8s %9s %7s", "-", "-", "");
    else if (!m->valid || m->gbps.n == 0)
        snprintf(buf, n, "%8s %9s  %.60s", "failed", "", m->error[0] ? m->error : "no valid round");
    else
        snprintf(buf, n, "%8.1f %9.1f %6.1f%%", m->gbps.median, m->ms.median, 100 * m->gbps.spread);
}

void gq_render_kv_table(FILE *f, const gq_kv_result *k, const char *machine, bool markdown)
{
    char a[32], b[32], est[64], got[128];
    const char *bar = markdown ? "| " : "";
    fprintf(f, "%sKV handoff GPU %d -> GPU %d%s%s\n\n", markdown ? "## " : "", k->from, k->to,
            machine[0] ? " on " : "", machine);
    char g1[32], g2[32], g3[32], g4[32];
    const gq_kv_shape *s = &k->shape;
    if (s->mla_rank > 0)
        fprintf(
            f,
            "%smodel: %ld layers x (%ld kv_lora_rank + %ld qk_rope_head_dim) x %d B (%s) = %s B/token (%s), "
            "multi-head latent attention\n",
            bar, s->layers, s->mla_rank, s->mla_rope, gq_kv_dtype_bytes(s->dtype), gq_kv_dtype_name(s->dtype),
            grouped(k->bpt, g1, sizeof g1), gq_fmt_size(k->bpt, a, sizeof a));
    else
        fprintf(
            f,
            "%smodel: 2 (K and V) x %ld layers x %ld KV heads x %ld head dim x %d B (%s) = %s B/token (%s)\n",
            bar, s->layers, s->kv_heads, s->head_dim, gq_kv_dtype_bytes(s->dtype), gq_kv_dtype_name(s->dtype),
            grouped(k->bpt, g1, sizeof g1), gq_fmt_size(k->bpt, a, sizeof a));
    if (s->window > 0)
        fprintf(f, "%ssliding window: %s tokens on %ld of %ld layers (%s)\n", bar,
                grouped((uint64_t)s->window, g4, sizeof g4), s->window_layers, s->layers, s->window_rule);
    fprintf(f, "%spayload: %s tokens = %s B = %.6g GB (%s)%s\n\n", bar,
            grouped((uint64_t)k->tokens, g2, sizeof g2), grouped(k->payload, g3, sizeof g3),
            (double)k->payload / GQ_GB, gq_fmt_size(k->payload, b, sizeof b),
            s->window > 0 && s->window_layers > 0 && k->tokens > s->window
                ? ", windowed layers keep their window"
                : "");
    fprintf(f, "%srates (GB/s = 10^9 B/s):\n", markdown ? "" : "");
    const struct {
        const char *label;
        const gq_kv_rate *r;
    } rows[] = {{"P2P, alone", &k->r.p2p},
                {"GPU -> host, alone", &k->r.down},
                {"host -> GPU, alone", &k->r.up},
                {"GPU -> host, both legs at once", &k->r.cdown},
                {"host -> GPU, both legs at once", &k->r.cup}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (rows[i].r->gbps > 0)
            fprintf(f, "  %-32s %8.1f  %s\n", rows[i].label, rows[i].r->gbps, rows[i].r->source);
        else if (rows[i].r == &k->r.p2p && k->r.p2p_impossible)
            fprintf(f, "  %-32s %8s  no P2P between GPU %d and GPU %d\n", rows[i].label, "n/a", k->from,
                    k->to);
        else
            fprintf(f, "  %-32s %8s\n", rows[i].label, "n/a");
    }
    fprintf(f, "\n  %-26s %8s %9s   %8s %9s %7s\n", "handoff", "estimate", "", "measured", "", "");
    fprintf(f, "  %-26s %8s %9s   %8s %9s %7s\n", "", "GB/s", "ms", "GB/s", "ms", "spread");
    fmt_est(est, sizeof est, k->est_direct, k->payload);
    fmt_meas(got, sizeof got, &k->direct);
    fprintf(f, "  %-26s %s   %s\n", "direct (P2P)", est,
            k->r.p2p_impossible && !k->direct.run ? "     n/a (no P2P)" : got);
    fmt_est(est, sizeof est, k->est_serial, k->payload);
    fmt_meas(got, sizeof got, &k->serial);
    fprintf(f, "  %-26s %s   %s\n", "staged, serial", est, got);
    fmt_est(est, sizeof est, k->est_pipe, k->payload);
    if (k->measured && k->best_chunk >= 0) {
        fmt_meas(got, sizeof got, &k->pipe[k->best_chunk]);
        char label[48];
        snprintf(label, sizeof label, "staged, pipelined (%s)",
                 gq_fmt_size(k->chunk[k->best_chunk], a, sizeof a));
        fprintf(f, "  %-26s %s   %s\n", label, est, got);
        for (int i = 0; i < k->nchunks; i++) {
            fmt_meas(got, sizeof got, &k->pipe[i]);
            snprintf(label, sizeof label, "  chunk %s", gq_fmt_size(k->chunk[i], a, sizeof a));
            fprintf(f, "  %-26s %8s %9s   %s\n", label, "", "", got);
        }
    } else {
        fmt_meas(got, sizeof got, k->measured ? &k->pipe[0] : &(gq_kv_meas){0});
        fprintf(f, "  %-26s %s   %s\n", "staged, pipelined", est, got);
    }
    if (k->why_pipe[0])
        fprintf(f, "\n  %s\n", k->why_pipe);
    if (!k->measured)
        fprintf(f, "\n  the handoff was not measured (%s)\n",
                k->r.p2p.source[0] && strstr(k->r.p2p.source, "assumed") ? "assumed rates"
                                                                         : "estimates only");
    fprintf(
        f,
        "\n  estimates are payload / rate; they leave out software overhead, block layout and overlap with "
        "compute.\n");
}
