/* MPI_Init / MPI_Finalize and the environment functions. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>

#include "chan/chan.h"
#include "coll/coll.h"
#include "locality/locality.h"
#include "mem/cuda/wh_cuda.h"
#include "mem/mem.h"
#include "mpi/api.h"
#include "core/cs.h"
#include "core/peers.h"
#include "mpi/init.h"
#include "mpi/reqapi.h"
#include "io/io.h"
#include "op/op.h"
#include "pmi/pmi.h"
#include "proto/proto.h"
#include "util/fabdl.h"
#include "util/log.h"
#include "util/tunables.h"
#include "rma/rma.h"

static pthread_t main_thread;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fail(const char *what, int code)
{
    char msg[MPI_MAX_ERROR_STRING];
    wh_error_text(code, msg, sizeof msg);
    fprintf(stderr, "wharf: rank %d: MPI_Init: %s: %s\n", wh_job.rank, what, msg);
    wh_job_abort(1, msg);
}

/* WHARF_LOCALITY=launcher: group ranks into hosts by launcher host index,
 * WHARF_HOST_ID, or hostname. */
static int host_map(void)
{
    char key[64], mine[256], val[256];
    const char *hidx = getenv("WHARF_HOST_INDEX");
    if (wh_tun.host_id && *wh_tun.host_id)
        snprintf(mine, sizeof mine, "id:%s", wh_tun.host_id);
    else if (hidx && *hidx)
        snprintf(mine, sizeof mine, "launcher:%s", hidx);
    else
        snprintf(mine, sizeof mine, "host:%s", wh_job.hostname);
    snprintf(key, sizeof key, "host.%d", wh_job.rank);
    if (wh_pmi_put(key, mine) != 0)
        return wh_error(MPI_ERR_OTHER, "PMI put of %s failed", key);
    if (wh_pmi_barrier() != 0)
        return wh_error(MPI_ERR_OTHER, "PMI barrier failed");
    int n = wh_job.size;
    char **uniq = calloc((size_t)n, sizeof(char *));
    if (!uniq)
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    int nu = 0, rc = MPI_SUCCESS;
    char *all = malloc((size_t)n * sizeof val);
    if (!all || wh_pmi_get_ranks("host", n, wh_job.rank, all, sizeof val) != 0)
        rc = all ? wh_error(MPI_ERR_OTHER, "PMI get of host.* failed: %s", wh_pmi_error())
                 : wh_error(MPI_ERR_NO_MEM, "out of memory");
    for (int r = 0; r < n && rc == MPI_SUCCESS; r++) {
        if (r == wh_job.rank)
            snprintf(val, sizeof val, "%s", mine);
        else
            memcpy(val, all + (size_t)r * sizeof val, sizeof val);
        int h = 0;
        while (h < nu && strcmp(uniq[h], val))
            h++;
        if (h == nu && !(uniq[nu++] = strdup(val)))
            rc = wh_error(MPI_ERR_NO_MEM, "out of memory");
        wh_job.host_of[r] = h;
    }
    for (int h = 0; h < nu; h++)
        free(uniq[h]);
    free(uniq);
    free(all);
    if (rc != MPI_SUCCESS)
        return rc;
    wh_job.nhosts = nu;
    wh_job.my_host = wh_job.host_of[wh_job.rank];
    wh_job.local_size = 0;
    for (int r = 0; r < n; r++) {
        wh_job.local_index[r] = -1;
        if (wh_job.host_of[r] == wh_job.my_host) {
            if (r == wh_job.rank)
                wh_job.local_rank = wh_job.local_size;
            wh_job.local_index[r] = wh_job.local_size;
            wh_job.local_ranks[wh_job.local_size++] = r;
        }
    }
    WH_DEBUG("init", "launcher host %d of %d (%s), local rank %d of %d", wh_job.my_host, nu, mine, wh_job.local_rank,
             wh_job.local_size);
    return MPI_SUCCESS;
}

/* Co-residence: the node registry (or, with WHARF_LOCALITY=launcher, the
 * launcher's hosts checked against it), then the CPU budget of this node. */
