/* MPI datatype queries (size, extents, names, envelope/contents), addresses,
 * MPI_Pack/Unpack (native and external32), MPI_Get_count/Get_elements and
 * MPI_Type_match_size / MPI_Type_get_value_index. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtype/dtype.h"
#include "mem/mem.h"
#include "mpi/api.h"

#define RAISE(fname, cls, ...) wh_raise_comm(NULL, (fname), wh_error((cls), __VA_ARGS__))
#define CHK_NULL(fname, p, name)                                                                  \
    do {                                                                                          \
        if (!(p))                                                                                 \
            return RAISE((fname), MPI_ERR_ARG, "%s is NULL", (name));                             \
    } while (0)

#define GET_TYPE(fname, h, t)                                                                     \
    do {                                                                                          \
        int rc_ = wh_dtype_arg((fname), (h), "datatype", &(t));                                   \
        if (rc_)                                                                                  \
            return rc_;                                                                           \
    } while (0)

/* ---------- size and extents ---------- */

static int body_Type_size(MPI_Datatype datatype, int *size)
{
    wh_dtype_t *t;
    GET_TYPE("MPI_Type_size", datatype, t);
    CHK_NULL("MPI_Type_size", size, "size");
    *size = t->size > INT_MAX ? MPI_UNDEFINED : (int)t->size;
    return MPI_SUCCESS;
}

static int size_count(const char *fname, MPI_Datatype datatype, MPI_Count *size)
{
    wh_dtype_t *t;
    GET_TYPE(fname, datatype, t);
    CHK_NULL(fname, size, "size");
    *size = (MPI_Count)t->size;
    return MPI_SUCCESS;
}

static int body_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    return size_count("MPI_Type_size_x", datatype, size);
}

static int body_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    return size_count("MPI_Type_size_c", datatype, size);
}

/* which: 0 = extent, 1 = true extent (MPI_Aint and MPI_Count are both long) */
static int extent_of(const char *fname, MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent, int which)
{
    wh_dtype_t *t;
    GET_TYPE(fname, datatype, t);
    CHK_NULL(fname, lb, which ? "true_lb" : "lb");
    CHK_NULL(fname, extent, which ? "true_extent" : "extent");
    *lb = which ? t->true_lb : t->lb;
    *extent = which ? t->true_extent : t->extent;
    return MPI_SUCCESS;
}

static int body_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    return extent_of("MPI_Type_get_extent", datatype, lb, extent, 0);
}

static int body_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return extent_of("MPI_Type_get_extent_x", datatype, lb, extent, 0);
}

static int body_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return extent_of("MPI_Type_get_extent_c", datatype, lb, extent, 0);
}

static int body_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    return extent_of("MPI_Type_get_true_extent", datatype, true_lb, true_extent, 1);
}

static int body_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    return extent_of("MPI_Type_get_true_extent_x", datatype, true_lb, true_extent, 1);
}

static int body_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    return extent_of("MPI_Type_get_true_extent_c", datatype, true_lb, true_extent, 1);
}

/* deprecated MPI-1 queries; which: 0 extent, 1 lb, 2 ub */
static int mpi1_bound(const char *fname, MPI_Datatype datatype, MPI_Aint *out, int which)
{
    wh_dtype_t *t;
    GET_TYPE(fname, datatype, t);
    CHK_NULL(fname, out, which ? "displacement" : "extent");
    *out = which == 0 ? t->extent : which == 1 ? t->lb : t->lb + t->extent;
    return MPI_SUCCESS;
}

static int body_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    return mpi1_bound("MPI_Type_extent", datatype, extent, 0);
}

static int body_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    return mpi1_bound("MPI_Type_lb", datatype, displacement, 1);
}

static int body_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    return mpi1_bound("MPI_Type_ub", datatype, displacement, 2);
}

/* ---------- names ---------- */

static int body_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    static const char fname[] = "MPI_Type_get_name";
    wh_dtype_t *t;
    CHK_NULL(fname, type_name, "type_name");
    CHK_NULL(fname, resultlen, "resultlen");
    /* the null handle has a name too (MPICH returns it rather than an error) */
    const char *name = "MPI_DATATYPE_NULL";
    if (datatype != MPI_DATATYPE_NULL) {
        GET_TYPE(fname, datatype, t);
        name = t->name;
    }
    size_t n = strnlen(name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(type_name, name, n);
    type_name[n] = '\0';
    *resultlen = (int)n;
    return MPI_SUCCESS;
}

