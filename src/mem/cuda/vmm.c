/* The VMM file-descriptor scheme of CUDA IPC (see wh_cuda.h).
 *
 * Legacy CUDA IPC handles (cuIpcGetMemHandle) cannot describe memory mapped
 * with cuMemMap, and the driver refuses to open them from another PID
 * namespace.  An allocation made with cuMemCreate asking for
 * CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR can instead be exported as a file
 * descriptor, which works in any process that receives it: passed over a
 * Unix socket (SCM_RIGHTS), the kernel duplicates it into the receiver.
 *
 * Sender: the first export starts a listener thread on
 * "<node dir>/wharf.<nonce>.vmm.<rank>" (reached by every rank that shares the
 * node directory, whatever its PID namespace: pidpriv, volume) and on the
 * abstract socket of the same name (reached by ranks sharing the network
 * namespace, e.g. containers of one pod without a shared directory).  Each
 * exported allocation (by buffer id) keeps one descriptor in a small table;
 * the thread answers a request naming a buffer id with that descriptor.  The
 * thread never calls the driver.  Entries whose mapping went away are closed
 * when a new one is added (and all at finalize), so wharf does not keep freed
 * device memory alive for long.
 *
 * Receiver: connects (bounded by a 2 s timeout), receives the descriptor,
 * cuMemImportFromShareableHandle, cuMemAddressReserve + cuMemMap + cuMemSetAccess
 * for its own GPU, and caches the mapping per (peer, buffer id) like legacy
 * IPC mappings; evicted mappings are unmapped. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/job.h"
#include "mem/cuda/wh_cuda.h"
#include "util/log.h"
#include "util/tunables.h"

#define VMM_MAGIC 0x574d4d46u /* "WMMF" */
#define EXPORTS 32
#define IMPORTS 64

typedef struct {
    uint32_t magic;
    uint32_t status; /* reply: 0 = found (a descriptor comes with it) */
    uint64_t id;
    uint64_t size;
} vmm_msg_t;

static char sock_dir[256];
static uint64_t sock_nonce;
static int setup_done;

/* ---- sender: exported descriptors and the thread serving them ---- */
static struct {
    uint64_t id;
    wh_CUdeviceptr base;
    uint64_t size;
    int fd; /* -1: free */
} exports[EXPORTS];
static int export_next;
static pthread_mutex_t export_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t server;
static int server_on, lsock[2] = {-1, -1}, stop_pipe[2] = {-1, -1};
static char lpath[sizeof(((struct sockaddr_un *)0)->sun_path)];

static int sock_addr(int wrank, int abstract, struct sockaddr_un *a, socklen_t *len)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n;
    if (abstract)
        n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "wharf.%llx.vmm.%d", (unsigned long long)sock_nonce,
                     wrank) + 1;
    else
        n = snprintf(a->sun_path, sizeof a->sun_path, "%s/wharf.%llx.vmm.%d", sock_dir,
                     (unsigned long long)sock_nonce, wrank);
    if (n <= 0 || (size_t)n >= sizeof a->sun_path)
        return -1; /* the node directory's path is too long for a socket */
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + (abstract ? 0 : 1));
    return 0;
}

void wh_cuda_vmm_setup(const char *dir, uint64_t nonce)
{
    snprintf(sock_dir, sizeof sock_dir, "%s", dir && *dir ? dir : "/dev/shm");
    sock_nonce = nonce;
    setup_done = 1;
}

int wh_cuda_vmm_on(void)
{
    return setup_done && wh_cuda_on && wh_cu.cuMemRetainAllocationHandle && wh_cu.cuMemGetAllocationPropertiesFromHandle &&
           wh_cu.cuMemRelease && wh_cu.cuMemExportToShareableHandle && wh_cu.cuMemImportFromShareableHandle &&
           wh_cu.cuMemAddressReserve && wh_cu.cuMemAddressFree && wh_cu.cuMemMap && wh_cu.cuMemUnmap &&
           wh_cu.cuMemSetAccess;
}

/* answer one connection: a request for a buffer id, the descriptor back */
static void serve(int c)
{
    struct ucred cred;
    socklen_t cl = sizeof cred;
    vmm_msg_t m;
    if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &cl) || cred.uid != geteuid() ||
        recv(c, &m, sizeof m, MSG_WAITALL) != (ssize_t)sizeof m || m.magic != VMM_MAGIC)
        return; /* another user's process, or not ours: nothing */
    int fd = -1;
    pthread_mutex_lock(&export_lock);
    for (int i = 0; i < EXPORTS; i++)
        if (exports[i].fd >= 0 && exports[i].id == m.id) {
            fd = dup(exports[i].fd); /* the table's copy may be closed while this one travels */
            m.size = exports[i].size;
        }
    pthread_mutex_unlock(&export_lock);
    m.status = fd >= 0 ? 0 : 1;
    struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        memset(&u, 0, sizeof u);
        h.msg_control = u.buf;
        h.msg_controllen = sizeof u.buf;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&h);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof fd);
    }
    if (sendmsg(c, &h, MSG_NOSIGNAL) < 0)
        WH_DEBUG("cuda", "VMM IPC: reply failed: %s", strerror(errno));
    if (fd >= 0)
        close(fd);
}

