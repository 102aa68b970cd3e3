/* Partitioned point-to-point (MPI-4.1 chapter 4): a ring of partitioned
 * sends over several rounds, partitions marked ready in reverse order, by
 * range and by shuffled list, arrivals watched with MPI_Parrived; different
 * partitionings on the two sides (aligned and not aligned to the sender's
 * datatype), a noncontiguous receive type, rendezvous-sized partitions, two
 * requests with the same tag matched by init order although started and
 * readied in the other order, MPI_PROC_NULL, MPI_Startall, MPI_Test,
 * MPI_Request_free, and the misuse errors (MPI_Cancel refused with MPI_ERR_REQUEST). */
#include "p2p_check.h"

#define ROUNDS 3
#define NP 8
#define PC 100

static int rank, size;

static int val(int src, int round, int i) { return src * 1000003 + round * 7919 + i; }

static void ring(void)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int *sb = calloc(NP * PC, sizeof(int)), *rb = calloc(NP * PC, sizeof(int));
    MPI_Request sr, rr;
    MPI_OK(MPI_Psend_init(sb, NP, PC, MPI_INT, to, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &sr));
    MPI_OK(MPI_Precv_init(rb, NP, PC, MPI_INT, from, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rr));
    int flag;
    MPI_OK(MPI_Parrived(rr, 0, &flag)); /* inactive: nothing to wait for */
    CHECK(flag, "Parrived on an inactive request");
    for (int round = 0; round < ROUNDS; round++) {
        p2p_setstep("ring round %d", round);
        for (int i = 0; i < NP * PC; i++)
            sb[i] = val(rank, round, i), rb[i] = -1;
        MPI_OK(MPI_Start(&rr));
        MPI_OK(MPI_Start(&sr));
        if (round == 0) {
            for (int p = NP - 1; p >= 0; p--)
                MPI_OK(MPI_Pready(p, sr));
        } else if (round == 1) {
            MPI_OK(MPI_Pready_range(NP / 2, NP - 1, sr));
            MPI_OK(MPI_Pready_range(0, NP / 2 - 1, sr));
        } else {
            int list[NP] = {3, 7, 0, 5, 1, 6, 2, 4};
            MPI_OK(MPI_Pready_list(NP, list, sr));
        }
        int arrived = 0;
        for (long spin = 0; arrived < NP && spin < 200000000L; spin++) {
            arrived = 0;
            for (int p = 0; p < NP; p++) {
                MPI_OK(MPI_Parrived(rr, p, &flag));
                if (flag) {
                    for (int i = 0; i < PC; i++)
                        CHECK(rb[p * PC + i] == val(from, round, p * PC + i), "partition %d element %d: %d", p, i,
                              rb[p * PC + i]);
                    arrived++;
                }
            }
        }
        CHECK(arrived == NP, "only %d partitions arrived", arrived);
        MPI_Status st;
        MPI_OK(MPI_Wait(&rr, &st));
        int cnt;
        MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
        CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 5 && cnt == NP * PC, "status source %d tag %d count %d",
              st.MPI_SOURCE, st.MPI_TAG, cnt);
        flag = 0;
        for (long spin = 0; !flag && spin < 200000000L; spin++)
            MPI_OK(MPI_Test(&sr, &flag, MPI_STATUS_IGNORE));
        CHECK(flag, "send never completed");
        CHECK(sr != MPI_REQUEST_NULL, "persistent request released by MPI_Test");
    }
    MPI_OK(MPI_Request_free(&sr));
    MPI_OK(MPI_Request_free(&rr));
    CHECK(sr == MPI_REQUEST_NULL && rr == MPI_REQUEST_NULL, "Request_free left handles");
    free(sb);
    free(rb);
}

