/* Dynamic process management (MPI-4.1 chapter 11.8-11.10) among the
 * processes of one job: ports, MPI_Comm_accept/connect, MPI_Comm_join,
 * MPI_Comm_disconnect, and the name service (MPI_Publish/Lookup/Unpublish_name
 * through the launcher's PMI server).  wharfrun starts every process of a job
 * at launch: MPI_Comm_spawn(_multiple) fail with MPI_ERR_SPAWN, and a port of
 * another job is refused with MPI_ERR_PORT (docs/DYNAMIC.md).
 *
 * A port name is "wharf-port:JOB:WRANK:N": the job id (PMI kvsname), the
 * world rank of the process that opened it, and its serial number there.
 * The root of MPI_Comm_connect sends a request on the internal world
 * communicator's collective context with the port's request tag; the root of
 * MPI_Comm_accept receives it from any source, which names the connecting
 * root; then both groups build the intercommunicator as MPI_Intercomm_create
 * does, the roots as leaders over the world communicator with the port's
 * second tag.  Each root broadcasts its outcome first, so a bad port fails on
 * every rank instead of leaving the others waiting. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/coll.h"
#include "comm/comm.h"
#include "mpi/coll_nbc.h"
#include "mpi/reqapi.h"
#include "pmi/pmi.h"

/* internal tags on the world's collective context: request 2N, intercommunicator 2N+1 */
#define WH_TAG_PORT(n) (-(15 << 27) - (int)((unsigned)(n) & ((1u << 26) - 1)))

typedef struct port {
    struct port *next;
    unsigned n;
} port_t;

static port_t *open_ports;
static unsigned next_serial; /* ports and joins this process numbered */

static const char port_prefix[] = "wharf-port:";

static wh_comm_t *world(void)
{
    return wh_comm_get(MPI_COMM_WORLD);
}

/* Parse a port name: 0 and its rank/serial, else an MPI_ERR_PORT code. */
static int parse_port(const char *name, int *wrank, unsigned *n)
{
    const char *job = wh_pmi_kvsname();
    size_t pl = sizeof port_prefix - 1, jl = strlen(job);
    if (!name)
        return wh_error(MPI_ERR_PORT, "port_name is NULL");
    if (strnlen(name, MPI_MAX_PORT_NAME) >= MPI_MAX_PORT_NAME)
        return wh_error(MPI_ERR_PORT, "port_name is not a string of fewer than MPI_MAX_PORT_NAME (%d) characters",
                        MPI_MAX_PORT_NAME);
    if (strncmp(name, port_prefix, pl) != 0)
        return wh_error(MPI_ERR_PORT, "'%.64s' is not a port name from MPI_Open_port", name);
    const char *rest = name + pl, *colon = strchr(rest, ':');
    if (!colon || (size_t)(colon - rest) != jl || strncmp(rest, job, jl) != 0)
        return wh_error(MPI_ERR_PORT, "port '%.64s' belongs to another job: wharf connects processes of one job "
                        "(started together by wharfrun)", name);
    int r;
    unsigned s;
    char tail;
    if (sscanf(colon + 1, "%d:%u%c", &r, &s, &tail) != 2 || r < 0 || r >= wh_job.size)
        return wh_error(MPI_ERR_PORT, "port '%.64s' names no process of this job", name);
    *wrank = r;
    *n = s;
    return MPI_SUCCESS;
}

static port_t **find_port(unsigned n)
{
    port_t **pp = &open_ports;
    while (*pp && (*pp)->n != n)
        pp = &(*pp)->next;
    return pp;
}

static int body_Open_port(MPI_Info info, char *port_name)
{
    static const char fname[] = "MPI_Open_port";
    if (info != MPI_INFO_NULL && !wh_info_valid(info))
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_INFO, "info 0x%x is not a valid info object", (unsigned)info));
    WH_CHK_PTR(fname, NULL, port_name, "port_name");
    port_t *p = malloc(sizeof *p);
    if (!p)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_NO_MEM, "out of memory opening a port"));
    p->n = next_serial++;
    p->next = open_ports;
    open_ports = p;
    snprintf(port_name, MPI_MAX_PORT_NAME, "%s%s:%d:%u", port_prefix, wh_pmi_kvsname(), wh_job.rank, p->n);
    return MPI_SUCCESS;
}

