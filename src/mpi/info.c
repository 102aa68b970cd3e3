/* MPI info objects: ordered (key, value) string lists, and MPI_INFO_ENV.
 * Like MPI-4 requires, every info function also works before MPI_Init and
 * after MPI_Finalize (errors then go to the initial handler, which is fatal).
 *
 * A key may hold at most MPI_MAX_INFO_KEY-1 characters and a value at most
 * MPI_MAX_INFO_VAL-1, so each fits, with its terminating NUL, in a buffer of
 * MPI_MAX_INFO_KEY / MPI_MAX_INFO_VAL bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "mpi/api.h"

typedef struct {
    char *key, *val;
} wh_kv_t;

typedef struct wh_info {
    wh_obj_t obj;
    int n, cap;
    wh_kv_t *e; /* in insertion order */
} wh_info_t;

static wh_tab_t info_tab;
static wh_info_t info_env = {.obj = {.handle = MPI_INFO_ENV, .refs = 1}};
static int env_state; /* 0: not built, 1: built before MPI_Init, 2: built after */

static void env_fill(wh_info_t *inf, int argc, char **argv);

static wh_info_t *info_get(MPI_Info h)
{
    if (h == MPI_INFO_ENV) {
        int want = wh_job.initialized ? 2 : 1;
        if (env_state < want) {
            for (int i = 0; i < info_env.n; i++) {
                free(info_env.e[i].key);
                free(info_env.e[i].val);
            }
            info_env.n = 0;
            env_fill(&info_env, 0, NULL);
            env_state = want;
        }
        return &info_env;
    }
    return wh_tab_get(&info_tab, h);
}

static int find(const wh_info_t *inf, const char *key)
{
    for (int i = 0; i < inf->n; i++)
        if (!strcmp(inf->e[i].key, key))
            return i;
    return -1;
}

static int put(wh_info_t *inf, const char *key, const char *val)
{
    int i = find(inf, key);
    char *v = strdup(val);
    if (!v)
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    if (i >= 0) {
        free(inf->e[i].val);
        inf->e[i].val = v;
        return MPI_SUCCESS;
    }
    if (inf->n == inf->cap) {
        int ncap = inf->cap ? 2 * inf->cap : 8;
        wh_kv_t *ne = realloc(inf->e, (size_t)ncap * sizeof *ne);
        if (!ne) {
            free(v);
            return wh_error(MPI_ERR_NO_MEM, "out of memory");
        }
        inf->e = ne;
        inf->cap = ncap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    }
    inf->e[inf->n++] = (wh_kv_t){k, v};
    return MPI_SUCCESS;
}

static wh_info_t *info_alloc(void)
{
    if (!info_tab.objsize)
        wh_tab_init(&info_tab, WH_H_INFO, sizeof(wh_info_t));
    return wh_tab_alloc(&info_tab);
}

static void info_destroy(wh_info_t *inf)
{
    for (int i = 0; i < inf->n; i++) {
        free(inf->e[i].key);
        free(inf->e[i].val);
    }
    free(inf->e);
    wh_tab_free(&info_tab, inf);
}

/* ---------- MPI_INFO_ENV ---------- */

/* append s to buf (space separated), truncating at the value limit */
static void join(char *buf, size_t len, const char *s)
{
    size_t o = strlen(buf);
    if (o && o + 1 < len)
        buf[o++] = ' ';
    snprintf(buf + o, len - o, "%s", s);
}

/* Processes the job was started with: the world size once initialized;
 * before MPI_Init what the launcher told the process (PMI_SIZE, set by
 * wharfrun and by MPICH's hydra), 1 for a singleton (no PMI environment),
 * else unknown (0). */
static int env_maxprocs(void)
{
    if (wh_job.size > 0)
        return wh_job.size;
    const char *v = getenv("PMI_SIZE");
    if (v && *v) {
        char *end;
        long n = strtol(v, &end, 10);
        return !*end && n > 0 && n <= 0x7fffffff ? (int)n : 0;
    }
    const char *fd = getenv("PMI_FD"), *port = getenv("PMI_PORT");
    return (!fd || !*fd) && (!port || !*port) ? 1 : 0;
}

