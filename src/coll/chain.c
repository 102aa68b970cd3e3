/* Scan and exscan along a pipelined chain, for large messages: rank r
 * receives the prefix of ranks 0..r-1 from r-1 in chunks, combines each
 * chunk with its own and passes it on to r+1 at once, so every rank moves
 * and reduces each byte once (recursive doubling moves and reduces it log n
 * times, which is what a node with more ranks than cores pays for) and the
 * chunks of consecutive ranks overlap.  Operand order is rank order, so
 * non-commutative ops are right.
 *
 * Each stream starts with a header {bytes, chunk bytes} of the sender; the
 * receiver drains exactly the chunks the header announces, so ranks called
 * with different counts (erroneous) fail instead of hanging: a rank whose
 * predecessor's header differs from its own notes the error and announces
 * 0 bytes to its successor, which fails in turn.  Contiguous layouts
 * (shm_contig in select.c) only. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "core/err.h"
#include "util/scratch.h"
#include "util/tunables.h"

typedef struct {
    uint64_t bytes, chunk;
} chain_hdr_t;

/* elements in chunk j of count elements cut every `per` */
static inline size_t chunk_len(MPI_Count count, size_t per, size_t j)
{
    return (size_t)count - j * per < per ? (size_t)count - j * per : per;
}

