/* Hexadecimal digits (see hex.h). */
#include "core/hex.h"

#include <string.h>

char ztd_hex_digit(unsigned v)
{
    return "0123456789abcdef"[v & 15];
}

char ztd_hex_digit_upper(unsigned v)
{
    return "0123456789ABCDEF"[v & 15];
}

int ztd_hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

void ztd_hex_encode(const uint8_t *in, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = ztd_hex_digit(in[i] >> 4);
        out[2 * i + 1] = ztd_hex_digit(in[i]);
    }
    out[2 * n] = '\0';
}

int ztd_hex_decode(const char *in, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n; i++) {
        int hi = ztd_hex_value(in[2 * i]), lo = hi < 0 ? -1 : ztd_hex_value(in[2 * i + 1]);
        if (lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

bool ztd_percent_encode_path(const char *in, char *out, size_t cap)
{
    size_t w = 0;
    const unsigned char *p = (const unsigned char *)in;
    for (; *p && w + 4 <= cap; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~/", *p)) {
            out[w++] = (char)*p;
        } else {
            out[w++] = '%';
            out[w++] = ztd_hex_digit_upper(*p >> 4);
            out[w++] = ztd_hex_digit_upper(*p);
        }
    }
    out[w] = 0;
    return !*p;
}
