/* Unit tests of the PMI-1 wire parser (src/pmi/wire.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmi/wire.h"

static int passed, failed;
static wh_pmi_msg_t m;

#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (cond) {                                                                                \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                        \
        }                                                                                          \
    } while (0)

static int streq(const char *a, const char *b)
{
    return a && b && !strcmp(a, b);
}
#define STREQ(a, b) streq((a), (b))

/* Parse from an exact-size heap copy, so reading past len is caught by ASan. */
static int parse_exact(const char *s, size_t len)
{
    char *copy = malloc(len ? len : 1);
    if (!copy)
        abort();
    memcpy(copy, s, len);
    int rc = wh_pmi_parse(copy, len, &m);
    free(copy);
    return rc;
}

static int parse(const char *s)
{
    return parse_exact(s, strlen(s));
}

static void test_valid(void)
{
    EXPECT(parse("cmd=init pmi_version=1 pmi_subversion=1\n") == 0);
    EXPECT(m.npairs == 3);
    EXPECT(STREQ(m.pair[0].key, "cmd") && STREQ(m.pair[0].val, "init"));
    EXPECT(STREQ(wh_pmi_val(&m, "pmi_version"), "1"));
    EXPECT(STREQ(wh_pmi_val(&m, "pmi_subversion"), "1"));
    EXPECT(wh_pmi_val(&m, "missing") == NULL);

    EXPECT(parse("cmd=barrier_in") == 0); /* no newline */
    EXPECT(m.npairs == 1 && STREQ(wh_pmi_val(&m, "cmd"), "barrier_in"));

    EXPECT(parse("cmd=get_result rc=0 msg=success value=a=b=c\n") == 0);
    EXPECT(STREQ(wh_pmi_val(&m, "value"), "a=b=c")); /* split at the first '=' */

    EXPECT(parse("cmd=put key=k value=\n") == 0); /* empty value */
    EXPECT(STREQ(wh_pmi_val(&m, "value"), ""));

    EXPECT(parse("cmd=a k=1 k=2") == 0); /* duplicates: first wins */
    EXPECT(STREQ(wh_pmi_val(&m, "k"), "1"));

    EXPECT(parse("cmd=x val=\x80\xff\x01\t") == 0); /* values may hold any byte but NUL/LF */
    EXPECT(STREQ(wh_pmi_val(&m, "val"), "\x80\xff\x01\t"));
}

static void test_spaces(void)
{
    EXPECT(parse("cmd=put   key=a  value=b   \n") == 0); /* trailing spaces */
    EXPECT(m.npairs == 3 && STREQ(wh_pmi_val(&m, "value"), "b"));
    EXPECT(parse("   cmd=put key=a") == 0); /* leading spaces */
    EXPECT(m.npairs == 2 && STREQ(wh_pmi_val(&m, "cmd"), "put"));
    EXPECT(parse("cmd=a    \n") == 0);
    EXPECT(m.npairs == 1);
    EXPECT(parse("") == -1);
    EXPECT(parse("\n") == -1);
    EXPECT(parse("     \n") == -1);
}

static void test_escapes(void)
{
    EXPECT(parse("cmd=abort message=a\\ b\\\\c") == 0);
    EXPECT(STREQ(wh_pmi_val(&m, "message"), "a b\\c"));
    EXPECT(m.npairs == 2);
    EXPECT(parse("cmd=abort message=end\\") == 0); /* lone trailing backslash stays */
    EXPECT(STREQ(wh_pmi_val(&m, "message"), "end\\"));
    EXPECT(parse("cmd=abort message=x\\ \n") == 0); /* escaped trailing space is kept */
    EXPECT(STREQ(wh_pmi_val(&m, "message"), "x "));
    EXPECT(parse("cmd=a v=\\q") == 0);
    EXPECT(STREQ(wh_pmi_val(&m, "v"), "q"));

    char esc[64];
    EXPECT(wh_pmi_escape("a b\\c\nd", esc, sizeof esc) == 9);
    EXPECT(STREQ(esc, "a\\ b\\\\c?d"));
    char line[128];
    snprintf(line, sizeof line, "cmd=t v=%s", esc);
    EXPECT(parse(line) == 0 && STREQ(wh_pmi_val(&m, "v"), "a b\\c?d"));
    EXPECT(wh_pmi_escape("abc", esc, 4) == 3); /* exact fit */
    EXPECT(wh_pmi_escape("abc", esc, 3) == -1);
    EXPECT(wh_pmi_escape("a b", esc, 4) == -1); /* the escape needs room too */
    EXPECT(wh_pmi_escape("", esc, 1) == 0 && esc[0] == '\0');
    EXPECT(wh_pmi_escape("", esc, 0) == -1);

    /* round trip of every printable byte */
    char src[100], big[300];
    int n = 0;
    for (int c = 0x20; c < 0x7f; c++)
        src[n++] = (char)c;
    src[n] = '\0';
    EXPECT(wh_pmi_escape(src, esc, sizeof esc) == -1);
    EXPECT(wh_pmi_escape(src, big, sizeof big) > 0);
    char l2[400];
    snprintf(l2, sizeof l2, "cmd=rt value=%s  ", big);
    EXPECT(parse(l2) == 0 && STREQ(wh_pmi_val(&m, "value"), src));
}

