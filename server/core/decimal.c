/* Decimal digits (see decimal.h). */
#include "core/decimal.h"

size_t ztd_decimal(char *out, uint64_t v, size_t min_digits)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n < min_digits && n < sizeof(tmp))
        tmp[n++] = '0';
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}
