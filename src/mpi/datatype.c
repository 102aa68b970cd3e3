/* MPI datatype constructors, commit, free and dup (with _c large-count
 * variants and the deprecated MPI-1 names).  Queries, packing and status
 * counts are in datatype2.c.
 *
 * Every constructor checks its arguments as the standard requires (negative
 * count: MPI_ERR_COUNT; negative block length, NULL arrays or output:
 * MPI_ERR_ARG; bad old type: MPI_ERR_TYPE), converts element displacements to
 * bytes with overflow checks, builds the type in src/dtype and records the
 * arguments for MPI_Type_get_envelope/get_contents. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype/dtype.h"
#include "mpi/api.h"

#define RAISE(fname, cls, ...) wh_raise_comm(NULL, (fname), wh_error((cls), __VA_ARGS__))

int wh_dtype_arg(const char *fname, MPI_Datatype h, const char *argname, wh_dtype_t **out)
{
    wh_dtype_t *t = wh_dtype_get(h);
    if (__builtin_expect(t != NULL, 1)) {
        *out = t;
        return MPI_SUCCESS;
    }
    if (h == MPI_DATATYPE_NULL)
        return RAISE(fname, MPI_ERR_TYPE, "%s is MPI_DATATYPE_NULL", argname);
    return RAISE(fname, MPI_ERR_TYPE, "%s 0x%x is not a valid datatype (freed or never created)", argname,
                 (unsigned)h);
}

#define CHK_NULL(fname, p, name)                                                                  \
    do {                                                                                          \
        if (!(p))                                                                                 \
            return RAISE((fname), MPI_ERR_ARG, "%s is NULL", (name));                             \
    } while (0)

static int chk_count(const char *fname, MPI_Count count, const char *name)
{
    if (count < 0)
        return RAISE(fname, MPI_ERR_COUNT, "%s is negative (%lld)", name, (long long)count);
    return MPI_SUCCESS;
}

static int chk_blocklen(const char *fname, MPI_Count bl, MPI_Count i, int array)
{
    if (bl >= 0)
        return MPI_SUCCESS;
    if (array)
        return RAISE(fname, MPI_ERR_ARG, "array_of_blocklengths[%lld] is negative (%lld)", (long long)i, (long long)bl);
    return RAISE(fname, MPI_ERR_ARG, "blocklength is negative (%lld)", (long long)bl);
}

/* element displacement -> bytes */
static int elem_disp(const char *fname, MPI_Count d, MPI_Aint extent, MPI_Aint *out)
{
    if (__builtin_mul_overflow((MPI_Aint)d, extent, out))
        return RAISE(fname, MPI_ERR_ARG, "displacement %lld times the old type's extent %ld overflows MPI_Aint",
                     (long long)d, (long)extent);
    return MPI_SUCCESS;
}

/* publish a constructed type: record contents, hand out the handle */
static int publish(const char *fname, wh_dtype_t *t, int combiner, int large, int ni, const int *ints, int na,
                   const MPI_Aint *aints, int nc, const MPI_Count *counts, int nd, const MPI_Datatype *types,
                   MPI_Datatype *newtype)
{
    int rc = wh_dtype_set_contents(t, combiner, large, ni, ints, na, aints, nc, counts, nd, types);
    if (rc) {
        wh_dtype_user_free(t);
        return wh_raise_comm(NULL, fname, rc);
    }
    *newtype = t->obj.handle;
    return MPI_SUCCESS;
}

/* arrays of contents are int-sized for the int bindings */
static int fits_int(MPI_Count n)
{
    return n >= 0 && n <= INT_MAX / 4 - 4;
}

/* ---------- contiguous / vector ---------- */

static int type_contiguous(const char *fname, MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype, int large)
{
    wh_dtype_t *old = NULL, *t = NULL;
    int rc;
    if ((rc = chk_count(fname, count, "count")) || (rc = wh_dtype_arg(fname, oldtype, "oldtype", &old)))
        return rc;
    CHK_NULL(fname, newtype, "newtype");
    if ((rc = wh_dtype_create_contig(count, old, &t)))
        return wh_raise_comm(NULL, fname, rc);
    int ic = (int)count;
    return large ? publish(fname, t, MPI_COMBINER_CONTIGUOUS, 1, 0, NULL, 0, NULL, 1, &count, 1, &oldtype, newtype)
                 : publish(fname, t, MPI_COMBINER_CONTIGUOUS, 0, 1, &ic, 0, NULL, 0, NULL, 1, &oldtype, newtype);
}

