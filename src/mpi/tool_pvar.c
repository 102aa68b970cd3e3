/* MPI_T performance variables, their sessions, and events (MPI-4.1
 * sections 15.3.7-15.3.8).
 *
 * The performance variables are the counters behind WHARF_REPORT=channels:
 * for every channel and protocol, messages ("wharf_<chan>_<proto>_msgs") and
 * bytes ("..._bytes"), MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
 * continuous (always counting: start/stop return MPI_T_ERR_PVAR_NO_STARTSTOP),
 * not read-only: a handle reads the counter relative to its own base, which
 * MPI_T_pvar_reset/readreset/write move, so sessions never disturb each other
 * or the report.  wharf defines no events: the event calls see no valid index
 * or handle. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord/coord.h"
#include "mpi/api.h"
#include "mpi/tool.h"

/* ---------- the variables ---------- */

enum { MAXPV = 2 * WH_CHAN_MAX * WH_PROTO_MAX };
typedef struct pvar {
    char name[64];
    int chan, proto, bytes; /* proto: the first protocol of that report name (same-named ones are summed) */
} pvar_t;
static pvar_t pvars[MAXPV];
static int npv = -1;
static pthread_mutex_t pv_lock = PTHREAD_MUTEX_INITIALIZER;

static void pv_build(void)
{
    pthread_mutex_lock(&pv_lock);
    if (npv < 0) {
        int n = 0;
        for (int c = 0; c < WH_CHAN_MAX; c++)
            for (int p = 0; p < WH_PROTO_MAX; p++) {
                int first = p != WH_PROTO_RNDV; /* counted where the receiver decides */
                for (int q = 0; q < p && first; q++)
                    if (q != WH_PROTO_RNDV && !strcmp(wh_proto_names[q], wh_proto_names[p]))
                        first = 0;
                for (int b = 0; first && b < 2; b++, n++) {
                    snprintf(pvars[n].name, sizeof pvars[n].name, "wharf_%s_%s_%s", wh_chans[c]->name,
                             wh_proto_names[p], b ? "bytes" : "msgs");
                    for (char *s = pvars[n].name; *s; s++)
                        if (*s == '-')
                            *s = '_';
                    pvars[n].chan = c, pvars[n].proto = p, pvars[n].bytes = b;
                }
            }
        npv = n;
    }
    pthread_mutex_unlock(&pv_lock);
}

int wh_t_pvar_count(void)
{
    pv_build();
    return npv;
}

const char *wh_t_pvar_name(int i)
{
    return pvars[i].name;
}

int wh_t_pvar_chan(int i)
{
    return pvars[i].chan;
}

static unsigned long long pv_value(const pvar_t *v)
{
    unsigned long long s = 0;
    for (int q = v->proto; q < WH_PROTO_MAX; q++)
        if (q != WH_PROTO_RNDV && !strcmp(wh_proto_names[q], wh_proto_names[v->proto]))
            s += __atomic_load_n(v->bytes ? &wh_coord_bytes[v->chan][q] : &wh_coord_count[v->chan][q],
                                 __ATOMIC_RELAXED);
    return s;
}

static int body_T_pvar_get_num(int *num_pvar)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (!num_pvar)
        return MPI_T_ERR_INVALID;
    *num_pvar = wh_t_pvar_count();
    return MPI_SUCCESS;
}

static int body_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                                MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind,
                                int *readonly, int *continuous, int *atomic)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (pvar_index < 0 || pvar_index >= wh_t_pvar_count())
        return MPI_T_ERR_INVALID_INDEX;
    const pvar_t *v = &pvars[pvar_index];
    char d[160];
    snprintf(d, sizeof d, "%s this process sent through the %s channel by the %s protocol",
             v->bytes ? "Bytes" : "Messages", wh_chans[v->chan]->name, wh_proto_names[v->proto]);
    wh_t_str(v->name, name, name_len);
    wh_t_str(d, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_USER_BASIC;
    if (var_class)
        *var_class = MPI_T_PVAR_CLASS_COUNTER;
    if (datatype)
        *datatype = MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (readonly)
        *readonly = 0;
    if (continuous)
        *continuous = 1;
    if (atomic)
        *atomic = 1;
    return MPI_SUCCESS;
}

static int body_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (!name || !pvar_index)
        return MPI_T_ERR_INVALID;
    if (var_class == MPI_T_PVAR_CLASS_COUNTER)
        for (int i = 0; i < wh_t_pvar_count(); i++)
            if (!strcmp(pvars[i].name, name)) {
                *pvar_index = i;
                return MPI_SUCCESS;
            }
    return MPI_T_ERR_INVALID_NAME;
}

