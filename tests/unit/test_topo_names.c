/* The topology's short names (topo/topo.c): every PCIe level and P2P status
 * as nvidia-smi writes it, and a GPU selection longer than the machine
 * refused. Written for issue 30 (lines no test ran). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/topo.h"

static void level_names(void **state)
{
    (void)state;
    static const char *const want[] = {"?", "X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS"};
    for (int l = GQ_LEVEL_UNKNOWN; l <= GQ_LEVEL_SYS; l++)
        assert_string_equal(gq_level_name((gq_link_level)l), want[l]);
    assert_string_equal(gq_level_name((gq_link_level)(GQ_LEVEL_SYS + 1)), "?");
}

static void p2p_names(void **state)
{
    (void)state;
    static const char *const want[] = {"U", "OK", "CNS", "GNS", "TNS", "NS", "DS"};
    for (int s = GQ_P2P_UNKNOWN; s <= GQ_P2P_DISABLED; s++)
        assert_string_equal(gq_p2p_status_name((gq_p2p_status)s), want[s]);
    assert_string_equal(gq_p2p_status_name((gq_p2p_status)(GQ_P2P_DISABLED + 1)), "U");
}

static void select_too_many(void **state)
{
    (void)state;
    gq_topo *in = calloc(2, sizeof *in);
    assert_non_null(in);
    gq_topo_init(&in[0]);
    in[0].ngpu = 2;
    int sel[3] = {0, 1, 0};
    gq_err e = {0};
    assert_int_equal(gq_topo_select(&in[0], sel, 3, &in[1], &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "GPU selection of 3 GPUs, but the machine has 2");
    assert_int_equal(gq_topo_select(&in[0], sel, -1, &in[1], &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "GPU selection of -1 GPUs, but the machine has 2");
    assert_int_equal(gq_topo_select(&in[0], sel, 2, &in[1], &e), GQ_OK);
    assert_int_equal(in[1].ngpu, 2);
    free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(level_names),
        cmocka_unit_test(p2p_names),
        cmocka_unit_test(select_too_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