static int body_Type_contiguous(const char *fname, MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return type_contiguous(fname, count, oldtype, newtype, wh_api_large(fname));
}

/* bytes != 0: stride is in bytes (hvector), else in old extents (vector) */
static int type_vector(const char *fname, MPI_Count count, MPI_Count bl, MPI_Count stride, MPI_Datatype oldtype,
                       MPI_Datatype *newtype, int bytes, int large)
{
    wh_dtype_t *old, *t;
    int rc;
    MPI_Aint bstride = (MPI_Aint)stride;
    if ((rc = chk_count(fname, count, "count")) || (rc = chk_blocklen(fname, bl, 0, 0)) ||
        (rc = wh_dtype_arg(fname, oldtype, "oldtype", &old)))
        return rc;
    CHK_NULL(fname, newtype, "newtype");
    if (!bytes && (rc = elem_disp(fname, stride, old->extent, &bstride)))
        return rc;
    if ((rc = wh_dtype_create_hvector(count, bl, bstride, old, &t)))
        return wh_raise_comm(NULL, fname, rc);
    int comb = bytes ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR;
    MPI_Count c[3] = {count, bl, stride};
    int ints[3] = {(int)count, (int)bl, (int)stride};
    MPI_Aint a = (MPI_Aint)stride;
    if (large)
        return publish(fname, t, comb, 1, 0, NULL, 0, NULL, 3, c, 1, &oldtype, newtype);
    return publish(fname, t, comb, 0, bytes ? 2 : 3, ints, bytes ? 1 : 0, &a, 0, NULL, 1, &oldtype, newtype);
}

static int body_Type_vector(const char *fname, MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                            MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return type_vector(fname, count, blocklength, stride, oldtype, newtype, 0, wh_api_large(fname));
}

static int body_Type_create_hvector(const char *fname, MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                                    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return type_vector(fname, count, blocklength, stride, oldtype, newtype, 1, wh_api_large(fname));
}

static int body_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    return type_vector("MPI_Type_hvector", count, blocklength, stride, oldtype, newtype, 1, 0);
}

/* ---------- indexed family and struct ----------
 * One generic body.  Inputs arrive either as int arrays (ibl/idisp) or as
 * MPI_Count/MPI_Aint arrays (cbl/cdisp); a single block length (block >= 0)
 * replaces the array for the *_block variants. */
typedef struct blkargs {
    const char *fname;
    int combiner, large;
    int bytes;                   /* displacements in bytes (h*) or old extents */
    MPI_Count count, block;      /* block: the one length of the *_block variants */
    int one_block;
    const int *ibl, *idisp;      /* int bindings */
    const MPI_Count *cbl;        /* large bindings: lengths */
    const MPI_Count *cdisp;      /* large bindings: displacements */
    const MPI_Aint *adisp;       /* int bindings of h* constructors */
    const MPI_Datatype *types;   /* struct */
    MPI_Datatype oldtype;
} blkargs_t;

static MPI_Count arg_bl(const blkargs_t *a, MPI_Count i)
{
    return a->one_block ? a->block : a->ibl ? a->ibl[i] : a->cbl[i];
}

static MPI_Count arg_disp(const blkargs_t *a, MPI_Count i)
{
    return a->idisp ? a->idisp[i] : a->adisp ? a->adisp[i] : a->cdisp[i];
}

