/* Dynamic processes within a job: ports, MPI_Comm_accept/connect between the
 * two halves of MPI_COMM_WORLD and between single processes, the name
 * service, MPI_Comm_join over a loopback TCP socket, MPI_Comm_disconnect,
 * and the errors (closed or foreign ports, unknown names, spawning a missing
 * program; tests/mpi/spawn.c spawns for real). */
#include "p2p_check.h"
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static int rank, size;

static void errors(void)
{
    p2p_setstep("errors");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    char port[MPI_MAX_PORT_NAME], got[MPI_MAX_PORT_NAME];
    MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
    CHECK(!strncmp(port, "wharf-port:", 11), "port name %s", port);
    MPI_OK(MPI_Close_port(port));
    MPI_FAILS(MPI_ERR_PORT, MPI_Close_port(port));
    MPI_FAILS(MPI_ERR_PORT, MPI_Close_port("tcp://10.0.0.1:5000"));
    MPI_Comm ic;
    MPI_FAILS(MPI_ERR_PORT, MPI_Comm_connect("wharf-port:otherjob:0:0", MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
    MPI_FAILS(MPI_ERR_PORT, MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic)); /* closed */
    /* names: per-rank service so ranks do not collide */
    char svc[64];
    snprintf(svc, sizeof svc, "wharf test service %d", rank);
    MPI_FAILS(MPI_ERR_NAME, MPI_Lookup_name(svc, MPI_INFO_NULL, got));
    MPI_OK(MPI_Publish_name(svc, MPI_INFO_NULL, "some port"));
    MPI_FAILS(MPI_ERR_SERVICE, MPI_Publish_name(svc, MPI_INFO_NULL, "other port"));
    MPI_OK(MPI_Lookup_name(svc, MPI_INFO_NULL, got));
    CHECK(!strcmp(got, "some port"), "looked up '%s'", got);
    MPI_OK(MPI_Unpublish_name(svc, MPI_INFO_NULL, "some port"));
    MPI_FAILS(MPI_ERR_SERVICE, MPI_Unpublish_name(svc, MPI_INFO_NULL, "some port"));
    MPI_FAILS(MPI_ERR_NAME, MPI_Lookup_name(svc, MPI_INFO_NULL, got));
    /* spawning a program that does not exist is refused, with every error code set */
    int codes[3] = {0, 0, 0};
    char *argv[] = {NULL};
    MPI_FAILS(MPI_ERR_SPAWN, MPI_Comm_spawn("/nonexistent/wharf-no-such-program", argv, 3, MPI_INFO_NULL, 0,
                                            MPI_COMM_SELF, &ic, codes));
    CHECK(codes[0] == MPI_ERR_SPAWN && codes[2] == MPI_ERR_SPAWN && ic == MPI_COMM_NULL, "spawn codes %d %d",
          codes[0], codes[2]);
    MPI_Comm null = MPI_COMM_NULL, w = MPI_COMM_WORLD;
    MPI_FAILS(MPI_ERR_COMM, MPI_Comm_disconnect(&null));
    MPI_FAILS(MPI_ERR_COMM, MPI_Comm_disconnect(&w));
    MPI_Comm parent;
    MPI_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "a parent without spawning");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

/* the halves of the world: low ranks accept, high ranks connect (found through the name service) */
static void halves(void)
{
    p2p_setstep("accept/connect between halves");
    int low = rank < size / 2;
    MPI_Comm half, ic;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half));
    char port[MPI_MAX_PORT_NAME] = "";
    if (low && rank == 0) {
        MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
        MPI_OK(MPI_Publish_name("wharf-halves", MPI_INFO_NULL, port));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (low) {
        MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &ic));
    } else {
        char found[MPI_MAX_PORT_NAME] = "";
        int hr;
        MPI_Comm_rank(half, &hr);
        if (hr == 0)
            MPI_OK(MPI_Lookup_name("wharf-halves", MPI_INFO_NULL, found));
        MPI_OK(MPI_Comm_connect(found, MPI_INFO_NULL, 0, half, &ic));
    }
    int flag, rsize, lsize;
    MPI_OK(MPI_Comm_test_inter(ic, &flag));
    MPI_OK(MPI_Comm_remote_size(ic, &rsize));
    MPI_OK(MPI_Comm_size(ic, &lsize));
    int nlow = size / 2;
    CHECK(flag && lsize == (low ? nlow : size - nlow) && rsize == (low ? size - nlow : nlow),
          "intercomm inter=%d size=%d remote=%d", flag, lsize, rsize);
    /* traffic: an allreduce over the intercommunicator sums the other group */
    int v = rank, sum = -1, want = 0;
    MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, ic));
    for (int r = 0; r < size; r++)
        if ((r < nlow) != low)
            want += r;
    CHECK(sum == want, "intercomm allreduce %d, want %d", sum, want);
    MPI_Comm merged;
    MPI_OK(MPI_Intercomm_merge(ic, !low, &merged));
    int mr;
    MPI_Comm_rank(merged, &mr);
    CHECK(mr == rank, "merged rank %d, world rank %d", mr, rank);
    MPI_OK(MPI_Comm_free(&merged));
    MPI_OK(MPI_Comm_disconnect(&ic));
    CHECK(ic == MPI_COMM_NULL, "disconnect left the handle");
    if (low && rank == 0) {
        MPI_OK(MPI_Unpublish_name("wharf-halves", MPI_INFO_NULL, port));
        MPI_OK(MPI_Close_port(port));
    }
    MPI_OK(MPI_Comm_free(&half));
}

