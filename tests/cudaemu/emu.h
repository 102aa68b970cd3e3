/* cudaemu: an emulated CUDA driver (libcuda.so.1) for testing wharf on
 * machines without a GPU.  Every exported function is compiled against
 * NVIDIA's own cuda.h (fetched at build time), so the ABI is the real one.
 * See docs/GPU.md for what it models and what it does not. */
#ifndef CUDAEMU_EMU_H
#define CUDAEMU_EMU_H
#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define EMU_API __attribute__((visibility("default")))
#define EMU_MAX_DEV 16
#define EMU_IPC_MAGIC 0x43454d55u /* "CEMU" */

/* ---- devices (emu_core.c) ---- */
typedef struct emu_dev {
    int host_index;      /* index in the topology file (peer matrix) */
    unsigned char uuid[16];
    char pci[16];        /* "0000:3b:00.0" */
    int domain, bus, slot;
    int numa;
    size_t mem_total;
    _Atomic size_t mem_used;
    char name[64];
    struct CUctx_st *primary;
    int primary_refs;
    unsigned primary_flags;
} emu_dev_t;

extern emu_dev_t emu_devs[EMU_MAX_DEV];
extern int emu_ndev;
extern int emu_inited;
extern pthread_mutex_t emu_lock;

/* 1 if host GPUs a and b (topology indices) can access each other as peers */
int emu_peer_pair(int host_a, int host_b);

/* ---- contexts ---- */
struct CUctx_st {
    uint32_t magic;
    int dev;
    int primary;
    unsigned flags;
    struct CUstream_st *legacy; /* the legacy default stream */
    struct CUstream_st *streams; /* created streams (for legacy-stream implicit sync) */
};
#define EMU_CTX_MAGIC 0x43545831u
CUcontext emu_ctx_current(void);
/* the current context, or NULL with *rc set */
CUcontext emu_ctx_need(CUresult *rc);

/* ---- fault injection and timing ---- */
/* nonzero if the call named `fn` must fail now (CUDAEMU_FAIL="fn[@N],...") */
int emu_fault(const char *fn);
enum emu_path { EMU_H2D, EMU_D2H, EMU_D2D, EMU_P2P, EMU_D2D_STAGED, EMU_H2H };
/* the modeled duration of a copy (ns) */
uint64_t emu_model_ns(int path, size_t n);
uint64_t emu_now_ns(void);
void emu_wait_until(uint64_t t_ns);
uint64_t emu_spin_ns(void); /* waits up to this long are spun (CUDAEMU_WAIT_SPIN_US) */
unsigned emu_stream_delay_us(void);
/* CUDAEMU_ENGINE_POLL_US: how long an idle stream worker (a copy engine) polls for its next operation before it sleeps */
unsigned emu_engine_poll_us(void);

/* ---- memory (emu_mem.c) ---- */
enum emu_kind { EMU_DEVICE = 1, EMU_HOST_ALLOC, EMU_HOST_REG, EMU_IPC_MAPPED, EMU_VMM };
#define EMU_ACCESS 0x80000000u /* EMU_VMM: cuMemSetAccess granted read-write */
typedef struct emu_alloc {
    uintptr_t base;
    size_t size;  /* bytes asked for */
    size_t mapsz; /* bytes mapped (page multiple) */
    char *shadow; /* the emulator's own view of device memory */
    int kind;
    int dev;      /* device ordinal (device kinds) */
    CUcontext ctx;
    int fd;       /* memfd of device memory, -1 otherwise */
    uint64_t id;  /* buffer id (unique in the process) */
    unsigned flags;
    void *vmm;    /* EMU_VMM: the physical allocation mapped here */
    struct emu_alloc *next;
} emu_alloc_t;

void emu_add_alloc(emu_alloc_t *a);
/* unlink the record starting exactly at base with kind k1 or k2 */
emu_alloc_t *emu_take_alloc(uintptr_t base, int k1, int k2);
int emu_is_devkind(int kind);

/* The allocation containing [p, p+n) (NULL if none); caller holds no lock,
 * the record stays valid until freed by the application. */
emu_alloc_t *emu_find(uintptr_t p, size_t n);
/* Translate an address the application gave for a copy: device memory to
 * its shadow, host memory as is.  Returns NULL (rc set) if a device range
 * overflows its allocation. */
void *emu_xlate(uintptr_t p, size_t n, int *is_dev, int *dev, CUresult *rc);

/* ---- streams (emu_stream.c) ---- */
typedef struct emu_evstate {
    _Atomic uint64_t recorded; /* number of the latest record */
    _Atomic uint64_t done;     /* number of the latest completed record */
    _Atomic uint64_t t_ns;     /* completion time of `done` */
} emu_evstate_t;

struct CUevent_st {
    uint32_t magic;
    unsigned flags;
    emu_evstate_t *st;
    emu_evstate_t local;
    int fd; /* memfd of st for interprocess events, -1 otherwise */
    int opened; /* opened from an IPC handle */
    struct CUstream_st *rec_s; /* stream of the last record in this process (helping) */
    uint64_t rec_seq;
};
#define EMU_EV_MAGIC 0x45564e54u

void emu_ctx_sync(CUcontext ctx);
int emu_stream_attach(CUcontext ctx); /* creates the legacy stream of ctx */
void emu_stream_detach(CUcontext ctx);

/* Queue a copy of n bytes on stream s (NULL/legacy/per-thread: the current
 * context's legacy stream); sync: wait for it. */
CUresult emu_copy(uintptr_t dst, uintptr_t src, size_t n, CUstream s, int sync);
/* Queue fn(arg) on stream s (kernels run this way, emu_module.c); the stream
 * owns arg only in the sense that fn must free it. */
CUresult emu_enqueue_call(CUstream s, void (*fn)(void *), void *arg, int sync);
CUresult emu_memset(uintptr_t dst, unsigned char v, size_t n, CUstream s, int sync);
#endif
