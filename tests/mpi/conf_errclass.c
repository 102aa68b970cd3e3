/* User error classes and codes: removed values are reused, MPI_LASTUSEDCODE
 * follows the live values, and 10,000 rounds of add/remove stay fast (no
 * quadratic growth). */
#include <time.h>

#include "p2p_check.h"

static int lastused(void)
{
    int *v = NULL, flag = 0;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(flag && v, "MPI_LASTUSEDCODE not set");
    return *v;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int base = lastused();

    p2p_setstep("values are reused");
    int c1, k1, c2, k2, cls = -1, len = 0;
    char s[MPI_MAX_ERROR_STRING];
    MPI_OK(MPI_Add_error_class(&c1));
    MPI_OK(MPI_Add_error_code(c1, &k1));
    CHECK(c1 > base && k1 > base && c1 != k1, "class %d code %d base %d", c1, k1, base);
    CHECK(lastused() >= c1 && lastused() >= k1, "lastused %d below class %d / code %d", lastused(), c1, k1);
    MPI_OK(MPI_Add_error_string(k1, "first"));
    MPI_OK(MPI_Remove_error_string(k1));
    MPI_OK(MPI_Remove_error_code(k1));
    MPI_OK(MPI_Remove_error_class(c1));
    CHECK(lastused() == base, "lastused %d after removing everything, expected %d", lastused(), base);
    MPI_OK(MPI_Add_error_class(&c2));
    MPI_OK(MPI_Add_error_code(c2, &k2));
    CHECK(c2 == c1 || c2 == k1, "class %d: a removed value (%d or %d) was not reused", c2, c1, k1);
    CHECK(k2 == c1 || k2 == k1, "code %d: a removed value (%d or %d) was not reused", k2, c1, k1);
    MPI_OK(MPI_Error_class(k2, &cls));
    CHECK(cls == c2, "class of reused code %d is %d, expected %d", k2, cls, c2);
    MPI_OK(MPI_Error_string(k2, s, &len));
    CHECK(len == 0 && s[0] == 0, "reused code %d kept the old string '%s'", k2, s);
    MPI_OK(MPI_Add_error_string(k2, "second"));
    MPI_OK(MPI_Error_string(k2, s, &len));
    CHECK(!strcmp(s, "second") && len == 6, "string '%s' len %d", s, len);
    /* a removed value is no longer valid */
    int k3;
    MPI_OK(MPI_Add_error_code(c2, &k3));
    MPI_OK(MPI_Remove_error_code(k3));
    MPI_FAILS(MPI_ERR_ARG, MPI_Error_class(k3, &cls));
    MPI_FAILS(MPI_ERR_ARG, MPI_Remove_error_code(k3));
    MPI_FAILS(MPI_ERR_ARG, MPI_Remove_error_class(c2)); /* k2 still attached */
    MPI_FAILS(MPI_ERR_ARG, MPI_Remove_error_code(k2));  /* its string is still there (MPI-4.1) */
    MPI_OK(MPI_Remove_error_string(k2));
    MPI_FAILS(MPI_ERR_ARG, MPI_Remove_error_string(k2)); /* no string left */
    MPI_OK(MPI_Remove_error_code(k2));
    MPI_OK(MPI_Remove_error_class(c2));

    p2p_setstep("10000 rounds");
    /* a few long-lived values below and above the churn */
    int keep[3];
    MPI_OK(MPI_Add_error_class(&keep[0]));
    MPI_OK(MPI_Add_error_code(keep[0], &keep[1]));
    double t0 = now();
    int maxv = 0;
    for (int i = 0; i < 10000; i++) {
        int c, k;
        MPI_OK(MPI_Add_error_class(&c));
        MPI_OK(MPI_Add_error_code(c, &k));
        MPI_OK(MPI_Add_error_string(k, "churn"));
        if (i == 5000)
            MPI_OK(MPI_Add_error_code(keep[0], &keep[2]));
        if (c > maxv)
            maxv = c;
        if (k > maxv)
            maxv = k;
        MPI_OK(MPI_Remove_error_string(k));
        MPI_OK(MPI_Remove_error_code(k));
        MPI_OK(MPI_Remove_error_class(c));
    }
    double dt = now() - t0;
    CHECK(dt < 0.5, "10000 add/remove rounds took %.3f s", dt);
    CHECK(maxv <= base + 8, "values grew to %d (base %d): removed values are not reused", maxv, base);
    CHECK(lastused() >= keep[2] && lastused() <= base + 8, "lastused %d (keep %d, base %d)", lastused(), keep[2],
          base);
    MPI_OK(MPI_Error_class(keep[2], &cls));
    CHECK(cls == keep[0], "class of kept code %d", cls);
    MPI_OK(MPI_Remove_error_code(keep[2]));
    MPI_OK(MPI_Remove_error_code(keep[1]));
    MPI_OK(MPI_Remove_error_class(keep[0]));
    CHECK(lastused() == base, "lastused %d at the end, expected %d", lastused(), base);
    MPI_Finalize();
    return 0;
}
