/* What this rank can tell about where it runs: kernel (boot_id), namespaces,
 * uid, hostname, CPU placement.  Filled into its registry record. */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "locality/ident.h"

static void read_line(const char *path, char *buf, size_t len)
{
    buf[0] = 0;
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    if (fgets(buf, (int)len, f))
        buf[strcspn(buf, "\n")] = 0;
    fclose(f);
}

static void format_cpuset(const cpu_set_t *set, char *buf, size_t len, int *ncpus)
{
    size_t off = 0;
    int n = 0;
    buf[0] = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
            e++;
        n += e - c + 1;
        if (off < len) {
            int w = e > c ? snprintf(buf + off, len - off, "%s%d-%d", off ? "," : "", c, e)
                          : snprintf(buf + off, len - off, "%s%d", off ? "," : "", c);
            off += w > 0 ? (size_t)w : 0;
        }
        c = e;
    }
    *ncpus = n;
}

void wh_ident_fill(wh_reg_rec_t *r)
{
    static const char *ns[WH_NS_MAX] = {"pid", "ipc", "mnt", "net", "user", "uts", "cgroup"};
    r->rank = wh_job.rank;
    r->pid = (int32_t)getpid();
    r->uid = (uint32_t)geteuid();
    for (int i = 0; i < WH_NS_MAX; i++) {
        char p[64];
        struct stat st;
        snprintf(p, sizeof p, "/proc/self/ns/%s", ns[i]);
        r->ns[i] = stat(p, &st) == 0 ? (uint64_t)st.st_ino : 0;
    }
    read_line("/proc/sys/kernel/random/boot_id", r->boot_id, sizeof r->boot_id);
    snprintf(r->hostname, sizeof r->hostname, "%.63s", wh_job.hostname);
    cpu_set_t set;
    r->ncpus = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        format_cpuset(&set, r->cpuset, sizeof r->cpuset, &r->ncpus);
    unsigned cpu = 0, node = 0;
    r->numa = getcpu(&cpu, &node) == 0 ? (int32_t)node : -1;
}
