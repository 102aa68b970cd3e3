/* Rendezvous between MPI_Alloc_mem buffers (the node-shared heap): the
 * receiver copies out of its mapping of the region (region get), or a
 * receiver that asks for a put (a gather root) has its senders copy into
 * it (region put); every byte checked, around them:
 *  - sizes from just past the eager limit to 3 MiB, odd lengths, several
 *    offsets inside a block (ranges crossing heap chunks);
 *  - one side in malloc memory (no region copy that way, the data right);
 *  - a non-contiguous receive (unpacked out of the region);
 *  - a message longer than the receive buffer: MPI_ERR_TRUNCATE, nothing
 *    written past the buffer;
 *  - MPI_Gather into an MPI_Alloc_mem root buffer and MPI_Scatter out of one.
 * Any number of ranks (pairs 0-1, 2-3, ...); ctest also runs it in the
 * container scenarios, where only the region gives a single copy, and
 * checks WHARF_REPORT=channels for region copies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_check.h"

static unsigned char pat(unsigned seed, size_t i)
{
    return (unsigned char)((i * 131 + seed * 7 + (i >> 9)) & 0xff);
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pat(seed, i);
}

static size_t bad_at(const unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pat(seed, i))
            return i;
    return (size_t)-1;
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int me = p2p_rank, np = p2p_size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const size_t big = 3u << 20;
    unsigned char *a, *b, *h = malloc(big + 4096);
    MPI_OK(MPI_Alloc_mem((MPI_Aint)(big + 4096), MPI_INFO_NULL, &a));
    MPI_OK(MPI_Alloc_mem((MPI_Aint)(big + 4096), MPI_INFO_NULL, &b));
    static const size_t sizes[] = {20000, 65536, 65537, 200001, 1u << 20, 3u << 20};
    static const size_t offs[] = {0, 1, 4093};
    int peer = me ^ 1;
    if (peer < np) {
        unsigned seed = 1;
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (size_t oi = 0; oi < 3; oi++, seed++) {
                size_t n = sizes[si], o = offs[oi];
                if (n + o > big + 4096)
                    continue;
                p2p_setstep("size %zu offset %zu", n, o);
                /* both in the heap, then the sender in malloc memory, then the receiver */
                for (int mode = 0; mode < 3; mode++) {
                    unsigned char *s = (mode == 1 ? h : a) + o, *r = (mode == 2 ? h : b) + o;
                    if (me < peer) {
                        fill(s, n, seed + (unsigned)mode);
                        MPI_OK(MPI_Send(s, (int)n, MPI_BYTE, peer, 5, MPI_COMM_WORLD));
                    } else {
                        memset(r, 0, n);
                        MPI_Status st;
                        MPI_OK(MPI_Recv(r, (int)n, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &st));
                        int got;
                        MPI_Get_count(&st, MPI_BYTE, &got);
                        size_t bad = bad_at(r, n, seed + (unsigned)mode);
                        CHECK(got == (int)n && bad == (size_t)-1, "mode %d: count %d, byte %zu wrong", mode, got, bad);
                    }
                }
            }
        /* a strided receive: every other 8-byte block of b */
        p2p_setstep("vector receive");
        size_t blocks = 40000;
        MPI_Datatype vec;
        MPI_Type_vector((int)blocks, 8, 16, MPI_BYTE, &vec);
        MPI_Type_commit(&vec);
        if (me < peer) {
            fill(a, blocks * 8, 99);
            MPI_OK(MPI_Send(a, (int)(blocks * 8), MPI_BYTE, peer, 6, MPI_COMM_WORLD));
        } else {
            memset(b, 0xee, blocks * 16);
            MPI_OK(MPI_Recv(b, 1, vec, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            size_t bad = (size_t)-1;
            for (size_t k = 0; k < blocks && bad == (size_t)-1; k++)
                for (size_t j = 0; j < 16; j++) {
                    unsigned char want = j < 8 ? pat(99, k * 8 + j) : 0xee;
                    if (b[k * 16 + j] != want) {
                        bad = k * 16 + j;
                        break;
                    }
                }
            CHECK(bad == (size_t)-1, "vector receive: byte %zu wrong", bad);
        }
        MPI_Type_free(&vec);
        /* truncation: 300000 bytes into a 200000-byte buffer */
        p2p_setstep("truncate");
        if (me < peer) {
            fill(a, 300000, 5);
            MPI_Send(a, 300000, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
        } else {
            memset(b, 0x11, 300000);
            int rc = MPI_Recv(b, 200000, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE), cls = -1;
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_TRUNCATE, "truncated receive: class %d", cls);
            CHECK(bad_at(b, 200000, 5) == (size_t)-1, "truncated receive: delivered bytes wrong");
            int past = 1;
            for (size_t i = 200000; i < 300000; i++)
                past &= b[i] == 0x11;
            CHECK(past, "truncated receive wrote past the buffer");
        }
    }
    /* gather into and scatter out of heap buffers at the root */
    for (int root = 0; root < np; root += np - 1 > 0 ? np - 1 : 1) {
        p2p_setstep("gather root %d", root);
        size_t blk = 300007;
        fill(a, blk, 200 + (unsigned)me);
        memset(b, 0, blk * (size_t)np);
        MPI_OK(MPI_Gather(a, (int)blk, MPI_BYTE, b, (int)blk, MPI_BYTE, root, MPI_COMM_WORLD));
        if (me == root)
            for (int r = 0; r < np; r++) {
                size_t bad = bad_at(b + (size_t)r * blk, blk, 200 + (unsigned)r);
                CHECK(bad == (size_t)-1, "gather block %d byte %zu wrong", r, bad);
            }
        p2p_setstep("scatter root %d", root);
        if (me == root)
            for (int r = 0; r < np; r++)
                fill(b + (size_t)r * blk, blk, 300 + (unsigned)r);
        memset(a, 0, blk);
        MPI_OK(MPI_Scatter(b, (int)blk, MPI_BYTE, a, (int)blk, MPI_BYTE, root, MPI_COMM_WORLD));
        size_t bad = bad_at(a, blk, 300 + (unsigned)me);
        CHECK(bad == (size_t)-1, "scatter block byte %zu wrong", bad);
        if (np == 1)
            break;
    }
    MPI_Free_mem(a);
    MPI_Free_mem(b);
    free(h);
    MPI_Finalize();
    if (me == 0)
        printf("p2p_region: ok\n");
    return 0;
}
