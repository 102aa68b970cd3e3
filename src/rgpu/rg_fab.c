/* rgpu: the libfabric transport (docs/RGPU.md, "Transports").  A connection
 * is an FI_EP_MSG endpoint (reliable, connected; the tcp provider today, any
 * provider offering FI_EP_MSG, RDMA ones included) carrying the same byte
 * stream as a socket: the sender cuts it into messages of at most RG_FAB_BUF
 * bytes, the receiver keeps RG_FAB_NRX buffers of that size posted, in ring
 * order (a connected endpoint completes receives in the order they were
 * posted), and reads the stream out of them.  One completion queue and one
 * event queue per connection, both with wait fds so the session loop can
 * poll several connections and listeners at once.  A dead peer shows as an
 * error completion or an FI_SHUTDOWN event: every wait is cut in slices that
 * look at the event queue, so it is an error, never a hang. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "rgpu/rg_wire.h"
#include "util/fabdl.h"

#define RG_FAB_BUF (256u << 10) /* largest message; size of a receive buffer */
#define RG_FAB_NRX 8            /* receive buffers posted per connection */
#define RG_FAB_NTX 8            /* sends in flight */
#define RG_FAB_SLICE 200        /* ms: how often a wait looks at the event queue */
#define RG_FAB_SEND_MAX 120000  /* ms: a send the peer does not take in this fails */
#define FAB_VERSION FI_VERSION(1, 9)

typedef struct {
    rg_conn_t c; /* first: the generic connection */
    struct fid_fabric *fab;
    int own_fab;
    struct fid_domain *dom;
    struct fid_eq *eq;
    struct fid_cq *cq;
    struct fid_ep *ep;
    int cq_fd, eq_fd;
    int dead;
    int mr_local; /* the provider needs registered local buffers (RDMA providers) */
    uint8_t *rx;  /* RG_FAB_NRX buffers of RG_FAB_BUF */
    struct fid_mr *rx_mr, *tx_mr;
    uint8_t *tx; /* bounce buffers for sends (mr_local only), RG_FAB_NTX of RG_FAB_BUF */
    struct fi_context rx_ctx[RG_FAB_NRX], tx_ctx[RG_FAB_NTX];
    size_t rx_len[RG_FAB_NRX];
    int rx_done[RG_FAB_NRX];
    int head;    /* the receive buffer the stream continues in */
    size_t hoff; /* bytes of it already read */
    int tx_busy; /* sends posted, not completed */
    char prov[32];
} fab_conn_t;

struct rg_flisten {
    struct fid_fabric *fab;
    struct fid_eq *eq;
    struct fid_pep *pep;
    int eq_fd;
    char prov[32];
    struct fi_info *info;
};

/* close a libfabric object if there is one */
#define FAB_CLOSE(x)                                                                                        \
    do {                                                                                                    \
        if (x)                                                                                              \
            fi_close(&(x)->fid);                                                                            \
    } while (0)

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* manual progress first: every wait here drives it (fi_cq_read), and a
 * provider thread only costs hand-offs on a busy machine; automatic when the
 * provider has nothing else */
static struct fi_info *hints_progress(const char *prov, int manual)
{
    struct fi_info *h = fi_allocinfo();
    if (!h)
        return NULL;
    h->ep_attr->type = FI_EP_MSG;
    h->caps = FI_MSG;
    h->mode = FI_CONTEXT;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    if (manual) {
        h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
        h->domain_attr->control_progress = FI_PROGRESS_MANUAL;
    }
    if (prov && *prov && !(h->fabric_attr->prov_name = strdup(prov))) {
        fi_freeinfo(h);
        return NULL;
    }
    return h;
}

