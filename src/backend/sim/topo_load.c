/* Topology files for the simulated fabric: the entry points (parse a text,
 * load a file or a built-in machine) and the checks that make a machine
 * usable. The tokenizer and value parser are in topo_lex.c, the table-driven
 * declaration parser in topo_parse.c, their shared state in topo_internal.h.
 *
 * The grammar is in docs/topology-format.md. Every rejection is one line,
 * "FILE:LINE:COL: message", with GQ_E_USAGE. The parser is single pass, keeps
 * every buffer bounded (line length, fields per line, word length, nodes,
 * links) and does no recursion, so no input can make it crash or run long;
 * tests/fuzz/fuzz_topo.c exercises that.
 */
#include "backend/sim/sim.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend/sim/topo_internal.h"
#include "core/units.h"

/* ---- whole-machine checks ---------------------------------------------------- */

static int build_adjacency(gq_sim_machine *m)
{
    m->adj_off = calloc((size_t)m->nnode + 1, sizeof *m->adj_off);
    m->adj = calloc((size_t)m->nlink * 2 + 1, sizeof *m->adj);
    if (!m->adj_off || !m->adj)
        return GQ_E_NOMEM;
    for (int l = 0; l < m->nlink; l++) {
        m->adj_off[m->links[l].a + 1]++;
        m->adj_off[m->links[l].b + 1]++;
    }
    for (int n = 0; n < m->nnode; n++)
        m->adj_off[n + 1] += m->adj_off[n];
    int *fill = calloc((size_t)m->nnode + 1, sizeof *fill);
    if (!fill)
        return GQ_E_NOMEM;
    for (int l = 0; l < m->nlink; l++) {
        int a = m->links[l].a, b = m->links[l].b;
        m->adj[m->adj_off[a] + fill[a]++] = l;
        m->adj[m->adj_off[b] + fill[b]++] = l;
    }
    free(fill);
    return GQ_OK;
}

static int check_machine(pctx *p)
{
    gq_sim_machine *m = p->m;
    if (!m->name[0])
        return gq_tp_err_at(
            p, 1, 1,
            "empty topology: it needs 'machine NAME', nodes and links (see docs/topology-format.md)");
    int mline = p->seen[D_MACHINE] > 0 ? p->seen[D_MACHINE] : 1;
    if (m->ngpu == 0)
        return gq_tp_err_at(p, mline, 1, "machine '%s' declares no 'gpu'", m->name);
    int nmem = 0;
    for (int n = 0; n < m->nnode; n++)
        nmem += m->nodes[n].kind == GQ_SIM_MEMORY;
    if (nmem == 0)
        return gq_tp_err_at(p, mline, 1, "machine '%s' declares no host 'memory'", m->name);
    /* GPU indices 0..ngpu-1, each once; gpus[] sorted by index. */
    gq_sim_gpu sorted[GQ_MAX_GPUS];
    for (int g = 0; g < m->ngpu; g++) {
        const gq_sim_node *n = &m->nodes[m->gpus[g].node];
        if (n->gpu >= m->ngpu)
            return gq_tp_err_at(p, n->line, n->col,
                                "GPU index %d of '%s' leaves a gap: %d GPUs need indices 0-%d", n->gpu,
                                n->name, m->ngpu, m->ngpu - 1);
        sorted[n->gpu] = m->gpus[g];
    }
    memcpy(m->gpus, sorted, sizeof sorted[0] * (size_t)m->ngpu);
    for (int n = 0; n < m->nnode; n++) {
        const gq_sim_node *nd = &m->nodes[n];
        if (nd->nlinks == 0)
            return gq_tp_err_at(p, nd->line, nd->col, "%s '%s' is linked to nothing",
                                gq_tp_kind_name(nd->kind), nd->name);
        if (nd->kind == GQ_SIM_GPU && nd->parent_link < 0)
            return gq_tp_err_at(p, nd->line, nd->col, "gpu '%s' has no PCIe link: add 'pcie %s PARENT ...'",
                                nd->name, nd->name);
    }
    /* NUMA nodes 0..k-1 */
    bool numa[GQ_MAX_NUMA] = {false};
    for (int n = 0; n < m->nnode; n++)
        if (m->nodes[n].kind == GQ_SIM_MEMORY)
            numa[m->nodes[n].numa] = true;
    for (int k = 0, gap = 0; k < GQ_MAX_NUMA; k++) {
        if (!numa[k])
            gap = 1;
        else if (gap) {
            for (int n = 0; n < m->nnode; n++)
                if (m->nodes[n].kind == GQ_SIM_MEMORY && m->nodes[n].numa == k)
                    return gq_tp_err_at(p, m->nodes[n].line, m->nodes[n].col,
                                        "NUMA nodes must be numbered from 0 without gaps; '%s' is node %d",
                                        m->nodes[n].name, k);
        }
    }
    int rc = build_adjacency(m);
    if (rc)
        return gq_err_set(p->err, rc, "out of memory");
    for (int g = 0; g < m->ngpu; g++) {
        const gq_sim_node *n = &m->nodes[m->gpus[g].node];
        if (gq_sim_nearest_memory(m, m->gpus[g].node, -1) < 0)
            return gq_tp_err_at(p, n->line, n->col, "gpu '%s' has no path to host memory", n->name);
    }
    for (int n = 0; n < m->nnode; n++) {
        gq_sim_node *nd = &m->nodes[n];
        if (nd->kind == GQ_SIM_SOCKET && nd->numa < 0) {
            int mem = gq_sim_nearest_memory(m, n, -1);
            nd->numa = mem >= 0 ? m->nodes[mem].numa : 0;
        }
    }
    return GQ_OK;
}

