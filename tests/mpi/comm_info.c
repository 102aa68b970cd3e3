/* Info objects: set/get/get_string/get_valuelen/delete/dup/free, key order,
 * limits and error classes, use before MPI_Init (MPI-4), MPI_INFO_ENV and
 * MPI_Info_create_env. */
#include "p2p_check.h"

int main(int argc, char **argv)
{
    /* MPI-4: info objects work before MPI_Init */
    MPI_Info pre;
    char v[MPI_MAX_INFO_VAL];
    int flag = 0, n;
    if (MPI_Info_create(&pre) != MPI_SUCCESS || MPI_Info_set(pre, "early", "yes") != MPI_SUCCESS) {
        printf("FAIL: info calls before MPI_Init\n");
        return 1;
    }
    MPI_Info env0;
    if (MPI_Info_create_env(argc, argv, &env0) != MPI_SUCCESS) {
        printf("FAIL: MPI_Info_create_env before MPI_Init\n");
        return 1;
    }

    p2p_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    p2p_setstep("info created before MPI_Init");
    MPI_OK(MPI_Info_get(pre, "early", sizeof v - 1, v, &flag));
    CHECK(flag && !strcmp(v, "yes"), "early key: flag %d value '%s'", flag, v);
    MPI_OK(MPI_Info_free(&pre));
    CHECK(pre == MPI_INFO_NULL, "Info_free did not reset the handle");
    MPI_OK(MPI_Info_get(env0, "command", sizeof v - 1, v, &flag));
    CHECK(flag && !strcmp(v, argv[0]), "create_env command '%s', argv[0] '%s'", v, argv[0]);
    MPI_OK(MPI_Info_free(&env0));

    p2p_setstep("set / get / order");
    MPI_Info info, dup;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 0, "new info has %d keys", n);
    MPI_OK(MPI_Info_set(info, "alpha", "1"));
    MPI_OK(MPI_Info_set(info, "beta", "two"));
    MPI_OK(MPI_Info_set(info, "gamma", "three 3"));
    MPI_OK(MPI_Info_set(info, "alpha", "one")); /* replaces, keeps its place */
    MPI_OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 3, "nkeys %d", n);
    const char *order[3] = {"alpha", "beta", "gamma"};
    char key[MPI_MAX_INFO_KEY];
    for (int i = 0; i < 3; i++) {
        MPI_OK(MPI_Info_get_nthkey(info, i, key));
        CHECK(!strcmp(key, order[i]), "key %d is '%s', expected '%s'", i, key, order[i]);
    }
    MPI_OK(MPI_Info_get(info, "alpha", sizeof v - 1, v, &flag));
    CHECK(flag && !strcmp(v, "one"), "alpha = '%s'", v);
    MPI_OK(MPI_Info_get(info, "ALPHA", sizeof v - 1, v, &flag));
    CHECK(!flag, "keys are case sensitive");
    MPI_OK(MPI_Info_get(info, "gamma", 3, v, &flag)); /* truncated to 3 characters */
    CHECK(flag && !strcmp(v, "thr"), "truncated get '%s'", v);
    MPI_OK(MPI_Info_get_valuelen(info, "gamma", &n, &flag));
    CHECK(flag && n == 7, "valuelen %d", n);
    MPI_OK(MPI_Info_get_valuelen(info, "delta", &n, &flag));
    CHECK(!flag, "valuelen of a missing key");

    p2p_setstep("get_string");
    int buflen = 0;
    MPI_OK(MPI_Info_get_string(info, "beta", &buflen, NULL, &flag));
    CHECK(flag && buflen == 4, "size query: flag %d buflen %d", flag, buflen);
    char small[3];
    buflen = sizeof small;
    MPI_OK(MPI_Info_get_string(info, "beta", &buflen, small, &flag));
    CHECK(flag && buflen == 4 && !strcmp(small, "tw"), "truncated get_string '%s' buflen %d", small, buflen);
    buflen = sizeof v;
    MPI_OK(MPI_Info_get_string(info, "beta", &buflen, v, &flag));
    CHECK(flag && buflen == 4 && !strcmp(v, "two"), "get_string '%s'", v);
    buflen = sizeof v;
    MPI_OK(MPI_Info_get_string(info, "nope", &buflen, v, &flag));
    CHECK(!flag, "get_string of a missing key");

    p2p_setstep("dup / delete");
    MPI_OK(MPI_Info_dup(info, &dup));
    MPI_OK(MPI_Info_delete(info, "beta"));
    MPI_OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 2, "after delete nkeys %d", n);
    MPI_OK(MPI_Info_get_nthkey(info, 1, key));
    CHECK(!strcmp(key, "gamma"), "second key after delete '%s'", key);
    MPI_OK(MPI_Info_get_nkeys(dup, &n));
    CHECK(n == 3, "dup changed with the original: %d keys", n);
    MPI_OK(MPI_Info_get(dup, "beta", sizeof v - 1, v, &flag));
    CHECK(flag && !strcmp(v, "two"), "dup beta '%s'", v);
    MPI_OK(MPI_Info_free(&dup));

    p2p_setstep("errors");
    char longkey[MPI_MAX_INFO_KEY + 10];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = 0;
    static char longval[MPI_MAX_INFO_VAL + 10];
    memset(longval, 'v', sizeof longval - 1);
    MPI_FAILS(MPI_ERR_INFO_KEY, MPI_Info_set(info, longkey, "x"));
    MPI_FAILS(MPI_ERR_INFO_KEY, MPI_Info_set(info, "", "x"));
    MPI_FAILS(MPI_ERR_INFO_VALUE, MPI_Info_set(info, "k", longval));
    MPI_FAILS(MPI_ERR_INFO_NOKEY, MPI_Info_delete(info, "beta"));
    MPI_FAILS(MPI_ERR_ARG, MPI_Info_get_nthkey(info, 2, key));
    MPI_FAILS(MPI_ERR_ARG, MPI_Info_get_nthkey(info, -1, key));
    MPI_FAILS(MPI_ERR_ARG, MPI_Info_get(info, "alpha", -1, v, &flag));
    MPI_FAILS(MPI_ERR_INFO, MPI_Info_set(MPI_INFO_NULL, "a", "b"));
    MPI_FAILS(MPI_ERR_INFO, MPI_Info_get_nkeys(MPI_INFO_NULL, &n));
    MPI_Info env = MPI_INFO_ENV;
    MPI_FAILS(MPI_ERR_INFO, MPI_Info_free(&env));
    MPI_OK(MPI_Info_free(&info));

    p2p_setstep("MPI_INFO_ENV");
    MPI_OK(MPI_Info_get(MPI_INFO_ENV, "command", sizeof v - 1, v, &flag));
    CHECK(flag && strstr(v, "comm_info") != NULL, "MPI_INFO_ENV command '%s'", v);
    MPI_OK(MPI_Info_get(MPI_INFO_ENV, "maxprocs", sizeof v - 1, v, &flag));
    CHECK(flag && atoi(v) == p2p_size, "MPI_INFO_ENV maxprocs '%s'", v);
    MPI_OK(MPI_Info_get(MPI_INFO_ENV, "argv", sizeof v - 1, v, &flag));
    CHECK(flag && !strcmp(v, argc > 1 ? argv[1] : ""), "MPI_INFO_ENV argv '%s'", v);
    MPI_OK(MPI_Info_get(MPI_INFO_ENV, "thread_level", sizeof v - 1, v, &flag));
    CHECK(flag && !strncmp(v, "MPI_THREAD_", 11), "thread_level '%s'", v);
    MPI_OK(MPI_Info_dup(MPI_INFO_ENV, &dup));
    MPI_OK(MPI_Info_get_nkeys(dup, &n));
    CHECK(n >= 4, "dup of MPI_INFO_ENV has %d keys", n);
    MPI_OK(MPI_Info_free(&dup));

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
