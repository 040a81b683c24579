/* Snapshots: a topology survives JSON and a file exactly (byte for byte as a
 * struct); the shipped synthetic H200 snapshot loads with the reference
 * machine's facts; damaged, foreign, newer and incomplete files are refused
 * with one line that names the problem. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "render/render.h"
#include "topo/snapshot.h"

#define SYNTH GQ_TEST_DATA "/snapshots/h200x2-synthetic.json"

static gq_topo A, B;
static char tmpdir[64];

/* A topology with every kind of field set, unknowns included. */
static void rich(gq_topo *t)
{
    gq_topo_init(t);
    snprintf(t->source, sizeof t->source, "cuda");
    t->synthetic = true;
    t->ngpu = 3;
    for (int i = 0; i < t->ngpu; i++) {
        gq_gpu_info *g = &t->gpu[i];
        snprintf(g->name, sizeof g->name, "NVIDIA Test %d", i);
        snprintf(g->uuid, sizeof g->uuid, "GPU-0000000%d-1111-2222-3333-444444444444", i);
        g->mem_bytes = (uint64_t)(80 + i) << 30;
        snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "0000:%02x:00.0", 0x18 + i);
        g->cc_major = 9;
        g->cc_minor = i;
        g->sm_count = 132;
        g->pcie_gen_cur = i == 2 ? -1 : 5;
        g->pcie_width_cur = i == 2 ? -1 : 16 - i;
        g->pcie_gen_max = 5;
        g->pcie_width_max = 16;
        g->pcie_gbps = gq_pcie_gbps(g->pcie_gen_cur, g->pcie_width_cur);
        g->numa_node = i == 1 ? -1 : i;
        snprintf(g->cpulist, sizeof g->cpulist, "%d-%d", i * 16, i * 16 + 15);
        g->power_limit_w = i == 0 ? 0.0 : 700.0 / 3.0;
        g->nvlinks_total = i == 2 ? -1 : 18;
        g->nvlink_gbps_per_link = 25.0;
    }
    for (int i = 0; i < t->ngpu; i++)
        for (int j = 0; j < t->ngpu; j++) {
            t->p2p_cuda[i][j] = i == j ? -1 : (i + j) % 2;
            t->p2p_nvml[i][j] = (unsigned char)(i == j ? GQ_P2P_UNKNOWN : GQ_P2P_OK + (i + j) % 6);
            t->nvlinks[i][j] = i == j ? -1 : i * j;
            t->level[i][j] = (unsigned char)(i == j ? GQ_LEVEL_X : GQ_LEVEL_NV + (i + 2 * j) % 6);
            t->pci_level[i][j] =
                (unsigned char)(i == j ? GQ_LEVEL_X : (i + j == 3 ? GQ_LEVEL_UNKNOWN : GQ_LEVEL_SYS));
        }
    snprintf(t->driver_version, sizeof t->driver_version, "580.159.04");
    t->cuda_driver_version = 13000;
    t->cuda_runtime_version = -1;
    t->nvml_loaded = true;
    snprintf(t->hostname, sizeof t->hostname, "node-17");
    snprintf(t->cpu_model, sizeof t->cpu_model, "Intel(R) Xeon(R) Platinum 8480+ \"quoted\" \\ back");
    t->sockets = 2;
    t->cores = 112;
    t->cpus = 224;
    t->numa_nodes = 2;
    t->is_vm = false;
    struct {
        gq_pci_kind kind;
        int parent, gpu, numa;
        const char *bus, *label;
        double gbps;
    } nodes[] = {
        {GQ_PCI_HOSTBRIDGE, -1, -1, 0, "0000:00", "HostBridge 0000:[00-1f]", 0.0},
        {GQ_PCI_BRIDGE, 0, -1, 0, "0000:15:01.0", "PCIBridge 10b5:c010", 63.01538461538462},
        {GQ_PCI_GPU, 1, 0, 0, "0000:18:00.0", "GPU 0", 63.01538461538462},
        {GQ_PCI_GPU, 1, 1, -1, "0000:19:00.0", "GPU 1", 1.0 / 3.0},
        {GQ_PCI_OTHER, 1, -1, 0, "0000:1a:00.0", "InfiniBand 15b3:1021", 0.0},
        {GQ_PCI_HOSTBRIDGE, -1, -1, 1, "0000:80", "HostBridge 0000:[80-9f]", 0.0},
        {GQ_PCI_GPU, 5, 2, 1, "0000:1a:00.0", "GPU 2", 31.50769230769231},
    };
    t->npci = (int)(sizeof nodes / sizeof nodes[0]);
    for (int n = 0; n < t->npci; n++) {
        gq_pci_node *p = &t->pci[n];
        p->kind = nodes[n].kind;
        p->parent = nodes[n].parent;
        p->gpu = nodes[n].gpu;
        p->numa_node = nodes[n].numa;
        snprintf(p->bus_id, sizeof p->bus_id, "%s", nodes[n].bus);
        snprintf(p->label, sizeof p->label, "%s", nodes[n].label);
        p->link_gbps = nodes[n].gbps;
    }
    gq_topo_warn(t, "NVML not available (libnvidia-ml.so.1: cannot open shared object file)");
    gq_topo_warn(t, "GPU 2: second warning");
}