static int body_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    static const char fname[] = "MPI_Type_set_name";
    wh_dtype_t *t;
    GET_TYPE(fname, datatype, t);
    CHK_NULL(fname, type_name, "type_name");
    size_t n = strnlen(type_name, MPI_MAX_OBJECT_NAME - 1); /* longer names are truncated */
    memcpy(t->name, type_name, n);
    t->name[n] = '\0';
    return MPI_SUCCESS;
}

/* ---------- envelope and contents ---------- */

static int envelope(const char *fname, MPI_Datatype datatype, MPI_Count *ni, MPI_Count *na, MPI_Count *nc,
                    MPI_Count *nd, int *combiner, int large)
{
    wh_dtype_t *t;
    GET_TYPE(fname, datatype, t);
    const wh_dtype_contents_t *c = wh_dtype_contents(t);
    if (!c) {
        *ni = *na = *nc = *nd = 0;
        *combiner = MPI_COMBINER_NAMED;
        return MPI_SUCCESS;
    }
    if (c->large && !large)
        return RAISE(fname, MPI_ERR_TYPE,
                     "the datatype was created by a large-count (_c) constructor: use MPI_Type_get_envelope_c");
    *ni = c->ni;
    *na = c->na;
    *nc = c->nc;
    *nd = c->nd;
    *combiner = c->combiner;
    return MPI_SUCCESS;
}

static int body_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes,
                                  int *combiner)
{
    static const char fname[] = "MPI_Type_get_envelope";
    CHK_NULL(fname, num_integers, "num_integers");
    CHK_NULL(fname, num_addresses, "num_addresses");
    CHK_NULL(fname, num_datatypes, "num_datatypes");
    CHK_NULL(fname, combiner, "combiner");
    MPI_Count ni = 0, na = 0, nc = 0, nd = 0;
    int rc = envelope(fname, datatype, &ni, &na, &nc, &nd, combiner, 0);
    if (rc)
        return rc;
    *num_integers = (int)ni;
    *num_addresses = (int)na;
    *num_datatypes = (int)nd;
    return MPI_SUCCESS;
}

static int body_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers, MPI_Count *num_addresses,
                                    MPI_Count *num_large_counts, MPI_Count *num_datatypes, int *combiner)
{
    static const char fname[] = "MPI_Type_get_envelope_c";
    CHK_NULL(fname, num_integers, "num_integers");
    CHK_NULL(fname, num_addresses, "num_addresses");
    CHK_NULL(fname, num_large_counts, "num_large_counts");
    CHK_NULL(fname, num_datatypes, "num_datatypes");
    CHK_NULL(fname, combiner, "combiner");
    return envelope(fname, datatype, num_integers, num_addresses, num_large_counts, num_datatypes, combiner, 1);
}

static int contents(const char *fname, MPI_Datatype datatype, MPI_Count mi, MPI_Count ma, MPI_Count mc,
                    MPI_Count md, int *ints, MPI_Aint *aints, MPI_Count *counts, MPI_Datatype *types, int large)
{
    wh_dtype_t *t;
    GET_TYPE(fname, datatype, t);
    const wh_dtype_contents_t *c = wh_dtype_contents(t);
    if (!c)
        return RAISE(fname, MPI_ERR_TYPE, "%s is a predefined (named) datatype: it has no contents",
                     t->name[0] ? t->name : "the datatype");
    if (c->large && !large)
        return RAISE(fname, MPI_ERR_TYPE,
                     "the datatype was created by a large-count (_c) constructor: use MPI_Type_get_contents_c");
    if (mi < c->ni || ma < c->na || mc < c->nc || md < c->nd)
        return RAISE(fname, MPI_ERR_ARG,
                     "array sizes too small: the datatype needs %d integers, %d addresses, %d large counts and %d "
                     "datatypes (see MPI_Type_get_envelope)",
                     c->ni, c->na, c->nc, c->nd);
    if ((c->ni && !ints) || (c->na && !aints) || (c->nc && !counts) || (c->nd && !types))
        return RAISE(fname, MPI_ERR_ARG, "an output array the datatype needs is NULL");
    if (c->ni)
        memcpy(ints, c->ints, (size_t)c->ni * sizeof *ints);
    if (c->na)
        memcpy(aints, c->aints, (size_t)c->na * sizeof *aints);
    if (c->nc && counts) /* counts != NULL: checked above; said again for gcc -O3's -Wnonnull */
        memcpy(counts, c->counts, (size_t)c->nc * sizeof *counts);
    for (int i = 0; i < c->nd; i++) {
        types[i] = c->types[i];
        /* derived types are handed out as new references the user frees */
        wh_dtype_user_addref(wh_dtype_get_derived_any(c->types[i]));
    }
    return MPI_SUCCESS;
}

