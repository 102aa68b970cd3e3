/* Fuzzer for the PMI-1 wire parser (src/pmi/wire.c) and wharfrun's PMI
 * server state machine (tools/wharfrun/pmisrv.c).
 *
 * Build with libFuzzer:  clang -fsanitize=fuzzer,address -DWH_LIBFUZZER ...
 * Without WH_LIBFUZZER, main() runs a deterministic (seeded) campaign of
 * random and mutated inputs so that ctest runs it with any compiler:
 *   fuzz_pmi_wire [ITERATIONS [SEED]]      (default 200000, seed 1)
 * Targets: the parser, escaping, the server state machine, and the
 * authentication handshake of unidentified connections.
 * Any violated invariant aborts (non-zero exit). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmi/auth.h"
#include "pmi/wire.h"
#include "pmisrv.h"

#include "fuzz_assert.h"

static wh_pmi_msg_t fz_msg;

/* 1: the parser on raw bytes, with the invariants of a successful parse. */
static void fz_parse(const uint8_t *data, size_t size)
{
    int rc = wh_pmi_parse((const char *)data, size, &fz_msg);
    size_t len = size && data[size - 1] == '\n' ? size - 1 : size;
    if (len >= WH_PMI_MAXLINE || memchr(data, 0, len) || memchr(data, '\n', len))
        FZ_ASSERT(rc == -1);
    if (rc != 0)
        return;
    FZ_ASSERT(fz_msg.npairs >= 1 && fz_msg.npairs <= WH_PMI_MAXPAIRS);
    const char *lo = fz_msg.buf, *hi = fz_msg.buf + sizeof fz_msg.buf;
    for (int i = 0; i < fz_msg.npairs; i++) {
        const char *k = fz_msg.pair[i].key, *v = fz_msg.pair[i].val;
        FZ_ASSERT(k >= lo && k < hi && v >= lo && v < hi);
        size_t kl = strnlen(k, (size_t)(hi - k)), vl = strnlen(v, (size_t)(hi - v));
        FZ_ASSERT(kl > 0 && k + kl < hi && v + vl < hi);
        for (size_t j = 0; j < kl; j++)
            FZ_ASSERT(k[j] > 0x20 && k[j] < 0x7f && k[j] != '=');
        FZ_ASSERT(!memchr(v, '\n', vl));
        FZ_ASSERT(wh_pmi_val(&fz_msg, k) != NULL);
    }
}

/* 2: escaping then parsing gives the (sanitized) original back. */
static void fz_escape(const uint8_t *data, size_t size)
{
    char src[512], esc[1100], line[1200];
    size_t n = size < sizeof src - 1 ? size : sizeof src - 1;
    memcpy(src, data, n);
    src[n] = '\0';
    int el = wh_pmi_escape(src, esc, sizeof esc);
    FZ_ASSERT(el >= 0 && (size_t)el == strlen(esc));
    int ll = snprintf(line, sizeof line, "cmd=t value=%s", esc);
    FZ_ASSERT(wh_pmi_parse(line, (size_t)ll, &fz_msg) == 0);
    const char *v = wh_pmi_val(&fz_msg, "value");
    FZ_ASSERT(v);
    size_t sl = strlen(src);
    FZ_ASSERT(strlen(v) == sl);
    for (size_t i = 0; i < sl; i++) {
        unsigned char c = (unsigned char)src[i];
        FZ_ASSERT((unsigned char)v[i] == ((c < 0x20 || c == 0x7f) ? '?' : c));
    }
}

/* 3: the server.  Input = lines; the first byte of each selects the
 * connection: '0'..'9' -> rank (digit % 3), anything else -> a new,
 * unidentified TCP connection. */
