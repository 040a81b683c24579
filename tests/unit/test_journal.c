/* The journal: every finished record is one flushed JSON line; reading it
 * back survives a crash mid-write (a truncated last line); a header names
 * the run; nothing but an empty file or a device is ever appended to, except
 * by resume. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

#include <jansson.h>

#include <cmocka.h>

#include "core/interrupt.h"
#include "measure/journal.h"

static char dir[64];
static char path[128];

static int setup(void **state)
{
    snprintf(dir, sizeof dir, "/tmp/gq-journal-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/j.jsonl", dir);
    return 0;
}

static int teardown(void **state)
{
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static gq_record rec(int i)
{
    gq_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.test, sizeof r.test, "host_to_device_memcpy_ce");
    r.method = GQ_METHOD_CE;
    r.src = (gq_endpoint){GQ_EP_HOST, 0};
    r.dst = (gq_endpoint){GQ_EP_GPU, i};
    r.direction = GQ_DIR_H2D;
    r.dirs = 1u << GQ_DIR_H2D;
    r.bytes = 512 * 1024 * 1024ull;
    r.rounds = 3;
    double v[] = {55.1 + i, 55.3 + i, 55.2 + i};
    memcpy(r.samples, v, sizeof v);
    r.value = gq_stat_compute(v, 3);
    r.valid = i != 2;
    r.flags = i == 2 ? GQ_FLAG_IMPOSSIBLE : 0;
    if (i == 2)
        snprintf(r.error, sizeof r.error, "impossible: above 31.5 GB/s");
    r.exec_gpu = i;
    r.flow_tag = 0;
    r.overlap = -1;
    r.group = i;
    r.host_numa_req = 0;
    r.host_numa_actual = 0;
    r.window_s = 0.1;
    r.timestamp = 1764470000.25 + i;
    r.simulated = true;
    return r;
}

static void write_n(int n)
{
    gq_journal j;
    unlink(path);
    assert_int_equal(gq_journal_open(&j, path, NULL, NULL), GQ_OK);
    for (int i = 0; i < n; i++) {
        gq_record r = rec(i);
        assert_int_equal(gq_journal_append(&j, &r, NULL), GQ_OK);
    }
    assert_int_equal(j.written, n);
    gq_journal_close(&j);
}

static void test_write_read_back(void **state)
{
    write_n(3);
    gq_recordset rs = {0};
    bool trunc = true;
    assert_int_equal(gq_journal_read(path, &rs, &trunc, NULL), GQ_OK);
    assert_false(trunc);
    assert_int_equal(rs.n, 3);
    for (int i = 0; i < 3; i++) {
        gq_record want = rec(i);
        const gq_record *r = &rs.v[i];
        assert_string_equal(r->test, want.test);
        assert_int_equal(r->dst.index, i);
        assert_int_equal(r->bytes, want.bytes);
        assert_int_equal(r->rounds, 3);
        assert_true(fabs(r->value.median - want.value.median) < 1e-9);
        assert_true(fabs(r->samples[2] - want.samples[2]) < 1e-9);
        assert_int_equal(r->valid, want.valid);
        assert_int_equal(r->flags, want.flags);
        assert_true(fabs(r->timestamp - want.timestamp) < 1e-3);
        assert_int_equal(r->exec_gpu, i);
        assert_true(r->simulated);
    }
    assert_string_equal(rs.v[2].error, "impossible: above 31.5 GB/s");
    gq_records_free(&rs);
}

static void append_raw(const char *text)
{
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void slurp(const char *p, char *buf, size_t cap)
{
    buf[0] = 0;
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
}

/* The header names the run, the machine and the shape options; every line
 * carries the run id. */
