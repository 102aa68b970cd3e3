/* MPICH-compatible handle encoding and a generic object table.
 *
 * A handle is a 32-bit int: bits 31..30 kind, 29..26 object type, 25..0 index.
 *   kind 0 = invalid (the *_NULL handles), 1 = builtin (predefined objects),
 *   2 = direct (used by MPICH for a few predefined objects, e.g. MPI_FLOAT_INT),
 *   3 = indirect: objects created at run time, index into a per-type table.
 */
#ifndef WH_CORE_HANDLE_H
#define WH_CORE_HANDLE_H
#include <stdint.h>
#include <stddef.h>

enum wh_htype {
    WH_H_COMM = 1,
    WH_H_GROUP = 2,
    WH_H_DTYPE = 3,
    WH_H_FILE = 4,
    WH_H_ERRH = 5,
    WH_H_OP = 6,
    WH_H_INFO = 7,
    WH_H_WIN = 8,
    WH_H_KEYVAL = 9,
    WH_H_ATTR = 10,
    WH_H_REQUEST = 11,
    WH_H_SESSION = 14, /* MPI_SESSION_NULL is 0x38000000 as in MPICH */
    WH_H_NTYPES = 16,
};

enum wh_hkind { WH_HK_INVALID = 0, WH_HK_BUILTIN = 1, WH_HK_DIRECT = 2, WH_HK_INDIRECT = 3 };

#define WH_HKIND(h) ((int)(((uint32_t)(h) >> 30) & 3u))
#define WH_HTYPE(h) ((int)(((uint32_t)(h) >> 26) & 0xfu))
#define WH_HINDEX(h) ((uint32_t)(h) & 0x03ffffffu)
#define WH_HMAKE(kind, type, idx) ((int)(((uint32_t)(kind) << 30) | ((uint32_t)(type) << 26) | (uint32_t)(idx)))

/* Every table object starts with this header. */
typedef struct wh_obj {
    int handle;
    int refs;   /* user + internal references; freed at 0 */
} wh_obj_t;

/* A growable table of fixed-size objects, chunked so pointers stay valid.
 * An INDIRECT handle's 26 index bits are a 20-bit slot and a 6-bit
 * generation that wh_tab_free advances: a freed handle stops resolving, and
 * the next object in its slot gets a different handle (a stale handle is
 * reported, not taken for the new object, for 63 reuses of a slot). */
#define WH_TAB_CHUNK 1024
#define WH_TAB_MAXCHUNKS 1024
#define WH_TAB_SLOTBITS 20
#define WH_TAB_SLOT(h) (WH_HINDEX(h) & ((1u << WH_TAB_SLOTBITS) - 1u))
typedef struct wh_tab {
    int htype;
    size_t objsize;
    uint32_t nslots;            /* slots allocated so far */
    void *chunks[WH_TAB_MAXCHUNKS];
    void *freelist;             /* LIFO of free objects (first word of object reused) */
    unsigned char *used[WH_TAB_MAXCHUNKS]; /* per-slot in-use flags */
    uint32_t live;
} wh_tab_t;

void wh_tab_init(wh_tab_t *t, int htype, size_t objsize);
/* New zeroed object with its handle set and refs = 1; NULL if out of memory. */
void *wh_tab_alloc(wh_tab_t *t);
void wh_tab_free(wh_tab_t *t, void *obj);
void wh_tab_destroy(wh_tab_t *t);

/* Object for an INDIRECT handle of this table, or NULL if not a live one. */
static inline void *wh_tab_get(const wh_tab_t *t, int h)
{
    uint32_t idx = WH_TAB_SLOT(h);
    if (WH_HKIND(h) != WH_HK_INDIRECT || WH_HTYPE(h) != t->htype || idx >= t->nslots)
        return NULL;
    uint32_t c = idx / WH_TAB_CHUNK, s = idx % WH_TAB_CHUNK;
    if (!t->used[c][s])
        return NULL;
    char *o = (char *)t->chunks[c] + (size_t)s * t->objsize;
    return ((const wh_obj_t *)o)->handle == h ? o : NULL; /* an older generation: stale */
}
#endif
