/* SHA-256 (FIPS 180-4), a small public-domain implementation for the golden
 * tests (tests/golden/golden.c): the large golden outputs are committed as
 * hashes of their normalized text. Public domain: no copyright is claimed. */
#ifndef GQ_TESTS_GOLDEN_SHA256_H
#define GQ_TESTS_GOLDEN_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t h[8];
    uint64_t len; /* bytes hashed so far */
    uint8_t buf[64];
    size_t nbuf;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
void sha256_final(sha256_ctx *c, uint8_t out[32]);
/* The hash of DATA[0..N) as 64 lowercase hex digits and a NUL in HEX. */
void sha256_hex(const void *data, size_t n, char hex[65]);

#endif