static int body_Close_port(const char *port_name)
{
    static const char fname[] = "MPI_Close_port";
    int wrank;
    unsigned n;
    int rc = parse_port(port_name, &wrank, &n);
    if (rc == MPI_SUCCESS && (wrank != wh_job.rank || !*find_port(n)))
        rc = wh_error(MPI_ERR_PORT, "port '%.64s' is not open in this process", port_name);
    if (rc != MPI_SUCCESS)
        return wh_raise_comm(NULL, fname, rc);
    port_t **pp = find_port(n), *p = *pp;
    *pp = p->next;
    free(p);
    return MPI_SUCCESS;
}

/* checks every rank of an accept/connect makes */
static int chk_common(const char *fname, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm, wh_comm_t **cp)
{
    int rc = wh_chk_comm(fname, comm, cp);
    if (rc)
        return rc;
    wh_comm_t *c = *cp;
    if (c->is_inter)
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_COMM, "comm must be an intracommunicator"));
    if (root < 0 || root >= c->size)
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_ROOT, "root %d is out of range: the communicator has %d "
                                                "ranks (0..%d)", root, c->size, c->size - 1));
    if (c->rank == root && info != MPI_INFO_NULL && !wh_info_valid(info))
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_INFO, "info 0x%x is not a valid info object", (unsigned)info));
    WH_CHK_PTR(fname, c, newcomm, "newcomm");
    return MPI_SUCCESS;
}

/* The root's outcome reaches every rank (a broadcast of the error class),
 * then both groups build the intercommunicator. */
static int finish(const char *fname, wh_comm_t *c, int root, int rc, int peer, unsigned n, MPI_Comm *newcomm)
{
    int cls = MPI_SUCCESS;
    if (c->rank == root && rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    int brc = wh_bcast(&cls, 1, wh_dtype_get(MPI_INT), root, c);
    if (brc != MPI_SUCCESS)
        return wh_raise_comm(c, fname, brc);
    if (c->rank == root && rc != MPI_SUCCESS)
        return wh_raise_comm(c, fname, rc);
    if (cls != MPI_SUCCESS)
        return wh_raise_comm(c, fname, wh_error(cls, "the root (rank %d) failed; see its error", root));
    wh_comm_t *ic;
    rc = wh_intercomm_create(c, root, world(), peer, WH_TAG_PORT(2 * n + 1), &ic);
    if (rc != MPI_SUCCESS)
        return wh_raise_comm(c, fname, rc);
    *newcomm = ic->obj.handle;
    return MPI_SUCCESS;
}

static int body_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    static const char fname[] = "MPI_Comm_accept";
    wh_comm_t *c;
    int rc = chk_common(fname, info, root, comm, newcomm, &c), peer = -1, wrank = -1;
    if (rc)
        return rc;
    unsigned n = 0;
    if (c->rank == root) {
        rc = parse_port(port_name, &wrank, &n);
        if (rc == MPI_SUCCESS && (wrank != wh_job.rank || !*find_port(n)))
            rc = wh_error(MPI_ERR_PORT, "port '%.64s' is not open in this process (MPI_Open_port)", port_name);
        MPI_Status st;
        int hello = 0;
        if (rc == MPI_SUCCESS &&
            (rc = wh_recv(&hello, 1, wh_dtype_get(MPI_INT), MPI_ANY_SOURCE, WH_TAG_PORT(2 * n), world(), WH_CTX_COLL,
                          &st)) == MPI_SUCCESS)
            peer = st.MPI_SOURCE;
    }
    wh_dtype_t *idt = wh_dtype_get(MPI_INT);
    unsigned nn[1] = {n};
    int xrc = wh_bcast(nn, 1, idt, root, c); /* the serial: the intercommunicator's tag */
    if (xrc != MPI_SUCCESS)
        return wh_raise_comm(c, fname, xrc);
    return finish(fname, c, root, rc, peer, nn[0], newcomm);
}

static int body_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    static const char fname[] = "MPI_Comm_connect";
    wh_comm_t *c;
    int rc = chk_common(fname, info, root, comm, newcomm, &c), wrank = -1;
    if (rc)
        return rc;
    unsigned n = 0;
    if (c->rank == root) {
        rc = parse_port(port_name, &wrank, &n);
        for (int i = 0; rc == MPI_SUCCESS && i < c->size; i++)
            if (wh_comm_wrank(c, i) == wrank)
                rc = wh_error(MPI_ERR_PORT, "port '%.64s' was opened by rank %d of this communicator: a group "
                              "cannot connect to itself", port_name, i);
        int hello = wh_job.rank;
        if (rc == MPI_SUCCESS)
            rc = wh_send(&hello, 1, wh_dtype_get(MPI_INT), wrank, WH_TAG_PORT(2 * n), world(), WH_CTX_COLL);
    }
    unsigned nn[1] = {n};
    int xrc = wh_bcast(nn, 1, wh_dtype_get(MPI_INT), root, c);
    if (xrc != MPI_SUCCESS)
        return wh_raise_comm(c, fname, xrc);
    return finish(fname, c, root, rc, wrank, nn[0], newcomm);
}