/* ---- entry points ------------------------------------------------------------- */

void gq_sim_machine_free(gq_sim_machine *m)
{
    if (!m)
        return;
    free(m->nodes);
    free(m->links);
    free(m->adj_off);
    free(m->adj);
    free(m);
}

int gq_sim_parse(const char *text, size_t len, const char *fname, gq_sim_machine **out, gq_err *err)
{
    *out = NULL;
    pctx *p = calloc(1, sizeof *p);
    gq_sim_machine *m = calloc(1, sizeof *m);
    int rc = GQ_OK;
    if (!p || !m) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        goto out;
    }
    p->fname = fname ? fname : "topology";
    p->err = err;
    p->m = m;
    snprintf(m->file, sizeof m->file, "%s", p->fname);
    m->noise = GQ_SIM_NOISE_DEFAULT;
    m->drift_share = 1.0;
    m->p2p = GQ_P2P_OK;
    m->driver_factor = 1.0;
    m->lat_copy = 2e-6;
    m->lat_chase = 100e-9;
    m->lat_staged = 10e-6;
    m->sockets = m->cores = -1;
    m->vm_gpu_numa = -1;
    if (len > GQ_SIM_MAX_FILE) {
        p->line = 1;
        rc = gq_tp_err(p, 1, "topology is %zu bytes; the limit is %d bytes (1 MiB)", len, GQ_SIM_MAX_FILE);
        goto out;
    }
    /* Binary: any control byte other than tab, CR, LF, anywhere. */
    {
        int line = 1, col = 1;
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)text[i];
            if (c == '\n') {
                line++;
                col = 1;
                continue;
            }
            if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) {
                p->line = line;
                rc = gq_tp_err(p, col, "binary data (byte 0x%02x): a topology file is text", c);
                goto out;
            }
            col++;
        }
    }
    m->nodes = calloc(16, sizeof *m->nodes);
    m->links = calloc(16, sizeof *m->links);
    size_t node_cap = 16, link_cap = 16;
    if (!m->nodes || !m->links) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        goto out;
    }
    size_t pos = 0;
    p->line = 0;
    while (pos < len) {
        const char *s = text + pos;
        const char *nl = memchr(s, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - s) : len - pos;
        pos += n + (nl ? 1 : 0);
        p->line++;
        if (n > LINE_MAX_LEN) {
            rc = gq_tp_err(p, LINE_MAX_LEN + 1, "line longer than %d characters", LINE_MAX_LEN);
            goto out;
        }
        if ((rc = gq_tp_tokenize(p, s, n)))
            goto out;
        if (p->nt == 0)
            continue;
        /* grow the node and link arrays ahead of the declaration */
        if ((size_t)m->nnode + 1 > node_cap && node_cap < GQ_SIM_MAX_NODES) {
            size_t nc = node_cap * 2 > GQ_SIM_MAX_NODES ? GQ_SIM_MAX_NODES : node_cap * 2;
            gq_sim_node *nn = realloc(m->nodes, nc * sizeof *nn);
            if (!nn) {
                rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
                goto out;
            }
            m->nodes = nn;
            node_cap = nc;
        }
        if ((size_t)m->nlink + 1 > link_cap && link_cap < GQ_SIM_MAX_LINKS) {
            size_t nc = link_cap * 2 > GQ_SIM_MAX_LINKS ? GQ_SIM_MAX_LINKS : link_cap * 2;
            gq_sim_link *nl2 = realloc(m->links, nc * sizeof *nl2);
            if (!nl2) {
                rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
                goto out;
            }
            m->links = nl2;
            link_cap = nc;
        }
        if ((rc = gq_tp_declaration(p)))
            goto out;
    }
    if (p->line == 0)
        p->line = 1;
    if (!m->name[0]) {
        rc = gq_tp_err_at(p, 1, 1,
                          "empty topology: no 'machine NAME' declaration (see docs/topology-format.md)");
        goto out;
    }
    if ((rc = check_machine(p)))
        goto out;
    *out = m;
    m = NULL;