/* contents in the layout MPI_Type_get_contents defines for each combiner */
static int blocks_publish(const blkargs_t *a, wh_dtype_t *t, MPI_Datatype *newtype)
{
    MPI_Count n = a->count;
    int per = !a->one_block, rc;
    int nd = a->types ? (int)n : 1;
    const MPI_Datatype *types = a->types ? a->types : &a->oldtype;
    if (a->large) {
        int nc = (int)(1 + (per ? n : 1) + n);
        MPI_Count *c = malloc((size_t)nc * sizeof *c);
        if (!c) {
            wh_dtype_user_free(t);
            return RAISE(a->fname, MPI_ERR_NO_MEM, "out of memory recording datatype contents");
        }
        int k = 0;
        c[k++] = n;
        for (MPI_Count i = 0; i < (per ? n : 1); i++)
            c[k++] = arg_bl(a, i);
        for (MPI_Count i = 0; i < n; i++)
            c[k++] = arg_disp(a, i);
        rc = publish(a->fname, t, a->combiner, 1, 0, NULL, 0, NULL, nc, c, nd, types, newtype);
        free(c);
        return rc;
    }
    int ni = (int)(1 + (per ? n : 1) + (a->bytes ? 0 : n));
    int *ints = malloc((size_t)ni * sizeof *ints);
    if (!ints) {
        wh_dtype_user_free(t);
        return RAISE(a->fname, MPI_ERR_NO_MEM, "out of memory recording datatype contents");
    }
    int k = 0;
    ints[k++] = (int)n;
    for (MPI_Count i = 0; i < (per ? n : 1); i++)
        ints[k++] = (int)arg_bl(a, i);
    if (!a->bytes)
        for (MPI_Count i = 0; i < n; i++)
            ints[k++] = a->idisp[i];
    rc = publish(a->fname, t, a->combiner, 0, ni, ints, a->bytes ? (int)n : 0, a->adisp, 0, NULL, nd, types, newtype);
    free(ints);
    return rc;
}

static int type_blocks(const blkargs_t *a, MPI_Datatype *newtype)
{
    const char *fname = a->fname;
    MPI_Count n = a->count;
    wh_dtype_t *old = NULL, *t;
    int rc;
    if ((rc = chk_count(fname, n, "count")))
        return rc;
    if (!a->large && !fits_int(n))
        return RAISE(fname, MPI_ERR_COUNT, "count %lld is too large", (long long)n);
    if (n > 0) {
        if (!a->one_block)
            CHK_NULL(fname, a->ibl || a->cbl, "array_of_blocklengths");
        CHK_NULL(fname, a->idisp || a->adisp || a->cdisp, "array_of_displacements");
        if (a->combiner == MPI_COMBINER_STRUCT)
            CHK_NULL(fname, a->types, "array_of_types");
    }
    if (a->one_block) {
        if ((rc = chk_blocklen(fname, a->block, 0, 0)))
            return rc;
    } else {
        for (MPI_Count i = 0; i < n; i++)
            if ((rc = chk_blocklen(fname, arg_bl(a, i), i, 1)))
                return rc;
    }
    if (a->combiner != MPI_COMBINER_STRUCT && (rc = wh_dtype_arg(fname, a->oldtype, "oldtype", &old)))
        return rc;
    CHK_NULL(fname, newtype, "newtype");

    MPI_Count *bl = malloc(((size_t)n ? (size_t)n : 1) * sizeof *bl);
    MPI_Aint *disp = malloc(((size_t)n ? (size_t)n : 1) * sizeof *disp);
    wh_dtype_t **types = a->types ? malloc(((size_t)n ? (size_t)n : 1) * sizeof *types) : NULL;
    if (!bl || !disp || (a->types && !types)) {
        rc = RAISE(fname, MPI_ERR_NO_MEM, "out of memory creating a datatype of %lld blocks", (long long)n);
        goto out;
    }
    for (MPI_Count i = 0; i < n; i++) {
        bl[i] = arg_bl(a, i);
        if (types) {
            char what[48];
            snprintf(what, sizeof what, "array_of_types[%lld]", (long long)i);
            if ((rc = wh_dtype_arg(fname, a->types[i], what, &types[i])))
                goto out;
        }
        if (a->bytes)
            disp[i] = (MPI_Aint)arg_disp(a, i);
        else if ((rc = elem_disp(fname, arg_disp(a, i), old->extent, &disp[i])))
            goto out;
    }
    if ((rc = wh_dtype_create_blocks(n, bl, disp, old, types, &t))) {
        rc = wh_raise_comm(NULL, fname, rc);
        goto out;
    }
    rc = blocks_publish(a, t, newtype);
out:
    free(bl);
    free(disp);
    free(types);
    return rc;
}

static int body_Type_indexed(int count, const int array_of_blocklengths[], const int array_of_displacements[],
                             MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    blkargs_t a = {.fname = "MPI_Type_indexed", .combiner = MPI_COMBINER_INDEXED, .count = count, 
                   .ibl = array_of_blocklengths, .idisp = array_of_displacements, .oldtype = oldtype};
    return type_blocks(&a, newtype);
}