static int body_Comm_disconnect(MPI_Comm *comm)
{
    static const char fname[] = "MPI_Comm_disconnect";
    WH_CHK_PTR(fname, NULL, comm, "comm");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return wh_raise_comm(wh_comm_get(*comm), fname,
                             wh_error(MPI_ERR_COMM, "%s is predefined and cannot be disconnected",
                                      *comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF"));
    wh_comm_t *c;
    int rc = wh_chk_comm(fname, *comm, &c);
    if (rc)
        return rc;
    /* every rank's pending traffic on comm completes before any leaves (the
     * barrier follows its sends in order on every channel) */
    if (c->is_inter) {
        if ((rc = wh_mci_barrier(fname, NULL, c)) != MPI_SUCCESS) /* raises itself */
            return rc;
    } else if ((rc = wh_barrier(c)) != MPI_SUCCESS) {
        return wh_raise_comm(c, fname, rc);
    }
    if ((rc = wh_comm_free(c)) != MPI_SUCCESS)
        return wh_raise_comm(c, fname, rc);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* ---------- MPI_Comm_join ---------- */

static int sock_io(int fd, int wr, void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t k = wr ? write(fd, (char *)buf + done, len - done) : read(fd, (char *)buf + done, len - done);
        if (k < 0 && (errno == EINTR || errno == EAGAIN)) {
            struct pollfd p = {.fd = fd, .events = wr ? POLLOUT : POLLIN};
            poll(&p, 1, 100);
            continue;
        }
        if (k <= 0)
            return k == 0 ? wh_error(MPI_ERR_OTHER, "MPI_Comm_join: the socket closed during the handshake")
                          : wh_error(MPI_ERR_OTHER, "MPI_Comm_join: socket %s failed: %s", wr ? "write" : "read",
                                     strerror(errno));
        done += (size_t)k;
    }
    return MPI_SUCCESS;
}

static int body_Comm_join(int fd, MPI_Comm *intercomm)
{
    static const char fname[] = "MPI_Comm_join";
    WH_CHK_PTR(fname, NULL, intercomm, "intercomm");
    if (fd < 0)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_ARG, "fd %d is not a socket", fd));
    /* both sides send "JOB RANK SERIAL" (fixed 256 bytes); the lower rank's serial names the tags */
    char mine[256] = {0}, theirs[256] = {0};
    unsigned serial = next_serial++;
    snprintf(mine, sizeof mine, "wharf-join %s %d %u", wh_pmi_kvsname(), wh_job.rank, serial);
    int rc = sock_io(fd, 1, mine, sizeof mine);
    if (rc == MPI_SUCCESS)
        rc = sock_io(fd, 0, theirs, sizeof theirs);
    if (rc != MPI_SUCCESS)
        return wh_raise_comm(NULL, fname, rc);
    theirs[sizeof theirs - 1] = '\0';
    char job[200];
    int peer;
    unsigned pserial;
    if (sscanf(theirs, "wharf-join %199s %d %u", job, &peer, &pserial) != 3)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_OTHER, "the process on fd %d is not a wharf process "
                                                   "in MPI_Comm_join", fd));
    if (strcmp(job, wh_pmi_kvsname()) != 0 || peer < 0 || peer >= wh_job.size)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_OTHER, "the process on fd %d belongs to another job: "
                                                   "wharf joins processes of one job", fd));
    if (peer == wh_job.rank)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_OTHER, "fd %d leads back to this process", fd));
    /* the lower rank's serial (never one of its ports') names the leaders' tag */
    unsigned n = peer < wh_job.rank ? pserial : serial;
    wh_comm_t *ic;
    rc = wh_intercomm_create(wh_comm_get(MPI_COMM_SELF), 0, world(), peer, WH_TAG_PORT(2 * n + 1), &ic);
    if (rc != MPI_SUCCESS)
        return wh_raise_comm(NULL, fname, rc);
    *intercomm = ic->obj.handle;
    return MPI_SUCCESS;
}

