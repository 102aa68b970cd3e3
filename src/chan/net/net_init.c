/* Network channel: provider and interface choice, endpoint setup, address
 * exchange through PMI, finalize.  The ops table lives here. */
#include <arpa/inet.h>
#include <signal.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chan/net/net.h"
#include "locality/locality.h"
#include "mem/cuda/wh_cuda.h"
#include "core/core.h"
#include "core/peers.h"
#include "pmi/auth.h"
#include "pmi/pmi.h"
#include "util/fabdl.h"
#include "util/log.h"
#include "util/tunables.h"

wh_net_state_t wh_net;

static int net_init(int phase, int *usable);
static int net_finalize(void);
static void net_query(wh_chan_caps_t *caps);
static int net_may_reach(int wpeer);
static int net_reaches(int wpeer, int *why, uint32_t *peer_caps, int *cap_why);

const wh_chan_ops_t wh_chan_net_ops = {
    .name = "net",
    .init = net_init,
    .finalize = net_finalize,
    .progress = wh_net_progress,
    .query = net_query,
    .may_reach = net_may_reach,
    .reaches = net_reaches,
    .am_send = wh_net_am_send,
    .get_zcopy = wh_net_get_zcopy,
    .put_zcopy = wh_net_put_zcopy,
    .mem_reg = wh_net_mem_reg,
    .mem_dereg = wh_net_mem_dereg,
    .atomic_query = wh_net_atomic_query,
    .atomic = wh_net_atomic,
    .bulk_recv = wh_net_bulk_recv,
    .bulk_send = wh_net_bulk_send,
};

/* ---------- provider and interface choice ---------- */

#define NET_RMA_CAPS (FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)

static struct fi_info *make_hints(const char *prov, int strict, uint64_t extra_caps)
{
    struct fi_info *h = fi_allocinfo();
    if (!h)
        return NULL;
    h->ep_attr->type = FI_EP_RDM;
    h->caps = FI_TAGGED | FI_MSG | extra_caps;
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    /* no FI_MR_LOCAL: we never register local buffers */
    h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    if (strict) {
        /* manual progress: no provider thread to starve when ranks
         * oversubscribe the cpus; ordered sends keep control FIFO cheap */
        h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
        h->tx_attr->msg_order = FI_ORDER_SAS;
        h->rx_attr->msg_order = FI_ORDER_SAS;
    }
    if (prov && *prov && !(h->fabric_attr->prov_name = strdup(prov))) {
        fi_freeinfo(h);
        return NULL;
    }
    return h;
}

int wh_net_hmem = -1;

/* Device memory on the network side: does the chosen provider offer FI_HMEM
 * (device buffers registered with the NIC, iface FI_HMEM_CUDA)?  Only
 * detected and reported: device buffers on the network are always staged
 * through host memory (the tcp provider never offers it). */
static void hmem_probe(void)
{
    struct fi_info *h = make_hints(wh_net.info->fabric_attr->prov_name, 0, 0), *out = NULL;
    if (!h)
        return;
    h->caps |= FI_HMEM;
    int rc = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), NULL, NULL, 0, h, &out);
    fi_freeinfo(h);
    wh_net_hmem = rc == 0 && out;
    if (out)
        fi_freeinfo(out);
    WH_DEBUG("net", "provider %s %s FI_HMEM: device buffers are staged through host memory", wh_net.prov,
             wh_net_hmem ? "offers (not used yet)" : "does not offer");
}

/* fi_getinfo for provider prov: directed receives (bulk chunks match only
 * their sender's address) first, then without; within each, the one-sided
 * capabilities (FI_RMA, then FI_ATOMIC, as WHARF_NET_RMA / WHARF_NET_ATOMICS
 * allow) first, then fewer; each set with strict hints (manual progress,
 * ordered sends) first, then relaxed ones. */