static void test_malformed(void)
{
    EXPECT(parse("cmd=init foo\n") == -1);      /* word without '=' */
    EXPECT(parse("foo cmd=init") == -1);
    EXPECT(parse("cmd") == -1);
    EXPECT(parse("=value") == -1);              /* empty key */
    EXPECT(parse("cmd=a =b") == -1);
    EXPECT(parse("cmd=a \x01k=b") == -1);       /* non-printable key byte */
    EXPECT(parse("cmd=a k\xc3\xa9=b") == -1);
    EXPECT(parse("cmd=a\nb=c") == -1);          /* newline inside the line */
    EXPECT(parse("cmd=a\n\n") == -1);           /* only one trailing newline is stripped */
    EXPECT(parse_exact("cmd=a\0b=c", 9) == -1); /* embedded NUL */
    EXPECT(parse_exact("cmd=a b=\0", 9) == -1);
    EXPECT(parse_exact("\0", 1) == -1);
    EXPECT(wh_pmi_parse(NULL, 0, &m) == -1);
}

static void test_long_lines(void)
{
    static char line[WH_PMI_MAXLINE + 2];
    size_t len = WH_PMI_MAXLINE - 1; /* longest accepted */
    memset(line, 'v', len);
    memcpy(line, "cmd=x v=", 8);
    EXPECT(parse_exact(line, len) == 0);
    EXPECT(strlen(wh_pmi_val(&m, "v")) == len - 8);
    line[len] = '\n';
    EXPECT(parse_exact(line, len + 1) == 0); /* its newline does not count */
    line[len] = 'v';
    EXPECT(parse_exact(line, len + 1) == -1); /* one byte more */
    line[len + 1] = '\n';
    EXPECT(parse_exact(line, len + 2) == -1);
}

static void test_pairs(void)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "cmd=x");
    for (int i = 1; i < WH_PMI_MAXPAIRS; i++)
        n += snprintf(line + n, sizeof line - (size_t)n, " k%d=%d", i, i);
    EXPECT(parse(line) == 0 && m.npairs == WH_PMI_MAXPAIRS);
    EXPECT(STREQ(wh_pmi_val(&m, "k15"), "15"));
    snprintf(line + n, sizeof line - (size_t)n, " extra=1");
    EXPECT(parse(line) == -1); /* one pair too many */
    snprintf(line + n, sizeof line - (size_t)n, "     ");
    EXPECT(parse(line) == 0); /* spaces after the last pair are not a pair */
}

static void test_int(void)
{
    int v = 42;
    EXPECT(parse("cmd=r rc=-1 a=0 b=12x c= d=99999999999 e=2147483647") == 0);
    EXPECT(wh_pmi_int(&m, "rc", &v) == 0 && v == -1);
    EXPECT(wh_pmi_int(&m, "a", &v) == 0 && v == 0);
    v = 42;
    EXPECT(wh_pmi_int(&m, "b", &v) == -1 && v == 42);
    EXPECT(wh_pmi_int(&m, "c", &v) == -1);
    EXPECT(wh_pmi_int(&m, "d", &v) == -1);
    EXPECT(wh_pmi_int(&m, "e", &v) == 0 && v == 2147483647);
    EXPECT(wh_pmi_int(&m, "nope", &v) == -1);
}

int main(void)
{
    test_valid();
    test_spaces();
    test_escapes();
    test_malformed();
    test_long_lines();
    test_pairs();
    test_int();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