static int body_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                                  int array_of_integers[], MPI_Aint array_of_addresses[],
                                  MPI_Datatype array_of_datatypes[])
{
    return contents("MPI_Type_get_contents", datatype, max_integers, max_addresses, 0, max_datatypes,
                    array_of_integers, array_of_addresses, NULL, array_of_datatypes, 0);
}

static int body_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                                    MPI_Count max_large_counts, MPI_Count max_datatypes, int array_of_integers[],
                                    MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                                    MPI_Datatype array_of_datatypes[])
{
    return contents("MPI_Type_get_contents_c", datatype, max_integers, max_addresses, max_large_counts, max_datatypes,
                    array_of_integers, array_of_addresses, array_of_large_counts, array_of_datatypes, 1);
}

/* ---------- addresses ---------- */

static int body_Get_address(const void *location, MPI_Aint *address)
{
    CHK_NULL("MPI_Get_address", address, "address");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

static int body_Address(void *location, MPI_Aint *address)
{
    CHK_NULL("MPI_Address", address, "address");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

/* ---------- pack / unpack ---------- */

enum { PK_NATIVE = 0, PK_EXTERNAL = 1 };

static int chk_datarep(const char *fname, const char *datarep)
{
    CHK_NULL(fname, datarep, "datarep");
    if (strcmp(datarep, "external32") != 0)
        return RAISE(fname, MPI_ERR_UNSUPPORTED_DATAREP, "data representation \"%s\" is not supported (only "
                                                         "\"external32\")", datarep);
    return MPI_SUCCESS;
}

/* Bytes of (count, t) in representation rep. */
static int rep_bytes(const wh_dtype_t *t, MPI_Count count, int rep, size_t *n)
{
    return rep == PK_EXTERNAL ? wh_dtype_ext32_bytes(t, count, n) : wh_dtype_bytes_checked(t, count, n);
}

static int pack_common(const char *fname, const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                       MPI_Count outsize, MPI_Count *position, int rep)
{
    wh_dtype_t *t;
    size_t n;
    int rc;
    if (incount < 0)
        return RAISE(fname, MPI_ERR_COUNT, "incount is negative (%lld)", (long long)incount);
    if ((rc = wh_dtype_check_comm(datatype, &t)))
        return wh_raise_comm(NULL, fname, rc);
    CHK_NULL(fname, position, "position");
    if (outsize < 0)
        return RAISE(fname, MPI_ERR_ARG, "outsize is negative (%lld)", (long long)outsize);
    if ((rc = rep_bytes(t, incount, rep, &n)))
        return wh_raise_comm(NULL, fname, rc);
    MPI_Count pos = *position;
    if (pos < 0 || pos > outsize || (MPI_Count)n > outsize - pos)
        return RAISE(fname, MPI_ERR_ARG,
                     "out of space in the pack buffer: %zu bytes at position %lld do not fit in outsize %lld", n,
                     (long long)pos, (long long)outsize);
    if (n == 0)
        return MPI_SUCCESS;
    CHK_NULL(fname, outbuf, "outbuf");
    char *dst = (char *)outbuf + pos;
    if (rep == PK_EXTERNAL) { /* pack natively, then convert into place */
        size_t nn = wh_dtype_bytes(t, (size_t)incount);
        char *tmp = malloc(nn ? nn : 1);
        if (!tmp)
            return RAISE(fname, MPI_ERR_NO_MEM, "out of memory converting %zu bytes to external32", nn);
        char *ext = NULL;
        int dkind = wh_mem_query(dst); /* device memory: converted on the host, then copied */
        if (dkind != WH_MEM_HOST && !(ext = malloc(n))) {
            free(tmp);
            return RAISE(fname, MPI_ERR_NO_MEM, "out of memory staging %zu bytes of external32 for device memory", n);
        }
        if ((rc = wh_dtype_pack(inbuf, (size_t)incount, t, 0, tmp, nn)) == MPI_SUCCESS)
            wh_dtype_to_ext32(t, (size_t)incount, tmp, ext ? ext : dst);
        if (rc == MPI_SUCCESS && ext)
            rc = wh_mem_copy(dst, dkind, ext, WH_MEM_HOST, n);
        free(ext);
        free(tmp);
    } else {
        rc = wh_dtype_pack(inbuf, (size_t)incount, t, 0, dst, n);
    }
    if (rc)
        return wh_raise_comm(NULL, fname, rc);
    *position = pos + (MPI_Count)n;
    return MPI_SUCCESS;
}

static int unpack_common(const char *fname, const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                         MPI_Count outcount, MPI_Datatype datatype, int rep)
{
    wh_dtype_t *t;
    size_t n;
    int rc;
    if (outcount < 0)
        return RAISE(fname, MPI_ERR_COUNT, "outcount is negative (%lld)", (long long)outcount);
    if ((rc = wh_dtype_check_comm(datatype, &t)))
        return wh_raise_comm(NULL, fname, rc);
    CHK_NULL(fname, position, "position");
    if (insize < 0)
        return RAISE(fname, MPI_ERR_ARG, "insize is negative (%lld)", (long long)insize);
    if ((rc = rep_bytes(t, outcount, rep, &n)))
        return wh_raise_comm(NULL, fname, rc);
    MPI_Count pos = *position;
    if (pos < 0 || pos > insize || (MPI_Count)n > insize - pos)
        return RAISE(fname, MPI_ERR_TRUNCATE,
                     "the packed input holds %lld bytes after position %lld, but %lld elements need %zu",
                     (long long)(insize - pos), (long long)pos, (long long)outcount, n);
    if (n == 0)
        return MPI_SUCCESS;
    CHK_NULL(fname, inbuf, "inbuf");
    const char *src = (const char *)inbuf + pos;
    char *tmp = NULL;
    size_t nn = n;
    if (rep == PK_EXTERNAL) {
        nn = wh_dtype_bytes(t, (size_t)outcount);
        int skind = wh_mem_query(src); /* device memory: copied to the host, then converted */
        if (!(tmp = malloc((nn ? nn : 1) + (skind != WH_MEM_HOST ? n : 0))))
            return RAISE(fname, MPI_ERR_NO_MEM, "out of memory converting %zu bytes from external32", n);
        if (skind != WH_MEM_HOST) {
            char *ext = tmp + (nn ? nn : 1);
            if ((rc = wh_mem_copy(ext, WH_MEM_HOST, src, skind, n))) {
                free(tmp);
                return wh_raise_comm(NULL, fname, rc);
            }
            src = ext;
        }
        wh_dtype_from_ext32(t, (size_t)outcount, src, tmp);
        src = tmp;
    }
    rc = wh_dtype_unpack(outbuf, (size_t)outcount, t, 0, src, nn);
    free(tmp);
    if (rc)
        return wh_raise_comm(NULL, fname, rc);
    *position = pos + (MPI_Count)n;
    return MPI_SUCCESS;
}

static int chk_pack_comm(const char *fname, MPI_Comm comm)
{
    if (wh_comm_get(comm))
        return MPI_SUCCESS;
    if (comm == MPI_COMM_NULL)
        return RAISE(fname, MPI_ERR_COMM, "comm is MPI_COMM_NULL");
    return RAISE(fname, MPI_ERR_COMM, "comm 0x%x is not a valid communicator (freed or never created)",
                 (unsigned)comm);
}

static int body_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position,
                     MPI_Comm comm)
{
    static const char fname[] = "MPI_Pack";
    int rc;
    if ((rc = chk_pack_comm(fname, comm)))
        return rc;
    CHK_NULL(fname, position, "position");
    MPI_Count pos = *position;
    if ((rc = pack_common(fname, inbuf, incount, datatype, outbuf, outsize, &pos, PK_NATIVE)))
        return rc;
    *position = (int)pos; /* <= outsize, an int */
    return MPI_SUCCESS;
}

static int body_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                       MPI_Count *position, MPI_Comm comm)
{
    static const char fname[] = "MPI_Pack_c";
    int rc;
    if ((rc = chk_pack_comm(fname, comm)))
        return rc;
    return pack_common(fname, inbuf, incount, datatype, outbuf, outsize, position, PK_NATIVE);
}

