/* PMI-1 wire parser (see wire.h for the grammar).  No allocation, no
 * dependency beyond libc: it is linked into libmpi, wharfrun and the fuzzer. */
#include "pmi/wire.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int wh_pmi_keychar(unsigned char c)
{
    return c > 0x20 && c < 0x7f && c != '=';
}

int wh_pmi_parse(const char *line, size_t len, wh_pmi_msg_t *msg)
{
    if (!line || !msg)
        return -1;
    if (len > 0 && line[len - 1] == '\n')
        len--;
    if (len >= WH_PMI_MAXLINE)
        return -1;
    if (memchr(line, '\0', len) || memchr(line, '\n', len))
        return -1;
    memcpy(msg->buf, line, len);
    msg->buf[len] = '\0';
    msg->npairs = 0;

    char *p = msg->buf;
    char *end = msg->buf + len;
    for (;;) {
        while (p < end && *p == ' ')
            p++;
        if (p == end)
            break;
        if (msg->npairs == WH_PMI_MAXPAIRS)
            return -1;
        char *key = p;
        while (p < end && wh_pmi_keychar((unsigned char)*p))
            p++;
        if (p == key || p == end || *p != '=')
            return -1; /* empty key, bad key byte, or a word without '=' */
        *p++ = '\0';
        /* Value: unescape in place; w trails r. */
        char *val = p, *w = p, *r = p;
        while (r < end && *r != ' ') {
            if (*r == '\\' && r + 1 < end)
                r++;
            *w++ = *r++;
        }
        p = r; /* at the separating space or end; w <= r */
        if (p < end)
            p++;
        *w = '\0';
        msg->pair[msg->npairs].key = key;
        msg->pair[msg->npairs].val = val;
        msg->npairs++;
    }
    return msg->npairs > 0 ? 0 : -1;
}

const char *wh_pmi_val(const wh_pmi_msg_t *msg, const char *key)
{
    for (int i = 0; i < msg->npairs; i++)
        if (!strcmp(msg->pair[i].key, key))
            return msg->pair[i].val;
    return NULL;
}

int wh_pmi_int(const wh_pmi_msg_t *msg, const char *key, int *out)
{
    const char *v = wh_pmi_val(msg, key);
    if (!v || !*v)
        return -1;
    char *e;
    errno = 0;
    long x = strtol(v, &e, 10);
    if (*e || errno || x < INT_MIN || x > INT_MAX)
        return -1;
    *out = (int)x;
    return 0;
}

int wh_pmi_escape(const char *src, char *dst, size_t cap)
{
    size_t n = 0;
    for (const unsigned char *s = (const unsigned char *)src; *s; s++) {
        int esc = (*s == ' ' || *s == '\\');
        unsigned char c = (*s < 0x20 || *s == 0x7f) ? '?' : *s;
        if (n + (size_t)esc + 1 >= cap)
            return -1;
        if (esc)
            dst[n++] = '\\';
        dst[n++] = (char)c;
    }
    if (n >= cap)
        return -1;
    dst[n] = '\0';
    return (int)n;
}
