/* PMI authentication helpers: see auth.h for the protocol. */
#include "pmi/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "util/sha256.h"

static int wh_pmi_urandom(uint8_t *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(buf + got, n - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got == n)
        return 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    return got == n ? 0 : -1;
}

int wh_pmi_random_hex(char *out, size_t nbytes)
{
    uint8_t buf[64];
    if (nbytes > sizeof buf || wh_pmi_urandom(buf, nbytes) != 0)
        return -1;
    wh_hex(buf, nbytes, out);
    memset(buf, 0, sizeof buf);
    return 0;
}

int wh_pmi_is_hex(const char *s, size_t n)
{
    if (!s)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return s[n] == '\0';
}

void wh_pmi_auth_mac(const char *secret, const char *role, int pmiid, const char *snonce,
                     const char *cnonce, char out[WH_PMI_MAC_HEX + 1])
{
    char msg[256];
    int n = snprintf(msg, sizeof msg, "wharf-pmi-auth-v1 %s %d %.32s %.32s", role, pmiid, snonce,
                     cnonce);
    uint8_t d[WH_SHA256_LEN];
    wh_hmac_sha256(secret, strlen(secret), msg, (size_t)n, d);
    wh_hex(d, sizeof d, out);
}

int wh_pmi_auth_check(const char *secret, const char *role, int pmiid, const char *snonce,
                      const char *cnonce, const char *mac)
{
    if (!wh_pmi_is_hex(mac, WH_PMI_MAC_HEX))
        return 0;
    char want[WH_PMI_MAC_HEX + 1];
    wh_pmi_auth_mac(secret, role, pmiid, snonce, cnonce, want);
    int ok = wh_ct_equal(want, mac, WH_PMI_MAC_HEX);
    memset(want, 0, sizeof want);
    return ok;
}