/* sender sp x sc elements of stype; receiver rp x rc elements of rtype (both int data) */
static void shapes(const char *what, int sp, int sc, MPI_Datatype stype, int sints, int rp, int rc,
                   MPI_Datatype rtype, int rstride)
{
    p2p_setstep("shapes %s", what);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int n = sp * sc * sints;
    int *sb = malloc(n * sizeof(int)), *rb = malloc((size_t)n * rstride * sizeof(int));
    for (int i = 0; i < n; i++)
        sb[i] = val(rank, 9, i);
    for (int i = 0; i < n * rstride; i++)
        rb[i] = -1;
    MPI_Request req[2];
    MPI_OK(MPI_Precv_init(rb, rp, rc, rtype, from, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]));
    MPI_OK(MPI_Psend_init(sb, sp, sc, stype, to, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]));
    MPI_OK(MPI_Startall(2, req));
    for (int p = sp - 1; p >= 0; p--)
        MPI_OK(MPI_Pready(p, req[1]));
    MPI_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < n; i++)
        CHECK(rb[i * rstride] == val(from, 9, i), "element %d: %d", i, rb[i * rstride]);
    if (rstride > 1)
        for (int i = 0; i < n; i++)
            CHECK(rb[i * rstride + 1] == -1, "gap %d overwritten", i);
    MPI_OK(MPI_Request_free(&req[0]));
    MPI_OK(MPI_Request_free(&req[1]));
    free(sb);
    free(rb);
}