static void env_fill(wh_info_t *inf, int argc, char **argv)
{
    static const char *levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                   "MPI_THREAD_MULTIPLE"};
    char val[MPI_MAX_INFO_VAL] = "";
    if (argv && argc > 0 && argv[0]) {
        put(inf, "command", argv[0]);
        for (int i = 1; i < argc && argv[i]; i++)
            join(val, sizeof val, argv[i]);
        put(inf, "argv", val);
    } else {
        /* the command line as the kernel keeps it */
        FILE *f = fopen("/proc/self/cmdline", "r");
        if (f) {
            static char cmd[65536];
            size_t n = fread(cmd, 1, sizeof cmd - 1, f);
            fclose(f);
            cmd[n] = '\0';
            if (n) {
                put(inf, "command", cmd);
                for (size_t o = strlen(cmd) + 1; o < n; o += strlen(cmd + o) + 1)
                    join(val, sizeof val, cmd + o);
                put(inf, "argv", val);
            }
        }
    }
    int np = env_maxprocs();
    if (np > 0) {
        snprintf(val, sizeof val, "%d", np);
        put(inf, "maxprocs", val);
    }
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    if (wh_job.hostname[0])
        snprintf(host, sizeof host, "%s", wh_job.hostname);
    else
        gethostname(host, sizeof host - 1);
    put(inf, "host", host);
    struct utsname u;
    if (uname(&u) == 0)
        put(inf, "arch", u.machine);
    if (getcwd(val, sizeof val))
        put(inf, "wdir", val);
    /* the provided level once initialized; before, the level MPI_Init asks for
       (wharf has no way to request one before the program starts) */
    int level = wh_job.initialized ? wh_job.thread_level : MPI_THREAD_SINGLE;
    if (level >= 0 && level <= 3)
        put(inf, "thread_level", levels[level]);
}

/* ---------- internal API ---------- */

int wh_info_new(MPI_Info *out)
{
    wh_info_t *inf = info_alloc();
    if (!inf)
        return wh_error(MPI_ERR_NO_MEM, "out of memory creating an info object");
    *out = inf->obj.handle;
    return MPI_SUCCESS;
}

int wh_info_valid(MPI_Info h) { return info_get(h) != NULL; }

const char *wh_info_lookup(MPI_Info h, const char *key)
{
    wh_info_t *inf = h == MPI_INFO_NULL ? NULL : info_get(h);
    int i = inf ? find(inf, key) : -1;
    return i >= 0 ? inf->e[i].val : NULL;
}

int wh_info_put(MPI_Info h, const char *key, const char *val)
{
    wh_info_t *inf = info_get(h);
    if (!inf)
        return wh_error(MPI_ERR_INFO, "info 0x%x is not a valid info object", (unsigned)h);
    return put(inf, key, val);
}

/* ---------- checks ---------- */

static int graise(const char *fname, int code) { return wh_raise_comm(NULL, fname, code); }

#define CHK_PTR(fname, p, name)                                                                   \
    do {                                                                                          \
        if (!(p))                                                                                 \
            return graise((fname), wh_error(MPI_ERR_ARG, "%s is NULL", (name)));                  \
    } while (0)

static int chk_info(const char *fname, MPI_Info h, wh_info_t **inf)
{
    if ((*inf = info_get(h)))
        return MPI_SUCCESS;
    if (h == MPI_INFO_NULL)
        return graise(fname, wh_error(MPI_ERR_INFO, "info is MPI_INFO_NULL"));
    return graise(fname, wh_error(MPI_ERR_INFO, "info 0x%x is not a valid info object (freed or never created)",
                                  (unsigned)h));
}

static int chk_key(const char *fname, const char *key)
{
    CHK_PTR(fname, key, "key");
    size_t n = strlen(key);
    if (n == 0)
        return graise(fname, wh_error(MPI_ERR_INFO_KEY, "info key is empty"));
    if (n >= MPI_MAX_INFO_KEY)
        return graise(fname, wh_error(MPI_ERR_INFO_KEY, "info key of %zu characters is longer than MPI_MAX_INFO_KEY-1 (%d)",
                                      n, MPI_MAX_INFO_KEY - 1));
    return MPI_SUCCESS;
}

/* ---------- entry points ---------- */

static int body_Info_create(MPI_Info *info)
{
    CHK_PTR("MPI_Info_create", info, "info");
    int rc = wh_info_new(info);
    return rc == MPI_SUCCESS ? rc : graise("MPI_Info_create", rc);
}

static int body_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    CHK_PTR("MPI_Info_create_env", info, "info");
    wh_info_t *inf = info_alloc();
    if (!inf)
        return graise("MPI_Info_create_env", wh_error(MPI_ERR_NO_MEM, "out of memory creating an info object"));
    env_fill(inf, argc, argv);
    *info = inf->obj.handle;
    return MPI_SUCCESS;
}

