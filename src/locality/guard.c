/* A SIGBUS guard for the node region.  A file-backed mapping faults with
 * SIGBUS where the file no longer reaches (another process of the user
 * truncated it): instead of every rank dying by a bare SIGBUS, a rank that
 * faults inside the region says so — on stderr and as an MPI_Abort message
 * to the launcher — and exits 1.  Faults elsewhere go to the previous
 * disposition (the default: death by SIGBUS, as the launcher reports).
 * Cost: one sigaction at init and at finalize. */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "core/job.h"
#include "locality/loc_impl.h"
#include "pmi/pmi.h"

static struct sigaction prev_bus;
static volatile sig_atomic_t guarded;
static uintptr_t guard_lo, guard_hi;
static char guard_path[512];

static size_t put_str(char *b, size_t n, size_t cap, const char *s)
{
    while (*s && n < cap)
        b[n++] = *s++;
    return n;
}

static size_t put_num(char *b, size_t n, size_t cap, uint64_t v, int base)
{
    char d[24];
    int k = 0;
    do
        d[k++] = "0123456789abcdef"[v % (uint64_t)base];
    while ((v /= (uint64_t)base) && k < (int)sizeof d);
    while (k && n < cap)
        b[n++] = d[--k];
    return n;
}

static void region_sigbus(int sig, siginfo_t *si, void *uc)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    if (guarded && a >= guard_lo && a < guard_hi) {
        char msg[768];
        size_t n = 0, cap = sizeof msg - 1;
        n = put_str(msg, n, cap, "rank ");
        n = put_num(msg, n, cap, (uint64_t)(wh_job.rank < 0 ? 0 : wh_job.rank), 10);
        n = put_str(msg, n, cap, ": the node region ");
        n = put_str(msg, n, cap, guard_path);
        n = put_str(msg, n, cap, " was truncated by another process (bus error at offset 0x");
        n = put_num(msg, n, cap, (uint64_t)(a - guard_lo), 16);
        n = put_str(msg, n, cap, "); ending the job");
        msg[n] = '\0';
        ssize_t w = write(2, "wharf: ", 7);
        w = write(2, msg, n);
        w = write(2, "\n", 1);
        (void)w;
        wh_pmi_abort_from_signal(1, msg);
        _exit(1);
    }
    if ((prev_bus.sa_flags & SA_SIGINFO) && prev_bus.sa_sigaction) {
        prev_bus.sa_sigaction(sig, si, uc);
    } else if (prev_bus.sa_handler != SIG_DFL && prev_bus.sa_handler != SIG_IGN) {
        prev_bus.sa_handler(sig);
    } else {
        signal(SIGBUS, SIG_DFL); /* returning repeats the fault, now fatal */
    }
}

void wh_loc_guard_on(void)
{
    if (guarded || !wh_loc.reg.base)
        return;
    guard_lo = (uintptr_t)wh_loc.reg.base;
    guard_hi = guard_lo + wh_loc.reg.map_len;
    size_t l = strnlen(wh_loc.reg.path, sizeof guard_path - 1);
    memcpy(guard_path, wh_loc.reg.path, l);
    guard_path[l] = '\0';
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = region_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &prev_bus) == 0)
        guarded = 1;
}

void wh_loc_guard_off(void)
{
    if (!guarded)
        return;
    guarded = 0;
    struct sigaction cur;
    /* put the previous disposition back unless someone replaced ours */
    if (sigaction(SIGBUS, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == region_sigbus)
        sigaction(SIGBUS, &prev_bus, NULL);
}
