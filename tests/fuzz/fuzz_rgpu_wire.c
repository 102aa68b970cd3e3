/* Fuzzer for the rgpu wire protocol (src/rgpu/rg_wire.c): the header check
 * and the request decoder of every op, the attack surface of wharf-gpud.
 *
 * Build with libFuzzer:  clang -fsanitize=fuzzer,address -DWH_LIBFUZZER ...
 * Without WH_LIBFUZZER, main() runs a deterministic (seeded) campaign of
 * random, mutated and well-formed inputs:
 *   fuzz_rgpu_wire [ITERATIONS [SEED]]      (default 200000, seed 1)
 * Any violated invariant aborts (non-zero exit). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rgpu/rg_wire.h"

#include "fuzz_assert.h"

/* re-encode decoded arguments with the op's signature */
static void encode(unsigned op, const rg_args_t *a, rg_buf_t *out)
{
    int q = 0, b = 0;
    for (const char *s = rg_op_sig(op); *s; s++) {
        if (*s == 'q')
            rg_put_u64(out, a->q[q++]);
        else if (*s == 'b') {
            rg_put_bytes(out, a->b[b], a->blen[b]);
            b++;
        } else
            rg_put_bytes(out, a->name, (uint32_t)strlen(a->name));
    }
}

/* 1: raw bytes as a header and as the payload of every op */
static void fz_one(const uint8_t *data, size_t size)
{
    rg_hdr_t h;
    if (size >= RG_HDR_SIZE && rg_hdr_decode(data, &h) == 0) {
        FZ_ASSERT(h.magic == RG_MAGIC && h.version == RG_VERSION && h.len <= RG_MAX_PAYLOAD);
        uint8_t again[RG_HDR_SIZE];
        rg_hdr_encode(again, &h);
        FZ_ASSERT(!memcmp(again, data, RG_HDR_SIZE));
    }
    const uint8_t *p = size ? data + 1 : data;
    size_t n = size ? size - 1 : 0;
    unsigned op = size ? data[0] % (RG_OP_COUNT + 3) : 0;
    rg_args_t a;
    if (rg_decode(op, p, n, &a) != 0)
        return;
    /* accepted: a known op, every field inside the payload, and the payload
     * is exactly the encoding of what was decoded */
    FZ_ASSERT(rg_op_sig(op) != NULL);
    for (int i = 0; i < a.nb; i++) {
        FZ_ASSERT(a.blen[i] <= RG_CHUNK);
        FZ_ASSERT(a.b[i] >= p && a.b[i] + a.blen[i] <= p + n);
    }
    FZ_ASSERT(strlen(a.name) <= RG_MAX_NAME);
    rg_buf_t out = {0};
    encode(op, &a, &out);
    FZ_ASSERT(!out.err && out.len == n && (!n || !memcmp(out.p, p, n)));
    rg_buf_free(&out);
}

/* 2: a well-formed request of a random op decodes to its arguments */
static void fz_roundtrip(unsigned *seed)
{
    unsigned op = 1 + (unsigned)rand_r(seed) % (RG_OP_COUNT - 1);
    rg_args_t in = {0}, got;
    uint8_t blob[2][64];
    int q = 0, b = 0;
    for (const char *s = rg_op_sig(op); *s; s++) {
        if (*s == 'q')
            in.q[q++] = (uint64_t)rand_r(seed) << 33 ^ (uint64_t)rand_r(seed);
        else if (*s == 'b') {
            in.blen[b] = (uint32_t)rand_r(seed) % 64;
            for (uint32_t i = 0; i < in.blen[b]; i++)
                blob[b][i] = (uint8_t)rand_r(seed);
            in.b[b] = blob[b];
            b++;
        } else {
            int k = rand_r(seed) % 40;
            for (int i = 0; i < k; i++)
                in.name[i] = (char)('a' + rand_r(seed) % 26);
            in.name[k] = 0;
        }
    }
    rg_buf_t out = {0};
    encode(op, &in, &out);
    FZ_ASSERT(rg_decode(op, out.p, out.len, &got) == 0);
    FZ_ASSERT(got.nq == q && got.nb == b && !strcmp(got.name, in.name));
    for (int i = 0; i < q; i++)
        FZ_ASSERT(got.q[i] == in.q[i]);
    for (int i = 0; i < b; i++)
        FZ_ASSERT(got.blen[i] == in.blen[i] && !memcmp(got.b[i], in.b[i], in.blen[i]));
    /* any truncation or extension is refused */
    if (out.len)
        FZ_ASSERT(rg_decode(op, out.p, out.len - 1, &got) != 0);
    rg_put_raw(&out, "x", 1);
    FZ_ASSERT(rg_decode(op, out.p, out.len, &got) != 0);
    rg_buf_free(&out);
}

#ifdef WH_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_one(data, size);
    return 0;
}
#else
int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 200000;
    unsigned seed = argc > 2 ? (unsigned)atoi(argv[2]) : 1;
    uint8_t buf[512];
    for (long it = 0; it < iters; it++) {
        size_t n = (size_t)rand_r(&seed) % sizeof buf;
        int mode = rand_r(&seed) % 3;
        if (mode == 0) { /* random bytes */
            for (size_t i = 0; i < n; i++)
                buf[i] = (uint8_t)rand_r(&seed);
        } else if (mode == 1) { /* a valid header or request, then mutated */
            rg_hdr_t h = {RG_MAGIC, RG_VERSION, (uint16_t)(rand_r(&seed) % 40), 0, (uint32_t)rand_r(&seed) % 100, 7};
            rg_hdr_encode(buf, &h);
            buf[0] = (uint8_t)(rand_r(&seed) % RG_OP_COUNT);
            for (size_t i = 1; i < n; i++)
                buf[i] = (uint8_t)(rand_r(&seed) % 4 ? 0 : rand_r(&seed));
            for (int k = rand_r(&seed) % 4; k > 0 && n; k--)
                buf[(size_t)rand_r(&seed) % n] ^= (uint8_t)(1u << (rand_r(&seed) % 8));
        } else {
            fz_roundtrip(&seed);
            continue;
        }
        fz_one(buf, n);
    }
    printf("fuzz_rgpu_wire: %ld inputs, no invariant violated\n", iters);
    return 0;
}
#endif
