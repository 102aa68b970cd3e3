/* SHA-256 and HMAC-SHA256 through OpenSSL's libcrypto (sha256.h): wharf does
 * not carry its own hash implementation.  Only the constant-time compare and
 * the hex helper are ours. */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/sha256.h"

/* a context that cannot be created is a broken libcrypto: nothing sensible to do */
static void need(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "wharf: libcrypto: %s failed\n", what);
        abort();
    }
}

void wh_sha256_init(wh_sha256_t *c)
{
    c->ctx = EVP_MD_CTX_new();
    need(c->ctx && EVP_DigestInit_ex(c->ctx, EVP_sha256(), NULL) == 1, "EVP_DigestInit_ex(sha256)");
}

void wh_sha256_update(wh_sha256_t *c, const void *data, size_t len)
{
    need(EVP_DigestUpdate(c->ctx, data, len) == 1, "EVP_DigestUpdate");
}

void wh_sha256_final(wh_sha256_t *c, uint8_t out[WH_SHA256_LEN])
{
    unsigned n = 0;
    need(EVP_DigestFinal_ex(c->ctx, out, &n) == 1 && n == WH_SHA256_LEN, "EVP_DigestFinal_ex");
    EVP_MD_CTX_free(c->ctx);
    c->ctx = NULL;
}

void wh_sha256(const void *data, size_t len, uint8_t out[WH_SHA256_LEN])
{
    wh_sha256_t c;
    wh_sha256_init(&c);
    wh_sha256_update(&c, data, len);
    wh_sha256_final(&c, out);
}

void wh_hmac_sha256(const void *key, size_t keylen, const void *msg, size_t msglen, uint8_t out[WH_SHA256_LEN])
{
    unsigned n = 0;
    need(HMAC(EVP_sha256(), key, (int)keylen, msg, msglen, out, &n) != NULL && n == WH_SHA256_LEN, "HMAC(sha256)");
}

int wh_ct_equal(const void *a, const void *b, size_t n)
{
    const volatile unsigned char *x = a, *y = b;
    unsigned char d = 0;
    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)(x[i] ^ y[i]);
    return d == 0;
}

void wh_hex(const uint8_t *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = 0;
}
