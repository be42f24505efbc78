/* Content-Disposition values (see disposition.h). */
#include "http/disposition.h"
#include "core/hex.h"

#include <string.h>

typedef struct wbuf {
    char *p;
    size_t n, cap;
    bool ok;
} wbuf;

static void put(wbuf *w, char c)
{
    if (w->n + 1 < w->cap)
        w->p[w->n++] = c;
    else
        w->ok = false;
}

static void puts_(wbuf *w, const char *s)
{
    while (*s)
        put(w, *s++);
}

static bool plain(unsigned char c)
{
    return c >= 0x20 && c < 0x7f;
}

/* RFC 8187 attr-char: ALPHA / DIGIT / "!#$&+-.^_`|~" */
static bool attr_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$&+-.^_`|~", c));
}

bool ztd_content_disposition(const char *name, char *out, size_t cap)
{
    wbuf w = {out, 0, cap, true};
    bool ascii = true;
    for (const unsigned char *s = (const unsigned char *)name; *s; s++)
        ascii &= plain(*s);
    puts_(&w, "attachment; filename=\"");
    for (const unsigned char *s = (const unsigned char *)name; *s; s++) {
        if (*s == '"' || *s == '\\')
            put(&w, '\\');
        put(&w, plain(*s) ? (char)*s : '_');
    }
    put(&w, '"');
    if (!ascii) {
        puts_(&w, "; filename*=UTF-8''");
        for (const unsigned char *s = (const unsigned char *)name; *s; s++) {
            if (attr_char(*s)) {
                put(&w, (char)*s);
                continue;
            }
            put(&w, '%');
            put(&w, ztd_hex_digit_upper(*s >> 4));
            put(&w, ztd_hex_digit_upper(*s & 15));
        }
    }
    if (cap)
        out[w.n] = 0;
    return w.ok;
}