static int body_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                               const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    blkargs_t a = {.fname = "MPI_Type_indexed_c", .combiner = MPI_COMBINER_INDEXED, .large = 1, .count = count,
                   .cbl = array_of_blocklengths, .cdisp = array_of_displacements, .oldtype = oldtype};
    return type_blocks(&a, newtype);
}

static int body_Type_create_hindexed(int count, const int array_of_blocklengths[],
                                     const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                     MPI_Datatype *newtype)
{
    blkargs_t a = {.fname = "MPI_Type_create_hindexed", .combiner = MPI_COMBINER_HINDEXED, .bytes = 1,
                   .count = count, .ibl = array_of_blocklengths, .adisp = array_of_displacements,
                   .oldtype = oldtype};
    return type_blocks(&a, newtype);
}

static int body_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    blkargs_t a = {.fname = "MPI_Type_hindexed", .combiner = MPI_COMBINER_HINDEXED, .bytes = 1, .count = count,
                   .ibl = array_of_blocklengths, .adisp = array_of_displacements, .oldtype = oldtype};
    return type_blocks(&a, newtype);
}

static int body_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                       const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                       MPI_Datatype *newtype)
{
    blkargs_t a = {.fname = "MPI_Type_create_hindexed_c", .combiner = MPI_COMBINER_HINDEXED, .large = 1, .bytes = 1,
                   .count = count, .cbl = array_of_blocklengths, .cdisp = array_of_displacements,
                   .oldtype = oldtype};
    return type_blocks(&a, newtype);
}

static int body_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                          MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    blkargs_t a = {.fname = "MPI_Type_create_indexed_block", .combiner = MPI_COMBINER_INDEXED_BLOCK, .count = count,
                   .one_block = 1, .block = blocklength, .idisp = array_of_displacements, .oldtype = oldtype};
    return type_blocks(&a, newtype);
}

static int body_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                            const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                            MPI_Datatype *newtype)
{
    blkargs_t a = {.fname = "MPI_Type_create_indexed_block_c", .combiner = MPI_COMBINER_INDEXED_BLOCK, .large = 1,
                   .count = count, .one_block = 1, .block = blocklength, .cdisp = array_of_displacements,
                   .oldtype = oldtype};
    return type_blocks(&a, newtype);
}

static int body_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint array_of_displacements[],
                                           MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    blkargs_t a = {.fname = "MPI_Type_create_hindexed_block", .combiner = MPI_COMBINER_HINDEXED_BLOCK, .bytes = 1,
                   .count = count, .one_block = 1, .block = blocklength, .adisp = array_of_displacements,
                   .oldtype = oldtype};
    return type_blocks(&a, newtype);
}

static int body_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                             const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                             MPI_Datatype *newtype)
{
    blkargs_t a = {.fname = "MPI_Type_create_hindexed_block_c", .combiner = MPI_COMBINER_HINDEXED_BLOCK, .large = 1,
                   .bytes = 1, .count = count, .one_block = 1, .block = blocklength,
                   .cdisp = array_of_displacements, .oldtype = oldtype};
    return type_blocks(&a, newtype);
}

static int body_Type_create_struct(int count, const int array_of_blocklengths[],
                                   const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[],
                                   MPI_Datatype *newtype)
{
    blkargs_t a = {.fname = "MPI_Type_create_struct", .combiner = MPI_COMBINER_STRUCT, .bytes = 1, .count = count,
                   .ibl = array_of_blocklengths, .adisp = array_of_displacements,
                   .types = array_of_types};
    return type_blocks(&a, newtype);
}

static int body_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                            MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    blkargs_t a = {.fname = "MPI_Type_struct", .combiner = MPI_COMBINER_STRUCT, .bytes = 1, .count = count,
                   .ibl = array_of_blocklengths, .adisp = array_of_displacements,
                   .types = array_of_types};
    return type_blocks(&a, newtype);
}

static int body_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                     const MPI_Count array_of_displacements[], const MPI_Datatype array_of_types[],
                                     MPI_Datatype *newtype)
{
    blkargs_t a = {.fname = "MPI_Type_create_struct_c", .combiner = MPI_COMBINER_STRUCT, .large = 1, .bytes = 1,
                   .count = count, .cbl = array_of_blocklengths, .cdisp = array_of_displacements,
                   .types = array_of_types};
    return type_blocks(&a, newtype);
}

/* ---------- subarray / darray ---------- */

