/* MPI_Info_create_env before MPI_Init carries the keys the standard lists
 * that wharf can know then (command, argv, maxprocs from the launcher,
 * thread_level, host, arch, wdir); MPI_INFO_ENV and create_env after
 * MPI_Init agree with the job (maxprocs = world size, thread_level =
 * provided level).  Run with -n 2 and the arguments "a b". */
#include <unistd.h>

#include "p2p_check.h"

static int get(MPI_Info info, const char *key, char *v, int len)
{
    int flag = 0;
    if (MPI_Info_get(info, key, len - 1, v, &flag) != MPI_SUCCESS)
        return -1;
    return flag;
}

/* before MPI_Init no MPI error handling: report and return non-zero */
static int pre_check(MPI_Info env, int argc, char **argv)
{
    char v[MPI_MAX_INFO_VAL];
    int bad = 0;
#define PRE(cond, ...)                                                                            \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            printf("FAIL before MPI_Init: " __VA_ARGS__);                                         \
            printf("\n");                                                                         \
            bad = 1;                                                                              \
        }                                                                                         \
    } while (0)
    PRE(get(env, "command", v, sizeof v) == 1 && !strcmp(v, argv[0]), "command '%s'", v);
    PRE(argc == 3 && get(env, "argv", v, sizeof v) == 1 && !strcmp(v, "a b"), "argv '%s' (argc %d)", v, argc);
    PRE(get(env, "maxprocs", v, sizeof v) == 1 && !strcmp(v, "2"), "maxprocs missing or '%s'", v);
    PRE(get(env, "thread_level", v, sizeof v) == 1 && !strcmp(v, "MPI_THREAD_SINGLE"),
        "thread_level missing or '%s'", v);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    PRE(get(env, "host", v, sizeof v) == 1 && !strcmp(v, host), "host '%s', expected '%s'", v, host);
    PRE(get(env, "arch", v, sizeof v) == 1 && v[0], "arch missing");
    char cwd[MPI_MAX_INFO_VAL] = "";
    PRE(getcwd(cwd, sizeof cwd) && get(env, "wdir", v, sizeof v) == 1 && !strcmp(v, cwd), "wdir '%s'", v);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Info env0;
    if (MPI_Info_create_env(argc, argv, &env0) != MPI_SUCCESS) {
        printf("FAIL: MPI_Info_create_env before MPI_Init\n");
        return 1;
    }
    if (pre_check(env0, argc, argv))
        return 1;
    MPI_Info_free(&env0);

    int provided = -1;
    (void)p2p_init; /* this test asks for a thread level */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &p2p_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p2p_size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    const char *lv[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
    CHECK(provided >= 0 && provided <= 3, "provided %d", provided);
    char v[MPI_MAX_INFO_VAL], want[16];
    snprintf(want, sizeof want, "%d", p2p_size);
    MPI_Info after;
    MPI_OK(MPI_Info_create_env(argc, argv, &after));
    MPI_Info both[2] = {MPI_INFO_ENV, after};
    for (int i = 0; i < 2; i++) {
        p2p_setstep("%s after MPI_Init", i ? "MPI_Info_create_env" : "MPI_INFO_ENV");
        CHECK(get(both[i], "maxprocs", v, sizeof v) == 1 && !strcmp(v, want), "maxprocs '%s', expected %s", v, want);
        CHECK(get(both[i], "thread_level", v, sizeof v) == 1 && !strcmp(v, lv[provided]),
              "thread_level '%s', expected %s", v, lv[provided]);
        CHECK(get(both[i], "command", v, sizeof v) == 1 && !strcmp(v, argv[0]), "command '%s'", v);
    }
    MPI_OK(MPI_Info_free(&after));
    MPI_Finalize();
    return 0;
}