static int query(const char *prov, struct fi_info **out)
{
    int rc = -FI_ENODATA;
    const uint64_t sets[] = {NET_RMA_CAPS | FI_ATOMIC, NET_RMA_CAPS, 0};
    for (int directed = 1; directed >= 0; directed--)
        for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
            uint64_t caps = sets[k];
            if (((caps & FI_RMA) && !wh_tun.net_rma) || ((caps & FI_ATOMIC) && !wh_tun.net_atomics))
                continue;
            for (int strict = 1; strict >= 0; strict--) {
                struct fi_info *h = make_hints(prov, strict, caps | (directed ? FI_DIRECTED_RECV : 0));
                if (!h)
                    return -FI_ENOMEM;
                rc = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), NULL, NULL, 0, h, out);
                fi_freeinfo(h);
                if (rc == 0 && *out)
                    return 0;
                WH_DEBUG("net", "provider \"%s\"%s%s%s%s: %s", prov, strict ? " (manual progress, ordered sends)" : "",
                         (caps & FI_RMA) ? " with FI_RMA" : "", (caps & FI_ATOMIC) ? " with FI_ATOMIC" : "",
                         directed ? " with FI_DIRECTED_RECV" : "", fi_strerror(-rc));
            }
        }
    return rc ? rc : -FI_ENODATA;
}

/* Preference of an entry: 0 IPv4, 1 IPv6 global, 2 non-IP address, 3 IPv6
 * link-local, 4 loopback.  Loopback only works inside one network namespace;
 * a local interface address reaches co-resident peers through the kernel's
 * loopback path anyway, so it costs nothing when all ranks are local. */
static int addr_rank(const struct fi_info *i, char *text, size_t len)
{
    snprintf(text, len, "%s", "-");
    if (i->addr_format == FI_SOCKADDR_IN && i->src_addr) {
        const struct sockaddr_in *s = i->src_addr;
        inet_ntop(AF_INET, &s->sin_addr, text, (socklen_t)len);
        return (ntohl(s->sin_addr.s_addr) >> 24) == 127 ? 4 : 0;
    }
    if (i->addr_format == FI_SOCKADDR_IN6 && i->src_addr) {
        const struct sockaddr_in6 *s = i->src_addr;
        inet_ntop(AF_INET6, &s->sin6_addr, text, (socklen_t)len);
        if (IN6_IS_ADDR_LOOPBACK(&s->sin6_addr))
            return 4;
        return IN6_IS_ADDR_LINKLOCAL(&s->sin6_addr) ? 3 : 1;
    }
    return 2;
}

static const char *dom_name(const struct fi_info *i)
{
    return i->domain_attr && i->domain_attr->name ? i->domain_attr->name : "?";
}

/* Pick one entry of the list (interface choice); returns a private copy. */
static struct fi_info *pick(struct fi_info *list, char *why, size_t whylen)
{
    const char *want = wh_tun.net_iface;
    struct fi_info *best = NULL;
    int best_rank = 99;
    char text[INET6_ADDRSTRLEN];
    for (struct fi_info *i = list; i; i = i->next) {
        int r = addr_rank(i, text, sizeof text);
        if (want && *want) {
            int hit = !strcmp(dom_name(i), want) || (i->fabric_attr->name && !strcmp(i->fabric_attr->name, want));
            if (!hit)
                continue;
        }
        if (r < best_rank) {
            best = i;
            best_rank = r;
        }
    }
    if (!best) {
        size_t o = (size_t)snprintf(why, whylen, "no interface named \"%s\" (WHARF_NET_IFACE); available:", want);
        for (struct fi_info *i = list; i && o < whylen; i = i->next)
            o += (size_t)snprintf(why + o, whylen - o, " %s", dom_name(i));
        return NULL;
    }
    if (best_rank == 4)
        WH_INFO("net", "only a loopback interface is available: peers must share this network namespace");
    struct fi_info *copy = fi_dupinfo(best);
    if (!copy)
        snprintf(why, whylen, "out of memory");
    return copy;
}

#define RXM_EAGER_DEFAULT 16384 /* ofi_rxm's eager limit unless FI_OFI_RXM_EAGER_LIMIT says (libfabric 1.17) */

/* ofi_rxm sends a message up to its eager limit (FI_OFI_RXM_EAGER_LIMIT, 16384 bytes in
 * libfabric 1.17) in one piece and segments longer ones (SAR), which then complete long after
 * the messages behind them.  Our eager messages (prefix, header, up to WHARF_NET_EAGER_MAX)
 * must fit it: raise it before libfabric reads it (at its first fi_getinfo), unless the user
 * set it or libfabric is in the process already; then eager messages are capped to the limit
 * (wh_net_open).  8 B to 128 KiB over TCP: docs/NET.md, "Send path". */
