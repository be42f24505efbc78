/* Hexadecimal digits (see hex.h). */
#include "core/hex.h"

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
