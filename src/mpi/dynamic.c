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
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll/coll.h"
#include "comm/comm.h"
#include "chan/chan.h"
#include "coord/coord.h"
#include "core/peers.h"
#include "mpi/init.h"
#include "mpi/coll_nbc.h"
#include "mpi/reqapi.h"
#include "pmi/pmi.h"
#include "util/log.h"
#include "util/tunables.h"

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

/* The launcher's universe: the job id of the first group (a spawned group's
 * kvsname is "<job id>.s<N>"). */
static size_t universe_len(const char *job)
{
    const char *dot = strrchr(job, '.');
    if (dot && dot[1] == 's' && dot[2] && strspn(dot + 2, "0123456789") == strlen(dot + 2))
        return (size_t)(dot - job);
    return strlen(job);
}

/* Parse a port name "wharf-port:UNIVERSE:GID:N": 0 and the global id of its
 * process (core/peers.h; the world rank in a job without spawning) and its
 * serial, else an MPI_ERR_PORT code. */
static int parse_port(const char *name, uint32_t *gid, unsigned *n)
{
    const char *job = wh_pmi_kvsname();
    size_t pl = sizeof port_prefix - 1, jl = universe_len(job);
    if (!name)
        return wh_error(MPI_ERR_PORT, "port_name is NULL");
    if (strnlen(name, MPI_MAX_PORT_NAME) >= MPI_MAX_PORT_NAME)
        return wh_error(MPI_ERR_PORT, "port_name is not a string of fewer than MPI_MAX_PORT_NAME (%d) characters",
                        MPI_MAX_PORT_NAME);
    if (strncmp(name, port_prefix, pl) != 0)
        return wh_error(MPI_ERR_PORT, "'%.64s' is not a port name from MPI_Open_port", name);
    const char *rest = name + pl, *colon = strchr(rest, ':');
    if (!colon || (size_t)(colon - rest) != jl || strncmp(rest, job, jl) != 0)
        return wh_error(MPI_ERR_PORT, "port '%.64s' belongs to another job: wharf connects processes started by "
                        "one wharfrun (together, or by MPI_Comm_spawn)", name);
    long long r;
    unsigned s;
    char tail;
    if (sscanf(colon + 1, "%lld:%u%c", &r, &s, &tail) != 2 || r < 0 ||
        r >= (long long)WH_GID_GROUPS << WH_GID_RANK_BITS ||
        (r >> WH_GID_RANK_BITS == wh_my_group && (r & ((1 << WH_GID_RANK_BITS) - 1)) >= wh_job.size))
        return wh_error(MPI_ERR_PORT, "port '%.64s' names no process of this job", name);
    *gid = (uint32_t)r;
    *n = s;
    return MPI_SUCCESS;
}

/* a port of this process's own group: the world rank of its process, else -1 */
static int same_group(uint32_t gid)
{
    return gid >> WH_GID_RANK_BITS == wh_my_group ? (int)(gid & ((1u << WH_GID_RANK_BITS) - 1)) : -1;
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
    const char *job = wh_pmi_kvsname();
    snprintf(port_name, MPI_MAX_PORT_NAME, "%s%.*s:%u:%u", port_prefix, (int)universe_len(job), job,
             (unsigned)wh_peer_gid(wh_job.rank), p->n);
    /* processes of other groups (spawned ones, or the parents) reach this one
     * through the network channel: open it and publish the endpoint now */
    if (wh_my_group > 0 || !wh_pmi_is_singleton()) { /* a process manager can tell others the endpoint */
        int rc = wh_chan_net_dyn_open();
        char why[256];
        if (rc != MPI_SUCCESS)
            WH_DEBUG("dynamic", "port %s: only this group can connect: %s", port_name, wh_error_text(rc, why, sizeof why));
    }
    return MPI_SUCCESS;
}

static int body_Close_port(const char *port_name)
{
    static const char fname[] = "MPI_Close_port";
    uint32_t gid;
    unsigned n;
    int rc = parse_port(port_name, &gid, &n);
    if (rc == MPI_SUCCESS && (gid != wh_peer_gid(wh_job.rank) || !*find_port(n)))
        rc = wh_error(MPI_ERR_PORT, "port '%.64s' is not open in this process", port_name);
    if (rc != MPI_SUCCESS)
        return wh_raise_comm(NULL, fname, rc);
    port_t **pp = find_port(n), *p = *pp;
    *pp = p->next;
    free(p);
    return MPI_SUCCESS;
}

/* checks every rank of an accept/connect makes */
static char *info_str(MPI_Info info, const char *key);

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

