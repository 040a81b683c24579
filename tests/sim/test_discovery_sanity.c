/* The sanity guard inside discovery: a simulated machine deliberately
 * declares links faster than their PCIe generation and width allow. The
 * figures they produce must be flagged impossible and kept out of the
 * analysis (seed 000's 37 GB/s through one Gen4 x16 uplink). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_discovery_util.h"

/* sw0: a Gen4 x16 uplink (31.5 GB/s in theory) declared to carry 37 GB/s down,
 * with GPUs 0 and 1 at 25 GB/s each: together they reach 37, impossible.
 * GPU 2: its own Gen4 x16 link declared at 40 GB/s down, impossible alone.
 * GPU 3: an honest 25 GB/s. */
static const char topo_text[] =
    "machine impossible4\n"
    "title \"four GPUs whose declared links exceed their PCIe gen and width (test only)\"\n"
    "cpu \"Test CPU\" sockets 1 cores 16\n"
    "noise 0 %\n"
    "p2p CNS\n"
    "staging driver 100 % chunk-cost 3 us\n"
    "latency copy 2.2 us chase 150 ns staged 11 us\n"
    "memory mem0 numa 0 size 64 GiB avail 60 GiB lat 110 ns\n"
    "socket cpu0 numa 0 bus 0000:00\n"
    "fabric mem0 cpu0 read 200 GB/s write 200 GB/s lat 20 ns\n"
    "switch sw0 bus 0000:17:00.0\n"
    "switch sw1 bus 0000:37:00.0\n"
    "pcie sw0 cpu0 rate 16 GT/s width x16 up 37 GB/s down 37 GB/s lat 150 ns cost 1 us\n"
    "pcie sw1 cpu0 rate 32 GT/s width x16 up 60 GB/s down 60 GB/s lat 150 ns cost 1 us\n"
    "gpu gpu0 index 0 model \"Test GPU\" mem 16384 MiB bus 0000:18:00.0 cc 8.9 sms 64 power 300 W clock 2000 "
    "MHz "
    "local-copy 400 GB/s memlat 400 ns\n"
    "gpu gpu1 index 1 model \"Test GPU\" mem 16384 MiB bus 0000:19:00.0 cc 8.9 sms 64 power 300 W clock 2000 "
    "MHz "
    "local-copy 400 GB/s memlat 400 ns\n"
    "gpu gpu2 index 2 model \"Test GPU\" mem 16384 MiB bus 0000:38:00.0 cc 8.9 sms 64 power 300 W clock 2000 "
    "MHz "
    "local-copy 400 GB/s memlat 400 ns\n"
    "gpu gpu3 index 3 model \"Test GPU\" mem 16384 MiB bus 0000:39:00.0 cc 8.9 sms 64 power 300 W clock 2000 "
    "MHz "
    "local-copy 400 GB/s memlat 400 ns\n"
    "pcie gpu0 sw0 rate 16 GT/s width x16 up 25 GB/s down 25 GB/s lat 250 ns cost 2 us\n"
    "pcie gpu1 sw0 rate 16 GT/s width x16 up 25 GB/s down 25 GB/s lat 250 ns cost 2 us\n"
    "pcie gpu2 sw1 rate 16 GT/s width x16 up 25 GB/s down 40 GB/s lat 250 ns cost 2 us\n"
    "pcie gpu3 sw1 rate 16 GT/s width x16 up 25 GB/s down 25 GB/s lat 250 ns cost 2 us\n";

static void impossible_kept_out(void **state)
{
    (void)state;
    char path[] = "/tmp/gq-impossible-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, topo_text, sizeof topo_text - 1), (ssize_t)(sizeof topo_text - 1));
    close(fd);

    gq_discovery d;
    disc_run(path, 0, 1, 3, &d, NULL);
    unlink(path);
    const gq_bottlenecks *b = d.bottlenecks;

    /* GPU 2 alone, host to GPU: flagged impossible by the harness and ignored */
    int g2 = -1, pair01 = -1;
    for (int i = 0; i < d.records.n; i++) {
        const gq_record *r = &d.records.v[i];
        /* the first one is GPU 2 alone: the alone probes run before the groups */
        if (g2 < 0 && !r->aggregate && !r->sum && r->direction == GQ_DIR_H2D && r->dst.kind == GQ_EP_GPU &&
            r->dst.index == 2)
            g2 = i;
        if (r->aggregate && r->direction == GQ_DIR_H2D && r->ngpus == 2 && r->gpus[0] == 0 && r->gpus[1] == 1)
            pair01 = i;
    }
    assert_true(g2 >= 0 && pair01 >= 0);
    assert_true(d.records.v[g2].flags & GQ_FLAG_IMPOSSIBLE);
    assert_false(d.records.v[g2].valid);
    assert_true(d.records.v[g2].value.median > 35); /* the figure is kept, and printed, but flagged */
    assert_true(d.records.v[pair01].flags & GQ_FLAG_IMPOSSIBLE);
    assert_true(d.records.v[pair01].value.median > 32);

    bool listed_g2 = false, listed_pair = false;
    for (int i = 0; i < b->nignored; i++) {
        listed_g2 |= b->ignored[i].record == g2;
        listed_pair |= b->ignored[i].record == pair01;
        assert_non_null(strstr(b->ignored[i].why, "impossible"));
    }
    assert_true(listed_g2 && listed_pair);
    /* kept out: no alone rate for GPU 2 h2d, no observation of the 0,1 run,
     * and no capacity anywhere above what the links can carry */
    assert_true(isnan(b->alone[0][2]));
    assert_true(isfinite(b->alone[0][3]));
    for (int i = 0; i < b->nobs; i++)
        assert_int_not_equal(b->obs[i].record, pair01);
    for (int i = 0; i < b->n; i++)
        assert_true(b->v[i].capacity_gbps <= 31.5 * b->v[i].ngpus);
    gq_discovery_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(impossible_kept_out)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
