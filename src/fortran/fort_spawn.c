/* Fortran entry points with arrays of strings or Fortran-only string rules:
 *   MPI_COMM_SPAWN(COMMAND, ARGV, MAXPROCS, INFO, ROOT, COMM, INTERCOMM, ARRAY_OF_ERRCODES, IERROR)
 *   MPI_COMM_SPAWN_MULTIPLE(COUNT, ARRAY_OF_COMMANDS, ARRAY_OF_ARGV, ARRAY_OF_MAXPROCS,
 *                           ARRAY_OF_INFO, ROOT, COMM, INTERCOMM, ARRAY_OF_ERRCODES, IERROR)
 *   MPI_INFO_GET_STRING(INFO, KEY, BUFLEN, VALUE, FLAG, IERROR)
 * A CHARACTER*(*) array arrives as its first element with one hidden length (of every element)
 * after all other arguments.  ARGV ends at its first blank element (MPI-4.1 11.8.2);
 * ARRAY_OF_ARGV(COUNT, *) is column major, so argument j of command i is element (i, j), and
 * each row ends at its first blank element.  MPI_ARGV_NULL / MPI_ARGVS_NULL are the addresses
 * of mpif.h's /MPIPRIVC/ variables (or of MPICH's mpi_f08 link constants). */
#include "fort.h"

extern char __mpi_f08_link_constants_MOD_mpi_argv_null WHF_PUBLIC;
extern char __mpi_f08_link_constants_MOD_mpi_argvs_null WHF_PUBLIC;

static int whf_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ')
            return 0;
    return 1;
}

static void whf_argv_free(char **argv)
{
    if (argv)
        for (size_t i = 0; argv[i]; i++)
            free(argv[i]);
    free(argv);
}

/* The C argv (NULL terminated, malloc'ed) of the Fortran arguments a[0], a[stride], ...
 * (each len characters) up to the first blank one; NULL when out of memory.  A Fortran
 * program cannot pass an unterminated ARGV of unknown size: at most max elements are read. */
static char **whf_argv_f2c(const char *a, size_t len, size_t stride, size_t max)
{
    size_t n = 0;
    while (n < max && !whf_blank(a + n * stride * len, len))
        n++;
    char **argv = calloc(n + 1, sizeof(*argv));
    if (!argv)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        argv[i] = whf_str_f2c(a + i * stride * len, len); /* leading blanks stay (MPICH) */
        if (!argv[i]) {
            whf_argv_free(argv);
            return NULL;
        }
    }
    return argv;
}

/* Upper bound on the arguments of one command read from Fortran (no terminator found). */
#define WHF_MAX_ARGS 4096

static int whf_is_root(MPI_Comm comm, int root)
{
    int rank = -1;
    return MPI_Comm_rank(comm, &rank) == MPI_SUCCESS && rank == root;
}

WHF_PUBLIC void mpi_comm_spawn_(const char *command, const char *argv, MPI_Fint *maxprocs,
                                MPI_Fint *info, MPI_Fint *root, MPI_Fint *comm,
                                MPI_Fint *intercomm, MPI_Fint *errcodes, MPI_Fint *ierr,
                                size_t command_len, size_t argv_len)
{
    char *c_command = whf_str_f2c_trim(command, command_len);
    char **c_argv = MPI_ARGV_NULL;
    if (!c_command) {
        *ierr = MPI_ERR_NO_MEM;
        return;
    }
    /* ARGV is significant at the root only: elsewhere it may be anything */
    if (argv != mpiprivc_.argv_null && argv != &__mpi_f08_link_constants_MOD_mpi_argv_null &&
        argv_len > 0 && whf_is_root(*comm, *root)) {
        c_argv = whf_argv_f2c(argv, argv_len, 1, WHF_MAX_ARGS);
        if (!c_argv) {
            free(c_command);
            *ierr = MPI_ERR_NO_MEM;
            return;
        }
    }
    *ierr = MPI_Comm_spawn(c_command, c_argv, *maxprocs, *info, *root, *comm, intercomm,
                           WHF_ERRCODES(errcodes));
    free(c_command);
    if (c_argv != MPI_ARGV_NULL)
        whf_argv_free(c_argv);
}
WHF_ALL_NAMES(mpi_comm_spawn, "MPI_COMM_SPAWN")