static void test_round_trip_json(void **state)
{
    (void)state;
    gq_err e = {0};
    rich(&A);
    json_t *j = gq_topo_to_json(&A);
    assert_non_null(j);
    char *text = json_dumps(j, JSON_INDENT(1));
    json_decref(j);
    json_error_t je;
    json_t *back = json_loads(text, 0, &je);
    free(text);
    assert_non_null(back);
    memset(&B, 0x5a, sizeof B); /* garbage: from_json must start from gq_topo_init */
    assert_int_equal(gq_topo_from_json(back, &B, &e), GQ_OK);
    json_decref(back);
    assert_int_equal(memcmp(&A, &B, sizeof A), 0);
}

static void test_round_trip_file(void **state)
{
    (void)state;
    gq_err e = {0};
    char path[128];
    rich(&A);
    snprintf(path, sizeof path, "%s/rich.json", tmpdir);
    json_t *doc = gq_snapshot_to_json(&A);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "kind")), GQ_SNAPSHOT_KIND);
    assert_int_equal(json_integer_value(json_object_get(doc, "schema_version")), GQ_SNAPSHOT_SCHEMA);
    assert_non_null(json_object_get(doc, "timestamp"));
    assert_non_null(json_object_get(doc, "version"));
    assert_int_equal(json_dump_file(doc, path, JSON_INDENT(2)), 0);
    json_decref(doc);
    assert_int_equal(gq_snapshot_load(path, &B, &e), GQ_OK);
    assert_string_equal(B.source, "snapshot:rich.json");
    memcpy(B.source, A.source, sizeof B.source);
    assert_int_equal(memcmp(&A, &B, sizeof A), 0);
}

static void test_synthetic_h200(void **state)
{
    (void)state;
    gq_err e = {0};
    assert_int_equal(gq_snapshot_load(SYNTH, &A, &e), GQ_OK);
    assert_true(A.synthetic);
    assert_int_equal(A.ngpu, 2);
    assert_string_equal(A.gpu[0].name, "NVIDIA H200");
    assert_int_equal(A.gpu[1].mem_bytes / (1024 * 1024), 143771);
    assert_string_equal(A.gpu[0].pci_bus_id, "0000:00:06.0");
    assert_string_equal(A.gpu[1].pci_bus_id, "0000:00:07.0");
    assert_int_equal(A.nvlinks[0][1], 18);
    assert_int_equal(A.level[1][0], GQ_LEVEL_NV);
    assert_int_equal(A.gpu[0].pcie_gen_cur, 5);
    assert_int_equal(A.gpu[0].pcie_width_cur, 16);
    assert_true(fabs(A.gpu[0].pcie_gbps - gq_pcie_gbps(5, 16)) < 1e-9);
    assert_int_equal(A.gpu[0].numa_node, -1);
    assert_true(A.is_vm);
    assert_string_equal(A.hypervisor, "firecracker");
    assert_int_equal(A.cpus, 32);
    assert_int_equal(A.numa_nodes, 1);
    assert_string_equal(A.driver_version, "580.159.04");
    assert_int_equal(A.cuda_driver_version, 13000);
    /* Saved again and reloaded, it is the same topology. */
    char path[128];
    snprintf(path, sizeof path, "%s/again.json", tmpdir);
    json_t *doc = gq_snapshot_to_json(&A);
    assert_int_equal(json_dump_file(doc, path, 0), 0);
    json_decref(doc);
    assert_int_equal(gq_snapshot_load(path, &B, &e), GQ_OK);
    memcpy(B.source, A.source, sizeof B.source);
    assert_int_equal(memcmp(&A, &B, sizeof A), 0);
}