static int body_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                       MPI_Datatype datatype, MPI_Comm comm)
{
    static const char fname[] = "MPI_Unpack";
    int rc;
    if ((rc = chk_pack_comm(fname, comm)))
        return rc;
    CHK_NULL(fname, position, "position");
    MPI_Count pos = *position;
    if ((rc = unpack_common(fname, inbuf, insize, &pos, outbuf, outcount, datatype, PK_NATIVE)))
        return rc;
    *position = (int)pos;
    return MPI_SUCCESS;
}

static int body_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount,
                         MPI_Datatype datatype, MPI_Comm comm)
{
    static const char fname[] = "MPI_Unpack_c";
    int rc;
    if ((rc = chk_pack_comm(fname, comm)))
        return rc;
    return unpack_common(fname, inbuf, insize, position, outbuf, outcount, datatype, PK_NATIVE);
}

static int pack_size(const char *fname, MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size,
                     int rep)
{
    wh_dtype_t *t;
    size_t n;
    int rc;
    if (rep == PK_NATIVE && (rc = chk_pack_comm(fname, comm)))
        return rc;
    if (incount < 0)
        return RAISE(fname, MPI_ERR_COUNT, "incount is negative (%lld)", (long long)incount);
    if ((rc = wh_dtype_check_comm(datatype, &t)))
        return wh_raise_comm(NULL, fname, rc);
    CHK_NULL(fname, size, "size");
    if ((rc = rep_bytes(t, incount, rep, &n)))
        return wh_raise_comm(NULL, fname, rc);
    *size = (MPI_Count)n; /* exact: the packed format is the bare stream */
    return MPI_SUCCESS;
}

