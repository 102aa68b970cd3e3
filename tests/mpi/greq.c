/* Generalized requests: query_fn/free_fn/cancel_fn called when and as often
 * as MPI-4.1 section 13.2 says, in the single and multiple completion calls,
 * MPI_Request_get_status, MPI_Cancel and MPI_Request_free (before and after
 * MPI_Grequest_complete), errors from the callbacks, the status setters used
 * by query functions, and MPI_Comm_get_parent without dynamic processes. */
#include "p2p_check.h"

typedef struct {
    int id;
    int queries, frees, cancels, cancel_complete;
    int query_err, free_err;
    char log[32]; /* 'q' and 'f' in call order */
    int nlog;
} state_t;

static int query_fn(void *extra, MPI_Status *st)
{
    state_t *s = extra;
    s->queries++;
    s->log[s->nlog++] = 'q';
    MPI_Status_set_source(st, 3 + s->id);
    MPI_Status_set_tag(st, 50 + s->id);
    MPI_Status_set_elements_x(st, MPI_INT, 10 + s->id);
    MPI_Status_set_cancelled(st, s->cancels > 0);
    return s->query_err;
}

static int free_fn(void *extra)
{
    state_t *s = extra;
    s->frees++;
    s->log[s->nlog++] = 'f';
    return s->free_err;
}

static int cancel_fn(void *extra, int complete)
{
    state_t *s = extra;
    s->cancels++;
    s->cancel_complete = complete;
    return MPI_SUCCESS;
}

static MPI_Request start(state_t *s, int id)
{
    memset(s, 0, sizeof *s);
    s->id = id;
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, s, &r));
    CHECK(r != MPI_REQUEST_NULL, "no request");
    return r;
}