static void test_header_identity(void **state)
{
    static gq_topo topo;
    memset(&topo, 0, sizeof topo);
    topo.ngpu = 1;
    snprintf(topo.hostname, sizeof topo.hostname, "node7");
    snprintf(topo.driver_version, sizeof topo.driver_version, "580.1");
    snprintf(topo.gpu[0].uuid, sizeof topo.gpu[0].uuid, "GPU-abc");
    snprintf(topo.gpu[0].name, sizeof topo.gpu[0].name, "H200");
    json_t *opts = json_pack("{s:i,s:i}", "buffer_size", 1024, "rounds", 3);
    gq_journal_id id = {.command = "run", .version = "9.9", .git = "g", .options = opts, .topo = &topo};
    gq_journal j;
    assert_int_equal(gq_journal_open(&j, path, &id, NULL), GQ_OK);
    gq_record r = rec(0);
    assert_int_equal(gq_journal_append(&j, &r, NULL), GQ_OK);
    gq_journal_close(&j);
    gq_err err = {0};
    json_t *h = gq_journal_header(path, &err);
    assert_non_null(h);
    assert_string_equal(json_string_value(json_object_get(h, "magic")), "gpuqual-journal");
    assert_string_equal(json_string_value(json_object_get(h, "run_id")), j.run_id);
    assert_int_equal(strlen(j.run_id), 25); /* YYYYMMDDTHHMMSSZ-xxxxxxxx */
    assert_int_equal(j.run_id[16], '-');
    assert_string_equal(json_string_value(json_object_get(h, "command")), "run");
    json_t *m = json_object_get(h, "machine");
    assert_string_equal(json_string_value(json_object_get(m, "hostname")), "node7");
    assert_string_equal(json_string_value(json_object_get(m, "driver")), "580.1");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(json_object_get(m, "gpus"), 0), "uuid")), "GPU-abc");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(h, "options"), "rounds")), 3);
    json_decref(h);
    char buf[8192], want[64];
    slurp(path, buf, sizeof buf);
    snprintf(want, sizeof want, "\"run_id\":\"%s\",\"record\"", j.run_id);
    assert_non_null(strstr(buf, want));
    json_decref(opts);
}

/* gpuqual never appends to, truncates or rewrites a file that holds
 * anything: a foreign file, another run's journal, a schema-1 journal. */
static void test_refuses_existing_files(void **state)
{
    static const char foreign[] = "\x7f"
                                  "ELF binary\nwith an unterminated last line";
    append_raw(foreign);
    gq_journal j;
    gq_err err = {0};
    char buf[4096];
    assert_int_equal(gq_journal_open(&j, path, NULL, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "not a gpuqual journal"));
    slurp(path, buf, sizeof buf);
    assert_string_equal(buf, foreign);
    write_n(1);
    slurp(path, buf, sizeof buf);
    assert_int_equal(gq_journal_open(&j, path, NULL, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "--resume"));
    char after[4096];
    slurp(path, after, sizeof after);
    assert_string_equal(after, buf);
    unlink(path);
    /* a stress journal cannot be continued: a new name, not --resume */
    gq_journal_id sid = {.command = "stress"};
    assert_int_equal(gq_journal_open(&j, path, &sid, NULL), GQ_OK);
    gq_journal_close(&j);
    slurp(path, buf, sizeof buf);
    assert_int_equal(gq_journal_open(&j, path, &sid, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "holds a 'stress' run"));
    assert_null(strstr(err.msg, "--resume"));
    slurp(path, after, sizeof after);
    assert_string_equal(after, buf);
    unlink(path);
    append_raw("{\"journal\":\"gpuqual\",\"schema_version\":1,\"record\":{\"test\":\"x\"}}\n");
    assert_int_equal(gq_journal_open(&j, path, NULL, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "earlier gpuqual"));
    /* an empty file is used */
    unlink(path);
    append_raw("");
    assert_int_equal(gq_journal_open(&j, path, NULL, &err), GQ_OK);
    gq_journal_close(&j);
}

/* Devices: /dev/null works, /dev/full fails at once with exit 1's status. */
static void test_devices(void **state)
{
    gq_journal j;
    gq_err err = {0};
    assert_int_equal(gq_journal_open(&j, "/dev/null", NULL, &err), GQ_OK);
    gq_record r = rec(0);
    assert_int_equal(gq_journal_append(&j, &r, &err), GQ_OK);
    gq_journal_close(&j);
    assert_int_equal(gq_journal_open(&j, "/dev/full", NULL, &err), GQ_E_FAIL);
    assert_non_null(strstr(err.msg, "No space"));
    assert_null(j.f);
}

/* Resume: the same identity continues, re-using only finished items; a
 * different one is refused naming the field. */