static void rxm_eager_env(void)
{
    size_t want = WH_NET_PL_OFF + (wh_tun.net_eager_max > 64 ? wh_tun.net_eager_max : 64);
    if (want <= RXM_EAGER_DEFAULT || getenv("FI_OFI_RXM_EAGER_LIMIT") || wh_fab_in_process())
        return;
    char v[32];
    snprintf(v, sizeof v, "%zu", want);
    setenv("FI_OFI_RXM_EAGER_LIMIT", v, 0);
    WH_DEBUG("net", "FI_OFI_RXM_EAGER_LIMIT=%s (eager messages up to WHARF_NET_EAGER_MAX go in one piece)", v);
}

static int choose_provider(char *why, size_t whylen)
{
    const char *prov = wh_tun.net_provider && *wh_tun.net_provider ? wh_tun.net_provider : "tcp";
    struct fi_info *list = NULL;
    rxm_eager_env();
    if (wh_fab_load()) {
        snprintf(why, whylen, "libfabric unavailable: %s", wh_fab_error());
        return -1;
    }
    int rc = query(prov, &list);
    if (rc && !strcmp(prov, "tcp")) {
        WH_WARN("net", "provider tcp (tcp;ofi_rxm) unavailable: %s; falling back to sockets", fi_strerror(-rc));
        prov = "sockets";
        rc = query(prov, &list);
    }
    if (rc) {
        snprintf(why, whylen, "no libfabric provider \"%s\" with reliable tagged endpoints: %s", prov,
                 fi_strerror(-rc));
        return -1;
    }
    wh_net.info = pick(list, why, whylen);
    fi_freeinfo(list);
    if (!wh_net.info)
        return -1;
    snprintf(wh_net.prov, sizeof wh_net.prov, "%s", wh_net.info->fabric_attr->prov_name);
    if (wh_cuda_on)
        hmem_probe();
    return 0;
}

/* Largest message ofi_rxm sends with its eager protocol (0: not rxm). */
static size_t rxm_eager_limit(void)
{
    if (!strstr(wh_net.prov, "ofi_rxm"))
        return 0;
    size_t v = RXM_EAGER_DEFAULT;
    const char *e = getenv("FI_OFI_RXM_EAGER_LIMIT");
    if (e && *e && wh_tunable_parse(WH_TT_SIZE, e, &v))
        v = RXM_EAGER_DEFAULT;
    return v;
}

/* ---------- endpoint ---------- */

static void tag_layout(void)
{
    uint64_t fmt = wh_net.info->ep_attr->mem_tag_format;
    int bits = 64;
    if (fmt && fmt != ~0ULL) /* highest set bit of the format = width of the tag */
        bits = 64 - __builtin_clzll(fmt);
    wh_net.bulk_bit = 1ULL << (bits - 1);
    wh_net.rank_bits = bits - 33;
}

static void close_all(void)
{
    if (wh_net.ep)
        fi_close(&wh_net.ep->fid);
    wh_net.ep = NULL;
    wh_net_bulk_finalize();
    wh_net_io_finalize();
    if (wh_net.av)
        fi_close(&wh_net.av->fid);
    if (wh_net.cq)
        fi_close(&wh_net.cq->fid);
    if (wh_net.domain)
        fi_close(&wh_net.domain->fid);
    if (wh_net.fabric)
        fi_close(&wh_net.fabric->fid);
    if (wh_net.info)
        fi_freeinfo(wh_net.info);
    free(wh_net.peers);
    memset(&wh_net, 0, sizeof wh_net);
}

#define TRY(call, what)                                                                           \
    do {                                                                                          \
        int rc_ = (int)(call);                                                                    \
        if (rc_) {                                                                                \
            snprintf(why, sizeof why, "%s: %s", what, fi_strerror(-rc_));                         \
            goto fail;                                                                            \
        }                                                                                         \
    } while (0)

