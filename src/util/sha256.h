/* SHA-256 and HMAC-SHA256 for the launcher's challenge-response
 * authentication (src/pmi, tools/wharfrun): thin wrappers over OpenSSL's
 * libcrypto, checked against the FIPS 180-4 examples and the RFC 4231 HMAC
 * vectors (tests/unit/test_sha256.c). */
#ifndef WH_UTIL_SHA256_H
#define WH_UTIL_SHA256_H
#include <stddef.h>
#include <stdint.h>

#define WH_SHA256_LEN 32
#define WH_SHA256_BLOCK 64

typedef struct wh_sha256 {
    void *ctx; /* EVP_MD_CTX, from init to final */
} wh_sha256_t;

void wh_sha256_init(wh_sha256_t *c);
void wh_sha256_update(wh_sha256_t *c, const void *data, size_t len);
void wh_sha256_final(wh_sha256_t *c, uint8_t out[WH_SHA256_LEN]);
void wh_sha256(const void *data, size_t len, uint8_t out[WH_SHA256_LEN]);

/* HMAC-SHA256(key, msg). */
void wh_hmac_sha256(const void *key, size_t keylen, const void *msg, size_t msglen,
                    uint8_t out[WH_SHA256_LEN]);

/* 1 if the n bytes at a and b are equal; time depends on n only. */
int wh_ct_equal(const void *a, const void *b, size_t n);

/* Lower-case hex of n bytes into out (2n+1 bytes with the NUL). */
void wh_hex(const uint8_t *in, size_t n, char *out);
#endif
