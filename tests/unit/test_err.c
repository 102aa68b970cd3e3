/* Unit test of error codes, classes and strings (src/core/err.c) and of
 * MPI_Error_class / MPI_Error_string, which work before MPI_Init. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/core.h"

static int class_of(int code)
{
    int c = -1;
    return PMPI_Error_class(code, &c) == MPI_SUCCESS ? c : -1;
}

static const char *string_of(int code, int *len)
{
    static char s[MPI_MAX_ERROR_STRING];
    memset(s, 'x', sizeof s);
    *len = -1;
    if (PMPI_Error_string(code, s, len) != MPI_SUCCESS)
        return "";
    return s;
}

int main(void)
{
    int len;

    /* every predefined class maps to itself, has a name and a text */
    for (int c = MPI_SUCCESS; c <= MPI_ERR_ERRHANDLER; c++) {
        if (c == 54) { /* unused value in the MPICH numbering */
            CHECK(!wh_err_valid(c));
            continue;
        }
        CHECK(wh_err_valid(c));
        CHECK(wh_err_is_class(c));
        CHECK(class_of(c) == c);
        const char *s = string_of(c, &len);
        CHECK(len > 0 && (size_t)len == strlen(s));
        CHECK(wh_err_class_name(c) != NULL);
    }
    CHECK(!strcmp(wh_err_class_name(MPI_ERR_RANK), "MPI_ERR_RANK"));
    CHECK(!strcmp(wh_err_class_name(MPI_ERR_ERRHANDLER), "MPI_ERR_ERRHANDLER"));
    CHECK(strstr(string_of(MPI_ERR_TRUNCATE, &len), "truncated") != NULL);
    CHECK(strstr(string_of(MPI_ERR_RANK, &len), "rank") != NULL);
    CHECK(!strcmp(string_of(MPI_SUCCESS, &len), "No error"));

    /* codes carry their message and their class */
    int c1 = wh_error(MPI_ERR_RANK, "rank %d is out of range (size %d)", 7, 4);
    int c2 = wh_error(MPI_ERR_TAG, "tag %d is negative", -3);
    CHECK(c1 != c2);
    CHECK(c1 > MPI_ERR_ERRHANDLER && c1 <= MPI_ERR_LASTCODE && c1 > 0);
    CHECK(c2 > MPI_ERR_ERRHANDLER && c2 <= MPI_ERR_LASTCODE);
    CHECK(!wh_err_is_class(c1));
    CHECK(wh_error_class(c1) == MPI_ERR_RANK);
    CHECK(class_of(c1) == MPI_ERR_RANK);
    CHECK(class_of(c2) == MPI_ERR_TAG);
    CHECK(!strcmp(string_of(c1, &len), "rank 7 is out of range (size 4)"));
    CHECK(len == (int)strlen("rank 7 is out of range (size 4)"));
    CHECK(!strcmp(string_of(c2, &len), "tag -3 is negative"));
    char buf[16];
    CHECK(!strcmp(wh_error_text(c1, buf, sizeof buf), "rank 7 is out o"));

    /* a message longer than MPI_MAX_ERROR_STRING is cut, not overflowed */
    char big[2 * MPI_MAX_ERROR_STRING];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    int c3 = wh_error(MPI_ERR_OTHER, "%s", big);
    const char *s3 = string_of(c3, &len);
    CHECK(len == MPI_MAX_ERROR_STRING - 1 && (size_t)len == strlen(s3));

    /* wh_error(MPI_SUCCESS) is success; user classes pass through */
    CHECK(wh_error(MPI_SUCCESS, "nothing") == MPI_SUCCESS);

    /* old codes degrade to their class text once the ring moved on */
    for (int i = 0; i < 1000; i++)
        (void)wh_error(MPI_ERR_COUNT, "filler %d", i);
    CHECK(class_of(c1) == MPI_ERR_RANK);
    CHECK(!strcmp(string_of(c1, &len), string_of(MPI_ERR_RANK, &len)));
    int c4 = wh_error(MPI_ERR_COUNT, "recent");
    CHECK(!strcmp(string_of(c4, &len), "recent"));

    /* invalid values */
    CHECK(!wh_err_valid(-1));
    CHECK(!wh_err_valid(MPI_ERR_LASTCODE + 1));
    CHECK(!wh_err_valid(0x7fffffff));
    CHECK(!wh_err_valid((1 << 7) | 100)); /* class bits name no class */
    CHECK(wh_error_class(-5) == MPI_ERR_UNKNOWN);

    /* classes and codes added at run time */
    CHECK(wh_err_lastusedcode == MPI_ERR_LASTCODE);
    int uc = 0, ucode = 0, ucode2 = 0;
    CHECK(wh_err_add_class(&uc) == MPI_SUCCESS);
    CHECK(uc > MPI_ERR_LASTCODE);
    CHECK(wh_err_is_class(uc) && wh_err_valid(uc));
    CHECK(wh_err_lastusedcode >= uc);
    CHECK(wh_err_add_code(uc, &ucode) == MPI_SUCCESS);
    CHECK(ucode > uc && !wh_err_is_class(ucode));
    CHECK(class_of(ucode) == uc);
    CHECK(class_of(uc) == uc);
    CHECK(wh_err_lastusedcode >= ucode);
    CHECK(!strcmp(string_of(ucode, &len), "") && len == 0); /* no string set yet */
    CHECK(wh_err_add_string(ucode, "disk on fire") == MPI_SUCCESS);
    CHECK(!strcmp(string_of(ucode, &len), "disk on fire"));
    CHECK(wh_err_add_string(uc, "storage errors") == MPI_SUCCESS);
    CHECK(!strcmp(string_of(uc, &len), "storage errors"));
    CHECK(wh_err_add_code(MPI_ERR_IO, &ucode2) == MPI_SUCCESS);
    CHECK(class_of(ucode2) == MPI_ERR_IO);
    /* predefined values and codes are not classes */
    int dummy;
    CHECK(wh_error_class(wh_err_add_string(MPI_ERR_RANK, "x")) == MPI_ERR_ARG);
    CHECK(wh_error_class(wh_err_add_code(ucode, &dummy)) == MPI_ERR_ARG);
    CHECK(wh_error_class(wh_err_add_code(-1, &dummy)) == MPI_ERR_ARG);
    char huge[MPI_MAX_ERROR_STRING + 8];
    memset(huge, 'b', sizeof huge - 1);
    huge[sizeof huge - 1] = '\0';
    CHECK(wh_error_class(wh_err_add_string(ucode, huge)) == MPI_ERR_ARG);

    /* removal (MPI-4.1): a class with codes or a string stays; codes, its string, then the class go */
    CHECK(wh_error_class(wh_err_remove(uc, WH_ERR_RM_CLASS)) == MPI_ERR_ARG);
    CHECK(wh_error_class(wh_err_remove(ucode, WH_ERR_RM_CLASS)) == MPI_ERR_ARG);
    CHECK(wh_error_class(wh_err_remove(MPI_ERR_RANK, WH_ERR_RM_CODE)) == MPI_ERR_ARG);
    CHECK(wh_err_remove(ucode, WH_ERR_RM_STRING) == MPI_SUCCESS);
    CHECK(!strcmp(string_of(ucode, &len), ""));
    CHECK(wh_err_remove(ucode, WH_ERR_RM_CODE) == MPI_SUCCESS);
    CHECK(!wh_err_valid(ucode));
    /* no codes left, but its string: the string goes first (as mpi4py's test expects) */
    CHECK(wh_error_class(wh_err_remove(uc, WH_ERR_RM_CLASS)) == MPI_ERR_ARG);
    CHECK(wh_err_remove(uc, WH_ERR_RM_STRING) == MPI_SUCCESS);
    CHECK(wh_err_remove(uc, WH_ERR_RM_CLASS) == MPI_SUCCESS);
    CHECK(!wh_err_valid(uc));
    CHECK(wh_err_lastusedcode == ucode2); /* the largest value still in use */
    CHECK(wh_err_remove(ucode2, WH_ERR_RM_CODE) == MPI_SUCCESS);
    CHECK(wh_err_lastusedcode == MPI_ERR_LASTCODE);

    /* the predefined error handlers exist before MPI_Init */
    CHECK(wh_errh_get(MPI_ERRORS_RETURN) && wh_errh_get(MPI_ERRORS_RETURN)->kind == WH_ERRH_RETURN);
    CHECK(wh_errh_get(MPI_ERRORS_ARE_FATAL) && wh_errh_get(MPI_ERRORS_ARE_FATAL)->kind == WH_ERRH_FATAL);
    CHECK(wh_errh_get(MPI_ERRORS_ABORT) && wh_errh_get(MPI_ERRORS_ABORT)->kind == WH_ERRH_ABORT);
    CHECK(wh_errh_get(MPI_ERRHANDLER_NULL) == NULL);
    CHECK(wh_errh_get(MPI_ERRORS_RETURN + 1) == NULL);
    CHECK(wh_comm_get(MPI_COMM_WORLD) == NULL); /* not before MPI_Init */

    return DONE();
}
