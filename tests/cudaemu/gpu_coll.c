/* Collectives, reductions and the datatype engine on CUDA device buffers
 * (the emulated driver: device memory the CPU cannot touch, streams with
 * random delays): blocking, nonblocking and persistent forms, device and
 * host buffers mixed, MPI_IN_PLACE, derived types whose holes must stay
 * untouched, MPI_Pack/Unpack, MPI_Bsend, MPI_Sendrecv_replace and
 * MPI_Reduce_local.  Every result is copied back from the device and
 * compared with values computed here. */
#include "gpu_common.h"

static int val(int r, int i, int seed)
{
    return r * 100003 + i * 7 + seed;
}

/* n ints val(r, i, seed) */
static int *mk(int r, size_t n, int seed)
{
    int *h = malloc((n ? n : 1) * sizeof(int));
    for (size_t i = 0; i < n; i++)
        h[i] = val(r, (int)i, seed);
    return h;
}

static void t_bcast(size_t n)
{
    for (int root = 0; root < nprocs; root += nprocs - 1 ? nprocs - 1 : 1) {
        int *h = mk(root, n, 1);
        void *d = rank == root ? dev_from(h, n * sizeof(int)) : dev_from(NULL, n * sizeof(int));
        MPI_Bcast(d, (int)n, MPI_INT, root, MPI_COMM_WORLD);
        check_ints(d, h, n, "bcast");
        /* nonblocking */
        int *h2 = mk(root, n, 2);
        if (rank == root)
            dev_put(d, h2, n * sizeof(int));
        MPI_Request q;
        MPI_Ibcast(d, (int)n, MPI_INT, root, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        check_ints(d, h2, n, "ibcast");
        /* persistent: started twice, the root's data changes in between */
        MPI_Bcast_init(d, (int)n, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
        for (int rep = 0; rep < 2; rep++) {
            int *h3 = mk(root, n, 10 + rep);
            if (rank == root)
                dev_put(d, h3, n * sizeof(int));
            MPI_Start(&q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            check_ints(d, h3, n, "bcast_init");
            free(h3);
        }
        MPI_Request_free(&q);
        dev_free(d);
        free(h);
        free(h2);
        if (nprocs == 1)
            break;
    }
}

/* expected sum over ranks of val(r, i, seed) */
static int *sum(size_t n, int seed, int upto)
{
    int *w = calloc(n ? n : 1, sizeof(int));
    for (int r = 0; r < upto; r++)
        for (size_t i = 0; i < n; i++)
            w[i] += val(r, (int)i, seed);
    return w;
}

static void t_reduce(size_t n)
{
    size_t b = n * sizeof(int);
    int *h = mk(rank, n, 3), *want = sum(n, 3, nprocs);
    /* device -> device, host -> device, device -> host */
    for (int mode = 0; mode < 3; mode++) {
        void *s = mode == 1 ? (void *)h : dev_from(h, b);
        int *hr = calloc(n ? n : 1, sizeof(int));
        void *r = mode == 2 ? (void *)hr : dev_from(NULL, b);
        MPI_Allreduce(s, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (mode == 2)
            CHECK(!memcmp(hr, want, b));
        else
            check_ints(r, want, n, "allreduce");
        if (mode != 1)
            dev_free(s);
        if (mode != 2)
            dev_free(r);
        free(hr);
    }
    /* in place, nonblocking, persistent */
    void *d = dev_from(h, b);
    MPI_Allreduce(MPI_IN_PLACE, d, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check_ints(d, want, n, "allreduce in place");
    void *s = dev_from(h, b);
    MPI_Request q;
    MPI_Iallreduce(s, d, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    check_ints(d, want, n, "iallreduce");
    MPI_Allreduce_init(s, d, (int)n, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
    for (int rep = 0; rep < 2; rep++) {
        int *h2 = mk(rank, n, 20 + rep), *w2 = mk(nprocs - 1, n, 20 + rep);
        dev_put(s, h2, b);
        MPI_Start(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        check_ints(d, w2, n, "allreduce_init max");
        free(h2);
        free(w2);
    }
    MPI_Request_free(&q);
    /* reduce to the last rank, in place at the root */
    int root = nprocs - 1;
    void *r = dev_from(NULL, b);
    MPI_Reduce(s == NULL ? NULL : (rank == root ? MPI_IN_PLACE : s), rank == root ? s : r, (int)n, MPI_INT, MPI_SUM,
               root, MPI_COMM_WORLD);
    if (rank == root) {
        int *w3 = sum(n, 21, nprocs);
        check_ints(s, w3, n, "reduce in place");
        free(w3);
    }
    /* scan */
    dev_put(s, h, b);
    MPI_Scan(s, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int *ws = sum(n, 3, rank + 1);
    check_ints(r, ws, n, "scan");
    free(ws);
    /* reduce-scatter-block: every rank gets n/nprocs of the sums */
    size_t per = n / (size_t)nprocs;
    if (per) {
        void *rr = dev_from(NULL, per * sizeof(int));
        MPI_Reduce_scatter_block(s, rr, (int)per, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        check_ints(rr, want + per * (size_t)rank, per, "reduce_scatter_block");
        dev_free(rr);
    }
    dev_free(s);
    dev_free(d);
    dev_free(r);
    free(h);
    free(want);
}

static void t_move(size_t n)
{
    size_t b = n * sizeof(int), all = b * (size_t)nprocs;
    int *h = mk(rank, n, 5);
    int *want = malloc(all ? all : 1);
    for (int r = 0; r < nprocs; r++)
        for (size_t i = 0; i < n; i++)
            want[(size_t)r * n + i] = val(r, (int)i, 5);
    void *s = dev_from(h, b), *r = dev_from(NULL, all);
    MPI_Allgather(s, (int)n, MPI_INT, r, (int)n, MPI_INT, MPI_COMM_WORLD);
    check_ints(r, want, n * (size_t)nprocs, "allgather");
    /* in place: my block is already in the receive buffer */
    void *r2 = dev_from(NULL, all);
    dev_put((char *)r2 + (size_t)rank * b, h, b);
    MPI_Request q;
    MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r2, (int)n, MPI_INT, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    check_ints(r2, want, n * (size_t)nprocs, "iallgather in place");
    /* gather to 0, scatter back from 0 */
    void *g = dev_from(NULL, all);
    MPI_Gather(s, (int)n, MPI_INT, g, (int)n, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        check_ints(g, want, n * (size_t)nprocs, "gather");
    void *sc = dev_from(NULL, b);
    MPI_Scatter(g, (int)n, MPI_INT, sc, (int)n, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0 || 1)
        check_ints(sc, h, n, "scatter");
    /* alltoall: block j of rank r is val(r, j*n + i) */
    int *ha = mk(rank, n * (size_t)nprocs, 6), *wa = malloc(all ? all : 1);
    for (int r0 = 0; r0 < nprocs; r0++)
        for (size_t i = 0; i < n; i++)
            wa[(size_t)r0 * n + i] = val(r0, (int)((size_t)rank * n + i), 6);
    void *sa = dev_from(ha, all), *ra = dev_from(NULL, all);
    MPI_Alltoall(sa, (int)n, MPI_INT, ra, (int)n, MPI_INT, MPI_COMM_WORLD);
    check_ints(ra, wa, n * (size_t)nprocs, "alltoall");
    /* alltoallv with the same layout, persistent */
    int *cnt = malloc(sizeof(int) * (size_t)nprocs), *dsp = malloc(sizeof(int) * (size_t)nprocs);
    for (int i = 0; i < nprocs; i++) {
        cnt[i] = (int)n;
        dsp[i] = i * (int)n;
    }
    void *rv = dev_from(NULL, all);
    MPI_Alltoallv_init(sa, cnt, dsp, MPI_INT, rv, cnt, dsp, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
    MPI_Start(&q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    check_ints(rv, wa, n * (size_t)nprocs, "alltoallv_init");
    MPI_Request_free(&q);
    free(cnt);
    free(dsp);
    dev_free(s);
    dev_free(r);
    dev_free(r2);
    dev_free(g);
    dev_free(sc);
    dev_free(sa);
    dev_free(ra);
    dev_free(rv);
    free(h);
    free(ha);
    free(wa);
    free(want);
}

/* a vector type on device memory: the gaps must stay as they were */
static void t_dtype(void)
{
    enum { CNT = 3000 };
    MPI_Datatype vec;
    MPI_Type_vector(CNT, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *full = malloc(2 * CNT * sizeof(int));
    for (int i = 0; i < 2 * CNT; i++)
        full[i] = i % 2 ? -1 : 0;
    void *d = dev_from(full, 2 * CNT * sizeof(int));
    int *src = mk(0, CNT, 7);
    void *ds = dev_from(src, CNT * sizeof(int));
    /* rank 0's contiguous ints broadcast into everyone's strided layout */
    MPI_Bcast(rank == 0 ? ds : d, rank == 0 ? CNT : 1, rank == 0 ? MPI_INT : vec, 0, MPI_COMM_WORLD);
    if (rank) {
        for (int i = 0; i < CNT; i++)
            full[2 * i] = src[i];
        check_ints(d, full, 2 * CNT, "bcast into a vector type");
    }
    /* MPI_Pack from the strided device layout into host and device buffers */
    int *want = malloc(CNT * sizeof(int));
    for (int i = 0; i < CNT; i++) {
        full[2 * i] = val(rank, i, 8);
        want[i] = full[2 * i];
    }
    dev_put(d, full, 2 * CNT * sizeof(int));
    int psz = 0, pos = 0;
    MPI_Pack_size(1, vec, MPI_COMM_WORLD, &psz);
    char *hp = malloc((size_t)psz);
    MPI_Pack(d, 1, vec, hp, psz, &pos, MPI_COMM_WORLD);
    CHECK(pos == CNT * (int)sizeof(int));
    CHECK(!memcmp(hp, want, CNT * sizeof(int)));
    void *dp = dev_from(NULL, (size_t)psz);
    pos = 0;
    MPI_Pack(d, 1, vec, dp, psz, &pos, MPI_COMM_WORLD);
    check_ints(dp, want, CNT, "pack into device memory");
    /* unpack device -> device strided: odd slots keep -1 */
    void *d2 = dev_from(NULL, 2 * CNT * sizeof(int));
    int *fill = malloc(2 * CNT * sizeof(int));
    for (int i = 0; i < 2 * CNT; i++)
        fill[i] = -1;
    dev_put(d2, fill, 2 * CNT * sizeof(int));
    pos = 0;
    MPI_Unpack(dp, psz, &pos, d2, 1, vec, MPI_COMM_WORLD);
    check_ints(d2, full, 2 * CNT, "unpack into a device vector");
    /* MPI_Sendrecv_replace on the strided device layout, around a ring */
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    MPI_Sendrecv_replace(d2, 1, vec, right, 3, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < CNT; i++)
        full[2 * i] = val(left, i, 8);
    check_ints(d2, full, 2 * CNT, "sendrecv_replace");
    /* MPI_Bsend of device data */
    int bsz = psz + MPI_BSEND_OVERHEAD;
    char *att = malloc((size_t)bsz);
    MPI_Buffer_attach(att, bsz);
    MPI_Bsend(d, 1, vec, right, 4, MPI_COMM_WORLD);
    void *rb = dev_from(NULL, CNT * sizeof(int));
    MPI_Recv(rb, CNT, MPI_INT, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int *wl = malloc(CNT * sizeof(int));
    for (int i = 0; i < CNT; i++)
        wl[i] = val(left, i, 8);
    check_ints(rb, wl, CNT, "bsend");
    void *det;
    MPI_Buffer_detach(&det, &bsz);
    /* MPI_Reduce_local on device memory */
    void *a = dev_from(want, CNT * sizeof(int)), *acc = dev_from(want, CNT * sizeof(int));
    MPI_Reduce_local(a, acc, CNT, MPI_INT, MPI_SUM);
    for (int i = 0; i < CNT; i++)
        wl[i] = 2 * want[i];
    check_ints(acc, wl, CNT, "reduce_local");
    dev_free(a);
    dev_free(acc);
    dev_free(rb);
    dev_free(d);
    dev_free(d2);
    dev_free(ds);
    dev_free(dp);
    free(att);
    free(full);
    free(fill);
    free(src);
    free(want);
    free(wl);
    free(hp);
    MPI_Type_free(&vec);
}

int main(int argc, char **argv)
{
    gpu_init(&argc, &argv);
    const size_t sizes[] = {1, 1000, 70000};
    for (int k = 0; k < 3; k++) {
        t_bcast(sizes[k]);
        t_reduce(sizes[k]);
        t_move(sizes[k]);
    }
    t_dtype();
    return gpu_finish("gpu coll");
}