static void test_resume(void **state)
{
    json_t *opts = json_pack("{s:i,s:[s]}", "rounds", 3, "tests", "a");
    gq_journal_id id = {.command = "run", .options = opts};
    gq_journal j;
    assert_int_equal(gq_journal_open(&j, path, &id, NULL), GQ_OK);
    for (int k = 0; k < 3; k++) {
        j.item = k;
        gq_record r = rec(k == 2 ? 0 : k);
        if (k == 1)
            r.flags |= GQ_FLAG_INCOMPLETE; /* cut short by Ctrl-C: measured again */
        assert_int_equal(gq_journal_append(&j, &r, NULL), GQ_OK);
        json_t *st = json_pack("{s:s,s:s,s:i}", "step", "item", "status", "done", "item", k);
        if (k < 2) /* item 2 never finished */
            assert_int_equal(gq_journal_event(&j, "step", st, NULL), GQ_OK);
        json_decref(st);
    }
    gq_journal_close(&j);
    append_raw("{\"journal\":\"gpuqual\",\"schema_version\":1,\"run_id\":\"x\",\"record\":{\"te");
    char run_id[32];
    snprintf(run_id, sizeof run_id, "%s", j.run_id);
    gq_recordset done = {0};
    int *item = NULL;
    gq_err err = {0};
    assert_int_equal(gq_journal_resume(&j, path, &id, &done, &item, &err), GQ_OK);
    assert_int_equal(done.n, 1);
    assert_int_equal(item[0], 0);
    assert_string_equal(j.run_id, run_id);
    gq_record r = rec(1);
    assert_int_equal(gq_journal_append(&j, &r, NULL), GQ_OK); /* the cut line was dropped first */
    gq_journal_close(&j);
    gq_records_free(&done);
    free(item);
    bool trunc = true;
    assert_int_equal(gq_journal_read(path, &done, &trunc, NULL), GQ_OK);
    assert_false(trunc);
    /* items 0 and 1 and the record appended; item 2's unfinished attempt is
     * left out where the resume began (the resumed run measures it again) */
    assert_int_equal(done.n, 3);
    gq_records_free(&done);
    json_object_set_new(opts, "rounds", json_integer(5));
    assert_int_equal(gq_journal_resume(&j, path, &id, &done, &item, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "options.rounds is 3, this run's is 5"));
    assert_null(j.f);
    json_decref(opts);
}

/* Sets whether this process holds CAP_DAC_OVERRIDE in its effective set
 * (root's way past file modes); false when it never held it. It stays in the
 * permitted set, so it can be raised again. */
static bool dac_override(bool on)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d) != 0)
        return false;
    bool had = d[0].effective & (1u << CAP_DAC_OVERRIDE);
    if (on && !(d[0].permitted & (1u << CAP_DAC_OVERRIDE)))
        return had;
    if (on)
        d[0].effective |= 1u << CAP_DAC_OVERRIDE;
    else
        d[0].effective &= ~(1u << CAP_DAC_OVERRIDE);
    assert_int_equal(syscall(SYS_capset, &h, d), 0);
    return had;
}

/* A journal that can be read but not written (mode 0444; root without
 * CAP_DAC_OVERRIDE, so that the test means the same as root and as a user)
 * is refused by --resume with the reason, and left unchanged. */
static void test_resume_read_only(void **state)
{
    json_t *opts = json_pack("{s:i}", "rounds", 3);
    gq_journal_id id = {.command = "run", .options = opts};
    gq_journal j;
    assert_int_equal(gq_journal_open(&j, path, &id, NULL), GQ_OK);
    j.item = 0;
    gq_record r = rec(0);
    assert_int_equal(gq_journal_append(&j, &r, NULL), GQ_OK);
    gq_journal_close(&j);
    char before[4096], after[4096];
    slurp(path, before, sizeof before);
    assert_int_equal(chmod(path, 0444), 0);
    bool had = dac_override(false);
    gq_recordset done = {0};
    int *item = NULL;
    gq_err err = {0};
    int rc = gq_journal_resume(&j, path, &id, &done, &item, &err);
    if (had)
        dac_override(true);
    assert_int_equal(rc, GQ_E_IO);
    char want[300];
    snprintf(want, sizeof want, "--resume: cannot open journal '%s': Permission denied", path);
    assert_string_equal(err.msg, want);
    assert_null(j.f);
    slurp(path, after, sizeof after);
    assert_string_equal(after, before);
    gq_records_free(&done);
    free(item);
    json_decref(opts);
}

