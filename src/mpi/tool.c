/* The MPI tool information interface (MPI-4.1 chapter 15): initialization,
 * control variables, categories, enumerations and event sources.
 *
 * Control variables are wharf's tunables (src/util/tunables.def), named as
 * their environment variables (WHARF_SHM_EAGER_MAX ...): MPI_INT for int
 * and bool tunables, MPI_UNSIGNED_LONG for sizes, MPI_CHAR for strings
 * (count = the longest value plus its NUL).  They are read when the library
 * initializes, so their scope is MPI_T_SCOPE_READONLY and MPI_T_cvar_write
 * returns MPI_T_ERR_CVAR_SET_NEVER; reads return the value in use.
 * Categories group them by the first word of their name (shm, net, coll,
 * cuda, ...) and the performance variables by channel (tool_pvar.c).
 * wharf raises no events (MPI_T_event_get_num is 0) and has one source, its
 * monotonic clock in nanoseconds. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chan/chan.h"
#include "mpi/api.h"
#include "mpi/tool.h"
#include "util/tunables.h"

static pthread_mutex_t t_lock = PTHREAD_MUTEX_INITIALIZER;
static int t_refs;

int wh_t_ready(void)
{
    return __atomic_load_n(&t_refs, __ATOMIC_ACQUIRE) > 0 ? MPI_SUCCESS : MPI_T_ERR_NOT_INITIALIZED;
}

void wh_t_str(const char *src, char *dst, int *len)
{
    if (!len)
        return;
    if (!src)
        src = "";
    if (!dst || *len <= 0) {
        *len = (int)strlen(src) + 1;
        return;
    }
    size_t n = strlen(src);
    if (n > (size_t)*len - 1)
        n = (size_t)*len - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
    *len = (int)n + 1;
}

static int body_T_init_thread(int required, int *provided)
{
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return MPI_T_ERR_INVALID;
    if (!provided)
        return MPI_T_ERR_INVALID;
    pthread_mutex_lock(&t_lock);
    if (t_refs == 0 && !wh_job.initialized) { /* before MPI_Init: the values the environment sets */
        char err[256];
        (void)wh_tunables_load(err, sizeof err); /* a bad value keeps its default; MPI_Init reports it */
    }
    __atomic_store_n(&t_refs, t_refs + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&t_lock);
    *provided = required; /* the interface is thread safe (its own lock) */
    return MPI_SUCCESS;
}

static int body_T_finalize(void)
{
    pthread_mutex_lock(&t_lock);
    int rc = t_refs > 0 ? MPI_SUCCESS : MPI_T_ERR_NOT_INITIALIZED;
    if (t_refs > 0)
        __atomic_store_n(&t_refs, t_refs - 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&t_lock);
    return rc;
}

/* ---------- control variables ---------- */

enum { STR_COUNT = 4096 }; /* buffer a string cvar needs (the longest value, NUL included) */

struct wharf_T_cvar_handle {
    struct wharf_T_cvar_handle *next;
    int index;
};
static struct wharf_T_cvar_handle *cvar_handles;

static int cvar_ok(int i)
{
    return i >= 0 && i < wh_tunable_count;
}

static MPI_Datatype cvar_type(const wh_tunable_desc_t *d)
{
    switch (d->type) {
    case WH_TT_SIZE: return MPI_UNSIGNED_LONG;
    case WH_TT_STR: return MPI_CHAR;
    default: return MPI_INT;
    }
}

static int body_T_cvar_get_num(int *num_cvar)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (!num_cvar)
        return MPI_T_ERR_INVALID;
    *num_cvar = wh_tunable_count;
    return MPI_SUCCESS;
}

static int body_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
                                MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (!cvar_ok(cvar_index))
        return MPI_T_ERR_INVALID_INDEX;
    const wh_tunable_desc_t *d = &wh_tunable_descs[cvar_index];
    char full[128];
    snprintf(full, sizeof full, "WHARF_%s", d->name);
    wh_t_str(full, name, name_len);
    wh_t_str(d->doc, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
    if (datatype)
        *datatype = cvar_type(d);
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = MPI_T_SCOPE_READONLY;
    return MPI_SUCCESS;
}

static int body_T_cvar_get_index(const char *name, int *cvar_index)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (!name || !cvar_index)
        return MPI_T_ERR_INVALID;
    if (!strncmp(name, "WHARF_", 6))
        for (int i = 0; i < wh_tunable_count; i++)
            if (!strcmp(name + 6, wh_tunable_descs[i].name)) {
                *cvar_index = i;
                return MPI_SUCCESS;
            }
    return MPI_T_ERR_INVALID_NAME;
}