static int body_Info_free(MPI_Info *info)
{
    CHK_PTR("MPI_Info_free", info, "info");
    wh_info_t *inf;
    int rc = chk_info("MPI_Info_free", *info, &inf);
    if (rc)
        return rc;
    if (*info == MPI_INFO_ENV)
        return graise("MPI_Info_free", wh_error(MPI_ERR_INFO, "MPI_INFO_ENV is predefined and cannot be freed"));
    info_destroy(inf);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

static int body_Info_set(MPI_Info info, const char *key, const char *value)
{
    static const char fname[] = "MPI_Info_set";
    wh_info_t *inf;
    int rc;
    if ((rc = chk_info(fname, info, &inf)) || (rc = chk_key(fname, key)))
        return rc;
    CHK_PTR(fname, value, "value");
    size_t n = strlen(value);
    if (n >= MPI_MAX_INFO_VAL)
        return graise(fname, wh_error(MPI_ERR_INFO_VALUE, "info value of %zu characters (key \"%s\") is longer than "
                                                          "MPI_MAX_INFO_VAL-1 (%d)", n, key, MPI_MAX_INFO_VAL - 1));
    if ((rc = put(inf, key, value)) != MPI_SUCCESS)
        return graise(fname, rc);
    return MPI_SUCCESS;
}

static int body_Info_delete(MPI_Info info, const char *key)
{
    static const char fname[] = "MPI_Info_delete";
    wh_info_t *inf;
    int rc;
    if ((rc = chk_info(fname, info, &inf)) || (rc = chk_key(fname, key)))
        return rc;
    int i = find(inf, key);
    if (i < 0)
        return graise(fname, wh_error(MPI_ERR_INFO_NOKEY, "info key \"%s\" is not set", key));
    free(inf->e[i].key);
    free(inf->e[i].val);
    memmove(&inf->e[i], &inf->e[i + 1], (size_t)(inf->n - i - 1) * sizeof *inf->e);
    inf->n--;
    return MPI_SUCCESS;
}

static int body_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    static const char fname[] = "MPI_Info_get";
    wh_info_t *inf;
    int rc;
    if ((rc = chk_info(fname, info, &inf)) || (rc = chk_key(fname, key)))
        return rc;
    CHK_PTR(fname, flag, "flag");
    if (valuelen < 0)
        return graise(fname, wh_error(MPI_ERR_ARG, "valuelen is negative (%d)", valuelen));
    int i = find(inf, key);
    *flag = i >= 0;
    if (i >= 0) {
        CHK_PTR(fname, value, "value");
        size_t n = strlen(inf->e[i].val);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen; /* truncated to valuelen characters */
        memcpy(value, inf->e[i].val, n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}

static int body_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    static const char fname[] = "MPI_Info_get_valuelen";
    wh_info_t *inf;
    int rc;
    if ((rc = chk_info(fname, info, &inf)) || (rc = chk_key(fname, key)))
        return rc;
    CHK_PTR(fname, valuelen, "valuelen");
    CHK_PTR(fname, flag, "flag");
    int i = find(inf, key);
    *flag = i >= 0;
    if (i >= 0)
        *valuelen = (int)strlen(inf->e[i].val);
    return MPI_SUCCESS;
}

static int body_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    static const char fname[] = "MPI_Info_get_string";
    wh_info_t *inf;
    int rc;
    if ((rc = chk_info(fname, info, &inf)) || (rc = chk_key(fname, key)))
        return rc;
    CHK_PTR(fname, buflen, "buflen");
    CHK_PTR(fname, flag, "flag");
    if (*buflen < 0)
        return graise(fname, wh_error(MPI_ERR_ARG, "*buflen is negative (%d)", *buflen));
    int i = find(inf, key);
    *flag = i >= 0;
    if (i < 0)
        return MPI_SUCCESS;
    size_t n = strlen(inf->e[i].val);
    if (*buflen > 0) {
        CHK_PTR(fname, value, "value");
        size_t c = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;
        memcpy(value, inf->e[i].val, c);
        value[c] = '\0';
    }
    *buflen = (int)n + 1;
    return MPI_SUCCESS;
}

static int body_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    wh_info_t *inf;
    int rc = chk_info("MPI_Info_get_nkeys", info, &inf);
    if (rc)
        return rc;
    CHK_PTR("MPI_Info_get_nkeys", nkeys, "nkeys");
    *nkeys = inf->n;
    return MPI_SUCCESS;
}

static int body_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    static const char fname[] = "MPI_Info_get_nthkey";
    wh_info_t *inf;
    int rc = chk_info(fname, info, &inf);
    if (rc)
        return rc;
    CHK_PTR(fname, key, "key");
    if (n < 0 || n >= inf->n)
        return graise(fname, wh_error(MPI_ERR_ARG, "n = %d is out of range: the info object has %d keys", n, inf->n));
    snprintf(key, MPI_MAX_INFO_KEY, "%s", inf->e[n].key);
    return MPI_SUCCESS;
}

static int body_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    wh_info_t *inf;
    int rc = chk_info("MPI_Info_dup", info, &inf);
    if (rc)
        return rc;
    CHK_PTR("MPI_Info_dup", newinfo, "newinfo");
    wh_info_t *n = info_alloc();
    if (!n)
        return graise("MPI_Info_dup", wh_error(MPI_ERR_NO_MEM, "out of memory creating an info object"));
    for (int i = 0; i < inf->n; i++) {
        if ((rc = put(n, inf->e[i].key, inf->e[i].val)) != MPI_SUCCESS) {
            info_destroy(n);
            return graise("MPI_Info_dup", rc);
        }
    }
    *newinfo = n->obj.handle;
    return MPI_SUCCESS;
}

#include "entry/info.h"