/* A finished measurement whose aggregate the engine refused (windows that
 * overlapped too little) is measured again on resume, like a failed one; on
 * one H200 a resumed card re-used such a measurement and kept its WARN. */
static void test_resume_remeasures_overlap_refusals(void **state)
{
    (void)state;
    json_t *opts = json_pack("{s:i}", "rounds", 3);
    gq_journal_id id = {.command = "run", .options = opts};
    gq_journal j;
    unlink(path);
    assert_int_equal(gq_journal_open(&j, path, &id, NULL), GQ_OK);
    for (int k = 0; k < 2; k++) {
        j.item = k;
        gq_record flow = rec(k), agg = rec(k);
        agg.aggregate = true;
        if (k == 1) {
            agg.flags |= GQ_FLAG_OVERLAP;
            agg.valid = false;
        }
        assert_int_equal(gq_journal_append(&j, &flow, NULL), GQ_OK);
        assert_int_equal(gq_journal_append(&j, &agg, NULL), GQ_OK);
        json_t *st = json_pack("{s:s,s:s,s:i}", "step", "item", "status", "done", "item", k);
        assert_int_equal(gq_journal_event(&j, "step", st, NULL), GQ_OK);
        json_decref(st);
    }
    gq_journal_close(&j);
    gq_recordset done = {0};
    int *item = NULL;
    gq_err err = {0};
    assert_int_equal(gq_journal_resume(&j, path, &id, &done, &item, &err), GQ_OK);
    assert_int_equal(done.n, 2); /* item 0's flow and aggregate; nothing of item 1 */
    assert_int_equal(item[0], 0);
    assert_int_equal(item[1], 0);
    gq_journal_close(&j);
    gq_records_free(&done);
    free(item);
    json_decref(opts);
}

/* A finished measurement that the clean room flagged contaminated (something
 * else used the GPU while it ran) is measured again on resume, never kept: a
 * resumed card must not carry a figure of a busy GPU. Its clean neighbour in
 * the same item is kept with it only when the whole item is clean. */
static void test_resume_remeasures_contaminated(void **state)
{
    (void)state;
    json_t *opts = json_pack("{s:i}", "rounds", 3);
    gq_journal_id id = {.command = "run", .options = opts};
    gq_journal j;
    unlink(path);
    assert_int_equal(gq_journal_open(&j, path, &id, NULL), GQ_OK);
    for (int k = 0; k < 3; k++) {
        j.item = k;
        gq_record r = rec(k == 2 ? 0 : k);
        if (k == 1) {
            assert_int_equal(
                gq_record_contaminate(&r, "process", 1, 4242, "gpu_burn", "compute process 4242"), GQ_OK);
            assert_true(r.flags & GQ_FLAG_CONTAMINATED);
        }
        assert_int_equal(gq_journal_append(&j, &r, NULL), GQ_OK);
        json_t *st = json_pack("{s:s,s:s,s:i}", "step", "item", "status", "done", "item", k);
        assert_int_equal(gq_journal_event(&j, "step", st, NULL), GQ_OK);
        json_decref(st);
    }
    gq_journal_close(&j);
    gq_recordset done = {0};
    int *item = NULL;
    gq_err err = {0};
    assert_int_equal(gq_journal_resume(&j, path, &id, &done, &item, &err), GQ_OK);
    assert_int_equal(done.n, 2); /* items 0 and 2; item 1 is measured again */
    assert_int_equal(item[0], 0);
    assert_int_equal(item[1], 2);
    for (int i = 0; i < done.n; i++)
        assert_false(done.v[i].flags & GQ_FLAG_CONTAMINATED);
    gq_journal_close(&j);
    gq_records_free(&done);
    free(item);
    /* the journal itself keeps the flagged record (report shows it) */
    assert_int_equal(gq_journal_read(path, &done, NULL, NULL), GQ_OK);
    assert_int_equal(done.n, 3);
    assert_true(done.v[1].flags & GQ_FLAG_CONTAMINATED);
    assert_non_null(strstr(done.v[1].contaminated, "gpu_burn"));
    gq_records_free(&done);
    json_decref(opts);
}

