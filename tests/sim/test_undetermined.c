/* A decision that sits on its threshold stays undetermined, after the card
 * measured it again (docs/method-domains.md, "Decisions on intervals"). Two
 * GPUs, each with a 25 GB/s link, behind a switch whose uplink carries 40
 * GB/s: together they get 40 of the 50 GB/s they get alone, exactly the
 * (1 - min_drop) = 80 % that separates a shared budget from interference. At
 * 2 % noise the aggregate's interval and the level's overlap whatever the
 * seed (the topology turns the model's run-to-run drift off, `noise 2 %
 * drift 0 %`: a drift would move the run off its threshold for the whole
 * run, which more rounds cannot undo): the card must measure the runs again with more rounds (records of
 * 15 and 30 rounds), then report the budget undetermined with its intervals
 * (a WARN check naming it), and never decide it either way on a median. */
#include <stdio.h>
#include <unistd.h>

#include "card_util.h"

#define NSEEDS 5

static const char topo_text[] =
    "machine straddle2\n"
    "title \"2 GPUs behind one switch whose uplink carries 80 % of their sum\"\n"
    "cpu \"Example CPU\" sockets 1 cores 16\n"
    "noise 2 % drift 0 %\n"
    "p2p OK\n"
    "memory mem0 numa 0 size 256 GiB avail 240 GiB lat 110 ns\n"
    "socket cpu0 numa 0 bus 0000:00 p2p-flowcap 20 GB/s p2p-cost 2 us\n"
    "fabric mem0 cpu0 read 400 GB/s write 400 GB/s lat 20 ns\n"
    "switch sw0 bus 0000:40:00.0\n"
    "pcie sw0 cpu0 rate 32 GT/s width x16 up 40 GB/s down 40 GB/s duplex 80 GB/s lat 150 ns cost 0 us\n"
    "gpu gpu0 index 0 model \"Example GPU\" mem 49140 MiB bus 0000:41:00.0 cc 8.9 sms 142 power 300 W clock "
    "2505 MHz local-copy 400 GB/s memlat 420 ns\n"
    "gpu gpu1 index 1 model \"Example GPU\" mem 49140 MiB bus 0000:42:00.0 cc 8.9 sms 142 power 300 W clock "
    "2505 MHz local-copy 400 GB/s memlat 420 ns\n"
    "pcie gpu0 sw0 rate 16 GT/s width x16 up 25 GB/s down 25 GB/s duplex 50 GB/s lat 250 ns cost 0 us\n"
    "pcie gpu1 sw0 rate 16 GT/s width x16 up 25 GB/s down 25 GB/s duplex 50 GB/s lat 250 ns cost 0 us\n";

static char path[64];

static int setup(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "/tmp/gq-straddle2-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, topo_text, sizeof topo_text - 1);
    close(fd);
    return n == (ssize_t)(sizeof topo_text - 1) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    return 0;
}

/* How many records of the host-to-GPU runs of GPUs 0,1 together have r rounds. */
static int set_runs(const json_t *doc, int rounds)
{
    int n = 0;
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(doc, "records"), i, r)
    {
        if (!json_is_true(json_object_get(r, "aggregate")) ||
            strcmp(cu_str(r, "test"), "host_to_device_set") ||
            json_integer_value(json_object_get(r, "rounds")) != rounds)
            continue;
        int g[8];
        n += cu_ints(json_object_get(r, "gpus"), g, 8) == 2;
    }
    return n;
}

static void budget_on_its_threshold(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= NSEEDS; seed++) {
        card_args ca = {.machine = path, .seed = seed, .noise = -1};
        card_run run = cu_run(&ca);
        const json_t *card = cu_card(&run);
        /* measured with the plan's rounds, then again with 3x and 6x */
        int r0 = (int)json_integer_value(json_object_get(json_object_get(card, "quality"), "rounds"));
        if (set_runs(run.doc, r0) < 1 || set_runs(run.doc, 3 * r0) < 1 || set_runs(run.doc, 6 * r0) < 1)
            fail_msg("seed %d: the run of GPUs 0,1 to GPU was not measured again with %d and %d rounds",
                     (int)seed, 3 * r0, 6 * r0);
        /* not decided either way ... */
        size_t i;
        const json_t *x;
        json_array_foreach(json_object_get(run.doc, "bottlenecks"), i, x)
        {
            if (!strcmp(cu_str(x, "direction"), "h2d"))
                fail_msg("seed %d: a host-to-GPU budget was decided on a figure on its threshold", (int)seed);
        }
        /* ... but named, with both intervals, and judged WARN */
        bool named = false;
        json_array_foreach(json_object_get(card, "undetermined"), i, x)
        {
            if (strcmp(cu_str(x, "direction"), "h2d") || strcmp(cu_str(x, "decision"), "shared_budget"))
                continue;
            const json_t *fi = json_object_get(x, "figure_interval_gbps"),
                         *li = json_object_get(x, "limit_interval_gbps");
            double flo = json_number_value(json_array_get(fi, 0)),
                   fhi = json_number_value(json_array_get(fi, 1));
            double llo = json_number_value(json_array_get(li, 0)),
                   lhi = json_number_value(json_array_get(li, 1));
            assert_true(flo <= fhi && llo <= lhi && flo < lhi && llo <= fhi); /* they overlap */
            assert_true(flo > 30 && fhi < 50);
            assert_non_null(strstr(cu_str(x, "text"), "whether GPUs 0,1 share a host-to-GPU budget"));
            named = true;
        }
        if (!named)
            fail_msg("seed %d: the host-to-GPU budget of GPUs 0,1 is not named undetermined", (int)seed);
        bool warned = false;
        json_array_foreach(json_object_get(card, "checks"), i, x)
        {
            warned |= !strcmp(cu_str(x, "id"), "undetermined") && !strcmp(cu_str(x, "verdict"), "warn") &&
                      json_is_true(json_object_get(x, "undetermined"));
        }
        assert_true(warned);
        assert_string_equal(cu_str(card, "verdict"), "warn");
        json_decref(run.doc);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(budget_on_its_threshold)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