int wh_net_open(int rank, int size, char *name, size_t cap, int *usable)
{
    char why[512] = "";
    *usable = 0;
    if (wh_net.open)
        close_all();
    wh_net.rank = rank;
    wh_net.size = size;
    wh_net.gid = wh_peer_gid(rank);
    wh_net.npeers_cap = wh_peers_cap > size ? wh_peers_cap : size;
    if (choose_provider(why, sizeof why))
        goto fail;
    struct fi_info *info = wh_net.info;
    tag_layout();
    if (wh_net.rank_bits < 1 || (wh_net.rank_bits < 31 && (int64_t)wh_gid_make(wh_my_group, (uint32_t)size) >
                                                             ((int64_t)1 << wh_net.rank_bits))) {
        snprintf(why, sizeof why, "provider %s has %d tag bits: too few for %d ranks", wh_net.prov,
                 wh_net.rank_bits + 33, size);
        goto fail;
    }
    size_t emax = wh_tun.net_eager_max;
    wh_net.ctrl_cap = emax > 64 ? emax : 64;
    if (WH_NET_PL_OFF + wh_net.ctrl_cap > info->ep_attr->max_msg_size)
        wh_net.ctrl_cap = info->ep_attr->max_msg_size - WH_NET_PL_OFF;
    size_t rxm = wh_net.rxm_eager = rxm_eager_limit();
    if (rxm && WH_NET_PL_OFF + wh_net.ctrl_cap > rxm && rxm >= WH_NET_PL_OFF + 64 &&
        !getenv("WHARF_NET_EAGER_MAX")) {
        /* Beyond it ofi_rxm segments messages (SAR), which complete long
         * after the messages behind them (held back for order): rendezvous
         * is faster there.  An explicit WHARF_NET_EAGER_MAX is obeyed. */
        wh_net.ctrl_cap = rxm - WH_NET_PL_OFF;
        WH_DEBUG("net", "eager max capped at %zu: headers + payload must fit ofi_rxm's eager limit %zu "
                 "(FI_OFI_RXM_EAGER_LIMIT)", wh_net.ctrl_cap, rxm);
    }
    wh_net.eager_max = emax < wh_net.ctrl_cap ? emax : wh_net.ctrl_cap;
    wh_net.inject_max = info->tx_attr->inject_size;
    wh_net.csize = info->ep_attr->max_msg_size < WH_NET_CHUNK_MAX ? info->ep_attr->max_msg_size : WH_NET_CHUNK_MAX;
    /* Bulk chunks.  ofi_rxm sends a message above its eager limit by a
     * rendezvous of its own (request, read request, read response, ack): a
     * second handshake after wharf's RTS/CTS.  Chunks that fit the eager
     * limit go at once, into the posted receive (dynamic receive buffers
     * over tcp: no bounce copy), 0.6-0.7x the time of a lone 512 KiB-4 MiB
     * message; but many transfers streaming at once lose bandwidth to the
     * per-message cost (0.6-0.7x), so only a transfer that starts while the
     * receiver has no other uses them (bulk_recv). */
    wh_net.csmall = 0;
    if (wh_tun.net_bulk_chunk) {
        size_t want = wh_tun.net_bulk_chunk < 64 ? 64 : wh_tun.net_bulk_chunk;
        wh_net.csize = want < wh_net.csize ? want : wh_net.csize;
    } else if (wh_net.rxm_eager >= 4096 && wh_net.rxm_eager < wh_net.csize)
        wh_net.csmall = wh_net.rxm_eager; /* bulk_recv rounds it down to a power of two */
    wh_net.maxiov = info->tx_attr->iov_limit < WH_NET_MAXIOV ? (int)info->tx_attr->iov_limit : WH_NET_MAXIOV;
    if (info->rx_attr->iov_limit < (size_t)wh_net.maxiov)
        wh_net.maxiov = (int)info->rx_attr->iov_limit;
    if (wh_net.maxiov < 1)
        wh_net.maxiov = 1;

    TRY(fi_fabric(info->fabric_attr, &wh_net.fabric, NULL), "fi_fabric");
    TRY(fi_domain(wh_net.fabric, info, &wh_net.domain, NULL), "fi_domain");
    int nrx = wh_tun.net_rx_bufs > 0 ? wh_tun.net_rx_bufs : 1;
    int ntx = wh_tun.net_tx_bufs > 0 ? wh_tun.net_tx_bufs : 1;
    /* A wait fd, although nothing blocks on it: with FI_WAIT_NONE the tcp provider
     * progresses its sockets by poll() (strace: where the fd queue calls epoll_wait), and
     * ranks that share cpus over the network crawl (isolated, 4 ranks on 2 cpus: an epoch
     * of fenced accumulates 2.9-3.5 ms against 1.6-1.8, mpi4py's suite over 400 s against
     * 160 s); it costs the 8 B ping-pong 0.6-0.9 us (a socketpair signal per completion;
     * docs/NET.md). */
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_FD,
                             .size = (size_t)(2 * (nrx + ntx)) + 4096};
    int crc = fi_cq_open(wh_net.domain, &cqa, &wh_net.cq, NULL);
    if (crc) { /* e.g. the shm provider: no wait fd, polling only */
        WH_DEBUG("net", "completion queue with a wait fd: %s; polling only", fi_strerror(-crc));
        cqa.wait_obj = FI_WAIT_NONE;
        TRY(fi_cq_open(wh_net.domain, &cqa, &wh_net.cq, NULL), "fi_cq_open");
    }
    struct fi_av_attr ava = {.type = info->domain_attr->av_type == FI_AV_MAP ? FI_AV_MAP : FI_AV_TABLE,
                             .count = (size_t)wh_net.npeers_cap};
    if (fi_av_open(wh_net.domain, &ava, &wh_net.av, NULL) != 0 && wh_net.npeers_cap > size) {
        /* a provider with a small address vector (shm: 256): no room for processes of other groups */
        WH_DEBUG("net", "address vector of %d entries refused: %d (no processes of other groups)", wh_net.npeers_cap,
                 size);
        wh_net.av = NULL;
        wh_net.npeers_cap = size;
        ava.count = (size_t)size;
    }
    if (!wh_net.av)
        TRY(fi_av_open(wh_net.domain, &ava, &wh_net.av, NULL), "fi_av_open");
    TRY(fi_endpoint(wh_net.domain, info, &wh_net.ep, NULL), "fi_endpoint");
    TRY(fi_ep_bind(wh_net.ep, &wh_net.av->fid, 0), "binding the address vector");
    TRY(fi_ep_bind(wh_net.ep, &wh_net.cq->fid, FI_TRANSMIT | FI_RECV), "binding the completion queue");
    TRY(fi_enable(wh_net.ep), "fi_enable");

    unsigned char addr[256];
    size_t alen = sizeof addr;
    TRY(fi_getname(&wh_net.ep->fid, addr, &alen), "fi_getname");
    if (2 * alen + 1 + WH_NET_TOKEN_HEX + 2 * 21 + 3 > cap) {
        snprintf(why, sizeof why, "endpoint name of %zu bytes does not fit a PMI value", alen);
        goto fail;
    }
    /* the endpoint token (docs/NET.md, "Who may send"): from the kernel's
     * random source only, published with the name and nowhere else */
    char tok[WH_NET_TOKEN_HEX + 1];
    if (wh_pmi_random_hex(tok, WH_NET_TOKEN_HEX / 2)) {
        snprintf(why, sizeof why, "no random bytes for the endpoint token (getrandom and /dev/urandom failed)");
        goto fail;
    }
    wh_net.token = strtoull(tok, NULL, 16);
    char ck[9];
    if (wh_pmi_random_hex(ck, 4)) {
        snprintf(why, sizeof why, "no random bytes for the bulk cookies");
        goto fail;
    }
    uint32_t cookie0 = (uint32_t)strtoul(ck, NULL, 16); /* set after io_init's reset below */
    /* address, token, then the eager sizes, which must agree across the job (insert_name) */
    wh_net_name_t nm = {.alen = alen, .token = wh_net.token, .cap = wh_net.ctrl_cap, .rxm = wh_net.rxm_eager};
    memcpy(nm.addr, addr, alen);
    if (wh_net_name_format(name, cap, &nm)) {
        snprintf(why, sizeof why, "endpoint name of %zu bytes does not fit a PMI value", alen);
        goto fail;
    }
    size_t addr_hex = 2 * alen; /* the log shows the address, never the token */

    if (!(wh_net.peers = calloc((size_t)wh_net.npeers_cap, sizeof *wh_net.peers))) {
        snprintf(why, sizeof why, "out of memory");
        goto fail;
    }
    for (int r = 0; r < wh_net.npeers_cap; r++)
        wh_net.peers[r].addr = FI_ADDR_NOTAVAIL;
    int rc = wh_net_io_init();
    if (rc) {
        snprintf(why, sizeof why, "posting receive buffers: %s", fi_strerror(-rc));
        goto fail;
    }
    wh_net.open = 1;
    wh_net.next_cookie = cookie0; /* bulk tags of a transfer are not guessable from the previous ones */
    /* one-sided: RMA into registered windows when addressed by virtual address
     * without endpoint binding; FI_ATOMIC probed and reported only */
    uint64_t mm = (uint64_t)info->domain_attr->mr_mode;
    wh_net.rma = (info->caps & FI_RMA) && !(mm & FI_MR_ENDPOINT) && !(mm & FI_MR_LOCAL);
    wh_net.rma_virt = (mm & FI_MR_VIRT_ADDR) != 0;
    wh_net.rma_max = info->ep_attr->max_msg_size < WH_NET_CHUNK_MAX ? info->ep_attr->max_msg_size : WH_NET_CHUNK_MAX;
    wh_net.atomic = wh_net.rma && (info->caps & FI_ATOMIC);
    WH_DEBUG("net", "one-sided: %s (mr_mode 0x%llx, key size %zu); atomics: %s",
             wh_net.rma ? "fi_write/fi_read into registered windows" : "active messages only (no usable FI_RMA)",
             (unsigned long long)mm, info->domain_attr->mr_key_size,
             wh_net.atomic ? "FI_ATOMIC" : "none (WHARF_NET_ATOMICS=0 or not offered)");
    wh_net.auto_progress = info->domain_attr->data_progress == FI_PROGRESS_AUTO;
    char text[INET6_ADDRSTRLEN];
    addr_rank(info, text, sizeof text);
    wh_net.directed = (info->caps & FI_DIRECTED_RECV) != 0;
    WH_DEBUG("net", "provider %s, fabric %s, domain %s, address %s (%.*s), eager max %zu, inject %zu, "
             "chunk %zu (alone %zu), iov %d, progress %s, directed receives %s",
             wh_net.prov, info->fabric_attr->name, dom_name(info), text, (int)addr_hex, name, wh_net.eager_max,
             wh_net.inject_max, wh_net.csize, wh_net.csmall, wh_net.maxiov,
             info->domain_attr->data_progress == FI_PROGRESS_MANUAL ? "manual" : "auto",
             wh_net.directed ? "yes" : "no");
    snprintf(wh_net.myname, sizeof wh_net.myname, "%s", name);
    wh_net.published = 0;
    *usable = 1;
    return MPI_SUCCESS;