/* Resume keeps the last finished line of each named step (the card's
 * stress run carries its section there): a step that did not finish, or an
 * item's mark, is not one; and a journal of another layout is refused. */
static void test_resume_steps_and_layout(void **state)
{
    json_t *opts = json_pack("{s:i}", "rounds", 3);
    gq_journal_id id = {.command = "card", .options = opts, .layout = "card-2"};
    gq_journal j;
    assert_int_equal(gq_journal_open(&j, path, &id, NULL), GQ_OK);
    const char *lines[][2] = {{"stress", "done"}, {"stress", "started"}, {"item", "done"}, {"other", "done"}};
    for (int i = 0; i < 4; i++) {
        json_t *st = json_pack("{s:s,s:s,s:i}", "step", lines[i][0], "status", lines[i][1], "n", i);
        if (!strcmp(lines[i][0], "item"))
            json_object_set_new(st, "item", json_integer(0));
        assert_int_equal(gq_journal_event(&j, "step", st, NULL), GQ_OK);
        json_decref(st);
    }
    gq_journal_close(&j);
    assert_null(j.done_steps);
    gq_recordset done = {0};
    int *item = NULL;
    gq_err err = {0};
    assert_int_equal(gq_journal_resume(&j, path, &id, &done, &item, &err), GQ_OK);
    assert_int_equal(json_object_size(j.done_steps), 2);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j.done_steps, "stress"), "n")), 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j.done_steps, "other"), "n")), 3);
    gq_journal_close(&j);
    assert_null(j.done_steps);
    free(item);
    item = NULL;
    id.layout = NULL;
    assert_int_equal(gq_journal_resume(&j, path, &id, &done, &item, &err), GQ_E_USAGE);
    assert_non_null(
        strstr(err.msg, "numbers the measurements differently (layout \"card-2\", this one's absent)"));
    assert_null(j.f);
    assert_null(j.done_steps);
    free(item);
    gq_records_free(&done);
    json_decref(opts);
}

static void test_bad_line_names_its_number(void **state)
{
    write_n(1);
    append_raw("this is not json\n");
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_journal_read(path, &rs, NULL, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "line 3"));
    gq_records_free(&rs);
}

static void test_foreign_and_newer_lines(void **state)
{
    append_raw("{\"journal\":\"other\",\"schema_version\":1,\"record\":{}}\n");
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_journal_read(path, &rs, NULL, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "not a gpuqual journal line"));
    unlink(path);
    append_raw("{\"journal\":\"gpuqual\",\"schema_version\":99,\"record\":{}}\n");
    assert_int_equal(gq_journal_read(path, &rs, NULL, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "99"));
    unlink(path);
    append_raw("{\"journal\":\"gpuqual\",\"schema_version\":1,\"record\":{\"test\":\"x\"}}\n");
    assert_int_equal(gq_journal_read(path, &rs, NULL, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "method"));
    gq_records_free(&rs);
}

/* The automatic journal: mkstemp under $XDG_STATE_HOME/gpuqual (else
 * $TMPDIR), mode 0600, one run per file. */