/* fi_getinfo with manual progress, else automatic */
static int getinfo(const char *prov, const char *node, const char *service, uint64_t flags, uint64_t caps,
                   struct fi_info **out)
{
    int rc = -FI_ENOMEM;
    if (wh_fab_load())
        return -FI_ENOSYS; /* fi_strerror() then says why */
    for (int manual = 1; manual >= 0; manual--) {
        struct fi_info *h = hints_progress(prov, manual);
        if (!h)
            return -FI_ENOMEM;
        h->caps |= caps;
        if (caps & FI_HMEM)
            h->domain_attr->mr_mode |= FI_MR_HMEM;
        *out = NULL;
        rc = fi_getinfo(FAB_VERSION, node, service, flags, h, out);
        fi_freeinfo(h);
        if (rc == 0 && *out)
            return 0;
    }
    return rc ? rc : -FI_ENODATA;
}

int rg_fab_hmem(const char *prov)
{
    struct fi_info *out = NULL;
    int rc = getinfo(prov, NULL, NULL, 0, FI_HMEM, &out);
    if (out)
        fi_freeinfo(out);
    return rc == 0;
}

/* ---- completions and events ---- */
static void take_event(fab_conn_t *f)
{
    struct fi_eq_cm_entry ent;
    uint32_t ev;
    ssize_t r = fi_eq_read(f->eq, &ev, &ent, sizeof ent, 0);
    if (r == -FI_EAVAIL) {
        struct fi_eq_err_entry ee = {0};
        fi_eq_readerr(f->eq, &ee, 0);
        f->dead = 1;
    } else if (r > 0 && ev == FI_SHUTDOWN) {
        f->dead = 1;
    }
}

/* take the completions there are; -1 once the connection is dead */
static int progress(fab_conn_t *f)
{
    struct fi_cq_msg_entry e[8];
    for (;;) {
        ssize_t r = fi_cq_read(f->cq, e, 8);
        if (r == -FI_EAGAIN)
            break;
        if (r == -FI_EAVAIL) {
            struct fi_cq_err_entry ee = {0};
            fi_cq_readerr(f->cq, &ee, 0);
            f->dead = 1;
            break;
        }
        if (r < 0) {
            f->dead = 1;
            break;
        }
        for (ssize_t i = 0; i < r; i++) {
            struct fi_context *ctx = e[i].op_context;
            if (ctx >= f->rx_ctx && ctx < f->rx_ctx + RG_FAB_NRX) {
                int k = (int)(ctx - f->rx_ctx);
                f->rx_len[k] = e[i].len;
                f->rx_done[k] = 1;
            } else {
                f->tx_busy--;
            }
        }
    }
    return f->dead ? -1 : 0;
}

/* sleep until a completion or an event may be there (at most ms) */
static void fab_sleep(fab_conn_t *f, int ms)
{
    struct fid *fids[2] = {&f->cq->fid, &f->eq->fid};
    if (f->cq_fd < 0 || f->eq_fd < 0 || fi_trywait(f->fab, fids, 2) != FI_SUCCESS) {
        if (f->cq_fd < 0 || f->eq_fd < 0) /* no wait fds: look again in a moment */
            poll(NULL, 0, ms < 1 ? ms : 1);
        return;
    }
    struct pollfd pf[2] = {{f->cq_fd, POLLIN, 0}, {f->eq_fd, POLLIN, 0}};
    poll(pf, 2, ms);
}

static int post_rx(fab_conn_t *f, int k)
{
    f->rx_done[k] = 0;
    void *desc = f->rx_mr ? fi_mr_desc(f->rx_mr) : NULL;
    for (int tries = 0; tries < 1000; tries++) {
        ssize_t r = fi_recv(f->ep, f->rx + (size_t)k * RG_FAB_BUF, RG_FAB_BUF, desc, 0, &f->rx_ctx[k]);
        if (r == 0)
            return 0;
        if (r != -FI_EAGAIN || progress(f))
            return -1;
    }
    return -1;
}

