/* libfabric is loaded only when the network channel is opened (src/util/fabdl.c,
 * docs/NET.md "Loading libfabric"): after MPI_Init, a message to each neighbour,
 * MPI_Get_library_version and a barrier, every rank checks whether libfabric is
 * mapped into it.  argv[1]: "no" (every peer shares memory: it must not be), "yes"
 * (some peer is reached over the network: it must be), "auto" (yes when
 * WHARF_CHANNEL=net forces the network channel, else no). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mapped(const char *what)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int hit = 0;
    if (!f)
        return -1;
    while (!hit && fgets(line, sizeof line, f))
        hit = strstr(line, what) != NULL;
    fclose(f);
    return hit;
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0, len;
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "auto", *chan = getenv("WHARF_CHANNEL");
    int want = !strcmp(mode, "yes") || (!strcmp(mode, "auto") && chan && !strcmp(chan, "net"));
    int right = (rank + 1) % size, left = (rank + size - 1) % size, in = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 0, &in, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (in != left) {
        printf("rank %d: received %d from rank %d\n", rank, in, left);
        errs++;
    }
    MPI_Get_library_version(ver, &len);
    if (!strstr(ver, "libfabric")) {
        printf("rank %d: library version \"%s\" names no libfabric version\n", rank, ver);
        errs++;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int have = mapped("libfabric.so");
    if (have != want) {
        printf("rank %d: libfabric %s, expected %s (%s)\n", rank, have < 0 ? "unknown" : have ? "loaded" : "not loaded",
               want ? "loaded" : "not loaded", ver);
        errs++;
    }
    int all = 0;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "fabric_lazy: %d errors\n" : "fabric_lazy: ok (%d)\n", all ? all : want);
    MPI_Finalize();
    return all != 0;
}