static int locality_init(void)
{
    int n = wh_job.size;
    wh_peers_init(); /* per-peer arrays have room for processes of other groups (MPI_Comm_spawn) */
    wh_job.host_of = calloc((size_t)wh_peers_cap, sizeof(int));
    wh_job.local_ranks = calloc((size_t)n, sizeof(int));
    wh_job.local_index = calloc((size_t)wh_peers_cap, sizeof(int));
    if (!wh_job.host_of || !wh_job.local_ranks || !wh_job.local_index)
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    WH_CHECK(wh_loc_publish());
    if (!strcmp(wh_tun.locality, "launcher")) {
        WH_CHECK(host_map()); /* its barrier also publishes the nonce */
    } else if (wh_pmi_barrier() != 0) {
        return wh_error(MPI_ERR_OTHER, "PMI barrier failed: %s", wh_pmi_error());
    }
    WH_CHECK(wh_loc_join());
    if (wh_pmi_barrier() != 0)
        return wh_error(MPI_ERR_OTHER, "PMI barrier failed: %s", wh_pmi_error());
    WH_CHECK(wh_loc_members());
    cpu_set_t set;
    int ncpu = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        ncpu = CPU_COUNT(&set);
    if (ncpu <= 0)
        ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    wh_job.ncpu = ncpu;
    wh_job.oversubscribed = wh_job.local_size > ncpu;
    WH_DEBUG("init", "group %d, local rank %d of %d, %d cpus in cpuset", wh_job.my_host, wh_job.local_rank,
             wh_job.local_size, ncpu);
    return MPI_SUCCESS;
}

/* The runtime (PMI, channels, protocols, MPI_COMM_WORLD/SELF as internal
 * parents) is brought up by the first of MPI_Init and MPI_Session_init and
 * torn down when the last user leaves: MPI_Finalize and every
 * MPI_Session_finalize each drop one reference (docs/SESSIONS.md).  Its
 * initialization and teardown are collective over the job (PMI barriers). */
static int world_state;  /* 0 before MPI_Init, 1 initialized, 2 finalized */
static int rt_users;     /* the world model + open sessions */

static int runtime_up(void)
{
    char err[256] = "";
    wh_job.t0 = now();
    main_thread = pthread_self();
    if (wh_tunables_load(err, sizeof err) != 0)
        fprintf(stderr, "wharf: warning: %s; using the default\n", err);
    wh_log_init();
    gethostname(wh_job.hostname, sizeof wh_job.hostname - 1);
    if (wh_pmi_init(&wh_job.rank, &wh_job.size, err, sizeof err) != 0) {
        fprintf(stderr, "wharf: MPI_Init: cannot start the process-management interface: %s\n", err);
        exit(1);
    }
    wh_log_rank = wh_job.rank;
    for (int i = 0; i < wh_tunable_count; i++) {
        if (wh_tunable_is_default(&wh_tunable_descs[i]))
            continue;
        char v[128];
        wh_tunable_format(&wh_tunable_descs[i], v, sizeof v);
        WH_INFO("tunables", "WHARF_%s=%s (default %s)", wh_tunable_descs[i].name, v, wh_tunable_descs[i].def);
    }
    int rc;
    if ((rc = locality_init()) != MPI_SUCCESS)
        fail("locality", rc);
    if ((rc = wh_mem_init()) != MPI_SUCCESS)
        fail("memory kinds", rc);
    char nonce[32];
    if (wh_cuda_on && wh_pmi_get("loc.nonce", nonce, sizeof nonce) == 0) /* names the VMM IPC sockets */
        wh_cuda_vmm_setup(wh_tun.node_dir, strtoull(nonce, NULL, 16));
    if ((rc = wh_dtype_init()) != MPI_SUCCESS)
        fail("datatypes", rc);
    if ((rc = wh_op_init()) != MPI_SUCCESS)
        fail("operations", rc);
    if ((rc = wh_proto_init()) != MPI_SUCCESS)
        fail("protocols", rc);
    if ((rc = wh_rma_init()) != MPI_SUCCESS)
        fail("one-sided", rc);
    if ((rc = wh_chans_init()) != MPI_SUCCESS)
        fail("channel setup", rc);
    if ((rc = wh_coord_init()) != MPI_SUCCESS)
        fail("coordinator", rc);
    if ((rc = wh_loc_finish()) != MPI_SUCCESS)
        fail("locality report", rc);
    wh_progress_init();
    if ((rc = wh_comm_init_world()) != MPI_SUCCESS)
        fail("communicators", rc);
    wh_job.thread_level = MPI_THREAD_SINGLE;
    wh_job.initialized = 1;
    return MPI_SUCCESS;
}