/* ---- the connection's operations ---- */
static int fab_sendv(rg_conn_t *c, struct iovec *v, int cnt)
{
    fab_conn_t *f = (fab_conn_t *)c;
    if (f->dead)
        return -1;
    int slot = 0;
    long long give_up = now_ms() + RG_FAB_SEND_MAX;
    while (cnt) {
        /* one message: up to RG_FAB_BUF bytes of the next iovs */
        struct iovec part[4];
        int np = 0;
        size_t tot = 0;
        while (cnt && np < 4 && tot < RG_FAB_BUF) {
            size_t k = v->iov_len < RG_FAB_BUF - tot ? v->iov_len : RG_FAB_BUF - tot;
            if (k)
                part[np++] = (struct iovec){v->iov_base, k};
            tot += k;
            v->iov_base = (char *)v->iov_base + k;
            v->iov_len -= k;
            if (!v->iov_len) {
                v++;
                cnt--;
            }
        }
        if (!np)
            continue;
        while (f->tx_busy >= RG_FAB_NTX) { /* all send slots in flight */
            if (progress(f))
                return -1;
            if (f->tx_busy >= RG_FAB_NTX)
                fab_sleep(f, RG_FAB_SLICE);
            else
                break;
            take_event(f);
            if (f->dead || now_ms() > give_up)
                return -1;
        }
        ssize_t r;
        for (;;) {
            if (f->mr_local) { /* through a registered bounce buffer */
                uint8_t *b = f->tx + (size_t)slot * RG_FAB_BUF;
                size_t o = 0;
                for (int i = 0; i < np; i++) {
                    memcpy(b + o, part[i].iov_base, part[i].iov_len);
                    o += part[i].iov_len;
                }
                r = fi_send(f->ep, b, tot, fi_mr_desc(f->tx_mr), 0, &f->tx_ctx[slot]);
            } else {
                r = fi_sendv(f->ep, part, NULL, (size_t)np, 0, &f->tx_ctx[slot]);
            }
            if (r != -FI_EAGAIN)
                break;
            if (progress(f) || now_ms() > give_up)
                return -1;
            take_event(f);
        }
        if (r) {
            f->dead = 1;
            return -1;
        }
        f->tx_busy++;
        slot = (slot + 1) % RG_FAB_NTX;
        if (f->mr_local && f->tx_busy == RG_FAB_NTX) { /* the next slot's buffer must be free */
            while (f->tx_busy && !f->dead) {
                if (progress(f))
                    return -1;
                if (f->tx_busy)
                    fab_sleep(f, RG_FAB_SLICE);
                take_event(f);
                if (now_ms() > give_up)
                    return -1;
            }
            if (f->dead)
                return -1;
            slot = 0;
        }
    }
    /* the caller's buffers are free again only when every send completed */
    while (f->tx_busy) {
        if (progress(f))
            return -1;
        if (!f->tx_busy)
            break;
        fab_sleep(f, RG_FAB_SLICE);
        take_event(f);
        if (f->dead || now_ms() > give_up)
            return -1;
    }
    return 0;
}

static int fab_recv(rg_conn_t *c, void *p, size_t n, int timeout_ms)
{
    fab_conn_t *f = (fab_conn_t *)c;
    uint8_t *out = p;
    long long end = timeout_ms >= 0 ? now_ms() + timeout_ms : 0;
    while (n) {
        if (f->rx_done[f->head]) {
            size_t have = f->rx_len[f->head] - f->hoff;
            size_t k = have < n ? have : n;
            memcpy(out, f->rx + (size_t)f->head * RG_FAB_BUF + f->hoff, k);
            out += k;
            n -= k;
            f->hoff += k;
            if (f->hoff == f->rx_len[f->head]) { /* used up: posted again, at the ring's end */
                if (post_rx(f, f->head))
                    return -1;
                f->head = (f->head + 1) % RG_FAB_NRX;
                f->hoff = 0;
            }
            continue;
        }
        if (f->dead || progress(f))
            return -1;
        if (f->rx_done[f->head])
            continue;
        int slice = RG_FAB_SLICE;
        if (timeout_ms >= 0) {
            long long left = end - now_ms();
            if (left <= 0)
                return -2;
            if (left < slice)
                slice = (int)left;
        }
        fab_sleep(f, slice);
        take_event(f);
    }
    return 0;
}

