/* Matching and ordering through the protocol layer with the self channel. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "proto/proto.h"

static wh_comm_t comm = {.obj = {.handle = 0x44000000, .refs = 1 << 20}, .rank = 0, .size = 1, .ctx = 0};

static int isend(int v, int tag, int mode, wh_req_t **r)
{
    static int vals[64];
    static int k;
    int *p = &vals[k++ % 64];
    *p = v;
    return wh_isend(p, 1, wh_dtype_get(MPI_INT), 0, tag, &comm, WH_CTX_P2P, mode, r);
}

int main(void)
{
    static wh_coord_peer_t peer[1] = {{.chan = WH_CHAN_SELF, .caps = WH_CAP_AM, .eager_max = SIZE_MAX}};
    wh_job.rank = 0;
    wh_job.size = 1;
    wh_coord_peers = peer;
    wh_coord_lim.eager_max[WH_CHAN_SELF] = SIZE_MAX;
    wh_coord_lim.mem_kinds[WH_CHAN_SELF] = 1u << WH_MEM_HOST;
    CHECK(wh_proto_init() == MPI_SUCCESS);
    CHECK(wh_dtype_init() == MPI_SUCCESS);
    wh_dtype_t *i32 = wh_dtype_get(MPI_INT);
    wh_req_t *s[8], *r[8];
    int out[8] = {0};
    MPI_Status st;

    /* unexpected messages are matched in arrival order (non-overtaking) */
    isend(1, 5, WH_MODE_STD, &s[0]);
    isend(2, 5, WH_MODE_STD, &s[1]);
    isend(3, 6, WH_MODE_STD, &s[2]);
    CHECK(wh_test(s[0]) && wh_test(s[1]) && wh_test(s[2]));
    wh_irecv(&out[0], 1, i32, MPI_ANY_SOURCE, 6, &comm, WH_CTX_P2P, &r[0]);
    wh_irecv(&out[1], 1, i32, 0, MPI_ANY_TAG, &comm, WH_CTX_P2P, &r[1]);
    wh_irecv(&out[2], 1, i32, 0, 5, &comm, WH_CTX_P2P, &r[2]);
    CHECK(wh_wait(r[0], &st) == MPI_SUCCESS && out[0] == 3 && st.MPI_TAG == 6 && st.MPI_SOURCE == 0);
    CHECK(wh_wait(r[1], &st) == MPI_SUCCESS && out[1] == 1 && st.MPI_TAG == 5);
    CHECK(wh_wait(r[2], NULL) == MPI_SUCCESS && out[2] == 2);
    CHECK(wh_status_bytes(&st) == 4);
    for (int i = 0; i < 3; i++)
        wh_req_release(s[i]);

    /* posted receives are matched in posting order */
    wh_irecv(&out[3], 1, i32, MPI_ANY_SOURCE, MPI_ANY_TAG, &comm, WH_CTX_P2P, &r[3]);
    wh_irecv(&out[4], 1, i32, MPI_ANY_SOURCE, 9, &comm, WH_CTX_P2P, &r[4]);
    isend(10, 9, WH_MODE_STD, &s[3]);
    isend(11, 9, WH_MODE_STD, &s[4]);
    CHECK(wh_wait(r[3], NULL) == MPI_SUCCESS && out[3] == 10);
    CHECK(wh_wait(r[4], NULL) == MPI_SUCCESS && out[4] == 11);
    wh_req_release(s[3]);
    wh_req_release(s[4]);

    /* contexts separate user and collective traffic */
    int cv = 77, got = 0;
    wh_req_t *cs, *cr, *pr;
    wh_irecv(&got, 1, i32, 0, 1, &comm, WH_CTX_P2P, &pr);
    wh_isend(&cv, 1, i32, 0, 1, &comm, WH_CTX_COLL, WH_MODE_STD, &cs);
    CHECK(!wh_test(pr));
    wh_irecv(&got, 1, i32, 0, 1, &comm, WH_CTX_COLL, &cr);
    CHECK(wh_wait(cr, NULL) == MPI_SUCCESS && got == 77);
    CHECK(wh_cancel_recv(pr) == 1);
    CHECK(wh_test(pr) && pr->cancelled);
    wh_req_release(pr);
    wh_req_release(cs);

    /* synchronous send completes only when matched */
    isend(5, 3, WH_MODE_SYNC, &s[5]);
    CHECK(!wh_test(s[5]));
    wh_irecv(&out[5], 1, i32, 0, 3, &comm, WH_CTX_P2P, &r[5]);
    CHECK(wh_test(s[5]) && wh_test(r[5]));
    wh_req_release(s[5]);
    wh_req_release(r[5]);

    /* truncation is reported with the error class and a count of what fit */
    int big[4] = {1, 2, 3, 4}, small[2] = {0};
    wh_req_t *ts, *tr;
    wh_isend(big, 4, i32, 0, 4, &comm, WH_CTX_P2P, WH_MODE_STD, &ts);
    wh_irecv(small, 2, i32, 0, 4, &comm, WH_CTX_P2P, &tr);
    int e = wh_wait(tr, &st);
    CHECK(wh_error_class(e) == MPI_ERR_TRUNCATE);
    CHECK(small[0] == 1 && small[1] == 2 && wh_status_bytes(&st) == 8);
    wh_req_release(ts);

    /* probe and mprobe */
    int flag = 0;
    wh_req_t *msg = NULL, *mr;
    isend(42, 8, WH_MODE_STD, &s[6]);
    CHECK(wh_iprobe(MPI_ANY_SOURCE, 8, &comm, WH_CTX_P2P, &flag, &st, NULL) == MPI_SUCCESS && flag);
    CHECK(st.MPI_TAG == 8 && wh_status_bytes(&st) == 4);
    CHECK(wh_iprobe(0, 8, &comm, WH_CTX_P2P, &flag, &st, &msg) == MPI_SUCCESS && flag && msg);
    flag = 1;
    CHECK(wh_iprobe(0, 8, &comm, WH_CTX_P2P, &flag, NULL, NULL) == MPI_SUCCESS && !flag); /* taken */
    CHECK(wh_imrecv(&out[6], 1, i32, msg, &mr) == MPI_SUCCESS);
    CHECK(wh_wait(mr, NULL) == MPI_SUCCESS && out[6] == 42);
    wh_req_release(s[6]);

    /* PROC_NULL */
    wh_req_t *pn;
    wh_irecv(&out[7], 1, i32, MPI_PROC_NULL, 0, &comm, WH_CTX_P2P, &pn);
    CHECK(wh_wait(pn, &st) == MPI_SUCCESS && st.MPI_SOURCE == MPI_PROC_NULL && wh_status_bytes(&st) == 0);
    CHECK(wh_req_tab.live == 0);
    return DONE();
}