/* The root's outcome reaches every rank (a broadcast of the error class and
 * whether the other group is of another launcher group), then both groups
 * build the intercommunicator.  With another group every member opens the
 * network channel and publishes its endpoint before the leaders swap the
 * groups (a barrier orders it), and the leaders talk over a two-process
 * bridge communicator [accepting root, connecting root]. */
static int finish(const char *fname, wh_comm_t *c, int root, int rc, int peer, int foreign, int accepting, unsigned n,
                  MPI_Comm *newcomm)
{
    int out[2] = {MPI_SUCCESS, foreign};
    if (c->rank == root && rc != MPI_SUCCESS)
        MPI_Error_class(rc, &out[0]);
    int brc = wh_bcast(out, 2, wh_dtype_get(MPI_INT), root, c);
    if (brc != MPI_SUCCESS)
        return wh_raise_comm(c, fname, brc);
    if (c->rank == root && rc != MPI_SUCCESS)
        return wh_raise_comm(c, fname, rc);
    if (out[0] != MPI_SUCCESS)
        return wh_raise_comm(c, fname, wh_error(out[0], "the root (rank %d) failed; see its error", root));
    wh_comm_t *peercomm = world(), *bridge = NULL;
    int remote_leader = peer;
    if (out[1]) {
        if ((rc = wh_chan_net_dyn_open()) != MPI_SUCCESS || (rc = wh_barrier(c)) != MPI_SUCCESS)
            return wh_raise_comm(c, fname, rc);
        if (c->rank == root) {
            int w[2] = {accepting ? wh_job.rank : peer, accepting ? peer : wh_job.rank};
            if (!(bridge = wh_comm_new(2, w, accepting ? 0 : 1, world()->ctx)))
                return wh_raise_comm(c, fname, wh_error(MPI_ERR_NO_MEM, "out of memory connecting"));
            peercomm = bridge;
            remote_leader = accepting ? 1 : 0;
        }
    }
    wh_comm_t *ic;
    rc = wh_intercomm_create(c, root, peercomm, remote_leader, WH_TAG_PORT(2 * n + 1), &ic);
    if (bridge)
        wh_comm_release(bridge);
    if (rc != MPI_SUCCESS)
        return wh_raise_comm(c, fname, rc);
    *newcomm = ic->obj.handle;
    return MPI_SUCCESS;
}

/* the intercommunicator's tag: the port's serial, mixed with the port's
 * process when the groups differ (bridges of several ports share a context) */
static unsigned port_tag(int foreign, uint32_t port_gid, unsigned n)
{
    return foreign ? n ^ (port_gid * 2654435761u >> 6) : n;
}

static int body_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    static const char fname[] = "MPI_Comm_accept";
    wh_comm_t *c;
    int rc = chk_common(fname, info, root, comm, newcomm, &c), peer = -1, foreign = 0;
    if (rc)
        return rc;
    unsigned n = 0;
    if (c->rank == root) {
        uint32_t gid = 0;
        rc = parse_port(port_name, &gid, &n);
        if (rc == MPI_SUCCESS && (gid != wh_peer_gid(wh_job.rank) || !*find_port(n)))
            rc = wh_error(MPI_ERR_PORT, "port '%.64s' is not open in this process (MPI_Open_port)", port_name);
        int hello[2] = {0, 0}; /* the connecting root's global id, and its group size (unused) */
        if (rc == MPI_SUCCESS)
            rc = wh_recv(hello, 2, wh_dtype_get(MPI_INT), MPI_ANY_SOURCE, WH_TAG_PORT(2 * n), world(), WH_CTX_COLL,
                         MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS) {
            uint32_t cg = (uint32_t)hello[0];
            foreign = same_group(cg) < 0;
            peer = foreign ? wh_coord_peer_of_gid(cg) : same_group(cg);
            if (peer < 0)
                rc = wh_error(MPI_ERR_PORT, "the process connecting to port '%.64s' (global id %u) cannot be reached",
                              port_name, (unsigned)cg);
            n = port_tag(foreign, wh_peer_gid(wh_job.rank), n);
            /* within the job: tell the connecting root its request was taken
             * (it waits for this with a timeout, see connect_request) */
            int ack = 0;
            if (rc == MPI_SUCCESS && !foreign)
                rc = wh_send(&ack, 1, wh_dtype_get(MPI_INT), peer, WH_TAG_PORT(2 * n + 1), world(), WH_CTX_COLL);
        }
    }
    unsigned nn[1] = {n};
    int xrc = wh_bcast(nn, 1, wh_dtype_get(MPI_INT), root, c); /* the serial: the intercommunicator's tag */
    if (xrc != MPI_SUCCESS)
        return wh_raise_comm(c, fname, xrc);
    return finish(fname, c, root, rc, peer, foreign, 1, nn[0], newcomm);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The connecting root's request to the port's process in this job: the
 * request message, then the accepting root's acknowledgement (tag 2N+1,
 * before anything else of the intercommunicator's construction, so in order)
 * within the timeout (info "timeout" in seconds, else WHARF_CONNECT_TIMEOUT;
 * 0 waits forever).  When it runs out the request is cancelled; if no accept
 * had matched it yet, MPI_ERR_PORT (MPI-4.1 11.8.2: the port may not be
 * accepted), else the accept is under way and its acknowledgement comes. */