static void *server_loop(void *arg)
{
    (void)arg;
    struct pollfd p[3] = {{.fd = stop_pipe[0], .events = POLLIN}, {.fd = lsock[0], .events = POLLIN},
                          {.fd = lsock[1], .events = POLLIN}};
    for (;;) {
        if (poll(p, 3, -1) < 0 && errno != EINTR)
            break;
        if (p[0].revents)
            break;
        for (int k = 1; k < 3; k++)
            if (p[k].fd >= 0 && (p[k].revents & POLLIN)) {
                int c = accept4(p[k].fd, NULL, NULL, SOCK_CLOEXEC);
                if (c < 0)
                    continue;
                struct timeval tv = {.tv_sec = 2};
                setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
                setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
                serve(c);
                close(c);
            }
    }
    return NULL;
}

static int listen_on(int abstract)
{
    struct sockaddr_un a;
    socklen_t len;
    if (sock_addr(wh_job.rank, abstract, &a, &len))
        return -1;
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    if (!abstract)
        unlink(a.sun_path); /* a leftover of a crashed rank with the same nonce cannot exist, but be safe */
    if (bind(s, (struct sockaddr *)&a, len) || listen(s, 16)) {
        WH_DEBUG("cuda", "VMM IPC: cannot listen on %s%s: %s", abstract ? "@" : "", a.sun_path + abstract,
                 strerror(errno));
        close(s);
        return -1;
    }
    if (!abstract) {
        chmod(a.sun_path, 0600); /* connecting needs write permission: our user only */
        snprintf(lpath, sizeof lpath, "%s", a.sun_path);
    }
    return s;
}

/* wh_job_abort: the socket file goes with the job (async-signal-safe) */
static void abort_cleanup(void)
{
    if (lpath[0])
        unlink(lpath);
}

static int server_start(void)
{
    if (server_on)
        return 0;
    static int cleanup_set;
    if (!cleanup_set) {
        wh_job_on_abort(abort_cleanup);
        cleanup_set = 1;
    }
    lsock[0] = listen_on(0);
    lsock[1] = listen_on(1);
    if ((lsock[0] < 0 && lsock[1] < 0) || pipe2(stop_pipe, O_CLOEXEC)) {
        WH_WARN("cuda", "VMM IPC: no socket to serve file descriptors from: device buffers from cuMemCreate "
                        "memory are staged through host memory");
        return -1;
    }
    /* the thread must not take the application's signals */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&server, NULL, server_loop, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) {
        WH_WARN("cuda", "VMM IPC: cannot start the descriptor thread: %s", strerror(e));
        return -1;
    }
    server_on = 1;
    char ab[sizeof lpath] = "";
    struct sockaddr_un a;
    socklen_t len;
    if (lsock[1] >= 0 && !sock_addr(wh_job.rank, 1, &a, &len))
        snprintf(ab, sizeof ab, "@%s", a.sun_path + 1);
    WH_INFO("cuda", "VMM IPC: serving file descriptors on %s%s%s", lpath[0] ? lpath : "", lpath[0] && ab[0] ? " and " : "",
            ab);
    return 0;
}

/* close exported descriptors whose mapping is gone (the buffer id at their
 * base changed or the address is no device memory any more) */
static void sweep(void)
{
    for (int i = 0; i < EXPORTS; i++) {
        if (exports[i].fd < 0)
            continue;
        unsigned long long id = 0;
        if (wh_cu.cuPointerGetAttribute(&id, WH_CU_POINTER_ATTRIBUTE_BUFFER_ID, exports[i].base) == WH_CUDA_SUCCESS &&
            id == exports[i].id)
            continue;
        close(exports[i].fd);
        exports[i].fd = -1;
    }
}

