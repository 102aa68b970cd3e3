/* The coordinator's device-buffer decisions (C-GDR, seed 000 §IV-B/C).
 *
 * Workload characterization tracing: per peer, device-buffer messages are
 * counted as blocking (MPI_Send, MPI_Recv, MPI_Sendrecv, MPI_Ssend...) or
 * nonblocking (MPI_Isend, MPI_Irecv, persistent); once WHARF_CUDA_TRACE_MIN
 * were seen, more nonblocking than blocking makes the peer
 * bandwidth-sensitive, else latency-sensitive (the counts halve every 32x
 * that many messages, so the class follows the application's phases).
 *
 * Each class has its own switch points between the device-buffer schemes
 * (gdrcopy, staged eager, staged fragments, pipeline, CUDA IPC): defaults from
 * the tunables, or a tuning file measured on the machine (wharf-info
 * --calibrate, WHARF_CUDA_TUNING).  The GPU locality of the pair (same GPU,
 * peer GPUs, visible without peer access, not visible) decides whether CUDA
 * IPC is tried at all. */
#ifndef WH_COORD_GPU_H
#define WH_COORD_GPU_H
#include <stddef.h>
#include <stdint.h>

enum { WH_GCLASS_LAT = 0, WH_GCLASS_BW, WH_GCLASS_MAX };
/* device-buffer schemes (per-peer counts, report) */
enum { WH_DS_GDR = 0, WH_DS_EAGER, WH_DS_STAGED, WH_DS_PIPE, WH_DS_IPC, WH_DS_MAX };
/* GPU relation of a peer (the sender's GPU as seen by this rank) */
enum { WH_GREL_UNKNOWN = 0, WH_GREL_NONE, WH_GREL_VISIBLE, WH_GREL_PEER, WH_GREL_SAME };
extern const char *const wh_gclass_names[WH_GCLASS_MAX];
extern const char *const wh_ds_names[WH_DS_MAX];
extern const char *const wh_grel_names[WH_GREL_SAME + 1];

#define WH_GSW_NEVER ((size_t)-1)
/* Switch points of one class (bytes). */
typedef struct wh_gsw {
    size_t gdr_d2h_max;  /* device-to-host copies up to this go through GDRCopy */
    size_t gdr_h2d_max;  /* host-to-device copies up to this go through GDRCopy */
    size_t eager_max;    /* device messages up to this are staged eager (capped by the channel) */
    size_t pipe_min;     /* rendezvous from this size: the pipeline (co-resident) */
    size_t ipc_min;      /* rendezvous from this size: CUDA IPC (co-resident, GPUs that reach) */
} wh_gsw_t;
extern wh_gsw_t wh_gsw[WH_GCLASS_MAX];
extern char wh_gsw_source[256]; /* "defaults" or the tuning file's path */

/* Tuning files (pure, unit-tested): parse text into t (keys not given keep
 * their values); 0, or -1 with a message naming the line. */
int wh_gsw_parse(const char *text, wh_gsw_t t[WH_GCLASS_MAX], char *err, size_t errlen);
/* Write t as a tuning file body (comment: optional lines starting with '#'). */
int wh_gsw_write(const char *path, const wh_gsw_t t[WH_GCLASS_MAX], const char *comment);
/* Set both classes to force one scheme (WHARF_CUDA_SCHEME names; "auto": no-op); -1 unknown name. */
int wh_gsw_force(wh_gsw_t t[WH_GCLASS_MAX], const char *scheme);
/* The rendezvous scheme (WH_DS_STAGED/PIPE/IPC) for n bytes with the pair's abilities. */
int wh_gsw_rndv(const wh_gsw_t *sw, size_t n, int ipc_ok, int pipe_ok);
/* Switch points of one class fitted to a measured table (pure): t[k * ns +
 * i] = time per message of scheme k (WH_DS_*, each forced) at sizes[i]
 * (ascending; INFINITY: the scheme cannot be used there).  Of every policy
 * the switch points can express (each one 0, never or a measured size), the
 * one whose times lose least to the best scheme, summed over the sizes as
 * relative excess (time / best - 1): one noisy size moves a switch point
 * only as far as its share of the total, not past every size beyond it. */
void wh_gsw_fit(const double *t, const size_t *sizes, int ns, wh_gsw_t *out);
/* Classify counts (pure): the class with trace_min messages needed. */
int wh_gtrace_class(uint32_t blk, uint32_t nb, int trace_min);

/* Per peer (world rank), allocated at init when a driver is loaded. */
typedef struct wh_gpeer {
    uint32_t blk, nb;          /* device messages, blocking / nonblocking (halved now and then) */
    uint64_t tblk, tnb;        /* totals, for the report */
    uint8_t cls;               /* WH_GCLASS_* */
    uint8_t rel;               /* WH_GREL_*, computed on first use */
    uint8_t rel_done;
    uint8_t other_pidns;       /* the peer is in another PID namespace (legacy CUDA IPC cannot work) */
    uint64_t msgs[WH_DS_MAX];  /* messages per scheme (decided here) */
} wh_gpeer_t;
extern wh_gpeer_t *wh_gpeers;

int wh_gpu_coord_init(void);     /* after the channels: switch points, my GPU in the registry */
void wh_gpu_coord_finalize(void);
/* Count a device-buffer message with wpeer (how: WH_TRACE_*); the switch
 * points of its class, with the GDRCopy limits applied for the copies that follow. */
const wh_gsw_t *wh_gpu_trace(int wpeer, int how);
int wh_gpu_rel(int wpeer);
/* the scheme a message with wpeer took (decided here) */
static inline void wh_gpu_note(int wpeer, int ds)
{
    if (wh_gpeers)
        wh_gpeers[wpeer].msgs[ds]++;
}
void wh_gpu_report(void);        /* WHARF_REPORT=gpu, at finalize */
/* Recompute my registry GPU record and forget the relations (after the
 * application made a context current; wharf-info --calibrate). */
void wh_gpu_refresh(void);
#endif