static int body_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count)
{
    (void)obj_handle; /* every cvar binds to no object */
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (!cvar_ok(cvar_index))
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    struct wharf_T_cvar_handle *h = malloc(sizeof *h);
    if (!h)
        return MPI_T_ERR_MEMORY;
    h->index = cvar_index;
    pthread_mutex_lock(&t_lock);
    h->next = cvar_handles;
    cvar_handles = h;
    pthread_mutex_unlock(&t_lock);
    *handle = h;
    *count = wh_tunable_descs[cvar_index].type == WH_TT_STR ? STR_COUNT : 1;
    return MPI_SUCCESS;
}

/* the live handle h (unlinked if unlink), or NULL */
static struct wharf_T_cvar_handle *cvar_find(MPI_T_cvar_handle h, int unlink)
{
    pthread_mutex_lock(&t_lock);
    struct wharf_T_cvar_handle **pp = &cvar_handles;
    while (*pp && *pp != h)
        pp = &(*pp)->next;
    struct wharf_T_cvar_handle *f = *pp;
    if (f && unlink)
        *pp = f->next;
    pthread_mutex_unlock(&t_lock);
    return f;
}

static int body_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (!handle)
        return MPI_T_ERR_INVALID;
    struct wharf_T_cvar_handle *h = cvar_find(*handle, 1);
    if (!h)
        return MPI_T_ERR_INVALID_HANDLE;
    free(h);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

static int body_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    struct wharf_T_cvar_handle *h = cvar_find(handle, 0);
    if (!h)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    const wh_tunable_desc_t *d = &wh_tunable_descs[h->index];
    const char *field = (const char *)&wh_tun + d->offset;
    switch (d->type) {
    case WH_TT_SIZE: {
        size_t v;
        memcpy(&v, field, sizeof v);
        unsigned long u = (unsigned long)v;
        memcpy(buf, &u, sizeof u);
        break;
    }
    case WH_TT_STR: {
        const char *s;
        memcpy(&s, field, sizeof s);
        int len = STR_COUNT;
        wh_t_str(s ? s : "", buf, &len);
        break;
    }
    default:
        memcpy(buf, field, sizeof(int));
    }
    return MPI_SUCCESS;
}

static int body_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (!cvar_find(handle, 0))
        return MPI_T_ERR_INVALID_HANDLE;
    (void)buf;
    return MPI_T_ERR_CVAR_SET_NEVER; /* read at initialization (MPI_T_SCOPE_READONLY) */
}

/* ---------- enumerations: none ---------- */

static int body_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    (void)enumtype, (void)num, (void)name, (void)name_len;
    int rc = wh_t_ready();
    return rc ? rc : MPI_T_ERR_INVALID_HANDLE;
}

static int body_T_enum_get_item(MPI_T_enum enumtype, int indx, int *value, char *name, int *name_len)
{
    (void)enumtype, (void)indx, (void)value, (void)name, (void)name_len;
    int rc = wh_t_ready();
    return rc ? rc : MPI_T_ERR_INVALID_HANDLE;
}

/* ---------- categories ----------
 * Category k < ncvcat: the cvars whose name starts with its word; then one
 * category per channel holding that channel's performance variables. */

enum { MAXCAT = 64 };
static char cat_words[MAXCAT][24];
static int ncvcat = -1;

static void word_of(const char *name, char *w, size_t cap)
{
    size_t n = strcspn(name, "_");
    if (n >= cap)
        n = cap - 1;
    for (size_t i = 0; i < n; i++)
        w[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i]);
    w[n] = '\0';
}

static void cats_build(void)
{
    pthread_mutex_lock(&t_lock);
    if (ncvcat < 0) {
        int n = 0;
        for (int i = 0; i < wh_tunable_count; i++) {
            char w[24];
            word_of(wh_tunable_descs[i].name, w, sizeof w);
            int k = 0;
            while (k < n && strcmp(cat_words[k], w))
                k++;
            if (k == n && n < MAXCAT)
                memcpy(cat_words[n++], w, sizeof w);
        }
        ncvcat = n;
    }
    pthread_mutex_unlock(&t_lock);
}

static int ncats(void)
{
    cats_build();
    return ncvcat + WH_CHAN_MAX;
}

/* cvars (cvars = 1) or pvars of category c into idx[0..len) (idx may be NULL); their number */
static int cat_members(int c, int cvars, int len, int *idx)
{
    int n = 0;
    if (cvars && c < ncvcat) {
        for (int i = 0; i < wh_tunable_count; i++) {
            char w[24];
            word_of(wh_tunable_descs[i].name, w, sizeof w);
            if (!strcmp(w, cat_words[c])) {
                if (idx && n < len)
                    idx[n] = i;
                n++;
            }
        }
    } else if (!cvars && c >= ncvcat) {
        for (int i = 0; i < wh_t_pvar_count(); i++)
            if (wh_t_pvar_chan(i) == c - ncvcat) {
                if (idx && n < len)
                    idx[n] = i;
                n++;
            }
    }
    return n;
}