/* ---------- sessions and handles ---------- */

struct wharf_T_pvar_handle {
    struct wharf_T_pvar_handle *next;
    int index;
    unsigned long long base; /* counter value that reads as 0 */
};
struct wharf_T_pvar_session {
    struct wharf_T_pvar_session *next;
    struct wharf_T_pvar_handle *handles;
};
static struct wharf_T_pvar_session *sessions;
static char all_handles_tag;
struct wharf_T_pvar_handle *const MPI_T_PVAR_ALL_HANDLES = (struct wharf_T_pvar_handle *)&all_handles_tag;

static struct wharf_T_pvar_session **find_session(MPI_T_pvar_session s)
{
    struct wharf_T_pvar_session **pp = &sessions;
    while (*pp && *pp != s)
        pp = &(*pp)->next;
    return *pp ? pp : NULL;
}

static struct wharf_T_pvar_handle **find_handle(struct wharf_T_pvar_session *s, MPI_T_pvar_handle h)
{
    struct wharf_T_pvar_handle **pp = &s->handles;
    while (*pp && *pp != h)
        pp = &(*pp)->next;
    return *pp ? pp : NULL;
}

static int body_T_pvar_session_create(MPI_T_pvar_session *session)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (!session)
        return MPI_T_ERR_INVALID;
    struct wharf_T_pvar_session *s = calloc(1, sizeof *s);
    if (!s)
        return MPI_T_ERR_OUT_OF_SESSIONS;
    pthread_mutex_lock(&pv_lock);
    s->next = sessions;
    sessions = s;
    pthread_mutex_unlock(&pv_lock);
    *session = s;
    return MPI_SUCCESS;
}

static int body_T_pvar_session_free(MPI_T_pvar_session *session)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (!session)
        return MPI_T_ERR_INVALID;
    pthread_mutex_lock(&pv_lock);
    struct wharf_T_pvar_session **pp = find_session(*session), *s = pp ? *pp : NULL;
    if (s)
        *pp = s->next;
    pthread_mutex_unlock(&pv_lock);
    if (!s)
        return MPI_T_ERR_INVALID_SESSION;
    while (s->handles) {
        struct wharf_T_pvar_handle *h = s->handles;
        s->handles = h->next;
        free(h);
    }
    free(s);
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}

static int body_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                                    MPI_T_pvar_handle *handle, int *count)
{
    (void)obj_handle; /* bound to no object */
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (pvar_index < 0 || pvar_index >= wh_t_pvar_count())
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    struct wharf_T_pvar_handle *h = malloc(sizeof *h);
    if (!h)
        return MPI_T_ERR_OUT_OF_HANDLES;
    h->index = pvar_index;
    h->base = 0; /* a continuous counter counts from the start of the process */
    pthread_mutex_lock(&pv_lock);
    struct wharf_T_pvar_session **sp = find_session(session);
    if (sp) {
        h->next = (*sp)->handles;
        (*sp)->handles = h;
    }
    pthread_mutex_unlock(&pv_lock);
    if (!sp) {
        free(h);
        return MPI_T_ERR_INVALID_SESSION;
    }
    *handle = h;
    *count = 1;
    return MPI_SUCCESS;
}

static int body_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (!handle)
        return MPI_T_ERR_INVALID;
    pthread_mutex_lock(&pv_lock);
    struct wharf_T_pvar_session **sp = find_session(session);
    struct wharf_T_pvar_handle **hp = sp ? find_handle(*sp, *handle) : NULL, *h = hp ? *hp : NULL;
    if (h)
        *hp = h->next;
    pthread_mutex_unlock(&pv_lock);
    if (!sp)
        return MPI_T_ERR_INVALID_SESSION;
    if (!h)
        return MPI_T_ERR_INVALID_HANDLE;
    free(h);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

