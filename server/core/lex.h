/*
 * The lexical pieces of header values that several parsers share: optional
 * whitespace (RFC 9110 §5.6.3), ASCII digits, case-insensitive literals. Each
 * walks a NUL-terminated string and never reads past its terminator.
 */
#ifndef ZTD_LEX_H
#define ZTD_LEX_H

static inline int ztd_is_ows(char c)
{
    return c == ' ' || c == '\t';
}

static inline int ztd_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static inline const char *ztd_skip_ows(const char *p)
{
    while (ztd_is_ows(*p))
        p++;
    return p;
}

static inline char ztd_ascii_lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Does p start with lit, ignoring ASCII case? Stops at p's NUL. */
static inline int ztd_prefix_ci(const char *p, const char *lit)
{
    for (; *lit; p++, lit++)
        if (*p == '\0' || ztd_ascii_lower(*p) != ztd_ascii_lower(*lit))
            return 0;
    return 1;
}

#endif