static int body_T_category_get_num(int *num_cat)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (!num_cat)
        return MPI_T_ERR_INVALID;
    *num_cat = ncats();
    return MPI_SUCCESS;
}

static void cat_name(int c, char *buf, size_t cap)
{
    if (c < ncvcat)
        snprintf(buf, cap, "wharf_%s", cat_words[c]);
    else
        snprintf(buf, cap, "wharf_channel_%s", wh_chans[c - ncvcat]->name);
}

static int body_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                                    int *num_cvars, int *num_pvars, int *num_categories)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (cat_index < 0 || cat_index >= ncats())
        return MPI_T_ERR_INVALID_INDEX;
    char nm[64], ds[160];
    cat_name(cat_index, nm, sizeof nm);
    if (cat_index < ncvcat)
        snprintf(ds, sizeof ds, "wharf tunables WHARF_%s_* (docs/TUNABLES.md)", nm + 6);
    else
        snprintf(ds, sizeof ds, "messages and bytes the %s channel moved, per protocol", wh_chans[cat_index - ncvcat]->name);
    wh_t_str(nm, name, name_len);
    wh_t_str(ds, desc, desc_len);
    if (num_cvars)
        *num_cvars = cat_members(cat_index, 1, 0, NULL);
    if (num_pvars)
        *num_pvars = cat_members(cat_index, 0, 0, NULL);
    if (num_categories)
        *num_categories = 0;
    return MPI_SUCCESS;
}

static int body_T_category_get_index(const char *name, int *cat_index)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (!name || !cat_index)
        return MPI_T_ERR_INVALID;
    for (int c = 0; c < ncats(); c++) {
        char nm[64];
        cat_name(c, nm, sizeof nm);
        if (!strcmp(nm, name)) {
            *cat_index = c;
            return MPI_SUCCESS;
        }
    }
    return MPI_T_ERR_INVALID_NAME;
}

static int members(int cat_index, int cvars, int len, int indices[])
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (cat_index < 0 || cat_index >= ncats())
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && !indices))
        return MPI_T_ERR_INVALID;
    if (cvars >= 0) /* -1: subcategories and events, of which there are none */
        cat_members(cat_index, cvars, len, indices);
    return MPI_SUCCESS;
}

static int body_T_category_get_cvars(int cat_index, int len, int indices[])
{
    return members(cat_index, 1, len, indices);
}

static int body_T_category_get_pvars(int cat_index, int len, int indices[])
{
    return members(cat_index, 0, len, indices);
}

static int body_T_category_get_categories(int cat_index, int len, int indices[])
{
    return members(cat_index, -1, len, indices); /* no subcategories */
}

static int body_T_category_get_events(int cat_index, int len, int indices[])
{
    return members(cat_index, -1, len, indices); /* no events */
}

static int body_T_category_get_num_events(int cat_index, int *num_events)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (cat_index < 0 || cat_index >= ncats())
        return MPI_T_ERR_INVALID_INDEX;
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = 0;
    return MPI_SUCCESS;
}

static int body_T_category_changed(int *update_number)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (!update_number)
        return MPI_T_ERR_INVALID;
    *update_number = 0; /* the variables and categories never change */
    return MPI_SUCCESS;
}

/* ---------- event sources: the monotonic clock ---------- */

static int body_T_source_get_num(int *num_sources)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (!num_sources)
        return MPI_T_ERR_INVALID;
    *num_sources = 1;
    return MPI_SUCCESS;
}

static int body_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                                  MPI_T_source_order *ordering, MPI_Count *ticks_per_second, MPI_Count *max_ticks,
                                  MPI_Info *info)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (source_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    wh_t_str("wharf_clock", name, name_len);
    wh_t_str("CLOCK_MONOTONIC of this process, in nanoseconds", desc, desc_len);
    if (ordering)
        *ordering = MPI_T_SOURCE_ORDERED;
    if (ticks_per_second)
        *ticks_per_second = 1000000000;
    if (max_ticks)
        *max_ticks = INT64_MAX;
    if (info && wh_info_new(info) != MPI_SUCCESS)
        return MPI_T_ERR_MEMORY;
    return MPI_SUCCESS;
}

static int body_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    int rc = wh_t_ready();
    if (rc)
        return rc;
    if (source_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    if (!timestamp)
        return MPI_T_ERR_INVALID;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *timestamp = (MPI_Count)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return MPI_SUCCESS;
}

#include "entry/tool.h"