wh_CUresult wh_cuda_vmm_export(const void *p, wh_cuda_ipc_t *out)
{
    static int init;
    if (!init) {
        for (int i = 0; i < EXPORTS; i++)
            exports[i].fd = -1;
        init = 1;
    }
    if (!wh_cuda_vmm_on())
        return WH_CUDA_ERROR_NOT_SUPPORTED;
    wh_CUdeviceptr dp = (wh_CUdeviceptr)(uintptr_t)p, base = 0;
    size_t size = 0;
    unsigned long long id = 0;
    /* the mapping holding p (cuMemGetAddressRange gives the mapped region) */
    wh_CUresult rc = wh_cu.cuMemGetAddressRange(&base, &size, dp);
    if (rc == WH_CUDA_SUCCESS)
        rc = wh_cu.cuPointerGetAttribute(&id, WH_CU_POINTER_ATTRIBUTE_BUFFER_ID, base);
    if (rc != WH_CUDA_SUCCESS)
        return rc;
    out->scheme = WH_CUDA_IPC_VMM;
    out->id = id;
    out->offset = dp - base;
    out->size = size;
    pthread_mutex_lock(&export_lock);
    for (int i = 0; i < EXPORTS; i++)
        if (exports[i].fd >= 0 && exports[i].id == id) {
            pthread_mutex_unlock(&export_lock);
            return WH_CUDA_SUCCESS; /* exported before */
        }
    pthread_mutex_unlock(&export_lock);
    wh_CUmemGenericAllocationHandle h = 0;
    rc = wh_cu.cuMemRetainAllocationHandle(&h, (void *)(uintptr_t)dp); /* fails for cuMemAlloc memory */
    if (rc != WH_CUDA_SUCCESS)
        return rc;
    wh_CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    int fd = -1;
    rc = wh_cu.cuMemGetAllocationPropertiesFromHandle(&prop, h);
    if (rc == WH_CUDA_SUCCESS && !(prop.requestedHandleTypes & WH_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        rc = WH_CUDA_ERROR_NOT_SUPPORTED; /* not created exportable as a file descriptor */
    if (rc == WH_CUDA_SUCCESS)
        rc = wh_cu.cuMemExportToShareableHandle(&fd, h, WH_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    wh_cu.cuMemRelease(h); /* the retained reference; the descriptor keeps its own */
    if (rc == WH_CUDA_SUCCESS && server_start()) {
        close(fd);
        rc = WH_CUDA_ERROR_OPERATING_SYSTEM;
    }
    if (rc != WH_CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&export_lock);
    sweep();
    int slot = -1;
    for (int i = 0; i < EXPORTS && slot < 0; i++)
        if (exports[i].fd < 0)
            slot = i;
    if (slot < 0) { /* full: the oldest goes */
        slot = export_next;
        export_next = (export_next + 1) % EXPORTS;
        close(exports[slot].fd);
    }
    exports[slot].id = id;
    exports[slot].base = base;
    exports[slot].size = size;
    exports[slot].fd = fd;
    pthread_mutex_unlock(&export_lock);
    WH_DEBUG("cuda", "VMM IPC: exported buffer %llu (%zu bytes) as a file descriptor", id, size);
    return WH_CUDA_SUCCESS;
}

/* ---- receiver: ask the sender for the descriptor, map it ---- */
static struct {
    int wpeer; /* -1: free */
    uint64_t id;
    wh_CUdeviceptr va;
    size_t size;
} imports[IMPORTS];
static int import_init, import_next;

static int fetch(int wpeer, uint64_t id, uint64_t *size)
{
    for (int abstract = 0; abstract < 2; abstract++) {
        struct sockaddr_un a;
        socklen_t len;
        if (sock_addr(wpeer, abstract, &a, &len))
            continue;
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
            return -1;
        struct timeval tv = {.tv_sec = 2};
        setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(s, (struct sockaddr *)&a, len)) {
            close(s);
            continue; /* not reachable this way (another mount or network namespace) */
        }
        vmm_msg_t m = {.magic = VMM_MAGIC, .id = id};
        union {
            char buf[CMSG_SPACE(sizeof(int))];
            struct cmsghdr align;
        } u;
        struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
        struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
        int fd = -1;
        if (send(s, &m, sizeof m, MSG_NOSIGNAL) == (ssize_t)sizeof m &&
            recvmsg(s, &h, MSG_CMSG_CLOEXEC) == (ssize_t)sizeof m && m.magic == VMM_MAGIC && m.status == 0) {
            struct cmsghdr *cm = CMSG_FIRSTHDR(&h);
            if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
                memcpy(&fd, CMSG_DATA(cm), sizeof fd);
        }
        close(s);
        if (fd >= 0)
            *size = m.size;
        return fd;
    }
    return -1;
}

static void unmap(int i)
{
    wh_cu.cuMemUnmap(imports[i].va, imports[i].size); /* copies are synchronous: nothing in flight */
    wh_cu.cuMemAddressFree(imports[i].va, imports[i].size);
    imports[i].wpeer = -1;
}

wh_CUresult wh_cuda_vmm_import(int wpeer, const wh_cuda_ipc_t *in, void **p)
{
    if (!import_init) {
        for (int i = 0; i < IMPORTS; i++)
            imports[i].wpeer = -1;
        import_init = 1;
    }
    if (!wh_cuda_vmm_on())
        return WH_CUDA_ERROR_NOT_SUPPORTED;
    for (int i = 0; i < IMPORTS; i++)
        if (imports[i].wpeer == wpeer && imports[i].id == in->id && in->offset < imports[i].size) {
            *p = (void *)(uintptr_t)(imports[i].va + in->offset);
            return WH_CUDA_SUCCESS;
        }
    /* the mapping's access is granted to the GPU of the current context */
    wh_CUcontext cur = NULL;
    wh_CUdevice dev = 0;
    wh_CUresult rc = wh_cu.cuCtxGetCurrent(&cur);
    if (rc == WH_CUDA_SUCCESS && !cur) {
        wh_CUcontext c = NULL;
        rc = wh_cu.cuDeviceGet(&dev, 0);
        if (rc == WH_CUDA_SUCCESS)
            rc = wh_cu.cuDevicePrimaryCtxRetain(&c, dev);
        if (rc == WH_CUDA_SUCCESS)
            rc = wh_cu.cuCtxSetCurrent(c);
    }
    if (rc == WH_CUDA_SUCCESS)
        rc = wh_cu.cuCtxGetDevice(&dev);
    if (rc != WH_CUDA_SUCCESS)
        return rc;
    uint64_t size = 0;
    int fd = fetch(wpeer, in->id, &size);
    if (fd < 0)
        return WH_CUDA_ERROR_OPERATING_SYSTEM;
    wh_CUmemGenericAllocationHandle h = 0;
    rc = wh_cu.cuMemImportFromShareableHandle(&h, (void *)(intptr_t)fd, WH_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    close(fd); /* the imported handle holds the memory */
    if (rc != WH_CUDA_SUCCESS)
        return rc;
    wh_CUdeviceptr va = 0;
    rc = wh_cu.cuMemAddressReserve(&va, (size_t)size, 0, 0, 0);
    if (rc == WH_CUDA_SUCCESS) {
        rc = wh_cu.cuMemMap(va, (size_t)size, 0, h, 0);
        if (rc != WH_CUDA_SUCCESS)
            wh_cu.cuMemAddressFree(va, (size_t)size);
    }
    wh_cu.cuMemRelease(h); /* the mapping keeps the memory */
    if (rc != WH_CUDA_SUCCESS)
        return rc;
    wh_CUmemAccessDesc acc = {.location = {.type = WH_CU_MEM_LOCATION_TYPE_DEVICE, .id = dev},
                              .flags = WH_CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    rc = wh_cu.cuMemSetAccess(va, (size_t)size, &acc, 1);
    if (rc != WH_CUDA_SUCCESS) { /* e.g. no peer path from this GPU to the memory */
        wh_cu.cuMemUnmap(va, (size_t)size);
        wh_cu.cuMemAddressFree(va, (size_t)size);
        return rc;
    }
    int slot = -1;
    for (int i = 0; i < IMPORTS && slot < 0; i++)
        if (imports[i].wpeer < 0)
            slot = i;
    if (slot < 0) {
        slot = import_next;
        import_next = (import_next + 1) % IMPORTS;
        unmap(slot);
    }
    imports[slot].wpeer = wpeer;
    imports[slot].id = in->id;
    imports[slot].va = va;
    imports[slot].size = (size_t)size;
    WH_DEBUG("cuda", "VMM IPC: mapped buffer %llu of rank %d (%llu bytes)", (unsigned long long)in->id, wpeer,
             (unsigned long long)size);
    if (in->offset >= size)
        return WH_CUDA_ERROR_INVALID_VALUE;
    *p = (void *)(uintptr_t)(va + in->offset);
    return WH_CUDA_SUCCESS;
}

void wh_cuda_vmm_finalize(void)
{
    if (import_init)
        for (int i = 0; i < IMPORTS; i++)
            if (imports[i].wpeer >= 0)
                unmap(i);
    if (server_on) {
        if (write(stop_pipe[1], "x", 1) != 1)
            WH_DEBUG("cuda", "VMM IPC: cannot wake the descriptor thread");
        pthread_join(server, NULL);
        server_on = 0;
    }
    for (int k = 0; k < 2; k++) {
        if (lsock[k] >= 0)
            close(lsock[k]);
        if (stop_pipe[k] >= 0)
            close(stop_pipe[k]);
        lsock[k] = stop_pipe[k] = -1;
    }
    if (lpath[0])
        unlink(lpath);
    lpath[0] = 0;
    pthread_mutex_lock(&export_lock);
    for (int i = 0; i < EXPORTS; i++)
        if (exports[i].fd >= 0) {
            close(exports[i].fd);
            exports[i].fd = -1;
        }
    pthread_mutex_unlock(&export_lock);
    setup_done = 0;
}