static int connect_request(const char *port_name, MPI_Info info, int peer, unsigned n, const int hello[2])
{
    int timeout = wh_tun.connect_timeout;
    char *v = info_str(info, "timeout");
    if (v) {
        char *end;
        long t = strtol(v, &end, 10);
        if (end != v && t >= 0 && t < INT_MAX)
            timeout = (int)t;
        free(v);
    }
    wh_req_t *sq = NULL, *aq = NULL;
    int ack = -1;
    int rc = wh_isend(hello, 2, wh_dtype_get(MPI_INT), peer, WH_TAG_PORT(2 * n), world(), WH_CTX_COLL, WH_MODE_STD,
                      &sq);
    if (rc == MPI_SUCCESS)
        rc = wh_irecv(&ack, 1, wh_dtype_get(MPI_INT), peer, WH_TAG_PORT(2 * n + 1), world(), WH_CTX_COLL, &aq);
    if (rc != MPI_SUCCESS) {
        if (sq)
            wh_wait(sq, NULL);
        return rc;
    }
    double deadline = now_s() + timeout;
    unsigned idle = 0;
    while (!wh_test(aq)) {
        if (timeout > 0 && now_s() >= deadline)
            break;
        if (wh_progress())
            idle = 0;
        else
            wh_progress_idle(&idle);
    }
    if (!wh_test(aq)) {
        MPI_Status st;
        wh_cancel_send(sq);
        wh_wait(sq, &st);
        sq = NULL;
        int cancelled = 0;
        MPI_Test_cancelled(&st, &cancelled);
        if (cancelled && wh_cancel_recv(aq)) {
            wh_wait(aq, NULL);
            return wh_error(MPI_ERR_PORT, "no MPI_Comm_accept on port '%.64s' within %d s (the timeout: info key "
                            "\"timeout\" or WHARF_CONNECT_TIMEOUT)", port_name, timeout);
        }
    }
    if (sq)
        rc = wh_wait(sq, NULL);
    int arc = wh_wait(aq, NULL);
    return rc != MPI_SUCCESS ? rc : arc;
}

static int body_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    static const char fname[] = "MPI_Comm_connect";
    wh_comm_t *c;
    int rc = chk_common(fname, info, root, comm, newcomm, &c), peer = -1, foreign = 0;
    if (rc)
        return rc;
    unsigned n = 0;
    if (c->rank == root) {
        uint32_t gid = 0;
        rc = parse_port(port_name, &gid, &n);
        foreign = rc == MPI_SUCCESS && same_group(gid) < 0;
        if (rc == MPI_SUCCESS && !foreign)
            peer = same_group(gid);
        for (int i = 0; rc == MPI_SUCCESS && !foreign && i < c->size; i++)
            if (wh_comm_wrank(c, i) == peer)
                rc = wh_error(MPI_ERR_PORT, "port '%.64s' was opened by rank %d of this communicator: a group "
                              "cannot connect to itself", port_name, i);
        if (rc == MPI_SUCCESS && foreign && (rc = wh_chan_net_dyn_open()) == MPI_SUCCESS &&
            (peer = wh_coord_peer_of_gid(gid)) < 0)
            rc = wh_error(MPI_ERR_PORT, "port '%.64s': its process (launcher group %u, rank %u) cannot be reached "
                          "(it ended, or its network endpoint is unknown)", port_name,
                          (unsigned)(gid >> WH_GID_RANK_BITS), (unsigned)(gid & ((1u << WH_GID_RANK_BITS) - 1)));
        int hello[2] = {(int)wh_peer_gid(wh_job.rank), c->size};
        if (rc == MPI_SUCCESS && !foreign)
            rc = connect_request(port_name, info, peer, n, hello);
        if (rc == MPI_SUCCESS && foreign) {
            /* the request travels on a bridge [port's process, me] with the world's context */
            int w[2] = {peer, wh_job.rank};
            wh_comm_t *b = wh_comm_new(2, w, 1, world()->ctx);
            rc = b ? wh_send(hello, 2, wh_dtype_get(MPI_INT), 0, WH_TAG_PORT(2 * n), b, WH_CTX_COLL)
                   : wh_error(MPI_ERR_NO_MEM, "out of memory connecting");
            if (b)
                wh_comm_release(b);
        }
        if (rc == MPI_SUCCESS)
            n = port_tag(foreign, gid, n);
    }
    unsigned nn[1] = {n};
    int xrc = wh_bcast(nn, 1, wh_dtype_get(MPI_INT), root, c);
    if (xrc != MPI_SUCCESS)
        return wh_raise_comm(c, fname, xrc);
    return finish(fname, c, root, rc, peer, foreign, 0, nn[0], newcomm);
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

