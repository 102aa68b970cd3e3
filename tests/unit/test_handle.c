#include <stdlib.h>

#include "check.h"
#include "core/handle.h"

typedef struct {
    wh_obj_t obj;
    int payload;
} thing_t;

int main(void)
{
    wh_tab_t t;
    wh_tab_init(&t, WH_H_REQUEST, sizeof(thing_t));
    enum { N = 5000 };
    thing_t **v = calloc(N, sizeof *v);
    for (int i = 0; i < N; i++) {
        v[i] = wh_tab_alloc(&t);
        CHECK(v[i] != NULL);
        v[i]->payload = i;
        CHECK(WH_HKIND(v[i]->obj.handle) == WH_HK_INDIRECT && WH_HTYPE(v[i]->obj.handle) == WH_H_REQUEST);
        CHECK(v[i]->obj.refs == 1);
    }
    for (int i = 0; i < N; i++)
        CHECK(wh_tab_get(&t, v[i]->obj.handle) == v[i]);
    int h = v[7]->obj.handle;
    wh_tab_free(&t, v[7]);
    CHECK(wh_tab_get(&t, h) == NULL);                             /* freed */
    CHECK(wh_tab_get(&t, WH_HMAKE(WH_HK_INDIRECT, WH_H_COMM, 3)) == NULL); /* wrong type */
    CHECK(wh_tab_get(&t, WH_HMAKE(WH_HK_BUILTIN, WH_H_REQUEST, 3)) == NULL);
    CHECK(wh_tab_get(&t, WH_HMAKE(WH_HK_INDIRECT, WH_H_REQUEST, 0x3ffffff)) == NULL); /* out of range */
    CHECK(wh_tab_get(&t, 0) == NULL && wh_tab_get(&t, -1) == NULL);
    thing_t *again = wh_tab_alloc(&t);
    /* slot reused and zeroed, under the next generation: the old handle stays stale */
    CHECK(WH_TAB_SLOT(again->obj.handle) == WH_TAB_SLOT(h) && again->obj.handle != h && again->payload == 0);
    CHECK(wh_tab_get(&t, h) == NULL && wh_tab_get(&t, again->obj.handle) == again);
    /* 63 more reuses of one slot before a generation repeats */
    int first = again->obj.handle, seen_first = 0;
    for (int k = 0; k < 64; k++) {
        wh_tab_free(&t, again);
        again = wh_tab_alloc(&t);
        seen_first |= k < 62 && again->obj.handle == first;
    }
    CHECK(!seen_first && WH_TAB_SLOT(again->obj.handle) == WH_TAB_SLOT(h));
    CHECK(t.live == N);
    wh_tab_destroy(&t);
    free(v);
    return DONE();
}
