/* The same machine gives the same domains and shared budgets on every seed at
 * twice the calibrated noise (2 %), or names the decision it could not make
 * (docs/method-domains.md, "Decisions on intervals"). No timing: the standard
 * card on four simulated machines, ten seeds each. The sets expected are the
 * machines' own (the published servers' tables, tests/data/topologies'
 * headers); a budget may be missing on a seed only when the card's
 * "undetermined" list names its GPUs and direction, and no other budget may
 * appear. Before decisions were made on intervals, the RTX 4090 server lost
 * its socket budget {0-3} to six pair budgets on seeds 9 and 10 (a run of
 * {0-3} refused by the overlap rule) and the RTX PRO 6000 server reported
 * GPUs 0-3 sharing a GPU-to-host budget on seed 5. */
#include "card_util.h"

#define TOPO(name) GQ_TEST_DATA "/data/topologies/" name ".topo"
#define NSEEDS 10
#define NOISE 0.02

/* "d2h:0,1,2,3" for a bottleneck or an undetermined entry. */
static void key_of(const json_t *b, char *buf, size_t n)
{
    int g[64];
    int k = cu_ints(json_object_get(b, "gpus"), g, 64);
    size_t used = (size_t)snprintf(buf, n, "%s:", cu_str(b, "direction"));
    for (int i = 0; i < k && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%d", i ? "," : "", g[i]);
}

static bool in_list(const char *key, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(key, *list))
            return true;
    return false;
}

static bool named_undetermined(const json_t *card, const char *key)
{
    size_t i;
    const json_t *u;
    char k[256];
    json_array_foreach(json_object_get(card, "undetermined"), i, u)
    {
        key_of(u, k, sizeof k);
        if (!strcmp(k, key))
            return true;
    }
    return false;
}

static void check_machine(const char *machine, const char *domains, const char *const *budgets)
{
    for (uint64_t seed = 1; seed <= NSEEDS; seed++) {
        card_args ca = {.machine = machine, .seed = seed, .noise = NOISE};
        card_run run = cu_run(&ca);
        const json_t *card = cu_card(&run);
        char *got = json_dumps(json_object_get(run.doc, "domains"), JSON_COMPACT);
        if (!got || strcmp(got, domains))
            fail_msg("%s seed %d: domains %s, expected %s", machine, (int)seed, got ? got : "?", domains);
        free(got);
        size_t i;
        const json_t *b;
        char k[256];
        bool seen[32] = {false};
        json_array_foreach(json_object_get(run.doc, "bottlenecks"), i, b)
        {
            key_of(b, k, sizeof k);
            if (!in_list(k, budgets))
                fail_msg("%s seed %d: budget %s found, expected only the machine's own", machine, (int)seed,
                         k);
            for (int j = 0; budgets[j]; j++)
                seen[j] |= !strcmp(budgets[j], k);
        }
        for (int j = 0; budgets[j]; j++)
            if (!seen[j] && !named_undetermined(card, budgets[j]))
                fail_msg("%s seed %d: budget %s neither found nor named undetermined", machine, (int)seed,
                         budgets[j]);
        json_decref(run.doc);
    }
}

static void rtx4090x8(void **state)
{
    (void)state;
    static const char *const b[] = {"h2d:0,1,2,3", "h2d:4,5,6,7",         "d2h:0,1,2,3",
                                    "d2h:4,5,6,7", "p2p:0,1,2,3,4,5,6,7", NULL};
    check_machine("rtx4090x8", "[[0],[1],[2],[3],[4],[5],[6],[7]]", b);
}

static void rtxpro6000x8(void **state)
{
    (void)state;
    static const char *const b[] = {"h2d:0,1", "h2d:2,3", "d2h:0,1", "d2h:2,3", "p2p:0,1,2,3,4,5,6,7", NULL};
    check_machine("rtxpro6000x8", "[[0,1,2,3],[4,5,6,7]]", b);
}

static void a100x6(void **state)
{
    (void)state;
    static const char *const b[] = {"h2d:1,2", "h2d:4,5", "d2h:1,2", "d2h:4,5", NULL};
    check_machine("a100x6", "[[0,3],[1,2],[4,5]]", b);
}

static void nvswitch8(void **state)
{
    (void)state;
    static const char *const b[] = {"h2d:0,1", "h2d:2,3", "h2d:4,5", "h2d:6,7", "d2h:0,1",
                                    "d2h:2,3", "d2h:4,5", "d2h:6,7", NULL};
    check_machine(TOPO("nvswitch8"), "[[0,1,2,3,4,5,6,7]]", b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(rtx4090x8), cmocka_unit_test(rtxpro6000x8),
                                       cmocka_unit_test(a100x6), cmocka_unit_test(nvswitch8)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
