/* Buffered sends: MPI_Buffer_attach/detach/flush/iflush (+_c), the MPI-4.1
 * per-communicator buffers (MPI_Comm_{attach,detach,flush,iflush}_buffer),
 * and the packing behind MPI_Bsend/Ibsend/Bsend_init.
 *
 * A buffered send packs the message into a block of the attached buffer and
 * starts an ordinary internal send of those bytes; the block is freed when
 * that send completes (noticed lazily: when space is needed, on detach or
 * flush, and at finalize).  Blocks are placed first-fit in address order.
 * Like MPICH, a message of n packed bytes takes exactly n + MPI_BSEND_OVERHEAD
 * bytes of the buffer (its span), so programs that size their buffer by the
 * standard's rule fit exactly as many messages as they planned and one more
 * gets MPI_ERR_BUFFER.  Inside its span a block is [wh_bblk_t header][packed
 * bytes] at the first 16-byte aligned address, which always fits.
 * With MPI_BUFFER_AUTOMATIC each message gets its own malloc'd copy. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/init.h"
#include "mpi/reqapi.h"
#include "proto/p2p.h"
#include "util/log.h"

#define WH_BALIGN 16

typedef struct wh_bblk {
    struct wh_bblk *next; /* address order */
    char *start;          /* the span: [start, start + span), holding this header */
    size_t span;          /* packed bytes + MPI_BSEND_OVERHEAD */
    wh_req_t *req;        /* the internal send of the packed bytes */
    size_t len;           /* packed bytes */
    size_t pad_;          /* keeps the header a multiple of WH_BALIGN */
} wh_bblk_t;

_Static_assert(sizeof(wh_bblk_t) % WH_BALIGN == 0, "block header keeps data aligned");
/* alignment loss before the header + header + data rounded up <= span */
_Static_assert(sizeof(wh_bblk_t) + 2 * (WH_BALIGN - 1) <= MPI_BSEND_OVERHEAD, "MPI_BSEND_OVERHEAD too small");

typedef struct wh_bbuf {
    int attached, automatic;
    char *base;           /* as attached */
    size_t size;
    wh_bblk_t *blocks;
    wh_comm_t *comm;      /* NULL: the process or a session buffer */
    uint32_t serial;       /* the communicator's creation serial: a freed one's handle and ctx may be reused */
    int session;          /* session buffer: its MPI_Session (else 0) */
    struct wh_bbuf *next;
} wh_bbuf_t;

/* work finishing in the background: automatic-buffer messages and parts of
 * abandoned compound requests */
typedef struct wh_bg {
    struct wh_bg *next;
    wh_req_t *req;
    void *mem;            /* free()d when req is done */
    wh_bbuf_t *owner;     /* automatic buffer it belongs to, or NULL */
} wh_bg_t;

static wh_bbuf_t proc_buf;

static wh_bbuf_t *comm_bufs;
static wh_bbuf_t *session_bufs;
static wh_bg_t *bg_head;

/* a pending MPI_*iflush request's reference to its buffer */
typedef struct wh_iflush {
    wh_bbuf_t *b;          /* NULL once the buffer was detached */
    struct wh_iflush *next;
} wh_iflush_t;
static wh_iflush_t *iflush_head;

/* b is about to be freed: pending iflush requests no longer name it */
static void forget_buf(wh_bbuf_t *b)
{
    for (wh_iflush_t *t = iflush_head; t; t = t->next)
        if (t->b == b)
            t->b = NULL;
    for (wh_bg_t *g = bg_head; g; g = g->next)
        if (g->owner == b)
            g->owner = NULL;
}

static inline char *align_up(char *p)
{
    return (char *)(((uintptr_t)p + WH_BALIGN - 1) & ~(uintptr_t)(WH_BALIGN - 1));
}

static void req_done_log(wh_req_t *r)
{
    if (r->err != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        wh_error_text(r->err, text, sizeof text);
        WH_WARN("bsend", "a buffered send to rank %d (tag %d) failed after MPI_Bsend returned: %s", r->rank, r->tag,
                text);
    }
    wh_req_release(r);
}

/* Free the blocks of b whose sends completed; returns blocks still pending. */
static int reap_buf(wh_bbuf_t *b)
{
    int n = 0;
    for (wh_bblk_t **pp = &b->blocks; *pp;) {
        wh_bblk_t *k = *pp;
        if (wh_req_done(k->req)) {
            req_done_log(k->req);
            *pp = k->next;
        } else {
            pp = &k->next;
            n++;
        }
    }
    return n;
}

