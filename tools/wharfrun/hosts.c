/* Host list, placement and the launcher address each remote host should use. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wharfrun.h"

#define WR_MAX_SLOTS 1000000

static int wr_host_name_ok(const char *name)
{
    if (!*name || name[0] == '-')
        return 0;
    for (const char *c = name; *c; c++)
        if ((unsigned char)*c <= ' ' || *c == 0x7f || *c == '\'' || *c == '"' || *c == '\\')
            return 0;
    return 1;
}

static int wr_parse_slots(const char *s, int *out) { return wr_parse_int(s, 1, WR_MAX_SLOTS, out); }

/* Add (or merge into an existing entry of the same name). */
static int wr_add_host(wr_opts_t *o, const char *name, size_t namelen, int slots, const char *where)
{
    char *n = strndup(name, namelen);
    if (!n) {
        wr_error("out of memory");
        return -1;
    }
    if (!wr_host_name_ok(n)) {
        wr_error("%s: bad host name '%s'", where, n);
        free(n);
        return -1;
    }
    for (int i = 0; i < o->nhosts; i++) {
        if (!strcmp(o->hosts[i].name, n)) {
            wr_host_t *h = &o->hosts[i];
            h->slots = (h->slots > 0 && slots > 0) ? h->slots + slots : -1;
            if (h->slots > WR_MAX_SLOTS)
                h->slots = WR_MAX_SLOTS;
            free(n);
            return 0;
        }
    }
    wr_host_t *h = realloc(o->hosts, (size_t)(o->nhosts + 1) * sizeof *h);
    if (!h) {
        free(n);
        wr_error("out of memory");
        return -1;
    }
    o->hosts = h;
    memset(&h[o->nhosts], 0, sizeof *h);
    h[o->nhosts].name = n;
    h[o->nhosts].slots = slots;
    o->nhosts++;
    return 0;
}

/* "name" or "name:K" */
static int wr_add_host_spec(wr_opts_t *o, const char *spec, size_t len, const char *where)
{
    const char *colon = memchr(spec, ':', len);
    int slots = -1;
    if (colon) {
        char num[32];
        size_t nl = len - (size_t)(colon - spec) - 1;
        if (nl == 0 || nl >= sizeof num) {
            wr_error("%s: bad slot count in '%.*s'", where, (int)len, spec);
            return -1;
        }
        memcpy(num, colon + 1, nl);
        num[nl] = '\0';
        if (wr_parse_slots(num, &slots) != 0) {
            wr_error("%s: bad slot count in '%.*s' (need 1..%d)", where, (int)len, spec,
                     WR_MAX_SLOTS);
            return -1;
        }
        len = (size_t)(colon - spec);
    }
    if (len == 0) {
        wr_error("%s: empty host name", where);
        return -1;
    }
    return wr_add_host(o, spec, len, slots, where);
}

int wr_hosts_from_list(wr_opts_t *o, const char *list)
{
    const char *p = list;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (wr_add_host_spec(o, p, len, "--hosts") != 0)
            return -1;
        if (!comma)
            break;
        p = comma + 1;
    }
    return 0;
}

/* One line of at most cap - 1 bytes (NUL-terminated; longer lines are cut
 * at cap - 1 bytes, which the caller sees as too long); returns its length. */
static ssize_t read_line(FILE *f, char *buf, size_t cap)
{
    size_t n = 0;
    int c;
    while (n < cap - 1 && (c = getc(f)) != EOF) {
        buf[n++] = (char)c;
        if (c == '\n')
            break;
    }
    buf[n] = '\0';
    return (ssize_t)n;
}

int wr_hosts_from_file(wr_opts_t *o, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        wr_error("cannot open hostfile '%s': %s", path, strerror(errno));
        return -1;
    }
    char line[4098], where[512];
    size_t total = 0;
    ssize_t got;
    int lineno = 0, rc = 0;
    /* bounded: a device or binary file (/dev/zero) must end with an error, not loop */
    while (rc == 0 && (got = read_line(f, line, sizeof line)) > 0) {
        lineno++;
        total += (size_t)got;
        snprintf(where, sizeof where, "hostfile %s line %d", path, lineno);
        if (memchr(line, '\0', (size_t)got)) {
            wr_error("%s: NUL byte: not a text file", where);
            rc = -1;
            break;
        }
        if (got > 4096 || total > ((size_t)1 << 20) || lineno > 100000) {
            wr_error("%s: %s", where, got > 4096 ? "line too long" : "file too large for a hostfile");
            rc = -1;
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *save = NULL;
        char *host = strtok_r(line, " \t\r\n", &save);
        if (!host)
            continue;
        int slots = -1;
        char *tok;
        while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
            if (strncmp(tok, "slots=", 6) != 0 || slots != -1 || strchr(host, ':') ||
                wr_parse_slots(tok + 6, &slots) != 0) {
                wr_error("%s: bad slot syntax '%s' (use 'host slots=K' or 'host:K')", where, tok);
                rc = -1;
                break;
            }
        }
        if (rc == 0)
            rc = slots > 0 ? wr_add_host(o, host, strlen(host), slots, where)
                           : wr_add_host_spec(o, host, strlen(host), where);
    }
    if (rc == 0 && ferror(f)) {
        wr_error("reading hostfile '%s': %s", path, strerror(errno));
        rc = -1;
    }
    fclose(f);
    if (rc == 0 && o->nhosts == 0) {
        wr_error("hostfile '%s' lists no host", path);
        rc = -1;
    }
    return rc;
}

