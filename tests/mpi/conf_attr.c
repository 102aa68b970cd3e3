/* Attribute corners: attributes whose keyval was already freed can still be
 * read and deleted (the keyval lives until its last attribute is gone); a
 * keyval freed again while alive is a no-op (MPICH), once gone an error; and
 * delete callbacks that delete other attributes of the same object, on
 * communicators (MPI_Comm_delete_attr, MPI_Comm_free, MPI_Finalize for
 * MPI_COMM_SELF and MPI_COMM_WORLD) and on datatypes (MPI_Type_free). */
#include <stdint.h>

#include "p2p_check.h"

static int deletes[8];
static int k_comm[4], k_type[4];

/* extra_state: index into deletes[] */
static int count_del(MPI_Comm c, int k, void *v, void *extra)
{
    (void)c, (void)k, (void)v;
    deletes[(intptr_t)extra]++;
    return MPI_SUCCESS;
}

/* deletes the attributes of k_comm[0] and k_comm[2] (older and newer) */
static int comm_del_others(MPI_Comm c, int k, void *v, void *extra)
{
    (void)k, (void)v;
    deletes[(intptr_t)extra]++;
    MPI_Comm_delete_attr(c, k_comm[0]);
    MPI_Comm_delete_attr(c, k_comm[2]);
    return MPI_SUCCESS;
}

static int type_del_others(MPI_Datatype t, int k, void *v, void *extra)
{
    (void)k, (void)v;
    deletes[(intptr_t)extra]++;
    MPI_Type_delete_attr(t, k_type[0]);
    MPI_Type_delete_attr(t, k_type[2]);
    return MPI_SUCCESS;
}

static void reset(void) { memset(deletes, 0, sizeof deletes); }

