#!/usr/bin/env python3
"""Unit test of the entry-point generator (tools/gen/genapi.py --entries-out):
what PMPI_X/MPI_X it writes around hand-written bodies, and that the tree's
src/mpi files generate without error."""
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "gen"))
import apitable  # noqa: E402
import genapi  # noqa: E402

TABLE = os.path.join(ROOT, "tools", "gen", "mpi_api.txt")


class Entries(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.funcs = apitable.load(TABLE)

    def gen(self, files):
        with tempfile.TemporaryDirectory() as d:
            for name, text in files.items():
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            return genapi.gen_entries(self.funcs, genapi.scan_bodies(d))

    def test_single(self):
        out = self.gen({"a.c": 'static int body_Comm_rank(MPI_Comm comm, int *rank)\n{\n}\n#include "entry/a.h"\n'})
        t = out["a"]
        self.assertIn("static int body_Comm_rank(MPI_Comm comm, int *rank);", t)
        self.assertIn("WH_API int PMPI_Comm_rank(MPI_Comm comm, int *rank)\n{\n"
                      '    WH_CHECK_INIT("MPI_Comm_rank");\n    return body_Comm_rank(comm, rank);\n}\n'
                      "WH_ALIAS(MPI_Comm_rank, PMPI_Comm_rank)", t)

    def test_preinit_and_nocheck_and_double(self):
        src = ("static int body_Initialized(int *flag)\n{\n}\n"
               "static int body_Get_processor_name(char *name, int *resultlen)\n{\n}\n"
               "static double body_Wtime(void)\n{\n}\n"
               '#include "entry/b.h"\n')
        t = self.gen({"b.c": src})["b"]
        self.assertNotIn("WH_CHECK_INIT", t)
        self.assertIn("WH_API double PMPI_Wtime(void)\n{\n    return body_Wtime();\n}", t)

    def test_scalar_pair(self):
        t = self.gen({"c.c": 'static int body_Send(void)\n#include "entry/c.h"\n'})["c"]
        self.assertIn("static int body_Send(const char *fname, const void *buf, MPI_Count count, "
                      "MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);", t)
        self.assertIn('return body_Send("MPI_Send", buf, count, datatype, dest, tag, comm);', t)
        self.assertIn('return body_Send("MPI_Send_c", buf, count, datatype, dest, tag, comm);', t)
        self.assertIn('WH_CHECK_INIT("MPI_Send_c");', t)
        self.assertIn("WH_ALIAS(MPI_Send_c, PMPI_Send_c)", t)

    def test_pointer_pair(self):
        t = self.gen({"d.c": 'static int body_Type_size(void)\n#include "entry/d.h"\n'})["d"]
        self.assertIn("static int body_Type_size(const char *fname, int large, MPI_Datatype datatype, "
                      "int *size, MPI_Count *size_c);", t)
        self.assertIn('return body_Type_size("MPI_Type_size", 0, datatype, size, NULL);', t)
        self.assertIn('return body_Type_size("MPI_Type_size_c", 1, datatype, NULL, size);', t)

    def test_two_bodies_stay_two(self):
        t = self.gen({"e.c": 'static int body_Type_size(x)\nstatic int body_Type_size_c(y)\n#include "entry/e.h"\n'})["e"]
        self.assertIn("static int body_Type_size(MPI_Datatype datatype, int *size);", t)
        self.assertIn("static int body_Type_size_c(MPI_Datatype datatype, MPI_Count *size);", t)

    def test_errors(self):
        with self.assertRaises(apitable.ApiError):      # include line missing
            self.gen({"f.c": "static int body_Comm_rank(x)\n"})
        with self.assertRaises(apitable.ApiError):      # not an MPI function
            self.gen({"g.c": 'static int body_Comm_frobnicate(x)\n#include "entry/g.h"\n'})
        with self.assertRaises(apitable.ApiError):      # two files define one body
            self.gen({"h.c": 'static int body_Comm_rank(x)\n#include "entry/h.h"\n',
                      "i.c": 'static int body_Comm_rank(x)\n#include "entry/i.h"\n'})
        # calls and comments are not definitions
        t = self.gen({"j.c": '    return body_Comm_rank(a, b);\n/* body_Comm_size( */\n'})["j"]
        self.assertNotIn("WH_API", t)

    def test_tree(self):
        bodies = genapi.scan_bodies(os.path.join(ROOT, "src", "mpi"))
        out = genapi.gen_entries(self.funcs, bodies)
        self.assertIn("PMPI_Send_c", out["p2p"])
        n = sum(t.count("WH_ALIAS(") for t in out.values())
        self.assertGreater(n, 400)


if __name__ == "__main__":
    unittest.main(verbosity=1)