static void fz_server(const uint8_t *data, size_t size)
{
    static const int ids[3] = {7, 8, 9};
    wr_pmisrv_t *s = wr_pmisrv_new(3, "kvs-fuzz", ids, NULL);
    FZ_ASSERT(s);
    size_t pos = 0;
    while (pos < size) {
        const uint8_t *nl = memchr(data + pos, '\n', size - pos);
        size_t end = nl ? (size_t)(nl - data) + 1 : size;
        uint8_t sel = data[pos];
        int rank = (sel >= '0' && sel <= '9') ? (sel - '0') % 3 : -1;
        int before = rank;
        char why[128];
        int ev = wr_pmisrv_line(s, &rank, (const char *)data + pos + 1, end - pos - 1, why,
                                sizeof why);
        FZ_ASSERT(ev == WR_PMI_OK || ev == WR_PMI_FAIL || ev == WR_PMI_ABORT || ev == WR_PMI_SPAWN);
        if (ev == WR_PMI_SPAWN) { /* a complete request: answer it as refused */
            FZ_ASSERT(s->spawn_req && s->spawn_rank == rank);
            wr_pmisrv_spawn_done(s, -1, NULL, "fuzz");
        }
        FZ_ASSERT(!s->spawn_req);
        FZ_ASSERT(ev != WR_PMI_FAIL || why[0]);
        FZ_ASSERT(rank >= -1 && rank < 3);
        FZ_ASSERT(before >= 0 || rank == -1 || s->r[rank].bound);
        int inb = 0;
        for (int i = 0; i < 3; i++) {
            inb += s->r[i].in_barrier;
            FZ_ASSERT(s->r[i].out.len <= WR_PMI_OUT_MAX);
            FZ_ASSERT(strlen(s->r[i].abort_msg) < sizeof s->r[i].abort_msg);
            /* every reply is a parseable line */
            if (s->r[i].out.len) {
                FZ_ASSERT(s->r[i].out.data[s->r[i].out.len - 1] == '\n');
                size_t p = 0;
                while (p < s->r[i].out.len) {
                    char *e = memchr(s->r[i].out.data + p, '\n', s->r[i].out.len - p);
                    FZ_ASSERT(e);
                    size_t l = (size_t)(e - s->r[i].out.data) + 1 - p;
                    FZ_ASSERT(wh_pmi_parse(s->r[i].out.data + p, l, &fz_msg) == 0);
                    FZ_ASSERT(wh_pmi_val(&fz_msg, "cmd"));
                    p += l;
                }
                wr_buf_consume(&s->r[i].out, s->r[i].out.len); /* "sent" */
            }
        }
        FZ_ASSERT(inb == s->nbarrier && s->nbarrier < 3);
        pos = end;
    }
    wr_pmisrv_free(s);
}

/* 4: the authentication handshake of unidentified TCP connections
 * (wr_pmisrv_anon_line) on a server with a key.  Input = lines; the first
 * byte selects one of 4 connections (byte % 4); a line "V" (after the
 * selector) is replaced by the correct cmd=auth_response for that
 * connection's state, so the fuzzer reaches the binding.  Invariants: only a
 * correct MAC binds, a rank is bound at most once, state stays sane. */
