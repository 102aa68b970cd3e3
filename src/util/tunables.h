/* The tunable table: typed values read once from WHARF_* environment variables. */
#ifndef WH_UTIL_TUNABLES_H
#define WH_UTIL_TUNABLES_H
#include <stddef.h>
#include <stdint.h>

typedef enum { WH_TT_INT, WH_TT_SIZE, WH_TT_BOOL, WH_TT_STR } wh_tunable_type_t;

typedef struct wh_tunables {
#define WH_TT_C_INT int
#define WH_TT_C_SIZE size_t
#define WH_TT_C_BOOL int
#define WH_TT_C_STR const char *
#define X(NAME, field, type, def, doc) WH_TT_C_##type field;
#include "util/tunables.def"
#undef X
} wh_tunables_t;

typedef struct wh_tunable_desc {
    const char *name;    /* without the WHARF_ prefix */
    wh_tunable_type_t type;
    const char *def;     /* default, as text */
    const char *doc;
    size_t offset;       /* into wh_tunables_t */
} wh_tunable_desc_t;

extern wh_tunables_t wh_tun;
extern const wh_tunable_desc_t wh_tunable_descs[];
extern const int wh_tunable_count;

/* Parse defaults then the environment.  Returns 0, or -1 and fills err (bad value). */
int wh_tunables_load(char *err, size_t errlen);
/* Parse one value of the given type; 0 on success. */
int wh_tunable_parse(wh_tunable_type_t t, const char *text, void *out);
/* Current value as text. */
void wh_tunable_format(const wh_tunable_desc_t *d, char *buf, size_t len);
int wh_tunable_is_default(const wh_tunable_desc_t *d);
const char *wh_tunable_type_name(wh_tunable_type_t t);
/* "a,b,c" for a string tunable with fixed choices (name without WHARF_), else NULL */
const char *wh_tunable_choices(const char *name);

#endif
