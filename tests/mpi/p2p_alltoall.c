/* All-to-all with many outstanding nonblocking requests: every rank posts K
 * receives from and K sends to every rank (itself included), sizes from 0
 * bytes to beyond the rendezvous threshold, receives posted before or after
 * the sends, completed with Waitall, Waitsome, Testany, Waitany, Testsome and
 * Testall.  Meant for 4 and 8 ranks, oversubscribed. */
#include "p2p_check.h"

#define K 6
#define ROUNDS 12

static size_t msg_size(int src, int dst, int k, int round)
{
    static const size_t base[] = {0, 1, 100, 4096, 9000, 70000, 300001};
    return base[(size_t)(src + 2 * dst + k + round) % (sizeof base / sizeof base[0])];
}

static unsigned seed_of(int src, int dst, int k, int round)
{
    return (unsigned)(((round * 64 + src) * 64 + dst) * 8 + k);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int P = p2p_size, me = p2p_rank, n = P * K;
    MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)(2 * n));
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)(2 * n));
    MPI_Status *tmp = malloc(sizeof(MPI_Status) * (size_t)(2 * n));
    int *idx = malloc(sizeof(int) * (size_t)(2 * n));
    char **sb = calloc((size_t)n, sizeof(char *)), **rb = calloc((size_t)n, sizeof(char *));
    CHECK(rq && st && tmp && idx && sb && rb, "out of memory");
    for (int round = 0; round < ROUNDS; round++) {
        int method = round % 6, recv_first = round % 4 != 1;
        p2p_setstep("round %d (completion method %d, receives %s)", round, method, recv_first ? "first" : "last");
        for (int p = 0; p < P; p++)
            for (int k = 0; k < K; k++) {
                int i = p * K + k;
                size_t ssz = msg_size(me, p, k, round), rsz = msg_size(p, me, k, round);
                sb[i] = malloc(ssz + 1);
                rb[i] = malloc(rsz + 1);
                p2p_fill(sb[i], ssz, seed_of(me, p, k, round));
                memset(rb[i], 0, rsz + 1);
            }
        /* requests: receives at [0,n), sends at [n,2n) */
        for (int pass = 0; pass < 2; pass++) {
            int do_recv = (pass == 0) == recv_first;
            for (int j = 0; j < P; j++) {
                int p = (me + j) % P; /* stagger the peers */
                for (int k = 0; k < K; k++) {
                    int i = p * K + k;
                    if (do_recv)
                        MPI_OK(MPI_Irecv(rb[i], (int)msg_size(p, me, k, round), MPI_BYTE, p, k, MPI_COMM_WORLD,
                                         &rq[i]));
                    else
                        MPI_OK(MPI_Isend(sb[i], (int)msg_size(me, p, k, round), MPI_BYTE, p, k, MPI_COMM_WORLD,
                                         &rq[n + i]));
                }
            }
        }
        int total = 2 * n, done = 0, out, j, flag;
        switch (method) {
        case 0:
            MPI_OK(MPI_Waitall(total, rq, st));
            done = total;
            break;
        case 1:
            while (done < total) {
                MPI_OK(MPI_Waitsome(total, rq, &out, idx, tmp));
                CHECK(out != MPI_UNDEFINED && out > 0, "Waitsome outcount %d with %d left", out, total - done);
                for (int m = 0; m < out; m++) {
                    CHECK(rq[idx[m]] == MPI_REQUEST_NULL, "Waitsome did not free %d", idx[m]);
                    st[idx[m]] = tmp[m];
                }
                done += out;
            }
            break;
        case 2:
        case 3:
            while (done < total) {
                MPI_Status s;
                if (method == 2) {
                    MPI_OK(MPI_Testany(total, rq, &j, &flag, &s));
                    if (!flag)
                        continue;
                } else {
                    MPI_OK(MPI_Waitany(total, rq, &j, &s));
                }
                CHECK(j >= 0 && j < total && rq[j] == MPI_REQUEST_NULL, "index %d", j);
                st[j] = s;
                done++;
            }
            MPI_OK(MPI_Waitany(total, rq, &j, MPI_STATUS_IGNORE));
            CHECK(j == MPI_UNDEFINED, "Waitany after all done: %d", j);
            break;
        case 4:
            while (done < total) {
                MPI_OK(MPI_Testsome(total, rq, &out, idx, tmp));
                CHECK(out != MPI_UNDEFINED, "Testsome outcount undefined with %d left", total - done);
                for (int m = 0; m < out; m++)
                    st[idx[m]] = tmp[m];
                done += out;
            }
            break;
        default:
            do
                MPI_OK(MPI_Testall(total, rq, &flag, st));
            while (!flag);
            done = total;
        }
        for (int p = 0; p < P; p++)
            for (int k = 0; k < K; k++) {
                int i = p * K + k;
                size_t rsz = msg_size(p, me, k, round);
                CHECK(rq[i] == MPI_REQUEST_NULL && rq[n + i] == MPI_REQUEST_NULL, "request %d left", i);
                CHECK(st[i].MPI_SOURCE == p && st[i].MPI_TAG == k && p2p_count(&st[i], MPI_BYTE) == (MPI_Count)rsz,
                      "receive %d from %d: status %d/%d/%lld", k, p, st[i].MPI_SOURCE, st[i].MPI_TAG,
                      (long long)p2p_count(&st[i], MPI_BYTE));
                size_t bad = p2p_verify(rb[i], rsz, seed_of(p, me, k, round));
                CHECK(bad == (size_t)-1, "message %d from %d (%zu bytes): byte %zu wrong", k, p, rsz, bad);
                CHECK(rb[i][rsz] == 0, "message %d from %d overran its buffer", k, p);
                free(sb[i]);
                free(rb[i]);
            }
    }
    free(rq);
    free(st);
    free(tmp);
    free(idx);
    free(sb);
    free(rb);
    MPI_Finalize();
    return 0;
}