fail:
    WH_INFO("net", "network channel unusable: %s", why);
    wh_chan_set_why(WH_CHAN_NET, why);
    close_all();
    return MPI_SUCCESS;
}
#undef TRY

/* 1: IP loopback address, 0: other IP address, -1: not an IP address */
static int name_loopback(const unsigned char *a, size_t len)
{
    struct sockaddr_storage ss;
    if (len < sizeof(sa_family_t) || len > sizeof ss)
        return -1;
    memcpy(&ss, a, len);
    if (ss.ss_family == AF_INET && len >= sizeof(struct sockaddr_in))
        return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
    if (ss.ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6))
        return IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
    return -1;
}

/* Insert peer r's published endpoint name n (net_name.c) into the address vector (nm: its
 * parts).  Its CAP (largest control payload) and RXM (ofi_rxm's eager limit) must equal ours:
 * a larger control message than the receiver posted buffers for is lost, and ofi_rxm
 * endpoints with different eager limits never exchange a message. */
static int insert_name(int r, const char *n, wh_net_name_t *nm)
{
    if (wh_net_name_parse(n, nm))
        return wh_error(MPI_ERR_OTHER, "network channel: malformed endpoint name of rank %d (a rank of another "
                "wharf version?)", r);
    if (nm->cap != wh_net.ctrl_cap || nm->rxm != wh_net.rxm_eager)
        return wh_error(MPI_ERR_OTHER, "network channel: rank %d sends control messages of up to %llu bytes "
                        "(ofi_rxm eager limit %llu), this rank %zu (%zu): set WHARF_NET_EAGER_MAX and "
                        "FI_OFI_RXM_EAGER_LIMIT alike on every rank (libfabric loaded before MPI_Init keeps "
                        "ofi_rxm's default limit; docs/NET.md, \"Send path\")",
                        r, nm->cap, nm->rxm, wh_net.ctrl_cap, wh_net.rxm_eager);
    wh_net.peers[r].token = nm->token;
    fi_addr_t fa = FI_ADDR_NOTAVAIL;
    int rc = fi_av_insert(wh_net.av, nm->addr, 1, &fa, 0, NULL);
    if (rc != 1)
        return wh_error(MPI_ERR_OTHER, "network channel: cannot add rank %d (%.*s) to the address vector: %s", r,
                        (int)(2 * nm->alen), n, fi_strerror(rc < 0 ? -rc : FI_EINVAL));
    wh_net.peers[r].addr = fa;
    return MPI_SUCCESS;
}

