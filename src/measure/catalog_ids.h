/* The catalog's test ids (included by measure/catalog.h): the names records
 * carry, spelled once, in a header with no includes, so analysis, doc and
 * render name tests without reaching the harness.
 *
 * Code outside the catalog (and the nvbandwidth name table) names a test by
 * these, not by a string literal, so a mistyped name does not compile (the
 * card's planning, composition and step runner, and analysis/probes.c do;
 * render/nvbw_model.c names tests only in its name table).
 * The catalog's own tests (gq_catalog_find finds each: unit/test_catalog
 * checks it; the probes measure a matrix cell as one of them) ... */
#ifndef GQ_MEASURE_CATALOG_IDS_H
#define GQ_MEASURE_CATALOG_IDS_H

#define GQ_TID_HOST_TO_DEVICE_CE "host_to_device_memcpy_ce"
#define GQ_TID_DEVICE_TO_HOST_CE "device_to_host_memcpy_ce"
#define GQ_TID_D2D_STAGED "device_to_device_staged"
#define GQ_TID_D2D_DRIVER_STAGED "device_to_device_driver_staged"
#define GQ_TID_H2D_SET "host_to_device_set"
#define GQ_TID_D2H_SET "device_to_host_set"
#define GQ_TID_BIDIR_SET "bidirectional_set"
#define GQ_TID_HOST_LATENCY_SM "host_device_latency_sm"
#define GQ_TID_D2D_LATENCY_SM "device_to_device_latency_sm"
#define GQ_TID_D2D_READ_CE "device_to_device_memcpy_read_ce"
#define GQ_TID_D2D_READ_SM "device_to_device_memcpy_read_sm"
#define GQ_TID_D2D_WRITE_CE "device_to_device_memcpy_write_ce"
#define GQ_TID_D2D_WRITE_SM "device_to_device_memcpy_write_sm"
/* ... and the measurement the probes run for concurrent pairs
 * (analysis/probes.h), which is not a catalog test. */
#define GQ_TID_PAIRS_READ_CE "concurrent_pairs_read_ce"
#define GQ_TID_PAIRS_READ_SM "concurrent_pairs_read_sm"
#define GQ_TID_PAIRS_WRITE_CE "concurrent_pairs_write_ce"
#define GQ_TID_PAIRS_WRITE_SM "concurrent_pairs_write_sm"
/* The prefix of a sweep point's test ("sweep:" + the test swept). */
#define GQ_TID_SWEEP_PREFIX "sweep:"

#endif