static int wr_is_local(const char *name, const char *self)
{
    return !strcasecmp(name, "localhost") || !strcmp(name, "127.0.0.1") || !strcmp(name, "::1") ||
           (self[0] && !strcasecmp(name, self));
}

/* --iface: an IPv4 address, or the name of an interface with one. */
static int wr_iface_addr(const char *iface, char *out, size_t outlen)
{
    struct in_addr a;
    if (inet_pton(AF_INET, iface, &a) == 1) {
        snprintf(out, outlen, "%s", iface);
        return 0;
    }
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) != 0) {
        wr_error("getifaddrs: %s", strerror(errno));
        return -1;
    }
    int rc = -1;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !strcmp(i->ifa_name, iface)) {
            inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, out,
                      (socklen_t)outlen);
            rc = 0;
            break;
        }
    }
    freeifaddrs(ifs);
    if (rc != 0)
        wr_error("--iface '%s': neither an IPv4 address nor an interface with one", iface);
    return rc;
}

/* Source address of the route toward host: resolve it, connect a UDP socket
 * (no packet is sent) and read the local address the kernel chose. */
static int wr_route_addr(const char *host, char *out, size_t outlen)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM};
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(host, "9", &hints, &res);
    if (gai != 0) {
        wr_error("cannot resolve host '%s': %s", host, gai_strerror(gai));
        return -1;
    }
    int rc = -1;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in me;
    socklen_t ml = sizeof me;
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0 &&
        getsockname(fd, (struct sockaddr *)&me, &ml) == 0) {
        inet_ntop(AF_INET, &me.sin_addr, out, (socklen_t)outlen);
        rc = 0;
    } else {
        wr_error("no route to host '%s': %s", host, strerror(errno));
    }
    if (fd >= 0)
        close(fd);
    freeaddrinfo(res);
    return rc;
}

int wr_hosts_place(wr_opts_t *o)
{
    char self[256] = "";
    if (gethostname(self, sizeof self - 1) != 0)
        self[0] = '\0';
    if (o->nhosts == 0) {
        o->hosts = calloc(1, sizeof *o->hosts);
        if (!o->hosts || !(o->hosts[0].name = strdup(self[0] ? self : "localhost"))) {
            wr_error("out of memory");
            return -1;
        }
        o->hosts[0].slots = -1;
        o->nhosts = 1;
    }
    for (int h = 0; o->ppn && h < o->nhosts; h++)
        o->hosts[h].slots = o->ppn; /* -ppn: the same count on every host */
    int all_slots = 1;
    for (int h = 0; h < o->nhosts; h++)
        if (o->hosts[h].slots < 1)
            all_slots = 0;
    int left = o->np;
    if (all_slots) {
        /* fill the slots in host order; if they are not enough, go around
         * again (oversubscription) */
        while (left > 0) {
            for (int h = 0; h < o->nhosts && left > 0; h++) {
                int k = o->hosts[h].slots < left ? o->hosts[h].slots : left;
                o->hosts[h].nranks += k;
                left -= k;
            }
        }
    } else {
        int per = (o->np + o->nhosts - 1) / o->nhosts;
        for (int h = 0; h < o->nhosts; h++) {
            int k = per < left ? per : left;
            o->hosts[h].nranks = k;
            left -= k;
        }
    }
    const char *iface_addr = NULL;
    char iface_buf[64];
    int first = 0;
    for (int h = 0; h < o->nhosts; h++) {
        wr_host_t *hp = &o->hosts[h];
        hp->first_rank = first;
        first += hp->nranks;
        hp->local = wr_is_local(hp->name, self);
        if (hp->local)
            continue;
        if (o->iface) {
            if (!iface_addr) {
                if (wr_iface_addr(o->iface, iface_buf, sizeof iface_buf) != 0)
                    return -1;
                iface_addr = iface_buf;
            }
            /* the name is only the agent's business then: it need not
             * resolve here (e.g. container names an agent maps itself) */
            snprintf(hp->addr, sizeof hp->addr, "%s", iface_addr);
        } else if (wr_route_addr(hp->name, hp->addr, sizeof hp->addr) != 0) {
            return -1;
        }
    }
    return 0;
}
