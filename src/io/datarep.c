/* User data representations (MPI_Register_datarep, MPI-4.1 section 14.5.3).
 *
 * A registered representation is a name with conversion and extent
 * functions.  A file view may name it once registered; wharf requires the
 * file extent of the view's etype (a predefined type) to equal its memory
 * extent — views whose file layout would differ from the memory layout are
 * refused with MPI_ERR_UNSUPPORTED_DATAREP — and calls the conversion
 * functions on every transfer (rw.c), MPI_CONVERSION_FN_NULL meaning the
 * bytes move unconverted.  Registrations last until MPI_Finalize. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

static wh_datarep_t *reps;
static pthread_mutex_t reps_lock = PTHREAD_MUTEX_INITIALIZER;

static int builtin_name(const char *name)
{
    return !strcmp(name, "native") || !strcmp(name, "internal") || !strcmp(name, "external32");
}

int wh_datarep_register(const char *name, const wh_datarep_t *fns)
{
    if (!name)
        return wh_error(MPI_ERR_ARG, "datarep is NULL");
    size_t len = strlen(name);
    if (len == 0 || len >= MPI_MAX_DATAREP_STRING)
        return wh_error(MPI_ERR_ARG, "datarep name of %zu characters (must be 1..%d)", len, MPI_MAX_DATAREP_STRING - 1);
    if (!fns->extent_fn)
        return wh_error(MPI_ERR_ARG, "dtype_file_extent_fn is NULL");
    if (builtin_name(name))
        return wh_error(MPI_ERR_DUP_DATAREP, "data representation '%s' is predefined", name);
    wh_datarep_t *r = malloc(sizeof *r);
    if (!r)
        return wh_error(MPI_ERR_NO_MEM, "out of memory registering a data representation");
    *r = *fns;
    memcpy(r->name, name, len + 1);
    r->next = NULL;
    pthread_mutex_lock(&reps_lock);
    for (wh_datarep_t *o = reps; o; o = o->next)
        if (!strcmp(o->name, name)) {
            pthread_mutex_unlock(&reps_lock);
            free(r);
            return wh_error(MPI_ERR_DUP_DATAREP, "data representation '%s' is already registered", name);
        }
    r->next = reps;
    reps = r;
    pthread_mutex_unlock(&reps_lock);
    return MPI_SUCCESS;
}

const wh_datarep_t *wh_datarep_find(const char *name)
{
    pthread_mutex_lock(&reps_lock);
    wh_datarep_t *r = reps;
    while (r && strcmp(r->name, name))
        r = r->next;
    pthread_mutex_unlock(&reps_lock);
    return r;
}

int wh_datarep_check_view(const wh_datarep_t *r, MPI_Datatype etype, const wh_dtype_t *et)
{
    if (!et->predefined)
        return wh_error(MPI_ERR_UNSUPPORTED_DATAREP, "data representation '%s' with a derived etype: wharf supports "
                        "user representations only with predefined etypes", r->name);
    MPI_Aint ext = -1;
    int rc = r->extent_fn(etype, &ext, r->extra);
    if (rc != MPI_SUCCESS)
        return rc;
    if (ext != et->extent)
        return wh_error(MPI_ERR_UNSUPPORTED_DATAREP, "data representation '%s' stores the etype in %lld bytes, its "
                        "memory extent is %lld: wharf supports only representations of the same extent",
                        r->name, (long long)ext, (long long)et->extent);
    return MPI_SUCCESS;
}

int wh_datarep_convert(const wh_datarep_t *r, int write, void *userbuf, MPI_Datatype dt, MPI_Count count,
                       void *filebuf, MPI_Offset position)
{
    MPI_Datarep_conversion_function *fn = write ? r->write_fn : r->read_fn;
    MPI_Datarep_conversion_function_c *fn_c = write ? r->write_fn_c : r->read_fn_c;
    int rc;
    if (fn_c)
        rc = fn_c(userbuf, dt, count, filebuf, position, r->extra);
    else if (!fn)
        return MPI_SUCCESS;
    else if (count > 0x7fffffff || position > 0x7fffffff)
        return wh_error(MPI_ERR_VALUE_TOO_LARGE, "conversion of data representation '%s' at element %lld, count "
                        "%lld does not fit the int arguments (register it with MPI_Register_datarep_c)",
                        r->name, (long long)position, (long long)count);
    else
        rc = fn(userbuf, dt, (int)count, filebuf, position, r->extra);
    return rc == MPI_SUCCESS ? rc
                             : wh_error(rc, "the %s conversion function of data representation '%s' returned %d",
                                        write ? "write" : "read", r->name, rc);
}

void wh_datarep_finalize(void)
{
    pthread_mutex_lock(&reps_lock);
    while (reps) {
        wh_datarep_t *n = reps->next;
        free(reps);
        reps = n;
    }
    pthread_mutex_unlock(&reps_lock);
}
