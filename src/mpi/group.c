/* MPI group entry points.  Groups are lists of MPI_COMM_WORLD ranks; set
 * operations use a world-sized position map, so each is O(world size). */
#include <stdlib.h>
#include <string.h>

#include "core/peers.h"
#include "mpi/api.h"

static int graise(const char *fname, int code) { return wh_raise_comm(NULL, fname, code); }

static int chk_group(const char *fname, MPI_Group h, const char *name, wh_group_t **g)
{
    if ((*g = wh_group_get(h)))
        return MPI_SUCCESS;
    if (h == MPI_GROUP_NULL)
        return graise(fname, wh_error(MPI_ERR_GROUP, "%s is MPI_GROUP_NULL", name));
    return graise(fname, wh_error(MPI_ERR_GROUP, "%s 0x%x is not a valid group (freed or never created)", name, (unsigned)h));
}

#define CHK_PTR(fname, p, name)                                                                   \
    do {                                                                                          \
        if (!(p))                                                                                 \
            return graise((fname), wh_error(MPI_ERR_ARG, "%s is NULL", (name)));                   \
    } while (0)

static int no_mem(const char *fname) { return graise(fname, wh_error(MPI_ERR_NO_MEM, "out of memory")); }

/* world rank -> index in g, or -1; NULL if out of memory */
static int *pos_map(const wh_group_t *g)
{
    int *m = malloc((size_t)wh_peers_cap * sizeof(int));
    if (!m)
        return NULL;
    for (int i = 0; i < wh_peers_cap; i++)
        m[i] = -1;
    for (int i = 0; i < g->size; i++)
        m[g->wranks[i]] = i;
    return m;
}

/* hand a new group (list of world ranks) to the user */
static int give(const char *fname, const wh_group_t *from, int n, const int *wranks, MPI_Group *out)
{
    wh_group_t *g = wh_group_new(n, wranks);
    if (!g)
        return no_mem(fname);
    if (g->size) /* not MPI_GROUP_EMPTY: a group made from a session's group belongs to that session */
        g->session = from->session;
    *out = g->obj.handle;
    return MPI_SUCCESS;
}

static int body_Group_size(MPI_Group group, int *size)
{
    wh_group_t *g;
    int rc = chk_group("MPI_Group_size", group, "group", &g);
    if (rc)
        return rc;
    CHK_PTR("MPI_Group_size", size, "size");
    *size = g->size;
    return MPI_SUCCESS;
}

static int body_Group_rank(MPI_Group group, int *rank)
{
    wh_group_t *g;
    int rc = chk_group("MPI_Group_rank", group, "group", &g);
    if (rc)
        return rc;
    CHK_PTR("MPI_Group_rank", rank, "rank");
    *rank = g->rank;
    return MPI_SUCCESS;
}

static int body_Group_free(MPI_Group *group)
{
    CHK_PTR("MPI_Group_free", group, "group");
    wh_group_t *g;
    int rc = chk_group("MPI_Group_free", *group, "group", &g);
    if (rc)
        return rc;
    wh_group_release(g); /* MPI_GROUP_EMPTY: nothing to release */
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

static int body_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[])
{
    static const char fname[] = "MPI_Group_translate_ranks";
    wh_group_t *a, *b;
    int rc;
    if ((rc = chk_group(fname, group1, "group1", &a)) || (rc = chk_group(fname, group2, "group2", &b)))
        return rc;
    if (n < 0)
        return graise(fname, wh_error(MPI_ERR_ARG, "n is negative (%d)", n));
    if (n == 0)
        return MPI_SUCCESS;
    CHK_PTR(fname, ranks1, "ranks1");
    CHK_PTR(fname, ranks2, "ranks2");
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= a->size))
            return graise(fname, wh_error(MPI_ERR_RANK, "ranks1[%d] = %d is not a rank of group1 (size %d) or MPI_PROC_NULL",
                                         i, ranks1[i], a->size));
    int *m = pos_map(b);
    if (!m)
        return no_mem(fname);
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
        } else {
            int p = m[a->wranks[ranks1[i]]];
            ranks2[i] = p >= 0 ? p : MPI_UNDEFINED;
        }
    }
    free(m);
    return MPI_SUCCESS;
}

static int body_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    wh_group_t *a, *b;
    int rc;
    if ((rc = chk_group("MPI_Group_compare", group1, "group1", &a)) ||
        (rc = chk_group("MPI_Group_compare", group2, "group2", &b)))
        return rc;
    CHK_PTR("MPI_Group_compare", result, "result");
    if (a->size != b->size) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    if (a->size == 0 || !memcmp(a->wranks, b->wranks, (size_t)a->size * sizeof(int))) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    int *m = pos_map(a);
    if (!m)
        return no_mem("MPI_Group_compare");
    int same = 1;
    for (int i = 0; i < b->size && same; i++)
        same = m[b->wranks[i]] >= 0;
    free(m);
    *result = same ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}

/* ---------- set operations ---------- */

enum { OP_UNION, OP_INTERSECTION, OP_DIFFERENCE };

static int set_op(const char *fname, int op, MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    wh_group_t *a, *b;
    int rc;
    if ((rc = chk_group(fname, group1, "group1", &a)) || (rc = chk_group(fname, group2, "group2", &b)))
        return rc;
    CHK_PTR(fname, newgroup, "newgroup");
    int *inb = pos_map(b);
    int *out = malloc((size_t)(a->size + b->size + 1) * sizeof(int));
    if (!inb || !out) {
        free(inb);
        free(out);
        return no_mem(fname);
    }
    int n = 0;
    for (int i = 0; i < a->size; i++) {
        int w = a->wranks[i];
        if (op == OP_UNION || (op == OP_INTERSECTION) == (inb[w] >= 0))
            out[n++] = w;
    }
    if (op == OP_UNION) {
        for (int i = 0; i < b->size; i++)
            inb[b->wranks[i]] = -1;
        for (int i = 0; i < a->size; i++)
            inb[a->wranks[i]] = 1; /* now: "in a" */
        for (int i = 0; i < b->size; i++)
            if (inb[b->wranks[i]] < 0)
                out[n++] = b->wranks[i];
    }
    rc = give(fname, a, n, out, newgroup);
    free(inb);
    free(out);
    return rc;
}