int wh_net_connect(const char *const *names)
{
    if (!wh_net.open)
        return MPI_SUCCESS;
    int missing = 0, warned = 0;
    int mine = -1;
    wh_net_name_t nm;
    if (names[wh_net.rank] && !wh_net_name_parse(names[wh_net.rank], &nm))
        mine = name_loopback(nm.addr, nm.alen);
    for (int r = 0; r < wh_net.size; r++) {
        const char *n = names[r];
        if (!n || !*n || !strcmp(n, "-")) {
            missing++;
            continue;
        }
        int rc = insert_name(r, n, &nm);
        if (rc != MPI_SUCCESS)
            return rc;
        int theirs = name_loopback(nm.addr, nm.alen);
        if (!warned && mine >= 0 && theirs >= 0 && mine != theirs) {
            /* e.g. a container whose interface came up after this rank chose one */
            WH_WARN("net", "rank %d listens on a %s address but this rank on a %s one: they cannot reach each other "
                    "(interface not up yet when the channel started? set WHARF_NET_IFACE)",
                    r, theirs ? "loopback" : "non-loopback", mine ? "loopback" : "non-loopback");
            warned = 1;
        }
    }
    WH_DEBUG("net", "%d peer addresses inserted, %d ranks without a network endpoint", wh_net.size - missing,
             missing);
    return MPI_SUCCESS;
}