/* The launcher starts the children as a new group (wh_pmi_spawn), with the
 * port of the spawning root under PARENT_ROOT_PORT_NAME in their key-value
 * space (as MPICH does); the children's MPI_Init connects to it
 * (wh_dyn_connect_parent) while the parents accept: the intercommunicator. */

static MPI_Comm parent_comm = MPI_COMM_NULL;
static uint32_t parent_serial; /* the communicator's creation number: a freed handle reused is not the parent */

#define WH_SPAWN_INFO_MAX 4096

/* an info value of the spawn (host, wdir, path), or NULL */
static char *info_str(MPI_Info info, const char *key)
{
    if (info == MPI_INFO_NULL || !wh_info_valid(info))
        return NULL;
    int len = 0, flag = 0;
    if (MPI_Info_get_valuelen(info, key, &len, &flag) != MPI_SUCCESS || !flag || len < 0 || len >= WH_SPAWN_INFO_MAX)
        return NULL;
    char *v = malloc((size_t)len + 1);
    if (v && (MPI_Info_get(info, key, len, v, &flag) != MPI_SUCCESS || !flag)) {
        free(v);
        v = NULL;
    }
    return v;
}

/* The root's part: check the arguments, open a port, ask the launcher.  On
 * success *port is the open port the children connect to. */
static int spawn_root(int count, char *const commands[], char **const argvs[], const int maxprocs[],
                      const MPI_Info infos[], char *port)
{
    if (count < 1)
        return wh_error(MPI_ERR_ARG, "count %d: at least one command must be spawned", count);
    if (!commands || !maxprocs)
        return wh_error(MPI_ERR_ARG, "the array of commands or of maxprocs is NULL");
    wh_pmi_spawn_cmd_t *cmds = calloc((size_t)count, sizeof *cmds);
    if (!cmds)
        return wh_error(MPI_ERR_NO_MEM, "out of memory spawning");
    int rc = MPI_SUCCESS;
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++) {
        wh_pmi_spawn_cmd_t *k = &cmds[i];
        if (!commands[i] || !*commands[i])
            rc = wh_error(MPI_ERR_SPAWN, "command %d is NULL or empty", i);
        else if (maxprocs[i] < 1)
            rc = wh_error(MPI_ERR_SPAWN, "maxprocs %d of command %d ('%.64s') is not positive", maxprocs[i], i,
                          commands[i]);
        else if (infos && infos[i] != MPI_INFO_NULL && !wh_info_valid(infos[i]))
            rc = wh_error(MPI_ERR_INFO, "info 0x%x of command %d is not a valid info object", (unsigned)infos[i], i);
        if (rc != MPI_SUCCESS)
            break;
        k->exec = commands[i];
        k->nprocs = maxprocs[i];
        k->argv = argvs ? argvs[i] : NULL;
        while (k->argv && k->argv[k->argc])
            k->argc++;
        MPI_Info in = infos ? infos[i] : MPI_INFO_NULL;
        k->host = info_str(in, "host");
        k->wdir = info_str(in, "wdir");
        k->path = info_str(in, "path");
    }
    /* a singleton first gets a process manager, so that the port it opens
     * is reachable from the children (MPICH's singletons start hydra) */
    if (rc == MPI_SUCCESS && wh_pmi_need_manager() != 0)
        rc = wh_error(MPI_ERR_SPAWN, "%s", wh_pmi_error());
    if (rc == MPI_SUCCESS)
        rc = body_Open_port(MPI_INFO_NULL, port);
    if (rc == MPI_SUCCESS) {
        const char *pk[1] = {"PARENT_ROOT_PORT_NAME"}, *pv[1] = {port};
        char kvs[256];
        int prc = wh_pmi_spawn(count, cmds, 1, pk, pv, kvs, sizeof kvs);
        if (prc != 0) {
            rc = wh_error(MPI_ERR_SPAWN, "%s%s", prc > 0 ? "" : "the launcher connection failed: ", wh_pmi_error());
            body_Close_port(port);
        } else {
            WH_DEBUG("dynamic", "spawned group %s; waiting for it on %s", kvs, port);
        }
    }
    for (int i = 0; i < count; i++) {
        free((void *)cmds[i].host);
        free((void *)cmds[i].wdir);
        free((void *)cmds[i].path);
    }
    free(cmds);
    return rc;
}