/* Write text to tmpdir/name, load it, and check the status and message. */
static void refused(const char *name, const char *text, int want_rc, const char *want1, const char *want2)
{
    char path[128];
    gq_err e = {0};
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    if (text) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
    }
    int rc = gq_snapshot_load(path, &A, &e);
    if (rc != want_rc || !strstr(e.msg, want1) || (want2 && !strstr(e.msg, want2)) || strchr(e.msg, '\n'))
        fail_msg("%s: rc %d (want %d), message '%s' (want '%s' and '%s')", name, rc, want_rc, e.msg, want1,
                 want2 ? want2 : "");
    assert_non_null(strstr(e.msg, name)); /* the message names the file */
}

/* The synthetic snapshot with one edit applied by a callback. */
static char *edited(void (*edit)(json_t *root))
{
    json_error_t je;
    json_t *root = json_load_file(SYNTH, 0, &je);
    assert_non_null(root);
    edit(root);
    char *s = json_dumps(root, JSON_INDENT(2));
    json_decref(root);
    return s;
}

static void newer(json_t *r)
{
    json_object_set_new(r, "schema_version", json_integer(GQ_SNAPSHOT_SCHEMA + 1));
}
static void foreign(json_t *r)
{
    json_object_set_new(r, "kind", json_string("run"));
}
static void no_tool(json_t *r)
{
    json_object_del(r, "tool");
}
static void no_name(json_t *r)
{
    json_object_del(json_array_get(json_object_get(r, "gpus"), 1), "name");
}
static void bad_cores(json_t *r)
{
    json_object_set_new(json_object_get(r, "host"), "cores", json_string("32"));
}
static void no_gpus(json_t *r)
{
    json_object_set_new(r, "gpus", json_array());
}
static void too_many(json_t *r)
{
    json_t *g = json_object_get(r, "gpus");
    while (json_array_size(g) <= GQ_MAX_GPUS)
        json_array_append(g, json_array_get(g, 0));
}
static void short_matrix(json_t *r)
{
    json_array_remove(json_object_get(json_object_get(r, "links"), "level"), 1);
}
static void bad_level(json_t *r)
{
    json_array_set_new(json_array_get(json_object_get(json_object_get(r, "links"), "level"), 0), 1,
                       json_string("NV18"));
}
static void forward_parent(json_t *r)
{
    json_object_set_new(json_array_get(json_object_get(r, "pci"), 1), "parent", json_integer(2));
}
static void no_schema(json_t *r)
{
    json_object_del(r, "schema_version");
}

