/* The link levels the simulated discovery reports (nvidia-smi topo's PIX,
 * PXB, PHB, NODE, SYS) depend on the machine, not on how its file is
 * written: on every built-in machine and every topology file of the tests,
 * a pair's level is the same both ways; and declaring a machine's sockets
 * before its memories (here: node 0 a socket instead of a memory) discovers
 * the same levels, NUMA nodes and P2P matrices. */
#include <dirent.h>
#include <unistd.h>

#include "simtest.h"

static gq_topo *discover(const char *machine)
{
    gq_backend *be = st_open(machine, 1, -1);
    gq_topo *t = calloc(1, sizeof *t);
    assert_non_null(t);
    gq_topo_init(t);
    gq_err e = {0};
    if (be->ops->discover(be, t, &e))
        fail_msg("%s: discover: %s", machine, e.msg);
    st_close(be);
    return t;
}

static void levels_symmetric(const char *machine)
{
    gq_topo *t = discover(machine);
    assert_true(t->ngpu >= 1);
    for (int a = 0; a < t->ngpu; a++)
        for (int b = 0; b < t->ngpu; b++)
            if (t->pci_level[a][b] != t->pci_level[b][a] || t->level[a][b] != t->level[b][a])
                fail_msg("%s: GPUs %d,%d: PCIe level %d one way, %d the other (level %d, %d)", machine, a, b,
                         t->pci_level[a][b], t->pci_level[b][a], t->level[a][b], t->level[b][a]);
    free(t);
}

static void every_machine_symmetric(void **state)
{
    (void)state;
    for (int i = 0; i < gq_sim_nbuiltins; i++)
        levels_symmetric(gq_sim_builtins[i].name);
    static const char *const dirs[] = {GQ_TEST_DATA "/sim/good", GQ_TEST_DATA "/data/topologies",
                                       GQ_TEST_DATA "/data/topo"};
    int files = 0;
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        DIR *dp = opendir(dirs[d]);
        assert_non_null(dp);
        struct dirent *de;
        while ((de = readdir(dp))) {
            size_t l = strlen(de->d_name);
            if (l < 6 || strcmp(de->d_name + l - 5, ".topo"))
                continue;
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", dirs[d], de->d_name);
            levels_symmetric(path);
            files++;
        }
        closedir(dp);
    }
    assert_true(files >= 4);
}

/* rtx4090x8 with its two `socket` lines moved above its `memory` lines. */
static void sockets_first(void **state)
{
    (void)state;
    FILE *fp = fopen(GQ_EXAMPLES "/topologies/rtx4090x8.topo", "rb");
    assert_non_null(fp);
    static char text[1 << 16], sockets[1024], out[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, fp);
    fclose(fp);
    text[n] = 0;
    size_t sl = 0, ol = 0;
    int nsock = 0;
    for (char *line = text; *line;) { /* the socket lines */
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line + 1) : strlen(line);
        if (!strncmp(line, "socket ", 7)) {
            memcpy(sockets + sl, line, len);
            sl += len;
            nsock++;
        }
        line += len;
    }
    assert_int_equal(nsock, 2);
    bool placed = false;
    for (char *line = text; *line;) { /* the other lines, the sockets before the first memory */
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line + 1) : strlen(line);
        if (!placed && !strncmp(line, "memory ", 7)) {
            memcpy(out + ol, sockets, sl);
            ol += sl;
            placed = true;
        }
        if (strncmp(line, "socket ", 7)) {
            memcpy(out + ol, line, len);
            ol += len;
        }
        line += len;
    }
    assert_true(placed);
    char path[] = "/tmp/gq-sockets-first-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, out, ol), (ssize_t)ol);
    close(fd);

    gq_topo *a = discover("rtx4090x8"), *b = discover(path);
    unlink(path);
    assert_int_equal(a->ngpu, 8);
    assert_int_equal(b->ngpu, a->ngpu);
    assert_int_equal(b->numa_nodes, a->numa_nodes);
    for (int g = 0; g < a->ngpu; g++)
        assert_int_equal(b->gpu[g].numa_node, a->gpu[g].numa_node);
    for (int i = 0; i < a->ngpu; i++)
        for (int j = 0; j < a->ngpu; j++)
            if (a->pci_level[i][j] != b->pci_level[i][j] || a->level[i][j] != b->level[i][j] ||
                a->p2p_nvml[i][j] != b->p2p_nvml[i][j] || a->nvlinks[i][j] != b->nvlinks[i][j])
                fail_msg("GPUs %d,%d: PCIe level %d with the sockets first, %d as shipped", i, j,
                         b->pci_level[i][j], a->pci_level[i][j]);
    /* GPUs 0 and 4 hang off different sockets: SYS either way */
    assert_int_equal(b->pci_level[4][0], GQ_LEVEL_SYS);
    assert_int_equal(b->pci_level[0][4], GQ_LEVEL_SYS);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_machine_symmetric),
        cmocka_unit_test(sockets_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