static int runtime_down(void)
{
    wh_rma_finalize();
    wh_datarep_finalize();
    /* flush queued control traffic (e.g. rendezvous FINs) before leaving */
    unsigned idle = 0;
    for (long i = 0; wh_pending_count() && i < 100000000L; i++)
        if (!wh_progress())
            wh_progress_idle(&idle);
    wh_comm_t *world = wh_comm_get(MPI_COMM_WORLD);
    int rc = wh_barrier(world);
    wh_pipe_finalize(); /* device pipeline rings live in the node region */
    wh_coord_report_counts();
    wh_coll_finalize();
    wh_comm_finalize();
    wh_chans_finalize();
    wh_coord_finalize();
    wh_peers_finalize();
    wh_loc_finalize();
    wh_proto_finalize();
    wh_op_finalize();
    wh_dtype_finalize();
    wh_mem_finalize();
    wh_pmi_finalize();
    wh_job.finalized = 1;
    return rc;
}

int wh_runtime_acquire(int required, int *provided)
{
    if (wh_job.finalized)
        return wh_error(MPI_ERR_OTHER, "the MPI runtime of this process was torn down (MPI_Finalize or the last "
                                       "MPI_Session_finalize) and cannot be started again; keep a session open "
                                       "across MPI_Finalize to go on using MPI");
    if (!wh_job.initialized)
        runtime_up();
    rt_users++;
    int level = required < MPI_THREAD_MULTIPLE ? required : MPI_THREAD_MULTIPLE;
    if (level < MPI_THREAD_SINGLE)
        level = MPI_THREAD_SINGLE;
    if (level > wh_job.thread_level)
        wh_job.thread_level = level;
    if (level == MPI_THREAD_MULTIPLE)
        wh_cs_enable(); /* entry points serialize through one lock from now on (core/cs.h) */
    if (provided) /* the level the process runs at, as MPICH reports it (MPICH's threads/init/mult_session) */
        *provided = wh_job.thread_level;
    return MPI_SUCCESS;
}

/* The last session left a process that never finalized the world model:
 * the runtime stays up, so a later MPI_Session_init (or MPI_Init) finds it
 * ("multiple sessions can be created and destroyed during the lifetime of
 * an MPI process"; PMI-1 cannot start a process twice), and is torn down at
 * exit, as collective as MPI_Finalize's. */
static void rt_exit(void)
{
    if (rt_users == 0 && wh_job.initialized && !wh_job.finalized) /* up, and nobody uses it */
        runtime_down();
}

int wh_runtime_release(void)
{
    if (rt_users <= 0 || --rt_users > 0)
        return MPI_SUCCESS;
    if (world_state == 0) {
        static int registered;
        if (!registered && atexit(rt_exit) == 0)
            registered = 1;
        if (registered)
            return MPI_SUCCESS;
    }
    return runtime_down();
}

int wh_world_state(void) { return world_state; }

static int do_init(int required, int *provided)
{
    if (world_state) {
        fprintf(stderr, "wharf: MPI_Init called %s\n", world_state == 2 ? "after MPI_Finalize" : "twice");
        exit(1);
    }
    int rc = wh_runtime_acquire(required, provided);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        fprintf(stderr, "wharf: MPI_Init: %s\n", wh_error_text(rc, msg, sizeof msg));
        exit(1);
    }
    world_state = 1;
    /* a process started by MPI_Comm_spawn connects to its parents (MPI_Comm_get_parent) */
    if ((rc = wh_dyn_connect_parent()) != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        fprintf(stderr, "wharf: MPI_Init: connecting to the parent processes: %s\n", wh_error_text(rc, msg, sizeof msg));
        wh_job_abort(1, msg);
    }
    return MPI_SUCCESS;
}