static void test_refused(void **state)
{
    (void)state;
    char *full = edited(newer); /* any valid text, to cut */
    size_t half = strlen(full) / 2;
    full[half] = 0;
    refused("truncated.json", full, GQ_E_USAGE, "is not valid JSON", "line");
    free(full);
    refused("empty.json", "", GQ_E_USAGE, "is not valid JSON", NULL);
    refused("garbage.json", "GPU0 X NV18\n", GQ_E_USAGE, "is not valid JSON", "column");
    refused("array.json", "[1, 2]\n", GQ_E_USAGE, "not a gpuqual snapshot", NULL);
    refused("other.json", "{\"tool\": \"nvbandwidth\", \"kind\": \"gpuqual-snapshot\"}", GQ_E_USAGE,
            "not a gpuqual snapshot", NULL);
    refused("missing.json", NULL, GQ_E_IO, "cannot read snapshot", "No such file");
    refused("", NULL, GQ_E_IO, "cannot read snapshot", "directory"); /* tmpdir itself */

    struct {
        const char *name;
        void (*edit)(json_t *);
        const char *want1, *want2;
    } cases[] = {
        {"newer.json", newer, "newer than this gpuqual reads", NULL},
        {"foreign.json", foreign, "not a gpuqual snapshot", "\"run\""},
        {"no-tool.json", no_tool, "not a gpuqual snapshot", NULL},
        {"no-schema.json", no_schema, "'schema_version' is missing", NULL},
        {"no-name.json", no_name, "'gpus[1].name' is missing", NULL},
        {"bad-cores.json", bad_cores, "'host.cores' must be an integer", NULL},
        {"no-gpus.json", no_gpus, "has 0 GPUs", "expected 1 to 64"},
        {"too-many.json", too_many, "has 65 GPUs", "expected 1 to 64"},
        {"short-matrix.json", short_matrix, "'links.level'", "2 rows"},
        {"bad-level.json", bad_level, "'links.level[0][1]'", "one of X, NV"},
        {"forward-parent.json", forward_parent, "'pci[1].parent'", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = edited(cases[i].edit);
        refused(cases[i].name, text, GQ_E_USAGE, cases[i].want1, cases[i].want2);
        free(text);
    }
}

/* Set the value at a dotted path of the synthetic snapshot ("gpus.0.name":
 * a number indexes an array) to the JSON text v. */
static char *edited_at(const char *path, const char *v)
{
    json_error_t je;
    json_t *root = json_load_file(SYNTH, 0, &je);
    assert_non_null(root);
    json_t *val = json_loads(v, JSON_DECODE_ANY, &je);
    assert_non_null(val);
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *cur = root;
    char *save = NULL, *tok = strtok_r(buf, ".", &save);
    while (tok) {
        char *next = strtok_r(NULL, ".", &save);
        bool idx = tok[0] >= '0' && tok[0] <= '9';
        if (!next) {
            if (idx)
                assert_int_equal(json_array_set_new(cur, (size_t)atoi(tok), val), 0);
            else
                assert_int_equal(json_object_set_new(cur, tok, val), 0);
        } else {
            cur = idx ? json_array_get(cur, (size_t)atoi(tok)) : json_object_get(cur, tok);
            assert_non_null(cur);
        }
        tok = next;
    }
    char *s = json_dumps(root, JSON_INDENT(2));
    json_decref(root);
    return s;
}

/* Each field's refusal, by its whole message: the field's full name, and
 * the range or type it must have (bounds just outside). */
static void test_refused_fields(void **state)
{
    (void)state;
    static const char long64[] = "\"0123456789012345678901234567890123456789012345678901234567890123\"";
    static const char long96[] =
        "\"012345678901234567890123456789012345678901234567890123456789012345678901234567890"
        "123456789012345\"";
    static const struct {
        const char *path, *value, *want;
    } cases[] = {
        {"host", "5", "field 'host' must be an object"},
        {"host.vm", "\"yes\"", "field 'host.vm' must be true or false"},
        {"host.nvml", "1", "field 'host.nvml' must be true or false"},
        {"host.hostname", long64, "field 'host.hostname' is longer than 63 characters"},
        {"host.hostname", "7", "field 'host.hostname' must be a string"},
        {"host.sockets", "0", "field 'host.sockets' is 0, expected 1..1024"},
        {"host.sockets", "1025", "field 'host.sockets' is 1025, expected 1..1024"},
        {"host.numa_nodes", "null", "field 'host.numa_nodes' must be an integer"},
        {"host.cuda_driver_version", "-1", "field 'host.cuda_driver_version' is -1, expected 0..1000000"},
        {"host.cuda_runtime_version", "1000001",
         "field 'host.cuda_runtime_version' is 1000001, expected 0..1000000"},
        {"gpus.0", "5", "field 'gpus[0]' must be an object"},
        {"gpus.0.mem_bytes", "0", "field 'gpus[0].mem_bytes' must be a positive integer or null"},
        {"gpus.1.mem_bytes", "\"80G\"", "field 'gpus[1].mem_bytes' must be a positive integer or null"},
        {"gpus.0.name", long96, "field 'gpus[0].name' is longer than 95 characters"},
        {"gpus.1.pcie_gen_cur", "7", "field 'gpus[1].pcie_gen_cur' is 7, expected 1..6"},
        {"gpus.1.pcie_width_max", "33", "field 'gpus[1].pcie_width_max' is 33, expected 1..32"},
        {"gpus.0.cc_major", "1.5", "field 'gpus[0].cc_major' must be an integer or null"},
        {"gpus.0.pcie_gbps", "-1", "field 'gpus[0].pcie_gbps' must be a number >= 0 or null"},
        {"gpus.0.power_limit_w", "\"700\"", "field 'gpus[0].power_limit_w' must be a number >= 0 or null"},
        {"gpus.0.numa_node", "4096", "field 'gpus[0].numa_node' is 4096, expected 0..4095"},
        {"gpus", "{}", "field 'gpus' must be an array"},
        {"links", "[]", "field 'links' must be an object"},
        {"links.nvlinks", "5", "field 'links.nvlinks' must be an array of 2 rows (one per GPU)"},
        {"links.pci_level.1", "[\"X\"]", "field 'links.pci_level[1]' must be an array of 2 values"},
        {"links.p2p_cuda.0.1", "\"yes\"", "field 'links.p2p_cuda[0][1]' must be true, false or null"},
        {"links.level.0.1", "5",
         "field 'links.level[0][1]' must be one of X, NV, PIX, PXB, PHB, NODE, SYS or null"},
        {"links.pci_level.1.0", "true",
         "field 'links.pci_level[1][0]' must be one of X, NV, PIX, PXB, PHB, NODE, SYS or null"},
        {"pci", "{}", "field 'pci' must be an array"},
        {"pci.0", "5", "field 'pci[0]' must be an object"},
        {"pci.0.kind", "\"switch\"", "field 'pci[0].kind' must be one of hostbridge, bridge, gpu, other"},
        {"warnings", "5", "field 'warnings' must be an array of strings"},
        {"warnings", "[\"a\", 5]", "field 'warnings[1]' must be a string"},
        {"schema_version", "0", "field 'schema_version' must be an integer >= 1"},
        {"schema_version", "\"1\"", "field 'schema_version' must be an integer >= 1"},
        /* identity strings and modes, link matrices, PCIe tree (issue 30) */
        {"gpus.0.serial", "5", "field 'gpus[0].serial' must be a string of at most 63 characters or null"},
        {"gpus.1.vbios", long64, "field 'gpus[1].vbios' must be a string of at most 63 characters or null"},
        {"gpus.0.ecc_mode", "\"on\"",
         "field 'gpus[0].ecc_mode' must be \"enabled\", \"disabled\", \"not supported\" or \"unknown\""},
        {"links.nvlinks.0.1", "-1", "field 'links.nvlinks[0][1]' must be an integer >= 0 or null"},
        {"links.nvlinks.1.0", "1025", "field 'links.nvlinks[1][0]' must be an integer >= 0 or null"},
        {"links.p2p_nvml.1.0", "\"YES\"",
         "field 'links.p2p_nvml[1][0]' must be one of OK, CNS, GNS, TNS, NS, DS or null"},
        {"pci.0.parent", "0", "field 'pci[0].parent' must be null: the first node is a root"},
        {"pci.1.gpu", "null", "field 'pci[1].gpu' must be a GPU index exactly when kind is \"gpu\""},
        {"pci.0.gpu", "1", "field 'pci[0].gpu' must be a GPU index exactly when kind is \"gpu\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = edited_at(cases[i].path, cases[i].value);
        char name[64];
        snprintf(name, sizeof name, "field-%zu.json", i);
        refused(name, text, GQ_E_USAGE, cases[i].want, NULL);
        free(text);
    }
    /* a PCIe tree of 257 nodes; the most is 256 */
    char many[4 * 257 + 8] = "[";
    for (int i = 0; i < 257; i++)
        strcat(many, i ? ",{}" : "{}");
    strcat(many, "]");
    char *text = edited_at("pci", many);
    refused("pci-257.json", text, GQ_E_USAGE, "field 'pci' has 257 nodes, at most 256 are allowed", NULL);
    free(text);
    /* a topology that is no object */
    json_t *five = json_integer(5);
    gq_err e = {0};
    assert_int_equal(gq_topo_from_json(five, &A, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "the topology must be a JSON object");
    json_decref(five);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gq-snap-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

/* A snapshot that is no regular file (a FIFO, a pipe from a process) has no
 * size to check first: more than 16 MiB read from it is refused all the same,
 * with the line that says so, and no topology. */
static void test_oversize_fifo(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/big.fifo", tmpdir);
    assert_int_equal(mkfifo(path, 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(path, O_WRONLY);
        static char sp[1 << 16];
        memset(sp, ' ', sizeof sp);
        for (int i = 0; fd >= 0 && i < 17 * 16; i++)
            if (write(fd, sp, sizeof sp) < 0)
                break;
        _exit(0);
    }
    gq_topo *t = malloc(sizeof *t);
    assert_non_null(t);
    gq_err e = {0};
    int rc = gq_snapshot_load(path, t, &e);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_int_equal(rc, GQ_E_USAGE);
    char want[400];
    snprintf(want, sizeof want, "snapshot '%s' holds more than 16 MiB; is it the right file?", path);
    assert_string_equal(e.msg, want);
    free(t);
    unlink(path);
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_json), cmocka_unit_test(test_round_trip_file),
        cmocka_unit_test(test_synthetic_h200),  cmocka_unit_test(test_refused),
        cmocka_unit_test(test_refused_fields),  cmocka_unit_test(test_oversize_fifo),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