/* rank 0 accepts every other rank in turn on one port (COMM_SELF on both sides) */
static void one_by_one(void)
{
    p2p_setstep("accept/connect one by one");
    char port[MPI_MAX_PORT_NAME] = "";
    if (rank == 0)
        MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
    MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    for (int r = 1; r < size; r++) {
        MPI_Comm ic;
        if (rank == 0) {
            MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
            int who = -1;
            MPI_OK(MPI_Recv(&who, 1, MPI_INT, 0, 5, ic, MPI_STATUS_IGNORE));
            CHECK(who >= 1 && who < size, "connected by %d", who);
            MPI_OK(MPI_Send(&who, 1, MPI_INT, 0, 6, ic));
            MPI_OK(MPI_Comm_disconnect(&ic));
        } else if (rank == r) {
            MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
            int back = -1;
            MPI_OK(MPI_Send(&rank, 1, MPI_INT, 0, 5, ic));
            MPI_OK(MPI_Recv(&back, 1, MPI_INT, 0, 6, ic, MPI_STATUS_IGNORE));
            CHECK(back == rank, "echo %d", back);
            MPI_OK(MPI_Comm_disconnect(&ic));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0)
        MPI_OK(MPI_Close_port(port));
}

/* MPI_Comm_connect to a port nobody accepts on fails with MPI_ERR_PORT once
 * its timeout (info "timeout", seconds) runs out; then the same port still
 * works for a real accept/connect (the timed-out request was withdrawn and
 * does not pair with the later accept) */
static void connect_timeout(void)
{
    p2p_setstep("connect timeout");
    char port[MPI_MAX_PORT_NAME] = "";
    if (rank == 0)
        MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
    MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Comm ic = MPI_COMM_SELF;
    if (rank == 1) {
        MPI_Info info;
        MPI_OK(MPI_Info_create(&info));
        MPI_OK(MPI_Info_set(info, "timeout", "1"));
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
        double t0 = MPI_Wtime();
        MPI_FAILS(MPI_ERR_PORT, MPI_Comm_connect(port, info, 0, MPI_COMM_SELF, &ic));
        double dt = MPI_Wtime() - t0;
        CHECK(dt >= 0.9 && dt < 30, "the 1 s timeout took %.2f s", dt);
        MPI_OK(MPI_Info_free(&info));
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
        int v = -1;
        MPI_OK(MPI_Recv(&v, 1, MPI_INT, 0, 7, ic, MPI_STATUS_IGNORE));
        CHECK(v == 77, "after the timeout, received %d", v);
        MPI_OK(MPI_Comm_disconnect(&ic));
        MPI_OK(MPI_Close_port(port));
    } else if (rank == 1) {
        MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
        MPI_OK(MPI_Send(&(int){77}, 1, MPI_INT, 0, 7, ic));
        MPI_OK(MPI_Comm_disconnect(&ic));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ranks 0 and 1 join over a TCP connection: rank 0 listens on every address
 * and tells rank 1 its IPv4 addresses (loopback first; in container
 * scenarios the ranks have their own network namespaces and reach each other
 * only on the test's veth addresses) */
static void join(void)
{
    p2p_setstep("MPI_Comm_join");
    enum { NADDR = 8 };
    int fd = -1;
    unsigned addrs[NADDR + 1] = {0}; /* [0] = port, then addresses in network order */
    if (rank == 0) {
        int ls = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
        socklen_t al = sizeof a;
        CHECK(ls >= 0 && bind(ls, (struct sockaddr *)&a, sizeof a) == 0 && listen(ls, 1) == 0 &&
                  getsockname(ls, (struct sockaddr *)&a, &al) == 0, "listen");
        addrs[0] = ntohs(a.sin_port);
        int k = 1;
        addrs[k++] = htonl(INADDR_LOOPBACK);
        struct ifaddrs *ifs = NULL;
        if (getifaddrs(&ifs) == 0)
            for (struct ifaddrs *i = ifs; i && k <= NADDR; i = i->ifa_next)
                if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
                    ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr != htonl(INADDR_LOOPBACK))
                    addrs[k++] = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
        freeifaddrs(ifs);
        MPI_Send(addrs, NADDR + 1, MPI_UNSIGNED, 1, 9, MPI_COMM_WORLD);
        fd = accept(ls, NULL, NULL);
        close(ls);
    } else if (rank == 1) {
        MPI_Recv(addrs, NADDR + 1, MPI_UNSIGNED, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int k = 1; k <= NADDR && addrs[k] && fd < 0; k++) {
            fd = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)addrs[0]),
                                    .sin_addr.s_addr = addrs[k]};
            if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
                close(fd);
                fd = -1;
            }
        }
        CHECK(fd >= 0, "no address of rank 0 reachable on port %u", addrs[0]);
    }
    if (rank <= 1) {
        CHECK(fd >= 0, "socket");
        MPI_Comm ic;
        MPI_OK(MPI_Comm_join(fd, &ic));
        int rsize = 0, other = -1;
        MPI_OK(MPI_Comm_remote_size(ic, &rsize));
        MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, 0, 1, &other, 1, MPI_INT, 0, 1, ic, MPI_STATUS_IGNORE));
        CHECK(rsize == 1 && other == 1 - rank, "joined: remote size %d, peer %d", rsize, other);
        MPI_OK(MPI_Comm_disconnect(&ic));
        close(fd);
    }
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    rank = p2p_rank, size = p2p_size;
    errors();
    if (size >= 2) {
        halves();
        one_by_one();
        connect_timeout();
        join();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("dynproc: %d ranks: ok\n", size);
    MPI_Finalize();
    return 0;
}
