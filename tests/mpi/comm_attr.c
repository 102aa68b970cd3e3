/* Attribute caching: keyvals with copy/delete callbacks on communicators
 * (dup copies, overwrite/delete/free delete), MPI_COMM_NULL_COPY_FN and
 * MPI_COMM_DUP_FN, a failing copy callback, freed keyvals kept alive by their
 * attributes, predefined attributes, datatype attributes, the MPI-1 names,
 * and the delete callbacks of MPI_COMM_SELF at MPI_Finalize. */
#include <stdint.h>

#include "p2p_check.h"

static int marker;
static int copies, deletes;
static intptr_t last_deleted;
static MPI_Comm last_deleted_comm;

static int copy_fn(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old;
    (void)keyval;
    CHECK(extra == &marker, "copy callback got extra_state %p", extra);
    copies++;
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)keyval;
    CHECK(extra == &marker, "delete callback got extra_state %p", extra);
    deletes++;
    last_deleted = (intptr_t)val;
    last_deleted_comm = comm;
    return MPI_SUCCESS;
}

static int copy_fail(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)keyval, (void)extra, (void)in, (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}

static int self_deletes, self_delete_order[2], self_n, self_bad;
static int self_delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)keyval, (void)extra;
    int fin = 1;
    MPI_Finalized(&fin);
    if (fin || comm != MPI_COMM_SELF)
        self_bad = 1;
    if (self_n < 2)
        self_delete_order[self_n++] = (int)(intptr_t)val;
    self_deletes++;
    return MPI_SUCCESS;
}

static intptr_t get(MPI_Comm c, int keyval, int *flag)
{
    void *v = NULL;
    MPI_OK(MPI_Comm_get_attr(c, keyval, &v, flag));
    return (intptr_t)v;
}