static int chk_order(const char *fname, int order)
{
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return RAISE(fname, MPI_ERR_ARG, "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
    return MPI_SUCCESS;
}

static int type_subarray(const char *fname, int ndims, const int *isz, const int *isub, const int *ist,
                         const MPI_Count *csz, const MPI_Count *csub, const MPI_Count *cst, int order,
                         MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    wh_dtype_t *old, *t;
    int rc, large = csz != NULL;
    if (ndims <= 0)
        return RAISE(fname, MPI_ERR_DIMS, "ndims must be positive (got %d)", ndims);
    CHK_NULL(fname, isz || csz, "array_of_sizes");
    CHK_NULL(fname, isub || csub, "array_of_subsizes");
    CHK_NULL(fname, ist || cst, "array_of_starts");
    MPI_Count *v = malloc(3 * (size_t)ndims * sizeof *v);
    int *ints = malloc((3 * (size_t)ndims + 2) * sizeof *ints);
    if (!v || !ints) {
        free(v);
        free(ints);
        return RAISE(fname, MPI_ERR_NO_MEM, "out of memory creating a subarray datatype");
    }
    MPI_Count *sz = v, *sub = v + ndims, *st = v + 2 * ndims;
    rc = MPI_SUCCESS;
    for (int d = 0; d < ndims && !rc; d++) {
        sz[d] = large ? csz[d] : isz[d];
        sub[d] = large ? csub[d] : isub[d];
        st[d] = large ? cst[d] : ist[d];
        if (sz[d] <= 0)
            rc = RAISE(fname, MPI_ERR_ARG, "array_of_sizes[%d] must be positive (got %lld)", d, (long long)sz[d]);
        else if (sub[d] < 0 || sub[d] > sz[d])
            rc = RAISE(fname, MPI_ERR_ARG, "array_of_subsizes[%d] = %lld is outside 0..array_of_sizes[%d] = %lld", d,
                       (long long)sub[d], d, (long long)sz[d]);
        else if (st[d] < 0 || st[d] > sz[d] - sub[d])
            rc = RAISE(fname, MPI_ERR_ARG,
                       "array_of_starts[%d] = %lld does not fit: the subarray (%lld from there) must lie inside the "
                       "%lld elements of that dimension",
                       d, (long long)st[d], (long long)sub[d], (long long)sz[d]);
    }
    if (!rc && !(rc = chk_order(fname, order)) && !(rc = wh_dtype_arg(fname, oldtype, "oldtype", &old))) {
        if (!newtype)
            rc = RAISE(fname, MPI_ERR_ARG, "newtype is NULL");
        else if ((rc = wh_dtype_create_subarray(ndims, sz, sub, st, order, old, &t)))
            rc = wh_raise_comm(NULL, fname, rc);
        else if (large) {
            int i2[2] = {ndims, order};
            rc = publish(fname, t, MPI_COMBINER_SUBARRAY, 1, 2, i2, 0, NULL, 3 * ndims, v, 1, &oldtype, newtype);
        } else {
            ints[0] = ndims;
            for (int d = 0; d < 3 * ndims; d++)
                ints[1 + d] = (int)v[d];
            ints[1 + 3 * ndims] = order;
            rc = publish(fname, t, MPI_COMBINER_SUBARRAY, 0, 3 * ndims + 2, ints, 0, NULL, 0, NULL, 1, &oldtype,
                         newtype);
        }
    }
    free(v);
    free(ints);
    return rc;
}

static int body_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                                     const int array_of_starts[], int order, MPI_Datatype oldtype,
                                     MPI_Datatype *newtype)
{
    return type_subarray("MPI_Type_create_subarray", ndims, array_of_sizes, array_of_subsizes, array_of_starts, NULL,
                         NULL, NULL, order, oldtype, newtype);
}

static int body_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                                       const MPI_Count array_of_subsizes[], const MPI_Count array_of_starts[],
                                       int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return type_subarray("MPI_Type_create_subarray_c", ndims, NULL, NULL, NULL, array_of_sizes, array_of_subsizes,
                         array_of_starts, order, oldtype, newtype);
}