static void status_is(const MPI_Status *st, int id)
{
    int n = -1;
    CHECK(st->MPI_SOURCE == 3 + id && st->MPI_TAG == 50 + id, "source %d tag %d for id %d", st->MPI_SOURCE,
          st->MPI_TAG, id);
    MPI_OK(MPI_Get_count(st, MPI_INT, &n));
    CHECK(n == 10 + id, "count %d for id %d", n, id);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    state_t a, b;
    MPI_Status st;
    int flag = -1;

    p2p_setstep("wait: query then free, once each");
    MPI_Request r = start(&a, 0);
    MPI_OK(MPI_Test(&r, &flag, &st));
    CHECK(flag == 0 && r != MPI_REQUEST_NULL, "incomplete request tested complete");
    CHECK(a.queries == 0 && a.frees == 0, "callbacks before completion: q %d f %d", a.queries, a.frees);
    MPI_OK(MPI_Grequest_complete(r));
    MPI_FAILS(MPI_ERR_REQUEST, MPI_Grequest_complete(r));
    MPI_OK(MPI_Request_get_status(r, &flag, &st));
    CHECK(flag == 1 && a.queries == 1 && a.frees == 0, "get_status: flag %d q %d f %d", flag, a.queries, a.frees);
    status_is(&st, 0);
    memset(&st, 0, sizeof st);
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL, "request not freed by MPI_Wait");
    CHECK(a.nlog == 3 && !memcmp(a.log, "qqf", 3), "call order '%.*s'", a.nlog, a.log);
    status_is(&st, 0);
    flag = 1;
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0, "not cancelled, but Test_cancelled says %d", flag);

    p2p_setstep("cancel before and after completion");
    r = start(&a, 1);
    MPI_OK(MPI_Cancel(&r));
    CHECK(a.cancels == 1 && a.cancel_complete == 0, "cancel before complete: %d calls, complete %d", a.cancels,
          a.cancel_complete);
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Cancel(&r));
    CHECK(a.cancels == 2 && a.cancel_complete == 1, "cancel after complete: %d calls, complete %d", a.cancels,
          a.cancel_complete);
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "query_fn set cancelled, Test_cancelled says %d", flag);
    CHECK(a.frees == 1, "free_fn ran %d times", a.frees);

    p2p_setstep("request freed before completion");
    r = start(&a, 2);
    MPI_Request keep = r;
    MPI_OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL && a.frees == 0, "free_fn ran before MPI_Grequest_complete");
    MPI_OK(MPI_Grequest_complete(keep));
    CHECK(a.frees == 1 && a.queries == 0, "after complete: f %d q %d", a.frees, a.queries);

    p2p_setstep("request freed after completion");
    r = start(&a, 3);
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Request_free(&r));
    CHECK(a.frees == 1 && a.queries == 0, "free after complete: f %d q %d", a.frees, a.queries);

    p2p_setstep("callback errors");
    r = start(&a, 4);
    a.query_err = MPI_ERR_OTHER;
    MPI_OK(MPI_Grequest_complete(r));
    MPI_FAILS(MPI_ERR_OTHER, MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL && a.frees == 1, "after a failed query: request %d frees %d", (int)(r != 0), a.frees);
    r = start(&a, 5);
    a.free_err = MPI_ERR_ARG;
    MPI_OK(MPI_Grequest_complete(r));
    MPI_FAILS(MPI_ERR_ARG, MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL && a.queries == 1 && a.frees == 1, "failed free: q %d f %d", a.queries, a.frees);

    p2p_setstep("multiple completions");
    MPI_Request rs[3];
    MPI_Status sts[3];
    rs[0] = start(&a, 6);
    MPI_OK(MPI_Irecv(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rs[1]));
    rs[2] = start(&b, 7);
    MPI_OK(MPI_Testall(3, rs, &flag, sts));
    CHECK(flag == 0 && a.queries == 0 && b.queries == 0, "Testall before completion: flag %d", flag);
    MPI_OK(MPI_Grequest_complete(rs[2]));
    int idx = -1;
    MPI_OK(MPI_Waitany(3, rs, &idx, &st));
    CHECK(idx == 1 || idx == 2, "Waitany index %d", idx);
    if (idx == 1)
        MPI_OK(MPI_Waitany(3, rs, &idx, &st));
    CHECK(idx == 2 && b.queries == 1 && b.frees == 1, "Waitany: index %d q %d f %d", idx, b.queries, b.frees);
    status_is(&st, 7);
    int out = -1, ind[3];
    MPI_OK(MPI_Testsome(3, rs, &out, ind, sts));
    CHECK(out == 0, "Testsome found %d complete", out);
    MPI_OK(MPI_Grequest_complete(rs[0]));
    a.query_err = MPI_ERR_OTHER;
    rs[2] = start(&b, 8);
    MPI_OK(MPI_Grequest_complete(rs[2]));
    int rc = MPI_Waitall(3, rs, sts);
    CHECK(rc == MPI_ERR_IN_STATUS || (MPI_Error_class(rc, &rc), rc == MPI_ERR_IN_STATUS), "Waitall returned %d", rc);
    CHECK(sts[0].MPI_ERROR == MPI_ERR_OTHER && sts[2].MPI_ERROR == MPI_SUCCESS, "MPI_ERROR %d %d",
          sts[0].MPI_ERROR, sts[2].MPI_ERROR);
    CHECK(rs[0] == MPI_REQUEST_NULL && rs[2] == MPI_REQUEST_NULL, "Waitall left requests");
    CHECK(a.frees == 1 && b.frees == 1 && a.queries == 1 && b.queries == 1, "Waitall callbacks: a q%d f%d b q%d f%d",
          a.queries, a.frees, b.queries, b.frees);
    status_is(&sts[2], 8);

    p2p_setstep("not a generalized request");
    MPI_OK(MPI_Irecv(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    MPI_FAILS(MPI_ERR_REQUEST, MPI_Grequest_complete(r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_FAILS(MPI_ERR_REQUEST, MPI_Grequest_complete(MPI_REQUEST_NULL));

    p2p_setstep("no parent");
    MPI_Comm parent = MPI_COMM_WORLD;
    MPI_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "MPI_Comm_get_parent gave 0x%x", (unsigned)parent);
    MPI_Finalize();
    return 0;
}