WHF_PUBLIC void mpi_comm_spawn_multiple_(MPI_Fint *count, const char *commands, const char *argvs,
                                         MPI_Fint *maxprocs, MPI_Fint *infos, MPI_Fint *root,
                                         MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *errcodes,
                                         MPI_Fint *ierr, size_t commands_len, size_t argv_len)
{
    int n = *count > 0 ? *count : 0;
    char **c_commands = calloc((size_t)n + 1, sizeof(*c_commands));
    char ***c_argvs = MPI_ARGVS_NULL;
    int rc = c_commands ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (int i = 0; rc == MPI_SUCCESS && i < n; i++) {
        c_commands[i] = whf_str_f2c_trim(commands + (size_t)i * commands_len, commands_len);
        if (!c_commands[i])
            rc = MPI_ERR_NO_MEM;
    }
    if (rc == MPI_SUCCESS && argvs != mpiprivc_.argvs_null &&
        argvs != &__mpi_f08_link_constants_MOD_mpi_argvs_null && argv_len > 0 &&
        whf_is_root(*comm, *root)) {
        c_argvs = calloc((size_t)n + 1, sizeof(*c_argvs));
        if (!c_argvs)
            rc = MPI_ERR_NO_MEM;
        for (int i = 0; rc == MPI_SUCCESS && i < n; i++) {
            c_argvs[i] = whf_argv_f2c(argvs + (size_t)i * argv_len, argv_len, (size_t)n,
                                      WHF_MAX_ARGS);
            if (!c_argvs[i])
                rc = MPI_ERR_NO_MEM;
        }
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_spawn_multiple(*count, c_commands, c_argvs, maxprocs, infos, *root, *comm,
                                     intercomm, WHF_ERRCODES(errcodes));
    if (c_argvs != MPI_ARGVS_NULL) {
        for (int i = 0; i < n; i++)
            whf_argv_free(c_argvs[i]);
        free(c_argvs);
    }
    if (c_commands)
        for (int i = 0; i < n; i++)
            free(c_commands[i]);
    free(c_commands);
    *ierr = rc;
}
WHF_ALL_NAMES(mpi_comm_spawn_multiple, "MPI_COMM_SPAWN_MULTIPLE")

/* BUFLEN: in, the characters wanted (0: only the length); out, the length of the value
 * without a NUL.  VALUE gets the first min(BUFLEN, LEN(VALUE)) characters, blank padded;
 * it is left alone when BUFLEN is 0 or the key is absent. */
WHF_PUBLIC void mpi_info_get_string_(MPI_Fint *info, const char *key, MPI_Fint *buflen,
                                     char *value, MPI_Fint *flag, MPI_Fint *ierr, size_t key_len,
                                     size_t value_len)
{
    char *c_key = whf_str_f2c_trim(key, key_len);
    char *c_value = malloc(MPI_MAX_INFO_VAL + 1);
    int c_flag = 0, c_len = MPI_MAX_INFO_VAL + 1;
    int rc = c_key && c_value ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = MPI_Info_get_string(*info, c_key, &c_len, c_value, &c_flag);
    if (rc == MPI_SUCCESS && c_flag) {
        size_t n = strlen(c_value);
        if (*buflen > 0) {
            size_t m = (size_t)*buflen < value_len ? (size_t)*buflen : value_len;
            if (m > n)
                m = n;
            memcpy(value, c_value, m);
            memset(value + m, ' ', value_len - m);
        }
        *buflen = (MPI_Fint)n;
    }
    if (rc == MPI_SUCCESS)
        *flag = WHF_C2L(c_flag);
    free(c_key);
    free(c_value);
    *ierr = rc;
}
WHF_ALL_NAMES(mpi_info_get_string, "MPI_INFO_GET_STRING")
