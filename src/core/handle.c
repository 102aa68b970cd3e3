#include "core/handle.h"

#include <stdlib.h>
#include <string.h>

void wh_tab_init(wh_tab_t *t, int htype, size_t objsize)
{
    memset(t, 0, sizeof *t);
    t->htype = htype;
    if (objsize < sizeof(void *) + sizeof(wh_obj_t))
        objsize = sizeof(void *) + sizeof(wh_obj_t);
    t->objsize = (objsize + 63) & ~(size_t)63; /* cache-line aligned slots */
}

static int grow(wh_tab_t *t)
{
    uint32_t c = t->nslots / WH_TAB_CHUNK;
    if (c >= WH_TAB_MAXCHUNKS)
        return -1;
    void *mem = aligned_alloc(64, t->objsize * WH_TAB_CHUNK);
    unsigned char *used = calloc(WH_TAB_CHUNK, 1);
    if (!mem || !used) {
        free(mem);
        free(used);
        return -1;
    }
    t->chunks[c] = mem;
    t->used[c] = used;
    /* push slots in reverse so the lowest index pops first */
    for (int s = WH_TAB_CHUNK - 1; s >= 0; s--) {
        char *o = (char *)mem + (size_t)s * t->objsize;
        ((wh_obj_t *)o)->handle = WH_HMAKE(WH_HK_INDIRECT, t->htype, c * WH_TAB_CHUNK + (uint32_t)s);
        *(void **)(o + sizeof(wh_obj_t)) = t->freelist;
        t->freelist = o;
    }
    t->nslots += WH_TAB_CHUNK;
    return 0;
}

void *wh_tab_alloc(wh_tab_t *t)
{
    if (!t->freelist && grow(t) != 0)
        return NULL;
    char *o = t->freelist;
    t->freelist = *(void **)(o + sizeof(wh_obj_t));
    int h = ((wh_obj_t *)o)->handle;
    memset(o, 0, t->objsize);
    ((wh_obj_t *)o)->handle = h;
    ((wh_obj_t *)o)->refs = 1;
    uint32_t idx = WH_TAB_SLOT(h);
    t->used[idx / WH_TAB_CHUNK][idx % WH_TAB_CHUNK] = 1;
    t->live++;
    return o;
}

void wh_tab_free(wh_tab_t *t, void *obj)
{
    char *o = obj;
    int h = ((wh_obj_t *)o)->handle;
    uint32_t idx = WH_TAB_SLOT(h);
    t->used[idx / WH_TAB_CHUNK][idx % WH_TAB_CHUNK] = 0;
    /* the next object in this slot gets the next generation */
    uint32_t gen = ((WH_HINDEX(h) >> WH_TAB_SLOTBITS) + 1u) & ((1u << (26 - WH_TAB_SLOTBITS)) - 1u);
    ((wh_obj_t *)o)->handle = WH_HMAKE(WH_HK_INDIRECT, t->htype, (gen << WH_TAB_SLOTBITS) | idx);
    *(void **)(o + sizeof(wh_obj_t)) = t->freelist;
    t->freelist = o;
    t->live--;
}

void wh_tab_destroy(wh_tab_t *t)
{
    for (uint32_t c = 0; c < WH_TAB_MAXCHUNKS && t->chunks[c]; c++) {
        free(t->chunks[c]);
        free(t->used[c]);
    }
    memset(t, 0, sizeof *t);
}
