/* Names of the predefined datatypes: the name the MPI standard lists first
 * for each handle (MPI_C_COMPLEX for the MPI_C_COMPLEX/MPI_C_FLOAT_COMPLEX
 * handle, MPI_LONG_LONG_INT for MPI_LONG_LONG_INT/MPI_LONG_LONG), and the
 * name of MPI_DATATYPE_NULL (MPICH returns "MPI_DATATYPE_NULL"). */
#include "p2p_check.h"

#define T(x) {x, #x}
static const struct {
    MPI_Datatype t;
    const char *name;
} types[] = {
    T(MPI_CHAR), T(MPI_SIGNED_CHAR), T(MPI_UNSIGNED_CHAR), T(MPI_BYTE), T(MPI_WCHAR), T(MPI_SHORT),
    T(MPI_UNSIGNED_SHORT), T(MPI_INT), T(MPI_UNSIGNED), T(MPI_LONG), T(MPI_UNSIGNED_LONG), T(MPI_LONG_LONG_INT),
    T(MPI_UNSIGNED_LONG_LONG), T(MPI_FLOAT), T(MPI_DOUBLE), T(MPI_LONG_DOUBLE), T(MPI_PACKED), T(MPI_LB), T(MPI_UB),
    T(MPI_INT8_T), T(MPI_INT16_T), T(MPI_INT32_T), T(MPI_INT64_T), T(MPI_UINT8_T), T(MPI_UINT16_T),
    T(MPI_UINT32_T), T(MPI_UINT64_T), T(MPI_C_BOOL), T(MPI_C_COMPLEX), T(MPI_C_DOUBLE_COMPLEX),
    T(MPI_C_LONG_DOUBLE_COMPLEX), T(MPI_AINT), T(MPI_OFFSET), T(MPI_COUNT), T(MPI_CXX_BOOL),
    T(MPI_CXX_FLOAT_COMPLEX), T(MPI_CXX_DOUBLE_COMPLEX), T(MPI_CXX_LONG_DOUBLE_COMPLEX), T(MPI_FLOAT_INT),
    T(MPI_DOUBLE_INT), T(MPI_LONG_INT), T(MPI_SHORT_INT), T(MPI_LONG_DOUBLE_INT), T(MPI_2INT), T(MPI_CHARACTER),
    T(MPI_INTEGER), T(MPI_REAL), T(MPI_LOGICAL), T(MPI_COMPLEX), T(MPI_DOUBLE_PRECISION), T(MPI_2INTEGER),
    T(MPI_2REAL), T(MPI_DOUBLE_COMPLEX), T(MPI_2DOUBLE_PRECISION), T(MPI_REAL4), T(MPI_COMPLEX8), T(MPI_REAL8),
    T(MPI_COMPLEX16), T(MPI_REAL16), T(MPI_COMPLEX32), T(MPI_INTEGER1), T(MPI_INTEGER2), T(MPI_INTEGER4),
    T(MPI_INTEGER8),
};

static void expect(MPI_Datatype t, const char *want)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    memset(name, 'x', sizeof name);
    MPI_OK(MPI_Type_get_name(t, name, &len));
    CHECK(!strcmp(name, want), "name of %s is '%s'", want, name);
    CHECK(len == (int)strlen(want), "resultlen %d for %s", len, want);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    p2p_setstep("predefined names");
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        expect(types[i].t, types[i].name);
    /* synonyms share a handle: the first-listed name wins */
    expect(MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX");
    expect(MPI_LONG_LONG, "MPI_LONG_LONG_INT");
    p2p_setstep("null handle");
    expect(MPI_DATATYPE_NULL, "MPI_DATATYPE_NULL");
    MPI_FAILS(MPI_ERR_TYPE, MPI_Type_set_name(MPI_DATATYPE_NULL, "x"));
    p2p_setstep("derived and renamed");
    MPI_Datatype t;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    expect(t, "");
    MPI_OK(MPI_Type_set_name(t, "pair"));
    expect(t, "pair");
    MPI_OK(MPI_Type_free(&t));
    MPI_Finalize();
    return 0;
}