static int body_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op("MPI_Group_union", OP_UNION, group1, group2, newgroup);
}

static int body_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op("MPI_Group_intersection", OP_INTERSECTION, group1, group2, newgroup);
}

static int body_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op("MPI_Group_difference", OP_DIFFERENCE, group1, group2, newgroup);
}

/* ---------- subsets by rank ---------- */

/* Mark the n ranks (of group g) in sel[] (1 = selected, order[] in call order);
 * every rank valid and distinct. */
static int select_ranks(const char *fname, const wh_group_t *g, int n, const int *ranks, unsigned char *sel)
{
    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        if (r < 0 || r >= g->size)
            return graise(fname, wh_error(MPI_ERR_RANK, "ranks[%d] = %d is not a rank of the group (size %d)", i, r, g->size));
        if (sel[r])
            return graise(fname, wh_error(MPI_ERR_RANK, "ranks[%d] = %d appears more than once", i, r));
        sel[r] = 1;
    }
    return MPI_SUCCESS;
}

static int incl_excl(const char *fname, int excl, MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    wh_group_t *g;
    int rc = chk_group(fname, group, "group", &g);
    if (rc)
        return rc;
    CHK_PTR(fname, newgroup, "newgroup");
    if (n < 0 || n > g->size)
        return graise(fname, wh_error(MPI_ERR_ARG, "n = %d is out of range: the group has %d ranks", n, g->size));
    if (n > 0)
        CHK_PTR(fname, ranks, "ranks");
    unsigned char *sel = calloc((size_t)g->size + 1, 1);
    int *out = malloc((size_t)g->size * sizeof(int) + sizeof(int));
    if (!sel || !out) {
        free(sel);
        free(out);
        return no_mem(fname);
    }
    int m = 0;
    rc = select_ranks(fname, g, n, ranks, sel);
    if (rc == MPI_SUCCESS) {
        if (excl) {
            for (int i = 0; i < g->size; i++)
                if (!sel[i])
                    out[m++] = g->wranks[i];
        } else {
            for (int i = 0; i < n; i++)
                out[m++] = g->wranks[ranks[i]];
        }
        rc = give(fname, g, m, out, newgroup);
    }
    free(sel);
    free(out);
    return rc;
}

static int body_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl("MPI_Group_incl", 0, group, n, ranks, newgroup);
}

static int body_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl("MPI_Group_excl", 1, group, n, ranks, newgroup);
}

/* Expand n (first, last, stride) triplets into a rank list (at most the group
 * size entries, since the ranks must be distinct). */
static int expand_ranges(const char *fname, const wh_group_t *g, int n, int ranges[][3], int *list, int *count)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (first < 0 || first >= g->size || last < 0 || last >= g->size)
            return graise(fname, wh_error(MPI_ERR_RANK, "ranges[%d] = (%d, %d, %d): first and last must be ranks of the "
                                                       "group (size %d)", i, first, last, stride, g->size));
        if (stride == 0)
            return graise(fname, wh_error(MPI_ERR_ARG, "ranges[%d] = (%d, %d, 0): stride must not be 0", i, first, last));
        if ((last - first) / stride < 0)
            return graise(fname, wh_error(MPI_ERR_ARG, "ranges[%d] = (%d, %d, %d): stride %d never leads from %d to %d",
                                         i, first, last, stride, stride, first, last));
        for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            if (m == g->size)
                return graise(fname, wh_error(MPI_ERR_RANK, "ranges select rank %ld more than once", r));
            list[m++] = (int)r;
        }
    }
    *count = m;
    return MPI_SUCCESS;
}

static int range_incl_excl(const char *fname, int excl, MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    wh_group_t *g;
    int rc = chk_group(fname, group, "group", &g);
    if (rc)
        return rc;
    CHK_PTR(fname, newgroup, "newgroup");
    if (n < 0)
        return graise(fname, wh_error(MPI_ERR_ARG, "n is negative (%d)", n));
    if (n > 0)
        CHK_PTR(fname, ranges, "ranges");
    int *list = malloc(((size_t)g->size + 1) * sizeof(int));
    unsigned char *sel = calloc((size_t)g->size + 1, 1);
    int *out = malloc(((size_t)g->size + 1) * sizeof(int));
    if (!list || !sel || !out) {
        rc = no_mem(fname);
        goto done;
    }
    int cnt = 0, m = 0;
    if ((rc = expand_ranges(fname, g, n, ranges, list, &cnt)) || (rc = select_ranks(fname, g, cnt, list, sel)))
        goto done;
    if (excl) {
        for (int i = 0; i < g->size; i++)
            if (!sel[i])
                out[m++] = g->wranks[i];
    } else {
        for (int i = 0; i < cnt; i++)
            out[m++] = g->wranks[list[i]];
    }
    rc = give(fname, g, m, out, newgroup);
done:
    free(list);
    free(sel);
    free(out);
    return rc;
}

static int body_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_incl_excl("MPI_Group_range_incl", 0, group, n, ranges, newgroup);
}

static int body_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_incl_excl("MPI_Group_range_excl", 1, group, n, ranges, newgroup);
}

#include "entry/group.h"