static void fz_auth(const uint8_t *data, size_t size)
{
    static const int ids[3] = {7, 8, 9};
    static const char key[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    wr_pmisrv_t *s = wr_pmisrv_new(3, "kvs-fuzz", ids, key);
    FZ_ASSERT(s);
    wr_pmi_anon_t a[4];
    int dead[4] = {0}, binds = 0;
    for (int i = 0; i < 4; i++) {
        a[i] = (wr_pmi_anon_t){.rank = -1};
        snprintf(a[i].snonce, sizeof a[i].snonce, "%032x", i * 77 + 1);
    }
    size_t pos = 0;
    while (pos < size) {
        const uint8_t *nl = memchr(data + pos, '\n', size - pos);
        size_t end = nl ? (size_t)(nl - data) + 1 : size;
        int k = data[pos] % 4;
        const char *line = (const char *)data + pos + 1;
        size_t len = end - pos - 1;
        pos = end;
        if (dead[k])
            continue;
        char good[160];
        int forged = 0;
        if (len >= 1 && line[0] == 'V' && (len == 1 || line[1] == '\n') && a[k].stage == 1) {
            char mac[WH_PMI_MAC_HEX + 1];
            wh_pmi_auth_mac(key, "client", ids[a[k].rank], a[k].snonce, a[k].cnonce, mac);
            len = (size_t)snprintf(good, sizeof good, "cmd=auth_response mac=%s\n", mac);
            line = good;
            forged = 1;
        }
        int stage = a[k].stage, rank = 5, was_bound = stage ? s->r[a[k].rank].bound : 0;
        char reply[128], why[128];
        int ev = wr_pmisrv_anon_line(s, &a[k], &rank, line, len, reply, sizeof reply, why,
                                     sizeof why);
        FZ_ASSERT(ev == WR_PMI_OK || ev == WR_PMI_FAIL);
        FZ_ASSERT(rank >= -1 && rank < 3);
        FZ_ASSERT(a[k].stage == 0 || (a[k].rank >= 0 && a[k].rank < 3));
        if (ev == WR_PMI_FAIL) {
            FZ_ASSERT(why[0] && rank == -1);
            dead[k] = 1; /* the loop drops the connection */
            continue;
        }
        if (rank >= 0) { /* bound: only with the right MAC, only once */
            FZ_ASSERT(forged && stage == 1 && !was_bound && s->r[rank].bound);
            binds++;
            FZ_ASSERT(s->r[rank].out.len > 0);
            FZ_ASSERT(!strncmp(s->r[rank].out.data, "cmd=auth_ok mac=", 16));
            dead[k] = 1; /* now a rank's connection */
        } else {
            FZ_ASSERT(stage == 0 && a[k].stage == 1);
            FZ_ASSERT(!strncmp(reply, "cmd=auth_challenge snonce=", 26));
            FZ_ASSERT(wh_pmi_parse(reply, strlen(reply), &fz_msg) == 0);
        }
    }
    int bound = 0;
    for (int i = 0; i < 3; i++)
        bound += s->r[i].bound;
    FZ_ASSERT(bound == binds);
    wr_pmisrv_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_parse(data, size);
    fz_escape(data, size);
    fz_server(data, size);
    fz_auth(data, size);
    return 0;
}

#ifndef WH_LIBFUZZER
/* ---- deterministic campaign ---- */

static uint64_t fz_state;

static uint64_t fz_rand(void) /* xorshift64* */
{
    fz_state ^= fz_state >> 12;
    fz_state ^= fz_state << 25;
    fz_state ^= fz_state >> 27;
    return fz_state * 2685821657736338717ull;
}

static const char *const fz_seeds[] = {
    "0cmd=init pmi_version=1 pmi_subversion=1\n1cmd=init pmi_version=1 pmi_subversion=1\n"
    "2cmd=init pmi_version=1 pmi_subversion=1\n0cmd=put kvsname=kvs-fuzz key=a value=1\n"
    "0cmd=barrier_in\n1cmd=barrier_in\n2cmd=barrier_in\n1cmd=get kvsname=kvs-fuzz key=a\n"
    "2cmd=get key=zz\n0cmd=finalize\n",
    "Acmd=initack pmiid=8\n1cmd=init pmi_version=1 pmi_subversion=1\n1cmd=get_maxes\n"
    "1cmd=get_appnum\n1cmd=get_my_kvsname\n1cmd=get_universe_size\n",
    "0cmd=init pmi_version=1 pmi_subversion=1\n0cmd=abort exitcode=3 message=a\\ b\n",
    "0cmd=init pmi_version=2\n0cmd=put key=x value=y\n0cmd=lookup_name service=s\n",
    "Acmd=initack pmiid=7\nAcmd=initack pmiid=7\nAcmd=initack pmiid=99\nBcmd=put key=a\n",
    "1cmd=barrier_in\n1cmd=init pmi_version=1\n1cmd=barrier_in\n1cmd=barrier_in\n",
    "0cmd=init pmi_version=1\n0cmd=put kvsname=other key=a value=b\n0cmd=put key=\\ \\  value=\\\\\n"
    "0cmd=get key=\\ \\ \n0cmd=publish_name service=x port=y\n0cmd=frobnicate\n",
    "cmd=init pmi_version=1 pmi_subversion=1",
    "cmd=get_result rc=0 msg=success value=abc=def\n",
    "mcmd=spawn\nnprocs=1\nexecname=a.out\nendcmd\n",
    "acmd=auth_hello pmiid=8 cnonce=0123456789abcdef0123456789abcdef\naV\n"
    "bcmd=auth_hello pmiid=8 cnonce=0123456789abcdef0123456789abcdef\nbV\n"
    "ccmd=auth_hello pmiid=7 cnonce=ffffffffffffffffffffffffffffffff\n"
    "ccmd=auth_response mac=0000000000000000000000000000000000000000000000000000000000000000\n",
    "dcmd=auth_hello pmiid=9 cnonce=0123456789abcdef0123456789abcdef\n"
    "acmd=auth_hello pmiid=9 cnonce=0123456789abcdef0123456789abcdef\naV\ndV\n"
    "bcmd=initack pmiid=7\nccmd=auth_response mac=x\n",
};

static size_t fz_mutate(uint8_t *buf, size_t len, size_t cap)
{
    static const uint8_t interesting[] = {' ', '=', '\\', '\n', 0, '0', '1', '2', 'A', 0xff, 0x7f};
    int rounds = 1 + (int)(fz_rand() % 8);
    for (int r = 0; r < rounds; r++) {
        size_t pos = len ? (size_t)(fz_rand() % len) : 0;
        switch (fz_rand() % 7) {
        case 0: /* flip a byte */
            if (len)
                buf[pos] ^= (uint8_t)(1u << (fz_rand() % 8));
            break;
        case 1: /* overwrite with an interesting byte */
            if (len)
                buf[pos] = interesting[fz_rand() % sizeof interesting];
            break;
        case 2: /* insert */
            if (len < cap) {
                memmove(buf + pos + 1, buf + pos, len - pos);
                buf[pos] = fz_rand() % 2 ? interesting[fz_rand() % sizeof interesting]
                                         : (uint8_t)fz_rand();
                len++;
            }
            break;
        case 3: /* delete */
            if (len) {
                size_t n = 1 + (size_t)(fz_rand() % 8);
                if (n > len - pos)
                    n = len - pos;
                memmove(buf + pos, buf + pos + n, len - pos - n);
                len -= n;
            }
            break;
        case 4: /* duplicate a chunk (long lines, many pairs, many lines) */
            if (len) {
                size_t n = 1 + (size_t)(fz_rand() % 64);
                if (n > len - pos)
                    n = len - pos;
                size_t times = 1 + (size_t)(fz_rand() % 80);
                for (size_t t = 0; t < times && len + n <= cap; t++) {
                    memmove(buf + pos + n, buf + pos, len - pos);
                    len += n;
                }
            }
            break;
        case 5: { /* splice in part of another seed */
            const char *s = fz_seeds[fz_rand() % (sizeof fz_seeds / sizeof fz_seeds[0])];
            size_t sl = strlen(s), from = (size_t)(fz_rand() % sl), n = sl - from;
            if (n > cap - len)
                n = cap - len;
            memmove(buf + pos + n, buf + pos, len - pos);
            memcpy(buf + pos, s + from, n);
            len += n;
            break;
        }
        default: /* truncate */
            len = pos;
            break;
        }
    }
    return len;
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 200000;
    fz_state = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
    if (!fz_state)
        fz_state = 1;
    enum { CAP = 3 * WH_PMI_MAXLINE };
    uint8_t *buf = malloc(CAP);
    if (!buf)
        return 1;
    for (size_t i = 0; i < sizeof fz_seeds / sizeof fz_seeds[0]; i++)
        LLVMFuzzerTestOneInput((const uint8_t *)fz_seeds[i], strlen(fz_seeds[i]));
    /* a KVS that has to grow its table, read back through the server */
    {
        wr_pmisrv_t *s = wr_pmisrv_new(1, "k", NULL, NULL);
        int rank = 0;
        FZ_ASSERT(s && wr_pmisrv_line(s, &rank, "cmd=init pmi_version=1", 22, NULL, 0) == 0);
        char line[128];
        for (int i = 0; i < 1000; i++) {
            int l = snprintf(line, sizeof line, "cmd=put key=k%d value=v%d\\ x", i, i);
            FZ_ASSERT(wr_pmisrv_line(s, &rank, line, (size_t)l, NULL, 0) == WR_PMI_OK);
        }
        for (int i = 999; i >= 0; i--) {
            wr_buf_consume(&s->r[0].out, s->r[0].out.len);
            int l = snprintf(line, sizeof line, "cmd=get key=k%d", i);
            FZ_ASSERT(wr_pmisrv_line(s, &rank, line, (size_t)l, NULL, 0) == WR_PMI_OK);
            FZ_ASSERT(wh_pmi_parse(s->r[0].out.data, s->r[0].out.len, &fz_msg) == 0);
            snprintf(line, sizeof line, "v%d x", i); /* the escaped space survives */
            const char *v = wh_pmi_val(&fz_msg, "value");
            FZ_ASSERT(v && !strcmp(v, line));
        }
        FZ_ASSERT(s->nkv == 1000 && s->ntab >= 1000);
        wr_pmisrv_free(s);
    }
    for (long it = 0; it < iters; it++) {
        size_t len;
        if (fz_rand() % 4 == 0) { /* random bytes */
            len = (size_t)(fz_rand() % (fz_rand() % 8 == 0 ? CAP : 256));
            for (size_t i = 0; i < len; i++)
                buf[i] = (uint8_t)fz_rand();
        } else { /* mutated seed */
            const char *s = fz_seeds[fz_rand() % (sizeof fz_seeds / sizeof fz_seeds[0])];
            len = strlen(s);
            memcpy(buf, s, len);
            len = fz_mutate(buf, len, CAP);
        }
        /* an exact-size copy, so that reading past the end is caught by ASan */
        uint8_t *in = malloc(len ? len : 1);
        if (!in)
            return 1;
        memcpy(in, buf, len);
        LLVMFuzzerTestOneInput(in, len);
        free(in);
    }
    free(buf);
    printf("fuzz_pmi_wire: %ld inputs, no invariant violated\n", iters);
    return 0;
}
#endif