static int body_Init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return do_init(MPI_THREAD_SINGLE, NULL);
}

static int body_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)argc;
    (void)argv;
    if (!provided) {
        fprintf(stderr, "wharf: MPI_Init_thread: provided is NULL\n");
        exit(1);
    }
    return do_init(required, provided);
}

static int body_Finalize(void)
{
    if (world_state != 1) {
        fflush(stdout);
        fprintf(stderr, "wharf: MPI_Finalize called %s\n", world_state ? "twice" : "before MPI_Init");
        exit(1);
    }
    wh_comm_finalize_attrs();
    wh_bsend_finalize(); /* buffered sends still in flight go out first */
    world_state = 2;
    /* the runtime stays up while sessions are open */
    return wh_runtime_release();
}

static int body_Abort(MPI_Comm comm, int errorcode)
{
    char msg[256];
    snprintf(msg, sizeof msg, "MPI_Abort(comm 0x%x, errorcode %d) called by rank %d", (unsigned)comm, errorcode,
             wh_job.rank);
    fprintf(stderr, "wharf: rank %d: %s\n", wh_job.rank, msg);
    wh_job_abort(errorcode, msg);
}

static int body_Initialized(int *flag)
{
    *flag = world_state >= 1; /* the world model only (MPI-4.1 11.2.3) */
    return MPI_SUCCESS;
}

static int body_Finalized(int *flag)
{
    *flag = world_state == 2;
    return MPI_SUCCESS;
}

static double body_Wtime(void) { return now() - wh_job.t0; }

static double body_Wtick(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int body_Get_processor_name(char *name, int *resultlen)
{
    if (!name || !resultlen)
        return wh_raise_comm(NULL, "MPI_Get_processor_name", wh_error(MPI_ERR_ARG, "name or resultlen is NULL"));
    if (!wh_job.hostname[0])
        gethostname(wh_job.hostname, sizeof wh_job.hostname - 1);
    snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", wh_job.hostname);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

static int body_Get_version(int *version, int *subversion)
{
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

static int body_Get_library_version(char *version, int *resultlen)
{
    /* the loaded libfabric's version, else the one built against: asking must not load it */
    uint32_t fv = wh_fab_loaded() ? fi_version() : FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
    snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
             "wharf %s (MPI %d.%d; channels: self, shm with CMA, net over libfabric %u.%u)", WHARF_VERSION,
             MPI_VERSION, MPI_SUBVERSION, FI_MAJOR(fv), FI_MINOR(fv));
    *resultlen = (int)strlen(version);
    return MPI_SUCCESS;
}

static int body_Query_thread(int *provided)
{
    *provided = wh_job.thread_level;
    return MPI_SUCCESS;
}

static int body_Is_thread_main(int *flag)
{
    *flag = pthread_equal(pthread_self(), main_thread) != 0;
    return MPI_SUCCESS;
}

static int body_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    (void)info;
    if (size < 0)
        return wh_raise_comm(NULL, "MPI_Alloc_mem", wh_error(MPI_ERR_SIZE, "negative size %ld", (long)size));
    void *p = wh_rma_alloc_mem((size_t)size); /* node region, for one-sided windows (rma/win.c) */
    if (!p && posix_memalign(&p, 64, size ? (size_t)size : 1) != 0)
        return wh_raise_comm(NULL, "MPI_Alloc_mem", wh_error(MPI_ERR_NO_MEM, "cannot allocate %ld bytes", (long)size));
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

static int body_Free_mem(void *base)
{
    if (!wh_rma_free_mem(base))
        free(base);
    return MPI_SUCCESS;
}

#include "entry/init.h"
