#!/usr/bin/env python3
"""Unit test of tools/gen/apitable.py and the annotations of mpi_api.txt:
every parameter of every function resolves to a kind and a direction, every
array has a length, and the tricky parameters resolve to what the Fortran
bindings and the generated C entry points need."""
import io
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "gen"))
import apitable  # noqa: E402

TABLE = os.path.join(ROOT, "tools", "gen", "mpi_api.txt")

# MPI-4.1 section 11.4.1, Table 11.1 (callable at any time)
TABLE_11_1 = """Initialized Finalized Get_version Get_library_version Info_create Info_create_env
Info_set Info_delete Info_get_string Info_get_nkeys Info_get_nthkey Info_dup Info_free Info_f2c
Info_c2f Session_create_errhandler Session_call_errhandler Errhandler_free Errhandler_f2c
Errhandler_c2f Error_string Error_class Add_error_class Remove_error_class Add_error_code
Remove_error_code Add_error_string Remove_error_string""".split()


class Table(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.funcs = apitable.load(TABLE)
        cls.by = {fn.name: fn for fn in cls.funcs}

    def p(self, fname, pname):
        return self.by[fname].param(pname)

    def kind(self, fname, pname, kind, dir_, length=None, handle=None):
        p = self.p(fname, pname)
        self.assertEqual((p.kind, p.dir, p.length), (kind, dir_, length), "%s %s" % (fname, p.describe()))
        if handle is not None:
            self.assertEqual(p.handle, handle)

    def test_every_parameter_resolves(self):
        self.assertGreater(len(self.funcs), 600)
        n = 0
        for fn in self.funcs:
            for p in fn.params:
                n += 1
                where = "%s(%s)" % (fn.name, p.decl)
                self.assertIn(p.kind, apitable.KINDS, where)
                self.assertIn(p.dir, apitable.DIRS, where)
                if p.brackets and p.kind != "string":
                    self.assertTrue(p.length and p.length != "?", "array without length: " + where)
                if p.kind == "string" and p.dir != "in":
                    self.assertTrue(p.length, "out string without buffer size: " + where)
                if p.kind in ("handle", "callback", "enum"):
                    self.assertTrue(p.handle, where)
                if p.dir == "in" and p.depth and p.kind not in ("callback", "strings", "argvs", "cargs") and not p.const:
                    self.assertIn("dir", p.explicit, "non-const pointer is in without annotation: " + where)
        self.assertGreater(n, 3000)

    def test_handles_counts_buffers(self):
        self.kind("MPI_Send", "buf", "choice", "in")
        self.kind("MPI_Send", "count", "int", "in")
        self.kind("MPI_Send_c", "count", "count", "in")
        self.kind("MPI_Send", "datatype", "handle", "in", handle="Datatype")
        self.kind("MPI_Send", "comm", "handle", "in", handle="Comm")
        self.kind("MPI_Recv", "buf", "choice", "out")
        self.kind("MPI_Recv", "status", "status", "out")
        self.kind("MPI_Bcast", "buffer", "choice", "inout")
        self.kind("MPI_Alltoallv_c", "sdispls", "aint", "in", "comm_size")
        self.kind("MPI_Alltoallv_c", "sendcounts", "count", "in", "comm_size")
        self.kind("MPI_Alltoallv", "sdispls", "int", "in", "comm_size")
        self.kind("MPI_Neighbor_alltoallw", "recvtypes", "handle", "in", "indegree", handle="Datatype")
        self.kind("MPI_Neighbor_alltoallw", "sendcounts", "int", "in", "outdegree")
        self.kind("MPI_File_read_at", "offset", "offset", "in")
        self.kind("MPI_Win_create", "size", "aint", "in")
        self.kind("MPI_Win_create", "base", "choice", "in")
        self.kind("MPI_Comm_c2f", "comm", "handle", "in")
        self.kind("MPI_Comm_f2c", "comm", "fint", "in")
        self.kind("MPI_Status_c2f", "f_status", "fint", "out", "MPI_STATUS_SIZE")
        self.kind("MPI_Status_c2f08", "f08_status", "f08status", "out")
        self.kind("MPI_T_event_register_callback", "cb_safety", "enum", "in", handle="T_cb_safety")
        self.assertEqual(self.p("MPI_Pcontrol", "level").kind, "int")
        self.assertEqual(self.by["MPI_Pcontrol"].params[-1].kind, "varargs")

    def test_directions(self):
        self.kind("MPI_Wait", "request", "handle", "inout", handle="Request")
        self.kind("MPI_Test", "request", "handle", "inout")
        self.kind("MPI_Cancel", "request", "handle", "in")
        self.kind("MPI_Isend", "request", "handle", "out")
        self.kind("MPI_Comm_free", "comm", "handle", "inout")
        self.kind("MPI_Type_commit", "datatype", "handle", "inout")
        self.kind("MPI_Comm_free_keyval", "comm_keyval", "int", "inout")
        self.kind("MPI_Mrecv", "message", "handle", "inout", handle="Message")
        self.kind("MPI_Pack", "position", "int", "inout")
        self.kind("MPI_Unpack_c", "position", "count", "inout")
        self.kind("MPI_Info_get_string", "buflen", "int", "inout")
        self.kind("MPI_Status_set_tag", "status", "status", "inout")
        self.kind("MPI_Status_get_tag", "status", "status", "in")
        self.kind("MPI_Test_cancelled", "status", "status", "in")
        self.kind("MPI_Group_range_incl", "ranges", "int", "in", "n")

    def test_arrays(self):
        self.kind("MPI_Waitall", "array_of_requests", "handle", "inout", "count")
        self.kind("MPI_Waitall", "array_of_statuses", "status", "out", "count")
        self.kind("MPI_Waitsome", "array_of_indices", "int", "out", "incount")
        self.kind("MPI_Startall", "array_of_requests", "handle", "inout", "count")
        self.kind("MPI_Request_get_status_all", "array_of_requests", "handle", "in", "count")
        self.kind("MPI_Type_create_struct_c", "array_of_displacements", "count", "in", "count")
        self.kind("MPI_Type_get_contents_c", "array_of_large_counts", "count", "out", "max_large_counts")
        self.kind("MPI_Dist_graph_create_adjacent", "destweights", "int", "in", "outdegree")
        self.kind("MPI_Graph_create", "edges", "int", "in", "graph_nedges")
        self.kind("MPI_Cart_rank", "coords", "int", "in", "cart_ndims")
        self.kind("MPI_T_event_get_info", "array_of_displacements", "aint", "out", "num_elements")

    def test_logicals(self):
        self.kind("MPI_Initialized", "flag", "logical", "out")
        self.kind("MPI_Iprobe", "flag", "logical", "out")
        self.kind("MPI_Cart_create", "periods", "logical", "in", "ndims")
        self.kind("MPI_Cart_create", "reorder", "logical", "in")
        self.kind("MPI_Cart_get", "periods", "logical", "out", "maxdims")
        self.kind("MPI_Cart_sub", "remain_dims", "logical", "in", "cart_ndims")
        self.kind("MPI_Op_create", "commute", "logical", "in")
        self.kind("MPI_Intercomm_merge", "high", "logical", "in")
        self.kind("MPI_Status_set_cancelled", "flag", "logical", "in")
        self.kind("MPI_Dist_graph_neighbors_count", "weighted", "logical", "out")
        # ints that are not logicals
        self.kind("MPI_Comm_rank", "rank", "int", "out")
        self.kind("MPI_Waitany", "indx", "int", "out")
        self.kind("MPI_Topo_test", "status", "int", "out")
        for fn in self.funcs:   # every int *flag is a LOGICAL
            for p in fn.params:
                if p.name == "flag":
                    self.assertEqual(p.kind, "logical", fn.name)

    def test_strings_pointers_callbacks(self):
        self.kind("MPI_Comm_set_name", "comm_name", "string", "in")
        self.kind("MPI_Get_processor_name", "name", "string", "out", "MPI_MAX_PROCESSOR_NAME")
        self.kind("MPI_Info_get_string", "value", "string", "out", "buflen")
        self.kind("MPI_Unpack_external", "datarep", "string", "in")
        self.kind("MPI_Comm_spawn", "argv", "strings", "in", "nullterm")
        self.kind("MPI_Comm_spawn_multiple", "array_of_argv", "argvs", "in", "count")
        self.kind("MPI_Init", "argc", "cargs", "inout")
        self.kind("MPI_Init", "argv", "cargs", "inout")
        self.kind("MPI_Info_create_env", "argv", "cargs", "in", "argc")
        self.kind("MPI_Alloc_mem", "baseptr", "ptr", "out")
        self.kind("MPI_Free_mem", "base", "choice", "in")
        self.kind("MPI_Win_allocate", "baseptr", "ptr", "out")
        self.kind("MPI_Win_shared_query_c", "baseptr", "ptr", "out")
        self.kind("MPI_Comm_get_attr", "attribute_val", "ptr", "out")
        self.kind("MPI_Comm_set_attr", "attribute_val", "ptr", "in")
        self.kind("MPI_Comm_create_keyval", "extra_state", "ptr", "in")
        self.kind("MPI_Buffer_detach", "buffer_addr", "ptr", "out")
        self.kind("MPI_Buffer_attach", "buffer", "choice", "in")
        self.kind("MPI_Op_create", "user_fn", "callback", "in", handle="User_function")
        self.kind("MPI_Op_create_c", "user_fn", "callback", "in", handle="User_function_c")
        self.kind("MPI_T_event_handle_free", "free_cb_function", "callback", "in")
        self.kind("MPI_Comm_create_keyval", "comm_copy_attr_fn", "callback", "in",
                  handle="Comm_copy_attr_function")

    def test_flags(self):
        pre = {fn.name for fn in self.funcs if fn.preinit}
        for n in TABLE_11_1 + ["Init", "Init_thread", "Session_init"]:
            self.assertIn("MPI_" + n, pre)
        for n in ("MPI_Comm_rank", "MPI_Send", "MPI_Finalize", "MPI_Wait", "MPI_Type_commit"):
            self.assertNotIn(n, pre)
        for fn in self.funcs:
            if fn.name.startswith("MPI_T_"):
                self.assertTrue(fn.preinit and fn.conly, fn.name)
            if fn.name.endswith(("_c2f", "_f2c", "_f082c", "_c2f08", "_f082f", "_f2f08")):
                self.assertTrue(fn.conly, fn.name)
        for n in ("MPI_Send", "MPI_Init", "MPI_Wtime", "MPI_Aint_add", "MPI_Pcontrol"):
            self.assertFalse(self.by[n].conly, n)
        self.assertEqual({fn.name for fn in self.funcs if "nocheck" in fn.flags},
                         {"MPI_Abort", "MPI_Wtime", "MPI_Wtick", "MPI_Get_processor_name"})

    def test_large_count_pairs_match(self):
        """MPI_X and MPI_X_c differ only in count/aint kinds: a generator may build both from one body."""
        pairs = apitable.large_pair(self.funcs)
        self.assertIn("MPI_Send", pairs)
        self.assertGreater(len(pairs), 150)
        widen = {("int", "count"), ("int", "aint"), ("aint", "count"), ("callback", "callback")}
        for base, large in pairs.items():
            a, b = self.by[base], self.by[large]
            if base in ("MPI_Type_get_contents", "MPI_Type_get_envelope"):
                continue   # the _c form adds the large-count arrays
            self.assertEqual([p.name for p in a.params], [p.name for p in b.params], base)
            for p, q in zip(a.params, b.params):
                self.assertEqual((p.dir, p.length), (q.dir, q.length), "%s %s" % (base, p.name))
                if p.kind != q.kind:
                    self.assertIn((p.kind, q.kind), widen, "%s %s: %s vs %s" % (base, p.name, p.kind, q.kind))

    def test_bad_annotations_are_errors(self):
        bad = [
            "int MPI_X(int *flag) | flg:logical",                  # no such parameter
            "int MPI_X(MPI_Comm comm) | comm:logical",             # logical on a handle
            "int MPI_X(int n, const int a[])",                     # array without length
            "int MPI_X(int n, const int a[]) | a:[m]",             # length names nothing
            "int MPI_X(char *name)",                               # out string without size
            "int MPI_X(int *flag) | sometimes",                    # unknown flag
            "int MPI_X(int *flag) | flag:maybe",                   # unknown word
            "int MPI_X(int *flag) | preinit, preinit",             # flag twice
            "int MPI_X(int flag) | flag:ptr",                      # ptr on an int
            "int MPI_X(MPI_Thing t)",                              # unknown type
        ]
        for line in bad:
            with self.assertRaises(apitable.ApiError, msg=line):
                apitable.parse_line(line, 1)
        fn = apitable.parse_line("int MPI_X(int n, int a[], void *v) | a:logical/inout[2*n], v:ptr/in, conly", 1)
        self.assertEqual((fn.param("a").kind, fn.param("a").dir, fn.param("a").length), ("logical", "inout", "2*n"))
        self.assertEqual((fn.param("v").kind, fn.param("v").dir), ("ptr", "in"))
        self.assertTrue(fn.conly)

    def test_dump(self):
        out = io.StringIO()
        apitable.dump_kinds([self.by["MPI_Waitall"]], out)
        self.assertEqual(out.getvalue(),
                         "MPI_Waitall\n"
                         "    count                        int in\n"
                         "    array_of_requests            handle(Request) inout [count]\n"
                         "    array_of_statuses            status out [count]\n")


if __name__ == "__main__":
    unittest.main(verbosity=1)
