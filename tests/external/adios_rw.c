/* tests/external/adios.py: ADIOS 1.x (Debian libadios-mpich-dev) write-then-read check.
 * adios_rw METHOD PARAMS FILE NSTEPS: every rank writes its rows of a 2-D global array (ROWS x NX
 * per rank, NX=1000) of doubles, a 1-D int array of uneven blocks, scalars and attributes, for
 * NSTEPS steps ("w" then "a"), with ADIOS write method METHOD (POSIX, MPI, MPI_AGGREGATE...); then
 * all ranks read it back with the BP read method (another rank's block, a box across two blocks, the
 * whole int array, every step) and check every value.  Prints "adtest METHOD ... passed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include "mpi.h"
#include "adios.h"
#include "adios_read.h"

#define NX 1000
#define ROWS 37
static double val(int step, uint64_t r, uint64_t c) { return step * 1e6 + r * 1e3 + c * 0.5; }

int main(int argc, char **argv)
{
    int rank, size, i, j, step, bad = 0;
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (argc < 5) { if (!rank) fprintf(stderr, "usage: adtest METHOD PARAMS FILE NSTEPS\n"); MPI_Abort(comm, 2); }
    const char *method = argv[1], *params = argv[2], *fname = argv[3];
    int nsteps = atoi(argv[4]);
    int rows = ROWS, nx = NX, grows = ROWS * size, off = ROWS * rank, ilen = 10 + rank, ioff = 0;
    int gi = 0; for (i = 0; i < size; i++) gi += 10 + i;
    for (i = 0; i < rank; i++) ioff += 10 + i;
    double *t = malloc(sizeof(double) * ROWS * NX);
    int *iv = malloc(sizeof(int) * ilen);

    adios_init_noxml(comm);
    adios_set_max_buffer_size(20);
    int64_t g, fh;
    adios_declare_group(&g, "grp", "step", adios_stat_default);
    adios_select_method(g, method, params, "");
    adios_define_var(g, "rows", "", adios_integer, 0, 0, 0);
    adios_define_var(g, "nx", "", adios_integer, 0, 0, 0);
    adios_define_var(g, "grows", "", adios_integer, 0, 0, 0);
    adios_define_var(g, "off", "", adios_integer, 0, 0, 0);
    adios_define_var(g, "ilen", "", adios_integer, 0, 0, 0);
    adios_define_var(g, "gi", "", adios_integer, 0, 0, 0);
    adios_define_var(g, "ioff", "", adios_integer, 0, 0, 0);
    adios_define_var(g, "step", "", adios_integer, 0, 0, 0);
    adios_define_var(g, "T", "", adios_double, "rows,nx", "grows,nx", "off,0");
    adios_define_var(g, "I", "", adios_integer, "ilen", "gi", "ioff");
    adios_define_attribute(g, "T/description", "", adios_string, "wharf adios check", "");
    adios_define_attribute(g, "nranks", "", adios_integer, argv[4], "");

    double t0 = MPI_Wtime();
    for (step = 0; step < nsteps; step++) {
        for (i = 0; i < ROWS; i++)
            for (j = 0; j < NX; j++) t[i * NX + j] = val(step, off + i, j);
        for (i = 0; i < ilen; i++) iv[i] = step * 100000 + rank * 1000 + i;
        uint64_t gsz = 8 * 4 + 8.0 * ROWS * NX + 4 * ilen, tot;
        adios_open(&fh, "grp", fname, step ? "a" : "w", comm);
        adios_group_size(fh, gsz, &tot);
        adios_write(fh, "rows", &rows); adios_write(fh, "nx", &nx); adios_write(fh, "grows", &grows);
        adios_write(fh, "off", &off); adios_write(fh, "ilen", &ilen); adios_write(fh, "gi", &gi);
        adios_write(fh, "ioff", &ioff); adios_write(fh, "step", &step);
        adios_write(fh, "T", t); adios_write(fh, "I", iv);
        adios_close(fh);
    }
    MPI_Barrier(comm);
    adios_finalize(rank);
    double tw = MPI_Wtime() - t0;

    /* read back in parallel */
    adios_read_init_method(ADIOS_READ_METHOD_BP, comm, "verbose=2");
    ADIOS_FILE *f = adios_read_open_file(fname, ADIOS_READ_METHOD_BP, comm);
    if (!f) { printf("rank %d: open failed: %s\n", rank, adios_errmsg()); MPI_Abort(comm, 3); }
    ADIOS_VARINFO *v = adios_inq_var(f, "T");
    if (!v || v->ndim != 2 || v->dims[0] != (uint64_t)grows || v->dims[1] != NX || v->nsteps != nsteps) {
        printf("rank %d: bad varinfo for T\n", rank); bad++;
    }
    int peer = (rank + 1) % size;
    double *buf = malloc(sizeof(double) * ROWS * NX);
    for (step = 0; step < nsteps; step++) {
        uint64_t st[2] = {(uint64_t)peer * ROWS, 0}, ct[2] = {ROWS, NX};
        ADIOS_SELECTION *s = adios_selection_boundingbox(2, st, ct);
        adios_schedule_read(f, s, "T", step, 1, buf);
        adios_perform_reads(f, 1);
        for (i = 0; i < ROWS; i++) for (j = 0; j < NX; j++)
            if (buf[i * NX + j] != val(step, st[0] + i, j)) { if (bad < 5) printf("rank %d: T step %d [%d,%d] = %g\n", rank, step, (int)st[0] + i, j, buf[i * NX + j]); bad++; }
        adios_selection_delete(s);
        /* a box straddling two ranks' blocks, a column range */
        uint64_t st2[2] = {(uint64_t)(rank * ROWS + ROWS / 2) % (grows - ROWS + 1), 100}, ct2[2] = {ROWS, 300};
        s = adios_selection_boundingbox(2, st2, ct2);
        adios_schedule_read(f, s, "T", step, 1, buf);
        adios_perform_reads(f, 1);
        for (i = 0; i < ROWS; i++) for (j = 0; j < 300; j++)
            if (buf[i * 300 + j] != val(step, st2[0] + i, st2[1] + j)) { if (bad < 5) printf("rank %d: box step %d\n", rank, step); bad++; }
        adios_selection_delete(s);
        /* the whole int array */
        int *ib = malloc(sizeof(int) * gi);
        uint64_t s1 = 0, c1 = gi;
        s = adios_selection_boundingbox(1, &s1, &c1);
        adios_schedule_read(f, s, "I", step, 1, ib);
        adios_perform_reads(f, 1);
        int k = 0;
        for (int r = 0; r < size; r++) for (i = 0; i < 10 + r; i++, k++)
            if (ib[k] != step * 100000 + r * 1000 + i) { if (bad < 5) printf("rank %d: I step %d [%d]=%d\n", rank, step, k, ib[k]); bad++; }
        free(ib);
        adios_selection_delete(s);
    }
    adios_free_varinfo(v);
    adios_read_close(f);
    adios_read_finalize_method(ADIOS_READ_METHOD_BP);
    int tbad = 0;
    MPI_Allreduce(&bad, &tbad, 1, MPI_INT, MPI_SUM, comm);
    if (!rank) printf("adtest %s on %d ranks, %d steps: %s (%d bad values), write %.3f s\n", method, size, nsteps, tbad ? "FAILED" : "passed", tbad, tw);
    free(t); free(iv); free(buf);
    MPI_Finalize();
    return tbad != 0;
}
