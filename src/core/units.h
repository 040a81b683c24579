/* Units and number parsing. GB/s means 10^9 bytes/s; buffer sizes are in
 * KiB/MiB/GiB (2^10, 2^20, 2^30 bytes). Every parser rejects trailing junk,
 * empty strings, signs where none make sense and overflow, with one line in
 * *err naming the bad text and what would be right.
 */
#ifndef GQ_CORE_UNITS_H
#define GQ_CORE_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define GQ_KiB (1024ull)
#define GQ_MiB (1024ull * 1024ull)
#define GQ_GiB (1024ull * 1024ull * 1024ull)
#define GQ_GB 1e9

/* "512", "4K", "4KiB", "1G", "64MiB", "1000000B". A bare number is in `unit`
 * bytes. K/M/G and KiB/MiB/GiB are binary; KB/MB/GB are decimal. Must be > 0. */
int gq_parse_size(const char *s, uint64_t unit, uint64_t *out, gq_err *err);
/* "300", "300s", "5m", "1.5h", "250ms" -> seconds; must be > 0. */
/* Every duration is within 1 ms .. 7 days; options that give 0 a meaning
 * ("do not wait") say so in their own help and parse it themselves. */
#define GQ_DURATION_MIN_S 0.001
#define GQ_DURATION_MAX_S (7.0 * 86400.0)
int gq_parse_duration(const char *s, double *out, gq_err *err);
/* Whole decimal integer within [lo, hi]. */
int gq_parse_int(const char *s, long lo, long hi, long *out, gq_err *err);
/* Finite decimal number. */
int gq_parse_double(const char *s, double *out, gq_err *err);

/* "4 KiB", "512 MiB", "1 GiB", "1.5 MiB" into buf. */
const char *gq_fmt_size(uint64_t bytes, char *buf, size_t n);

/* Edit distance, for "did you mean". */
int gq_levenshtein(const char *a, const char *b);
/* Closest of the NULL-terminated candidates within a sensible distance, or NULL. */
const char *gq_closest(const char *word, const char *const *cands);

/* Seconds on CLOCK_MONOTONIC, and unix time. */
double gq_now_mono(void);
double gq_now_unix(void);

#endif
