/* Error classes and messages raised by real calls under MPI_ERRORS_RETURN:
 * each error must come back with the right class, and MPI_Error_string must
 * give a message that names the problem. */
#include <ctype.h>

#include "p2p_check.h"

/* case-insensitive substring */
static int has(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && tolower((unsigned char)s[i]) == tolower((unsigned char)w[i]))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

#define EXPECT(cls, word, call)                                                                   \
    do {                                                                                          \
        int e_ = (call), cl_ = -1, len_ = -1;                                                    \
        char s_[MPI_MAX_ERROR_STRING] = "";                                                       \
        CHECK(e_ != MPI_SUCCESS, "%s succeeded", #call);                                         \
        MPI_OK(MPI_Error_class(e_, &cl_));                                                       \
        MPI_OK(MPI_Error_string(e_, s_, &len_));                                                 \
        CHECK(cl_ == (cls), "%s: class %d, expected %s (%d); message '%s'", #call, cl_, #cls, cls, s_); \
        CHECK(len_ == (int)strlen(s_) && len_ > 0, "%s: resultlen %d for '%s'", #call, len_, s_);  \
        CHECK(has(s_, word), "%s: message '%s' does not mention '%s'", #call, s_, word);          \
    } while (0)

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int x[16] = {0}, y[16];
    int P = p2p_size, peer = (p2p_rank + 1) % P;
    MPI_Status st;

    p2p_setstep("point-to-point argument errors");
    EXPECT(MPI_ERR_RANK, "rank", MPI_Send(x, 1, MPI_INT, P, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_RANK, "rank", MPI_Recv(x, 1, MPI_INT, P + 5, 0, MPI_COMM_WORLD, &st));
    EXPECT(MPI_ERR_TAG, "tag", MPI_Send(x, 1, MPI_INT, peer, -5, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_COUNT, "count", MPI_Send(x, -1, MPI_INT, peer, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TYPE, "type", MPI_Send(x, 1, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_COMM, "comm", MPI_Send(x, 1, MPI_INT, peer, 0, MPI_COMM_NULL));
    EXPECT(MPI_ERR_BUFFER, "buf", MPI_Send(NULL, 4, MPI_INT, peer, 0, MPI_COMM_WORLD));

    p2p_setstep("collective argument errors");
    EXPECT(MPI_ERR_ROOT, "root", MPI_Bcast(x, 1, MPI_INT, P, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_ROOT, "root", MPI_Reduce(x, y, 1, MPI_INT, MPI_SUM, -2, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_OP, "op", MPI_Allreduce(x, y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_COUNT, "count", MPI_Allreduce(x, y, -3, MPI_INT, MPI_SUM, MPI_COMM_WORLD));

    p2p_setstep("group errors");
    MPI_Comm c;
    EXPECT(MPI_ERR_GROUP, "group", MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c));
    int gs;
    EXPECT(MPI_ERR_GROUP, "group", MPI_Group_size(MPI_GROUP_NULL, &gs));

    p2p_setstep("truncation");
    if (P >= 2 && p2p_rank < 2) {
        if (p2p_rank == 0) {
            for (int i = 0; i < 16; i++)
                x[i] = i;
            MPI_OK(MPI_Send(x, 16, MPI_INT, 1, 9, MPI_COMM_WORLD));
        } else {
            for (int i = 0; i < 16; i++)
                y[i] = -1;
            EXPECT(MPI_ERR_TRUNCATE, "trunc", MPI_Recv(y, 4, MPI_INT, 0, 9, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 9, "truncated status source %d tag %d", st.MPI_SOURCE,
                  st.MPI_TAG);
            CHECK(y[0] == 0 && y[3] == 3 && y[4] == -1, "truncated receive wrote %d %d %d", y[0], y[3], y[4]);
        }
    }

    p2p_setstep("errors on a duplicate go to its handler");
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d)); /* inherits MPI_ERRORS_RETURN */
    EXPECT(MPI_ERR_RANK, "rank", MPI_Ssend(x, 1, MPI_INT, -7, 0, d));
    MPI_OK(MPI_Comm_free(&d));

    p2p_setstep("error strings of classes and invalid codes");
    char s[MPI_MAX_ERROR_STRING];
    int len, cl;
    MPI_OK(MPI_Error_string(MPI_ERR_TRUNCATE, s, &len));
    CHECK(has(s, "truncat"), "class string '%s'", s);
    MPI_OK(MPI_Error_class(MPI_ERR_IN_STATUS, &cl));
    CHECK(cl == MPI_ERR_IN_STATUS, "class of a class");
    EXPECT(MPI_ERR_ARG, "code", MPI_Error_class(-12345, &cl));
    EXPECT(MPI_ERR_ARG, "code", MPI_Error_string(MPI_ERR_LASTCODE + 777777, s, &len));

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