static int fab_ready(rg_conn_t *c)
{
    fab_conn_t *f = (fab_conn_t *)c;
    if (!f->rx_done[f->head] && !f->dead) {
        progress(f);
        take_event(f);
    }
    return f->rx_done[f->head] || f->dead;
}

static int fab_wait_fds(rg_conn_t *c, struct pollfd *pf, int max)
{
    fab_conn_t *f = (fab_conn_t *)c;
    struct fid *fids[2] = {&f->cq->fid, &f->eq->fid};
    if (max < 2 || f->cq_fd < 0 || f->eq_fd < 0 || fi_trywait(f->fab, fids, 2) != FI_SUCCESS)
        return -1;
    pf[0] = (struct pollfd){f->cq_fd, POLLIN, 0};
    pf[1] = (struct pollfd){f->eq_fd, POLLIN, 0};
    return 2;
}

static void fab_close(rg_conn_t *c)
{
    fab_conn_t *f = (fab_conn_t *)c;
    if (f->ep) {
        if (!f->dead)
            fi_shutdown(f->ep, 0);
        fi_close(&f->ep->fid);
    }
    FAB_CLOSE(f->rx_mr);
    FAB_CLOSE(f->tx_mr);
    FAB_CLOSE(f->cq);
    FAB_CLOSE(f->eq);
    FAB_CLOSE(f->dom);
    if (f->own_fab)
        FAB_CLOSE(f->fab);
    free(f->rx);
    free(f->tx);
    free(f);
}

static const rg_tx_ops_t fab_ops = {
    .name = "fabric",
    .sendv = fab_sendv,
    .recv = fab_recv,
    .ready = fab_ready,
    .wait_fds = fab_wait_fds,
    .close = fab_close,
};

const char *rg_conn_provider(const rg_conn_t *c)
{
    return c && c->ops == &fab_ops ? ((const fab_conn_t *)c)->prov : "";
}

/* the endpoint of a connection to be (info: from fi_getinfo or a
 * connection request), its queues and posted receive buffers */
static fab_conn_t *conn_new(struct fid_fabric *fab, int own_fab, struct fi_info *info, char *err, size_t errlen)
{
    fab_conn_t *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    f->c = (rg_conn_t){&fab_ops, -1};
    f->fab = fab;
    f->own_fab = own_fab;
    f->cq_fd = f->eq_fd = -1;
    snprintf(f->prov, sizeof f->prov, "%s", info->fabric_attr->prov_name ? info->fabric_attr->prov_name : "?");
    f->mr_local = (info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
    struct fi_eq_attr eqa = {.size = 16, .wait_obj = FI_WAIT_FD};
    struct fi_cq_attr cqa = {.size = 64, .format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_FD};
    const char *what = "fi_domain";
    int rc = fi_domain(fab, info, &f->dom, NULL);
    if (!rc && (what = "fi_eq_open", rc = fi_eq_open(fab, &eqa, &f->eq, NULL)) == -FI_ENOSYS) {
        eqa.wait_obj = FI_WAIT_UNSPEC;
        rc = fi_eq_open(fab, &eqa, &f->eq, NULL);
    }
    if (!rc && (what = "fi_cq_open", rc = fi_cq_open(f->dom, &cqa, &f->cq, NULL)) == -FI_ENOSYS) {
        cqa.wait_obj = FI_WAIT_UNSPEC;
        rc = fi_cq_open(f->dom, &cqa, &f->cq, NULL);
    }
    if (!rc && eqa.wait_obj == FI_WAIT_FD && fi_control(&f->eq->fid, FI_GETWAIT, &f->eq_fd))
        f->eq_fd = -1;
    if (!rc && cqa.wait_obj == FI_WAIT_FD && fi_control(&f->cq->fid, FI_GETWAIT, &f->cq_fd))
        f->cq_fd = -1;
    if (!rc)
        what = "fi_endpoint", rc = fi_endpoint(f->dom, info, &f->ep, NULL);
    if (!rc)
        what = "fi_ep_bind", rc = fi_ep_bind(f->ep, &f->eq->fid, 0);
    if (!rc)
        rc = fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV);
    if (!rc)
        what = "fi_enable", rc = fi_enable(f->ep);
    f->rx = rc ? NULL : malloc((size_t)RG_FAB_NRX * RG_FAB_BUF);
    if (!rc && !f->rx)
        what = "malloc", rc = -FI_ENOMEM;
    if (!rc && f->mr_local) {
        f->tx = malloc((size_t)RG_FAB_NTX * RG_FAB_BUF);
        what = "fi_mr_reg";
        rc = f->tx ? fi_mr_reg(f->dom, f->rx, (size_t)RG_FAB_NRX * RG_FAB_BUF, FI_RECV, 0, 0, 0, &f->rx_mr, NULL)
                   : -FI_ENOMEM;
        if (!rc)
            rc = fi_mr_reg(f->dom, f->tx, (size_t)RG_FAB_NTX * RG_FAB_BUF, FI_SEND, 0, 0, 0, &f->tx_mr, NULL);
    }
    for (int k = 0; k < RG_FAB_NRX && !rc; k++)
        if (post_rx(f, k))
            what = "fi_recv", rc = -FI_EIO;
    if (rc) {
        snprintf(err, errlen, "%s: %s", what, fi_strerror(-rc));
        fab_close(&f->c);
        return NULL;
    }
    return f;
}