int wh_bsend_reap(void)
{
    int n = reap_buf(&proc_buf);
    for (wh_bbuf_t *b = comm_bufs; b; b = b->next)
        n += reap_buf(b);
    for (wh_bg_t **pp = &bg_head; *pp;) {
        wh_bg_t *g = *pp;
        if (wh_req_done(g->req)) {
            req_done_log(g->req);
            free(g->mem);
            *pp = g->next;
            free(g);
        } else {
            pp = &g->next;
            n++;
        }
    }
    return n;
}

static int bg_add(wh_req_t *r, void *mem, wh_bbuf_t *owner)
{
    wh_bg_t *g = malloc(sizeof *g);
    if (!g)
        return wh_error(MPI_ERR_NO_MEM, "out of memory tracking a background send");
    g->req = r;
    g->mem = mem;
    g->owner = owner;
    g->next = bg_head;
    bg_head = g;
    return MPI_SUCCESS;
}

int wh_bsend_background(wh_req_t *r, void *mem)
{
    wh_bsend_reap();
    return bg_add(r, mem, NULL);
}

/* Messages of b still in flight. */
static int buf_pending(wh_bbuf_t *b)
{
    wh_bsend_reap();
    int n = 0;
    for (wh_bblk_t *k = b->blocks; k; k = k->next)
        n++;
    for (wh_bg_t *g = bg_head; g; g = g->next)
        n += g->owner == b;
    return n;
}

/* Progress until every message buffered in b has been sent. */
static void buf_drain(wh_bbuf_t *b)
{
    for (unsigned idle = 0; buf_pending(b);) {
        if (wh_progress())
            idle = 0;
        else
            wh_progress_idle(&idle);
    }
}

/* First fit: a block for len packed bytes, linked in address order. */
static wh_bblk_t *block_alloc(wh_bbuf_t *b, size_t len)
{
    if (len > SIZE_MAX - MPI_BSEND_OVERHEAD)
        return NULL;
    size_t span = len + MPI_BSEND_OVERHEAD;
    char *end = b->base + b->size;
    char *lo = b->base;
    wh_bblk_t **pp = &b->blocks;
    for (;;) {
        wh_bblk_t *next = *pp;
        char *hi = next ? next->start : end;
        if (hi >= lo && (size_t)(hi - lo) >= span) {
            wh_bblk_t *k = (wh_bblk_t *)align_up(lo);
            k->next = next;
            k->start = lo;
            k->span = span;
            k->req = NULL;
            k->len = len;
            *pp = k;
            return k;
        }
        if (!next)
            return NULL;
        lo = next->start + next->span;
        pp = &next->next;
    }
}

static void block_unlink(wh_bbuf_t *b, wh_bblk_t *k)
{
    for (wh_bblk_t **pp = &b->blocks; *pp; pp = &(*pp)->next)
        if (*pp == k) {
            *pp = k->next;
            return;
        }
}

/* Largest message (packed bytes) that fits in one free piece of b. */
static size_t largest_free(const wh_bbuf_t *b)
{
    size_t best = 0;
    char *lo = b->base, *end = b->base + b->size;
    for (const wh_bblk_t *k = b->blocks;; k = k->next) {
        char *hi = k ? k->start : end;
        if (hi > lo && (size_t)(hi - lo) > best)
            best = (size_t)(hi - lo);
        if (!k)
            break;
        lo = k->start + k->span;
    }
    return best > MPI_BSEND_OVERHEAD ? best - MPI_BSEND_OVERHEAD : 0;
}

static wh_bbuf_t *session_buf(int session)
{
    for (wh_bbuf_t *b = session_bufs; b; b = b->next)
        if (b->session == session)
            return b;
    return NULL;
}

/* The buffer a buffered send on c uses: c's own, else that of the session c
 * derives from, else the process buffer (MPI-4.1 section 3.6). */
static wh_bbuf_t *buf_for(const wh_comm_t *c)
{
    for (wh_bbuf_t *b = comm_bufs; b; b = b->next)
        if (b->comm == c && b->serial == c->serial)
            return b;
    wh_bbuf_t *s;
    if (c->session && (s = session_buf(c->session)) && s->attached)
        return s;
    return proc_buf.attached ? &proc_buf : NULL;
}

