/*
 * Decimal digits of unsigned integers, without printf: the access log writes
 * several per line, and a small component's headers one per dimension, where
 * snprintf cost more than the rest of them together.
 */
#ifndef ZTD_DECIMAL_H
#define ZTD_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

/* The digits of v, at least min_digits of them (zero-padded), at out (room
 * for 20 or min_digits, whichever is more; no NUL). Returns how many. */
size_t ztd_decimal(char *out, uint64_t v, size_t min_digits);

#endif
