/* A process outside the job that reaches a rank's network endpoint and
 * forges wharf traffic at it (test net.forge, tests/net/forge_test.py).
 *
 *   net_forge ADDRHEX
 *
 * ADDRHEX is the target endpoint's libfabric address (hex, as the rank logs
 * it at WHARF_LOG=debug; the endpoint token is not part of it).  The
 * program opens its own tcp;ofi_rxm endpoint and sends, all bounded:
 *   - control messages (tag 0) in the pre-token 8-byte prefix format and in
 *     today's 16-byte one with guessed tokens, claiming ranks 0 and 1 and
 *     sequence numbers 0..15, for every active-message type 0..63 with an
 *     eager-like header (ctx 0..3, tag 7, 8-byte payload);
 *   - runts (1 byte) and oversized messages (64 KiB, truncated);
 *   - bulk-tagged messages (bulk bit | rank | cookie) for 256 cookies;
 *   - fi_write into registered memory with keys 0..255 and random keys.
 * It exits 0 when everything was sent (errors of individual operations are
 * expected and counted); 2 when it could not even open an endpoint. */
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chan/chan.h" /* wh_hdr_t: the attacker knows the wire format */

static struct fid_ep *ep;
static struct fid_cq *cq;
static fi_addr_t target;
static long posted, failed, completed, errors;

static void drain(int wait_all)
{
    struct fi_cq_tagged_entry ev[16];
    for (long spins = 0; spins < 2000000; spins++) {
        ssize_t n = fi_cq_read(cq, ev, 16);
        if (n > 0) {
            completed += n;
        } else if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry e;
            memset(&e, 0, sizeof e);
            if (fi_cq_readerr(cq, &e, 0) == 1)
                errors++;
        } else if (!wait_all || completed + errors >= posted) {
            return;
        }
    }
}

static char sendbufs[64][65536];
static struct fi_context2 ctxs[64];
static unsigned slot;

static void send_tagged(const void *buf, size_t len, uint64_t tag)
{
    char *b = sendbufs[slot % 64];
    struct fi_context2 *c = &ctxs[slot % 64];
    slot++;
    memcpy(b, buf, len);
    for (int tries = 0; tries < 100000; tries++) {
        ssize_t rc = fi_tsend(ep, b, len, NULL, target, tag, c);
        if (rc == 0) {
            posted++;
            break;
        }
        if (rc != -FI_EAGAIN) {
            failed++;
            break;
        }
        drain(0);
    }
    if (slot % 64 == 0)
        drain(1); /* the 64 buffers are reused: wait for them */
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: net_forge ADDRHEX\n");
        return 2;
    }
    unsigned char addr[256];
    size_t alen = strlen(argv[1]) / 2;
    for (size_t i = 0; i < alen && i < sizeof addr; i++)
        sscanf(argv[1] + 2 * i, "%2hhx", &addr[i]);

    struct fi_info *h = fi_allocinfo(), *info = NULL;
    h->ep_attr->type = FI_EP_RDM;
    h->caps = FI_TAGGED | FI_MSG | FI_RMA | FI_WRITE | FI_READ;
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    h->fabric_attr->prov_name = strdup("tcp");
    if (fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info) || !info) {
        fprintf(stderr, "net_forge: no tcp provider\n");
        return 2;
    }
    struct fid_fabric *fab;
    struct fid_domain *dom;
    struct fid_av *av;
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_TAGGED, .size = 4096};
    struct fi_av_attr ava = {.type = FI_AV_TABLE, .count = 4};
    if (fi_fabric(info->fabric_attr, &fab, NULL) || fi_domain(fab, info, &dom, NULL) ||
        fi_cq_open(dom, &cqa, &cq, NULL) || fi_av_open(dom, &ava, &av, NULL) || fi_endpoint(dom, info, &ep, NULL) ||
        fi_ep_bind(ep, &av->fid, 0) || fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV) || fi_enable(ep)) {
        fprintf(stderr, "net_forge: cannot open an endpoint\n");
        return 2;
    }
    if (fi_av_insert(av, addr, 1, &target, 0, NULL) != 1) {
        fprintf(stderr, "net_forge: cannot insert the target address\n");
        return 2;
    }
    srand((unsigned)time(NULL));
    uint64_t tokens[3] = {0, ~0ULL, ((uint64_t)rand() << 32) ^ (uint64_t)rand()};

    /* forged control messages, old (8-byte prefix) and new (16-byte) formats */
    unsigned char msg[128];
    for (int fmt = 0; fmt < 4; fmt++) {
        size_t pre = fmt == 0 ? 8 : 16;
        for (int type = 0; type < 64; type++)
            for (uint32_t rank = 0; rank < 2; rank++)
                for (uint16_t seq = 0; seq < 16; seq++) {
                    memset(msg, 0, sizeof msg);
                    memcpy(msg, &rank, 4);
                    memcpy(msg + 4, &seq, 2);
                    if (fmt)
                        memcpy(msg + 8, &tokens[fmt - 1], 8);
                    wh_hdr_t hd = {.type = (uint8_t)type, .ctx = (uint32_t)(seq & 3), .src = (int32_t)rank,
                                   .tag = 7, .len = 8, .sreq = 1};
                    memcpy(msg + pre, &hd, sizeof hd);
                    int64_t v = 666;
                    memcpy(msg + pre + sizeof hd, &v, 8);
                    send_tagged(msg, pre + sizeof hd + 8, 0);
                }
    }
    /* runts and oversized messages */
    static char big[65536];
    memset(big, 0x41, sizeof big);
    for (int i = 0; i < 32; i++) {
        send_tagged(big, 1, 0);
        send_tagged(big, sizeof big, 0);
    }
    /* bulk-tagged chunks: bulk bit (bit 63) | claimed rank 1 | cookie */
    for (uint32_t cookie = 0; cookie < 256; cookie++)
        send_tagged(big, 4096, (1ULL << 63) | (1ULL << 32) | cookie);
    drain(1);

    /* writes into registered memory with guessed keys, offset 0 and the
     * first pages (tcp;ofi_rxm addresses registered memory by offset) */
    long rma_posted = 0;
    for (uint64_t key = 0; key < 258; key++) {
        uint64_t k = key < 256 ? key : tokens[2] ^ key;
        struct iovec iov = {.iov_base = big, .iov_len = 64};
        struct fi_rma_iov riov = {.addr = 0, .len = 64, .key = k};
        struct fi_msg_rma m = {.msg_iov = &iov, .iov_count = 1, .addr = target, .rma_iov = &riov,
                               .rma_iov_count = 1, .context = &ctxs[0]};
        for (int tries = 0; tries < 100000; tries++) {
            ssize_t rc = fi_writemsg(ep, &m, FI_COMPLETION);
            if (rc == 0) {
                posted++;
                rma_posted++;
                break;
            }
            if (rc != -FI_EAGAIN) {
                failed++;
                break;
            }
            drain(0);
        }
        drain(1);
    }
    drain(1);
    printf("net_forge: posted %ld (%ld writes), refused at post %ld, completed %ld, completed with error %ld\n",
           posted, rma_posted, failed, completed, errors);
    fflush(stdout);
    fi_close(&ep->fid);
    fi_close(&av->fid);
    fi_close(&cq->fid);
    fi_close(&dom->fid);
    fi_close(&fab->fid);
    fi_freeinfo(info);
    fi_freeinfo(h);
    return 0;
}
