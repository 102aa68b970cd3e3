/* Buffered sends account MPI_BSEND_OVERHEAD per message, as MPICH does: a
 * message of n bytes needs n + MPI_BSEND_OVERHEAD bytes of the attached
 * buffer, and a MPI_Bsend/MPI_Ibsend that does not fit returns
 * MPI_ERR_BUFFER; messages still in flight keep their space. */
#include "p2p_check.h"

#define BIG (256 * 1024) /* above every eager limit and WHARF_SHM_PUSH_MAX: stays in flight until matched */

static char data[BIG];

static void attach(int size)
{
    char *b = malloc((size_t)size);
    CHECK(b, "malloc");
    MPI_OK(MPI_Buffer_attach(b, size));
}

static void detach(void)
{
    void *p;
    int s;
    MPI_OK(MPI_Buffer_detach(&p, &s));
    free(p);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Request r;
    int go = 1;
    if (p2p_rank == 0) {
        p2p_setstep("no buffer");
        MPI_FAILS(MPI_ERR_BUFFER, MPI_Bsend(data, 10, MPI_CHAR, 1, 0, MPI_COMM_WORLD));
        MPI_OK(MPI_Bsend(data, 10, MPI_CHAR, MPI_PROC_NULL, 0, MPI_COMM_WORLD));

        for (int n = 0; n <= 1000; n += 100) {
            p2p_setstep("one message of %d bytes", n);
            attach(n + MPI_BSEND_OVERHEAD - 1);
            MPI_FAILS(MPI_ERR_BUFFER, MPI_Bsend(data, n, MPI_CHAR, 1, 1, MPI_COMM_WORLD));
            MPI_FAILS(MPI_ERR_BUFFER, MPI_Ibsend(data, n, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &r));
            detach();
            attach(n + MPI_BSEND_OVERHEAD);
            MPI_OK(MPI_Bsend(data, n, MPI_CHAR, 1, 1, MPI_COMM_WORLD));
            detach();
            MPI_FAILS(MPI_ERR_BUFFER, MPI_Bsend(data, n + 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD));
        }
        p2p_setstep("a message larger than the buffer");
        attach(100);
        MPI_FAILS(MPI_ERR_BUFFER, MPI_Bsend(data, 1000, MPI_INT, 1, 1, MPI_COMM_WORLD));
        detach();

        p2p_setstep("two messages in flight, one byte short");
        attach(2 * (BIG + MPI_BSEND_OVERHEAD) - 1);
        MPI_OK(MPI_Bsend(data, BIG, MPI_CHAR, 1, 2, MPI_COMM_WORLD));
        MPI_FAILS(MPI_ERR_BUFFER, MPI_Bsend(data, BIG, MPI_CHAR, 1, 2, MPI_COMM_WORLD));
        MPI_OK(MPI_Send(&go, 1, MPI_INT, 1, 9, MPI_COMM_WORLD));
        detach(); /* waits until rank 1 has received it */

        p2p_setstep("two messages in flight, exact size");
        attach(2 * (BIG + MPI_BSEND_OVERHEAD));
        MPI_OK(MPI_Bsend(data, BIG, MPI_CHAR, 1, 3, MPI_COMM_WORLD));
        MPI_OK(MPI_Ibsend(data, BIG, MPI_CHAR, 1, 3, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Send(&go, 1, MPI_INT, 1, 9, MPI_COMM_WORLD));
        detach();
    } else if (p2p_rank == 1) {
        MPI_Status st;
        for (int n = 0; n <= 1000; n += 100)
            MPI_OK(MPI_Recv(data, BIG, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Recv(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Recv(data, BIG, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &st));
        CHECK(p2p_count(&st, MPI_CHAR) == BIG, "got %lld bytes", (long long)p2p_count(&st, MPI_CHAR));
        MPI_OK(MPI_Recv(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 2; i++)
            MPI_OK(MPI_Recv(data, BIG, MPI_CHAR, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    /* nothing else may arrive */
    int flag = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "an unexpected message arrived");
    MPI_Finalize();
    return 0;
}