int wh_net_close(void)
{
    if (wh_net.open) {
        wh_net_drain(10.0);
        wh_net_drop_summary();
        if (wh_net.n_reordered || wh_net.n_eagain)
            WH_DEBUG("net", "%llu control messages arrived out of order, %llu sends waited for the provider",
                     (unsigned long long)wh_net.n_reordered, (unsigned long long)wh_net.n_eagain);
    }
    close_all();
    return MPI_SUCCESS;
}

/* ---------- the init/finalize ops ---------- */

static int net_init(int phase, int *usable)
{
    char key[32];
    if (phase == 0) {
        int vallen = wh_pmi_max_vallen();
        char name[600];
        size_t cap = vallen > 0 && (size_t)vallen < sizeof name ? (size_t)vallen : sizeof name;
        struct sigaction sigs[WH_SIG_GUARDED];
        wh_sig_save(sigs); /* providers (psm2) install fatal-signal handlers of their own */
        wh_net_open(wh_job.rank, wh_job.size, name, cap, usable);
        wh_sig_restore(sigs);
        snprintf(key, sizeof key, "net.%d", wh_job.rank);
        if (wh_pmi_put(key, *usable ? name : "-"))
            return wh_error(MPI_ERR_OTHER, "network channel: cannot publish key %s through PMI", key);
        return MPI_SUCCESS;
    }
    if (phase == 1) {
        *usable = wh_net.open;
        if (!wh_net.open)
            return MPI_SUCCESS;
        int vallen = wh_pmi_max_vallen() > 0 ? wh_pmi_max_vallen() : 1024;
        char **names = calloc((size_t)wh_job.size, sizeof *names);
        char *buf = calloc((size_t)wh_job.size, (size_t)vallen + 1);
        if (!names || !buf) {
            free(names);
            free(buf);
            return wh_error(MPI_ERR_NO_MEM, "network channel: out of memory reading peer addresses");
        }
        for (int r = 0; r < wh_job.size; r++)
            names[r] = buf + (size_t)r * ((size_t)vallen + 1);
        if (wh_pmi_get_ranks("net", wh_job.size, -1, buf, (size_t)vallen + 1) != 0)
            for (int r = 0; r < wh_job.size; r++)
                if (!names[r][0])
                    WH_WARN("net", "no endpoint name of rank %d (PMI key net.%d)", r, r);
        int rc = wh_net_connect((const char *const *)names);
        free(names);
        free(buf);
        return rc;
    }
    *usable = wh_net.open;
    return MPI_SUCCESS;
}

static void net_query(wh_chan_caps_t *caps)
{
    caps->flags = WH_CAP_AM | WH_CAP_BULK | WH_CAP_FALLBACK | (wh_net.rma ? WH_CAP_RMA_REG : 0u) |
                  (wh_net.atomic ? WH_CAP_ATOMIC : 0u);
    caps->mem_kinds = 1u << WH_MEM_HOST;
    caps->max_am = wh_net.open ? wh_net.ctrl_cap : wh_tun.net_eager_max;
    caps->eager_max = wh_net.open ? wh_net.eager_max : wh_tun.net_eager_max;
    caps->max_inline = wh_net.inject_max > WH_NET_PL_OFF ? wh_net.inject_max - WH_NET_PL_OFF : 0;
    caps->max_frag = wh_net.open ? wh_net.csize : WH_NET_CHUNK_MAX;
    caps->lat_us = 5.0;
    caps->bw_mbs = 1000.0;
}

