/* Small helpers shared by the wharfrun files (and the PMI server fuzzer). */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wharfrun.h"

int wr_buf_append(wr_buf_t *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d)
            return -1;
        b->data = d;
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0'; /* always NUL-terminated for convenience */
    return 0;
}

int wr_buf_printf(wr_buf_t *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    if ((size_t)n < sizeof small)
        return wr_buf_append(b, small, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (!big)
        return -1;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int rc = wr_buf_append(b, big, (size_t)n);
    free(big);
    return rc;
}

void wr_buf_consume(wr_buf_t *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
    } else {
        memmove(b->data, b->data + n, b->len - n);
        b->len -= n;
    }
    if (b->data)
        b->data[b->len] = '\0';
}

void wr_buf_free(wr_buf_t *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

double wr_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void wr_vmsg(const char *prefix, const char *fmt, va_list ap)
{
    char line[2048];
    int n = snprintf(line, sizeof line, "wharfrun: %s", prefix);
    if (n < 0)
        return;
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    size_t len = strlen(line);
    line[len++] = '\n';
    wr_write_all(2, line, len);
}

void wr_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    wr_vmsg("error: ", fmt, ap);
    va_end(ap);
}

void wr_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    wr_vmsg("", fmt, ap);
    va_end(ap);
}

void wr_write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) { /* someone made our stdout non-blocking */
                struct pollfd p = {.fd = fd, .events = POLLOUT};
                poll(&p, 1, 1000);
                continue;
            }
            return;
        }
        buf += n;
        len -= (size_t)n;
    }
}

int wr_parse_int(const char *s, long lo, long hi, int *out)
{
    char *e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (!*s || *e || errno || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

void wr_sanitize(const char *in, char *out, size_t outlen)
{
    size_t i = 0;
    if (!outlen)
        return;
    for (; in && *in && i + 1 < outlen; in++)
        out[i++] = ((unsigned char)*in < 0x20 || *in == 0x7f) ? '?' : *in;
    out[i] = '\0';
}
