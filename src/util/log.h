/* Logging with level and subsystem.  WH_LOG(level, "subsys", fmt, ...) is one
 * well-predicted branch when disabled; levels above WH_LOG_CEILING compile out. */
#ifndef WH_UTIL_LOG_H
#define WH_UTIL_LOG_H

enum wh_log_level {
    WH_LOG_ERROR = 0,
    WH_LOG_WARN = 1,
    WH_LOG_INFO = 2,
    WH_LOG_DEBUG = 3,
    WH_LOG_TRACE = 4,
};

#ifndef WH_LOG_CEILING
#define WH_LOG_CEILING WH_LOG_TRACE
#endif

extern int wh_log_level;
extern int wh_log_rank;

void wh_log_init(void);
void wh_log_write(int level, const char *subsys, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#define WH_LOG(lvl, subsys, ...)                                                                  \
    do {                                                                                          \
        if ((lvl) <= WH_LOG_CEILING && __builtin_expect((lvl) <= wh_log_level, 0))                \
            wh_log_write((lvl), (subsys), __FILE__, __LINE__, __VA_ARGS__);                       \
    } while (0)

#define WH_ERRLOG(subsys, ...) WH_LOG(WH_LOG_ERROR, subsys, __VA_ARGS__)
#define WH_WARN(subsys, ...) WH_LOG(WH_LOG_WARN, subsys, __VA_ARGS__)
#define WH_INFO(subsys, ...) WH_LOG(WH_LOG_INFO, subsys, __VA_ARGS__)
#define WH_DEBUG(subsys, ...) WH_LOG(WH_LOG_DEBUG, subsys, __VA_ARGS__)
#define WH_TRACE(subsys, ...) WH_LOG(WH_LOG_TRACE, subsys, __VA_ARGS__)

#endif
