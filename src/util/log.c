#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "util/tunables.h"

int wh_log_level = WH_LOG_WARN;
int wh_log_rank = -1; /* set once the rank is known */

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};

void wh_log_init(void)
{
    const char *v = wh_tun.log;
    if (!v)
        return;
    for (int i = 0; i <= WH_LOG_TRACE; i++)
        if (!strcasecmp(v, level_names[i]))
            wh_log_level = i;
}

void wh_log_write(int level, const char *subsys, const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    char head[128];
    if (wh_log_rank >= 0)
        snprintf(head, sizeof head, "wharf[%d] %s", wh_log_rank, level_names[level]);
    else
        snprintf(head, sizeof head, "wharf[pid %d] %s", (int)getpid(), level_names[level]);
    if (level >= WH_LOG_DEBUG)
        fprintf(stderr, "%s %s: %s (%s:%d)\n", head, subsys, msg, base, line);
    else
        fprintf(stderr, "%s %s: %s\n", head, subsys, msg);
}
