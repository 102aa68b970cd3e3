#include "util/tunables.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

wh_tunables_t wh_tun;

const wh_tunable_desc_t wh_tunable_descs[] = {
#define X(NAME, field, type, def, doc) {#NAME, WH_TT_##type, def, doc, offsetof(wh_tunables_t, field)},
#include "util/tunables.def"
#undef X
};
const int wh_tunable_count = (int)(sizeof(wh_tunable_descs) / sizeof(wh_tunable_descs[0]));

static const struct {
    const char *name, *list;
} choices[] = {
#define X(NAME, field, type, def, doc)
#define WH_CHOICES(NAME, list) {#NAME, list},
#include "util/tunables.def"
#undef WH_CHOICES
#undef X
};

const char *wh_tunable_choices(const char *name)
{
    for (size_t i = 0; i < sizeof choices / sizeof choices[0]; i++)
        if (!strcmp(choices[i].name, name))
            return choices[i].list;
    return NULL;
}

/* v is one of the comma-separated words of list */
static int in_list(const char *list, const char *v)
{
    size_t n = strlen(v);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == n && !strncasecmp(p, v, n))
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

const char *wh_tunable_type_name(wh_tunable_type_t t)
{
    switch (t) {
    case WH_TT_INT: return "int";
    case WH_TT_SIZE: return "size";
    case WH_TT_BOOL: return "bool";
    case WH_TT_STR: return "string";
    }
    return "?";
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (end == s || errno || *s == '-')
        return -1;
    unsigned long long mul = 1;
    switch (tolower((unsigned char)*end)) {
    case 'k': mul = 1ULL << 10; end++; break;
    case 'm': mul = 1ULL << 20; end++; break;
    case 'g': mul = 1ULL << 30; end++; break;
    default: break;
    }
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end != '\0' || (v && mul > ~0ULL / v))
        return -1;
    *out = (size_t)(v * mul);
    return 0;
}

int wh_tunable_parse(wh_tunable_type_t t, const char *s, void *out)
{
    char *end;
    switch (t) {
    case WH_TT_INT: {
        errno = 0;
        long v = strtol(s, &end, 0);
        if (end == s || *end || errno || v < -2147483647L || v > 2147483647L)
            return -1;
        *(int *)out = (int)v;
        return 0;
    }
    case WH_TT_SIZE:
        return parse_size(s, (size_t *)out);
    case WH_TT_BOOL:
        if (!strcmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "on") || !strcasecmp(s, "true"))
            *(int *)out = 1;
        else if (!strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "off") || !strcasecmp(s, "false"))
            *(int *)out = 0;
        else
            return -1;
        return 0;
    case WH_TT_STR:
        *(const char **)out = s;
        return 0;
    }
    return -1;
}

int wh_tunables_load(char *err, size_t errlen)
{
    int rc = 0;
    for (int i = 0; i < wh_tunable_count; i++) {
        const wh_tunable_desc_t *d = &wh_tunable_descs[i];
        void *field = (char *)&wh_tun + d->offset;
        if (wh_tunable_parse(d->type, d->def, field) != 0)
            abort(); /* a bad default is a build defect */
        char env[96];
        snprintf(env, sizeof env, "WHARF_%s", d->name);
        const char *v = getenv(env);
        const char *list = d->type == WH_TT_STR ? wh_tunable_choices(d->name) : NULL;
        if (v && (wh_tunable_parse(d->type, v, field) != 0 || (list && !in_list(list, v)))) {
            if (rc == 0 && err)
                snprintf(err, errlen, "invalid value '%s' for %s (expected %s)", v, env,
                         list ? list : wh_tunable_type_name(d->type));
            wh_tunable_parse(d->type, d->def, field);
            rc = -1;
        }
    }
    return rc;
}

void wh_tunable_format(const wh_tunable_desc_t *d, char *buf, size_t len)
{
    const void *field = (const char *)&wh_tun + d->offset;
    switch (d->type) {
    case WH_TT_INT: snprintf(buf, len, "%d", *(const int *)field); break;
    case WH_TT_SIZE: snprintf(buf, len, "%zu", *(const size_t *)field); break;
    case WH_TT_BOOL: snprintf(buf, len, "%d", *(const int *)field); break;
    case WH_TT_STR: snprintf(buf, len, "%s", *(const char *const *)field); break;
    }
}

/* the value in use equals the default (compared as values: "64k" and 65536
 * are the same size) */
int wh_tunable_is_default(const wh_tunable_desc_t *d)
{
    const void *field = (const char *)&wh_tun + d->offset;
    union {
        int i;
        size_t z;
        const char *s;
    } def;
    if (wh_tunable_parse(d->type, d->def, &def) != 0)
        return 0;
    switch (d->type) {
    case WH_TT_INT:
    case WH_TT_BOOL: return def.i == *(const int *)field;
    case WH_TT_SIZE: return def.z == *(const size_t *)field;
    case WH_TT_STR: return !strcmp(def.s, *(const char *const *)field);
    }
    return 0;
}
