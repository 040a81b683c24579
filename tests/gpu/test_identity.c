/* GPU identity from NVML (VBIOS, serial, ECC, MIG and persistence modes) as
 * CUDA discovery fills it, checked against nvidia-smi on the same machine.
 * Needs a GPU; tests/gpu/run.sh runs it. Arguments run.sh passes to every
 * program are ignored.
 *
 * For every GPU (matched to nvidia-smi's line by PCI bus id):
 *   - VBIOS and serial are not empty and not "unknown": a value, or "not
 *     supported" where NVML says so, and equal to what nvidia-smi prints
 *     (its "[N/A]" / "[Not Supported]" is "not supported");
 *   - ECC, MIG and persistence modes are known (never "unknown") and equal
 *     to nvidia-smi's current modes.
 * Prints one line per GPU and "RESULT: PASS" or "RESULT: FAIL (N)". */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend/backend.h"
#include "topo/topo.h"

extern const gq_backend_ops gq_backend_cuda_ops;

static int failures;

static void fail(const char *fmt, const char *a, const char *b, int gpu)
{
    printf("FAIL GPU %d: ", gpu);
    printf(fmt, a, b);
    putchar('\n');
    failures++;
}

/* nvidia-smi's value as gpuqual names it. */
static void smi_norm(char *s)
{
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    memmove(s, p, strlen(p) + 1);
    if (s[0] == '[')
        snprintf(s, 64, "not supported");
    else if (!strcasecmp(s, "enabled"))
        snprintf(s, 64, "enabled");
    else if (!strcasecmp(s, "disabled"))
        snprintf(s, 64, "disabled");
}

/* The last 7 characters of a bus id ("06.0" with its bus: "00:06.0"). */
static const char *bus_tail(const char *id)
{
    size_t n = strlen(id);
    return n > 7 ? id + n - 7 : id;
}

static void check_gpu(const gq_gpu_info *g, char fields[6][64])
{
    const char *mine[5] = {g->vbios, g->serial, gq_mode_name(g->ecc_mode), gq_mode_name(g->mig_mode),
                           gq_mode_name(g->persistence_mode)};
    static const char *names[5] = {"VBIOS", "serial", "ECC mode", "MIG mode", "persistence mode"};
    printf("GPU %d (%s): VBIOS %s, serial %s, ECC %s, MIG %s, persistence %s\n", g->index, g->pci_bus_id,
           mine[0], mine[1], mine[2], mine[3], mine[4]);
    for (int k = 0; k < 5; k++) {
        if (!mine[k][0] || !strcmp(mine[k], "unknown"))
            fail("%s is unknown%s", names[k], "", g->index);
        else if (strcasecmp(mine[k], fields[k + 1]))
            fail("gpuqual says '%s', nvidia-smi '%s'", mine[k], fields[k + 1], g->index);
    }
}

int main(void)
{
    gq_backend be;
    gq_err err = {0};
    static gq_topo topo;
    if (gq_backend_register(&gq_backend_cuda_ops, &err) || gq_backend_open(&be, "cuda", NULL, &err)) {
        printf("FAIL open: %s\nRESULT: FAIL (no backend)\n", err.msg);
        return 1;
    }
    gq_topo_init(&topo);
    if (be.ops->discover(&be, &topo, &err) || topo.ngpu < 1) {
        printf("FAIL discovery: %s\nRESULT: FAIL (no GPU)\n", err.msg);
        return 1;
    }
    FILE *p =
        popen("nvidia-smi --query-gpu=pci.bus_id,vbios_version,serial,ecc.mode.current,mig.mode.current,"
              "persistence_mode --format=csv,noheader",
              "r");
    char line[512];
    char rows[GQ_MAX_GPUS][6][64];
    int nrows = 0;
    while (p && nrows < GQ_MAX_GPUS && fgets(line, sizeof line, p)) {
        char *save = NULL, *tok = strtok_r(line, ",", &save);
        for (int k = 0; k < 6; k++, tok = strtok_r(NULL, ",", &save)) {
            snprintf(rows[nrows][k], 64, "%s", tok ? tok : "");
            smi_norm(rows[nrows][k]);
        }
        nrows++;
    }
    if (p)
        pclose(p);
    if (!nrows) {
        printf("FAIL nvidia-smi printed nothing\n");
        failures++;
    }
    for (int i = 0; i < topo.ngpu; i++) {
        int r = 0;
        while (r < nrows && strcasecmp(bus_tail(rows[r][0]), bus_tail(topo.gpu[i].pci_bus_id)))
            r++;
        if (r == nrows) {
            printf("FAIL GPU %d: bus id %s not in nvidia-smi's list\n", topo.gpu[i].index,
                   topo.gpu[i].pci_bus_id);
            failures++;
            continue;
        }
        check_gpu(&topo.gpu[i], rows[r]);
    }
    gq_backend_close(&be);
    if (failures)
        printf("RESULT: FAIL (%d)\n", failures);
    else
        printf("RESULT: PASS (%d GPUs)\n", topo.ngpu);
    return failures ? 1 : 0;
}
