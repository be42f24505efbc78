/*
 * Hexadecimal digits, both ways: the server's one codec (digests in URLs and
 * ETags, upload ids, request ids, escapes in logs and in Location headers).
 */
#ifndef ZTD_HEX_H
#define ZTD_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The digit for v & 15: lowercase, or uppercase (percent-encoding, RFC 3986 §2.1). */
char ztd_hex_digit(unsigned v);
char ztd_hex_digit_upper(unsigned v);
/* The value of one digit (either case), or -1. */
int ztd_hex_value(char c);
/* n bytes as 2n lowercase digits plus a NUL: out has room for 2n + 1. */
void ztd_hex_encode(const uint8_t *in, size_t n, char *out);
/* 2n digits (either case) into n bytes: 0, or -1 at the first non-digit (out partly written). */
int ztd_hex_decode(const char *in, size_t n, uint8_t *out);

/* A path for a URL (RFC 3986): unreserved characters and '/' kept, every
 * other byte (space, '%', '?', '#', UTF-8...) percent-encoded in uppercase.
 * out (cap > 0) is always terminated; false when in did not fit whole. */
bool ztd_percent_encode_path(const char *in, char *out, size_t cap);

#endif