static int body_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    MPI_Count n = 0;
    CHK_NULL("MPI_Pack_size", size, "size");
    int rc = pack_size("MPI_Pack_size", incount, datatype, comm, &n, PK_NATIVE);
    if (rc)
        return rc;
    if (n > INT_MAX)
        return RAISE("MPI_Pack_size", MPI_ERR_VALUE_TOO_LARGE,
                     "the packed size %lld does not fit in an int (use MPI_Pack_size_c)", (long long)n);
    *size = (int)n;
    return MPI_SUCCESS;
}

static int body_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    return pack_size("MPI_Pack_size_c", incount, datatype, comm, size, PK_NATIVE);
}

static int body_Pack_external(const char *datarep, const void *inbuf, int incount, MPI_Datatype datatype,
                              void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    static const char fname[] = "MPI_Pack_external";
    int rc = chk_datarep(fname, datarep);
    return rc ? rc : pack_common(fname, inbuf, incount, datatype, outbuf, outsize, position, PK_EXTERNAL);
}

static int body_Pack_external_c(const char *datarep, const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                                void *outbuf, MPI_Count outsize, MPI_Count *position)
{
    static const char fname[] = "MPI_Pack_external_c";
    int rc = chk_datarep(fname, datarep);
    return rc ? rc : pack_common(fname, inbuf, incount, datatype, outbuf, outsize, position, PK_EXTERNAL);
}

static int body_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position,
                                void *outbuf, int outcount, MPI_Datatype datatype)
{
    static const char fname[] = "MPI_Unpack_external";
    int rc = chk_datarep(fname, datarep);
    return rc ? rc : unpack_common(fname, inbuf, insize, position, outbuf, outcount, datatype, PK_EXTERNAL);
}

static int body_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize, MPI_Count *position,
                                  void *outbuf, MPI_Count outcount, MPI_Datatype datatype)
{
    static const char fname[] = "MPI_Unpack_external_c";
    int rc = chk_datarep(fname, datarep);
    return rc ? rc : unpack_common(fname, inbuf, insize, position, outbuf, outcount, datatype, PK_EXTERNAL);
}

static int body_Pack_external_size(const char *datarep, int incount, MPI_Datatype datatype, MPI_Aint *size)
{
    static const char fname[] = "MPI_Pack_external_size";
    int rc = chk_datarep(fname, datarep);
    return rc ? rc : pack_size(fname, incount, datatype, MPI_COMM_NULL, size, PK_EXTERNAL);
}

static int body_Pack_external_size_c(const char *datarep, MPI_Count incount, MPI_Datatype datatype, MPI_Count *size)
{
    static const char fname[] = "MPI_Pack_external_size_c";
    int rc = chk_datarep(fname, datarep);
    return rc ? rc : pack_size(fname, incount, datatype, MPI_COMM_NULL, size, PK_EXTERNAL);
}

/* ---------- status counts ---------- */

static MPI_Count status_bytes(const MPI_Status *st)
{
    return (MPI_Count)(((uint64_t)((unsigned)st->count_hi_and_cancelled >> 1) << 32) | (uint32_t)st->count_lo);
}

