/* A host-staged pair shows both figures (issue 28, item 4): gpuqual's
 * pipelined staging and the driver's own staged copy (what cudaMemcpy and
 * cudaMemcpyPeer between GPUs without P2P get), each measured as its own
 * record, and the card names which one a serving stack gets with which API.
 * On rtx4090x8 (no P2P at all) and sw2bad (GPU 6 without P2P). The
 * assertions read the card document only. */
#include "card_util.h"

static const json_t *matrix(const card_run *r, const char *id)
{
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(cu_card(r), "matrices"), i,
                       m) if (!strcmp(cu_str(m, "id"), id)) return m;
    return NULL;
}

static const json_t *record(const card_run *r, const char *method, int s, int d)
{
    char src[16], dst[16];
    snprintf(src, sizeof src, "gpu:%d", s);
    snprintf(dst, sizeof dst, "gpu:%d", d);
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(r->doc, "records"), i, x) if (!strcmp(cu_str(x, "method"), method) &&
                                                                     !strcmp(cu_str(x, "src"), src) &&
                                                                     !strcmp(cu_str(x, "dst"), dst)) return x;
    return NULL;
}

static const json_t *row(const card_run *r, const char *title)
{
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(cu_card(r), "rows"), i,
                       x) if (!strcmp(cu_str(x, "check"), title)) return x;
    return NULL;
}

static void both_figures(const char *machine, int want_gpu)
{
    card_run r = cu_run(&(card_args){.machine = machine, .noise = 0});
    const json_t *md = matrix(&r, "driver_staged"), *m0 = matrix(&r, "p2p_read");
    if (!md)
        fail_msg("%s: no driver_staged matrix", machine);
    assert_non_null(m0);
    assert_string_equal(cu_str(md, "test"), "device_to_device_driver_staged");
    int gl[64];
    int n = cu_ints(json_object_get(md, "gpus"), gl, 64), cells = 0;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            const json_t *v =
                json_array_get(json_array_get(json_object_get(md, "values"), (size_t)a), (size_t)b);
            if (!json_is_number(v))
                continue;
            cells++;
            /* a staged pair: no P2P, one end the GPU without it where the others have P2P */
            if (want_gpu >= 0)
                assert_true(gl[a] == want_gpu || gl[b] == want_gpu);
            /* each figure is a measured record of its own, with rounds */
            const json_t *dr = record(&r, "driver_staged", gl[a], gl[b]),
                         *pr = record(&r, "staged", gl[a], gl[b]);
            assert_non_null(dr);
            assert_non_null(pr);
            assert_string_equal(cu_str(dr, "test"), "device_to_device_driver_staged");
            assert_true(json_array_size(json_object_get(dr, "samples")) >= 2);
            assert_true(fabs(cu_num(json_object_get(dr, "gbps"), "median") - json_number_value(v)) < 1e-6);
        }
    assert_true(cells > 0);
    /* the pairwise row and a finding give both, and say which API gets which */
    const json_t *pw = row(&r, "Pairwise GPU traffic");
    assert_non_null(pw);
    assert_non_null(strstr(cu_str(pw, "result"), "by gpuqual's pipelined staging"));
    assert_non_null(strstr(cu_str(pw, "result"), "by the driver's copy (cudaMemcpyPeer)"));
    assert_true(cu_finding(&r, "Host-staged pairs", "gpuqual's pipelined staging", "driver's own staged copy",
                           "cudaMemcpy or cudaMemcpyPeer gets the driver's figure", NULL));
    /* the placement's note, where handoffs are staged */
    const json_t *notes = json_object_get(json_object_get(cu_card(&r), "placement"), "notes");
    bool staged_handoff = false, note = false;
    size_t i;
    const json_t *x;
    json_array_foreach(notes, i, x)
    {
        staged_handoff |= strstr(json_string_value(x), "host-staged") != NULL;
        note |= strstr(json_string_value(x), "gets the driver's own staged copy") != NULL;
    }
    assert_true(!staged_handoff || note);
    json_decref(r.doc);
}

static void rtx4090x8_no_p2p(void **state)
{
    (void)state;
    both_figures("rtx4090x8", -1);
}

static void sw2bad_one_gpu_without_p2p(void **state)
{
    (void)state;
    both_figures(GQ_TEST_DATA "/data/topologies/sw2bad.topo", 6);
}

/* Where every pair has P2P nothing is staged: no driver figure, no word of it. */
static void h200x2_nothing_staged(void **state)
{
    (void)state;
    card_run r = cu_run(&(card_args){.machine = "h200x2", .noise = 0});
    assert_null(matrix(&r, "driver_staged"));
    assert_null(strstr(cu_str(row(&r, "Pairwise GPU traffic"), "result"), "host-staged"));
    json_decref(r.doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rtx4090x8_no_p2p),
        cmocka_unit_test(sw2bad_one_gpu_without_p2p),
        cmocka_unit_test(h200x2_nothing_staged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