static int chk_darray_dim(const char *fname, int d, MPI_Count g, int dist, int darg, int p)
{
    if (g <= 0)
        return RAISE(fname, MPI_ERR_ARG, "array_of_gsizes[%d] must be positive (got %lld)", d, (long long)g);
    if (p <= 0)
        return RAISE(fname, MPI_ERR_ARG, "array_of_psizes[%d] must be positive (got %d)", d, p);
    switch (dist) {
    case MPI_DISTRIBUTE_NONE:
        if (p != 1)
            return RAISE(fname, MPI_ERR_ARG, "dimension %d is MPI_DISTRIBUTE_NONE but array_of_psizes[%d] is %d, not 1",
                         d, d, p);
        return MPI_SUCCESS;
    case MPI_DISTRIBUTE_BLOCK:
        if (darg != MPI_DISTRIBUTE_DFLT_DARG && darg <= 0)
            return RAISE(fname, MPI_ERR_ARG, "array_of_dargs[%d] = %d is not positive", d, darg);
        if (darg != MPI_DISTRIBUTE_DFLT_DARG && (MPI_Count)darg * p < g)
            return RAISE(fname, MPI_ERR_ARG,
                         "dimension %d: block size %d times %d processes does not cover the %lld elements", d, darg, p,
                         (long long)g);
        return MPI_SUCCESS;
    case MPI_DISTRIBUTE_CYCLIC:
        if (darg != MPI_DISTRIBUTE_DFLT_DARG && darg <= 0)
            return RAISE(fname, MPI_ERR_ARG, "array_of_dargs[%d] = %d is not positive", d, darg);
        return MPI_SUCCESS;
    default:
        return RAISE(fname, MPI_ERR_ARG, "array_of_distribs[%d] = %d is not a valid distribution", d, dist);
    }
}

static int type_darray(const char *fname, int size, int rank, int ndims, const int *igs, const MPI_Count *cgs,
                       const int *distribs, const int *dargs, const int *psizes, int order, MPI_Datatype oldtype,
                       MPI_Datatype *newtype)
{
    wh_dtype_t *old, *t;
    int rc = MPI_SUCCESS, large = cgs != NULL;
    if (size <= 0)
        return RAISE(fname, MPI_ERR_ARG, "size must be positive (got %d)", size);
    if (rank < 0 || rank >= size)
        return RAISE(fname, MPI_ERR_ARG, "rank %d is outside 0..%d", rank, size - 1);
    if (ndims <= 0)
        return RAISE(fname, MPI_ERR_DIMS, "ndims must be positive (got %d)", ndims);
    CHK_NULL(fname, igs || cgs, "array_of_gsizes");
    CHK_NULL(fname, distribs, "array_of_distribs");
    CHK_NULL(fname, dargs, "array_of_dargs");
    CHK_NULL(fname, psizes, "array_of_psizes");
    MPI_Count *gs = malloc((size_t)ndims * sizeof *gs);
    int *ints = malloc((4 * (size_t)ndims + 4) * sizeof *ints);
    if (!gs || !ints) {
        free(gs);
        free(ints);
        return RAISE(fname, MPI_ERR_NO_MEM, "out of memory creating a darray datatype");
    }
    long long nprocs = 1;
    for (int d = 0; d < ndims && !rc; d++) {
        gs[d] = large ? cgs[d] : igs[d];
        rc = chk_darray_dim(fname, d, gs[d], distribs[d], dargs[d], psizes[d]);
        if (!rc && (nprocs *= psizes[d]) > size)
            break;
    }
    if (!rc && nprocs != size)
        rc = RAISE(fname, MPI_ERR_ARG, "the process grid (product of array_of_psizes) does not have size %d processes",
                   size);
    if (!rc && !(rc = chk_order(fname, order)) && !(rc = wh_dtype_arg(fname, oldtype, "oldtype", &old))) {
        if (!newtype)
            rc = RAISE(fname, MPI_ERR_ARG, "newtype is NULL");
        else if ((rc = wh_dtype_create_darray(size, rank, ndims, gs, distribs, dargs, psizes, order, old, &t)))
            rc = wh_raise_comm(NULL, fname, rc);
        else {
            int k = 0;
            ints[k++] = size;
            ints[k++] = rank;
            ints[k++] = ndims;
            if (!large)
                for (int d = 0; d < ndims; d++)
                    ints[k++] = (int)gs[d];
            for (int d = 0; d < ndims; d++)
                ints[k++] = distribs[d];
            for (int d = 0; d < ndims; d++)
                ints[k++] = dargs[d];
            for (int d = 0; d < ndims; d++)
                ints[k++] = psizes[d];
            ints[k++] = order;
            rc = publish(fname, t, MPI_COMBINER_DARRAY, large, k, ints, 0, NULL, large ? ndims : 0, gs, 1, &oldtype,
                         newtype);
        }
    }
    free(gs);
    free(ints);
    return rc;
}

