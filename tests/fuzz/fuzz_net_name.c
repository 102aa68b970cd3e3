/* Fuzzer for the network channel's endpoint names (src/chan/net/net_name.c):
 * the text every rank reads from PMI for every other rank,
 * "ADDRHEX/TOKENHEX/CAP:RXM".
 *
 * Build with libFuzzer:  clang -fsanitize=fuzzer,address -DWH_LIBFUZZER ...
 * Without WH_LIBFUZZER, main() runs a deterministic (seeded) campaign of
 * random strings, mutated valid names and format/parse round trips:
 *   fuzz_net_name [ITERATIONS [SEED]]      (default 200000, seed 1)
 * Invariants: the parser never reads past the string's end (ASan), and a
 * name it accepts is exactly what the formatter writes for the parsed
 * fields (so no sign, blank, uppercase digit, overlong field or trailing
 * byte gets through); any violation aborts (non-zero exit). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chan/net/net.h"

#include "fuzz_assert.h"

static long accepted, rejected;

/* one NUL-terminated candidate (a heap copy of exactly its length, so ASan sees overreads) */
static void fz_one(const char *data, size_t size)
{
    char *s = malloc(size + 1);
    FZ_ASSERT(s);
    memcpy(s, data, size);
    s[size] = 0;
    wh_net_name_t nm;
    memset(&nm, 0xa5, sizeof nm);
    if (wh_net_name_parse(s, &nm) == 0) {
        accepted++;
        FZ_ASSERT(nm.alen <= sizeof nm.addr);
        char back[2 * sizeof nm.addr + 64];
        FZ_ASSERT(wh_net_name_format(back, sizeof back, &nm) == 0);
        if (strcmp(back, s))
            fprintf(stderr, "accepted \"%s\", formats back as \"%s\"\n", s, back);
        FZ_ASSERT(strcmp(back, s) == 0); /* accepted = canonical */
    } else {
        rejected++;
    }
    free(s);
}

#ifdef WH_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_one((const char *)data, size);
    return 0;
}
#else
static uint64_t rnd64(unsigned *seed)
{
    uint64_t v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 16 | (uint64_t)(rand_r(seed) & 0xffff);
    return v;
}

static void random_name(unsigned *seed, wh_net_name_t *nm)
{
    nm->alen = (size_t)rand_r(seed) % 40; /* sockaddr_in 16, sockaddr_in6 28, others */
    if (rand_r(seed) % 50 == 0)
        nm->alen = sizeof nm->addr;
    for (size_t i = 0; i < nm->alen; i++)
        nm->addr[i] = (unsigned char)rand_r(seed);
    nm->token = rnd64(seed);
    nm->cap = rand_r(seed) % 3 ? (unsigned long long)(rand_r(seed) % 300000) : rnd64(seed) % 10000000000000000000ULL;
    nm->rxm = rand_r(seed) % 3 ? (unsigned long long)(rand_r(seed) % 300000) : 0;
}

/* a valid name: formatted, parsed back field by field */
static void fz_roundtrip(unsigned *seed, char *buf, size_t cap)
{
    wh_net_name_t a, b;
    random_name(seed, &a);
    FZ_ASSERT(wh_net_name_format(buf, cap, &a) == 0);
    memset(&b, 0, sizeof b);
    FZ_ASSERT(wh_net_name_parse(buf, &b) == 0);
    FZ_ASSERT(b.alen == a.alen && !memcmp(a.addr, b.addr, a.alen) && b.token == a.token && b.cap == a.cap &&
              b.rxm == a.rxm);
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 200000;
    unsigned seed = argc > 2 ? (unsigned)atoi(argv[2]) : 1;
    static const char alphabet[] = "0123456789abcdefABCDEF/:+- \t\nxz\0\377";
    char buf[2 * 256 + 128];
    for (long it = 0; it < iters; it++) {
        int mode = rand_r(&seed) % 4;
        size_t n;
        if (mode == 0) { /* random text over the name's alphabet and a few others */
            n = (size_t)rand_r(&seed) % 120;
            for (size_t i = 0; i < n; i++)
                buf[i] = alphabet[rand_r(&seed) % (int)(sizeof alphabet - 1)];
        } else if (mode == 1) { /* random bytes */
            n = (size_t)rand_r(&seed) % sizeof buf;
            for (size_t i = 0; i < n; i++)
                buf[i] = (char)rand_r(&seed);
        } else if (mode == 2) { /* a valid name, then mutated: replaced, inserted, deleted, truncated */
            fz_roundtrip(&seed, buf, sizeof buf);
            n = strlen(buf);
            for (int k = 1 + rand_r(&seed) % 3; k > 0; k--) {
                size_t at = n ? (size_t)rand_r(&seed) % (n + 1) : 0;
                int op = rand_r(&seed) % 4;
                char c = alphabet[rand_r(&seed) % (int)(sizeof alphabet - 1)];
                if (op == 0 && at < n) {
                    buf[at] = c;
                } else if (op == 1 && n + 1 < sizeof buf) {
                    memmove(buf + at + 1, buf + at, n - at);
                    buf[at] = c;
                    n++;
                } else if (op == 2 && at < n) {
                    memmove(buf + at, buf + at + 1, n - at - 1);
                    n--;
                } else {
                    n = at;
                }
            }
        } else {
            fz_roundtrip(&seed, buf, sizeof buf);
            continue;
        }
        fz_one(buf, n);
    }
    /* not vacuous: mutations of valid names are both accepted and refused */
    FZ_ASSERT(iters < 1000 || (accepted > 0 && rejected > 0));
    printf("fuzz_net_name: %ld inputs (%ld accepted as canonical names, %ld refused), no invariant violated\n",
           iters, accepted, rejected);
    return 0;
}
#endif
