/* The coordinator as a pure function: channel per peer by reach, declared
 * latency and WHARF_CHANNEL; protocol per (bytes, memory kind, operation)
 * from the thresholds and the pair's capabilities. */
#include "check.h"
#include "coord/coord.h"

int main(void)
{
    /* channel choice */
    wh_coord_cand_t c[3] = {{1, 0.0, "self"}, {1, 0.2, "shm"}, {1, 5.0, "net"}};
    CHECK(wh_coord_pick_pure(3, c, "auto", 0) == 0);   /* myself: self */
    CHECK(wh_coord_pick_pure(3, c, "net", 0) == 0);    /* forcing never applies to self */
    c[0].reaches = 0;                                  /* any other peer: self does not reach it */
    CHECK(wh_coord_pick_pure(3, c, "auto", -1) == 1);  /* co-resident: lowest latency */
    CHECK(wh_coord_pick_pure(3, c, "net", -1) == 2);   /* forced */
    c[1].reaches = 0;
    CHECK(wh_coord_pick_pure(3, c, "auto", -1) == 2);  /* remote: net */
    CHECK(wh_coord_pick_pure(3, c, "shm", -1) == 2);   /* a forced channel that cannot reach: the best that can */
    c[2].reaches = 0;
    CHECK(wh_coord_pick_pure(3, c, "auto", -1) == -1); /* nobody */

    /* protocols */
    wh_coord_limits_t lim = {.eager_max = {(size_t)-1, 8192, 16384}, .max_am = {(size_t)-1, 16352, 16384},
                             .mem_kinds = {1, 1, 1}, .zcopy_min = 32768};
    wh_coord_peer_t cma = {.chan = 1, .caps = WH_CAP_AM | WH_CAP_GET_ZCOPY | WH_CAP_PUT_ZCOPY};
    wh_coord_peer_t shm = {.chan = 1, .caps = WH_CAP_AM};
    wh_coord_peer_t net = {.chan = 2, .caps = WH_CAP_AM | WH_CAP_BULK};
    wh_coord_choice_t r;
    r = wh_coord_decide_pure(&cma, &lim, 8, WH_MEM_HOST, WH_OPK_SEND, 0);
    CHECK(r.chan == 1 && r.proto == WH_PROTO_EAGER);
    r = wh_coord_decide_pure(&cma, &lim, 8192, WH_MEM_HOST, WH_OPK_SEND, 0);
    CHECK(r.proto == WH_PROTO_EAGER);
    r = wh_coord_decide_pure(&cma, &lim, 8193, WH_MEM_HOST, WH_OPK_SEND, 0);
    CHECK(r.proto == WH_PROTO_RNDV);
    r = wh_coord_decide_pure(&net, &lim, 16384, WH_MEM_HOST, WH_OPK_SEND, 0);
    CHECK(r.chan == 2 && r.proto == WH_PROTO_EAGER);
    /* per-peer eager limit: a pair CMA serves takes single copy above
     * WHARF_CMA_MIN, unless the node is oversubscribed */
    {
        wh_coord_limits_t l2 = lim;
        l2.eager_max[1] = 16384;
        l2.zcopy_min = 8192;
        CHECK(wh_coord_peer_eager(&l2, 1, cma.caps, 0) == 8192);
        CHECK(wh_coord_peer_eager(&l2, 1, cma.caps, 1) == 16384);
        CHECK(wh_coord_peer_eager(&l2, 1, shm.caps, 0) == 16384); /* no CMA: eager */
        CHECK(wh_coord_peer_eager(&l2, 2, net.caps, 0) == 16384);
        l2.zcopy_min = 0; /* (CMA for every size: no cut below a message of one byte) */
        CHECK(wh_coord_peer_eager(&l2, 1, cma.caps, 0) == 16384);
        wh_coord_peer_t p = cma;
        l2.zcopy_min = 8192;
        p.eager_max = wh_coord_peer_eager(&l2, 1, p.caps, 0);
        r = wh_coord_decide_pure(&p, &l2, 12288, WH_MEM_HOST, WH_OPK_SEND, 0);
        CHECK(r.proto == WH_PROTO_RNDV);
        r = wh_coord_decide_pure(&p, &l2, 8192, WH_MEM_HOST, WH_OPK_SEND, 0);
        CHECK(r.proto == WH_PROTO_EAGER);
    }
    r = wh_coord_decide_pure(&cma, &lim, 8, 2, WH_OPK_SEND, 0); /* a memory kind the channel cannot move */
    CHECK(r.proto == WH_PROTO_RNDV);
    r = wh_coord_decide_pure(&cma, &lim, 1 << 20, WH_MEM_HOST, WH_OPK_RNDV, 1);
    CHECK(r.proto == WH_PROTO_GET);
    r = wh_coord_decide_pure(&cma, &lim, 1 << 20, WH_MEM_HOST, WH_OPK_RNDV, 0); /* sender not contiguous */
    CHECK(r.proto == WH_PROTO_FRAG);
    r = wh_coord_decide_pure(&cma, &lim, 16384, WH_MEM_HOST, WH_OPK_RNDV, 1);   /* below WHARF_CMA_MIN */
    CHECK(r.proto == WH_PROTO_FRAG);
    r = wh_coord_decide_pure(&shm, &lim, 1 << 20, WH_MEM_HOST, WH_OPK_RNDV, 1);
    CHECK(r.proto == WH_PROTO_FRAG);
    r = wh_coord_decide_pure(&net, &lim, 1 << 20, WH_MEM_HOST, WH_OPK_RNDV, 1);
    CHECK(r.proto == WH_PROTO_BULK);
    /* a receiver that asks the sender to write (a gather's root) */
    r = wh_coord_decide_pure(&cma, &lim, 1 << 20, WH_MEM_HOST, WH_OPK_RNDV, WH_REMOTE_ADDR | WH_RECV_WANTS_PUT);
    CHECK(r.proto == WH_PROTO_PUT);
    r = wh_coord_decide_pure(&cma, &lim, 1 << 20, WH_MEM_HOST, WH_OPK_RNDV, WH_RECV_WANTS_PUT); /* any sender layout */
    CHECK(r.proto == WH_PROTO_PUT);
    r = wh_coord_decide_pure(&cma, &lim, 16384, WH_MEM_HOST, WH_OPK_RNDV, WH_REMOTE_ADDR | WH_RECV_WANTS_PUT);
    CHECK(r.proto == WH_PROTO_FRAG); /* below WHARF_CMA_MIN */
    r = wh_coord_decide_pure(&shm, &lim, 1 << 20, WH_MEM_HOST, WH_OPK_RNDV, WH_REMOTE_ADDR | WH_RECV_WANTS_PUT);
    CHECK(r.proto == WH_PROTO_FRAG); /* no single copy for the pair */
    r = wh_coord_decide_pure(&net, &lim, 1 << 20, WH_MEM_HOST, WH_OPK_RNDV, WH_REMOTE_ADDR | WH_RECV_WANTS_PUT);
    CHECK(r.proto == WH_PROTO_BULK);
    r = wh_coord_decide_pure(&cma, &lim, 1 << 20, WH_MEM_HOST, WH_OPK_PUT, 1);
    CHECK(r.proto == WH_PROTO_PUT);
    r = wh_coord_decide_pure(&net, &lim, 1 << 20, WH_MEM_HOST, WH_OPK_GET, 1);
    CHECK(r.proto == WH_PROTO_AM);
    r = wh_coord_decide_pure(&cma, &lim, 8, WH_MEM_HOST, WH_OPK_GET, 1);
    CHECK(r.proto == WH_PROTO_AM);
    /* device buffers: CUDA IPC between co-resident ranks when the sender
     * exported a handle, staged fragments otherwise and over the network */
    r = wh_coord_decide_pure(&cma, &lim, 8, WH_MEM_CUDA, WH_OPK_SEND, 0);
    CHECK(r.proto == WH_PROTO_RNDV); /* no staged eager (dev_eager_max 0) */
    lim.dev_eager_max = 4096;
    r = wh_coord_decide_pure(&cma, &lim, 4096, WH_MEM_CUDA, WH_OPK_SEND, 0);
    CHECK(r.proto == WH_PROTO_EAGER);
    r = wh_coord_decide_pure(&cma, &lim, 4097, WH_MEM_CUDA, WH_OPK_SEND, 0);
    CHECK(r.proto == WH_PROTO_RNDV);
    lim.dev_eager_max = 1 << 20; /* still capped by the channel's eager limit */
    r = wh_coord_decide_pure(&cma, &lim, 8193, WH_MEM_CUDA, WH_OPK_SEND, 0);
    CHECK(r.proto == WH_PROTO_RNDV);
    r = wh_coord_decide_pure(&cma, &lim, 8193, WH_MEM_HOST, WH_OPK_SEND, 0);
    CHECK(r.proto == WH_PROTO_RNDV);
    r = wh_coord_decide_pure(&shm, &lim, 1 << 20, WH_MEM_CUDA, WH_OPK_RNDV, WH_REMOTE_CUDA_IPC);
    CHECK(r.chan == WH_CHAN_SHM && r.proto == WH_PROTO_CUDA_IPC);
    r = wh_coord_decide_pure(&cma, &lim, 1, WH_MEM_CUDA, WH_OPK_RNDV, WH_REMOTE_CUDA_IPC);
    CHECK(r.proto == WH_PROTO_CUDA_IPC);
    r = wh_coord_decide_pure(&cma, &lim, 1 << 20, WH_MEM_CUDA, WH_OPK_RNDV, WH_REMOTE_ADDR); /* no handle */
    CHECK(r.proto == WH_PROTO_FRAG);
    r = wh_coord_decide_pure(&net, &lim, 1 << 20, WH_MEM_CUDA, WH_OPK_RNDV, WH_REMOTE_CUDA_IPC);
    CHECK(r.chan == 2 && r.proto == WH_PROTO_FRAG); /* not co-resident: staged */
    r = wh_coord_decide_pure(&shm, &lim, 1 << 20, WH_MEM_HOST, WH_OPK_RNDV, WH_REMOTE_CUDA_IPC);
    CHECK(r.proto == WH_PROTO_FRAG); /* host memory never maps a handle */
    return DONE();
}