int wh_scan_chain(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
                  wh_comm_t *c, int exclusive)
{
    int n = c->size, r = c->rank, err = MPI_SUCCESS;
    int tag = exclusive ? WH_TAG_EXSCAN : WH_TAG_SCAN;
    size_t esz = dt->size, bytes = (size_t)count * esz;
    size_t per = wh_tun.coll_scan_chunk / esz ? wh_tun.coll_scan_chunk / esz : 1; /* elements per chunk */
    size_t m = ((size_t)count + per - 1) / per;
    wh_dtype_t *byte = wh_coll_byte();
    char *rb = (char *)rbuf + dt->true_lb; /* contiguous: data at buf + true_lb (0 here) */
    const char *mine = sbuf == MPI_IN_PLACE ? rb : (const char *)sbuf + dt->true_lb;
    int last = r == n - 1;
    /* what goes to r+1: rank 0 sends its own data; inclusive ranks send
     * rbuf (their result); exclusive middle ranks send prev op mine, built
     * in `out`.  Received chunks go to rbuf where that is right, else `in`. */
    int direct = !exclusive ? (op->commute && sbuf != MPI_IN_PLACE) : 1; /* receive into rbuf */
    int need_out = exclusive && r > 0 && !last;
    int need_in = r > 0 && !direct;
    int own_copy = exclusive && sbuf == MPI_IN_PLACE && r > 0 && !last; /* rbuf will be overwritten */
    char *in = NULL, *out = NULL, *own = NULL;
    if (need_in && !(in = wh_scratch_get(bytes)))
        wh_coll_note(wh_coll_nomem("scan chain buffer", bytes), &err);
    if (need_out && !(out = wh_scratch_get(bytes)))
        wh_coll_note(wh_coll_nomem("scan chain buffer", bytes), &err);
    if (own_copy && err == MPI_SUCCESS) {
        if (!(own = wh_scratch_get(bytes)))
            wh_coll_note(wh_coll_nomem("scan chain buffer", bytes), &err);
        else {
            memcpy(own, mine, bytes);
            mine = own;
        }
    }
    wh_req_t **sreq = calloc(m + 1, sizeof *sreq), **rreq = calloc(m + 1, sizeof *rreq);
    if (!sreq || !rreq)
        wh_coll_note(wh_coll_nomem("scan chain requests", 2 * (m + 1) * sizeof *sreq), &err);

    /* the predecessor's header: how many chunks of what size follow */
    chain_hdr_t prev = {0, 0}, hdr = {bytes, per * esz};
    size_t pm = 0; /* chunks to receive */
    int match = 0;
    if (r > 0) {
        wh_coll_erecv(&prev, sizeof prev, byte, r - 1, tag, c, &err);
        if (err == MPI_SUCCESS && prev.bytes > bytes)
            wh_coll_note(wh_error(MPI_ERR_TRUNCATE,
                                  "message truncated: rank %d passes %llu bytes to the %s, this rank %zu (the "
                                  "ranks passed different counts)",
                                  r - 1, (unsigned long long)prev.bytes, exclusive ? "exscan" : "scan", bytes),
                         &err);
        else if (err == MPI_SUCCESS && prev.bytes != bytes)
            wh_coll_note(wh_coll_short_error(r - 1, (size_t)prev.bytes, bytes), &err);
        else if (err == MPI_SUCCESS && prev.chunk != hdr.chunk)
            wh_coll_note(wh_error(MPI_ERR_OTHER,
                                  "rank %d cuts the %s into chunks of %llu bytes, this rank into %llu "
                                  "(WHARF_COLL_SCAN_CHUNK or the datatype's size differ between ranks)",
                                  r - 1, exclusive ? "exscan" : "scan", (unsigned long long)prev.chunk,
                                  (unsigned long long)hdr.chunk),
                         &err);
        pm = prev.chunk ? (size_t)((prev.bytes + prev.chunk - 1) / prev.chunk) : 0;
        match = err == MPI_SUCCESS && sreq && rreq;
    }
    /* a rank that failed already announces 0 bytes: nothing follows */
    int sending = !last && err == MPI_SUCCESS && sreq && rreq;
    if (!last) {
        chain_hdr_t h = sending ? hdr : (chain_hdr_t){0, 0};
        wh_coll_esend(&h, sizeof h, byte, r + 1, tag, c, &err);
    }

    if (r == 0) {
        for (size_t j = 0; sending && j < m; j++) {
            size_t lo = j * per, len = chunk_len(count, per, j);
            wh_coll_eisend(mine + lo * esz, (MPI_Count)(len * esz), byte, 1, tag, c, &sreq[j], &err);
        }
        if (!exclusive && sbuf != MPI_IN_PLACE && err == MPI_SUCCESS)
            memcpy(rb, mine, bytes);
    } else if (!match) {
        /* drain what the predecessor announced, unchecked (this rank has
         * failed already); send nothing more */
        size_t cb = prev.chunk <= ((size_t)64 << 20) ? (size_t)prev.chunk : 0;
        char *sink = cb ? wh_scratch_get(cb) : NULL;
        for (size_t j = 0; j < pm; j++)
            (void)WH_COLL_RECV(sink, sink ? (MPI_Count)cb : 0, byte, r - 1, tag, c);
        wh_scratch_put(sink);
    } else {
        char *dst = direct ? rb : in;
        /* every receive posted at once: chunk j + 1 arrives while chunk j is combined */
        for (size_t j = 0; j < m; j++) {
            size_t lo = j * per, len = chunk_len(count, per, j);
            wh_coll_eirecv(dst + lo * esz, (MPI_Count)(len * esz), byte, r - 1, tag, c, &rreq[j], &err);
        }
        for (size_t j = 0; j < m; j++) {
            size_t lo = j * per, len = chunk_len(count, per, j);
            wh_coll_ewait(rreq[j], &err);
            rreq[j] = NULL;
            char *res = rb + lo * esz; /* my result for the chunk */
            const char *my = mine + lo * esz;
            int rc = MPI_SUCCESS;
            const char *send_from = res;
            if (err != MPI_SUCCESS) {
                /* received nothing usable: no local work */
            } else if (!exclusive) {
                if (direct) /* res = prev (received); res = my op prev (commutative) */
                    rc = wh_op_apply(op, my, res, len, dth, dt);
                else if (sbuf != MPI_IN_PLACE) /* res = prev op my, one pass */
                    rc = wh_op_apply3(op, in + lo * esz, my, res, len, dth, dt);
                else /* res holds my: res = prev op res */
                    rc = wh_op_apply(op, in + lo * esz, res, len, dth, dt);
            } else if (!last) { /* res = prev (received); out = prev op my, one pass */
                rc = wh_op_apply3(op, res, my, out + lo * esz, len, dth, dt);
                send_from = out + lo * esz;
            }
            wh_coll_note(rc, &err);
            if (sending && err == MPI_SUCCESS)
                wh_coll_eisend(send_from, (MPI_Count)(len * esz), byte, r + 1, tag, c, &sreq[j], &err);
            else if (sending) { /* this and the rest go empty: the successor fails too */
                for (size_t k = j; k < m; k++)
                    wh_coll_esend(NULL, 0, byte, r + 1, tag, c, &err);
                sending = 0;
            }
        }
    }
    for (size_t j = 0; sreq && j < m; j++)
        wh_coll_ewait(sreq[j], &err);
    free(sreq);
    free(rreq);
    wh_scratch_put(in);
    wh_scratch_put(out);
    wh_scratch_put(own);
    return err;
}