/* wait for FI_CONNECTED on f's event queue */
static int wait_connected(fab_conn_t *f, int timeout_ms)
{
    long long end = now_ms() + timeout_ms;
    for (;;) {
        struct fi_eq_cm_entry ent;
        uint32_t ev = 0;
        long long left = end - now_ms();
        if (left <= 0)
            return -1;
        ssize_t r = fi_eq_sread(f->eq, &ev, &ent, sizeof ent, (int)(left < RG_FAB_SLICE ? left : RG_FAB_SLICE), 0);
        if (r == -FI_EAGAIN || r == -FI_ETIMEDOUT)
            continue;
        if (r < 0) {
            struct fi_eq_err_entry ee = {0};
            fi_eq_readerr(f->eq, &ee, 0);
            return -1;
        }
        if (ev == FI_CONNECTED)
            return 0;
        if (ev == FI_SHUTDOWN)
            return -1;
    }
}

rg_conn_t *rg_fab_connect(const char *prov, const char *host, int port, int timeout_ms, char *err, size_t errlen)
{
    struct fi_info *info = NULL;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int rc = getinfo(prov, host, ps, 0, 0, &info);
    if (rc) {
        snprintf(err, errlen, "no libfabric provider \"%s\" with FI_EP_MSG to %s: %s", prov, host,
                 fi_strerror(-rc));
        return NULL;
    }
    struct fid_fabric *fab = NULL;
    rc = fi_fabric(info->fabric_attr, &fab, NULL);
    fab_conn_t *f = NULL;
    if (rc)
        snprintf(err, errlen, "fi_fabric: %s", fi_strerror(-rc));
    else if ((f = conn_new(fab, 1, info, err, errlen)) != NULL) {
        rc = fi_connect(f->ep, info->dest_addr, NULL, 0);
        if (rc || wait_connected(f, timeout_ms)) {
            snprintf(err, errlen, "cannot connect to %s:%d (%s)", host, port, rc ? fi_strerror(-rc) : "refused or timed out");
            fab_close(&f->c);
            f = NULL;
        }
    } else {
        fi_close(&fab->fid);
    }
    fi_freeinfo(info);
    return f ? &f->c : NULL;
}

