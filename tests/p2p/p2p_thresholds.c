/* Protocol switch points of co-resident ranks: for sizes around the eager
 * limit and the single-copy threshold, a ping-pong, a head-to-head
 * MPI_Sendrecv and an unexpected message (sent before the receive is posted)
 * deliver the right bytes, and the per-channel protocol counters (MPI_T
 * performance variables) say each message took the protocol the tunables
 * select: eager up to min(WHARF_SHM_EAGER_MAX, WHARF_SHM_SLOT_SIZE) (a pair CMA
 * serves, on a node with no more ranks than cpus: up to WHARF_CMA_MIN); above it
 * single copy (CMA) from WHARF_CMA_MIN where WHARF_CMA allows (the locality
 * probe may still refuse it for the pair); else the push (no handshake) up to
 * WHARF_SHM_PUSH_MAX; else rendezvous with the pipelined copy through the
 * slots.  A fourth pattern takes the message with MPI_Mprobe/MPI_Mrecv.  The tunables are read back through
 * MPI_T control variables, so the same program checks every variant and
 * forced setting.  Over the network channel only the data is checked.
 * Two ranks. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include <sched.h>

#include "p2p_check.h"

static const size_t sizes[] = {1,     4096,  8191,  8192,  8193,  12288, 16383, 16384, 16385,
                               24576, 32767, 32768, 32769, 65536, 65537, 131072, 262147};
#define NS (sizeof sizes / sizeof sizes[0])
#define MAXN 262147

static unsigned long cvar(const char *name)
{
    int idx, count;
    MPI_T_cvar_handle h;
    MPI_Datatype dt;
    CHECK(MPI_T_cvar_get_index(name, &idx) == MPI_SUCCESS, "no control variable %s", name);
    CHECK(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, &dt, NULL, NULL, NULL, NULL, NULL) == MPI_SUCCESS, "%s", name);
    CHECK(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) == MPI_SUCCESS && count == 1, "%s handle", name);
    unsigned long v = 0;
    if (dt == MPI_INT) {
        int i = 0;
        CHECK(MPI_T_cvar_read(h, &i) == MPI_SUCCESS, "%s", name);
        v = (unsigned long)i;
    } else {
        CHECK(dt == MPI_UNSIGNED_LONG, "%s: unexpected type", name);
        CHECK(MPI_T_cvar_read(h, &v) == MPI_SUCCESS, "%s", name);
    }
    MPI_T_cvar_handle_free(&h);
    return v;
}

enum { PV_EAGER, PV_CMA, PV_COPY, PV_PUSH, PV_N };
static const char *const pv_names[PV_N] = {"wharf_shm_eager_msgs", "wharf_shm_single_copy_msgs", "wharf_shm_rndv_msgs",
                                           "wharf_shm_push_msgs"};
static MPI_T_pvar_session ses;
static MPI_T_pvar_handle pvh[PV_N];

static void counters(unsigned long long v[PV_N])
{
    for (int i = 0; i < PV_N; i++)
        CHECK(MPI_T_pvar_read(ses, pvh[i], &v[i]) == MPI_SUCCESS, "read %s", pv_names[i]);
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 131u + seed * 7u + (i >> 9));
}

static void verify(const unsigned char *b, size_t n, unsigned seed, const MPI_Status *st)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    CHECK(cnt == (int)n, "received %d bytes, expected %zu", cnt, n);
    for (size_t i = 0; i < n; i++)
        CHECK(b[i] == (unsigned char)(i * 131u + seed * 7u + (i >> 9)), "byte %zu of %zu: %u", i, n, b[i]);
    CHECK(b[n] == 0xee, "byte past the message (%zu) overwritten", n);
}

int main(int argc, char **argv)
{
    int prov;
    p2p_init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &prov);
    CHECK(p2p_size >= 2, "needs 2 ranks");
    unsigned long eager = cvar("WHARF_SHM_EAGER_MAX"), slot = cvar("WHARF_SHM_SLOT_SIZE");
    unsigned long cma = cvar("WHARF_CMA"), cma_min = cvar("WHARF_CMA_MIN"), push = cvar("WHARF_SHM_PUSH_MAX");
    if (slot < eager)
        eager = slot;
    /* a pair CMA serves skips eager above WHARF_CMA_MIN where the node runs
     * no more ranks than cpus (every rank of this test is co-resident) */
    cpu_set_t cs;
    int ncpu = sched_getaffinity(0, sizeof cs, &cs) == 0 ? CPU_COUNT(&cs) : 1;
    int cut = cma && p2p_size <= ncpu && cma_min < eager;
    CHECK(MPI_T_pvar_session_create(&ses) == MPI_SUCCESS, "pvar session");
    for (int i = 0; i < PV_N; i++) {
        int idx, count;
        CHECK(MPI_T_pvar_get_index(pv_names[i], MPI_T_PVAR_CLASS_COUNTER, &idx) == MPI_SUCCESS, "no %s", pv_names[i]);
        CHECK(MPI_T_pvar_handle_alloc(ses, idx, NULL, &pvh[i], &count) == MPI_SUCCESS, "%s", pv_names[i]);
    }
    unsigned char *sbuf = malloc(MAXN + 1), *rbuf = malloc(MAXN + 1);
    CHECK(sbuf && rbuf, "out of memory");
    int peer = p2p_rank ^ 1, active = peer < p2p_size;
    if (!active)
        peer = MPI_PROC_NULL;

    /* is the pair on the shared-memory channel? (an 8-byte message counts as shm eager) */
    unsigned long long a[PV_N], b[PV_N];
    counters(a);
    MPI_OK(MPI_Sendrecv(sbuf, 8, MPI_BYTE, peer, 1, rbuf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    counters(b);
    int shm = active && b[PV_EAGER] - a[PV_EAGER] == 1;

    for (size_t k = 0; k < NS && active; k++) {
        size_t n = sizes[k];
        for (int pat = 0; pat < 4; pat++) {
            static const char *const pname[] = {"ping-pong", "sendrecv", "unexpected", "mprobe"};
            p2p_setstep("%s, %zu bytes (eager max %lu, CMA %lu from %lu, push max %lu)", pname[pat], n, eager, cma,
                        cma_min, push);
            unsigned seed = (unsigned)(k * 3 + (unsigned)pat);
            MPI_Status st;
            fill(sbuf, n, seed);
            memset(rbuf, 0, n);
            rbuf[n] = 0xee;
            counters(a);
            if (pat == 0) {
                if (p2p_rank & 1) {
                    MPI_OK(MPI_Recv(rbuf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &st));
                    MPI_OK(MPI_Send(sbuf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD));
                } else {
                    MPI_OK(MPI_Send(sbuf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD));
                    MPI_OK(MPI_Recv(rbuf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &st));
                }
            } else if (pat == 1) {
                MPI_OK(MPI_Sendrecv(sbuf, (int)n, MPI_BYTE, peer, 3, rbuf, (int)n, MPI_BYTE, peer, 3, MPI_COMM_WORLD,
                                    &st));
            } else if (pat == 2) { /* both send first, then receive: the messages wait unexpected */
                MPI_Request r;
                MPI_OK(MPI_Isend(sbuf, (int)n, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &r));
                int flag = 0;
                for (int i = 0; i < 1000 && !flag; i++) /* let it arrive before the receive is posted */
                    MPI_OK(MPI_Iprobe(peer, 4, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
                MPI_OK(MPI_Recv(rbuf, (int)n, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &st));
                MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            } else { /* matched by MPI_Mprobe as soon as its header is in, received later */
                MPI_Request r;
                MPI_Message m;
                MPI_Status pst;
                MPI_OK(MPI_Isend(sbuf, (int)n, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &r));
                MPI_OK(MPI_Mprobe(peer, 5, MPI_COMM_WORLD, &m, &pst));
                int cnt = -1;
                MPI_Get_count(&pst, MPI_BYTE, &cnt);
                CHECK(cnt == (int)n, "probed %d bytes, expected %zu", cnt, n);
                MPI_OK(MPI_Mrecv(rbuf, (int)n, MPI_BYTE, &m, &st));
                MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            }
            counters(b);
            verify(rbuf, n, seed, &st);
            if (!shm)
                continue;
            /* this rank sent one message of n bytes (counted here if eager) and
             * received one (a rendezvous is counted by its receiver) */
            unsigned long long de = b[PV_EAGER] - a[PV_EAGER], dc = b[PV_CMA] - a[PV_CMA],
                               dp = b[PV_COPY] - a[PV_COPY], du = b[PV_PUSH] - a[PV_PUSH];
            const char *want = n <= eager && !(cut && n > cma_min) ? "eager"
                               : n <= eager                         ? "single copy where the pair has CMA, else eager"
                               : cma && n >= cma_min                ? "single copy"
                               : n <= push                          ? "push"
                                                                    : "pipelined copy";
            int ok;
            if (n <= eager && !(cut && n > cma_min))
                ok = de == 1 && dc + dp + du == 0;
            else if (n <= eager) /* above WHARF_CMA_MIN on a node that is not oversubscribed */
                ok = (de == 1 && dc + dp + du == 0) || (de == 0 && dc == 1 && dp + du == 0);
            else if (cma && n >= cma_min) /* the probe may have refused CMA for the pair: then as without */
                ok = de == 0 && (dc == 1 ? dp + du == 0 : n <= push ? du == 1 && dp == 0 : dp == 1 && du == 0);
            else if (n <= push)
                ok = de + dc + dp == 0 && du == 1;
            else
                ok = de + dc + du == 0 && dp == 1;
            CHECK(ok, "eager %llu, single copy %llu, push %llu, pipelined %llu: expected %s", de, dc, du, dp, want);
        }
    }
    MPI_T_pvar_session_free(&ses);
    free(sbuf);
    free(rbuf);
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
