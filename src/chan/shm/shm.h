/* Shared-memory channel internals.  Node memory grows linearly with the
 * co-resident ranks, not with their pairs:
 *  - every directed pair has a small ring of 128-byte cells (its order and its
 *    latency path: a message of up to 80 bytes travels inside the cell); the
 *    rings are interleaved, cell i of every pair in one row, so consecutive
 *    cells of a ring lie in different pages (cells at a fixed stride inside a
 *    page let the receiver's prefetcher pull lines the sender is about to
 *    write: 8 B ping-pong 0.25 us instead of 0.20 us);
 *  - every rank owns one pool of large slots in the node region; a larger
 *    payload is copied into a free slot of the SENDER's pool and the ring cell
 *    names the slot; the receiver hands the slot back by clearing its flag.
 *  - every rank owns one doorbell line (doorbell.h): a rank idle for long sleeps
 *    on it, and whoever puts a cell in its rings (or frees room it waits for)
 *    wakes it.
 * Large transfers: CMA single copy (cma.c) as the zero-copy get/put; otherwise
 * the protocol layer pipelines fragments through the slots as active messages. */
#ifndef WH_CHAN_SHM_SHM_H
#define WH_CHAN_SHM_SHM_H
#include <stddef.h>
#include <stdint.h>
#include "chan/chan.h"
#include "chan/shm/doorbell.h"


/* Ring cell: the first cache line holds state, length, header, the slot
 * reference and the first 16 payload bytes, so a small message moves in one
 * line. */
typedef struct wh_shm_cell {
    volatile uint32_t state;  /* 0 empty, 1 full (release/acquire) */
    uint32_t plen;            /* payload bytes */
    wh_hdr_t hdr;
    uint32_t slot;            /* 0: payload inline; else 1 + slot of the sender's pool */
    uint32_t pad;
    unsigned char payload[];  /* inline payload, continues past the first line */
} wh_shm_cell_t;

#define WH_SHM_CELL_HDR offsetof(wh_shm_cell_t, payload)
_Static_assert(offsetof(wh_shm_cell_t, payload) == 48, "ring cell header must leave 16 bytes of the first line");
#define WH_SHM_CELL_BYTES 128u                              /* ring cell stride */
#define WH_SHM_INLINE (WH_SHM_CELL_BYTES - WH_SHM_CELL_HDR) /* payload bytes inside a ring cell */

/* Pool slot: a flag the owner sets when it fills the slot and the receiver
 * clears when it is done, then the payload (64-byte aligned). */
typedef struct wh_shm_slot {
    volatile uint32_t busy;
    uint32_t pad[15];
    unsigned char payload[];
} wh_shm_slot_t;

/* A single-copy transfer that both ranks copy at once (proto/split.c): the
 * receiver owns WH_SHM_SPLIT_LINES of these lines; it and the sender claim
 * chunks of the message from `claim` (generation << 40 | next offset: a
 * claim against a line since reused fails) and add what they copied to
 * `done`. */
typedef struct wh_shm_split {
    _Alignas(64) volatile uint64_t claim;
    volatile uint64_t done;
    volatile uint32_t err;   /* the receiver's copy failed (its bytes still count in done) */
    uint32_t busy;           /* the owner's: in use */
    uint64_t saddr, srkey;   /* the owner's: where it reads the sender's buffer */
    uint64_t back_off;       /* a chunk the sender claimed but could not write */
    volatile uint64_t back_len; /* (set last, release; 0: none): the receiver copies it */
    uint32_t pad[2];
} wh_shm_split_t;
_Static_assert(sizeof(wh_shm_split_t) == 64, "a split line is one cache line");
#define WH_SHM_SPLIT_LINES 16

