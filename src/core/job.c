/* Job state and job abort (see job.h). */
#include <signal.h>
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

/* Libraries that come with libfabric (libpsm2, libpsm_infinipath) install
 * handlers for fatal signals in their constructors, so a crashing rank
 * would exit with status 1 instead of dying by its signal (which the
 * launcher reports).  Before main() runs, any handler present was installed
 * by a library: put the defaults back.  The network channel saves and
 * restores the same set around provider initialization. */
static const int lib_sigs[WH_SIG_GUARDED] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM, SIGINT};

__attribute__((constructor)) static void reset_library_signals(void)
{
    for (int i = 0; i < WH_SIG_GUARDED; i++) {
        struct sigaction old;
        if (sigaction(lib_sigs[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
            (old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN))
            continue;
        signal(lib_sigs[i], SIG_DFL);
    }
}

void wh_sig_save(struct sigaction *saved)
{
    for (int i = 0; i < WH_SIG_GUARDED; i++)
        sigaction(lib_sigs[i], NULL, &saved[i]);
}

void wh_sig_restore(const struct sigaction *saved)
{
    for (int i = 0; i < WH_SIG_GUARDED; i++)
        sigaction(lib_sigs[i], &saved[i], NULL);
}