/* two requests with one tag: the n-th Psend_init pairs with the n-th Precv_init */
static void order(void)
{
    p2p_setstep("init order");
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int sa[4] = {1, 2, 3, 4}, sbb[4] = {5, 6, 7, 8}, ra[4] = {0}, rbb[4] = {0};
    for (int i = 0; i < 4; i++)
        sa[i] += 100 * rank, sbb[i] += 100 * rank;
    MPI_Request a, b, ra_, rb_;
    MPI_OK(MPI_Psend_init(sa, 2, 2, MPI_INT, to, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &a));
    MPI_OK(MPI_Psend_init(sbb, 2, 2, MPI_INT, to, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &b));
    MPI_OK(MPI_Precv_init(ra, 2, 2, MPI_INT, from, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &ra_));
    MPI_OK(MPI_Precv_init(rbb, 2, 2, MPI_INT, from, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &rb_));
    MPI_OK(MPI_Start(&rb_));
    MPI_OK(MPI_Start(&b));
    MPI_OK(MPI_Pready_range(0, 1, b));
    MPI_OK(MPI_Wait(&rb_, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Start(&a));
    MPI_OK(MPI_Start(&ra_));
    MPI_OK(MPI_Pready(1, a));
    MPI_OK(MPI_Pready(0, a));
    MPI_OK(MPI_Wait(&ra_, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&a, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&b, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        CHECK(ra[i] == i + 1 + 100 * from && rbb[i] == i + 5 + 100 * from, "ra[%d] %d rb[%d] %d", i, ra[i], i, rbb[i]);
    MPI_Request all[4] = {a, b, ra_, rb_};
    for (int i = 0; i < 4; i++)
        MPI_OK(MPI_Request_free(&all[i]));

    p2p_setstep("both sends started before the receives, second receive first");
    MPI_Request q[4]; /* send a, send b, recv a, recv b */
    MPI_OK(MPI_Psend_init(sa, 2, 2, MPI_INT, to, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]));
    MPI_OK(MPI_Psend_init(sbb, 2, 2, MPI_INT, to, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &q[1]));
    MPI_OK(MPI_Precv_init(ra, 2, 2, MPI_INT, from, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &q[2]));
    MPI_OK(MPI_Precv_init(rbb, 2, 2, MPI_INT, from, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &q[3]));
    for (int i = 0; i < 4; i++)
        ra[i] = rbb[i] = -1;
    for (int round = 0; round < 2; round++) {
        MPI_OK(MPI_Start(&q[0]));
        MPI_OK(MPI_Start(&q[1]));
        MPI_OK(MPI_Pready_range(0, 1, q[1]));
        MPI_OK(MPI_Pready_range(0, 1, q[0]));
        MPI_Barrier(MPI_COMM_WORLD); /* every sender waits for its announcement now */
        MPI_OK(MPI_Start(&q[3]));
        MPI_OK(MPI_Start(&q[2]));
        MPI_OK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 4; i++)
            CHECK(ra[i] == i + 1 + 100 * from && rbb[i] == i + 5 + 100 * from, "round %d: ra[%d] %d rb[%d] %d",
                  round, i, ra[i], i, rbb[i]);
    }
    for (int i = 0; i < 4; i++)
        MPI_OK(MPI_Request_free(&q[i]));

    p2p_setstep("free an active send");
    static int fsa[4]; /* outlives this function: the freed send may go out later */
    MPI_OK(MPI_Psend_init(fsa, 2, 2, MPI_INT, to, 10, MPI_COMM_WORLD, MPI_INFO_NULL, &a));
    MPI_OK(MPI_Precv_init(ra, 2, 2, MPI_INT, from, 10, MPI_COMM_WORLD, MPI_INFO_NULL, &ra_));
    for (int i = 0; i < 4; i++)
        fsa[i] = 50 + i + rank, ra[i] = -1;
    MPI_OK(MPI_Start(&ra_));
    MPI_OK(MPI_Start(&a));
    MPI_OK(MPI_Pready_range(0, 1, a));
    MPI_OK(MPI_Request_free(&a)); /* still active: completes in the background */
    CHECK(a == MPI_REQUEST_NULL, "handle kept");
    MPI_OK(MPI_Wait(&ra_, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        CHECK(ra[i] == 50 + i + from, "after free: ra[%d] %d", i, ra[i]);
    MPI_OK(MPI_Request_free(&ra_));
}

/* the same partitioning on both sides: a partition readied alone arrives
 * while the ones before it are not ready (rank 0 -> rank 1) */
static void early(int elems)
{
    p2p_setstep("early arrival, %d ints per partition", elems);
    if (size < 2)
        return;
    int *buf = calloc((size_t)NP * elems, sizeof(int));
    MPI_Request r;
    if (rank == 0)
        MPI_OK(MPI_Psend_init(buf, NP, elems, MPI_INT, 1, 12, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    else if (rank == 1)
        MPI_OK(MPI_Precv_init(buf, NP, elems, MPI_INT, 0, 12, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    for (int round = 0; round < 2 && rank < 2; round++) {
        int go = 0, flag = 0;
        if (rank == 0) {
            for (int i = 0; i < NP * elems; i++)
                buf[i] = round * 100000 + i;
            MPI_OK(MPI_Start(&r));
            MPI_OK(MPI_Pready(NP - 1, r));
            if (round == 1) /* matched in round 0: the last partition is on its way */
                MPI_OK(MPI_Recv(&go, 1, MPI_INT, 1, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Pready_range(0, NP - 2, r));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        } else {
            for (int i = 0; i < NP * elems; i++)
                buf[i] = -1;
            MPI_OK(MPI_Start(&r));
            if (round == 1) {
                for (long spin = 0; !flag && spin < 200000000L; spin++)
                    MPI_OK(MPI_Parrived(r, NP - 1, &flag));
                CHECK(flag, "the last partition never arrived on its own");
                MPI_OK(MPI_Parrived(r, 0, &flag));
                CHECK(!flag, "partition 0 arrived before it was ready");
                CHECK(buf[(NP - 1) * elems] == 100000 + (NP - 1) * elems, "early partition holds %d",
                      buf[(NP - 1) * elems]);
                MPI_OK(MPI_Send(&go, 1, MPI_INT, 0, 13, MPI_COMM_WORLD));
            }
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            for (int i = 0; i < NP * elems; i++)
                CHECK(buf[i] == round * 100000 + i, "element %d: %d", i, buf[i]);
        }
    }
    if (rank < 2)
        MPI_OK(MPI_Request_free(&r));
    free(buf);
}

static int errclass(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

static void misuse(void)
{
    p2p_setstep("misuse");
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int sb[40] = {0}, rb[40];
    MPI_Request s, r, x;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(errclass(MPI_Precv_init(rb, 4, 8, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &x)) ==
              MPI_ERR_ARG, "MPI_ANY_SOURCE accepted");
    CHECK(errclass(MPI_Precv_init(rb, 4, 8, MPI_INT, from, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &x)) ==
              MPI_ERR_ARG, "MPI_ANY_TAG accepted");
    CHECK(errclass(MPI_Psend_init(sb, 0, 8, MPI_INT, to, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &x)) == MPI_ERR_ARG,
          "0 partitions accepted");
    CHECK(errclass(MPI_Psend_init(sb, 4, 8, MPI_INT, size, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &x)) == MPI_ERR_RANK,
          "bad rank accepted");
    /* sizes differ: 4 x 10 ints sent, 4 x 8 ints expected -> both sides fail, neither hangs */
    MPI_OK(MPI_Psend_init(sb, 4, 10, MPI_INT, to, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    MPI_OK(MPI_Precv_init(rb, 4, 8, MPI_INT, from, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    CHECK(errclass(MPI_Pready(0, s)) == MPI_ERR_REQUEST, "Pready before MPI_Start accepted");
    int flag;
    CHECK(errclass(MPI_Parrived(s, 0, &flag)) == MPI_ERR_REQUEST, "Parrived on a send request accepted");
    CHECK(errclass(MPI_Pready(0, r)) == MPI_ERR_REQUEST, "Pready on a receive request accepted");
    CHECK(errclass(MPI_Cancel(&s)) == MPI_ERR_REQUEST, "cancel of an inactive partitioned send accepted");
    MPI_OK(MPI_Start(&r));
    MPI_OK(MPI_Start(&s));
    /* a cancel that did nothing would leave the MPI_Wait below hanging: refused, the round goes on */
    CHECK(errclass(MPI_Cancel(&s)) == MPI_ERR_REQUEST, "cancel of an active partitioned send accepted");
    CHECK(errclass(MPI_Cancel(&r)) == MPI_ERR_REQUEST, "cancel of an active partitioned receive accepted");
    CHECK(errclass(MPI_Pready(4, s)) == MPI_ERR_ARG, "partition 4 of 4 accepted");
    CHECK(errclass(MPI_Pready_range(2, 1, s)) == MPI_ERR_ARG, "empty range accepted");
    CHECK(errclass(MPI_Parrived(r, -1, &flag)) == MPI_ERR_ARG, "partition -1 accepted");
    MPI_OK(MPI_Pready(0, s));
    CHECK(errclass(MPI_Pready(0, s)) == MPI_ERR_ARG, "partition readied twice");
    CHECK(errclass(MPI_Start(&s)) == MPI_ERR_REQUEST, "start of an active request accepted");
    MPI_OK(MPI_Pready_range(1, 3, s));
    CHECK(errclass(MPI_Wait(&s, MPI_STATUS_IGNORE)) == MPI_ERR_TRUNCATE, "size mismatch not reported by the sender");
    CHECK(errclass(MPI_Wait(&r, MPI_STATUS_IGNORE)) == MPI_ERR_TRUNCATE, "size mismatch not reported by the receiver");
    MPI_OK(MPI_Request_free(&s));
    MPI_OK(MPI_Request_free(&r));
    /* MPI_PROC_NULL */
    MPI_OK(MPI_Psend_init(sb, 2, 2, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    MPI_OK(MPI_Precv_init(rb, 2, 2, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    MPI_Request both[2] = {s, r};
    MPI_OK(MPI_Startall(2, both));
    MPI_OK(MPI_Pready_range(0, 1, s));
    MPI_OK(MPI_Parrived(r, 1, &flag));
    CHECK(flag, "MPI_PROC_NULL partition not arrived");
    MPI_Status st[2];
    MPI_OK(MPI_Waitall(2, both, st));
    CHECK(st[1].MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL receive source %d", st[1].MPI_SOURCE);
    MPI_OK(MPI_Request_free(&both[0]));
    MPI_OK(MPI_Request_free(&both[1]));
    x = MPI_REQUEST_NULL;
    MPI_OK(MPI_Parrived(x, 0, &flag));
    CHECK(flag, "Parrived(MPI_REQUEST_NULL) false");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    rank = p2p_rank, size = p2p_size;
    ring();
    shapes("4x50 -> 8x25", 4, 50, MPI_INT, 1, 8, 25, MPI_INT, 1);
    MPI_Datatype three, strided;
    MPI_Type_contiguous(3, MPI_INT, &three);
    MPI_Type_commit(&three);
    shapes("5x(3 int) -> 3x5 int (packed)", 5, 1, three, 3, 3, 5, MPI_INT, 1);
    MPI_Type_vector(1, 1, 2, MPI_INT, &strided);
    MPI_Type_create_resized(strided, 0, 2 * sizeof(int), &strided);
    MPI_Type_commit(&strided);
    shapes("2x12 -> 6x4 strided", 2, 12, MPI_INT, 1, 6, 4, strided, 2);
    shapes("2 x 256Ki ints (rendezvous)", 2, 1 << 18, MPI_INT, 1, 4, 1 << 17, MPI_INT, 1);
    shapes("empty partitions", 3, 0, MPI_INT, 1, 2, 0, MPI_INT, 1);
    MPI_Type_free(&three);
    MPI_Type_free(&strided);
    order();
    early(8);
    early(1 << 16); /* 256 KiB partitions: rendezvous */
    misuse();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("part_basic: %d ranks: ok\n", size);
    MPI_Finalize();
    return 0;
}
