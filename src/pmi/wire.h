/* PMI-1 simple wire format: lines of space-separated key=value pairs,
 * "cmd=NAME k1=v1 k2=v2\n".  Shared by the client (libmpi) and the server
 * (wharfrun).  The parser never trusts its input: it is fuzzed
 * (tests/fuzz/fuzz_pmi_wire.c).
 *
 * Grammar accepted by wh_pmi_parse (one line, the trailing '\n' optional):
 *   line  := ' '* pair (' '+ pair)* ' '*
 *   pair  := key '=' value
 *   key   := one or more printable ASCII bytes (0x21-0x7e) other than '='
 *   value := zero or more bytes other than NUL, '\n' and unescaped ' ';
 *            "\c" stands for the byte c (so "\ " is a space and "\\" a
 *            backslash), as MPICH >= 4.1 escapes values; a lone backslash at
 *            the very end of the line stands for itself.
 * Rejected (-1): a line of WH_PMI_MAXLINE bytes or more (not counting the
 * trailing '\n'), a NUL or '\n' inside the line, a word without '=', an empty
 * or non-printable key, more than WH_PMI_MAXPAIRS pairs, a line without any
 * pair.  Duplicate keys are kept; wh_pmi_val returns the first. */
#ifndef WH_PMI_WIRE_H
#define WH_PMI_WIRE_H
#include <stddef.h>

#define WH_PMI_MAXLINE 4096 /* longest line + 1 (the NUL), newline excluded */
#define WH_PMI_MAXPAIRS 16

typedef struct wh_pmi_msg {
    int npairs;
    struct {
        const char *key; /* NUL-terminated, points into buf */
        const char *val; /* NUL-terminated, unescaped, points into buf */
    } pair[WH_PMI_MAXPAIRS];
    char buf[WH_PMI_MAXLINE]; /* the line, split and unescaped in place */
} wh_pmi_msg_t;

/* Parse one line (len bytes, with or without its trailing newline; need not
 * be NUL-terminated).  Returns 0, or -1 if malformed (see above); on -1 the
 * contents of msg are unspecified. */
int wh_pmi_parse(const char *line, size_t len, wh_pmi_msg_t *msg);
/* Value of key or NULL. */
const char *wh_pmi_val(const wh_pmi_msg_t *msg, const char *key);
/* Value of key as an int: 0 and *out set, or -1 if absent or not a decimal
 * integer that fits an int. */
int wh_pmi_int(const wh_pmi_msg_t *msg, const char *key, int *out);

/* Escape src for use as a value: ' ' and '\\' get a backslash in front, a NUL
 * ends src, '\n' and other control bytes become '?'.  Writes a NUL-terminated
 * string to dst and returns its length, or -1 if it does not fit in cap. */
int wh_pmi_escape(const char *src, char *dst, size_t cap);
#endif