/* ---------- name service ---------- */

static int name_args(const char *fname, const char *service, MPI_Info info)
{
    if (!service)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_ARG, "service_name is NULL"));
    if (!*service || strlen(service) >= 240)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_ARG, "service_name must have 1..239 characters"));
    if (strchr(service, '\n'))
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_ARG, "service_name contains a newline"));
    if (info != MPI_INFO_NULL && !wh_info_valid(info))
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_INFO, "info 0x%x is not a valid info object", (unsigned)info));
    return MPI_SUCCESS;
}

static int pmi_result(const char *fname, int prc, int cls, const char *service)
{
    if (prc == 0)
        return MPI_SUCCESS;
    if (prc > 0)
        return wh_raise_comm(NULL, fname, wh_error(cls, "service '%.64s': %s", service, wh_pmi_error()));
    return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_OTHER, "service '%.64s': the launcher's name service "
                                               "failed: %s", service, wh_pmi_error()));
}

static int body_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    static const char fname[] = "MPI_Publish_name";
    int rc = name_args(fname, service_name, info);
    if (rc)
        return rc;
    if (!port_name || !*port_name || strnlen(port_name, MPI_MAX_PORT_NAME) >= MPI_MAX_PORT_NAME ||
        strchr(port_name, '\n'))
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_PORT, "port_name is not a port name (1..%d characters)",
                                                   MPI_MAX_PORT_NAME - 1));
    return pmi_result(fname, wh_pmi_publish(service_name, port_name), MPI_ERR_SERVICE, service_name);
}

static int body_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    static const char fname[] = "MPI_Unpublish_name";
    int rc = name_args(fname, service_name, info);
    if (rc)
        return rc;
    if (!port_name)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_ARG, "port_name is NULL"));
    return pmi_result(fname, wh_pmi_unpublish(service_name), MPI_ERR_SERVICE, service_name);
}

static int body_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    static const char fname[] = "MPI_Lookup_name";
    int rc = name_args(fname, service_name, info);
    if (rc)
        return rc;
    WH_CHK_PTR(fname, NULL, port_name, "port_name");
    return pmi_result(fname, wh_pmi_lookup(service_name, port_name, MPI_MAX_PORT_NAME), MPI_ERR_NAME, service_name);
}

/* ---------- spawning ---------- */

static int spawn_fail(const char *fname, int root, MPI_Comm comm, MPI_Comm *intercomm, int *errcodes, int n)
{
    wh_comm_t *c;
    int rc = wh_chk_comm(fname, comm, &c);
    if (rc)
        return rc;
    if (root < 0 || root >= wh_comm_local_size(c))
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_ROOT, "root %d is out of range", root));
    if (intercomm)
        *intercomm = MPI_COMM_NULL;
    if (errcodes != MPI_ERRCODES_IGNORE)
        for (int i = 0; i < n; i++)
            errcodes[i] = MPI_ERR_SPAWN;
    return wh_raise_comm(c, fname, wh_error(MPI_ERR_SPAWN, "wharfrun starts every process of a job at launch and "
                                            "cannot add processes at run time: start them with wharfrun -n and "
                                            "connect them with MPI_Comm_accept/MPI_Comm_connect"));
}

static int body_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                           MPI_Comm *intercomm, int array_of_errcodes[])
{
    (void)command, (void)argv, (void)info;
    return spawn_fail("MPI_Comm_spawn", root, comm, intercomm, array_of_errcodes, maxprocs > 0 ? maxprocs : 0);
}

static int body_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                                    const int array_of_maxprocs[], const MPI_Info array_of_info[], int root,
                                    MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    (void)array_of_commands, (void)array_of_argv, (void)array_of_info;
    int n = 0;
    for (int i = 0; array_of_maxprocs && i < count; i++)
        n += array_of_maxprocs[i] > 0 ? array_of_maxprocs[i] : 0;
    return spawn_fail("MPI_Comm_spawn_multiple", root, comm, intercomm, array_of_errcodes, n);
}

/* A process started by a launcher (never by MPI_Comm_spawn) has no parent. */
static int body_Comm_get_parent(MPI_Comm *parent)
{
    if (!parent)
        return wh_raise_comm(NULL, "MPI_Comm_get_parent", wh_error(MPI_ERR_ARG, "parent is NULL"));
    *parent = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

#include "entry/dynamic.h"