static int net_may_reach(int wpeer) { return wpeer != wh_job.rank; }

static int net_reaches(int wpeer, int *why, uint32_t *peer_caps, int *cap_why)
{
    *cap_why = 0;
    *peer_caps = 0;
    if (!wh_net.open || wpeer < 0 || wpeer >= wh_net_npeers() || wh_net.peers[wpeer].addr == FI_ADDR_NOTAVAIL) {
        *why = WH_WHY_NO_ENDPOINT;
        return 0;
    }
    *peer_caps = WH_CAP_AM | WH_CAP_BULK | (wh_net.rma ? WH_CAP_RMA_REG : 0u) | (wh_net.atomic ? WH_CAP_ATOMIC : 0u);
    return 1;
}

static int net_finalize(void)
{
    return wh_net_close();
}

/* ---------- processes of other groups (MPI_Comm_spawn; docs/DYNAMIC.md) ---------- */

/* The PMI key under which a process publishes its endpoint for every group
 * of the launcher (wharfrun shares keys starting with "wharf-global-"). */
static void ep_key(uint32_t gid, char *key, size_t len)
{
    snprintf(key, len, "wharf-global-ep-%u", (unsigned)gid);
}

int wh_chan_net_dyn_open(void)
{
    if (!wh_net.open) {
        int vallen = wh_pmi_max_vallen(), usable = 0;
        char name[600];
        size_t cap = vallen > 0 && (size_t)vallen < sizeof name ? (size_t)vallen : sizeof name;
        struct sigaction sigs[WH_SIG_GUARDED];
        wh_sig_save(sigs);
        wh_net_open(wh_job.rank, wh_job.size, name, cap, &usable);
        wh_sig_restore(sigs);
        if (!usable)
            return wh_error(MPI_ERR_OTHER, "the network channel, which connects processes of different groups "
                            "(MPI_Comm_spawn, ports of another group), cannot open (see WHARF_LOG=info)");
        wh_chan_usable[WH_CHAN_NET] = 1;
        wh_chans[WH_CHAN_NET]->query(&wh_chan_caps[WH_CHAN_NET]);
    }
    if (!wh_net.published) {
        char key[64];
        ep_key(wh_net.gid, key, sizeof key);
        if (wh_pmi_put(key, wh_net.myname) != 0)
            return wh_error(MPI_ERR_OTHER, "network channel: cannot publish PMI key %s: %s", key, wh_pmi_error());
        wh_net.published = 1;
    }
    if (!wh_chan_polled[WH_CHAN_NET]) {
        wh_chan_polled[WH_CHAN_NET] = 1;
        wh_chans_poll_set();
    }
    return MPI_SUCCESS;
}

int wh_net_peer_of_gid(uint32_t gid)
{
    int idx = wh_peer_find(gid);
    if (idx >= 0 && idx < wh_net.npeers_cap && wh_net.peers[idx].addr != FI_ADDR_NOTAVAIL)
        return idx;
    if (!wh_net.open)
        return -1;
    char key[64], val[600];
    ep_key(gid, key, sizeof key);
    if (wh_pmi_get(key, val, sizeof val) != 0) {
        WH_DEBUG("net", "no endpoint of process %u (group %u rank %u): %s", (unsigned)gid,
                 (unsigned)(gid >> WH_GID_RANK_BITS), (unsigned)(gid & ((1u << WH_GID_RANK_BITS) - 1)),
                 wh_pmi_error());
        return -1;
    }
    if (idx < 0 && (idx = wh_peer_new(gid)) < 0) {
        WH_WARN("net", "too many processes of other groups (%d): cannot address process %u", WH_PEERS_FOREIGN_MAX,
                (unsigned)gid);
        return -1;
    }
    if (idx >= wh_net.npeers_cap)
        return -1;
    wh_net_name_t nm;
    if (insert_name(idx, val, &nm) != MPI_SUCCESS)
        return -1;
    if (wh_peer_added_hook && wh_peer_added_hook(idx) != MPI_SUCCESS)
        return -1;
    WH_DEBUG("net", "process %u (group %u rank %u) is peer %d", (unsigned)gid, (unsigned)(gid >> WH_GID_RANK_BITS),
             (unsigned)(gid & ((1u << WH_GID_RANK_BITS) - 1)), idx);
    return idx;
}
