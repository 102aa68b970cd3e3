/* wharf-info: prints the version, every tunable with its current value, and
 * (with --markdown) the tunable table for the docs; with --calibrate FILE
 * (run as a 2-rank job: wharfrun -n 2 wharf-info --calibrate FILE) measures
 * the device-buffer schemes and writes a tuning file. */
#include <stdio.h>
#include <string.h>

#include <mpi.h>
#include "mpi/gpu_calib.h"
#include "util/tunables.h"

static void usage(void)
{
    printf("usage: wharf-info [--tunables] [--markdown] [--version]\n"
           "  prints wharf's version and every WHARF_* tunable with its type, current value, default and doc\n"
           "       wharfrun -n 2 wharf-info --calibrate FILE\n"
           "  times the device-buffer schemes between two ranks (CUDA driver needed) and writes the per-class\n"
           "  switch points to FILE, for WHARF_CUDA_TUNING=FILE (docs/GPU.md)\n");
}

int main(int argc, char **argv)
{
    int markdown = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--calibrate")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "wharf-info: error: --calibrate needs a file name\n");
                return 2;
            }
            MPI_Init(&argc, &argv);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            int rc = wh_gpu_calibrate(argv[i + 1]);
            if (rc != MPI_SUCCESS) {
                char msg[MPI_MAX_ERROR_STRING];
                int len = 0;
                MPI_Error_string(rc, msg, &len);
                fprintf(stderr, "wharf-info: --calibrate failed: %s\n", msg);
            }
            MPI_Finalize();
            return rc != MPI_SUCCESS;
        }
        if (!strcmp(argv[i], "--markdown"))
            markdown = 1;
        else if (!strcmp(argv[i], "--version")) {
            printf("wharf %s (MPI %d.%d)\n", WHARF_VERSION, MPI_VERSION, MPI_SUBVERSION);
            return 0;
        } else if (!strcmp(argv[i], "--tunables"))
            ;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage();
            return 0;
        } else {
            fprintf(stderr, "wharf-info: error: unknown option '%s'\n", argv[i]);
            usage();
            return 2;
        }
    }
    char err[256] = "";
    int bad = wh_tunables_load(err, sizeof err) != 0;
    if (markdown) {
        printf("| variable | type | default | description |\n| --- | --- | --- | --- |\n");
        for (int i = 0; i < wh_tunable_count; i++) {
            const wh_tunable_desc_t *d = &wh_tunable_descs[i];
            printf("| `WHARF_%s` | %s | `%s` | %s |\n", d->name, wh_tunable_type_name(d->type), d->def, d->doc);
        }
        return 0;
    }
    printf("wharf %s (MPI %d.%d)\n\n", WHARF_VERSION, MPI_VERSION, MPI_SUBVERSION);
    printf("%-26s %-7s %-12s %-12s %s\n", "tunable", "type", "value", "default", "description");
    for (int i = 0; i < wh_tunable_count; i++) {
        const wh_tunable_desc_t *d = &wh_tunable_descs[i];
        char v[128], name[64];
        wh_tunable_format(d, v, sizeof v);
        snprintf(name, sizeof name, "WHARF_%s", d->name);
        printf("%-26s %-7s %-12s %-12s %s%s\n", name, wh_tunable_type_name(d->type), v, d->def, d->doc,
               wh_tunable_is_default(d) ? "" : "  [set]");
    }
    if (bad) {
        fprintf(stderr, "wharf-info: warning: %s\n", err);
        return 1;
    }
    return 0;
}