static int spawn_common(const char *fname, int count, char *const commands[], char **const argvs[],
                        const int maxprocs[], const MPI_Info infos[], int root, MPI_Comm comm, MPI_Comm *intercomm,
                        int errcodes[])
{
    wh_comm_t *c;
    int rc = wh_chk_comm(fname, comm, &c);
    if (rc)
        return rc;
    if (c->is_inter)
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_COMM, "comm must be an intracommunicator"));
    if (root < 0 || root >= c->size)
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_ROOT, "root %d is out of range: the communicator has %d "
                                                "ranks (0..%d)", root, c->size, c->size - 1));
    WH_CHK_PTR(fname, c, intercomm, "intercomm");
    char port[MPI_MAX_PORT_NAME] = "";
    int total = 0;
    if (c->rank == root) {
        rc = spawn_root(count, commands, argvs, maxprocs, infos, port);
        for (int i = 0; maxprocs && i < count; i++)
            total += maxprocs[i] > 0 ? maxprocs[i] : 0;
    }
    /* every rank learns the outcome and the number of children (errcodes) */
    int out[2] = {MPI_SUCCESS, total};
    if (c->rank == root && rc != MPI_SUCCESS)
        MPI_Error_class(rc, &out[0]);
    int brc = wh_bcast(out, 2, wh_dtype_get(MPI_INT), root, c);
    if (brc != MPI_SUCCESS)
        return wh_raise_comm(c, fname, brc);
    *intercomm = MPI_COMM_NULL;
    if (errcodes != MPI_ERRCODES_IGNORE)
        for (int i = 0; i < out[1]; i++)
            errcodes[i] = out[0] == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_SPAWN;
    if (c->rank == root && rc != MPI_SUCCESS)
        return wh_raise_comm(c, fname, rc);
    if (out[0] != MPI_SUCCESS)
        return wh_raise_comm(c, fname, wh_error(out[0], "spawning failed at the root (rank %d); see its error", root));
    rc = body_Comm_accept(port, MPI_INFO_NULL, root, comm, intercomm);
    if (c->rank == root)
        body_Close_port(port);
    return rc;
}

static int body_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                           MPI_Comm *intercomm, int array_of_errcodes[])
{
    char *cmds[1] = {(char *)command};
    char **argvs[1] = {argv};
    int mp[1] = {maxprocs};
    MPI_Info infos[1] = {info};
    return spawn_common("MPI_Comm_spawn", 1, cmds, argvs, mp, infos, root, comm, intercomm, array_of_errcodes);
}

static int body_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                                    const int array_of_maxprocs[], const MPI_Info array_of_info[], int root,
                                    MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    return spawn_common("MPI_Comm_spawn_multiple", count, array_of_commands, array_of_argv, array_of_maxprocs,
                        array_of_info, root, comm, intercomm, array_of_errcodes);
}

int wh_dyn_connect_parent(void)
{
    if (wh_my_group == 0 || wh_pmi_is_singleton())
        return MPI_SUCCESS;
    char port[MPI_MAX_PORT_NAME];
    if (wh_pmi_get("PARENT_ROOT_PORT_NAME", port, sizeof port) != 0)
        return MPI_SUCCESS; /* a group without parents */
    MPI_Comm ic = MPI_COMM_NULL;
    int rc = body_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic);
    if (rc != MPI_SUCCESS)
        return rc;
    parent_comm = ic;
    parent_serial = wh_comm_get(ic)->serial;
    wh_comm_get(ic)->errh = MPI_ERRORS_ARE_FATAL;
    snprintf(wh_comm_get(ic)->name, MPI_MAX_OBJECT_NAME, "MPI_COMM_PARENT");
    return MPI_SUCCESS;
}

/* The intercommunicator to the parents, until it is freed or disconnected. */
static int body_Comm_get_parent(MPI_Comm *parent)
{
    if (!parent)
        return wh_raise_comm(NULL, "MPI_Comm_get_parent", wh_error(MPI_ERR_ARG, "parent is NULL"));
    wh_comm_t *c = parent_comm != MPI_COMM_NULL ? wh_comm_get(parent_comm) : NULL;
    *parent = c && c->serial == parent_serial ? parent_comm : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

#include "entry/dynamic.h"
