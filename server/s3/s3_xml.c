/*
 * The S3 front's XML writer (s3_xml.h): escaping, and U+FFFD for what XML
 * 1.0 cannot carry, so every document it writes parses.
 */
#include "s3/s3_xml.h"
#include "core/utf8.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ztd_xml_begin(ztd_xml *x)
{
    memset(x, 0, sizeof(*x));
    ztd_text_puts(x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
}

void ztd_xml_open(ztd_xml *x, const char *name, const char *ns)
{
    ztd_text_put(x, "<", 1);
    ztd_text_puts(x, name);
    if (ns) {
        ztd_text_puts(x, " xmlns=\"");
        ztd_xml_text(x, ns, strlen(ns));
        ztd_text_put(x, "\"", 1);
    }
    ztd_text_put(x, ">", 1);
}

void ztd_xml_close(ztd_xml *x, const char *name)
{
    ztd_text_put(x, "</", 2);
    ztd_text_puts(x, name);
    ztd_text_put(x, ">", 1);
}

/* The length of the valid UTF-8 sequence at s (of n bytes) that starts
 * with a byte >= 0x80, or 0 when there is none. */
static size_t utf8_seq_len(const char *s, size_t n)
{
    unsigned char c = (unsigned char)s[0];
    size_t k = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    return k && k <= n && ztd_utf8_valid(s, k) ? k : 0;
}

/* Bytes XML 1.0 allows as they are: tab, LF, CR and everything from space. */
static bool xml_char_ok(unsigned char c)
{
    return c >= 0x20 || c == '\t' || c == '\n' || c == '\r';
}

void ztd_xml_text(ztd_xml *x, const char *text, size_t n)
{
    static const char fffd[] = "\xEF\xBF\xBD";
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)text[i];
        const char *esc = NULL;
        switch (c) {
        case '&':
            esc = "&amp;";
            break;
        case '<':
            esc = "&lt;";
            break;
        case '>':
            esc = "&gt;";
            break;
        case '"':
            esc = "&quot;";
            break;
        case '\'':
            esc = "&apos;";
            break;
        case '\r':
            esc = "&#13;"; /* a raw CR would be read back as LF */
            break;
        default:
            break;
        }
        if (esc) {
            ztd_text_puts(x, esc);
            i++;
        } else if (c < 0x80) {
            if (xml_char_ok(c))
                ztd_text_put(x, (const char *)&text[i], 1);
            else
                ztd_text_put(x, fffd, 3);
            i++;
        } else {
            size_t k = utf8_seq_len(text + i, n - i);
            if (k == 0) {
                ztd_text_put(x, fffd, 3);
                i++;
            } else {
                ztd_text_put(x, text + i, k);
                i += k;
            }
        }
    }
}

void ztd_xml_elem(ztd_xml *x, const char *name, const char *text, size_t n)
{
    ztd_xml_open(x, name, NULL);
    ztd_xml_text(x, text, n);
    ztd_xml_close(x, name);
}

void ztd_xml_elem_str(ztd_xml *x, const char *name, const char *text)
{
    ztd_xml_elem(x, name, text, strlen(text));
}

void ztd_xml_elem_u64(ztd_xml *x, const char *name, uint64_t v)
{
    char num[24];
    int n = snprintf(num, sizeof(num), "%" PRIu64, v);
    ztd_xml_elem(x, name, num, (size_t)n);
}

char *ztd_xml_finish(ztd_xml *x, size_t *len)
{
    return ztd_text_take(x, len);
}

void ztd_xml_discard(ztd_xml *x)
{
    ztd_text_discard(x);
}
