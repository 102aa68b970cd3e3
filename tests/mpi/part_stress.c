/* Partitioned ring under varied shapes: 40 iterations, each with its own
 * partition counts on the two sides (1..16, independent), sizes from one int
 * per partition to rendezvous-sized partitions, partitions readied in a
 * pseudo-random order through MPI_Pready and MPI_Pready_list while the
 * receiver polls MPI_Parrived, two rounds per request pair.  All ranks draw
 * the same parameters (fixed seed). */
#include "p2p_check.h"

static unsigned lcg(unsigned *s) { return *s = *s * 1103515245u + 12345u, (*s >> 8) & 0xffffff; }

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int rank = p2p_rank, size = p2p_size, to = (rank + 1) % size, from = (rank + size - 1) % size;
    static const int parts[] = {1, 2, 3, 4, 5, 6, 8, 16};
    static const int scale[] = {1, 3, 64, 1100};
    unsigned seed = 12345;
    for (int it = 0; it < 40; it++) {
        int sp = parts[lcg(&seed) % 8], rp = parts[lcg(&seed) % 8], k = scale[lcg(&seed) % 4];
        int total = 240 * k;
        p2p_setstep("iteration %d: %d x %d -> %d x %d", it, sp, total / sp, rp, total / rp);
        int *sb = malloc(total * sizeof(int)), *rb = malloc(total * sizeof(int));
        MPI_Request rq[2];
        MPI_OK(MPI_Precv_init(rb, rp, total / rp, MPI_INT, from, it, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]));
        MPI_OK(MPI_Psend_init(sb, sp, total / sp, MPI_INT, to, it, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]));
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < total; i++)
                sb[i] = rank * 7919 + it * 131 + round * 17 + i, rb[i] = -1;
            MPI_OK(MPI_Startall(2, rq));
            int perm[16], seen[16] = {0};
            for (int i = 0; i < sp; i++)
                perm[i] = i;
            for (int i = sp - 1; i > 0; i--) {
                int j = (int)(lcg(&seed) % (unsigned)(i + 1)), t = perm[i];
                perm[i] = perm[j], perm[j] = t;
            }
            for (int i = 0; i < sp;) {
                int n = 1 + (int)(lcg(&seed) % 3);
                if (i + n > sp)
                    n = sp - i;
                if (n == 1)
                    MPI_OK(MPI_Pready(perm[i], rq[1]));
                else
                    MPI_OK(MPI_Pready_list(n, perm + i, rq[1]));
                i += n;
                for (int p = 0; p < rp; p++) { /* poll arrivals meanwhile; an arrived partition is complete */
                    int flag;
                    MPI_OK(MPI_Parrived(rq[0], p, &flag));
                    if (flag && !seen[p]) {
                        seen[p] = 1;
                        int pc = total / rp;
                        for (int e = 0; e < pc; e++)
                            CHECK(rb[p * pc + e] == from * 7919 + it * 131 + round * 17 + p * pc + e,
                                  "partition %d element %d early: %d", p, e, rb[p * pc + e]);
                    }
                }
            }
            MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
            for (int i = 0; i < total; i++)
                CHECK(rb[i] == from * 7919 + it * 131 + round * 17 + i, "round %d element %d: %d", round, i, rb[i]);
        }
        MPI_OK(MPI_Request_free(&rq[0]));
        MPI_OK(MPI_Request_free(&rq[1]));
        free(sb);
        free(rb);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("part_stress: %d ranks: ok\n", size);
    MPI_Finalize();
    return 0;
}
