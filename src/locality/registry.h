/* The node registry (seeds 003 §IV-B, 001 §III-B): a job-scoped header, a tag
 * per global rank (one byte: 1 = present in this region) and a record slot
 * per present rank, all inside the node region.  Lock-free: each rank takes a
 * slot with one atomic increment, fills its record, publishes it, sets its tag;
 * after a PMI barrier the tags present in my region are my co-residents. */
#ifndef WH_LOCALITY_REGISTRY_H
#define WH_LOCALITY_REGISTRY_H
#include <stdint.h>

#define WH_REG_MAGIC 0x7768726567697331ULL /* "whregis1" */
#define WH_REG_VERSION 1

enum { WH_NS_PID, WH_NS_IPC, WH_NS_MNT, WH_NS_NET, WH_NS_USER, WH_NS_UTS, WH_NS_CGROUP, WH_NS_MAX };

/* What a rank publishes about itself (one slot, 1 KiB). */
typedef struct wh_reg_rec {
    uint32_t ready;          /* 1 once the record is complete (release) */
    int32_t rank;            /* world rank */
    int32_t pid;             /* in the rank's own PID namespace */
    uint32_t uid;
    uint64_t ns[WH_NS_MAX];  /* namespace inodes (0: unknown) */
    uint64_t region_dev, region_ino; /* the region as this rank sees it */
    int32_t numa;            /* NUMA node of the CPU at init (-1 unknown) */
    int32_t ncpus;           /* CPUs in its cpuset */
    uint64_t cma_addr;       /* probe word for process_vm_readv */
    uint64_t cma_cookie;
    uint32_t shm_state;      /* 0 unknown, 1 queues ready, 2 shm failed here */
    uint32_t pad;
    char boot_id[40];
    char hostname[64];
    char cpuset[256];        /* e.g. "0-3,8" */
    char gpu[512];           /* its GPUs (wh_cuda_describe), written by the coordinator at init; "" none */
    unsigned char spare[1024 - 480 - 512];
} wh_reg_rec_t;

typedef struct wh_reg_hdr {
    uint64_t magic;          /* WH_REG_MAGIC once initialized */
    uint64_t owner;          /* job nonce that initialized it (fixed provider claim) */
    uint64_t ready;          /* = owner when the header is valid */
    uint32_t version;
    uint32_t world_size;
    uint32_t slot_cap;
    uint32_t nslots;         /* taken slots (atomic) */
    uint64_t tags_off, slots_off, reg_len;
    char job[64];
} wh_reg_hdr_t;

_Static_assert(sizeof(wh_reg_rec_t) == 1024, "registry record must stay 1 KiB");
#endif
