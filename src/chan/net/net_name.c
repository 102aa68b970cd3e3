/* Network channel: the endpoint name a rank publishes through PMI and every
 * other rank parses, "ADDRHEX/TOKENHEX/CAP:RXM" (lowercase hex of the
 * provider address, the endpoint token, the largest control payload and
 * ofi_rxm's eager limit in decimal).  The text comes from another process,
 * so parsing is strict (tests/fuzz/fuzz_net_name.c): exactly the characters
 * the formatter writes, every field bounded. */
#include <stdio.h>
#include <string.h>

#include "chan/net/net.h"

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* n lowercase hex digits into at most cap bytes; 0 or -1 */
static int unhex(const char *s, size_t n, unsigned char *out, size_t cap, size_t *len)
{
    if (n % 2 || n / 2 > cap)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    *len = n / 2;
    return 0;
}

/* decimal digits only, 1..19 of them, no leading zero (no sign, blank or
 * overflow: what %llu writes); the number of characters read, 0 if none fit */
static size_t decimal(const char *s, unsigned long long *v)
{
    size_t d = 0;
    if (s[0] == '0' && s[1] >= '0' && s[1] <= '9')
        return 0;
    unsigned long long x = 0;
    while (s[d] >= '0' && s[d] <= '9') {
        if (++d > 19)
            return 0;
        x = x * 10 + (unsigned long long)(s[d - 1] - '0');
    }
    *v = x;
    return d;
}

int wh_net_name_format(char *buf, size_t cap, const wh_net_name_t *nm)
{
    if (nm->alen > sizeof nm->addr || 2 * nm->alen + 2 + WH_NET_TOKEN_HEX + 2 * 20 + 2 > cap)
        return -1;
    for (size_t i = 0; i < nm->alen; i++) {
        buf[2 * i] = "0123456789abcdef"[nm->addr[i] >> 4];
        buf[2 * i + 1] = "0123456789abcdef"[nm->addr[i] & 15];
    }
    char *p = buf + 2 * nm->alen;
    *p++ = '/';
    for (int i = WH_NET_TOKEN_HEX - 1; i >= 0; i--)
        *p++ = "0123456789abcdef"[(nm->token >> (4 * i)) & 15];
    snprintf(p, cap - (size_t)(p - buf), "/%llu:%llu", nm->cap, nm->rxm);
    return 0;
}

int wh_net_name_parse(const char *n, wh_net_name_t *nm)
{
    const char *slash = strchr(n, '/');
    if (!slash || unhex(n, (size_t)(slash - n), nm->addr, sizeof nm->addr, &nm->alen))
        return -1;
    const char *t = slash + 1;
    uint64_t tok = 0;
    for (int i = 0; i < WH_NET_TOKEN_HEX; i++) {
        int v = hexval(t[i]); /* stops at the terminating NUL: -1 */
        if (v < 0)
            return -1;
        tok = tok << 4 | (uint64_t)v;
    }
    const char *s = t + WH_NET_TOKEN_HEX;
    if (*s++ != '/')
        return -1;
    size_t d1 = decimal(s, &nm->cap);
    if (!d1 || s[d1] != ':')
        return -1;
    s += d1 + 1;
    size_t d2 = decimal(s, &nm->rxm);
    if (!d2 || s[d2] != 0)
        return -1;
    nm->token = tok;
    return 0;
}