rg_flisten_t *rg_fab_listen(const char *prov, const char *host, int *port, char *err, size_t errlen)
{
    rg_flisten_t *l = calloc(1, sizeof *l);
    if (!l) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    l->eq_fd = -1;
    int rc = getinfo(prov, host && *host ? host : NULL, "0", FI_SOURCE, 0, &l->info);
    const char *what = "fi_getinfo";
    struct fi_eq_attr eqa = {.size = 16, .wait_obj = FI_WAIT_FD};
    if (!rc)
        what = "fi_fabric", rc = fi_fabric(l->info->fabric_attr, &l->fab, NULL);
    if (!rc && (what = "fi_eq_open", rc = fi_eq_open(l->fab, &eqa, &l->eq, NULL)) == -FI_ENOSYS) {
        eqa.wait_obj = FI_WAIT_UNSPEC;
        rc = fi_eq_open(l->fab, &eqa, &l->eq, NULL);
    }
    if (!rc && eqa.wait_obj == FI_WAIT_FD && fi_control(&l->eq->fid, FI_GETWAIT, &l->eq_fd))
        l->eq_fd = -1;
    if (!rc)
        what = "fi_passive_ep", rc = fi_passive_ep(l->fab, l->info, &l->pep, NULL);
    if (!rc)
        what = "fi_pep_bind", rc = fi_pep_bind(l->pep, &l->eq->fid, 0);
    if (!rc)
        what = "fi_listen", rc = fi_listen(l->pep);
    uint8_t addr[128];
    size_t alen = sizeof addr;
    if (!rc)
        what = "fi_getname", rc = fi_getname(&l->pep->fid, addr, &alen);
    if (!rc) {
        const struct sockaddr *sa = (const void *)addr;
        if (sa->sa_family == AF_INET)
            *port = ntohs(((const struct sockaddr_in *)(const void *)addr)->sin_port);
        else if (sa->sa_family == AF_INET6)
            *port = ntohs(((const struct sockaddr_in6 *)(const void *)addr)->sin6_port);
        else
            what = "address format", rc = -FI_EINVAL;
    }
    if (rc) {
        snprintf(err, errlen, "libfabric provider \"%s\" cannot listen on %s: %s: %s", prov, host && *host ? host : "*",
                 what, fi_strerror(-rc));
        rg_fab_listen_close(l);
        return NULL;
    }
    snprintf(l->prov, sizeof l->prov, "%s", l->info->fabric_attr->prov_name);
    return l;
}

int rg_fab_listen_fd(rg_flisten_t *l)
{
    struct fid *fids[1] = {&l->eq->fid};
    if (l->eq_fd < 0 || fi_trywait(l->fab, fids, 1) != FI_SUCCESS)
        return -2; /* (rg_wait_any: "ready now") */
    return l->eq_fd;
}

rg_conn_t *rg_fab_accept(rg_flisten_t *l, int timeout_ms)
{
    long long end = now_ms() + timeout_ms;
    for (;;) {
        struct fi_eq_cm_entry ent;
        uint32_t ev = 0;
        long long left = end - now_ms();
        if (left < 0)
            return NULL;
        ssize_t r = fi_eq_sread(l->eq, &ev, &ent, sizeof ent, (int)left, 0);
        if (r == -FI_EAGAIN || r == -FI_ETIMEDOUT)
            return NULL;
        if (r < 0) {
            struct fi_eq_err_entry ee = {0};
            fi_eq_readerr(l->eq, &ee, 0);
            continue;
        }
        if (ev != FI_CONNREQ) {
            if (r >= (ssize_t)sizeof ent && ent.info)
                fi_freeinfo(ent.info);
            continue;
        }
        char err[128];
        fab_conn_t *f = conn_new(l->fab, 0, ent.info, err, sizeof err);
        if (!f) {
            fi_reject(l->pep, ent.info->handle, NULL, 0);
            fi_freeinfo(ent.info);
            continue;
        }
        int rc = fi_accept(f->ep, NULL, 0);
        fi_freeinfo(ent.info);
        left = end - now_ms();
        if (rc || wait_connected(f, left > 1000 ? (int)left : 1000)) {
            fab_close(&f->c);
            continue;
        }
        return &f->c;
    }
}

void rg_fab_listen_close(rg_flisten_t *l)
{
    if (!l)
        return;
    FAB_CLOSE(l->pep);
    FAB_CLOSE(l->eq);
    FAB_CLOSE(l->fab);
    if (l->info)
        fi_freeinfo(l->info);
    free(l);
}
