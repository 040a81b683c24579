/* Shared by the expectation files' reader (doc/expect_load.c), the judging
 * (expect.c, expect_checks.c) and --set (expect_set.c). Nothing else includes this. */
#ifndef GQ_ANALYSIS_EXPECT_INTERNAL_H
#define GQ_ANALYSIS_EXPECT_INTERNAL_H

#include <stdbool.h>

#include "analysis/expect.h"
#include "core/status.h"

/* An unknown key, with a did-you-mean among cands (NULL-terminated), or the list. */
int gq_expect_unknown_key(gq_err *err, const char *where, const char *key, const char *const *cands);
/* The key table: name ("h2d_gbps_min"), whether it is a minimum, whether it takes whole numbers. */
const char *gq_expect_key_name(int k);
bool gq_expect_key_is_min(int k);
bool gq_expect_key_integer(int k);
/* Its unit ("GB/s") and what it checks, for sentences ("host-to-GPU bandwidth alone"). */
const char *gq_expect_key_unit(int k);
const char *gq_expect_key_what(int k);
/* What the check's physics allows as a threshold: NULL when v is allowed,
 * else what would be ("above 0"): no bandwidth, latency, clock, size or count
 * is 0 or less, a spread is 0 % or more, a temperature above absolute zero. */
const char *gq_expect_key_bound(int k, double v);
/* Appends a copy of c to cl (expect_checks.c); GQ_E_NOMEM when it cannot grow. */
int gq_checklist_push(gq_checklist *cl, const gq_check *c);

#endif