/* user: the request MPI_Cancel may name (the one returned in *ureq, or a
 * persistent buffered send); it is linked to the internal send carrying the
 * message so the message can be withdrawn from the receiver. */
static int bsend_impl(const void *buf, MPI_Count count, wh_dtype_t *dt, int dest, int tag, wh_comm_t *c,
                      wh_req_t **ureq, wh_req_t *user)
{
    wh_req_t *u = NULL;
    if (ureq && !(u = wh_req_new_done(MPI_ANY_SOURCE)))
        return wh_error(MPI_ERR_NO_MEM, "out of memory allocating a request");
    if (ureq)
        *ureq = u;
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    size_t len = wh_dtype_bytes(dt, (size_t)count);
    wh_bbuf_t *b = buf_for(c);
    int rc;
    if (!b) {
        rc = wh_error(MPI_ERR_BUFFER,
                      "buffered send of %zu bytes to rank %d but no buffer is attached (MPI_Buffer_attach or "
                      "MPI_Comm_attach_buffer; it needs %zu bytes including MPI_BSEND_OVERHEAD)",
                      len, dest, len + MPI_BSEND_OVERHEAD);
        goto fail;
    }
    char *data;
    wh_bblk_t *k = NULL;
    if (b->automatic) {
        if (!(data = malloc(len ? len : 1))) {
            rc = wh_error(MPI_ERR_NO_MEM, "out of memory buffering a %zu-byte message (MPI_BUFFER_AUTOMATIC)", len);
            goto fail;
        }
    } else {
        wh_bsend_reap();
        if (!(k = block_alloc(b, len))) {
            wh_progress(); /* sends may be just finishing */
            wh_bsend_reap();
            k = block_alloc(b, len);
        }
        if (!k) {
            int pending = 0;
            for (wh_bblk_t *x = b->blocks; x; x = x->next)
                pending++;
            rc = wh_error(MPI_ERR_BUFFER,
                          "buffered send of %zu bytes to rank %d needs %zu bytes of buffer space (message + "
                          "MPI_BSEND_OVERHEAD %d) but the attached buffer of %zu bytes has room for a message of at "
                          "most %zu bytes (%d buffered message%s still in flight)",
                          len, dest, len + MPI_BSEND_OVERHEAD, MPI_BSEND_OVERHEAD, b->size, largest_free(b), pending,
                          pending == 1 ? "" : "s");
            goto fail;
        }
        data = (char *)(k + 1);
    }
    if (len && (rc = wh_dtype_pack(buf, (size_t)count, dt, 0, data, len)) != MPI_SUCCESS)
        goto fail_data;
    wh_req_t *r;
    if ((rc = wh_isend(data, (MPI_Count)len, wh_dtype_get(MPI_BYTE), dest, tag, c, WH_CTX_P2P, WH_MODE_STD, &r)) !=
        MPI_SUCCESS)
        goto fail_data;
    if (!user)
        user = u;
    if (user) {
        user->linked = wh_req_id(r);
        user->wpeer = r->wpeer;
        user->chan = r->chan;
        user->ctx = r->ctx;
        user->tag = r->tag;
        user->rank = dest;
    }
    if (k) {
        k->req = r;
        if (wh_req_done(r)) { /* eager: the space is free again at once */
            block_unlink(b, k);
            req_done_log(r);
        }
    } else if ((rc = bg_add(r, data, b)) != MPI_SUCCESS) {
        wh_req_wait_done(r); /* cannot track it: finish it here */
        req_done_log(r);
        free(data);
        rc = MPI_SUCCESS;
    }
    return MPI_SUCCESS;
fail_data:
    if (k)
        block_unlink(b, k);
    else
        free(data);
fail:
    if (u) {
        wh_req_release(u);
        *ureq = NULL;
    }
    return rc;
}

int wh_bsend(const void *buf, MPI_Count count, wh_dtype_t *dt, int dest, int tag, wh_comm_t *c, wh_req_t **ureq)
{
    return bsend_impl(buf, count, dt, dest, tag, c, ureq, NULL);
}

