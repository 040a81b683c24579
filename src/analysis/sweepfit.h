/* Buffer-size sweeps: fit the time of one copy to t = a + s / B.
 *
 * a is the fixed cost of a transfer (launch, descriptor setup, completion),
 * B the asymptotic bandwidth, and n1/2 = a * B the size at which a copy gets
 * half of B (Hockney's n_1/2). Small transfers are dominated by a, large ones
 * by B; n1/2 says where the change happens.
 *
 * The fit works on times, not rates, and on RELATIVE residuals
 * ((t_i - a - s_i/B) / t_i): a sweep spans 4 KiB to 1 GiB, so plain least
 * squares on absolute times would let the largest sizes decide everything and
 * leave a undetermined. Outliers (a size that hit a cache effect, a noisy
 * round) are down-weighted by iteratively reweighted least squares with
 * Tukey's biweight on a MAD scale. a is constrained to be >= 0.
 */
#ifndef GQ_ANALYSIS_SWEEPFIT_H
#define GQ_ANALYSIS_SWEEPFIT_H

#include <stdint.h>

#include "core/status.h"

typedef struct gq_sweepfit {
    double a_us;       /* fixed cost per copy, microseconds (>= 0) */
    double bw_gbps;    /* asymptotic bandwidth B, GB/s (10^9 B/s) */
    double half_bytes; /* n1/2 = a * B in bytes: the size that reaches B/2 */
    double rms_rel;    /* RMS relative time residual over the points kept (weight > 0) */
    int npoints;       /* usable points (positive, finite rate) */
    int nsizes;        /* distinct sizes among them */
    int noutliers;     /* points the robust fit gave weight 0 */
} gq_sweepfit;

/* Fit n points (bytes[i] per copy, gbps[i] measured rate). Points with a
 * non-positive or non-finite rate, or 0 bytes, are skipped. Returns GQ_OK, or
 * GQ_E_USAGE when fewer than 2 distinct sizes remain, or GQ_E_FAIL when the
 * times do not grow with size (no bandwidth can be fitted). *out is always
 * written (zeros on failure). */
int gq_sweepfit_compute(const uint64_t *bytes, const double *gbps, int n, gq_sweepfit *out, gq_err *err);

/* Rate the fitted model predicts for a copy of `bytes`: bytes / (a + bytes/B),
 * in GB/s. 0 when the fit is empty. */
double gq_sweepfit_predict_gbps(const gq_sweepfit *f, uint64_t bytes);

#endif
