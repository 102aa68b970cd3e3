/* cudaemu: legacy CUDA IPC across processes.  The parent exports a device
 * buffer and an interprocess event; a child process (exec'ed: CUDA does not
 * survive fork) opens both on a peer GPU, waits for the event, checks the
 * data and writes back.  A handle of freed memory, an open in the same
 * process and an open from another PID namespace are refused. */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_common.h"

F(cuInit); F(cuDeviceGet); F(cuDevicePrimaryCtxRetain); F(cuCtxSetCurrent); F(cuMemAlloc); F(cuMemFree);
F(cuMemcpyHtoD); F(cuMemcpyDtoH); F(cuMemsetD8Async); F(cuStreamCreate); F(cuStreamSynchronize);
F(cuEventCreate); F(cuEventRecord); F(cuEventSynchronize); F(cuIpcGetMemHandle); F(cuIpcOpenMemHandle);
F(cuIpcCloseMemHandle); F(cuIpcGetEventHandle); F(cuIpcOpenEventHandle); F(cuEventDestroy);

enum { N = 1 << 20, HALF = N / 2 };

static void load_all(void)
{
    t_load();
    LOAD(cuInit); LOAD(cuDeviceGet); LOAD(cuDevicePrimaryCtxRetain); LOAD(cuCtxSetCurrent); LOAD(cuMemAlloc);
    LOAD(cuMemFree); LOAD(cuMemcpyHtoD); LOAD(cuMemcpyDtoH); LOAD(cuMemsetD8Async); LOAD(cuStreamCreate);
    LOAD(cuStreamSynchronize); LOAD(cuEventCreate); LOAD(cuEventRecord); LOAD(cuEventSynchronize);
    LOAD(cuIpcGetMemHandle); LOAD(cuIpcOpenMemHandle); LOAD(cuIpcCloseMemHandle); LOAD(cuIpcGetEventHandle);
    LOAD(cuIpcOpenEventHandle); LOAD(cuEventDestroy);
}

static void hex(const void *p, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", ((const unsigned char *)p)[i]);
}

static void unhex(const char *s, void *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v = 0;
        sscanf(s + 2 * i, "%2x", &v);
        ((unsigned char *)p)[i] = (unsigned char)v;
    }
}

static CUcontext ctx_on(int ordinal)
{
    CUdevice dev;
    CUcontext ctx = NULL;
    CK(p_cuDeviceGet(&dev, ordinal));
    CK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(p_cuCtxSetCurrent(ctx));
    return ctx;
}

static int child(const char *mode, const char *ha, const char *hb, const char *he)
{
    load_all();
    CK(p_cuInit(0));
    ctx_on(1); /* the peer GPU of the parent's */
    CUipcMemHandle a, b;
    CUipcEventHandle e;
    unhex(ha, &a, sizeof a);
    unhex(hb, &b, sizeof b);
    unhex(he, &e, sizeof e);
    CUdeviceptr pa = 0;
    if (!strcmp(mode, "otherns")) {
        CHECK(p_cuIpcOpenMemHandle(&pa, a, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == CUDA_ERROR_INVALID_CONTEXT);
        CUevent ev;
        CHECK(p_cuIpcOpenEventHandle(&ev, e) == CUDA_ERROR_INVALID_CONTEXT);
        return t_fail != 0;
    }
    CHECK(p_cuIpcOpenMemHandle(&pa, a, 0) == CUDA_ERROR_PEER_ACCESS_UNSUPPORTED); /* other GPU, no flag */
    CK(p_cuIpcOpenMemHandle(&pa, a, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    CUevent ev;
    CK(p_cuIpcOpenEventHandle(&ev, e));
    CK(p_cuEventSynchronize(ev)); /* the parent's memset is done */
    unsigned char *h = malloc(N);
    CK(p_cuMemcpyDtoH(h, pa, N));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += h[i] != (i < HALF ? (unsigned char)(i % 251) : 0x77);
    CHECK(bad == 0);
    memset(h, 0x55, 100);
    CK(p_cuMemcpyHtoD(pa, h, 100));
    CK(p_cuIpcCloseMemHandle(pa));
    CUdeviceptr pb = 0;
    CHECK(p_cuIpcOpenMemHandle(&pb, b, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == CUDA_ERROR_INVALID_HANDLE);
    CK(p_cuEventDestroy(ev));
    free(h);
    return t_fail != 0;
}

static int run_child(const char *self, const char *mode, char *ha, char *hb, char *he, int newns)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (newns) {
            if (unshare(CLONE_NEWPID)) {
                fprintf(stderr, "unshare(CLONE_NEWPID): %s: skipping the PID namespace case\n", strerror(errno));
                _exit(77);
            }
            pid_t c = fork(); /* the first child of the new namespace */
            if (c == 0) {
                execl(self, self, mode, ha, hb, he, (char *)NULL);
                _exit(127);
            }
            int st = 0;
            waitpid(c, &st, 0);
            _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 126);
        }
        execl(self, self, mode, ha, hb, he, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 126;
}

int main(int argc, char **argv)
{
    if (argc == 5)
        return child(argv[1], argv[2], argv[3], argv[4]);
    load_all();
    CK(p_cuInit(0));
    ctx_on(0);
    CUdeviceptr a, b;
    CK(p_cuMemAlloc(&a, N));
    CK(p_cuMemAlloc(&b, 4096));
    unsigned char *h = malloc(N);
    for (int i = 0; i < N; i++)
        h[i] = (unsigned char)(i % 251);
    CK(p_cuMemcpyHtoD(a, h, N));
    CUipcMemHandle ha, hb;
    CK(p_cuIpcGetMemHandle(&ha, a));
    CK(p_cuIpcGetMemHandle(&hb, b));
    CK(p_cuMemFree(b)); /* hb now names freed memory */
    CUevent ev;
    CHECK(p_cuEventCreate(&ev, CU_EVENT_INTERPROCESS) == CUDA_ERROR_INVALID_VALUE); /* needs DISABLE_TIMING */
    CK(p_cuEventCreate(&ev, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
    CUipcEventHandle he;
    CK(p_cuIpcGetEventHandle(&he, ev));
    CUstream s;
    CK(p_cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(p_cuMemsetD8Async(a + HALF, 0x77, HALF, s)); /* delayed: the child must wait for the event */
    CK(p_cuEventRecord(ev, s));
    char xa[200], xb[200], xe[200];
    hex(&ha, sizeof ha, xa);
    hex(&hb, sizeof hb, xb);
    hex(&he, sizeof he, xe);
    int rc = run_child(argv[0], "peer", xa, xb, xe, 0);
    CHECK(rc == 0);
    CK(p_cuMemcpyDtoH(h, a, 200));
    CHECK(h[0] == 0x55 && h[99] == 0x55 && h[100] == 100);
    rc = run_child(argv[0], "otherns", xa, xb, xe, 1);
    if (rc == 77)
        printf("PID namespace case skipped (no permission)\n");
    else
        CHECK(rc == 0);
    CK(p_cuStreamSynchronize(s));
    CK(p_cuEventDestroy(ev));
    CK(p_cuMemFree(a));
    free(h);
    printf("cudaemu ipc: %s (%d failed checks)\n", t_fail ? "FAILED" : "ok", t_fail);
    return t_fail != 0;
}