static int body_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                                   const int array_of_distribs[], const int array_of_dargs[],
                                   const int array_of_psizes[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return type_darray("MPI_Type_create_darray", size, rank, ndims, array_of_gsizes, NULL, array_of_distribs,
                       array_of_dargs, array_of_psizes, order, oldtype, newtype);
}

static int body_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                                     const int array_of_distribs[], const int array_of_dargs[],
                                     const int array_of_psizes[], int order, MPI_Datatype oldtype,
                                     MPI_Datatype *newtype)
{
    return type_darray("MPI_Type_create_darray_c", size, rank, ndims, NULL, array_of_gsizes, array_of_distribs,
                       array_of_dargs, array_of_psizes, order, oldtype, newtype);
}

/* ---------- resized, dup, commit, free ---------- */

static int type_resized(const char *fname, MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                        MPI_Datatype *newtype, int large)
{
    wh_dtype_t *old = NULL, *t = NULL;
    int rc;
    if ((rc = wh_dtype_arg(fname, oldtype, "oldtype", &old)))
        return rc;
    CHK_NULL(fname, newtype, "newtype");
    if ((rc = wh_dtype_create_resized(old, lb, extent, &t)))
        return wh_raise_comm(NULL, fname, rc);
    MPI_Aint a[2] = {lb, extent};
    MPI_Count c[2] = {lb, extent};
    return large ? publish(fname, t, MPI_COMBINER_RESIZED, 1, 0, NULL, 0, NULL, 2, c, 1, &oldtype, newtype)
                 : publish(fname, t, MPI_COMBINER_RESIZED, 0, 0, NULL, 2, a, 0, NULL, 1, &oldtype, newtype);
}

static int body_Type_create_resized(const char *fname, MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                                    MPI_Datatype *newtype)
{
    return type_resized(fname, oldtype, lb, extent, newtype, wh_api_large(fname));
}

static int body_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fname[] = "MPI_Type_dup";
    wh_dtype_t *old = NULL, *t = NULL;
    int rc;
    if ((rc = wh_dtype_arg(fname, oldtype, "oldtype", &old)))
        return rc;
    CHK_NULL(fname, newtype, "newtype");
    if ((rc = wh_dtype_create_dup(old, &t)))
        return wh_raise_comm(NULL, fname, rc);
    wh_attr_t *attrs = NULL;
    if ((rc = wh_attr_copy_all(old->attrs, oldtype, &attrs))) {
        wh_dtype_user_free(t);
        return wh_raise_comm(NULL, fname, rc);
    }
    t->attrs = attrs;
    return publish(fname, t, MPI_COMBINER_DUP, 0, 0, NULL, 0, NULL, 0, NULL, 1, &oldtype, newtype);
}

static int body_Type_commit(MPI_Datatype *datatype)
{
    static const char fname[] = "MPI_Type_commit";
    wh_dtype_t *t = NULL;
    int rc;
    CHK_NULL(fname, datatype, "datatype");
    if ((rc = wh_dtype_arg(fname, *datatype, "datatype", &t)))
        return rc;
    t->committed = 1; /* layouts are built (and optimised) by the constructors */
    return MPI_SUCCESS;
}

static int body_Type_free(MPI_Datatype *datatype)
{
    static const char fname[] = "MPI_Type_free";
    wh_dtype_t *t = NULL;
    int rc;
    CHK_NULL(fname, datatype, "datatype");
    if ((rc = wh_dtype_arg(fname, *datatype, "datatype", &t)))
        return rc;
    if (t->predefined)
        return RAISE(fname, MPI_ERR_TYPE, "%s is a predefined datatype and cannot be freed", t->name);
    if (t->urefs == 1) { /* the last user handle (MPI_Type_get_contents hands out more) */
        rc = wh_attr_delete_all(&t->attrs, *datatype);
        if (rc)
            return wh_raise_comm(NULL, fname, rc);
    }
    wh_dtype_user_free(t); /* pending operations keep their own references */
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

#include "entry/datatype.h"