/* three attributes k[0] < k[1] < k[2] (creation order); k[1] deletes the others */
static void comm_three(MPI_Comm c, int base)
{
    for (int i = 0; i < 3; i++)
        MPI_OK(MPI_Comm_set_attr(c, k_comm[i], (void *)(intptr_t)(base + i)));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Comm dup;
    void *v = NULL;
    int flag = -1;

    p2p_setstep("communicator: freed keyval, attribute still there");
    int k, kcopy;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_del, &k, (void *)(intptr_t)0));
    kcopy = k;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Comm_set_attr(dup, k, (void *)(intptr_t)42));
    MPI_OK(MPI_Comm_free_keyval(&k));
    CHECK(k == MPI_KEYVAL_INVALID, "keyval not reset: %d", k);
    MPI_OK(MPI_Comm_get_attr(dup, kcopy, &v, &flag));
    CHECK(flag == 1 && (intptr_t)v == 42, "flag %d value %ld", flag, (long)(intptr_t)v);
    MPI_OK(MPI_Comm_free_keyval(&kcopy)); /* freed again while alive: no-op (MPICH) */
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_del, &k, (void *)(intptr_t)1));
    kcopy = k;
    MPI_OK(MPI_Comm_set_attr(dup, k, (void *)(intptr_t)43));
    MPI_OK(MPI_Comm_free_keyval(&k));
    reset();
    MPI_OK(MPI_Comm_delete_attr(dup, kcopy));
    CHECK(deletes[1] == 1, "delete callback ran %d times", deletes[1]);
    /* the last attribute is gone, so is the keyval */
    MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_delete_attr(dup, kcopy));
    MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&kcopy));
    MPI_OK(MPI_Comm_free(&dup));
    CHECK(deletes[0] == 1, "first keyval's delete callback ran %d times", deletes[0]);

    p2p_setstep("datatype: freed keyval, attribute still there");
    MPI_Datatype t;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, (MPI_Type_delete_attr_function *)count_del, &k,
                                  (void *)(intptr_t)2));
    kcopy = k;
    MPI_OK(MPI_Type_set_attr(t, k, (void *)(intptr_t)44));
    MPI_OK(MPI_Type_free_keyval(&k));
    MPI_OK(MPI_Type_get_attr(t, kcopy, &v, &flag));
    CHECK(flag == 1 && (intptr_t)v == 44, "flag %d value %ld", flag, (long)(intptr_t)v);
    reset();
    MPI_OK(MPI_Type_delete_attr(t, kcopy));
    CHECK(deletes[2] == 1, "delete callback ran %d times", deletes[2]);
    MPI_FAILS(MPI_ERR_KEYVAL, MPI_Type_delete_attr(t, kcopy));
    MPI_OK(MPI_Type_free(&t));

    p2p_setstep("window keyvals: freed twice");
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &k, NULL));
    kcopy = k;
    MPI_OK(MPI_Win_free_keyval(&k));
    MPI_FAILS(MPI_ERR_KEYVAL, MPI_Win_free_keyval(&kcopy)); /* nothing keeps it alive */

    p2p_setstep("delete callbacks deleting other attributes");
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_del, &k_comm[0], (void *)(intptr_t)0));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_del_others, &k_comm[1], (void *)(intptr_t)1));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_del, &k_comm[2], (void *)(intptr_t)2));
    /* explicit delete */
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    comm_three(dup, 10);
    reset();
    MPI_OK(MPI_Comm_delete_attr(dup, k_comm[1]));
    CHECK(deletes[0] == 1 && deletes[1] == 1 && deletes[2] == 1, "callbacks ran %d %d %d times", deletes[0],
          deletes[1], deletes[2]);
    for (int i = 0; i < 3; i++) {
        MPI_OK(MPI_Comm_get_attr(dup, k_comm[i], &v, &flag));
        CHECK(flag == 0, "attribute %d still set", i);
    }
    /* MPI_Comm_free */
    comm_three(dup, 20);
    reset();
    MPI_OK(MPI_Comm_free(&dup));
    CHECK(deletes[0] == 1 && deletes[1] == 1 && deletes[2] == 1, "callbacks at free ran %d %d %d times",
          deletes[0], deletes[1], deletes[2]);
    /* datatypes */
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, (MPI_Type_delete_attr_function *)count_del, &k_type[0],
                                  (void *)(intptr_t)3));
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_del_others, &k_type[1], (void *)(intptr_t)4));
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, (MPI_Type_delete_attr_function *)count_del, &k_type[2],
                                  (void *)(intptr_t)5));
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &t));
    for (int i = 0; i < 3; i++)
        MPI_OK(MPI_Type_set_attr(t, k_type[i], (void *)(intptr_t)i));
    reset();
    MPI_OK(MPI_Type_delete_attr(t, k_type[1]));
    CHECK(deletes[3] == 1 && deletes[4] == 1 && deletes[5] == 1, "type callbacks ran %d %d %d times", deletes[3],
          deletes[4], deletes[5]);
    for (int i = 0; i < 3; i++)
        MPI_OK(MPI_Type_set_attr(t, k_type[i], (void *)(intptr_t)i));
    reset();
    MPI_OK(MPI_Type_free(&t));
    CHECK(deletes[3] == 1 && deletes[4] == 1 && deletes[5] == 1, "type callbacks at free ran %d %d %d times",
          deletes[3], deletes[4], deletes[5]);
    for (int i = 0; i < 3; i++)
        MPI_OK(MPI_Type_free_keyval(&k_type[i]));

    /* and at MPI_Finalize, on both builtin communicators, keyvals already freed */
    comm_three(MPI_COMM_SELF, 30);
    comm_three(MPI_COMM_WORLD, 40);
    for (int i = 0; i < 3; i++)
        MPI_OK(MPI_Comm_free_keyval(&k_comm[i]));
    reset();
    MPI_Finalize();
    if (deletes[0] != 2 || deletes[1] != 2 || deletes[2] != 2) {
        printf("FAIL rank %d: callbacks at MPI_Finalize ran %d %d %d times, expected 2 each\n", p2p_rank, deletes[0],
               deletes[1], deletes[2]);
        return 1;
    }
    return 0;
}