static void test_default_paths(void **state)
{
    setenv("TMPDIR", dir, 1);
    unsetenv("XDG_STATE_HOME");
    gq_journal j, k;
    assert_int_equal(gq_journal_open(&j, NULL, NULL, NULL), GQ_OK);
    assert_int_equal(gq_journal_open(&k, NULL, NULL, NULL), GQ_OK);
    assert_true(!strncmp(j.path, dir, strlen(dir)));
    assert_non_null(strstr(j.path, "gpuqual-journal-"));
    assert_non_null(strstr(j.path, ".jsonl"));
    assert_string_not_equal(j.path, k.path);
    struct stat st;
    assert_int_equal(stat(j.path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    gq_journal_close(&j);
    gq_journal_close(&k);
    char state_dir[128];
    snprintf(state_dir, sizeof state_dir, "%s/state", dir);
    assert_int_equal(mkdir(state_dir, 0700), 0);
    setenv("XDG_STATE_HOME", state_dir, 1);
    assert_int_equal(gq_journal_open(&j, NULL, NULL, NULL), GQ_OK);
    char want[160];
    snprintf(want, sizeof want, "%s/gpuqual/gpuqual-journal-", state_dir);
    assert_true(!strncmp(j.path, want, strlen(want)));
    gq_journal_close(&j);
    unsetenv("XDG_STATE_HOME");
    unsetenv("TMPDIR");
}

static void test_missing_file(void **state)
{
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_journal_read("/nonexistent/dir/j.jsonl", &rs, NULL, &err), GQ_E_IO);
    gq_journal j;
    assert_int_equal(gq_journal_open(&j, "/nonexistent/dir/j.jsonl", NULL, &err), GQ_E_IO);
}

/* Every line is in the file as soon as it is appended (a kill -9 then loses
 * nothing), while the fsyncs are grouped: records and items' marks wait for
 * the end of the step (gq_journal_sync) or a named step's line. */
static void test_grouped_sync(void **state)
{
    (void)state;
    gq_journal j;
    unlink(path);
    assert_int_equal(gq_journal_open(&j, path, NULL, NULL), GQ_OK);
    assert_int_equal(j.syncs, 1); /* the header */
    for (int k = 0; k < 200; k++) {
        j.item = k;
        gq_record r = rec(k % 2);
        r.timestamp += k; /* each a measurement of its own */
        assert_int_equal(gq_journal_append(&j, &r, NULL), GQ_OK);
        json_t *st = json_pack("{s:s,s:s,s:i}", "step", "item", "status", "done", "item", k);
        assert_int_equal(gq_journal_event(&j, "step", st, NULL), GQ_OK);
        json_decref(st);
        /* read back by another handle: the line is already in the file */
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        int lines = 0, ch;
        while ((ch = fgetc(f)) != EOF)
            lines += ch == '\n';
        fclose(f);
        assert_int_equal(lines, 1 + 2 * (k + 1));
    }
    /* 400 lines in well under a second: at most one sync by the clock */
    assert_true(j.syncs <= 2);
    int before = j.syncs;
    assert_int_equal(gq_journal_sync(&j, NULL), GQ_OK); /* the end of the step */
    assert_int_equal(j.syncs, before + 1);
    assert_int_equal(gq_journal_sync(&j, NULL), GQ_OK); /* nothing new: no fsync */
    assert_int_equal(j.syncs, before + 1);
    json_t *st = json_pack("{s:s,s:s}", "step", "stress", "status", "done");
    assert_int_equal(gq_journal_event(&j, "step", st, NULL), GQ_OK); /* a named step: at once */
    json_decref(st);
    assert_int_equal(j.syncs, before + 2);
    gq_journal_close(&j);
    gq_recordset rs = {0};
    assert_int_equal(gq_journal_read(path, &rs, NULL, NULL), GQ_OK);
    assert_int_equal(rs.n, 200);
    gq_records_free(&rs);
}

/* Line n (1-based) of the journal, without its newline. */
static char *line_of(int n)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[8192];
    char *got = NULL;
    for (int i = 1; fgets(buf, sizeof buf, f); i++)
        if (i == n) {
            buf[strcspn(buf, "\n")] = 0;
            got = buf;
            break;
        }
    fclose(f);
    assert_non_null(got);
    return got;
}

static void read_refused(const char *part1, const char *part2)
{
    gq_recordset rs = {0};
    bool trunc = false;
    gq_err err = {0};
    assert_int_equal(gq_journal_read(path, &rs, &trunc, &err), GQ_E_USAGE);
    if (!strstr(err.msg, part1) || !strstr(err.msg, part2))
        fail_msg("message '%s' lacks '%s' or '%s'", err.msg, part1, part2);
    gq_records_free(&rs);
}

/* A long journal (600 records: the reader's table of seen records grows
 * past its first 1024 slots) is read whole, and a repeated line after the
 * growth is still found; a line without the run's id, of another run, or of
 * no known kind is refused by its line number. */
