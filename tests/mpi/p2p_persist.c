/* Persistent requests: created inactive, started many times with
 * MPI_Start/MPI_Startall, completed by Wait/Waitall/Test/Testall (which
 * leave the handle valid and inactive); inactive requests complete at once
 * with an empty status; MPI_Request_get_status does not deactivate;
 * MPI_Request_free of inactive and of active requests.  Two ranks
 * exchanging in both directions (extra ranks idle). */
#include "p2p_check.h"

#define ITERS 40

static void check_empty(const MPI_Status *st, const char *what)
{
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && p2p_count(st, MPI_BYTE) == 0,
          "%s: not an empty status (%d/%d/%lld)", what, st->MPI_SOURCE, st->MPI_TAG,
          (long long)p2p_count(st, MPI_BYTE));
}

static void exchange(size_t n, int mode)
{
    int peer = p2p_rank ^ 1;
    char *sbuf = malloc(n + 1), *rbuf = malloc(n + 1);
    CHECK(sbuf && rbuf, "out of memory");
    MPI_Request rq[2];
    MPI_Status st[2];
    MPI_OK(MPI_Recv_init(rbuf, (int)n, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &rq[0]));
    if (mode == 0)
        MPI_OK(MPI_Send_init(sbuf, (int)n, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &rq[1]));
    else if (mode == 1)
        MPI_OK(MPI_Ssend_init(sbuf, (int)n, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &rq[1]));
    else
        MPI_OK(MPI_Send_init_c(sbuf, (MPI_Count)n, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &rq[1]));

    /* inactive: complete at once with empty status */
    int flag = 0;
    MPI_OK(MPI_Test(&rq[0], &flag, &st[0]));
    CHECK(flag && rq[0] != MPI_REQUEST_NULL, "Test of an inactive request");
    check_empty(&st[0], "Test of inactive");
    MPI_OK(MPI_Wait(&rq[1], &st[1]));
    check_empty(&st[1], "Wait of inactive");
    MPI_OK(MPI_Request_get_status(rq[0], &flag, &st[0]));
    CHECK(flag, "Request_get_status of inactive");

    for (int it = 0; it < ITERS; it++) {
        p2p_setstep("persistent %zu bytes mode %d iteration %d", n, mode, it);
        unsigned seed = (unsigned)(it * 2 + p2p_rank + n);
        p2p_fill(sbuf, n, seed);
        memset(rbuf, 0, n);
        switch (it % 4) {
        case 0:
            MPI_OK(MPI_Startall(2, rq));
            MPI_OK(MPI_Waitall(2, rq, st));
            break;
        case 1:
            MPI_OK(MPI_Start(&rq[0]));
            MPI_OK(MPI_Start(&rq[1]));
            MPI_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
            /* get_status does not deactivate: Wait still reports the receive */
            do
                MPI_OK(MPI_Request_get_status(rq[0], &flag, &st[0]));
            while (!flag);
            MPI_OK(MPI_Wait(&rq[0], &st[0]));
            break;
        case 2: {
            MPI_OK(MPI_Startall(2, rq));
            do
                MPI_OK(MPI_Testall(2, rq, &flag, st));
            while (!flag);
            break;
        }
        case 3: {
            MPI_OK(MPI_Startall(2, rq));
            int done = 0;
            while (done < 2) {
                int idx;
                MPI_Status s;
                MPI_OK(MPI_Waitany(2, rq, &idx, &s));
                CHECK(idx == 0 || idx == 1, "Waitany index %d", idx);
                if (idx == 0)
                    st[0] = s;
                done++;
            }
            int idx;
            MPI_OK(MPI_Waitany(2, rq, &idx, &st[1])); /* both inactive now */
            CHECK(idx == MPI_UNDEFINED, "Waitany over inactive requests gave index %d", idx);
            check_empty(&st[1], "Waitany over inactive");
            break;
        }
        }
        CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL, "persistent request freed by completion");
        CHECK(st[0].MPI_SOURCE == peer && st[0].MPI_TAG == 9 && p2p_count(&st[0], MPI_BYTE) == (MPI_Count)n,
              "receive status %d/%d/%lld", st[0].MPI_SOURCE, st[0].MPI_TAG, (long long)p2p_count(&st[0], MPI_BYTE));
        size_t bad = p2p_verify(rbuf, n, (unsigned)(it * 2 + peer + n));
        CHECK(bad == (size_t)-1, "byte %zu wrong", bad);
    }
    MPI_OK(MPI_Request_free(&rq[0]));
    MPI_OK(MPI_Request_free(&rq[1]));
    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "Request_free did not reset handles");
    free(sbuf);
    free(rbuf);
}

/* MPI_Request_free of active requests: they complete in the background. */
static void free_active(void)
{
    p2p_setstep("Request_free of active requests");
    static int data[8], got[8];
    int peer = p2p_rank ^ 1;
    MPI_Request r;
    if (p2p_rank == 0) {
        MPI_OK(MPI_Recv_init(got, 8, MPI_INT, peer, 50, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Start(&r));
        MPI_OK(MPI_Request_free(&r));
        CHECK(r == MPI_REQUEST_NULL, "handle not reset");
        MPI_OK(MPI_Irecv(got + 4, 4, MPI_INT, peer, 51, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Request_free(&r));
        MPI_OK(MPI_Send(NULL, 0, MPI_INT, peer, 52, MPI_COMM_WORLD)); /* "posted" */
        /* same sender, later message: once it is here, the earlier ones matched */
        MPI_OK(MPI_Recv(NULL, 0, MPI_INT, peer, 53, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 4; i++)
            CHECK(got[i] == 100 + i && got[4 + i] == 200 + i, "freed receive got %d/%d", got[i], got[4 + i]);
    } else if (p2p_rank == 1) {
        for (int i = 0; i < 4; i++) {
            data[i] = 100 + i;
            data[4 + i] = 200 + i;
        }
        MPI_OK(MPI_Recv(NULL, 0, MPI_INT, peer, 52, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Isend(data, 4, MPI_INT, peer, 50, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Request_free(&r)); /* active send freed */
        MPI_OK(MPI_Send_init(data + 4, 4, MPI_INT, peer, 51, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Start(&r));
        MPI_OK(MPI_Request_free(&r)); /* active persistent send freed */
        MPI_OK(MPI_Send(NULL, 0, MPI_INT, peer, 53, MPI_COMM_WORLD));
    }
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    CHECK(p2p_size >= 2, "needs 2 ranks");
    if ((p2p_rank ^ 1) < p2p_size) {
        static const size_t sizes[] = {0, 8, 4000, 70000, 2000000};
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            for (int mode = 0; mode < 3; mode++)
                exchange(sizes[i], mode);
        free_active();
    }
    MPI_Finalize();
    return 0;
}