/* elements != 0: basic elements (MPI_Get_elements), else whole datatypes */
static int status_count(const char *fname, const MPI_Status *status, MPI_Datatype datatype, MPI_Count *out,
                        int elements)
{
    wh_dtype_t *t;
    if (!status || status == MPI_STATUS_IGNORE)
        return RAISE(fname, MPI_ERR_ARG, "status is %s", status ? "MPI_STATUS_IGNORE" : "NULL");
    GET_TYPE(fname, datatype, t);
    MPI_Count bytes = status_bytes(status);
    if (t->size == 0) { /* MPI: a zero-size datatype gives a count of zero */
        *out = 0;
        return MPI_SUCCESS;
    }
    if (elements) {
        int64_t e = wh_dtype_elements(t, (uint64_t)bytes);
        *out = e < 0 ? MPI_UNDEFINED : (MPI_Count)e;
    } else {
        *out = bytes % (MPI_Count)t->size ? MPI_UNDEFINED : bytes / (MPI_Count)t->size;
    }
    return MPI_SUCCESS;
}

static int status_count_int(const char *fname, const MPI_Status *status, MPI_Datatype datatype, int *count,
                            int elements)
{
    MPI_Count c = 0;
    CHK_NULL(fname, count, "count");
    int rc = status_count(fname, status, datatype, &c, elements);
    if (rc)
        return rc;
    *count = c > INT_MAX ? MPI_UNDEFINED : (int)c;
    return MPI_SUCCESS;
}

static int body_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    return status_count_int("MPI_Get_count", status, datatype, count, 0);
}

static int body_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    CHK_NULL("MPI_Get_count_c", count, "count");
    return status_count("MPI_Get_count_c", status, datatype, count, 0);
}

static int body_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    return status_count_int("MPI_Get_elements", status, datatype, count, 1);
}

static int body_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    CHK_NULL("MPI_Get_elements_c", count, "count");
    return status_count("MPI_Get_elements_c", status, datatype, count, 1);
}

static int body_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    CHK_NULL("MPI_Get_elements_x", count, "count");
    return status_count("MPI_Get_elements_x", status, datatype, count, 1);
}

/* ---------- matching predefined types ---------- */

static int body_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    static const char fname[] = "MPI_Type_match_size";
    CHK_NULL(fname, datatype, "datatype");
    static const struct {
        int cls, size;
        MPI_Datatype t;
    } match[] = {
        {MPI_TYPECLASS_REAL, 4, MPI_REAL4},         {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
        {MPI_TYPECLASS_REAL, 16, MPI_REAL16},       {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1},
        {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},   {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4},
        {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},   {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8},
        {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16}, {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32},
    };
    if (typeclass != MPI_TYPECLASS_REAL && typeclass != MPI_TYPECLASS_INTEGER && typeclass != MPI_TYPECLASS_COMPLEX)
        return RAISE(fname, MPI_ERR_ARG, "typeclass %d is not MPI_TYPECLASS_REAL, _INTEGER or _COMPLEX", typeclass);
    for (size_t i = 0; i < sizeof match / sizeof match[0]; i++)
        if (match[i].cls == typeclass && match[i].size == size) {
            *datatype = match[i].t;
            return MPI_SUCCESS;
        }
    return RAISE(fname, MPI_ERR_ARG, "no predefined %s type has %d bytes",
                 typeclass == MPI_TYPECLASS_REAL ? "real" : typeclass == MPI_TYPECLASS_INTEGER ? "integer" : "complex",
                 size);
}

static int body_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type, MPI_Datatype *pair_type)
{
    static const char fname[] = "MPI_Type_get_value_index";
    wh_dtype_t *v, *x;
    int rc;
    if ((rc = wh_dtype_arg(fname, value_type, "value_type", &v)) ||
        (rc = wh_dtype_arg(fname, index_type, "index_type", &x)))
        return rc;
    CHK_NULL(fname, pair_type, "pair_type");
    static const struct {
        MPI_Datatype v, i, pair;
    } pairs[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},
        {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},
        {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_REAL, MPI_REAL, MPI_2REAL},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
    };
    *pair_type = MPI_DATATYPE_NULL;
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (pairs[i].v == value_type && pairs[i].i == index_type)
            *pair_type = pairs[i].pair;
    return MPI_SUCCESS;
}

#include "entry/datatype2.h"