static void test_reader_long_and_foreign_lines(void **state)
{
    (void)state;
    gq_journal j;
    unlink(path);
    assert_int_equal(gq_journal_open(&j, path, NULL, NULL), GQ_OK);
    for (int i = 0; i < 600; i++) {
        gq_record r = rec(i % 4);
        r.bytes = (uint64_t)(i + 1) << 20; /* each a measurement of its own */
        r.group = i;
        assert_int_equal(gq_journal_append(&j, &r, NULL), GQ_OK);
    }
    gq_journal_close(&j);
    gq_recordset rs = {0};
    bool trunc = true;
    gq_err err = {0};
    if (gq_journal_read(path, &rs, &trunc, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(rs.n, 600);
    assert_true(rs.v[599].bytes == 600ull << 20);
    gq_records_free(&rs);
    char dup[8192];
    snprintf(dup, sizeof dup, "%s\n", line_of(5)); /* record 3 */
    append_raw(dup);
    read_refused("line 602: the same measurement as line 5", "");

    write_n(2);
    json_error_t je;
    json_t *l = json_loads(line_of(2), 0, &je);
    assert_non_null(l);
    char rid[128];
    snprintf(rid, sizeof rid, "%s", json_string_value(json_object_get(l, "run_id")));
    assert_true(rid[0]);
    json_object_del(l, "run_id");
    char *t = json_dumps(l, JSON_COMPACT);
    snprintf(dup, sizeof dup, "%s\n", t);
    free(t);
    append_raw(dup);
    read_refused("line 4: no run_id; every line of a journal names the run of its header", rid);

    write_n(2);
    json_object_set_new(l, "run_id", json_string("another-run"));
    t = json_dumps(l, JSON_COMPACT);
    snprintf(dup, sizeof dup, "%s\n", t);
    free(t);
    append_raw(dup);
    read_refused("line 4: a line of run another-run in the journal of run", "give each run its own journal");
    json_decref(l);

    write_n(1);
    l = json_loads(line_of(2), 0, &je);
    snprintf(dup, sizeof dup, "{\"run_id\": \"%s\", \"other\": 1}\n",
             json_string_value(json_object_get(l, "run_id")));
    json_decref(l);
    append_raw(dup);
    read_refused("line 3 is not a gpuqual journal line", "");
}

/* A journal of 5000 records (the table of seen records grows twice past
 * 1024 slots, each time to a power of two: it is indexed with a mask) is read
 * whole, and a repeated line at its end is still found. A table grown to a
 * size that is not a power of two loops in its probe; ctest's TIMEOUT for
 * this program (CMakeLists.txt) makes that a failure. */
static void test_reader_very_long(void **state)
{
    (void)state;
    gq_journal j;
    unlink(path);
    assert_int_equal(gq_journal_open(&j, path, NULL, NULL), GQ_OK);
    for (int i = 0; i < 5000; i++) {
        gq_record r = rec(i % 4);
        r.bytes = (uint64_t)(i + 1) << 20;
        r.group = i;
        assert_int_equal(gq_journal_append(&j, &r, NULL), GQ_OK);
    }
    gq_journal_close(&j);
    gq_recordset rs = {0};
    bool trunc = true;
    gq_err err = {0};
    if (gq_journal_read(path, &rs, &trunc, &err))
        fail_msg("%s", err.msg);
    assert_false(trunc);
    assert_int_equal(rs.n, 5000);
    assert_true(rs.v[4999].bytes == 5000ull << 20);
    gq_records_free(&rs);
    char dup[8192];
    snprintf(dup, sizeof dup, "%s\n", line_of(4000)); /* record 3998 */
    append_raw(dup);
    read_refused("line 5002: the same measurement as line 4000", "");
}

/* The refusals no other test reaches: a state directory whose gpuqual/
 * cannot be made (the journal goes to $TMPDIR), no directory to make one
 * in, a schema-1 journal's header, a missing or non-regular journal to
 * resume, a directory to read, a line that is no journal line, reading
 * interrupted, and an item mark with no journal. */
static void test_more_refusals(void **state)
{
    (void)state;
    gq_err err = {0};
    gq_journal j;
    setenv("TMPDIR", dir, 1);
    setenv("XDG_STATE_HOME", "/proc", 1); /* /proc/gpuqual cannot be made */
    assert_int_equal(gq_journal_open(&j, NULL, NULL, &err), GQ_OK);
    char want[512];
    snprintf(want, sizeof want, "%s/gpuqual-journal-", dir);
    assert_true(!strncmp(j.path, want, strlen(want)));
    gq_journal_close(&j);
    unlink(j.path);
    unsetenv("XDG_STATE_HOME");
    setenv("TMPDIR", "/nonexistent/gq", 1);
    assert_int_equal(gq_journal_open(&j, NULL, NULL, &err), GQ_E_IO);
    assert_string_equal(err.msg, "cannot create a journal in '/nonexistent/gq': No such file or directory");
    unsetenv("TMPDIR");

    /* a schema-1 journal: records, no header */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"journal\":\"gpuqual\",\"schema_version\":1,\"record\":{}}\n", f);
    fclose(f);
    assert_null(gq_journal_header(path, &err));
    snprintf(want, sizeof want, "journal '%s' was written by an earlier gpuqual (schema 1, no header)", path);
    assert_string_equal(err.msg, want);
    assert_int_equal(err.code, GQ_E_UNSUPP);
    assert_null(gq_journal_header("/nonexistent/j.jsonl", &err));
    assert_string_equal(err.msg, "cannot read journal '/nonexistent/j.jsonl': No such file or directory");
    assert_int_equal(err.code, GQ_E_IO);

    gq_recordset rs = {0};
    int *items = NULL;
    assert_int_equal(gq_journal_resume(&j, "/nonexistent/j.jsonl", NULL, &rs, &items, &err), GQ_E_IO);
    assert_string_equal(err.msg,
                        "--resume: cannot read journal '/nonexistent/j.jsonl': No such file or directory");
    assert_int_equal(gq_journal_resume(&j, dir, NULL, &rs, &items, &err), GQ_E_IO);
    snprintf(want, sizeof want,
             "--resume: '%s' is not a regular file; give the journal of the run to continue", dir);
    assert_string_equal(err.msg, want);
    assert_int_equal(gq_journal_read(dir, &rs, NULL, &err), GQ_E_USAGE);
    snprintf(want, sizeof want, "journal: '%s' is a directory, expected a journal file (JSON lines)", dir);
    assert_string_equal(err.msg, want);

    /* a line of the run that is neither a record, a step nor a sample */
    unlink(path);
    assert_int_equal(gq_journal_open(&j, path, NULL, &err), GQ_OK);
    char run_id[64];
    snprintf(run_id, sizeof run_id, "%s", j.run_id);
    gq_record r = rec(0);
    assert_int_equal(gq_journal_append(&j, &r, &err), GQ_OK);
    gq_journal_close(&j);
    assert_int_equal(gq_journal_read(path, &rs, NULL, &err), GQ_OK);
    assert_int_equal(rs.n, 1);
    gq_records_free(&rs);
    /* reading stops at once when asked to */
    gq_interrupt_request();
    int rc = gq_journal_read(path, &rs, NULL, &err);
    gq_interrupt_clear();
    assert_int_equal(rc, GQ_E_INTR);
    snprintf(want, sizeof want, "reading journal '%s' was interrupted", path);
    assert_string_equal(err.msg, want);
    gq_records_free(&rs);
    f = fopen(path, "a");
    assert_non_null(f);
    fprintf(f, "{\"journal\":\"gpuqual\",\"schema_version\":%d,\"run_id\":\"%s\",\"note\":{}}\n",
            GQ_SCHEMA_VERSION, run_id);
    fclose(f);
    assert_int_equal(gq_journal_read(path, &rs, NULL, &err), GQ_E_USAGE);
    snprintf(want, sizeof want, "journal '%s' line 3 is not a gpuqual journal line", path);
    assert_string_equal(err.msg, want);
    gq_records_free(&rs);

    assert_int_equal(gq_journal_sync(NULL, &err), GQ_OK); /* nothing open: nothing to sync */
    memset(&j, 0, sizeof j);
    assert_int_equal(gq_journal_sync(&j, &err), GQ_OK);
    assert_int_equal(gq_journal_item_done(NULL, &err), GQ_E_FAIL);
    assert_string_equal(err.msg, "journal is not open");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_read_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grouped_sync, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_identity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_existing_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_devices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume_read_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume_remeasures_overlap_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume_remeasures_contaminated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume_steps_and_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_line_names_its_number, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_and_newer_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reader_long_and_foreign_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reader_very_long, setup, teardown),
        cmocka_unit_test_setup_teardown(test_more_refusals, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