typedef struct wh_shm_state {
    unsigned char *rings;     /* nlocal x nlocal rings in the node region */
    unsigned char *pools;     /* nlocal pools */
    int nlocal, me;           /* my local index */
    int *peer_ok;             /* per local index: its queues exist */
    unsigned char **txq;      /* local index -> my ring towards it */
    unsigned char **rxq;      /* local index -> its ring towards me */
    unsigned char **pool;     /* local index -> its pool */
    uint32_t *tx_idx, *rx_idx;
    int *peers;               /* local indices other than me */
    int npeers;
    uint32_t ring_cells;      /* cells per ring (power of two) */
    uint64_t ring_stride;     /* bytes between cells i and i+1 of one ring (shm.h) */
    uint32_t nslots, slot_payload, slot_cursor;
    uint64_t slot_stride;
    /* CMA */
    int *cma_ok;              /* per local index: I can CMA-read it */
    int *cma_why;             /* per local index: WH_WHY_* when not */
    int *pid;                 /* per local index */
    unsigned char *cma_seen;  /* per local index: WH_CMA_* verdicts found since the probe */
    /* doorbells (doorbell.h): one line per local rank after the pools */
    wh_db_t *db;
    int db_ok;
    wh_shm_split_t *split;    /* WH_SHM_SPLIT_LINES per local rank, after the doorbells */                /* every peer on this kernel: this rank may sleep on its doorbell */
} wh_shm_state_t;

extern wh_shm_state_t wh_shm;

static inline wh_shm_cell_t *wh_shm_cell(unsigned char *q, uint32_t idx)
{
    return (wh_shm_cell_t *)(q + (uint64_t)(idx & (wh_shm.ring_cells - 1)) * wh_shm.ring_stride);
}

static inline wh_shm_split_t *wh_shm_split_line(int lp, unsigned i)
{
    return &wh_shm.split[(size_t)lp * WH_SHM_SPLIT_LINES + i];
}

static inline wh_shm_slot_t *wh_shm_slot(unsigned char *pool, uint32_t s)
{
    return (wh_shm_slot_t *)(pool + (uint64_t)s * wh_shm.slot_stride);
}

/* Bytes of node region the channel needs for n co-resident ranks (region.c). */
uint64_t wh_shm_region_bytes(int n, uint32_t ring_cells, uint32_t nslots, uint64_t slot_payload);
/* Bytes of one row of ring cells (cell i of every pair), at least a page + a line. */
uint64_t wh_shm_ring_row(int n);

int wh_shm_region_setup(int phase);  /* region.c */
/* Ring local rank lp's doorbell (work for it outside the channel's cells:
 * a shared-memory collective's flag that a nonblocking wait may sleep
 * through); one load while it does not sleep. */
static inline void wh_shm_ring(int lp)
{
    if (wh_shm.db && lp >= 0)
        wh_db_ring(&wh_shm.db[lp], WH_DB_ASLEEP);
}

/* The ops' nap (doorbell.h, shm.c). */
int wh_shm_nap(long timeout_us, int want_space, int (*recheck)(void));
void wh_shm_region_teardown(void);
int wh_shm_cma_setup(int phase);     /* cma.c */
/* Liveness of co-resident peers (alive.c): set up after the queues
 * (phase 1), mark this rank as leaving at finalize, and the check for the
 * slow path of waits (aborts the job naming a peer that died). */
void wh_shm_alive_setup(void);
void wh_shm_alive_leave(void);
void wh_shm_check_peers(void);
/* zero-copy get/put through process_vm_readv/writev (cma.c) */
enum {
    WH_CMA_NOWRITE = 1,   /* a write (process_vm_writev) to it failed: reads only */
    WH_CMA_READ_SEEN = 2, /* a data read from it has worked (not only the probe word) */
    WH_CMA_WRITE_SEEN = 4 /* a write to it has worked */
};
/* The single-copy verdict for the co-resident world rank wpeer, the one
 * place the layers above ask (proto/split.c, coll/shmcma.c): 0 when this
 * rank may not read it in place (no probe, or a read failed since), else
 * WH_CMA_CAN_READ with WH_CMA_CAN_WRITE unless a write was refused, and the
 * WH_CMA_*_SEEN bits of transfers that worked. */
enum { WH_CMA_CAN_READ = 8, WH_CMA_CAN_WRITE = 16 };

/* The rkey of get_zcopy/put_zcopy: 0, raddr is the peer's virtual address
 * (CMA); WH_SHM_KEY_HEAP, raddr is an offset into the node-shared heap
 * (MPI_Alloc_mem memory, mapped by every rank that shares the region). */
#define WH_SHM_KEY_HEAP UINT64_C(0x4845415000000001)
unsigned wh_shm_cma(int wpeer);
int wh_shm_get_zcopy(int wpeer, uint64_t raddr, uint64_t rkey, const wh_data_t *dst, wh_comp_t *c);
int wh_shm_put_zcopy(int wpeer, uint64_t raddr, uint64_t rkey, const wh_data_t *src, wh_comp_t *c);
#endif
