/* The MPI_T tool interface: initialization counting, control variables
 * (wharf's tunables: names, types, values as the environment set them,
 * read-only), categories (every variable in exactly one), performance
 * variables (the channel counters: a self message counts one, reset, write,
 * readreset, sessions apart), events (none) and the clock source. */
#include "p2p_check.h"
#include <stdlib.h>

#define T_OK(call)                                                                                \
    do {                                                                                          \
        int rc_ = (call);                                                                         \
        CHECK(rc_ == MPI_SUCCESS, "%s returned %d", #call, rc_);                                  \
    } while (0)
#define T_ERR(want, call)                                                                         \
    do {                                                                                          \
        int rc_ = (call);                                                                         \
        CHECK(rc_ == (want), "%s returned %d, expected %s (%d)", #call, rc_, #want, (want));      \
    } while (0)

static void cvars(void)
{
    p2p_setstep("control variables");
    int n = 0;
    T_OK(MPI_T_cvar_get_num(&n));
    CHECK(n > 20, "only %d cvars", n);
    for (int i = 0; i < n; i++) {
        int nl = 0, dl = 0, verb, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum e;
        T_OK(MPI_T_cvar_get_info(i, NULL, &nl, &verb, &dt, &e, NULL, &dl, &bind, &scope));
        CHECK(nl > 7 && dl > 1, "cvar %d: name length %d, desc length %d", i, nl, dl);
        char *name = malloc(nl), *desc = malloc(dl), small[4];
        int nl2 = nl, dl2 = dl, sl = 4;
        T_OK(MPI_T_cvar_get_info(i, name, &nl2, NULL, NULL, NULL, desc, &dl2, NULL, NULL));
        CHECK(nl2 == nl && (int)strlen(name) == nl - 1 && !strncmp(name, "WHARF_", 6), "cvar %d name '%s'", i, name);
        T_OK(MPI_T_cvar_get_info(i, small, &sl, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        CHECK(sl == 4 && !strncmp(small, name, 3) && small[3] == 0, "truncated name '%s' %d", small, sl);
        CHECK(scope == MPI_T_SCOPE_READONLY && bind == MPI_T_BIND_NO_OBJECT && e == MPI_T_ENUM_NULL,
              "cvar %s scope %d bind %d", name, scope, bind);
        int idx = -1;
        T_OK(MPI_T_cvar_get_index(name, &idx));
        CHECK(idx == i, "index of %s is %d, not %d", name, idx, i);
        MPI_T_cvar_handle h;
        int count = 0;
        T_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
        CHECK(dt == MPI_CHAR ? count >= 256 : count == 1, "cvar %s count %d", name, count);
        char *buf = calloc(1, count > 8 ? count : 8);
        T_OK(MPI_T_cvar_read(h, buf));
        const char *env = getenv(name);
        if (!strcmp(name, "WHARF_SHM_EAGER_MAX")) {
            unsigned long v;
            memcpy(&v, buf, sizeof v);
            CHECK(dt == MPI_UNSIGNED_LONG && v == (env ? strtoul(env, NULL, 0) : 16384), "SHM_EAGER_MAX = %lu", v);
        }
        if (!strcmp(name, "WHARF_NODE_DIR"))
            CHECK(dt == MPI_CHAR && !strcmp(buf, env ? env : "/dev/shm"), "NODE_DIR = '%s'", buf);
        T_ERR(MPI_T_ERR_CVAR_SET_NEVER, MPI_T_cvar_write(h, buf));
        T_OK(MPI_T_cvar_handle_free(&h));
        CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle not reset");
        free(buf), free(name), free(desc);
    }
    int idx;
    T_ERR(MPI_T_ERR_INVALID_NAME, MPI_T_cvar_get_index("MPIR_CVAR_NOPE", &idx));
    T_ERR(MPI_T_ERR_INVALID_INDEX, MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    MPI_T_cvar_handle bogus = MPI_T_CVAR_HANDLE_NULL;
    T_ERR(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_handle_free(&bogus));
}

static void categories(void)
{
    p2p_setstep("categories");
    int nc = 0, ncv = 0, npv = 0, seen_cv = 0, seen_pv = 0;
    T_OK(MPI_T_category_get_num(&nc));
    T_OK(MPI_T_cvar_get_num(&ncv));
    T_OK(MPI_T_pvar_get_num(&npv));
    int *hit = calloc(ncv + 1, sizeof(int));
    for (int c = 0; c < nc; c++) {
        char name[128];
        int nl = sizeof name, ncv_c, npv_c, nsub, idx = -1;
        T_OK(MPI_T_category_get_info(c, name, &nl, NULL, NULL, &ncv_c, &npv_c, &nsub));
        T_OK(MPI_T_category_get_index(name, &idx));
        CHECK(idx == c && nsub == 0, "category %s: index %d, %d subcategories", name, idx, nsub);
        int *ix = malloc(sizeof(int) * (ncv_c + npv_c + 1));
        T_OK(MPI_T_category_get_cvars(c, ncv_c, ix));
        for (int k = 0; k < ncv_c; k++)
            hit[ix[k]]++;
        T_OK(MPI_T_category_get_pvars(c, npv_c, ix));
        seen_cv += ncv_c, seen_pv += npv_c;
        int ne = -1;
        T_OK(MPI_T_category_get_num_events(c, &ne));
        CHECK(ne == 0, "events in category %s", name);
        free(ix);
    }
    CHECK(seen_cv == ncv && seen_pv == npv, "categories hold %d/%d cvars, %d/%d pvars", seen_cv, ncv, seen_pv, npv);
    for (int i = 0; i < ncv; i++)
        CHECK(hit[i] == 1, "cvar %d in %d categories", i, hit[i]);
    free(hit);
    int stamp = -1;
    T_OK(MPI_T_category_changed(&stamp));
    T_ERR(MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_info(nc, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
}

static void pvars(void)
{
    p2p_setstep("performance variables");
    int idx = -1, bidx = -1;
    T_OK(MPI_T_pvar_get_index("wharf_self_eager_msgs", MPI_T_PVAR_CLASS_COUNTER, &idx));
    T_OK(MPI_T_pvar_get_index("wharf_self_eager_bytes", MPI_T_PVAR_CLASS_COUNTER, &bidx));
    T_ERR(MPI_T_ERR_INVALID_NAME, MPI_T_pvar_get_index("wharf_self_eager_msgs", MPI_T_PVAR_CLASS_TIMER, &idx));
    int cls, ro, cont, atom;
    MPI_Datatype dt;
    T_OK(MPI_T_pvar_get_info(idx, NULL, NULL, NULL, &cls, &dt, NULL, NULL, NULL, NULL, &ro, &cont, &atom));
    CHECK(cls == MPI_T_PVAR_CLASS_COUNTER && dt == MPI_UNSIGNED_LONG_LONG && !ro && cont, "pvar info");
    MPI_T_pvar_session s1, s2;
    T_OK(MPI_T_pvar_session_create(&s1));
    T_OK(MPI_T_pvar_session_create(&s2));
    MPI_T_pvar_handle h1, h2, hb;
    int count;
    T_OK(MPI_T_pvar_handle_alloc(s1, idx, NULL, &h1, &count));
    T_OK(MPI_T_pvar_handle_alloc(s2, idx, NULL, &h2, &count));
    T_OK(MPI_T_pvar_handle_alloc(s1, bidx, NULL, &hb, &count));
    T_OK(MPI_T_pvar_reset(s1, h1));
    T_OK(MPI_T_pvar_reset(s1, hb));
    unsigned long long before2, v, b;
    T_OK(MPI_T_pvar_read(s2, h2, &before2));
    int x[3] = {1, 2, 3}, y[3];
    MPI_OK(MPI_Sendrecv(x, 3, MPI_INT, 0, 0, y, 3, MPI_INT, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    T_OK(MPI_T_pvar_read(s1, h1, &v));
    T_OK(MPI_T_pvar_read(s1, hb, &b));
    CHECK(v == 1 && b == 12, "one self message of 12 bytes counted as %llu messages, %llu bytes", v, b);
    T_OK(MPI_T_pvar_read(s2, h2, &v));
    CHECK(v == before2 + 1, "the other session saw %llu -> %llu", before2, v);
    T_OK(MPI_T_pvar_readreset(s1, h1, &v));
    T_OK(MPI_T_pvar_read(s1, h1, &v));
    CHECK(v == 0, "after readreset %llu", v);
    unsigned long long w = 100;
    T_OK(MPI_T_pvar_write(s1, h1, &w));
    T_OK(MPI_T_pvar_read(s1, h1, &v));
    CHECK(v == 100, "after write %llu", v);
    T_OK(MPI_T_pvar_reset(s1, MPI_T_PVAR_ALL_HANDLES));
    T_OK(MPI_T_pvar_read(s1, h1, &v));
    CHECK(v == 0, "after reset of all handles %llu", v);
    T_ERR(MPI_T_ERR_PVAR_NO_STARTSTOP, MPI_T_pvar_start(s1, h1));
    T_ERR(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s2, h1, &v)); /* h1 belongs to s1 */
    T_OK(MPI_T_pvar_handle_free(s1, &h1));
    T_ERR(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s1, h1, &v));
    T_OK(MPI_T_pvar_session_free(&s1)); /* frees hb too */
    T_ERR(MPI_T_ERR_INVALID_SESSION, MPI_T_pvar_read(s1, h2, &v));
    T_OK(MPI_T_pvar_session_free(&s2));
}

static void events_sources(void)
{
    p2p_setstep("events and sources");
    int n = -1;
    T_OK(MPI_T_event_get_num(&n));
    CHECK(n == 0, "%d events", n);
    T_ERR(MPI_T_ERR_INVALID_INDEX,
          MPI_T_event_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    MPI_T_event_registration r;
    T_ERR(MPI_T_ERR_INVALID_INDEX, MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &r));
    T_OK(MPI_T_source_get_num(&n));
    CHECK(n == 1, "%d sources", n);
    MPI_Count tps = 0, max = 0, t1, t2;
    MPI_T_source_order ord;
    MPI_Info info;
    char name[64];
    int nl = sizeof name;
    T_OK(MPI_T_source_get_info(0, name, &nl, NULL, NULL, &ord, &tps, &max, &info));
    CHECK(tps == 1000000000 && ord == MPI_T_SOURCE_ORDERED, "source %s", name);
    MPI_Info_free(&info);
    T_OK(MPI_T_source_get_timestamp(0, &t1));
    T_OK(MPI_T_source_get_timestamp(0, &t2));
    CHECK(t2 >= t1 && t1 > 0, "timestamps %lld %lld", (long long)t1, (long long)t2);
}

int main(int argc, char **argv)
{
    int n, prov;
    T_ERR(MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_get_num(&n));
    /* usable before MPI_Init, nested */
    T_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &prov));
    T_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &prov));
    T_OK(MPI_T_cvar_get_num(&n));
    p2p_init(&argc, &argv);
    cvars();
    categories();
    pvars();
    events_sources();
    T_OK(MPI_T_finalize());
    T_OK(MPI_T_cvar_get_num(&n)); /* still one level */
    T_OK(MPI_T_finalize());
    T_ERR(MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_get_num(&n));
    T_ERR(MPI_T_ERR_NOT_INITIALIZED, MPI_T_finalize());
    MPI_Barrier(MPI_COMM_WORLD);
    if (p2p_rank == 0)
        printf("mpit_tool: %d ranks: ok\n", p2p_size);
    MPI_Finalize();
    return 0;
}
