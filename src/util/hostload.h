/* Whether the kernel this rank runs on has more runnable tasks than cpus
 * (util/hostload.c): the waiting policies' signal that cpus are shared with
 * processes this rank cannot see (other containers, other emulated hosts,
 * other tenants), where a waiter that yields keeps its cpu. */
#ifndef WH_UTIL_HOSTLOAD_H
#define WH_UTIL_HOSTLOAD_H

/* 1 when busy: /proc/loadavg's runnable count above the online cpus plus
 * one in 3 looks in a row, looked at most every 2 ms, remembered for a
 * second (a rank that sleeps because of it lowers the count it would see
 * next).  0 where /proc/loadavg cannot be read. */
int wh_host_busy(void);
#endif
