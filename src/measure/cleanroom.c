/* The clean room (measure/cleanroom.h). */
#include "measure/cleanroom.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static gq_cleanroom *installed;

void gq_cleanroom_install(gq_cleanroom *c)
{
    installed = c;
}

gq_cleanroom *gq_cleanroom_installed(void)
{
    return installed;
}

void gq_cleanroom_init(gq_cleanroom *c, gq_backend *be)
{
    memset(c, 0, sizeof *c);
    c->be = be;
    c->on = be && be->ops && be->ops->observe;
}

static void proc_item(int gpu, const gq_gpu_proc *p, gq_contam_item *it)
{
    memset(it, 0, sizeof *it);
    snprintf(it->kind, sizeof it->kind, "process");
    it->gpu = gpu;
    it->pid = p->pid;
    snprintf(it->name, sizeof it->name, "%s", p->name);
    char mem[32] = "";
    if (p->mem_mib >= 0)
        snprintf(mem, sizeof mem, ", %.0f MiB", p->mem_mib);
    if (p->visible)
        snprintf(it->detail, sizeof it->detail, "%s process %d (%s)%s", p->graphics ? "graphics" : "compute",
                 p->pid, p->name[0] ? p->name : "name unknown", mem);
    else
        snprintf(it->detail, sizeof it->detail,
                 "%s process %d, not visible from here (another container or the host)%s",
                 p->graphics ? "graphics" : "compute", p->pid, mem);
}

static void add(gq_cleanroom *c, gq_contam *out, const gq_contam_item *it)
{
    gq_contam_add(out, it);
    gq_contam_add(&c->seen, it);
}

static void pause_s(gq_backend *be, double s)
{
    if (be->ops->wait && (be->ops->flags & GQ_BE_VIRTUAL_TIME)) {
        be->ops->wait(be, s);
        return;
    }
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

void gq_cleanroom_step(gq_cleanroom *c, const int *gpus, int n, double seconds)
{
    memset(&c->step, 0, sizeof c->step);
    if (!c->on)
        return;
    double util_max[GQ_MAX_GPUS], mem_min[GQ_MAX_GPUS];
    bool util_known[GQ_MAX_GPUS] = {false};
    int samples = seconds > 0 ? GQ_CLEAN_SAMPLES : 1;
    for (int i = 0; i < n; i++) {
        util_max[i] = -1;
        mem_min[i] = -1;
    }
    for (int k = 0; k < samples; k++) {
        if (k)
            pause_s(c->be, seconds / (GQ_CLEAN_SAMPLES - 1));
        for (int i = 0; i < n; i++) {
            gq_gpu_load l;
            gq_err e = {0};
            if (c->be->ops->observe(c->be, gpus[i], &l, &e) != GQ_OK)
                continue;
            if (gpus[i] >= 0 && gpus[i] < GQ_MAX_GPUS)
                c->procs_hidden[gpus[i]] = !l.procs_known;
            /* the lowest reading: NVML averages over up to 1 s, so the tail of
             * gpuqual's own previous step (or of a process that just ended)
             * fades within the window, while another tenant's load stays */
            if (l.util_pct >= 0) {
                if (!util_known[i] || l.util_pct < util_max[i])
                    util_max[i] = l.util_pct;
                util_known[i] = true;
            }
            /* the smallest reading: a transient allocation is not a tenant */
            if (l.mem_used_mib >= 0 && (mem_min[i] < 0 || l.mem_used_mib < mem_min[i]))
                mem_min[i] = l.mem_used_mib;
        }
    }
    for (int i = 0; i < n; i++) {
        gq_contam_item it = {.gpu = gpus[i]};
        if (util_known[i] && util_max[i] > GQ_CLEAN_UTIL_PCT) {
            snprintf(it.kind, sizeof it.kind, "utilization");
            snprintf(
                it.detail, sizeof it.detail,
                "%.0f%% utilization (lowest of the readings before the step, gpuqual idle, above %.0f%%)",
                util_max[i], GQ_CLEAN_UTIL_PCT);
            add(c, &c->step, &it);
        }
        bool hidden = gpus[i] >= 0 && gpus[i] < GQ_MAX_GPUS && c->procs_hidden[gpus[i]];
        if (hidden && mem_min[i] > GQ_CLEAN_MEM_MIB) {
            snprintf(it.kind, sizeof it.kind, "memory");
            snprintf(it.detail, sizeof it.detail,
                     "%.0f MiB of device memory in use before the step (above %.0f MiB)", mem_min[i],
                     GQ_CLEAN_MEM_MIB);
            add(c, &c->step, &it);
        }
    }
}

bool gq_cleanroom_check(gq_cleanroom *c, const int *gpus, int n, gq_contam *out)
{
    if (!c || !c->on)
        return false;
    for (int i = 0; i < n; i++) {
        bool dup = false;
        for (int k = 0; k < i && !dup; k++)
            dup = gpus[k] == gpus[i];
        if (dup)
            continue;
        gq_gpu_load l;
        gq_err e = {0};
        if (c->be->ops->observe(c->be, gpus[i], &l, &e) == GQ_OK && l.procs_known)
            for (int p = 0; p < l.nprocs; p++) {
                gq_contam_item it;
                proc_item(gpus[i], &l.procs[p], &it);
                add(c, out, &it);
            }
        for (int s = 0; s < c->step.n; s++)
            if (c->step.item[s].gpu == gpus[i])
                add(c, out, &c->step.item[s]);
    }
    return out->n > 0;
}

void gq_cleanroom_mark(gq_record *r, const gq_contam *cs)
{
    if (!cs || cs->n == 0)
        return;
    for (int i = 0; i < cs->n; i++) {
        const gq_contam_item *it = &cs->item[i];
        gq_record_contaminate(r, it->kind, it->gpu, it->pid > 0 ? it->pid : -1, it->name, it->detail);
    }
    if (!r->error[0])
        snprintf(r->error, sizeof r->error, "contaminated: %.180s", r->contaminated);
}

void gq_cleanroom_note(const gq_cleanroom *c, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!c || !c->on)
        return;
    bool hidden = false;
    for (int g = 0; g < GQ_MAX_GPUS; g++)
        hidden |= c->procs_hidden[g];
    char what[200];
    gq_contam_summary(&c->seen, what, sizeof what);
    if (c->contaminated > 0)
        snprintf(buf, n, "%d measurement%s flagged contaminated: %s", c->contaminated,
                 c->contaminated == 1 ? "" : "s", what);
    else if (hidden)
        snprintf(buf, n,
                 "the GPUs' process lists cannot be read here (a container?): other work was watched through "
                 "utilization and memory only");
}