static void predefined(void)
{
    p2p_setstep("predefined attributes");
    int *v, flag;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag && *v >= 32767, "MPI_TAG_UB flag %d value %d", flag, flag ? *v : 0);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    CHECK(flag && (*v == MPI_PROC_NULL || (*v >= 0 && *v < p2p_size)), "MPI_HOST");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    CHECK(flag && (*v == MPI_ANY_SOURCE || *v == MPI_PROC_NULL || (*v >= 0 && *v < p2p_size)), "MPI_IO");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    CHECK(!flag || *v == 0 || *v == 1, "MPI_WTIME_IS_GLOBAL %d", *v);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
    CHECK(!flag || *v >= p2p_size, "MPI_UNIVERSE_SIZE %d", *v);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    CHECK(!flag || *v >= 0, "MPI_APPNUM %d", *v);
    int cls;
    MPI_OK(MPI_Add_error_class(&cls));
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(flag && *v >= cls && *v >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d after adding class %d", *v, cls);
    MPI_OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag)); /* MPI-1 name */
    CHECK(flag && *v >= 32767, "MPI_Attr_get(MPI_TAG_UB)");
    /* predefined attributes are read-only */
    int k = MPI_TAG_UB;
    MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &flag));
    MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB));
    MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&k));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int k1, k2, k3, flag;
    MPI_Comm d1, d2, d3;

    p2p_setstep("set/get and copy on dup");
    MPI_OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &k1, &marker));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d1));
    CHECK(get(d1, k1, &flag) == 0 && !flag, "attribute present before set");
    MPI_OK(MPI_Comm_set_attr(d1, k1, (void *)(intptr_t)10));
    CHECK(get(d1, k1, &flag) == 10 && flag, "get after set");
    MPI_OK(MPI_Comm_dup(d1, &d2));
    CHECK(copies == 1, "copy callback ran %d times", copies);
    CHECK(get(d2, k1, &flag) == 11 && flag, "copied value");
    CHECK(get(d1, k1, &flag) == 10 && flag, "original value after dup");

    p2p_setstep("overwrite and delete");
    MPI_OK(MPI_Comm_set_attr(d1, k1, (void *)(intptr_t)20));
    CHECK(deletes == 1 && last_deleted == 10 && last_deleted_comm == d1, "overwrite: deletes %d last %ld", deletes,
          (long)last_deleted);
    MPI_OK(MPI_Comm_delete_attr(d1, k1));
    CHECK(deletes == 2 && last_deleted == 20, "delete_attr: deletes %d last %ld", deletes, (long)last_deleted);
    CHECK(get(d1, k1, &flag) == 0 && !flag, "attribute present after delete");

    p2p_setstep("MPI_COMM_NULL_COPY_FN and MPI_COMM_DUP_FN");
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k2, NULL));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k3, NULL));
    CHECK(k1 != k2 && k2 != k3 && k1 != MPI_KEYVAL_INVALID, "keyvals %d %d %d", k1, k2, k3);
    static int payload = 77;
    MPI_OK(MPI_Comm_set_attr(d2, k2, &payload));
    MPI_OK(MPI_Comm_set_attr(d2, k3, &payload));
    MPI_OK(MPI_Comm_dup(d2, &d3));
    CHECK(copies == 2, "copy callback ran %d times", copies);
    get(d3, k2, &flag);
    CHECK(!flag, "MPI_COMM_NULL_COPY_FN attribute was copied");
    CHECK(get(d3, k3, &flag) == (intptr_t)&payload && flag, "MPI_COMM_DUP_FN did not copy the value");
    CHECK(get(d3, k1, &flag) == 12 && flag, "second-generation copy");

    p2p_setstep("free runs delete callbacks");
    MPI_OK(MPI_Comm_free(&d2));
    CHECK(deletes == 3 && last_deleted == 11, "free of d2: deletes %d last %ld", deletes, (long)last_deleted);

    p2p_setstep("freed keyval stays alive while used");
    MPI_OK(MPI_Comm_set_attr(d1, k1, (void *)(intptr_t)30));
    MPI_OK(MPI_Comm_free_keyval(&k1));
    CHECK(k1 == MPI_KEYVAL_INVALID, "free_keyval did not reset the handle");
    MPI_OK(MPI_Comm_free(&d1));
    CHECK(deletes == 4 && last_deleted == 30, "delete after free_keyval: deletes %d last %ld", deletes,
          (long)last_deleted);
    MPI_OK(MPI_Comm_free(&d3));
    CHECK(deletes == 5 && last_deleted == 12, "free of d3: deletes %d", deletes);
    MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, k1, NULL));

    p2p_setstep("failing copy callback fails the dup");
    int kf;
    MPI_OK(MPI_Comm_create_keyval(copy_fail, MPI_COMM_NULL_DELETE_FN, &kf, NULL));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d1));
    MPI_OK(MPI_Comm_set_attr(d1, kf, NULL));
    MPI_FAILS(MPI_ERR_OTHER, MPI_Comm_dup(d1, &d2));
    MPI_OK(MPI_Comm_free(&d1));
    MPI_OK(MPI_Comm_free_keyval(&kf));

    p2p_setstep("wrong keyval kinds");
    int tk;
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tk, NULL));
    MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, tk, NULL));
    MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&tk));
    MPI_FAILS(MPI_ERR_KEYVAL, MPI_Type_set_attr(MPI_INT, k2, NULL));
    int inv = MPI_KEYVAL_INVALID;
    void *dummy;
    MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_get_attr(MPI_COMM_WORLD, inv, &dummy, &flag));
    MPI_FAILS(MPI_ERR_COMM, MPI_Comm_set_attr(MPI_COMM_NULL, k2, NULL));

    p2p_setstep("datatype attributes");
    int tk2;
    deletes = 0;
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, delete_fn, &tk2, &marker));
    MPI_Datatype vec;
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &vec));
    MPI_OK(MPI_Type_set_attr(vec, tk2, (void *)(intptr_t)5));
    MPI_OK(MPI_Type_set_attr(MPI_INT, tk2, (void *)(intptr_t)6));
    void *tv = NULL;
    MPI_OK(MPI_Type_get_attr(vec, tk2, &tv, &flag));
    CHECK(flag && (intptr_t)tv == 5, "type attribute %ld", (long)(intptr_t)tv);
    MPI_OK(MPI_Type_get_attr(MPI_INT, tk2, &tv, &flag));
    CHECK(flag && (intptr_t)tv == 6, "attribute on MPI_INT %ld", (long)(intptr_t)tv);
    MPI_OK(MPI_Type_get_attr(MPI_DOUBLE, tk2, &tv, &flag));
    CHECK(!flag, "attribute on MPI_DOUBLE that was never set");
    MPI_OK(MPI_Type_delete_attr(vec, tk2));
    MPI_OK(MPI_Type_delete_attr(MPI_INT, tk2));
    CHECK(deletes == 2, "type delete callbacks %d", deletes);
    MPI_OK(MPI_Type_get_attr(vec, tk2, &tv, &flag));
    CHECK(!flag, "type attribute after delete");
    MPI_FAILS(MPI_ERR_TYPE, MPI_Type_set_attr(MPI_DATATYPE_NULL, tk2, NULL));
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free_keyval(&tk2));
    MPI_OK(MPI_Type_free_keyval(&tk));

    p2p_setstep("window keyvals");
    int wk;
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &wk, NULL));
    MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, wk, NULL));
    MPI_OK(MPI_Win_free_keyval(&wk));

    p2p_setstep("MPI-1 keyval and attribute names");
    int ok;
    copies = deletes = 0;
    MPI_OK(MPI_Keyval_create(copy_fn, delete_fn, &ok, &marker));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d1));
    MPI_OK(MPI_Attr_put(d1, ok, (void *)(intptr_t)100));
    MPI_OK(MPI_Comm_dup(d1, &d2));
    void *av = NULL;
    MPI_OK(MPI_Attr_get(d2, ok, &av, &flag));
    CHECK(flag && (intptr_t)av == 101 && copies == 1, "Attr_get %ld copies %d", (long)(intptr_t)av, copies);
    MPI_OK(MPI_Attr_delete(d2, ok));
    CHECK(deletes == 1 && last_deleted == 101, "Attr_delete");
    MPI_OK(MPI_Keyval_free(&ok));
    MPI_OK(MPI_Comm_free(&d2));
    MPI_OK(MPI_Comm_free(&d1));
    CHECK(deletes == 2 && last_deleted == 100, "free after Keyval_free: %d", deletes);

    predefined();

    /* attributes of MPI_COMM_SELF are deleted first thing in MPI_Finalize,
     * newest first, while MPI is still usable */
    int ks;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete_fn, &ks, NULL));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, ks, (void *)(intptr_t)1));
    int ks2;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete_fn, &ks2, NULL));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, ks2, (void *)(intptr_t)2));
    MPI_OK(MPI_Comm_free_keyval(&ks));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    if (self_deletes != 2 || self_bad || self_delete_order[0] != 2 || self_delete_order[1] != 1) {
        printf("FAIL rank %d: MPI_COMM_SELF delete callbacks at MPI_Finalize: %d calls, order %d %d, bad %d\n",
               p2p_rank, self_deletes, self_delete_order[0], self_delete_order[1], self_bad);
        return 1;
    }
    return 0;
}
