/* SHA-256 against the FIPS 180-4 examples (and padding boundaries), HMAC
 * against the RFC 4231 test cases, constant-time comparison. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util/sha256.h"

static int hash_is(const void *msg, size_t len, const char *want)
{
    uint8_t d[WH_SHA256_LEN];
    char hex[2 * WH_SHA256_LEN + 1];
    wh_sha256(msg, len, d);
    wh_hex(d, sizeof d, hex);
    if (strcmp(hex, want) != 0)
        fprintf(stderr, "sha256 of %zu bytes: %s, want %s\n", len, hex, want);
    return !strcmp(hex, want);
}

static int hmac_is(const void *key, size_t kl, const void *msg, size_t ml, const char *want)
{
    uint8_t d[WH_SHA256_LEN];
    char hex[2 * WH_SHA256_LEN + 1];
    wh_hmac_sha256(key, kl, msg, ml, d);
    wh_hex(d, sizeof d, hex);
    size_t n = strlen(want); /* test case 5 compares a truncated MAC */
    return !strncmp(hex, want, n);
}

int main(void)
{
    /* FIPS 180-4 / NIST CSRC examples */
    CHECK(hash_is("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    CHECK(hash_is("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    CHECK(hash_is(m448, strlen(m448),
                  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmno"
                       "pqklmnopqrlmnopqrsmnopqrstnopqrstu";
    CHECK(hash_is(m896, strlen(m896),
                  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"));
    char *mil = malloc(1000000);
    memset(mil, 'a', 1000000);
    CHECK(hash_is(mil, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    /* the same in odd-sized updates */
    wh_sha256_t c;
    uint8_t d[WH_SHA256_LEN], d2[WH_SHA256_LEN];
    wh_sha256_init(&c);
    for (size_t off = 0, step = 1; off < 1000000; off += step, step = step * 3 % 997 + 1)
        wh_sha256_update(&c, mil + off, off + step > 1000000 ? 1000000 - off : step);
    wh_sha256_final(&c, d);
    wh_sha256(mil, 1000000, d2);
    CHECK(!memcmp(d, d2, sizeof d));
    /* padding boundaries (values from Python's hashlib) */
    static const struct {
        size_t n;
        const char *h;
    } pads[] = {
        {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
        {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
        {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
        {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
        {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
        {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
        {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
        {128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"},
    };
    for (size_t i = 0; i < sizeof pads / sizeof pads[0]; i++)
        CHECK(hash_is(mil, pads[i].n, pads[i].h));
    free(mil);

    /* RFC 4231 HMAC-SHA256 test cases 1-7 */
    uint8_t k20[20], k25[25], k131[131], m50[50];
    memset(k20, 0x0b, sizeof k20);
    CHECK(hmac_is(k20, 20, "Hi There", 8,
                  "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"));
    CHECK(hmac_is("Jefe", 4, "what do ya want for nothing?", 28,
                  "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"));
    memset(k20, 0xaa, sizeof k20);
    memset(m50, 0xdd, sizeof m50);
    CHECK(hmac_is(k20, 20, m50, 50,
                  "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"));
    for (int i = 0; i < 25; i++)
        k25[i] = (uint8_t)(i + 1);
    memset(m50, 0xcd, sizeof m50);
    CHECK(hmac_is(k25, 25, m50, 50,
                  "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"));
    memset(k20, 0x0c, sizeof k20);
    CHECK(hmac_is(k20, 20, "Test With Truncation", 20, "a3b6167473100ee06e0c796c2955552b"));
    memset(k131, 0xaa, sizeof k131);
    const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    CHECK(hmac_is(k131, 131, m6, strlen(m6),
                  "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"));
    const char *m7 = "This is a test using a larger than block-size key and a larger than "
                     "block-size data. The key needs to be hashed before being used by the HMAC "
                     "algorithm.";
    CHECK(hmac_is(k131, 131, m7, strlen(m7),
                  "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"));
    /* a wrong key gives another MAC */
    CHECK(!hmac_is("Jeff", 4, "what do ya want for nothing?", 28,
                   "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"));

    CHECK(wh_ct_equal("abcd", "abcd", 4));
    CHECK(!wh_ct_equal("abcd", "abce", 4));
    CHECK(!wh_ct_equal("\x80" "bcd", "abcd", 4));
    CHECK(wh_ct_equal("x", "y", 0));
    return DONE();
}