out:
    gq_sim_machine_free(m);
    free(p);
    return rc;
}

int gq_sim_load_file(const char *path, gq_sim_machine **out, gq_err *err)
{
    *out = NULL;
    char *buf = NULL;
    int rc = GQ_OK;
    /* what the path is, before it is opened: a FIFO would block the open
     * until a writer came, and a file too large is refused from its size */
    struct stat st;
    if (stat(path, &st) != 0)
        return gq_err_set(err, GQ_E_USAGE, "%s:1:1: cannot open the topology file: %s", path,
                          strerror(errno));
    if (S_ISDIR(st.st_mode))
        return gq_err_set(err, GQ_E_USAGE, "%s:1:1: is a directory, not a topology file", path);
    if (!S_ISREG(st.st_mode))
        return gq_err_set(err, GQ_E_USAGE,
                          "%s:1:1: is a %s, not a regular file; give a topology file (examples/topologies/)",
                          path,
                          S_ISFIFO(st.st_mode)   ? "FIFO"
                          : S_ISCHR(st.st_mode)  ? "character device"
                          : S_ISSOCK(st.st_mode) ? "socket"
                                                 : "special file");
    if (st.st_size > GQ_SIM_MAX_FILE)
        return gq_err_set(
            err, GQ_E_USAGE,
            "%s:1:1: the topology file is larger than 1 MiB (%lld bytes, over the limit of %d bytes); is "
            "it the right file?",
            path, (long long)st.st_size, GQ_SIM_MAX_FILE);
    FILE *f = fopen(path, "rb");
    if (!f)
        return gq_err_set(err, GQ_E_USAGE, "%s:1:1: cannot open the topology file: %s", path,
                          strerror(errno));
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = gq_err_set(err, GQ_E_USAGE, "%s:1:1: changed while opening; give a topology file", path);
        goto out;
    }
    buf = malloc(GQ_SIM_MAX_FILE + 1);
    if (!buf) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        goto out;
    }
    size_t n = fread(buf, 1, GQ_SIM_MAX_FILE + 1, f);
    if (ferror(f)) {
        rc = gq_err_set(err, GQ_E_USAGE, "%s:1:1: cannot read the topology file: %s", path, strerror(errno));
        goto out;
    }
    if (n > GQ_SIM_MAX_FILE) {
        rc = gq_err_set(err, GQ_E_USAGE,
                        "%s:1:1: the topology file is larger than 1 MiB; is it the right file?", path);
        goto out;
    }
    if (n == 0) {
        rc = gq_err_set(err, GQ_E_USAGE,
                        "%s:1:1: the topology file is empty; it needs 'machine NAME', nodes and links", path);
        goto out;
    }
    rc = gq_sim_parse(buf, n, path, out, err);
out:
    free(buf);
    fclose(f);
    return rc;
}

const char *const *gq_sim_builtin_names(void)
{
    static const char *names[16];
    if (!names[0])
        for (int i = 0; i < gq_sim_nbuiltins && i < 15; i++)
            names[i] = gq_sim_builtins[i].name;
    return names;
}

int gq_sim_load(const char *spec, gq_sim_machine **out, gq_err *err)
{
    *out = NULL;
    if (!spec)
        spec = "rtx4090x8";
    if (!spec[0])
        return gq_err_set(err, GQ_E_USAGE, "--sim needs a topology file or a built-in machine name");
    struct stat st;
    size_t len = strlen(spec);
    if (stat(spec, &st) == 0 || strchr(spec, '/') || (len > 5 && !strcmp(spec + len - 5, ".topo")))
        return gq_sim_load_file(spec, out, err);
    for (int i = 0; i < gq_sim_nbuiltins; i++)
        if (!strcmp(gq_sim_builtins[i].name, spec)) {
            char fname[96];
            snprintf(fname, sizeof fname, "builtin:%s.topo", spec);
            return gq_sim_parse(gq_sim_builtins[i].text, gq_sim_builtins[i].len, fname, out, err);
        }
    char list[256] = "";
    for (int i = 0; i < gq_sim_nbuiltins; i++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", gq_sim_builtins[i].name);
    }
    const char *near = gq_closest(spec, gq_sim_builtin_names());
    if (near)
        return gq_err_set(err, GQ_E_USAGE,
                          "no topology file or built-in machine '%s'; did you mean '%s'? (built-in: %s)",
                          spec, near, list);
    return gq_err_set(err, GQ_E_USAGE,
                      "no topology file or built-in machine '%s' (built-in: %s, or a file path)", spec, list);
}
