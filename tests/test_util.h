/* Shared helpers for the cmocka tests (tests/unit, tests/sim). Include after <cmocka.h>. */
#ifndef GQ_TEST_UTIL_H
#define GQ_TEST_UTIL_H

#include <math.h>

/* assert_near(a, b, eps): a and b are both finite and |a - b| <= eps.
 * Use it instead of cmocka's assert_float_equal: in cmocka 1.1.5 that one
 * compares as float, with a relative tolerance, and passes when a value is
 * infinite or NaN (its relative test compares inf > inf). */
#define assert_near(a, b, eps)                                                                               \
    do {                                                                                                     \
        double a_ = (a), b_ = (b), e_ = (eps);                                                               \
        if (!isfinite(a_) || !isfinite(b_) || !(fabs(a_ - b_) <= e_))                                        \
            fail_msg("%.17g is not %.17g within %g", a_, b_, e_);                                            \
    } while (0)

#endif
