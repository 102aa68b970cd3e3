/* Job state and job abort (see job.h). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/job.h"
#include "pmi/pmi.h"

wh_job_t wh_job;

#define WH_ABORT_HOOKS 4
static void (*abort_hooks[WH_ABORT_HOOKS])(void);

void wh_job_on_abort(void (*fn)(void))
{
    for (int i = 0; i < WH_ABORT_HOOKS; i++) {
        if (abort_hooks[i] == fn)
            return;
        if (!abort_hooks[i]) {
            abort_hooks[i] = fn;
            return;
        }
    }
}

_Noreturn void wh_job_abort(int code, const char *msg)
{
    fflush(stdout);
    for (int i = 0; i < WH_ABORT_HOOKS; i++)
        if (abort_hooks[i])
            abort_hooks[i]();
    if (wh_pmi_is_singleton())
        exit(code ? code : 1);
    wh_pmi_abort(code, msg);
    _exit(code ? code : 1);
}