int wh_bsend_start(wh_req_t *r)
{
    r->active = 1;
    r->err = MPI_SUCCESS;
    r->cancelled = 0;
    r->cancel_pending = 0;
    r->linked = 0;
    int rc = bsend_impl(r->buf, r->count, r->dt, r->rank, r->tag, r->comm, NULL, r);
    if (rc != MPI_SUCCESS) {
        r->active = 0;
        return rc;
    }
    wh_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
    __atomic_store_n(&r->complete, 1, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

void wh_bsend_finalize(void)
{
    for (unsigned idle = 0; wh_bsend_reap();) {
        if (wh_progress())
            idle = 0;
        else
            wh_progress_idle(&idle);
    }
    while (comm_bufs) {
        wh_bbuf_t *b = comm_bufs;
        comm_bufs = b->next;
        forget_buf(b);
        free(b);
    }
    memset(&proc_buf, 0, sizeof proc_buf);
}

/* ---------- attach / detach / flush ---------- */

/* raise on the session of a session buffer, else on c (NULL: the process) */
static int braise(wh_comm_t *c, const wh_bbuf_t *b, const char *fname, int code)
{
    return b && b->session ? wh_session_raise(b->session, fname, code) : wh_p2p_raise(c, fname, code);
}

static int do_attach(const char *fname, wh_comm_t *c, wh_bbuf_t *b, void *buffer, MPI_Count size)
{
    if (b->attached)
        return braise(c, b, fname,
                             wh_error(MPI_ERR_BUFFER, "a buffer (%s) is already attached%s; detach it first",
                                      b->automatic ? "MPI_BUFFER_AUTOMATIC" : "user memory",
                                      c ? " to this communicator" : ""));
    if (buffer != MPI_BUFFER_AUTOMATIC) {
        if (size < 0)
            return braise(c, b, fname, wh_error(MPI_ERR_ARG, "negative buffer size %lld", (long long)size));
        if (!buffer && size > 0)
            return braise(c, b, fname, wh_error(MPI_ERR_BUFFER, "buffer is NULL but size is %lld",
                                                    (long long)size));
    }
    b->attached = 1;
    b->automatic = buffer == MPI_BUFFER_AUTOMATIC;
    b->base = b->automatic ? NULL : buffer;
    b->size = b->automatic ? 0 : (size_t)size;
    b->blocks = NULL;
    return MPI_SUCCESS;
}

/* Wait for b's messages, then report and forget it. */
static void do_detach(wh_bbuf_t *b, void *buffer_addr, MPI_Count *size)
{
    if (!b || !b->attached) {
        *(void **)buffer_addr = NULL;
        *size = 0;
        return;
    }
    buf_drain(b);
    *(void **)buffer_addr = b->automatic ? MPI_BUFFER_AUTOMATIC : b->base;
    *size = (MPI_Count)b->size;
    b->attached = 0;
    b->base = NULL;
    b->size = 0;
}

static int int_size(const char *fname, wh_comm_t *c, MPI_Count sz, int *size)
{
    if (sz > 0x7fffffff)
        return wh_p2p_raise(c, fname,
                             wh_error(MPI_ERR_VALUE_TOO_LARGE, "detached buffer size %lld does not fit in an int "
                                                               "(use the _c variant)",
                                      (long long)sz));
    *size = (int)sz;
    return MPI_SUCCESS;
}

static int attach_common(const char *fname, void *buffer, MPI_Count size)
{
    return do_attach(fname, NULL, &proc_buf, buffer, size);
}

static int body_Buffer_attach(const char *fname, void *buffer, MPI_Count size)
{
    return attach_common(fname, buffer, size);
}

static int body_Buffer_detach(void *buffer_addr, int *size)
{
    WH_CHK_PTR("MPI_Buffer_detach", NULL, buffer_addr, "buffer_addr");
    WH_CHK_PTR("MPI_Buffer_detach", NULL, size, "size");
    MPI_Count sz;
    do_detach(&proc_buf, buffer_addr, &sz);
    return int_size("MPI_Buffer_detach", NULL, sz, size);
}

static int body_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    WH_CHK_PTR("MPI_Buffer_detach_c", NULL, buffer_addr, "buffer_addr");
    WH_CHK_PTR("MPI_Buffer_detach_c", NULL, size, "size");
    do_detach(&proc_buf, buffer_addr, size);
    return MPI_SUCCESS;
}

/* poll_fn of MPI_*iflush requests: complete once the buffer is drained.  The
 * request holds a ticket, not the buffer: a communicator or session buffer
 * detached (drained, then freed) before the request is polled again clears the
 * tickets that name it (forget_buf), so the poll never reads freed memory. */
static int iflush_poll(wh_req_t *r)
{
    wh_iflush_t *t = r->extra;
    if (t && t->b && buf_pending(t->b))
        return 0;
    if (t) {
        for (wh_iflush_t **pp = &iflush_head; *pp; pp = &(*pp)->next)
            if (*pp == t) {
                *pp = t->next;
                break;
            }
        free(t);
    }
    r->extra = NULL;
    __atomic_store_n(&r->complete, 1, __ATOMIC_RELEASE);
    return 1;
}

static int iflush(const char *fname, wh_comm_t *c, wh_bbuf_t *b, MPI_Request *request)
{
    WH_CHK_PTR(fname, c, request, "request");
    wh_req_t *r = wh_req_alloc(WH_REQ_COMPOUND);
    if (!r)
        return wh_p2p_raise(c, fname, wh_error(MPI_ERR_NO_MEM, "out of memory allocating a request"));
    wh_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
    r->extra = NULL;
    if (b && b->attached) {
        wh_iflush_t *t = malloc(sizeof *t);
        if (!t) {
            wh_req_release(r);
            return wh_p2p_raise(c, fname, wh_error(MPI_ERR_NO_MEM, "out of memory allocating a request"));
        }
        t->b = b;
        t->next = iflush_head;
        iflush_head = t;
        r->extra = t;
    }
    r->poll_fn = iflush_poll;
    iflush_poll(r);
    *request = r->obj.handle;
    return MPI_SUCCESS;
}

static int body_Buffer_flush(void)
{
    if (proc_buf.attached)
        buf_drain(&proc_buf);
    return MPI_SUCCESS;
}

static int body_Buffer_iflush(MPI_Request *request)
{
    return iflush("MPI_Buffer_iflush", NULL, &proc_buf, request);
}

/* ---------- per-communicator buffers (MPI-4.1) ---------- */

static wh_bbuf_t *comm_buf(const wh_comm_t *c)
{
    for (wh_bbuf_t *b = comm_bufs; b; b = b->next)
        if (b->comm == c && b->serial == c->serial)
            return b;
    return NULL;
}

static int comm_attach(const char *fname, MPI_Comm comm, void *buffer, MPI_Count size)
{
    wh_comm_t *c;
    int rc = wh_chk_comm(fname, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    wh_bbuf_t *b = comm_buf(c);
    if (b)
        return do_attach(fname, c, b, buffer, size); /* reports "already attached" */
    if (!(b = calloc(1, sizeof *b)))
        return wh_p2p_raise(c, fname, wh_error(MPI_ERR_NO_MEM, "out of memory"));
    b->comm = c;
    b->serial = c->serial;
    if ((rc = do_attach(fname, c, b, buffer, size)) != MPI_SUCCESS) {
        free(b);
        return rc;
    }
    b->next = comm_bufs;
    comm_bufs = b;
    return MPI_SUCCESS;
}

static int comm_detach(const char *fname, MPI_Comm comm, void *buffer_addr, MPI_Count *size)
{
    wh_comm_t *c;
    int rc = wh_chk_comm(fname, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    WH_CHK_PTR(fname, c, buffer_addr, "buffer_addr");
    wh_bbuf_t *b = comm_buf(c);
    do_detach(b, buffer_addr, size);
    if (b) {
        for (wh_bbuf_t **pp = &comm_bufs; *pp; pp = &(*pp)->next)
            if (*pp == b) {
                *pp = b->next;
                break;
            }
        forget_buf(b);
        free(b);
    }
    return MPI_SUCCESS;
}

static int body_Comm_attach_buffer(const char *fname, MPI_Comm comm, void *buffer, MPI_Count size)
{
    return comm_attach(fname, comm, buffer, size);
}

static int body_Comm_detach_buffer(MPI_Comm comm, void *buffer_addr, int *size)
{
    WH_CHK_PTR("MPI_Comm_detach_buffer", NULL, size, "size");
    MPI_Count sz = 0;
    int rc = comm_detach("MPI_Comm_detach_buffer", comm, buffer_addr, &sz);
    if (rc != MPI_SUCCESS)
        return rc;
    return int_size("MPI_Comm_detach_buffer", wh_comm_get(comm), sz, size);
}

static int body_Comm_detach_buffer_c(MPI_Comm comm, void *buffer_addr, MPI_Count *size)
{
    WH_CHK_PTR("MPI_Comm_detach_buffer_c", NULL, size, "size");
    return comm_detach("MPI_Comm_detach_buffer_c", comm, buffer_addr, size);
}

static int body_Comm_flush_buffer(MPI_Comm comm)
{
    wh_comm_t *c;
    int rc = wh_chk_comm("MPI_Comm_flush_buffer", comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    wh_bbuf_t *b = comm_buf(c);
    if (b)
        buf_drain(b);
    return MPI_SUCCESS;
}

static int body_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request)
{
    wh_comm_t *c;
    int rc = wh_chk_comm("MPI_Comm_iflush_buffer", comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    return iflush("MPI_Comm_iflush_buffer", c, comm_buf(c), request);
}

/* ---------- per-session buffers (MPI-4.1) ---------- */

static int session_attach(const char *fname, MPI_Session session, void *buffer, MPI_Count size)
{
    int rc = wh_session_check(fname, session);
    if (rc != MPI_SUCCESS)
        return rc;
    wh_bbuf_t *b = session_buf((int)session);
    if (b)
        return do_attach(fname, NULL, b, buffer, size); /* reports "already attached" */
    if (!(b = calloc(1, sizeof *b)))
        return wh_session_raise((int)session, fname, wh_error(MPI_ERR_NO_MEM, "out of memory"));
    b->session = (int)session;
    if ((rc = do_attach(fname, NULL, b, buffer, size)) != MPI_SUCCESS) {
        free(b);
        return rc;
    }
    b->next = session_bufs;
    session_bufs = b;
    return MPI_SUCCESS;
}

/* detach (waiting for its messages) and forget session's buffer, if any */
static void session_drop(int session, void *buffer_addr, MPI_Count *size)
{
    wh_bbuf_t *b = session_buf(session);
    void *dummy_addr;
    MPI_Count dummy_size;
    do_detach(b, buffer_addr ? buffer_addr : (void *)&dummy_addr, size ? size : &dummy_size);
    if (!b)
        return;
    for (wh_bbuf_t **pp = &session_bufs; *pp; pp = &(*pp)->next)
        if (*pp == b) {
            *pp = b->next;
            break;
        }
    forget_buf(b);
    free(b);
}

void wh_bsend_session_end(MPI_Session session)
{
    session_drop((int)session, NULL, NULL);
}

static int session_detach(const char *fname, MPI_Session session, void *buffer_addr, MPI_Count *size)
{
    int rc = wh_session_check(fname, session);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!buffer_addr || !size)
        return wh_session_raise((int)session, fname, wh_error(MPI_ERR_ARG, "%s is NULL", !size ? "size" : "buffer_addr"));
    session_drop((int)session, buffer_addr, size);
    return MPI_SUCCESS;
}

static int body_Session_attach_buffer(const char *fname, MPI_Session session, void *buffer, MPI_Count size)
{
    return session_attach(fname, session, buffer, size);
}

static int body_Session_detach_buffer(MPI_Session session, void *buffer_addr, int *size)
{
    static const char fname[] = "MPI_Session_detach_buffer";
    if (!size)
        return wh_session_raise((int)session, fname, wh_error(MPI_ERR_ARG, "size is NULL"));
    MPI_Count sz = 0;
    int rc = session_detach(fname, session, buffer_addr, &sz);
    if (rc != MPI_SUCCESS)
        return rc;
    if (sz > 0x7fffffff)
        return wh_session_raise((int)session, fname,
                                wh_error(MPI_ERR_VALUE_TOO_LARGE, "detached buffer size %lld does not fit in an int "
                                                                  "(use the _c variant)", (long long)sz));
    *size = (int)sz;
    return MPI_SUCCESS;
}

static int body_Session_detach_buffer_c(MPI_Session session, void *buffer_addr, MPI_Count *size)
{
    return session_detach("MPI_Session_detach_buffer_c", session, buffer_addr, size);
}

static int body_Session_flush_buffer(MPI_Session session)
{
    int rc = wh_session_check("MPI_Session_flush_buffer", session);
    if (rc != MPI_SUCCESS)
        return rc;
    wh_bbuf_t *b = session_buf((int)session);
    if (b && b->attached)
        buf_drain(b);
    return MPI_SUCCESS;
}

static int body_Session_iflush_buffer(MPI_Session session, MPI_Request *request)
{
    int rc = wh_session_check("MPI_Session_iflush_buffer", session);
    if (rc != MPI_SUCCESS)
        return rc;
    return iflush("MPI_Session_iflush_buffer", NULL, session_buf((int)session), request);
}

#include "entry/bsend.h"