/* op on one handle (or every handle of the session with MPI_T_PVAR_ALL_HANDLES where allowed) */
enum { OP_READ, OP_WRITE, OP_RESET, OP_READRESET, OP_START, OP_STOP };
static int pvar_op(MPI_T_pvar_session session, MPI_T_pvar_handle handle, int op, void *buf)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    pthread_mutex_lock(&pv_lock);
    struct wharf_T_pvar_session **sp = find_session(session);
    if (!sp)
        rc = MPI_T_ERR_INVALID_SESSION;
    else if (handle == MPI_T_PVAR_ALL_HANDLES) {
        if (op == OP_RESET)
            for (struct wharf_T_pvar_handle *h = (*sp)->handles; h; h = h->next)
                h->base = pv_value(&pvars[h->index]);
        else if (op != OP_START && op != OP_STOP)
            rc = MPI_T_ERR_INVALID_HANDLE; /* reads and writes name one handle */
        /* start/stop of every handle: all are continuous, nothing to do */
    } else {
        struct wharf_T_pvar_handle **hp = find_handle(*sp, handle);
        if (!hp)
            rc = MPI_T_ERR_INVALID_HANDLE;
        else if (op == OP_START || op == OP_STOP)
            rc = MPI_T_ERR_PVAR_NO_STARTSTOP;
        else if (!buf && op != OP_RESET)
            rc = MPI_T_ERR_INVALID;
        else {
            struct wharf_T_pvar_handle *h = *hp;
            unsigned long long now = pv_value(&pvars[h->index]), v;
            if (op == OP_READ || op == OP_READRESET) {
                v = now - h->base;
                memcpy(buf, &v, sizeof v);
            }
            if (op == OP_RESET || op == OP_READRESET)
                h->base = now;
            if (op == OP_WRITE) {
                memcpy(&v, buf, sizeof v);
                h->base = now - v;
            }
        }
    }
    pthread_mutex_unlock(&pv_lock);
    return rc;
}

static int body_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    return pvar_op(session, handle, OP_READ, buf);
}

static int body_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    return pvar_op(session, handle, OP_READRESET, buf);
}

static int body_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    return pvar_op(session, handle, OP_WRITE, (void *)(uintptr_t)buf);
}

static int body_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_op(session, handle, OP_RESET, NULL);
}

static int body_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_op(session, handle, OP_START, NULL);
}

static int body_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_op(session, handle, OP_STOP, NULL);
}

/* ---------- events: wharf defines none ---------- */

static int no_event_index(void)
{
    int rc = wh_t_ready();
    return rc ? rc : MPI_T_ERR_INVALID_INDEX;
}

static int no_event_handle(void)
{
    int rc = wh_t_ready();
    return rc ? rc : MPI_T_ERR_INVALID_HANDLE;
}

static int body_T_event_get_num(int *num_events)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = 0;
    return MPI_SUCCESS;
}

static int body_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                                 MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                                 int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc, int *desc_len,
                                 int *bind)
{
    (void)event_index, (void)name, (void)name_len, (void)verbosity, (void)array_of_datatypes;
    (void)array_of_displacements, (void)num_elements, (void)enumtype, (void)info, (void)desc, (void)desc_len, (void)bind;
    return no_event_index();
}

static int body_T_event_get_index(const char *name, int *event_index)
{
    (void)name, (void)event_index;
    int rc = wh_t_ready();
    return rc ? rc : MPI_T_ERR_INVALID_NAME;
}

static int body_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                                     MPI_T_event_registration *event_registration)
{
    (void)event_index, (void)obj_handle, (void)info, (void)event_registration;
    return no_event_index();
}

static int body_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                                    MPI_T_event_free_cb_function free_cb_function)
{
    (void)event_registration, (void)user_data, (void)free_cb_function;
    return no_event_handle();
}

static int body_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used)
{
    (void)event_registration, (void)info_used;
    return no_event_handle();
}

static int body_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    (void)event_registration, (void)info;
    return no_event_handle();
}

static int body_T_event_register_callback(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                          MPI_Info info, void *user_data, MPI_T_event_cb_function event_cb_function)
{
    (void)event_registration, (void)cb_safety, (void)info, (void)user_data, (void)event_cb_function;
    return no_event_handle();
}

static int body_T_event_callback_get_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                          MPI_Info *info_used)
{
    (void)event_registration, (void)cb_safety, (void)info_used;
    return no_event_handle();
}

static int body_T_event_callback_set_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                          MPI_Info info)
{
    (void)event_registration, (void)cb_safety, (void)info;
    return no_event_handle();
}

static int body_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                            MPI_T_event_dropped_cb_function dropped_cb_function)
{
    (void)event_registration, (void)dropped_cb_function;
    return no_event_handle();
}

static int body_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    (void)event_instance, (void)element_index, (void)buffer;
    return no_event_handle();
}

static int body_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    (void)event_instance, (void)buffer;
    return no_event_handle();
}

static int body_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    (void)event_instance, (void)event_timestamp;
    return no_event_handle();
}

static int body_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    (void)event_instance, (void)source_index;
    return no_event_handle();
}

#include "entry/tool_pvar.h"
